"""A cache of computed comparisons: the stage diffs and the diagnosis of one pair, stored as data (not rendered).

:func:`irdiff.pipeline.build_comparison` normalizes, aligns and diagnoses a pair of variants; on a fully cached
main job that is most of the time left (about 70 % of 1.1 s for ``matmul`` on sm86). The result only depends on
what the pipeline reads and on the code that computes it, so it is stored under :func:`comparison_key`:

* the pair's content (:func:`variant_digest` of each side: its record as the pipeline sees it, less the fields
  that only say where and how it was loaded, and the sha256 of every stage, log and pass file it names), the
  variant names and the bundle's ``runs`` (the time and counter findings read them);
* every option that changes the result: the stages compared (in order), ``raw`` and ``context``, and the stages
  declared (:mod:`irdiff.stages`: a stage declared at run time changes what the diagnosis reads);
* :func:`sources_digest`: every file of the ``irdiff`` package except the renderers and the command line (the
  renderers run every time, so theme, colour, width and format options are never part of the key), plus the
  interpreter and the alignment library (rapidfuzz) it runs with.

An entry is ``<cache>/comparisons/<key>.json.z``: zlib-compressed JSON (its Adler-32 checksum catches a truncated
or damaged file), written atomically (:func:`irdiff.bundle.atomic_write`: readers see a whole entry or none; two
writers of one key write the same bytes). Entries are untrusted on read: :func:`load` checks every field's type,
every index against the lines it points into and every span against its text, and anything else — another format,
another key, a damaged file — is a miss (recomputed and rewritten), never an error. The directory is kept under
:data:`MAX_BYTES` by removing the least recently written entries.

Not cached: comparisons whose diagnosis failed (the note is recomputed), and stages aligned by the linear fallback
for huge functions (their symbol lists are computed lazily and would cost more to store than to recompute).

**Rendered outputs.** A repeated command (the same pair, options and terminal) prints what it printed before, so the
terminal output is kept too: ``<cache>/outputs/<key>.txt.z`` (:func:`output_key`, :func:`load_output`,
:func:`store_output`), which spares a warm run decoding the comparison and rendering it. Its key adds to the
comparison's key everything the renderer reads beyond the comparison: the render options as given (colour, palette,
width, layout, stages shown, where each side came from, the header's title), the bundle as loaded (manifest fields,
every variant's record with its directory and cache flag), the whole ``irdiff`` package's sources (renderers and
command line included: :func:`output_sources_digest`), the installed pygments (the syntax colours) and the working
directory. An entry is untrusted on read like any other: its text must be free of terminal controls (:func:`clean
<irdiff.textsafe.clean>` leaves it unchanged once the colour escapes ``ESC[…m`` are taken out, and a plain entry has
none), or it is a miss. The directory is kept under :data:`OUTPUT_MAX_BYTES`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import operator
import os
import re
import sys
import zlib
from collections.abc import Sequence
from dataclasses import fields
from itertools import chain, compress
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from irdiff.bundle import Bundle, VariantResult

if TYPE_CHECKING:
    from irdiff.align import DiffLine, Hunk, StageDiff
    from irdiff.diagnose.model import Diagnosis
    from irdiff.normalize.model import NormalizedStage

__all__ = ["FORMAT", "MAX_BYTES", "OUTPUT_FORMAT", "OUTPUT_MAX_BYTES", "CachedOutput", "comparison_key", "load",
           "load_output", "output_key", "output_sources_digest", "store", "store_output", "sources_digest",
           "variant_digest"]  # fmt: skip

FORMAT = "irdiff.comparison-cache/2"
MAX_BYTES = 512 * 1024 * 1024  # the directory's size bound (entries are ~0.3-1 MB compressed for a built-in suite)
OUTPUT_FORMAT = "irdiff.output-cache/1"
OUTPUT_MAX_BYTES = 64 * 1024 * 1024  # rendered outputs: ~10-40 kB compressed each (a whole --stage all: ~0.3 MB)

# Parts of the package that do not change a comparison: they run after it (renderers) or before it (command line).
_NOT_SOURCES = ("render", "cli.py", "__main__.py")
# VariantResult fields that say where or how a record was loaded, not what was compiled.
_VOLATILE = ("cache_hit", "directory")
_TAGS = ("equal", "delete", "insert", "replace")
_TAG_OF = {t[0]: t for t in _TAGS}  # rows store a tag as its first letter


class Invalid(ValueError):
    """An entry that is not a well-formed comparison of this format (a miss)."""


def cache_root() -> Path:
    """``<irdiff cache>/comparisons`` (:func:`irdiff.compile.cache_dir`: ``$IRDIFF_CACHE_DIR`` or
    ``~/.cache/irdiff``)."""
    from irdiff.compile import cache_dir

    return cache_dir() / "comparisons"


# The fields this codec writes and reads, per class: a class that gains or loses a field makes every entry a miss
# (:func:`_known_layout`) until the codec handles it, so a new field is never silently left at its default.
_LAYOUT = {
    "NormalizedStage": ("stage", "lines", "shapes", "raw_line", "columns", "raw", "symbols", "regions", "fallback",
                        "symbol_spans"),
    "Region": ("start", "end", "kind", "label", "anchor", "function"),
    "Span": ("start", "end"),
    "DiffLine": ("tag", "a", "b", "a_text", "b_text", "a_spans", "b_spans"),
    "Hunk": ("header", "a_start", "a_len", "b_start", "b_len", "lines"),
    "StageDiff": ("stage", "a", "b", "hunks", "added", "removed", "lines", "notes"),
    "Evidence": ("variant", "stage", "line", "text"),
    "Finding": ("id", "severity", "title", "explanation", "evidence", "causes", "remedy", "stage", "predicts",
                "instructions"),
    "Diagnosis": ("a", "b", "findings", "identical", "facts", "verdict", "notes", "unexplained", "source_changes"),
}  # fmt: skip


def _known_layout() -> bool:
    """Every class of a comparison has exactly the fields of :data:`_LAYOUT`."""
    from irdiff.align import DiffLine, Hunk, Span, StageDiff
    from irdiff.diagnose.model import Diagnosis, Evidence, Finding
    from irdiff.normalize.model import NormalizedStage, Region

    classes = (NormalizedStage, Region, Span, DiffLine, Hunk, StageDiff, Evidence, Finding, Diagnosis)
    return all(tuple(f.name for f in fields(c)) == _LAYOUT[c.__name__] for c in classes)


_SOURCES: str | None = None
_OUTPUT_SOURCES: str | None = None


@functools.lru_cache(maxsize=1)  # walked once per process: sources_digest and output_sources_digest both read it
def _package_files() -> tuple[str, list[str], list[str]]:
    """The package's root directory and its files (relative paths, sorted): those :func:`sources_digest` covers,
    and the others (:data:`_NOT_SOURCES`: renderers, command line)."""
    root = os.path.dirname(os.path.realpath(__file__))
    files: list[str] = []
    others: list[str] = []
    for d, dirs, names in os.walk(root):  # strings, not Paths: sorting ~500 Paths alone cost ~10 ms
        rel_dir = os.path.relpath(d, root)
        dirs[:] = [x for x in dirs if x != "__pycache__"]
        outside = rel_dir != "." and rel_dir.split(os.sep)[0] in _NOT_SOURCES
        for name in names:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            (others if outside or (rel_dir == "." and name in _NOT_SOURCES) else files).append(rel)
    return root, sorted(files), sorted(others)


def _hash_files(h: Any, root: str, files: list[str]) -> None:
    for rel in files:
        p = os.path.join(root, rel)
        if not os.path.isfile(p):
            continue
        with open(p, "rb") as f:
            data = f.read()
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)


def _installed(h: Any, name: str) -> None:
    """An installed package's identity without importing it: its file's path, size and mtime."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        st = os.stat(spec.origin)
        h.update(f"{name}\0{spec.origin}\0{st.st_size}\0{st.st_mtime_ns}".encode())


