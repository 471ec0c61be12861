"""The pipelining rules (``irdiff/diagnose/rules/pipelining.py``) on the facts and TTGIR of real compiles, in both
orders: ``pipeline.load-not-pipelined``, ``pipeline.buffers``, ``pipeline.async-copies``, ``pipeline.wgmma-wait`` and
``ttgir.tma``.

Kernels (all from the shared compile cache): ``tests/suites/diag_loop.py`` on sm90 (``stages3``/``stages1``: a row
loop with ``num_stages`` 3 or 1; ``dot3``/``dot1``: a K loop with ``tl.dot``; ``tma``: the K loop through tensor
descriptors), the seed ``matmul`` (``annotated``: strides typed ``int``,
16-bit loads the pipeliner calls too small) and ``persistent-matmul`` (``persistent``: the fused tile loop whose ``b``
offsets are loop-carried) on sm90, and the seed ``softmax`` (``stages4``/``stages1``) on sm86.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from irdiff.diagnose.facts import VariantFacts, extract_facts
from irdiff.diagnose.model import Finding
from irdiff.diagnose.rules.common import Context
from irdiff.diagnose.rules.pipelining import (
    _split_top,
    _trace_loop_carried,
    rule_async_copies,
    rule_buffers,
    rule_pipelined,
    rule_tma,
    rule_wgmma_wait,
)
from irdiff.diagnose.texts import stage_text

SUITES = Path(__file__).parent / "suites"
LOOP = str(SUITES / "diag_loop.py")

# Extracted once per process (mutation runs fork the test process per mutant: the facts are inputs, not under test).
_MEMO: dict[str, tuple[VariantFacts, str]] = {}


@pytest.fixture(scope="module")
def real(compile_suite) -> dict[str, tuple[VariantFacts, str]]:  # type: ignore[no-untyped-def]
    if not _MEMO:
        for suite, variants, target in (
            (LOOP, ["stages3", "stages1", "dot3", "dot1", "tma"], "sm90"),
            ("matmul", ["unannotated", "annotated"], "sm90"),
            ("persistent-matmul", ["tiled", "persistent", "persistent-noflatten"], "sm90"),
            ("softmax", ["stages4", "stages1"], "sm86"),
        ):
            bundle = compile_suite(suite, variants, target)
            for n in variants:
                v = bundle.compiled_variant(n)
                f = extract_facts(v)
                f.name = f"{n}_{target[2:]}"
                _MEMO[f.name] = (f, stage_text(v, "ttgir"))
    return _MEMO


def ctx(real: dict[str, tuple[VariantFacts, str]], a: str, b: str) -> Context:
    (fa, ta), (fb, tb) = real[a], real[b]
    return Context(a, b, fa, fb, {a: ta, b: tb}, {})


def both(rule, real, a: str, b: str) -> tuple[list[Finding], list[Finding]]:  # type: ignore[no-untyped-def]
    return rule(ctx(real, a, b)), rule(ctx(real, b, a))


def ev(f: Finding) -> list[tuple[str, str]]:
    return [(e.variant, e.stage) for e in f.evidence]


def carried(text: str) -> tuple[str, str]:
    """The persistent TTGIR's loop-carried ``b`` offsets: (iter_args value, its initial value), e.g.
    ``("%store_tile_81", "%cols_32")`` under Triton 3.9 (the SSA numbers differ between releases)."""
    it = _trace_loop_carried(text, [64, 256])[1]
    m = re.search(r"iter_args\(… (%[\w.-]+) = (%[\w.#-]+) …\)", it.text)
    assert m, it.text
    return m.group(1), m.group(2)


ALL = (rule_pipelined, rule_buffers, rule_async_copies, rule_wgmma_wait, rule_tma)


def test_identical_facts_find_nothing(real) -> None:  # type: ignore[no-untyped-def]
    for name in ("dot3_90", "persistent_90", "annotated_90", "stages1_86", "tma_90"):
        for rule in ALL:
            assert rule(ctx(real, name, name)) == [], (rule.__name__, name)


# ------------------------------------------------------------------------------- pipeline.load-not-pipelined


def test_num_stages_one_row_load_both_orders(real) -> None:  # type: ignore[no-untyped-def]
    """softmax ``stages1``: the loop has ``tt.num_stages = 1``, the pipeliner never looks at the row load; the
    finding names ``stages1`` (never the pipelined side) in both orders and quotes ``stages4``'s reason."""
    f1 = real["stages1_86"][0]
    (lp,) = [lp for lp in f1.loops_ttir if "tt.num_stages = 1" in lp.attrs]
    for (f,) in both(rule_pipelined, real, "stages1_86", "stages4_86"):
        assert (f.id, f.severity, f.stage, f.predicts, f.remedy) == (
            "pipeline.load-not-pipelined",
            "critical",
            "ttgir",
            "stages1_86",
            None,
        )
        assert f.title == "`x` load 1024xf16 not pipelined in `stages1_86`"
        assert f.explanation == (
            "In `stages1_86` the software pipeliner (`triton-loop-pipeline`) does not make this load asynchronous: "
            "`x` load 1024xf16 is not considered at all (its loop has `tt.num_stages = 1`); in `stages4_86` it is "
            '"considered for pipelining with distance 0". In `stages4_86` 1 load(s) are prefetched with `cp.async` '
            "into a ring of shared-memory buffers while earlier iterations compute; in `stages1_86` the non-pipelined "
            "load is issued and waited for in the iteration that uses it, so its latency is exposed."
        )
        # the pipelined side's two log lines, then the loop attribute of the side that was not pipelined
        assert ev(f) == [("stages4_86", "llvm_debug"), ("stages4_86", "llvm_debug"), ("stages1_86", "ttir")]
        assert all("[triton-loop-pipeline]" in e.text for e in f.evidence[:2])
        assert (f.evidence[2].line, f.evidence[2].text) == (lp.end_line, lp.attrs)


def test_num_stages_one_dot_loads_staged_through_shared(real) -> None:  # type: ignore[no-untyped-def]
    """``dot1``: both dot operands unpipelined ("these loads"), and each is copied into a single shared buffer."""
    for (f,) in both(rule_pipelined, real, "dot3_90", "dot1_90"):
        assert f.predicts == "dot1_90"
        assert f.title == "`a` load 64x32xf16, `b` load 32x64xf16 not pipelined in `dot1_90`"
        assert f.explanation.startswith(
            "In `dot1_90` the software pipeliner (`triton-loop-pipeline`) does not make these loads asynchronous: "
            "`a` load 64x32xf16 is not considered at all (its loop has `tt.num_stages = 1`); in `dot3_90` it is "
            '"considered for pipelining with distance 0"; `b` load 32x64xf16 is not considered at all'
        )
        assert "In `dot3_90` 2 load(s) are prefetched with `cp.async`" in f.explanation
        assert "Only " not in f.explanation and "isSmallLoad" not in f.explanation
        assert f.explanation.endswith(
            "in `dot1_90` the non-pipelined load is issued and waited for in the iteration that uses it, so its "
            "latency is exposed, and its data is staged through registers into a single shared-memory buffer "
            "(`ttg.local_alloc`) rewritten every iteration."
        )
        assert ev(f) == [("dot3_90", "llvm_debug")] * 2 + [("dot1_90", "ttir")] + [("dot3_90", "llvm_debug")] * 2 + [
            ("dot1_90", "ttir")
        ]
        assert "64x32x!tt.ptr<f16>" in f.evidence[0].text and "32x64x!tt.ptr<f16>" in f.evidence[3].text


def test_too_small_loads_both_orders(real) -> None:  # type: ignore[no-untyped-def]
    """matmul ``annotated``: both operand loads are 16 bits per thread, which the pipeliner's ``isSmallLoad`` rejects;
    the rejected side's log lines come first, then the other side's."""
    fa = real["annotated_90"][0]
    assert [(p.width_bits, p.pipelined) for p in fa.pipeline] == [(16, False), (16, False)]
    for (f,) in both(rule_pipelined, real, "unannotated_90", "annotated_90"):
        assert f.predicts == "annotated_90" and f.remedy is None
        assert f.title == "`a` load 128x32xf16, `b` load 32x128xf16 not pipelined in `annotated_90`"
        assert f.explanation.startswith(
            "In `annotated_90` the software pipeliner (`triton-loop-pipeline`) does not make these loads asynchronous: "
            '`a` load 128x32xf16 has width 16 bits → "is too small for pipelining"; `b` load 32x128xf16 has width 16 '
            'bits → "is too small for pipelining". The pipeliner\'s `isSmallLoad` check rejects loads narrower than '
            "32 bits per thread, because `cp.async` copies 4, 8 or 16 bytes. In `unannotated_90` 2 load(s) are "
            "prefetched"
        )
        assert "staged through registers" in f.explanation and "loop-carried" not in f.title
        assert ev(f) == ([("annotated_90", "llvm_debug")] * 2 + [("unannotated_90", "llvm_debug")] * 2) * 2
        assert "sizePerThread = [1, 1]" in f.evidence[0].text and "sizePerThread = [1, 8]" in f.evidence[2].text


