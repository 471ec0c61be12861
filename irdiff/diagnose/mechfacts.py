"""Facts for the mechanism families: dot precision and MMA lowering, atomics, layout conversions, memory hints,
pipeline waits, and what the compiler printed (pure text in, dataclasses out; no Triton import).

Sources, per variant (all from the bundle's saved stages and logs):

* TTIR ``tt.dot`` (``inputPrecision = tf32|tf32x3|ieee`` — printed unless ieee —, ``maxNumImpreciseAcc``, operand
  and result types), ``tt.atomic_rmw``/``tt.atomic_cas`` (op, ``sem``, ``scope``, element type), ``tt.load``/
  ``tt.store`` cache attributes (3.9's ``cachePolicy``, 3.6's ``cacheModifier``/``evictionPolicy``) and
  ``isVolatile``, ``tt.assume`` and ``tt.divisibility``/``tt.contiguity`` hints (``tl.multiple_of``/
  ``tl.max_contiguous``), and ops making ``f64`` values (loads and address arithmetic on ``!tt.ptr<f64>`` left
  out: they read fp64 data, they do no fp64 arithmetic).
* TTGIR: what each dot became — ``tt.dot`` with a ``#ttg.blocked`` result is lowered to FMA instructions
  (``DotOpToLLVM/FMA.cpp``), ``tt.dot`` with an ``#ttg.nvidia_mma`` v2 result to ``mma.sync``, ``ttng.warp_group_dot``
  to ``wgmma`` (v3) and ``ttng.tc_gen5_mma`` to ``tcgen05.mma`` with the accumulator in tensor memory (v5,
  Blackwell); ``ttg.convert_layout`` ops with their source/destination layouts, producer and consumers; Blackwell
  MMA waits (``ttng.wait_barrier`` on the barrier a ``ttng.tc_gen5_mma`` in the same loop signals).
* PTX: the shared-memory instructions and barriers emitted at a layout conversion's source position (``.loc``),
  from which the bytes it stages through shared memory are computed; ``cp.async.wait_group N`` depths.
* ``compile`` log: warnings and remarks Triton, MLIR or ptxas printed while compiling (Python ``UserWarning`` lines,
  ``warning:``/``remark:`` diagnostics), the ptxas ``-v`` report and pass debug output left out.

Size: over 800 lines because each mechanism family's facts (dots, atomics, conversions, hints, copies, waits) are
read from the same parsed TTIR/TTGIR/PTX text in one pass (:func:`extract_mech_facts`); the families share the
op, type and location helpers, and splitting them would parse each stage once per family.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from irdiff.bundle import VariantResult
from irdiff.diagnose.counts import ptx_instructions
from irdiff.diagnose.facts import Ref, python_ref, strip_loc
from irdiff.diagnose.texts import stage_text

__all__ = [
    "AsyncWaitFact",
    "AtomicFact",
    "ConvertFact",
    "DotFact",
    "HintFact",
    "MechFacts",
    "MmaWaitFact",
    "extract_mech_facts",
]


@dataclass
class DotFact:
    """One matrix product as written (TTIR) and as lowered (final TTGIR).

    :ivar precision: ``tf32``, ``tf32x3``, ``ieee`` (TTIR prints nothing for ieee) or "" for non-fp32 operands.
    :ivar a_type/b_type/acc_type: element types (``f32``, ``f16``, ``f8E4M3FN``); ``shape``: ``[M, N, K]`` (batched
        3-D dots have ``rank`` 3 and ``shape`` of the last three dims).
    :ivar max_imprecise_acc: ``maxNumImpreciseAcc`` (fp8 dots accumulate in lower precision until this many products).
    :ivar lowering: ``fma``, ``mma_v2`` (``mma.sync``), ``wgmma`` (v3), ``tcgen05`` (v5, tensor memory), or "".
    :ivar instr_shape: the MMA layout's ``instrShape`` (``[16, 8]``, ``[16, 64, 16]``) or ``[]``.
    :ivar warps: ``ttg.num-warps`` of the module; ``operands``: where A and B come from in TTGIR (``shared`` for a
        ``!ttg.memdesc``, ``registers`` for a ``#ttg.dot_op`` tensor).
    :ivar upcast: operand element types converted (``tt.fp_to_fp``/``arith.extf``/``arith.sitofp``/``arith.uitofp``)
        right before the dot in TTGIR, as ``"f16 → f32"``; an integer read unsigned (``arith.uitofp``/``extui``) is
        named ``u8``, signed ``i8`` (MLIR prints both ``i8``).
    :ivar acc_chained: the accumulator is the dot's own operand (``tl.dot(a, b, acc)``); False when a separate
        ``arith.addf`` adds the product (``acc += tl.dot(a, b)``).
    """

    name: str
    precision: str
    a_type: str
    b_type: str
    acc_type: str
    shape: list[int]
    rank: int
    max_imprecise_acc: int | None
    lowering: str
    instr_shape: list[int]
    warps: int
    operands: list[str]
    upcast: list[str]
    acc_chained: bool
    ttir: Ref
    ttgir: Ref | None
    python: Ref | None


@dataclass
class AtomicFact:
    """One ``tt.atomic_rmw``/``tt.atomic_cas`` (TTIR), in program order.

    :ivar op: the rmw kind as TTIR prints it (``fadd``, ``add``, ``max``, ``umin``, ``exch`` for ``tl.atomic_xchg``
        …; a float ``tl.atomic_max``/``min`` is an int ``max``/``umin`` pair on bit casts) or ``cas``.
    :ivar sem/scope: ``relaxed``/``acquire``/``release``/``acq_rel``; ``cta``/``gpu``/``sys`` ("" if not printed).
    :ivar elem/shape: element type and tensor shape of the result (a scalar atomic: ``shape`` ``[]``).
    :ivar from_mma: the value written (an rmw's value operand, a CAS's new value) is, in the final TTGIR, a
        ``ttg.convert_layout`` from an MMA layout (or the ``#ttg.linear`` layout a Blackwell ``ttng.tmem_load``
        gives), possibly followed by ``arith.extf``/``truncf``/``tt.fp_to_fp`` casts. False without a TTGIR.
    :ivar users: the TTIR ops that read the atomic's result (the old value(s) it returns), in program order, each
        op kind once (``tt.store``, ``arith.addi``, ``scf.yield``); empty when the SSA result has no use. Triton lowers
        a ``tt.atomic_rmw`` to a reduction that returns nothing (PTX ``red``) only when its result has no use
        (``op.getResult().use_empty()`` in ``AtomicRMWOpConversion``,
        ``third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/LoadStoreOpToLLVM.cpp``).
    :ivar user/user_python: the first such op's TTIR line and the kernel source line it came from (None when unused,
        or when its location is not in the kernel's file).
    """

    op: str
    sem: str
    scope: str
    elem: str
    shape: list[int]
    from_mma: bool
    ref: Ref
    python: Ref | None
    users: list[str] = field(default_factory=list)
    user: Ref | None = None
    user_python: Ref | None = None


@dataclass
class CopyFact:
    """A ``ttg.async_copy_global_to_local`` (``cp.async``) in the final TTGIR whose source and destination are
    contiguous along different dimensions: the register layout's ``order[0]`` (the dimension each thread's global
    addresses run along, from the blocked layout) vs the shared layout's contiguous dimension (``nvmma_shared``: the
    last one, or the one before it with ``transposed = true``; ``swizzled_shared``: ``order[0]``). Elements a thread
    reads contiguously land at separate shared addresses, so each ``cp.async`` moves one element (4 B for fp32).

    :ivar name: the operand's Python name (SSA name hint), or ""; ``shape``/``elem``: the copied tile.
    :ivar src_dim/dst_dim: the contiguous dimension in global memory (registers) and in shared memory.
    :ivar shared: the destination layout as TTGIR writes it (``nvmma_shared<{… transposed = true …}>``).
    """

    name: str
    shape: list[int]
    elem: str
    src_dim: int
    dst_dim: int
    shared: str
    ref: Ref
    python: Ref | None


@dataclass
class ConvertFact:
    """A ``ttg.convert_layout`` in the final TTGIR.

    :ivar src/dst: layout kinds (``mma_v2``, ``wgmma``, ``blocked``, ``linear``, ``slice``, ``dot_op``, ``tmem`` …).
    :ivar producer: op defining the source (``tt.dot``, ``tt.reduce`` …); ``consumers``: ops using the result.
    :ivar shared_stores/shared_loads/barriers: PTX ``st.shared``/``ld.shared``/``bar.sync`` emitted at the op's
        source position (``.loc``), per thread; ``stored_bytes``: bytes each thread stores to shared memory there.
    :ivar scratch_bytes: shared memory the conversion stages per CTA, ``stored_bytes × threads / rounds`` (a round
        is a block of stores followed by loads); None when PTX shows no shared traffic at the op's position (a
        register/warp-shuffle conversion, or another op shares the position).
    """

    src: str
    dst: str
    shape: list[int]
    elem: str
    producer: str
    consumers: list[str]
    shared_stores: int
    shared_loads: int
    barriers: int
    stored_bytes: int
    scratch_bytes: int | None
    ref: Ref
    python: Ref | None


@dataclass
class HintFact:
    """A memory hint present in TTIR: ``kind`` is ``cache_modifier``, ``eviction_policy``, ``volatile``,
    ``multiple_of``, ``max_contiguous`` or ``assume``; ``value`` its value (``cg``, ``evict_first``, ``16``, or
    ``[1, 16]`` for a per-dimension ``tl.multiple_of``/``tl.max_contiguous`` on a tile; ``""`` for ``assume``);
    ``op`` the TTIR op carrying it (``tt.load``, ``arith.addi``, ``llvm.intr.assume``). The JIT's ``tt.divisibility``
    on ``tt.func`` arguments is specialization, not a hint."""

    kind: str
    value: str
    op: str
    ref: Ref
    python: Ref | None


@dataclass
class MmaWaitFact:
    """A Blackwell ``ttng.wait_barrier`` in the same innermost loop as a ``ttng.tc_gen5_mma``.

    :ivar immediate: the wait is on the barrier this iteration's MMA signals (its commit): the loop waits for each
        MMA before going on, nothing overlaps it (the Hopper analogue is ``warp_group_dot_wait {pendings = 0}``).
    :ivar ring: barriers in the array the loop's MMA commits to (``ttg.local_alloc … memdesc<2x1xi64>`` = 2 MMAs in
        flight), not the TMA loads' barrier array; the largest barrier array when the MMA's is not traced.
    """

    immediate: bool
    ring: int
    ref: Ref
    mma_ref: Ref


@dataclass
class AsyncWaitFact:
    """A ``ttg.async_wait {num = N}`` in an innermost loop.

    :ivar num: copy groups that may stay in flight after the wait.
    :ivar immediate: the wait names tokens committed earlier in the same iteration (``ttg.async_commit_group``
        above it in the loop body), not loop-carried ones: the copies issued in this iteration are waited for before
        it ends, so nothing issued after them overlaps their latency.
    """

    num: int
    immediate: bool
    ref: Ref


@dataclass
class MechFacts:
    """Mechanism facts of one variant (see the module docstring for where each comes from)."""

    dots: list[DotFact] = field(default_factory=list)
    atomics: list[AtomicFact] = field(default_factory=list)
    converts: list[ConvertFact] = field(default_factory=list)
    transposing_copies: list[CopyFact] = field(default_factory=list)
    hints: list[HintFact] = field(default_factory=list)
    mma_waits: list[MmaWaitFact] = field(default_factory=list)
    cp_async_waits: list[tuple[int, Ref]] = field(default_factory=list)
    async_waits: list[AsyncWaitFact] = field(default_factory=list)
    f64_ttir: int = 0  # TTIR ops making an f64 value (not loads, constants or arithmetic on fp64 pointers)
    f64_tensor: int = 0  # of f64_ttir, ops whose result is a tensor (per-element work, not one scalar per program)
    f64_first: Ref | None = None
    f64_python: Ref | None = None
    f64_args: list[str] = field(default_factory=list)
    warp_specialized: bool = False
    compiler_messages: list[Ref] = field(default_factory=list)


# --------------------------------------------------------------------------------------------- helpers

_LAYOUT_DEF = re.compile(r"^(#[\w]+) = #(ttg|ttng)\.([\w_]+)<(.*)>\s*$")


def _aliases(ttgir: str) -> dict[str, str]:
    """``#mma`` → layout kind (``mma_v2``, ``wgmma``, ``blocked``, ``linear``, ``shared``, ``tmem``)."""
    out: dict[str, str] = {}
    for raw in ttgir.splitlines():
        m = _LAYOUT_DEF.match(raw.strip())
        if not m:
            continue
        kind = m.group(3)
        if kind == "nvidia_mma":
            v = re.search(r"versionMajor = (\d+)", m.group(4))
            kind = {"2": "mma_v2", "3": "wgmma", "5": "tcgen05"}.get(v.group(1) if v else "", "mma")
        elif kind == "tensor_memory_encoding":
            kind = "tmem"
        out[m.group(1)] = kind
    return out


