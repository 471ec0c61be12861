"""The public suite format: kernels, their variants, example arguments, options and autotune configs.

A *suite* names a family of kernels that should compute the same thing (``matmul``), its *variants*
(``unannotated``, ``annotated``), how to build example arguments for a shape, the launch options, the grid,
optional autotune configs, and the FLOP/byte counts the runner uses. Built-in suites (``irdiff/suites/``)
are written in exactly this format; a user's file is loaded the same way::

    irdiff path/to/kernels.py::my_suite --variant a --against b

A suite file is plain Python that defines one or more :class:`Suite` objects at module level.

Example (shape ``{"M": 1024, ...}``; argument values are :class:`Tensor` descriptions, ints, floats)::

    suite = Suite(
        name="scale",
        variants={"plain": Variant(scale_kernel), "dns": Variant(scale_kernel_dns)},
        args=lambda s: {"x_ptr": Tensor((s["N"],), "fp16"), "y_ptr": Tensor((s["N"],), "fp16", output=True),
                        "N": s["N"]},
        constexprs={"BLOCK": 1024},
        grid=lambda s, meta: (triton.cdiv(s["N"], meta["BLOCK"]),),
        shape={"N": 4096},
    )

Nothing in this module imports Triton at import time, so suites can be listed cheaply.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "Derived",
    "Scalar",
    "Suite",
    "SuiteError",
    "Tensor",
    "Variant",
    "builtin_suite_names",
    "by_target",
    "did_you_mean",
    "load_suite",
    "load_suites",
    "list_suites",
    "resolve_values",
]

Shape = dict[str, int]


@dataclass(frozen=True)
class DType:
    """One element type a suite may name: bytes per element, its ``triton.language`` and ``torch`` attributes."""

    bytes: int
    triton: str
    torch: str


# The dtypes a suite may name (Triton's spelling, as in signature types ``*fp16``), declared once: the compile
# worker builds ``tl`` dtypes and the runner torch dtypes from this table.
DTYPES: dict[str, DType] = {
    "fp8e4nv": DType(1, "float8e4nv", "float8_e4m3fn"),
    "fp8e5": DType(1, "float8e5", "float8_e5m2"),
    "i8": DType(1, "int8", "int8"),
    "u8": DType(1, "uint8", "uint8"),
    "fp16": DType(2, "float16", "float16"),
    "bf16": DType(2, "bfloat16", "bfloat16"),
    "i16": DType(2, "int16", "int16"),
    "fp32": DType(4, "float32", "float32"),
    "i32": DType(4, "int32", "int32"),
    "u32": DType(4, "uint32", "uint32"),
    "fp64": DType(8, "float64", "float64"),
    "i64": DType(8, "int64", "int64"),
    "i1": DType(1, "int1", "bool"),
}
# Bytes per element, by dtype name.
DTYPE_BYTES: dict[str, int] = {name: d.bytes for name, d in DTYPES.items()}


INPUT_INITS = ("randn", "rand", "ones", "zeros", "arange")
OUTPUT_INITS = ("nan", "zeros", "ones")
_V = TypeVar("_V")


class SuiteError(Exception):
    """A suite or variant cannot be found or loaded; the message is one line meant for the user."""


def example_args(suite: Suite, variant: str, shape: Mapping[str, int]) -> dict[str, Any]:
    """The example arguments of ``variant`` at ``shape``: the variant's own ``args(shape)``, else the suite's.

    :raises SuiteError: a :class:`Tensor` or :class:`Scalar` it describes wrongly (unknown dtype or type, strides),
        said with the argument and line (:func:`args_failure_where`); other exceptions of the suite's code pass.
    """
    v = suite.variant(variant)
    try:
        return dict((v.args or suite.args)(dict(shape)))
    except SuiteError as e:
        raise SuiteError(f"args(shape){args_failure_where(e)}: {e}") from None


def args_failure_where(exc: BaseException) -> str:
    """Where in a suite's ``args(shape)`` the exception ``exc`` was raised, as `` argument 'x_ptr' (file.py:26)``:
    the innermost frame of the suite's own code (outside irdiff and the dataclass ``__init__`` of ``Tensor``), and
    the key of the dict entry (``{"x_ptr": Tensor(...)}``) or the keyword (``dict(x_ptr=Tensor(...))``) whose value
    holds the failing call, found in the file's syntax tree by the frame's line and column (Python >= 3.11 records
    the column; earlier, or when the line holds more than one entry, only the line is named). ``""`` when no frame
    of the suite's code is in the traceback."""
    import ast
    import traceback

    here = str(Path(__file__).resolve().parent)
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if f.filename and not f.filename.startswith("<") and not str(Path(f.filename).resolve()).startswith(here)
    ]
    if not frames:
        return ""
    f = frames[-1]
    at = f" ({Path(f.filename).name}:{f.lineno})"
    try:
        tree = ast.parse(Path(f.filename).read_text(errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return at
    col = getattr(f, "colno", None)

    line = f.lineno or 0

    def span(node: ast.expr) -> tuple[tuple[int, int], tuple[int, int]]:
        return (node.lineno, node.col_offset), (node.end_lineno or node.lineno, node.end_col_offset or 0)

    def holds(node: ast.expr) -> bool:
        start, end = span(node)
        return start[0] <= line <= end[0] if col is None else start <= (line, col) < end

    found: list[tuple[tuple[int, int], tuple[int, int], str]] = []  # (start, end, name) of each entry holding it
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            found += [
                (*span(v), k.value)
                for k, v in zip(node.keys, node.values)
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and holds(v)
            ]
        elif isinstance(node, ast.Call):
            found += [(*span(k.value), k.arg) for k in node.keywords if k.arg and holds(k.value)]
    if not found:
        return at
    inner = max(found, key=lambda e: e[0])  # the innermost entry (`x_ptr` of the dict, not the suite's `args=`)
    if sum(e[:2] == inner[:2] for e in found) > 1 or (
        col is None and any(e[0][0] == inner[0][0] for e in found if e is not inner)
    ):
        return at  # two entries on that line and no column to tell them apart
    return f" argument {inner[2]!r}{at}"


@dataclass(frozen=True)
class Tensor:
    """An example tensor argument, described without allocating it.

    :param shape: sizes, in elements.
    :param dtype: Triton dtype name (``fp16``, ``bf16``, ``fp32``, ``i32`` …).
    :param strides: strides in elements; default row-major contiguous.
    :param align: byte alignment of the base pointer that the compile driver presents to the JIT
        (16 gives ``tt.divisibility = 16``; 8 models a misaligned view). The runner allocates real memory
        and offsets it to honour this.
    :param output: True for tensors the kernel writes.
    :param init: how the tensor starts. Inputs: ``"randn"`` (seeded normal values, the default), ``"rand"``
        (uniform [0, 1)), ``"ones"``, ``"zeros"`` or ``"arange"``. Outputs: ``"nan"`` (the default: every element
        poisoned, so an element the kernel never writes is caught; integers get ``iinfo.max // 2``, a value no
        small addition overflows, booleans ``True``), ``"zeros"``, ``"ones"``, a number, or a function given the
        output tensor that fills it in place or returns its initial values. A kernel that *reads* its output
        (``tt.atomic_rmw``, ``tt.load`` on the same pointer: split-K, histograms, ``out += …``) needs a real
        starting value; the runner refuses ``"nan"`` for such an output and says so (``irdiff/run/access.py``).
    """

    shape: tuple[int, ...]
    dtype: str = "fp16"
    strides: tuple[int, ...] | None = None
    align: int = 16
    output: bool = False
    init: Any = None

    def __post_init__(self) -> None:
        if self.dtype not in DTYPE_BYTES:
            raise SuiteError(f"unknown dtype {self.dtype!r}; known: {', '.join(sorted(DTYPE_BYTES))}")
        if self.strides is not None and len(self.strides) != len(self.shape):
            raise SuiteError(f"tensor strides {self.strides} do not match shape {self.shape}")
        init = self.init
        if init is None or callable(init) or (isinstance(init, (int, float)) and not isinstance(init, bool)):
            return
        known = OUTPUT_INITS if self.output else INPUT_INITS
        if not isinstance(init, str) or init not in known:
            raise SuiteError(
                f"unknown init {init!r} for an {'output' if self.output else 'input'} tensor; "
                f"known: {', '.join(known)}, a number or a function"
            )

    @property
    def start(self) -> Any:
        """The effective ``init``: ``"randn"`` for an input and ``"nan"`` for an output unless one was given."""
        if self.init is None:
            return "nan" if self.output else "randn"
        return self.init

    def stride(self, dim: int) -> int:
        """Stride of ``dim`` in elements (row-major unless ``strides`` was given)."""
        if self.strides is not None:
            return self.strides[dim]
        return math.prod(self.shape[dim + 1 :])

    @property
    def element_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def nbytes(self) -> int:
        """Bytes covered by the tensor's elements (not counting gaps of strided views)."""
        return math.prod(self.shape) * self.element_bytes

    def describe(self) -> str:
        """Short human form, e.g. ``fp16[1024, 1024] strides (1024, 1) align 16``."""
        strides = tuple(self.stride(d) for d in range(len(self.shape)))
        return f"{self.dtype}[{', '.join(map(str, self.shape))}] strides {strides} align {self.align}"


# Scalar types a typed scalar may be passed as (Triton signature spelling).
SCALAR_TYPES = ("i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "fp16", "bf16", "fp32", "fp64")


@dataclass(frozen=True)
class Scalar:
    """A scalar argument passed with a fixed signature type, as torch.compile (Inductor) does, rather than the type the
    JIT would derive from the Python value.

    ``Scalar(1e-6, "fp64")`` is a Python float typed ``fp64`` (the JIT alone types floats ``fp32``; Inductor's
    ``signature_of`` in ``torch/_inductor/codegen/triton_utils.py`` types them ``fp64``). ``Scalar(n, "i64")`` is a
    size passed as ``i64`` like Inductor's dynamic sizes (``ks0``): with ``specialize=False`` (the default) the JIT
    records neither ``tt.divisibility`` nor the constant-1 specialization for it, as for a dynamic size Inductor cannot
    prove anything about.

    The compile driver applies it by giving the parameter this type in the JIT's binder (the way a Python annotation
    would, ``KernelParam.annotation_type`` in ``triton/runtime/jit.py``; Triton ≥ 3.3), so the rest of the JIT's
    path is unchanged.

    :param value: the Python value (``int``, ``float`` or ``bool``).
    :param type: one of :data:`SCALAR_TYPES` (``fp64``, ``i64`` …).
    :param specialize: let the JIT still record divisibility by 16 / turn 1 into a constant for integers.
    """

    value: int | float | bool
    type: str
    specialize: bool = False

    def __post_init__(self) -> None:
        if self.type not in SCALAR_TYPES:
            raise SuiteError(f"Scalar type {self.type!r} is not one of {', '.join(SCALAR_TYPES)}")
        if not isinstance(self.value, (int, float, bool)):
            raise SuiteError(f"Scalar value must be an int, float or bool, not {type(self.value).__name__}")

    def describe(self) -> str:
        return f"{self.value!r} as {self.type}" + ("" if self.specialize else " (not specialized)")


@dataclass(frozen=True)
class Derived:
    """A constexpr or option whose value is computed from the shape and the target, resolved at compile time.

    Use it where a fixed number would be wrong: ``NUM_SMS`` of a persistent kernel depends on the GPU
    (``by_target``), ``BLOCK_N`` of a row kernel on the row length::

        constexprs={"NUM_SMS": by_target({"sm80": 108, "sm90": 132}), "BLOCK_N": Derived(lambda s, t: s["N"])}

    :param fn: ``(shape, target) -> value``; ``target`` is the target name compiled for (``"sm80"``, ``"sm90"`` …).
    :param description: shown where the unresolved value is printed (``irdiff list``).
    """

    fn: Callable[[Shape, str], Any]
    description: str = ""

    def resolve(self, shape: Shape, target: str) -> Any:
        return self.fn(shape, target)

    def __repr__(self) -> str:
        return f"Derived({self.description or 'computed'})"


def by_target(table: Mapping[str, Any], default: Any = None) -> Derived:
    """A :class:`Derived` value looked up by target name (``{"sm80": 108, "sm90": 132}``).

    Resolving it for a target missing from ``table`` gives ``default``, or raises :class:`SuiteError` when
    ``default`` is None.
    """
    known = dict(table)

    def pick(shape: Shape, target: str) -> Any:
        if target in known:
            return known[target]
        if default is None:
            raise SuiteError(f"no value for target {target!r} (known: {', '.join(known)})")
        return default

    return Derived(pick, "by target: " + ", ".join(f"{k} {v}" for k, v in known.items()))


def resolve_values(values: Mapping[str, Any], shape: Shape, target: str) -> dict[str, Any]:
    """A copy of ``values`` (constexprs/options) with every :class:`Derived` replaced by its value.

    :param target: target name (``"sm90"``); the compile driver passes the one it compiles for.
    :raises SuiteError: a :class:`Derived` function failed (message names the parameter).
    """
    out: dict[str, Any] = {}
    for k, v in values.items():
        if isinstance(v, Derived):
            try:
                v = v.resolve(shape, target)
            except SuiteError as e:
                raise SuiteError(f"{k}: {e}") from None
            except Exception as e:  # noqa: BLE001 - user code may raise anything; report it in one line
                raise SuiteError(f"{k}: cannot compute the value for {target}: {type(e).__name__}: {e}") from None
        out[k] = v
    return out


@dataclass(frozen=True)
class Variant:
    """One way of writing the kernel.

    :param kernel: a ``@triton.jit`` function (optionally wrapped by ``triton.autotune``/``triton.heuristics``).
    :param description: one sentence shown by ``irdiff list``.
    :param constexprs: constexpr values that override the suite's for this variant (values may be
        :class:`Derived`: computed from the shape and target).
    :param options: launch/compile options (``num_warps``, ``num_stages``, ``maxnreg`` …) overriding the suite's.
    :param args: optional argument builder overriding the suite's (same signature: ``shape -> dict``).
    :param target: GPU target this variant is compiled for (``"sm80"``), overriding the run's ``--target``; two
        variants of one kernel for two targets make a cross-target comparison.
    :param env: environment variables (Triton knobs such as ``{"DISABLE_MMA_V3": "1"}``) set only in this variant's
        compile process; they are part of its cache key and named by the ``settings.env-changed`` finding.
    :param triton: Triton release to compile this variant with (``"3.6.0"``); another release than the installed one
        compiles in an isolated environment irdiff creates on first use (``irdiff envs``).
    """

    kernel: Any
    description: str = ""
    constexprs: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    args: Callable[[Shape], dict[str, Any]] | None = None
    target: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    triton: str | None = None

    def __post_init__(self) -> None:
        bad = [k for k, v in self.env.items() if not isinstance(k, str) or not isinstance(v, str)]
        if bad:
            raise SuiteError(f"Variant env must map names to strings (bad entry: {bad[0]!r})")


@dataclass
class Suite:
    """A family of kernels and the variants to compare.

    :param name: suite name used on the command line (``matmul``).
    :param variants: variant name → :class:`Variant`, in display order.
    :param args: ``shape -> {param name: value}`` for the non-constexpr parameters; values are :class:`Tensor`,
        :class:`Scalar`, ``int``, ``float``, ``bool`` or ``None``.
    :param shape: default shape (problem sizes, e.g. ``{"M": 1024, "N": 1024, "K": 1024}``).
    :param constexprs: constexpr parameter values shared by all variants (values may be :class:`Derived`).
    :param options: compile options shared by all variants (``num_warps``, ``num_stages``, ``num_ctas``, ``maxnreg``).
    :param grid: ``(shape, meta) -> tuple`` launch grid; ``meta`` holds constexprs and options, with
        :class:`Derived` values already resolved for the target (``resolve_values``).
    :param configs: autotune configs (``triton.Config`` or ``{"kwargs": {...}, "num_warps": ..}`` dicts). When
        empty and the kernel is a ``triton.autotune`` object, its configs are used.
    :param default_config: index into ``configs`` compiled when no ``--config`` is given.
    :param flops: ``shape -> FLOP count`` of one launch (for TFLOP/s).
    :param bytes: ``shape -> bytes moved`` by one launch (for GB/s).
    :param reference: ``(inputs: dict of torch tensors/values, shape) -> torch.Tensor or dict of outputs``, used by
        the runner to check correctness. It receives floating inputs as float64 and outputs as the kernel found
        them (their ``init``), so keep float64 (``.double()``, dtype-preserving ops): each variant's error is then
        measured against an fp64 result.
    :param baseline: ``(inputs, shape) -> output`` a library implementation the runner times beside the variants
        (``torch.matmul`` in the inputs' dtype for ``matmul``); its ``__name__`` labels the table column. Optional.
    :param description: one line shown by ``irdiff list``.
    :param default_pair: the ``(variant, against)`` pair compared when the user names none.
    :param compare: how outputs of different shapes (variants that pad differently, a reference without the
        padding) are compared: ``"common"`` compares the common leading region (``t[:m, :n]``) and names the
        difference; a function ``(output name, tensor, shape) -> tensor`` maps each variant's output to the part
        that must match. None (the default): outputs of different shapes are reported "not comparable".
    """

    name: str
    variants: dict[str, Variant]
    args: Callable[[Shape], dict[str, Any]]
    shape: Shape = field(default_factory=dict)
    constexprs: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    grid: Callable[[Shape, dict[str, Any]], tuple[int, ...]] | None = None
    configs: list[Any] = field(default_factory=list)
    default_config: int = 0
    flops: Callable[[Shape], float] | None = None
    bytes: Callable[[Shape], float] | None = None
    reference: Callable[..., Any] | None = None
    baseline: Callable[..., Any] | None = None
    description: str = ""
    default_pair: tuple[str, str] | None = None
    compare: Any = None
    source_file: str = ""

    def variant(self, name: str) -> Variant:
        """Return the variant called ``name``; :class:`SuiteError` names the closest ones otherwise."""
        return lookup_variant(self.name, self.variants, name)

    def pair(self, variant: str | None, against: str | None) -> tuple[str, str]:
        """The two variant names to compare, filling gaps from ``default_pair`` or the first two variants."""
        a, b = pick_pair(list(self.variants), self.default_pair, variant, against)
        self.variant(a)
        self.variant(b)
        return a, b


def lookup_variant(suite: str, variants: Mapping[str, _V], name: str) -> _V:
    """``variants[name]`` of the suite called ``suite``.

    :raises SuiteError: no such variant (the message names the closest ones and lists all)."""
    if name in variants:
        return variants[name]
    raise SuiteError(
        f"suite {suite!r} has no variant {name!r}{did_you_mean(name, variants)} (variants: {', '.join(variants)})"
    )


def pick_pair(
    names: list[str], default_pair: Sequence[str] | None, variant: str | None, against: str | None
) -> tuple[str, str]:
    """The two variant names to compare (unchecked): ``variant``/``against`` where given, else ``default_pair``,
    else the first two of ``names``; never the same name twice unless asked or there is only one."""
    default = tuple(default_pair) if default_pair else (names[0], names[1] if len(names) > 1 else names[0])
    a = variant or default[0]
    b = against or (default[1] if default[1] != a else default[0])
    if b == a and against is None:
        others = [n for n in names if n != a]
        b = others[0] if others else a
    return a, b


def did_you_mean(name: str, choices: Sequence[str] | Mapping[str, Any]) -> str:
    """``"; did you mean 'x'?"`` for the closest names, or ``""``."""
    close = difflib.get_close_matches(name, list(choices), n=3, cutoff=0.5)
    if not close:
        close = [c for c in choices if name.lower() in c.lower() or c.lower() in name.lower()][:3]
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?"


# Built-in suites: CLI name -> module under irdiff.suites and the attribute holding the Suite.
_BUILTINS: dict[str, tuple[str, str]] = {
    "matmul": ("irdiff.suites.matmul", "suite"),
    "persistent-matmul": ("irdiff.suites.persistent_matmul", "suite"),
    "rmsnorm": ("irdiff.suites.rmsnorm", "suite"),
    "permute": ("irdiff.suites.permute", "suite"),
    "softmax": ("irdiff.suites.softmax", "suite"),
}


def builtin_suite_names() -> list[str]:
    return [n for n, (mod, _) in _BUILTINS.items() if importlib.util.find_spec(mod) is not None]


def _suites_in_module(module: Any) -> dict[str, Suite]:
    return {s.name: s for s in vars(module).values() if isinstance(s, Suite)}


def _load_file(path: Path) -> Any:
    """Import a user suite file as a uniquely named module (so Triton can read its source)."""
    if not path.is_file():
        raise SuiteError(f"suite file {str(path)!r} does not exist")
    mod_name = "irdiff_user_suite_" + str(abs(hash(str(path.resolve()))))
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise SuiteError(f"cannot import suite file {str(path)!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        del sys.modules[mod_name]
        raise SuiteError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    except SuiteError:
        del sys.modules[mod_name]
        raise
    except Exception as e:  # noqa: BLE001 - user code may raise anything; report it in one line
        del sys.modules[mod_name]
        raise SuiteError(f"{path}: error while importing the suite file: {type(e).__name__}: {e}") from None
    return module


def load_suites(ref: str) -> list[Suite]:
    """Every suite ``ref`` names: a built-in name or ``path.py::name`` gives one, ``path.py`` every suite the file
    defines (in definition order), for ``irdiff list``.

    :raises SuiteError: as :func:`load_suite`, except that a file with several suites is not an error.
    """
    path_part, _, name = ref.partition("::")
    if ref in _BUILTINS or name or not (path_part.endswith(".py") or "/" in path_part or Path(path_part).is_file()):
        return [load_suite(ref)]
    module = _load_file(Path(path_part))
    suites = list(_suites_in_module(module).values())
    if not suites:
        raise SuiteError(f"{path_part} defines no irdiff.suite.Suite object")
    for s in suites:
        s.source_file = s.source_file or str(Path(path_part).resolve())
    return suites


def load_suite(ref: str) -> Suite:
    """Load a suite by built-in name (``matmul``) or ``path/to/file.py[::name]``.

    ``name`` is the suite's ``Suite.name`` or the module-level variable that holds it (``file.py::suite``).

    :raises SuiteError: unknown built-in (with the closest names), missing file, syntax or import error in the
        file, or a file holding several suites when none was named.
    """
    if ref in _BUILTINS:
        mod_name, attr = _BUILTINS[ref]
        suite = getattr(importlib.import_module(mod_name), attr)
        assert isinstance(suite, Suite)
        return suite
    path_part, _, name = ref.partition("::")
    if path_part.endswith(".py") or "/" in path_part or Path(path_part).is_file():
        module = _load_file(Path(path_part))
        suites = _suites_in_module(module)
        for s in suites.values():
            s.source_file = s.source_file or str(Path(path_part).resolve())
        if not suites:
            raise SuiteError(f"{path_part} defines no irdiff.suite.Suite object")
        if name:
            if name in suites:
                return suites[name]
            by_variable = {k: v for k, v in vars(module).items() if isinstance(v, Suite)}
            if name in by_variable:
                return by_variable[name]
            raise SuiteError(
                f"{path_part} has no suite {name!r}{did_you_mean(name, [*suites, *by_variable])}"
                f" (suites: {', '.join(suites)})"
            )
        if len(suites) > 1:
            raise SuiteError(f"{path_part} defines several suites ({', '.join(suites)}); name one: {path_part}::NAME")
        return next(iter(suites.values()))
    raise SuiteError(f"unknown suite {ref!r}{did_you_mean(ref, builtin_suite_names())}")


def list_suites() -> list[Suite]:
    """All built-in suites, in registration order."""
    return [load_suite(n) for n in builtin_suite_names()]
