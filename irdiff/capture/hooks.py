"""Hooks installed inside the captured program's Python processes: record every Triton kernel as a bundle variant.

Loaded by the ``sitecustomize`` in ``irdiff/capture/bootstrap``, whose import watcher on ``sys.meta_path`` calls
:func:`install_from_env` right after the program's ``triton/__init__.py`` has run (processes that never import
Triton never load this module). From then on:

* ``knobs.compilation.listener`` (``triton/compiler/compiler.py: compile``) is called for every kernel compiled,
  and for every kernel loaded from Triton's file cache (``cache_hit=True``), by the JIT *and* by direct
  ``triton.compile`` callers such as TorchInductor. Its ``metadata_group`` names every stage file in Triton's
  cache; the stages are copied into ``DIR/<variant>/`` at once, ``variant.json`` is written atomically and the
  kernel is appended to ``DIR/manifest.json`` under a file lock. A crash later in the program leaves it on disk.
* the specialization comes from the ``ASTSource`` the listener receives (``signature``, ``constants``, ``attrs``
  as produced by the JIT's binder or given by the caller), explained with
  :func:`irdiff.compile.specialize.build_specialization`; when the JIT's ``run`` is on the stack the actual
  argument values are read from its frame (``bound_args``) so that pointers show shape/dtype/strides/alignment.
* ``knobs.runtime.kernel_load_end_hook`` (GPU only: ``CompiledKernel._init_handles``) catches kernels that reach
  this process without a compile call (TorchInductor unpickles kernels its compile workers built) and maps the
  CUDA function handle to the kernel.
* ``knobs.runtime.launch_enter_hook`` (GPU only) samples the first launches of each kernel: grid and the
  shapes/dtypes/strides of its arguments, through the kernel's ``launch_metadata`` callback (which Triton
  evaluates lazily, so launches cost one dict lookup after the first samples).

Everything expensive (SASS disassembly, the ``ptxas -v`` report, the compiler's reasoning log) is left to
:mod:`irdiff.capture.finalize`, which runs after the program exits. Several processes (Inductor compile workers,
``torchrun`` ranks, ``multiprocessing`` children) write into one directory: a kernel is claimed by its Triton hash
with an ``O_EXCL`` file, so each is written once.

A failure inside a hook never reaches the program: it is appended to ``DIR/.capture/errors.log``.
This module imports only the standard library at import time; irdiff's own modules are imported when a kernel is
recorded.

Size: over 800 lines on purpose: everything that runs inside the captured program is one module, imported once
per process by the bootstrap (no package import chain in a user's process).
"""

from __future__ import annotations

import atexit
import inspect
import json
import os
import re
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

ENV_DIR = "IRDIFF_CAPTURE_DIR"
ENV_FILTER = "IRDIFF_CAPTURE_FILTER"
ENV_TARGET = "IRDIFF_CAPTURE_TARGET"
ENV_LAUNCHES = "IRDIFF_CAPTURE_LAUNCHES"
ENV_PKG = "IRDIFF_CAPTURE_PKG"

STATE_DIR = ".capture"  # DIR/.capture: hashes/ (claims), lock, errors.log, pids/, launch counts, skipped.txt
# Options worth showing beside the specialization (``VariantResult.options``); the full metadata is kept too.
OPTION_KEYS = (
    "num_warps",
    "num_stages",
    "num_ctas",
    "maxnreg",
    "enable_fp_fusion",
    "launch_cooperative_grid",
    "launch_pdl",
    "cluster_dims",
    "debug",
)
_DTYPE_NAMES = {
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint32": "u32",
    "bool": "i1",
    "int1": "i1",
    "float8_e4m3fn": "fp8e4nv",
    "float8e4nv": "fp8e4nv",
    "float8_e5m2": "fp8e5",
    "float8e5": "fp8e5",
}


@dataclass
class CaptureConfig:
    """What to capture, passed from ``irdiff capture`` to every process through the environment.

    :ivar directory: the capture bundle directory (absolute).
    :ivar filter: regular expression; only kernels whose name (or ``module.qualname`` of the ``@triton.jit``
        function) matches are recorded (``re.search``). None records all.
    :ivar target: ``sm90`` etc.: install irdiff's target stand-in driver (no GPU needed; kernels can then only be
        compiled, e.g. by ``kernel.warmup(..., grid=(1,))``, not launched). None leaves Triton's driver alone.
    :ivar launches: launches sampled per kernel (grid and argument shapes); 0 installs no launch hook.
    """

    directory: Path
    filter: str | None = None
    target: str | None = None
    launches: int = 8

    def to_env(self) -> dict[str, str]:
        env = {ENV_DIR: str(self.directory), ENV_LAUNCHES: str(self.launches)}
        if self.filter:
            env[ENV_FILTER] = self.filter
        if self.target:
            env[ENV_TARGET] = self.target
        return env

    @classmethod
    def from_env(cls, env: dict[str, str] | os._Environ[str]) -> CaptureConfig | None:
        d = env.get(ENV_DIR)
        if not d:
            return None
        try:
            launches = int(env.get(ENV_LAUNCHES, "8"))
        except ValueError:
            launches = 8
        return cls(Path(d), env.get(ENV_FILTER) or None, env.get(ENV_TARGET) or None, launches)


