"""Compile one variant for one target, in its own process, and write its stages to a variant directory.

Run as ``python -m irdiff.compile.worker REQUEST.json``. A fresh process per variant keeps Triton's global state
from leaking between variants: environment variables read at compile time, the active driver, and the
``MLIR_DUMP_PATH`` that Triton latches once per process. Triton's file cache (``TRITON_CACHE_DIR``) is shared.

The kernel goes through the JIT's own ``JITFunction.run(..., warmup=True)`` under a driver stand-in that reports
the requested target (no GPU needed: ``triton/runtime/driver.py: driver.set_active``). The specialization is
captured from ``knobs.runtime.jit_cache_hook``; stages from the returned ``CompiledKernel.asm``; the compiler's
coalescing/pipelining reasoning from ``TRITON_ENABLE_LLVM_DEBUG`` on stderr; registers and spills from the ptxas
log that ``knobs.nvidia.dump_ptxas_log`` prints.

Size: over 800 lines because everything one compile process runs is here, in the order it runs: binding the
suite's launch to the kernel (one-line suite errors before Triton compiles), the driver stand-in, the compile, the
stages, logs and cubin resources it writes, and the compiler error message; the parent imports only the launch
helpers and :func:`finish_pass_dump` from it.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from irdiff import stages
from irdiff.bundle import LOG_FILES, STAGE_FILES, Resources, VariantResult
from irdiff.compile import compat
from irdiff.compile.specialize import build_specialization
from irdiff.interrupt import die_with_parent
from irdiff.suite import (
    DTYPES,
    Scalar,
    Suite,
    SuiteError,
    Tensor,
    args_failure_where,
    did_you_mean,
    load_suite,
    resolve_values,
)
from irdiff.target import parse_target as _parse_target

LLVM_DEBUG_TYPES = "tritongpu-coalesce,triton-loop-pipeline"


class FakeTensor:
    """Stand-in for a tensor at compile time: the JIT reads only ``data_ptr()`` and ``dtype``."""

    def __init__(self, t: Tensor):
        import triton.language as tl

        self.dtype = getattr(tl, _TL_DTYPES.get(t.dtype, t.dtype))
        self._ptr = 0x7F0000000000 + (t.align % 16 if t.align < 16 else 0)
        self.shape = t.shape

    def data_ptr(self) -> int:
        return self._ptr


_TL_DTYPES = {name: d.triton for name, d in DTYPES.items()}


class TargetDriver:
    """The active-driver stand-in: answers the JIT's target/device/stream questions for a chosen GPU target."""

    def __init__(self, target: Any):
        self.target = target

    def get_current_target(self) -> Any:
        return self.target

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int | None = None) -> int:
        return 0

    def get_benchmarker(self) -> Any:
        def no_bench(*a: Any, **k: Any) -> Any:
            raise RuntimeError("benchmarking needs a GPU")

        return no_bench

    def get_device_interface(self) -> Any:
        raise RuntimeError("no GPU device: irdiff compiles for a named target")

    def is_active(self) -> bool:
        return True


def parse_target(name: str) -> int:
    """``"sm90"`` → 90 (:func:`irdiff.target.parse_target`). :raises ValueError: unknown target, listing the
    supported ones."""
    return _parse_target(name).capability


def select_config(suite: Suite, kernel: Any, selector: Any) -> dict[str, Any]:
    """Resolve ``--config`` (None, an index, or ``{"BLOCK_SIZE_M": 128, ...}``) to constexprs + options."""
    configs = list(suite.configs) or list(getattr(kernel, "configs", []) or [])
    if not configs:
        if selector is None:
            return {}
        if isinstance(selector, int):
            raise ValueError(f"--config {selector}: suite {suite.name!r} has no autotune configs (use KEY=VALUE)")
        # No autotune configs: KEY=VALUE overrides the suite's own constexprs and options.
        want = dict(selector)
        _check_config_types(want, {**suite.constexprs, **suite.options}, set(getattr(kernel, "arg_names", None) or []))
        return want
    if selector is None:
        chosen = configs[suite.default_config if suite.default_config < len(configs) else 0]
        return config_kwargs(chosen)
    if isinstance(selector, int):
        if not 0 <= selector < len(configs):
            raise ValueError(f"--config {selector}: suite {suite.name!r} has configs 0..{len(configs) - 1}")
        return config_kwargs(configs[selector])
    want = dict(selector)
    base = config_kwargs(configs[suite.default_config if suite.default_config < len(configs) else 0])
    known = {*suite.constexprs, *suite.options, *(getattr(kernel, "arg_names", None) or [])}
    _check_config_types(want, base, known)
    for c in configs:
        kw = config_kwargs(c)
        if all(str(kw.get(k)) == str(v) for k, v in want.items()):
            return kw
    # Not among the autotune configs: start from the default config and override.
    base.update(want)
    return base


