"""What the command line calls: pick GPU or interpreter, run, print the tables, store the record in the bundle.

``irdiff SUITE …`` (compare) calls :func:`run_after_compile` after compiling; ``irdiff run SUITE …`` calls
:func:`run_standalone`. Both print with the ``echo`` function they are given (``click.echo``) and return an exit
status: 0; 1 when a variant produced a wrong result, the variants disagree, or a variant failed to run (a CUDA
fault included; the other variant's timing is printed all the same); 2 from ``irdiff run`` when nothing could be
timed (no GPU, no torch). Wrong results and failures are printed first, before any table.
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
    ncu: bool = False


def cuda_unavailable_reason() -> str | None:
    """None when a CUDA device is usable through torch, else the one-line notice to print."""
    from irdiff.compile import local_gpu_capability

    if importlib.util.find_spec("torch") is None:
        return "torch is not installed: compile and diff only (install the run extra: pip install 'irdiff[run]')"
    if local_gpu_capability() is None:
        return NO_GPU_NOTICE
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
    lines = headline(rec) + lines
    if peak:
        lines.append(
            f"peak ({peak['source']}): {peak['tflops']:g} TFLOP/s fp16 dense tensor core, {peak['gbps']:g} GB/s"
        )
    lines += ["", format_table(rec), ""]
    ref_name = rec.get("reference_name") or "reference"
    det = [["shape", "kernel", "median ms", "IQR ms", "block CI", "n", "TFLOP/s", "GB/s", "% peak", "SM MHz", "W",
            "err vs fp64", "correctness"]]  # fmt: skip
    for r in rec.get("rows", []):
        label = shape_label(r["shape"])
        entries = [(n, r["variants"].get(n, {})) for n in rec.get("variants", [])]
        entries += [(f"{n}@tuned", e) for n, e in (r.get("tuned") or {}).items()]
        if r.get("reference"):
            entries.append((ref_name, r["reference"]))
        for name, e in entries:
            if e.get("error"):
                det.append([label, name, "—", "", "", "", "", "", "", "", "", "", "failed (see findings)"])
                continue
            det.append(
                [
                    label,
                    name,
                    _num(e.get("median_ms"), ".4f"),
                    _num(e.get("iqr_ms"), ".4f"),
                    block_ci_cell(e),
                    str(e.get("n", "—")),
                    _num(e.get("tflops"), ".1f"),
                    _num(e.get("gbps"), ".0f"),
                    _num(e.get("pct_peak"), ".1f"),
                    _num(e.get("sm_mhz"), ".0f"),
                    _num(e.get("power_w"), ".0f"),
                    _num(e.get("rel_err"), ".2e"),
                    state_cell(e),
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
    lines += _findings(rec.get("findings", []), rec)
    return "\n".join(lines)


def block_ci_cell(e: Mapping[str, Any]) -> str:
    """The interval of the median from the block medians (``median_ci_ms``, :func:`irdiff.run.stats.median_interval`)
    as percent of the median, e.g. ``-0.4/+0.6%``; ``—`` without blocks.

    >>> block_ci_cell({"median_ms": 0.25, "median_ci_ms": [0.249, 0.2515]})
    '-0.4/+0.6%'
    """
    ci, med = e.get("median_ci_ms"), e.get("median_ms")
    if not isinstance(ci, (list, tuple)) or len(ci) != 2 or not isinstance(med, (int, float)) or med <= 0:
        return "—"
    lo, hi = (float(x) / med - 1.0 for x in ci)
    return f"{lo * 100:+.1f}/{hi * 100:+.1f}%"


SEVERITY_ORDER = {"critical": 0, "major": 1, "minor": 2, "info": 3}
FAILING_KINDS = ("correctness", "agreement", "error")


def _severity(f: Mapping[str, Any]) -> str:
    sev = f.get("severity")
    if isinstance(sev, str) and sev in SEVERITY_ORDER:
        return sev
    return "critical" if f.get("kind") in FAILING_KINDS else "info"


def _mark(f: Mapping[str, Any]) -> str:
    return {"critical": "✗", "major": "!", "minor": "·", "info": "·"}[_severity(f)]


def _findings(findings: list[dict[str, Any]], rec: Mapping[str, Any] | None = None) -> list[str]:
    """The findings, most severe first; with none, what was actually checked (no claim the run cannot make)."""
    if not findings:
        states = _states(rec or {})
        if states and states <= {"correct"}:
            return ["", "correctness: every variant matches the reference (and the other variants)"]
        if states and states <= {"correct", "agrees"}:
            return ["", "correctness: the variants agree with each other (no reference to check them against)"]
        return ["", "correctness: not checked (no reference and nothing to compare with)"]
    order = sorted(findings, key=lambda f: SEVERITY_ORDER[_severity(f)])
    out = ["", "findings:"]
    for f in order:
        lines = str(f.get("message", "")).splitlines() or [""]
        out.append(f"  {_mark(f)} {lines[0]}")
        out += [f"      {ln}" for ln in lines[1:]]
    return out


def _states(rec: Mapping[str, Any]) -> set[str]:
    return {
        str(e.get("state"))
        for r in rec.get("rows", [])
        for e in (r.get("variants") or {}).values()
        if isinstance(e, dict) and e.get("state")
    }


def headline(rec: Mapping[str, Any]) -> list[str]:
    """The lines printed before anything else when a variant is wrong or failed (critical findings)."""
    crit = [f for f in rec.get("findings", []) if _severity(f) == "critical"]
    if not crit:
        return []
    out = []
    for f in crit:
        first = str(f.get("message", "")).splitlines()[0] if f.get("message") else ""
        what = {"correctness": "WRONG RESULT", "agreement": "VARIANTS DISAGREE", "error": "FAILED"}.get(
            str(f.get("kind")), "CRITICAL"
        )
        out.append(f"✗ {what}: {first}")
    return out + [""]


def state_cell(e: Mapping[str, Any]) -> str:
    """``correct`` / ``WRONG`` / ``agrees`` / ``not checked`` (``failed`` when it did not run)."""
    if e.get("error"):
        return "failed"
    st = e.get("state")
    if st is None:  # records written before the four states
        c = e.get("correct")
        st = "not checked" if c is None else ("correct" if c else "wrong")
    return "WRONG" if st == "wrong" else str(st)


def format_interpret(rec: Mapping[str, Any]) -> str:
    """The text printed after an interpreter run: one row per shape with each variant's error against the
    reference, then the findings."""
    names = list(rec.get("variants", []))
    ver = rec.get("versions", {})
    lines = headline(rec) + [
        f"interpreter check (CPU, Triton {ver.get('triton')}, torch {ver.get('torch')}): {rec.get('method')}"
    ]
    first = rec.get("rows", [{}])[0].get("variants", {}) if rec.get("rows") else {}
    for n in names:
        cfg = first.get(n, {}).get("config")
        if cfg:
            lines.append(f"config ({n}): " + ", ".join(f"{k}={v}" for k, v in cfg.items()))
    lines.append("")
    rows = [["shape"] + [f"{n} (err vs fp64)" for n in names] + ["agreement"]]
    for r in rec.get("rows", []):
        cells = [shape_label(r["shape"])]
        for n in names:
            e = r["variants"].get(n, {})
            err = e.get("rel_err")
            cells.append(state_cell(e) + (f" {_num(err, '.2e')}" if isinstance(err, (int, float)) else ""))
        agr = r.get("agreement") or []
        if not agr:
            cells.append("—")
        elif any(a.get("comparable") is False for a in agr):
            cells.append("not comparable")
        else:
            cells.append("agree" if all(a["ok"] for a in agr) else "DIFFER")
        rows.append(cells)
    lines += _grid(rows, left=1)
    lines += _findings(rec.get("findings", []), rec)
    # what the interpreter did not check (a reduced shape, a precision it does not model), one line each
    lines += [str(n) for n in rec.get("notes", []) if isinstance(n, str)]
    return "\n".join(lines)


def _status(rec: Mapping[str, Any]) -> int:
    """1 when a variant is wrong, failed, or the variants disagree; else 0 (refused starts, accuracy gaps and
    not-comparable outputs are reported but are no failure)."""
    return 1 if any(f.get("kind") in FAILING_KINDS for f in rec.get("findings", [])) else 0


def _ttirs(bundle: Bundle | None) -> dict[str, str]:
    if bundle is None:
        return {}
    return {n: v.text("ttir") for n, v in bundle.variants.items() if not v.error and v.text("ttir")}


def _compiled_ttirs(opts: RunOptions, shapes: list[dict[str, int]]) -> dict[str, str]:
    """TTIR of each variant through the compile driver (cached), to find outputs the kernel reads (the
    interpreter compiles nothing). Empty when that compile fails: the variants' own run reports the error."""
    try:
        from irdiff.compile import CompileRequest, compile_bundle

        req = CompileRequest(suite=opts.suite, variants=list(opts.variants), target=opts.target or "sm90",
                             config=opts.config, shape=dict(shapes[0]) if shapes else {})  # fmt: skip
        return _ttirs(compile_bundle(req, None, command=[]))
    except Exception:  # noqa: BLE001 - detection is best effort here
        return {}


