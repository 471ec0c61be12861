"""Triton environments: which Python runs the compile worker for a requested Triton release.

A variant (or a side of the command line) may name a Triton release other than the installed one. Its compile
worker then runs in an isolated virtual environment holding only that Triton wheel, created on first use with
``uv`` (``uv venv`` + ``uv pip install triton==X``) from the package index pip is configured with (``pip config
list``, ``PIP_INDEX_URL``/``PIP_EXTRA_INDEX_URL``/``PIP_FIND_LINKS``), one per release, reused afterwards::

    $IRDIFF_CACHE_DIR/envs/triton-3.4.0/      a venv (bin/python) with triton 3.4.0; env.json written last
    $IRDIFF_CACHE_DIR/envs/triton-3.4.0.lock  a file lock (filelock): concurrent irdiff runs create it once

The worker itself needs nothing but the standard library and Triton in that environment: irdiff's own package is
put on ``PYTHONPATH``.

Other sources of a Triton, checked before creating anything:

* the installed Triton (``sys.executable``) when its version is the one asked for;
* ``IRDIFF_TRITON_ENVS``: ``os.pathsep``-separated existing environments (a venv directory or its python), e.g.
  CI's ``.venv36``, used when their Triton version matches (no download);
* ``--triton-path DIR`` / :func:`local_env`: a venv directory, a python executable, or a directory holding a
  local Triton build's ``triton`` package (put on ``PYTHONPATH`` in front of the current python's packages).

Errors are :class:`EnvError` (one line).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

__all__ = [
    "EnvError",
    "TritonEnv",
    "current_env",
    "env_disk_bytes",
    "envs_root",
    "list_envs",
    "local_env",
    "managed_env",
    "prune_envs",
    "published_versions",
    "resolve_env",
    "version_key",
]

# Installed beside Triton: what irdiff's compile worker imports (filelock: irdiff.bundle's locks) and what Triton
# 3.2/3.3 import without declaring it (setuptools).
WORKER_PACKAGES = ("setuptools", "filelock")

_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?([a-z]+\d*)?(\.(post|dev)\d+)?(\+[\w.]+)?$")


class EnvError(Exception):
    """A Triton environment cannot be found, created or used (one-line message)."""


@dataclass(frozen=True)
class TritonEnv:
    """One Python that can run the compile worker.

    :ivar version: the Triton version it imports (``3.4.0``).
    :ivar python: the interpreter to run.
    :ivar kind: ``current`` (irdiff's own), ``managed`` (created by irdiff under :func:`envs_root`),
        ``registered`` (from ``IRDIFF_TRITON_ENVS``) or ``local`` (``--triton-path``).
    :ivar pythonpath: directory put first on ``PYTHONPATH`` (a local build's package dir), or "".
    :ivar location: where it lives (venv or build directory), for messages and ``irdiff envs``.
    """

    version: str
    python: str
    kind: str
    pythonpath: str = ""
    location: str = ""

    def describe(self) -> str:
        where = f" at {self.location}" if self.location and self.kind != "current" else ""
        return f"Triton {self.version} ({self.kind}{where})"


def version_key(v: str) -> tuple[object, ...]:
    """Sort key for release strings (``packaging.version``): 3.10.0 after 3.9.0, 3.4.0rc1 before 3.4.0."""
    from packaging.version import InvalidVersion, Version

    try:
        return (0, Version(v))
    except InvalidVersion:
        return (1, v)


def envs_root() -> Path:
    """``<irdiff cache>/envs`` (``$IRDIFF_CACHE_DIR`` or ``~/.cache/irdiff``)."""
    from irdiff.compile import cache_dir

    return cache_dir() / "envs"


def _installed_version() -> str:
    from irdiff.compile.compat import triton_version

    return triton_version()


def current_env() -> TritonEnv:
    """irdiff's own interpreter and its installed Triton."""
    return TritonEnv(_installed_version(), sys.executable, "current", "", sys.prefix)


def _venv_python(path: Path) -> Path | None:
    for cand in (path / "bin" / "python", path / "Scripts" / "python.exe", path):
        if cand.is_file() and os.access(cand, os.X_OK):
            return cand
    return None


def _site_triton_version(prefix: Path) -> str:
    """Triton's version from the ``triton-X.dist-info`` of a venv, without starting its python."""
    for sp in prefix.glob("lib/python*/site-packages"):
        for d in sp.glob("triton-*.dist-info"):
            return d.name[len("triton-") : -len(".dist-info")]
    return ""


@lru_cache(maxsize=64)
def _probe_version(python: str, pythonpath: str) -> str:
    """Ask ``python`` which Triton it imports (a local build has no dist-info to read)."""
    import subprocess  # not at import time: a warm run starts no process

    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    code = (
        "import importlib.util,sys\n"
        "spec=importlib.util.find_spec('triton')\n"
        "if spec is None: sys.exit(3)\n"
        "import re,pathlib\n"
        "root=pathlib.Path(spec.origin).parent\n"
        "m=re.search(r'__version__\\s*=\\s*[\"\\']([^\"\\']+)', (root/'__init__.py').read_text())\n"
        "print(m.group(1) if m else '')\n"
    )
    try:
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise EnvError(f"cannot run {python}: {e}") from None
    if proc.returncode == 3:
        raise EnvError(f"{python} cannot import triton")
    if proc.returncode != 0:
        raise EnvError(f"{python}: {(proc.stderr.strip().splitlines() or ['failed'])[-1]}")
    return proc.stdout.strip()


def local_env(path: str | os.PathLike[str]) -> TritonEnv:
    """The Triton at ``path`` (``--triton-path``): a venv directory, a python executable, or a directory that holds a
    ``triton`` package (e.g. a source checkout's ``python/`` after ``pip install -e``-less builds).

    :raises EnvError: nothing usable there.
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise EnvError(f"--triton-path {str(p)!r} does not exist")
    if p.is_dir() and (p / "triton" / "__init__.py").is_file():
        version = _probe_version(sys.executable, str(p.resolve()))
        return TritonEnv(version or "local", sys.executable, "local", str(p.resolve()), str(p.resolve()))
    py = _venv_python(p)
    if py is None:
        raise EnvError(
            f"--triton-path {str(p)!r} is neither a venv (bin/python), a python, nor a dir with a triton package"
        )
    prefix = p if p.is_dir() else py.parent.parent
    version = _site_triton_version(prefix) or _probe_version(str(py), "")
    return TritonEnv(version, str(py), "local", "", str(prefix))


def _registered() -> list[TritonEnv]:
    out = []
    for part in (os.environ.get("IRDIFF_TRITON_ENVS") or "").split(os.pathsep):
        if part.strip():
            try:
                env = local_env(part.strip())
            except EnvError:
                continue
            out.append(TritonEnv(env.version, env.python, "registered", env.pythonpath, env.location))
    return out


def _env_dir(version: str) -> Path:
    return envs_root() / f"triton-{version}"


def _read_marker(d: Path) -> dict[str, object] | None:
    try:
        data = json.loads((d / "env.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _uv() -> str:
    cand = Path(sys.executable).parent / "uv"
    if cand.is_file():
        return str(cand)
    found = shutil.which("uv")
    if found:
        return found
    try:
        import uv  # the PyPI package ships the binary

        return str(uv.find_uv_bin())
    except (ImportError, FileNotFoundError):
        raise EnvError("uv is not installed (pip install uv): it creates the per-release Triton environments") from None


def pip_index_args() -> list[str]:
    """uv options for the package index pip is configured with (``pip config list`` and ``PIP_*`` variables).

    Like pip, uv is told to pick the best match over all indexes (by default uv stops at the first index that
    has the package at all)."""
    import subprocess  # not at import time: a warm run starts no process

    conf: dict[str, str] = {}
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=60
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    for line in out.splitlines():
        key, eq, val = line.partition("=")
        if eq:
            conf[key.split(".")[-1].strip()] = val.strip().strip("'\"")
    args: list[str] = ["--index-strategy", "unsafe-best-match"]  # pip's rule: the best match over every index
    index = os.environ.get("PIP_INDEX_URL") or conf.get("index-url")
    if index:
        args += ["--index-url", index]
    for u in (os.environ.get("PIP_EXTRA_INDEX_URL") or conf.get("extra-index-url") or "").split():
        if u.startswith("file://") and not Path(u[7:]).is_dir():
            continue
        args += ["--extra-index-url", u]
    for u in (os.environ.get("PIP_FIND_LINKS") or conf.get("find-links") or "").split():
        if Path(u).exists() or "://" in u:
            args += ["--find-links", u]
    return args


def managed_env(version: str, create: bool = True, echo: object = None) -> TritonEnv:
    """The irdiff-managed environment for Triton ``version``, created under a file lock on first use.

    :param echo: a ``print``-like callable told when an environment is being created (it takes minutes cold).
    :raises EnvError: bad version string, uv missing, or the install failed (uv's last line quoted).
    """
    import subprocess  # not at import time: a warm run starts no process

    if not _VERSION.match(version):
        raise EnvError(f"{version!r} is not a Triton release (e.g. 3.4.0)")
    d = _env_dir(version)
    marker = _read_marker(d)
    if marker is not None and _venv_python(d) is not None:
        if marker.get("packages") != list(WORKER_PACKAGES):  # made by an older irdiff: top it up
            _install(d, list(WORKER_PACKAGES), version)
            _write_marker(d, {**marker, "packages": list(WORKER_PACKAGES)})
        return TritonEnv(version, str(_venv_python(d)), "managed", "", str(d))
    if not create:
        raise EnvError(f"no environment for Triton {version} (irdiff creates it on first use)")
    from filelock import FileLock

    d.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(d) + ".lock", timeout=1800):
        if _read_marker(d) is None:  # not made by another process while we waited
            if d.exists():
                shutil.rmtree(d)  # a half-made environment from an interrupted run
            if callable(echo):
                echo(f"creating an environment for Triton {version} in {d} (uv; downloads the wheel once)")
            t0 = time.perf_counter()
            uv = _uv()
            base = os.path.realpath(sys.executable)
            proc = subprocess.run([uv, "venv", "-q", "--python", base, str(d)], capture_output=True, text=True)
            if proc.returncode != 0:
                shutil.rmtree(d, ignore_errors=True)
                raise EnvError(f"cannot create the Triton {version} environment: {_uv_error(proc)}")
            try:
                _install(d, [f"triton=={version}", *WORKER_PACKAGES], version)
            except EnvError:
                shutil.rmtree(d, ignore_errors=True)
                raise
            got = _site_triton_version(d)
            _write_marker(
                d,
                {
                    "triton": got or version,
                    "python": base,
                    "packages": list(WORKER_PACKAGES),
                    "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "seconds": round(time.perf_counter() - t0, 1),
                },
            )
    py = _venv_python(d)
    if py is None:
        raise EnvError(f"{d} has no python")
    return TritonEnv(version, str(py), "managed", "", str(d))


def _uv_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = (proc.stderr or proc.stdout).strip().splitlines() or [f"exit status {proc.returncode}"]
    return next((ln for ln in lines if "error" in ln.lower()), lines[-1]).strip()


def _install(d: Path, packages: list[str], version: str) -> None:
    """``uv pip install`` ``packages`` into the venv ``d`` from pip's configured index."""
    import subprocess  # not at import time: a warm run starts no process

    cmd = [_uv(), "pip", "install", "-q", "--python", str(d / "bin" / "python"), *pip_index_args(), *packages]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise EnvError(f"cannot create the Triton {version} environment: {_uv_error(proc)}")


def _write_marker(d: Path, marker: dict[str, object]) -> None:
    tmp = d / "env.json.tmp"
    tmp.write_text(json.dumps(marker, indent=1))
    os.replace(tmp, d / "env.json")


def resolve_env(version: str | None = None, triton_path: str | None = None, echo: object = None) -> TritonEnv:
    """The environment that compiles with Triton ``version`` (None: the installed one), or the one at
    ``triton_path`` (which wins; ``version``, when also given, must match it).

    :raises EnvError: a mismatch, or an environment that cannot be created.
    """
    if triton_path:
        env = local_env(triton_path)
        if version and env.version != version:
            raise EnvError(f"--triton-path {triton_path} holds Triton {env.version}, not {version}")
        return env
    cur = current_env()
    if not version or version == cur.version:
        return cur
    for env in _registered():
        if env.version == version:
            return env
    return managed_env(version, echo=echo)


def env_disk_bytes(path: str | os.PathLike[str]) -> int:
    """Bytes on disk under ``path`` (allocated blocks; hard links to uv's cache counted once per inode)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                st = os.lstat(os.path.join(root, f))
            except OSError:
                continue
            key = (st.st_dev, st.st_ino)
            if key in seen:
                continue
            seen.add(key)
            total += st.st_blocks * 512
    return total


@dataclass
class EnvInfo:
    """One managed environment as ``irdiff envs`` lists it."""

    version: str
    path: str
    bytes: int
    created: str
    last_used: float
    complete: bool

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def list_envs() -> list[EnvInfo]:
    """Managed environments under :func:`envs_root`, oldest release first (incomplete ones flagged)."""
    root = envs_root()
    out: list[EnvInfo] = []
    if not root.is_dir():
        return out
    for d in root.iterdir():
        if not d.is_dir() or not d.name.startswith("triton-"):
            continue
        marker = _read_marker(d)
        used = (d / "env.json").stat().st_atime if (d / "env.json").exists() else d.stat().st_mtime
        out.append(
            EnvInfo(
                version=str(marker.get("triton")) if marker else d.name[len("triton-") :],
                path=str(d),
                bytes=env_disk_bytes(d),
                created=str(marker.get("created", "")) if marker else "",
                last_used=used,
                complete=marker is not None,
            )
        )
    out.sort(key=lambda e: version_key(e.version))
    return out


def prune_envs(keep: list[str] | None = None, everything: bool = False) -> list[EnvInfo]:
    """Remove managed environments: incomplete ones always, and with ``everything`` all but the ``keep`` releases.

    :returns: the removed ones.
    :raises EnvError: a ``keep`` release that no environment here has (a typo such as ``3.6`` for ``3.6.0`` would
        otherwise remove the environment it meant to keep); nothing is removed then.
    """
    from filelock import FileLock, Timeout

    envs = list_envs()
    unknown = [v for v in keep or [] if v not in {e.version for e in envs}]
    if unknown:
        have = ", ".join(e.version for e in envs) or "none"
        raise EnvError(
            f"--keep {unknown[0]}: no Triton environment of that release here (environments: {have}); nothing removed"
        )
    removed = []
    for e in envs:
        if e.complete and not everything:
            continue
        if keep and e.version in keep:
            continue
        try:
            with FileLock(e.path + ".lock", timeout=0):
                shutil.rmtree(e.path, ignore_errors=True)
        except Timeout:
            continue  # being created right now
        Path(e.path + ".lock").unlink(missing_ok=True)
        removed.append(e)
    return removed


def published_versions(pre: bool = False) -> list[str]:
    """Triton releases the configured package index offers, oldest first (``pip index versions triton``; with
    ``pre`` also pre-releases and dev builds).

    :raises EnvError: the index cannot be read.
    """
    import subprocess  # not at import time: a warm run starts no process

    cmd = [sys.executable, "-m", "pip", "index", "versions", "triton", "--disable-pip-version-check"]
    if pre:
        cmd.append("--pre")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise EnvError(f"cannot list Triton releases: {e}") from None
    m = re.search(r"Available versions:\s*(.+)", proc.stdout)
    if not m:
        lines = (proc.stderr or proc.stdout).strip().splitlines() or ["no output"]
        raise EnvError(f"cannot list Triton releases (pip index versions triton): {lines[-1]}")
    versions = [v.strip() for v in m.group(1).split(",") if v.strip()]
    return sorted(set(versions), key=version_key)
