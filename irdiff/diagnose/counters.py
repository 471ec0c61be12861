"""Hardware counters (``bundle.runs["ncu"]``, written by :mod:`irdiff.run.ncu`) joined to the static findings.

For each finding that predicts one variant slower, :data:`EXPECTED` names the counters it predicts to move
(``pipeline.load-not-pipelined`` → more long-scoreboard stalls; narrower or more memory instructions → more global
load requests and instructions; lower occupancy → fewer active warps; MMA differences → math-pipe stalls, SM
throughput). A difference of at least :data:`MIN_CHANGE` in the predicted direction *confirms* the finding and is
quoted with both values ("counters confirm: stall long scoreboard share 58% of stall cycles in `annotated` vs 9%
in `unannotated`"); otherwise the predicted effect is flagged as *not shown by the counters*. Either way the line is
appended to the finding's evidence (stage ``ncu``). Reads only the record: no GPU, no ncu.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from irdiff.diagnose.model import Evidence, Finding

__all__ = ["EXPECTED", "MIN_CHANGE", "join"]

# finding id (exact, or a prefix ending in ".") → derived metrics predicted higher in the variant the finding predicts
# slower ("-name": predicted lower)
EXPECTED: dict[str, list[str]] = {
    "pipeline.load-not-pipelined": ["stall_long_scoreboard"],
    "pipeline.async-copies": ["stall_long_scoreboard"],
    "coalesce.": ["global_load_requests", "load_sectors_per_request"],
    "ptx.memory-ops": ["global_load_requests", "instructions"],
    "lower.": ["global_load_requests", "instructions"],
    "index.": ["instructions"],
    "resources.occupancy": ["-achieved_occupancy"],
    "resources.registers": ["-achieved_occupancy"],
    "resources.spills": ["instructions"],
    "resources.shared": ["-achieved_occupancy"],
    "mma.": ["stall_math_pipe"],
    "ptx.mma": ["-sm_throughput"],
    "sass.": ["instructions"],
    "precision.fp64": ["instructions"],
    "atomic.": ["instructions"],
    "layout.convert-shared": ["instructions"],
    "pipeline.wait-depth": ["stall_long_scoreboard"],
}
MIN_CHANGE = 0.10
"""Relative difference (10 %) the counters must show, in the predicted direction, to confirm a finding."""


def _fmt(name: str, v: float, units: Mapping[str, Any]) -> str:
    unit = str((units.get(name) or ["", ""])[1])
    if name.endswith("_share"):
        return f"{v:.0f}% of stall cycles"
    if name.endswith("_per_request"):
        return f"{v:.1f} sectors/request"
    if unit.startswith("%"):
        return f"{v:.1f}%"
    return f"{v:.3g} {unit}".strip()


def join(findings: list[Finding], ncu: Mapping[str, Any], a: str, b: str) -> list[dict[str, Any]]:
    """For each static finding that predicts ``a`` or ``b`` slower, the counter differences it predicts.

    :returns: ``[{"finding", "metric", "predicted", "values": {a, b}, "shown": bool, "text"}]``; also appended to
        each finding's evidence (stage ``ncu``) by :func:`irdiff.diagnose.diagnose`.
    """
    units = ncu.get("metrics") or {}
    va = ((ncu.get("variants") or {}).get(a) or {}).get("metrics") or {}
    vb = ((ncu.get("variants") or {}).get(b) or {}).get("metrics") or {}
    if not va or not vb:
        return []
    out = []
    for f in findings:
        if f.predicts not in (a, b) or f.id.startswith("time."):
            continue
        keys = next((v for k, v in EXPECTED.items() if f.id == k or (k.endswith(".") and f.id.startswith(k))), None)
        if not keys:
            continue
        slow = f.predicts
        fast = b if slow == a else a
        ms, mf = (va, vb) if slow == a else (vb, va)
        for key in keys:
            lower = key.startswith("-")
            base = key.lstrip("-")
            metric = base + "_share" if base.startswith("stall_") and base + "_share" in ms else base
            x, y = ms.get(metric), mf.get(metric)
            if x is None or y is None:
                continue
            ref = max(abs(x), abs(y), 1e-12)
            change = (y - x) / ref if lower else (x - y) / ref
            shown = change >= MIN_CHANGE
            what = f"{metric.replace('_', ' ')} {_fmt(metric, x, units)} in `{slow}` vs {_fmt(metric, y, units)} in `{fast}`"
            text = (
                f"counters confirm: {what}"
                if shown
                else f"predicted {'lower' if lower else 'higher'} {base.replace('_', ' ')} in `{slow}` not shown by "
                f"the counters: {what}"
            )
            out.append({"finding": f.id, "metric": metric, "predicted": "lower" if lower else "higher",
                        "values": {slow: x, fast: y}, "shown": shown, "text": text})  # fmt: skip
            f.evidence.append(Evidence(slow, "ncu", None, text))
    return out