def _execute(opts: RunOptions, echo: Echo, bundle: Bundle | None) -> tuple[int, str, dict[str, Any] | None]:
    """Run interpreter or GPU; returns (status, runs key, record) or (0, "", None) when nothing ran."""
    if opts.interpret:
        from irdiff.run.interpret import SMALL, reduced_shape_note, run_interpreted, unmodelled_note

        shapes = _shapes(opts, default_cap=SMALL)
        ttirs = _ttirs(bundle) or _compiled_ttirs(opts, shapes)
        rec = run_interpreted(opts.suite, opts.variants, shapes, opts.config, opts.target or "sm90", opts.seed,
                              ttirs=ttirs)  # fmt: skip
        notes = [reduced_shape_note(_shapes(opts), shapes), unmodelled_note({v: ttirs[v] for v in opts.variants
                                                                             if v in ttirs})]  # fmt: skip
        rec["notes"] = [n for n in notes if n]
        echo(format_interpret(rec))
        return _status(rec), "interpret", rec
    reason = cuda_unavailable_reason()
    if reason:
        if bundle is None:
            echo(f"error: nothing was timed: {reason}; check correctness on the CPU with --interpret", err=True)
            return 2, "", None
        echo(f"{reason}; nothing was timed (--interpret checks correctness on the CPU)", err=True)
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