def sources_digest() -> str:
    """sha256 over every file of the ``irdiff`` package except :data:`_NOT_SOURCES` (path and content), the
    interpreter (``sys.version``, ``sys.executable``) and the installed rapidfuzz (the line matcher: its file's
    size and mtime). Computed once per process (about 5 ms)."""
    global _SOURCES
    if _SOURCES is None:
        root, files, _others = _package_files()
        h = hashlib.sha256(f"{FORMAT}\0{sys.version}\0{sys.executable}\0".encode())
        _hash_files(h, root, files)
        _installed(h, "rapidfuzz")
        _SOURCES = h.hexdigest()
    return _SOURCES


def output_sources_digest() -> str:
    """:func:`sources_digest` plus the files it leaves out (renderers, command line: every file of the package)
    and the installed pygments (the syntax colours of a coloured output); what a rendered output is computed
    with."""
    global _OUTPUT_SOURCES
    if _OUTPUT_SOURCES is None:
        root, _files, others = _package_files()
        h = hashlib.sha256(f"{OUTPUT_FORMAT}\0{sources_digest()}\0".encode())
        _hash_files(h, root, others)
        _installed(h, "pygments")
        _OUTPUT_SOURCES = h.hexdigest()
    return _OUTPUT_SOURCES


def variant_digest(v: VariantResult) -> str:
    """sha256 of what the pipeline reads of one variant: its record (:meth:`VariantResult.to_json` less
    :data:`_VOLATILE`) and the content of every stage, log and pass file it names.

    :raises irdiff.bundle.BundleError: a named file lies outside the variant directory.
    """
    from irdiff.bundle import confined

    record = {k: x for k, x in v.to_json().items() if k not in _VOLATILE}
    h = hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode())
    for name in sorted({*v.stages, *v.logs}):
        h.update(f"\0{name}\0".encode())
        h.update(v.text(name).encode("utf-8", "surrogatepass"))
    for rel in v.passes:
        p = confined(Path(v.directory), rel) if v.directory else None
        h.update(f"\0pass\0{rel}\0".encode())
        if p is not None and p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def comparison_key(bundle: Bundle, a: str, b: str, stages: Sequence[str], raw: bool, context: int) -> str:
    """The cache key of ``build_comparison(bundle, a, b, stages, raw, context)`` (see the module docstring).

    :raises irdiff.bundle.BundleError: as :meth:`Bundle.compiled_variant` and :func:`variant_digest`.
    """
    from irdiff import stages as declared

    va, vb = bundle.compiled_variant(a), bundle.compiled_variant(b)
    ident = [FORMAT, sources_digest(), a, b, list(stages), bool(raw), int(context),
             variant_digest(va), variant_digest(vb), bundle.runs,
             [repr(s) for s in declared.text_stages()]]  # fmt: skip
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:40]


