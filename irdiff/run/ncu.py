"""``--ncu``: hardware counters of one launch per variant (Nsight Compute), joined to the static findings.

Each variant is launched once by a small driver (``python -m irdiff.run.ncu REQUEST.json``: the runner's own inputs
and launch, :mod:`irdiff.run.inputs`, :mod:`irdiff.run.launch`) under
``ncu --clock-control none --kernel-name regex:^NAME$ --launch-count 1 --csv --page raw`` with the fixed metric set
:data:`METRICS` (SM and DRAM throughput, achieved occupancy, warp stall reasons, L1/L2 hit rates, global load/store
sectors and requests, shared-memory bank conflicts, instructions executed). ``--clock-control none`` leaves the
GPU's clocks as they are (ncu would otherwise lock them to base).

The record (``bundle.runs["ncu"]``) is joined to the static findings by :mod:`irdiff.diagnose.counters`.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["METRICS", "format_profile", "ncu_path", "parse_raw_csv", "profile"]

# name in the record → (ncu metric, unit shown)
METRICS: dict[str, tuple[str, str]] = {
    "sm_throughput": ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "% of peak"),
    "dram_throughput": ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "% of peak"),
    "achieved_occupancy": ("sm__warps_active.avg.pct_of_peak_sustained_active", "% of warps"),
    "stall_long_scoreboard": ("smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio", "cycles/inst"),
    "stall_barrier": ("smsp__average_warp_latency_issue_stalled_barrier.ratio", "cycles/inst"),
    "stall_mio_throttle": ("smsp__average_warp_latency_issue_stalled_mio_throttle.ratio", "cycles/inst"),
    "stall_math_pipe": ("smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio", "cycles/inst"),
    "stall_wait": ("smsp__average_warp_latency_issue_stalled_wait.ratio", "cycles/inst"),
    "l1_hit_rate": ("l1tex__t_sector_hit_rate.pct", "%"),
    "l2_hit_rate": ("lts__t_sector_hit_rate.pct", "%"),
    "global_load_sectors": ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sectors"),
    "global_load_requests": ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "requests"),
    "global_store_sectors": ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "sectors"),
    "global_store_requests": ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "requests"),
    "shared_load_bank_conflicts": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "conflicts"),
    "shared_store_bank_conflicts": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "conflicts"),
    "instructions": ("smsp__inst_executed.sum", "warp instructions"),
    "duration_ns": ("gpu__time_duration.sum", "ns"),
}


def ncu_path() -> str | None:
    """The ``ncu`` executable (``PATH``, then ``/usr/local/cuda/bin``), or None."""
    found = shutil.which("ncu")
    if found:
        return found
    for p in ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu"):
        if os.path.isfile(p):
            return p
    return None


def parse_raw_csv(text: str) -> dict[str, float]:
    """``{metric name: value}`` of the first profiled kernel in ``ncu --csv --page raw`` output."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    if len(lines) < 2:
        return {}
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header, data = rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]
    # row 1 may be units
    values = next((r for r in data if r and r[0].strip().isdigit()), None)
    if values is None:
        return {}
    out: dict[str, float] = {}
    for k, v in zip(header, values):
        try:
            out[k] = float(v.replace(",", ""))
        except ValueError:
            continue
    return out


def _derived(raw: Mapping[str, float]) -> dict[str, float]:
    out = {name: raw[m] for name, (m, _) in METRICS.items() if m in raw}
    ld_s, ld_r = out.get("global_load_sectors"), out.get("global_load_requests")
    if ld_s is not None and ld_r:
        out["load_sectors_per_request"] = ld_s / ld_r
    st_s, st_r = out.get("global_store_sectors"), out.get("global_store_requests")
    if st_s is not None and st_r:
        out["store_sectors_per_request"] = st_s / st_r
    stalls = {k: v for k, v in out.items() if k.startswith("stall_")}
    total = sum(stalls.values())
    if total > 0:
        for k, v in stalls.items():
            out[f"{k}_share"] = 100.0 * v / total
    return out


