"""What the command line calls: pick GPU or interpreter, run, print the tables, store the record in the bundle.

``irdiff SUITE …`` (compare) calls :func:`run_after_compile` after compiling; ``irdiff run SUITE …`` calls
:func:`run_standalone`. Both print with the ``echo`` function they are given (``click.echo``) and return an exit
status: 0, or 1 when a variant produced a wrong result or failed to run (the timings are printed all the same).
"""

from __future__ import annotations

import datetime as _dt
import importlib.util
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irdiff.bundle import Bundle, load_bundle
from irdiff.run import NO_GPU_NOTICE
from irdiff.run.sweep import format_table, parse_shapes, shape_label
from irdiff.suite import load_suite

__all__ = ["RunOptions", "cuda_unavailable_reason", "format_interpret", "format_timing", "run_after_compile",
           "run_standalone"]  # fmt: skip

Echo = Callable[..., Any]


@dataclass
class RunOptions:
    """Runner options from the command line (``--shapes`` specs are expanded against ``shape``)."""

    suite: str
    variants: list[str]
    shape: dict[str, int] = field(default_factory=dict)
    shapes: list[str] = field(default_factory=list)
    config: Any = None
    autotune: bool = False
    graph: bool = False
    interpret: bool = False
    target: str | None = None
    seed: int = 0
    reps: int | None = None


def cuda_unavailable_reason() -> str | None:
    """None when a CUDA device is usable through torch, else the one-line notice to print."""
    from irdiff.compile import local_gpu_capability

    if local_gpu_capability() is None:
        return NO_GPU_NOTICE
    if importlib.util.find_spec("torch") is None:
        return "torch is not installed: compile and diff only (pip install torch to time the variants)"
    import torch

    if not torch.cuda.is_available():
        return NO_GPU_NOTICE
    return None


def _shapes(opts: RunOptions, default_cap: int | None = None) -> list[dict[str, int]]:
    suite = load_suite(opts.suite)
    base = {**suite.shape, **opts.shape}
    unknown = [k for k in opts.shape if suite.shape and k not in suite.shape]
    if unknown:
        raise ValueError(
            f"--shape: suite {suite.name!r} has no dimension {unknown[0]!r} (dimensions: {', '.join(suite.shape)})"
        )
    if default_cap is not None and not opts.shapes and not opts.shape:
        from irdiff.run.interpret import small_shape

        base = small_shape(base, default_cap)
    return parse_shapes(opts.shapes, base)


def _num(x: Any, fmt: str) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return format(x, fmt)