def test_loop_carried_offsets_both_orders(real) -> None:  # type: ignore[no-untyped-def]
    """persistent-matmul ``persistent``: coalescing saw ``b`` 128-bit wide, the pipeliner (on the fused loop) 16 bits;
    the finding traces the pointer to the ``iter_args`` value it is built from, says the lowering still emits wide
    loads, and ``a`` stays pipelined."""
    fp = real["persistent_90"][0]
    (b,) = [p for p in fp.pipeline if not p.pipelined]
    acc = next(a for a in fp.accesses if a.kind == "load" and a.shape == b.shape)
    low = next(x for x in fp.lowered if x.kind == "load" and x.shape == b.shape)
    assert (b.width_bits, acc.vector_bits, low.ptx_bits) == (16, 128, 128)
    value, init = carried(real["persistent_90"][1])
    assert re.sub(r"_\d+$", "", init.lstrip("%")) == "cols"
    for other in ("tiled_90", "persistent-noflatten_90"):
        for (f,) in both(rule_pipelined, real, other, "persistent_90"):
            assert f.predicts == "persistent_90"
            assert f.title == (
                "`b` load 64x256xf16 not pipelined in `persistent_90` (loop-carried offsets lose contiguity or "
                "alignment)"
            )
            assert f.remedy == (
                "recompute the operand's offsets inside the K loop from `tl.arange` (with `tl.max_contiguous`/"
                "`tl.multiple_of` hints), or use `flatten=False` on the tile loop"
            )
            assert f.explanation == (
                "In `persistent_90` the software pipeliner (`triton-loop-pipeline`) does not make this load "
                "asynchronous: `b` load 64x256xf16: the pipeliner computes a width of 16 bits and rejects it "
                '("is too small for pipelining"), although the coalescing pass, which ran before the loops were fused, '
                "saw 128-bit accesses. The pipeliner re-runs AxisInfo on the fused loop, where the pointer is built "
                f"from loop-carried offsets (`cols`: `iter_args` value `{value}` of the fused `scf.for`, "
                f"initialised from `{init}`) that are redefined under `scf.if` when a new tile starts; joining the "
                "definitions, AxisInfo no longer proves more than one contiguous, aligned element (16 bits) along the "
                "fast dimension (the log gives only the width, not whether contiguity or alignment was lost). The "
                f"final lowering, which runs AxisInfo again after pipelining, still emits 128-bit loads for it "
                f"({low.ptx_count}× `ld.global.v4.b32`): only the pipeliner's decision is affected, not the width of "
                "the synchronous load. Only `a` is still pipelined. In "
                f"`{other}` 2 load(s) are prefetched with `cp.async` into a ring of shared-memory buffers while earlier "
                "iterations compute; in `persistent_90` the non-pipelined load is issued and waited for in the "
                "iteration that uses it, so its latency is exposed, and its data is staged through registers into a "
                "single shared-memory buffer (`ttg.local_alloc`) rewritten every iteration."
            )
            assert ev(f) == [
                ("persistent_90", "llvm_debug"),
                ("persistent_90", "llvm_debug"),
                (other, "llvm_debug"),
                (other, "llvm_debug"),
                ("persistent_90", "llvm_debug"),  # the coalescing pass's axis info
                ("persistent_90", "ttgir"),  # the load
                ("persistent_90", "ttgir"),  # the iter_arg
                ("persistent_90", "ttgir"),  # its initial value
                ("persistent_90", "ptx"),  # the wide lowering
            ]
            e = f.evidence
            assert e[4].text == f"(coalescing saw `b` load 64x256xf16 as 128-bit) {acc.axis_ref.text}"
            assert e[4].line == acc.axis_ref.line and "contiguity = [1, 256]" in e[4].text
            assert re.match(r"%b_\d+ = tt\.load %b_ptrs_\d+", e[5].text)
            assert e[6].text == (
                f"scf.for … iter_args(… {value} = {init} …) : tensor<256xi32, #ttg.slice<{{dim = 0, parent = "
                "#blocked}>>"
            )
            assert e[7].text.startswith(f"{init} = arith.select")
            assert e[8].line == low.ptx_ref.line  # type: ignore[union-attr]
            assert e[8].text == f"{low.ptx_ref.text}   ({low.ptx_count}× ld.global.v4.b32 for this op)"  # type: ignore[union-attr]


def test_loop_carried_trace_follows_the_pointer(real) -> None:  # type: ignore[no-untyped-def]
    """``_trace_loop_carried`` on the real fused TTGIR: the ``tt.load`` of the shape, the ``iter_args`` integer tensor
    its pointer comes from (with the line of the ``scf.for``) and that value's definition; nothing for a shape no
    loop loads, nor in a TTGIR whose loop loads are all asynchronous."""
    fp, text = real["persistent_90"]
    lines = text.splitlines()
    load, it, init = _trace_loop_carried(text, [64, 256])
    assert (load.stage, it.stage, init.stage) == ("ttgir", "ttgir", "ttgir")
    value, init_name = carried(text)
    assert re.match(r"%b_\d+ = tt\.load", lines[load.line - 1].strip())  # type: ignore[operator]
    assert "scf.for" in lines[it.line - 1] and f"{value} = {init_name}" in lines[it.line - 1]  # type: ignore[operator]
    assert lines[init.line - 1].strip().startswith(f"{init_name} = ")  # type: ignore[operator]
    assert init.text == lines[init.line - 1].strip().split(" loc(")[0][:240]  # type: ignore[operator]
    assert _trace_loop_carried(text, [128, 64]) == []  # `a` is copied asynchronously, there is no tt.load of it
    assert _trace_loop_carried(text, [64, 255]) == []
    tiled = real["tiled_90"][1]
    assert _trace_loop_carried(tiled, [64, 256]) == []


def test_split_top_level_result_types() -> None:
    assert _split_top("tensor<64x256xi32, #blocked>, i32,") == ["tensor<64x256xi32, #blocked>", "i32"]
    assert _split_top(" i32 , tensor<4xf32, #a> ") == ["i32", "tensor<4xf32, #a>"]
    assert _split_top("") == []


def test_pairing_by_shape_and_element(real) -> None:  # type: ignore[no-untyped-def]
    """A load present in the pipeliner's log of one side only is still compared when the other side loads a tile of
    that shape synchronously in a loop; a load of another shape or element type is not."""
    f3 = real["stages3_90"][0]
    f1 = dataclasses.replace(real["stages1_90"][0], pipeline=[])  # the pipeliner never saw the load
    (p,) = f3.pipeline
    c = Context("stages1_90", "stages3_90", f1, f3, {}, {})
    (f,) = rule_pipelined(c)
    assert f.predicts == "stages1_90" and f.title == "`acc` load 256xf16 not pipelined in `stages1_90`"
    assert (
        '`acc` load 256xf16 is not considered at all (its loop has `tt.num_stages = 1`); in `stages3_90` it is "'
        in (f.explanation)
    )
    (r,) = rule_pipelined(Context("stages3_90", "stages1_90", f3, f1, {}, {}))
    assert r.title == f.title and r.explanation == f.explanation
    # another element type: not the same load, and no synchronous load of it on the other side
    other = dataclasses.replace(p, elem="f32")
    assert rule_pipelined(Context("x", "y", dataclasses.replace(f3, pipeline=[other]), f1, {}, {})) == []
    assert rule_pipelined(Context("y", "x", f1, dataclasses.replace(f3, pipeline=[other]), {}, {})) == []
    shape = dataclasses.replace(p, shape=[512])
    assert rule_pipelined(Context("x", "y", dataclasses.replace(f3, pipeline=[shape]), f1, {}, {})) == []


# ------------------------------------------------------------------------------------------- pipeline.buffers


def test_buffers_ring_against_none_both_orders(real) -> None:  # type: ignore[no-untyped-def]
    for a, b in (("dot1_90", "dot3_90"), ("dot3_90", "dot1_90")):
        (f,) = rule_buffers(ctx(real, a, b))
        assert (f.id, f.severity, f.stage, f.predicts, f.remedy) == (
            "pipeline.buffers",
            "major",
            "ttgir",
            "dot1_90",
            None,
        )
        desc = {"dot1_90": "no multi-buffered ring", "dot3_90": "3×64x32xf16 (12 KB), 3×32x64xf16 (12 KB)"}
        assert f.title == f"Multi-buffered shared memory: `{a}` {desc[a]}; `{b}` {desc[b]}"
        assert f.explanation == (
            f"Shared-memory rings for pipelined loads: {desc[a]} in `{a}`; {desc[b]} in `{b}`. Each ring slot holds "
            "one future iteration's tile, filled by `cp.async` while earlier iterations compute. In `dot1_90` 2 "
            "synchronous loop load(s) are instead copied from registers into a single buffer (`ttg.local_alloc`) "
            "every iteration."
        )
        # every buffer of both sides, `a` first: dot1's two single buffers, dot3's two rings
        lines = {v: [(e.variant, e.line) for e in f.evidence if e.variant == v] for v in (a, b)}
        assert [e.variant for e in f.evidence] == [a] * len(lines[a]) + [b] * len(lines[b])
        names = sorted(x.ref.text.split(" = ")[0] for v in ("dot1_90", "dot3_90") for x in real[v][0].buffers)
        assert len(names) == 4 and sorted(e.text.split(" = ")[0] for e in f.evidence) == names


