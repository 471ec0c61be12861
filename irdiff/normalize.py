"""Per-dialect normalization of Triton stage texts, so that two compiles can be diffed line by line.

Each stage text is turned into a :class:`NormalizedStage`: readable lines (what a diff shows), their "shape" form
(what the aligner compares), the raw line each came from, and the structure (functions, loops/regions) the aligner
anchors on. What is dropped or renamed is only what changes without meaning between two compiles of the same
kernel (measured in ``shared/notes/triton-internals.md`` §E.1; Triton 3.6 and 3.9):

* TTIR/TTGIR (MLIR, printed by ``triton/compiler/compiler.py`` via ``str(module)``): ``#locN = loc(...)`` lines and
  every ``loc(...)``; SSA names are renumbered by first appearance, keeping the Python-derived stems Triton 3.4+
  prints (``%a_ptrs_60`` → ``%a_ptrs.N``, numbered per stem); ``%N`` and block arguments ``%argN`` are renumbered;
  layout aliases (``#blocked1 = #ttg.blocked<{...}>``) are renamed by content (``#blocked_s1x8_t2x16_w4x1_o1x0``),
  so the same layout has the same name in both variants; ``tt.func`` signatures are split one argument per line.
* LLIR (``make_llir``): ``; ModuleID``, ``source_filename``, ``!dbg !N`` attachments, ``!N = !DI...`` metadata,
  ``#dbg_`` records and comments are dropped; ``%N``/named values, block labels, ``#N`` attribute groups and ``!N``
  metadata are renumbered by first appearance; ``define`` signatures are split one argument per line.
* PTX (``make_ptx``): comments, ``.loc``/``.file``, ``$L__tmp``/``$L__func_*`` labels and everything from the
  first ``.section .debug_*`` on are dropped; registers are renumbered per class (``%r``, ``%rd``, ``%rs``, ``%p``,
  ``%f``, ``%fd``, ``%h``, ``%hh``...) and ``$L__BB`` labels by first appearance.
* SASS (``triton/tools/disasm.py`` ``get_sass``: ``ctrl<TAB>instr`` lines, ``Function:NAME``, ``LBBn:`` labels;
  cuobjdump's raw ``/*0070*/ ... /* 0x... */`` form is accepted too): addresses and encodings are dropped, control
  codes go to :attr:`NormalizedStage.columns` (computed from the encoding for the raw form, as ``get_sass`` does),
  ``LBBn``/``.L_x_N`` labels and branch target addresses are renumbered, ``//## File`` lines dropped.

In the *shape* form every renamed symbol (SSA value, virtual register, label, attribute group) is erased to its
class (``%_``, ``%r_``, ``L_``) so that one extra value does not make every later line differ; the erased symbols are
kept per line in :attr:`NormalizedStage.symbols`, and the aligner (``irdiff/align.py``) checks that they correspond
one-to-one between the two sides. Things that are compared exactly stay in the shape: constants, types, layout
alias names (content-derived), SASS physical registers.

:func:`normalize` never raises on arbitrary text: unparseable lines are kept as they are.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache

__all__ = ["NormalizedStage", "Region", "normalize", "dialect_of", "rename"]


@dataclass
class Region:
    """A function, loop/region or basic block of a normalized stage: lines ``start..end`` (0-based, inclusive).

    :ivar kind: what opened it: ``tt.func @KERNEL``, ``scf.for``, ``scf.if``, ``define @KERNEL``, ``.entry KERNEL``,
        ``Function:KERNEL``, ``block``.
    :ivar label: text for hunk headers, e.g. ``scf.for (line 186)`` (raw line of the opener).
    :ivar anchor: True when the aligner should match it as a unit (functions, MLIR regions); basic blocks of
        LLIR/PTX/SASS only name hunks.
    :ivar function: True for functions (hunk headers always name the enclosing function).
    """

    start: int
    end: int
    kind: str
    label: str
    anchor: bool = True
    function: bool = False


@dataclass
class NormalizedStage:
    """One stage text after normalization; all per-line lists have the same length.

    :ivar stage: ``ttir``, ``ttgir``, ``llir``, ``ptx``, ``sass``, ``python`` (anything else is treated as text).
    :ivar lines: readable normalized lines (what a diff shows).
    :ivar shapes: the "shape" form of each line used for alignment: renamed symbols erased to their class.
    :ivar raw_line: 1-based line number in :attr:`raw` for each normalized line.
    :ivar columns: side column per line (SASS control codes such as ``--:-:0:Y:4``), else None.
    :ivar raw: the raw text.
    :ivar symbols: per line, the symbols erased from the shape, in order (readable names, e.g. ``%a_ptrs.3``).
    :ivar symbol_spans: per line, the ``(start, end)`` character range of each symbol of :attr:`symbols` in
        :attr:`lines` (a label definition prints its name without the sigil: ``12:`` names ``%12``); used by
        :func:`rename` and by the aligner, which renames both sides of a diff together.
    :ivar regions: functions, loops/regions and basic blocks, in pre-order (outer before inner).
    :ivar fallback: True when the dialect normalizer failed on this text and lines are the raw lines.
    """

    stage: str
    lines: list[str]
    shapes: list[str]
    raw_line: list[int]
    columns: list[str] | None
    raw: str
    symbols: list[tuple[str, ...]] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    fallback: bool = False
    symbol_spans: list[tuple[tuple[int, int], ...]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.lines)


_DIALECTS = {"ttir": "mlir", "ttgir": "mlir", "source": "mlir", "llir": "llir", "ptx": "ptx", "sass": "sass"}


def dialect_of(stage: str) -> str:
    """``mlir``, ``llir``, ``ptx``, ``sass`` or ``text`` for a stage name (``ttgir`` → ``mlir``)."""
    return _DIALECTS.get(stage, "text")


def normalize(
    stage: str,
    text: str,
    kernel_name: str | None = None,
    *,
    raw: bool = False,
    line_range: tuple[int, int] | None = None,
) -> NormalizedStage:
    """Normalize one stage text (see the module docstring for the rules per dialect).

    :param stage: stage name; unknown names are treated as plain text (lines kept, trailing blanks stripped).
    :param text: the stage text as Triton wrote it (``CompiledKernel.asm[stage]``).
    :param kernel_name: when given, occurrences of the kernel's name are replaced by ``KERNEL`` (so two variants
        with different function names compare equal).
    :param raw: no normalization at all: ``lines`` and ``shapes`` are the raw lines (``--raw``).
    :param line_range: plain-text stages (``python``) only: keep raw lines ``first..last`` (1-based, inclusive;
        the kernel function inside the file that defines it); ``raw`` and ``raw_line`` still refer to the whole text.
    :returns: a :class:`NormalizedStage`. Never raises on arbitrary text; if a dialect normalizer fails
        internally, the raw lines are returned with ``fallback=True``.
    """
    if not isinstance(text, str):
        text = str(text)
    raw_lines = text.splitlines()
    if raw:
        return _plain(stage, text, raw_lines, strip=False)
    dialect = dialect_of(stage)
    try:
        if dialect == "mlir":
            out = _Builder(stage, text)
            _normalize_mlir(out, raw_lines, kernel_name)
        elif dialect == "llir":
            out = _Builder(stage, text)
            _normalize_llir(out, raw_lines, kernel_name)
        elif dialect == "ptx":
            out = _Builder(stage, text)
            _normalize_ptx(out, raw_lines, kernel_name)
        elif dialect == "sass":
            out = _Builder(stage, text, with_columns=True)
            _normalize_sass(out, raw_lines, kernel_name)
        else:
            return _plain(stage, text, raw_lines, strip=True, line_range=line_range, kernel_name=kernel_name)
        return out.build()
    except Exception:  # defensive: the differ must show something for any input
        result = _plain(stage, text, raw_lines, strip=False)
        result.fallback = True
        return result


def rename(ns: NormalizedStage, mapping: Mapping[str, str]) -> NormalizedStage:
    """A copy of ``ns`` whose symbols are renamed by ``mapping`` (symbols not in it keep their name): the lines,
    :attr:`~NormalizedStage.symbols` and :attr:`~NormalizedStage.symbol_spans` change, the shapes, raw line
    numbers, columns and regions do not. A symbol printed without its sigil (LLIR label ``12:``) stays so.

    Used by :func:`irdiff.align.diff_stage` to give corresponding values one name on both sides of a diff.
    Lines without recorded spans (a stage built by hand) are searched for their symbols left to right.
    """
    lines = list(ns.lines)
    symbols = list(ns.symbols)
    spans: list[tuple[tuple[int, int], ...]] = (
        list(ns.symbol_spans) if len(ns.symbol_spans) == len(ns.lines) else [() for _ in ns.lines]
    )
    for i, syms in enumerate(ns.symbols[: len(lines)]):
        if not syms or all(mapping.get(x, x) == x for x in syms):
            continue
        line = lines[i]
        where = spans[i] if len(spans[i]) == len(syms) else _find_symbols(line, syms)
        if where is None:
            continue
        out: list[str] = []
        new_syms: list[str] = []
        new_where: list[tuple[int, int]] = []
        pos = 0
        shift = 0
        for sym, (start, end) in zip(syms, where, strict=True):
            new = mapping.get(sym, sym)
            shown = line[start:end]
            text = new[1:] if shown != sym and shown == sym[1:] else new
            out.append(line[pos:start])
            out.append(text)
            new_syms.append(new)
            new_where.append((start + shift, start + shift + len(text)))
            shift += len(text) - (end - start)
            pos = end
        out.append(line[pos:])
        lines[i] = "".join(out)
        symbols[i] = tuple(new_syms)
        spans[i] = tuple(new_where)
    return replace(ns, lines=lines, symbols=symbols, symbol_spans=spans)


def _find_symbols(line: str, syms: tuple[str, ...]) -> tuple[tuple[int, int], ...] | None:
    """Spans of ``syms`` in ``line``, left to right, as whole tokens (None if one is missing)."""
    out: list[tuple[int, int]] = []
    pos = 0
    for sym in syms:
        for text in (sym, sym[1:]):
            m = re.compile(r"(?<![\w$.\-])" + re.escape(text) + r"(?![\w$.\-])").search(line, pos) if text else None
            if m:
                out.append(m.span())
                pos = m.end()
                break
        else:
            return None
    return tuple(out)


def _plain(
    stage: str,
    text: str,
    raw_lines: list[str],
    *,
    strip: bool,
    line_range: tuple[int, int] | None = None,
    kernel_name: str | None = None,
) -> NormalizedStage:
    first, last = line_range if line_range else (1, len(raw_lines))
    first, last = max(1, first), min(len(raw_lines), last)
    numbers = list(range(first, last + 1))
    lines = [raw_lines[n - 1].rstrip() if strip else raw_lines[n - 1] for n in numbers]
    if kernel_name and line_range:  # the kernel's own name (``def matmul_kernel_annotated``) compares equal
        name = re.compile(rf"\b{re.escape(kernel_name)}\b")
        lines = [name.sub("KERNEL", ln) for ln in lines]
    return NormalizedStage(
        stage=stage,
        lines=lines,
        shapes=list(lines),
        raw_line=numbers,
        columns=None,
        raw=text,
        symbols=[() for _ in lines],
        regions=[],
        symbol_spans=[() for _ in lines],
    )


# ---------------------------------------------------------------------------------------------------------------
# shared machinery


class _Builder:
    """Collects normalized lines; symbols are renamed at the end (first-appearance order over the whole text)."""

    def __init__(self, stage: str, raw: str, with_columns: bool = False) -> None:
        self.stage = stage
        self.raw = raw
        # per line: list of parts; a part is str (literal text) or _Sym
        self.parts: list[list[str | _Sym]] = []
        self.raw_line: list[int] = []
        self.columns: list[str] | None = [] if with_columns else None
        self.regions: list[Region] = []
        self.renamer = _Renamer()

    def add(self, parts: list[str | _Sym], raw_line: int, column: str = "") -> int:
        self.parts.append(parts)
        self.raw_line.append(raw_line)
        if self.columns is not None:
            self.columns.append(column)
        return len(self.parts) - 1

    def build(self) -> NormalizedStage:
        lines: list[str] = []
        shapes: list[str] = []
        symbols: list[tuple[str, ...]] = []
        spans: list[tuple[tuple[int, int], ...]] = []
        # first-appearance order: resolve names in line order
        for parts in self.parts:
            text: list[str] = []
            shape: list[str] = []
            syms: list[str] = []
            where: list[tuple[int, int]] = []
            pos = 0
            for p in parts:
                if isinstance(p, str):
                    text.append(p)
                    shape.append(p)
                    pos += len(p)
                else:
                    name = self.renamer.name(p)
                    shown = name[1:] if p.bare else name
                    text.append(shown)
                    shape.append(p.erased)
                    syms.append(name)
                    where.append((pos, pos + len(shown)))
                    pos += len(shown)
            lines.append("".join(text).rstrip())
            shapes.append("".join(shape).rstrip())
            symbols.append(tuple(syms))
            spans.append(tuple(where))
        regions = sorted(self.regions, key=lambda r: (r.start, -r.end))
        return NormalizedStage(
            stage=self.stage,
            lines=lines,
            shapes=shapes,
            raw_line=self.raw_line,
            columns=self.columns,
            raw=self.raw,
            symbols=symbols,
            regions=regions,
            symbol_spans=spans,
        )


@dataclass(frozen=True)
class _Sym:
    """A renamable symbol: ``cls`` is its namespace, ``name`` the original spelling, ``erased`` its shape text."""

    cls: str
    name: str
    erased: str
    fmt: str  # format for the new name: "{stem}.{n}" style, see _Renamer
    bare: bool = False  # shown without its sigil (LLIR label definitions: "12:" names the value %12)


class _Renamer:
    """Renames symbols by first appearance: per (namespace, stem) counters."""

    def __init__(self) -> None:
        self.names: dict[tuple[str, str], str] = {}
        self.counters: dict[tuple[str, str], int] = {}

    def name(self, sym: _Sym) -> str:
        key = (sym.cls, sym.name)
        got = self.names.get(key)
        if got is None:
            stem = _stem(sym)
            ckey = (sym.cls, stem)
            n = self.counters.get(ckey, 0)
            self.counters[ckey] = n + 1
            got = sym.fmt.format(stem=stem, n=n)
            self.names[key] = got
        return got


def _stem(sym: _Sym) -> str:
    """The name without its uniquing suffix: MLIR appends ``_N`` (``%a_ptrs_60``), LLVM appends digits
    (``%.frozen1147``); our own output's ``.N`` is stripped too, so normalizing twice is stable."""
    if "{stem}" not in sym.fmt:
        return ""
    m = (_LLVM_SUFFIX if sym.cls == "val" else _MLIR_SUFFIX).match(sym.name)
    return m.group(1) if m else sym.name


