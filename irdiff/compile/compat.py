"""Differences between Triton versions, in one place. Supported: Triton 3.2 up to the newest release.

Each helper is named for what it does; callers never test version numbers themselves. What older releases lack
(listed by :func:`missing_features` and recorded in a variant's ``metadata["missing"]``):

* 3.2, 3.3: no ``triton.knobs`` (hooks are ``JITFunction.cache_hook``; options are read from ``os.environ``), no
  compilation listener (Triton's cache hits cannot be detected, so every compile is forced), no ``source`` stage;
  3.2 reports the specialization as an ``AttrsDescriptor`` (normalized here), and ``MLIR_DUMP_PATH`` does not exist
  (per-pass snapshots go to stderr and are not kept).
* before 3.6: no ptxas log knob (``dump_ptxas_log``): ptxas is re-run on the PTX for registers and spills.
* before 3.3: typed scalars (:class:`irdiff.suite.Scalar`) cannot be applied (the binder has no annotation types).
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

MIN_TRITON = (3, 2)


class UnsupportedTriton(Exception):
    """The installed Triton is missing or older than 3.2 (one-line message)."""


_DIST_INFO = re.compile(r"triton-([^-]+)\.dist-info", re.I)


def _dist_info_version() -> str | None:
    """The version ``importlib.metadata`` would report for Triton, read directly (no import of
    ``importlib.metadata`` and its email parser, ~40 ms): the ``Version:`` header of the ``METADATA`` of the first
    ``sys.path`` entry holding a ``triton-*.dist-info``. None when that is ambiguous (several dist-infos in one
    entry, an egg-info, an unreadable file): then the caller asks importlib.metadata."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except (OSError, ValueError, TypeError):
            continue
        found = [n for n in names if _DIST_INFO.fullmatch(n)]
        eggs = [n for n in names if n.lower().startswith("triton") and n.lower().endswith(".egg-info")]
        if not found and not eggs:
            continue
        if len(found) != 1 or eggs:
            return None
        try:
            with open(os.path.join(entry or ".", found[0], "METADATA"), encoding="utf-8") as f:
                head = f.read(4096)
        except OSError:
            return None
        name = re.search(r"^Name:[ \t]*(\S+)[ \t]*$", head, re.M)
        ver = re.search(r"^Version:[ \t]*(\S+)[ \t]*$", head, re.M)
        if not (name and ver) or name.group(1).lower() != "triton":
            return None
        return ver.group(1)
    return None


def triton_version() -> str:
    """Installed Triton's version string, read from package metadata (does not import Triton)."""
    fast = _dist_info_version()
    if fast is not None:
        return fast
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
            f"Triton {v} is too old: irdiff needs Triton >= 3.2 (its JIT hooks and binder); pip install -U triton"
        )
    return v


def _knobs() -> Any:
    try:
        from triton import knobs
    except ImportError:  # 3.2, 3.3
        return None
    return knobs


def missing_features() -> list[str]:
    """What this Triton lacks that irdiff would otherwise record (one phrase each; empty on 3.6+)."""
    out = []
    k = _knobs()
    if k is None:
        out.append("no triton.knobs: Triton's cache hits cannot be seen, every variant is compiled afresh")
        out.append("no `source` stage (TTIR before the make_ttir passes)")
    if k is None or not hasattr(k.nvidia, "dump_ptxas_log"):
        out.append("no ptxas log knob: ptxas re-run on the PTX for registers and spills")
    if version_tuple(triton_version()) < (3, 3):
        out.append("no MLIR_DUMP_PATH: per-pass snapshots (--passes) are not kept")
    return out


def set_always_compile(on: bool) -> None:
    """Bypass Triton's file cache (``knobs.compilation.always_compile``; ``TRITON_ALWAYS_COMPILE`` before 3.4)."""
    k = _knobs()
    if k is not None and hasattr(k.compilation, "always_compile"):
        k.compilation.always_compile = on
    os.environ["TRITON_ALWAYS_COMPILE"] = "1" if on else "0"


def set_dump_ptxas_log(on: bool) -> bool:
    """Ask Triton to print its ptxas ``-v`` report (3.6+); False when this Triton cannot."""
    k = _knobs()
    if k is not None and hasattr(k.nvidia, "dump_ptxas_log"):
        k.nvidia.dump_ptxas_log = on
        return True
    return False


