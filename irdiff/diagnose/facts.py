"""Facts about one compiled variant, read from its saved stages and logs (no Triton import, no GPU).

Every fact keeps a :class:`Ref` to the raw line it came from (stage or log name, 1-based line, text), so findings can
quote their evidence. Sources:

* ``spec``: the JIT's specialization recorded by the compile driver (``VariantResult.specialization``, one
  :class:`~irdiff.bundle.ArgSpec` per parameter) and the TTIR ``tt.func`` signature (``{tt.divisibility = 16}``).
* ``ttir``: integer width of index arithmetic (ops whose result is ``i64``), 64-bit ``divsi``/``remsi``, the loop nest
  as written (``scf.for`` nesting, ``tt.flatten``), ``tt.load``/``tt.store`` names (Python variable name hints, 3.4+).
* ``llvm_debug``: the ``TRITON_ENABLE_LLVM_DEBUG`` log. ``tritongpu-coalesce`` prints, per ``tt.load``/``tt.store``,
  ``axis info of pointer: contiguity = [1, 32], divisibility = [2, 16]`` and ``perThread: 8`` (elements each thread
  accesses contiguously; times the element width gives the vector width, at most 128 bits).
  ``triton-loop-pipeline`` prints ``Load … has width 128`` and either ``considered for pipelining with distance 0``
  or ``is too small for pipelining`` (``isSmallLoad`` in Triton's pipeliner: cp.async moves 4, 8 or 16 bytes, so a
  load narrower than 32 bits is never made asynchronous).
* ``ttgir``: blocked/MMA layouts, shared-memory buffers (``ttg.local_alloc … memdesc<3x128x32xf16``), async copies
  before vs inside loops, ``ttg.async_wait {num = N}``, ``ttng.warp_group_dot_wait {pendings = N}``, loops after
  fusion and pipelining (nesting, loop-carried values).
* ``ptx``/``sass``/``llir``: operation counts (:func:`irdiff.diagnose.counts.count_ops`) with the first line of each;
  per global ``tt.load``/``tt.store`` left in the final TTGIR, the width of the LLIR/PTX instructions it was lowered to
  (:class:`LoweredAccess`, matched through debug locations: TTGIR ``loc(...)``, LLIR ``!DILocation``, PTX ``.loc``);
  SASS ``CALL`` instructions split into subroutine calls (the target code returns with ``RET``) and calls ptxas uses as
  branches (e.g. a loop exit, ``@P1 CALL.REL.NOINC`` to code that ends in ``EXIT``).
* ``resources``: ptxas ``-v`` (registers, spills, stack), Triton's metadata (``shared``), and the occupancy those allow
  (see :func:`occupancy`).

Size: over 800 lines because it holds the fact dataclasses and one extractor per stage or log (the extractors
share the MLIR walker and location helpers); the rules that compare facts are in :mod:`irdiff.diagnose.rules`.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from irdiff import stages
from irdiff.bundle import VariantResult
from irdiff.diagnose.counts import count_ops, ptx_instructions, ptx_key, sass_instructions, sass_key
from irdiff.diagnose.texts import stage_text
from irdiff.normalize import dialect_of
from irdiff.normalize.text import strip_locs
from irdiff.target import TargetError, parse_target

if TYPE_CHECKING:
    from collections.abc import Callable

    from irdiff.diagnose.mechfacts import MechFacts

__all__ = [
    "ARCH_LIMITS",
    "Access",
    "ArgFact",
    "Buffer",
    "LoopFact",
    "LoweredAccess",
    "Occupancy",
    "PipelineLoad",
    "Ref",
    "VariantFacts",
    "WaitFact",
    "extract_facts",
    "occupancy",
    "sass_calls",
    "strip_loc",
]


@dataclass
class Ref:
    """A pointer to one raw line: ``stage`` is a stage (``ttir`` …) or log (``llvm_debug``, ``ptxas``) name."""

    stage: str
    line: int | None
    text: str


@dataclass
class ArgFact:
    """How the JIT specialized one parameter (from ``ArgSpec``) and its TTIR signature fragment."""

    name: str
    index: int
    type: str
    divisibility: int | None
    constexpr: str | None
    reason: str
    annotation: str | None
    value: str
    do_not_specialize: bool
    do_not_specialize_on_alignment: bool
    ttir: Ref | None = None

    @property
    def summary(self) -> str:
        if self.type == "constexpr":
            return f"constexpr = {self.constexpr}"
        return self.type + (f" div{self.divisibility}" if self.divisibility else "")


@dataclass
class Access:
    """One global ``tt.load``/``tt.store`` as the coalescing pass saw it (``tritongpu-coalesce`` debug log).

    :ivar shape: tensor shape in elements; ``elem``: element type (``f16``); ``elem_bits``: its width.
    :ivar contiguity: per dimension, how many consecutive elements AxisInfo proved contiguous.
    :ivar divisibility: per dimension, the proven divisibility (alignment) of the pointer in bytes.
    :ivar per_thread: elements each thread holds contiguously (the coalesce pass's ``perThread``: the layout's
        ``sizePerThread`` along the fastest dimension; shared by all accesses given the same layout).
    :ivar vector_bits: bits one thread moves per instruction, ``min(per_thread, contiguity, alignment in elements)
        × elem_bits``, at most 128: what the load/store lowering can vectorize (Triton's ``getVectorSize``).
    :ivar name: Python name of the loaded value or pointer (TTIR name hints), e.g. ``a`` / ``a_ptrs``; may be "".
    """

    kind: str
    shape: list[int]
    elem: str
    elem_bits: int
    contiguity: list[int]
    divisibility: list[int]
    order: list[int]
    per_thread: int
    vector_bits: int
    name: str
    pointer: str
    ref: Ref
    axis_ref: Ref
    per_thread_ref: Ref

    @property
    def label(self) -> str:
        what = f"`{self.name}` " if self.name else ""
        return f"{what}{self.kind} {'x'.join(map(str, self.shape))}x{self.elem}"


@dataclass
class LoweredAccess:
    """One global ``tt.load``/``tt.store`` still in the final TTGIR, and the instructions the lowering made of it.

    Triton's load/store lowering (``LoadOpConversion``/``StoreOpConversion`` in
    ``third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/LoadStoreOpToLLVM.cpp``) emits one predicated instruction per
    ``vec`` elements, ``vec = min(getVectorSize(ptr), getMaskAlignment(mask))``: the pointer's contiguity and
    alignment (what the coalescing pass also saw) and, for a masked access, the mask's constancy along the fastest
    dimension (AxisInfo: how many consecutive elements are known to share one mask bit).

    :ivar kind: ``load`` or ``store``; ``shape``/``elem``/``elem_bits`` as in :class:`Access`.
    :ivar name: Python name hint of the loaded/stored value (``x``), or "".
    :ivar mask: the mask operand's SSA name in TTGIR (``%m_4``), "" when unmasked.
    :ivar mask_refs: TTGIR lines that define the mask (``arith.cmpi``, ``tt.splat`` of a parameter, ...), nearest first.
    :ivar mask_args: kernel parameters the mask is computed from (``n``); ``ptr_args``: those the address is
        computed from (``x_ptr``, ``stride``), pointer parameters first.
    :ivar per_thread: elements per thread the coalescing pass chose (``perThread`` of the matching :class:`Access`),
        None when the coalescing log does not show this access.
    :ivar coalesce_bits: the matching :class:`Access`'s ``vector_bits`` (pointer contiguity/alignment allow this), or
        None; ``coalesce_index``: that access's index in :attr:`VariantFacts.accesses`.
    :ivar llir_bits: widest global instruction emitted for this op in LLIR (bits per thread per instruction:
        ``ld.global.v4.b32`` = 128), None when LLIR has no debug location matching the op; ``llir_count``: how many.
    :ivar ptx_bits: the same in PTX (``.loc`` directives); ``ptx_key``: the count key (``ld.global.b32``).
    :ivar ref: the TTGIR line; ``llir_ref``/``ptx_ref``: the first instruction.
    :ivar strides: per dimension of the pointer tensor, how many elements apart in memory two neighbours along that
        dimension are (``x_ptr + offs * 2``: ``[2]``; ``src + r * ld + c``: ``[None, 1]``, ``ld`` being a runtime
        value), read from the TTGIR that computes the address (:func:`address_strides`); None: not derivable.
    """

    kind: str
    shape: list[int]
    elem: str
    elem_bits: int
    name: str
    mask: str
    mask_refs: list[Ref]
    mask_args: list[str]
    ptr_args: list[str]
    per_thread: int | None
    coalesce_bits: int | None
    coalesce_index: int | None
    llir_bits: int | None
    llir_count: int
    ptx_bits: int | None
    ptx_count: int
    ptx_key: str
    ref: Ref
    llir_ref: Ref | None
    ptx_ref: Ref | None
    strides: list[int | None] | None = None

    @property
    def label(self) -> str:
        what = f"`{self.name}` " if self.name else ""
        base = f"{what}{self.kind} {'x'.join(map(str, self.shape))}x{self.elem}"
        if not self.name and self.ptr_args:
            base += f" {'from' if self.kind == 'load' else 'to'} `{self.ptr_args[0]}`"
        return base


@dataclass
class PipelineLoad:
    """The pipeliner's decision on one load in a loop (``triton-loop-pipeline`` debug log)."""

    shape: list[int]
    elem: str
    width_bits: int | None
    pipelined: bool
    reason: str
    name: str
    refs: list[Ref] = field(default_factory=list)

    @property
    def label(self) -> str:
        what = f"`{self.name}` " if self.name else ""
        return f"{what}load {'x'.join(map(str, self.shape))}x{self.elem}"


