"""LLIR (``make_llir``): debug metadata dropped, values/labels/metadata renumbered by first appearance, attribute
groups named by their content, ``define`` signatures split one argument per line."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

from irdiff.normalize.builder import Builder, BulkBuilder, Sym, Symbols, stem_of
from irdiff.normalize.model import Region
from irdiff.normalize.text import (
    kernel_pattern,
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


def attribute_group_names(raw_lines: list[str]) -> dict[str, str]:
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
    if s[0] == "!":
        return ("md", s[1:], "", "!", "!_")
    if s[0] == "%":
        name = s[1:]
        if name.isdigit():
            return ("val#", name, "", "%", "%_")
        stem = stem_of("val", name)
        return ("val", name, stem, "%" + stem + ".", "%_")
    return None


def normalize_llir(out: Builder | BulkBuilder, raw_lines: list[str], kernel_name: str | None) -> None:
    kpat = kernel_pattern(kernel_name)
    groups = attribute_group_names(raw_lines)

    def make(m: re.Match[str]) -> Sym | str:
        if m.group(2) is not None:
            named = groups.get(m.group(2))
            if named is not None:
                return named  # compared exactly: the same content has the same name in both variants
        return _ll_sym(m.group(0))

    out.use(Symbols(_LL_VALUE, make, _LL_PLAIN, quick=_quick))
    # consecutive ``attributes #N = {...}`` lines, emitted sorted by content (LLVM's order is first use)
    attr_block: list[tuple[str, str, int]] = []

    def flush_attrs() -> None:
        for _key, text, rawno in sorted(attr_block, key=lambda t: t[0]):
            out.add_text(text, rawno)
        attr_block.clear()

    func_start: int | None = None
    func_kind = ""
    block_start: int | None = None
    block_label = ""

    def end_block(last: int) -> None:
        nonlocal block_start
        if block_start is not None and last >= block_start:
            out.regions.append(Region(block_start, last, "block", block_label, anchor=False))
        block_start = None

    skip, add_text = _LL_SKIP.match, out.add_text
    kname = kernel_name or None
    for rawno, line in enumerate(raw_lines, start=1):
        if skip(line):
            continue
        if ";" in line:
            line = strip_comment(line, ";")
        if "!dbg !" in line:
            line = _drop_dbg(line)
        line = line.rstrip()
        if not line:
            continue
        if kname is not None and kname in line:
            line = replace_kernel(line, kpat)
        if line[0] == " ":  # an instruction (almost every line): not a label, define, attributes or closer
            if attr_block:
                flush_attrs()
            add_text(line, rawno)
            continue
        am = _LL_ATTR_DEF.match(line) if line.startswith("attributes #") else None
        if am is not None and am.group(1) in groups:
            attr_block.append((" ".join(am.group(2).split()), line, rawno))
            continue
        if attr_block:
            flush_attrs()
        lm = _LL_LABEL.match(line)
        if lm:  # a block label (also outside a define, for cut texts)
            end_block(len(out) - 1)
            sym = _ll_make(_LL_VALUE.match("%" + lm.group(1)))  # type: ignore[arg-type]
            idx = out.add([Sym(sym.cls, sym.name, sym.erased, sym.fmt, bare=True), ":"], rawno)
            block_start = idx if func_start is not None else None
            block_label = f"block at line {rawno}"
            continue
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
            func_start = first
            nm = _LL_GLOBAL.search(head)
            func_kind = f"define {nm.group(0) if nm else ''}".strip()
            block_start = None
            continue
        idx = out.add_text(line, rawno)
        if line.startswith("}") and func_start is not None:
            end_block(idx - 1)
            out.regions.append(Region(func_start, idx, func_kind, func_kind, anchor=True, function=True))
            func_start = None
    flush_attrs()
    if func_start is not None:
        end_block(len(out) - 1)
        out.regions.append(Region(func_start, len(out) - 1, func_kind, func_kind, anchor=True, function=True))
