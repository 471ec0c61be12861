"""The root of a pair whose only change flips one access's fastest-varying dimension names the transposed access
(irdiff/diagnose/roots.py ``_name_transposed``/``transposed_accesses``), not the syntax of the index expression:
``tests/suites/transposed_access.py`` on sm80 (64x64 bf16, 4 warps), each pair in both orders (diag_helpers'
``diagnose`` checks the mirrored diagnosis). The strides are read from the TTGIR address arithmetic, so the
variables' names do not matter (``r``/``c``/``stride`` for the load pair, ``i``/``j``/``ld`` for the store pair)."""

from __future__ import annotations

from pathlib import Path

import pytest
from diag_helpers import diagnose

from irdiff.diagnose.facts import extract_facts
from irdiff.diagnose.roots import transposed_accesses

SUITE = str(Path(__file__).parent / "suites" / "transposed_access.py")


@pytest.fixture(scope="module")
def tb(compile_suite):  # type: ignore[no-untyped-def]
    return compile_suite(SUITE, ["rowmaj", "colmaj", "rowstore", "colstore"], "sm80")


@pytest.mark.parametrize(("a", "b"), [("rowmaj", "colmaj"), ("colmaj", "rowmaj")])
def test_transposed_load_is_the_root(tb, a: str, b: str) -> None:  # type: ignore[no-untyped-def]
    d = diagnose(tb, a, b)
    by_id = {f.id: f for f in d.findings}
    conv = by_id["layout.convert-shared"]
    assert "8 KB" in conv.title and "`colmaj` converts" in conv.title
    (root,) = [f for f in d.findings if f.id.startswith("source.")]
    assert not root.causes and root.id in conv.causes
    assert root.title.startswith(
        "Source: the load reads `src` transposed in `colmaj` (column-major), row-major in `rowmaj`, so Triton "
        "converts the layout through shared memory ("
    )
    assert "along dimension 0" in root.explanation and "`r[:, None]`" in root.explanation  # the syntax stays


@pytest.mark.parametrize(("a", "b"), [("rowstore", "colstore"), ("colstore", "rowstore")])
def test_transposed_store_is_named_by_its_root(tb, a: str, b: str) -> None:  # type: ignore[no-untyped-def]
    d = diagnose(tb, a, b)
    roots = [f for f in d.findings if not f.causes]
    assert roots and roots[0].title.startswith(
        "The store writes `out` transposed in `colstore` (column-major), row-major in `rowstore`"
    )
    assert not any("`src`" in f.title or "load reads" in f.title for f in d.findings)


def test_transposed_accesses_pair_by_pointer(tb) -> None:  # type: ignore[no-untyped-def]
    """Only the access whose unit-stride dimension flips is named: the load (dimension 1 -> 0) in the load pair, the
    store in the store pair; a pair of identical kernels has none."""
    lo = {v: extract_facts(tb.variants[v]).lowered for v in tb.variants}
    got = [(x.kind, x.ptr_args[0], da, db) for x, _, da, db in transposed_accesses(lo["rowmaj"], lo["colmaj"])]
    assert got == [("load", "src", 1, 0)]
    got = [(x.kind, x.ptr_args[0], da, db) for x, _, da, db in transposed_accesses(lo["colstore"], lo["rowstore"])]
    assert got == [("store", "out", 0, 1)]
    assert transposed_accesses(lo["rowmaj"], lo["rowmaj"]) == []


@pytest.mark.parametrize(("a", "b"), [("t0", "t1"), ("t1", "t0")])
def test_transposed_load_chosen_by_a_constexpr(compile_suite, a: str, b: str) -> None:  # type: ignore[no-untyped-def]
    """The same source with ``T`` choosing the index expression: ``config.changed`` is the root, and says the access
    the configuration transposes and the conversion that follows."""
    d = diagnose(compile_suite(SUITE, ["t0", "t1"], "sm80"), a, b)
    cfg = next(f for f in d.findings if f.id == "config.changed")
    assert not cfg.causes
    flip = {"t0": "False", "t1": "True"}
    assert cfg.title == (
        f"Configuration differs: `T` ({flip[a]}→{flip[b]}): the load reads `src` transposed in `t1` (column-major), "
        "row-major in `t0`, so Triton converts the layout through shared memory"
    )