def _path(key: str) -> Path:
    return cache_root() / f"{key}.json.z"


# ---------------------------------------------------------------------------------------------------- writing
#
# A row is ``[tag, a, b, a_text, b_text, a_spans, b_spans]`` with spans flattened (``[s0, e0, s1, e1, …]``); a row
# text that is its side's normalized line (or None on the missing side: the usual case) is stored as 0. A stage's
# raw text that is the bundle's own text of that stage (the usual case) is stored as None and read back from the
# bundle, whose content is part of the key.


def _spans(spans: Sequence[Any]) -> list[int]:
    return [x for s in spans for x in (s.start, s.end)]


def _rows(rows: Sequence[DiffLine], a_lines: list[str], b_lines: list[str]) -> dict[str, Any]:
    """Rows by column (decoded in bulk, see :func:`_decode_rows`): ``tag`` one letter per row, ``a``/``b`` the
    line indices (-1: none), and only the exceptions: ``at``/``bt`` ``[row, text]`` where a row's text is not its
    side's normalized line, ``sa``/``sb`` ``[row, s0, e0, s1, e1, …]`` for rows with changed-token spans."""
    at: list[list[Any]] = []
    bt: list[list[Any]] = []
    sa: list[list[int]] = []
    sb: list[list[int]] = []
    for k, r in enumerate(rows):
        if r.a_text != (a_lines[r.a] if r.a is not None else None):
            at.append([k, r.a_text])
        if r.b_text != (b_lines[r.b] if r.b is not None else None):
            bt.append([k, r.b_text])
        if r.a_spans:
            sa.append([k, *_spans(r.a_spans)])
        if r.b_spans:
            sb.append([k, *_spans(r.b_spans)])
    return {
        "tag": "".join(r.tag[0] for r in rows),
        "a": [-1 if r.a is None else r.a for r in rows],
        "b": [-1 if r.b is None else r.b for r in rows],
        "at": at,
        "bt": bt,
        "sa": sa,
        "sb": sb,
    }


