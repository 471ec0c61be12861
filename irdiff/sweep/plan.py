"""Sweep plans (TOML) and their expansion into compile jobs and diagnosis jobs.

A plan names suites, variant pairs, targets, Triton releases, autotune configs and shapes; :func:`expand` turns it
into the compile jobs (one suite variant under one setting) and the diagnosis jobs (one pair under one setting: one
row of the result table) they need. Compile jobs shared by several pairs appear once. Example::

    name = "triton-upgrade"
    suites = ["builtin"]                  # built-in names, "builtin" (all of them), or files "kernels.py[::name]"
    targets = ["sm80", "sm90", "sm100"]
    triton = ["3.6.0", "3.9.0"]           # releases (irdiff envs); omitted: the installed Triton
    configs = "all"                       # "all" autotune configs, "default", or a list of indices
    shapes = [{}, {M = 4096}]             # shape overrides; omitted: the suite's shape
    pairs = "default"                     # the suite's pair, "self" (each variant against itself across the
                                          # first value of `across`), or [["annotated", "unannotated"], ...]
    across = "triton"                     # for pairs = "self": "triton" or "target"

    [[suite]]                             # per-suite overrides (any key above but `suites`)
    ref = "kernels/copy.py"               # relative to the plan file
    pairs = [["hinted", "plain"]]

Errors are :class:`PlanError` (one line, exit status 2).
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "CompileJob",
    "DiagnosisJob",
    "Expansion",
    "Plan",
    "PlanError",
    "SuitePlan",
    "default_out_dir",
    "expand",
    "load_plan",
    "parse_plan",
]


def default_out_dir(name: str) -> Path:
    """The default output directory of a plan called ``name``: ``<name>.sweep`` in the working directory, ``name``
    made a plain file name first (:func:`irdiff.bundle.variant_dirname`), so a plan named ``../../x`` or ``/tmp/x``
    never writes outside the working directory.

    >>> default_out_dir("triton-upgrade")
    PosixPath('triton-upgrade.sweep')
    >>> str(default_out_dir("../../x")).startswith("_.._x-")
    True
    """
    from irdiff.bundle import variant_dirname

    return Path(f"{variant_dirname(name)}.sweep")


_KEYS = {"name", "suites", "suite", "targets", "triton", "configs", "shapes", "pairs", "across", "reports"}
_SUITE_KEYS = {"ref", "targets", "triton", "configs", "shapes", "pairs", "across"}


class PlanError(ValueError):
    """A plan that cannot be read or expanded (one-line message)."""


@dataclass(frozen=True)
class SuitePlan:
    """One suite of a plan with its axes (each already a list; ``None`` in ``triton`` = the installed Triton).

    :ivar ref: built-in suite name or ``path.py[::name]`` (absolute).
    :ivar pairs: ``"default"``, ``"self"`` or a tuple of ``(variant, against)``.
    :ivar configs: ``"all"``, ``"default"`` or a tuple of autotune config indices.
    """

    ref: str
    targets: tuple[str, ...]
    triton: tuple[str | None, ...]
    configs: Any
    shapes: tuple[tuple[tuple[str, int], ...], ...]
    pairs: Any
    across: str = "triton"


@dataclass
class Plan:
    """A parsed plan: its name, its suites, and whether per-pair HTML reports are written (``reports``)."""

    name: str
    suites: list[SuitePlan]
    reports: bool = True
    source: str = ""


@dataclass(frozen=True)
class CompileJob:
    """Compile one suite variant under one setting (a pure function of these fields; see :mod:`irdiff.sweep.jobs`).

    :ivar config: autotune config index, or None (the suite's default).
    :ivar shape: shape overrides as sorted ``(name, size)`` pairs.
    :ivar triton: Triton release, or None (the installed one).
    """

    suite: str
    variant: str
    target: str
    triton: str | None
    config: int | None
    shape: tuple[tuple[str, int], ...] = ()

    @property
    def id(self) -> str:
        return _digest(["c", self.suite, self.variant, self.target, self.triton, self.config, list(self.shape)])

    @property
    def any_release_id(self) -> str:
        """The id with the Triton release left out: the same compile under any release (job timings)."""
        return _digest(["c*", self.suite, self.variant, self.target, self.config, list(self.shape)])

    def label(self) -> str:
        bits = [short_ref(self.suite), self.variant, self.target, f"triton {self.triton or 'installed'}"]
        if self.config is not None:
            bits.append(f"config {self.config}")
        if self.shape:
            bits.append(",".join(f"{k}={v}" for k, v in self.shape))
        return " ".join(bits)


@dataclass(frozen=True)
class DiagnosisJob:
    """Diagnose one pair (``a`` inspected, ``b`` the baseline) under one setting: one row of the result table."""

    a: CompileJob
    b: CompileJob

    @property
    def id(self) -> str:
        return _digest(["d", self.a.id, self.b.id])

    @property
    def any_release_id(self) -> str:
        """The id with the sides' Triton releases left out (job timings)."""
        return _digest(["d*", self.a.any_release_id, self.b.any_release_id])

    @property
    def suite(self) -> str:
        return self.a.suite

    def label(self) -> str:
        a, b = self.a, self.b
        diff = [
            f"{x}→{y}"
            for x, y in ((a.variant, b.variant), (a.target, b.target), (a.triton, b.triton))
            if x != y and (x or y)
        ]
        same = f"{a.target} triton {a.triton or 'installed'}" if a.target == b.target and a.triton == b.triton else ""
        cfg = f" config {a.config}" if a.config is not None else ""
        return f"{short_ref(a.suite)} {' '.join(diff) or a.variant} {same}{cfg}".replace("  ", " ").strip()


@dataclass
class Expansion:
    """What a plan asks for: the distinct compile jobs and one diagnosis job per row, in a stable order;
    ``cached`` holds the ids of compile jobs irdiff's compile cache already holds (filled by
    :func:`irdiff.sweep.dry_run`; those are not run again)."""

    compile_jobs: list[CompileJob] = field(default_factory=list)
    diagnosis_jobs: list[DiagnosisJob] = field(default_factory=list)
    cached: set[str] = field(default_factory=set)


def short_ref(ref: str) -> str:
    """A suite reference for messages: the built-in name, or the file's name (``copy.py::suite``)."""
    path, sep, name = ref.partition("::")
    return Path(path).name + sep + name if ("/" in path or path.endswith(".py")) else ref


def _digest(parts: list[Any]) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:16]


