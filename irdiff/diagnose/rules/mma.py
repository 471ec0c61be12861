"""MMA layouts in TTGIR (``#ttg.nvidia_mma`` version and instruction shape)."""

from __future__ import annotations

from typing import Any

from irdiff.diagnose.model import Evidence, Finding
from irdiff.diagnose.rules.common import Context
from irdiff.diagnose.rules.registry import Emits, rule


@rule(
    Emits("layout.mma", causes=("options.changed", "spec.constexpr-changed", "spec.type-changed")),
    reads=("mma",),
)
def rule_mma(ctx: Context) -> list[Finding]:
    """``layout.mma``: the MMA layout (version, instruction shape) differs."""
    ma = [(m["version"], m["instrShape"], m["warpsPerCTA"]) for m in ctx.fa.mma]
    mb = [(m["version"], m["instrShape"], m["warpsPerCTA"]) for m in ctx.fb.mma]
    if ma == mb:
        return []

    def desc(ms: list[tuple[Any, Any, Any]]) -> str:
        return "; ".join(f"v{v} instrShape {i} warpsPerCTA {w}" for v, i, w in ms) or "none"

    ev = [
        Evidence(v, m["ref"]["stage"], m["ref"]["line"], m["ref"]["text"])
        for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb))
        for m in f.mma
    ]
    expl = (
        f"MMA layouts: {desc(ma)} in `{ctx.a}` vs {desc(mb)} in `{ctx.b}` (versionMajor 2 = `mma.sync`, "
        "3 = Hopper `wgmma`, 5 = Blackwell `tcgen05`; instrShape is the per-instruction tile, warpsPerCTA how the "
        "warps split the output tile)."
    )
    return [Finding("layout.mma", "minor", f"MMA layout: {desc(ma)} vs {desc(mb)}", expl, ev, stage="ttgir")]