def _layout_kind(enc: str, aliases: dict[str, str]) -> str:
    enc = enc.strip()
    if enc.startswith("#ttg.dot_op"):
        return "dot_op"
    if enc.startswith("#ttg.slice"):
        return "slice"
    if enc.startswith("#ttg.linear"):
        return "linear"
    if enc.startswith("#ttg.blocked"):
        return "blocked"
    a = re.match(r"^(#[\w]+)", enc)
    return aliases.get(a.group(1), a.group(1).lstrip("#")) if a else ""


def _types(text: str) -> list[str]:
    """The ``tensor<…>`` / ``!ttg.memdesc<…>`` type strings of an op's type signature, balanced."""
    sig = text.split(" : ", 1)[1] if " : " in text else ""
    out: list[str] = []
    i = 0
    while i < len(sig):
        m = re.compile(r"(tensor|!ttg\.memdesc)<").search(sig, i)
        if not m:
            break
        depth, j = 0, m.end() - 1
        while j < len(sig):
            if sig[j] == "<":
                depth += 1
            elif sig[j] == ">":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        out.append(sig[m.start() : j + 1])
        i = j + 1
    return out


def _shape_elem(t: str) -> tuple[list[int], str, str]:
    """Shape, element type and encoding of a TTGIR tensor or memdesc type: ``tensor<64x64xf16, #mma>`` →
    ``([64, 64], "f16", "#mma")``; a tensor of pointers keeps its pointer type as the element
    (``tensor<256x!tt.ptr<i32>, #blocked>`` → ``([256], "!tt.ptr<i32>", "#blocked")``); ``([], "", "")`` for
    anything else."""
    m = re.match(r"(?:tensor|!ttg\.memdesc)<((?:\d+x)*)(!tt\.ptr<[^<>]*>|\w+)\s*(?:,\s*(.*))?>$", t)
    if not m:
        return [], "", ""
    return [int(x) for x in m.group(1).rstrip("x").split("x") if x], m.group(2), (m.group(3) or "")