_OPTION_KEYS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def _check_config_types(want: dict[str, Any], base: dict[str, Any], known: set[str]) -> None:
    """``--config KEY=VALUE`` values must have the type the suite's configs give ``KEY`` (an ``int`` block size
    stays an int): ``--config BLOCK_SIZE_M=abc`` is refused before anything is compiled.

    :raises ValueError: a value of another type, or a key that is neither a config key nor a compile option.
    """
    for k, v in want.items():
        if k in base:
            ref = base[k]
            if isinstance(ref, bool) or ref is None:
                continue
            if isinstance(ref, int) and not isinstance(v, int):
                raise ValueError(f"--config {k}={v}: {k} is an integer (the suite's configs have {k}={ref})")
            if isinstance(ref, int) and ref > 0 and v <= 0:
                raise ValueError(f"--config {k}={v}: {k} must be a positive integer")
        elif k in _OPTION_KEYS or k in known:
            if k not in _OPTION_KEYS:
                continue
            if not isinstance(v, int) or v <= 0:
                raise ValueError(f"--config {k}={v}: {k} must be a positive integer")
        else:
            raise ValueError(
                f"--config {k}: not a parameter or option of the kernel (known: {', '.join(sorted({*base, *known}))})"
            )


def config_kwargs(c: Any) -> dict[str, Any]:
    """``triton.Config`` or dict → flat kwargs (constexprs plus num_warps/num_stages/num_ctas/maxnreg)."""
    if isinstance(c, dict):
        out = dict(c.get("kwargs", {}))
        out.update({k: v for k, v in c.items() if k != "kwargs"})
        return out
    kw = dict(c.kwargs)
    for opt in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
        v = getattr(c, opt, None)
        if v is not None:
            kw[opt] = v
    return kw


def resolve_launch(suite: Suite, req: dict[str, Any]) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """What the JIT is called with for ``req`` (``variant``, ``config``, ``shape``, ``target``): the base
    ``JITFunction``, the example arguments (``Tensor`` specs and scalars) and the keyword arguments (constexprs and
    options: suite, config, variant, with ``Derived`` values resolved for the target). Used by the worker to
    compile and by the driver to key its cache on the same inputs.

    :raises SuiteError: unknown variant. :raises ValueError: bad ``--config``.
    """
    variant = suite.variant(req["variant"])
    kernel = variant.kernel
    jit_fn = compat.base_jit_function(kernel)
    shape = dict(suite.shape)
    shape.update(req.get("shape") or {})
    try:
        values = dict((variant.args or suite.args)(shape))
    except SuiteError as e:  # a Tensor/Scalar the suite describes wrongly (unknown dtype, strides): say where
        raise SuiteError(
            f"{_suite_where(suite, kernel)}, variant {req['variant']!r}: args(shape){args_failure_where(e)}: {e}"
        ) from None
    except Exception as e:  # noqa: BLE001 - user code may raise anything; report it in one line
        raise SuiteError(
            f"{_suite_where(suite, kernel)}, variant {req['variant']!r}: its args(shape) failed for shape"
            f" {shape}: {type(e).__name__}: {e}"
        ) from None
    cfg = select_config(suite, kernel, req.get("config"))
    kwargs: dict[str, Any] = {**suite.constexprs, **suite.options, **cfg, **variant.constexprs, **variant.options}
    kwargs = resolve_values(kwargs, shape, req["target"])  # Derived values (NUM_SMS per target, BLOCK_N = N)
    check_launch(suite, req["variant"], kernel, values, kwargs)
    return jit_fn, values, kwargs


def _suite_where(suite: Suite, kernel: Any) -> str:
    """``suite file F, suite 'NAME'`` (a built-in suite: the file that defines its kernel)."""
    where = suite.source_file
    if not where:
        with contextlib.suppress(Exception):
            where = inspect.getsourcefile(compat.base_jit_function(kernel).fn) or ""
    return f"suite file {where or '?'}, suite {suite.name!r}"