# ----------------------------------------------------------------------------------------------- small helpers


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write ``path`` through a temporary file and ``os.replace`` (readers never see a partial file)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    os.replace(tmp, path)


@contextmanager
def locked(directory: Path) -> Iterator[None]:
    """Exclusive lock on ``DIR/.capture/lock`` (``fcntl.flock``) across the program's processes."""
    import fcntl

    lock_path = directory / STATE_DIR / "lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def jsonable(v: Any, depth: int = 0) -> Any:
    """Plain JSON value for metadata (``GPUTarget`` → dict, tuples → lists, other objects → ``str``)."""
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if depth > 6:
        return str(v)
    if isinstance(v, (list, tuple)):
        return [jsonable(x, depth + 1) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x, depth + 1) for k, x in v.items()}
    if hasattr(v, "backend") and hasattr(v, "arch"):  # GPUTarget
        return {"backend": v.backend, "arch": jsonable(v.arch), "warp_size": getattr(v, "warp_size", None)}
    return str(v)


def target_name(target: Any) -> str:
    """``GPUTarget("cuda", 90, 32)`` or its dict form → ``sm90``; HIP → the ``gfx`` arch string."""
    from irdiff.target import Target

    t = Target.from_triton(target)
    if t is not None:
        return t.name
    if isinstance(target, dict):
        backend, arch = target.get("backend"), target.get("arch")
    else:
        backend, arch = getattr(target, "backend", None), getattr(target, "arch", None)
    return str(arch or backend or "")


def dtype_name(dtype: Any) -> str:
    """``torch.float16`` / ``tl.float16`` / ``"fp16"`` → ``fp16`` (irdiff's dtype names)."""
    s = str(dtype).split(".")[-1]
    return _DTYPE_NAMES.get(s, s)


def describe_arg(v: Any) -> Any:
    """JSON description of one kernel argument: tensors as ``{"dtype", "shape", "strides", "align"}`` (align = the
    largest power of two up to 16 dividing the base address, what the JIT's divisibility test looks at), scalars as
    themselves, anything else as a short ``repr``."""
    if hasattr(v, "data_ptr") and hasattr(v, "dtype"):
        d: dict[str, Any] = {"dtype": dtype_name(v.dtype)}
        shape = getattr(v, "shape", None)
        if shape is not None:
            try:
                d["shape"] = [int(x) for x in shape]
            except (TypeError, ValueError):
                pass
        stride = getattr(v, "stride", None)
        if callable(stride):
            try:
                d["strides"] = [int(x) for x in stride()]
            except Exception:  # noqa: BLE001 - a duck-typed tensor without strides
                pass
        try:
            ptr = int(v.data_ptr())
            d["align"] = 16 if ptr % 16 == 0 else (ptr & -ptr)
        except Exception:  # noqa: BLE001
            pass
        return d
    if isinstance(v, (bool, int, float)) or v is None:
        return v
    inner = getattr(v, "value", None)  # tl.constexpr
    if type(v).__name__ == "constexpr" and isinstance(inner, (bool, int, float, str)):
        return inner
    if isinstance(v, str):
        return v
    return repr(v)[:80]


def _frames(start: FrameType | None, depth: int = 24) -> Iterator[FrameType]:
    f = start
    while f is not None and depth > 0:
        yield f
        f = f.f_back
        depth -= 1


# ----------------------------------------------------------------------------------------------- the recorder


@dataclass
class LaunchState:
    """Launches of one loaded kernel (one CUDA function handle) in this process.

    :ivar count: launches seen; :ivar variant: the capture variant it belongs to (None: not captured/unknown).
    :ivar autotune: launches made by an autotuner's benchmark (see :func:`_in_autotune_benchmark`), counted until
        the kernel's first launch outside one (:attr:`ran`); later launches all count as the program's.
    :ivar seen: distinct launch records written (grid + argument descriptions, as JSON).
    :ivar fn: the ``@triton.jit`` function, whose ``launch_metadata`` callback is removed once sampling is done.
    :ivar done: sampling finished (``launches`` distinct records, or ``4 × launches`` launches seen).
    """

    count: int = 0
    variant: str | None = None
    autotune: int = 0
    ran: bool = False
    seen: set[str] = field(default_factory=set)
    fn: Any = None
    done: bool = False


