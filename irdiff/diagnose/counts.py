"""Operation counts per stage: pure text in, ``{key: count}`` out (no Triton import).

The keys name what a kernel author looks for when two variants differ: memory operations by kind and width, async
copies, matrix instructions, barriers, 64-bit integer division. They are used by the one-screen terminal summary
(:data:`KEY_COUNTS` picks and orders the keys shown per stage) and by the diagnostic facts (:mod:`irdiff.diagnose.facts`).

Formats read (checked on Triton 3.6 and 3.9 output):

* TTIR/TTGIR (MLIR assembly): one op per line, ``%x = dialect.op ...`` or ``dialect.op ...``; the key is the op name
  (``tt.load``, ``ttg.async_copy_global_to_local``, ``ttng.warp_group_dot``, ``scf.for``).
* LLIR: the instruction opcode (``load``, ``store``, ``call``, ``sdiv``), arithmetic opcodes also with their integer
  type (``sdiv i64``), inline-asm PTX calls by mnemonic (``asm cp.async``).
* PTX: the instruction with cache/scope qualifiers dropped: ``ld.global.b16``, ``ld.global.v4.b32``,
  ``st.global.v4.b32``, ``st.shared.b16``, ``cp.async 16B`` (size from the copy's size operand), ``cp.async.bulk.tensor``,
  ``mma.sync``, ``wgmma``, ``ldmatrix``, ``bar.sync``, ``fma.f32``, ``div.s64``/``rem.s64``; ``f64 ops`` counts
  every instruction typed ``.f64``; ``instructions`` counts all instructions. Also: MMA operand types
  (``mma.sync.tf32``, ``wgmma.f16``), Blackwell ``tcgen05.mma``/``tcgen05.commit``/``tcgen05.wait`` (and
  ``tcgen05.mma.f16`` by kind); atomics by op, width and type (``atom.add.f32``, ``red.add.v4.f32``,
  ``atom.cas.b32``), families ``atom``/``red``/``atom.cas`` and orderings (``atom.acq_rel``, ``red.relaxed``);
  ``fence``/``fence.acq_rel``/``membar``; fp32 division with its rounding (``div.full.f32`` vs ``div.rn.f32``);
  approximate vs rounded math (``ex2.approx.f32``, ``sqrt.rn.f32``); precision conversions (``cvt.tf32.f32``,
  ``cvt.f64.f32``, fp8 ``cvt.e4m3x2.f32``); cache qualifiers the memory key drops (``hint .cg``, ``hint L1::evict_first``,
  ``hint L2::cache_hint``, ``hint volatile``) and ``createpolicy``.
* SASS (``cuobjdump -sass`` as rewritten by Triton: ``control<TAB>OPCODE operands;``): the opcode with cache-policy
  modifiers dropped (``LDG.E.128``, ``LDG.E.U16``, ``STG.E.128``, ``LDGSTS.E.128``), family keys ``LDGSTS``, ``HMMA``,
  ``HGMMA``, ``UTCHMMA``, ``BAR``, ``CALL``, ``UTMALDG``, and ``instructions``; ``HMMA.TF32``; atomics ``ATOMG``/
  ``RED``/``ATOMS`` (``ATOMG.ADD.F32``, ``ATOMG.CAS``); fences ``MEMBAR`` (``MEMBAR.GPU``), ``ERRBAR``, ``CCTL`` (L1
  invalidation); ``FFMA``, ``DFMA``/``DMUL``/``DADD`` (also ``f64 ops``), ``F2F.F64``, ``MUFU.EX2``; eviction
  modifiers (``LDG hint .EF``). An instruction guarded by the never-true predicate (``@!PT LDS RZ, [RZ]``: padding
  ptxas inserts) is not counted.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from irdiff.normalize import dialect_of

__all__ = ["KEY_COUNTS", "SASS_FAMILIES", "count_ops", "ptx_instructions", "sass_instructions"]

# SASS family keys (see :func:`sass_key`): each counts every instruction of its family, and some of those
# instructions are counted again under a member key that starts with the family and a dot (``LDGSTS`` is the sum of
# ``LDGSTS.E.128``, ``LDGSTS.E`` …; ``HMMA`` includes ``HMMA.TF32`` and ``HMMA.BF16``). A list that shows counts must
# not show a family beside its members (the same instructions twice). ``LDS``/``LDG`` are not families: the bare key
# is the 32-bit access itself.
SASS_FAMILIES: frozenset[str] = frozenset({"LDGSTS", "HMMA", "HGMMA", "UTCHMMA", "BAR", "CALL", "UTMALDG"})

# Per stage, the count keys the one-screen summary shows, in order (keys missing from a count are 0).
KEY_COUNTS: dict[str, list[str]] = {
    "ttir": ["tt.load", "tt.store", "tt.dot", "tt.atomic_rmw", "scf.for", "arith.extsi", "arith.divsi", "arith.remsi"],
    "ttgir": [
        "tt.load",
        "tt.store",
        "ttg.async_copy_global_to_local",
        "ttg.async_wait",
        "ttg.local_alloc",
        "ttng.async_tma_copy_global_to_local",
        "tt.dot",
        "ttng.warp_group_dot",
        "ttng.warp_group_dot_wait",
        "ttng.tc_gen5_mma",
        "ttng.wait_barrier",
        "scf.for",
    ],
    "llir": ["load", "store", "call", "asm cp.async", "sdiv i64", "srem i64"],
    "ptx": [
        "ld.global.b16",
        "ld.global.b32",
        "ld.global.v2.b32",
        "ld.global.v4.b32",
        "st.global.b16",
        "st.global.v4.b32",
        "cp.async 16B",
        "cp.async 8B",
        "cp.async 4B",
        "cp.async.bulk.tensor",
        "ldmatrix",
        "mma.sync",
        "wgmma",
        "bar.sync",
        "div.s64",
        "rem.s64",
        "tcgen05.mma",
        "atom",
        "red",
        "atom.cas",
        "fence",
        "f64 ops",
        "instructions",
    ],
    "sass": [
        "LDG.E.U16",
        "LDG.E.128",
        "STG.E.U16",
        "STG.E.128",
        "LDGSTS",
        "UTMALDG",
        "HMMA",
        "HGMMA",
        "UTCHMMA",
        "BAR",
        "CALL",
        "ATOMG",
        "RED",
        "MEMBAR",
        "f64 ops",
        "instructions",
    ],
}

_MLIR_OP = re.compile(r'^(?:%[\w#:.,\s%-]+=\s*)?"?([a-z_][a-z0-9_]*\.[a-z_][a-z0-9_.]*)"?')
_LLIR_INSTR = re.compile(r"^\s+(?:%[\w.]+\s*=\s*)?(?:tail\s+|musttail\s+|notail\s+)?([a-z][a-z0-9_]*)\b(.*)$")
_LLIR_INT_TYPE = re.compile(r"\s*(?:nuw\s+|nsw\s+|exact\s+)*(<\d+ x )?(i\d+)")
_LLIR_INT_OPS = {"sdiv", "udiv", "srem", "urem", "mul", "add", "sub", "shl", "lshr", "ashr"}
_LLIR_ASM = re.compile(r'asm\s+(?:sideeffect\s+)?(?:alignstack\s+)?(?:inteldialect\s+)?"\s*(?:@\$\d+\s+)?([a-z][\w.]*)')
_PTX_PRED = re.compile(r"^@!?%\w+\s+")
_SASS_PRED = re.compile(r"^@!?U?P\w+\s+")

# PTX qualifiers that do not change what a memory op moves (dropped from the key).
_PTX_DROP = re.compile(
    r"^(?:nc|ca|cg|cs|lu|cv|wb|wt|weak|relaxed|acquire|release|volatile|gpu|cta|sys|cluster|aligned|sync|"
    r"L1::\S+|L2::\S+|level::\S+)$"
)
_PTX_TYPES = re.compile(r"^(?:(?:b|u|s|f|bf)\d+|e4m3|e5m2)(?:x\d+)?$|^pred$")  # fp8: e4m3, e4m3x2
_SASS_KEEP = re.compile(r"^(?:E|U8|S8|U16|S16|64|128)$")
_SASS_ATOM_OPS = ("ADD", "INC", "DEC", "MIN", "MAX", "AND", "OR", "XOR", "EXCH", "CAS", "CAST", "POPC")
# A never-true guard: ``@!PT LDS RZ, [RZ]`` is padding ptxas emits (no effect), not a memory operation.
_SASS_NEVER = re.compile(r"^@!PT\s+")


def _strip_ptx_comment(line: str) -> str:
    i = line.find("//")
    return line[:i] if i >= 0 else line


def ptx_instructions(text: str) -> list[tuple[int, str, str]]:
    """PTX instructions as ``(1-based line, opcode, full text)``; directives, labels, braces and comments skipped.
    Parsed once per text (a small memo: the counts, the fact extractors and provenance all read the same PTX)."""
    return list(_ptx_instructions(text))


@lru_cache(maxsize=8)
def _ptx_instructions(text: str) -> tuple[tuple[int, str, str], ...]:
    out: list[tuple[int, str, str]] = []
    in_debug = False
    pred = _PTX_PRED.sub
    for no, raw in enumerate(text.splitlines(), 1):
        s = _strip_ptx_comment(raw).strip()
        if not s:
            continue
        if s.startswith(".section"):
            in_debug = True
        if in_debug or s[0] in ".{}$(" or s.endswith(":") or s.startswith(")"):
            continue
        if s[0] == "@":
            s = pred("", s)
        op = s.split(None, 1)[0].rstrip(";")
        if not ("a" <= op[:1] <= "z"):
            continue
        out.append((no, op, s))
    return tuple(out)


def sass_instructions(text: str) -> list[tuple[int, str, str]]:
    """SASS instructions as ``(1-based line, opcode, full text)`` from Triton's ``ctrl<TAB>INSTR`` listing (or plain
    ``cuobjdump -sass`` lines ``/*0070*/ INSTR ;``). Parsed once per text (a small memo)."""
    return list(_sass_instructions(text))


_SASS_ADDR = re.compile(r"/\*[0-9a-fx]+\*/")
_SASS_OP = re.compile(r"^[A-Z][A-Z0-9_.x]*$")


@lru_cache(maxsize=8)
def _sass_instructions(text: str) -> tuple[tuple[int, str, str], ...]:
    out: list[tuple[int, str, str]] = []
    for no, raw in enumerate(text.splitlines(), 1):
        s = raw.split("\t", 1)[1] if "\t" in raw else raw
        if "/*" in s:
            s = _SASS_ADDR.sub("", s)
            s = s.split("/*", 1)[0]
        s = s.strip()
        if not s or s.startswith(("Function", ".", "//")) or s.endswith(":") or _SASS_NEVER.match(s):
            continue
        s = _SASS_PRED.sub("", s)
        op = s.split(None, 1)[0].rstrip(";")
        if not _SASS_OP.match(op):
            continue
        out.append((no, op, s))
    return tuple(out)


def clear_memos() -> None:
    """Forget the parsed instruction lists and the keys per opcode (benchmarks time a cold parse with it; tests
    read the parsers themselves, not what an earlier test left in a memo)."""
    _ptx_instructions.cache_clear()
    _sass_instructions.cache_clear()
    _ptx_key_of_op.cache_clear()
    _sass_key.cache_clear()


def ptx_key(op: str, full: str) -> list[str]:
    """The count keys one PTX instruction adds (see the module docstring). Only a ``cp.async`` copy reads ``full``
    (its size operand); every other opcode's keys are computed once per opcode."""
    if op.startswith("cp.async"):
        return _ptx_key(op, full)
    return list(_ptx_key_of_op(op))