def check_launch(suite: Suite, variant: str, kernel: Any, values: dict[str, Any], kwargs: dict[str, Any]) -> None:
    """Check that the JIT call the suite describes binds to the kernel's parameters, before anything is compiled.

    The JIT would fail later with its own Python text (``dynamic_func() missing 1 required positional argument``,
    ``Keyword argument X was specified but unrecognised``); a suite's mistake is bad input instead: one line naming
    the suite file, the kernel and the parameter.

    :param values: the example arguments (``args(shape)``: :class:`Tensor`, :class:`Scalar`, Python values).
    :param kwargs: constexprs and options (suite, config, variant; ``Derived`` resolved).
    :raises SuiteError: a parameter without a default that neither gives; a name given twice (``args`` and
        constexprs/config); an argument or constexpr the kernel has no parameter for; a compile option Triton's
        ``CUDAOptions`` (``triton/backends/nvidia/compiler.py``) does not know; a tensor given to a
        ``tl.constexpr`` parameter.
    """
    jit_fn = compat.base_jit_function(kernel)
    params = list(getattr(jit_fn, "params", []) or [])
    if not params:
        return
    names = [p.name for p in params]
    where = f"{_suite_where(suite, kernel)}, variant {variant!r}: kernel {jit_fn.__name__}"
    sig = f"(parameters: {', '.join(names)})"

    def origin(k: str, args: bool = True) -> str:
        if args and k in values:
            return "args"
        var = suite.variants.get(variant)
        if k in suite.constexprs or (var is not None and k in var.constexprs):
            return "constexprs"
        if k in suite.options or (var is not None and k in var.options):
            return "options"
        return "the autotune config"

    twice = sorted(set(values) & set(kwargs))
    if twice:
        raise SuiteError(f"{where}: {twice[0]!r} is given twice, in args and in {origin(twice[0], False)}")
    unknown_args = [k for k in values if k not in names]
    if unknown_args:
        k = unknown_args[0]
        raise SuiteError(f"{where}: args gives {k!r}, not a parameter of the kernel{did_you_mean(k, names)} {sig}")
    options: set[str] | None = None
    for k in kwargs:
        if k in names or k in _OPTION_KEYS:
            continue
        if options is None:
            options = compat.option_names()
        if options and k not in options:
            src = origin(k)
            if src == "options":
                raise SuiteError(
                    f"{where}: options gives {k!r}, not a compile option of Triton{did_you_mean(k, sorted(options))}"
                )
            raise SuiteError(f"{where}: {src} gives {k!r}, not a parameter of the kernel{did_you_mean(k, names)} {sig}")
    heur = getattr(kernel, "values", None) if type(kernel).__name__ == "Heuristics" else None
    missing = [
        p.name for p in params if p.name not in values and p.name not in kwargs and not getattr(p, "has_default", False)
    ]
    if missing:
        what = "parameter" if len(missing) == 1 else "parameters"
        note = ""
        if heur and any(m in heur for m in missing):
            note = "; triton.heuristics values are not applied by irdiff: give them as constexprs"
        raise SuiteError(
            f"{where} is called without its {what} {', '.join(repr(m) for m in missing)} {sig}: give "
            f"{'it' if len(missing) == 1 else 'them'} in the suite's args or constexprs{note}"
        )
    for p in params:
        v = values.get(p.name, kwargs.get(p.name))
        if getattr(p, "is_constexpr", False) and isinstance(v, (Tensor, Scalar)):
            given = v.describe() if isinstance(v, Tensor) else f"Scalar {v.describe()}"
            raise SuiteError(
                f"{where}: {p.name!r} is a tl.constexpr but {origin(p.name)} gives it a {type(v).__name__}"
                f" ({given}); a constexpr takes a Python value (int, float, bool, str)"
            )


