"""LLIR (``make_llir``): debug metadata dropped, values/labels/metadata renumbered by first appearance, attribute
groups named by their content, ``define`` signatures split one argument per line."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import compress
from operator import not_

from irdiff.normalize.builder import Builder, BulkBuilder, Sym, Symbols, stem_of
from irdiff.normalize.model import Region
from irdiff.normalize.text import (
    kernel_pattern,
    lines_at,
    matching_paren,
    replace_kernel,
    split_top_level,
    strip_comment,
)

# Values (``%15``, ``%.lr.ph``), attribute groups (``#0``) and metadata (``!12``), renumbered:
#   %15 = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x(), !dbg !12
_LL_VALUE = re.compile(
    r"""
    (?=[%\#!])
    (?:%([A-Za-z_$.\-][\w$.\-]*|\d+)  # values: %15, %.lr.ph
    |(?<![\w\"])\#(\d+)\b             # attribute groups: #0
    |(?<![\w\"])!(\d+)\b)              # metadata: !12
    """,
    re.X,
)
# A basic-block label:
#   486:                                              ; preds = %.lr.ph, %486
_LL_LABEL = re.compile(r"^([A-Za-z_$.\-][\w$.\-]*|\d+):(\s|$)")
# Module header and debug metadata (dropped):
#   ; ModuleID = 'LLVMDialectModule'
#   source_filename = "LLVMDialectModule"
#   !12 = !DILocation(line: 36, column: 11, scope: !13, inlinedAt: !14)
_LL_DROP = re.compile(
    r"^\s*(?:; ModuleID|source_filename\s*=|!llvm\.dbg\.|!\d+\s*=\s*(?:distinct\s+)?!DI|#dbg_|"
    r"(?:tail\s+)?call\s+void\s+@llvm\.dbg\.|declare\s+void\s+@llvm\.dbg\.)"
)
# Debug-info module flags (dropped):
#   !2 = !{i32 2, !"Debug Info Version", i32 3}
_LL_DBG_FLAG = re.compile(r'^\s*!\d+\s*=\s*!\{i32 \d+, !"(?:Debug Info Version|Dwarf Version)"')
# Either (one match per line):
#   !12 = !DILocation(line: 36, column: 11, scope: !13, inlinedAt: !14)
_LL_SKIP = re.compile(f"{_LL_DROP.pattern}|{_LL_DBG_FLAG.pattern}")


def _drop_dbg(line: str) -> str:
    """Remove ``, !dbg !N`` attachments (and `` !dbg !N`` on ``define``)."""
    k = line.find("!dbg !")
    if k < 0:
        return line
    if line.find("!dbg !", k + 6) < 0 and line.isascii():  # one attachment (the usual line): the loop below, in C
        rest = line[k + 6 :]
        head = line[:k].rstrip(" ")
        return (head[:-1] if head.endswith(",") else head) + rest.lstrip("0123456789")
    while k >= 0:
        j = k + 6
        while j < len(line) and line[j].isdigit():
            j += 1
        i = k
        while i > 0 and line[i - 1] == " ":
            i -= 1
        if i > 0 and line[i - 1] == ",":
            i -= 1
        line = line[:i] + line[j:]
        k = line.find("!dbg !", i)
    return line


# A function definition (split one argument per line):
#   define ptx_kernel void @copy_annotated(ptr addrspace(1) %0, ptr addrspace(1) %1, i32 %2, i32 %3, ...) #0 !dbg !5 {
_LL_DEFINE = re.compile(r"^(define\b[^@]*@[\w$.\-\"]+)\((.*)$")


# The function's name in a ``define`` head (plain or quoted):
#   define ptx_kernel void @copy_annotated(
_LL_GLOBAL = re.compile(r"@[\w$.\-]+|@\"[^\"]*\"")


def _ll_make(m: re.Match[str]) -> Sym:
    return _ll_sym(m.group(0))


# An attribute group definition (LLVM prints them after the last function, numbered by first use):
#   attributes #8 = { nounwind }
_LL_ATTR_DEF = re.compile(r"^attributes #(\d+) = \{(.*)\}\s*$")


def attribute_group_names(raw_lines: Sequence[str]) -> dict[str, str]:
    """Content-derived names of the module's attribute groups: group number (``"8"``) → ``#attrs.1a2b3c`` (six hex
    digits of the BLAKE2b digest of the group's attribute list, blanks collapsed).

    LLVM numbers attribute groups by first use in the module (``AttributeGroups`` in ``llvm/lib/IR/AsmWriter.cpp``),
    so one extra call with ``{ nounwind }`` renumbers every group after it: ``#4`` in one variant is ``#8`` in the
    other. A content name is the same in both variants, so equal groups compare equal and a changed group reads
    as a change. Two distinct contents with one digest prefix get ``.2``, ``.3`` suffixes (in raw line order).
    """
    names: dict[str, str] = {}
    taken: dict[str, str] = {}  # name -> content
    for line in raw_lines:
        if not line.startswith("attributes #"):
            continue
        m = _LL_ATTR_DEF.match(line)
        if m is None:
            continue
        content = " ".join(m.group(2).split())
        name = "#attrs." + hashlib.blake2b(content.encode(), digest_size=3).hexdigest()
        base, k = name, 1
        while name in taken and taken[name] != content:
            k += 1
            name = f"{base}.{k}"
        taken[name] = content
        names[m.group(1)] = name
    return names


@lru_cache(maxsize=65536)
def _ll_sym(text: str) -> Sym:
    m = _LL_VALUE.match(text)
    assert m is not None
    if m.group(1) is not None:
        name = m.group(1)
        if name.isdigit():
            return Sym("val#", name, "%_", "%{n}")
        return Sym("val", name, "%_", "%{stem}.{n}")
    if m.group(2) is not None:
        return Sym("attr", m.group(2), "#_", "#{n}")
    return Sym("md", m.group(3), "!_", "!{n}")


# _LL_VALUE without capturing groups (for :class:`~irdiff.normalize.builder.BulkBuilder`'s split), one alternative
# per sigil, each a literal the regex engine skips to (a set of first characters it does not use once the split adds
# its placeholder alternative); each lookbehind then checks the character before the sigil:
#   %15 = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x(), !dbg !12
_LL_PLAIN = r"%(?:[A-Za-z_$.\-][\w$.\-]*|\d+)|\#(?<![\w\"]\#)\d+\b|!(?<![\w\"]!)\d+\b"


def _quick(s: str) -> tuple[str, str, str, str, str] | None:
    """:func:`_ll_sym` of values and metadata without a Sym (attribute groups: ``make`` decides)."""
    if s[0] == "%":
        name = s[1:]
        if name.isdigit():
            return ("val#", name, "", "%", "%_")
        stem = stem_of("val", name)
        return ("val", name, stem, "%" + stem + ".", "%_")
    if s[0] == "!":
        return ("md", s[1:], "", "!", "!_")
    return None


def normalize_llir(out: Builder | BulkBuilder, raw_lines: Sequence[str], kernel_name: str | None) -> None:
    """Normalize an LLVM IR module (``raw_lines``: ``make_llir``'s text split into lines) into ``out`` (the rules:
    the module docstring and :mod:`irdiff.normalize`); ``kernel_name``'s occurrences become ``KERNEL``.

    With the reference :class:`Builder` every raw line goes through :meth:`_LlirWalk.line`; with a
    :class:`BulkBuilder` (what :func:`irdiff.normalize.normalize` uses) the whole-text path :func:`_bulk_llir` gives
    the same stage (``tests/test_normalize_fast.py``) with about a third less CPU on a 10 MB function
    (``benchmarks/README.md``, bench_align_large)."""
    walk = _LlirWalk(out, raw_lines, kernel_name)
    out.use(Symbols(_LL_VALUE, walk.make, _LL_PLAIN, quick=_quick))
    if isinstance(out, BulkBuilder):
        _bulk_llir(out, raw_lines, walk)  # whole chunks of lines at a time, the same result
    else:
        line = walk.line
        for rawno, text in enumerate(raw_lines, start=1):
            line(text, rawno)
    walk.finish()


class _LlirWalk:
    """The line-by-line normalization of an LLVM IR module (the reference rule): what each raw line adds to the
    builder, the function and block regions, and the attribute-group definitions (sorted by content)."""

    def __init__(self, out: Builder | BulkBuilder, raw_lines: Sequence[str], kernel_name: str | None) -> None:
        self.out = out
        self.kpat = kernel_pattern(kernel_name)
        self.kname = kernel_name or None
        self.groups = attribute_group_names(raw_lines)
        # consecutive ``attributes #N = {...}`` lines, emitted sorted by content (LLVM's order is first use)
        self.attr_block: list[tuple[str, str, int]] = []
        self.func_start: int | None = None
        self.func_kind = ""
        self.block_start: int | None = None
        self.block_label = ""

    def make(self, m: re.Match[str]) -> Sym | str:
        """What a symbol match becomes: an attribute group's content name, else its :class:`Sym`."""
        if m.group(2) is not None:
            named = self.groups.get(m.group(2))
            if named is not None:
                return named  # compared exactly: the same content has the same name in both variants
        return _ll_sym(m.group(0))

    def flush_attrs(self) -> None:
        for _key, text, rawno in sorted(self.attr_block, key=lambda t: t[0]):
            self.out.add_text(text, rawno)
        self.attr_block.clear()

    def end_block(self, last: int) -> None:
        if self.block_start is not None and last >= self.block_start:
            self.out.regions.append(Region(self.block_start, last, "block", self.block_label, anchor=False))
        self.block_start = None

    def line(self, line: str, rawno: int) -> None:
        """Add raw line ``rawno`` (1-based), ``line``, to the builder (or nothing: debug metadata, a comment)."""
        if _LL_SKIP.match(line):
            return
        if ";" in line:
            line = strip_comment(line, ";")
        if "!dbg !" in line:
            line = _drop_dbg(line)
        line = line.rstrip()
        if not line:
            return
        if self.kname is not None and self.kname in line:
            line = replace_kernel(line, self.kpat)
        if line[0] == " ":  # an instruction (almost every line): not a label, define, attributes or closer
            if self.attr_block:
                self.flush_attrs()
            self.out.add_text(line, rawno)
            return
        self.other(line, rawno)

    def label_parts(self, lm: re.Match[str], rawno: int, idx: int) -> list[str | Sym]:
        """The parts of a block label (``_LL_LABEL``'s match ``lm``) that will be normalized line ``idx``; a block
        starts there (and the one before ends)."""
        self.end_block(idx - 1)
        sym = _ll_make(_LL_VALUE.match("%" + lm.group(1)))  # type: ignore[arg-type]
        self.block_start = idx if self.func_start is not None else None
        self.block_label = f"block at line {rawno}"
        return [Sym(sym.cls, sym.name, sym.erased, sym.fmt, bare=True), ":"]

    def other(self, line: str, rawno: int) -> None:
        """Add a kept line that is not an instruction (it does not start with a blank; comments, ``!dbg`` and
        trailing blanks gone, the kernel's name replaced): an attribute group, a label, a ``define``, a closer."""
        out = self.out
        am = _LL_ATTR_DEF.match(line) if line.startswith("attributes #") else None
        if am is not None and am.group(1) in self.groups:
            self.attr_block.append((" ".join(am.group(2).split()), line, rawno))
            return
        if self.attr_block:
            self.flush_attrs()
        lm = _LL_LABEL.match(line)
        if lm:  # a block label (also outside a define, for cut texts)
            out.add(self.label_parts(lm, rawno, len(out)), rawno)
            return
        dm = _LL_DEFINE.match(line)
        if dm and line.endswith("{"):
            head, rest = dm.group(1), dm.group(2)
            close = matching_paren("(" + rest, 0)
            args_text = rest[: close - 1] if close > 0 else rest
            tail = rest[close - 1 :] if close > 0 else ""
            first = out.add([head + "("], rawno)
            args = [a.strip() for a in split_top_level(args_text) if a.strip()]
            for arg in args:
                out.add_text(f"    {arg}", rawno)
            out.add_text(tail, rawno)
            self.func_start = first
            nm = _LL_GLOBAL.search(head)
            self.func_kind = f"define {nm.group(0) if nm else ''}".strip()
            self.block_start = None
            return
        idx = out.add_text(line, rawno)
        if line.startswith("}") and self.func_start is not None:
            self.end_block(idx - 1)
            out.regions.append(Region(self.func_start, idx, self.func_kind, self.func_kind, anchor=True, function=True))
            self.func_start = None

    def finish(self) -> None:
        """After the last line: pending attribute groups, and the regions of a function left open (a cut text)."""
        out = self.out
        self.flush_attrs()
        if self.func_start is not None:
            self.end_block(len(out) - 1)
            out.regions.append(
                Region(self.func_start, len(out) - 1, self.func_kind, self.func_kind, anchor=True, function=True)
            )
            self.func_start = None


# Raw lines per pass of :func:`_bulk_llir` (bounds its temporary lists to about a MB)
BULK_LINES = 4096
# A string (as :func:`irdiff.normalize.text.split_strings` reads one in a line: ``"(?:[^"\\]|\\.)*(?:"|$)``,
# unrolled, 3x faster) or a trailing comment, in joined lines (neither crosses a line break): a split at both keeps
# what follows each string's opening quote (captured) and drops the comments (None), which is what
# ``strip_comment(line, ";")`` does to each line; used on the lines with a ``"`` and a ``;`` only (a pattern without
# one literal first character makes ``re`` try every position, 7x slower than :data:`_COMMENT`):
#   tail call void asm sideeffect "st.global.b32 [ $0 + 0 ], { $1 };", "l,f"(ptr addrspace(1) %8, float %9) ; c
_STRING_OR_COMMENT = re.compile(r'"([^"\\\n]*+(?:\\.[^"\\\n]*+)*+(?:"|$))|;[^\n]*', re.M)
# A string alone, what follows its opening quote captured (the quote first: a literal ``re`` skips to), in joined
# lines; its text is what ``BulkBuilder.searched`` holds as a placeholder:
#   tail call void asm sideeffect "mov.b32 $0, %r1;", "=r"(i32 %5)
_STRING_SPLIT = re.compile(r'"([^"\\\n]*+(?:\\.[^"\\\n]*+)*+(?:"|$))', re.M)
# A trailing comment in joined lines without strings:
#   12:                                              ; preds = %11, %3
_COMMENT = re.compile(r";[^\n]*")
# The usual ``!dbg !N`` attachment with the comma before it, as :func:`_drop_dbg` removes it from an ASCII line that
# has one (searched in joined lines; a literal first character, so ``re`` skips to it):
#   %5 = getelementptr i8, ptr addrspace(1) %0, i64 0, !dbg !205
_DBG = re.compile(r", !dbg ![0-9]*")
# What :data:`_DBG` does not remove as :func:`_drop_dbg` does (that line takes ``_drop_dbg``): an attachment not
# right after ``, `` (``define ... #0 !dbg !5 {``, two blanks, no comma, or one overlapping another). Where every
# attachment of an ASCII line follows ``, ``, ``_drop_dbg``'s loop (two or more) removes each with its ``, `` and
# digits, left to right, and never rereads text a removal joined (it searches on from the cut): what :data:`_DBG`
# removes.
#   define ptx_kernel void @k(ptr %0) #0 !dbg !5 {
_DBG_OTHER = re.compile(r"!(?<!, !)dbg !")


# Texts one of which every line :data:`_LL_SKIP` matches holds (each of its alternatives needs one):
#   !12 = !DILocation(line: 36, column: 11, scope: !13, inlinedAt: !14)
_SKIP_NEEDS = ("ModuleID", "source_filename", "#dbg_", "@llvm.dbg.", "!llvm.dbg.", "!DI", "Debug Info", "Dwarf Version")


def _may_skip(joined: str) -> bool:
    """Whether a line of ``joined`` (lines joined by line breaks) may match :data:`_LL_SKIP` (else none does), by a
    few substring scans in C instead of a match per line."""
    return any(t in joined for t in _SKIP_NEEDS)


def _bulk_llir(out: BulkBuilder, raw_lines: Sequence[str], walk: _LlirWalk) -> None:
    """:meth:`_LlirWalk.line` over ``raw_lines`` with the same result (``tests/test_normalize_fast.py``), a chunk of
    :data:`BULK_LINES` raw lines at a time.

    Per chunk, over all its lines at once (``map``, substring scans, one regex pass over the joined lines): the
    dropped lines (:data:`_LL_SKIP`, matched only in a chunk :func:`_may_skip`) go, comments are cut
    (:data:`_COMMENT`; on lines with a ``"``, :data:`_STRING_OR_COMMENT`, which skips strings), ``!dbg !N``
    attachments are removed (:data:`_DBG`; a line where :data:`_DBG_OTHER` finds one, or a non-ASCII line, takes
    :func:`_drop_dbg`), trailing blanks and empty lines go, the kernel's name is replaced, and the strings of
    instruction lines become the builder's placeholders (:meth:`BulkBuilder.held`). Instruction lines (a leading
    blank) then go to :meth:`BulkBuilder.extend` as text (the builder's split renames their symbols), block labels as
    :meth:`BulkBuilder.added` text with their regions noted; only the rare other lines (``define``, ``}``,
    ``attributes``, module-level lines) take :meth:`_LlirWalk.other`, in order."""
    skip, label = _LL_SKIP.match, _LL_LABEL.match
    kname, kpat = walk.kname, walk.kpat
    for start in range(0, len(raw_lines), BULK_LINES):
        chunk = raw_lines[start : start + BULK_LINES]
        joined = "\n".join(chunk)
        if _may_skip(joined):
            keep = list(map(not_, map(skip, chunk)))
            nums = list(compress(range(start + 1, start + len(chunk) + 1), keep))
            if not nums:
                continue
            lines: Sequence[str] = list(compress(chunk, keep))
            joined = "\n".join(lines)
        else:  # no line of the chunk is dropped
            lines = chunk
            nums = list(range(start + 1, start + len(chunk) + 1))
        if joined.count("\n") != len(nums) - 1:  # a line break inside a line (not from splitlines): line by line
            for rawno, text in zip(range(start + 1, start + len(chunk) + 1), chunk, strict=True):
                walk.line(text, rawno)
            continue
        if ";" in joined:
            cut = _COMMENT.sub("", joined)
            quoted = [i for i, ln in enumerate(lines) if '"' in ln and ";" in ln] if '"' in joined else []
            if quoted:  # their comments start at the first ; outside strings
                parts = _STRING_OR_COMMENT.split("\n".join([lines[i] for i in quoted]))
                parts[1::2] = ['"' + s if s is not None else "" for s in parts[1::2]]  # a string kept, a comment gone
                lines = cut.split("\n")
                for i, ln in zip(quoted, "".join(parts).split("\n"), strict=True):
                    lines[i] = ln
                joined = "\n".join(lines)
            else:
                joined = cut
        if "!dbg !" in joined:
            before = joined
            joined = _DBG.sub("", joined)
            if before.isascii():
                other = lines_at(before, [m.start() for m in _DBG_OTHER.finditer(before)])
            else:
                other = [i for i, ln in enumerate(before.split("\n")) if "!dbg !" in ln and not ln.isascii()]
                other = sorted({*other, *lines_at(before, [m.start() for m in _DBG_OTHER.finditer(before)])})
            if other:  # the lines _DBG cannot do: _drop_dbg, from their text before
                old, lines = before.split("\n"), joined.split("\n")
                for i in other:
                    lines[i] = _drop_dbg(old[i])
                joined = "\n".join(lines)
        lines = list(map(str.rstrip, joined.split("\n")))
        if "" in lines:
            filled = list(map(bool, lines))
            lines = list(compress(lines, filled))
            nums = list(compress(nums, filled))
        if kname is not None and any(kname in ln for ln in lines):
            lines = [replace_kernel(ln, kpat) for ln in lines]
        if '"' in joined:  # the strings of instruction lines as placeholders (BulkBuilder.add_text's)
            quoted = [i for i, ln in enumerate(lines) if ln[0] == " " and '"' in ln]
            if quoted:
                got = _STRING_SPLIT.split("\n".join([lines[i] for i in quoted]))
                got[1::2] = out.held(['"' + s for s in got[1::2]])
                for i, ln in zip(quoted, "".join(got).split("\n"), strict=True):
                    lines[i] = ln
        odd = [i for i, ln in enumerate(lines) if ln[0] != " "]  # labels and the rare others
        seg, base = 0, len(out)  # lines[seg:] are not in the builder yet; lines[seg] will be out[base]
        held: list[int] = []  # the labels, made text below
        syms: list[Sym] = []
        regions = out.regions
        for i, lm in zip(odd, map(label, [lines[i] for i in odd]), strict=True):
            if lm is None:  # a define, a closer, an attribute group, a module-level line: the reference rule
                if i > seg:
                    if walk.attr_block:
                        walk.flush_attrs()
                    _extend(out, lines, nums, seg, i, held, syms)
                walk.other(lines[i], nums[i])
                seg, base = i + 1, len(out)
                continue
            if walk.attr_block:  # (nothing of this segment is in the builder yet)
                walk.flush_attrs()
                base = len(out)
            # a block label (as _LlirWalk.label_parts, inlined: one in six lines)
            idx = base + i - seg
            opened = walk.block_start
            if opened is not None and idx - 1 >= opened:
                regions.append(Region(opened, idx - 1, "block", walk.block_label, anchor=False))
            walk.block_start = idx if walk.func_start is not None else None
            walk.block_label = f"block at line {nums[i]}"
            name = lm.group(1)
            held.append(i)
            syms.append(_label_sym(name))
        if seg < len(lines):
            if walk.attr_block:
                walk.flush_attrs()
            _extend(out, lines, nums, seg, len(lines), held, syms)


def _label_sym(name: str) -> Sym:
    """The :class:`Sym` of a block label's definition (``12:`` names the value ``%12``, shown without its sigil), as
    :meth:`_LlirWalk.label_parts` makes it from ``_ll_sym("%" + name)``."""
    if name.isdigit():
        return Sym("val#", name, "%_", "%{n}", bare=True)
    return Sym("val", name, "%_", "%{stem}.{n}", bare=True)


def _extend(
    out: BulkBuilder, lines: list[str], nums: list[int], a: int, b: int, held: list[int], syms: list[Sym]
) -> None:
    """Add ``lines[a:b]`` (raw lines ``nums[a:b]``) to ``out``, the labels at ``held`` (indices into ``lines``) as
    their :class:`Sym` ``syms`` and ``:`` (what :meth:`BulkBuilder.added` makes of them; ``:`` holds no symbol)."""
    if held:
        for i, h in zip(held, out.held(syms), strict=True):
            lines[i] = h + ":"
        held.clear()
        syms.clear()
    out.extend(lines[a:b] if a or b < len(lines) else lines, nums[a:b] if a or b < len(nums) else nums)
