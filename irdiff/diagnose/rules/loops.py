"""Loop structure: flattened or nested loops (TTIR/TTGIR) and per-loop ``num_stages``."""

from __future__ import annotations

import re

from irdiff.diagnose.facts import LoopFact, VariantFacts
from irdiff.diagnose.model import Evidence, Finding
from irdiff.diagnose.rules.common import Context, _ev
from irdiff.diagnose.rules.registry import Emits, rule


def _ttir_loop_summary(f: VariantFacts) -> tuple[int, int, bool]:
    depth = max((lp.depth for lp in f.loops_ttir), default=0)
    gdepth = max((lp.depth for lp in f.loops_ttgir), default=0)
    flat = any(lp.flatten for lp in f.loops_ttir)
    return depth, gdepth, flat


def _differing_nest(fused: list[LoopFact], other: list[LoopFact]) -> LoopFact:
    """The ``tt.flatten`` loop of the fusing variant whose nest the other variant does not flatten: TTIR loops of
    the same source pair up by their order (flattening is an attribute there; the fusion happens in TTGIR), so a
    kernel with two nests, one flattened in both variants, names the nest that differs. Without such a pair, the
    first ``tt.flatten`` loop."""
    if len(fused) == len(other):
        for x, y in zip(fused, other, strict=True):
            if x.flatten and not y.flatten:
                return x
    return next(lp for lp in fused if lp.flatten)


def _tops(loops: list[LoopFact]) -> list[LoopFact]:
    return [lp for lp in loops if lp.depth == 1 and not lp.remainder]


def _top_rank(loops: list[LoopFact], lp: LoopFact) -> int | None:
    """Which top-level loop (0-based, source order) ``lp`` is, when it is one."""
    tops = _tops(loops)
    return next((i for i, x in enumerate(tops) if x is lp), None)


def _nest(loops: list[LoopFact], rank: int | None, expect: int) -> list[LoopFact]:
    """The TTGIR loops of the ``rank``-th top-level nest (its top loop and the loops inside it), when TTGIR has as
    many top-level loops as TTIR (``expect``: a fused nest is still one top-level loop, so the ranks correspond);
    else every loop."""
    tops = _tops(loops)
    if rank is None or len(tops) != expect or rank >= len(tops):
        return loops
    top = tops[rank]
    return [lp for lp in loops if (top.ref.line or 0) <= (lp.ref.line or 0) <= (top.end_line or 0)]