def _stem(ssa: str) -> str:
    s = ssa.lstrip("%").split("#")[0]
    if not s or s[0].isdigit() or re.match(r"^(arg\d+|c(st)?[_\d].*|true|false)$", s):
        return ""
    return re.sub(r"_\d+$", "", s)


_OP = re.compile(r'^((?:%[\w.#:-]+(?:\s*,\s*%[\w.#:-]+)*)\s*=\s*)?"?([a-z_][\w]*\.[\w.]+)"?')


@dataclass
class _Line:
    no: int
    raw: str
    text: str
    op: str
    results: list[str]
    loop: int | None  # line of the innermost enclosing scf.for
    inner: bool  # that loop has no nested loop


def _lines(text: str) -> list[_Line]:
    """MLIR ops with their innermost enclosing ``scf.for`` (by line) and whether that loop is innermost. Parsed once
    per text (each mechanism extractor reads the same TTIR/TTGIR; the lines are never modified after parsing)."""
    return list(_parse_lines(text))


@lru_cache(maxsize=8)
def _parse_lines(text: str) -> tuple[_Line, ...]:
    out: list[_Line] = []
    stack: list[int | None] = []
    has_inner: dict[int, bool] = {}
    for no, raw in enumerate(text.splitlines(), 1):
        s = strip_loc(raw).strip()
        if not s or s.startswith(("#", "//")):
            continue
        if s.startswith("}"):
            if stack:
                stack.pop()
            if s.endswith("{"):
                stack.append(None)
            continue
        loop = next((x for x in reversed(stack) if x is not None), None)
        m = _OP.match(s)
        if m:
            res = [r.split(":")[0] for r in re.findall(r"%[\w.#-]+", m.group(1) or "")]
            out.append(_Line(no, raw, s, m.group(2), res, loop, False))
        if s.endswith("{"):
            if m and m.group(2) == "scf.for":
                if loop is not None:
                    has_inner[loop] = True
                stack.append(no)
            else:
                stack.append(None)
    for ln in out:
        ln.inner = ln.loop is not None and not has_inner.get(ln.loop, False)
    return tuple(out)


