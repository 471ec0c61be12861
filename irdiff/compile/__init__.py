"""Compile driver: suite variants → a bundle holding every stage, for any target, without a GPU.

Each variant is compiled by :mod:`irdiff.compile.worker` in its own Python process (Triton's global state must
not leak between variants), several at once up to the number of cores. Results are cached under
``$IRDIFF_CACHE_DIR`` (default ``~/.cache/irdiff``) keyed by the request, the suite file, irdiff's compile
sources (:data:`COMPILE_SOURCES`), the Triton version and the ``TRITON_*`` environment; Triton's own cache (``TRITON_CACHE_DIR``) is shared too.

Each side of a comparison carries its own settings (:class:`Side`: target, Triton release or local build, compile
environment), taken from the suite's :class:`~irdiff.suite.Variant` and overridden from the command line. A side
whose Triton is not the installed one compiles in that release's environment (:mod:`irdiff.compile.envs`).

A request whose every job is cached and whose files are unchanged is planned from the warm index
(:mod:`irdiff.compile.warm`) without loading the suite, so a warm main job imports neither Triton nor torch.

Size: over 800 lines because the request checks, the two plans (warm index or loaded suite), the cache keys and the
locked, atomic bundle writes share the request's resolved sides and jobs; splitting them would pass that state
between modules.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import importlib.util
import inspect
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irdiff.bundle import (
    Bundle,
    BundleError,
    VariantResult,
    atomic_write,
    bundle_lock,
    copy_variant,
    install_dir,
    load_bundle,
    load_variant_dir,
    reclaim_temporaries,
    remove_path,
    tmp_dir_in,
    variant_dirname,
)
from irdiff.compile.compat import check_triton
from irdiff.compile.envs import EnvError, TritonEnv, resolve_env
from irdiff.interrupt import thread_map
from irdiff.suite import _BUILTINS, SuiteError
from irdiff.target import SUPPORTED_NAMES, TargetError, parse_target

if TYPE_CHECKING:
    import subprocess

__all__ = [
    "CompileRequest",
    "Side",
    "cache_dir",
    "cached_variant",
    "compile_bundle",
    "compile_sources_digest",
    "parse_config_option",
    "side_names",
    "target_default",
    "variant_cache_key",
]

SUPPORTED_TARGETS = SUPPORTED_NAMES  # declared in irdiff.target


@dataclass
class Side:
    """One compiled column: a suite variant plus settings that override the variant's own (None: keep).

    :ivar variant: the suite's variant name.
    :ivar target: GPU target (``sm80``).
    :ivar triton: Triton release (``3.6.0``); another than the installed one compiles in its own environment.
    :ivar triton_path: a local Triton (venv, python or build dir; see :func:`irdiff.compile.envs.local_env`).
    :ivar env: extra environment variables for this side's compile process (added to the variant's).
    :ivar name: the name in the bundle (default: the variant name; see :func:`side_names`).
    """

    variant: str
    target: str | None = None
    triton: str | None = None
    triton_path: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    name: str = ""


def side_names(sides: list[Side]) -> list[str]:
    """Bundle names for ``sides``: the variant name, or ``variant@<what differs>`` (``annotated@sm80``,
    ``annotated@triton-3.6.0``) when one variant appears on several sides with other settings."""
    out = []
    for s in sides:
        if s.name:
            out.append(s.name)
            continue
        same = [o for o in sides if o.variant == s.variant and not o.name]
        if len(same) < 2:
            out.append(s.variant)
            continue
        bits = []
        if len({o.target for o in same}) > 1 and s.target:
            bits.append(s.target)
        if len({o.triton for o in same}) > 1 and s.triton:
            bits.append(f"triton-{s.triton}")
        if len({o.triton_path for o in same}) > 1 and s.triton_path:
            bits.append("local-" + Path(s.triton_path).name)
        if len({json.dumps(o.env, sort_keys=True) for o in same}) > 1:
            bits += [f"{k}-{v}" for k, v in sorted(s.env.items())] or ["default-env"]
        if not bits:  # the same variant with the same settings: one column
            out.append(s.variant)
            continue
        label = "+".join(bits)
        out.append(s.variant + "@" + "".join(c if c.isalnum() or c in "._-+" else "_" for c in label)[:80])
    return out


@dataclass
class CompileRequest:
    """What to compile: suite reference, variant names, target (``sm90``), autotune config selector
    (None = the suite's default, an index, or ``{"BLOCK_SIZE_M": 128}``; ``"all"`` = every config),
    shape overrides, and whether to capture per-pass MLIR snapshots.

    ``sides`` (when given) replaces ``variants``: each :class:`Side` may override target, Triton and environment.
    ``triton``/``triton_path`` are the defaults for every side (None: the installed Triton)."""

    suite: str
    variants: list[str]
    target: str
    config: Any = None
    shape: dict[str, int] = field(default_factory=dict)
    passes: bool = False
    use_cache: bool = True
    jobs: int = 0
    sides: list[Side] = field(default_factory=list)
    triton: str | None = None
    triton_path: str | None = None


def cache_dir() -> Path:
    """irdiff's cache root: ``$IRDIFF_CACHE_DIR`` or ``~/.cache/irdiff``."""
    return Path(os.environ.get("IRDIFF_CACHE_DIR") or Path.home() / ".cache" / "irdiff")


def local_gpu_capability() -> tuple[int, int] | None:
    """Compute capability of CUDA device 0 through the driver API (``libcuda``), or None without a GPU.

    Uses ``cuInit``/``cuDeviceGetAttribute`` via ctypes: fast, and no torch import on the hot path.
    """
    import ctypes

    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    dev, major, minor, count = ctypes.c_int(), ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
        return None
    if cuda.cuDeviceGet(ctypes.byref(dev), 0) != 0:
        return None
    # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, _MINOR = 76 (cuda.h)
    if cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, dev) or cuda.cuDeviceGetAttribute(
        ctypes.byref(minor), 76, dev
    ):
        return None
    return major.value, minor.value