@dataclass
class Buffer:
    """A shared-memory allocation in TTGIR: ``depth`` buffers of ``tile`` (a ring when depth > 1)."""

    depth: int
    tile: list[int]
    elem: str
    bytes: int
    ref: Ref


@dataclass
class WaitFact:
    """``ttg.async_wait {num = N}`` or ``ttng.warp_group_dot_wait {pendings = N}`` and whether it is in a loop;
    ``in_inner_loop``: in a loop without nested loops (the steady state, e.g. the K loop, not a tile loop's body after
    its K loop)."""

    op: str
    value: int
    in_loop: bool
    ref: Ref
    in_inner_loop: bool = False


@dataclass
class LoopFact:
    """One ``scf.for``: nesting depth (1 = outermost), loop-carried values, attributes such as ``tt.flatten``."""

    stage: str
    depth: int
    iter_args: int
    flatten: bool
    ref: Ref
    end_line: int = 0
    attrs: str = ""
    has_inner: bool = False
    # the ``loc`` of the loop's closing line (``#loc1``): the Python ``for`` it comes from
    loc: str = ""
    # the remainder loop ``triton-loop-unroll`` adds after a loop it unrolled (same ``loc``, right after it, marked
    # ``tt.num_stages = 1``); ``unroll`` is the factor on the unrolled loop itself (1: not unrolled), counted as its
    # memory/dot ops (else all ops) over the remainder's
    remainder: bool = False
    unroll: int = 1
    # ``tt.dot`` (TTIR; ``ttng.warp_group_dot``/``ttng.tc_gen5_mma`` in TTGIR) ops directly in the loop's body, not
    # in a loop nested in it: a K loop of a matmul has them, a row or statistics loop has none
    dots: int = 0


@dataclass
class Occupancy:
    """CTAs per SM the resources allow on the target, the limiter, and each limit (see :func:`occupancy`)."""

    ctas_per_sm: int
    limiter: str
    limits: dict[str, int]
    warps_per_sm: int
    source: str


@dataclass
class VariantFacts:
    """Everything the rules compare for one variant (JSON-able through :meth:`to_json`)."""

    name: str
    kernel: str
    target: str
    arch: int
    options: dict[str, Any]
    config: dict[str, Any]
    args: list[ArgFact]
    accesses: list[Access]
    pipeline: list[PipelineLoad]
    buffers: list[Buffer]
    async_copies_prologue: list[Ref]  # cp.async (ttg.async_copy_global_to_local) and TMA copies
    async_copies_loop: list[Ref]
    sync_loads_loop: list[Ref]
    tma_copies: list[Ref]
    waits: list[WaitFact]
    loops_ttir: list[LoopFact]
    loops_ttgir: list[LoopFact]
    blocked: list[dict[str, Any]]
    mma: list[dict[str, Any]]
    i64_ops: int
    i64_first: Ref | None
    i64_first_python: Ref | None
    divrem64_ttir: list[Ref]
    counts: dict[str, dict[str, int]]
    first_lines: dict[str, dict[str, Ref]]
    resources: dict[str, Any]
    resource_refs: dict[str, Ref]
    occupancy: Occupancy | None
    llvm_debug_present: bool
    triton_version: str = ""
    lowered: list[LoweredAccess] = field(default_factory=list)
    # parameter -> how TTGIR uses it in global accesses: "pointer" (feeds an address), "mask" (feeds a mask only)
    arg_roles: dict[str, list[str]] = field(default_factory=dict)
    sass_calls: list[Ref] = field(default_factory=list)  # CALLs into subroutines that return (RET)
    sass_branch_calls: list[Ref] = field(default_factory=list)  # CALLs whose target never returns (branches)
    # TTIR ``tt.load``s inside an ``scf.for`` whose address and mask do not change from one iteration to the next
    # (:func:`invariant_loads`): each iteration reads the same memory again
    invariant_loads: list[Ref] = field(default_factory=list)
    # dots, atomics, layout conversions, memory hints, MMA waits, fp64, compiler messages: filled by
    # irdiff.diagnose.diagnose from irdiff.diagnose.mechfacts (which builds on this module's helpers), else None
    mech: MechFacts | None = None

    # The other variant's parameter name → this variant's parameter paired with it by role (None: it has no
    # partner here); set by ``irdiff.diagnose.diagnose`` from :func:`irdiff.diagnose.params.pair_params`, so that
    # every rule comparing "the same parameter" of two variants compares the paired ones.
    peer_names: dict[str, str | None] = field(default_factory=dict)

    def arg(self, name: str) -> ArgFact | None:
        """This variant's own parameter ``name``."""
        return next((a for a in self.args if a.name == name), None)

    def peer(self, name: str) -> ArgFact | None:
        """This variant's parameter paired (by role) with the *other* variant's parameter ``name``: the one of the
        same name unless the pairing says otherwise; None when the other's parameter has no partner here."""
        if name in self.peer_names:
            mine = self.peer_names[name]
            return None if mine is None else self.arg(mine)
        return self.arg(name)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------------------------- text helpers

_ELEM_BITS = {
    "f16": 16,
    "bf16": 16,
    "f32": 32,
    "f64": 64,
    "i1": 8,
    "i8": 8,
    "i16": 16,
    "i32": 32,
    "i64": 64,
    "f8E4M3FN": 8,
    "f8E5M2": 8,
    "f8E4M3FNUZ": 8,
    "f8E5M2FNUZ": 8,
    "tf32": 32,
}


def elem_bits(elem: str) -> int:
    """Bit width of an MLIR element type name (``f16`` → 16; unknown types count as 32)."""
    if elem in _ELEM_BITS:
        return _ELEM_BITS[elem]
    m = re.match(r"^[a-z]+(\d+)", elem)
    return int(m.group(1)) if m else 32


def strip_loc(line: str) -> str:
    """Remove every balanced ``loc(...)`` from an MLIR line (debug locations); blanks before it are kept, trailing
    ones stripped (the scanner is :func:`irdiff.normalize.text.strip_locs`)."""
    return strip_locs(line, eat_blanks=False, quoted=False).rstrip()


def _stem(ssa: str) -> str:
    """Python name hint of an SSA value: ``%a_ptrs_43`` → ``a_ptrs``; numeric (``%107``, ``%arg3``) → ``""``."""
    s = ssa.lstrip("%").split(":")[0].split("#")[0]
    if not s or s[0].isdigit() or re.match(r"^arg\d+$", s) or re.match(r"^c(st)?[_\d]", s):
        return ""
    return re.sub(r"_\d+$", "", s)


_TENSOR_PTR = re.compile(r"tensor<((?:\d+x)+)!tt\.ptr<([\w]+)>")
_TENSOR_DESC = re.compile(r"tensordesc<((?:\d+x)+)(\w+)")


def _ptr_tensor(text: str) -> tuple[list[int], str] | None:
    """Shape and element type of the pointer tensor (or tensor descriptor block) an op accesses."""
    m = _TENSOR_PTR.search(text) or _TENSOR_DESC.search(text)
    if not m:
        return None
    return [int(x) for x in m.group(1).rstrip("x").split("x")], m.group(2)


def _ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", text)]


# --------------------------------------------------------------------------------------------- locations


def _loc_table(text: str) -> dict[str, str]:
    """``#locN`` → its body, from the ``#locN = loc(...)`` lines of a TTIR/TTGIR file."""
    table: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"^(#loc\d*) = loc\((.*)\)\s*$", line)
        if m:
            table[m.group(1)] = m.group(2)
    return table


def _resolve_pos(body: str, table: dict[str, str], depth: int = 0) -> tuple[str, int, int] | None:
    """Follow a location body to ``(file, line, column)``: the innermost call site's own position."""
    if depth > 40:
        return None
    body = body.strip()
    m = re.match(r'^"([^"]*)":(\d+):(\d+)', body)
    if m:
        return m.group(1), int(m.group(2)), int(m.group(3))
    m = re.match(r"^callsite\((#loc\d*)\s+at\s+(#loc\d*)\)", body)
    if m:
        return _resolve_pos(table.get(m.group(1), ""), table, depth + 1)
    m = re.match(r'^"[^"]*"\((#loc\d*)\)', body)
    if m:
        return _resolve_pos(table.get(m.group(1), ""), table, depth + 1)
    m = re.match(r"^fused\[(#loc\d*)", body)
    if m:
        return _resolve_pos(table.get(m.group(1), ""), table, depth + 1)
    m = re.match(r"^(#loc\d*)$", body)
    if m:
        return _resolve_pos(table.get(m.group(1), ""), table, depth + 1)
    return None


def _resolve_loc(body: str, table: dict[str, str], depth: int = 0) -> tuple[str, int] | None:
    """Follow a location body to ``(file, line)``: the innermost call site's own position."""
    pos = _resolve_pos(body, table, depth)
    return (pos[0], pos[1]) if pos else None


