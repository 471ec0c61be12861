"""Warm index: answer a fully cached compile without importing the suite (and with it Triton and torch).

A compiled variant is cached under its full key (:func:`irdiff.compile.variant_cache_key`), which needs the suite
module loaded and the JIT's ``cache_key``: importing the suite imports Triton (about as long as the rest of a warm
run together). When a full key is computed, this module records, under a *fast key* that needs no import:

* the full key and the files it was computed from (:func:`dependencies`): the suite file, every module file the
  suite brought in outside the standard library and the Triton/torch installs (the usual kernel module next to
  the suite), and the file of every ``@jit`` function the kernel calls; each with its sha256 (size and mtime kept for reading);
* the suite's summary (:class:`SuiteSummary`: variant names and settings, default pair, shape), which the command
  line needs before compiling.

The fast key covers the request, the installed Triton's version and install (:func:`triton_identity`, read from
the package metadata and the native library's stat, as the full key does, without importing it), irdiff's compile
sources, the interpreter and ``PYTHONPATH``, and every environment variable that could matter (:func:`env_fingerprint`:
a superset of the full key's environment). An entry is used only when every recorded file still has its content;
anything else (an edited suite or kernel module, another Triton, another environment) misses and the full key is
computed again (and recorded). Entries are untrusted data: any malformed entry is a miss.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irdiff.suite import lookup_variant, pick_pair

INDEX_VERSION = 1

# Variables Triton's own cache keys on share these prefixes (``include/triton/Tools/Sys/GetEnv.h``:
# CACHE_INVALIDATING_ENV_VARS, read too when installed); irdiff's tool variables and the CUDA/NVIDIA ones are
# added. A superset of :func:`irdiff.compile.relevant_env`: an unrelated change only costs a slow (full) key.
_ENV_PREFIXES = ("TRITON_", "MLIR_", "LLVM_", "AMDGCN_", "NVPTX_", "DISABLE_", "USE_", "ALLOW_", "PTXAS", "CUDA",
                 "NVIDIA", "IRDIFF_", "PYTHON")  # fmt: skip
# Known not to change a compile (the full key leaves them out too): caches, irdiff's cache root, the parent pid.
_ENV_IGNORED = {"TRITON_CACHE_DIR", "IRDIFF_CACHE_DIR", "IRDIFF_PARENT_PID", "PYTHONDONTWRITEBYTECODE"}


def _triton_root() -> Path | None:
    """The installed ``triton`` package directory, located without importing it."""
    try:
        spec = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).resolve().parent


def triton_identity(version: str) -> str:
    """``version|root|size|mtime_ns`` of the installed Triton's native library: the same string as
    :func:`irdiff.compile._triton_identity` computes, without importing Triton."""
    root = _triton_root()
    if root is None:
        return version
    try:
        libs = sorted((root / "_C").glob("libtriton*"))
        st = libs[0].stat() if libs else None
    except OSError:
        return version
    return f"{version}|{root}|{st.st_size if st else 0}|{st.st_mtime_ns if st else 0}"


def _header_env_names(root: Path | None) -> set[str]:
    """Names in Triton's ``CACHE_INVALIDATING_ENV_VARS`` when its header is installed (Triton 3.9 ships it)."""
    if root is None:
        return set()
    header = root / "include" / "triton" / "Tools" / "Sys" / "GetEnv.h"
    try:
        text = header.read_text(errors="replace")
    except OSError:
        return set()
    m = re.search(r"CACHE_INVALIDATING_ENV_VARS\s*=\s*\{(.*?)\};", text, re.S)
    return set(re.findall(r'"([A-Za-z0-9_]+)"', m.group(1))) if m else set()


def env_fingerprint() -> dict[str, str]:
    """Every set environment variable a compile could depend on (see :data:`_ENV_PREFIXES`), by name."""
    names = _header_env_names(_triton_root())
    return {
        k: v for k, v in os.environ.items() if (k.startswith(_ENV_PREFIXES) or k in names) and k not in _ENV_IGNORED
    }


