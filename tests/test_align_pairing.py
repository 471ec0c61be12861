"""Which changed lines the aligner pairs into one replaced line (irdiff/align.py ``_pair_similar``/``_alike``), on
small PTX functions: a load that became vectorized is one changed line (its shapes are 75 % alike, above the 0.5
pairing threshold; a threshold of 0.8 splits it into a deletion and an insertion); unrelated instructions and gaps of
unequal length are not paired. Each case runs in both orders and checks the mirrored rows. Cheap: no compile."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irdiff.align import diff_texts

HEAD = (
    ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\tld.param.u64 \t%rd1, [k_param_0];\n\tmov.u32 \t%r1, %tid.x;\n"
)
TAIL = "\tadd.s32 \t%r9, %r1, 1;\n\tret;\n}\n"

SCALAR = "\tld.global.b16 \t{ %rs1 }, [ %rd1 + 0 ];\n"
VECTOR = "\tld.global.v4.b32 \t{ %r2, %r3, %r4, %r5 }, [ %rd1 + 0 ];\n"


def _changed(x: str, y: str) -> list[tuple[str, str | None, str | None]]:
    d = diff_texts("ptx", HEAD + x + TAIL, HEAD + y + TAIL, kernel_a="k", kernel_b="k")
    return [(r.tag, r.a_text, r.b_text) for r in d.lines if r.tag != "equal"]


def _mirror(rows: list[tuple[str, str | None, str | None]]) -> list[tuple[str, str | None, str | None]]:
    flip = {"insert": "delete", "delete": "insert", "replace": "replace"}
    return [(flip[t], b, a) for t, a, b in rows]


@pytest.mark.parametrize(
    ("x", "y", "tags"),
    [
        (SCALAR, VECTOR, ["replace"]),  # 75 % alike: paired
        ("\tmov.u32 \t%r2, %ctaid.x;\n", "\tmov.u32 \t%r2, %ctaid.y;\n", ["replace"]),
        ("\tbar.sync \t0;\n", "\tcvt.rn.f16.f32 \t%rs1, %f1;\n", ["delete", "insert"]),  # unrelated: not paired
        ("\tbar.sync \t0;\n" + SCALAR, VECTOR, ["delete", "delete", "insert"]),  # 2 lines against 1: not paired
    ],
)
@pytest.mark.parametrize("order", ["ab", "ba"])
def test_changed_lines_pair_only_when_alike(x: str, y: str, tags: list[str], order: str) -> None:
    rows = _changed(x, y) if order == "ab" else _mirror(_changed(y, x))
    assert [t for t, _, _ in rows] == tags
    if tags == ["replace"]:
        ((_, a, b),) = rows
        assert a is not None and b is not None and a.strip() != b.strip()


def test_vectorized_load_reads_as_one_changed_line() -> None:
    assert _changed(SCALAR, VECTOR) == [
        (
            "replace",
            "\tld.global.b16 \t{ %rs0 }, [ %rd0 + 0 ];",
            "\tld.global.v4.b32 \t{ %r1, %r2, %r3, %r4 }, [ %rd0 + 0 ];",
        )
    ]


@pytest.mark.parametrize(
    ("x", "y", "alike"),
    [
        # one line a prefix of the other (at least 3 characters), however little else they share
        ("ret", "ret { i32, i32, i32, i32 } %packed_result_value", True),
        ("%1)", "%1) : (!tt.ptr<f32>, i32) -> tensor<1024xf32>", True),  # 3 characters, not a bare name
        # a Python parameter that gained an annotation, a default or a comment
        ("MAX,", "MAX: tl.constexpr = 1024,", True),
        ("N,", "N=4096,  # the row length of the input", True),
        ("x_ptr,", "x_ptr  # pointer to the first input vector, fp16", True),
        # exactly half alike (2 * 9 matched of 36 characters): the threshold is inclusive
        (".reg .b32 \t%r<239>;", "and.b32 \t%r_, %r_, 3;", True),
        # under half alike, not prefixes, not a bare name with an annotation
        (".address_size 64", ".reg .b64 \t%rd<42>;", False),
        ("tt.return", "scf.yield %acc.0, %a_ptrs.1 : tensor<128x64xf32>", False),
        ("acc", "tt.store %c_ptrs, %acc", False),
        # the bare-name test is the shorter line's: a longer line that is a bare name only once `,;)` are stripped
        # does not pair with a shorter one that gained a default (2 * 1 matched < 0.5 * 7 characters)
        ("N,;)", "N=4", False),
        ("", "ret;", False),
        ("  ", "ret;", False),
    ],
)
def test_alike_in_both_orders(x: str, y: str, alike: bool) -> None:
    from irdiff.align import _alike, _blocks_rapidfuzz

    assert _alike(x, y, _blocks_rapidfuzz) is alike
    assert _alike(y, x, _blocks_rapidfuzz) is alike


@pytest.mark.parametrize(("n", "paired"), [(256, True), (257, False)])
def test_long_runs_of_changed_lines_pair_up_to_256(n: int, paired: bool) -> None:
    """Leftover runs are paired line by line up to 256 lines each (the cost bound); longer runs are shown as
    deletions then insertions."""
    x = "".join(f"\tmov.u32 \t%r{i + 2}, %ctaid.x;\n" for i in range(n))
    y = "".join(f"\tmov.u32 \t%r{i + 2}, %ctaid.y;\n" for i in range(n))
    tags = [t for t, a, b in _changed(x, y) if "%ctaid" in (a or b or "")]
    assert tags == (["replace"] * n if paired else ["delete"] * n + ["insert"] * n)


_TAIL = st.text(alphabet=":,;)= x1", max_size=5)


@st.composite
def _line_pairs(draw: st.DrawFn) -> tuple[str, str]:
    """Two lines sharing a name (or any prefix), often of equal length: the case where neither is the shorter one."""
    head = draw(st.one_of(st.from_regex(r"[A-Za-z_]\w{0,4}", fullmatch=True), st.text(alphabet="a%.{ ", max_size=6)))
    ta = draw(_TAIL)
    tb = draw(st.one_of(st.text(alphabet=":,;)= x1", min_size=len(ta), max_size=len(ta)), _TAIL))
    return head + ta, head + tb


@settings(max_examples=2000, deadline=None)
@given(pair=_line_pairs())
def test_alike_is_symmetric(pair: tuple[str, str]) -> None:
    """Whether two lines pair never depends on which variant is A: equal-length lines included (both are tried as
    the shorter one, and the matcher's blocks are counted in both directions)."""
    from irdiff.align import _alike, _blocks_rapidfuzz

    x, y = pair
    assert _alike(x, y, _blocks_rapidfuzz) == _alike(y, x, _blocks_rapidfuzz)


@pytest.mark.parametrize(("x", "y"), [("a))", "a=x"), ("N;;;", "N: i")])
def test_alike_equal_length_bare_name(x: str, y: str) -> None:
    """Equal-length lines, one a bare name (``a`` after stripping ``,;)``) and the other that name with a default or
    an annotation: alike in both orders (before, only the order with the bare name first was)."""
    from irdiff.align import _alike, _blocks_rapidfuzz

    assert _alike(x, y, _blocks_rapidfuzz) and _alike(y, x, _blocks_rapidfuzz)