def target_default() -> str:
    """The local GPU's target (``sm90`` on an H100/H200) if a CUDA device is present, else ``sm90``."""
    if os.environ.get("IRDIFF_NO_GPU_PROBE") == "1":
        return "sm90"
    cap = local_gpu_capability()
    if cap is None:
        return "sm90"
    name = f"sm{cap[0]}{cap[1]}"
    return name if name in SUPPORTED_TARGETS else "sm90"


def parse_config_option(text: str | None) -> Any:
    """``--config`` value: ``None``, ``"3"`` → 3, ``"BLOCK_SIZE_M=128,num_warps=8"`` → dict.

    :raises ValueError: malformed ``KEY=VALUE`` list.
    """
    if text is None or text == "":
        return None
    if text.isdigit():
        return int(text)
    out: dict[str, Any] = {}
    for part in text.split(","):
        key, eq, val = part.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"--config {text!r}: expected an index or KEY=VALUE[,KEY=VALUE...]")
        v = val.strip()
        out[key.strip()] = int(v) if v.lstrip("-").isdigit() else v
    return out


def _suite_file(ref: str) -> Path | None:
    if ref in _BUILTINS:
        spec = importlib.util.find_spec(_BUILTINS[ref][0])
        return Path(spec.origin) if spec and spec.origin else None
    path = ref.partition("::")[0]
    return Path(path) if os.path.isfile(path) else None


# The irdiff modules a compiled variant's contents depend on: the compile package and what its worker imports
# (``tests/test_reliability.py`` checks that the worker imports nothing else of irdiff). Renderers, normalizers and
# diagnostics run on the stored stages afresh, so editing them must not invalidate every compiled variant.
COMPILE_SOURCES = ("compile", "__init__.py", "bundle.py", "interrupt.py", "stages.py", "suite.py", "target.py")