def _stage(ns: NormalizedStage, bundle_text: str) -> dict[str, Any] | None:
    from irdiff.normalize.model import LazyPerLine

    if isinstance(ns.symbols, LazyPerLine) or isinstance(ns.symbol_spans, LazyPerLine):
        return None  # a huge function aligned by the linear fallback: not stored
    return {
        "stage": ns.stage,
        "lines": ns.lines,
        "shapes": ns.shapes,
        "raw_line": ns.raw_line,
        "columns": ns.columns,
        "raw": None if ns.raw == bundle_text else ns.raw,
        "symbols": [list(s) for s in ns.symbols],
        "regions": [[r.start, r.end, r.kind, r.label, r.anchor, r.function] for r in ns.regions],
        "fallback": ns.fallback,
        "symbol_spans": [[x for span in s for x in span] for s in ns.symbol_spans],
    }


def _hunk(h: Hunk, index: dict[int, int], a_lines: list[str], b_lines: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"header": h.header, "a_start": h.a_start, "a_len": h.a_len, "b_start": h.b_start,
                           "b_len": h.b_len}  # fmt: skip
    first = index.get(id(h.lines[0])) if h.lines else None
    if first is not None and all(index.get(id(r)) == first + k for k, r in enumerate(h.lines)):
        out["rows"] = [first, len(h.lines)]  # a run of the stage's alignment rows (the usual case): shared
    else:
        out["lines"] = _rows(h.lines, a_lines, b_lines)
    return out


def _encode(
    diffs: Sequence[StageDiff], diagnosis: Diagnosis | None, texts: Sequence[tuple[str, str]]
) -> dict[str, Any] | None:
    out = []
    for d, (ta, tb) in zip(diffs, texts, strict=True):
        sa, sb = _stage(d.a, ta), _stage(d.b, tb)
        if sa is None or sb is None:
            return None
        index = {id(r): k for k, r in enumerate(d.lines)}
        al, bl = d.a.lines, d.b.lines
        out.append({"stage": d.stage, "a": sa, "b": sb, "added": d.added, "removed": d.removed,
                    "lines": _rows(d.lines, al, bl), "hunks": [_hunk(h, index, al, bl) for h in d.hunks],
                    "notes": d.notes})  # fmt: skip
    return {"stage_diffs": out, "diagnosis": diagnosis.to_json() if diagnosis is not None else None}


def _prune(root: Path, keep: Path, pattern: str = "*.json.z", limit: int = MAX_BYTES) -> None:
    """Remove the least recently written entries (``pattern``) until the directory holds at most ``limit`` bytes
    (:data:`MAX_BYTES` for comparisons)."""
    try:
        entries = [(e.stat().st_mtime_ns, e.stat().st_size, e) for e in root.glob(pattern)]
    except OSError:
        return
    total = sum(s for _, s, _ in entries)
    for _, size, e in sorted(entries, key=lambda t: t[0]):
        if total <= limit:
            break
        if e == keep:
            continue
        try:
            e.unlink()
            total -= size
        except OSError:
            pass


