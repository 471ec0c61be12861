"""SASS: subroutine calls (slow-path division) and instruction counts."""

from __future__ import annotations

from irdiff.diagnose.model import Evidence, Finding
from irdiff.diagnose.rules.common import Context, _c, _ev, _same_warps, _warps_note
from irdiff.diagnose.rules.registry import Emits, rule


@rule(
    Emits("sass.division-calls", causes=("ttir.divrem-64",)),
    Emits("sass.calls", causes=("precision.division", "precision.fp64")),
    reads=("counts", "sass_calls"),
)
def rule_sass_calls(ctx: Context) -> list[Finding]:
    """``sass.division-calls`` / ``sass.calls``: SASS calls into subroutines (code that returns with ``RET``, such as
    ptxas' 64-bit division routine) differ. ``CALL`` instructions ptxas uses as branches (a predicated
    ``CALL.REL.NOINC`` out of a loop to code that ends in ``EXIT``) are control flow and not counted."""
    na, nb = len(ctx.fa.sass_calls), len(ctx.fb.sass_calls)
    if na == nb:
        return []
    more = ctx.a if na > nb else ctx.b
    f = ctx.facts(more)
    ev = [_ev(more, r, f"{r.text}   ({len(f.sass_calls)} subroutine call(s))") for r in f.sass_calls[:2]]
    for v, fx in ((ctx.a, ctx.fa), (ctx.b, ctx.fb)):
        ev.append(Evidence(v, "sass", None, f"{fx.counts.get('sass', {}).get('instructions', 0)} SASS instructions"))
    divs = sum(_c(f, "ptx", k) for k in ("div.s64", "rem.s64", "div.u64", "rem.u64"))
    # IEEE-rounded fp32/fp64 division, reciprocal and square root: ptxas inlines the fast path and calls a subroutine
    # for the slow path (denormal/huge operands); the approximate forms (`div.full`, `.approx`) have none
    other = ctx.fb if more == ctx.a else ctx.fa
    slow = {
        k: _c(f, "ptx", k) - _c(other, "ptx", k)
        for k in sorted(f.counts.get("ptx", {}))
        if k.split(".")[0] in ("div", "rcp", "sqrt") and ".rn" in k and k.endswith(("f32", "f64"))
    }
    slow = {k: n for k, n in slow.items() if n > 0}
    expl = (
        f"SASS subroutine calls (`CALL` to code that returns with `RET`): {na} in `{ctx.a}` vs {nb} in `{ctx.b}`. "
        + (
            f"They call ptxas' 64-bit integer division routine ({divs} `div.s64`/`rem.s64` in PTX): each call is a "
            "subroutine of tens of instructions with a return jump, on the path of every index computation."
            if divs
            else (
                f"`{more}` has more IEEE-rounded operations in PTX ("
                + ", ".join(f"`{k}` +{n}" for k, n in slow.items())
                + "): ptxas inlines their fast path and calls a subroutine for the slow path (subnormal or very large "
                "operands), so each adds a `CALL` and a branch but the subroutine runs only for those operands."
            )
            if slow
            else "ptxas emits such subroutines for operations without a single hardware instruction (e.g. some "
            "divisions and math functions); the SASS listing does not name the routine."
        )
    )
    return [
        Finding(
            "sass.division-calls" if divs else "sass.calls",
            "major" if divs else "info",
            f"`{more}` calls a software routine in SASS ({max(na, nb)} `CALL`)",
            expl,
            ev,
            stage="sass",
            predicts=more,
        )
    ]


@rule(
    Emits(
        "sass.instructions",
        causes=(
            "mma.lowering",
            "precision.fp64",
            "precision.dot-input",
            "precision.dot-accumulate",
            "precision.dot-upcast",
            "ptx.memory-ops",
            "sass.division-calls",
            "ttir.i64-index-math",
            "atomic.ordering",
            "atomic.cas-loop",
            "atomic.ops",
            "loop.unrolled",
            "precision.math",
            "precision.division",
        ),
        direction={
            "ttir.i64-index-math": +1,
            "sass.division-calls": +1,
            "mma.lowering": +1,
            "precision.fp64": +1,
            "precision.dot-input": +1,
            "precision.dot-accumulate": +1,
            "precision.dot-upcast": +1,
            "atomic.ordering": +1,
            "atomic.cas-loop": +1,
            "atomic.ops": +1,
        },
    ),
    reads=("options", "counts", "first_lines"),
)
def rule_sass_instructions(ctx: Context) -> list[Finding]:
    """``sass.instructions``: SASS instruction count differs by more than 10 %, with the memory ops that differ."""
    ca, cb = ctx.fa.counts.get("sass", {}), ctx.fb.counts.get("sass", {})
    na, nb = ca.get("instructions", 0), cb.get("instructions", 0)
    if not na or not nb or abs(na - nb) <= 0.1 * max(na, nb):
        return []
    keys = [
        k
        for k in sorted({*ca, *cb})
        if k.split(".")[0] in ("LDG", "STG", "LDGSTS", "LDS", "STS", "LDSM", "HMMA", "HGMMA", "UTMALDG")
        and ca.get(k, 0) != cb.get(k, 0)
        and k != "LDGSTS"
    ]
    ev = [Evidence(ctx.a, "sass", None, f"{na} instructions"), Evidence(ctx.b, "sass", None, f"{nb} instructions")]
    for k in keys[:6]:
        for v, f, c in ((ctx.a, ctx.fa, ca), (ctx.b, ctx.fb, cb)):
            r = f.first_lines.get("sass", {}).get(k)
            if r and c.get(k, 0):
                ev.append(_ev(v, r, f"{r.text}   ({c[k]}× {k})"))
    expl = (
        f"SASS has {na} instructions in `{ctx.a}` and {nb} in `{ctx.b}` ({na / nb:.2f}×)."
        + (
            " Memory/matrix ops that differ: "
            + "; ".join(f"`{k}` {ca.get(k, 0)} vs {cb.get(k, 0)}" for k in keys[:8])
            + "."
            if keys
            else ""
        )
        + _warps_note(ctx)
    )
    return [
        Finding(
            "sass.instructions",
            "minor" if _same_warps(ctx) else "info",
            f"SASS instruction count {na} in `{ctx.a}` vs {nb} in `{ctx.b}` ({na / nb:.2f}×)",
            expl,
            ev,
            stage="sass",
            predicts=(ctx.a if na > nb else ctx.b) if _same_warps(ctx) else None,
            instructions=abs(na - nb),
        )
    ]
