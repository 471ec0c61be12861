"""MMA lowering: which instruction each ``tl.dot`` becomes — FMA, ``mma.sync`` (v2), ``wgmma`` (v3) or
``tcgen05.mma`` (v5, Blackwell, accumulator in tensor memory) — and what forced it; Blackwell MMA waits.

Triton picks the lowering in ``AccelerateMatmul.cpp`` (``BlockedToMMA``): an fp32 dot with ``ieee`` precision, a
dot whose operand types have no MMA on the target, or a tile smaller than one MMA instruction stays a ``tt.dot``
with a blocked layout (lowered to FMA in ``DotOpToLLVM/FMA.cpp``); ``wgmma`` needs sm90, at least 4 warps (one
warpgroup), a tile of at least 64 rows per warpgroup and operands in shared memory (A may come from registers);
``tcgen05.mma`` needs sm100 and puts the accumulator in tensor memory (``ttng.tmem_alloc``).
"""

from __future__ import annotations

from irdiff.diagnose.mechfacts import DotFact
from irdiff.diagnose.model import Evidence, Finding, Severity
from irdiff.diagnose.rules.common import Context, _c, _ev
from irdiff.diagnose.rules.precision import _dot_label, mech, pair_dots
from irdiff.diagnose.rules.registry import Emits, rule

# Lowerings from slowest to fastest (the rank decides what a downgrade is). Any other kind mechfacts may name (``mma``:
# an ``nvidia_mma`` layout of a ``versionMajor`` irdiff has no words for; a layout alias it cannot resolve) ranks
# with ``mma.sync`` (:data:`_OTHER_RANK`): above FMA, below the asynchronous MMAs. Two different kinds of one rank
# (``mma`` against ``mma_v2``) are reported without a direction: neither is called the slower.
_RANK = {"fma": 0, "mma_v2": 1, "wgmma": 2, "tcgen05": 3}
_OTHER_RANK = 1
_WORDS = {
    "fma": "FMA instructions (`fma.rn.f32`: one multiply-add per thread and instruction, no tensor cores)",
    "mma_v2": "`mma.sync` (Ampere-style tensor-core MMA, synchronous, per warp)",
    "wgmma": "`wgmma` (Hopper warpgroup MMA, asynchronous, operands from shared memory)",
    "tcgen05": "`tcgen05.mma` (Blackwell MMA, asynchronous, accumulator in tensor memory)",
}
_PTX_KEY = {"fma": "fma.f32", "mma_v2": "mma.sync", "wgmma": "wgmma", "tcgen05": "tcgen05.mma"}


def _why(d: DotFact, other: DotFact, arch: int) -> list[str]:
    """What forced ``d``'s (lower) lowering, compared with ``other``'s."""
    why: list[str] = []
    if d.lowering == "fma":
        if d.a_type == "f32" and d.precision == "ieee":
            why.append('its fp32 inputs use `input_precision="ieee"`: the tensor cores have no fp32 mode')
        if d.a_type in ("f64", "i32", "i64") or d.a_type != d.b_type:
            why.append(f"operand types {d.a_type} × {d.b_type} have no MMA instruction here")
        if d.shape and (d.shape[0] < 16 or d.shape[1] < 8 or d.shape[2] < 8):
            why.append(f"the tile {'x'.join(map(str, d.shape))} is smaller than one MMA instruction (16x8x8)")
    if d.lowering == "mma_v2" and other.lowering in ("wgmma", "tcgen05"):
        if d.warps and d.warps < 4:
            why.append(f"`num_warps` = {d.warps}: `wgmma` needs a warpgroup (4 warps)")
        if d.rank == 3:
            why.append("it is a batched (3-D) dot: Triton lowers batched dots with `mma.sync`")
        if d.shape and d.shape[0] < 64:
            why.append(f"M = {d.shape[0]} is below the 64 rows one warpgroup MMA computes")
        if d.a_type == "f64" or d.b_type == "f64":
            # AccelerateMatmul's supportMMA(dot, 3/5): no warpgroup/tcgen05 MMA takes fp64; mma.sync (DMMA) does
            why.append(f"its fp64 operands have no `{other.lowering}` form: fp64 dots use `mma.sync`")
        if d.a_type == "f32" and d.precision in ("tf32x3", "bf16x3", "bf16x6"):
            why.append(f"`{d.precision}` splits each product into several MMAs, which Triton emits with `mma.sync`")
        if arch and arch < 90:
            why.append(f"sm{arch} has no `wgmma`")
    if d.lowering == "wgmma" and other.lowering == "tcgen05" and d.warps and d.warps < 4:
        why.append(f"`num_warps` = {d.warps}")
    if d.operands != other.operands and "registers" in d.operands and d.lowering != "fma":
        why.append(
            "an operand comes from registers instead of shared memory ("
            + ", ".join(f"{n}: {o}" for n, o in zip(("A", "B"), d.operands, strict=False))
            + ")"
        )
    if d.warps != other.warps and d.warps and other.warps and not any("num_warps" in w for w in why):
        why.append(f"`num_warps` is {d.warps} vs {other.warps}")
    # both known: a non-fp32 dot has no precision ("" would print an empty code span)
    if d.precision != other.precision and d.precision and other.precision and not any("precision" in w for w in why):
        why.append(f"input precision `{d.precision}` vs `{other.precision}`")
    return why