def _counters(opts: RunOptions, rec: Mapping[str, Any], echo: Echo) -> dict[str, Any] | None:
    """``--ncu``: one profiled launch per variant at the first shape timed (after a GPU run only)."""
    if not opts.ncu or not rec.get("rows") or "device" not in rec:
        return None
    from irdiff.run.ncu import format_profile, profile

    shape = rec["rows"][0]["shape"]
    echo(f"profiling {', '.join(opts.variants)} at {shape_label(shape)} with ncu", err=True)
    nc = profile(opts.suite, list(opts.variants), shape, str(rec.get("target") or "sm90"), opts.config, opts.seed)
    echo("")
    echo(format_profile(nc))
    return nc


def run_after_compile(bundle: Bundle, opts: RunOptions, echo: Echo) -> int:
    """The runner step of ``irdiff SUITE``: time (or interpret) the pair and store the record in the bundle; with
    ``--ncu``, the counters too, and the counter differences each static finding predicts."""
    status, key, rec = _execute(opts, echo, bundle)
    if rec is not None:
        bundle.runs[key] = rec
        nc = _counters(opts, rec, echo)
        if nc is not None:
            bundle.runs["ncu"] = nc
            _print_join(bundle, opts, echo)
        bundle.save()
    return status


def _print_join(bundle: Bundle, opts: RunOptions, echo: Echo) -> None:
    from irdiff.diagnose import diagnose

    a, b = opts.variants[:2]
    try:
        d = diagnose(bundle, a, b)
    except ValueError:
        return
    lines = [f"  {f.id}: {e.text}" for f in d.findings for e in f.evidence if e.stage == "ncu"]
    echo("")
    echo("counters joined to the static findings:" if lines else "no static finding predicts a counter difference")
    for ln in lines:
        echo(ln)


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
    nc = _counters(opts, rec, echo) if rec is not None else None
    if rec is not None and bundle is not None:
        bundle.target = bundle.target or str(rec.get("target", ""))
        bundle.runs[key] = rec
        if nc is not None:
            bundle.runs["ncu"] = nc
        bundle.save()
        echo(f"bundle: {bundle.directory}")
    return status