_MLIR_SUFFIX = re.compile(r"^(.+?)[_.]\d+$")
_LLVM_SUFFIX = re.compile(r"^(.*?\D)\.?\d+$")


_STRING = re.compile(r'"(?:[^"\\]|\\.)*(?:"|$)')


def _split_strings(line: str) -> list[tuple[bool, str]]:
    """Split a line into (is_string, text) segments; strings are ``"..."`` with backslash escapes."""
    if '"' not in line:
        return [(False, line)]
    out: list[tuple[bool, str]] = []
    pos = 0
    for m in _STRING.finditer(line):
        if m.start() > pos:
            out.append((False, line[pos : m.start()]))
        out.append((True, m.group(0)))
        pos = m.end()
    if pos < len(line):
        out.append((False, line[pos:]))
    return out


def _strip_comment(line: str, marker: str) -> str:
    """Remove a trailing comment that starts with ``marker`` outside strings."""
    if marker not in line:
        return line
    acc: list[str] = []
    for is_str, seg in _split_strings(line):
        if not is_str:
            k = seg.find(marker)
            if k >= 0:
                acc.append(seg[:k])
                return "".join(acc)
        acc.append(seg)
    return "".join(acc)


def _tokenize_symbols(
    line: str, pattern: re.Pattern[str], make: Callable[[re.Match[str]], _Sym | None]
) -> list[str | _Sym]:
    """Split ``line`` into literal text and the symbols found by ``pattern`` outside strings; ``make(match)``
    returns a :class:`_Sym`, or None to keep the match as literal text."""
    parts: list[str | _Sym] = []
    for is_str, seg in _split_strings(line):
        if is_str:
            parts.append(seg)
            continue
        pos = 0
        for m in pattern.finditer(seg):
            sym = make(m)
            if sym is None:
                continue
            if m.start() > pos:
                parts.append(seg[pos : m.start()])
            parts.append(sym)
            pos = m.end()
        if pos < len(seg):
            parts.append(seg[pos:])
    return parts