def profile(
    suite: str,
    variants: list[str],
    shape: Mapping[str, int],
    target: str,
    selector: Any = None,
    seed: int = 0,
    timeout_s: float = 300,
) -> dict[str, Any]:
    """Profile one launch of each variant under ncu.

    :returns: ``{"tool", "command", "shape", "variants": {name: {"metrics": {...}} | {"error": str}}}``.
    :raises RuntimeError: ncu is not installed.
    """
    from irdiff.run.isolate import _child_env, suite_ref_for_child
    from irdiff.run.launch import unwrap_autotuner
    from irdiff.suite import load_suite

    exe = ncu_path()
    if exe is None:
        raise RuntimeError("--ncu: Nsight Compute (ncu) is not installed on this machine")
    s = load_suite(suite)
    env = _child_env(False)
    metrics = ",".join(m for m, _ in METRICS.values())
    out: dict[str, Any] = {"tool": exe, "shape": dict(shape), "variants": {}, "metrics": dict(METRICS)}
    with tempfile.TemporaryDirectory(prefix="irdiff-ncu-") as d:
        for name in variants:
            k = unwrap_autotuner(s.variant(name).kernel)
            fn = getattr(k, "fn", k)
            kname = getattr(fn, "__name__", name)
            req = Path(d) / f"{name}.json"
            req.write_text(json.dumps({"suite": suite_ref_for_child(suite), "variant": name, "shape": dict(shape),
                                       "target": target, "selector": selector, "seed": seed}, default=str))  # fmt: skip
            cmd = [exe, "--clock-control", "none", "--kernel-name", f"regex:^{kname}$", "--launch-count", "1",
                   "--metrics", metrics, "--csv", "--page", "raw", sys.executable, "-m", "irdiff.run.ncu", str(req)]  # fmt: skip
            out["command"] = " ".join(cmd[:-4] + ["python", "-m", "irdiff.run.ncu", "REQUEST.json"])
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout_s, check=False)
                missing = re.findall(r"Failed to find metric (\S+)", p.stdout + p.stderr)
                if missing:  # this ncu/GPU lacks a metric: profile without it, say which
                    keep = [m for m in metrics.split(",") if m not in {x.strip("'\".") for x in missing}]
                    cmd[cmd.index("--metrics") + 1] = ",".join(keep)
                    out.setdefault("missing_metrics", []).extend(missing)
                    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout_s, check=False)
            except subprocess.TimeoutExpired:
                out["variants"][name] = {"error": f"ncu did not finish within {timeout_s:.0f} s"}
                continue
            raw = parse_raw_csv(p.stdout)
            if not raw:
                tail = [ln for ln in (p.stderr + p.stdout).splitlines() if ln.strip()][-8:]
                out["variants"][name] = {"error": f"ncu gave no counters (exit {p.returncode}): " + " | ".join(tail)}
                continue
            out["variants"][name] = {"kernel": kname, "metrics": _derived(raw)}
    return out


def format_profile(rec: Mapping[str, Any]) -> str:
    """The counters of each variant as a table (one row per metric)."""
    names = list((rec.get("variants") or {}).keys())
    lines = [f"hardware counters (ncu --clock-control none, one launch each, {rec.get('tool')}):"]
    for n in names:
        e = rec["variants"][n]
        if e.get("error"):
            lines.append(f"  {n}: {e['error']}")
    keys: list[str] = []
    for n in names:
        for k in rec["variants"][n].get("metrics") or {}:
            if k not in keys:
                keys.append(k)
    if keys:
        w = max(len(k) for k in keys)
        lines.append("  " + "metric".ljust(w) + "".join(f"  {n:>16}" for n in names))
        for k in keys:
            cells = [rec["variants"][n].get("metrics", {}).get(k) for n in names]
            lines.append("  " + k.ljust(w) + "".join(f"  {'—' if c is None else f'{c:.4g}':>16}" for c in cells))
    return "\n".join(lines)


def _driver(req: dict[str, Any]) -> int:
    """Runs under ncu: build the runner's inputs and launch the variant once."""
    import torch

    from irdiff.run.inputs import build_inputs, poison_outputs
    from irdiff.run.launch import make_launch
    from irdiff.run.runner import set_allocator
    from irdiff.suite import example_args, load_suite

    set_allocator("cuda")
    s = load_suite(req["suite"])
    inputs = build_inputs(example_args(s, req["variant"], req["shape"]), device="cuda", seed=int(req.get("seed", 0)))
    launch = make_launch(s, req["variant"], inputs, req["shape"], req["target"], selector=req.get("selector"))
    poison_outputs(inputs)
    launch()
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(_driver(json.loads(Path(sys.argv[1]).read_text())))
