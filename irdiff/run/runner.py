"""The runner: correctness and timing of two (or more) variants over a list of shapes, as plain data.

:func:`check_shape` builds the inputs, launches each variant once on NaN-poisoned outputs and compares the results
with the suite's reference and with each other; it runs on ``cuda`` and, under Triton's interpreter, on ``cpu``.
:func:`run_timing` adds the timing (:mod:`irdiff.run.timing`), the library baseline, the verdicts and, with
``autotune``, the autotuner's winners; it returns the record stored as ``bundle.runs["timing"]``::

    {"method": str, "device": {"name", "capability", "sm_count", "l2_bytes", ..., "peak": {...}},
     "suite": str, "variants": [A, B], "reference_name": "torch_matmul", "target": "sm90",
     "versions": {"triton", "torch", "cuda"}, "settings": {...},
     "rows": [{"shape": {"M": 4096, ...},
               "variants": {name: {"median_ms", "iqr_ms", "n", "tflops", "gbps", "pct_peak", "pct_basis",
                                   "correct", "rel_err", "checks": [...], "resources": {...}, "config": {...}}},
               "reference": {... same timing keys, "name", "correct", "rel_err"} | None,
               "agreement": [{"a", "b", "ok", "rel_err"}],
               "tuned": {name: {... timing keys, "config", "bench_ms"}}   (only with autotune)}],
     "verdicts": [{"a", "b", "shape", "ratio", "ci", "verdict", "method", "sentence", ...}],
     "findings": [{"kind": "correctness" | "agreement" | "error", "variant", "shape", "message", ...}]}
"""

from __future__ import annotations

import functools
import gc
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from irdiff.run import correctness as corr
from irdiff.run.access import outputs_read
from irdiff.run.inputs import Inputs, build_inputs, clone_outputs, poison_outputs
from irdiff.run.isolate import check_isolated
from irdiff.run.launch import Launch, make_launch
from irdiff.run.peaks import lookup_peak, pct_of_peak
from irdiff.run.stats import median_interval, summarize, verdict
from irdiff.run.sweep import shape_label
from irdiff.run.timing import TimingOptions, device_info, measure
from irdiff.suite import Suite, example_args, load_suite

__all__ = ["RunRequest", "ShapeCheck", "VariantCheck", "check_shape", "check_variant", "run_timing"]

REFERENCE_KEY = "__reference__"


@dataclass
class RunRequest:
    """What to run.

    :param suite: suite reference (``matmul`` or ``path.py::name``).
    :param variants: variant names; the first two form the main pair (verdict ``variants[0]`` vs ``variants[1]``).
    :param shapes: full shapes to run (see :func:`irdiff.run.sweep.parse_shapes`).
    :param config: ``--config`` selector (None = the suite's default config, an index, or a dict).
    :param target: target name for values derived per target (``NUM_SMS``); default: the local GPU's.
    :param baseline: also time the suite's ``baseline`` (e.g. ``torch.matmul``) when it has one.
    """

    suite: str
    variants: list[str]
    shapes: list[dict[str, int]]
    config: Any = None
    timing: TimingOptions = field(default_factory=TimingOptions)
    seed: int = 0
    autotune: bool = False
    baseline: bool = True
    target: str | None = None
    isolate: bool = True


@dataclass
class VariantCheck:
    """One variant launched once at one shape: its record entry, findings, outputs and the launch kept for timing.

    ``entry``: ``{"state", "correct", "rel_err", "checks", "config", "resources", "reference_dtype"}`` or, when it
    could not run, ``{"error", "state": "not checked", "correct": None}``.
    """

    name: str
    entry: dict[str, Any]
    findings: list[dict[str, Any]]
    outputs: dict[str, Any] = field(default_factory=dict)
    dtypes: dict[str, str] = field(default_factory=dict)
    launch: Launch | None = None
    inputs: Inputs | None = None


@dataclass
class ShapeCheck:
    """Correctness of every variant at one shape, and the launches/inputs kept for timing."""

    shape: dict[str, int]
    variants: dict[str, dict[str, Any]]
    agreement: list[dict[str, Any]]
    findings: list[dict[str, Any]]
    launches: dict[str, Launch]
    inputs: dict[str, Inputs]