def fast_key(request: dict[str, Any], identity: str, src_digest: str, suite_ref: str) -> str:
    """The index key of one compile request (``suite``, ``variant``, ``target``, ``config``, ``shape``,
    ``passes``, ``env``) for the Triton ``identity`` and irdiff's compile sources ``src_digest``."""
    h = hashlib.sha256()
    ident = [INDEX_VERSION, request, identity, src_digest, _suite_where(suite_ref), sys.executable, env_fingerprint()]
    h.update(json.dumps(ident, sort_keys=True, default=str).encode())
    return h.hexdigest()[:32]


def _suite_where(ref: str) -> str:
    """A suite reference as the file it names (relative paths depend on the working directory)."""
    path = ref.partition("::")[0]
    return ref if not (path.endswith(".py") or "/" in path) else os.path.abspath(path) + ref[len(path) :]


def _index_dir(cache: Path) -> Path:
    return cache / "warm"


def _stdlib_dirs() -> list[str]:
    out = []
    for name in ("stdlib", "platstdlib"):
        with_sep = sysconfig.get_paths().get(name)
        if with_sep:
            out.append(os.path.realpath(with_sep) + os.sep)
    return out


def _installed_roots() -> list[str]:
    """Trees the fast key covers by identity or that irdiff's compile sources digest covers."""
    roots = [str(Path(__file__).resolve().parent.parent) + os.sep]  # irdiff: compile sources are in the fast key
    troot = _triton_root()
    if troot is not None:
        roots.append(str(troot) + os.sep)
    spec = importlib.util.find_spec("torch") if "torch" in sys.modules else None
    if spec is not None and spec.origin:
        roots.append(str(Path(spec.origin).resolve().parent) + os.sep)
    return roots


def dependencies(suite_file: Path | None, extra_files: list[str]) -> list[list[Any]]:
    """``[path, size, mtime_ns, sha256]`` of the suite file, of every loaded module file outside the standard
    library, Triton, torch and irdiff (the modules a suite imports its kernels from), and of ``extra_files``
    (the files of the ``@jit`` functions a kernel calls)."""
    skip = _stdlib_dirs() + _installed_roots()
    files: set[str] = set(extra_files)
    if suite_file is not None:
        files.add(str(suite_file))
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if not f or not f.endswith(".py"):
            continue
        real = os.path.realpath(f)
        if "site-packages" in real.split(os.sep) or "dist-packages" in real.split(os.sep):
            continue  # installed packages: covered by their own versions (Triton's by the identity)
        if any(real.startswith(s) for s in skip):
            continue
        files.add(real)
    irdiff_suites = str(Path(__file__).resolve().parent.parent / "suites") + os.sep
    out = []
    for f in sorted(files):
        real = os.path.realpath(f)
        if not os.path.isfile(real):
            continue
        if real.startswith(str(Path(__file__).resolve().parent.parent) + os.sep) and not real.startswith(irdiff_suites):
            continue  # irdiff's own compile sources are in the fast key (a built-in suite's file is not)
        st = os.stat(real)
        out.append([real, st.st_size, st.st_mtime_ns, _sha256(real)])
    return out


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _fresh(deps: Any) -> bool:
    """Every recorded file still has its recorded content (hashed every time: an edit within the file system's
    timestamp granularity keeps size and mtime; the files are a suite and its kernel modules, a few kB)."""
    if not isinstance(deps, list) or not deps:
        return False
    for d in deps:
        if not (isinstance(d, list) and len(d) == 4 and isinstance(d[0], str)):
            return False
        try:
            if _sha256(d[0]) != d[3]:
                return False
        except OSError:
            return False
    return True


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) and data.get("version") == INDEX_VERSION else None