class Recorder:
    """Writes kernels into one capture directory; one instance per process (see :func:`install`)."""

    def __init__(self, config: CaptureConfig):
        self.config = config
        self.dir = config.directory
        self.state = self.dir / STATE_DIR
        (self.state / "hashes").mkdir(parents=True, exist_ok=True)
        self.pattern = re.compile(config.filter) if config.filter else None
        self.lock = threading.Lock()
        self.by_hash: dict[str, str | None] = {}  # Triton hash → variant name (None: filtered out)
        self.by_function: dict[Any, LaunchState] = {}  # CUfunction handle → launches of that loaded kernel
        self.pid = os.getpid()

    # -- errors --------------------------------------------------------------------------------------------

    def error(self, where: str) -> None:
        """Append the current exception to ``.capture/errors.log`` (never raises)."""
        try:
            with open(self.state / "errors.log", "a") as f:
                f.write(f"[pid {os.getpid()}] {where}:\n{traceback.format_exc()}\n")
        except OSError:
            pass

    # -- compile -------------------------------------------------------------------------------------------

    def on_compile(
        self, src: Any, metadata: dict[str, Any], metadata_group: dict[str, str], times: Any, cache_hit: bool
    ) -> str | None:
        """Record one compiled (or cache-loaded) kernel; returns its variant name (None when filtered out).

        :param src: the ``ASTSource`` (``fn``, ``signature``, ``constants``, ``attrs``) or None when unknown.
        :param metadata: Triton's kernel metadata (``name``, ``hash``, ``target``, options, ``shared`` …).
        :param metadata_group: stage file name → path in Triton's cache (``<name>.ttir`` …).
        """
        name = str(metadata.get("name") or getattr(src, "name", "") or "kernel")
        khash = str(metadata.get("hash") or "")
        with self.lock:
            if khash and khash in self.by_hash:
                return self.by_hash[khash]
        fn = getattr(src, "fn", None)
        qualname = _qualname(fn)
        if self.pattern and not (self.pattern.search(name) or (qualname and self.pattern.search(qualname))):
            with self.lock:
                self.by_hash[khash] = None
            with open(self.state / "skipped.txt", "a") as f:
                f.write(name + "\n")
            return None
        claimed = self._claim(khash) if khash else None
        if claimed is not None:  # another process (or an earlier load) wrote it
            with self.lock:
                self.by_hash[khash] = claimed or None
            return claimed or None
        vname, vdir = self._allocate(name)
        if khash:
            (self.state / "hashes" / khash).write_text(vname)
        with self.lock:
            self.by_hash[khash] = vname
        self._write_variant(vname, vdir, src, fn, metadata, metadata_group, times, cache_hit)
        return vname

    def _claim(self, khash: str) -> str | None:
        """None when this process now owns ``khash``; else the variant name already written for it ('' = pending)."""
        path = self.state / "hashes" / khash
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            for _ in range(50):  # the owner writes the name right after claiming
                text = path.read_text().strip()
                if text:
                    return text
                time.sleep(0.01)
            return ""
        os.close(fd)
        return None

    def _allocate(self, kernel: str) -> tuple[str, Path]:
        """A new variant directory: the kernel name, then ``<name>-2``, ``-3`` … (``mkdir`` is atomic)."""
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", kernel)[:120] or "kernel"
        for i in range(1, 10000):
            vname = base if i == 1 else f"{base}-{i}"
            vdir = self.dir / vname
            try:
                vdir.mkdir()
                return vname, vdir
            except FileExistsError:
                continue
        raise RuntimeError(f"too many variants named {base!r}")

    def _write_variant(
        self,
        vname: str,
        vdir: Path,
        src: Any,
        fn: Any,
        metadata: dict[str, Any],
        metadata_group: dict[str, str],
        times: Any,
        cache_hit: bool,
    ) -> None:
        from irdiff import stages
        from irdiff.bundle import STAGE_FILES, VariantResult

        # Triton's cache files are named by stage (``kernel.ttgir``): irdiff.stages' Triton stages and the cubin.
        suffixes = [s.name for s in stages.text_stages() if s.origin == "triton"] + [a.name for a in stages.ARTIFACTS]

        meta = {k: jsonable(v) for k, v in metadata.items()}
        result = VariantResult(name=vname, kernel=str(meta.get("name", vname)), directory=str(vdir))
        result.target = target_name(meta.get("target"))
        result.cache_hit = bool(cache_hit)
        # Stages: straight from the files Triton just wrote to its cache.
        for fname, path in sorted(metadata_group.items()):
            ext = fname.rsplit(".", 1)[-1]
            stage = ext if ext in suffixes else None
            if stage is None:
                continue
            data = Path(path).read_bytes()
            (vdir / STAGE_FILES[stage]).write_bytes(data)
            result.stages[stage] = STAGE_FILES[stage]
        # Stage "python": the whole file that defines the kernel (IR locations point into it).
        source_path = _source_file(fn)
        if source_path:
            try:
                (vdir / STAGE_FILES["python"]).write_text(Path(source_path).read_text())
                result.stages["python"] = STAGE_FILES["python"]
                meta["source_path"] = source_path
            except OSError:
                pass
        fn_src = getattr(fn, "src", None)
        if isinstance(fn_src, str):
            meta["fn_source"] = fn_src
        if source_path and "python" in result.stages:
            ranges = kernel_line_ranges(fn, source_path)
            if ranges:  # the python stage compares these lines, not the whole file
                meta["kernel_lines"] = ranges[0]
                if len(ranges) > 1:
                    meta["callee_lines"] = ranges[1:]
        if qual := _qualname(fn):
            meta["qualname"] = qual
        result.options = {k: meta[k] for k in OPTION_KEYS if k in meta}
        caller, values, frame_locals = _caller_context(fn)
        meta["compiled_by"] = caller
        if ptxas := _ptxas_of(meta.get("target")):
            meta["ptxas_path"] = ptxas
        report = take_ptxas_report(result.kernel) if not cache_hit else None
        if report is not None:  # Triton's own ptxas -v report of this compile
            from irdiff.bundle import LOG_FILES

            meta["ptxas_path"] = report[0]
            (vdir / LOG_FILES["ptxas"]).write_text(report[1])
            result.logs["ptxas"] = LOG_FILES["ptxas"]
            meta["ptxas_report"] = "captured"
        meta["python"] = sys.executable
        meta["pid"] = os.getpid()
        meta["captured_at"] = time.time()
        if frame_locals.get("inductor") is not None:
            meta["inductor"] = frame_locals["inductor"]
        if times is not None:
            try:
                meta["compile_times_us"] = {
                    "ir_initialization": times.ir_initialization,
                    "lowering_stages": [list(x) for x in times.lowering_stages],
                    "store_results": times.store_results,
                }
                total = times.ir_initialization + sum(t for _, t in times.lowering_stages) + times.store_results
                result.compile_seconds = round(total / 1e6, 4)
            except AttributeError:
                pass
        if src is not None and fn is not None and hasattr(fn, "params"):
            result.specialization, result.config = _specialization(src, fn, values)
        if values:
            grid = frame_locals.get("grid")
            call = {
                "warmup": bool(frame_locals.get("warmup")),
                "grid": jsonable(grid) if not callable(grid) else "callable",
                "args": {k: describe_arg(v) for k, v in values.items()},
            }
            meta["compile_call"] = call
        result.metadata = meta
        atomic_write(vdir / "variant.json", json.dumps(result.to_json(), indent=1, default=str))
        self._add_to_manifest(vname, result.target, str(meta.get("triton_version", "")))
        self._attach_launch_metadata(fn)

    def _add_to_manifest(self, vname: str, target: str, triton_version: str) -> None:
        mf = self.dir / "manifest.json"
        with locked(self.dir):
            m: dict[str, Any] = (
                json.loads(mf.read_text()) if mf.is_file() else {"schema": "irdiff.bundle/1", "suite": "capture"}
            )
            variants = m.setdefault("variants", [])
            if vname not in variants:
                variants.append(vname)
            targets = [t for t in str(m.get("target") or "").split(",") if t]
            if target and target not in targets:
                m["target"] = ",".join([*targets, target])
            versions = [t for t in str(m.get("triton_version") or "").split(",") if t]
            if triton_version and triton_version not in versions:
                m["triton_version"] = ",".join([*versions, triton_version])
            atomic_write(mf, json.dumps(m, indent=1))

    # -- loads and launches (GPU) ----------------------------------------------------------------------------

    def on_load(self, function: Any, name: str, metadata_group: dict[str, str], khash: str) -> None:
        """``kernel_load_end_hook``: map the CUDA function handle to the kernel; record kernels this process
        never compiled (e.g. unpickled from an Inductor compile worker)."""
        with self.lock:
            known = khash in self.by_hash
        kernel = _find_local("self", lambda o: getattr(o, "hash", None) == khash and hasattr(o, "src"))
        src = getattr(kernel, "src", None)
        if not known:
            md = getattr(kernel, "metadata", None)
            meta: dict[str, Any] = md._asdict() if md is not None and hasattr(md, "_asdict") else {}
            if not meta:
                jpath = next((p for f, p in metadata_group.items() if f.endswith(".json") and "__grp__" not in f), None)
                meta = json.loads(Path(jpath).read_text()) if jpath else {"name": name, "hash": khash}
            meta.setdefault("hash", khash)
            self.on_compile(src, meta, metadata_group, None, True)
        fn = getattr(src, "fn", None)
        with self.lock:
            self.by_function[function] = LaunchState(variant=self.by_hash.get(khash), fn=fn)
        self._attach_launch_metadata(fn)

    def _attach_launch_metadata(self, fn: Any) -> None:
        """Give the ``@triton.jit`` function a ``launch_metadata`` callback (Triton calls it lazily, only when a
        launch hook asks, with ``(grid, kernel metadata, {arg name: value})``), chaining one already set."""
        if self.config.launches <= 0 or fn is None or not hasattr(fn, "launch_metadata"):
            return
        prev = fn.launch_metadata
        if getattr(prev, "_irdiff", False):
            return

        def launch_metadata(grid: Any, kmeta: Any, args: dict[str, Any]) -> dict[str, Any]:
            out = dict(prev(grid, kmeta, args) or {}) if prev is not None else {}
            out["irdiff_launch"] = (grid, getattr(kmeta, "hash", None), args)
            return out

        launch_metadata._irdiff = True  # type: ignore[attr-defined]
        launch_metadata._irdiff_prev = prev  # type: ignore[attr-defined]
        try:
            fn.launch_metadata = launch_metadata
        except AttributeError:
            pass

    def on_launch(self, lazy: Any) -> None:
        """``launch_enter_hook``: count launches per CUDA function; sample grid and arguments of the first ones."""
        data = getattr(lazy, "data", None)
        if not isinstance(data, dict):
            return
        st = self.by_function.get(data.get("function"))
        if st is None:
            st = self.by_function.setdefault(data.get("function"), LaunchState())
        st.count += 1
        bench = False
        if not st.ran:  # autotuners benchmark a kernel before the program runs it: only then look at the stack
            bench = _in_autotune_benchmark()
            if bench:
                st.autotune += 1
            else:
                st.ran = True
        if st.done:
            return
        if st.count > 4 * self.config.launches or len(st.seen) >= self.config.launches:
            st.done = True
            self._detach_launch_metadata(st.fn)
            return
        info = lazy.get().get("irdiff_launch") if hasattr(lazy, "get") else None
        if info is None:  # the kernel object has no (or a foreign) launch_metadata: read the launching frame
            found = _launch_from_frames()
            if found is None:
                return
            info = (found[0], None, found[1])
        grid, khash, args = info
        vname = st.variant or self.by_hash.get(khash or "")
        if vname is None and khash:
            p = self.state / "hashes" / khash
            vname = p.read_text().strip() if p.is_file() else None
        if not vname:
            return
        st.variant = vname
        record = {
            "grid": [int(g) for g in grid] if isinstance(grid, (list, tuple)) else jsonable(grid),
            "args": {k: describe_arg(v) for k, v in args.items()},
        }
        key = json.dumps(record, sort_keys=True, default=str)
        if key in st.seen:
            return
        st.seen.add(key)
        record["launch"] = st.count
        record["pid"] = os.getpid()
        if bench:
            record["autotune"] = True
        with open(self.dir / vname / "launches.jsonl", "a") as f:
            f.write(json.dumps(record, default=str) + "\n")

    def _detach_launch_metadata(self, fn: Any) -> None:
        """Sampling is over for every loaded kernel of ``fn``: give it back its own ``launch_metadata`` (Triton
        then skips building the argument dict on each launch)."""
        if fn is None or not getattr(fn.launch_metadata, "_irdiff", False):
            return
        if all(st.done for st in list(self.by_function.values()) if st.fn is fn):
            try:
                fn.launch_metadata = fn.launch_metadata._irdiff_prev
            except AttributeError:
                pass

    def write_launch_counts(self) -> None:
        """At exit: launches per variant seen by this process → ``.capture/launches-<pid>.json``, and those made
        by an autotuner's benchmark → ``.capture/autotune-<pid>.json``."""
        counts: dict[str, int] = {}
        autotune: dict[str, int] = {}
        for st in list(self.by_function.values()):
            if st.variant:
                counts[st.variant] = counts.get(st.variant, 0) + st.count
                if st.autotune:
                    autotune[st.variant] = autotune.get(st.variant, 0) + st.autotune
        if counts:
            atomic_write(self.state / f"launches-{os.getpid()}.json", json.dumps(counts))
        if autotune:
            atomic_write(self.state / f"autotune-{os.getpid()}.json", json.dumps(autotune))


