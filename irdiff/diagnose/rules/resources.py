"""Resources from ptxas and Triton's metadata: registers, spills, shared memory and occupancy."""

from __future__ import annotations

from irdiff.diagnose.facts import VariantFacts
from irdiff.diagnose.model import Evidence, Finding, Severity
from irdiff.diagnose.rules.common import Context, _ev, _kb, _same_warps, _warps_note
from irdiff.diagnose.rules.registry import Emits, rule


def _res_ev(v: str, f: VariantFacts, key: str, fallback: str) -> Evidence:
    r = f.resource_refs.get(key)
    return _ev(v, r) if r else Evidence(v, "resources", None, fallback)


@rule(
    Emits(
        "resources.registers",
        causes=(
            "mma.lowering",
            "precision.fp64",
            "precision.dot-input",
            "precision.dot-accumulate",
            "precision.dot-upcast",
            "ptx.memory-ops",
            "loop.flattened",
            "ttir.i64-index-math",
            "sass.division-calls",
            "atomic.cas-loop",
            "options.changed",
        ),
        direction={
            "mma.lowering": +1,
            "precision.fp64": +1,
            "precision.dot-input": +1,
            "precision.dot-accumulate": +1,
            "precision.dot-upcast": +1,
            "ptx.memory-ops": +1,
            "ttir.i64-index-math": +1,
            "sass.division-calls": +1,
            "pipeline.buffers": -1,
            "pipeline.async-copies": -1,
        },
    ),
    reads=("options", "resources", "resource_refs"),
)
def rule_registers(ctx: Context) -> list[Finding]:
    """``resources.registers``: registers per thread (ptxas) differ by at least 8 or one variant is at the cap."""
    ra, rb = ctx.fa.resources.get("registers"), ctx.fb.resources.get("registers")
    if ra is None or rb is None or ra == rb or (abs(ra - rb) < 8 and max(ra, rb) < 255):
        return []
    more = ctx.a if ra > rb else ctx.b
    ev = [
        _res_ev(ctx.a, ctx.fa, "registers", f"{ra} registers"),
        _res_ev(ctx.b, ctx.fb, "registers", f"{rb} registers"),
    ]
    cap = max(ra, rb) >= 255
    expl = (
        f"ptxas allocates {ra} registers per thread in `{ctx.a}` and {rb} in `{ctx.b}`"
        + (" (255 is the hardware limit: ptxas had to fit the kernel under the cap)" if cap else "")
        + ". More registers per thread mean fewer warps can be resident per SM."
        + _warps_note(ctx)
    )
    sev: Severity = "major" if cap or abs(ra - rb) >= 32 or max(ra, rb) >= 1.5 * min(ra, rb) else "minor"
    if not _same_warps(ctx) and not cap:
        sev = "minor" if sev == "major" else "info"
    return [
        Finding(
            "resources.registers",
            sev,
            f"Registers per thread: {ra} in `{ctx.a}` vs {rb} in `{ctx.b}`",
            expl,
            ev,
            stage="resources",
            predicts=more,
        )
    ]


@rule(
    Emits(
        "resources.spills",
        causes=("resources.registers", "options.changed"),
        direction={"ptx.memory-ops": +1, "resources.registers": +1, "pipeline.buffers": -1},
    ),
    reads=("resources", "resource_refs"),
)
def rule_spills(ctx: Context) -> list[Finding]:
    """``resources.spills``: spill stores/loads (ptxas ``-v``) differ."""

    def sp(f: VariantFacts) -> tuple[int, int]:
        return (f.resources.get("spill_store_bytes") or 0, f.resources.get("spill_load_bytes") or 0)

    sa, sb = sp(ctx.fa), sp(ctx.fb)
    if sa == sb:
        return []
    # the same total in other proportions (stores vs loads) names neither variant as the slower
    more = ctx.a if sum(sa) > sum(sb) else ctx.b if sum(sb) > sum(sa) else None
    ev = [
        _res_ev(ctx.a, ctx.fa, "spills", f"{sa[0]} B spill stores, {sa[1]} B spill loads"),
        _res_ev(ctx.b, ctx.fb, "spills", f"{sb[0]} B spill stores, {sb[1]} B spill loads"),
    ]
    expl = (
        f"Register spills: {sa[0]} B stored / {sa[1]} B loaded in `{ctx.a}`, {sb[0]} B / {sb[1]} B in `{ctx.b}`. "
        "Spilled values live in local memory (cached in L1, backed by DRAM) and cost a memory round trip on each use."
    )
    return [
        Finding(
            "resources.spills",
            "major" if max(sum(sa), sum(sb)) >= 64 else "minor",
            f"Register spills: {sa[0]}/{sa[1]} B in `{ctx.a}` vs {sb[0]}/{sb[1]} B in `{ctx.b}`",
            expl,
            ev,
            stage="resources",
            predicts=more,
        )
    ]