@contextlib.contextmanager
def _capture_fds(out_path: Path, err_path: Path) -> Iterator[None]:
    """Send file descriptors 1 and 2 (C++ and ptxas output included) to files for the duration."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(out_path, "w") as fo, open(err_path, "w") as fe:
        os.dup2(fo.fileno(), 1)
        os.dup2(fe.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


class _NoTorch:
    """A ``sys.meta_path`` finder that refuses ``torch`` (and its submodules) with ``ModuleNotFoundError``, as if
    it were not installed; see :func:`_torch_kept_out`."""

    @staticmethod
    def find_spec(name: str, path: Any = None, target: Any = None) -> None:
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r} (kept out of the compile worker)", name=name)
        return None


@contextlib.contextmanager
def _torch_kept_out() -> Iterator[None]:
    """Keep ``torch`` from being imported while the JIT specializes and compiles, unless something (a suite that
    imports torch) already did.

    Triton 3.6's native specializer imports torch on its first call only to recognize ``torch.Tensor`` arguments
    (``python/src/specialize.cc: init_globals``, an ``import torch`` whose failure it tolerates); the worker passes
    :class:`FakeTensor` stand-ins, never torch tensors, so the specialization and the compiled code are the same
    without it (byte-identical stages, checked on 3.6.0 and 3.9.0). That import was about half of a compile job's
    CPU time (~3-4 s of ~7 s on the 2-core development machine: one fresh process per compile) and, with many
    compiles in parallel, most of their page-faulting. A finder that refuses the module (rather than a ``None`` in
    ``sys.modules``, which releases that only look torch up in ``sys.modules`` would take for torch) is removed
    afterwards.
    """
    if "torch" in sys.modules:
        yield
        return
    finder = _NoTorch()
    sys.meta_path.insert(0, finder)  # type: ignore[arg-type]
    try:
        yield
    finally:
        sys.meta_path.remove(finder)  # type: ignore[arg-type]


_PTXAS_REGS = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?")
_PTXAS_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


def parse_ptxas_log(log: str, res: Resources) -> None:
    """Fill registers/barriers/stack/spills from a ``ptxas -v`` report (last function reported wins)."""
    for m in _PTXAS_REGS.finditer(log):
        res.registers = int(m.group(1))
        res.barriers = int(m.group(2)) if m.group(2) else 0
    for m in _PTXAS_SPILL.finditer(log):
        res.stack_bytes, res.spill_store_bytes, res.spill_load_bytes = map(int, m.groups())


def run_ptxas(ptx: str, arch: int, ptxas: str | None = None, args: Sequence[str] = ()) -> tuple[str, str]:
    """Re-run ptxas on ``ptx`` with ``-v`` (when its own log was not captured), as Triton's ``make_cubin``
    (``backends/nvidia/compiler.py``) runs it: ``-lineinfo``, ``--gpu-name=sm_<arch>[a]``, plus ``args`` (e.g.
    ``--fmad=false``).

    :param ptxas: the ptxas binary; default: the one this process' Triton uses for ``arch``. A PTX file whose
        ``.version`` is newer than that ptxas supports fails (``Unsupported .version``): pass the ptxas that
        compiled it.
    :returns: (report text, ptxas path); the report is ptxas' error output when it failed.
    """
    ptxas = ptxas or compat.ptxas_for_arch(arch)
    gpu = f"sm_{arch}{'a' if arch >= 90 else ''}"
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "k.ptx"
        src.write_text(ptx)
        cmd = [ptxas, "-lineinfo", "-v", *args, f"--gpu-name={gpu}", str(src), "-o", str(Path(d) / "k.cubin")]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            return f"{ptxas}: {e.strerror or e}", ptxas
    return proc.stdout + proc.stderr, ptxas


def ptxas_version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return ""
    m = re.search(r"release (\S+), (V\S+)", out)
    return f"{os.path.basename(path)} {m.group(2)}" if m else ""


def cubin_resources(cubin: bytes) -> dict[str, int]:
    """Resources recorded in a cubin's ELF, read by ``cuobjdump --dump-resource-usage``: ``REG`` (registers per
    thread), ``STACK`` (stack frame bytes per thread: spills live there, so ``STACK`` 0 means no spills),
    ``SHARED`` (static shared memory, bytes), ``LOCAL`` (bytes). Empty when cuobjdump is missing or fails.

    This is the binary the program loaded, whichever ptxas built it (cuobjdump reads cubins of newer CUDA).
    """
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        try:
            out = subprocess.run(
                [compat.tool_path("cuobjdump"), "--dump-resource-usage", f.name], capture_output=True, text=True
            ).stdout
        except OSError:
            return {}
    line = next((ln for ln in out.splitlines() if "REG:" in ln), "")
    return {k: int(v) for k, v in re.findall(r"\b(REG|STACK|SHARED|LOCAL):(\d+)", line)}


def static_shared(cubin: bytes) -> int | None:
    """Static shared memory bytes from ``cuobjdump --dump-resource-usage`` (barriers/scratch)."""
    return cubin_resources(cubin).get("SHARED")


_PASS_HEADER = re.compile(r"^// -----// IR Dump (Before|After) (\S+)(?: \(([^)]*)\))?")


def split_pass_dump(dump: Path, out_dir: Path) -> list[str]:
    """Split an ``MLIR_ENABLE_DUMP`` file into one snapshot per pass: ``passes/NNN-<Pass>.mlir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    names: list[str] = []
    current: Any = None
    with open(dump, errors="replace") as f:
        for line in f:
            m = _PASS_HEADER.match(line)
            if m:
                if current:
                    current.close()
                safe = re.sub(r"[^A-Za-z0-9_.-]", "_", m.group(2))[:80]
                name = f"{len(names):03d}-{m.group(1).lower()}-{safe}.mlir"
                names.append(name)
                current = open(out_dir / name, "w")
            if current:
                current.write(line)
    if current:
        current.close()
    return names


PASS_DUMP = "passes.raw.mlir"


def finish_pass_dump(out: Path) -> None:
    """Split the ``MLIR_ENABLE_DUMP`` file a finished worker left in ``out`` into ``passes/NNN-<pass>.mlir`` and list
    them in ``out/variant.json``; the raw dump is removed. Call it only after the worker process has EXITED.

    Triton writes the dump through one function-static ``llvm::raw_fd_ostream`` opened on ``MLIR_DUMP_PATH``
    (``mlirDumps()`` in ``include/triton/Tools/Sys/GetEnv.hpp``, later ``Dump.hpp``) that is flushed only when it is
    destroyed at process exit. Read inside the worker, the last snapshot ends at a buffer boundary (its cut point
    moves with the length of the paths in ``loc(...)``). A dump that is missing, not a regular file or unreadable,
    or a ``variant.json`` that is not a JSON object, leaves the variant without snapshots (never raises).
    """
    dump = out / PASS_DUMP
    try:
        if dump.is_symlink() or not dump.is_file():
            return
        record = out / "variant.json"
        data = json.loads(record.read_text())
        if isinstance(data, dict):
            data["passes"] = split_pass_dump(dump, out / "passes")
            record.write_text(json.dumps(data, indent=1, default=str))
    except (OSError, ValueError):
        pass
    finally:
        with contextlib.suppress(OSError):
            dump.unlink()