def _as_list(value: Any, key: str, where: str) -> list[Any]:
    if isinstance(value, (str, int)):
        return [value]
    if isinstance(value, list):
        return value
    raise PlanError(f"{where}: `{key}` must be a string or a list, not {type(value).__name__}")


def _axes(table: dict[str, Any], defaults: dict[str, Any], where: str) -> dict[str, Any]:
    from irdiff.target import TargetError, parse_target

    merged = {**defaults, **{k: v for k, v in table.items() if k in _SUITE_KEYS and k != "ref"}}
    targets = []
    for t in _as_list(merged.get("targets", ["sm90"]), "targets", where):
        try:
            targets.append(parse_target(str(t)).name)
        except TargetError as e:
            raise PlanError(f"{where}: {e}") from None
    tritons = [
        str(v) if v not in ("", "installed") else None for v in _as_list(merged.get("triton", []), "triton", where)
    ]
    configs = merged.get("configs", "default")
    if isinstance(configs, str):
        if configs not in ("all", "default"):
            raise PlanError(f'{where}: `configs` must be "all", "default" or a list of indices, not {configs!r}')
    elif isinstance(configs, list) and all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in configs):
        configs = tuple(configs)
    else:
        raise PlanError(f'{where}: `configs` must be "all", "default" or a list of indices (0, 1, …)')
    shapes_in = merged.get("shapes", [{}])
    if isinstance(shapes_in, dict):
        shapes_in = [shapes_in]
    if not isinstance(shapes_in, list) or not all(isinstance(s, dict) for s in shapes_in):
        raise PlanError(f"{where}: `shapes` must be a list of tables such as {{M = 4096}}")
    shapes = []
    for s in shapes_in or [{}]:
        bad = [k for k, v in s.items() if not isinstance(v, int) or isinstance(v, bool) or v <= 0]
        if bad:
            raise PlanError(f"{where}: shape size {bad[0]!r} must be a positive integer")
        shapes.append(tuple(sorted(s.items())))
    pairs = merged.get("pairs", "default")
    if isinstance(pairs, str):
        if pairs not in ("default", "self"):
            raise PlanError(f'{where}: `pairs` must be "default", "self" or a list of [variant, against]')
    elif isinstance(pairs, list) and all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in pairs
    ):
        pairs = tuple((p[0], p[1]) for p in pairs)
    else:
        raise PlanError(f'{where}: `pairs` must be "default", "self" or a list of [variant, against]')
    across = merged.get("across", "triton")
    if across not in ("triton", "target"):
        raise PlanError(f'{where}: `across` must be "triton" or "target", not {across!r}')
    if pairs == "self":
        axis = tritons if across == "triton" else targets
        if len(axis) < 2:
            raise PlanError(
                f'{where}: pairs = "self" across {across} needs at least two values of `{across}s`'
                if across == "target"
                else f'{where}: pairs = "self" across triton needs two releases'
            )
    return {
        "targets": tuple(dict.fromkeys(targets)),
        "triton": tuple(dict.fromkeys(tritons or [None])),
        "configs": configs,
        "shapes": tuple(dict.fromkeys(shapes)),
        "pairs": pairs,
        "across": across,
    }