@rule(
    Emits(
        "resources.shared",
        causes=(
            "pipeline.buffers",
            "loop.num-stages",
            "loop.flattened",
            "options.changed",
            "ttgir.tma",
            "layout.convert-shared",
        ),
    ),
    reads=("buffers", "resources", "resource_refs"),
)
def rule_shared(ctx: Context) -> list[Finding]:
    """``resources.shared``: dynamic shared memory per CTA (Triton metadata ``shared``) differs."""
    sa, sb = ctx.fa.resources.get("shared_bytes"), ctx.fb.resources.get("shared_bytes")
    if sa is None or sb is None or sa == sb:
        return []
    ev = [
        _res_ev(ctx.a, ctx.fa, "shared", f"shared = {sa} B (metadata)"),
        _res_ev(ctx.b, ctx.fb, "shared", f"shared = {sb} B (metadata)"),
    ]
    expl = (
        f"Shared memory per CTA: {_kb(sa)} in `{ctx.a}` vs {_kb(sb)} in `{ctx.b}` (Triton's `metadata.shared`, "
        "the dynamic shared memory the launcher requests). Explicit TTGIR buffers (`ttg.local_alloc`): "
        + "; ".join(
            f"`{v}`: "
            + (", ".join(f"{b.depth}×{'x'.join(map(str, b.tile))} = {_kb(b.bytes)}" for b in f.buffers) or "none")
            + f" (total {_kb(sum(b.bytes for b in f.buffers))})"
            for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb))
        )
        + "; the rest is scratch the compiler reserves for layout conversions and reductions, reusing freed buffers."
    )
    return [
        Finding(
            "resources.shared",
            "minor",
            f"Shared memory: {_kb(sa)} in `{ctx.a}` vs {_kb(sb)} in `{ctx.b}`",
            expl,
            ev,
            stage="resources",
        )
    ]


@rule(
    Emits(
        "resources.occupancy",
        causes=("resources.registers", "resources.shared", "options.changed"),
    ),
    reads=("target", "occupancy"),
)
def rule_occupancy(ctx: Context) -> list[Finding]:
    """``resources.occupancy``: CTAs per SM allowed by registers/shared memory/warps/CTA slots differ."""
    oa, ob = ctx.fa.occupancy, ctx.fb.occupancy
    if oa is None or ob is None or (oa.ctas_per_sm == ob.ctas_per_sm and oa.warps_per_sm == ob.warps_per_sm):
        return []
    ev = []
    for v, o in ((ctx.a, oa), (ctx.b, ob)):
        lim = ", ".join(f"{k} {n}" for k, n in o.limits.items())
        ev.append(
            Evidence(
                v,
                "resources",
                None,
                f"{o.ctas_per_sm} CTAs/SM ({o.warps_per_sm} warps), limited by {o.limiter} [{lim}]",
            )
        )
    wa, wb = oa.warps_per_sm, ob.warps_per_sm
    lower = ctx.a if wa < wb else ctx.b if wb < wa else None
    expl = (
        f"On {ctx.fa.target} one SM holds {oa.ctas_per_sm} CTA(s) of `{ctx.a}` ({wa} warps; limited by {oa.limiter}) "
        f"and {ob.ctas_per_sm} of `{ctx.b}` ({wb} warps; limited by {ob.limiter}). "
        + (
            f"Fewer resident warps in `{lower}` leave less parallelism to hide memory latency. "
            if lower
            else f"The resident warps are the same ({wa}), in CTAs of different sizes: the same parallelism to hide "
            "memory latency. "
        )
        + f"Limits used: {oa.source}."
    )
    big = min(wa, wb) == 0 or max(wa, wb) >= 2 * min(wa, wb)
    return [
        Finding(
            "resources.occupancy",
            "major" if big else "minor" if lower else "info",
            f"Occupancy: {oa.ctas_per_sm} CTAs ({wa} warps) per SM in `{ctx.a}` vs {ob.ctas_per_sm} ({wb} warps) in "
            f"`{ctx.b}` (limited by {oa.limiter} / {ob.limiter})",
            expl,
            ev,
            stage="resources",
            predicts=lower,
        )
    ]