def store(key: str, diffs: Sequence[StageDiff], diagnosis: Diagnosis | None, texts: Sequence[tuple[str, str]]) -> bool:
    """Write the entry of ``key`` (atomically); False when it is not stored (see the module docstring) or the cache
    directory cannot be written (the cache only saves time: a failure to write it is not an error).

    :param texts: per stage diff, the bundle's texts of that stage for ``a`` and ``b`` (what was normalized).
    """
    import gc

    from irdiff.bundle import atomic_write

    collecting = gc.isenabled()
    gc.disable()  # as in load: many new objects, no cycles
    try:
        data = _encode(diffs, diagnosis, texts) if _known_layout() else None
        if data is None:
            return False
        payload = json.dumps({"format": FORMAT, "key": key, **data}, separators=(",", ":"), ensure_ascii=False)
    finally:
        if collecting:
            gc.enable()
    path = _path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, zlib.compress(payload.encode("utf-8", "surrogatepass"), 1))
    except OSError:
        return False
    _prune(path.parent, path)
    return True


# ---------------------------------------------------------------------------------------------------- reading
#
# Checks are made in bulk (``set(map(type, xs)) <= {str}``) where a per-item Python check would cost more than the
# decoding itself: a built-in suite's entry has ~10 000 rows and ~20 000 lines.


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise Invalid(what)


def _types(xs: Any, *allowed: type) -> bool:
    return type(xs) is list and set(map(type, xs)) <= set(allowed)


def _str_list(x: Any, what: str) -> list[str]:
    _need(_types(x, str), what)
    return x  # type: ignore[no-any-return]


def _int(x: Any, what: str, lo: int = 0, hi: int | None = None) -> int:
    _need(type(x) is int and x >= lo and (hi is None or x <= hi), what)
    return x  # type: ignore[no-any-return]


def _opt_str(x: Any, what: str) -> str | None:
    _need(x is None or type(x) is str, what)
    return x  # type: ignore[no-any-return]


def _decode_rows(x: Any, a_lines: list[str], b_lines: list[str]) -> list[DiffLine]:
    """Rows of an alignment (see :func:`_rows`), every index and span checked against its line."""
    from irdiff.align import DiffLine, Span

    _need(type(x) is dict and set(x) == {"tag", "a", "b", "at", "bt", "sa", "sb"}, "rows")
    tags, ia, ib = x["tag"], x["a"], x["b"]
    _need(type(tags) is str and set(tags) <= _TAG_OF.keys(), "row tags")
    n = len(tags)
    _need(_types(ia, int) and _types(ib, int) and len(ia) == len(ib) == n, "row indices")
    if n:
        _need(min(ia) >= -1 and max(ia) < len(a_lines) and min(ib) >= -1 and max(ib) < len(b_lines), "row index")
    a_text: list[str | None] = [None if i < 0 else a_lines[i] for i in ia]
    b_text: list[str | None] = [None if i < 0 else b_lines[i] for i in ib]
    for texts, given in ((a_text, x["at"]), (b_text, x["bt"])):
        _need(type(given) is list, "row texts")
        last = -1
        for t in given:
            _need(type(t) is list and len(t) == 2 and type(t[0]) is int and last < t[0] < n, "row text")
            _need(t[1] is None or type(t[1]) is str, "row text")
            texts[t[0]] = t[1]
            last = t[0]
    a_spans: list[list[Span]] = [[] for _ in range(n)]
    b_spans: list[list[Span]] = [[] for _ in range(n)]
    for spans, texts, given in ((a_spans, a_text, x["sa"]), (b_spans, b_text, x["sb"])):
        _need(type(given) is list, "spans")
        last = -1
        for sp in given:
            _need(type(sp) is list and len(sp) >= 3 and len(sp) % 2 == 1 and set(map(type, sp)) == {int}, "spans")
            k = sp[0]
            _need(last < k < n and texts[k] is not None, "spans row")
            last = k
            got = [Span(s, e) for s, e in zip(sp[1::2], sp[2::2], strict=True)]
            _need(all(0 <= p.start <= p.end <= len(texts[k]) for p in got), "spans")  # type: ignore[arg-type]
            spans[k] = got
    return list(map(DiffLine, map(_TAG_OF.__getitem__, tags), [None if i < 0 else i for i in ia],
                    [None if i < 0 else i for i in ib], a_text, b_text, a_spans, b_spans))  # fmt: skip


