"""Resources from ptxas and Triton's metadata: registers, spills, shared memory and occupancy."""

from __future__ import annotations

from irdiff.diagnose.facts import Occupancy, VariantFacts
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


def _limiters(o: Occupancy) -> list[str]:
    """Every resource that allows exactly the CTAs per SM ``o`` has (ties included), in :func:`occupancy` order."""
    return [k for k, n in o.limits.items() if n == o.ctas_per_sm]


def _limited_by(o: Occupancy) -> str:
    return " and ".join(_limiters(o)) or o.limiter


def link_occupancy(findings: list[Finding], fa: VariantFacts, fb: VariantFacts) -> None:
    """Replace the causes of ``resources.occupancy`` by the findings of the resource that limits it.

    The variant with fewer resident warps (both, when the warps are the same in CTAs of other sizes) is limited by
    :func:`_limiters`: ``registers`` links to ``resources.registers`` when that finding names this variant as the
    one with more registers, ``shared memory`` to ``resources.shared`` when this variant requests more; when
    ``num_warps`` differs (every limit is per CTA: registers × threads, warps per CTA) to ``options.changed`` (or
    ``config.changed``). A resource that differs but limits neither variant (more registers in the variant that
    shared memory limits) is not a cause. Nothing that fits leaves the causes empty (the root engine decides).
    """
    occ = next((f for f in findings if f.id == "resources.occupancy"), None)
    oa, ob = fa.occupancy, fb.occupancy
    if occ is None or oa is None or ob is None:
        return
    by_id = {f.id: f for f in findings}
    sides = [(fa, oa)] if occ.predicts == fa.name else [(fb, ob)] if occ.predicts == fb.name else [(fa, oa), (fb, ob)]
    other = {fa.name: fb, fb.name: fa}
    warps_differ = fa.options.get("num_warps") != fb.options.get("num_warps")
    causes: list[str] = []
    for f, o in sides:
        lims = _limiters(o)
        reg = by_id.get("resources.registers")
        if "registers" in lims and reg is not None and reg.predicts in (None, f.name):
            causes.append(reg.id)
        sh, so = f.resources.get("shared_bytes"), other[f.name].resources.get("shared_bytes")
        if "shared memory" in lims and "resources.shared" in by_id and (sh or 0) > (so or 0):
            causes.append("resources.shared")
    if warps_differ:
        causes += [c for c in ("options.changed", "config.changed") if c in by_id][:1]
    occ.causes = list(dict.fromkeys(causes))


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
                f"{o.ctas_per_sm} CTAs/SM ({o.warps_per_sm} warps), limited by {_limited_by(o)} [{lim}]",
            )
        )
    wa, wb = oa.warps_per_sm, ob.warps_per_sm
    lower = ctx.a if wa < wb else ctx.b if wb < wa else None
    la, lb = _limited_by(oa), _limited_by(ob)
    expl = (
        f"On {ctx.fa.target} one SM holds {oa.ctas_per_sm} CTA(s) of `{ctx.a}` ({wa} warps; limited by {la}) "
        f"and {ob.ctas_per_sm} of `{ctx.b}` ({wb} warps; limited by {lb}). "
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
            f"`{ctx.b}` (" + (f"limited by {la} in both" if la == lb else f"limited by {la} / {lb}") + ")",
            expl,
            ev,
            stage="resources",
            predicts=lower,
        )
    ]