def compile_variant(req: dict[str, Any]) -> VariantResult:
    """Compile ``req["variant"]`` of ``req["suite"]`` for ``req["target"]`` into ``req["out"]``.

    Request keys: ``suite`` (name or ``path.py::name``), ``variant``, ``target`` (``sm90``), ``config`` (None,
    index or dict), ``shape`` (dict or None), ``passes`` (bool: per-pass MLIR snapshots), ``env`` (variables set in
    this process before Triton is imported: the variant's compile environment), ``out`` (directory).
    Compile errors are recorded in ``VariantResult.error`` (the compiler's message), not raised. Runs under every
    Triton from 3.2 (:mod:`irdiff.compile.compat`); what the running release lacks goes to ``metadata["missing"]``.
    """
    out = Path(req["out"])
    out.mkdir(parents=True, exist_ok=True)
    result = VariantResult(name=req["variant"], target=req["target"], directory=str(out))
    arch = parse_target(req["target"])

    # Environment read by Triton at compile time: set before importing it (kept out of the parent process).
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    os.environ["TRITON_ENABLE_LLVM_DEBUG"] = "1"
    os.environ["TRITON_LLVM_DEBUG_ONLY"] = LLVM_DEBUG_TYPES
    os.environ["TRITON_DUMP_PTXAS_LOG"] = "1"
    dump_file = out / PASS_DUMP
    if req.get("passes") and compat.version_tuple(compat.triton_version()) >= (3, 3):  # 3.2: no MLIR_DUMP_PATH
        os.environ["MLIR_ENABLE_DUMP"] = "1"
        os.environ["MLIR_DUMP_PATH"] = str(dump_file)
    for k, v in (req.get("env") or {}).items():  # the variant's compile environment (Triton knobs, env vars)
        os.environ[str(k)] = str(v)

    compat.check_triton()
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.runtime.driver import driver

    # The driver stand-in goes in before the suite is imported: 3.2/3.3's triton.autotune asks the active driver
    # for a benchmarker at decoration time.
    target = GPUTarget("cuda", arch, 32)
    driver.set_active(TargetDriver(target))
    missing = compat.missing_features()
    if missing:
        result.metadata["missing"] = missing

    suite = load_suite(req["suite"])
    kernel = suite.variant(req["variant"]).kernel
    jit_fn, values, kwargs = resolve_launch(suite, req)
    result.config = {k: v for k, v in kwargs.items() if k in {p.name for p in jit_fn.params}}
    result.options = {k: v for k, v in kwargs.items() if k not in result.config}
    result.kernel = jit_fn.__name__

    # Stage "python": the whole file that defines the kernel (IR locations point into it).
    src_file = inspect.getsourcefile(jit_fn.fn)
    if src_file and os.path.isfile(src_file):
        (out / STAGE_FILES["python"]).write_text(Path(src_file).read_text())
        result.stages["python"] = STAGE_FILES["python"]
        result.metadata["source_path"] = src_file
        try:  # the kernel function's own lines (decorators included): what the "python" stage diff shows
            lines, first = inspect.getsourcelines(jit_fn.fn)
            result.metadata["kernel_lines"] = [first, first + len(lines) - 1]
        except (OSError, TypeError):
            pass

    called = called_jit_functions(jit_fn)
    if called:
        result.metadata["jit_functions"] = called

    captured: dict[str, Any] = {}
    listened: dict[str, Any] = {}

    def cache_hook(*, compile: dict[str, Any], **_: Any) -> bool:
        captured.update(compile)
        return False

    def listener(
        *, src: Any = None, metadata: Any = None, times: Any = None, cache_hit: bool = False, **_: Any
    ) -> None:
        listened["cache_hit"] = cache_hit
        if times is not None:
            listened["times"] = times

    compat.set_cache_hook(cache_hook)
    if not compat.set_listener(listener):
        compat.set_always_compile(True)  # cache hits cannot be seen: always compile, so the logs are complete
    compat.set_dump_ptxas_log(True)

    for k, v in values.items():
        if isinstance(v, Scalar):
            compat.force_param_type(kernel, k, v.type, v.specialize)
    args = {
        k: (FakeTensor(v) if isinstance(v, Tensor) else v.value if isinstance(v, Scalar) else v)
        for k, v in values.items()
    }
    values_all = {**values, **kwargs}
    stdout_log, stderr_log = out / "stdout.log", out / "stderr.log"
    t0 = time.perf_counter()
    compiled = None
    try:
        with _capture_fds(stdout_log, stderr_log), _torch_kept_out():
            compat.clear_jit_caches(kernel)
            compiled = jit_fn.run(grid=(1,), warmup=True, **args, **kwargs)
            if listened.get("cache_hit"):
                # A Triton cache hit prints no compiler reasoning: compile once more to get the logs.
                compat.clear_jit_caches(kernel)
                compat.set_always_compile(True)
                compiled = jit_fn.run(grid=(1,), warmup=True, **args, **kwargs)
                compat.set_always_compile(False)
    except Exception as e:  # noqa: BLE001 - a failing compile is a result, not a crash
        result.error = compile_error_message(e, jit_fn)
    result.compile_seconds = round(time.perf_counter() - t0, 3)
    result.cache_hit = bool(listened.get("cache_hit"))
    if captured:
        captured = compat.normalize_captured(captured, jit_fn.params)
        result.specialization = build_specialization(jit_fn, values_all, captured)

    stderr_text = stderr_log.read_text(errors="replace") if stderr_log.exists() else ""
    stdout_text = stdout_log.read_text(errors="replace") if stdout_log.exists() else ""
    (out / LOG_FILES["llvm_debug"]).write_text(_llvm_debug_lines(stderr_text))
    result.logs["llvm_debug"] = LOG_FILES["llvm_debug"]
    (out / LOG_FILES["compile"]).write_text(stdout_text + stderr_text)
    result.logs["compile"] = LOG_FILES["compile"]
    stdout_log.unlink(missing_ok=True)
    stderr_log.unlink(missing_ok=True)

    # The MLIR dump is split by the parent once this process has exited (finish_pass_dump): see there.

    if compiled is not None:
        save_compiled(compiled, result, out, arch, stdout_text)
    result.metadata["triton_version"] = triton.__version__
    return result