def _suite_ref(ref: Any, base: Path, where: str) -> list[str]:
    from irdiff.suite import builtin_suite_names

    if not isinstance(ref, str) or not ref:
        raise PlanError(f"{where}: a suite must be named by a non-empty string")
    if ref == "builtin":
        return builtin_suite_names()
    if ref in builtin_suite_names():
        return [ref]
    path, sep, name = ref.partition("::")
    p = Path(path)
    if not p.is_absolute():
        p = base / p
    if not p.is_file():
        raise PlanError(f"{where}: suite {ref!r} is neither a built-in suite nor a file ({p} does not exist)")
    return [str(p.resolve()) + sep + name]


def parse_plan(data: dict[str, Any], base: Path, source: str = "plan") -> Plan:
    """A plan from its TOML table; relative suite files are taken from ``base`` (the plan file's directory).

    :raises PlanError: an unknown key, a malformed axis, an unknown target or suite file.
    """
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise PlanError(f"{source}: unknown key {unknown[0]!r} (keys: {', '.join(sorted(_KEYS))})")
    name = data.get("name", Path(source).stem)
    if not isinstance(name, str):
        raise PlanError(f"{source}: `name` must be a string")
    defaults = {k: data[k] for k in _SUITE_KEYS - {"ref"} if k in data}
    suites: list[SuitePlan] = []
    for ref in _as_list(data.get("suites", []), "suites", source):
        for r in _suite_ref(ref, base, source):
            suites.append(SuitePlan(ref=r, **_axes({}, defaults, f"{source}: suite {ref}")))
    extra = data.get("suite", [])
    if not isinstance(extra, list) or not all(isinstance(t, dict) for t in extra):
        raise PlanError(f"{source}: `[[suite]]` entries must be tables")
    for i, table in enumerate(extra):
        bad = sorted(set(table) - _SUITE_KEYS)
        if bad:
            raise PlanError(
                f"{source}: [[suite]] #{i + 1}: unknown key {bad[0]!r} (keys: {', '.join(sorted(_SUITE_KEYS))})"
            )
        if "ref" not in table:
            raise PlanError(f"{source}: [[suite]] #{i + 1} has no `ref` (a built-in name or a suite file)")
        for r in _suite_ref(table["ref"], base, source):
            suites.append(SuitePlan(ref=r, **_axes(table, defaults, f"{source}: suite {table['ref']}")))
    if not suites:
        raise PlanError(f'{source}: the plan names no suite (`suites = ["builtin"]` or [[suite]] tables)')
    reports = data.get("reports", True)
    if not isinstance(reports, bool):
        raise PlanError(f"{source}: `reports` must be true or false")
    return Plan(name=name, suites=suites, reports=reports, source=source)


