"""Views every format shares (terminal, HTML, Markdown, JSON): the header facts of a comparison and its timing
table. Plain data computed from a :class:`~irdiff.render.Comparison`; the format modules only lay them out.

They used to live in :mod:`irdiff.render.report`, the format dispatcher, which imports every format: keeping them
here lets a format import them without importing the dispatcher back (no import cycle inside ``irdiff.render``).
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from irdiff.render import Comparison

__all__ = [
    "Header",
    "TimingSeries",
    "TimingTable",
    "config_text",
    "header",
    "shape_label",
    "shapes_note",
    "timing_record",
    "timing_table",
]


@dataclass
class Header:
    """Header facts of a report (strings ready to show; ``—`` where unknown)."""

    suite: str
    a: str
    b: str
    kernel_a: str
    kernel_b: str
    target: str
    gpu: str
    triton: str
    ptxas: str
    reproduce: str
    command: str
    created: str
    bundle: str
    options: list[tuple[str, str, str]] = field(default_factory=list)
    report_command: str = "—"  # the run that wrote the report (``command``/``created``: the one that compiled)
    report_created: str = "—"


def _side_setting(c: Comparison, key: str, fallback: str) -> tuple[str, str]:
    """``(a's value, b's value)`` of one recorded setting (``VariantResult.settings``: target, triton, ptxas)."""
    sa, sb = _settings(c, c.a), _settings(c, c.b)
    x = str(sa.get(key) or "")
    y = str(sb.get(key) or "")
    return x or fallback, y or fallback


def _settings(c: Comparison, name: str) -> dict[str, Any]:
    """A side's recorded settings (``VariantResult.settings``), ``{}`` when the bundle lacks them or the variant."""
    v = c.bundle.variants.get(name)
    return dict(v.settings or {}) if v is not None else {}


def _both(c: Comparison, x: str, y: str) -> str:
    """One header value: shared, or each side's (``sm80 (a) · sm90 (b)``) when the settings differ."""
    return x if x == y else f"{x} ({c.a}) · {y} ({c.b})"


# irdiff's commands other than the comparison (``irdiff SUITE …`` / ``irdiff compare SUITE …``): a bundle made by
# one of them records a command that does not reproduce a comparison.
_NOT_COMPARE = ("report", "diff", "show", "list", "compile", "run", "capture", "sweep", "bisect", "envs")


# Bundle "suite" names of kernel collections (irdiff/capture, irdiff/collections_diff): not a suite to compile.
_COLLECTIONS = ("capture", "triton-cache", "triton-dump")


def _option(cmd: list[str], name: str) -> str | None:
    """The value of option ``name`` in a recorded command line (``--variant x`` or ``--variant=x``), else None."""
    for i, x in enumerate(cmd):
        if x == name and i + 1 < len(cmd):
            return cmd[i + 1]
        if x.startswith(name + "="):
            return x.split("=", 1)[1]
    return None


def _base_name(name: str) -> str:
    """``annotated@3`` (config 3 of ``annotated``) → ``annotated``."""
    head, at, idx = name.rpartition("@")
    return head if at and idx.isdigit() else name


def _reproduce(c: Comparison) -> str:
    """The command that reproduces this comparison: the bundle's own command line (file suites as
    ``path.py::name``, ``--shapes`` and every option kept) when it was a comparison of this very pair, else one
    rebuilt from the bundle's facts and the suite argument of the recorded command (``irdiff compile
    kernels.py::add --save B`` → ``irdiff kernels.py::add --variant … --against …``)."""
    bundle = c.bundle
    cmd = [str(x) for x in (bundle.command or [])]
    sa, sb = _settings(c, c.a), _settings(c, c.b)
    base_a = str(sa.get("variant") or _base_name(c.a))
    base_b = str(sb.get("variant") or _base_name(c.b))
    suite = bundle.suite or "SUITE"
    if len(cmd) > 1 and cmd[0] == "irdiff":
        sub = cmd[1]
        if sub not in _NOT_COMPARE:
            va, vb = _option(cmd, "--variant"), _option(cmd, "--against")
            if va is None and vb is None:
                same = not bundle.pair or list(bundle.pair) == [c.a, c.b]
            else:
                same = (va is None or _base_name(va) == base_a) and (vb is None or _base_name(vb) == base_b)
            if same:
                return shlex.join(cmd)
        # the suite as the user named it (a file suite's path::name), from a command that names one
        arg = cmd[2] if sub in ("compare", "compile", "run", "show") and len(cmd) > 2 else cmd[1]
        if sub not in _NOT_COMPARE or sub in ("compare", "compile", "run", "show"):
            suite = arg if not arg.startswith("-") else suite
    dir_a = getattr(bundle.variants.get(c.a), "directory", "")
    dir_b = getattr(bundle.variants.get(c.b), "directory", "")
    if suite.split(" | ")[0] in _COLLECTIONS and dir_a and dir_b:
        # kernels of a capture, Triton cache or dump: no suite to compile, the two saved kernels diffed again
        return shlex.join(["irdiff", "diff", dir_a, dir_b])
    parts = ["irdiff", suite, "--variant", base_a, "--against", base_b]
    ta, tb = _side_setting(c, "target", bundle.target)
    if ta:
        parts += ["--target", ta]
    if tb and tb != ta:
        parts += ["--against-target", tb]
    xa, xb = _side_setting(c, "triton", "")
    if xa and xb and xa != xb:
        parts += ["--triton", xa, "--against-triton", xb]
    ea, eb = dict(sa.get("env") or {}), dict(sb.get("env") or {})
    for k, v in sorted(ea.items()):
        parts += ["--env", f"{k}={v}"]
    for k, v in sorted(eb.items()):
        if ea.get(k) != v:
            parts += ["--against-env", f"{k}={v}"]
    if bundle.shape:
        parts += ["--shape", ",".join(f"{k}={v}" for k, v in bundle.shape.items())]
    return shlex.join(parts)