# ----------------------------------------------------------------------------------------------- frame helpers


def _qualname(fn: Any) -> str:
    inner = getattr(fn, "fn", None)
    if inner is None:
        return ""
    return f"{getattr(inner, '__module__', '')}.{getattr(inner, '__qualname__', '')}".strip(".")


def _source_file(fn: Any) -> str | None:
    inner = getattr(fn, "fn", None)
    if inner is None:
        return None
    try:
        path = inspect.getsourcefile(inner)
    except TypeError:
        return None
    return path if path and os.path.isfile(path) else None


def kernel_line_ranges(fn: Any, source_path: str) -> list[list[int]]:
    """``[[first, last], ...]`` (1-based, inclusive, decorators included): the ``@triton.jit`` function's own lines,
    then those of the ``@triton.jit`` functions it calls (by name, through its module's globals, one level deep and
    recursively, at most 16) that are defined in the same file. Empty when the source cannot be read."""
    inner = getattr(fn, "fn", None)
    if inner is None:
        return []
    out: list[list[int]] = []
    seen: set[int] = set()
    todo = [inner]
    while todo and len(out) < 17:
        f = todo.pop(0)
        if id(f) in seen:
            continue
        seen.add(id(f))
        try:
            if os.path.realpath(inspect.getsourcefile(f) or "") != os.path.realpath(source_path):
                continue
            lines, first = inspect.getsourcelines(f)
        except (OSError, TypeError):
            continue
        out.append([first, first + len(lines) - 1])
        glb = getattr(f, "__globals__", {}) or {}
        for name in re.findall(r"\b([A-Za-z_]\w*)\s*\(", "".join(lines)):
            obj = glb.get(name)
            callee = getattr(obj, "fn", None)
            if callee is not None and hasattr(obj, "params") and callable(callee):
                todo.append(callee)
    return out