def _split_top_level(s: str) -> list[str]:
    """Split an argument list on commas that are not nested in ()[]{}<> or strings."""
    out: list[str] = []
    depth = 0
    cur: list[str] = []
    for is_str, seg in _split_strings(s):
        if is_str:
            cur.append(seg)
            continue
        for ch in seg:
            if ch in "([{<":
                depth += 1
            elif ch in ")]}>":
                depth = max(0, depth - 1)
            if ch == "," and depth == 0:
                out.append("".join(cur))
                cur = []
            else:
                cur.append(ch)
    out.append("".join(cur))
    return out


def _matching_paren(s: str, open_idx: int) -> int:
    """Index of the ``)`` matching ``s[open_idx] == '('`` (skipping strings), or -1."""
    depth = 0
    i = open_idx
    n = len(s)
    while i < n:
        c = s[i]
        if c == '"':
            i += 1
            while i < n and s[i] != '"':
                i += 2 if s[i] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


@dataclass(frozen=True)
class _Kernel:
    name: str
    pat: re.Pattern[str]


def _kernel_pattern(kernel_name: str | None) -> _Kernel | None:
    if not kernel_name:
        return None
    return _Kernel(kernel_name, re.compile(r"(?<![\w$.])" + re.escape(kernel_name) + r"(?=_param_\d|[^\w$.]|$)"))