def _dtypes(inputs: Inputs) -> dict[str, str]:
    return {n: inputs.specs[n].dtype for n in inputs.outputs}


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def error_text(e: BaseException) -> str:
    """``Type: message`` with every line of the message (compiler errors put the cause last)."""
    text = str(e).strip()
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def set_allocator(device: str) -> None:
    """Give Triton an allocator for kernels that need global scratch memory (TMA descriptors made on the device,
    ``tl.make_tensor_descriptor``): ``triton.set_allocator`` with torch allocations on ``device``."""
    import torch
    import triton

    fn = getattr(triton, "set_allocator", None)
    if fn is None:
        return

    def alloc(size: int, alignment: int, stream: Any) -> Any:
        return torch.empty(size, dtype=torch.int8, device=device)

    fn(alloc)


def kernel_ttir(launch: Launch) -> str | None:
    """The TTIR of the binary ``launch`` would run, compiled (not launched) through the JIT's ``run(warmup=True)``;
    None under the interpreter or when the JIT cannot compile it here."""
    run = getattr(launch.kernel, "run", None)
    if run is None or type(launch.kernel).__name__ == "InterpretedFunction":
        return None
    try:
        k = run(*(), grid=launch.grid, warmup=True, **launch.inputs.args, **launch.meta)
    except Exception:  # noqa: BLE001 - the launch itself reports compile errors
        return None
    asm = getattr(k, "asm", None) or {}
    text = asm.get("ttir") if isinstance(asm, Mapping) else None
    return text if isinstance(text, str) else None


def _upcast(args: Mapping[str, Any]) -> dict[str, Any]:
    """Floating tensors as float64, so a reference written with ``.double()`` or dtype-preserving ops is fp64."""
    import torch

    out: dict[str, Any] = {}
    for k, v in args.items():
        out[k] = v.to(torch.float64) if isinstance(v, torch.Tensor) and v.is_floating_point() else v
    return out


def check_variant(
    suite: Suite,
    name: str,
    shape: Mapping[str, int],
    device: str,
    target: str,
    selector: Any = None,
    seed: int = 0,
    meta: Mapping[str, Any] | None = None,
    ttir: str | None = None,
) -> VariantCheck:
    """Launch ``name`` once at ``shape`` on its starting outputs and check it against the suite's reference.

    Outputs the kernel also reads (``irdiff.run.access``, from ``ttir`` or the JIT's own compile) must not start as
    NaN: such a variant is not launched for correctness (state ``not checked``, a finding says which output and
    how to fix the suite) but is still returned with its launch, for timing.
    """
    shape = dict(shape)
    label = shape_label(shape)
    findings: list[dict[str, Any]] = []
    try:
        inputs = build_inputs(example_args(suite, name, shape), device=device, seed=seed)
        launch = make_launch(suite, name, inputs, shape, target, selector=selector, meta=meta)
    except Exception as e:  # noqa: BLE001 - a variant that cannot run is a finding, not a crash
        return _failed(name, shape, error_text(e))
    text = ttir if ttir is not None else (kernel_ttir(launch) if device.startswith("cuda") else None)
    reads = outputs_read(text, inputs.outputs) if text else {}
    refused = {o: ops for o, ops in reads.items() if inputs.specs[o].start == "nan"}
    entry: dict[str, Any] = {"config": launch.config, "reads_outputs": reads}
    if refused:
        msgs = [
            f"{o} is read by the kernel ({', '.join(ops)}) and would start as NaN: give it a starting value in the "
            f"suite (Tensor(..., output=True, init='zeros'), a number or a function)"
            for o, ops in refused.items()
        ]
        entry.update({"state": corr.NOT_CHECKED, "correct": None, "rel_err": None, "checks": [], "refused": msgs})
        findings.append(
            {
                "kind": "init",
                "severity": "major",
                "variant": name,
                "shape": shape,
                "message": f"{name} at {label}: correctness not checked: " + "; ".join(msgs),
            }  # fmt: skip
        )
        return VariantCheck(name, entry, findings, launch=launch, inputs=inputs, dtypes=_dtypes(inputs))
    try:
        poison_outputs(inputs)
        initial = inputs.reference_args()
        launch()
        _sync(device)
    except Exception as e:  # noqa: BLE001 - a variant that cannot run is a finding, not a crash
        return _failed(name, shape, error_text(e))
    outs = clone_outputs(inputs)
    entry["resources"] = launch.resources()
    entry.update(_against_reference(suite, name, initial, inputs, outs, shape, findings))
    return VariantCheck(name, entry, findings, outs, _dtypes(inputs), launch, inputs)