@rule(
    Emits("loop.flattened", causes=("spec.constexpr-changed",)),
    Emits("loop.nest", causes=("spec.constexpr-changed",)),
    reads=("loops_ttir", "loops_ttgir"),
)
def rule_loops(ctx: Context) -> list[Finding]:
    """``loop.flattened`` (a nest marked ``tt.flatten`` is fused into one loop in TTGIR) and ``loop.nest`` (the
    ``scf.for`` structure differs otherwise), with the number of loop-carried values."""
    out: list[Finding] = []
    fused: dict[str, bool] = {}
    for v in (ctx.a, ctx.b):
        f = ctx.facts(v)
        d, gd, flat = _ttir_loop_summary(f)
        fused[v] = flat and d >= 2 and gd < d
    if fused[ctx.a] != fused[ctx.b]:
        fz = ctx.a if fused[ctx.a] else ctx.b
        other = ctx.b if fz == ctx.a else ctx.a
        ff, fo = ctx.facts(fz), ctx.facts(other)
        outer = _differing_nest(ff.loops_ttir, fo.loops_ttir)
        inner = next(
            (
                lp
                for lp in ff.loops_ttir
                if lp.depth == outer.depth + 1 and (outer.ref.line or 0) < (lp.ref.line or 0) <= outer.end_line
            ),
            None,
        )
        rank = _top_rank(ff.loops_ttir, outer)
        # the steady-state loop (most loop-carried values) of that nest in each variant's TTGIR
        onest = _nest(fo.loops_ttgir, rank, len(_tops(fo.loops_ttir)))
        main = max(_nest(ff.loops_ttgir, rank, len(_tops(ff.loops_ttir))), key=lambda lp: lp.iter_args, default=None)
        omain = max(onest, key=lambda lp: lp.iter_args, default=None)
        ev = [_ev(fz, outer.ref, outer.ref.text[:240]), Evidence(fz, "ttir", outer.end_line, "} {tt.flatten}")]
        if inner:
            ev.append(_ev(fz, inner.ref, inner.ref.text[:240]))
        if main:
            ev.append(_ev(fz, main.ref, main.ref.text[:240]))
        for lp in onest[:2]:
            ev.append(_ev(other, lp.ref, lp.ref.text[:240]))
        n_for = len(ff.loops_ttgir)
        # what the nest is, from the TTIR: a matmul's tile loop around its K loop (``tt.dot`` in the inner loop's
        # body), or any other outer loop around an inner one (rows, statistics, a stencil's taps)
        matmul = inner is not None and inner.dots > 0
        outer_w, inner_w = ("tile loop", "inner K loop") if matmul else ("outer loop", "inner loop")
        steps = "tiles × K steps" if matmul else "outer × inner iterations"
        own = (
            "The per-tile work (computing the tile's row/column offsets, the epilogue store)"
            if matmul
            else "The outer loop's own work (the statements before and after the inner loop)"
        )
        expl = (
            f"In `{fz}` the {outer_w} is written `tl.range(..., flatten=True)` (`tt.flatten` on the outer `scf.for`), "
            "and the NVIDIA backend's `TritonGPUFuseNestedLoops` pass (run in `make_ttgir` for sm80 and newer) fuses "
            f"it with the {inner_w} into a single loop over {steps} "
            f"(TTIR: {len(ff.loops_ttir)} nested `scf.for`; TTGIR: {n_for} `scf.for`, the steady-state one carrying "
            f"{main.iter_args if main else '?'} values)"
            + (
                f"; `{other}` keeps {len(fo.loops_ttgir)} loop(s) with {omain.iter_args} loop-carried values"
                if omain
                else ""
            )
            + f". {own} now happens inside the fused loop under `scf.if`, and values that used to be recomputed per "
            + ("tile" if matmul else "outer iteration")
            + " become loop-carried."
        )
        title = (
            f"Tile loop and K loop are fused into one loop in `{fz}` (`flatten=True`)"
            if matmul
            else f"Outer loop and inner loop (no `tl.dot`) are fused into one loop in `{fz}` (`flatten=True`)"
        )
        remedy = (
            "`flatten=False` on the tile loop keeps the nest (both operands can then be pipelined)"
            if matmul
            else "`flatten=False` on the outer loop keeps the nest (the inner loop is then pipelined on its own)"
        )
        out.append(Finding("loop.flattened", "major", title, expl, ev, remedy=remedy, stage="ttir", predicts=None))
        return out
    # other structural changes (an unroll's remainder loop is ``loop.unrolled``'s, not a change of the nest)
    sa = [(lp.depth, lp.iter_args) for lp in ctx.fa.loops_ttgir if not lp.remainder]
    sb = [(lp.depth, lp.iter_args) for lp in ctx.fb.loops_ttgir if not lp.remainder]
    ta = [lp.depth for lp in ctx.fa.loops_ttir if not lp.remainder]
    tb = [lp.depth for lp in ctx.fb.loops_ttir if not lp.remainder]
    if ta != tb or [d for d, _ in sa] != [d for d, _ in sb]:
        ev = [_ev(ctx.a, lp.ref, lp.ref.text[:240]) for lp in ctx.fa.loops_ttgir[:3]]
        ev += [_ev(ctx.b, lp.ref, lp.ref.text[:240]) for lp in ctx.fb.loops_ttgir[:3]]
        expl = (
            f"`{ctx.a}` has {len(ta)} `scf.for` in TTIR (max depth {max(ta, default=0)}) and {len(sa)} in TTGIR; "
            f"`{ctx.b}` has {len(tb)} (max depth {max(tb, default=0)}) and {len(sb)}. "
            f"Loop-carried values of the TTGIR loops: {[n for _, n in sa]} vs {[n for _, n in sb]}."
        )
        title = (
            f"Loop nest differs: {len(ta)} `scf.for` (depth {max(ta, default=0)}) in `{ctx.a}` vs {len(tb)} "
            f"(depth {max(tb, default=0)}) in `{ctx.b}`"
        )
        out.append(Finding("loop.nest", "minor", title, expl, ev, stage="ttir"))
    return out