def _replace_kernel(line: str, k: _Kernel | None) -> str:
    if k is None or k.name not in line:
        return line
    return k.pat.sub("KERNEL", line)


# ---------------------------------------------------------------------------------------------------------------
# MLIR (TTIR / TTGIR)

_LOC_DEF = re.compile(r"^\s*#loc[\w$.\-]* = loc\(")
_ALIAS_DEF = re.compile(r"^#([A-Za-z_][\w$\-]*) = (.*)$")
_ALIAS_USE = re.compile(r"#([A-Za-z_][\w$\-]*)")
_MLIR_SSA = re.compile(r"%([A-Za-z_$.\-][\w$.\-]*|\d+)")
_MLIR_OP = re.compile(r"^\s*(?:%[^=]*=\s*)?([A-Za-z_][\w.]*)")
_FUNC_LINE = re.compile(r"^(\s*)((?:tt|llvm)\.func\b[^@(]*@[\w$.\-]+)\((.*)$")


def _strip_locs(line: str) -> str:
    """Remove every ``loc(...)`` (balanced, strings skipped) and the blanks before it."""
    if "loc(" not in line:
        return line
    out: list[str] = []
    i = 0
    n = len(line)
    while i < n:
        c = line[i]
        if c == '"':
            j = i + 1
            while j < n and line[j] != '"':
                j += 2 if line[j] == "\\" else 1
            out.append(line[i : j + 1])
            i = j + 1
            continue
        if line.startswith("loc(", i) and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] in "_$.#")):
            close = _matching_paren(line, i + 3)
            if close < 0:
                close = n - 1
            while out and out[-1].endswith((" ", "\t")):
                out[-1] = out[-1].rstrip(" \t")
                if out[-1]:
                    break
                out.pop()
            i = close + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _alias_name(stem: str, body: str) -> str:
    """Content-derived alias name: ``#blocked_s1x8_t2x16_w4x1_o1x0`` from the attribute's fields, else a hash."""
    if re.fullmatch(r"#[\w.]+", body.strip()):  # no parameters: #smem = #ttg.shared_memory
        return stem
    m = re.fullmatch(r"#[\w.]+<\{(.*)\}>", body.strip())
    desc: list[str] = []
    ok = m is not None
    if m is not None and m.group(1).strip():
        for item in _split_top_level(m.group(1)):
            kv = item.split("=", 1)
            if len(kv) != 2:
                ok = False
                break
            key, val = kv[0].strip().strip('"'), kv[1].strip()
            if re.fullmatch(r"-?\d+(?:\s*:\s*i\d+)?", val):
                v = val.split(":")[0].strip()
            elif re.fullmatch(r"\[\s*(-?\d+\s*(,\s*-?\d+\s*)*)?\]", val):
                v = "x".join(x.strip() for x in val[1:-1].split(",") if x.strip()) or "e"
            elif val in ("true", "false"):
                v = val[0].upper()
            else:
                ok = False
                break
            initial = key[:1].lower() if key else "k"
            desc.append(initial + v.replace("-", "m"))
    name = f"{stem}_{'_'.join(desc)}" if ok and desc else stem
    if not ok or len(name) > 48:
        name = f"{stem}_{hashlib.sha1(body.strip().encode()).hexdigest()[:6]}"
    return name


