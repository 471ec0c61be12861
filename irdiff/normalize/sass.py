"""SASS (``get_sass`` in ``triton/tools/disasm.py``, or cuobjdump's raw form): addresses and encodings dropped,
control codes moved to a side column, labels, branch targets and physical registers renumbered."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import count, repeat
from operator import itemgetter

from irdiff.normalize.builder import Builder, BulkBuilder, Sym, Symbols
from irdiff.normalize.model import Region
from irdiff.normalize.text import (
    kernel_pattern,
    lines_at,
    replace_kernel,
)

# ``get_sass`` form: control code, a tab, the instruction:
#   --:-:0:-:1	S2R R0, SR_TID.X;
_SASS_TRITON = re.compile(r"^([0-9a-fA-F-]{2}:[0-7-]:[0-7-]:[Y-]:[0-9a-fA-F])\t(.*)$")
# cuobjdump's raw form: address, instruction, first encoding word:
#           /*0070*/                   S2R R0, SR_TID.X ;                      /* 0x0000000000007919 */
# The reference pattern (kept for the property test; it backtracks quadratically on long blank runs, so
# :func:`_sass_raw` parses the same thing by hand):
#           /*0070*/                   S2R R0, SR_TID.X ;                      /* 0x0000000000007919 */
_SASS_RAW = re.compile(
    r"""
    ^\s*/\*[0-9a-fA-F]{4,}\*/\s*            # /*0070*/: the address
    (.*?)\s*;?\s*                           # the instruction (its ; dropped)
    (?:/\*\s*0x([0-9a-fA-F]{16})\s*\*/)?    # /* 0x0000000000007919 */: the first encoding word
    \s*$
    """,
    re.X,
)
# The address that starts a raw-form line:
#           /*0070*/                   S2R R0, SR_TID.X ;                      /* 0x0000000000007919 */
_SASS_RAW_HEAD = re.compile(r"^\s*/\*[0-9a-fA-F]{4,}\*/")
# The encoding word that ends it (searched in the stripped line):
#           /*0070*/                   S2R R0, SR_TID.X ;                      /* 0x0000000000007919 */
_SASS_RAW_TAIL = re.compile(r"/\*\s*0x([0-9a-fA-F]{16})\s*\*/\Z")


def _sass_raw(line: str) -> tuple[str, str | None] | None:
    """``(instruction, first encoding word or None)`` of a raw-form line, as :data:`_SASS_RAW` matches it (the
    instruction without its ``;`` and surrounding blanks), in linear time; None when it is not a raw-form line."""
    head = _SASS_RAW_HEAD.match(line)
    if head is None:
        return None
    rest = line[head.end() :].strip()
    enc = None
    tail = _SASS_RAW_TAIL.search(rest)
    if tail is not None:
        enc = tail.group(1)
        rest = rest[: tail.start()].rstrip()
    if rest.endswith(";"):
        rest = rest[:-1].rstrip()
    return rest, enc


# cuobjdump's second encoding word (holds the control code) on its own line:
#                                                                              /* 0x000e220000002100 */
_SASS_ENC = re.compile(r"^\s*/\*\s*0x([0-9a-fA-F]{16})\s*\*/\s*$")
# A function header (``get_sass``; cuobjdump prints ``Function : NAME``):
#   Function:copy_annotated
_SASS_FUNC = re.compile(r"^\s*(?:Function\s*:\s*|\.text\.)([\w$.]+):?\s*$")
# A label definition (``get_sass`` ``LBBn``; nvdisasm ``.L_x_N``):
#   LBB1:
_SASS_LABEL_DEF = re.compile(r"^\s*`?(\.L_x_\d+|LBB\d+|\.L_\d+)`?:\s*$")
# A code address in a branch-like instruction:
#   /*0160*/                   BRA 0x160 ;
_SASS_ADDR = re.compile(r"\b0x[0-9a-fA-F]+\b")
_BRANCH_OPS = ("BRA", "BRX", "BSSY", "CALL", "JMP", "SSY", "PBK", "PCNT")


# The address of a raw-form line:
#           /*0070*/                   S2R R0, SR_TID.X ;
_SASS_RAW_ADDR = re.compile(r"^\s*/\*([0-9a-fA-F]{4,})\*/")


def _sass_ctrl(enc_hex: str) -> str:
    """Control code of a Volta+ instruction from its second 64-bit word (as ``triton/tools/disasm.py`` does)."""
    enc = int(enc_hex, 16)
    stall = (enc >> 41) & 0xF
    yld = (enc >> 45) & 0x1
    wrtdb = (enc >> 46) & 0x7
    readb = (enc >> 49) & 0x7
    watdb = (enc >> 52) & 0x3F
    return (
        f"{'--' if watdb == 0 else f'{watdb:02d}'}:{'-' if readb == 7 else readb}:"
        f"{'-' if wrtdb == 7 else wrtdb}:{'Y' if yld == 0 else '-'}:{stall:x}"
    )


@lru_cache(maxsize=65536)  # a label is defined once and used about once: the second Sym comes from here
def _sass_label_sym(name: str) -> Sym:
    name = name.strip("`")
    if name.startswith("LBB"):
        return Sym("label", name, "L_", "LBB{n}")
    return Sym("label", name, "L_", ".L_x_{n}")


def _sass_instr_parts(instr: str, bra_labels: dict[int, int] | None = None) -> list[str | Sym]:
    """Literal text and symbols of one instruction: labels, and code addresses of branch-like instructions
    (``BRA 0x2d60`` in cuobjdump's raw form becomes the label ``get_sass`` would print, ``LBBn``)."""
    parts: list[str | Sym] = []
    pos = 0
    for m in _SASS_LABEL_USE.finditer(instr):
        if m.start() > pos:
            parts.append(instr[pos : m.start()])
        parts.append(_sass_label_sym(m.group(1)))
        pos = m.end()
    rest = instr[pos:]
    op = _SASS_OPCODE.match(instr)
    opcode = op.group(1) if op else ""
    if opcode.split(".")[0] in _BRANCH_OPS:
        p2 = 0
        for m in _SASS_ADDR.finditer(rest):
            if m.start() > p2:
                parts.append(rest[p2 : m.start()])
            addr = int(m.group(0), 16)
            if bra_labels is not None and opcode in ("BRA", "BRA.U") and addr in bra_labels:
                parts.append(_sass_label_sym(f"LBB{bra_labels[addr]}"))
            else:
                parts.append(Sym("addr", m.group(0).lower(), "A_", "ADDR{n}"))
            p2 = m.end()
        if p2 < len(rest):
            parts.append(rest[p2:])
    elif rest:
        parts.append(rest)
    return parts


# A label used as a branch target:
#   --:-:-:-:5	@!P1 BRA LBB0;
_SASS_LABEL_USE = re.compile(r"`?(\.L_x_\d+|\bLBB\d+|\.L_\d+)`?")
# The opcode after an optional predicate (``BRA`` here):
#   @!P1 BRA LBB0;
_SASS_OPCODE = re.compile(r"^\s*(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")
# A raw-form branch and its target address (targets become ``LBBn`` labels, as ``get_sass`` numbers them):
#           /*0160*/              @!P0 BRA 0x2d60 ;                        /* 0x0000002b00f08947 */
_SASS_RAW_BRA = re.compile(
    r"""
    ^\s*/\*([0-9a-fA-F]{4,})\*/\s*   # /*0160*/: the branch's own address
    (?:@!?U?P\w+\s+)?               # a predicate: @!P0
    BRA(?:\.U)?\s+0x([0-9a-fA-F]+)  # BRA 0x2d60: the target address
    """,
    re.X,
)


# A physical register operand: general (R12), uniform (UR4), predicate (P0), uniform predicate (UP1), convergence
# barrier (B0); not RZ/URZ/PT/UPT, special registers (SR_TID.X, SR_CgaCtaId), scoreboards (SB0), opcodes
# (S2R, R2UR, P2R) or modifiers (.B32):
#   --:-:-:Y:4	@!P0 IMAD.WIDE.U32 R2, R4, 0x2, R2.64;
#   --:-:-:-:1	BSSY B0, LBB2;
_SASS_REG = re.compile(r"(?<![\w.$])(UR|UP|R|P|B)(\d+)(?![\w$])")


@lru_cache(maxsize=4096)
def _sass_reg_sym(kind: str, number: str) -> Sym:
    return Sym(f"reg.{kind}", number, f"{kind}_", kind + "{n}")


def _make_reg(m: re.Match[str]) -> Sym:
    return _sass_reg_sym(m.group(1), m.group(2))


# Physical registers are symbols (renamed by first appearance, erased to ``R_``/``UR_``/``P_``/``UP_``/``B_`` in the
# shape): register allocation is noise between two compiles, as PTX virtual register numbers are. The raw view
# (``--raw``) keeps the physical names. SASS has no strings.
def _quick_reg(s: str) -> tuple[str, str, str, str, str]:
    """:func:`_sass_reg_sym` of a register's text (``UR4``: kind ``UR``, number ``4``) without a Sym."""
    kind = s[:2] if s[0] == "U" else s[:1]
    return ("reg." + kind, s[len(kind) :], "", kind, kind + "_")


# (for the split: one alternative per first letter, each a literal the regex engine skips to, then the lookbehind
# on the character before it: ``re.split`` over a chunk takes half the time of a leading lookahead ``(?=[URPB])``)
#   --:-:-:Y:4	@!P0 IMAD.WIDE.U32 R2, R4, 0x2, UR2;
SYMBOLS = Symbols(
    _SASS_REG,
    _make_reg,
    r"U(?<![\w.$]U)[RP]\d+(?![\w$])|R(?<![\w.$]R)\d+(?![\w$])|P(?<![\w.$]P)\d+(?![\w$])|B(?<![\w.$]B)\d+(?![\w$])",
    strings=False,
    quick=_quick_reg,
)
# What makes an instruction need :func:`_sass_instr_parts` (a label or a branch-like opcode); others are all text:
#   --:-:-:-:5	@P0 BRA LBB0;
_SASS_SPECIAL = re.compile(r"LBB|\.L_|" + "|".join(_BRANCH_OPS))


def normalize_sass(out: Builder | BulkBuilder, raw_lines: Sequence[str], kernel_name: str | None) -> None:
    walk = _SassWalk(out, raw_lines, kernel_name)
    if isinstance(out, BulkBuilder) and not walk.raw_form:
        out.use(_BULK_SYMBOLS)
        _bulk_sass(out, raw_lines, walk)  # get_sass's form (no raw cuobjdump line): whole chunks at a time
    else:
        out.use(SYMBOLS)
        line = walk.line
        for rawno, text in enumerate(raw_lines, start=1):
            line(text, rawno)
    walk.close_func(len(out) - 1)


# The labels :data:`_SASS_LABEL_USE` finds, for the whole-text split (one alternative per first character):
#   --:-:-:-:5	@!P1 BRA LBB0;
#   --:-:-:-:5	BRA `(.L_x_3);
# (``L(?<!\wL)``, not ``\bL``: a leading assertion makes ``re`` try the split at every position, 4x slower)
_LABEL_PLAIN = r"`(?:\.L_(?:x_)?\d+|LBB\d+)`?|\.L_(?:x_)?\d+`?|L(?<!\wL)BB\d+`?"


def _quick_reg_or_label(s: str) -> tuple[str, str, str, str, str]:
    """:func:`_quick_reg`, or for a label (``LBB3``, ```.L_x_3```) what :func:`_sass_label_sym` names it."""
    if s[0] in "`.L":
        name = s.strip("`")
        return ("label", name, "", "LBB" if name.startswith("LBB") else ".L_x_", "L_")
    return _quick_reg(s)


def _make_reg_or_label(m: re.Match[str]) -> Sym:
    return _sass_label_sym(m.group(3)) if m.group(3) is not None else _sass_reg_sym(m.group(1), m.group(2))


# The whole-text path's symbols: registers and labels in one split. On a get_sass instruction line it finds what
# :func:`_sass_instr_parts` and the register search of its literal parts find, except on the lines
# :func:`_bulk_sass` sends through the reference rule (a code address in a branch, a register right after a label):
#   --:-:-:Y:4	@!P0 BRA LBB2;
_BULK_SYMBOLS = Symbols(
    re.compile(f"{_SASS_REG.pattern}|{_SASS_LABEL_USE.pattern}"),
    _make_reg_or_label,
    f"{SYMBOLS.plain}|{_LABEL_PLAIN}",
    strings=False,
    quick=_quick_reg_or_label,
)
# A label followed at once by a register's first letter: there the reference reads a register the split would not
# (``LBB1R2``: the label, then ``R2`` alone):
#   LBB1R2
_LABEL_THEN_REG = re.compile(r"(?:\.L_(?:x_)?|LBB)\d+[URPB]")

# The two halves of :data:`_LABEL_THEN_REG`, each with a literal first text (``re`` skips to it over a whole chunk):
#   LBB1R2
#   .L_x_1B0
_HAZARDS = (re.compile(r"LBB\d+[URPB]"), re.compile(r"\.L_(?:x_)?\d+[URPB]"))
# A control code (``get_sass``'s, as :data:`_SASS_TRITON` reads it at the start of a line):
#   --:-:0:-:1	S2R R0, SR_TID.X;
_SASS_CTRL = re.compile(r"[0-9a-fA-F-]{2}:[0-7-]:[0-7-]:[Y-]:[0-9a-fA-F]")
# An instruction line's control code and its instruction (after the tab), as _SASS_TRITON's groups 1 and 2:
_CTRL = itemgetter(slice(None, 10))
_TAB = itemgetter(slice(10, 11))
_AFTER_CTRL = itemgetter(slice(11, None))


# Raw lines per pass of :func:`_bulk_sass` (bounds its temporary lists)
BULK_LINES = 4096


def _bulk_sass(out: BulkBuilder, raw_lines: Sequence[str], walk: _SassWalk) -> None:
    """:class:`_SassWalk` over ``raw_lines`` (``get_sass``'s form) with the same result, a chunk of lines at a time.

    Instruction lines (:data:`_SASS_TRITON`) are matched and stripped by ``map`` and comprehensions over the chunk and
    go to the builder as they are: its split (:data:`_BULK_SYMBOLS`) reads their registers and labels at once. Label
    definitions become ``LBBn:`` text (the split renames the label); only the rare others (function headers,
    comments, the kernel's name, a code address in a branch, a register right after a label) take the
    line-by-line rule, in order."""
    special, label_def = _SASS_SPECIAL.search, _SASS_LABEL_DEF.match
    kname, kpat = walk.kname, walk.kpat
    for start in range(0, len(raw_lines), BULK_LINES):
        chunk = raw_lines[start : start + BULK_LINES]
        # an instruction line is a control code, a tab and the instruction (_SASS_TRITON's groups), sliced by map in
        # C: its 11th character is a tab and its first ten one of the chunk's few distinct codes. Odd: the other
        # lines (labels, headers, comments: few), and what the split cannot read as it is: a code address in a
        # branch-like line (a "0x" and _SASS_SPECIAL), a register right after a label (_LABEL_THEN_REG's two
        # literal-first halves, searched over the joined chunk below)
        stripped: list[str] = list(map(str.strip, map(_AFTER_CTRL, chunk)))
        cols = list(map(_CTRL, chunk))
        codes = {c for c in set(cols) if _SASS_CTRL.fullmatch(c)}
        odd_set = {
            i
            for i, c, tab, t in zip(count(), cols, map(_TAB, chunk), stripped)
            if tab != "\t" or c not in codes or ("0x" in t and special(t) is not None)
        }
        texts: list[str | None] = stripped  # type: ignore[assignment]  # (None: not an instruction line)
        for i in odd_set:
            if cols[i] not in codes or chunk[i][10:11] != "\t":  # not an instruction line
                texts[i] = None
                cols[i] = ""
        joined = "\n".join(chunk)
        if kname is not None and kname in joined:
            odd_set.update(i for i, t in enumerate(texts) if t is not None and kname in t)
        if "LBB" in joined or ".L_" in joined:  # (a match is inside a line's instruction: no control code has L, .)
            for pat in _HAZARDS:
                odd_set.update(lines_at(joined, [m.start() for m in pat.finditer(joined)]))
        odd = sorted(odd_set)
        base = len(out)
        dropped = 0
        for i in odd:
            t = texts[i]
            rawno = start + i + 1
            if t is not None:  # an instruction line the split cannot read as it is: the reference rule
                if kname is not None and kname in t:
                    t = replace_kernel(t, kpat)
                texts[i] = out.searched_alone(_sass_instr_parts(t) if special(t) else t, SYMBOLS)
                continue
            line = chunk[i]
            lm = label_def(line)
            if lm is not None:  # (no line a label definition matches is dropped or read otherwise by _SassWalk)
                walk.label(base + i - dropped, f"{lm.group(1)} (line {rawno})")
                texts[i] = f"{lm.group(1)}:"
                continue
            parts = walk.other(line, rawno, base + i - dropped)
            if parts is None:
                dropped += 1
            else:
                texts[i] = out.added(parts)
        if dropped:
            keep = [t is not None for t in texts]
            out.extend(
                [t for t in texts if t is not None],
                [start + i + 1 for i, k in enumerate(keep) if k],
                [c for c, k in zip(cols, keep, strict=True) if k],
            )
        else:
            out.extend(texts, range(start + 1, start + len(chunk) + 1), cols)  # type: ignore[arg-type]


class _SassWalk:
    """The line-by-line normalization of a SASS listing: what each raw line adds to the builder, the function and
    block regions, and cuobjdump's raw form (its branch targets as labels, control codes from encoding lines)."""

    def __init__(self, out: Builder | BulkBuilder, raw_lines: Sequence[str], kernel_name: str | None) -> None:
        self.out = out
        self.kpat = kernel_pattern(kernel_name)
        self.kname = kernel_name or None
        self.func: tuple[int, str] | None = None
        self.block_start: int | None = None
        self.block_label = ""
        self.pending: tuple[int, str] | None = None  # raw-form instruction waiting for its control word
        # cuobjdump's raw form: BRA targets become LBBn labels numbered by first reference, as get_sass numbers them
        self.bra_labels: dict[int, int] = {}
        # whether a line holds "/*" (cuobjdump's raw form: addresses, encodings), scanned in C
        self.raw_form = any(map(str.__contains__, raw_lines, repeat("/*")))
        for line in raw_lines if self.raw_form else ():
            bm = _SASS_RAW_BRA.match(line) if "BRA" in line and "/*" in line else None
            if bm:
                self.bra_labels.setdefault(int(bm.group(2), 16), len(self.bra_labels))

    def close_func(self, last: int) -> None:
        out = self.out
        if self.block_start is not None and last >= self.block_start:
            out.regions.append(Region(self.block_start, last, "block", self.block_label, anchor=False))
        self.block_start = None
        if self.func is not None and last >= self.func[0]:
            out.regions.append(Region(self.func[0], last, self.func[1], self.func[1], anchor=True, function=True))
        self.func = None

    def line(self, line: str, rawno: int) -> None:
        """Add raw line ``rawno`` (1-based), ``line``, to the builder (or nothing, for a comment or a header)."""
        out, kpat = self.out, self.kpat
        # get_sass's instruction lines first (almost every line; no other pattern below matches one)
        tm = _SASS_TRITON.match(line)
        if tm is not None:
            ctrl, instr = tm.groups()
            instr = instr.strip()
            if self.kname is not None and self.kname in instr:
                instr = replace_kernel(instr, kpat)
            out.add_text(_sass_instr_parts(instr) if _SASS_SPECIAL.search(instr) else instr, rawno, ctrl)
            return
        parts = self.other(line, rawno, len(out))
        if parts is not None:
            out.add(parts, rawno)

    def other(self, line: str, rawno: int, idx: int) -> list[str | Sym] | None:
        """What a raw line that is not a ``get_sass`` instruction adds as normalized line ``idx`` (its regions
        noted), or None (a comment, a header, an encoding word; a raw-form instruction is added here)."""
        out, kpat, bra_labels = self.out, self.kpat, self.bra_labels
        s = line.strip()
        if not s or s.startswith("//") or s.startswith(".headerflags") or s.startswith("....."):
            return None
        em = _SASS_ENC.match(line)
        if em:
            if self.pending is not None and out.columns is not None:
                out.columns[self.pending[0]] = _sass_ctrl(em.group(1))
                self.pending = None
            return None
        fm = _SASS_FUNC.match(line)
        if fm:
            self.close_func(idx - 1)
            name = replace_kernel(fm.group(1), kpat)
            self.func = (idx, f"Function:{name}")
            return [f"Function:{name}"]
        lm = _SASS_LABEL_DEF.match(line)
        if lm:
            self.label(idx, f"{lm.group(1)} (line {rawno})")
            return [_sass_label_sym(lm.group(1)), ":"]
        rm = _sass_raw(line)
        if rm is not None:
            am = _SASS_RAW_ADDR.match(line)
            addr = int(am.group(1), 16) if am else -1
            if addr in bra_labels:
                idx = out.add([_sass_label_sym(f"LBB{bra_labels[addr]}"), ":"], rawno)
                self.label(idx, f"LBB{bra_labels[addr]} (line {rawno})")
            instr = rm[0].strip()
            if instr and not instr.endswith(";"):
                instr += ";"
            if instr.endswith(";"):  # blanks before the closing semicolon go (linear: no regex backtracking)
                instr = instr[:-1].rstrip() + ";"
            idx = out.add_text(_sass_instr_parts(replace_kernel(instr, kpat), bra_labels), rawno, "")
            self.pending = (idx, str(rawno))
            return None
        if s.startswith("code for") or s.startswith("Fatbin") or s.startswith("====") or s.startswith("arch ="):
            return None
        if s.startswith("code version") or s.startswith("host =") or s.startswith("compile_size"):
            return None
        return [replace_kernel(s, kpat)]

    def label(self, idx: int, block_label: str) -> None:
        """A label at normalized line ``idx`` starts a block (and ends the one before)."""
        if self.block_start is not None:
            self.out.regions.append(Region(self.block_start, idx - 1, "block", self.block_label, anchor=False))
        self.block_start = idx
        self.block_label = block_label