def _decode_stage(x: Any, bundle_text: str) -> NormalizedStage:
    """A stage, every field checked here; its per-line symbols and symbol spans are built when first read
    (:class:`~irdiff.normalize.model.LazyPerLine`: only a renderer of renamed symbols or a new alignment reads them,
    and building ~10 000 tuples of tuples is most of a stage's decoding)."""
    from irdiff.normalize.model import LazyPerLine, NormalizedStage, Region

    _need(type(x) is dict and set(x) == set(_LAYOUT["NormalizedStage"]), "stage fields")
    lines = _str_list(x["lines"], "lines")
    n = len(lines)
    shapes = _str_list(x["shapes"], "shapes")
    raw = bundle_text if x["raw"] is None else x["raw"]
    _need(type(raw) is str and type(x["stage"]) is str and type(x["fallback"]) is bool, "stage scalars")
    raw_line = x["raw_line"]
    _need(_types(raw_line, int) and (not raw_line or min(raw_line) >= 0), "raw_line")
    columns = x["columns"]
    _need(columns is None or _types(columns, str), "columns")
    symbols, spans = x["symbols"], x["symbol_spans"]
    _need(_types(symbols, list) and set(map(type, chain.from_iterable(symbols))) <= {str}, "symbols")
    _need(_types(spans, list) and len(shapes) == len(raw_line) == n and (columns is None or len(columns) == n), "n")
    _need(len(symbols) in (0, n) and len(spans) in (0, n), "per-line symbol lengths")
    flat = list(chain.from_iterable(spans))
    _need(set(map(type, flat)) <= {int} and (not flat or min(flat) >= 0), "symbol spans")
    _need({len(s) % 2 for s in spans} <= {0} and all(map(operator.le, map(max, filter(None, spans)),
                                                         map(len, compress(lines, spans)))), "symbol spans")  # fmt: skip
    sym_spans: LazyPerLine[tuple[tuple[int, int], ...]] = LazyPerLine(
        len(spans), lambda: [tuple(zip(s[::2], s[1::2], strict=True)) for s in spans]
    )
    regions = []
    _need(type(x["regions"]) is list, "regions")
    for r in x["regions"]:
        _need(type(r) is list and len(r) == 6, "region")
        _need(type(r[2]) is str and type(r[3]) is str and type(r[4]) is bool and type(r[5]) is bool, "region")
        regions.append(Region(_int(r[0], "region"), _int(r[1], "region"), r[2], r[3], r[4], r[5]))
    syms: LazyPerLine[tuple[str, ...]] = LazyPerLine(len(symbols), lambda: list(map(tuple, symbols)))
    return NormalizedStage(stage=x["stage"], lines=lines, shapes=shapes, raw_line=raw_line, columns=columns, raw=raw,
                           symbols=syms, regions=regions, fallback=x["fallback"], symbol_spans=sym_spans)  # fmt: skip


def _decode_diff(x: Any, texts: dict[str, tuple[str, str]]) -> StageDiff:
    from irdiff.align import Hunk, StageDiff

    _need(type(x) is dict and set(x) == {"stage", "a", "b", "added", "removed", "lines", "hunks", "notes"}, "diff")
    _need(type(x["stage"]) is str and x["stage"] in texts, "diff stage")
    ta, tb = texts[x["stage"]]
    a, b = _decode_stage(x["a"], ta), _decode_stage(x["b"], tb)
    _need(type(x["hunks"]) is list, "hunks")
    rows = _decode_rows(x["lines"], a.lines, b.lines)
    hunks = []
    for h in x["hunks"]:
        _need(type(h) is dict and type(h.get("header")) is str, "hunk")
        if "rows" in h:
            _need(set(h) == {"header", "a_start", "a_len", "b_start", "b_len", "rows"}, "hunk fields")
            r = h["rows"]
            _need(type(r) is list and len(r) == 2, "hunk rows")
            first, n = _int(r[0], "hunk rows"), _int(r[1], "hunk rows", 1)
            _need(first + n <= len(rows), "hunk rows")
            body = rows[first : first + n]
        else:
            _need(set(h) == {"header", "a_start", "a_len", "b_start", "b_len", "lines"}, "hunk fields")
            body = _decode_rows(h["lines"], a.lines, b.lines)
        hunks.append(Hunk(h["header"], _int(h["a_start"], "hunk", 0, len(a.lines)), _int(h["a_len"], "hunk"),
                          _int(h["b_start"], "hunk", 0, len(b.lines)), _int(h["b_len"], "hunk"), body))  # fmt: skip
    return StageDiff(stage=x["stage"], a=a, b=b, hunks=hunks, added=_int(x["added"], "added"),
                     removed=_int(x["removed"], "removed"), lines=rows,
                     notes=_str_list(x["notes"], "notes"))  # fmt: skip