def _normalize_mlir(out: _Builder, raw_lines: list[str], kernel_name: str | None) -> None:
    kpat = _kernel_pattern(kernel_name)
    aliases: dict[str, str] = {}
    used_names: dict[str, str] = {}  # new name -> body (collision check)

    def alias_sub(s: str) -> str:
        if "#" not in s:
            return s
        acc: list[str] = []
        for is_str, seg in _split_strings(s):
            if not is_str:
                seg = _ALIAS_USE.sub(lambda m: "#" + aliases.get(m.group(1), m.group(1)), seg)
            acc.append(seg)
        return "".join(acc)

    def make_ssa(m: re.Match[str]) -> _Sym:
        name = m.group(1)
        if name.isdigit():
            return _Sym("ssa#", name, "%_", "%{n}")
        if re.fullmatch(r"arg\d+", name):
            return _Sym("ssa#arg", name, "%_", "%arg{n}")
        return _Sym("ssa", name, "%_", "%{stem}.{n}")

    stack: list[tuple[int, str, str, bool]] = []  # (start line, kind, label, function)

    def open_region(idx: int, kind: str, rawno: int, function: bool) -> None:
        label = kind if function else f"{kind} (line {rawno})"
        stack.append((idx, kind, label, function))

    def close_region(idx: int) -> None:
        if stack:
            start, kind, label, function = stack.pop()
            if kind != "module":
                out.regions.append(Region(start, idx, kind, label, anchor=True, function=function))

    for rawno, line in enumerate(raw_lines, start=1):
        if _LOC_DEF.match(line):
            continue
        line = _strip_locs(line).rstrip()
        if not line.strip():
            continue
        line = _replace_kernel(line, kpat)
        am = _ALIAS_DEF.match(line)
        if am and not am.group(1).startswith("loc"):
            stem = re.sub(r"\d+$", "", am.group(1)) or am.group(1)
            body = alias_sub(am.group(2))
            new = _alias_name(stem, body)
            if used_names.get(new, body) != body:
                new = f"{new}_{hashlib.sha1(body.strip().encode()).hexdigest()[:6]}"
            used_names[new] = body
            aliases[am.group(1)] = new
            out.add([f"#{new} = {body}"], rawno)
            continue
        line = alias_sub(line)
        fm = _FUNC_LINE.match(line)
        if fm and fm.group(3).strip() not in ("", ")") and "{" in line:
            # split the signature: one argument per line
            indent, head, rest = fm.group(1), fm.group(2), fm.group(3)
            close = _matching_paren("(" + rest, 0)
            args_text = rest[: close - 1] if close > 0 else rest
            tail = rest[close - 1 :] if close > 0 else ""
            first = out.add([f"{indent}{head}("], rawno)
            fkind = head.strip().split()[0] + " " + head.strip().split()[-1]
            open_region(first, fkind, rawno, True)
            args = [a.strip() for a in _split_top_level(args_text) if a.strip()]
            for arg in args:  # no trailing commas: an added last argument changes one line, not two
                out.add(_tokenize_symbols(f"{indent}    {arg}", _MLIR_SSA, make_ssa), rawno)
            out.add(_tokenize_symbols(f"{indent}{tail}", _MLIR_SSA, make_ssa), rawno)
            continue
        idx = out.add(_tokenize_symbols(line, _MLIR_SSA, make_ssa), rawno)
        stripped = line.strip()
        # structure: closers first ("} else {" closes then opens)
        if stripped.startswith("}"):
            # "} else {" ends the previous region on the line before and opens the next one here
            close_region(idx - 1 if stripped.endswith("{") else idx)
        if stripped.endswith("{"):
            if stripped.startswith("}"):
                kind = stripped.strip("{} ").split("(")[0].strip() or "region"
            elif stripped.startswith("module"):
                kind = "module"
            else:
                om = _MLIR_OP.match(line)
                kind = om.group(1) if om else "region"
                if kind.endswith(".func") or kind == "func.func":
                    nm = re.search(r"@[\w$.\-]+", stripped)
                    kind = f"{kind} {nm.group(0)}" if nm else kind
            open_region(idx, kind, rawno, kind.split()[0].endswith("func"))
    while stack:
        close_region(len(out.parts) - 1)