def test_buffers_loads_straight_to_registers(real) -> None:  # type: ignore[no-untyped-def]
    for a, b in (("stages1_86", "stages4_86"), ("stages4_86", "stages1_86")):
        (f,) = rule_buffers(ctx(real, a, b))
        assert f.predicts == "stages1_86"
        desc = {"stages1_86": "no multi-buffered ring", "stages4_86": "3×1024xf16 (6 KB)"}
        assert f.explanation.endswith(
            f"{desc[a]} in `{a}`; {desc[b]} in `{b}`. Each ring slot holds one future iteration's tile, filled by "
            "`cp.async` while earlier iterations compute. In `stages1_86` the loop's loads without a ring go straight "
            "to registers."
        )
        assert [e.variant for e in f.evidence] == ["stages4_86"]
        assert "3x1024xf16" in f.evidence[0].text


def test_buffers_fewer_slots_named(real) -> None:  # type: ignore[no-untyped-def]
    """Both sides keep rings; the persistent one has fewer slots (only ``a``'s ring)."""
    for a, b in (("persistent_90", "tiled_90"), ("tiled_90", "persistent_90")):
        (f,) = rule_buffers(ctx(real, a, b))
        assert f.predicts == "persistent_90"
        desc = {"persistent_90": "3×128x64xf16 (48 KB)", "tiled_90": "3×128x64xf16 (48 KB), 3×64x256xf16 (96 KB)"}
        assert f.title == f"Multi-buffered shared memory: `{a}` {desc[a]}; `{b}` {desc[b]}"
        assert "In `persistent_90` 1 synchronous loop load(s) are instead copied" in f.explanation
        assert "go straight to registers" not in f.explanation and "In `tiled_90`" not in f.explanation


def test_buffers_same_slots_predict_neither_side() -> None:
    """Six 2-deep rings against four 3-deep ones: 12 slots on each side, reshaped but not fewer, so neither side is
    predicted (the rule once named whichever variant came second). At most four buffers per side are quoted."""
    from irdiff.diagnose.facts import Buffer, Ref
    from irdiff.diagnose.testing import make_facts

    def buf(i: int, depth: int) -> Buffer:
        return Buffer(depth, [64, 64], "f16", depth * 8192, Ref("ttgir", i, f"%b{i} = ttg.local_alloc"))

    fa = make_facts("a", buffers=[buf(i, 2) for i in range(6)])
    fb = make_facts("b", buffers=[buf(10 + i, 3) for i in range(4)])
    for c in (Context("a", "b", fa, fb), Context("b", "a", fb, fa)):
        (f,) = rule_buffers(c)
        assert f.predicts is None
        assert [e.line for e in f.evidence if e.variant == "a"] == [0, 1, 2, 3]
        assert [e.line for e in f.evidence if e.variant == "b"] == [10, 11, 12, 13]
        assert "`a` " + ", ".join(["2×64x64xf16 (16 KB)"] * 6) in f.title and "`b` 3×64x64xf16 (24 KB)" in f.title
    # one slot fewer in `a`: `a` is named in both orders
    fa5 = make_facts("a", buffers=[buf(i, 2) for i in range(5)] + [buf(5, 1)])
    assert [rule_buffers(c)[0].predicts for c in (Context("a", "b", fa5, fb), Context("b", "a", fb, fa5))] == ["a"] * 2


# --------------------------------------------------------------------------------------- pipeline.async-copies


def test_async_copies_both_orders(real) -> None:  # type: ignore[no-untyped-def]
    counts = {"stages1_86": (0, 0, 1), "stages4_86": (3, 1, 0)}
    for a, b in (("stages1_86", "stages4_86"), ("stages4_86", "stages1_86")):
        (f,) = rule_async_copies(ctx(real, a, b))
        (pa, la, sa), (pb, lb, sb) = counts[a], counts[b]
        assert (f.id, f.severity, f.stage, f.predicts) == ("pipeline.async-copies", "major", "ttgir", "stages1_86")
        assert f.title == f"Async copies (prologue/loop): {pa}/{la} in `{a}` vs {pb}/{lb} in `{b}`"
        assert f.explanation == (
            f"TTGIR async copies (prologue / inside the loop) and synchronous loop loads: `{a}` {pa} / {la} and {sa} "
            f"`tt.load`; `{b}` {pb} / {lb} and {sb} `tt.load`. Prologue copies fill the ring before the loop; copies "
            "inside the loop fetch iteration i+num_stages-1 while iteration i computes."
        )
        kinds = [
            (e.variant, "async_copy" in e.text, e.text.split(" = ")[1].split(" ")[0] if " = " in e.text else "")
            for e in f.evidence
        ]
        # per side: first prologue copy, loop copies (up to 2), synchronous loop loads (up to 2)
        want = {
            "stages1_86": [("stages1_86", False, "tt.load")],
            "stages4_86": [("stages4_86", True, "ttg.async_copy_global_to_local")] * 2,
        }
        assert kinds == want[a] + want[b]
        s4 = real["stages4_86"][0]
        assert [e.line for e in f.evidence if e.variant == "stages4_86"] == [
            s4.async_copies_prologue[0].line,
            s4.async_copies_loop[0].line,
        ]


def test_async_copies_sides_cut_and_fewer(real) -> None:  # type: ignore[no-untyped-def]
    """matmul ``unannotated`` issues 6 prologue and 2 loop copies; evidence keeps one prologue copy, two loop copies,
    two synchronous loads per side, each cut to 220 characters. Both orders name ``annotated`` as the side with fewer
    copies; the persistent kernel (fewer copies than tiled, but not none) likewise."""
    fu = real["unannotated_90"][0]
    assert (len(fu.async_copies_prologue), len(fu.async_copies_loop)) == (6, 2)
    for a, b in (("annotated_90", "unannotated_90"), ("unannotated_90", "annotated_90")):
        (f,) = rule_async_copies(ctx(real, a, b))
        assert f.predicts == "annotated_90"
        u = [e for e in f.evidence if e.variant == "unannotated_90"]
        assert [e.line for e in u] == [fu.async_copies_prologue[0].line] + [r.line for r in fu.async_copies_loop[:2]]
        assert [e.text for e in u] == [r.text[:220] for r in (fu.async_copies_prologue[0], *fu.async_copies_loop)]
        assert [e.line for e in f.evidence if e.variant == "annotated_90"] == [
            r.line for r in real["annotated_90"][0].sync_loads_loop[:2]
        ]
    for a, b in (("persistent_90", "tiled_90"), ("tiled_90", "persistent_90")):
        (f,) = rule_async_copies(ctx(real, a, b))
        assert f.predicts == "persistent_90"
        assert "2/1 in `persistent_90`" in f.title and "4/2 in `tiled_90`" in f.title


def test_async_copies_same_copies_more_sync_loads(real) -> None:  # type: ignore[no-untyped-def]
    """Neither side copies asynchronously; one has one more synchronous loop load: not an async-copy difference."""
    s1, d1 = real["stages1_90"][0], real["dot1_90"][0]
    assert (len(s1.sync_loads_loop), len(d1.sync_loads_loop)) == (1, 2)
    assert both(rule_async_copies, real, "stages1_90", "dot1_90") == ([], [])


def test_async_copies_same_total_predicts_nothing(real) -> None:  # type: ignore[no-untyped-def]
    """Copies moved between the prologue and the loop, the total kept: a difference, but neither side has fewer."""
    s3 = real["stages3_90"][0]
    moved = dataclasses.replace(
        s3, name="moved", async_copies_prologue=s3.async_copies_prologue[:1], async_copies_loop=s3.async_copies_loop * 2
    )
    assert len(s3.async_copies_prologue) + len(s3.async_copies_loop) == 3
    for c in (Context("moved", "stages3_90", moved, s3), Context("stages3_90", "moved", s3, moved)):
        (f,) = rule_async_copies(c)
        assert f.predicts is None


# ---------------------------------------------------------------------------------------- pipeline.wgmma-wait


def test_wgmma_waited_every_iteration_both_orders(real) -> None:  # type: ignore[no-untyped-def]
    for a, b in (("dot1_90", "dot3_90"), ("dot3_90", "dot1_90")):
        (f,) = rule_wgmma_wait(ctx(real, a, b))
        assert (f.id, f.severity, f.stage, f.predicts, f.remedy) == (
            "pipeline.wgmma-wait",
            "major",
            "ttgir",
            "dot1_90",
            None,
        )
        assert f.title == "wgmma is waited on at every iteration in `dot1_90` (`pendings` 0; 1 in `dot3_90`)"
        assert f.explanation == (
            "In the loop, `ttng.warp_group_dot_wait` has `pendings` = 0 in `dot1_90` and 1 in `dot3_90`. "
            "`pendings = 0` in `dot1_90` means each iteration waits for its own wgmma to finish before going on "
            "(`wgmma.wait_group 0`), so the tensor cores are idle while the next operands are loaded; `pendings = 1` "
            "keeps one wgmma in flight across iterations. Triton's wgmma pipelining (`dotCanBeProperlyAsync` in "
            "`WGMMAPipeline.cpp`) leaves a wgmma in flight only when each shared-memory operand is multi-buffered (a "
            "slot of a pipelined ring) or defined outside the loop; in `dot1_90` `a` and `b` are loaded synchronously "
            "and copied into single buffers (`ttg.local_alloc`) that the next iteration overwrites, so the wgmma "
            "reading them must finish first."
        )
        # the serial side's wait, the other side's wait, then the serial side's two single buffers
        assert ev(f) == [("dot1_90", "ttgir"), ("dot3_90", "ttgir"), ("dot1_90", "ttgir"), ("dot1_90", "ttgir")]
        assert "{pendings = 0 : i32}" in f.evidence[0].text and "{pendings = 1 : i32}" in f.evidence[1].text
        assert all("ttg.local_alloc %" in e.text for e in f.evidence[2:])
        assert all(len(e.text) <= 200 for e in f.evidence)
        d1 = real["dot1_90"][0]
        (w,) = [w for w in d1.waits if w.op == "ttng.warp_group_dot_wait" and w.in_inner_loop]
        assert f.evidence[0].text == w.ref.text