def compile_sources_digest() -> str:
    """sha256 over the files named by :data:`COMPILE_SOURCES` (a package name means every ``.py`` under it)."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent
    for name in COMPILE_SOURCES:
        path = root / name
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for p in files:
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


# Environment the compile result depends on beyond Triton's own cache-invalidating list: the NVIDIA tools the
# backend runs (``triton/knobs.py: nvidia``) and irdiff's worker defaults. TRITON_CACHE_DIR and other knobs that
# do not change the output are deliberately not part of the key.
_TOOL_ENV = (
    "TRITON_PTXAS_PATH",
    "TRITON_PTXAS_BLACKWELL_PATH",
    "TRITON_CUOBJDUMP_PATH",
    "TRITON_NVDISASM_PATH",
    "PTXAS_OPTIONS",
    "DISABLE_PTXAS_OPT",
    "TRITON_DEFAULT_FP_FUSION",
)


def relevant_env() -> dict[str, str]:
    """The environment a compile result depends on: Triton's cache-invalidating variables that are set
    (``triton._C.libtriton.get_cache_invalidating_env_vars``, the list Triton keys its own cache on,
    ``include/triton/Tools/Sys/GetEnv.h``) plus the NVIDIA tool paths/options (:data:`_TOOL_ENV`)."""
    env: dict[str, str] = {}
    try:
        from triton._C.libtriton import get_cache_invalidating_env_vars

        env.update({str(k): str(v) for k, v in get_cache_invalidating_env_vars().items()})
    except ImportError:  # pragma: no cover - Triton without the function: the well-known debug variables
        env.update({k: v for k, v in os.environ.items() if k.startswith(("MLIR_", "LLVM_", "TRITON_ENABLE"))})
    env.update({k: os.environ[k] for k in _TOOL_ENV if k in os.environ})
    return env


def _triton_identity(triton_version: str) -> str:
    """Triton's version plus where it is installed and its native library's size and mtime (a rebuilt or other
    install of the same version is another compiler), without hashing the library itself."""
    try:
        import triton

        root = Path(triton.__file__).resolve().parent
        libs = sorted((root / "_C").glob("libtriton*"))
        st = libs[0].stat() if libs else None
        return f"{triton_version}|{root}|{st.st_size if st else 0}|{st.st_mtime_ns if st else 0}"
    except (ImportError, OSError):
        return triton_version


def variant_cache_key(
    suite: Any, r: dict[str, Any], triton_version: str, src_digest: str, identity: str | None = None
) -> str:
    """Cache key of one compile request ``r`` (``suite``, ``variant``, ``target``, ``config``, ``shape``,
    ``passes``): what the JIT itself keys a compile on, plus what irdiff records.

    * the kernel's ``JITFunction.cache_key`` (``triton/runtime/jit.py``: its source, start line, every ``@jit``
      function it calls — in whatever module — and the constexpr globals it reads), and the whole text of the file
      that defines it (the ``python`` stage irdiff stores);
    * the launch: example arguments as the suite builds them (dtype, shape, strides, alignment, scalar values)
      and the resolved constexprs and options (config, ``Derived`` values for the target) — the inputs of the
      specialization;
    * target, request (``passes``), Triton version and install (:func:`_triton_identity`), the relevant
      environment (:func:`relevant_env`), the suite file's text and irdiff's compile sources (:data:`COMPILE_SOURCES`). ``identity`` replaces
      the installed Triton's identity for a job that runs in another Triton environment (its version, python and
      path); the job's own compile environment (``r["env"]``) is part of ``r``.
    """
    from irdiff.compile.compat import base_jit_function
    from irdiff.compile.worker import resolve_launch

    h = hashlib.sha256()
    h.update(json.dumps(r, sort_keys=True, default=str).encode())
    jit_fn, values, kwargs = resolve_launch(suite, r)
    h.update(str(base_jit_function(jit_fn).cache_key).encode())
    try:
        src = inspect.getsourcefile(jit_fn.fn)
        if src and os.path.isfile(src):
            h.update(Path(src).read_bytes())
    except (TypeError, OSError):
        pass
    h.update(json.dumps([values, kwargs], sort_keys=True, default=repr).encode())
    h.update((identity or _triton_identity(triton_version)).encode())
    h.update(src_digest.encode())
    suite_file = _suite_file(r["suite"])
    if suite_file is not None:
        h.update(suite_file.read_bytes())
    h.update(json.dumps(relevant_env(), sort_keys=True).encode())
    return h.hexdigest()[:32]


class _Workers:
    """Compile worker processes in flight. Each runs in its own session (a terminal's Ctrl-C reaches irdiff
    only, which then stops them as a group) and dies with irdiff even on ``kill -9`` (``PR_SET_PDEATHSIG`` in
    :func:`irdiff.compile.worker.die_with_parent`)."""

    def __init__(self) -> None:
        self.procs: set[subprocess.Popen[str]] = set()
        self.lock = threading.Lock()
        self.cancelled = threading.Event()

    def add(self, p: subprocess.Popen[str]) -> None:
        with self.lock:
            self.procs.add(p)

    def discard(self, p: subprocess.Popen[str]) -> None:
        with self.lock:
            self.procs.discard(p)

    def kill_all(self) -> None:
        """SIGKILL every worker's process group (the worker and anything it started: ptxas, nvdisasm)."""
        self.cancelled.set()
        with self.lock:
            procs = list(self.procs)
        for p in procs:
            with contextlib.suppress(OSError):
                os.killpg(p.pid, signal.SIGKILL)
        for p in procs:
            with contextlib.suppress(Exception):
                p.wait(timeout=10)


class Cancelled(Exception):
    """The compile was interrupted; nothing of this job was written."""