def _operands(ln: _Line) -> list[str]:
    """The SSA values an op line uses, in order: its results and quoted strings left out (inline asm text holds
    ``%r1`` registers, braces and `` : ``; op names, attributes and types hold no ``%``)."""
    body = ln.text.split("=", 1)[1] if ln.results else ln.text
    return re.findall(r"%[\w.#-]+", re.sub(r'"(?:[^"\\]|\\.)*"', "", body))


def _readers(lines: list[_Line]) -> dict[str, list[_Line]]:
    """SSA value → the op lines that read it, in program order, each line once (``%5#0`` is a read of ``%5``)."""
    out: dict[str, list[_Line]] = {}
    for ln in lines:
        for o in dict.fromkeys(o.split("#")[0] for o in _operands(ln)):
            out.setdefault(o, []).append(ln)
    return out


_LOC_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$")


def _loc_table(text: str) -> dict[str, str]:
    return dict(_parse_loc_table(text))


@lru_cache(maxsize=8)
def _parse_loc_table(text: str) -> tuple[tuple[str, str], ...]:
    table: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("#loc"):
            m = _LOC_DEF.match(line)
            if m:
                table[m.group(1)] = m.group(2)
    return tuple(table.items())


def clear_memos() -> None:
    """Forget the parsed op lines and location tables (benchmarks time a cold parse with it)."""
    _parse_lines.cache_clear()
    _parse_loc_table.cache_clear()


def _pos(raw: str, table: dict[str, str]) -> tuple[str, int, int] | None:
    """``(file, line, column)`` in the source of an MLIR op line ending in ``loc(#locN)`` (a called function's own
    file and position for an inlined call: the innermost location, as the PTX ``.loc`` has it)."""
    m = re.search(r"loc\((#loc\d*)\)\s*$", raw.rstrip())
    body = table.get(m.group(1), "") if m else ""
    for _ in range(40):
        body = body.strip()
        pm = re.match(r'^"([^"]*)":(\d+):(\d+)', body)
        if pm:
            return pm.group(1), int(pm.group(2)), int(pm.group(3))
        nm = re.match(r"^callsite\((#loc\d*)\s+at|^\"[^\"]*\"\((#loc\d*)\)|^fused\[(#loc\d*)|^(#loc\d*)$", body)
        if not nm:
            return None
        body = table.get(next(g for g in nm.groups() if g), "")
    return None


def _region_ends(text: str) -> dict[int, str]:
    """Line of an op with a region (``%r = "tt.reduce"(%x) <{axis = 1 : i32}> ({``) → its closing line
    (``}) : (tensor<…>) -> tensor<…> loc(#locN)``): MLIR prints such an op's location after the region, not on the
    line that names the op."""
    out: dict[int, str] = {}
    stack: list[int | None] = []
    for no, raw in enumerate(text.splitlines(), 1):
        s = strip_loc(raw).strip()
        if s.startswith("}"):
            opened = stack.pop() if stack else None
            if opened is not None and s.startswith("})"):
                out[opened] = raw
            if s.endswith("{"):  # ``} else {``
                stack.append(None)
        elif s.endswith("{"):
            stack.append(no if s.endswith("({") else None)
    return out


def _ptx_files(ptx: str) -> dict[str, str]:
    """PTX ``.file N "path"`` (or ``.file N "dir" "name"``) directives: file index → path."""
    out: dict[str, str] = {}
    for m in re.finditer(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s+"([^"]*)")?', ptx, re.M):
        out[m.group(1)] = f"{m.group(2).rstrip('/')}/{m.group(3)}" if m.group(3) else m.group(2)
    return out