def _ptxas_of(target: Any) -> str | None:
    """The ptxas this process' Triton runs for a CUDA ``target`` right now (``get_ptxas(arch).path``, which honours
    ``TRITON_PTXAS_PATH`` / ``TRITON_PTXAS_BLACKWELL_PATH``). Recorded at compile time because programs set these
    in their own process: TorchInductor points ``TRITON_PTXAS_PATH`` at the ptxas of the CUDA torch was built for
    (``torch/_inductor/runtime/compile_tasks.py: _set_triton_ptxas_path``), and Triton then also derives the PTX
    ``.version`` from it; the after-run step must assemble with the same binary."""
    if not isinstance(target, dict) or target.get("backend") != "cuda" or not isinstance(target.get("arch"), int):
        return None
    from irdiff.compile import compat

    try:
        return compat.ptxas_for_arch(int(target["arch"]))
    except Exception:  # noqa: BLE001 - no NVIDIA backend in this Triton: nothing to record
        return None


def _find_local(name: str, pred: Any, depth: int = 8) -> Any:
    for f in _frames(sys._getframe(2), depth):
        obj = f.f_locals.get(name)
        if obj is not None and pred(obj):
            return obj
    return None


# Locals of a launcher frame that are not kernel arguments (Triton's JIT ``run``, TorchInductor's generated
# ``launcher``).
_LAUNCHER_LOCALS = {"stream", "function", "metadata", "launch_metadata", "bin", "runner", "shared", "num_warps"}


