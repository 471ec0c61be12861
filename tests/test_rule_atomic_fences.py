"""The SASS fences ``atomic.ordering`` quotes, on ``tests/suites/atomic_fences.py`` (one tensor ``tl.atomic_add`` per
memory order and scope, its old value stored) compiled for sm80 and sm90, both orders of every pair.

What ptxas emits there (read from those compiles, the same on sm80 and sm90): ``acq_rel`` is ``MEMBAR.ALL.<scope>``
+ ``ERRBAR`` before the ``ATOMG`` and ``CCTL.IVALL`` after it (no ``CCTL`` for ``cta``, whose ``MEMBAR.ALL.CTA``
stands alone); ``release`` keeps the fence and ``ERRBAR``, ``acquire`` only the ``CCTL.IVALL``; ``relaxed`` none. The
rule used to quote only a ``MEMBAR.GPU``, ``CCTL`` or ``ERRBAR`` line: a ``sys`` atomic's ``MEMBAR.ALL.SYS`` and a
``cta`` atomic's ``MEMBAR.ALL.CTA`` were never quoted (the ``cta`` side quoted nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from irdiff.bundle import Bundle
from irdiff.diagnose import diagnose
from irdiff.diagnose.model import Finding
from tests.diag_helpers import get

SUITE = str(Path(__file__).parent / "suites" / "atomic_fences.py")
VARIANTS = ["relaxed", "acq_rel_cta", "acq_rel_gpu", "acq_rel_sys", "release_sys", "acquire_sys"]


@pytest.fixture(scope="module", params=["sm80", "sm90"])
def fences(compile_suite, request: pytest.FixtureRequest) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(SUITE, VARIANTS, request.param)


def quoted(f: Finding) -> dict[str, list[str]]:
    """Per variant, the SASS lines the finding quotes (with a line number)."""
    out: dict[str, list[str]] = {}
    for e in f.evidence:
        if e.stage == "sass" and e.line is not None:
            out.setdefault(e.variant, []).append(e.text)
    return out


def sass_count(b: Bundle, v: str, word: str) -> int:
    return sum(1 for ln in b.variants[v].text("sass").splitlines() if word in ln)


# variant → the fence line its evidence quotes, and the count key it names
QUOTE = {
    "acq_rel_sys": ("MEMBAR.ALL.SYS", "MEMBAR.SYS"),
    "release_sys": ("MEMBAR.ALL.SYS", "MEMBAR.SYS"),
    "acq_rel_gpu": ("MEMBAR.ALL.GPU", "MEMBAR.GPU"),
    "acq_rel_cta": ("MEMBAR.ALL.CTA", "MEMBAR.CTA"),
    "acquire_sys": ("CCTL.IVALL", "CCTL"),
}


@pytest.mark.parametrize(
    "pair",
    [
        ("relaxed", "acq_rel_sys"),
        ("acq_rel_sys", "relaxed"),
        ("acq_rel_cta", "relaxed"),
        ("relaxed", "acq_rel_cta"),
        ("release_sys", "acquire_sys"),
        ("acquire_sys", "release_sys"),
        ("acq_rel_sys", "acq_rel_gpu"),
        ("acq_rel_gpu", "acq_rel_sys"),
    ],
)
def test_each_side_quotes_its_widest_fence(fences: Bundle, pair: tuple[str, str]) -> None:
    f = get(diagnose(fences, *pair), "atomic.ordering")
    q = quoted(f)
    for v in pair:
        if v == "relaxed":
            assert v not in q and sass_count(fences, v, "MEMBAR") == sass_count(fences, v, "CCTL") == 0
            continue
        line, key = QUOTE[v]
        n = sass_count(fences, v, line)
        assert n > 0
        assert q[v] == [f"{line};   ({n}× {key})"]
        assert f"`{v}` {n}× `{key}`" in f.explanation  # the counts in words name the same fence


@pytest.mark.parametrize("pair", [("relaxed", "acq_rel_sys"), ("acq_rel_sys", "relaxed")])
def test_system_scope_is_named_as_the_heavier_side(fences: Bundle, pair: tuple[str, str]) -> None:
    f = get(diagnose(fences, *pair), "atomic.ordering")
    assert f.predicts == "acq_rel_sys" and f.severity == "major"
    assert f.title.endswith(
        "(`acq_rel_sys` adds a system-wide fence (`MEMBAR.SYS`) and an L1 invalidation (`CCTL`) per atomic)"
    )
    assert "MEMBAR.GPU" not in f.explanation