def _ptx_shared_at(ptx: str, file: str | None = None) -> dict[tuple[int, int], list[tuple[str, int]]]:
    """Per source position (PTX ``.loc`` line, column) in ``file``: the shared-memory instructions and barriers
    emitted there, in order, as ``(kind, bytes)`` with kind ``st``/``ld``/``bar``. A ``.loc`` of another file (its
    ``.file`` directive names another path: an inlined helper's own file, whose line and column may be the same
    numbers) is left out; with ``file`` None, or a file index no ``.file`` names, every ``.loc`` counts."""
    out: dict[tuple[int, int], list[tuple[str, int]]] = {}
    files = _ptx_files(ptx)
    locs: dict[int, tuple[int, int]] = {}
    cur: tuple[int, int] | None = None
    for no, raw in enumerate(ptx.splitlines(), 1):
        m = re.match(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)", raw)
        if m:
            mine = file is None or m.group(1) not in files or files[m.group(1)] == file
            cur = (int(m.group(2)), int(m.group(3))) if mine else None
        elif cur is not None:
            locs[no] = cur
    for no, op, _full in ptx_instructions(ptx):
        at = locs.get(no)
        if at is None:
            continue
        parts = op.split(".")
        if parts[0] in ("st", "ld") and len(parts) > 1 and parts[1].startswith("shared"):
            vec = next((int(p[1:]) for p in parts if re.match(r"^v\d+$", p)), 1)
            bits = next((int(re.sub(r"\D", "", p)) for p in reversed(parts) if re.match(r"^[bfsu]\d+$", p)), 32)
            out.setdefault(at, []).append((parts[0], vec * bits // 8))
        elif parts[0] in ("ldmatrix", "stmatrix"):
            n = next((int(p[1:]) for p in parts if re.match(r"^x\d$", p)), 1)
            out.setdefault(at, []).append(("ld" if parts[0] == "ldmatrix" else "st", 4 * n))
        elif parts[0] in ("bar", "barrier") and len(parts) > 1 and parts[1] in ("sync", "cta"):
            out.setdefault(at, []).append(("bar", 0))
    return out


_MESSAGE = re.compile(r"(?:\bwarning\b|\bremark\b|Warning:|\bdeprecated\b)", re.IGNORECASE)


def compiler_messages(log: str) -> list[Ref]:
    """Warnings/remarks in the compile log, without the ptxas ``-v`` report, pass debug lines and the source line
    Python prints under a warning (``  warnings.warn(``)."""
    out: list[Ref] = []
    for no, raw in enumerate(log.splitlines(), 1):
        s = raw.strip()
        if not s or s.startswith(("[", "ptxas info", "warnings.warn")) or not _MESSAGE.search(s):
            continue
        if "TRITON_DEFAULT_FP_FUSION" in s:  # 3.9's notice about an unset env var, printed for every compile
            continue
        out.append(Ref("compile", no, s[:400]))
    return out


# --------------------------------------------------------------------------------------------- extraction


# Conversions an operand may pass right before a dot. MLIR integers are signless (``i8`` for int8 and uint8 alike):
# the op says how the bits are read, ``arith.uitofp``/``arith.extui`` unsigned, ``arith.sitofp``/``arith.extsi``
# signed (Triton's ``semantic.cast``: ``uitofp`` for an unsigned source, ``sitofp`` for a signed one).
_UPCASTS = ("tt.fp_to_fp", "arith.extf", "arith.sitofp", "arith.uitofp", "arith.extsi", "arith.extui")
_UNSIGNED = ("arith.uitofp", "arith.extui")


def _upcast_from(op: str, elem: str) -> str:
    """The source type of an upcast as the program has it: ``u8`` for the ``i8`` an ``arith.uitofp`` reads unsigned,
    else the element type as printed (``i8``, ``f16``, ``f8E5M2``)."""
    return "u" + elem[1:] if op in _UNSIGNED and re.fullmatch(r"i\d+", elem) else elem


def _dots(ttir: str, ttgir: str, src: str, python: str) -> list[DotFact]:
    t_lines = [ln for ln in _lines(ttir) if ln.op == "tt.dot"]
    g_all = _lines(ttgir)
    g_lines = [ln for ln in g_all if ln.op in ("tt.dot", "ttng.warp_group_dot", "ttng.tc_gen5_mma")]
    aliases = _aliases(ttgir)
    instr: dict[str, list[int]] = {}
    for raw in ttgir.splitlines():
        m = re.match(r"^(#\w+) = #ttg\.nvidia_mma<\{.*instrShape = \[([^\]]*)\]", raw)
        if m:
            instr[m.group(1)] = [int(x) for x in re.findall(r"\d+", m.group(2))]
    wm = re.search(r'"ttg\.num-warps" = (\d+)', ttgir)
    warps = int(wm.group(1)) if wm else 0
    defs = {r: ln for ln in g_all for r in ln.results}
    t_all = _lines(ttir)
    uses = _readers(t_all)
    t_table = _loc_table(ttir)
    out: list[DotFact] = []
    for i, ln in enumerate(t_lines):
        types = _types(ln.text)
        a = _shape_elem(types[0]) if types else ([], "", "")
        b = _shape_elem(types[1]) if len(types) > 1 else ([], "", "")
        c = _shape_elem(types[2]) if len(types) > 2 else ([], "", "")
        pm = re.search(r"inputPrecision = (\w+)", ln.text)
        fp32 = a[1] == "f32" and b[1] == "f32"
        precision = pm.group(1) if pm else ("ieee" if fp32 else "")
        mi = re.search(r"maxNumImpreciseAcc = (\d+)", ln.text)
        adds = uses.get(ln.results[0], []) if ln.results else []
        chained = not any(u.op == "arith.addf" for u in adds)
        g = g_lines[i] if i < len(g_lines) else None
        lowering, ishape, operands, upcast = "", [], [], []
        gref = None
        if g is not None:
            gref = Ref("ttgir", g.no, g.text)
            gtypes = _types(g.text)
            if g.op == "ttng.tc_gen5_mma":
                lowering = "tcgen05"
            elif g.op == "ttng.warp_group_dot":
                lowering = "wgmma"
            else:
                res = _shape_elem(gtypes[-1])[2] if gtypes else ""
                kind = _layout_kind(res, aliases)
                lowering = "fma" if kind == "blocked" else kind if kind in ("mma_v2", "wgmma") else kind
                alias = re.match(r"^(#\w+)", res.strip())
                ishape = instr.get(alias.group(1), []) if alias else []
            if not ishape:
                for t in gtypes:
                    al = re.search(r"(#mma\w*)", t)
                    if al and al.group(1) in instr:
                        ishape = instr[al.group(1)]
                        break
            operands = ["shared" if t.startswith("!ttg.memdesc") else "registers" for t in gtypes[:2]]
            for o in _operands(g)[:2]:
                d = defs.get(o.split("#")[0])
                hops = 0
                while (
                    d is not None and hops < 4 and d.op in ("ttg.local_load", "ttg.local_alloc", "ttg.convert_layout")
                ):
                    nxt = _operands(d)
                    d = defs.get(nxt[0].split("#")[0]) if nxt else None
                    hops += 1
                if d is not None and d.op in _UPCASTS:
                    dt = _types(d.text)
                    conv = _upcast_from(d.op, _shape_elem(dt[0])[1]) + " → " + _shape_elem(dt[-1])[1] if dt else ""
                    if conv and conv not in upcast:
                        upcast.append(conv)
        rank = len(c[0]) if c[0] else len(a[0])
        shape = [a[0][-2], b[0][-1], a[0][-1]] if len(a[0]) >= 2 and len(b[0]) >= 2 else []
        name = _stem(ln.results[0]) if ln.results else ""
        out.append(
            DotFact(
                name=name,
                precision=precision if fp32 else "",
                a_type=a[1],
                b_type=b[1],
                acc_type=c[1],
                shape=shape,
                rank=rank,
                # Triton writes the default (never promote) as 2**30
                max_imprecise_acc=int(mi.group(1)) if mi and int(mi.group(1)) < 1 << 30 else None,
                lowering=lowering,
                instr_shape=ishape,
                warps=warps,
                operands=operands,
                upcast=upcast,
                acc_chained=chained,
                ttir=Ref("ttir", ln.no, ln.text),
                ttgir=gref,
                python=python_ref(ln.raw, t_table, src, python),
            )
        )
    return out


# Layouts a converted atomic value counts as coming from an MMA from: the MMA layouts and the ``#ttg.linear`` layout
# ``ttng.tmem_load`` reads a Blackwell accumulator into; casts the walk back to that conversion passes (Triton's
# RemoveLayoutConversions hoists a conversion above a widening cast, ``hoistConvertOnTopOfExtOrBroadcast``).
_MMA_SOURCES = ("mma_v2", "wgmma", "tcgen05", "linear")
_CASTS = ("arith.truncf", "tt.fp_to_fp", "arith.extf")


def _atomics(ttir: str, ttgir: str, src: str, python: str) -> list[AtomicFact]:
    g_all = _lines(ttgir)
    defs = {r: ln for ln in g_all for r in ln.results}
    aliases = _aliases(ttgir)
    g_atoms = [ln for ln in g_all if ln.op in ("tt.atomic_rmw", "tt.atomic_cas")]
    table = _loc_table(ttir)
    t_all = _lines(ttir)
    readers = _readers(t_all)
    out: list[AtomicFact] = []
    for i, ln in enumerate(x for x in t_all if x.op in ("tt.atomic_rmw", "tt.atomic_cas")):
        head = ln.text.split(ln.op, 1)[1].strip()
        words = [w.strip() for w in head.split(",")]  # never empty: str.split gives at least one item
        if ln.op == "tt.atomic_cas":
            op, sem, scope = "cas", words[0], words[1] if len(words) > 1 else ""
        else:
            op = words[0]
            sem = words[1] if len(words) > 1 else ""
            scope = words[2] if len(words) > 2 else ""
        rm = re.search(r"->\s*(.+?)\s*$", ln.text)  # the result: the old value(s), typed as the memory
        ret = rm.group(1) if rm else ""
        shape: list[int] = []
        elem = ret
        if ret.startswith("tensor<"):
            shape, elem, _ = _shape_elem(ret)
        from_mma = False
        if i < len(g_atoms):
            g = g_atoms[i]
            # the value written: ``tt.atomic_rmw %ptr, %val, %mask``, ``tt.atomic_cas %ptr, %cmp, %val``
            ops = _operands(g)[1:] if g.op == "tt.atomic_rmw" else _operands(g)[2:]
            d = defs.get(ops[0]) if ops else None
            seen: set[int] = set()  # untrusted text may define a value through itself
            while d is not None and d.no not in seen:
                seen.add(d.no)
                if d.op == "ttg.convert_layout":
                    t = _types(d.text)
                    from_mma = bool(t) and _layout_kind(_shape_elem(t[0])[2], aliases) in _MMA_SOURCES
                    break
                if d.op not in _CASTS:
                    break
                nxt = _operands(d)
                d = defs.get(nxt[0]) if nxt else None
        uses = [u for r in ln.results for u in readers.get(r, [])]
        first = uses[0] if uses else None
        out.append(
            AtomicFact(
                op,
                sem,
                scope,
                elem,
                shape,
                from_mma,
                Ref("ttir", ln.no, ln.text),
                python_ref(ln.raw, table, src, python),
                users=list(dict.fromkeys(u.op for u in uses)),
                user=Ref("ttir", first.no, first.text) if first else None,
                user_python=python_ref(first.raw, table, src, python) if first else None,
            )
        )
    return out


_COPY_TYPES = re.compile(r":\s*tensor<([\dx]+)x!tt\.ptr<(\w+)>,\s*(#\w+)>\s*->\s*<[^,>]+,\s*(#\w+)")


def _contiguous_dims(ttgir: str) -> dict[str, tuple[int, str]]:
    """Layout alias → (its contiguous dimension, its definition) for 2-D blocked and shared layouts whose contiguous
    dimension the definition states (see :class:`CopyFact`)."""
    out: dict[str, tuple[int, str]] = {}
    for raw in ttgir.splitlines():
        m = _LAYOUT_DEF.match(raw.strip())
        if not m:
            continue
        kind, body = m.group(3), m.group(4)
        order = re.search(r"\border = \[(\d+)", body)
        if kind in ("blocked", "swizzled_shared") and order:
            out[m.group(1)] = (int(order.group(1)), f"{kind}<{body}>")
        elif kind == "nvmma_shared" and "rank" not in body:
            out[m.group(1)] = (0 if "transposed = true" in body else 1, f"{kind}<{body}>")
    return out


def _transposing_copies(ttgir: str, src: str, python: str) -> list[CopyFact]:
    """The ``cp.async`` copies of 2-D tiles whose global and shared contiguous dimensions differ (one per op in
    the TTGIR text: the pipeliner's prologue copies and the loop's copy of one load each count)."""
    dims = _contiguous_dims(ttgir)
    table = _loc_table(ttgir)
    out: list[CopyFact] = []
    for ln in _lines(ttgir):
        if ln.op != "ttg.async_copy_global_to_local":
            continue
        m = _COPY_TYPES.search(ln.text)
        if not m or m.group(3) not in dims or m.group(4) not in dims:
            continue
        shape = [int(x) for x in m.group(1).split("x")]
        (sd, _), (dd, shared) = dims[m.group(3)], dims[m.group(4)]
        if len(shape) != 2 or sd == dd:
            continue
        name = _stem(ln.results[0]) if ln.results else ""
        ref = Ref("ttgir", ln.no, ln.text)
        out.append(CopyFact(name, shape, m.group(2), sd, dd, shared, ref, python_ref(ln.raw, table, src, python)))
    return out


def _converts(ttgir: str, ptx: str, src: str, python: str) -> list[ConvertFact]:
    g_all = _lines(ttgir)
    defs = {r: ln for ln in g_all for r in ln.results}
    uses = _readers(g_all)
    aliases = _aliases(ttgir)
    table = _loc_table(ttgir)
    shared: dict[str, dict[tuple[int, int], list[tuple[str, int]]]] = {}  # per source file, read on first use
    wm = re.search(r'"ttg\.num-warps" = (\d+)', ttgir)
    threads = 32 * (int(wm.group(1)) if wm else 4)
    # Ops that may use shared memory; PTX traffic at a source position is attributed to a conversion only when it is
    # the only such op there (`tl.max(tl.dot(..))` puts a reduction and a conversion on one line).
    smem_ops = ("ttg.convert_layout", "tt.reduce", "tt.scan", "tt.histogram", "tt.gather", "ttg.local_alloc",
                "ttg.local_load", "ttg.local_store", "tt.atomic_rmw", "tt.atomic_cas")  # fmt: skip
    users: dict[tuple[str, int, int], list[str]] = {}
    ends = _region_ends(ttgir)  # a reduction's or scan's location is on its region's closing line
    for ln in g_all:
        if ln.op in smem_ops:
            p = _pos(ln.raw, table)
            if p is None and ln.no in ends:
                p = _pos(ends[ln.no], table)
            if p is not None:
                users.setdefault(p, []).append(ln.op)
    out: list[ConvertFact] = []
    for ln in g_all:
        if ln.op != "ttg.convert_layout":
            continue
        types = _types(ln.text)
        if len(types) < 2:
            continue
        sshape, elem, senc = _shape_elem(types[0])
        _, _, denc = _shape_elem(types[-1])
        ops = _operands(ln)
        d = defs.get(ops[0].split("#")[0]) if ops else None
        consumers = sorted({u.op for r in ln.results for u in uses.get(r, [])})
        pos = _pos(ln.raw, table)
        others = [o for o in users.get(pos, []) if o not in ("tt.atomic_rmw", "tt.atomic_cas")] if pos else []
        # a tensor atomic does not use shared memory; a second conversion, a reduction or a shared buffer might
        if pos and pos[0] not in shared:
            shared[pos[0]] = _ptx_shared_at(ptx, pos[0])
        seq = shared[pos[0]].get(pos[1:], []) if pos and len(others) <= 1 else []
        st = [b for k, b in seq if k == "st"]
        ld = [b for k, b in seq if k == "ld"]
        bars = sum(1 for k, _ in seq if k == "bar")
        rounds = 0
        prev = ""
        for k, _ in seq:
            if k == "st" and prev != "st":
                rounds += 1
            if k in ("st", "ld"):
                prev = k
        scratch = (sum(st) * threads // max(rounds, 1)) if st and ld else None
        out.append(
            ConvertFact(
                src=_layout_kind(senc, aliases),
                dst=_layout_kind(denc, aliases),
                shape=sshape,
                elem=elem,
                producer=d.op if d else "",
                consumers=consumers,
                shared_stores=len(st),
                shared_loads=len(ld),
                barriers=bars,
                stored_bytes=sum(st),
                scratch_bytes=scratch,
                ref=Ref("ttgir", ln.no, ln.text),
                python=python_ref(ln.raw, table, src, python),
            )
        )
    return out


def _hints(ttir: str, src: str, python: str) -> list[HintFact]:
    table = _loc_table(ttir)
    out: list[HintFact] = []
    for ln in _lines(ttir):
        ref = Ref("ttir", ln.no, ln.text)
        py = None
        if ln.op in ("tt.load", "tt.store"):
            # Triton 3.9 prints ``cachePolicy = #tt.cache_policy<cache_modifier = cs, eviction_policy = evict_first>``,
            # 3.6 ``cacheModifier = cs`` and ``evictionPolicy = evict_first``, older releases ``cache = …, evict = …``
            cm = re.search(r"\b(?:cache_modifier|cacheModifier|cache) = (\w+)", ln.text)
            ev = re.search(r"\b(?:eviction_policy|evictionPolicy|evict) = (\w+)", ln.text)
            found = []
            if cm and cm.group(1) != "none":
                found.append(("cache_modifier", cm.group(1)))
            if ev and ev.group(1) != "evict_normal":
                found.append(("eviction_policy", ev.group(1)))
            if re.search(r"isVolatile = true", ln.text):
                found.append(("volatile", "true"))
            for k, v in found:
                py = py or python_ref(ln.raw, table, src, python)
                out.append(HintFact(k, v, ln.op, ref, py))
        if ln.op in ("tt.assume", "llvm.intr.assume"):
            out.append(HintFact("assume", "", ln.op, ref, python_ref(ln.raw, table, src, python)))
        else:  # also on a load: ``tl.multiple_of(tl.load(p), 16)`` puts the attribute on the ``tt.load``
            # one value (``dense<16>``) or one per dimension of a tile (``tl.multiple_of(x, [1, 16])``: ``dense<[1, 16]>``)
            for attr, kind in (("tt.divisibility", "multiple_of"), ("tt.contiguity", "max_contiguous")):
                m = re.search(re.escape(attr) + r" = dense<(\d+|\[[\d, ]+\])>", ln.text)
                if m and not ln.op.startswith("tt.func"):
                    out.append(HintFact(kind, m.group(1), ln.op, ref, python_ref(ln.raw, table, src, python)))
    return out


def _barrier_ring(bar: str, defs: dict[str, _Line]) -> int | None:
    """Barriers in the array the MMA barrier ``bar`` is taken from: ``bar`` is followed back through
    ``ttg.memdesc_index``/``memdesc_subview`` to its ``ttg.local_alloc`` (``!ttg.memdesc<2x1xi64>`` → 2, a single
    ``!ttg.memdesc<1xi64>`` → 1). The TMA loads of a pipelined loop have their own, often larger, barrier array
    (one per stage): only the MMA's own array says how many MMAs may be in flight. None when ``bar`` is not defined
    by such a chain (a block argument)."""
    d = defs.get(bar)
    seen: set[int] = set()
    while d is not None and d.no not in seen and d.op in ("ttg.memdesc_index", "ttg.memdesc_subview"):
        seen.add(d.no)
        ops = _operands(d)
        d = defs.get(ops[0]) if ops else None
    if d is None or d.op != "ttg.local_alloc":
        return None
    m = re.search(r"memdesc<(?:(\d+)x)?1xi64", d.text)
    return int(m.group(1) or 1) if m else None


def _mma_waits(ttgir: str) -> list[MmaWaitFact]:
    g_all = _lines(ttgir)
    defs = {r: ln for ln in g_all for r in ln.results}
    out: list[MmaWaitFact] = []
    rings = {r: ln for ln in g_all if ln.op == "ttg.local_alloc" for r in ln.results if "xi64" in ln.text}
    for mma in (ln for ln in g_all if ln.op == "ttng.tc_gen5_mma" and ln.inner):
        bm = re.search(r"(%[\w.#-]+)\[[^\]]*\]\s*(?:\{|:)", mma.text)
        # whole SSA names: ``%bars#1`` (result 1 of a multi-result op) is not ``%bars#0``
        bar = bm.group(1) if bm else ""
        waits = [ln for ln in g_all if ln.op == "ttng.wait_barrier" and ln.loop == mma.loop]
        own = _barrier_ring(bar, defs)
        for w in waits:
            ops = _operands(w)
            wb = ops[0] if ops else ""
            ring = 1
            if own is not None:
                ring = own
            else:  # the MMA's barrier is not traced to its allocation (a loop-carried value): the largest array
                for r in rings.values():
                    m = re.search(r"memdesc<(\d+)x1xi64", r.text)
                    if m:
                        ring = max(ring, int(m.group(1)))
            out.append(
                MmaWaitFact(bool(bar) and wb == bar, ring, Ref("ttgir", w.no, w.text), Ref("ttgir", mma.no, mma.text))
            )
    return out


def _async_waits(ttgir: str) -> list[AsyncWaitFact]:
    g_all = _lines(ttgir)
    defs = {r: ln for ln in g_all for r in ln.results}
    out: list[AsyncWaitFact] = []
    for w in g_all:
        if w.op != "ttg.async_wait" or not w.inner:
            continue
        m = re.search(r"num = (\d+)", w.text)
        toks = [defs.get(o.split("#")[0]) for o in _operands(w)]
        immediate = any(d is not None and d.loop == w.loop and d.no < w.no for d in toks)
        out.append(AsyncWaitFact(int(m.group(1)) if m else -1, immediate, Ref("ttgir", w.no, w.text)))
    return out


# Loads: an ``f64`` result read from memory is fp64 data, not fp64 arithmetic (what computes on it is counted). A
# splat or broadcast of an f64 value still counts: it makes the f64 tensor the arithmetic then runs on.
_F64_MOVES = frozenset({"tt.load", "tt.descriptor_load", "tt.descriptor_gather"})


def extract_mech_facts(v: VariantResult) -> MechFacts:
    """Mechanism facts of one saved variant (missing stages give empty facts, never errors)."""
    ttir, ttgir, ptx = stage_text(v, "ttir"), stage_text(v, "ttgir"), stage_text(v, "ptx")
    src = str(v.metadata.get("source_path", ""))
    python = stage_text(v, "python")
    f = MechFacts()
    f.dots = _dots(ttir, ttgir, src, python)
    f.atomics = _atomics(ttir, ttgir, src, python)
    f.converts = _converts(ttgir, ptx, src, python)
    f.transposing_copies = _transposing_copies(ttgir, src, python)
    f.hints = _hints(ttir, src, python)
    f.mma_waits = _mma_waits(ttgir)
    f.async_waits = _async_waits(ttgir)
    for no, op, full in ptx_instructions(ptx):
        if op.startswith("cp.async.wait_group"):
            m = re.search(r"wait_group\s+(\d+)", full)
            f.cp_async_waits.append((int(m.group(1)) if m else 0, Ref("ptx", no, full)))
    table = _loc_table(ttir)
    for ln in _lines(ttir):
        if ln.op.startswith(("tt.func", "scf.", "tt.return")) or not ln.results or ln.op == "arith.constant":
            continue
        if ln.op in _F64_MOVES:
            continue
        # the result type, pointers left out: ``tt.addptr`` on ``!tt.ptr<f64>`` computes an address, not in fp64
        rtype = re.sub(r"!tt\.ptr<[^<>]*>", "ptr", ln.text.rsplit(":", 1)[-1])
        if re.search(r"(?:\b|\dx)f64\b", rtype):  # ``f64`` or ``tensor<256xf64>``
            f.f64_ttir += 1
            if re.search(r"\dxf64\b", rtype):
                f.f64_tensor += 1
            if f.f64_first is None:
                f.f64_first = Ref("ttir", ln.no, ln.text)
                f.f64_python = python_ref(ln.raw, table, src, python)
    f.f64_args = [a.name for a in v.specialization if a.type in ("fp64", "f64")]
    f.warp_specialized = "ttg.warp_specialize" in ttgir
    f.compiler_messages = compiler_messages(stage_text(v, "compile"))
    return f


def mma_instructions(counts: dict[str, dict[str, int]]) -> dict[str, int]:
    """Matrix/FMA instruction counts per lowering from PTX counts: ``fma`` (``fma.f32``), ``mma.sync``, ``wgmma``,
    ``tcgen05.mma``."""
    p = counts.get("ptx", {})
    return {
        "fma.f32": p.get("fma.f32", 0) + 2 * p.get("fma.f32x2", 0),
        "mma.sync": p.get("mma.sync", 0),
        "wgmma": p.get("wgmma", 0),
        "tcgen05.mma": p.get("tcgen05.mma", 0),
    }