def _in_autotune_benchmark(depth: int = 10) -> bool:
    """True when the launch in progress is an autotuner's benchmark: a ``kernel_call`` frame within ``depth`` frames
    of the launch hook. Both autotuners name the closure they time so: Triton's ``Autotuner._bench``
    (``triton/runtime/autotuner.py``) and TorchInductor's ``CachingAutotuner.bench``
    (``torch/_inductor/runtime/triton_heuristics.py``, called by ``benchmark_all_configs``). About 1 µs."""
    f: FrameType | None = sys._getframe(2)
    while f is not None and depth > 0:
        if f.f_code.co_name == "kernel_call":
            return True
        f = f.f_back
        depth -= 1
    return False


def _launch_from_frames() -> tuple[Any, dict[str, Any]] | None:
    """Grid and arguments of the launch in progress, read from the Python frame that called the launcher: the
    JIT's ``run`` (``grid``, ``bound_args``) or a frame with ``grid_0``/``grid_1``/``grid_2`` locals (TorchInductor's
    generated ``launcher``, whose other locals are the kernel's arguments by name)."""
    for f in _frames(sys._getframe(2), 8):
        loc = f.f_locals
        if f.f_code.co_name == "run" and isinstance(loc.get("bound_args"), dict) and "grid" in loc:
            return loc.get("grid"), dict(loc["bound_args"])
        if "grid_0" in loc:
            grid = [loc.get("grid_0"), loc.get("grid_1", 1), loc.get("grid_2", 1)]
            args = {
                k: v
                for k, v in loc.items()
                if not k.startswith(("grid", "_"))
                and k not in _LAUNCHER_LOCALS
                and (hasattr(v, "data_ptr") or isinstance(v, (bool, int, float)))
            }
            return grid, args
    return None