def _write(path: Path, data: dict[str, Any]) -> None:
    """Write atomically (a temporary sibling renamed into place); the index is only an accelerator, so a failure
    to write it is ignored."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
        tmp.write_text(json.dumps({"version": INDEX_VERSION, **data}, default=str))
        os.replace(tmp, path)
    except OSError:
        pass


def lookup_key(cache: Path, fkey: str) -> str | None:
    """The full cache key recorded under ``fkey`` when every file it was computed from is unchanged."""
    data = _read(_index_dir(cache) / "keys" / f"{fkey}.json")
    if data is None or not isinstance(data.get("key"), str) or not _fresh(data.get("deps")):
        return None
    key = data["key"]
    return key if re.fullmatch(r"[0-9a-f]{32}", key) else None


def record_key(cache: Path, fkey: str, key: str, deps: list[list[Any]]) -> None:
    _write(_index_dir(cache) / "keys" / f"{fkey}.json", {"key": key, "deps": deps})


@dataclass
class VariantSummary:
    """What the command line reads of a :class:`~irdiff.suite.Variant` before compiling."""

    target: str | None = None
    triton: str | None = None
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class SuiteSummary:
    """What the command line and the compile driver read of a suite when every variant is cached: names, the
    variants' own settings, the default pair and shape (see :class:`irdiff.suite.Suite`)."""

    name: str
    variants: dict[str, VariantSummary]
    default_pair: tuple[str, str] | None = None
    shape: dict[str, Any] = field(default_factory=dict)

    def variant(self, name: str) -> VariantSummary:
        """:raises SuiteError: unknown variant (:func:`irdiff.suite.lookup_variant`)."""
        return lookup_variant(self.name, self.variants, name)

    def pair(self, variant: str | None, against: str | None) -> tuple[str, str]:
        """As :meth:`irdiff.suite.Suite.pair`."""
        a, b = pick_pair(list(self.variants), self.default_pair, variant, against)
        self.variant(a)
        self.variant(b)
        return a, b


def summarize(suite: Any) -> SuiteSummary:
    """The :class:`SuiteSummary` of a loaded :class:`~irdiff.suite.Suite`."""
    return SuiteSummary(
        name=suite.name,
        variants={
            n: VariantSummary(v.target, v.triton, {str(k): str(x) for k, x in dict(v.env).items()})
            for n, v in suite.variants.items()
        },
        default_pair=tuple(suite.default_pair) if suite.default_pair else None,  # type: ignore[arg-type]
        shape={str(k): x for k, x in dict(suite.shape).items()},
    )


def _summary_path(cache: Path, ref: str, src_digest: str) -> Path:
    h = hashlib.sha256(json.dumps([INDEX_VERSION, _suite_where(ref), src_digest, sys.executable]).encode())
    return _index_dir(cache) / "suites" / f"{h.hexdigest()[:32]}.json"


def lookup_summary(cache: Path, ref: str, src_digest: str) -> SuiteSummary | None:
    """The recorded summary of suite ``ref`` when every file it was loaded from is unchanged, else None."""
    data = _read(_summary_path(cache, ref, src_digest))
    if data is None or not _fresh(data.get("deps")):
        return None
    try:
        s = data["summary"]
        variants = {
            str(n): VariantSummary(v.get("target"), v.get("triton"), {str(k): str(x) for k, x in v["env"].items()})
            for n, v in s["variants"].items()
        }
        pair = s.get("default_pair")
        return SuiteSummary(
            name=str(s["name"]),
            variants=variants,
            default_pair=(str(pair[0]), str(pair[1])) if pair else None,
            shape={str(k): x for k, x in s["shape"].items()},
        )
    except (KeyError, TypeError, AttributeError, ValueError, IndexError):
        return None


def record_summary(cache: Path, ref: str, src_digest: str, summary: SuiteSummary, deps: list[list[Any]]) -> None:
    from dataclasses import asdict

    _write(_summary_path(cache, ref, src_digest), {"summary": asdict(summary), "deps": deps})