def called_jit_functions(jit_fn: Any, limit: int = 64) -> dict[str, dict[str, Any]]:
    """The ``@triton.jit`` functions the kernel calls, directly or through each other (the names Triton's
    ``DependenciesFinder`` follows for the cache key, resolved in each function's globals), as
    ``{name as called: {"file", "first_line", "source"}}``; the kernel itself is not included. Functions whose source
    cannot be read, and Triton's own library (``tl.sum``), are left out. Recorded in ``variant.json`` (``metadata["jit_functions"]``) so the source diff can
    compare helpers defined in other files."""
    import ast
    import textwrap

    out: dict[str, dict[str, Any]] = {}
    todo = [jit_fn]
    seen = {id(jit_fn)}
    while todo and len(out) < limit:
        fn = todo.pop(0)
        py = getattr(fn, "fn", None)
        if py is None:
            continue
        try:
            src = textwrap.dedent(inspect.getsource(py))
            tree = ast.parse(src)
        except (OSError, TypeError, SyntaxError):
            continue
        scope = getattr(py, "__globals__", {})
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            parts: list[str] = []
            f = node.func
            while isinstance(f, ast.Attribute):
                parts.insert(0, f.attr)
                f = f.value
            if not isinstance(f, ast.Name):
                continue
            parts.insert(0, f.id)
            obj: Any = scope.get(parts[0])
            for p in parts[1:]:
                obj = getattr(obj, p, None)
            base = compat.base_jit_function(obj) if obj is not None else None
            if base is None or not hasattr(base, "fn") or not hasattr(base, "params") or id(base) in seen:
                continue
            if str(getattr(base.fn, "__module__", "")).startswith("triton."):
                continue  # Triton's own library functions (tl.sum, tl.cdiv): the same in both variants
            seen.add(id(base))
            try:
                lines, first = inspect.getsourcelines(base.fn)
                file = inspect.getsourcefile(base.fn) or ""
            except (OSError, TypeError):
                continue
            out[".".join(parts)] = {"file": file, "first_line": first, "source": textwrap.dedent("".join(lines))}
            todo.append(base)
    return out


def _is_ptxas_line(line: str) -> bool:
    return line.startswith("ptxas") or "bytes stack frame" in line


def _llvm_debug_lines(stderr_text: str) -> str:
    """Keep the passes' LLVM_DEBUG reasoning; drop Triton's warnings and the ptxas report."""
    return (
        "\n".join(ln for ln in stderr_text.splitlines() if not (_is_ptxas_line(ln) or ln.startswith("warning:"))) + "\n"
    )