@rule(
    Emits("loop.num-stages", causes=("spec.constexpr-changed", "options.changed")),
    reads=("options", "loops_ttir"),
)
def rule_num_stages_attr(ctx: Context) -> list[Finding]:
    """``loop.num-stages``: the ``tt.num_stages`` attribute of a TTIR loop differs."""

    def stages(f: VariantFacts) -> list[tuple[int, Evidence]]:
        out = []
        for lp in f.loops_ttir:
            if lp.remainder:  # ``triton-loop-unroll`` marks its remainder loop 1: not the user's setting
                continue
            m = re.search(r"tt\.num_stages = (\d+)", lp.attrs)
            if m:
                out.append((int(m.group(1)), Evidence(f.name, "ttir", lp.end_line, lp.attrs)))
        return out

    sa, sb = stages(ctx.fa), stages(ctx.fb)
    if not (sa or sb):
        return []

    def values(st_: list[tuple[int, Evidence]], f: VariantFacts) -> list[int]:
        """The user's depths of ``f``'s loops: their attributes, else the ``num_stages`` compile option; none when
        ``f`` has no loop of its own (nothing to pipeline) or the option is not an integer (depth unknown)."""
        if st_:
            return [v for v, _ in st_]
        opt = f.options.get("num_stages")
        has_loop = any(not lp.remainder for lp in f.loops_ttir)
        return [opt] if has_loop and isinstance(opt, int) else []

    xa, xb = values(sa, ctx.fa), values(sb, ctx.fb)
    # a side without a loop is ``loop.nest``'s; an unknown depth is no difference
    if not (xa and xb) or set(xa) == set(xb):
        return []
    ev = [e for _, e in sa] + [e for _, e in sb]
    va = ", ".join(str(s) for s, _ in sa) or f"default ({xa[0]})"
    vb = ", ".join(str(s) for s, _ in sb) or f"default ({xb[0]})"
    # the shallower pipeline is the slower one; no direction when both variants' shallowest loops agree
    ma, mb = min(xa), min(xb)
    low = ctx.a if ma < mb else ctx.b if mb < ma else None
    expl = (
        f"The loop's `tt.num_stages` is {va} in `{ctx.a}` and {vb} in `{ctx.b}`. The software pipeliner "
        "(`triton-loop-pipeline`) prefetches loads `num_stages - 1` iterations ahead with `cp.async` into a ring of "
        "shared-memory buffers; with `num_stages = 1` it leaves the loop alone, so each iteration waits for its own "
        "global loads."
    )
    return [
        Finding(
            "loop.num-stages",
            "major",
            f"Loop pipelining depth `tt.num_stages`: {va} in `{ctx.a}` vs {vb} in `{ctx.b}`",
            expl,
            ev,
            remedy="`num_stages >= 2` on the loop (`tl.range(..., num_stages=N)`) lets the row loads be prefetched",
            stage="ttir",
            predicts=low,
        )
    ]