def _caller_context(fn: Any) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Who called ``triton.compile`` and, for the JIT, the argument values of that call.

    :returns: (caller as ``module.function``, {parameter: value} from ``JITFunction.run``'s ``bound_args`` or {},
        extra: ``grid``/``warmup`` of the JIT call, ``inductor`` facts from TorchInductor's ``CachingAutotuner``).
    """
    caller = ""
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    seen_compile = False
    for f in _frames(sys._getframe(1), 30):
        code = f.f_code
        loc = f.f_locals
        if code.co_name == "compile" and code.co_filename.endswith(os.path.join("compiler", "compiler.py")):
            seen_compile = True
            continue
        if not seen_compile:
            continue
        if not caller:
            mod = f.f_globals.get("__name__", "?")
            caller = f"{mod}.{code.co_name}"
        if code.co_name == "run" and "bound_args" in loc and loc.get("self") is fn:
            ba = loc.get("bound_args")
            if isinstance(ba, dict):
                values = dict(ba)
            extra["grid"] = loc.get("grid")
            extra["warmup"] = loc.get("warmup")
            caller = "triton.runtime.jit.JITFunction.run"
            break
        owner = loc.get("self")
        if owner is not None and hasattr(owner, "inductor_meta") and hasattr(owner, "triton_meta"):
            im = getattr(owner, "inductor_meta", {}) or {}
            cfg = loc.get("cfg")
            extra["inductor"] = jsonable(
                {
                    "kernel_name": im.get("kernel_name"),
                    "size_hints": getattr(owner, "size_hints", None),
                    "config": getattr(cfg, "kwargs", None),
                    "num_warps": getattr(cfg, "num_warps", None),
                    "num_stages": getattr(cfg, "num_stages", None),
                    "configs": len(getattr(owner, "configs", []) or []),
                }
            )
            break
    return caller, values, extra


def _specialization(src: Any, fn: Any, values: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """Stage 0 from the ``ASTSource`` the compiler received, explained by the compile driver's own module."""
    from irdiff.compile.specialize import build_specialization
    from irdiff.suite import Tensor

    captured = {
        "signature": getattr(src, "signature", {}) or {},
        "constants": getattr(src, "constants", {}) or {},
        "configs": [getattr(src, "attrs", {}) or {}],
    }
    described: dict[str, Any] = {}
    for k, v in values.items():
        d = describe_arg(v)
        if isinstance(d, dict) and "dtype" in d:
            try:
                described[k] = Tensor(
                    shape=tuple(d.get("shape", ())),
                    dtype=d["dtype"],
                    strides=tuple(d["strides"])
                    if "strides" in d and len(d["strides"]) == len(d.get("shape", ()))
                    else None,
                    align=int(d.get("align", 16)),
                )
                continue
            except Exception:  # noqa: BLE001 - a dtype irdiff does not model: keep the text
                pass
        described[k] = v if isinstance(d, (bool, int, float, str)) or v is None else str(d)
    specs = build_specialization(fn, described, captured)
    config: dict[str, Any] = {}
    for s in specs:
        if s.is_constexpr_param and s.constexpr is not None:
            config[s.name] = s.constexpr
        if not values:
            s.value = ""
            s.reason = _reason_from_caller(s)
    return specs, config


def _reason_from_caller(s: Any) -> str:
    """Reason sentence when the compiler was called directly (no JIT binder, no argument values seen)."""
    if s.is_constexpr_param:
        return f"declared tl.constexpr: the caller compiled it as {s.constexpr}"
    if s.type == "constexpr":
        return f"the caller of triton.compile passed it as the constant {s.constexpr}"
    what = "pointer" if s.type.startswith("*") else f"runtime {s.type}"
    if s.divisibility:
        return f"{what}: the caller of triton.compile marked it divisible by {s.divisibility}"
    return f"{what}: no divisibility given by the caller of triton.compile"


# ----------------------------------------------------------------------------------------------- installation

_RECORDER: Recorder | None = None


def recorder() -> Recorder | None:
    """The recorder installed in this process by :func:`install`, or None."""
    return _RECORDER


def install(config: CaptureConfig) -> Recorder:
    """Install the hooks in this process now (``triton`` must be importable; imports it).

    Idempotent per process. Chains a compilation listener the program set before (it is called after ours).
    """
    global _RECORDER
    if _RECORDER is not None and _RECORDER.pid == os.getpid():
        return _RECORDER
    rec = Recorder(config)
    _RECORDER = rec
    from triton import knobs

    if config.target:
        from triton.backends.compiler import GPUTarget
        from triton.runtime.driver import driver

        from irdiff.compile.worker import parse_target

        driver.set_active(no_launch_driver(GPUTarget("cuda", parse_target(config.target), 32)))

    _tee_ptxas_reports()
    prev_listener = knobs.compilation.listener

    def listener(*, src: Any = None, metadata: Any = None, metadata_group: Any = None, **kw: Any) -> None:
        try:
            rec.on_compile(
                src, dict(metadata or {}), dict(metadata_group or {}), kw.get("times"), bool(kw.get("cache_hit"))
            )
        except Exception:  # noqa: BLE001 - never break the program
            rec.error("compilation listener")
        if prev_listener is not None:
            prev_listener(src=src, metadata=metadata, metadata_group=metadata_group, **kw)

    knobs.compilation.listener = listener

    if config.launches > 0 and not config.target:

        def load_end(module: Any, function: Any, name: Any, metadata_group: Any, khash: Any, *a: Any) -> None:
            try:
                rec.on_load(function, str(name), dict(metadata_group or {}), str(khash))
            except Exception:  # noqa: BLE001
                rec.error("kernel_load_end_hook")

        def launch_enter(lazy: Any) -> None:
            try:
                rec.on_launch(lazy)
            except Exception:  # noqa: BLE001
                rec.error("launch_enter_hook")

        _add_hook(knobs.runtime, "kernel_load_end_hook", load_end)
        _add_hook(knobs.runtime, "launch_enter_hook", launch_enter)
        atexit.register(rec.write_launch_counts)

    pids = rec.state / "pids"
    pids.mkdir(exist_ok=True)
    (pids / str(os.getpid())).write_text(
        json.dumps({"python": sys.executable, "argv": sys.argv[:8], "triton": getattr(knobs, "__file__", "")})
    )
    return rec


# Shared memory per block a kernel may request, by compute capability (CUDA C Programming Guide, "Technical
# Specifications per Compute Capability"); the launch check in ``CompiledKernel._init_handles`` compares with it.
_MAX_SHARED = {80: 166912, 86: 101376, 89: 101376, 90: 232448, 100: 232448, 120: 101376}
SKIPPED_LAUNCH_NOTICE = (
    "irdiff capture: --target {target}: no GPU, so kernel launches are skipped (kernels are compiled and captured; "
    "the program's results are not computed)\n"
)


def no_launch_driver(target: Any) -> Any:
    """The ``--target`` stand-in driver for a captured program: the compile driver's
    :class:`~irdiff.compile.worker.TargetDriver`, plus what ``CompiledKernel._init_handles`` asks of a driver
    before a launch (``launcher_cls``, ``utils.load_binary``, ``utils.get_device_properties``), so that a launch
    compiles the kernel and then does nothing instead of failing with ``'TargetDriver' object has no attribute
    'launcher_cls'``. The first skipped launch in a process prints one notice on stderr."""
    from types import SimpleNamespace

    from irdiff.compile.worker import TargetDriver

    arch = int(getattr(target, "arch", 90))
    told: list[bool] = []

    def skipped_launch(*args: Any, **kwargs: Any) -> None:
        if not told:
            told.append(True)
            sys.stderr.write(SKIPPED_LAUNCH_NOTICE.format(target=f"sm{arch}"))

    class NoLaunchDriver(TargetDriver):
        def launcher_cls(self, src: Any, metadata: Any) -> Any:
            return skipped_launch

    def load_binary(name: Any, kernel: Any, shared: Any, device: Any) -> tuple[Any, int, int, int, int]:
        return (object(), 0, 0, 0, 1024)  # module, function handle, registers, spills, max threads per block

    def get_device_properties(device: Any) -> dict[str, int]:
        return {"max_shared_mem": _MAX_SHARED.get(arch, 101376), "multiprocessor_count": 132, "warpSize": 32}

    drv = NoLaunchDriver(target)
    drv.utils = SimpleNamespace(load_binary=load_binary, get_device_properties=get_device_properties)  # type: ignore[attr-defined]
    return drv


_PTXAS_LOCAL = threading.local()  # .report: (ptxas path, its -v report) of the last ptxas run in this thread


class _PtxasTee:
    """Stands in for the ``subprocess`` module inside ``triton.backends.nvidia.compiler``: ``run`` runs the command
    unchanged and, for Triton's own ``ptxas ... -v`` call in ``make_cubin`` (stderr sent to a temporary log file it
    deletes right after), keeps that report for the kernel being compiled, so the after-run step needs no second
    ptxas run. Every other attribute is the real module's."""

    def __init__(self, real: Any):
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def run(self, cmd: Any, *args: Any, **kwargs: Any) -> Any:
        result = self._real.run(cmd, *args, **kwargs)
        try:
            err_name = getattr(kwargs.get("stderr"), "name", None)
            if isinstance(cmd, (list, tuple)) and "-v" in cmd and isinstance(err_name, str) and "ptxas" in str(cmd[0]):
                with open(err_name, errors="replace") as f:
                    _PTXAS_LOCAL.report = (str(cmd[0]), f.read())
        except Exception:  # noqa: BLE001 - the compile goes on; the after-run step re-runs ptxas instead
            pass
        return result


def _tee_ptxas_reports() -> None:
    try:
        from triton.backends.nvidia import compiler as nvc
    except Exception:  # noqa: BLE001 - no NVIDIA backend
        return
    if not isinstance(getattr(nvc, "subprocess", None), _PtxasTee) and hasattr(nvc, "subprocess"):
        nvc.subprocess = _PtxasTee(nvc.subprocess)


def take_ptxas_report(kernel: str) -> tuple[str, str] | None:
    """The ptxas ``-v`` report of the compile that just finished in this thread, if it was for ``kernel`` (the
    report names its entry function); taken once."""
    rep = getattr(_PTXAS_LOCAL, "report", None)
    _PTXAS_LOCAL.report = None
    if rep and f"'{kernel}'" in rep[1]:
        return rep
    return None


def _add_hook(ns: Any, attr: str, fn: Any) -> None:
    """Add to a Triton ``HookChain`` (3.6+), or chain with a plain callable already there."""
    current = getattr(ns, attr, None)
    if current is not None and hasattr(current, "add"):
        current.add(fn)
        return
    if current is None:
        setattr(ns, attr, fn)
        return

    def both(*a: Any, **k: Any) -> None:
        fn(*a, **k)
        current(*a, **k)

    setattr(ns, attr, both)


def install_from_env() -> None:
    """Entry point of the ``sitecustomize`` bootstrap, called right after the program imported ``triton``: read
    :class:`CaptureConfig` from the environment and install the hooks. Never raises (a failure is reported in one
    line on stderr and in ``.capture/errors.log``; the program runs on, uncaptured)."""
    config = CaptureConfig.from_env(os.environ)
    if config is None or not (config.directory / "manifest.json").is_file():
        return
    try:
        install(config)
    except Exception:  # noqa: BLE001 - report, and let the program run uncaptured
        msg = traceback.format_exc()
        try:
            with open(config.directory / STATE_DIR / "errors.log", "a") as f:
                f.write(f"[pid {os.getpid()}] install:\n{msg}\n")
        except OSError:
            pass
        sys.stderr.write(f"irdiff capture: hooks not installed: {msg.strip().splitlines()[-1]}\n")
