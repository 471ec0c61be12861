"""TTIR/TTGIR (MLIR, printed by ``str(module)`` in ``triton/compiler/compiler.py``): locations dropped, SSA values
renumbered by first appearance keeping Python-derived stems, layout aliases renamed by content, signatures split."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from irdiff.normalize.builder import Builder, BulkBuilder, Sym, Symbols, stem_of
from irdiff.normalize.model import Region
from irdiff.normalize.text import (
    kernel_pattern,
    matching_paren,
    replace_kernel,
    split_strings,
    split_top_level,
    strip_locs,
)

# A location alias definition (dropped):
#   #loc84 = loc(callsite(#loc8 at #loc3))
_LOC_DEF = re.compile(r"^\s*#loc[\w$.\-]* = loc\(")
# An attribute alias definition (renamed by content):
#   #blocked = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
_ALIAS_DEF = re.compile(r"^#([A-Za-z_][\w$\-]*) = (.*)$")
# A use of an alias inside an op's type (one group with its ``#``, for ``re.split``):
#   %acc_63 = ... -> (tensor<128x32x!tt.ptr<f16>, #blocked1>, ...)
_ALIAS_USE = re.compile(r"(#[A-Za-z_][\w$\-]*)")
# SSA values, named by Triton (``%a_ptrs_61``), numbered (``%15``) or block arguments (``%arg9``):
#   %acc:3 = scf.for %k0 = %c0_i32 to %K step %c32_i32 iter_args(%a_ptrs_61 = %a_ptrs_32, ...
_MLIR_SSA = re.compile(r"%([A-Za-z_$.\-][\w$.\-]*|\d+)")
# A block argument's name (after its ``%``):
#   arg9
_ARG = re.compile(r"arg\d+")


def _make_ssa(m: re.Match[str]) -> Sym:
    name = m.group(1)
    if name.isdigit():
        return Sym("ssa#", name, "%_", "%{n}")
    if _ARG.fullmatch(name):
        return Sym("ssa#arg", name, "%_", "%arg{n}")
    return Sym("ssa", name, "%_", "%{stem}.{n}")


def _quick_ssa(s: str) -> tuple[str, str, str, str, str]:
    """:func:`_make_ssa` of a value's text without a Sym (see :class:`~irdiff.normalize.builder.Symbols`)."""
    name = s[1:]
    if name.isdigit():
        return ("ssa#", name, "", "%", "%_")
    if name.startswith("arg") and _ARG.fullmatch(name):
        return ("ssa#arg", name, "", "%arg", "%_")
    stem = stem_of("ssa", name)
    return ("ssa", name, stem, "%" + stem + ".", "%_")


SYMBOLS = Symbols(_MLIR_SSA, _make_ssa, r"%(?:[A-Za-z_$.\-][\w$.\-]*|\d+)", quick=_quick_ssa)
# The op name of a line that opens a region (``scf.for`` here):
#   %acc:3 = scf.for %k0 = %c0_i32 to %K step %c32_i32 iter_args(...) -> (...) {
_MLIR_OP = re.compile(
    r"""
    ^\s*(?:%[^=]*=\s*)?   # results: %acc:3 =
    ([A-Za-z_][\w.]*)     # the op: scf.for
    """,
    re.X,
)
# A function signature (split one argument per line):
#   tt.func public @copy_annotated(%x_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32} loc("x_ptr"(#loc)), ...) {
_FUNC_LINE = re.compile(
    r"""
    ^(\s*)                                  # indent
    ((?:tt|llvm)\.func\b[^@(]*@[\w$.\-]+)  # tt.func public @copy_annotated
    \((.*)$                                 # (: the arguments and the rest
    """,
    re.X,
)


# An alias body without parameters (the alias keeps its name):
#   #smem = #ttg.shared_memory
_ALIAS_NO_PARAMS = re.compile(r"#[\w.]+")
# An alias body with ``key = value`` fields (named from them: ``#shared_v8_p2_m4_o1x0``):
#   #shared = #ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
_ALIAS_FIELDS = re.compile(r"#[\w.]+<\{(.*)\}>")
# Field values that go into a content-derived name: integers (``vec = 8``, ``"ttg.num-warps" = 4 : i32``)
#   8
#   4 : i32
_INT_FIELD = re.compile(r"-?\d+(?:\s*:\s*i\d+)?")
# ... and integer lists (``order = [1, 0]``):
#   [1, 0]
_INT_LIST_FIELD = re.compile(r"\[\s*(-?\d+\s*(,\s*-?\d+\s*)*)?\]")


def _alias_name(stem: str, body: str) -> str:
    """Content-derived alias name: ``#blocked_s1x8_t2x16_w4x1_o1x0`` from the attribute's fields, else a hash."""
    if _ALIAS_NO_PARAMS.fullmatch(body.strip()):
        return stem
    m = _ALIAS_FIELDS.fullmatch(body.strip())
    desc: list[str] = []
    ok = m is not None
    if m is not None and m.group(1).strip():
        for item in split_top_level(m.group(1)):
            kv = item.split("=", 1)
            if len(kv) != 2:
                ok = False
                break
            key, val = kv[0].strip().strip('"'), kv[1].strip()
            if _INT_FIELD.fullmatch(val):
                v = val.split(":")[0].strip()
            elif _INT_LIST_FIELD.fullmatch(val):
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