def test_wgmma_one_operand_single_buffered(real) -> None:  # type: ignore[no-untyped-def]
    """persistent: only ``b`` is loaded synchronously: singular wording, one single buffer quoted."""
    for a, b in (("persistent_90", "tiled_90"), ("tiled_90", "persistent_90")):
        (f,) = rule_wgmma_wait(ctx(real, a, b))
        assert f.title == "wgmma is waited on at every iteration in `persistent_90` (`pendings` 0; 1 in `tiled_90`)"
        assert f.explanation.endswith(
            "in `persistent_90` `b` is loaded synchronously and copied into a single buffer (`ttg.local_alloc`) that "
            "the next iteration overwrites, so the wgmma reading it must finish first."
        )
        assert ev(f) == [("persistent_90", "ttgir"), ("tiled_90", "ttgir"), ("persistent_90", "ttgir")]


def test_wgmma_wait_after_the_k_loop_is_not_per_iteration(real) -> None:  # type: ignore[no-untyped-def]
    """flatten=False: the ``pendings = 0`` wait after the inner K loop is not an in-loop wait; sm86 has none."""
    fn = real["persistent-noflatten_90"][0]
    assert any(w.value == 0 and not w.in_inner_loop for w in fn.waits if w.op == "ttng.warp_group_dot_wait")
    assert both(rule_wgmma_wait, real, "persistent-noflatten_90", "tiled_90") == ([], [])
    assert both(rule_wgmma_wait, real, "stages1_86", "stages4_86") == ([], [])


def test_wgmma_no_side_waits_every_iteration(real) -> None:  # type: ignore[no-untyped-def]
    """Different ``pendings`` that are all above 0 (1 vs 2): neither side serialises its wgmma, nothing to say. One
    side without an in-loop wait against ``pendings = 0``: the serial side is still named."""
    d3 = real["dot3_90"][0]
    two = dataclasses.replace(
        d3, name="two", waits=[dataclasses.replace(w, value=w.value + 1) if w.in_inner_loop else w for w in d3.waits]
    )
    assert rule_wgmma_wait(Context("two", "dot3_90", two, d3)) == []
    assert rule_wgmma_wait(Context("dot3_90", "two", d3, two)) == []
    none = dataclasses.replace(d3, name="none", waits=[])
    d1 = real["dot1_90"][0]
    for c in (Context("none", "dot1_90", none, d1), Context("dot1_90", "none", d1, none)):
        (f,) = rule_wgmma_wait(c)
        assert f.predicts == "dot1_90"
        assert f.title == "wgmma is waited on at every iteration in `dot1_90` (`pendings` 0; none in `none`)"
        assert ev(f)[:1] == [("dot1_90", "ttgir")] and ("none", "ttgir") not in ev(f)


# -------------------------------------------------------------------------------------------------- ttgir.tma


def test_tma_both_orders(real) -> None:  # type: ignore[no-untyped-def]
    ft = real["tma_90"][0]
    n = len(ft.tma_copies)
    assert n == 6
    for a, b in (("tma_90", "dot3_90"), ("dot3_90", "tma_90")):
        (f,) = rule_tma(ctx(real, a, b))
        counts = {"tma_90": n, "dot3_90": 0}
        title = f"TMA copies (`ttng.async_tma_copy_global_to_local`): {counts[a]} in `{a}` vs {counts[b]} in `{b}`"
        assert (f.id, f.severity, f.stage, f.predicts, f.title) == ("ttgir.tma", "minor", "ttgir", None, title)
        assert f.explanation == (
            title + ". A TMA copy moves a whole tile global→shared with one instruction per CTA "
            "(`cp.async.bulk.tensor`), addressed through a tensor descriptor and completed on an mbarrier; without TMA "
            "every thread issues its own `cp.async` or loads. Which is faster depends on the tile and the "
            "architecture; the counts below are not comparable one to one."
        )
        assert [(e.variant, e.stage, e.line) for e in f.evidence] == [
            ("tma_90", "ttgir", r.line) for r in ft.tma_copies[:2]
        ]
        assert [e.text for e in f.evidence] == [r.text[:200] for r in ft.tma_copies[:2]]


def test_long_ir_lines_are_cut_in_evidence(real) -> None:  # type: ignore[no-untyped-def]
    """Evidence quotes at most 220 characters of an async copy or loop load and 200 of a wait or TMA copy (long MLIR
    types would otherwise fill the report); the facts keep the whole line."""
    pad = ", !ttg.memdesc<64x32xf16, #shared, #smem>" * 6

    def longer(f: VariantFacts, **lists: list) -> VariantFacts:  # type: ignore[type-arg]
        return dataclasses.replace(
            f, **{k: [dataclasses.replace(r, text=r.text + pad) for r in v] for k, v in lists.items()}
        )

    d1, d3, tma = real["dot1_90"][0], real["dot3_90"][0], real["tma_90"][0]
    l1 = longer(d1, sync_loads_loop=d1.sync_loads_loop)
    l3 = longer(d3, async_copies_prologue=d3.async_copies_prologue, async_copies_loop=d3.async_copies_loop)
    (f,) = rule_async_copies(Context("dot1_90", "dot3_90", l1, l3))
    assert [len(e.text) for e in f.evidence] == [220] * 5
    assert f.evidence[0].text == l1.sync_loads_loop[0].text[:220]
    lw = dataclasses.replace(
        d1, waits=[dataclasses.replace(w, ref=dataclasses.replace(w.ref, text=w.ref.text + pad)) for w in d1.waits]
    )
    (w,) = rule_wgmma_wait(Context("dot1_90", "dot3_90", lw, d3))
    assert len(w.evidence[0].text) == 200 and w.evidence[0].text == lw.waits[0].ref.text[:200]
    lt = longer(tma, tma_copies=tma.tma_copies)
    for c in (Context("tma_90", "dot3_90", lt, d3), Context("dot3_90", "tma_90", d3, lt)):
        (t,) = rule_tma(c)
        assert [len(e.text) for e in t.evidence] == [200, 200]


# ------------------------------------------------------------------ edges of the real facts (found by mutation testing)


def test_loads_paired_by_shape_not_position(real) -> None:  # type: ignore[no-untyped-def]
    """``dot1``'s pipeliner entries listed in the other order: each unpipelined load still quotes its own tile's lines
    from ``dot3``'s log (``b`` with the 32x64 lines), not the load at the same position."""
    d3, d1 = real["dot3_90"][0], real["dot1_90"][0]
    rev = dataclasses.replace(d1, pipeline=list(reversed(d1.pipeline)))
    (f,) = rule_pipelined(Context("dot3_90", "dot1_90", d3, rev))
    assert f.title == "`a` load 64x32xf16, `b` load 32x64xf16 not pipelined in `dot1_90`"
    assert "64x32x!tt.ptr<f16>" in f.evidence[0].text and "32x64x!tt.ptr<f16>" in f.evidence[3].text


def test_load_lost_on_each_side(real) -> None:  # type: ignore[no-untyped-def]
    """``a`` pipelined only in `x`, ``b`` only in `y`, a third load only in `x`: the finding is about the first side
    that lost one (`y`), lists both of its loads, and quotes at most two log lines per load."""
    d3 = real["dot3_90"][0]
    a, b = d3.pipeline
    extra = dataclasses.replace(a, shape=[16, 32], name="c", refs=[*a.refs, a.refs[0]])
    x = dataclasses.replace(
        d3, pipeline=[a, dataclasses.replace(b, pipelined=False, reason="is not pipelined here"), extra]
    )
    y = dataclasses.replace(
        d3,
        pipeline=[
            dataclasses.replace(a, pipelined=False, reason="is not pipelined here"),
            b,
            dataclasses.replace(extra, pipelined=False, reason="is not pipelined here"),
        ],
    )
    (f,) = rule_pipelined(Context("x", "y", x, y))
    assert f.predicts == "y" and f.title == "`a` load 64x32xf16, `c` load 16x32xf16 not pipelined in `y`"
    # width None, refs present: the pipeliner's own reason is quoted as it is
    assert '`a` load 64x32xf16: "is not pipelined here"; `c` load 16x32xf16: "is not pipelined here"' in f.explanation
    assert "Only `b` is still pipelined." in f.explanation
    assert [e.variant for e in f.evidence] == ["y", "y", "x", "x", "y", "y", "x", "x"]


