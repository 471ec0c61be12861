"""Differences between Triton versions, in one place. Supported: Triton 3.6 up to the newest release.

Each helper is named for what it does; callers never test version numbers themselves.
"""

from __future__ import annotations

import os
import re
from typing import Any

MIN_TRITON = (3, 6)


class UnsupportedTriton(Exception):
    """The installed Triton is missing or older than 3.6 (one-line message)."""


def triton_version() -> str:
    """Installed Triton's version string, read from package metadata (does not import Triton)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("triton")
    except PackageNotFoundError:
        return ""


def version_tuple(v: str) -> tuple[int, int]:
    m = re.match(r"(\d+)\.(\d+)", v)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def check_triton() -> str:
    """Return the Triton version or raise :class:`UnsupportedTriton` with what to do."""
    v = triton_version()
    if not v:
        raise UnsupportedTriton("Triton is not installed: pip install 'triton>=3.6'")
    if version_tuple(v) < MIN_TRITON:
        raise UnsupportedTriton(
            f"Triton {v} is too old: irdiff needs Triton >= 3.6 (its JIT hooks and binder); pip install -U triton"
        )
    return v


def tool_path(name: str) -> str:
    """Path of a CUDA tool bundled in the Triton wheel (``ptxas``, ``ptxas-blackwell``, ``cuobjdump``, ``nvdisasm``).

    Read from ``triton.knobs.nvidia.<tool>.path`` (``triton/knobs.py``), which honours ``TRITON_<TOOL>_PATH``.
    """
    from triton import knobs

    attr = name.replace("-", "_")
    tool = getattr(knobs.nvidia, attr, None)
    if tool is not None:
        return str(tool.path)
    import triton

    return os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", name)


def ptxas_for_arch(arch: int) -> str:
    """The ptxas Triton itself uses for ``arch`` (``backends/nvidia/compiler.py: get_ptxas``): 3.9 uses
    ``ptxas-blackwell`` for sm90 and newer, 3.6 only for sm100 and newer."""
    from triton.backends.nvidia import compiler as nv

    get_ptxas = getattr(nv, "get_ptxas", None)
    if get_ptxas is not None:
        try:
            return str(get_ptxas(arch).path)
        except TypeError:
            return str(get_ptxas().path)
    return tool_path("ptxas")


def set_cache_hook(hook: Any) -> None:
    """Install the JIT's pre-compile hook (``knobs.runtime.jit_cache_hook``)."""
    from triton import knobs

    knobs.runtime.jit_cache_hook = hook


def set_listener(listener: Any) -> None:
    """Install the compilation listener (``knobs.compilation.listener``: called with ``cache_hit``)."""
    from triton import knobs

    knobs.compilation.listener = listener


def base_jit_function(fn: Any) -> Any:
    """Unwrap ``triton.autotune`` / ``triton.heuristics`` objects down to the ``JITFunction``."""
    while not hasattr(fn, "params") and hasattr(fn, "fn"):
        fn = fn.fn
    return fn


def clear_jit_caches(fn: Any) -> None:
    """Forget in-memory compiled kernels: the JIT's cache key has no target, so targets must not share it."""
    for f in _jit_functions(fn):
        caches = getattr(f, "device_caches", None)
        if caches is not None:
            caches.clear()


def _jit_functions(fn: Any) -> list[Any]:
    out = []
    while True:
        out.append(fn)
        if hasattr(fn, "params") or not hasattr(fn, "fn"):
            return out
        fn = fn.fn