def _decode_diagnosis(x: Any, a: str, b: str) -> Diagnosis:
    from irdiff.diagnose.model import SEVERITIES, Diagnosis, Evidence, Finding

    keys = set(_LAYOUT["Diagnosis"])
    _need(type(x) is dict and set(x) == keys and x["a"] == a and x["b"] == b, "diagnosis")
    _need(type(x["identical"]) is bool and type(x["facts"]) is dict, "diagnosis fields")
    _need(type(x["source_changes"]) is list and all(type(c) is dict for c in x["source_changes"]), "source changes")
    _need(type(x["findings"]) is list, "findings")
    finding_keys = set(_LAYOUT["Finding"])
    findings = []
    for f in x["findings"]:
        _need(type(f) is dict and set(f) == finding_keys, "finding fields")
        _need(all(type(f[k]) is str for k in ("id", "title", "explanation", "stage")), "finding text")
        _need(f["severity"] in SEVERITIES and type(f["evidence"]) is list, "finding severity")
        ev = []
        for e in f["evidence"]:
            _need(type(e) is dict and set(e) == set(_LAYOUT["Evidence"]), "evidence")
            _need(type(e["variant"]) is str and type(e["stage"]) is str and type(e["text"]) is str, "evidence")
            _need(e["line"] is None or (type(e["line"]) is int and e["line"] >= 0), "evidence line")
            ev.append(Evidence(e["variant"], e["stage"], e["line"], e["text"]))
        _need(f["instructions"] is None or type(f["instructions"]) is int, "finding instructions")
        findings.append(Finding(id=f["id"], severity=f["severity"], title=f["title"], explanation=f["explanation"],
                                evidence=ev, causes=_str_list(f["causes"], "causes"),
                                remedy=_opt_str(f["remedy"], "remedy"), stage=f["stage"],
                                predicts=_opt_str(f["predicts"], "predicts"),
                                instructions=f["instructions"]))  # fmt: skip
    return Diagnosis(a=a, b=b, findings=findings, identical=x["identical"], facts=x["facts"],
                     verdict=_opt_str(x["verdict"], "verdict"), notes=_str_list(x["notes"], "notes"),
                     unexplained=_str_list(x["unexplained"], "unexplained"),
                     source_changes=x["source_changes"])  # fmt: skip


def load(
    key: str, a: str, b: str, texts: dict[str, tuple[str, str]]
) -> tuple[list[StageDiff], Diagnosis | None] | None:
    """The stored stage diffs and diagnosis of ``key`` for the pair ``a``, ``b``, or None when there is no
    well-formed entry (missing, damaged, another format or key: a miss, never an error).

    :param texts: per stage asked for, the bundle's texts of ``a`` and ``b`` (``{"ttgir": (text_a, text_b)}``).
    """
    try:
        raw = _path(key).read_bytes()
    except OSError:
        return None
    if not _known_layout():
        return None
    import gc

    collecting = gc.isenabled()
    gc.disable()  # ~100 000 new objects and no cycles among them: collecting while decoding is wasted work
    try:
        data = json.loads(zlib.decompress(raw).decode("utf-8", "surrogatepass"))
        _need(type(data) is dict and data.get("format") == FORMAT and data.get("key") == key, "format")
        _need(set(data) == {"format", "key", "stage_diffs", "diagnosis"}, "entry fields")
        _need(type(data["stage_diffs"]) is list, "stage diffs")
        diffs = [_decode_diff(d, texts) for d in data["stage_diffs"]]
        diagnosis = _decode_diagnosis(data["diagnosis"], a, b) if data["diagnosis"] is not None else None
    except (Invalid, ValueError, TypeError, KeyError, IndexError, AttributeError, zlib.error, RecursionError):
        return None
    finally:
        if collecting:
            gc.enable()
    return diffs, diagnosis