def _op_pos(raw_line: str, table: dict[str, str]) -> tuple[int, int] | None:
    """``(line, column)`` in the kernel source of an MLIR op line ending in ``loc(#locN)``."""
    m = re.search(r"loc\((#loc\d*)\)\s*$", raw_line.rstrip())
    if not m:
        return None
    pos = _resolve_pos(table.get(m.group(1), ""), table)
    return (pos[1], pos[2]) if pos else None


def python_ref(line: str, table: dict[str, str], source_path: str, python_text: str) -> Ref | None:
    """The kernel source line an MLIR op came from (only when it lies in the saved ``kernel.py``)."""
    m = re.search(r"loc\((#loc\d*)\)\s*$", line.rstrip())
    if not m:
        return None
    pos = _resolve_loc(table.get(m.group(1), ""), table)
    if pos is None:
        return None
    file, lineno = pos
    if source_path and file != source_path:
        return None
    lines = python_text.splitlines()
    if not 1 <= lineno <= len(lines):
        return None
    return Ref("python", lineno, lines[lineno - 1].strip())


# --------------------------------------------------------------------------------------------- MLIR structure


@dataclass
class _Op:
    line: int
    text: str  # loc-stripped, stripped
    results: list[str]
    op: str
    loop_depth: int
    loop: LoopFact | None = None  # innermost enclosing scf.for
    # an scf.for/scf.if/scf.while: the scf.yield ops that end its regions (both branches of an scf.if), in order
    yields: list[_Op] = field(default_factory=list)


_OP_RE = re.compile(r'^((?:%[\w.#:-]+(?:\s*,\s*%[\w.#:-]+)*)\s*=\s*)?"?([a-z_][\w]*\.[\w.]+)"?')


def _walk_mlir(text: str, stage: str) -> tuple[list[_Op], list[LoopFact]]:
    """Ops with their ``scf.for`` nesting depth, and the loops, from TTIR/TTGIR text (regions by braces)."""
    ops: list[_Op] = []
    loops: list[LoopFact] = []
    stack: list[LoopFact | None] = []
    owners: list[_Op | None] = []  # per open region, the op it belongs to (parallel to ``stack``)
    for no, raw in enumerate(text.splitlines(), 1):
        s = strip_loc(raw).strip()
        if not s or s.startswith(("#", "//")):
            continue
        if s.startswith("}"):
            closed = stack.pop() if stack else None
            owner = owners.pop() if owners else None
            if closed is not None:
                closed.end_line = no
                rest = s[1:].strip()
                closed.attrs = rest
                closed.flatten = closed.flatten or "tt.flatten" in rest
                lm = re.search(r"loc\((#[\w.]+)\)\s*$", raw)
                closed.loc = lm.group(1) if lm else ""
            if s.endswith("{"):  # "} else {" / "}, {": another region of the same op
                stack.append(None)
                owners.append(owner)
            continue
        depth = sum(1 for x in stack if x is not None)
        inner = next((x for x in reversed(stack) if x is not None), None)
        m = _OP_RE.match(s)
        new: _Op | None = None
        if m:
            results = re.findall(r"%[\w.#-]+", m.group(1) or "")
            new = _Op(no, s, [r.split(":")[0] for r in results], m.group(2), depth, inner)
            ops.append(new)
            if new.op == "scf.yield" and owners and owners[-1] is not None:
                owners[-1].yields.append(new)
        if s.endswith("{") or s.endswith("({"):
            owners.append(new)
            if m and m.group(2) == "scf.for":
                ia = re.search(r"iter_args\((.*?)\)\s*->", s)
                n_iter = len(re.findall(r"%[\w.#-]+\s*=", ia.group(1))) if ia else 0
                if inner is not None:
                    inner.has_inner = True
                lf = LoopFact(stage, depth + 1, n_iter, False, Ref(stage, no, s))
                loops.append(lf)
                stack.append(lf)
            else:
                stack.append(None)
    for o in ops:
        if o.loop is not None and o.op in _DOT_OPS:
            o.loop.dots += 1
    _mark_unrolled(ops, loops)
    return ops, loops


_DOT_OPS = ("tt.dot", "tt.dot_scaled", "ttng.warp_group_dot", "ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled")


def _mark_unrolled(ops: list[_Op], loops: list[LoopFact]) -> None:
    """Find the loops ``triton-loop-unroll`` produced (``tl.range(..., loop_unroll_factor=N)``): the unrolled loop
    and, right after it at the same depth from the same Python ``for`` (same ``loc``), its remainder loop."""
    heavy = ("tt.load", "tt.store", "tt.dot", "tt.atomic_rmw", "tt.descriptor_load", "ttg.async_copy_global_to_local")
    for prev, lp in zip(loops, loops[1:], strict=False):
        if not (lp.loc and lp.loc == prev.loc and lp.depth == prev.depth and prev.end_line < (lp.ref.line or 0)):
            continue
        if "tt.num_stages = 1" not in lp.attrs:
            continue
        body_main = [o.op for o in ops if o.loop is prev]
        body_rem = [o.op for o in ops if o.loop is lp]
        hm = sum(1 for o in body_main if o.startswith(heavy))
        hr = sum(1 for o in body_rem if o.startswith(heavy))
        num, den = (hm, hr) if hr else (len(body_main), len(body_rem))
        if den and num > den:
            lp.remainder = True
            prev.unroll = max(2, round(num / den))


def _func_signature_args(ttir: str) -> dict[str, Ref]:
    """``name`` → the fragment of the ``tt.func`` signature declaring it (``%stride_ak: i32``)."""
    out: dict[str, Ref] = {}
    for no, raw in enumerate(ttir.splitlines(), 1):
        if "tt.func" in raw and "(" in raw:
            s = strip_loc(raw)
            for m in re.finditer(r"%([\w]+):\s*([^,{)]+?)(\s*\{[^}]*\})?\s*(?=,|\))", s):
                out[m.group(1)] = Ref("ttir", no, f"%{m.group(1)}: {m.group(2).strip()}{m.group(3) or ''}".strip())
            break
    return out


# --------------------------------------------------------------------------------------------- logs


def _coalesce_accesses(log: str) -> list[dict[str, Any]]:
    """Blocks of the ``tritongpu-coalesce`` log for ``tt.load``/``tt.store`` ops (first coalescing run only)."""
    blocks: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    for no, raw in enumerate(log.splitlines(), 1):
        if not raw.startswith("[tritongpu-coalesce]"):
            continue
        body = raw.split("]:", 1)[1].strip() if "]:" in raw else raw
        if body.startswith("Considering op:"):
            op_text = body[len("Considering op:") :].strip()
            m = re.search(r"\b(tt\.load|tt\.store)\b", op_text.split(":")[0] + " " + op_text[:80])
            cur = None
            if m and "async_copy" not in op_text[:80]:
                cur = {"kind": m.group(1).split(".")[1], "op": op_text, "ref": Ref("llvm_debug", no, raw.strip())}
                blocks.append(cur)
            continue
        if cur is None:
            continue
        if body.startswith("axis info of pointer:"):
            cm = re.search(r"contiguity = \[([^\]]*)\]", body)
            cur["contiguity"] = _ints(cm.group(1)) if cm else []
            dm = re.search(r"divisibility = \[([^\]]*)\]", body)
            cur["divisibility"] = _ints(dm.group(1)) if dm else []
            cur["axis_ref"] = Ref("llvm_debug", no, raw.strip())
        elif body.startswith("order="):
            cur["order"] = _ints(body)
        elif body.startswith("perThread:"):
            cur["per_thread"] = _ints(body)[0]
            cur["per_thread_ref"] = Ref("llvm_debug", no, raw.strip())
    return blocks


def _pipeliner_loads(log: str) -> list[dict[str, Any]]:
    """Per load op the ``triton-loop-pipeline`` log talks about: width, decision, reason, lines."""
    loads: dict[str, dict[str, Any]] = {}
    for no, raw in enumerate(log.splitlines(), 1):
        if not raw.startswith("[triton-loop-pipeline]: Load "):
            continue
        body = raw.split("]: Load ", 1)[1]
        m = re.match(r"^(.*>>)\s+(.*)$", body) or re.match(r"^(.*?)\s+(has width.*|is too small.*|considered.*)$", body)
        if not m:
            continue
        op, msg = m.group(1), m.group(2)
        key = op.split(" = ")[0] + "|" + (re.sub(r"\{[^{}]*\}", "", op).split(":")[-1])
        d = loads.setdefault(key, {"op": op, "width": None, "pipelined": None, "reason": "", "refs": []})
        d["refs"].append(Ref("llvm_debug", no, raw.strip()))
        wm = re.match(r"has width (\d+)", msg)
        if wm:
            d["width"] = int(wm.group(1))
        elif "considered for pipelining" in msg:
            d["pipelined"] = True
            d["reason"] = msg
        elif msg:
            if d["pipelined"] is None:
                d["pipelined"] = False
            d["reason"] = msg
    return list(loads.values())


# --------------------------------------------------------------------------------------------- lowering

_LLVM_ELEM_BITS = {"half": 16, "bfloat": 16, "float": 32, "double": 64}