@rule(
    Emits(
        "mma.lowering",
        causes=("precision.dot-input", "options.changed", "spec.constexpr-changed", "spec.type-changed"),
    ),
    reads=("mech", "counts", "first_lines", "arch"),
)
def rule_mma_lowering(ctx: Context) -> list[Finding]:
    """``mma.lowering``: a ``tl.dot`` becomes a different instruction kind in the two variants (FMA / mma.sync /
    wgmma / tcgen05). A downgrade to FMA is critical, one between MMA generations major."""
    for x, y in pair_dots(ctx.fa, ctx.fb):
        if not x.lowering or not y.lowering or x.lowering == y.lowering:
            continue
        ra, rb = _RANK.get(x.lowering, _OTHER_RANK), _RANK.get(y.lowering, _OTHER_RANK)
        if ra == rb:
            return [_unranked(ctx, x, y)]
        low, high = (ctx.a, ctx.b) if ra < rb else (ctx.b, ctx.a)
        dl, dh = (x, y) if low == ctx.a else (y, x)
        fl, fh = ctx.facts(low), ctx.facts(high)
        why = _why(dl, dh, fl.arch)
        sev: Severity = "critical" if dl.lowering == "fma" else "major"
        ev: list[Evidence] = []
        for v, d in ((low, dl), (high, dh)):
            if d.ttgir:
                ev.append(_ev(v, d.ttgir, d.ttgir.text[:240]))
        for v, f, d in ((low, fl, dl), (high, fh, dh)):
            k = _PTX_KEY.get(d.lowering, "")
            r = f.first_lines.get("ptx", {}).get(k)
            if r:
                ev.append(_ev(v, r, f"{r.text}   ({_c(f, 'ptx', k)}× {k})"))
        if dl.python:
            ev.append(_ev(low, dl.python))
        # a layout kind without a PTX instruction here (an ``nvidia_mma`` of another ``versionMajor``, which
        # mechfacts names ``mma``) is named as such, not counted under an empty key
        counts = "; ".join(
            f"`{v}`: {_c(f, 'ptx', _PTX_KEY[d.lowering])} `{_PTX_KEY[d.lowering]}`"
            if d.lowering in _PTX_KEY
            else f"`{v}`: no PTX instruction known for `{d.lowering}`"
            for v, f, d in ((low, fl, dl), (high, fh, dh))
        )
        expl = (
            f"{_dot_label(dl)} is lowered to {_WORDS.get(dl.lowering, f'`{dl.lowering}`')} in `{low}` and to "
            f"{_WORDS.get(dh.lowering, f'`{dh.lowering}`')} in `{high}` (per thread, PTX: {counts}). "
            + (f"What forced it in `{low}`: {'; '.join(why)}. " if why else "")
            + (
                "On FMA every output element is accumulated in registers of the thread that owns it, one "
                "multiply-add per instruction: far more instructions than an MMA and registers for the whole "
                "operand slices each thread reads, which is where register pressure and spills come from. "
                if dl.lowering == "fma"
                else "The older instruction computes a smaller tile per instruction and is synchronous: the warp "
                "waits for each MMA and loads/stores cannot overlap it as they do with asynchronous MMAs. "
            )
            + "Results can differ numerically only where the input precision differs as well (FMA on fp32 is exact "
            "fp32; tensor cores on fp32 inputs use tf32)."
        )
        # the title names the inspected variant (``--variant``) first, like every other finding; the reason is the
        # slower side's, said as such when that side is the baseline
        name = {low: dl.lowering.upper() if dl.lowering == "fma" else dl.lowering, high: dh.lowering}
        reason = "" if not why else f" ({why[0]})" if low == ctx.a else f" (in `{low}`: {why[0]})"
        return [
            Finding(
                "mma.lowering",
                sev,
                f"{_dot_label(dl)} lowered to {name[ctx.a]} in `{ctx.a}` vs {name[ctx.b]} in `{ctx.b}`{reason}",
                expl,
                ev,
                stage="ttgir",
                predicts=low,
            )
        ]
    return []


