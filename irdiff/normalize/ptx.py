"""PTX (``make_ptx``): comments, ``.loc``/``.file``, debug labels and sections dropped; registers renumbered per
class and ``$L__BB`` labels by first appearance."""

from __future__ import annotations

import re

from irdiff.normalize.builder import Builder, Sym, tokenize_symbols
from irdiff.normalize.model import Region
from irdiff.normalize.text import (
    kernel_pattern,
    replace_kernel,
    strip_comment,
)

# Debug lines (dropped):
#   .loc	1 40 0                          // diag_copy.py:40:0
#   .file	1 "/work/wt/arch/tests/suites/diag_copy.py"
#   $L__tmp0:
#   $L__func_begin0:
_PTX_DROP = re.compile(r"^\s*(?:\.loc\b|\.file\b|//|\$L__(?:tmp|func_begin|func_end|info_string)\w*:|@@DWARF)")
# Virtual registers per class and block labels, renumbered:
#   @%p2 ld.global.b16 { %rs1 }, [ %rd38 + 0 ];
#   @!%p1 bra 	$L__BB0_1;
_PTX_SYM = re.compile(
    r"""
    (?=[%$])
    (?:%(hh|rd|rs|rq|fd|f|h|r|p|b)(\d+)\b  # virtual registers by class: %rd38, %p1
    |(\$L__BB\d+_\d+)\b)                 # block labels: $L__BB0_1
    """,
    re.X,
)
# A kernel or function header:
#   .visible .entry copy_annotated(
_PTX_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)")


# The DWARF sections at the end (everything from the first one on is dropped):
#   .section	.debug_abbrev
_PTX_DEBUG_SECTION = re.compile(r"^\s*\.section\s+\.debug")
# A basic-block label (starts a block region):
#   $L__BB0_3:                              // =>This Inner Loop Header: Depth=1
_PTX_BLOCK_LABEL = re.compile(r"^\$L__BB\d+_\d+:")


def _ptx_make(m: re.Match[str]) -> Sym:
    if m.group(1) is not None:
        cls = m.group(1)
        return Sym("reg" + cls, m.group(2), f"%{cls}_", "%" + cls + "{n}")
    return Sym("bb", m.group(3), "$L__BB_", "$L__BB{n}")


def normalize_ptx(out: Builder, raw_lines: list[str], kernel_name: str | None) -> None:
    kpat = kernel_pattern(kernel_name)
    depth = 0
    func: tuple[int, str] | None = None
    pending_func: tuple[int, str] | None = None
    block_start: int | None = None
    block_label = ""
    for rawno, line in enumerate(raw_lines, start=1):
        if _PTX_DEBUG_SECTION.match(line):
            break
        if _PTX_DROP.match(line):
            continue
        line = strip_comment(line, "//").rstrip()
        if not line.strip():
            continue
        line = replace_kernel(line, kpat)
        em = _PTX_ENTRY.match(line)
        parts = tokenize_symbols(line, _PTX_SYM, _ptx_make)
        idx = out.add(parts, rawno)
        if em:
            pending_func = (idx, f".{em.group(1)} {em.group(2)}")
        stripped = line.strip()
        if _PTX_BLOCK_LABEL.match(stripped) and func is not None:
            if block_start is not None:
                out.regions.append(Region(block_start, idx - 1, "block", block_label, anchor=False))
            block_start = idx
            block_label = f"{stripped} (line {rawno})"
        opens = stripped.count("{") - stripped.count("}")
        if stripped.startswith("{") and depth == 0 and pending_func is not None:
            func = pending_func
            pending_func = None
        depth = max(0, depth + opens)
        if depth == 0 and func is not None and stripped.endswith("}"):
            if block_start is not None:
                out.regions.append(Region(block_start, idx - 1, "block", block_label, anchor=False))
                block_start = None
            out.regions.append(Region(func[0], idx, func[1], func[1], anchor=True, function=True))
            func = None
    if func is not None:
        end = len(out.parts) - 1
        if block_start is not None:
            out.regions.append(Region(block_start, end, "block", block_label, anchor=False))
        out.regions.append(Region(func[0], end, func[1], func[1], anchor=True, function=True))