def _global_bits(key: str) -> int:
    """Bits one thread moves with the PTX memory instruction whose count key is ``key`` (``ld.global.v4.b32`` → 128)."""
    v = re.search(r"\.v(\d+)\.", key)
    t = re.search(r"\.[a-z]+(\d+)$", key)
    return (int(v.group(1)) if v else 1) * (int(t.group(1)) if t else 32)


def _llvm_type_bits(t: str) -> int | None:
    """``<4 x float>`` → 128, ``i32`` → 32, ``half`` → 16; None for anything else."""
    m = re.match(r"^<(\d+)\s+x\s+(\w+)>$", t.strip())
    n, elem = (int(m.group(1)), m.group(2)) if m else (1, t.strip())
    if elem in _LLVM_ELEM_BITS:
        return n * _LLVM_ELEM_BITS[elem]
    im = re.match(r"^i(\d+)$", elem)
    return n * int(im.group(1)) if im else None


def _llir_global_accesses(llir: str) -> list[tuple[str, int, str, tuple[int, int] | None, Ref]]:
    """Global loads/stores in LLIR: ``(kind, bits, key, (line, column) of its !dbg location, ref)``.

    Triton emits masked and cache-hinted accesses as inline PTX (``asm sideeffect "... ld.global.v4.b32 ..."``) and
    plain ones as LLVM ``load``/``store`` on ``ptr addrspace(1)``; both are read.
    """
    from irdiff.diagnose.counts import ptx_key

    dil: dict[str, tuple[int, int]] = {}
    lines = llir.splitlines()
    for raw in lines:
        if raw.startswith("!") and "DILocation" in raw:
            m = _DILOC.match(raw)
            if m:
                ln = _DI_LINE.search(m.group(2))
                col = _DI_COL.search(m.group(2))
                dil[m.group(1)] = (int(ln.group(1)) if ln else 0, int(col.group(1)) if col else 0)
    out: list[tuple[str, int, str, tuple[int, int] | None, Ref]] = []
    for no, raw in enumerate(lines, 1):
        if "addrspace(1)" not in raw and not ("asm" in raw and ".global" in raw):
            continue  # neither a global load/store nor inline PTX touching global memory
        dbg = _DBG.search(raw)
        pos = dil.get(dbg.group(1)) if dbg else None
        if "asm" in raw and ".global" in raw:
            asm = _ASM_TEXT.search(raw)
            if not asm:
                continue
            for m in _ASM_GLOBAL.finditer(asm.group(1)):
                keys = ptx_key(m.group(1), m.group(1))
                if keys:
                    kind = "load" if keys[0].startswith("ld.") else "store"
                    out.append((kind, _global_bits(keys[0]), keys[0], pos, Ref("llir", no, raw.strip())))
            continue
        m = _LLVM_LOAD.match(raw)
        if m:
            bits = _llvm_type_bits(m.group(1))
            if bits:
                out.append(("load", bits, f"load {m.group(1).strip()}", pos, Ref("llir", no, raw.strip())))
            continue
        m = _LLVM_STORE.match(raw)
        if m:
            bits = _llvm_type_bits(m.group(1))
            if bits:
                out.append(("store", bits, f"store {m.group(1).strip()}", pos, Ref("llir", no, raw.strip())))
    return out


# LLIR debug locations, line references, inline PTX and global loads/stores, read by _llir_global_accesses:
#   !42 = !DILocation(line: 38, column: 24, scope: !7)
#   %9 = tail call { i32, i32 } asm sideeffect "mov.u32 $0, 0x0;\n\t@$3 ld.global.v2.b32 ...", "=r,=r,l,b"(...), !dbg !42
#   %5 = load <4 x float>, ptr addrspace(1) %4, align 16, !dbg !40
#   store <4 x float> %8, ptr addrspace(1) %7, align 16, !dbg !41
_DILOC = re.compile(r"^(![\w.]+)\s*=\s*(?:distinct\s+)?!DILocation\((.*)\)")
_DI_LINE = re.compile(r"\bline:\s*(\d+)")
_DI_COL = re.compile(r"\bcolumn:\s*(\d+)")
_DBG = re.compile(r"!dbg\s+(![\w.]+)")
_ASM_TEXT = re.compile(r'asm\s+(?:sideeffect\s+)?"([^"]*)"')
# LLVM prints the asm string's tab and newline as ``\09``/``\0A``: an unpredicated instruction right after one
# (``mov.u32 $0, 0x0;\0A\09ld.global.b32 ...``, an unmasked load) has no word boundary before it
_ASM_GLOBAL = re.compile(r"(?:\b|(?<=\\09)|(?<=\\0A))((?:ld|st)\.global[\w.:]*)")
_LLVM_LOAD = re.compile(r"^\s*(?:%[\w.]+\s*=\s*)?load\s+(?:volatile\s+)?([^,]+),\s*ptr addrspace\(1\)")
_LLVM_STORE = re.compile(r"^\s*store\s+(?:volatile\s+)?(<[^>]*>|\w+)\s+[^,]+,\s*ptr addrspace\(1\)")


def _ptx_global_accesses(ptx: str) -> list[tuple[str, int, str, tuple[int, int] | None, Ref]]:
    """Global loads/stores in PTX: ``(kind, bits, count key, (line, column) of the last .loc, ref)``."""
    from irdiff.diagnose.counts import ptx_key

    # Inside an inline-asm block LLVM repeats the block's .loc with the line number advanced for every asm line
    # (8:30, 9:30, 10:30 ... for a 4-line block at 8:30): the block's first .loc is the op's position.
    loc_at: dict[int, tuple[int, int]] = {}
    cur: tuple[int, int] | None = None
    in_asm = False
    asm_loc: tuple[int, int] | None = None
    for no, raw in enumerate(ptx.splitlines(), 1):
        if "// begin inline asm" in raw:
            in_asm, asm_loc = True, None
            continue
        if "// end inline asm" in raw:
            in_asm = False
            continue
        m = re.match(r"^\s*\.loc\s+\d+\s+(\d+)\s+(\d+)", raw)
        if m:
            pos = (int(m.group(1)), int(m.group(2)))
            if in_asm:
                asm_loc = asm_loc or pos
            else:
                cur = pos
        else:
            at = (asm_loc or cur) if in_asm else cur
            if at is not None:
                loc_at[no] = at
    out: list[tuple[str, int, str, tuple[int, int] | None, Ref]] = []
    for no, op, full in ptx_instructions(ptx):
        if not op.startswith(("ld.global", "st.global")):
            continue
        keys = ptx_key(op, full)
        if keys:
            kind = "load" if keys[0].startswith("ld.") else "store"
            out.append((kind, _global_bits(keys[0]), keys[0], loc_at.get(no), Ref("ptx", no, full)))
    return out


_MASK_PASS = (
    "arith.cmpi",
    "arith.andi",
    "arith.ori",
    "arith.xori",
    "tt.splat",
    "tt.broadcast",
    "tt.expand_dims",
    "ttg.convert_layout",
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
)


def _backward(
    defs: dict[str, _Op], start: str, params: set[str], only: tuple[str, ...] | None = None
) -> tuple[list[_Op], list[str]]:
    """Walk definitions back from SSA value ``start``: the ops visited (nearest first) and the kernel parameters
    reached. ``only``: follow only through these ops (others stop the walk)."""
    seen: set[str] = set()
    ops: list[_Op] = []
    found: list[str] = []
    frontier = [start]
    for _ in range(40):
        nxt: list[str] = []
        for name in frontier:
            name = name.split("#")[0]
            if name in seen:
                continue
            seen.add(name)
            bare = name.lstrip("%")
            if bare in params:
                if bare not in found:
                    found.append(bare)
                continue
            op = defs.get(name)
            if op is None or (only is not None and op.op not in only):
                continue
            ops.append(op)
            rhs = op.text.split("=", 1)[1] if op.results else op.text
            rhs = re.split(r"\s:\s", rhs)[0]
            nxt.extend(re.findall(r"%[\w.#-]+", rhs))
        frontier = nxt
        if not frontier:
            break
    return ops, found


_Strides = tuple[int | None, ...]  # per dimension; () is uniform (the same value in every element: stride 0)
_STRIDE_SAME = (
    "tt.broadcast",
    "ttg.convert_layout",
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
    "arith.index_cast",
    "arith.bitcast",
)


def _operands(op: _Op) -> list[str]:
    body = op.text.split("=", 1)[1] if op.results else op.text
    body = body.split(op.op, 1)[1] if op.op in body else body
    body = re.split(r"\s:\s", body)[0]
    return re.findall(r"%[\w.#-]+", re.sub(r"\{[^{}]*\}", "", body))


def _const_int(defs: dict[str, _Op], name: str, depth: int = 0) -> int | None:
    """The integer a value holds in every element (``arith.constant dense<2>``, ``arith.constant 2 : i32``, a
    ``tt.splat`` of one), else None."""
    op = defs.get(name.split("#")[0])
    if op is None or depth > 8:
        return None
    if op.op == "arith.constant":
        m = re.search(r"arith\.constant\s+(?:dense<)?(-?\d+)>?\s*:", op.text)
        return int(m.group(1)) if m else None
    if op.op in ("tt.splat", *_STRIDE_SAME):
        ins = _operands(op)
        return _const_int(defs, ins[0], depth + 1) if ins else None
    return None