def test_load_of_32_bits_rejected_for_another_reason(real) -> None:  # type: ignore[no-untyped-def]
    """32 bits is what ``cp.async`` needs: a 32-bit load that is not pipelined is not "too small"."""
    d3 = real["dot3_90"][0]
    a, b = d3.pipeline
    w32 = dataclasses.replace(d3, pipeline=[dataclasses.replace(a, width_bits=32, pipelined=False, reason="other"), b])
    (f,) = rule_pipelined(Context("w32", "dot3_90", w32, d3))
    assert '`a` load 64x32xf16: "other"' in f.explanation and "isSmallLoad" not in f.explanation
    w31 = dataclasses.replace(d3, pipeline=[dataclasses.replace(a, width_bits=16, pipelined=False, reason="small"), b])
    nothing = dataclasses.replace(w31, accesses=[])  # no coalescing access of that shape: the plain small-load reason
    (f,) = rule_pipelined(Context("w31", "dot3_90", nothing, d3))
    assert '`a` load 64x32xf16 has width 16 bits → "small"' in f.explanation and "isSmallLoad" in f.explanation


def test_not_considered_without_a_num_stages_attribute(real) -> None:  # type: ignore[no-untyped-def]
    f1 = dataclasses.replace(real["stages1_90"][0], loops_ttir=[])
    (f,) = rule_pipelined(Context("stages1_90", "stages3_90", f1, real["stages3_90"][0]))
    assert '`acc` load 256xf16 is not considered at all; in `stages3_90` it is "considered' in f.explanation
    assert "ttir" not in {e.stage for e in f.evidence}


def test_kept_loads_named_by_shape_when_unnamed(real) -> None:  # type: ignore[no-untyped-def]
    d3, d1 = real["dot3_90"][0], real["dot1_90"][0]
    a, b = d3.pipeline
    kept = [dataclasses.replace(a, shape=[8, 8], name=""), dataclasses.replace(a, shape=[4, 4], name="k")]
    x = dataclasses.replace(d1, pipeline=[*d1.pipeline, *kept])
    y = dataclasses.replace(d3, pipeline=[a, b, *kept])
    (f,) = rule_pipelined(Context("x", "y", x, y))
    assert "Only `8x8` and `k` are still pipelined." in f.explanation


def _persistent_variants(real, **changes):  # type: ignore[no-untyped-def]
    fp, text = real["persistent_90"]
    return dataclasses.replace(fp, **changes), text


def test_loop_carried_edges(real) -> None:  # type: ignore[no-untyped-def]
    """The loop-carried explanation without TTGIR, without a lowering of the load, with a lowering no wider than the
    pipeliner's width, and with coalescing that saw exactly 32 bits."""
    fp, text = real["persistent_90"]
    ft = real["tiled_90"][0]
    (b,) = [p for p in fp.pipeline if not p.pipelined]
    low = next(x for x in fp.lowered if x.kind == "load" and x.shape == b.shape)
    # no TTGIR text: no trace, still the loop-carried reading
    (f,) = rule_pipelined(Context("persistent_90", "tiled_90", fp, ft, {}, {}))
    assert "loop-carried" in f.title and "`iter_args` value" not in f.explanation
    assert [e.stage for e in f.evidence].count("ttgir") == 0
    # no lowering of the load, or one without a PTX line, or one no wider: no "still emits" sentence
    others = [x for x in fp.lowered if x is not low]
    for lowered in (
        [],
        [*others, dataclasses.replace(low, ptx_ref=None)],
        [*others, dataclasses.replace(low, ptx_bits=16)],
    ):
        f2 = dataclasses.replace(fp, lowered=lowered)
        (f,) = rule_pipelined(Context("persistent_90", "tiled_90", f2, ft, {"persistent_90": text}, {}))
        assert "still emits" not in f.explanation and "ptx" not in {e.stage for e in f.evidence}
    # the lowering of `b` found among others listed before it (a store, `a`'s load)
    f3 = dataclasses.replace(fp, lowered=[*others, low])
    (f,) = rule_pipelined(Context("persistent_90", "tiled_90", f3, ft, {"persistent_90": text}, {}))
    assert f.evidence[-1].line == low.ptx_ref.line  # type: ignore[union-attr]
    # coalescing saw exactly 32 bits: still wider than the pipeliner's 16
    acc = next(a for a in fp.accesses if a.kind == "load" and a.shape == b.shape)
    f4 = dataclasses.replace(fp, accesses=[dataclasses.replace(acc, vector_bits=32)])
    (f,) = rule_pipelined(Context("persistent_90", "tiled_90", f4, ft, {"persistent_90": text}, {}))
    assert "saw 32-bit accesses" in f.explanation
    f5 = dataclasses.replace(fp, accesses=[dataclasses.replace(acc, vector_bits=16)])
    (f,) = rule_pipelined(Context("persistent_90", "tiled_90", f5, ft, {"persistent_90": text}, {}))
    assert "loop-carried" not in f.title and '`b` load 64x256xf16 has width 16 bits → "is too small' in f.explanation


def test_loop_carried_trace_on_edited_ttgir(real) -> None:  # type: ignore[no-untyped-def]
    """The trace on the persistent TTGIR edited the ways real IR differs: the initial value a result of a
    multi-result op (``%Xcols_32#1``, defined as ``%Xcols_32:2``; the numbers are the release's), its definition
    missing, a second synchronous load of the same shape after the first (the first is traced), a loop-carried
    pointer (not an integer offset)."""
    fp, text = real["persistent_90"]
    ft = real["tiled_90"][0]
    value, init = carried(text)
    n = init.removeprefix("%cols")  # "_32"
    multi = text.replace(f"= {init} ", f"= %Xcols{n}#1 ").replace(f"= {init},", f"= %Xcols{n}#1,")
    multi = multi.replace(f"{init} = arith.select", f"%Xcols{n}:2 = arith.select")
    assert f"%Xcols{n}#1" in multi
    load, it, first = _trace_loop_carried(multi, [64, 256])
    assert f"{value} = %Xcols{n}#1" in it.text and first.text.startswith(f"%Xcols{n}:2 = arith.select")
    (f,) = rule_pipelined(Context("persistent_90", "tiled_90", fp, ft, {"persistent_90": multi}, {}))
    assert f"(`Xcols`: `iter_args` value `{value}` of the fused `scf.for`, initialised from `%Xcols{n}#1`)" in (
        f.explanation
    )
    undefined = text.replace(f"{init} = arith.select", "%gone_32 = arith.select")
    assert len(_trace_loop_carried(undefined, [64, 256])) == 2
    (f,) = rule_pipelined(Context("persistent_90", "tiled_90", fp, ft, {"persistent_90": undefined}, {}))
    assert f"initialised from `{init}`" in f.explanation
    lines = text.splitlines()
    at = next(i for i, ln in enumerate(lines) if re.match(r"%b_\d+ = tt\.load", ln.strip()))
    second = "      %b_999 = tt.load %b_base_1 : tensor<64x256x!tt.ptr<f16>, #blocked>"
    twice = "\n".join([*lines[: at + 1], second, *lines[at + 1 :]])
    assert _trace_loop_carried(twice, [64, 256])[0].text == lines[at].strip().split(" loc(")[0]
    annotated = real["annotated_90"][1]  # a_ptrs/b_ptrs are loop-carried pointers, not integer offsets
    assert "iter_args(" in annotated and _trace_loop_carried(annotated, [128, 32]) == []


def test_buffers_sentences_for_both_sides(real) -> None:  # type: ignore[no-untyped-def]
    """Both sides stage loads through single buffers (matmul ``annotated`` vs ``persistent``): one sentence each.
    Both sides load straight to registers (softmax ``stages1`` against itself with ``stages4``'s ring): one each."""
    (f,) = rule_buffers(ctx(real, "annotated_90", "persistent_90"))
    assert f.explanation.endswith(
        " In `annotated_90` 2 synchronous loop load(s) are instead copied from registers into a single buffer "
        "(`ttg.local_alloc`) every iteration. In `persistent_90` 1 synchronous loop load(s) are instead copied from "
        "registers into a single buffer (`ttg.local_alloc`) every iteration."
    )
    s1, s4 = real["stages1_86"][0], real["stages4_86"][0]
    ring = dataclasses.replace(s1, buffers=s4.buffers)
    (f,) = rule_buffers(Context("stages1_86", "ring", s1, ring))
    assert f.explanation.endswith(
        " In `stages1_86` the loop's loads without a ring go straight to registers. In `ring` the loop's loads "
        "without a ring go straight to registers."
    )