def header(c: Comparison) -> Header:
    """The facts every report opens with. GPU: the device the runner timed on, else "not run" (compiled only)."""
    bundle = c.bundle
    va, vb = bundle.variants[c.a], bundle.variants[c.b]
    rec = timing_record(c)
    gpu = "not run (compiled without a GPU)"
    if rec:
        dev = rec.get("device") or {}
        name = dev.get("name") or "?"
        cap = dev.get("capability")
        gpu = f"{name} ({cap})" if cap else str(name)
    params = {a.name for a in va.specialization} | {a.name for a in vb.specialization}
    keys = sorted((set(va.options) | set(vb.options) | set(va.config) | set(vb.config)) - params)
    options = []
    for k in keys:
        x = va.config.get(k, va.options.get(k, "—"))
        y = vb.config.get(k, vb.options.get(k, "—"))
        options.append((k, str(x), str(y)))
    ea, eb = dict((va.settings or {}).get("env") or {}), dict((vb.settings or {}).get("env") or {})
    for k in sorted(set(ea) | set(eb)):  # the compile environment of each side (Triton knobs)
        options.append((f"env {k}", str(ea.get(k, "—")), str(eb.get(k, "—"))))
    ptx_a = va.resources.ptxas_version or bundle.ptxas_version or "—"
    ptx_b = vb.resources.ptxas_version or bundle.ptxas_version or "—"
    return Header(
        suite=bundle.suite or "—",
        a=c.a,
        b=c.b,
        kernel_a=va.kernel or "—",
        kernel_b=vb.kernel or "—",
        target=_both(c, *_side_setting(c, "target", va.target or bundle.target or "—")),
        gpu=gpu,
        triton=_both(c, *_side_setting(c, "triton", bundle.triton_version or "—")),
        ptxas=_both(c, ptx_a, ptx_b),
        reproduce=_reproduce(c),
        command=shlex.join(bundle.command) if bundle.command else "—",
        created=bundle.created or "—",
        bundle=bundle.directory or "—",
        options=options,
        report_command=shlex.join(c.report_command) if c.report_command else "—",
        report_created=c.report_created or "—",
    )


def timing_record(c: Comparison) -> dict[str, Any] | None:
    """The runner's record (``Comparison.timing``, else ``bundle.runs["timing"]``), or None when nothing ran."""
    rec = c.timing if c.timing is not None else c.bundle.runs.get("timing")
    if isinstance(rec, Mapping) and rec.get("rows"):
        return dict(rec)
    return None


def _shape_text(shape: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in shape.items())


# Compile options worth naming beside the constexprs (Triton's ``CUDAOptions``): what an autotune config sets.
_CONFIG_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def config_text(config: Mapping[str, Any], options: Mapping[str, Any]) -> str:
    """The constexprs and launch options a variant was compiled with, ``"BLOCK=1024, num_warps=4, num_stages=3"``
    (the bundle's ``variant.json`` ``config`` and ``options``; ``num_ctas=1`` and an unset ``maxnreg`` are
    Triton's defaults and left out). Empty when the variant records neither."""
    parts = [f"{k}={v}" for k, v in config.items()]
    for k in _CONFIG_OPTIONS:
        v = options.get(k)
        if v is None or (k == "num_ctas" and v == 1):
            continue
        parts.append(f"{k}={v}")
    return ", ".join(parts)


def _configs_text(c: Comparison) -> str:
    """The config of both variants: once when they agree, else each with its variant's name."""
    va, vb = c.bundle.variants.get(c.a), c.bundle.variants.get(c.b)
    if va is None or vb is None:
        return ""
    ta, tb = config_text(va.config, va.options), config_text(vb.config, vb.options)
    if ta == tb:
        return ta
    return f"{ta or 'no config'} in {c.a}, {tb or 'no config'} in {c.b}"