@lru_cache(maxsize=4096)
def _ptx_key_of_op(op: str) -> tuple[str, ...]:
    return tuple(_ptx_key(op, ""))


def _ptx_key(op: str, full: str) -> list[str]:
    parts = op.split(".")
    head = parts[0]
    keys: list[str] = []
    if head in ("ld", "st") and len(parts) > 1:
        # the state space may follow a qualifier: `ld.volatile.global.v4.b32`, `ld.relaxed.gpu.global.b32`
        space = next((p for p in parts[1:] if p in ("global", "shared", "local", "param", "const")), "generic")
        rest = [p for p in parts[1:] if p != space and not _PTX_DROP.match(p)]
        vec = [p for p in rest if re.match(r"^v\d+$", p)]
        typ = [p for p in rest if _PTX_TYPES.match(p)]
        key = f"{head}.{space}" + (f".{vec[0]}" if vec else "") + (f".{typ[-1]}" if typ else "")
        keys.append(key)
    elif op.startswith("cp.async.bulk.tensor"):
        keys.append("cp.async.bulk.tensor")
    elif op.startswith("cp.async.bulk"):
        keys.append("cp.async.bulk")
    elif op.startswith("cp.async.commit_group"):
        keys.append("cp.async.commit_group")
    elif op.startswith("cp.async.wait_group") or op.startswith("cp.async.wait_all"):
        keys.append("cp.async.wait_group")
    elif op.startswith("cp.async.mbarrier"):
        keys.append("cp.async.mbarrier")
    elif op.startswith("cp.async"):
        m = re.search(r",\s*(0x[0-9a-fA-F]+|\d+)\s*(?:,|;)", full)
        size = int(m.group(1), 0) if m else 0
        keys.append(f"cp.async {size}B" if size else "cp.async")
    elif head == "mma":
        keys.append("mma.sync")
        shape = next((p for p in parts if re.match(r"^m\d+n\d+k\d+$", p)), None)
        if shape:
            keys.append(f"mma.sync.{shape}")
        ab = _mma_input_type(parts)
        if ab:
            keys.append(f"mma.sync.{ab}")
    elif head == "wgmma":
        if len(parts) > 1 and parts[1] == "mma_async":
            keys.append("wgmma")
            shape = next((p for p in parts if re.match(r"^m\d+n\d+k\d+$", p)), None)
            if shape:
                keys.append(f"wgmma.{shape}")
            ab = _mma_input_type(parts)
            if ab:
                keys.append(f"wgmma.{ab}")
        elif len(parts) > 1:
            keys.append(f"wgmma.{parts[1]}")
    elif head == "tcgen05" and len(parts) > 1:
        keys.append(f"tcgen05.{parts[1].split('::')[0]}")
        kind = next((p.split("::", 1)[1] for p in parts if p.startswith("kind::")), None)
        if parts[1] == "mma" and kind:
            keys.append(f"tcgen05.mma.{kind}")
    elif head in ("atom", "red"):
        keys.extend(_atomic_keys(head, parts))
    elif head == "fence" and len(parts) > 1:
        keys.append("fence")
        keys.append("fence." + parts[1])
    elif head == "membar":
        keys.append("fence")
        keys.append("membar")
    elif head == "createpolicy":
        keys.append("createpolicy")
    elif head == "cvt" and any(p in ("tf32", "f64", "e4m3x2", "e5m2x2", "bf16x2", "e4m3", "e5m2") for p in parts[1:]):
        types = [p for p in parts[1:] if _PTX_TYPES.match(p) or p == "tf32"]
        keys.append("cvt." + ".".join(types[:2]))
    elif head in _PTX_MATH and len(parts) > 1:
        keys.append(op)  # every modifier kept: `ex2.approx.f32` and `ex2.approx.ftz.f32` differ (subnormals)
    elif head == "ldmatrix":
        keys.append("ldmatrix")
    elif head == "stmatrix":
        keys.append("stmatrix")
    elif head in ("bar", "barrier") and len(parts) > 1 and parts[1] in ("sync", "cta"):
        keys.append("bar.sync")
    elif head in ("div", "rem") and len(parts) > 1:
        # float division keeps its rounding mode: `div.full.f32` (approximate, `/` on fp32) and `div.rn.f32`
        # (IEEE round-to-nearest, `tl.div_rn`) are different instructions
        # (`.ftz` kept too: it changes results for subnormals)
        mode = [p for p in parts[1:-1] if p in ("full", "rn", "rz", "rm", "rp", "approx")]
        ftz = ["ftz"] if "ftz" in parts[1:-1] else []
        keys.append(".".join([head, *mode[:1], *ftz, parts[-1]]))
    elif head == "fma":
        keys.append(f"fma.{parts[-1]}")
    elif head == "call":
        keys.append("call")
    if head in ("ld", "st") and len(parts) > 1:
        keys.extend(_hint_keys(parts))
    if any(p == "f64" for p in parts[1:]):
        keys.append("f64 ops")
    return keys