# ---------------------------------------------------------------------------------------------------------------
# LLIR

_LL_VALUE = re.compile(r"(?=[%#!])(?:%([A-Za-z_$.\-][\w$.\-]*|\d+)|(?<![\w\"])#(\d+)\b|(?<![\w\"])!(\d+)\b)")
_LL_LABEL = re.compile(r"^([A-Za-z_$.\-][\w$.\-]*|\d+):(\s|$)")
_LL_DROP = re.compile(
    r"^\s*(?:; ModuleID|source_filename\s*=|!llvm\.dbg\.|!\d+\s*=\s*(?:distinct\s+)?!DI|#dbg_|"
    r"(?:tail\s+)?call\s+void\s+@llvm\.dbg\.|declare\s+void\s+@llvm\.dbg\.)"
)
_LL_DBG_FLAG = re.compile(r'^\s*!\d+\s*=\s*!\{i32 \d+, !"(?:Debug Info Version|Dwarf Version)"')


def _drop_dbg(line: str) -> str:
    """Remove ``, !dbg !N`` attachments (and `` !dbg !N`` on ``define``)."""
    k = line.find("!dbg !")
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


_LL_DEFINE = re.compile(r"^(define\b[^@]*@[\w$.\-\"]+)\((.*)$")


def _ll_make(m: re.Match[str]) -> _Sym:
    return _ll_sym(m.group(0))


@lru_cache(maxsize=65536)
def _ll_sym(text: str) -> _Sym:
    m = _LL_VALUE.match(text)
    assert m is not None
    if m.group(1) is not None:
        name = m.group(1)
        if name.isdigit():
            return _Sym("val#", name, "%_", "%{n}")
        return _Sym("val", name, "%_", "%{stem}.{n}")
    if m.group(2) is not None:
        return _Sym("attr", m.group(2), "#_", "#{n}")
    return _Sym("md", m.group(3), "!_", "!{n}")