def _exception_chain(e: BaseException) -> list[BaseException]:
    """``e`` and the exceptions it was raised from (``__cause__``, else ``__context__``), outermost first."""
    chain: list[BaseException] = []
    x: BaseException | None = e
    while x is not None and x not in chain and len(chain) < 32:
        chain.append(x)
        x = x.__cause__ or (None if x.__suppress_context__ else x.__context__)
    return chain


def _def_line(fn: Any) -> tuple[str, int] | None:
    """(file, line of the ``def``) of a Python function (decorators skipped), or None."""
    try:
        lines, first = inspect.getsourcelines(fn)
        path = inspect.getsourcefile(fn) or ""
    except (OSError, TypeError):
        return None
    for i, ln in enumerate(lines):
        if re.match(r"\s*def\s", ln):
            return path, first + i
    return path, first


def _frame_function(src: str, scope: dict[str, Any]) -> Any:
    """The ``@jit`` function whose source ``src`` is (looked up by its ``def`` name in ``scope``), or None."""
    m = re.search(r"^\s*def\s+(\w+)", src or "", re.M)
    obj = scope.get(m.group(1)) if m else None
    return getattr(obj, "fn", None) and obj


def compile_error_message(e: BaseException, jit_fn: Any = None) -> str:
    """The whole story of a failed compile, innermost cause first.

    Triton raises ``CompilationError`` (``triton/compiler/errors.py``) at each ``@jit`` call level, from the
    exception that says why (e.g. ``ValueError: arange's range must be a power of 2`` from ``tl.arange``); its own
    message shows only the outer excerpt. The result is::

        CompilationError: arange's range must be a power of 2
          kernels.py:15 in bad_kernel
              v = helper(x_ptr, N)
                  ^
          kernels.py:9 in helper
              offs = tl.arange(0, N)
                     ^

    one frame per ``@jit`` level (file and line in the user's source, the line and a caret under the column),
    outermost call first; other exceptions keep their type and message.
    """
    chain = _exception_chain(e)
    frames = [x for x in chain if getattr(x, "src", None) is not None and hasattr(x, "node")]
    inner = chain[-1]
    why = ""
    for x in reversed(chain):
        if getattr(x, "node", None) is None or not hasattr(x, "src"):
            why = f"{type(x).__name__}: {str(x).strip()}" if type(x).__module__ == "builtins" else str(x).strip()
            why = why.strip() or type(x).__name__
            break
        if getattr(x, "error_message", None):
            why = str(x.error_message).strip()  # type: ignore[attr-defined]
            break
    if not frames:
        msg = str(e).strip() or type(e).__name__
        name = type(e).__name__
        if name in {"CompilationError", "PTXASError"} or "triton" in type(e).__module__:
            if inner is not e and str(inner).strip() and str(inner).strip() not in msg:
                msg += f"\n{type(inner).__name__}: {str(inner).strip()}"
            return f"{name}: {msg}"
        return "".join(traceback.format_exception_only(type(e), e)).strip()
    out = [f"{type(frames[0]).__name__}: {why or str(frames[-1]).strip().splitlines()[-1]}"]
    scope_fn = jit_fn
    for x in frames:
        src: str = x.src  # type: ignore[attr-defined]
        node = x.node  # type: ignore[attr-defined]
        lineno = int(getattr(node, "lineno", 0) or 0)
        col = int(getattr(node, "col_offset", 0) or 0)
        fn = scope_fn if scope_fn is not None and _frame_function(src, {scope_fn.__name__: scope_fn}) else None
        if fn is None and scope_fn is not None:
            fn = _frame_function(src, dict(getattr(scope_fn, "__globals__", {})))
        m = re.search(r"^\s*def\s+(\w+)", src, re.M)
        fname = m.group(1) if m else "<kernel>"
        where = _def_line(fn.fn) if fn is not None else None
        src_lines = src.split("\n")
        def_idx = next((i for i, ln in enumerate(src_lines) if re.match(r"\s*def\s", ln)), 0)
        if where and lineno:
            out.append(f"  {where[0]}:{where[1] + lineno - 1 - def_idx} in {fname}")
        else:
            out.append(f"  line {lineno} of {fname}")
        if 0 < lineno <= len(src_lines):
            out.append("      " + src_lines[lineno - 1].rstrip())
            out.append("      " + " " * col + "^")
        scope_fn = fn or scope_fn
    return "\n".join(out)