def force_param_type(jit_fn: Any, name: str, ty: str, specialize: bool) -> None:
    """Make the JIT's binder type parameter ``name`` as ``ty`` (as an annotation would: ``KernelParam.annotation``
    / ``annotation_type``, cached properties in ``triton/runtime/jit.py`` 3.3+), and with ``specialize`` False also
    skip divisibility and constant-1 specialization (``do_not_specialize``).

    :raises ValueError: this Triton's binder has no annotation types (3.2), or no such parameter.
    """
    params = [p for p in base_jit_function(jit_fn).params if p.name == name]
    if not params:
        raise ValueError(f"Scalar for {name!r}: the kernel has no such parameter")
    p = params[0]
    if "annotation_type" not in type(p).__dict__:
        raise ValueError(f"typed scalars need Triton >= 3.3 (this is {triton_version()}): cannot type {name!r} {ty}")
    p.__dict__["annotation"] = ty
    p.__dict__["annotation_type"] = ty
    if not specialize:
        p.do_not_specialize = True


def normalize_captured(captured: dict[str, Any], params: Any) -> dict[str, Any]:
    """The ``compile`` dict a cache hook received, in the 3.3+ form ``build_specialization`` reads: ``signature``
    with every parameter (constexprs typed ``constexpr``), ``constants``, ``configs[0]`` as
    ``{(index,): [["tt.divisibility", 16]]}``. 3.2 passes non-constexpr types only, constants by name and an
    ``AttrsDescriptor`` (``arg_properties``: ``tt.divisibility`` and ``tt.equal_to`` index lists)."""
    configs = captured.get("configs") or [{}]
    first = configs[0] if configs else {}
    props = getattr(first, "arg_properties", None)
    if props is None:
        return captured
    names = [p.name for p in params]
    constants = dict(captured.get("constants") or {})
    signature = dict(captured.get("signature") or {})
    for n in constants:
        signature[n] = "constexpr"
    attrs = {(i,): [["tt.divisibility", 16]] for i in props.get("tt.divisibility", [])}
    for i in props.get("tt.equal_to", []) or props.get("tt.equal_to_1", []):
        if 0 <= i < len(names):
            signature[names[i]] = "constexpr"
            constants.setdefault(names[i], 1)
    return {**captured, "signature": signature, "constants": constants, "configs": [attrs]}


def tool_path(name: str) -> str:
    """Path of a CUDA tool bundled in the Triton wheel (``ptxas``, ``ptxas-blackwell``, ``cuobjdump``, ``nvdisasm``).

    Read from ``triton.knobs.nvidia.<tool>.path`` (``triton/knobs.py``), which honours ``TRITON_<TOOL>_PATH``.
    """
    knobs = _knobs()
    attr = name.replace("-", "_")
    tool = getattr(knobs.nvidia, attr, None) if knobs is not None else None
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
            found = get_ptxas(arch)
        except TypeError:
            found = get_ptxas()
        return str(found[0] if isinstance(found, tuple) else found.path)  # 3.3: (path, version)
    return tool_path("ptxas")


def set_cache_hook(hook: Any) -> None:
    """Install the JIT's pre-compile hook (``knobs.runtime.jit_cache_hook``; ``JITFunction.cache_hook`` before 3.4)."""
    knobs = _knobs()
    if knobs is not None and hasattr(knobs.runtime, "jit_cache_hook"):
        knobs.runtime.jit_cache_hook = hook
        return
    from triton.runtime.jit import JITFunction

    JITFunction.cache_hook = hook


def set_listener(listener: Any) -> bool:
    """Install the compilation listener (``knobs.compilation.listener``: called with ``cache_hit``); False when this
    Triton has none (then cache hits cannot be seen: force compiles with :func:`set_always_compile`)."""
    knobs = _knobs()
    if knobs is None or not hasattr(knobs.compilation, "listener"):
        return False
    knobs.compilation.listener = listener
    return True


def option_names() -> set[str] | None:
    """Names of the compile options the NVIDIA backend accepts as launch keywords (``num_warps``, ``maxnreg``,
    ``enable_fp_fusion`` …: the fields of ``CUDAOptions`` in ``triton/backends/nvidia/compiler.py``), or None when
    that class cannot be read (then nothing is checked against it)."""
    import dataclasses

    try:
        from triton.backends.nvidia.compiler import CUDAOptions
    except Exception:  # noqa: BLE001 - another layout: Triton checks the options itself
        return None
    if not dataclasses.is_dataclass(CUDAOptions):
        return None
    return {f.name for f in dataclasses.fields(CUDAOptions)}


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
        if isinstance(getattr(f, "cache", None), dict):  # 3.2
            f.cache.clear()
        if hasattr(f, "binder") and not hasattr(f, "device_caches"):  # 3.2 builds its binder once
            f.binder = None


def _jit_functions(fn: Any) -> list[Any]:
    out = []
    while True:
        out.append(fn)
        if hasattr(fn, "params") or not hasattr(fn, "fn"):
            return out
        fn = fn.fn