def address_strides(defs: dict[str, _Op], value: str, rank: int) -> list[int | None] | None:
    """Per dimension, the distance in elements between neighbouring elements of the pointer (or offset) tensor
    ``value``, derived from the TTGIR ops that compute it: ``tt.make_range`` steps by 1, ``tt.splat`` and scalars are
    uniform (0), ``tt.expand_dims`` adds a dimension of stride 0, ``tt.addptr``/``arith.addi``/``arith.subi`` add
    strides, ``arith.muli``/``arith.shli`` by a constant scale them (by a runtime value: None for that dimension).
    The same facts AxisInfo reasons with (``lib/Analysis/AxisInfo.cpp``), kept as a stride instead of a contiguity:
    AxisInfo says only "1 contiguous element" for both ``offs * 2`` and a gather. A result of an ``scf.if`` has the
    strides both branches yield when they agree; a loop-carried value (an ``scf.for`` result, or its ``iter_args``
    inside the body) has its initial value's strides when the body yields the same strides back (``p += BLOCK``:
    a uniform step), by induction over the iterations. None when the chain leaves what is modelled (a pointer the
    loop moves by a tensor, branches that disagree, a load of indices)."""
    memo: dict[str, _Strides | None] = {}
    carried: dict[str, tuple[_Op, int]] = {}  # an iter_args block argument -> (its scf.for, its index)
    for o in defs.values():
        if o.op == "scf.for":
            ia = re.search(r"iter_args\((.*?)\)\s*->", o.text)
            for k, arg in enumerate(re.findall(r"(%[\w.#-]+)\s*=", ia.group(1)) if ia else []):
                carried[arg] = (o, k)

    def loop_value(loop: _Op, k: int, depth: int) -> _Strides | None:
        ia = re.search(r"iter_args\((.*?)\)\s*->", loop.text)
        pairs = re.findall(r"(%[\w.#-]+)\s*=\s*(%[\w.#-]+)", ia.group(1)) if ia else []
        if k >= len(pairs) or len(loop.yields) != 1:
            return None
        arg, init = pairs[k]
        if arg in memo:  # asked again while checking its own yield: the induction hypothesis
            return memo[arg]
        start = walk(init, depth + 1)
        if start is None:
            memo[arg] = None
            return None
        before = set(memo)
        memo[arg] = start
        back = _operands(loop.yields[0])
        got = walk(back[k], depth + 1) if k < len(back) else None
        if got != start:  # not an invariant: forget what was derived from the hypothesis
            for key in set(memo) - before:
                del memo[key]
            memo[arg] = None
            return None
        return start

    def walk(name: str, depth: int) -> _Strides | None:
        full = name
        name = name.split("#")[0]
        if full in memo:
            return memo[full]
        op = defs.get(name)
        if depth > 60:
            return None
        if op is None and name in carried:  # an iter_args block argument, inside its loop
            return loop_value(*carried[name], depth)
        if op is None:  # a kernel parameter or a loop's scalar argument: uniform; a loop-carried tensor: unknown
            return None
        out: _Strides | None
        k = int(full.split("#")[1]) if "#" in full and full.split("#")[1].isdigit() else 0
        if op.op == "scf.for":  # a loop result: the type after " : " is the counter's, not the result's
            out = loop_value(op, k, depth)
            memo[full] = out
            return out
        if op.op == "scf.if":
            got = [walk(ys[k], depth + 1) if k < len(ys) else None for ys in (_operands(y) for y in op.yields)]
            out = got[0] if len(got) == 2 and got[0] == got[1] else None
            memo[full] = out
            return out
        if op.op in ("scf.while", "scf.execute_region", "scf.index_switch"):
            memo[full] = None
            return None
        rtype = op.text.rsplit(" : ", 1)[-1].split("->")[-1]
        ins = _operands(op)
        if "tensor<" not in rtype:
            out = ()
        elif op.op == "tt.make_range":
            out = (1,)
        elif op.op in ("tt.splat", "arith.constant"):
            out = ()
        elif op.op == "tt.expand_dims" and ins:
            inner = walk(ins[0], depth + 1)
            m = re.search(r"axis\s*=\s*(\d+)", op.text)
            out = (
                None
                if inner is None or m is None
                else inner
                if inner == ()
                else (inner[: int(m.group(1))] + (0,) + inner[int(m.group(1)) :])
            )
        elif op.op in _STRIDE_SAME and ins:
            out = walk(ins[0], depth + 1)
        elif op.op in ("tt.addptr", "arith.addi", "arith.subi") and len(ins) == 2:
            x, y = walk(ins[0], depth + 1), walk(ins[1], depth + 1)
            sign = -1 if op.op == "arith.subi" else 1
            out = _combine(x, y, lambda p, q: None if p is None or q is None else p + sign * q)
        elif op.op == "arith.select" and len(ins) == 3:  # a branch made a select: both sides must agree
            x, y = walk(ins[1], depth + 1), walk(ins[2], depth + 1)
            out = x if x is not None and x == y else None
        elif op.op in ("arith.muli", "arith.shli") and len(ins) == 2:
            x, y = walk(ins[0], depth + 1), walk(ins[1], depth + 1)
            cx, cy = _const_int(defs, ins[0]), _const_int(defs, ins[1])
            if op.op == "arith.shli":
                out = None if x is None or cy is None else tuple(None if s is None else s << cy for s in x)
            elif x == () and y == ():
                out = ()
            elif x is not None and cy is not None:
                out = tuple(None if s is None else s * cy for s in x)
            elif y is not None and cx is not None:
                out = tuple(None if s is None else s * cx for s in y)
            elif x is not None and y == ():  # times a runtime value: dimensions that move scale by an unknown
                out = tuple(0 if s == 0 else None for s in x)
            elif y is not None and x == ():
                out = tuple(0 if s == 0 else None for s in y)
            else:
                out = None
        else:
            out = None
        memo[name] = out
        return out

    got = walk(value, 0)
    if got is None:
        return None
    if got == ():
        return [0] * rank
    return list(got) if len(got) == rank else None


def _combine(
    x: _Strides | None, y: _Strides | None, f: Callable[[int | None, int | None], int | None]
) -> _Strides | None:
    if x is None or y is None:
        return None
    if x == ():
        x = (0,) * len(y)
    if y == ():
        y = (0,) * len(x)
    if len(x) != len(y):
        return None
    return tuple(f(p, q) for p, q in zip(x, y, strict=True))


def _access_operands(op: _Op) -> tuple[str, str]:
    """Pointer and mask operand names of a TTGIR ``tt.load %ptr, %mask, %other`` / ``tt.store %ptr, %val, %mask``."""
    body = op.text.split("=", 1)[1] if op.results else op.text
    body = body.split(op.op, 1)[1] if op.op in body else body
    body = re.split(r"\s:\s", body)[0]
    body = re.sub(r"\{[^{}]*\}", "", body)
    operands = re.findall(r"%[\w.#-]+", body)
    if op.op == "tt.load":
        return (operands[0] if operands else "", operands[1] if len(operands) > 1 else "")
    return (operands[0] if operands else "", operands[2] if len(operands) > 2 else "")


def sass_calls(sass: str) -> tuple[list[Ref], list[Ref]]:
    """SASS ``CALL`` instructions split into ``(subroutine calls, branch-like calls)``.

    A call whose target code reaches ``RET`` before ``EXIT`` is a subroutine (ptxas' 64-bit division routine, ...).
    ptxas also uses a predicated ``CALL.REL.NOINC`` as a jump out of a loop to code that ends in ``EXIT``; that is
    control flow, not a routine. Targets are byte offsets (16-byte instructions since sm70); when the offset cannot be
    followed, a call counts as a subroutine call if the function has any ``RET``.
    """
    ins = sass_instructions(sass)
    has_ret = any(op.startswith("RET") for _, op, _ in ins)
    subs: list[Ref] = []
    branches: list[Ref] = []
    for no, op, full in ins:
        if not op.startswith("CALL"):
            continue
        ref = Ref("sass", no, full)
        m = re.search(r"\b(0x[0-9a-fA-F]+)\b", full)
        target = int(m.group(1), 16) // 16 if m else -1
        if 0 <= target < len(ins):
            kind = next((o for _, o, _ in ins[target:] if o.startswith(("RET", "EXIT"))), "")
            (subs if kind.startswith("RET") else branches).append(ref)
        else:
            (subs if has_ret else branches).append(ref)
    return subs, branches


# --------------------------------------------------------------------------------------------- occupancy