def save_compiled(
    k: Any, result: VariantResult, out: Path, arch: int, stdout_text: str, ptxas: Sequence[str] = ()
) -> None:
    """Write the stages of a ``CompiledKernel`` (``asm``, ``metadata``) into ``out`` and fill ``result``: stage
    files, SASS, metadata, and :class:`~irdiff.bundle.Resources`.

    Resources: the ptxas ``-v`` report printed during the compile (in ``stdout_text``), or else ptxas re-run on the
    PTX, trying each binary of ``ptxas`` in turn (default: this Triton's ptxas for ``arch``) until one assembles it
    (its path goes to ``metadata["ptxas_rerun"]``); then cross-checked with the cubin itself
    (:func:`cubin_resources`): its register count is the one kept (the binary that runs), a report that disagrees
    is noted in ``metadata["resources_note"]`` and its spill figures dropped; without any report, registers and
    stack come from the cubin alone (spills 0 when the stack frame is 0).
    """
    asm = k.asm
    for stage in (s.name for s in stages.text_stages() if s.origin == "triton"):
        if stage in asm:
            (out / STAGE_FILES[stage]).write_text(asm[stage])
            result.stages[stage] = STAGE_FILES[stage]
    cubin = asm.get("cubin") if hasattr(asm, "get") else asm["cubin"]
    if cubin:
        (out / STAGE_FILES["cubin"]).write_bytes(cubin)
        result.stages["cubin"] = STAGE_FILES["cubin"]
        try:
            with _capture_fds(out / ".sass.out", out / ".sass.err"):  # nvdisasm prints a format warning
                sass = asm["sass"]
            (out / STAGE_FILES["sass"]).write_text(sass)
            result.stages["sass"] = STAGE_FILES["sass"]
        except Exception as e:  # noqa: BLE001 - a missing cuobjdump drops SASS only
            result.metadata["sass_error"] = f"{type(e).__name__}: {e}"
        for tmp in (".sass.out", ".sass.err"):
            (out / tmp).unlink(missing_ok=True)
    md = k.metadata
    meta = md._asdict() if hasattr(md, "_asdict") else dict(vars(md))
    result.metadata.update({k2: _jsonable(v) for k2, v in meta.items()})
    result.kernel = str(meta.get("name", result.kernel))

    res = Resources(shared_bytes=int(meta.get("shared", 0) or 0))
    ptxas_log = "\n".join(ln for ln in stdout_text.splitlines() if _is_ptxas_line(ln))
    ptxas_path = compat.ptxas_for_arch(arch)
    if "Used" not in ptxas_log and "ptx" in result.stages:
        args = [] if meta.get("enable_fp_fusion", True) else ["--fmad=false"]
        args += str(meta.get("ptx_options") or "").split()
        first: tuple[str, str] | None = None
        for candidate in list(dict.fromkeys(ptxas)) or [ptxas_path]:
            log, path = run_ptxas(asm["ptx"], arch, candidate, args)
            first = first or (log, path)
            if "Used" in log:
                ptxas_log, ptxas_path = log, path
                result.metadata["ptxas_rerun"] = path
                break
        else:  # none assembled it: keep the first one's error (the ptxas that compiled the kernel)
            if first is not None:
                ptxas_log, ptxas_path = first
    (out / LOG_FILES["ptxas"]).write_text(ptxas_log + "\n")
    result.logs["ptxas"] = LOG_FILES["ptxas"]
    parse_ptxas_log(ptxas_log, res)
    res.ptxas_version = ptxas_version(ptxas_path)
    if cubin:
        cub = cubin_resources(cubin)
        res.static_shared_bytes = cub.get("SHARED")
        if "REG" in cub:
            if res.registers is not None and res.registers != cub["REG"]:
                result.metadata["resources_note"] = (
                    f"the ptxas -v report ({os.path.basename(ptxas_path)}) says {res.registers} registers, the "
                    f"captured cubin uses {cub['REG']}: registers and stack are the cubin's, spills unknown"
                )
                res.spill_store_bytes = res.spill_load_bytes = None
                res.stack_bytes = None
            if res.registers is None and "Used" not in ptxas_log:
                result.metadata["resources_note"] = "no ptxas -v report: registers and stack from the cubin"
            res.registers = cub["REG"]
            if res.stack_bytes is None and "STACK" in cub:
                res.stack_bytes = cub["STACK"]
            if res.spill_store_bytes is None and cub.get("STACK") == 0:
                res.spill_store_bytes = res.spill_load_bytes = 0  # spills live in the stack frame
    result.resources = res


def _jsonable(v: Any) -> Any:
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return str(v)


def main(argv: list[str]) -> int:
    # Die with the irdiff process that started this worker, even by ``kill -9``; exit at once if it is already gone.
    parent = os.environ.get("IRDIFF_PARENT_PID")
    die_with_parent(int(parent) if parent and parent.isdigit() else None)
    req = json.loads(Path(argv[0]).read_text())
    out = Path(req["out"])
    try:
        result = compile_variant(req)
    except Exception as e:  # noqa: BLE001 - report to the parent as data
        result = VariantResult(name=req["variant"], target=req["target"], directory=str(out))
        result.error = f"{type(e).__name__}: {e}"
    out.mkdir(parents=True, exist_ok=True)
    (out / "variant.json").write_text(json.dumps(result.to_json(), indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