@rule(
    Emits("loop.unrolled", causes=("spec.constexpr-changed",)),
    reads=("loops_ttir",),
)
def rule_unrolled(ctx: Context) -> list[Finding]:
    """``loop.unrolled``: a loop is unrolled in TTIR in one variant only, or by another factor
    (``tl.range(..., loop_unroll_factor=N)``: Triton's ``triton-loop-unroll`` pass, run in ``make_ttir``, copies the
    body N times and adds a remainder loop marked ``tt.num_stages = 1``)."""

    def unrolled(f: VariantFacts) -> list[int]:
        return sorted(lp.unroll for lp in f.loops_ttir if lp.unroll > 1)

    ua, ub = unrolled(ctx.fa), unrolled(ctx.fb)
    if ua == ub:
        return []
    ev: list[Evidence] = []
    for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb)):
        for lp in f.loops_ttir:
            if lp.unroll > 1 or lp.remainder:
                ev.append(_ev(v, lp.ref, lp.ref.text[:240]))
                ev.append(Evidence(v, "ttir", lp.end_line, lp.attrs[:240] or "}"))
        if not (ua if v == ctx.a else ub):
            ev += [_ev(v, lp.ref, lp.ref.text[:240]) for lp in f.loops_ttir[:2]]

    def say(u: list[int]) -> str:
        return " and ".join(f"{n}×" for n in u) if u else "none"

    # the variant that unrolls more: the larger factor, then more unrolled loops, then more copies in all (equal
    # factors in the same number of loops with the same total: neither)
    wa, wb = (max(ua, default=1), len(ua), sum(ua)), (max(ub, default=1), len(ub), sum(ub))
    more = ctx.a if wa > wb else ctx.b if wb > wa else None
    n = max(ua + ub)  # the larger factor, whichever variant lists it first
    who = f"`{more}` issues" if more else "Both variants' most unrolled loops issue"
    expl = (
        f"Loops unrolled in TTIR: {say(ua)} in `{ctx.a}`, {say(ub)} in `{ctx.b}`. `tl.range(..., "
        "loop_unroll_factor=N)` has Triton's `triton-loop-unroll` pass copy the loop body N times into one "
        "iteration (N times the loads and stores in flight per iteration, fewer branches and index updates) and add "
        "a remainder loop for the leftover iterations, which it marks `tt.num_stages = 1` (never pipelined). "
        f"{who} {n}× the instructions per iteration: more registers and a larger kernel, more memory "
        "parallelism per thread; whether that is faster depends on whether the loop was latency-bound."
    )
    return [
        Finding(
            "loop.unrolled",
            "minor",
            f"Loop unrolling in TTIR (`loop_unroll_factor`): {say(ua)} in `{ctx.a}` vs {say(ub)} in `{ctx.b}`",
            expl,
            ev,
            stage="ttir",
            predicts=None,
        )
    ]


@rule(
    Emits("loop.invariant-load", causes=("spec.constexpr-changed",)),
    reads=("invariant_loads",),
)
def rule_invariant_loads(ctx: Context) -> list[Finding]:
    """``loop.invariant-load``: one variant loads from an address that does not change across a loop's iterations
    inside that loop (a statement left in, or moved into, the loop), the other has fewer such loads. Triton does not
    hoist loads (LICM moves only side-effect-free ops), so each iteration issues the load again."""
    na, nb = len(ctx.fa.invariant_loads), len(ctx.fb.invariant_loads)
    if na == nb:
        return []
    more = ctx.a if na > nb else ctx.b
    ev = [_ev(v, r, r.text[:240]) for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb)) for r in f.invariant_loads[:3]]
    expl = (
        f"Loads inside a loop whose address and mask are the same on every iteration: {na} in `{ctx.a}`, {nb} in "
        f"`{ctx.b}`. Triton's loop-invariant code motion (`make_ttir`) hoists index arithmetic but never a load, so "
        f"`{more}` reads the same memory again on each iteration (more load instructions and memory requests, "
        "usually L1/L2 hits; the value also cannot stay in registers across iterations), where a load before the "
        "loop reads it once."
    )
    return [
        Finding(
            "loop.invariant-load",
            "minor",
            f"Loop-invariant loads inside a loop: {na} in `{ctx.a}` vs {nb} in `{ctx.b}` (re-issued every iteration)",
            expl,
            ev,
            remedy="load the value once before the loop",
            stage="ttir",
            predicts=more,
        )
    ]
