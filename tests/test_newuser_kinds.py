"""Explanations a new user's first suites got incomplete or backwards, on kernels of the same kinds written for these
tests (``tests/suites/newuser_kinds.py``, sm80, shared compile cache), each pair diagnosed in both orders:

- a source change is a root (or an effect of one), never listed as unexplained, and an indexing change is named by
  its expression (``r[:, None]`` vs ``r[None, :]``), not by bare tokens (``None`` vs ``:``);
- a strided access (neighbours ``s`` elements apart) is said to move more DRAM/L2 bytes (partly used 32-byte
  sectors), while narrower accesses of adjacent elements are the same bytes in more instructions;
- launch options alone (``num_warps`` 2 vs 8) are one root finding saying what they are, without tile-size or
  autotuning words and without a "code change" that does not exist.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from diag_helpers import diagnose, get, ids

from irdiff.bundle import Bundle
from irdiff.diagnose.facts import extract_facts
from irdiff.render.order import present_findings

SUITES = Path(__file__).parent / "suites"
NEW = str(SUITES / "newuser_kinds.py")
TILE = str(SUITES / "rule_coalescing.py")


@pytest.fixture(scope="module")
def axis(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(NEW + "::axis", ["rows", "cols"], "sm80")  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def gap(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(NEW + "::gap", ["unit16", "every4", "shift1"], "sm80")  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def warps(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(NEW + "::warps", ["w2", "w8"], "sm80")  # type: ignore[no-any-return]


ORDERS = pytest.mark.parametrize("order", [("rows", "cols"), ("cols", "rows")])


@ORDERS
def test_source_changes_are_roots_and_name_the_indexing_expression(axis: Bundle, order: tuple[str, str]) -> None:
    a, b = order
    d = diagnose(axis, a, b)
    roles = {p.finding.id: p.role for p in present_findings(d)}
    src = [i for i in ids(d) if i.startswith("source.")]
    assert "source.kwarg-changed" in src and "source.statement" in src
    # every source change is a root (or the effect of one): none is listed as unexplained
    assert all(roles[i] in ("root", "effect") for i in src), roles
    assert not [i for i in src if i in d.unexplained]
    assert roles["source.kwarg-changed"] == "root"
    kw = get(d, "source.kwarg-changed")
    axes = {"rows": "axis=1", "cols": "axis=0"}
    assert f"`{axes[a]}` in `{a}`, `{axes[b]}` in `{b}`" in kw.title
    # the indexing change is named by the subscript, inspected variant first, not by `None` / `:` alone
    st = get(d, "source.statement")
    idx = {"rows": ("`r[:, None]`", "`c[None, :]`"), "cols": ("`r[None, :]`", "`c[:, None]`")}
    # ... after the access it transposes (`cols` reads x_ptr column-major): that is the root, the syntax its detail
    assert st.title.startswith(
        "Source: the load reads `x_ptr` transposed in `cols` (column-major), row-major in `rows` "
        f"({idx[a][0]} in `{a}` vs {idx[b][0]} in `{b}` (and 1 more)"
    ), st.title
    assert f"{idx[a][1]} in `{a}` vs {idx[b][1]} in `{b}`" in st.explanation
    assert "`None` in" not in st.title + st.explanation and "`:` in" not in st.title + st.explanation


@pytest.mark.parametrize("order", [("every4", "unit16"), ("unit16", "every4")])
def test_strided_access_moves_more_dram_bytes(gap: Bundle, order: tuple[str, str]) -> None:
    """``src + i * 4`` (fp16): neighbours 8 bytes apart, 8 of each 32-byte sector used: about 4x the DRAM/L2 bytes;
    the facts read the stride from the TTGIR address computation."""
    strides = {v: [lo.strides for lo in extract_facts(gap.variants[v]).lowered] for v in ("unit16", "every4")}
    assert strides == {"unit16": [[1], [1]], "every4": [[4], [1]]}  # the load, then the store
    d = diagnose(gap, *order)
    w = get(d, "coalesce.vector-width")
    assert w.severity == "critical" and w.predicts == "every4"
    assert (
        "load 2048xf16 in `every4` reads every 4th element (neighbours 4 elements, 8 bytes, apart along dim 0) where "
        "`unit16` reads adjacent ones: global memory moves whole 32-byte sectors, of which `every4` uses 8 bytes, so "
        "it moves about 4× the DRAM/L2 bytes for the data it uses"
    ) in w.explanation
    assert "same bytes" not in w.explanation


@pytest.mark.parametrize("order", [("shift1", "unit16"), ("unit16", "shift1")])
def test_misaligned_adjacent_access_is_the_same_bytes(gap: Bundle, order: tuple[str, str]) -> None:
    """``src + i + 1``: adjacent elements proven only 2-byte aligned: 16-bit accesses of the same sectors."""
    assert [lo.strides for lo in extract_facts(gap.variants["shift1"]).lowered] == [[1], [1]]
    d = diagnose(gap, *order)
    w = get(d, "coalesce.vector-width")
    assert w.predicts == "shift1" and "2-byte aligned" in w.explanation
    assert w.explanation.endswith(
        "Both read adjacent elements, so the same sectors are fetched: narrower accesses mean proportionally more "
        "load/store instructions for the same bytes."
    )
    assert "DRAM" not in w.explanation


def test_strides_of_two_dimensional_tiles(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """The coalescing suite's tiles: a runtime row stride ``ld`` is unknown (None), columns step by 1, by 2
    (``2 * c``), or by a runtime ``step`` (unknown: a gather as far as the compiler knows)."""
    b = compile_suite(TILE, ["rows", "gather", "cols", "pairs"], "sm80")
    got = {v: extract_facts(b.variants[v]).lowered[0].strides for v in ("rows", "gather", "cols", "pairs")}
    assert got == {"rows": [None, 1], "gather": [None, None], "cols": [1, None], "pairs": [None, 2]}


@pytest.mark.parametrize("order", [("w2", "w8"), ("w8", "w2")])
def test_launch_options_alone_are_one_root_that_says_what_changed(warps: Bundle, order: tuple[str, str]) -> None:
    a, b = order
    d = diagnose(warps, a, b)
    assert "config.changed" not in ids(d)  # no second finding for the same fact
    o = get(d, "options.changed")
    assert not o.causes and d.findings[0].id == "options.changed"
    n = {"w2": 2, "w8": 8}
    assert o.title == f"Options differ: `num_warps` = {n[a]} in `{a}` vs {n[b]} in `{b}`"
    assert (
        f"`num_warps` is the number of warps per CTA: {n[a]} ({32 * n[a]} threads) in `{a}` vs {n[b]} "
        f"({32 * n[b]} threads) in `{b}`"
    ) in o.explanation
    text = " ".join(f.title + " " + f.explanation for f in d.findings)
    # nothing about tile sizes, autotuners or a code change: the source is the same
    assert "TorchInductor" not in text and "code change" not in text and "Tile sizes" not in text
    # every effect reaches the option root
    assert all(f.causes for f in d.findings if f.id != "options.changed"), [(f.id, f.causes) for f in d.findings]


# ------------------------------------------------------------------------------ --interpret: what it cannot check


def test_interpreter_notes_name_unmodelled_dot_precision(mech80: Bundle, mech90: Bundle) -> None:
    """Real TTIR: a tf32 (and tf32x3) fp32 dot and an fp8 dot are named with their variants; an ieee fp32 dot and an
    fp16 dot are not (the interpreter's NumPy matmul computes them as the GPU does, up to summation order)."""
    from irdiff.run.interpret import unmodelled_note

    tt = {v: mech80.variants[v].text("ttir") for v in ("ieee", "tf32", "tf32x3", "f16_dot")}
    note = unmodelled_note(tt)
    assert note == (
        "note: the CPU interpreter does not model `tl.dot` input precision `tf32` (fp32 inputs rounded on the GPU) in "
        "`tf32`; `tl.dot` input precision `tf32x3` (fp32 inputs rounded on the GPU) in `tf32x3`: it multiplies in "
        "full precision, so a numeric difference the GPU shows is not checked here (run on a GPU)"
    )
    assert unmodelled_note({v: tt[v] for v in ("ieee", "f16_dot")}) is None
    fp8 = unmodelled_note({"fp8_default": mech90.variants["fp8_default"].text("ttir")})
    assert fp8 is not None and "`tl.dot` on fp8 inputs (`f8E" in fp8 and "in `fp8_default`" in fp8


def test_interpreter_notes_reduced_shape() -> None:
    from irdiff.run.interpret import reduced_shape_note

    full, used = [{"M": 512, "N": 512, "K": 48}], [{"M": 64, "N": 64, "K": 48}]
    assert reduced_shape_note(full, used) == (
        "note: shape reduced for the interpreter (it runs every program in NumPy, each dimension capped at 64): "
        "M=512→64, N=512→64; choose one with --shape K=V or --shapes"
    )
    assert reduced_shape_note(full, full) is None


def test_cli_interpret_warns_about_tf32_and_the_reduced_shape() -> None:
    """``irdiff run … --interpret`` on fp32 ieee vs tf32 dots (own kernel, 256x256x128 capped to 64): both match
    the reference on the CPU, and the output says in one line each that tf32 is not modelled and the shape was
    reduced, in either order of the variants."""
    from click.testing import CliRunner

    from irdiff.cli import cli

    for a, b in (("tf32", "exact"), ("exact", "tf32")):
        res = CliRunner().invoke(cli, ["run", NEW + "::prec", "--variant", a, "--against", b, "--interpret",
                                       "--target", "sm80"])  # fmt: skip
        assert res.exit_code == 0, res.output
        lines = res.output.splitlines()
        assert "correctness: every variant matches the reference (and the other variants)" in lines
        warn = [ln for ln in lines if "does not model" in ln]
        assert warn == [
            "note: the CPU interpreter does not model `tl.dot` input precision `tf32` (fp32 inputs rounded on the "
            "GPU) in `tf32`: it multiplies in full precision, so a numeric difference the GPU shows is not checked "
            "here (run on a GPU)"
        ]
        assert [ln for ln in lines if ln.startswith("note: shape reduced")] == [
            "note: shape reduced for the interpreter (it runs every program in NumPy, each dimension capped at 64): "
            "M=256→64, N=256→64, K=128→64; choose one with --shape K=V or --shapes"
        ]