# Per-SM limits by compute capability, from the CUDA C++ Programming Guide, "Technical Specifications per Compute
# Capability": 32-bit registers per SM, resident threads per SM, shared memory per SM (largest carve-out, bytes),
# resident CTAs per SM, and the per-CTA shared memory the driver reserves (1 KB since 8.0).
ARCH_LIMITS: dict[int, dict[str, int]] = {
    80: {"regs": 65536, "threads": 2048, "smem": 164 * 1024, "ctas": 32, "reserved_smem": 1024},
    86: {"regs": 65536, "threads": 1536, "smem": 100 * 1024, "ctas": 16, "reserved_smem": 1024},
    87: {"regs": 65536, "threads": 2048, "smem": 164 * 1024, "ctas": 16, "reserved_smem": 1024},
    89: {"regs": 65536, "threads": 1536, "smem": 100 * 1024, "ctas": 24, "reserved_smem": 1024},
    90: {"regs": 65536, "threads": 2048, "smem": 228 * 1024, "ctas": 32, "reserved_smem": 1024},
    100: {"regs": 65536, "threads": 2048, "smem": 228 * 1024, "ctas": 32, "reserved_smem": 1024},
    103: {"regs": 65536, "threads": 2048, "smem": 228 * 1024, "ctas": 32, "reserved_smem": 1024},
    120: {"regs": 65536, "threads": 1536, "smem": 100 * 1024, "ctas": 32, "reserved_smem": 1024},
}
OCCUPANCY_SOURCE = (
    "CUDA C++ Programming Guide, technical specifications per compute capability (registers, threads, shared memory "
    "and CTAs per SM); registers allocated per warp in units of 256; 1 KB shared memory reserved per CTA"
)