# ---------------------------------------------------------------------------------------------------- outputs
#
# An entry is ``{"format", "key", "text", "ttir_identical"}``: the rendered text and, for the main command's
# pass-trace check (:func:`irdiff.diagnose.passes.needs_pass_trace`), whether the pair's normalized TTIR was
# identical in the comparison it was rendered from (None: not compared, or compared raw).

_SGR = re.compile(r"\x1b\[[0-9;]*m")


class CachedOutput(NamedTuple):
    """A rendered output read back from the cache (:func:`load_output`)."""

    text: str
    ttir_identical: bool | None


def _outputs_root() -> Path:
    return cache_root().parent / "outputs"


def _bundle_view(bundle: Bundle) -> dict[str, Any]:
    """Everything of a loaded bundle a renderer can read besides the stage texts (those are in the comparison
    key): its manifest fields, and every variant's record with its directory and cache flag."""
    view = {f.name: getattr(bundle, f.name) for f in fields(bundle) if f.name != "variants"}
    view["variants"] = {n: [v.directory, v.to_json()] for n, v in bundle.variants.items()}
    return view


def output_key(comparison: str, bundle: Bundle, view: Any) -> str:
    """The key of a rendered output: the comparison's key (:func:`comparison_key`), the bundle as loaded
    (:func:`_bundle_view`), the renderer's options ``view`` (JSON-able, e.g. ``dataclasses.asdict`` of
    :class:`~irdiff.render.terminal.TerminalOptions` plus the renderer's name), :func:`output_sources_digest` and
    the working directory."""
    ident = [OUTPUT_FORMAT, comparison, output_sources_digest(), _bundle_view(bundle), view, os.getcwd()]
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:40]


def load_output(key: str, color: bool) -> CachedOutput | None:
    """The stored output of ``key``, or None when there is no well-formed entry (missing, damaged, another format
    or key, or a text with terminal controls: with ``color``, only the colour escapes ``ESC[…m`` are allowed)."""
    from irdiff.textsafe import clean

    try:
        data = json.loads(zlib.decompress((_outputs_root() / f"{key}.txt.z").read_bytes()).decode("utf-8"))
    except (OSError, ValueError, zlib.error, RecursionError):
        return None
    if not (type(data) is dict and set(data) == {"format", "key", "text", "ttir_identical"}):
        return None
    text, same = data["text"], data["ttir_identical"]
    if data["format"] != OUTPUT_FORMAT or data["key"] != key or type(text) is not str:
        return None
    if not (same is None or type(same) is bool):
        return None
    bare = _SGR.sub("", text) if color else text
    if clean(bare) != bare:
        return None
    return CachedOutput(text, same)


def store_output(key: str, text: str, ttir_identical: bool | None) -> bool:
    """Write the entry of ``key`` (atomically); False when the cache directory cannot be written."""
    from irdiff.bundle import atomic_write

    path = _outputs_root() / f"{key}.txt.z"
    entry = {"format": OUTPUT_FORMAT, "key": key, "text": text, "ttir_identical": ttir_identical}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, zlib.compress(json.dumps(entry, ensure_ascii=False).encode("utf-8"), 6))
    except (OSError, UnicodeEncodeError):
        return False
    _prune(path.parent, path, "*.txt.z", OUTPUT_MAX_BYTES)
    return True
