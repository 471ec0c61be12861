"""IR line → Python source line, from the location info Triton leaves in each raw stage text.

Used by the HTML report (click an IR line, the source line lights up) and the JSON report. Every function maps a
*raw* stage text (as saved in the bundle) to ``{raw line (1-based): Python line (1-based)}`` for one source file,
the file that defined the kernel (``VariantResult.metadata["source_path"]``). Formats read, checked on Triton 3.6
and 3.9 output:

* TTIR/TTGIR (MLIR, ``str(module)`` in ``triton/compiler/compiler.py``): an op's location is the last ``loc(...)``
  on its line; ``#locN = loc(...)`` lines define aliases. Locations nest: ``loc("/path/file.py":50:1)`` (file),
  ``loc("acc"(#loc12))`` (a name around a location), ``loc(callsite(#loc7 at #loc155))`` (an inlined call:
  callee first), ``loc(fused[...])`` and ``loc(unknown)``.
* LLIR (``make_llir``): ``, !dbg !12`` on an instruction; ``!12 = !DILocation(line: 36, column: 11, scope: !13,
  inlinedAt: !14)``; scopes (``DISubprogram``, ``DILexicalBlockFile``) name ``file: !1``;
  ``!1 = !DIFile(filename: "matmul.py", directory: "/work/...")``.
* PTX (``make_ptx``): ``.loc 1 36 11, function_name $L__info_string0, inlined_at 1 117 5`` applies to the
  instructions after it; ``.file 1 "/work/.../matmul.py"`` names file 1.
* SASS: ``//## File "/path/file.py", line 13 inlined at "/path/file.py", line 20`` comments (``nvdisasm -gi``),
  when present, apply to the instructions after them. Triton's own ``get_sass`` text has none, so SASS usually maps
  to nothing.

A location chain (innermost callee first, then its callers) resolves to the first frame in the source file, so a
line inlined from ``triton/language/standard.py`` maps to the kernel line that called it. Files are matched by full
path, or by file name when the bundle was made elsewhere. Nothing here raises on odd text: unparseable locations
map to nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from irdiff import stages
from irdiff.normalize.text import matching_paren, split_top_level

__all__ = ["source_map", "stages_with_locations"]

Frame = tuple[str, int]  # (file path as written in the IR, 1-based line)


def stages_with_locations() -> tuple[str, ...]:
    """Declared stages whose raw lines map to Python lines (``Stage.locations`` set; :mod:`irdiff.stages`)."""
    return tuple(s.name for s in stages.text_stages() if s.locations in _MAPPERS)


# Example:
#   #loc195 = loc(callsite(#loc147 at #loc3))
_MLIR_LOC_DEF = re.compile(r"^\s*(#loc\d*)\s*=\s*loc\((.*)\)\s*$")
# Example (3.6 and 3.9 alike):
#   "/work/main/irdiff/suites/matmul.py":99:1
_MLIR_FILE_LOC = re.compile(r'^"((?:[^"\\]|\\.)*)":(\d+):\d+')
# Example (a NameLoc around a child location):
#   "acc"(#loc179)
_MLIR_NAME_LOC = re.compile(r'^"(?:[^"\\]|\\.)*"\((.*)\)$', re.S)
# Example:
#   !12 = !DILocation(line: 36, column: 11, scope: !13, inlinedAt: !14)
_LL_META = re.compile(
    r"""
    ^(![\w.]+)\s*=\s*(?:distinct\s+)?  # !12 =
    !(\w+)\((.*)\)\s*$                 # !DILocation(line: 36, ...): kind and fields
    """,
    re.X,
)
# Example:
#   %5 = add i32 %3, %4, !dbg !12
_LL_DBG = re.compile(r"!dbg\s+(![\w.]+)")
# Example:
#   .loc	1 36 11, function_name $L__info_string0, inlined_at 1 117 5 // matmul.py:36:11
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+(.*)$")
# Example:
#   .loc	1 36 11, function_name $L__info_string0, inlined_at 1 117 5
_PTX_INLINED = re.compile(
    r"""
    inlined_at\s+(\d+)\s+(\d+)  # inlined_at 1 117: file and line of the caller
    \s+\d+                      # column
    """,
    re.X,
)
# Example:
#   .file	1 "/work/main/irdiff/suites/matmul.py"
_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
# Example:
#   //## File "/home/user/seed1.py", line 13 inlined at "/home/user/seed1.py", line 20
_SASS_FILE = re.compile(r'(?:File|inlined at) "([^"]*)", line (\d+)')
# Where a SASS listing starts a function (or, in nvdisasm's, any section): Triton's ``get_sass`` prints
# ``Function:name`` (``triton/tools/disasm.py``); ``cuobjdump -sass`` ``Fatbin elf code:`` per fatbin member, then
# ``\tcode for sm_86`` and ``\t\tFunction : name`` (indented, spaced); ``nvdisasm`` a
# ``//--------------------- .text.name ----`` rule before each section:
#   Function:copy_rows
#           Function : copy_rows
#       code for sm_80
#   Fatbin elf code:
#       //--------------------- .text.copy_rows --------------------------
_SASS_FUNCTION = re.compile(r"\s*(?:Function\s*:|code for sm_|Fatbin \w+ code:|//-{4,} \.)")


def _same_file(path: str, source_path: str) -> bool:
    if not path or not source_path:
        return False
    if path == source_path or os.path.normpath(path) == os.path.normpath(source_path):
        return True
    return os.path.basename(path) == os.path.basename(source_path)


def _pick(frames: list[Frame], source_path: str) -> int | None:
    for path, line in frames:
        if line > 0 and _same_file(path, source_path):
            return line
    return None


# ------------------------------------------------------------------------------------------------ MLIR


def _balanced(text: str, start: int) -> int:
    """Index just past the ``)`` closing the ``(`` at ``start`` (brackets counted, quotes respected), or -1."""
    close = matching_paren(text, start, "([", ")]")
    return close + 1 if close >= 0 else -1


def _last_loc(line: str) -> str | None:
    """Body of the last top-level ``loc(...)`` on an MLIR line (the op's own location), or None."""
    body = None
    i = 0
    while True:
        j = line.find("loc(", i)
        if j < 0:
            return body
        if j > 0 and (line[j - 1].isalnum() or line[j - 1] in "_#"):
            i = j + 4
            continue
        end = _balanced(line, j + 3)
        if end < 0:
            return body
        body = line[j + 4 : end - 1]
        i = end


class _MlirLocs:
    def __init__(self, text: str) -> None:
        self.defs: dict[str, str] = {}
        for raw in text.splitlines():
            if raw.startswith("#loc"):
                m = _MLIR_LOC_DEF.match(raw)
                if m:
                    self.defs[m.group(1)] = m.group(2)
        self.memo: dict[str, list[Frame]] = {}

    def frames(self, body: str, depth: int = 0) -> list[Frame]:
        body = body.strip()
        if depth > 64 or not body:
            return []
        if body in self.memo:
            return self.memo[body]
        out: list[Frame] = []
        if body.startswith("#loc"):
            ref = re.match(r"#loc\d*", body)
            if ref and ref.group(0) in self.defs:
                out = self.frames(self.defs[ref.group(0)], depth + 1)
        elif body.startswith("callsite("):
            end = _balanced(body, len("callsite"))
            inner = body[len("callsite(") : end - 1] if end > 0 else ""
            parts = split_top_level(inner, " at ")
            for p in parts:
                out.extend(self.frames(p, depth + 1))
        elif body.startswith("fused"):
            k = body.find("[")
            end = _balanced(body, k) if k >= 0 else -1
            if end > 0:
                for p in split_top_level(body[k + 1 : end - 1], ","):
                    out.extend(self.frames(p, depth + 1))
        elif body.startswith("loc("):
            end = _balanced(body, 3)
            out = self.frames(body[4 : end - 1], depth + 1) if end > 0 else []
        else:
            m = _MLIR_FILE_LOC.match(body)
            if m:
                out = [(m.group(1).replace('\\"', '"'), int(m.group(2)))]
            else:
                n = _MLIR_NAME_LOC.match(body)
                if n:
                    out = self.frames(n.group(1), depth + 1)
        self.memo[body] = out
        return out


def _map_mlir(text: str, source_path: str) -> dict[int, int]:
    locs = _MlirLocs(text)
    out: dict[int, int] = {}
    for no, raw in enumerate(text.splitlines(), 1):
        if raw.startswith("#loc") or "loc(" not in raw:
            continue
        body = _last_loc(raw)
        if body is None:
            continue
        line = _pick(locs.frames(body), source_path)
        if line is not None:
            out[no] = line
    return out


# ------------------------------------------------------------------------------------------------ LLIR


def _ll_fields(body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in split_top_level(body, ", "):
        k, sep, v = part.partition(":")
        if sep:
            out[k.strip()] = v.strip()
    return out


def _map_llir(text: str, source_path: str) -> dict[int, int]:
    meta: dict[str, tuple[str, dict[str, str]]] = {}
    lines = text.splitlines()
    for raw in lines:
        if raw.startswith("!"):
            m = _LL_META.match(raw)
            if m:
                meta[m.group(1)] = (m.group(2), _ll_fields(m.group(3)))

    def unquote(s: str) -> str:
        return s[1:-1] if len(s) >= 2 and s[0] == s[-1] == '"' else s

    def file_of(ref: str, depth: int = 0) -> str:
        node = meta.get(ref)
        if node is None or depth > 32:
            return ""
        kind, f = node
        if kind == "DIFile":
            name, d = unquote(f.get("filename", "")), unquote(f.get("directory", ""))
            return name if os.path.isabs(name) or not d else os.path.join(d, name)
        if "file" in f:
            return file_of(f["file"], depth + 1)
        if "scope" in f:
            return file_of(f["scope"], depth + 1)
        return ""

    memo: dict[str, list[Frame]] = {}

    def frames(ref: str, depth: int = 0) -> list[Frame]:
        if ref in memo:
            return memo[ref]
        node = meta.get(ref)
        out: list[Frame] = []
        if node is not None and node[0] == "DILocation" and depth < 64:
            f = node[1]
            try:
                out.append((file_of(f.get("scope", "")), int(f.get("line", "0"))))
            except ValueError:
                pass
            if "inlinedAt" in f:
                out.extend(frames(f["inlinedAt"], depth + 1))
        memo[ref] = out
        return out

    result: dict[int, int] = {}
    for no, raw in enumerate(lines, 1):
        if "!dbg" not in raw or raw.startswith("!"):
            continue
        m = _LL_DBG.search(raw)
        if m:
            line = _pick(frames(m.group(1)), source_path)
            if line is not None:
                result[no] = line
    return result


# ------------------------------------------------------------------------------------------------ PTX / SASS


def _is_code(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith(("//", ".loc", ".file", "$L__", "}", "{", ".section", "@@"))


def _map_ptx(text: str, source_path: str) -> dict[int, int]:
    lines = text.splitlines()
    files: dict[str, str] = {}
    for raw in lines:
        if ".file" in raw:
            m = _PTX_FILE.match(raw)
            if m:
                files[m.group(1)] = m.group(2)
    out: dict[int, int] = {}
    current: int | None = None
    for no, raw in enumerate(lines, 1):
        if ".section" in raw and raw.lstrip().startswith(".section"):
            break  # DWARF sections follow; nothing there is kernel code
        m = _PTX_LOC.match(raw)
        if m:
            frames = [(files.get(m.group(1), ""), int(m.group(2)))]
            for fi, ln in _PTX_INLINED.findall(m.group(3)):
                frames.append((files.get(fi, ""), int(ln)))
            current = _pick(frames, source_path)
            continue
        if current is not None and _is_code(raw):
            out[no] = current
    return out


def _map_sass(text: str, source_path: str) -> dict[int, int]:
    out: dict[int, int] = {}
    current: int | None = None
    for no, raw in enumerate(text.splitlines(), 1):
        if "//##" in raw:
            frames = [(p, int(n)) for p, n in _SASS_FILE.findall(raw)]
            current = _pick(frames, source_path)
            continue
        if _SASS_FUNCTION.match(raw):
            current = None  # a new function or section: what follows has no line until its own ``//##``
            continue
        if current is not None and raw.strip() and not raw.strip().startswith("//"):
            out[no] = current
    return out


def _map_python(text: str, source_path: str) -> dict[int, int]:
    return {no: no for no in range(1, len(text.splitlines()) + 1)}


# By location format (``Stage.locations`` in :mod:`irdiff.stages`).
_MAPPERS: dict[str, Callable[[str, str], dict[int, int]]] = {
    "python": _map_python,
    "mlir": _map_mlir,
    "llir": _map_llir,
    "ptx": _map_ptx,
    "sass": _map_sass,
}


def source_map(stage: str, raw_text: str, source_path: str) -> dict[int, int]:
    """Map each raw line of a stage text to the line of ``source_path`` it was compiled from.

    :param stage: a declared stage (:mod:`irdiff.stages`) whose ``locations`` format is known; others map to nothing.
    :param raw_text: the stage text exactly as saved in the bundle (``VariantResult.text(stage)``), *not* the
        normalized text: normalization drops the location info.
    :param source_path: path of the kernel's Python file as the compiler saw it
        (``VariantResult.metadata["source_path"]``).
    :returns: ``{raw line: source line}``, both 1-based; lines without a location in that file are absent.
    """
    st = stages.get(stage)
    mapper = _MAPPERS.get(st.locations or "") if st is not None else None
    if mapper is None or not raw_text:
        return {}
    try:
        return mapper(raw_text, source_path)
    except (RecursionError, ValueError, IndexError):
        return {}