def _unranked(ctx: Context, x: DotFact, y: DotFact) -> Finding:
    """Two lowerings of one rank (:data:`_OTHER_RANK`): what each is, in the variants' order, and no slower side."""
    ev = [_ev(v, d.ttgir, d.ttgir.text[:240]) for v, d in ((ctx.a, x), (ctx.b, y)) if d.ttgir]
    expl = (
        f"{_dot_label(x)} is lowered to {_WORDS.get(x.lowering, f'`{x.lowering}`')} in `{ctx.a}` and to "
        f"{_WORDS.get(y.lowering, f'`{y.lowering}`')} in `{ctx.b}`. irdiff ranks the two alike (a layout kind it "
        "has no words for counts as `mma.sync`), so neither side is called the slower; compare their PTX and timings."
    )
    return Finding(
        "mma.lowering",
        "major",
        f"{_dot_label(x)} lowered to {x.lowering} in `{ctx.a}` vs {y.lowering} in `{ctx.b}`",
        expl,
        ev,
        stage="ttgir",
    )


@rule(
    Emits("mma.blackwell-wait", causes=("pipeline.load-not-pipelined", "loop.num-stages", "options.changed")),
    reads=("mech",),
)
def rule_blackwell_wait(ctx: Context) -> list[Finding]:
    """``mma.blackwell-wait``: on Blackwell, the loop waits (``ttng.wait_barrier``) for the ``tcgen05.mma`` it has
    just issued in one variant (the barrier its own commit arrives on), while the other keeps an MMA in flight
    (waits on an earlier MMA's barrier): the Blackwell analogue of ``warp_group_dot_wait {pendings = 0}``."""
    wa = [w for w in mech(ctx.fa).mma_waits]
    wb = [w for w in mech(ctx.fb).mma_waits]
    ia, ib = any(w.immediate for w in wa), any(w.immediate for w in wb)
    if not (wa or wb) or ia == ib:
        return []
    serial = ctx.a if ia else ctx.b
    other = ctx.b if serial == ctx.a else ctx.a
    ws = [w for w in (wa if serial == ctx.a else wb) if w.immediate]
    wo = wb if serial == ctx.a else wa
    ev = [_ev(serial, ws[0].mma_ref, ws[0].mma_ref.text[:200]), _ev(serial, ws[0].ref, ws[0].ref.text[:200])]
    if wo:
        ev += [_ev(other, wo[0].mma_ref, wo[0].mma_ref.text[:200]), _ev(other, wo[0].ref, wo[0].ref.text[:200])]
    ring_o = max((w.ring for w in wo), default=0)
    expl = (
        f"In `{serial}`, each loop iteration issues a `tcgen05.mma` (`ttng.tc_gen5_mma`), commits it to an mbarrier "
        "and then waits on that same barrier (`ttng.wait_barrier`): the MMA must finish before the iteration ends, "
        "so loads for the next step and the MMA do not overlap. "
        + (
            f"In `{other}` the wait is on an earlier MMA's barrier ({ring_o} MMA barriers): one MMA stays in flight "
            "while the next operands arrive. "
            if wo
            else f"`{other}` has no such wait in a loop. "
        )
        + "This is the Blackwell counterpart of Hopper's `warp_group_dot_wait {pendings = 0}`; Triton keeps an MMA "
        "in flight only when the loop is pipelined (multi-buffered operands, `num_stages` > 1). Results are the same."
    )
    return [
        Finding(
            "mma.blackwell-wait",
            "major",
            f"`tcgen05.mma` is waited on at every iteration in `{serial}`",
            expl,
            ev,
            stage="ttgir",
            predicts=serial,
        )
    ]