def _normalize_llir(out: _Builder, raw_lines: list[str], kernel_name: str | None) -> None:
    kpat = _kernel_pattern(kernel_name)
    func_start: int | None = None
    func_kind = ""
    block_start: int | None = None
    block_label = ""

    def end_block(last: int) -> None:
        nonlocal block_start
        if block_start is not None and last >= block_start:
            out.regions.append(Region(block_start, last, "block", block_label, anchor=False))
        block_start = None

    for rawno, line in enumerate(raw_lines, start=1):
        if _LL_DROP.match(line) or _LL_DBG_FLAG.match(line):
            continue
        line = _strip_comment(line, ";")
        line = _drop_dbg(line)
        line = line.rstrip()
        if not line.strip():
            continue
        line = _replace_kernel(line, kpat)
        lm = _LL_LABEL.match(line)
        if lm:  # a block label (also outside a define, for cut texts)
            end_block(len(out.parts) - 1)
            sym = _ll_make(_LL_VALUE.match("%" + lm.group(1)))  # type: ignore[arg-type]
            idx = out.add([_Sym(sym.cls, sym.name, sym.erased, sym.fmt, bare=True), ":"], rawno)
            block_start = idx if func_start is not None else None
            block_label = f"block at line {rawno}"
            continue
        dm = _LL_DEFINE.match(line)
        if dm and line.endswith("{"):
            head, rest = dm.group(1), dm.group(2)
            close = _matching_paren("(" + rest, 0)
            args_text = rest[: close - 1] if close > 0 else rest
            tail = rest[close - 1 :] if close > 0 else ""
            first = out.add([head + "("], rawno)
            args = [a.strip() for a in _split_top_level(args_text) if a.strip()]
            for arg in args:
                out.add(_tokenize_symbols(f"    {arg}", _LL_VALUE, _ll_make), rawno)
            out.add(_tokenize_symbols(tail, _LL_VALUE, _ll_make), rawno)
            func_start = first
            nm = re.search(r"@[\w$.\-]+|@\"[^\"]*\"", head)
            func_kind = f"define {nm.group(0) if nm else ''}".strip()
            block_start = None
            continue
        idx = out.add(_tokenize_symbols(line, _LL_VALUE, _ll_make), rawno)
        if line.startswith("}") and func_start is not None:
            end_block(idx - 1)
            out.regions.append(Region(func_start, idx, func_kind, func_kind, anchor=True, function=True))
            func_start = None
    if func_start is not None:
        end_block(len(out.parts) - 1)
        out.regions.append(Region(func_start, len(out.parts) - 1, func_kind, func_kind, anchor=True, function=True))


# ---------------------------------------------------------------------------------------------------------------
# PTX

_PTX_DROP = re.compile(r"^\s*(?:\.loc\b|\.file\b|//|\$L__(?:tmp|func_begin|func_end|info_string)\w*:|@@DWARF)")
_PTX_SYM = re.compile(r"(?=[%$])(?:%(hh|rd|rs|rq|fd|f|h|r|p|b)(\d+)\b|(\$L__BB\d+_\d+)\b)")
_PTX_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)")


def _ptx_make(m: re.Match[str]) -> _Sym:
    if m.group(1) is not None:
        cls = m.group(1)
        return _Sym("reg" + cls, m.group(2), f"%{cls}_", "%" + cls + "{n}")
    return _Sym("bb", m.group(3), "$L__BB_", "$L__BB{n}")


def _normalize_ptx(out: _Builder, raw_lines: list[str], kernel_name: str | None) -> None:
    kpat = _kernel_pattern(kernel_name)
    depth = 0
    func: tuple[int, str] | None = None
    pending_func: tuple[int, str] | None = None
    block_start: int | None = None
    block_label = ""
    for rawno, line in enumerate(raw_lines, start=1):
        if re.match(r"^\s*\.section\s+\.debug", line):
            break
        if _PTX_DROP.match(line):
            continue
        line = _strip_comment(line, "//").rstrip()
        if not line.strip():
            continue
        line = _replace_kernel(line, kpat)
        em = _PTX_ENTRY.match(line)
        parts = _tokenize_symbols(line, _PTX_SYM, _ptx_make)
        idx = out.add(parts, rawno)
        if em:
            pending_func = (idx, f".{em.group(1)} {em.group(2)}")
        stripped = line.strip()
        if re.match(r"^\$L__BB\d+_\d+:", stripped) and func is not None:
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


# ---------------------------------------------------------------------------------------------------------------
# SASS

_SASS_TRITON = re.compile(r"^([0-9a-fA-F-]{2}:[0-7-]:[0-7-]:[Y-]:[0-9a-fA-F])\t(.*)$")
_SASS_RAW = re.compile(r"^\s*/\*[0-9a-fA-F]{4,}\*/\s*(.*?)\s*;?\s*(?:/\*\s*0x([0-9a-fA-F]{16})\s*\*/)?\s*$")
_SASS_ENC = re.compile(r"^\s*/\*\s*0x([0-9a-fA-F]{16})\s*\*/\s*$")
_SASS_FUNC = re.compile(r"^\s*(?:Function\s*:\s*|\.text\.)([\w$.]+):?\s*$")
_SASS_LABEL_DEF = re.compile(r"^\s*`?(\.L_x_\d+|LBB\d+|\.L_\d+)`?:\s*$")
_SASS_ADDR = re.compile(r"\b0x[0-9a-fA-F]+\b")
_BRANCH_OPS = ("BRA", "BRX", "BSSY", "CALL", "JMP", "SSY", "PBK", "PCNT")


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