def test_async_copies_more_evidence_and_sync_counts(real) -> None:  # type: ignore[no-untyped-def]
    """Three loop copies and three synchronous loads: two of each are quoted. The side with fewer copies is decided
    by the copies alone, never by the synchronous loads."""
    s3 = real["stages3_90"][0]
    many = dataclasses.replace(
        s3,
        async_copies_loop=s3.async_copies_loop * 3,
        sync_loads_loop=real["stages1_90"][0].sync_loads_loop * 3,
    )
    (f,) = rule_async_copies(Context("many", "none", many, dataclasses.replace(s3, async_copies_loop=[])))
    assert [e.variant for e in f.evidence].count("many") == 5 and f.predicts == "none"
    # copies 2+1 vs 1+1 with five synchronous loads on the side with fewer copies
    fewer = dataclasses.replace(
        s3, async_copies_prologue=s3.async_copies_prologue[:1], sync_loads_loop=many.sync_loads_loop * 2
    )
    assert len(s3.async_copies_prologue) == 2
    for c in (Context("s3", "fewer", s3, fewer), Context("fewer", "s3", fewer, s3)):
        (f,) = rule_async_copies(c)
        assert f.predicts == "fewer"
    # the same total copies, synchronous loads on one side only: neither has fewer copies
    moved = dataclasses.replace(
        s3,
        async_copies_prologue=s3.async_copies_prologue[:1],
        async_copies_loop=s3.async_copies_loop * 2,
        sync_loads_loop=many.sync_loads_loop,
    )
    for c in (Context("moved", "s3", moved, s3), Context("s3", "moved", s3, moved)):
        (f,) = rule_async_copies(c)
        assert f.predicts is None


def test_wgmma_waits_every_iteration_on_both_sides(real) -> None:  # type: ignore[no-untyped-def]
    """Both sides wait with ``pendings = 0`` (one has one more in-loop wait): neither keeps a wgmma in flight, no
    finding (the rule once named whichever variant came second as the serial one)."""
    d1 = real["dot1_90"][0]
    (w,) = [w for w in d1.waits if w.in_inner_loop]
    two = dataclasses.replace(d1, waits=[*d1.waits, w])
    assert rule_wgmma_wait(Context("two", "dot1_90", two, d1)) == []
    assert rule_wgmma_wait(Context("dot1_90", "two", d1, two)) == []


def test_wgmma_more_waits_and_unnamed_operands(real) -> None:  # type: ignore[no-untyped-def]
    """Three in-loop waits per side (two quoted each, all values listed), and the staged operands without Python
    names (``%20``): "operands are loaded", never "an operand are"; one unnamed staged operand: "an operand is"."""
    d1, d3 = real["dot1_90"][0], real["dot3_90"][0]
    (w1,) = [w for w in d1.waits if w.in_inner_loop and w.op == "ttng.warp_group_dot_wait"]
    (w3,) = [w for w in d3.waits if w.in_inner_loop and w.op == "ttng.warp_group_dot_wait"]

    def anon(r):  # type: ignore[no-untyped-def]
        return dataclasses.replace(r, text=r.text.replace("%a_", "%").replace("%b_", "%"))

    x = dataclasses.replace(
        d1,
        waits=[w1, dataclasses.replace(w1, value=1), w1],
        sync_loads_loop=[anon(r) for r in d1.sync_loads_loop],
        buffers=[dataclasses.replace(b, ref=anon(b.ref)) for b in d1.buffers],
    )
    y = dataclasses.replace(d3, waits=[w3, w3, w3])
    (f,) = rule_wgmma_wait(Context("x", "y", x, y))
    assert f.title == "wgmma is waited on at every iteration in `x` (`pendings` 0, 1, 0; 1, 1, 1 in `y`)"
    assert [e.variant for e in f.evidence] == ["x", "x", "y", "y", "x", "x"]
    assert "in `x` operands are loaded synchronously and copied into single buffers (`ttg.local_alloc`)" in (
        f.explanation
    )
    one = dataclasses.replace(x, sync_loads_loop=x.sync_loads_loop[:1])
    (f,) = rule_wgmma_wait(Context("one", "y", one, y))
    assert "in `one` an operand is loaded synchronously and copied into a single buffer" in f.explanation
    # two staged loads of one Python name: plural
    same = dataclasses.replace(
        d1,
        sync_loads_loop=[dataclasses.replace(r, text=r.text.replace("%b_", "%a_")) for r in d1.sync_loads_loop],
        buffers=[
            dataclasses.replace(b, ref=dataclasses.replace(b.ref, text=b.ref.text.replace("%b_", "%a_")))
            for b in d1.buffers
        ],
    )
    (f,) = rule_wgmma_wait(Context("same", "dot3_90", same, d3))
    assert "in `same` `a` are loaded synchronously and copied into single buffers" in f.explanation
    long = dataclasses.replace(
        d1,
        buffers=[
            dataclasses.replace(b, ref=dataclasses.replace(b.ref, text=b.ref.text + " " * 300)) for b in d1.buffers
        ],
    )
    (f,) = rule_wgmma_wait(Context("dot1_90", "dot3_90", long, d3))
    assert [len(e.text) for e in f.evidence[2:]] == [200, 200]


def _loop(body: list[str], iters: str = "%off = %cols, %off2 = %rows, %off3 = %rows, %acc = %zero") -> str:
    """A TTGIR function in Triton's printed form: integer offsets and an fp32 accumulator carried by an ``scf.for``,
    ``body`` inside the loop (two-space indents as Triton prints them)."""
    t = "tensor<64xi32, #blocked>"
    types = ", ".join([t] * (iters.count("%off")) + ["tensor<64xf32, #blocked>"] * ("%acc" in iters))
    return "\n".join(
        [
            "module {",
            "  tt.func public @k(%x: !tt.ptr<f16>, %n: i32) {",
            "    %c0_i32 = arith.constant 0 : i32",
            "    %c1_i32 = arith.constant 1 : i32",
            f"    %cols = tt.make_range {{end = 64 : i32, start = 0 : i32}} : {t}",
            f"    %rows = tt.make_range {{end = 64 : i32, start = 0 : i32}} : {t}",
            "    %zero = arith.constant dense<0.000000e+00> : tensor<64xf32, #blocked>",
            "    %base = tt.splat %x : !tt.ptr<f16> -> tensor<64x!tt.ptr<f16>, #blocked>",
            f"    %r:4 = scf.for %i = %c0_i32 to %n step %c1_i32 iter_args({iters}) -> ({types})  : i32 {{",
            *[f"      {ln}" for ln in body],
            "      scf.yield %off, %off2, %off3, %acc : tensor<64xi32, #blocked>",
            "    }",
            "    tt.return",
            "  }",
            "}",
        ]
    )


LOAD = "%v = tt.load %p : tensor<64x!tt.ptr<f16>, #blocked>"
ADDPTR = "%p = tt.addptr %base, %s : tensor<64x!tt.ptr<f16>, #blocked>, tensor<64xi32, #blocked>"


def test_trace_walks_every_operand_to_its_iter_args() -> None:
    """The address is built from two carried offsets (``%off + %off2``) and a pointer splat from a parameter (no
    definition in the function): both offsets are found, each with its initial value; a third carried offset is not
    quoted (two at most); an offset used twice is quoted once; results of multi-result ops (``%q#1``) are followed."""
    two = _loop(["%s = arith.addi %off, %off2 : tensor<64xi32, #blocked>", ADDPTR, LOAD])
    refs = _trace_loop_carried(two, [64])
    assert [r.text.split(" = ")[0] for r in refs] == [
        "%v",
        "scf.for … iter_args(… %off",
        "%cols",
        "scf.for … iter_args(… %off2",
        "%rows",
    ]
    assert refs[1].text == "scf.for … iter_args(… %off = %cols …) : tensor<64xi32, #blocked>"
    assert refs[0].line == two.splitlines().index("      " + LOAD) + 1
    three = _loop(
        [
            "%s1 = arith.addi %off, %off2 : tensor<64xi32, #blocked>",
            "%s = arith.addi %s1, %off3 : tensor<64xi32, #blocked>",
            ADDPTR,
            LOAD,
        ]
    )
    assert len(_trace_loop_carried(three, [64])) == 5
    twice = _loop(["%s = arith.addi %off, %off : tensor<64xi32, #blocked>", ADDPTR, LOAD])
    assert [r.text[:40] for r in _trace_loop_carried(twice, [64])][1:] == [
        "scf.for … iter_args(… %off = %cols …) : ",
        "%cols = tt.make_range {end = 64 : i32, s",
    ]
    multi = _loop(
        [
            "%q:2 = tt.split %off, %off2 : tensor<64xi32, #blocked> -> tensor<64xi32, #blocked>",
            "%s = arith.addi %q#1, %q#0 : tensor<64xi32, #blocked>",
            "%pp:2 = tt.addptr %base, %s : tensor<64x!tt.ptr<f16>, #blocked>, tensor<64xi32, #blocked>",
            "%v = tt.load %pp#0 : tensor<64x!tt.ptr<f16>, #blocked>",
        ]
    )
    assert len(_trace_loop_carried(multi, [64])) == 5
    # an fp32 or i1 tensor, or a scalar, carried by the loop is not an offset
    floaty = _loop(["%s = arith.fptosi %acc : tensor<64xf32, #blocked> to tensor<64xi32, #blocked>", ADDPTR, LOAD])
    assert _trace_loop_carried(floaty, [64]) == []
    # no load of the shape inside the loop, or no loop at all
    assert _trace_loop_carried(two, [32]) == []
    flat = "\n".join(ln for ln in two.splitlines() if "scf.for" not in ln)
    assert _trace_loop_carried(flat, [64]) == []


