"""The coalescing rules (``irdiff/diagnose/rules/coalescing.py``) called directly on the facts of real compiles, in
both orders of the variants: ``coalesce.contiguity`` (AxisInfo's pointer contiguity/divisibility) and
``coalesce.vector-width`` (the bits one thread moves per access).

Kernels (from the shared compile cache): ``tests/suites/rule_coalescing.py`` on sm80 (a 2-D fp16 tile copy whose
source is row-major, gathered with a runtime step, misaligned, column-major, or every other column of a narrower
tile; or whose source and destination are both column-major, the destination misaligned, or the column-major source
misaligned), ``tests/suites/diag_add_variants.py`` on sm80 (``mis8``: an 8-byte-aligned fp32 input), and
``tests/suites/diag_loop.py`` on sm90 (``warps8``: 256 fp16 over 8 warps, one element per thread).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from rule_pairs import Real, read_once

from irdiff.diagnose.facts import Access, LoweredAccess, Ref
from irdiff.diagnose.model import Finding
from irdiff.diagnose.params import pair_params
from irdiff.diagnose.rules.coalescing import (
    _contiguous,
    _fast_dim,
    _nth,
    _order_reason,
    _pair_accesses,
    _stride_pair,
    _strides,
    _traffic,
    _width_phrase,
    rule_contiguity,
    rule_vector_width,
)
from irdiff.diagnose.rules.common import Context
from irdiff.diagnose.testing import make_context, make_facts

SUITES = Path(__file__).parent / "suites"
TILE = str(SUITES / "rule_coalescing.py")
ADDV = str(SUITES / "diag_add_variants.py")
LOOP = str(SUITES / "diag_loop.py")
BOTH = pytest.mark.parametrize("swap", [False, True], ids=["as-named", "swapped"])
COALESCE = (
    "The coalescing pass (`tritongpu-coalesce`) asks AxisInfo how many consecutive elements of each pointer tensor are "
    "contiguous and how aligned (in bytes) the first one is; "
)

_FACTS: Real = {}


@pytest.fixture(scope="module")
def real(compile_suite) -> Real:  # type: ignore[no-untyped-def]
    return read_once(
        compile_suite,
        (
            (
                TILE,
                [
                    "rows",
                    "gather",
                    "skew",
                    "cols",
                    "pairs",
                    "tt",
                    "dskew",
                    "tskew",
                    "inline",
                    "two",
                    "twoq",
                    "zx",
                    "bytes",
                    "rows2",
                    "cols2",
                ],
                "sm80",
                None,
            ),
            # the same variant lists as tests/test_rules.py (one compile per session); facts of the variants used here
            (ADDV, ["plain", "mis8", "w8", "i64"], "sm80", ["plain", "mis8"]),
            (
                LOOP,
                ["stages3", "stages1", "warps8", "dot3", "dot1", "dot3w8", "tma", "flat", "nest"],
                "sm90",
                ["stages3", "warps8"],
            ),
        ),
        _FACTS,
    )


def context(real: Real, a: str, b: str) -> Context:
    (fa, sa, ta), (fb, sb, tb) = real[a], real[b]
    pairing = pair_params(sa, ta["ttir"], sb, tb["ttir"])
    fa.peer_names, fb.peer_names = pairing.aliases("a"), pairing.aliases("b")
    return Context(a, b, fa, fb, pairing=pairing)


def one(rule, real: Real, x: str, y: str, swap: bool) -> tuple[Finding, str, str]:  # type: ignore[no-untyped-def]
    a, b = (y, x) if swap else (x, y)
    found = rule(context(real, a, b))
    assert len(found) == 1, [f.id for f in found]
    return found[0], a, b


def line(real: Real, variant: str, stage: str, n: int | None) -> str:
    assert n is not None
    return real[variant][2][stage].splitlines()[n - 1]


@BOTH
def test_gathered_column_loses_contiguity_and_alignment(real: Real, swap: bool) -> None:
    """``gather`` multiplies the column index by a runtime ``step``: AxisInfo proves contiguity 1 and 2-byte
    alignment (one fp16) along the fast dimension, ``rows`` 64 and 16 bytes: critical, ``gather`` predicted slower."""
    f, a, b = one(rule_contiguity, real, "gather", "rows", swap)
    v = {"gather": (1, 2), "rows": (64, 16)}
    assert (f.id, f.severity, f.stage, f.predicts) == ("coalesce.contiguity", "critical", "ttgir", "gather")
    assert f.title == (
        f"Pointer contiguity and alignment proven by AxisInfo: `x` load 32x64xf16 contiguity {v[a][0]} in `{a}` vs "
        f"{v[b][0]} in `{b}`"
    )
    assert f.explanation.startswith(
        COALESCE + f"`x` load 32x64xf16 (dim 1): contiguity {v[a][0]} in `{a}` vs {v[b][0]} in `{b}`, divisibility "
        f"{v[a][1]} vs {v[b][1]} bytes. Contiguity along the fastest dimension"
    )
    # with nothing contiguous, Triton 3.6's coalescing pass also picks another order for `gather` (3.9 keeps [1, 0])
    order = {v: real[v][0].accesses[0].order for v in ("gather", "rows")}
    if order["gather"] == order["rows"]:
        assert "access order" not in f.explanation
    else:
        assert (
            f"`x` load 32x64xf16 order {order[a]} in `{a}` vs {order[b]} in `{b}` (nothing is contiguous in `gather`: "
            "the order there is the tie-break among equal contiguities)."
        ) in f.explanation
    first, axa, axb = f.evidence
    assert (first.variant, axa.variant, axb.variant) == (a, a, b)
    # the op the pass considered, as its log line prints it after "Considering op:" (the log's prefix left out)
    op = first.text.removeprefix("`x` load 32x64xf16: ")
    assert op.startswith("%") and " = tt.load %" in op and "Considering" not in op and "tritongpu-coalesce" not in op
    assert line(real, a, "llvm_debug", first.line).endswith(f"Considering op: {op}") and first.line == axa.line - 1
    cont = {
        "gather": "contiguity = [1, 1], divisibility = [2, 2]",
        "rows": "contiguity = [1, 64], divisibility = [2, 16]",
    }
    assert cont[a] in axa.text and cont[b] in axb.text
    for e in (axa, axb):
        assert e.stage == "llvm_debug" and e.text == line(real, e.variant, e.stage, e.line)


@BOTH
def test_misaligned_pointer_is_alignment_only(real: Real, swap: bool) -> None:
    """``skew``'s source is 4-byte aligned (no ``tt.divisibility``): the same contiguity 64, divisibility 1 byte vs 16
    bytes: major (something is still contiguous), titled as alignment, ``skew`` predicted slower."""
    f, a, b = one(rule_contiguity, real, "skew", "rows", swap)
    d = {"skew": "1 byte", "rows": "16 bytes"}
    assert (f.severity, f.predicts) == ("major", "skew")
    assert f.title == (
        f"Pointer alignment proven by AxisInfo: `x` load 32x64xf16 divisibility {d[a]} in `{a}` vs {d[b]} in `{b}`"
    )
    assert f"`x` load 32x64xf16 (dim 1): divisibility {d[a]} in `{a}` vs {d[b]} in `{b}`." in f.explanation
    assert "contiguity 64" not in f.explanation


@BOTH
def test_transposed_access_compares_each_own_dimension(real: Real, swap: bool) -> None:
    """``cols`` reads ``src`` column-major: contiguous (32) along dim 0, ``rows`` along dim 1 (64). Each variant's
    own contiguous dimension is compared (not one's strided one): major, not critical; the order change is named."""
    f, a, b = one(rule_contiguity, real, "cols", "rows", swap)
    dim = {"cols": 0, "rows": 1}
    c = {"cols": 32, "rows": 64}
    order = {"cols": [0, 1], "rows": [1, 0]}
    assert (f.severity, f.predicts) == ("major", "cols")
    assert f.title == (
        f"Pointer contiguity proven by AxisInfo: `x` load 32x64xf16 contiguity {c[a]} in `{a}` vs {c[b]} in `{b}`"
    )
    assert (
        f"`x` load 32x64xf16 (dim {dim[a]} in `{a}`, {dim[b]} in `{b}`): contiguity {c[a]} in `{a}` vs {c[b]} in `{b}`."
    ) in f.explanation
    assert "divisibility" not in f.explanation.split("first one is; ")[1].split(". Contiguity")[0]
    # contiguous on both sides, each along its own dimension: the pass orders by contiguity (not "nothing contiguous")
    assert f.explanation.endswith(
        " The coalescing pass orders each access's dimensions by proven contiguity, the most contiguous first, so the "
        f"access order differs: `x` load 32x64xf16 order {order[a]} in `{a}` vs {order[b]} in `{b}` (most contiguous "
        f"along dim {dim[a]} in `{a}`, dim {dim[b]} in `{b}`)."
    )
    assert "nothing" not in f.explanation.lower()
    assert rule_vector_width(context(real, a, b)) == []  # 128-bit either way


@BOTH
def test_other_tile_shape_paired_by_pointer(real: Real, swap: bool) -> None:
    """``pairs`` loads a ``[32, 32]`` tile of every other column: paired with ``rows``' ``[32, 64]`` load by its
    pointer ``src`` (the label names the other shape); contiguity 1 vs 64, 4-byte vs 16-byte alignment."""
    f, a, b = one(rule_contiguity, real, "pairs", "rows", swap)
    shape = {"pairs": "32x32", "rows": "32x64"}
    c, d = {"pairs": 1, "rows": 64}, {"pairs": 4, "rows": 16}
    label = f"`x` load {shape[a]}xf16 (`{shape[b]}xf16` in the other variant)"
    assert (f.severity, f.predicts) == ("critical", "pairs")
    assert f.title.endswith(f"{label} contiguity {c[a]} in `{a}` vs {c[b]} in `{b}`")
    assert f"{label} (dim 1): contiguity {c[a]} in `{a}` vs {c[b]} in `{b}`, divisibility {d[a]} vs {d[b]} bytes." in (
        f.explanation
    )
    w, _, _ = one(rule_vector_width, real, "pairs", "rows", swap)
    bits = {"pairs": 16, "rows": 128}
    assert (w.severity, w.predicts) == ("critical", "pairs")
    assert w.title == f"Vector width of global accesses (`{a}` vs `{b}`): {label} {bits[a]} vs {bits[b]} bits"
    # nothing contiguous: Triton 3.9's coalescing pass still gives 8 elements per thread (one 16-bit access each, the
    # contiguity names why), Triton 3.6's gives 1 (16 bits is then the full width)
    phrase = {
        "pairs": "8 elements per thread, issued as 16-bit (2-byte) accesses in `pairs` because only 1 consecutive "
        "element is proven contiguous"
        if real["pairs"][0].accesses[0].per_thread == 8
        else "1 element per thread × 16 bits = 16-bit (2-byte) accesses in `pairs`",
        "rows": "8 elements per thread × 16 bits = 128-bit (16-byte) accesses in `rows`",
    }
    assert f"{label}: {phrase[a]} vs {phrase[b]}. A stride is not only more instructions: " in w.explanation
    # every other column of fp16: neighbours 4 bytes apart, 16 of each 32-byte sector used: 2x the DRAM/L2 bytes
    assert (
        "`x` load 32x32xf16 in `pairs` reads every 2nd element (neighbours 2 elements, 4 bytes, apart along dim 1) "
        "where `rows` reads adjacent ones: global memory moves whole 32-byte sectors, of which `pairs` uses 16 bytes, "
        "so it moves about 2× the DRAM/L2 bytes for the data it uses"
    ) in w.explanation
    assert "same bytes" not in w.explanation
    assert w.explanation.endswith(
        "so it moves about 2× the DRAM/L2 bytes for the data it uses, on top of the narrower (more) instructions. "
        "Contiguous (unit-stride) indexing along the fastest dimension, or a tile whose fastest dimension is the "
        "contiguous one, reads only what is used."
    )


def test_pairing_by_kind_shape_and_origin(real: Real) -> None:
    """Same-shaped accesses pair in order (load with load, store with store); a different tile shape pairs only the
    named pointer's load (the stores' pointers have no name: left unpaired)."""
    ctx = context(real, "rows", "gather")
    assert [(x.kind, y.kind) for x, y in _pair_accesses(ctx.fa, ctx.fb)] == [("load", "load"), ("store", "store")]
    ctx = context(real, "pairs", "rows")
    pairs = _pair_accesses(ctx.fa, ctx.fb)
    assert [(x.kind, x.shape, y.shape) for x, y in pairs] == [("load", [32, 32], [32, 64])]
    assert rule_contiguity(context(real, "rows", "rows")) == rule_vector_width(context(real, "rows", "rows")) == []


@BOTH
def test_vector_width_names_the_reason(real: Real, swap: bool) -> None:
    """``gather``: 8 fp16 per thread, but one 16-bit access each, because the pointer is proven only 2-byte aligned
    and only 1 element contiguous: critical (below 32 bits); evidence is each side's ``perThread`` and layout."""
    f, a, b = one(rule_vector_width, real, "gather", "rows", swap)
    bits = {"gather": 16, "rows": 128}
    assert (f.id, f.severity, f.stage, f.predicts) == ("coalesce.vector-width", "critical", "ttgir", "gather")
    assert (
        f.title == f"Vector width of global accesses (`{a}` vs `{b}`): `x` load 32x64xf16 {bits[a]} vs {bits[b]} bits"
    )
    if real["gather"][0].accesses[0].per_thread == 8:  # Triton 3.9 (3.6 gives 1 element per thread: full width)
        assert (
            "8 elements per thread, issued as 16-bit (2-byte) accesses in `gather` because the pointer is proven only "
            "2-byte aligned and only 1 consecutive element is proven contiguous"
        ) in f.explanation
    else:
        assert "1 element per thread × 16 bits = 16-bit (2-byte) accesses in `gather`" in f.explanation
    assert "8 elements per thread × 16 bits = 128-bit (16-byte) accesses in `rows`" in f.explanation
    # the gather's step is a runtime value (no stride known) and AxisInfo proves 1 contiguous element: not adjacent
    assert f.explanation.endswith(
        ". Narrower accesses mean proportionally more load/store instructions; where the elements are not adjacent"
        " in memory (a runtime stride or a gather, which AxisInfo cannot see through), each 32-byte "
        "sector is also only partly used: more DRAM/L2 traffic, not only more instructions."
    )
    blocked = {v: len(real[v][0].blocked[:2]) for v in (a, b)}  # Triton 3.6 gives `gather` a second layout
    assert [(e.variant, e.stage) for e in f.evidence] == [(a, "llvm_debug"), (b, "llvm_debug")] + [(a, "ttgir")] * (
        blocked[a]
    ) + [(b, "ttgir")] * blocked[b]
    assert all(e.text.endswith("perThread: 8") for e in f.evidence[:2] if e.variant == "rows")
    for e in f.evidence[2:]:
        assert e.text.startswith("#blocked") and "= #ttg.blocked<{sizePerThread = " in e.text
    assert "sizePerThread = [1, 8]" in next(e.text for e in f.evidence[2:] if e.variant == "rows")


@BOTH
def test_vector_width_of_a_misaligned_fp32_input_is_major(real: Real, swap: bool) -> None:
    """``mis8`` (tests/suites/diag_add_variants.py): 4 fp32 per thread, 32-bit accesses because the pointer is proven
    only 1-byte aligned (no ``tt.divisibility``): 32 vs 128 bits is major (not below 32)."""
    f, a, b = one(rule_vector_width, real, "mis8", "plain", swap)
    bits = {"mis8": 32, "plain": 128}
    assert (f.severity, f.predicts) == ("major", "mis8")
    assert f.title.endswith(f"load 1024xf32 {bits[a]} vs {bits[b]} bits")
    assert (
        "4 elements per thread, issued as 32-bit (4-byte) accesses in `mis8` because the pointer is proven only 1-byte "
        "aligned"
    ) in f.explanation
    assert "contiguous" not in f.explanation.split("in `mis8` because")[1].split(" vs ")[0]
    c, _, _ = one(rule_contiguity, real, "mis8", "plain", swap)
    assert (c.severity, c.predicts) == ("major", "mis8") and c.title.startswith("Pointer alignment proven")


@BOTH
def test_vector_width_one_element_per_thread(real: Real, swap: bool) -> None:
    """``warps8`` spreads 256 fp16 over 8 warps: 1 element per thread (16 bits) where ``stages3`` has 2 (32 bits),
    for the load and the store; nothing else limits them."""
    f, a, b = one(rule_vector_width, real, "warps8", "stages3", swap)
    bits = {"warps8": 16, "stages3": 32}
    assert (f.severity, f.predicts) == ("critical", "warps8")
    assert f.title == (
        f"Vector width of global accesses (`{a}` vs `{b}`): `acc` load 256xf16 {bits[a]} vs {bits[b]} bits, store "
        f"256xf16 {bits[a]} vs {bits[b]} bits"
    )
    assert "1 element per thread × 16 bits = 16-bit (2-byte) accesses in `warps8`" in f.explanation
    assert "2 elements per thread × 16 bits = 32-bit (4-byte) accesses in `stages3`" in f.explanation
    assert rule_contiguity(context(real, a, b)) == []


def test_width_phrase_reasons(real: Real) -> None:
    """``_width_phrase`` on real accesses: full width needs no reason; the misaligned and the strided ones name only
    what limits them."""
    rows, skew, gather = (real[v][0].accesses[0] for v in ("rows", "skew", "gather"))
    assert _width_phrase(rows, "r") == "8 elements per thread × 16 bits = 128-bit (16-byte) accesses in `r`"
    assert _width_phrase(skew, "s") == (
        "8 elements per thread, issued as 16-bit (2-byte) accesses in `s` because the pointer is proven only 1-byte "
        "aligned"
    )
    # the gathered load as Triton 3.9's coalescing pass lays it out (8 per thread; 3.6 gives it 1)
    gather = dataclasses.replace(gather, per_thread=8)
    assert _width_phrase(gather, "g") == (
        "8 elements per thread, issued as 16-bit (2-byte) accesses in `g` because the pointer is proven only 2-byte "
        "aligned and only 1 consecutive element is proven contiguous"
    )
    # contiguous but 4-byte aligned: 2 fp16 per access
    pairs = dataclasses.replace(rows, divisibility=[2, 4], vector_bits=32)
    assert _width_phrase(pairs, "p").endswith(
        "32-bit (4-byte) accesses in `p` because the pointer is proven only 4-byte aligned"
    )
    # a column-major load (fastest dimension 0, the layout's order [0, 1]) 4-byte aligned along it: dim 0's facts
    # name the reason, not the strided dim 1's (2-byte aligned, 1 contiguous)
    cols = dataclasses.replace(real["cols"][0].accesses[0], divisibility=[4, 2], vector_bits=32)
    assert cols.order == [0, 1] and cols.contiguity == [32, 1]
    assert _width_phrase(cols, "c") == (
        "8 elements per thread, issued as 32-bit (4-byte) accesses in `c` because the pointer is proven only 4-byte "
        "aligned"
    )
    one = dataclasses.replace(rows, contiguity=[1, 1], vector_bits=16)
    assert _width_phrase(one, "o").endswith(" in `o` because only 1 consecutive element is proven contiguous")
    two = dataclasses.replace(rows, contiguity=[1, 2], vector_bits=32)
    assert _width_phrase(two, "t").endswith(" in `t` because only 2 consecutive elements are proven contiguous")


TAIL = (
    ". Contiguity along the fastest dimension and alignment bound how many elements one thread may load with a single "
    "vector instruction."
)


@BOTH
def test_both_accesses_transposed(real: Real, swap: bool) -> None:
    """``tt`` reads ``src`` and writes ``dst`` column-major: both accesses contiguous along dim 0 (32), ``rows``' along
    dim 1 (64), alignment 16 bytes on each side's own dimension. Two rows (the title counts the second), both order
    changes named with their reason; major (both contiguous), ``tt`` predicted slower (less contiguity)."""
    f, a, b = one(rule_contiguity, real, "tt", "rows", swap)
    c, dim, order = {"tt": 32, "rows": 64}, {"tt": 0, "rows": 1}, {"tt": [0, 1], "rows": [1, 0]}
    assert (f.severity, f.predicts) == ("major", "tt")
    assert f.title == (
        f"Pointer contiguity proven by AxisInfo: `x` load 32x64xf16 contiguity {c[a]} in `{a}` vs {c[b]} in `{b}` "
        "(+1 more)"
    )
    rows = "; ".join(
        f"`x` {k} 32x64xf16 (dim {dim[a]} in `{a}`, {dim[b]} in `{b}`): contiguity {c[a]} in `{a}` vs {c[b]} in `{b}`"
        for k in ("load", "store")
    )
    orders = "; ".join(
        f"`x` {k} 32x64xf16 order {order[a]} in `{a}` vs {order[b]} in `{b}` (most contiguous along dim {dim[a]} in "
        f"`{a}`, dim {dim[b]} in `{b}`)"
        for k in ("load", "store")
    )
    assert f.explanation == (
        COALESCE + rows + TAIL + " The coalescing pass orders each access's dimensions by proven contiguity, the most "
        "contiguous first, so the access order differs: " + orders + "."
    )
    assert [e.variant for e in f.evidence] == [a, a, b] * 2
    assert rule_vector_width(context(real, a, b)) == []  # 128-bit either way


@BOTH
def test_alignment_lost_by_one_access_gained_by_another_predicts_neither(real: Real, swap: bool) -> None:
    """``skew``'s source and ``dskew``'s destination are only 4-byte aligned (AxisInfo: 1 byte): the load loses the
    alignment in one, the store in the other. Two rows, alignment only, nothing ordered differently; neither variant is
    predicted slower by either rule (one access narrows where the other widens)."""
    f, a, b = one(rule_contiguity, real, "dskew", "skew", swap)
    d = {("load", "skew"): "1 byte", ("load", "dskew"): "16 bytes", ("store", "skew"): "16 bytes"}
    d[("store", "dskew")] = "1 byte"
    assert (f.severity, f.predicts) == ("major", None)
    assert f.title == (
        f"Pointer alignment proven by AxisInfo: `x` load 32x64xf16 divisibility {d['load', a]} in `{a}` vs "
        f"{d['load', b]} in `{b}` (+1 more)"
    )
    assert (
        f.explanation
        == COALESCE
        + "; ".join(
            f"`x` {k} 32x64xf16 (dim 1): divisibility {d[k, a]} in `{a}` vs {d[k, b]} in `{b}`"
            for k in ("load", "store")
        )
        + TAIL
    )
    w, _, _ = one(rule_vector_width, real, "dskew", "skew", swap)
    bits = {("load", "skew"): 16, ("load", "dskew"): 128, ("store", "skew"): 128, ("store", "dskew"): 16}
    assert (w.severity, w.predicts) == ("critical", None)
    assert w.title == f"Vector width of global accesses (`{a}` vs `{b}`): " + ", ".join(
        f"`x` {k} 32x64xf16 {bits[k, a]} vs {bits[k, b]} bits" for k in ("load", "store")
    )
    # and against the fully aligned `rows`, each one is the slower
    for v in ("skew", "dskew"):
        assert rule_contiguity(context(real, v, "rows"))[0].predicts == v
        assert rule_vector_width(context(real, "rows", v))[0].predicts == v


@BOTH
def test_misaligned_column_major_load_compares_dim_0(real: Real, swap: bool) -> None:
    """``tskew`` reads the column-major tile of ``cols`` from a 4-byte aligned ``src``: both contiguous (32) along dim 0,
    so dim 0's divisibility is compared (1 byte vs 16 bytes), not the strided dim 1's (1 vs 2 bytes); same order, no
    order sentence; the store is the same."""
    f, a, b = one(rule_contiguity, real, "tskew", "cols", swap)
    d = {"tskew": "1 byte", "cols": "16 bytes"}
    assert (f.severity, f.predicts) == ("major", "tskew")
    assert f.title == (
        f"Pointer alignment proven by AxisInfo: `x` load 32x64xf16 divisibility {d[a]} in `{a}` vs {d[b]} in `{b}`"
    )
    assert (
        f.explanation
        == COALESCE + f"`x` load 32x64xf16 (dim 0): divisibility {d[a]} in `{a}` vs {d[b]} in `{b}`" + (TAIL)
    )
    w, _, _ = one(rule_vector_width, real, "tskew", "cols", swap)
    assert (w.severity, w.predicts) == ("critical", "tskew")
    assert w.title.endswith(f"`x` load 32x64xf16 {16 if a == 'tskew' else 128} vs {128 if a == 'tskew' else 16} bits")


@BOTH
def test_vector_width_explanation_and_evidence(real: Real, swap: bool) -> None:
    """The whole ``coalesce.vector-width`` explanation for ``warps8`` against ``stages3`` (a load and a store, one
    element per thread vs two), and its evidence: each access's ``perThread`` line labelled with the access, then each
    variant's blocked layouts, each pointing at its own TTGIR line."""
    f, a, b = one(rule_vector_width, real, "warps8", "stages3", swap)
    phrase = {
        "warps8": "1 element per thread × 16 bits = 16-bit (2-byte) accesses in `warps8`",
        "stages3": "2 elements per thread × 16 bits = 32-bit (4-byte) accesses in `stages3`",
    }
    assert f.explanation == (
        "The coalescing pass gives each thread `perThread` consecutive elements (the blocked layout's `sizePerThread` "
        "along the fastest dimension); one access moves min(perThread × element bits, proven contiguity, proven "
        f"alignment, 128 bits): `acc` load 256xf16: {phrase[a]} vs {phrase[b]}; store 256xf16: {phrase[a]} vs "
        f"{phrase[b]}. Both read adjacent elements, so the same sectors are fetched: narrower accesses mean "
        "proportionally more load/store instructions for the same bytes."
    )
    labels = ["`acc` load 256xf16", "`acc` load 256xf16", "store 256xf16", "store 256xf16"]
    for e, label, v in zip(f.evidence[:4], labels, [a, b, a, b], strict=True):
        assert e.variant == v and e.stage == "llvm_debug"
        assert e.text == f"{label}: {line(real, v, 'llvm_debug', e.line).strip()}" and "perThread: " in e.text
    assert [e.variant for e in f.evidence[4:]] == [a, b]
    for e in f.evidence[4:]:
        assert e.stage == "ttgir" and e.text.strip() == line(real, e.variant, "ttgir", e.line).strip()
        assert e.text.startswith("#blocked = #ttg.blocked<{sizePerThread = [")


@BOTH
def test_unnamed_access_pairs_with_a_named_one(real: Real, swap: bool) -> None:
    """``inline`` loads and stores without Python names (no TTIR name hints on either access); ``rows`` names both
    ``x``. An unnamed access pairs with a named one of the same kind, shape and element type: the loads (identical)
    and the stores, whose difference is the transposed store (contiguous 32 along dim 0 vs 64 along dim 1)."""
    a, b = ("rows", "inline") if swap else ("inline", "rows")
    ctx = context(real, a, b)
    pairs = _pair_accesses(ctx.fa, ctx.fb)
    assert [(x.kind, y.kind) for x, y in pairs] == [("load", "load"), ("store", "store")]
    assert {x.name for x, _ in pairs} | {y.name for _, y in pairs} == {"", "x"}
    f, a, b = one(rule_contiguity, real, "inline", "rows", swap)
    c, dim = {"inline": 32, "rows": 64}, {"inline": 0, "rows": 1}
    label = {"inline": "store 32x64xf16", "rows": "`x` store 32x64xf16"}[a]
    assert (f.severity, f.predicts) == ("major", "inline")
    assert f.explanation.startswith(
        COALESCE
        + f"{label} (dim {dim[a]} in `{a}`, {dim[b]} in `{b}`): contiguity {c[a]} in `{a}` vs {c[b]} in `{b}`"
        + TAIL
    )


@pytest.mark.parametrize(("a", "b"), [("rows", "two"), ("two", "rows"), ("pairs", "two"), ("two", "pairs")])
def test_each_access_pairs_once(real: Real, a: str, b: str) -> None:
    """``two`` copies the ``rows`` tile, then reassigns ``x`` to the ``pairs`` tile and stores it: two loads from
    pointers named ``x`` (``[32, 64]`` and ``[32, 32]``). Against ``rows`` or ``pairs`` each access pairs once, with
    the one of its own shape; the other shape stays unpaired even though its pointer has the same name (the only
    same-kind access it could take is already paired), so nothing differs."""
    shape = [32, 64] if "rows" in (a, b) else [32, 32]
    ctx = context(real, a, b)
    pairs = _pair_accesses(ctx.fa, ctx.fb)
    assert [(x.kind, x.shape, y.shape) for x, y in pairs] == [("load", shape, shape), ("store", shape, shape)]
    assert rule_contiguity(ctx) == rule_vector_width(ctx) == []


def test_leftover_accesses_pair_by_pointer_once(real: Real) -> None:
    """Accesses left over by shape pair by pointer name, each ``other``-variant access at most once: ``two``'s
    ``[32, 32]`` load (after its paired ``[32, 64]`` load and store) takes ``twoq``'s ``[32, 16]`` one, past the
    accesses already paired; ``twoq``'s two loads against ``pairs``' single ``[32, 32]`` one: only the first pairs."""
    ctx = context(real, "two", "twoq")
    assert [(x.kind, x.shape, y.shape) for x, y in _pair_accesses(ctx.fa, ctx.fb)] == [
        ("load", [32, 64], [32, 64]),
        ("store", [32, 64], [32, 64]),
        ("load", [32, 32], [32, 16]),
    ]
    ctx = context(real, "twoq", "pairs")
    assert [(x.kind, x.shape, y.shape) for x, y in _pair_accesses(ctx.fa, ctx.fb)] == [("load", [32, 64], [32, 32])]
    # `zx` names its [32, 64] tile `z`: `two`'s `x` loads pass over it (another pointer) and over the stores; the first
    # takes the [32, 16] load of pointer `x`, the second finds nothing left
    ctx = context(real, "two", "zx")
    assert [(x.kind, x.shape, y.shape, y.name) for x, y in _pair_accesses(ctx.fa, ctx.fb)] == [
        ("load", [32, 64], [32, 16], "x")
    ]


def test_width_phrase_of_an_8_byte_aligned_int8_load(real: Real) -> None:
    """``bytes`` reads int8 8 elements past a 16-byte aligned ``src``: AxisInfo proves 8-byte divisibility along the
    contiguous dimension, so 16 int8 per thread move as 64-bit accesses, and the pointer's alignment is the reason
    (8 bytes = 8 elements: exactly the width issued)."""
    x = real["bytes"][0].accesses[0]
    assert (x.kind, x.elem, x.contiguity[1], x.divisibility[1], x.vector_bits) == ("load", "i8", 64, 8, 64)
    lanes = f"{x.per_thread} element{'s' if x.per_thread != 1 else ''} per thread"
    if x.per_thread * 8 > 64:  # the coalescing pass gives more elements per thread than one 8-byte access moves
        assert _width_phrase(x, "b") == (
            f"{lanes}, issued as 64-bit (8-byte) accesses in `b` because the pointer is proven only 8-byte aligned"
        )
    else:
        assert _width_phrase(x, "b") == f"{lanes} × 8 bits = 64-bit (8-byte) accesses in `b`"


@BOTH
def test_two_contiguous_elements_count_as_contiguous(real: Real, swap: bool) -> None:
    """``rows2`` and ``cols2`` copy a ``[32, 2]`` tile row-major and column-major: contiguity 2 along dim 1 against
    32 along dim 0. Two elements are contiguous: each variant's own dimension is compared (a transposed access, not
    "nothing contiguous"), ``rows2`` predicted slower (2 elements vs 32; the divisibility along ``rows2``'s dim 1 is 4
    bytes under Triton 3.9, 16 under 3.6: named only where it differs from ``cols2``'s 16 bytes along dim 0)."""
    f, a, b = one(rule_contiguity, real, "cols2", "rows2", swap)
    c = {"cols2": 32, "rows2": 2}
    dim, order = {"cols2": 0, "rows2": 1}, {"cols2": [0, 1], "rows2": [1, 0]}
    d = {v: real[v][0].accesses[0].divisibility[dim[v]] for v in ("cols2", "rows2")}
    assert d["cols2"] == 16 and d["rows2"] in (4, 16)
    div = f", divisibility {d[a]} vs {d[b]} bytes" if d[a] != d[b] else ""
    assert (f.severity, f.predicts) == ("major", "rows2")
    assert f.explanation == (
        COALESCE + f"`x` load 32x2xf16 (dim {dim[a]} in `{a}`, {dim[b]} in `{b}`): contiguity {c[a]} in `{a}` vs "
        f"{c[b]} in `{b}`{div}" + TAIL + " The coalescing pass orders each access's "
        "dimensions by proven contiguity, the most contiguous first, so the access order differs: `x` load 32x2xf16 "
        f"order {order[a]} in `{a}` vs {order[b]} in `{b}` (most contiguous along dim {dim[a]} in `{a}`, dim {dim[b]} "
        f"in `{b}`)."
    )


@pytest.mark.parametrize(
    ("n", "word"),
    [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"), (13, "13th"), (14, "14th"),
     (21, "21st"), (22, "22nd"), (23, "23rd"), (102, "102nd"), (103, "103rd"), (111, "111th"), (112, "112th"),
     (113, "113th"), (121, "121st")],
)  # fmt: skip
def test_nth_is_the_english_ordinal(n: int, word: str) -> None:
    """The stride in "reads every 2nd element": English ordinals, the teens (and 111–113) with "th"."""
    assert _nth(n) == word


@BOTH
def test_a_transposed_store_is_not_a_stride(real: Real, swap: bool) -> None:
    """``dskew`` stores its ``[32, 64]`` tile row-major (address strides ``[64, 1]``: adjacent along dim 1) through a
    4-byte-aligned ``dst``, ``tt`` column-major (``[1, 32]``: adjacent along dim 0): each writes adjacent elements
    along its own fastest dimension, so neither is "every 64th element" (it once said so, 16x the DRAM bytes); the
    narrower store is the same sectors in more instructions."""
    ctx = context(real, "dskew", "tt")
    (x, y), *_ = [(x, y) for x, y in _pair_accesses(ctx.fa, ctx.fb) if x.kind == "store"]
    assert (_strides(ctx.fa, x), _strides(ctx.fb, y)) == ([64, 1], [1, 32])
    assert _stride_pair(ctx, x, y) == (None, "", 1, 0)
    assert _stride_pair(context(real, "tt", "dskew"), y, x) == (None, "", 1, 1)
    f, a, b = one(rule_vector_width, real, "dskew", "tt", swap)
    assert f.predicts == "dskew"
    assert "store 32x64xf16" in f.title and "every" not in f.explanation
    assert f.explanation.endswith(
        ". Both read adjacent elements, so the same sectors are fetched: narrower accesses mean proportionally more "
        "load/store instructions for the same bytes."
    )


# ------------------------------------------------------------------------------------------------------------------
# The same helpers and rules on facts written out by hand: AxisInfo lists shorter than the tile's rank (or empty), an
# access without a layout order, reversed (stride -1) and transposed address strides, int8 and far-strided traffic,
# more pairs and layouts than the title and evidence show. The coalescing log of Triton 3.6/3.9 never prints such
# facts for the test kernels, but the helpers are plain functions of them (the facts are also read back from JSON).


def _acc(**kw: object) -> Access:
    """A ``[32, 64]`` fp16 row-major load of ``x`` (fields as ``rows``' load: contiguity 64 and 16-byte alignment
    along dim 1, 8 elements per thread, 128-bit accesses); ``kw`` overrides any field."""
    base: dict[str, object] = {
        "kind": "load",
        "shape": [32, 64],
        "elem": "f16",
        "elem_bits": 16,
        "contiguity": [1, 64],
        "divisibility": [2, 16],
        "order": [1, 0],
        "per_thread": 8,
        "vector_bits": 128,
        "name": "x",
        "pointer": "x_ptr",
        "ref": Ref("ttgir", 10, "Considering op: %x = tt.load %ptrs : tensor<32x64x!tt.ptr<f16>>"),
        "axis_ref": Ref("ttgir", 11, "axis info of %ptrs"),
        "per_thread_ref": Ref("ttgir", 12, "perThread 8"),
    }
    base.update(kw)
    return Access(**base)  # type: ignore[arg-type]


def _low(index: int, strides: list[int | None]) -> LoweredAccess:
    """The lowered access of ``accesses[index]`` with the given element strides per dimension."""
    return LoweredAccess(
        "load", [32, 64], "f16", 16, "x", "", [], [], ["x_ptr"], 8, 128, index, None, 0, None, 0, "",
        Ref("ttgir", 20, "%x = tt.load %ptrs"), None, None, strides,
    )  # fmt: skip


def _ctx(
    xs: list[Access], ys: list[Access], sx: tuple[list[int | None], ...] = (), sy: tuple[list[int | None], ...] = ()
) -> Context:
    """Variants ``a`` (accesses ``xs``, lowered strides ``sx`` per access) and ``b`` (``ys``, ``sy``)."""
    fa = make_facts("a", accesses=xs, lowered=[_low(i, s) for i, s in enumerate(sx)])
    fb = make_facts("b", accesses=ys, lowered=[_low(i, s) for i, s in enumerate(sy)])
    return make_context(fa, fb)


def test_fast_dim_and_contiguous_of_hand_built_accesses() -> None:
    """Without a layout order the fastest dimension is the last one; ``_contiguous`` needs a contiguity above 1
    along it (2 counts) and is False when AxisInfo gave no entry for it."""
    assert _fast_dim(_acc(order=[])) == 1
    assert _fast_dim(_acc(shape=[4, 8, 16], order=[])) == 2
    assert _fast_dim(_acc(order=[0, 1])) == 0
    assert not _contiguous(_acc(contiguity=[]))
    assert not _contiguous(_acc(contiguity=[64]))  # no entry for dim 1
    assert _contiguous(_acc(contiguity=[1, 2]))
    assert not _contiguous(_acc(contiguity=[64, 1]))
    assert _contiguous(_acc(order=[0, 1], contiguity=[2, 1]))


def test_order_reason_of_an_access_without_contiguity() -> None:
    """An access with no contiguity entries counts as nothing contiguous (the tie-break), in either order."""
    ctx = _ctx([], [])
    x, y = _acc(contiguity=[]), _acc(order=[0, 1], contiguity=[32, 1])
    tie = ": the order there is the tie-break among equal contiguities"
    assert _order_reason(x, y, ctx) == "nothing is contiguous in `a`" + tie
    assert _order_reason(y, x, ctx) == "nothing is contiguous in `b`" + tie
    assert _order_reason(x, x, ctx) == "nothing is contiguous in `a` and `b`" + tie
    assert _order_reason(_acc(), y, ctx) == "most contiguous along dim 1 in `a`, dim 0 in `b`"


def test_strides_of_each_access_by_its_coalesce_index() -> None:
    """``_strides`` finds an access's lowered facts by its index in ``accesses``, not by list position."""
    x0, x1 = _acc(), _acc(name="y")
    f = make_facts("a", accesses=[x0, x1], lowered=[_low(1, [64, 1]), _low(0, [64, 2])])
    assert _strides(f, x0) == [64, 2]
    assert _strides(f, x1) == [64, 1]
    assert _strides(f, _acc()) is None  # not one of f's accesses


ROW, COL = [1, 0], [0, 1]


@pytest.mark.parametrize(
    ("ox", "sx", "oy", "sy", "as_named", "swapped"),
    [
        # a reversed tile (stride -1, offsets counting down) is unit-stride: the other's stride 2 along dim 1 counts
        (ROW, [64, 2], ROW, [64, -1], (2, "a", 2, 1), (2, "a", 2, 1)),
        # the other reads adjacent elements along its own fastest dimension, reversed: no stride
        (COL, [-1, 64], ROW, [64, 1], (None, "", 1, 1), (None, "", 1, 0)),
        # transposed, the other one also adjacent along dim 1 (stride 1 there): adjacent, no stride
        (COL, [2, 1], ROW, [64, 1], (None, "", 1, 1), (None, "", 1, 1)),
        # only `a` is unit-stride along its fastest dim (1); `b` reads every 64th element along it
        (ROW, [64, 1], COL, [2, 64], (64, "b", 64, 1), (64, "b", 64, 1)),
        # a stride 0 along the fastest dimension (a broadcast) says nothing
        (ROW, [64, 0], ROW, [64, 1], None, None),
    ],
)  # fmt: skip
def test_stride_pair_of_hand_built_strides(
    ox: list[int], sx: list[int | None], oy: list[int], sy: list[int | None], as_named: object, swapped: object
) -> None:
    """``_stride_pair`` on written-out address strides, in both orders of the variants (the strided variant keeps
    its name; the dimension is that of the unit-stride access found first)."""
    x, y = _acc(order=ox), _acc(order=oy)
    assert _stride_pair(_ctx([x], [y], (sx,), (sy,)), x, y) == as_named
    ctx = make_context(
        make_facts("b", accesses=[y], lowered=[_low(0, sy)]), make_facts("a", accesses=[x], lowered=[_low(0, sx)])
    )
    assert _stride_pair(ctx, y, x) == swapped


def test_traffic_of_an_int8_and_a_far_strided_access() -> None:
    """Two strided pairs in one finding, joined by "; ": an int8 load (1-byte elements: every 2nd element is 2 bytes
    apart, half of each 32-byte sector used) and an fp16 one every 32nd element (64 bytes apart: the factor caps at
    16 fp16 per sector, 2 bytes used)."""
    ctx = _ctx([], [])
    q = _acc(name="q", elem="i8", elem_bits=8)
    h = _acc(name="h")
    text = _traffic(ctx, [(q, h, (2, "a", 2, 1)), (q, h, (32, "b", 32, 1))], False)
    assert text == (
        "A stride is not only more instructions: `q` load 32x64xi8 in `a` reads every 2nd element (neighbours 2 "
        "elements, 2 bytes, apart along dim 1) where `b` reads adjacent ones: global memory moves whole 32-byte "
        "sectors, of which `a` uses 16 bytes, so it moves about 2× the DRAM/L2 bytes for the data it uses, on top of "
        "the narrower (more) instructions; `h` load 32x64xf16 in `b` reads every 32nd element (neighbours 32 "
        "elements, 64 bytes, apart along dim 1) where `a` reads adjacent ones: global memory moves whole 32-byte "
        "sectors, of which `b` uses 2 bytes, so it moves about 16× the DRAM/L2 bytes for the data it uses, on top of "
        "the narrower (more) instructions. Contiguous (unit-stride) indexing along the fastest dimension, or a tile "
        "whose fastest dimension is the contiguous one, reads only what is used."
    )


def test_width_phrase_of_hand_built_accesses() -> None:
    """``_width_phrase``: 16 fp16 per thread in 128-bit accesses is the full width (capped at 128 bits); an AxisInfo
    list without an entry for the fastest dimension names no reason from it; a width below what both allow names
    none."""
    assert (
        _width_phrase(_acc(per_thread=16), "v")
        == "16 elements per thread × 16 bits = 128-bit (16-byte) accesses in `v`"
    )
    assert _width_phrase(_acc(divisibility=[16], contiguity=[1, 1], vector_bits=16), "v") == (
        "8 elements per thread, issued as 16-bit (2-byte) accesses in `v` because only 1 consecutive element is proven "
        "contiguous"
    )
    assert _width_phrase(_acc(contiguity=[64], divisibility=[2, 2], vector_bits=16), "v") == (
        "8 elements per thread, issued as 16-bit (2-byte) accesses in `v` because the pointer is proven only 2-byte "
        "aligned"
    )
    assert (
        _width_phrase(_acc(vector_bits=64), "v") == "8 elements per thread, issued as 64-bit (8-byte) accesses in `v`"
    )


def _contiguity_of(x: Access, y: Access, swap: bool) -> Finding:
    """The one ``coalesce.contiguity`` finding of variant ``a`` (access ``x``) against ``b`` (``y``), or of ``b``
    against ``a`` when ``swap``."""
    fa, fb = make_facts("a", accesses=[x]), make_facts("b", accesses=[y])
    found = rule_contiguity(make_context(fb, fa) if swap else make_context(fa, fb))
    assert len(found) == 1
    return found[0]


LONG = Ref("ttgir", 10, "Considering op: %x = tt.load %ptrs, %mask, %other " + "p" * 300)


@BOTH
def test_contiguity_of_hand_built_axis_info(swap: bool) -> None:
    """``coalesce.contiguity`` on AxisInfo lists written out by hand, in both orders of the variants (``a`` always
    holds the first access): a list without an entry for the compared dimension is unknown there (no index error,
    and it weighs nothing in the prediction nor makes the finding critical); lists of different lengths (or both
    empty) compare the first access's fastest dimension; a transposed pair compares each one's own contiguous
    dimension; the evidence quotes at most 200 characters of the op."""
    half = "`x` load 32x64xf16 (dim 1): "
    tail = ". Contiguity along the fastest dimension and alignment bound how many elements one thread may load with a single vector instruction."

    def vs(what: str, va: str, vb: str) -> str:
        return f"{what} {vb} in `b` vs {va} in `a`" if swap else f"{what} {va} in `a` vs {vb} in `b`"

    cases = [
        # no contiguity entry for dim 1 in `a`
        (_acc(contiguity=[64]), _acc(), "major", "a", vs("contiguity", "None", "64")),
        # no divisibility entry for dim 1 in `a`
        (_acc(divisibility=[16]), _acc(), "major", "a", vs("divisibility", "?", "16 bytes")),
        # unknown against contiguity 1: critical (the 1), `a` predicted (0 + 16 bytes against 1 + 16)
        (_acc(contiguity=[64]), _acc(contiguity=[1, 1]), "critical", "a", vs("contiguity", "None", "1")),
        # unknown against a 1-byte alignment: `a` predicted (64 + 0 against 64 + 1)
        (_acc(divisibility=[16]), _acc(divisibility=[2, 1]), "major", "a", vs("divisibility", "?", "1 byte")),
        # no contiguity at all in either: the divisibility along the fastest dimension is compared
        (_acc(contiguity=[]), _acc(contiguity=[], divisibility=[2, 8]), "major", "b", vs("divisibility", "16 bytes", "8 bytes")),
    ]  # fmt: skip
    for x, y, severity, predicts, words in cases:
        f = _contiguity_of(x, y, swap)
        assert (f.severity, f.predicts) == (severity, predicts), words
        assert f.title.endswith(f"`x` load 32x64xf16 {words}")
        assert f.explanation == COALESCE + half + words + tail
    # transposed, neither with a divisibility entry along its own contiguous dimension
    f = _contiguity_of(_acc(divisibility=[16]), _acc(order=[0, 1], contiguity=[32, 1], divisibility=[]), swap)
    assert (f.severity, f.predicts) == ("major", "b")
    dims = "0 in `b`, 1 in `a`" if swap else "1 in `a`, 0 in `b`"
    most = "dim 0 in `b`, dim 1 in `a`" if swap else "dim 1 in `a`, dim 0 in `b`"
    orders = "[0, 1] in `b` vs [1, 0] in `a`" if swap else "[1, 0] in `a` vs [0, 1] in `b`"
    assert f.explanation == (
        COALESCE + f"`x` load 32x64xf16 (dim {dims}): {vs('contiguity', '64', '32')}" + tail + " The "
        "coalescing pass orders each access's dimensions by proven contiguity, the most contiguous first, so the "
        f"access order differs: `x` load 32x64xf16 order {orders} (most contiguous along {most})."
    )
    # an op printed longer than 200 characters is cut at 200
    f = _contiguity_of(_acc(ref=LONG, divisibility=[2, 8]), _acc(ref=LONG), swap)
    op = LONG.text.split("Considering op:")[-1].strip()
    assert f.evidence[0].text == "`x` load 32x64xf16: " + op[:200] and len(op) > 201


@BOTH
def test_vector_width_title_and_layouts_are_capped(swap: bool) -> None:
    """``coalesce.vector-width`` with four loads narrower in ``b`` and three ``#blocked`` layouts per variant: the
    title names the first three pairs, the evidence quotes each variant's first two layouts."""
    xs = [_acc(name=f"q{i}") for i in range(4)]
    ys = [_acc(name=f"q{i}", vector_bits=64) for i in range(4)]
    blocked = [
        {"alias": f"#blocked{i}", "ref": {"stage": "ttgir", "line": i + 1, "text": f"#blocked{i} = ..."}}
        for i in range(3)
    ]
    fa = make_facts("a", accesses=xs, blocked=blocked)
    fb = make_facts("b", accesses=ys, blocked=blocked)
    (f,) = rule_vector_width(make_context(fb, fa) if swap else make_context(fa, fb))
    first, second = ("b", "a") if swap else ("a", "b")
    bits = "64 vs 128" if swap else "128 vs 64"
    assert f.title == f"Vector width of global accesses (`{first}` vs `{second}`): " + ", ".join(
        f"`q{i}` load 32x64xf16 {bits} bits" for i in range(3)
    )
    assert f.predicts == "b"
    assert [(e.variant, e.text) for e in f.evidence if e.text.startswith("#blocked")] == [
        (first, "#blocked0 = ..."), (first, "#blocked1 = ..."), (second, "#blocked0 = ..."), (second, "#blocked1 = ...")
    ]  # fmt: skip
