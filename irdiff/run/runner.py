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

import gc
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from irdiff.run import correctness as corr
from irdiff.run.inputs import Inputs, build_inputs, clone_outputs, poison_outputs
from irdiff.run.launch import Launch, make_launch
from irdiff.run.peaks import lookup_peak, pct_of_peak
from irdiff.run.stats import summarize, verdict
from irdiff.run.sweep import shape_label
from irdiff.run.timing import TimingOptions, device_info, measure
from irdiff.suite import Suite, load_suite

__all__ = ["RunRequest", "ShapeCheck", "check_shape", "run_timing"]

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


def check_shape(
    suite: Suite,
    variants: list[str],
    shape: Mapping[str, int],
    device: str,
    target: str,
    selector: Any = None,
    seed: int = 0,
    metas: Mapping[str, Mapping[str, Any]] | None = None,
) -> ShapeCheck:
    """Launch each variant once on poisoned outputs and check it against the reference and the first variant.

    A variant that fails to compile or launch gets ``{"error": message, "correct": False}``; the others go on.
    """
    shape = dict(shape)
    label = shape_label(shape)
    results: dict[str, dict[str, Any]] = {}
    findings: list[dict[str, Any]] = []
    launches: dict[str, Launch] = {}
    inputs_by: dict[str, Inputs] = {}
    outputs_by: dict[str, dict[str, Any]] = {}
    for name in variants:
        v = suite.variant(name)
        try:
            inputs = build_inputs((v.args or suite.args)(shape), device=device, seed=seed)
            meta = metas.get(name) if metas else None
            launch = make_launch(suite, name, inputs, shape, target, selector=selector, meta=meta)
            poison_outputs(inputs)
            launch()
            _sync(device)
        except Exception as e:  # noqa: BLE001 - a variant that cannot run is a finding, not a crash
            msg = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            results[name] = {"error": msg, "correct": False, "rel_err": None}
            findings.append({"kind": "error", "variant": name, "shape": shape, "message": f"{name} at {label}: {msg}"})
            continue
        launches[name] = launch
        inputs_by[name] = inputs
        outs = clone_outputs(inputs)
        outputs_by[name] = outs
        entry: dict[str, Any] = {"config": launch.config, "resources": launch.resources()}
        entry.update(_against_reference(suite, name, inputs, outs, shape, findings))
        results[name] = entry

    agreement: list[dict[str, Any]] = []
    ran = [n for n in variants if n in outputs_by]
    if ran:
        first = ran[0]
        for other in ran[1:]:
            checks = corr.compare_outputs(outputs_by[first], outputs_by[other], _dtypes(inputs_by[first]), other)
            ok, err = corr.worst(checks)
            agreement.append({"a": first, "b": other, "ok": ok, "rel_err": err})
            if not ok:
                findings.append(
                    {
                        "kind": "agreement",
                        "variant": first,
                        "against": other,
                        "shape": shape,
                        "rel_err": err,
                        "message": "; ".join(c.message(first) for c in checks if not c.ok) + f" at {label}",
                    }
                )
    outputs_by.clear()
    return ShapeCheck(shape, results, agreement, findings, launches, inputs_by)


def _against_reference(
    suite: Suite,
    name: str,
    inputs: Inputs,
    outs: Mapping[str, Any],
    shape: Mapping[str, int],
    findings: list[dict[str, Any]],
) -> dict[str, Any]:
    """``{"correct", "rel_err", "checks"}`` of ``outs`` against the suite's reference; appends a finding per wrong
    output."""
    if suite.reference is None:
        return {"correct": None, "rel_err": None, "checks": []}
    expected = corr.expected_outputs(suite, inputs.args, inputs.outputs, shape)
    checks = corr.check_outputs(outs, expected, _dtypes(inputs))
    del expected
    ok, err = corr.worst(checks)
    label = shape_label(shape)
    for c in checks:
        if not c.ok:
            findings.append(
                {
                    "kind": "correctness",
                    "variant": name,
                    "shape": dict(shape),
                    "output": c.output,
                    "rel_err": c.rel_err,
                    "tolerance": c.tolerance,
                    "nonfinite": c.nonfinite,
                    "message": f"{c.message(name)} at {label}",
                }
            )
    return {"correct": ok, "rel_err": err, "checks": [c.to_json() for c in checks]}


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
    expected = corr.expected_outputs(suite, inputs.args, inputs.outputs, shape)
    checks = corr.check_outputs(outs, {k: v for k, v in expected.items() if k in outs}, _dtypes(inputs), "reference")
    ok, err = corr.worst(checks)
    return {"correct": ok, "rel_err": err}


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
    for shape in req.shapes:
        label = shape_label(shape)
        if log:
            log(f"running {suite.name} at {label}")
        chk = check_shape(suite, req.variants, shape, "cuda", target, req.config, req.seed)
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
                own()
                _sync("cuda")
                outs = clone_outputs(inputs)
                tuned_checks[name] = _against_reference(suite, f"{name}@tuned", inputs, outs, shape, record["findings"])
                del outs
                fns[f"{name}@tuned"] = own
            autotune_rows.append({"shape": dict(shape), "winners": {n: w.to_json() for n, w in tuned.items()}})
        if fns:
            m = measure(fns, req.timing)
            record["method"] = m.method
            record["settings"] = {k: v for k, v in m.settings.items() if k != "estimate_ms"}
            for name in chk.launches:
                row["variants"][name].update(_timing_entry(suite, shape, m.samples[name], peak))
            if REFERENCE_KEY in m.samples and ref_entry is not None:
                ref_entry.update(_timing_entry(suite, shape, m.samples[REFERENCE_KEY], peak))
            for name, w in tuned.items():
                row.setdefault("tuned", {})[name] = {
                    **_timing_entry(suite, shape, m.samples[f"{name}@tuned"], peak),
                    "config": w.config,
                    "bench_ms": w.bench_ms,
                    **tuned_checks.get(name, {}),
                }
            vds = []
            if len(pair) == 2 and all(n in m.samples for n in pair):
                vds.append(verdict(pair[0], m.samples[pair[0]], pair[1], m.samples[pair[1]]))
            if tuned and len(pair) == 2 and all(f"{n}@tuned" in m.samples for n in pair):
                vds.append(
                    verdict(
                        f"{pair[0]}@tuned",
                        m.samples[f"{pair[0]}@tuned"],
                        f"{pair[1]}@tuned",
                        m.samples[f"{pair[1]}@tuned"],
                    )
                )
            if REFERENCE_KEY in m.samples:
                for name in chk.launches:
                    vds.append(verdict(name, m.samples[name], str(ref_name), m.samples[REFERENCE_KEY]))
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