def test_loop_carried_then_another_lost_load(real) -> None:  # type: ignore[no-untyped-def]
    """After the loop-carried ``b``, a second load lost in the same variant is still explained; the lowering of ``b``
    is found by kind, shape and element among other loads listed before it."""
    from irdiff.diagnose.facts import Ref

    fp, text = real["persistent_90"]
    ft = real["tiled_90"][0]
    (b,) = [p for p in fp.pipeline if not p.pipelined]
    z = dataclasses.replace(b, shape=[32, 32], name="z", width_bits=None, reason="is not pipelined here")
    zp = dataclasses.replace(z, pipelined=True, reason="considered for pipelining with distance 0")
    low = next(x for x in fp.lowered if x.kind == "load" and x.shape == b.shape)
    other = dataclasses.replace(low, shape=[128, 64], ptx_bits=32, ptx_ref=Ref("ptx", 1, "ld.global.b32 %r1, [%rd1];"))
    x = dataclasses.replace(fp, pipeline=[*fp.pipeline, z], lowered=[other, *fp.lowered])
    y = dataclasses.replace(ft, pipeline=[*ft.pipeline, zp])
    for c in (Context("p", "t", x, y, {"p": text}, {}), Context("t", "p", y, x, {"p": text}, {})):
        (f,) = rule_pipelined(c)
        assert f.title.startswith("`b` load 64x256xf16, `z` load 32x32xf16 not pipelined in `p`")
        assert f.explanation.count('`z` load 32x32xf16: "is not pipelined here"') == 1
        ptx = [e for e in f.evidence if e.stage == "ptx"]
        assert len(ptx) == 1 and ptx[0].line == low.ptx_ref.line  # type: ignore[union-attr]


def test_wgmma_three_staged_operands(real) -> None:  # type: ignore[no-untyped-def]
    """Three operands staged through single buffers: two of their buffers are quoted."""
    d1, d3 = real["dot1_90"][0], real["dot3_90"][0]
    load_a = next(r for r in d1.sync_loads_loop if r.text.startswith("%a_"))
    buf_a = next(b for b in d1.buffers if b.ref.text.startswith("%a_"))

    def as_c(text: str) -> str:
        return text.replace("%a_", "%w_")

    x = dataclasses.replace(
        d1,
        sync_loads_loop=[*d1.sync_loads_loop, dataclasses.replace(load_a, text=as_c(load_a.text))],
        buffers=[
            *d1.buffers,
            dataclasses.replace(buf_a, ref=dataclasses.replace(buf_a.ref, text=as_c(buf_a.ref.text))),
        ],
    )
    (f,) = rule_wgmma_wait(Context("x", "dot3_90", x, d3))
    assert "`a`, `b` and `w` are loaded synchronously" in f.explanation
    assert [e.variant for e in f.evidence].count("x") == 3  # one wait, two of the three buffers