def shapes_note(c: Comparison, most: int = 8) -> str | None:
    """Which shape and config (constexprs, ``num_warps``/``num_stages``) the IR was compiled with and which shapes
    the runner timed, for the stage-0 table of every format: the config tells ``--config N`` / ``--variant A@N``
    runs apart.

    ``"compiled at M=1024,N=1024,K=1024; timed at M=4096,N=4096,K=4096; config BLOCK_M=128, num_warps=4"``;
    ``"compiled and timed at …"`` when the shapes are the same; ``"compiled at …; not timed"`` without a timing
    record; ``"compiled with …"`` for a bundle without a shape (a capture) that was not timed. None when there is
    neither a shape nor a config and nothing was timed. At most ``most`` timed shapes are listed (``(+N more)``).
    """
    compiled = _shape_text(c.bundle.shape or {})
    config = _configs_text(c)
    tail = f"; config {config}" if config else ""
    rec = timing_record(c)
    timed = [_shape_text(r.get("shape") or {}) or "the default shape" for r in (rec or {}).get("rows") or []
             if isinstance(r, Mapping)]  # fmt: skip
    if not timed:
        if compiled:
            return f"compiled at {compiled}; not timed{tail}"
        return f"compiled with {config}; not timed" if config else None
    where = compiled or "the suite's default shape"
    if timed == [where]:
        return f"compiled and timed at {where}{tail}"
    more = f" (+{len(timed) - most} more)" if len(timed) > most else ""
    return f"compiled at {where}; timed at {'; '.join(timed[:most])}{more}{tail}"


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    return float(x) if math.isfinite(x) else None


def shape_label(shape: Mapping[str, Any]) -> str:
    """``M=N=K=4096`` style label (equal dimensions grouped), as the runner prints it."""
    groups: dict[Any, list[str]] = {}
    for k, v in shape.items():
        groups.setdefault(v, []).append(str(k))
    return " ".join("=".join(names) + f"={v}" for v, names in groups.items()) or "—"


@dataclass
class TimingSeries:
    """One line of the chart: a variant (or the reference) over the shapes; None where not measured.

    :ivar tflops: TFLOP/s per shape; :ivar ms: median milliseconds per shape; :ivar correct: per shape, True/False
        or None (not checked).
    """

    name: str
    role: str  # "a", "b", "other" or "reference"
    ms: list[float | None]
    iqr_ms: list[float | None]
    tflops: list[float | None]
    pct_peak: list[float | None]
    correct: list[bool | None]


@dataclass
class TimingTable:
    """The runner's measurements arranged per shape (rows) and per variant (series)."""

    device: str
    method: str
    shapes: list[str]
    series: list[TimingSeries]
    verdicts: list[str]
    findings: list[str]

    def ratios(self) -> list[float | None]:
        """Per shape, a's median time over b's (``> 1``: a is slower), or None where either is missing."""
        sa = next((s for s in self.series if s.role == "a"), None)
        sb = next((s for s in self.series if s.role == "b"), None)
        if sa is None or sb is None:
            return [None] * len(self.shapes)
        return [x / y if x is not None and y else None for x, y in zip(sa.ms, sb.ms)]

    @property
    def has_tflops(self) -> bool:
        return any(v is not None for s in self.series for v in s.tflops)


def timing_table(c: Comparison) -> TimingTable | None:
    """Arrange ``bundle.runs["timing"]`` (shape documented in :mod:`irdiff.run.runner`) for the tables and chart;
    None when nothing was timed."""
    rec = timing_record(c)
    if rec is None:
        return None
    rows = [r for r in rec.get("rows", []) if isinstance(r, Mapping)]
    names: list[str] = [c.a, c.b]
    for n in rec.get("variants", []) or []:
        if n not in names:
            names.append(str(n))
    for r in rows:
        for n in r.get("variants", {}) or {}:
            if n not in names:
                names.append(str(n))
    ref_name = str(rec.get("reference_name") or "reference")

    def series(name: str, role: str, pick: Any) -> TimingSeries:
        s = TimingSeries(name, role, [], [], [], [], [])
        for r in rows:
            e = pick(r) or {}
            s.ms.append(_num(e.get("median_ms")))
            s.iqr_ms.append(_num(e.get("iqr_ms")))
            s.tflops.append(_num(e.get("tflops")))
            s.pct_peak.append(_num(e.get("pct_peak")))
            corr = e.get("correct")
            s.correct.append(corr if isinstance(corr, bool) else None)
        return s

    out: list[TimingSeries] = []
    for n in names:
        role = "a" if n == c.a else "b" if n == c.b else "other"
        s = series(n, role, lambda r, n=n: (r.get("variants") or {}).get(n))
        if any(v is not None for v in s.ms):
            out.append(s)
    if any(r.get("reference") for r in rows):
        out.append(series(ref_name, "reference", lambda r: r.get("reference")))
    dev = rec.get("device") or {}
    device = str(dev.get("name") or "?") + (f" ({dev['capability']})" if dev.get("capability") else "")
    verdicts = [
        (shape_label(v["shape"]) + ": " if isinstance(v.get("shape"), Mapping) else "") + str(v.get("sentence", ""))
        for v in rec.get("verdicts", []) or []
        if isinstance(v, Mapping) and v.get("sentence")
    ]
    findings = [str(f.get("message", "")) for f in rec.get("findings", []) or [] if isinstance(f, Mapping)]
    return TimingTable(
        device=device,
        method=str(rec.get("method") or ""),
        shapes=[shape_label(r.get("shape") or {}) for r in rows],
        series=out,
        verdicts=verdicts,
        findings=[f for f in findings if f],
    )