def _grid(rows: list[list[str]], left: int = 2) -> list[str]:
    """Aligned text columns; the first ``left`` columns left-aligned, the rest right-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for k, r in enumerate(rows):
        out.append(
            "  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
        )
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def format_timing(rec: Mapping[str, Any]) -> str:
    """The text printed after a GPU run: header, the TFLOP/s table, per-launch details, verdicts, findings."""
    dev = rec.get("device", {})
    ver = rec.get("versions", {})
    peak = dev.get("peak")
    lines = [
        f"timing on {dev.get('name')} ({dev.get('capability')}, {dev.get('sm_count')} SMs), Triton {ver.get('triton')},"
        f" torch {ver.get('torch')}, CUDA {ver.get('cuda')}",
        f"method: {rec.get('method')}",
    ]
    if peak:
        lines.append(
            f"peak ({peak['source']}): {peak['tflops']:g} TFLOP/s fp16 dense tensor core, {peak['gbps']:g} GB/s"
        )
    lines += ["", format_table(rec), ""]
    ref_name = rec.get("reference_name") or "reference"
    det = [["shape", "kernel", "median ms", "IQR ms", "n", "TFLOP/s", "GB/s", "% peak", "rel err", "correct"]]
    for r in rec.get("rows", []):
        label = shape_label(r["shape"])
        entries = [(n, r["variants"].get(n, {})) for n in rec.get("variants", [])]
        entries += [(f"{n}@tuned", e) for n, e in (r.get("tuned") or {}).items()]
        if r.get("reference"):
            entries.append((ref_name, r["reference"]))
        for name, e in entries:
            if e.get("error"):
                det.append([label, name, "error", "", "", "", "", "", "", e["error"][:60]])
                continue
            correct = e.get("correct")
            det.append(
                [
                    label,
                    name,
                    _num(e.get("median_ms"), ".4f"),
                    _num(e.get("iqr_ms"), ".4f"),
                    str(e.get("n", "—")),
                    _num(e.get("tflops"), ".1f"),
                    _num(e.get("gbps"), ".0f"),
                    _num(e.get("pct_peak"), ".1f"),
                    _num(e.get("rel_err"), ".2e"),
                    "—" if correct is None else ("yes" if correct else "NO"),
                ]
            )
    lines += _grid(det)
    if rec.get("autotune"):
        lines += ["", "autotune winners (triton.autotune, do_bench median):"]
        for r in rec["autotune"]["rows"]:
            for n, w in r["winners"].items():
                cfg = ", ".join(f"{k}={v}" for k, v in w["config"].items())
                lines.append(f"  {shape_label(r['shape'])}  {n}: {cfg}  ({_num(w.get('bench_ms'), '.4f')} ms)")
    vds = rec.get("verdicts", [])
    if vds:
        lines += ["", "verdicts (" + vds[0]["method"] + "):"]
        lines += [f"  {shape_label(v['shape'])}: {v['sentence']}" for v in vds]
    lines += _findings(rec.get("findings", []))
    return "\n".join(lines)


def _findings(findings: list[dict[str, Any]]) -> list[str]:
    if not findings:
        return ["", "correctness: every variant matches the reference and the other variants"]
    return ["", "findings:"] + [f"  ✗ {f['message']}" for f in findings]


def format_interpret(rec: Mapping[str, Any]) -> str:
    """The text printed after an interpreter run: one row per shape with each variant's error against the
    reference, then the findings."""
    names = list(rec.get("variants", []))
    ver = rec.get("versions", {})
    lines = [f"interpreter check (CPU, Triton {ver.get('triton')}, torch {ver.get('torch')}): {rec.get('method')}"]
    first = rec.get("rows", [{}])[0].get("variants", {}) if rec.get("rows") else {}
    for n in names:
        cfg = first.get(n, {}).get("config")
        if cfg:
            lines.append(f"config ({n}): " + ", ".join(f"{k}={v}" for k, v in cfg.items()))
    lines.append("")
    rows = [["shape"] + names + ["agreement"]]
    for r in rec.get("rows", []):
        cells = [shape_label(r["shape"])]
        for n in names:
            e = r["variants"].get(n, {})
            if e.get("error"):
                cells.append("error")
            elif e.get("correct") is None:
                cells.append("—")
            else:
                cells.append(("ok " if e["correct"] else "WRONG ") + _num(e.get("rel_err"), ".2e"))
        agr = r.get("agreement") or []
        cells.append("—" if not agr else ("ok" if all(a["ok"] for a in agr) else "DIFFER"))
        rows.append(cells)
    lines += _grid(rows, left=1)
    lines += _findings(rec.get("findings", []))
    return "\n".join(lines)


def _status(rec: Mapping[str, Any]) -> int:
    return 1 if rec.get("findings") else 0


def _execute(opts: RunOptions, echo: Echo, bundle: Bundle | None) -> tuple[int, str, dict[str, Any] | None]:
    """Run interpreter or GPU; returns (status, runs key, record) or (0, "", None) when nothing ran."""
    if opts.interpret:
        from irdiff.run.interpret import run_interpreted

        shapes = _shapes(opts, default_cap=64)
        rec = run_interpreted(opts.suite, opts.variants, shapes, opts.config, opts.target or "sm90", opts.seed)
        echo(format_interpret(rec))
        return _status(rec), "interpret", rec
    reason = cuda_unavailable_reason()
    if reason:
        echo(reason, err=True)
        return 0, "", None
    from irdiff.run.runner import RunRequest, local_target, run_timing
    from irdiff.run.timing import TimingOptions

    local = local_target()
    if bundle is not None and bundle.target and bundle.target != local:
        echo(f"note: timing runs on the local {local} GPU; the bundle was compiled for {bundle.target}", err=True)
    req = RunRequest(
        suite=opts.suite,
        variants=opts.variants,
        shapes=_shapes(opts),
        config=opts.config,
        timing=TimingOptions(graph=opts.graph, reps=opts.reps),
        seed=opts.seed,
        autotune=opts.autotune,
        target=local,
    )
    rec = run_timing(req, log=lambda m: echo(m, err=True))
    echo(format_timing(rec))
    return _status(rec), "timing", rec


def run_after_compile(bundle: Bundle, opts: RunOptions, echo: Echo) -> int:
    """The runner step of ``irdiff SUITE``: time (or interpret) the pair and store the record in the bundle."""
    status, key, rec = _execute(opts, echo, bundle)
    if rec is not None:
        bundle.runs[key] = rec
        bundle.save()
    return status


def run_standalone(opts: RunOptions, save: str | None, echo: Echo, command: list[str]) -> int:
    """``irdiff run``: run without compiling a bundle; with ``save``, store the record in that bundle directory
    (an existing bundle is extended, a missing directory gets a bundle holding only the run)."""
    bundle: Bundle | None = None
    if save:
        root = Path(save)
        if (root / "manifest.json").is_file():
            bundle = load_bundle(root)
        elif root.exists() and any(root.iterdir()):
            raise ValueError(f"{root} exists and is not an irdiff bundle; refusing to write into it")
        else:
            bundle = Bundle(
                suite=load_suite(opts.suite).name,
                target=opts.target or "",
                command=command,
                created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                pair=list(opts.variants[:2]),
                directory=str(root),
            )
    status, key, rec = _execute(opts, echo, bundle)
    if rec is not None and bundle is not None:
        bundle.target = bundle.target or str(rec.get("target", ""))
        bundle.runs[key] = rec
        bundle.save()
        echo(f"bundle: {bundle.directory}")
    return status