# PTX math instructions whose rounding/approximation mode is part of the key (``ex2.approx.f32``, ``sqrt.rn.f32``).
_PTX_MATH = ("ex2", "lg2", "sin", "cos", "rsqrt", "sqrt", "rcp", "tanh")
_ATOM_OPS = ("add", "inc", "dec", "min", "max", "and", "or", "xor", "exch", "cas")


def _mma_input_type(parts: list[str]) -> str:
    """Operand type of an ``mma``/``wgmma`` instruction: ``mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`` →
    ``tf32`` (the types follow the shape: D, A, B, C for mma.sync; D, A, B for wgmma)."""
    types = [p for p in parts if re.match(r"^(?:f|bf|tf|e4m|e5m|s|u|b)\d+", p)]
    return types[1] if len(types) >= 2 else ""


def _atomic_keys(head: str, parts: list[str]) -> list[str]:
    """``atom.global.gpu.acq_rel.add.f32`` → ``atom``, ``atom.add.f32`` and ``atom.acq_rel``; ``red...`` alike;
    shared-memory atomics are ``atom.shared.add.f32``; compare-and-swap is ``atom.cas`` (also ``atom.cas.b32``)."""
    op = next((p for p in parts[1:] if p in _ATOM_OPS), "")
    vec = next((p for p in parts[1:] if re.match(r"^v\d+$", p)), "")
    typ = next((p for p in reversed(parts[1:]) if _PTX_TYPES.match(p) or p in ("noftz",)), "")
    if typ == "noftz":
        typ = next((p for p in reversed(parts[1:]) if _PTX_TYPES.match(p)), "")
    sem = next((p for p in parts[1:] if p in ("relaxed", "acquire", "release", "acq_rel", "sc")), "")
    space = "shared." if any(p.startswith("shared") for p in parts[1:]) else ""
    keys = [head, f"{head}.{space}" + ".".join(x for x in (op, vec, typ) if x)]
    if op == "cas":
        keys.append(f"{head}.cas")
    if sem:
        keys.append(f"{head}.{sem}")
    return keys