# Dialect prefixes Triton renamed between releases, mapped to today's spelling so IR of two releases aligns op by op
# (a rename is not a change). Triton 3.2 prints (matmul, sm90)
#   module attributes {"triton_gpu.num-ctas" = 1 : i32, "triton_gpu.num-warps" = 4 : i32, triton_gpu.target = "cuda:90"
#   %67 = triton_gpu.local_alloc  : () -> !tt.memdesc<4x128x32xf16, #shared, #triton_gpu.shared_memory, mutable>
#   %162 = triton_nvidia_gpu.warp_group_dot %159, %161, %arg10 {isAsync = true} : !tt.memdesc<128x32xf16, ...
# where 3.3 and later print ``ttg.``, ``ttng.`` and ``!ttg.memdesc``.
RELEASE_RENAMES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\btriton_nvidia_gpu\."), "ttng."),
    (re.compile(r"\btriton_gpu\."), "ttg."),
    (re.compile(r"!tt\.memdesc<"), "!ttg.memdesc<"),
)


def release_spelling(line: str) -> str:
    """``line`` with dialect prefixes of older Triton releases renamed to today's (:data:`RELEASE_RENAMES`)."""
    if "triton_" not in line and "!tt.memdesc" not in line:
        return line
    for pat, new in RELEASE_RENAMES:
        line = pat.sub(new, line)
    return line


def normalize_mlir(out: Builder | BulkBuilder, raw_lines: Sequence[str], kernel_name: str | None) -> None:
    out.use(SYMBOLS)
    # read once, in order (a huge text's lines are split a piece at a time: irdiff.normalize.text.RawLines)
    lines = (release_spelling(ln) if "triton_" in ln or "!tt.memdesc" in ln else ln for ln in raw_lines)
    kpat = kernel_pattern(kernel_name)
    uses: dict[str, str] = {}  # "#blocked1" -> "#" + its new name (aliases, as the uses are spelled)
    used_names: dict[str, str] = {}  # new name -> body (collision check)

    def alias_sub(s: str) -> str:
        if "#" not in s:
            return s
        acc: list[str] = []
        for is_str, seg in split_strings(s):
            if not is_str and "#" in seg:  # _ALIAS_USE.sub, with the names mapped in C
                parts = _ALIAS_USE.split(seg)
                parts[1::2] = map(uses.get, parts[1::2], parts[1::2])
                seg = "".join(parts)
            acc.append(seg)
        return "".join(acc)

    stack: list[tuple[int, str, str, bool]] = []  # (start line, kind, label, function)

    def open_region(idx: int, kind: str, rawno: int, function: bool) -> None:
        label = kind if function else f"{kind} (line {rawno})"
        stack.append((idx, kind, label, function))

    def close_region(idx: int) -> None:
        if stack:
            start, kind, label, function = stack.pop()
            if kind != "module":
                out.regions.append(Region(start, idx, kind, label, anchor=True, function=function))

    loc_def, add_text = _LOC_DEF.match, out.add_text
    kname = kernel_name or None
    for rawno, line in enumerate(lines, start=1):
        if loc_def(line):
            continue
        line = strip_locs(line).rstrip()
        if not line:
            continue
        if kname is not None and kname in line:
            line = replace_kernel(line, kpat)
        am = _ALIAS_DEF.match(line) if line[0] == "#" else None
        if am and not am.group(1).startswith("loc"):
            stem = re.sub(r"\d+$", "", am.group(1)) or am.group(1)
            body = alias_sub(am.group(2))
            new = _alias_name(stem, body)
            if used_names.get(new, body) != body:
                new = f"{new}_{hashlib.sha1(body.strip().encode()).hexdigest()[:6]}"
            used_names[new] = body
            uses["#" + am.group(1)] = "#" + new
            out.add([f"#{new} = {body}"], rawno)
            continue
        line = alias_sub(line)
        if "{" not in line and "}" not in line:  # most lines: no signature, region opener or closer
            add_text(line, rawno)
            continue
        fm = _FUNC_LINE.match(line)
        if fm and fm.group(3).strip() not in ("", ")") and "{" in line:
            # split the signature: one argument per line
            indent, head, rest = fm.group(1), fm.group(2), fm.group(3)
            close = matching_paren("(" + rest, 0)
            args_text = rest[: close - 1] if close > 0 else rest
            tail = rest[close - 1 :] if close > 0 else ""
            first = out.add([f"{indent}{head}("], rawno)
            fkind = head.strip().split()[0] + " " + head.strip().split()[-1]
            open_region(first, fkind, rawno, True)
            args = [a.strip() for a in split_top_level(args_text) if a.strip()]
            for arg in args:  # no trailing commas: an added last argument changes one line, not two
                out.add_text(f"{indent}    {arg}", rawno)
            out.add_text(f"{indent}{tail}", rawno)
            continue
        idx = out.add_text(line, rawno)
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
        close_region(len(out) - 1)