def _sass_label_sym(name: str) -> _Sym:
    name = name.strip("`")
    if name.startswith("LBB"):
        return _Sym("label", name, "L_", "LBB{n}")
    return _Sym("label", name, "L_", ".L_x_{n}")


def _sass_instr_parts(instr: str, bra_labels: dict[int, int] | None = None) -> list[str | _Sym]:
    """Literal text and symbols of one instruction: labels, and code addresses of branch-like instructions
    (``BRA 0x2d60`` in cuobjdump's raw form becomes the label ``get_sass`` would print, ``LBBn``)."""
    parts: list[str | _Sym] = []
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
                parts.append(_Sym("addr", m.group(0).lower(), "A_", "ADDR{n}"))
            p2 = m.end()
        if p2 < len(rest):
            parts.append(rest[p2:])
    elif rest:
        parts.append(rest)
    return parts


_SASS_LABEL_USE = re.compile(r"`?(\.L_x_\d+|\bLBB\d+|\.L_\d+)`?")
_SASS_OPCODE = re.compile(r"^\s*(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")
_SASS_RAW_BRA = re.compile(r"^\s*/\*([0-9a-fA-F]{4,})\*/\s*(?:@!?U?P\w+\s+)?BRA(?:\.U)?\s+0x([0-9a-fA-F]+)")


def _normalize_sass(out: _Builder, raw_lines: list[str], kernel_name: str | None) -> None:
    kpat = _kernel_pattern(kernel_name)
    func: tuple[int, str] | None = None
    block_start: int | None = None
    block_label = ""
    pending: tuple[int, str] | None = None  # raw-form instruction waiting for its control word: (line idx, rawno)
    # cuobjdump's raw form: BRA targets become LBBn labels numbered by first reference, as get_sass numbers them
    bra_labels: dict[int, int] = {}
    for line in raw_lines:
        bm = _SASS_RAW_BRA.match(line)
        if bm:
            bra_labels.setdefault(int(bm.group(2), 16), len(bra_labels))

    def close_func(last: int) -> None:
        nonlocal func, block_start
        if block_start is not None and last >= block_start:
            out.regions.append(Region(block_start, last, "block", block_label, anchor=False))
        block_start = None
        if func is not None and last >= func[0]:
            out.regions.append(Region(func[0], last, func[1], func[1], anchor=True, function=True))
        func = None

    for rawno, line in enumerate(raw_lines, start=1):
        s = line.strip()
        if not s or s.startswith("//") or s.startswith(".headerflags") or s.startswith("....."):
            continue
        em = _SASS_ENC.match(line)
        if em:
            if pending is not None and out.columns is not None:
                out.columns[pending[0]] = _sass_ctrl(em.group(1))
                pending = None
            continue
        fm = _SASS_FUNC.match(line)
        if fm:
            close_func(len(out.parts) - 1)
            name = _replace_kernel(fm.group(1), kpat)
            idx = out.add([f"Function:{name}"], rawno)
            func = (idx, f"Function:{name}")
            continue
        lm = _SASS_LABEL_DEF.match(line)
        if lm:
            idx = out.add([_sass_label_sym(lm.group(1)), ":"], rawno)
            if block_start is not None:
                out.regions.append(Region(block_start, idx - 1, "block", block_label, anchor=False))
            block_start = idx
            block_label = f"{lm.group(1)} (line {rawno})"
            continue
        tm = _SASS_TRITON.match(line)
        if tm:
            instr = _replace_kernel(tm.group(2).strip(), kpat)
            out.add(_sass_instr_parts(instr), rawno, tm.group(1))
            continue
        rm = _SASS_RAW.match(line)
        if rm:
            am = re.match(r"^\s*/\*([0-9a-fA-F]{4,})\*/", line)
            addr = int(am.group(1), 16) if am else -1
            if addr in bra_labels:
                idx = out.add([_sass_label_sym(f"LBB{bra_labels[addr]}"), ":"], rawno)
                if block_start is not None:
                    out.regions.append(Region(block_start, idx - 1, "block", block_label, anchor=False))
                block_start = idx
                block_label = f"LBB{bra_labels[addr]} (line {rawno})"
            instr = rm.group(1).strip()
            if instr and not instr.endswith(";"):
                instr += ";"
            instr = re.sub(r"\s+;$", ";", instr)
            idx = out.add(_sass_instr_parts(_replace_kernel(instr, kpat), bra_labels), rawno, "")
            pending = (idx, str(rawno))
            continue
        if s.startswith("code for") or s.startswith("Fatbin") or s.startswith("====") or s.startswith("arch ="):
            continue
        if s.startswith("code version") or s.startswith("host =") or s.startswith("compile_size"):
            continue
        out.add([_replace_kernel(s, kpat)], rawno)
    close_func(len(out.parts) - 1)
