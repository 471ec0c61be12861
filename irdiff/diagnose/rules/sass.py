"""SASS: subroutine calls (slow-path division) and instruction counts."""

from __future__ import annotations

from irdiff.diagnose.counts import SASS_FAMILIES
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


_SHOWN = ("LDG", "STG", "LDGSTS", "LDS", "STS", "LDSM", "HMMA", "HGMMA", "UTMALDG")


def _count_rows(ca: dict[str, int], cb: dict[str, int]) -> list[tuple[str, str, int, int]]:
    """The memory/matrix op kinds whose SASS counts differ, as ``(key, label, count in a, count in b)``, each instruction
    counted once: a family key (:data:`~irdiff.diagnose.counts.SASS_FAMILIES`) whose members have keys of their own
    is replaced by its members, plus the family's remaining instructions (counted under no member) when those differ
    (``HMMA`` 0 vs 32 with ``HMMA.TF32`` 0 vs 32 lists ``HMMA.TF32`` only; 40 vs 32 with 0 vs 32 also lists the
    rest as ``HMMA (other)`` 40 vs 0). The label is the key, with `` (other)`` for such a remainder."""
    every = {*ca, *cb}
    rows = []
    for k in sorted(every):
        if k.split(".")[0] not in _SHOWN:
            continue
        x, y = ca.get(k, 0), cb.get(k, 0)
        members = [m for m in every if m.startswith(k + ".")] if k in SASS_FAMILIES else []
        x -= sum(ca.get(m, 0) for m in members)
        y -= sum(cb.get(m, 0) for m in members)
        if x != y:
            rows.append((k, f"{k} (other)" if members else k, x, y))
    return rows


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
            "atomic.result-used",
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
            "atomic.result-used": +1,
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
    rows = _count_rows(ca, cb)
    ev = [Evidence(ctx.a, "sass", None, f"{na} instructions"), Evidence(ctx.b, "sass", None, f"{nb} instructions")]
    for k, label, x, y in rows[:6]:
        for v, f, n in ((ctx.a, ctx.fa, x), (ctx.b, ctx.fb, y)):
            r = f.first_lines.get("sass", {}).get(k)
            if r and n and label == k:  # a family's first line may be a member's: quoted for whole kinds only
                ev.append(_ev(v, r, f"{r.text}   ({n}× {k})"))
    expl = (
        f"SASS has {na} instructions in `{ctx.a}` and {nb} in `{ctx.b}` ({na / nb:.2f}×)."
        + (
            " Memory/matrix ops that differ: " + "; ".join(f"`{label}` {x} vs {y}" for _, label, x, y in rows[:8]) + "."
            if rows
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
