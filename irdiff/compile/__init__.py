"""Compile driver: suite variants → a bundle holding every stage, for any target, without a GPU.

Each variant is compiled by :mod:`irdiff.compile.worker` in its own Python process (Triton's global state must
not leak between variants), several at once up to the number of cores. Results are cached under
``$IRDIFF_CACHE_DIR`` (default ``~/.cache/irdiff``) keyed by the request, the suite file, irdiff's own source,
the Triton version and the ``TRITON_*`` environment; Triton's own cache (``TRITON_CACHE_DIR``) is shared too.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irdiff.bundle import Bundle, BundleError, VariantResult, copy_variant, load_bundle, load_variant_dir
from irdiff.compile.compat import check_triton
from irdiff.suite import _BUILTINS, SuiteError
from irdiff.target import SUPPORTED_NAMES, TargetError, parse_target

__all__ = ["CompileRequest", "cache_dir", "compile_bundle", "parse_config_option", "target_default"]

SUPPORTED_TARGETS = SUPPORTED_NAMES  # declared in irdiff.target


@dataclass
class CompileRequest:
    """What to compile: suite reference, variant names, target (``sm90``), autotune config selector
    (None = the suite's default, an index, or ``{"BLOCK_SIZE_M": 128}``; ``"all"`` = every config),
    shape overrides, and whether to capture per-pass MLIR snapshots."""

    suite: str
    variants: list[str]
    target: str
    config: Any = None
    shape: dict[str, int] = field(default_factory=dict)
    passes: bool = False
    use_cache: bool = True
    jobs: int = 0


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


def _irdiff_source_digest() -> str:
    h = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent
    for p in sorted(root.rglob("*.py")):
        h.update(p.read_bytes())
    return h.hexdigest()


def _cache_key(req: dict[str, Any], triton_version: str, src_digest: str) -> str:
    h = hashlib.sha256()
    h.update(json.dumps({k: v for k, v in req.items() if k != "out"}, sort_keys=True, default=str).encode())
    h.update(triton_version.encode())
    h.update(src_digest.encode())
    suite_file = _suite_file(req["suite"])
    if suite_file is not None:
        h.update(suite_file.read_bytes())
    env = {k: v for k, v in os.environ.items() if k.startswith(("TRITON_", "MLIR_", "LLVM_"))}
    h.update(json.dumps(env, sort_keys=True).encode())
    return h.hexdigest()[:32]


def _run_worker(req: dict[str, Any]) -> VariantResult:
    out = Path(req["out"])
    out.mkdir(parents=True, exist_ok=True)
    req_file = out / "request.json"
    req_file.write_text(json.dumps(req, default=str))
    env = dict(os.environ)
    pkg_root = str(Path(__file__).resolve().parent.parent.parent)
    env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run(
        [sys.executable, "-m", "irdiff.compile.worker", str(req_file)],
        capture_output=True,
        text=True,
        env=env,
    )
    req_file.unlink(missing_ok=True)
    try:
        return load_variant_dir(out)
    except BundleError:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        return VariantResult(name=req["variant"], target=req["target"], directory=str(out), error=tail[0])


def _config_count(suite: Any) -> int:
    """Number of autotune configs of a suite (its own, else the largest ``triton.autotune`` list of its kernels)."""
    n = len(suite.configs)
    if n == 0:
        for v in suite.variants.values():
            n = max(n, len(getattr(v.kernel, "configs", []) or []))
    return n


def compile_bundle(req: CompileRequest, save: str | os.PathLike[str] | None, command: list[str]) -> Bundle:
    """Compile every requested variant and write (or extend) a bundle directory.

    :param save: bundle directory; None → ``<cache>/bundles/<suite>-<target>``. An existing directory that is not
        an irdiff bundle and not empty is refused (nothing the user made is overwritten).
    :raises SuiteError: unknown suite/variant (checked before any compile), bad target or config.
    :raises UnsupportedTriton: Triton missing or older than 3.6.
    :returns: the bundle; variants that failed to compile carry ``error`` and the others are kept.
    """
    req.target = normalize_target(req.target)
    tv = check_triton()
    from irdiff.compile.worker import select_config
    from irdiff.suite import load_suite

    suite = load_suite(req.suite)
    req.variants = list(dict.fromkeys(req.variants))  # the same variant twice is compiled once
    for v in req.variants:
        suite.variant(v)
    unknown = [k for k in req.shape if k not in suite.shape]
    if unknown:
        raise SuiteError(
            f"--shape {unknown[0]}: suite {suite.name!r} has no size {unknown[0]!r}"
            f" (its shape: {', '.join(f'{k}={v}' for k, v in suite.shape.items()) or 'none'})"
        )
    if req.config != "all":
        for v in req.variants:
            select_config(suite, suite.variant(v).kernel, req.config)  # raises ValueError for a bad --config
    root = Path(save) if save else default_bundle_dir(suite.name, req, tv)
    bundle = _open_bundle_dir(root, suite.name, req.target, tv)

    jobs: list[tuple[str, dict[str, Any]]] = []
    configs: list[Any] = [req.config]
    if req.config == "all":
        n = _config_count(suite)
        configs = list(range(n)) if n else [None]
    for v in req.variants:
        for c in configs:
            name = v if req.config != "all" else f"{v}@{c}"
            jobs.append(
                (
                    name,
                    {
                        "suite": req.suite,
                        "variant": v,
                        "target": req.target,
                        "config": c,
                        "shape": req.shape,
                        "passes": req.passes,
                    },
                )
            )

    src_digest = _irdiff_source_digest()
    results_root = cache_dir() / "results"

    def one(job: tuple[str, dict[str, Any]]) -> VariantResult:
        name, r = job
        key = _cache_key(r, tv, src_digest)
        cached = results_root / key
        if req.use_cache and (cached / "variant.json").is_file():
            res = copy_variant(load_variant_dir(cached), root / name)
            res.cache_hit = True
        else:
            tmp = Path(tempfile.mkdtemp(prefix="irdiff-", dir=_ensure(results_root)))
            res = _run_worker({**r, "out": str(tmp)})
            if res.error is None:
                try:
                    os.replace(tmp, cached)
                except OSError:  # another irdiff process stored the same result meanwhile: keep theirs
                    shutil.rmtree(tmp, ignore_errors=True)
                res = copy_variant(load_variant_dir(cached), root / name)
            else:
                if (root / name).exists():
                    shutil.rmtree(root / name)
                shutil.move(str(tmp), root / name)
                res = load_variant_dir(root / name)
        res.name = name
        res.directory = str(root / name)
        return res

    n_jobs = req.jobs or max(1, min(len(jobs), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=n_jobs) as pool:
        for res in pool.map(one, jobs):
            bundle.variants[res.name] = res

    bundle.triton_version = tv
    ptxas = {v.resources.ptxas_version for v in bundle.variants.values() if v.resources.ptxas_version}
    bundle.ptxas_version = ", ".join(sorted(ptxas))
    bundle.command = command
    bundle.created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    bundle.shape = {**suite.shape, **req.shape}
    bundle.save()
    return bundle


def normalize_target(name: str) -> str:
    """``sm_90``, ``sm90a``, ``SM90``, ``90``, ``cuda:90`` → ``sm90`` (:func:`irdiff.target.parse_target`).

    :raises SuiteError: not one of :data:`SUPPORTED_TARGETS` (the message lists them).
    """
    try:
        return parse_target(name).name
    except TargetError as e:
        raise SuiteError(str(e)) from None


def default_bundle_dir(suite_name: str, req: CompileRequest, triton_version: str = "") -> Path:
    """``<cache>/bundles/<suite>-<target>-<hash>``: one directory per suite file, shape, config, dump choice and
    Triton version, so runs with other sizes, another file of the same suite name or another Triton do not replace
    or mix with each other's bundle."""
    ref = req.suite
    path = _suite_file(ref)
    ident = json.dumps(
        [str(path.resolve()) if path else ref, req.shape, req.config, req.passes, triton_version],
        sort_keys=True,
        default=str,
    )
    return cache_dir() / "bundles" / f"{suite_name}-{req.target}-{hashlib.sha256(ident.encode()).hexdigest()[:8]}"


def _ensure(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p


def _open_bundle_dir(root: Path, suite: str, target: str, triton_version: str) -> Bundle:
    """The bundle to add variants to: a new one, or the one already in ``root`` when it is for the same suite,
    target and Triton version (variants of one bundle are always comparable)."""
    if (root / "manifest.json").is_file():
        existing = load_bundle(root)
        if existing.suite == suite and existing.target == target and existing.triton_version in ("", triton_version):
            return existing
        raise SuiteError(
            f"{root} already holds a bundle for {existing.suite} on {existing.target} made with Triton "
            f"{existing.triton_version or '?'}; choose another --save directory"
        )
    if root.exists() and any(root.iterdir()):
        raise SuiteError(f"{root} exists and is not an irdiff bundle; refusing to write into it")
    root.mkdir(parents=True, exist_ok=True)
    return Bundle(suite=suite, target=target, directory=str(root))