def _hint_keys(parts: list[str]) -> list[str]:
    """Cache/eviction qualifiers of a global ``ld``/``st``: ``hint .cg``, ``hint L1::evict_first``,
    ``hint L2::cache_hint``, ``hint volatile`` (the memory op's own key drops them)."""
    if "global" not in parts and "volatile" not in parts:
        return []
    out = []
    for p in parts[1:]:
        if p in ("ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc"):
            out.append(f"hint .{p}")
        elif p.startswith(("L1::", "L2::")) and not p.startswith("L2::64B") and not p.startswith("L2::128B"):
            out.append(f"hint {p}")
        elif p == "volatile":
            out.append("hint volatile")
    return out


def sass_key(op: str) -> list[str]:
    """The count keys one SASS instruction adds (see the module docstring); computed once per opcode."""
    return list(_sass_key(op))


@lru_cache(maxsize=4096)
def _sass_key(op: str) -> tuple[str, ...]:
    return tuple(_sass_key_list(op))


def _sass_key_list(op: str) -> list[str]:
    parts = op.split(".")
    head = parts[0]
    keys: list[str] = []
    if head in ("LDG", "STG", "LDS", "STS", "LDL", "STL", "LD", "ST", "LDGSTS"):
        keys.append(".".join([head, *[p for p in parts[1:] if _SASS_KEEP.match(p)]]))
        if head == "LDGSTS":
            keys.append("LDGSTS")
        # cache-eviction modifiers: EF evict-first, EL evict-last, LU last use, NA no-allocate
        keys.extend(f"{head} hint .{p}" for p in parts[1:] if p in ("EF", "EL", "LU", "EN", "NA"))
    elif head in ("HMMA", "IMMA", "DMMA", "HGMMA", "QGMMA", "IGMMA", "UTCHMMA", "UTCQMMA", "UTCIMMA", "UTCOMMA"):
        keys.append(head)
        if head == "HMMA" and ("TF32" in parts or "BF16" in parts):
            keys.append(f"HMMA.{'TF32' if 'TF32' in parts else 'BF16'}")
    elif head in ("ATOMG", "ATOM", "ATOMS", "RED", "REDG", "REDS"):
        fam = "RED" if head.startswith("RED") else head
        keys.append(fam)
        op = next((p for p in parts[1:] if p in _SASS_ATOM_OPS), "")
        typ = next((p for p in parts[1:] if re.match(r"^(?:F|BF|U|S)?\d+(?:x\d+)?$|^F16x2$|^BF16_V2$", p)), "")
        keys.append(".".join(x for x in (fam, op, typ) if x))
        if op == "CAS" and typ:
            keys.append(f"{fam}.CAS")
    elif head in ("MEMBAR", "ERRBAR", "CCTL", "FENCE", "UTCBAR"):
        keys.append(head)
        if head == "MEMBAR" and len(parts) > 1:
            keys.append("MEMBAR." + parts[-1])
    elif head in ("FFMA", "FMUL", "FADD", "MUFU", "F2F"):
        keys.append(head if head != "MUFU" or len(parts) < 2 else f"MUFU.{parts[1]}")
        if head == "F2F" and "F64" in parts:
            keys.append("F2F.F64")
    elif head == "BAR":
        keys.append("BAR")
    elif head == "CALL":
        keys.append("CALL")
    elif head in ("UTMALDG", "UTMASTG", "UBLKCP", "LDSM", "STSM", "DEPBAR", "LDGDEPBAR", "WARPGROUP", "SYNCS"):
        keys.append(head)
    if head in ("DADD", "DMUL", "DFMA", "DSETP", "DMNMX"):
        keys.append(head)
        keys.append("f64 ops")
    return keys