def load_plan(path: str | Path) -> Plan:
    """Read a TOML plan file (:func:`parse_plan`).

    :raises PlanError: a missing or malformed file (with the TOML parser's line and column).
    """
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise PlanError(f"cannot read plan {p}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise PlanError(f"{p}: not a UTF-8 text file") from None
    except tomllib.TOMLDecodeError as e:
        raise PlanError(f"{p}: not valid TOML: {e}") from None
    return parse_plan(data, p.resolve().parent, str(p))


def config_count(suite: Any) -> int:
    """Number of autotune configs of a suite: its own list, else the largest ``triton.autotune`` list of its
    kernels (the rule ``irdiff compare --all-configs`` uses); 0 when it has none."""
    n = len(suite.configs)
    if n == 0:
        for v in suite.variants.values():
            n = max(n, len(getattr(v.kernel, "configs", []) or []))
    return n


def expand(plan: Plan) -> Expansion:
    """The plan's compile and diagnosis jobs, deduplicated, in plan order.

    :raises PlanError: an unknown suite or variant, a config index the suite does not have.
    """
    from irdiff.suite import SuiteError, load_suite

    out = Expansion()
    seen_c: dict[str, CompileJob] = {}
    seen_d: set[str] = set()

    def add(job: CompileJob) -> CompileJob:
        return seen_c.setdefault(job.id, job)

    for sp in plan.suites:
        try:
            suite = load_suite(sp.ref)
        except SuiteError as e:
            raise PlanError(str(e)) from None
        n = config_count(suite)
        if sp.configs == "all":
            configs: list[int | None] = list(range(n)) if n else [None]
        elif sp.configs == "default":
            configs = [None]
        else:
            bad = [c for c in sp.configs if c >= max(n, 1)]
            if bad:
                raise PlanError(f"suite {suite.name}: no autotune config {bad[0]} (it has {n or 1})")
            configs = list(sp.configs)
        if sp.pairs == "default":
            pairs = [suite.pair(None, None)]
        elif sp.pairs == "self":
            pairs = [(v, v) for v in suite.variants]
        else:
            pairs = list(sp.pairs)
        for a, b in pairs:
            for name in (a, b):
                try:
                    suite.variant(name)
                except SuiteError as e:
                    raise PlanError(str(e)) from None
        ref = sp.ref
        for a, b in pairs:
            for target in sp.targets:
                for triton in sp.triton:
                    for config in configs:
                        for shape in sp.shapes:
                            ja = CompileJob(ref, a, target, triton, config, shape)
                            if sp.pairs == "self":
                                axis = sp.triton if sp.across == "triton" else sp.targets
                                base_value = axis[0]
                                if (triton if sp.across == "triton" else target) == base_value:
                                    continue  # the baseline itself: no row
                                jb = (
                                    CompileJob(ref, b, target, base_value, config, shape)
                                    if sp.across == "triton"
                                    else CompileJob(ref, b, str(base_value), triton, config, shape)
                                )
                            else:
                                jb = CompileJob(ref, b, target, triton, config, shape)
                            d = DiagnosisJob(add(ja), add(jb))
                            if d.id not in seen_d:
                                seen_d.add(d.id)
                                out.diagnosis_jobs.append(d)
    out.compile_jobs = list(seen_c.values())
    return out