def _run_worker(req: dict[str, Any], workers: _Workers | None = None, tenv: TritonEnv | None = None) -> VariantResult:
    """Run the compile worker for one request in the Triton environment ``tenv`` (default: this python)."""
    out = Path(req["out"])
    out.mkdir(parents=True, exist_ok=True)
    req_file = out / "request.json"
    req_file.write_text(json.dumps(req, default=str))
    env = dict(os.environ)
    pkg_root = str(Path(__file__).resolve().parent.parent.parent)
    paths = [pkg_root, *([tenv.pythonpath] if tenv and tenv.pythonpath else [])]
    env["PYTHONPATH"] = os.pathsep.join([*paths, *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    if tenv is not None and tenv.kind != "current":
        env.pop("VIRTUAL_ENV", None)
    env["IRDIFF_PARENT_PID"] = str(os.getpid())
    workers = workers or _Workers()
    if workers.cancelled.is_set():
        raise Cancelled()
    import subprocess  # not at import time: a warm run compiles nothing

    proc = subprocess.Popen(
        [tenv.python if tenv else sys.executable, "-m", "irdiff.compile.worker", str(req_file)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    workers.add(proc)
    try:
        stdout, stderr = proc.communicate()
    finally:
        workers.discard(proc)
    if workers.cancelled.is_set():
        raise Cancelled()
    req_file.unlink(missing_ok=True)
    from irdiff.compile.worker import finish_pass_dump

    finish_pass_dump(out)  # the worker has exited: Triton's MLIR dump is flushed only at its exit
    try:
        return load_variant_dir(out)
    except BundleError:
        tail = (stderr or stdout).strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        return VariantResult(name=req["variant"], target=req["target"], directory=str(out), error=tail[0])


def _config_count(suite: Any) -> int:
    """Number of autotune configs of a suite (its own, else the largest ``triton.autotune`` list of its kernels)."""
    n = len(suite.configs)
    if n == 0:
        for v in suite.variants.values():
            n = max(n, len(getattr(v.kernel, "configs", []) or []))
    return n


def _resolve_sides(req: CompileRequest, suite: Any) -> list[tuple[str, Side, dict[str, Any]]]:
    """``[(bundle name, side, settings)]``: each side's settings from its suite variant, then the side's
    overrides, then the request's defaults. ``settings`` holds ``target``, ``triton``, ``triton_path``, ``env``."""
    sides = req.sides or [Side(v) for v in req.variants]
    out = []
    for name, side in zip(side_names(sides), sides):
        v = suite.variant(side.variant)
        target = normalize_target(side.target or getattr(v, "target", None) or req.target)
        env = {**dict(getattr(v, "env", {}) or {}), **side.env}
        triton = side.triton or getattr(v, "triton", None) or req.triton
        path = side.triton_path or (None if side.triton or getattr(v, "triton", None) else req.triton_path)
        out.append((name, side, {"target": target, "triton": triton, "triton_path": path, "env": env}))
    seen: dict[str, str] = {}
    for name, _side, settings in out:
        key = json.dumps(settings, sort_keys=True)
        if seen.get(name, key) != key:
            raise SuiteError(f"two sides are both called {name!r} with different settings")
        seen[name] = key
    return out


_Plan = tuple[str, dict[str, int], list[tuple[str, dict[str, Any]]], dict[str, TritonEnv], dict[str, dict[str, Any]],
              dict[str, str], str, bool]  # fmt: skip


def _jobs(
    req: CompileRequest,
    resolved: list[tuple[str, Side, dict[str, Any]]],
    tenvs: dict[tuple[str | None, str | None], TritonEnv],
    configs: list[Any],
) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, TritonEnv], dict[str, dict[str, Any]]]:
    """One compile job per side and config: its bundle name, request, Triton environment and recorded settings."""
    jobs: list[tuple[str, dict[str, Any]]] = []
    job_env: dict[str, TritonEnv] = {}
    job_settings: dict[str, dict[str, Any]] = {}
    for name, side, st in resolved:
        tenv = tenvs[(st["triton"], st["triton_path"])]
        for c in configs:
            job_name = name if req.config != "all" else f"{name}@{c}"
            r: dict[str, Any] = {
                "suite": req.suite,
                "variant": side.variant,
                "target": st["target"],
                "config": c,
                "shape": req.shape,
                "passes": req.passes,
            }
            if st["env"]:
                r["env"] = st["env"]
            jobs.append((job_name, r))
            job_env[job_name] = tenv
            job_settings[job_name] = {
                "variant": side.variant,
                "target": st["target"],
                "triton": tenv.version,
                "triton_source": tenv.describe(),
                "env": st["env"],
            }

    return jobs, job_env, job_settings


def _cold_plan(req: CompileRequest, src_digest: str, echo: Any) -> _Plan:
    """Load the suite (importing Triton), check the request against it and compute every job's full cache key
    (:func:`variant_cache_key`); record the keys and the suite's summary in the warm index
    (:mod:`irdiff.compile.warm`) so that the next identical run need not load the suite."""
    from irdiff.compile.worker import select_config
    from irdiff.suite import load_suite

    suite = load_suite(req.suite)
    if not req.sides:
        req.variants = list(dict.fromkeys(req.variants))  # the same variant twice is compiled once
    names = [s.variant for s in req.sides] or req.variants
    for v in names:
        suite.variant(v)
    unknown = [k for k in req.shape if k not in suite.shape]
    if unknown:
        raise SuiteError(
            f"--shape {unknown[0]}: suite {suite.name!r} has no size {unknown[0]!r}"
            f" (its shape: {', '.join(f'{k}={v}' for k, v in suite.shape.items()) or 'none'})"
        )
    if req.config != "all":
        for v in names:
            select_config(suite, suite.variant(v).kernel, req.config)  # raises ValueError for a bad --config
    resolved = _resolve_sides(req, suite)
    tenvs: dict[tuple[str | None, str | None], TritonEnv] = {}
    for _name, _side, st in resolved:
        tkey = (st["triton"], st["triton_path"])
        if tkey not in tenvs:
            try:
                tenvs[tkey] = resolve_env(st["triton"], st["triton_path"], echo=echo)
            except EnvError as e:
                raise SuiteError(str(e)) from None
            if tenvs[tkey].kind == "current":
                check_triton()
    versions = sorted({t.version for t in tenvs.values()})
    tv = ", ".join(versions)
    explicit = any(st["triton"] or st["triton_path"] for _n, _s, st in resolved)

    configs: list[Any] = [req.config]
    if req.config == "all":
        n = _config_count(suite)
        configs = list(range(n)) if n else [None]
    jobs, job_env, job_settings = _jobs(req, resolved, tenvs, configs)
    keys = {
        name: variant_cache_key(
            suite,
            r,
            job_env[name].version,
            src_digest,
            None
            if job_env[name].kind == "current"
            else f"{job_env[name].version}|{job_env[name].python}|{job_env[name].pythonpath}",
        )
        for name, r in jobs
    }
    _record_warm(req, suite, jobs, job_env, keys, src_digest)
    return suite.name, dict(suite.shape), jobs, job_env, job_settings, keys, tv, explicit


def _kernel_files(suite: Any, names: list[str]) -> list[str]:
    """Source files of the variants' kernels and of the ``@jit`` functions they call (any module)."""
    from irdiff.compile.compat import base_jit_function
    from irdiff.compile.worker import called_jit_functions

    files: set[str] = set()
    for n in names:
        with contextlib.suppress(Exception):
            fn = base_jit_function(suite.variant(n).kernel)
            src = inspect.getsourcefile(fn.fn)
            if src:
                files.add(src)
            files.update(str(f["file"]) for f in called_jit_functions(fn).values() if f.get("file"))
    return sorted(files)


def _record_warm(
    req: CompileRequest,
    suite: Any,
    jobs: list[tuple[str, dict[str, Any]]],
    job_env: dict[str, TritonEnv],
    keys: dict[str, str],
    src_digest: str,
) -> None:
    """Record each job's full key under its fast key, and the suite's summary (jobs in the installed Triton only:
    another environment's identity is not known without starting its python). The index only saves time: a suite
    it cannot describe (values that are not JSON) or a cache it cannot write is skipped."""
    with contextlib.suppress(Exception):
        _record_warm_entries(req, suite, jobs, job_env, keys, src_digest)


def _record_warm_entries(
    req: CompileRequest,
    suite: Any,
    jobs: list[tuple[str, dict[str, Any]]],
    job_env: dict[str, TritonEnv],
    keys: dict[str, str],
    src_digest: str,
) -> None:
    from irdiff.compile import warm

    cache = cache_dir()
    deps = warm.dependencies(_suite_file(req.suite), _kernel_files(suite, sorted({r["variant"] for _, r in jobs})))
    warm.record_summary(cache, req.suite, src_digest, warm.summarize(suite), deps)
    for name, r in jobs:
        tenv = job_env[name]
        if tenv.kind == "current":
            fkey = warm.fast_key(r, warm.triton_identity(tenv.version), src_digest, req.suite)
            warm.record_key(cache, fkey, keys[name], deps)


def _warm_plan(req: CompileRequest, src_digest: str) -> _Plan | None:
    """The plan of a request whose every job is in the warm index with unchanged files (no suite import), or None
    (then :func:`_cold_plan` checks the request and computes the keys)."""
    from irdiff.compile import warm
    from irdiff.compile.envs import current_env

    cache = cache_dir()
    summary = warm.lookup_summary(cache, req.suite, src_digest)
    if summary is None:
        return None
    names = [s.variant for s in req.sides] or req.variants
    if any(n not in summary.variants for n in names) or any(k not in summary.shape for k in req.shape):
        return None  # the cold path says what is wrong
    if not req.sides:
        req.variants = list(dict.fromkeys(req.variants))
    resolved = _resolve_sides(req, summary)
    if any(st["triton"] or st["triton_path"] for _n, _s, st in resolved):
        return None  # another Triton: its environment is resolved (and its identity read) the usual way
    tenv = current_env()
    if not tenv.version:
        return None
    tenvs: dict[tuple[str | None, str | None], TritonEnv] = {(None, None): tenv}
    jobs, job_env, job_settings = _jobs(req, resolved, tenvs, [req.config])
    identity = warm.triton_identity(tenv.version)
    keys: dict[str, str] = {}
    for name, r in jobs:
        key = warm.lookup_key(cache, warm.fast_key(r, identity, src_digest, req.suite))
        if key is None:
            return None
        keys[name] = key
    return summary.name, dict(summary.shape), jobs, job_env, job_settings, keys, tenv.version, False


def validation_memo() -> Path:
    """``<cache>/validated``: markers of bundle records already validated (see :func:`irdiff.bundle.read_record`)."""
    return cache_dir() / "validated"


def cached_variant(where: Path, key: str) -> VariantResult | None:
    """The compile stored in ``where`` (a variant directory: a bundle's or ``<cache>/results/<key>``) when it is a
    complete, error-free record of cache key ``key``; None otherwise (missing, unreadable, another key, an error)."""
    try:
        res = load_variant_dir(where, validation_memo())
    except BundleError:
        return None
    return res if res.metadata.get("cache_key") == key and not res.error else None


def compile_bundle(
    req: CompileRequest,
    save: str | os.PathLike[str] | None,
    command: list[str],
    progress: Callable[[str, str], None] | None = None,
    echo: Any = None,
) -> Bundle:
    """Compile every requested variant (or side) and write (or extend) a bundle directory.

    :param progress: called from the compile threads as ``progress(variant, event)`` with event ``"compiling"``
        (a worker started), ``"cached"`` (taken from irdiff's cache, nothing compiled), ``"done"`` or ``"failed"``.

    :param save: bundle directory; None → ``<cache>/bundles/<suite>-<target>-<hash>``. An existing directory that is
        not an irdiff bundle and not empty is refused (nothing the user made is overwritten).
    :param echo: told (one line) when a Triton environment is created on first use.
    :raises SuiteError: unknown suite/variant (checked before any compile), bad target or config, or another
        Triton release's environment that cannot be created.
    :raises UnsupportedTriton: the installed Triton is missing or too old (only when a side uses it).
    :returns: the bundle; variants that failed to compile carry ``error`` and the others are kept. Each variant's
        ``settings`` records its suite variant, target, Triton version and source, ptxas version and compile
        environment.
    """
    req.target = normalize_target(req.target)
    src_digest = compile_sources_digest()
    plan = _warm_plan(req, src_digest) if req.use_cache and req.config != "all" else None
    if plan is None:
        plan = _cold_plan(req, src_digest, echo)
    suite_name, suite_shape, jobs, job_env, job_settings, keys, tv, explicit = plan
    root = Path(save) if save else default_bundle_dir(suite_name, req, tv)

    results_root = cache_dir() / "results"
    results_root.mkdir(parents=True, exist_ok=True)
    reclaim_temporaries(results_root)
    workers = _Workers()

    untouched: list[str] = []  # variants the bundle already held as asked: a run of only these writes nothing

    def finish(name: str, res: VariantResult, dest: Path) -> VariantResult:
        res.name = name
        res.directory = str(dest)
        res.settings = {**job_settings[name], "ptxas": res.resources.ptxas_version}
        if res.metadata.get("triton_version"):
            res.settings["triton"] = str(res.metadata["triton_version"])
        return res

    if req.use_cache:
        ready = _bundled(root, suite_name, req.target, tv, explicit, [(n, keys[n]) for n, _r in jobs])
        if ready is not None:  # every job already in the bundle: nothing to write, so no lock is taken
            for name, _r in jobs:
                res = ready.variants[name]
                res.cache_hit = True
                if progress is not None:
                    progress(name, "cached")
                ready.variants[name] = finish(name, res, root / variant_dirname(name))
            return ready

    def one(job: tuple[str, dict[str, Any]]) -> VariantResult:
        name, r = job
        key = keys[name]
        dest = root / variant_dirname(name)
        cached = results_root / key
        res: VariantResult | None = None
        if req.use_cache:
            res = cached_variant(dest, key)  # the bundle already holds this very compile: nothing to write
            if res is not None:
                untouched.append(name)
            if res is None and cached_variant(cached, key) is not None:
                try:
                    res = copy_variant(load_variant_dir(cached, validation_memo()), dest)
                except (OSError, BundleError):  # the entry vanished meanwhile (another run's --no-cache): compile
                    res = None
            if res is not None:
                res.cache_hit = True
                if progress is not None:
                    progress(name, "cached")
        if res is None:
            if workers.cancelled.is_set():
                raise Cancelled()
            if progress is not None:
                progress(name, "compiling")
            tmp = tmp_dir_in(results_root, name)
            try:
                res = _run_worker({**r, "out": str(tmp)}, workers, job_env[name])
                res.metadata["cache_key"] = key
                atomic_write(tmp / "variant.json", json.dumps(res.to_json(), indent=1, default=str))
                if res.error is None:
                    copy_variant(res, dest)
                    try:
                        os.rename(tmp, cached)
                    except OSError:  # stored already (another process, or --no-cache): refresh it in one step
                        install_dir(tmp, cached)
                else:
                    install_dir(tmp, dest)  # failures are not cached: they are compiled again next time
            finally:
                remove_path(tmp)
            res = load_variant_dir(dest, validation_memo())
            if progress is not None:
                progress(name, "failed" if res.error else "done")
        return finish(name, res, dest)

    with bundle_lock(root):
        existed = (root / "manifest.json").is_file()
        # a directory this run makes (or, in irdiff's own cache, one without a manifest) is removed again when the
        # run is interrupted before its manifest is written: a first compile stopped by Ctrl-C leaves nothing
        ours = not root.exists() or (save is None and not existed and not root.is_symlink())
        try:
            bundle = _open_bundle_dir(
                root, suite_name, req.target, tv, is_default=save is None, allow_other_triton=explicit
            )
            reclaim_temporaries(root)
            n_jobs = req.jobs or max(1, min(len(jobs), os.cpu_count() or 1))
            # Ctrl-C, SIGTERM, or an error: every worker is stopped and every started job has removed its
            # temporary before this raises; nothing more is written
            for res in thread_map(one, jobs, n_jobs, stop=workers.kill_all):
                bundle.variants[res.name] = res

            if existed and len(untouched) == len(jobs):
                # Nothing new (``irdiff show``, a repeated command): the manifest keeps the command that made it.
                return bundle
            used = {str(v.settings.get("triton") or "") for v in bundle.variants.values() if v.settings}
            bundle.triton_version = ", ".join(sorted(x for x in used if x)) or tv
            ptxas = {v.resources.ptxas_version for v in bundle.variants.values() if v.resources.ptxas_version}
            bundle.ptxas_version = ", ".join(sorted(ptxas))
            bundle.command = command
            bundle.created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
            bundle.shape = {**suite_shape, **req.shape}
            bundle.save(validation_memo())  # the records written are remembered as valid: a warm run reads them
        except BaseException:
            if ours and not (root / "manifest.json").is_file():
                remove_path(root)  # interrupted before its manifest: no bundle directory without one is left
            raise
    return bundle


def suite_summary(ref: str) -> Any:
    """What the command line reads of suite ``ref`` before compiling (variant names and settings, default pair,
    shape): the warm index's :class:`~irdiff.compile.warm.SuiteSummary` when the files it was loaded from are
    unchanged (no import of the suite, Triton or torch), else the loaded :class:`~irdiff.suite.Suite` itself.

    :raises SuiteError: as :func:`irdiff.suite.load_suite`.
    """
    from irdiff.compile import warm
    from irdiff.suite import load_suite

    found = warm.lookup_summary(cache_dir(), ref, compile_sources_digest())
    return found if found is not None else load_suite(ref)


def normalize_target(name: str) -> str:
    """``sm_90``, ``sm90a``, ``SM90``, ``90``, ``cuda:90`` → ``sm90`` (:func:`irdiff.target.parse_target`).

    :raises SuiteError: not one of :data:`SUPPORTED_TARGETS` (the message lists them).
    """
    try:
        return parse_target(name).name
    except TargetError as e:
        raise SuiteError(str(e)) from None


def _own_settings(s: Side, req: CompileRequest) -> bool:
    """A side whose settings differ from the request's defaults (target, Triton, environment, name)."""
    try:
        own_target = bool(s.target) and normalize_target(s.target or "") != req.target
    except SuiteError:
        own_target = True
    return (
        own_target
        or bool(s.triton and s.triton != req.triton)
        or bool(s.triton_path and s.triton_path != req.triton_path)
        or bool(s.env)
        or bool(s.name and s.name != s.variant)
    )


def default_bundle_dir(suite_name: str, req: CompileRequest, triton_version: str = "") -> Path:
    """``<cache>/bundles/<suite>-<target>-<hash>``: one directory per suite file, shape, config, dump choice and
    Triton version, so runs with other sizes, another file of the same suite name or another Triton do not replace
    or mix with each other's bundle."""
    ref = req.suite
    path = _suite_file(ref)
    ident = json.dumps(
        [str(path.resolve()) if path else ref, req.shape, req.config, req.passes, triton_version]
        + [  # sides with settings of their own get their own bundle; plain variant names share the default one
            [s.variant, s.target, s.triton, s.triton_path, s.env, s.name] for s in req.sides if _own_settings(s, req)
        ],
        sort_keys=True,
        default=str,
    )
    return cache_dir() / "bundles" / f"{suite_name}-{req.target}-{hashlib.sha256(ident.encode()).hexdigest()[:8]}"


def _ensure(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p


_LEFTOVER_FILES = {"request.json", "variant.json", "stdout.log", "stderr.log"}


def _irdiff_leftover(root: Path) -> bool:
    """Whether a directory without a manifest holds only what an interrupted irdiff writer leaves: temporaries
    (``.tmp-*``), lock files, variant directories (``variant.json``, ``request.json``, stage files) — nothing of
    the user's."""
    for e in root.iterdir():
        if e.name.startswith((".tmp-", "irdiff-")) or e.name.endswith(".lock"):
            continue
        if e.is_symlink() or not e.is_dir():
            return False
        names = {c.name for c in e.iterdir()}
        if names and not (names & _LEFTOVER_FILES):
            return False
    return True


def _bundled(
    root: Path, suite: str, target: str, triton_version: str, allow_other_triton: bool, jobs: list[tuple[str, str]]
) -> Bundle | None:
    """The bundle in ``root`` when it already holds every job ``(variant, cache key)`` as an error-free compile of
    that key and :func:`_open_bundle_dir` would accept it; None otherwise (then the locked path decides).

    Read without :func:`~irdiff.bundle.bundle_lock`, as every bundle reader does: a writer replaces a variant
    directory and then the manifest, each in one step, so this sees a complete old or new bundle."""
    if root.is_symlink() or not (root / "manifest.json").is_file():
        return None
    try:
        b = load_bundle(root, validation_memo())
    except BundleError:
        return None
    same_version = b.triton_version in ("", triton_version)
    self_described = allow_other_triton and bool(b.variants) and all(v.settings for v in b.variants.values())
    if b.suite != suite or b.target != target or not (same_version or self_described):
        return None
    for name, key in jobs:
        v = b.variants.get(name)
        if v is None or v.metadata.get("cache_key") != key or v.error:
            return None
    return b


def _open_bundle_dir(
    root: Path, suite: str, target: str, triton_version: str, is_default: bool = False, allow_other_triton: bool = False
) -> Bundle:
    """The bundle to add variants to (called under :func:`~irdiff.bundle.bundle_lock`): a new one, or the one
    already in ``root`` when it is for the same suite, target and Triton version (variants of one bundle are
    always comparable). With ``allow_other_triton`` (the request names its Triton releases, e.g. ``irdiff
    bisect``), a bundle whose variants all record their own settings may gain variants of another release: each
    side's version stays named.

    A bundle directory that an interrupted run left without its manifest (or with a broken one) is reclaimed: in
    irdiff's own cache always, in a ``--save`` directory when it holds nothing but irdiff's leftovers. A user's
    directory with other contents is refused, as is another suite's bundle.
    """
    if root.is_symlink():
        raise SuiteError(f"{root} is a symbolic link; give the bundle directory itself")
    if (root / "manifest.json").is_file():
        try:
            existing = load_bundle(root, validation_memo())
        except BundleError as e:
            if not is_default:
                raise SuiteError(f"{e} (remove the directory, or choose another --save directory)") from None
            existing = None  # irdiff's own cache: a broken bundle is rebuilt
        if existing is not None:
            same_version = existing.triton_version in ("", triton_version)
            self_described = (
                allow_other_triton and bool(existing.variants) and all(v.settings for v in existing.variants.values())
            )
            if existing.suite == suite and existing.target == target and (same_version or self_described):
                return existing
            raise SuiteError(
                f"{root} already holds a bundle for {existing.suite} on {existing.target} made with Triton "
                f"{existing.triton_version or '?'}; choose another --save directory"
            )
    if root.exists() and not root.is_dir():
        if not is_default:
            raise SuiteError(f"{root} exists and is not a directory; refusing to write into it")
        remove_path(root)
    if root.exists() and any(root.iterdir()):
        if not (is_default or _irdiff_leftover(root)):
            raise SuiteError(f"{root} exists and is not an irdiff bundle; refusing to write into it")
        for entry in list(root.iterdir()):  # an interrupted run's leftovers: start this bundle afresh
            remove_path(entry)
    root.mkdir(parents=True, exist_ok=True)
    return Bundle(suite=suite, target=target, directory=str(root))