@pytest.mark.parametrize("swap", [False, True], ids=["as-named", "swapped"])
def test_fp8_operand_b_is_not_pipelined_and_named(compile_suite, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``tests/suites/rule_acc_type.py`` (sm90): the same K-loop wgmma matmul on fp8 (e4m3) vs fp16 operands. The
    loads' element types differ, so they were never paired and ``pipeline.load-not-pipelined`` said nothing although
    fp8's row-major B tile is loaded synchronously: an 8-bit ``wgmma`` operand must be K-major, so the tile goes
    through registers into a transposed shared buffer. Now the load is named, with the transposed layout read from
    the TTGIR, and linked to the type change; found from either side."""
    from irdiff.diagnose import diagnose

    suite = str(Path(__file__).parent / "suites" / "rule_acc_type.py")
    bundle = compile_suite(suite, ["acc16", "acc32", "fp8"], "sm90")
    ttgir = stage_text(bundle.compiled_variant("fp8"), "ttgir")
    m = re.search(
        r"ttg\.local_alloc %\S+ : \(tensor<32x64xf8E4M3FN, #\w+>\) -> !ttg\.memdesc<32x64xf8E4M3FN, (#\w+)", ttgir
    )
    assert m and re.search(rf"^{m.group(1)} = #ttg\.nvmma_shared<{{[^}}]*transposed = true", ttgir, re.M)
    assert re.search(r"tt\.load %\S+ : tensor<32x64x!tt\.ptr<f8E4M3FN>", ttgir)  # B: synchronous, in the loop
    a, b = ("acc32", "fp8") if swap else ("fp8", "acc32")
    d = diagnose(bundle, a, b)
    f = next(f for f in d.findings if f.id == "pipeline.load-not-pipelined")
    assert f.title == "`y` load 32x64xf8E4M3FN not pipelined in `fp8`"
    assert f.predicts == "fp8" and f.causes == ["spec.type-changed"]
    assert (
        f"the pipeliner's log gives no reason; its data goes through registers into a shared-memory buffer with a "
        f"transposed layout (`{m.group(1)}`: `transposed = true`, 8-bit elements): `wgmma` reads 8-bit operands from "
        "shared memory only K-major"
    ) in f.explanation
    assert ': ""' not in f.explanation  # no empty quoted reason
    by = {g.id: g for g in d.findings}
    # the MMA instruction shape (K = 32 for 8-bit, 16 for 16-bit operands) follows the type; the shallower async
    # wait follows the load left out of the pipeline
    assert by["layout.mma"].causes == ["spec.type-changed"]
    assert by["pipeline.wait-depth"].causes == ["pipeline.load-not-pipelined"]
    # the fp16 pair (same operand types) has nothing of the kind
    assert not [g for g in diagnose(bundle, "acc32", "acc16").findings if g.id == "pipeline.load-not-pipelined"]


# ------------------------------------------------------------- cases the kernels above do not reach (issue 19)


def _load(name: str, shape: list[int], elem: str, pipelined: bool = True) -> object:
    from irdiff.diagnose.facts import PipelineLoad

    return PipelineLoad(shape, elem, 128, pipelined, "" if pipelined else "no reason", name)


def test_pair_pipeline_by_shape_element_then_name() -> None:
    """Loads pair by (shape, element type) first, each `b` load once: a renamed load of the same tile pairs; then an
    unpaired load pairs with an unused `b` load of its shape whose name matches or is missing on one side (an element
    type change, fp8 vs fp16); anything else stays unpaired, listed once."""
    from irdiff.diagnose.rules.pipelining import _pair_pipeline
    from irdiff.diagnose.testing import make_facts

    def pairs(xs: list[object], ys: list[object]) -> list[tuple[object, object]]:
        return _pair_pipeline(make_facts("a", pipeline=xs), make_facts("b", pipeline=ys))  # type: ignore[return-value]

    x, y = _load("x", [64, 64], "f16"), _load("y", [64, 64], "f16", False)
    assert pairs([x], [y]) == [(x, y)]  # renamed, same tile
    a16, a8 = _load("a", [64, 64], "f16"), _load("a", [64, 64], "f8E4M3FN", False)
    assert pairs([a16], [a16, a8]) == [(a16, a16), (None, a8)]  # paired once, the extra load listed
    ka, kb, kb8 = _load("a", [64, 32], "f16"), _load("b", [32, 64], "f16"), _load("b", [32, 64], "f8E4M3FN", False)
    assert pairs([ka, kb8], [ka, kb]) == [(ka, ka), (kb8, kb)]  # B's type changes after A paired
    k32, k64 = _load("x", [64, 32], "f16"), _load("x", [64, 64], "f16", False)
    assert pairs([k32], [k64]) == [(k32, None), (None, k64)]  # another tile shape: never paired by name
    z = _load("z", [128], "f32")
    assert pairs([k32], [z]) == [(k32, None), (None, z)]
    named, anon = _load("x", [64, 64], "f8E4M3FN"), _load("", [64, 64], "f16", False)
    assert pairs([named], [anon]) == [(named, anon)] and pairs([anon], [named]) == [(anon, named)]
    other = _load("w", [64, 64], "f16", False)
    assert pairs([named], [other]) == [(named, None), (None, other)]  # two names that differ
    sa, sb = _load("a", [64, 64], "f8E4M3FN"), _load("b", [64, 64], "f8E4M3FN")
    ta, tb = _load("a", [64, 64], "f16", False), _load("b", [64, 64], "f16", False)
    assert pairs([sa, sb], [ta, tb]) == [(sa, ta), (sb, tb)]  # square tiles, each partner taken once


def test_buffers_one_slot_deeper_for_an_in_place_wgmma() -> None:
    """Hand-built rings (tiles and depths as Triton's pipeliner gives a Hopper matmul with num_stages 3): every ring of
    one side one slot deeper and only that side's dots `wgmma` on two shared operands: the whole note, with the other
    side's lowerings (each once, `?` for an unknown one) and `mma.lowering` as cause; no note when neither reads the
    ring in place or when one side has two rings of one tile (which pairs with which is not known)."""
    from irdiff.diagnose.facts import Buffer, Ref
    from irdiff.diagnose.mechfacts import DotFact, MechFacts
    from irdiff.diagnose.testing import make_facts

    r = Ref("ttir", 9, "%d = tt.dot %a, %b, %c")

    def dot(lowering: str, operands: list[str]) -> DotFact:
        return DotFact(
            "acc", "", "f16", "f16", "f32", [128, 128, 64], 2, None, lowering, [], 4, operands, [], True, r, None, None
        )

    def rings(depth: int, tiles: list[list[int]]) -> list[Buffer]:
        return [
            Buffer(depth, t, "f16", depth * t[0] * t[1] * 2, Ref("ttgir", 20 + i, f"%r{i} = ttg.local_alloc"))
            for i, t in enumerate(tiles)
        ]

    tiles = [[128, 64], [64, 128]]
    wg = dot("wgmma", ["shared", "shared"])
    deep = make_facts("deep", buffers=rings(3, tiles), mech=MechFacts(dots=[wg]))
    for dots, lo in (([dot("mma_v2", ["dot_op", "dot_op"]), dot("", []), dot("mma_v2", [])], "mma_v2, ?"), (None, "")):
        flat = make_facts("flat", buffers=rings(2, tiles), mech=None if dots is None else MechFacts(dots=dots))
        for ctx in (Context("deep", "flat", deep, flat), Context("flat", "deep", flat, deep)):
            (f,) = rule_buffers(ctx)
            desc = {
                "deep": "3×128x64xf16 (48 KB), 3×64x128xf16 (48 KB)",
                "flat": "2×128x64xf16 (32 KB), 2×64x128xf16 (32 KB)",
            }
            assert f.explanation == (
                f"Shared-memory rings for pipelined loads: {desc[ctx.a]} in `{ctx.a}`; {desc[ctx.b]} in `{ctx.b}`. "
                "Each ring slot holds one future iteration's tile, filled by `cp.async` while earlier iterations "
                "compute. Each ring of `deep` has one slot more: its `tl.dot` is an asynchronous `wgmma` "
                "(`ttng.warp_group_dot` on `!ttg.memdesc` operands) that reads both operands straight from the ring, so "
                "the slot it reads stays in use until a later `ttng.warp_group_dot_wait` retires the `wgmma`, and the "
                f"pipeliner allocates one more slot for it; `flat`'s dot ({lo}) reads an operand into registers first, "
                "which frees the slot at once. The depth follows from the dot's lowering, not from `num_stages`."
            )
            assert f.causes == ["mma.lowering"] and f.predicts == "flat"
    # both sides mma.sync (sm80, num_stages 4 vs 3): deeper, but not for the lowering
    mma = MechFacts(dots=[dot("mma_v2", ["dot_op", "dot_op"])])
    d80, f80 = (dataclasses.replace(x, mech=mma) for x in (deep, make_facts("flat", buffers=rings(2, tiles))))
    for ctx in (Context("deep", "flat", d80, f80), Context("flat", "deep", f80, d80)):
        (f,) = rule_buffers(ctx)
        assert "one slot more" not in f.explanation and f.causes == []
    # two 3-deep rings of one tile against one 2-deep ring of it
    twice = make_facts("twice", buffers=rings(3, [[64, 64], [64, 64]]), mech=MechFacts(dots=[wg]))
    once = make_facts("once", buffers=rings(2, [[64, 64]]), mech=mma)
    for ctx in (Context("twice", "once", twice, once), Context("once", "twice", once, twice)):
        (f,) = rule_buffers(ctx)
        assert "one slot more" not in f.explanation and f.causes == []


def test_transposed_stage_clause_read_from_the_layout(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """``tests/suites/rule_acc_type.py``'s ``fp8`` (sm90): B (32x64, row-major) is loaded synchronously and staged into
    ``#shared1`` (``transposed = true, elementBitWidth = 8``). The clause is read from the layout: 8-bit adds the
    K-major reason, 16-bit only names the layout, not transposed (or no TTGIR at hand) says nothing; another staged
    load before it does not hide it."""
    from irdiff.diagnose.facts import Buffer, Ref
    from irdiff.diagnose.rules.pipelining import _transposed_stage

    suite = str(Path(__file__).parent / "suites" / "rule_acc_type.py")
    bundle = compile_suite(suite, ["acc16", "acc32", "fp8"], "sm90")
    f8, f32 = extract_facts(bundle.compiled_variant("fp8")), extract_facts(bundle.compiled_variant("acc32"))
    t8 = stage_text(bundle.compiled_variant("fp8"), "ttgir")
    lay = "#shared1 = #ttg.nvmma_shared<{swizzlingByteWidth = 32, transposed = true, elementBitWidth = 8}>"
    assert lay in t8.splitlines()
    (ld,) = [p for p in f8.pipeline if not p.pipelined]
    assert (ld.name, ld.shape) == ("y", [32, 64])

    def clause(text: str | None, facts: VariantFacts = f8) -> str:
        return _transposed_stage(
            Context("fp8", "acc32", facts, f32, {} if text is None else {"fp8": text}, {}), "fp8", ld
        )

    head = "; its data goes through registers into a shared-memory buffer with a transposed layout (`#shared1`: "
    k_major = (
        ": `wgmma` reads 8-bit operands from shared memory only K-major, so a tile whose fast dimension is not K is "
        "transposed on the way"
    )
    assert clause(t8) == head + "`transposed = true`, 8-bit elements)" + k_major
    assert clause(t8.replace(lay, lay.replace("= 8}", "= 16}"))) == head + "`transposed = true`, 16-bit elements)"
    assert clause(t8.replace(lay, lay.replace("transposed = true", "transposed = false"))) == ""
    assert clause(None) == ""
    z = Ref("ttgir", 60, "%z_1 = tt.load %z_0 : tensor<64x32x!tt.ptr<f8E4M3FN>, #blocked>")
    za = Ref(
        "ttgir",
        61,
        "%z_2 = ttg.local_alloc %z_1 : (tensor<64x32xf8E4M3FN, #blocked>) -> !ttg.memdesc<64x32xf8E4M3FN, #shared, #smem>",
    )
    more = dataclasses.replace(
        f8, sync_loads_loop=[z, *f8.sync_loads_loop], buffers=[*f8.buffers, Buffer(1, [64, 32], "f8E4M3FN", 2048, za)]
    )
    assert clause(t8, more) == head + "`transposed = true`, 8-bit elements)" + k_major


def test_unrolled_loops_predict_no_side_for_copies_and_rings(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """``tests/suites/rule_loops.py`` (sm80): ``u2`` unrolls the row loop 2× (``loop_unroll_factor``): twice the
    async copies of ``base``, and (a ring added by hand to ``u2``) more ring slots: neither rule names a slower side
    (``predicts`` None, not any other false value)."""
    from irdiff.diagnose.facts import Buffer, Ref

    b = compile_suite(str(SUITES / "rule_loops.py"), ["base", "u2", "u4", "st1", "st3u2", "reload", "inner"], "sm80")
    u2, base = extract_facts(b.compiled_variant("u2")), extract_facts(b.compiled_variant("base"))
    ring = Buffer(2, [128], "f32", 1024, Ref("ttgir", 5, "%r = ttg.local_alloc"))
    u2r = dataclasses.replace(u2, buffers=[*u2.buffers, ring])
    for x, y in ((u2, base), (base, u2)):
        (f,) = rule_async_copies(Context(x.name or "x", y.name or "y", x, y))
        assert f.predicts is None and "(`loop_unroll_factor`)" in f.explanation
    for x, y in ((u2r, base), (base, u2r)):
        (f,) = rule_buffers(Context("x", "y", x, y))
        assert f.predicts is None and "(`loop_unroll_factor`)" in f.explanation


def test_trace_through_an_inner_loop_a_shared_level_and_its_depth_bound() -> None:
    """The address comes out of an inner ``scf.for`` that advances the outer loop's offset: the walk follows the inner
    loop's operands (its bounds and ``iter_args(%o = %off)``, after the ``=`` of its induction variable) to both
    carried offsets. Two offsets reached in one level after an already visited name are both found. The walk is
    bounded: an offset 12 definitions above the address is found, 13 above is not (14 levels)."""
    t = "tensor<64xi32, #blocked>"
    inner = _loop(
        [
            f"%in:1 = scf.for %j = %c0_i32 to %n step %c1_i32 iter_args(%o = %off) -> ({t})  : i32 {{",
            f"  %o2 = arith.addi %o, %rows : {t}",
            f"  scf.yield %o2 : {t}",
            "}",
            f"%s = arith.addi %in#0, %rows : {t}",
            ADDPTR,
            LOAD,
        ]
    )
    assert [r.text.split(" = ")[0] for r in _trace_loop_carried(inner, [64])] == [
        "%v",
        "scf.for … iter_args(… %o",
        "scf.for … iter_args(… %off",
        "%cols",
    ]
    level = _loop(
        [f"%a = arith.addi %off, %off : {t}", f"%b = arith.addi %off2, %rows : {t}", f"%s = arith.addi %a, %b : {t}"]
        + [ADDPTR, LOAD]
    )
    assert [r.text.split(" = ")[0] for r in _trace_loop_carried(level, [64])][1::2] == [
        "scf.for … iter_args(… %off",
        "scf.for … iter_args(… %off2",
    ]

    def chain(k: int) -> str:
        body = [f"%s1 = arith.addi %off, %rows : {t}"]
        body += [f"%s{i} = arith.addi %s{i - 1}, %rows : {t}" for i in range(2, k + 1)]
        return _loop([*body, ADDPTR.replace("%s :", f"%s{k} :"), LOAD])

    assert len(_trace_loop_carried(chain(12), [64])) == 3 and _trace_loop_carried(chain(13), [64]) == []