def _failed(name: str, shape: dict[str, int], msg: str) -> VariantCheck:
    entry = {"error": msg, "state": corr.NOT_CHECKED, "correct": None, "rel_err": None}
    finding = {"kind": "error", "severity": "critical", "variant": name, "shape": shape,
               "message": f"{name} failed at {shape_label(shape)}: {msg}"}  # fmt: skip
    return VariantCheck(name, entry, [finding])


def agreement(
    suite: Suite, shape: Mapping[str, int], checks: Mapping[str, VariantCheck], order: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Compare the first variant that ran with every other one; settle the states of variants without a
    reference check (``agrees`` / ``not checked``); add the ≥10× accuracy finding.

    :returns: ``(agreement rows, findings)``; mutates the entries' ``state``.
    """
    label = shape_label(shape)
    findings: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    ran = [n for n in order if n in checks and checks[n].outputs]
    if ran:
        first = ran[0]
        for other in ran[1:]:
            cs = corr.compare_outputs(
                checks[first].outputs, checks[other].outputs, checks[first].dtypes, other, suite.compare, shape
            )
            ok, err = corr.worst(cs)
            comparable = any(c.comparable for c in cs)
            notes = [c.note for c in cs if c.note]
            rows.append({"a": first, "b": other, "ok": ok if comparable else None, "rel_err": err,
                         "comparable": comparable, "notes": notes})  # fmt: skip
            if not comparable:
                findings.append({"kind": "not-comparable", "severity": "info", "variant": first, "against": other,
                                 "shape": dict(shape), "message": "; ".join(c.message(first) for c in cs)
                                 + f" at {label}"})  # fmt: skip
            elif not ok:
                sev = "critical" if suite.reference is None else "major"
                findings.append(
                    {
                        "kind": "agreement",
                        "severity": sev,
                        "variant": first,
                        "against": other,
                        "shape": dict(shape),
                        "rel_err": err,
                        "message": "; ".join(c.message(first) for c in cs if c.comparable and not c.ok)
                        + f" at {label}"
                        + ("" if suite.reference is not None else " (no reference: which one is right is not known)"),
                    }  # fmt: skip
                )
    # states of variants the reference did not settle
    for n in ran:
        e = checks[n].entry
        if e.get("state") in (corr.CORRECT, corr.WRONG):
            continue
        mine = [r for r in rows if n in (r["a"], r["b"]) and r["comparable"]]
        e["state"] = corr.AGREES if mine and all(r["ok"] for r in mine) else corr.NOT_CHECKED
    findings += _accuracy_gap(checks, ran, label, shape)
    return rows, findings


def _accuracy_gap(
    checks: Mapping[str, VariantCheck], ran: list[str], label: str, shape: Mapping[str, int]
) -> list[dict[str, Any]]:
    """A finding when one variant's error against the reference is ≥ 10× its partner's (TF32 vs IEEE fp32)."""
    errs: dict[str, float] = {}
    for n in ran:
        e = checks[n].entry.get("rel_err")
        if isinstance(e, (int, float)) and math.isfinite(e):
            errs[n] = float(e)
    if len(errs) < 2:
        return []
    best = min(errs, key=lambda n: errs[n])
    worst_n = max(errs, key=lambda n: errs[n])
    lo, hi = errs[best], errs[worst_n]
    if best == worst_n or hi <= 0 or (lo > 0 and hi / lo < corr.ACCURACY_GAP):
        return []
    factor = f"{hi / lo:.3g}×" if lo > 0 else "infinitely"
    if any(checks[n].entry.get("state") == corr.WRONG for n in (best, worst_n)):
        return []  # a wrong result is already a finding of its own
    both = all(checks[n].entry.get("state") == corr.CORRECT for n in (best, worst_n))
    return [{"kind": "numerics", "severity": "minor", "variant": worst_n, "against": best, "shape": dict(shape),
             "rel_err": hi, "message": f"{worst_n} is {factor} less accurate than {best} at {label} (error against "
             f"the fp64 reference {hi:.2e} vs {lo:.2e})" + (" although both pass the tolerance" if both else "")
             + "; e.g. TF32 (tl.dot input_precision='tf32', the fp32 default) against IEEE fp32"}]  # fmt: skip


def check_shape(
    suite: Suite,
    variants: list[str],
    shape: Mapping[str, int],
    device: str,
    target: str,
    selector: Any = None,
    seed: int = 0,
    metas: Mapping[str, Mapping[str, Any]] | None = None,
    ttirs: Mapping[str, str] | None = None,
) -> ShapeCheck:
    """Every variant through :func:`check_variant` in this process, then :func:`agreement`.

    A variant that fails to compile or launch gets ``{"error": message, "state": "not checked"}``; the others go on
    (a CUDA fault poisons the process's context: :mod:`irdiff.run.isolate` runs each variant in its own process).
    """
    shape = dict(shape)
    checks: dict[str, VariantCheck] = {}
    for name in variants:
        meta = metas.get(name) if metas else None
        checks[name] = check_variant(suite, name, shape, device, target, selector, seed, meta, (ttirs or {}).get(name))
    return combine(suite, shape, variants, checks)


def combine(suite: Suite, shape: dict[str, int], variants: list[str], checks: Mapping[str, VariantCheck]) -> ShapeCheck:
    """The :class:`ShapeCheck` of per-variant checks (from this process or from isolated children)."""
    findings = [f for n in variants if n in checks for f in checks[n].findings]
    rows, more = agreement(suite, shape, checks, variants)
    findings += more
    results = {n: checks[n].entry for n in variants if n in checks}
    launches = {n: c.launch for n, c in checks.items() if c.launch is not None and "error" not in c.entry}
    inputs = {n: c.inputs for n, c in checks.items() if c.inputs is not None and "error" not in c.entry}
    for c in checks.values():
        c.outputs = {}
    return ShapeCheck(shape, results, rows, findings, launches, inputs)


def _against_reference(
    suite: Suite,
    name: str,
    initial: Mapping[str, Any],
    inputs: Inputs,
    outs: Mapping[str, Any],
    shape: Mapping[str, int],
    findings: list[dict[str, Any]],
) -> dict[str, Any]:
    """``{"state", "correct", "rel_err", "checks", "reference_dtype"}`` of ``outs`` against the suite's reference,
    computed on the arguments as the kernel found them, upcast to float64; appends a finding per wrong output."""
    if suite.reference is None:
        return {"state": corr.NOT_CHECKED, "correct": None, "rel_err": None, "checks": []}
    expected = corr.expected_outputs(suite, _upcast(initial), inputs.outputs, shape)
    ref_dtypes = sorted({str(t.dtype).replace("torch.", "") for t in expected.values() if hasattr(t, "dtype")})
    checks = corr.check_outputs(outs, expected, _dtypes(inputs), how=suite.compare, shape=shape)
    del expected
    ok, err = corr.worst(checks)
    state = corr.state_of(checks)
    label = shape_label(shape)
    for c in checks:
        if not c.comparable:
            findings.append({"kind": "not-comparable", "severity": "info", "variant": name, "shape": dict(shape),
                             "output": c.output, "message": f"{c.message(name)} at {label}"})  # fmt: skip
        elif not c.ok:
            findings.append(
                {
                    "kind": "correctness",
                    "severity": "critical",
                    "variant": name,
                    "shape": dict(shape),
                    "output": c.output,
                    "rel_err": c.rel_err,
                    "tolerance": c.tolerance,
                    "nonfinite": c.nonfinite,
                    "message": f"{c.message(name)} at {label}",
                }
            )
    return {
        "state": state,
        "correct": True if state == corr.CORRECT else False if state == corr.WRONG else None,
        "rel_err": err,
        "checks": [c.to_json() for c in checks],
        "reference_dtype": ",".join(ref_dtypes),
    }


def _rates(suite: Suite, shape: Mapping[str, int], median_ms: float) -> tuple[float | None, float | None]:
    s = dict(shape)
    tflops = suite.flops(s) / (median_ms * 1e-3) / 1e12 if suite.flops and median_ms > 0 else None
    gbps = suite.bytes(s) / (median_ms * 1e-3) / 1e9 if suite.bytes and median_ms > 0 else None
    return tflops, gbps


def _timing_entry(suite: Suite, shape: Mapping[str, int], samples: list[float], peak: Any) -> dict[str, Any]:
    s = summarize(samples)
    tflops, gbps = _rates(suite, shape, s.median_ms)
    pct, basis = pct_of_peak(tflops, gbps, peak)
    return {
        "median_ms": s.median_ms,
        "iqr_ms": s.iqr_ms,
        "n": s.n,
        "q1_ms": s.q1_ms,
        "q3_ms": s.q3_ms,
        "min_ms": s.min_ms,
        "tflops": tflops,
        "gbps": gbps,
        "pct_peak": pct,
        "pct_basis": basis,
    }


CLOCK_GAP = 0.03
"""Partners whose median SM clocks differ by more than this fraction get a finding."""


def _block_medians(m: Any, key: str) -> list[float]:
    """Median launch time of each measured block (the verdict resamples these); all launches when no blocks."""
    blocks = getattr(m, "blocks", {}).get(key) or []
    if len(blocks) >= 2:
        return [sorted(b)[len(b) // 2] for b in blocks if b]
    return list(m.samples[key])


def _timed_entry(suite: Suite, shape: Mapping[str, int], m: Any, peak: Any, key: str) -> dict[str, Any]:
    return {**_timing_entry(suite, shape, m.samples[key], peak), **_clock_entry(m, key)}


def _block_verdict(m: Any, a: str, an: str, b: str, bn: str) -> Any:
    """The verdict of ``a`` against ``b`` over their block medians, labelled ``an`` and ``bn``."""
    return verdict(an, _block_medians(m, a), bn, _block_medians(m, b))


def _clock_entry(m: Any, key: str) -> dict[str, Any]:
    """Block medians, the interval of the median they give (:func:`irdiff.run.stats.median_interval`: it covers
    block-to-block variation), what was seen during each block, and the median NVML clock and power."""
    c = getattr(m, "clocks", {}).get(key)
    has_blocks = bool(getattr(m, "blocks", {}).get(key))
    out: dict[str, Any] = {"block_medians_ms": _block_medians(m, key) if has_blocks else []}
    if has_blocks and len(out["block_medians_ms"]) >= 2:
        lo, hi, level = median_interval(out["block_medians_ms"])
        out.update({"median_ci_ms": [lo, hi], "median_ci_level": level})
    info = getattr(m, "block_info", {}).get(key)
    if info:
        out["blocks"] = info
    if c:
        out.update({"sm_mhz": c["sm_mhz"], "power_w": c["power_w"]})
    return out


def _clock_findings(m: Any, a: str, b: str, shape: Mapping[str, int]) -> list[dict[str, Any]]:
    ca, cb = (getattr(m, "clocks", {}).get(n) for n in (a, b))
    if not ca or not cb or not ca["sm_mhz"] or not cb["sm_mhz"]:
        return []
    gap = ca["sm_mhz"] / cb["sm_mhz"] - 1.0
    if abs(gap) <= CLOCK_GAP:
        return []
    hi, lo = (a, b) if gap > 0 else (b, a)
    chi, clo = (ca, cb) if gap > 0 else (cb, ca)
    return [{"kind": "clock", "severity": "major", "variant": hi, "against": lo, "shape": dict(shape),
             "message": f"{hi} ran at {chi['sm_mhz']:.0f} MHz ({chi['power_w']:.0f} W), {lo} at {clo['sm_mhz']:.0f} "
             f"MHz ({clo['power_w']:.0f} W): {abs(gap) * 100:.1f}% apart at {shape_label(shape)}; part of the time "
             "difference is the clock each sustains (power or thermal limit), not the kernels' own work"}]  # fmt: skip


def _baseline_launch(suite: Suite, inputs: Inputs, shape: Mapping[str, int]) -> Callable[[], Any]:
    fn = suite.baseline
    assert fn is not None
    args, s = inputs.args, dict(shape)
    return lambda: fn(args, s)


def _baseline_check(suite: Suite, inputs: Inputs, shape: Mapping[str, int]) -> dict[str, Any]:
    """Correctness of the baseline's own result (it is timed as the reference speed; it should be right too)."""
    assert suite.baseline is not None
    out = suite.baseline(inputs.args, dict(shape))
    _sync(inputs.device)
    if suite.reference is None or out is None:
        return {"correct": None, "rel_err": None}
    outs = dict(out) if isinstance(out, Mapping) else ({inputs.outputs[0]: out} if len(inputs.outputs) == 1 else {})
    if not outs:
        return {"correct": None, "rel_err": None}
    expected = corr.expected_outputs(suite, _upcast(inputs.reference_args()), inputs.outputs, shape)
    checks = corr.check_outputs(
        outs, {k: v for k, v in expected.items() if k in outs}, _dtypes(inputs), "reference", suite.compare, shape
    )
    ok, err = corr.worst(checks)
    return {"correct": ok, "rel_err": err}


def _launches_here(suite: Suite, chk: ShapeCheck, target: str, req: RunRequest, findings: list) -> None:
    """Inputs and launches in this process, for timing, of the variants that ran in their own process."""
    for name, e in chk.variants.items():
        if e.get("error"):
            continue
        try:
            inputs = build_inputs(example_args(suite, name, chk.shape), device="cuda", seed=req.seed)
            chk.launches[name] = make_launch(suite, name, inputs, chk.shape, target, selector=req.config)
            chk.inputs[name] = inputs
        except Exception as ex:  # noqa: BLE001 - reported, the other variant is still timed
            e["error"] = error_text(ex)
            findings.append({"kind": "error", "severity": "critical", "variant": name, "shape": chk.shape,
                             "message": f"{name} failed at {shape_label(chk.shape)}: {e['error']}"})  # fmt: skip


def local_target() -> str:
    """``sm90`` style name of the local CUDA device (torch must see one)."""
    info = device_info()
    return str(info["capability"])


def _versions() -> dict[str, str]:
    import torch
    import triton

    return {"triton": triton.__version__, "torch": torch.__version__, "cuda": str(torch.version.cuda)}


def run_timing(req: RunRequest, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Check and time ``req.variants`` at every shape on the local CUDA GPU.

    :returns: the ``bundle.runs["timing"]`` record (see the module docstring).
    :raises RuntimeError: no CUDA device. :raises SuiteError: unknown suite or variant.
    """
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device")
    suite = load_suite(req.suite)
    for n in req.variants:
        suite.variant(n)
    dev = device_info()
    target = req.target or str(dev["capability"])
    peak = lookup_peak(str(dev["name"]))
    ref_name = getattr(suite.baseline, "__name__", "baseline") if (req.baseline and suite.baseline) else None
    pair = req.variants[:2]
    record: dict[str, Any] = {
        "method": "",
        "device": {**dev, "peak": peak.to_json() if peak else None},
        "suite": suite.name,
        "variants": list(req.variants),
        "reference_name": ref_name,
        "target": target,
        "versions": _versions(),
        "settings": {},
        "rows": [],
        "verdicts": [],
        "findings": [],
    }
    autotune_rows: list[dict[str, Any]] = []
    set_allocator("cuda")
    if log:
        log(f"checking {', '.join(req.variants)} of {suite.name} ({len(req.shapes)} shape(s)), one process each")
    per_shape = (
        check_isolated(req.suite, req.variants, req.shapes, "cuda", target, req.config, req.seed, log=log)
        if req.isolate
        else [None] * len(req.shapes)
    )
    for shape, isolated in zip(req.shapes, per_shape):
        label = shape_label(shape)
        if log:
            log(f"timing {suite.name} at {label}")
        if isolated is None:
            chk = check_shape(suite, req.variants, shape, "cuda", target, req.config, req.seed)
        else:
            chk = combine(suite, dict(shape), req.variants, isolated)
            _launches_here(suite, chk, target, req, record["findings"])
        row: dict[str, Any] = {"shape": dict(shape), "variants": chk.variants, "reference": None}
        row["agreement"] = chk.agreement
        record["findings"].extend(chk.findings)
        fns: dict[str, Callable[[], Any]] = dict(chk.launches)
        first_inputs = next(iter(chk.inputs.values()), None)
        ref_entry: dict[str, Any] | None = None
        if ref_name and first_inputs is not None:
            try:
                ref_entry = {"name": ref_name, **_baseline_check(suite, first_inputs, shape)}
                fns[REFERENCE_KEY] = _baseline_launch(suite, first_inputs, shape)
            except Exception as e:  # noqa: BLE001 - the baseline is optional decoration
                ref_entry = {"name": ref_name, "error": f"{type(e).__name__}: {e}"}
        tuned: dict[str, Any] = {}
        tuned_checks: dict[str, dict[str, Any]] = {}
        if req.autotune and chk.launches:
            from irdiff.run.autotune import tune_variant

            for name in chk.launches:
                inputs = chk.inputs[name]
                w = tune_variant(suite, name, inputs, shape, target)
                tuned[name] = w
                own = make_launch(suite, name, inputs, shape, target, selector=w.config)
                poison_outputs(inputs)
                initial = inputs.reference_args()
                own()
                _sync("cuda")
                outs = clone_outputs(inputs)
                tuned_checks[name] = _against_reference(
                    suite, f"{name}@tuned", initial, inputs, outs, shape, record["findings"]
                )
                del outs
                fns[f"{name}@tuned"] = own
            autotune_rows.append({"shape": dict(shape), "winners": {n: w.to_json() for n, w in tuned.items()}})
        m = None
        if fns:
            try:
                m = measure(fns, req.timing)
            except Exception as ex:  # noqa: BLE001 - a fault while timing: keep what was measured so far
                msg = error_text(ex)
                record["findings"].append({"kind": "error", "severity": "critical", "variant": ", ".join(fns),
                                           "shape": dict(shape), "message": f"timing failed at {label}: {msg}"})  # fmt: skip
                row["reference"] = ref_entry
                record["rows"].append(row)
                break
        if m is not None:
            record["method"] = m.method
            record["settings"] = {k: v for k, v in m.settings.items() if k != "estimate_ms"}
            te = functools.partial(_timed_entry, suite, shape, m, peak)
            vd_of = functools.partial(_block_verdict, m)

            for name in chk.launches:
                row["variants"][name].update(te(name))
            if REFERENCE_KEY in m.samples and ref_entry is not None:
                ref_entry.update(te(REFERENCE_KEY))
            for name, w in tuned.items():
                row.setdefault("tuned", {})[name] = {
                    **te(f"{name}@tuned"),
                    "config": w.config,
                    "bench_ms": w.bench_ms,
                    **tuned_checks.get(name, {}),
                }
            vds = []
            if len(pair) == 2 and all(n in m.samples for n in pair):
                vds.append(vd_of(pair[0], pair[0], pair[1], pair[1]))
                record["findings"] += _clock_findings(m, pair[0], pair[1], shape)
            if tuned and len(pair) == 2 and all(f"{n}@tuned" in m.samples for n in pair):
                vds.append(vd_of(f"{pair[0]}@tuned", f"{pair[0]}@tuned", f"{pair[1]}@tuned", f"{pair[1]}@tuned"))
            if REFERENCE_KEY in m.samples:
                for name in chk.launches:
                    vds.append(vd_of(name, name, REFERENCE_KEY, str(ref_name)))
            for vd in vds:
                vd.shape = dict(shape)
                record["verdicts"].append(vd.to_json())
        row["reference"] = ref_entry
        record["rows"].append(row)
        del chk, fns
        gc.collect()
        torch.cuda.empty_cache()
    if autotune_rows:
        record["autotune"] = {
            "method": "triton.autotune(configs=suite configs, key=shape parameters) per variant per shape; "
            "winner = lowest do_bench median; variants timed at their own winners ('tuned') and at the common "
            "config (the suite's default or --config)",
            "rows": autotune_rows,
        }
    return record