def occupancy(arch: int, num_warps: int, registers: int | None, shared_bytes: int | None) -> Occupancy | None:
    """CTAs of this kernel that fit on one SM of ``arch``, and which resource limits it.

    :param arch: compute capability as an int (86 for sm86); unknown archs give None.
    :param num_warps: warps per CTA (``num_warps`` × ``num_ctas`` is not modelled; clusters are ignored).
    :param registers: registers per thread from ptxas; shared_bytes: dynamic shared memory per CTA (bytes).
    :returns: :class:`Occupancy` with ``limits`` = CTAs allowed by ``registers``, ``shared memory``, ``warps`` and
        ``CTA slots``; ``limiter`` is the smallest (ties named in that order).
    """
    lim = ARCH_LIMITS.get(arch)
    if lim is None or num_warps <= 0:
        return None
    limits: dict[str, int] = {}
    if registers:
        per_warp = math.ceil(registers * 32 / 256) * 256
        limits["registers"] = (lim["regs"] // per_warp) // num_warps
    if shared_bytes is not None:
        per_cta = shared_bytes + lim["reserved_smem"]
        limits["shared memory"] = lim["smem"] // per_cta if per_cta else lim["ctas"]
    limits["warps"] = (lim["threads"] // 32) // num_warps
    limits["CTA slots"] = lim["ctas"]
    limiter = min(limits, key=lambda k: limits[k])
    ctas = limits[limiter]
    return Occupancy(ctas, limiter, limits, ctas * num_warps, OCCUPANCY_SOURCE)


def arch_of(target: str, metadata: dict[str, Any]) -> int:
    """``sm86`` / ``sm_90a`` / metadata ``arch`` → 86 / 90 (0 when unknown or not CUDA;
    :func:`irdiff.target.parse_target`)."""
    for s in (target, str(metadata.get("arch", ""))):
        try:
            return parse_target(s or "", supported_only=False).capability
        except TargetError:
            continue
    return 0


# --------------------------------------------------------------------------------------------- extraction


def _first_lines(stage: str, text: str) -> dict[str, Ref]:
    """For each count key of a stage, the first raw line that contributes to it."""
    out: dict[str, Ref] = {}
    dialect = dialect_of(stage)
    if dialect == "ptx":
        for no, op, full in ptx_instructions(text):
            for k in ptx_key(op, full):
                out.setdefault(k, Ref("ptx", no, full))
    elif dialect == "sass":
        for no, op, full in sass_instructions(text):
            for k in sass_key(op):
                out.setdefault(k, Ref("sass", no, full))
    elif dialect == "mlir":
        for no, raw in enumerate(text.splitlines(), 1):
            s = strip_loc(raw).strip()
            m = _OP_RE.match(s)
            if m:
                out.setdefault(m.group(2), Ref(stage, no, s))
    return out


def _load_name(ops: list[_Op], i: int, ptr: str) -> str:
    """Python name of the value ``ops[i]`` (a ``tt.load``) loads. MLIR names a value after the assignment it sits in,
    so a load nested in an expression (``acc = tl.dot(tl.load(a_ptrs), ...)``) carries the name of the enclosing
    assignment (``acc``); then the pointer's name (``a_ptrs``) labels it. Nested = a later op with the same name
    stem uses the loaded value directly."""
    op = ops[i]
    name = _stem(op.results[0]) if op.results else ""
    if not name or not ptr or ptr == name:
        return name or ptr
    res = op.results[0].split("#")[0]
    for later in ops[i + 1 : i + 40]:
        if later.results and _stem(later.results[0]) == name and re.search(re.escape(res) + r"\b", later.text):
            return ptr
    return name


def _name_loads(ttir_ops: list[_Op]) -> dict[tuple[str, tuple[int, ...], str], list[tuple[str, str]]]:
    """``(kind, shape, elem)`` → ``[(value name, pointer name)]`` for TTIR ``tt.load``/``tt.store`` ops, in order."""
    out: dict[tuple[str, tuple[int, ...], str], list[tuple[str, str]]] = {}
    for i, op in enumerate(ttir_ops):
        if op.op not in ("tt.load", "tt.store"):
            continue
        pt = _ptr_tensor(op.text)
        if pt is None:
            continue
        operands = re.findall(r"%[\w.#-]+", op.text.split("=", 1)[1] if op.results else op.text)
        ptr = _stem(operands[0]) if operands else ""
        if op.op == "tt.load":
            name = _load_name(ttir_ops, i, ptr)
        else:
            name = _stem(operands[1]) if len(operands) > 1 else ""
        out.setdefault((op.op.split(".")[1], tuple(pt[0]), pt[1]), []).append((name or ptr, ptr))
    return out


# --------------------------------------------------------------------------------------------- extractors
# One extractor per stage or log; :func:`extract_facts` calls them in pipeline order and assembles VariantFacts.


def spec_facts(v: VariantResult, ttir: str) -> list[ArgFact]:
    """Stage 0: how the JIT specialized each parameter (``v.specialization``) plus its TTIR signature fragment."""
    sig = _func_signature_args(ttir)
    return [
        ArgFact(
            a.name,
            a.index,
            a.type,
            a.divisibility,
            a.constexpr,
            a.reason,
            a.annotation,
            a.value,
            a.do_not_specialize,
            a.do_not_specialize_on_alignment,
            sig.get(a.name),
        )
        for a in v.specialization
    ]


def coalesce_facts(log: str, names: dict[tuple[str, tuple[int, ...], str], list[tuple[str, str]]]) -> list[Access]:
    """The coalesce pass's per-access decisions, from the LLVM debug log (``TRITON_ENABLE_LLVM_DEBUG``,
    ``lib/Dialect/TritonGPU/Transforms/Coalesce.cpp``); ``names`` gives Python names by (kind, shape, element)."""
    accesses: list[Access] = []
    used: dict[tuple[str, tuple[int, ...], str], int] = {}
    for blk in _coalesce_accesses(log):
        pt = _ptr_tensor(blk["op"])
        if pt is None or "contiguity" not in blk or "per_thread" not in blk:
            continue
        shape, elem = pt
        bits = elem_bits(elem)
        key = (blk["kind"], tuple(shape), elem)
        cands = names.get(key, [])
        i = used.get(key, 0)
        used[key] = i + 1
        name, pointer = cands[i] if i < len(cands) else ("", "")
        order = blk.get("order", [])
        fast = order[0] if order else len(shape) - 1
        contig = blk["contiguity"][fast] if fast < len(blk["contiguity"]) else 1
        divs = blk.get("divisibility", [])
        align = max(1, (divs[fast] if fast < len(divs) else bits // 8) * 8 // bits)
        vec = max(1, min(blk["per_thread"], contig, align))
        accesses.append(
            Access(
                blk["kind"],
                shape,
                elem,
                bits,
                blk["contiguity"],
                blk.get("divisibility", []),
                blk.get("order", []),
                blk["per_thread"],
                min(vec * bits, 128),
                name,
                pointer,
                blk["ref"],
                blk["axis_ref"],
                blk["per_thread_ref"],
            )
        )

    return accesses


def pipeliner_facts(
    log: str, names: dict[tuple[str, tuple[int, ...], str], list[tuple[str, str]]]
) -> list[PipelineLoad]:
    """The software pipeliner's per-load decisions (pipelined or not, and why), from the LLVM debug log."""
    pipeline: list[PipelineLoad] = []
    used: dict[tuple[str, tuple[int, ...], str], int] = {}
    for d in _pipeliner_loads(log):
        pt = _ptr_tensor(d["op"])
        shape, elem = pt if pt else ([], "")
        key = ("load", tuple(shape), elem)
        cands = names.get(key, [])
        i = used.get(key, 0)
        used[key] = i + 1
        name = cands[i][0] if i < len(cands) else ""
        pipeline.append(PipelineLoad(shape, elem, d["width"], bool(d["pipelined"]), d["reason"], name, d["refs"]))

    return pipeline


@dataclass
class TTGIRMemoryFacts:
    """Shared-memory buffers, async/TMA copies, synchronous loads in loops and waits, from TTGIR ops (the fields of
    :class:`VariantFacts` of the same names)."""

    buffers: list[Buffer]
    async_copies_prologue: list[Ref]
    async_copies_loop: list[Ref]
    sync_loads_loop: list[Ref]
    tma_copies: list[Ref]
    waits: list[WaitFact]


def _indexed(alloc: _Op, ops: list[_Op]) -> bool:
    """A result of ``alloc`` is sliced per slot (``ttg.memdesc_index``, ``ttg.memdesc_subview`` in older Triton)."""
    names = [r.split("#")[0] for r in alloc.results]
    return any(
        o.op in ("ttg.memdesc_index", "ttg.memdesc_subview")
        and any(re.search(rf"{re.escape(n)}\b", o.text) for n in names)
        for o in ops
    )


def ttgir_memory_facts(ttgir_ops: list[_Op]) -> TTGIRMemoryFacts:
    """Buffers (``ttg.local_alloc``), copies (``ttg.async_copy_global_to_local``, TMA), loads and waits in TTGIR."""
    buffers: list[Buffer] = []
    pro: list[Ref] = []
    inloop: list[Ref] = []
    sync_loads: list[Ref] = []
    tma: list[Ref] = []
    waits: list[WaitFact] = []
    for op in ttgir_ops:
        ref = Ref("ttgir", op.line, op.text)
        if op.op == "ttg.local_alloc":
            m = re.search(r"memdesc<((?:\d+x)+)(\w+)", op.text)
            if m:
                dims = [int(x) for x in m.group(1).rstrip("x").split("x")]
                e = m.group(2)
                if e == "i64" and dims[-1] == 1:
                    continue  # mbarriers of TMA/wgmma pipelines, not data buffers
                nbytes = math.prod(dims) * elem_bits(e) // 8
                has_init = bool(re.search(r"local_alloc\s+%", op.text))
                # a ring is indexed per slot (``ttg.memdesc_index``); a mutable buffer used whole (a TMA load's
                # single destination tile, ``64x64xf16``) is one buffer, not a ring of 64
                ring = not has_init and len(dims) >= 2 and "mutable" in op.text and _indexed(op, ttgir_ops)
                depth = dims[0] if ring else 1
                tile = dims[1:] if ring else dims
                buffers.append(Buffer(depth, tile, e, nbytes, ref))
        elif op.op in ("ttg.async_copy_global_to_local",):
            # "in the loop" = in an innermost loop (the steady state); copies in an outer loop's body, before its
            # inner loop, are that inner loop's prologue
            (inloop if op.loop is not None and not op.loop.has_inner else pro).append(ref)
        elif op.op in ("ttng.async_tma_copy_global_to_local", "ttng.async_tma_gather"):
            tma.append(ref)
            (inloop if op.loop is not None and not op.loop.has_inner else pro).append(ref)
        elif op.op == "tt.load" and op.loop_depth and _ptr_tensor(op.text):
            sync_loads.append(ref)
        elif op.op == "ttg.async_wait":
            m = re.search(r"num = (\d+)", op.text)
            inner = op.loop is not None and not op.loop.has_inner
            waits.append(WaitFact(op.op, int(m.group(1)) if m else -1, op.loop_depth > 0, ref, inner))
        elif op.op == "ttng.warp_group_dot_wait":
            m = re.search(r"pendings = (\d+)", op.text)
            inner = op.loop is not None and not op.loop.has_inner
            waits.append(WaitFact(op.op, int(m.group(1)) if m else -1, op.loop_depth > 0, ref, inner))

    return TTGIRMemoryFacts(buffers, pro, inloop, sync_loads, tma, waits)


def ttgir_layout_facts(ttgir: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(blocked, mma)``: the ``#ttg.blocked`` and ``#ttg.nvidia_mma`` layout aliases defined at the top of TTGIR."""
    blocked: list[dict[str, Any]] = []
    mma: list[dict[str, Any]] = []
    for no, raw in enumerate(ttgir.splitlines(), 1):
        m = re.match(r"^(#\w+) = #ttg\.blocked<\{(.*)\}>", raw)
        if m:
            body = m.group(2)
            lay: dict[str, Any] = {"alias": m.group(1), "ref": asdict(Ref("ttgir", no, raw.strip()))}
            for k in ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"):
                km = re.search(k + r" = \[([^\]]*)\]", body)
                lay[k] = _ints(km.group(1)) if km else []
            blocked.append(lay)
            continue
        m = re.match(r"^(#\w+) = #ttg\.nvidia_mma<\{(.*)\}>", raw)
        if m:
            body = m.group(2)
            vm = re.search(r"versionMajor = (\d+)", body)
            im = re.search(r"instrShape = \[([^\]]*)\]", body)
            wm = re.search(r"warpsPerCTA = \[([^\]]*)\]", body)
            mma.append(
                {
                    "alias": m.group(1),
                    "version": int(vm.group(1)) if vm else None,
                    "instrShape": _ints(im.group(1)) if im else [],
                    "warpsPerCTA": _ints(wm.group(1)) if wm else [],
                    "ref": asdict(Ref("ttgir", no, raw.strip())),
                }
            )

    return blocked, mma


def ttir_int_width_facts(
    ttir: str, ttir_ops: list[_Op], source_path: str, python_text: str
) -> tuple[int, Ref | None, Ref | None, list[Ref]]:
    """``(i64 op count, first i64 op, its Python line, 64-bit div/rem ops)`` from TTIR result types."""
    i64_ops = 0
    i64_first: Ref | None = None
    i64_first_line = 0
    divrem: list[Ref] = []
    for op in ttir_ops:
        if op.op.startswith(("tt.func", "tt.return", "scf.")) or not op.results:
            continue
        rtype = op.text.rsplit(":", 1)[-1].strip() if ":" in op.text else ""
        if op.op == "arith.constant":
            continue
        if re.search(r"(?:^|\s|to\s+|x)i64>?$", rtype) or rtype == "i64" or re.search(r"\bto i64\b", op.text):
            i64_ops += 1
            if i64_first is None:
                i64_first = Ref("ttir", op.line, op.text)
                i64_first_line = op.line
            if op.op in (
                "arith.divsi",
                "arith.remsi",
                "arith.divui",
                "arith.remui",
                "arith.floordivsi",
                "arith.ceildivsi",
            ):
                divrem.append(Ref("ttir", op.line, op.text))
    i64_py: Ref | None = None
    if i64_first is not None:
        raw_line = ttir.splitlines()[i64_first_line - 1]
        i64_py = python_ref(raw_line, _loc_table(ttir), source_path, python_text)

    return i64_ops, i64_first, i64_py, divrem


def stage_counts(v: VariantResult) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, Ref]]]:
    """``(counts, first lines)`` of the key ops per text stage (:func:`irdiff.diagnose.counts.count_ops`)."""
    counts: dict[str, dict[str, int]] = {}
    first: dict[str, dict[str, Ref]] = {}
    for st in (s.name for s in stages.text_stages() if s.counted):
        t = stage_text(v, st)
        if t:
            counts[st] = count_ops(st, t)
            first[st] = _first_lines(st, t)

    return counts, first


def lowering_facts(
    v: VariantResult, ttgir: str, ttgir_ops: list[_Op], accesses: list[Access]
) -> tuple[list[LoweredAccess], dict[str, list[str]]]:
    """``(lowered, arg_roles)``: each global ``tt.load``/``tt.store`` left in TTGIR, the LLIR/PTX instructions it
    became (matched by source position) and what its mask is made of; per parameter, its roles in addresses/masks."""
    params = {a.name for a in v.specialization}
    ptr_types = {a.name: a.type for a in v.specialization}
    defs = {r: op for op in ttgir_ops for r in op.results}
    table = _loc_table(ttgir)
    raw_ttgir = ttgir.splitlines()
    llir_acc = _llir_global_accesses(stage_text(v, "llir"))
    ptx_acc = _ptx_global_accesses(stage_text(v, "ptx"))
    lowered: list[LoweredAccess] = []
    roles: dict[str, set[str]] = {}
    used_acc: set[int] = set()
    for op_i, op in enumerate(ttgir_ops):
        if op.op not in ("tt.load", "tt.store", "ttg.async_copy_global_to_local"):
            continue
        pt = _ptr_tensor(op.text)
        if pt is None:
            continue
        if op.op == "ttg.async_copy_global_to_local":
            operands = re.findall(r"%[\w.#-]+", op.text.split("=", 1)[-1].split(" : ")[0])
            mm = re.search(r"\bmask\s+(%[\w.#-]+)", op.text)
            ptr, mask = (operands[0] if operands else ""), (mm.group(1) if mm else "")
        else:
            ptr, mask = _access_operands(op)
        _, ptr_params = _backward(defs, ptr, params) if ptr else ([], [])
        _, mask_params = _backward(defs, mask, params) if mask else ([], [])
        for prm in ptr_params:
            roles.setdefault(prm, set()).add("pointer")
        for prm in mask_params:
            roles.setdefault(prm, set()).add("mask")
        if op.op == "ttg.async_copy_global_to_local":
            continue
        shape, elem = pt
        bits = elem_bits(elem)
        kind = op.op.split(".")[1]
        if kind == "load":
            name = _load_name(ttgir_ops, op_i, _stem(ptr) if ptr else "")
        else:
            body = re.findall(r"%[\w.#-]+", op.text.split(op.op, 1)[1].split(" : ")[0])
            name = _stem(body[1]) if len(body) > 1 else ""
        acc_i = next(
            (
                i
                for i, a in enumerate(accesses)
                if i not in used_acc
                and (a.kind, a.shape, a.elem) == (kind, shape, elem)
                and (not a.name or not name or a.name == name)
            ),
            None,
        )
        acc = accesses[acc_i] if acc_i is not None else None
        if acc_i is not None:
            used_acc.add(acc_i)
        pos = _op_pos(raw_ttgir[op.line - 1], table)
        li = [x for x in llir_acc if pos is not None and x[0] == kind and x[3] == pos]
        pi = [x for x in ptx_acc if pos is not None and x[0] == kind and x[3] == pos]
        mask_ops, _ = _backward(defs, mask, params, only=_MASK_PASS) if mask else ([], [])
        lowered.append(
            LoweredAccess(
                kind=kind,
                shape=shape,
                elem=elem,
                elem_bits=bits,
                name=name or (acc.name if acc else ""),
                mask=mask,
                mask_refs=[Ref("ttgir", o.line, o.text) for o in mask_ops[:4]],
                mask_args=mask_params,
                ptr_args=sorted(ptr_params, key=lambda p_: (not ptr_types.get(p_, "").startswith("*"), p_)),
                per_thread=acc.per_thread if acc else None,
                coalesce_bits=acc.vector_bits if acc else None,
                coalesce_index=acc_i,
                llir_bits=max(x[1] for x in li) if li else None,
                llir_count=len(li),
                ptx_bits=max(x[1] for x in pi) if pi else None,
                ptx_count=len(pi),
                ptx_key=max(pi, key=lambda x: x[1])[2] if pi else "",
                ref=Ref("ttgir", op.line, op.text),
                llir_ref=max(li, key=lambda x: x[1])[4] if li else None,
                ptx_ref=max(pi, key=lambda x: x[1])[4] if pi else None,
                strides=address_strides(defs, ptr, len(shape)) if ptr else None,
            )
        )
    return lowered, {k: sorted(r) for k, r in roles.items()}


def resource_facts(v: VariantResult, ttgir: str, arch: int) -> tuple[dict[str, Any], dict[str, Ref], Occupancy | None]:
    """``(resources, their ptxas/TTGIR lines, occupancy)`` from ptxas (``-v`` log) and Triton's metadata."""
    r = v.resources
    shared = r.shared_bytes if r.shared_bytes is not None else v.metadata.get("shared")
    resources: dict[str, Any] = {
        "registers": r.registers,
        "spill_store_bytes": r.spill_store_bytes,
        "spill_load_bytes": r.spill_load_bytes,
        "stack_bytes": r.stack_bytes,
        "shared_bytes": shared if isinstance(shared, int) else None,
        "static_shared_bytes": r.static_shared_bytes,
        "ptxas_version": r.ptxas_version,
    }
    rrefs: dict[str, Ref] = {}
    for no, raw in enumerate(stage_text(v, "ptxas").splitlines(), 1):
        if "registers" in raw and "Used" in raw:
            rrefs["registers"] = Ref("ptxas", no, raw.strip())
        if "spill stores" in raw:
            rrefs["spills"] = Ref("ptxas", no, raw.strip())
            rrefs["stack"] = Ref("ptxas", no, raw.strip())
    for no, raw in enumerate(ttgir.splitlines(), 1):
        if '"ttg.shared"' in raw or "ttg.shared =" in raw:
            m = re.search(r'"?ttg\.shared"? = (\d+)', raw)
            if m:
                rrefs["shared"] = Ref("ttgir", no, f"ttg.shared = {m.group(1)} : i32")
            break
    num_warps = int(v.options.get("num_warps") or v.metadata.get("num_warps") or 4)
    occ = occupancy(arch, num_warps, r.registers, resources["shared_bytes"])

    return resources, rrefs, occ


def option_facts(v: VariantResult) -> dict[str, Any]:
    """Launch/compile options, completed from metadata (``num_warps``, ``num_stages``, ``num_ctas``, ``maxnreg``)."""
    options = dict(v.options)
    for k in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
        if k not in options and k in v.metadata:
            options[k] = v.metadata[k]

    return options


def extract_facts(v: VariantResult) -> VariantFacts:
    """Read every fact of one variant from its saved texts (missing stages give empty facts, never errors)."""

    ttir = stage_text(v, "ttir")
    ttgir = stage_text(v, "ttgir")
    log = stage_text(v, "llvm_debug")
    arch = arch_of(v.target, v.metadata)

    ttir_ops, loops_ttir = _walk_mlir(ttir, "ttir")
    ttgir_ops, loops_ttgir = _walk_mlir(ttgir, "ttgir")
    names = _name_loads(ttir_ops)
    accesses = coalesce_facts(log, names)
    mem = ttgir_memory_facts(ttgir_ops)
    blocked, mma = ttgir_layout_facts(ttgir)
    source_path = str(v.metadata.get("source_path", ""))
    i64_ops, i64_first, i64_py, divrem = ttir_int_width_facts(ttir, ttir_ops, source_path, stage_text(v, "python"))
    counts, first = stage_counts(v)
    lowered, arg_roles = lowering_facts(v, ttgir, ttgir_ops, accesses)
    calls_sub, calls_branch = sass_calls(stage_text(v, "sass"))
    resources, rrefs, occ = resource_facts(v, ttgir, arch)

    return VariantFacts(
        name=v.name,
        kernel=v.kernel,
        target=v.target,
        arch=arch,
        options=option_facts(v),
        config=dict(v.config),
        args=spec_facts(v, ttir),
        accesses=accesses,
        pipeline=pipeliner_facts(log, names),
        **vars(mem),  # buffers, async copies (prologue/loop), sync loads in loops, TMA copies, waits
        loops_ttir=loops_ttir,
        loops_ttgir=loops_ttgir,
        blocked=blocked,
        mma=mma,
        i64_ops=i64_ops,
        i64_first=i64_first,
        i64_first_python=i64_py,
        divrem64_ttir=divrem,
        counts=counts,
        first_lines=first,
        resources=resources,
        resource_refs=rrefs,
        occupancy=occ,
        llvm_debug_present=bool(log.strip()),
        triton_version=str(v.metadata.get("triton_version", "")),
        lowered=lowered,
        arg_roles=arg_roles,
        sass_calls=calls_sub,
        sass_branch_calls=calls_branch,
        invariant_loads=invariant_loads(ttir_ops, loops_ttir),
    )


_SSA = re.compile(r"%[\w.$-]+")


def invariant_loads(ops: list[_Op], loops: list[LoopFact]) -> list[Ref]:
    """TTIR ``tt.load`` ops inside a loop whose operands (pointer, mask, other) are the same on every iteration:
    nothing they derive from is the loop's induction variable, a loop-carried value (``iter_args``), a block argument
    of a loop nested in it, or a load inside the loop. Triton's LICM (``make_ttir``) hoists side-effect-free index
    math but never a load, so such a load stays in the loop exactly where the source put it. Printed SSA names are
    scoped by region (two sibling loops may both call their induction variable ``%s``): a name resolves to the
    innermost loop around its use that declares it, else to its last definition before the use."""
    defs: dict[str, list[_Op]] = {}
    for o in ops:
        for r in o.results:
            defs.setdefault(r.split("#")[0], []).append(o)
    block_args: dict[str, list[LoopFact]] = {}
    for lp in loops:
        head = lp.ref.text
        for m in re.finditer(r"(%[\w.$-]+)\s*=", head.split("iter_args", 1)[-1] if "iter_args" in head else ""):
            block_args.setdefault(m.group(1), []).append(lp)
        iv = re.search(r"scf\.for\s+(%[\w.$-]+)\s*=", head)
        if iv:
            block_args.setdefault(iv.group(1), []).append(lp)

    def inside(line: int | None, lp: LoopFact) -> bool:
        return (lp.ref.line or 0) < (line or 0) < (lp.end_line or 10**9)

    def variant(name: str, lp: LoopFact, use: int, seen: set[tuple[str, int]]) -> bool:
        if (name, use) in seen:
            return False
        seen.add((name, use))
        owners = [x for x in block_args.get(name, []) if inside(use, x)]
        if owners:
            owner = max(owners, key=lambda x: x.ref.line or 0)
            return owner is lp or inside(owner.ref.line, lp)
        d = max((o for o in defs.get(name, []) if o.line < use), key=lambda o: o.line, default=None)
        if d is None or not inside(d.line, lp):
            return False
        if d.op.startswith(("tt.load", "tt.atomic", "tt.descriptor_load", "scf.")):
            return True
        body = d.text.split("=", 1)[1] if d.results and "=" in d.text else d.text
        return any(variant(x, lp, d.line, seen) for x in _SSA.findall(body.split(":", 1)[0]))

    out: list[Ref] = []
    for o in ops:
        if o.op != "tt.load" or o.loop is None:
            continue
        body = o.text.split("=", 1)[1] if o.results and "=" in o.text else o.text
        operands = _SSA.findall(body.split(":", 1)[0])
        if operands and not any(variant(x, o.loop, o.line, set()) for x in operands):
            out.append(Ref("ttir", o.line, o.text))
    return out