def count_ops(stage: str, text: str) -> dict[str, int]:
    """Count operations of one stage's text.

    :param stage: ``ttir``, ``ttgir``, ``llir``, ``ptx`` or ``sass`` (other stages give ``{}``).
    :param text: the raw stage text as saved in the bundle.
    :returns: ``{key: count}``; every key of ``KEY_COUNTS[stage]`` is present (0 when absent), plus any other key seen.
    """
    c: Counter[str] = Counter()
    dialect = dialect_of(stage)  # counted by dialect (irdiff.stages): a new MLIR stage counts like TTGIR
    if dialect == "mlir":
        for line in text.splitlines():
            s = line.strip()
            if not s or s.startswith(("#", "//", "}", "^", "module", "{")):
                continue
            m = _MLIR_OP.match(s)
            if m:
                c[m.group(1)] += 1
    elif dialect == "llir":
        for line in text.splitlines():
            if not line.startswith((" ", "\t")):
                continue
            m = _LLIR_INSTR.match(line)
            if not m:
                continue
            op, rest = m.group(1), m.group(2)
            c[op] += 1
            if op in _LLIR_INT_OPS:
                tm = _LLIR_INT_TYPE.match(rest)
                if tm:
                    c[f"{op} {tm.group(2)}"] += 1
            if op == "call":
                am = _LLIR_ASM.search(rest)
                if am:
                    mnem = am.group(1)
                    c["asm " + ".".join(mnem.split(".")[:2]) if mnem.startswith("cp.async") else "asm " + mnem] += 1
    elif dialect == "ptx":
        for _, op, full in ptx_instructions(text):
            c["instructions"] += 1
            for k in ptx_key(op, full):
                c[k] += 1
    elif dialect == "sass":
        for _, op, _full in sass_instructions(text):
            c["instructions"] += 1
            for k in sass_key(op):
                c[k] += 1
    else:
        return {}
    out = {k: 0 for k in KEY_COUNTS.get(stage, [])}
    out.update(c)
    return out
