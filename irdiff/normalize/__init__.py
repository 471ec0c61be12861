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
  ``#dbg_`` records and comments are dropped; ``%N``/named values, block labels and ``!N`` metadata are renumbered
  by first appearance; ``#N`` attribute groups are named by their content (``#attrs.1a2b3c``: LLVM numbers them by
  first use, which differs between variants) and their definitions sorted by content; ``define`` signatures are
  split one argument per line.
* PTX (``make_ptx``): comments, ``.loc``/``.file``, ``$L__tmp``/``$L__func_*`` labels and everything from the
  first ``.section .debug_*`` on are dropped; registers are renumbered per class (``%r``, ``%rd``, ``%rs``, ``%p``,
  ``%f``, ``%fd``, ``%h``, ``%hh``...) and ``$L__BB`` labels by first appearance.
* SASS (``triton/tools/disasm.py`` ``get_sass``: ``ctrl<TAB>instr`` lines, ``Function:NAME``, ``LBBn:`` labels;
  cuobjdump's raw ``/*0070*/ ... /* 0x... */`` form is accepted too): addresses and encodings are dropped, control
  codes go to :attr:`NormalizedStage.columns` (computed from the encoding for the raw form, as ``get_sass`` does),
  ``LBBn``/``.L_x_N`` labels and branch target addresses are renumbered, ``//## File`` lines dropped; physical
  registers (``R12``, ``UR4``, ``P0``, ``UP1``, convergence barriers ``B0``) are renumbered by first appearance in
  the listing (one function per kernel in Triton's SASS), keeping ``RZ``/``URZ``/``PT``/``UPT`` and special
  registers (``SR_TID.X``, ``SR_CgaCtaId``) whole; ``--raw`` shows the physical names.

In the *shape* form every renamed symbol (SSA value, virtual register, label, attribute group) is erased to its
class (``%_``, ``%r_``, ``L_``) so that one extra value does not make every later line differ; the erased symbols are
kept per line in :attr:`NormalizedStage.symbols`, and the aligner (``irdiff/align.py``) checks that they correspond
one-to-one between the two sides. Things that are compared exactly stay in the shape: constants, types, layout
alias and LLIR attribute-group names (content-derived).

:func:`normalize` never raises on arbitrary text: unparseable lines are kept as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from irdiff import stages
from irdiff.normalize.model import LazyPerLine, NormalizedStage, Region

__all__ = ["NormalizedStage", "Region", "normalize", "normalize_pair", "dialect_of", "rename"]


# Dialects with a normalizer module of their own (``irdiff/normalize/<dialect>.py``); others are plain text.
_DIALECTS = ("mlir", "llir", "ptx", "sass")

# Stage names outside irdiff.stages that still read as a dialect ("source": MLIR given to ``irdiff show``).
_EXTRA_DIALECTS = {"source": "mlir"}


def dialect_of(stage: str) -> str:
    """``mlir``, ``llir``, ``ptx``, ``sass`` or ``text`` for a stage name (``ttgir`` → ``mlir``)."""
    st = stages.get(stage)
    return st.dialect if st is not None else _EXTRA_DIALECTS.get(stage, "text")


def normalize(
    stage: str,
    text: str,
    kernel_name: str | None = None,
    *,
    raw: bool = False,
    line_range: tuple[int, int] | Sequence[tuple[int, int]] | None = None,
) -> NormalizedStage:
    """Normalize one stage text (see the module docstring for the rules per dialect).

    :param stage: stage name; unknown names are treated as plain text (lines kept, trailing blanks stripped).
    :param text: the stage text as Triton wrote it (``CompiledKernel.asm[stage]``).
    :param kernel_name: when given, occurrences of the kernel's name are replaced by ``KERNEL`` (so two variants
        with different function names compare equal).
    :param raw: no normalization at all: ``lines`` and ``shapes`` are the raw lines (``--raw``).
    :param line_range: plain-text stages (``python``) only: keep raw lines ``first..last`` (1-based, inclusive;
        the kernel function inside the file that defines it), or several such ranges (the kernel, then the
        functions it calls), with ``raw`` too (then names are kept); ``raw`` and ``raw_line`` still refer to the
        whole text.
    :returns: a :class:`NormalizedStage`. Never raises on arbitrary text; if a dialect normalizer fails
        internally, the raw lines are returned with ``fallback=True``. Above :data:`RECOMPUTE_LINES` lines its
        per-line :attr:`~NormalizedStage.symbols` and spans are computed, when first read, by normalizing the text
        again (the renaming tables they need are not kept).
    """
    return _normalize(stage, text, kernel_name, raw=raw, line_range=line_range, keep=False)


# A normalized stage with more lines than this does not keep the renaming tables its per-line symbols and spans
# are computed from (1e5 lines: 20-60 MB, a third to a half of what it holds): the aligner reads them only for
# functions whose two sides span at most irdiff.align.EXACT_CELLS line pairs (4e8), not a 1e5-line function's
# pair unless the other side has under 4,000 lines; if they are read, the text is normalized again.
RECOMPUTE_LINES = 100_000


def _normalize(
    stage: str,
    text: str,
    kernel_name: str | None,
    *,
    raw: bool,
    line_range: tuple[int, int] | Sequence[tuple[int, int]] | None,
    keep: bool,
) -> NormalizedStage:
    """:func:`normalize`; with ``keep`` the per-line symbols and spans keep what they are computed from."""
    if not isinstance(text, str):
        text = str(text)
    if raw:  # the python stage still keeps only the kernel function's lines: the file is shared by both variants
        return _plain(stage, text, text.splitlines(), strip=False, line_range=line_range)
    # Each dialect's normalizer (many regular expressions) is imported when a text of its dialect is first
    # normalized, not with the package: reading a cached comparison (irdiff.comparison_cache) needs only the data
    # model, and a TTIR-only check only the MLIR normalizer. Imported outside the try below: a broken import is an
    # error, not a fallback.
    import importlib

    dialect = dialect_of(stage)
    if dialect not in _DIALECTS:
        return _plain(stage, text, text.splitlines(), strip=True, line_range=line_range, kernel_name=kernel_name)
    mod: Any = importlib.import_module(f"irdiff.normalize.{dialect}")
    from irdiff.normalize.text import raw_lines_of

    raw_lines = raw_lines_of(text)  # a huge text's lines are split a piece at a time as the normalizer reads them
    got = _dialect(mod, stage, text, raw_lines, kernel_name, None if keep else RECOMPUTE_LINES)
    del raw_lines
    if not keep and len(got.lines) > RECOMPUTE_LINES and isinstance(got.symbols, LazyPerLine):
        symbols, spans = LazyPerLine.recomputed(
            len(got.lines), lambda: _normalize(stage, text, kernel_name, raw=False, line_range=None, keep=True)
        )
        got = replace(got, symbols=symbols, symbol_spans=spans)
    return got


def _dialect(
    mod: Any,
    stage: str,
    text: str,
    raw_lines: Sequence[str],
    kernel_name: str | None,
    per_line_after: int | None = None,
) -> NormalizedStage:
    """The dialect module ``mod``'s normalization of ``text`` (see :func:`normalize`); ``per_line_after``: the bulk
    builder's (the caller recomputes the per-line symbols of a stage longer than that)."""
    from irdiff.normalize.builder import Builder, BulkBuilder

    dialect = mod.__name__.rsplit(".", 1)[1]
    if dialect == "ptx":
        try:
            fast = mod.normalize_ptx_fast(stage, text, raw_lines, kernel_name)
        except Exception:  # defensive: the builders below decide
            fast = None
        if fast is not None:  # else a string on a kept line: the builders skip strings
            return fast  # type: ignore[no-any-return]
    run = getattr(mod, f"normalize_{dialect}")
    # the bulk builder first (linear time), the reference builder if it fails, the raw lines if both do
    columns = dialect == "sass"
    makers: tuple[Callable[[], Builder | BulkBuilder], ...] = (
        lambda: BulkBuilder(stage, text, with_columns=columns, per_line_after=per_line_after),
        lambda: Builder(stage, text, with_columns=columns),
    )
    for make in makers:
        try:
            out = make()
            run(out, raw_lines, kernel_name)
            return out.build()
        except Exception:  # defensive: the differ must show something for any input
            continue
    result = _plain(stage, text, raw_lines, strip=False)
    result.fallback = True
    return result


# Both texts of a pair at least this long (characters): the second is normalized in a forked process while this
# one normalizes the first, when a core is idle (:func:`normalize_pair`). A 4 MB stage takes about a second per side.
PARALLEL_CHARS = 4_000_000


def normalize_pair(
    stage: str,
    a: str,
    b: str,
    kernel_a: str | None = None,
    kernel_b: str | None = None,
    *,
    raw: bool = False,
    line_range_a: tuple[int, int] | Sequence[tuple[int, int]] | None = None,
    line_range_b: tuple[int, int] | Sequence[tuple[int, int]] | None = None,
    parallel: bool | None = None,
) -> tuple[NormalizedStage, NormalizedStage]:
    """:func:`normalize` of both sides of a diff, the same result as two calls (``tests/test_normalize_parallel.py``).

    With ``parallel`` (default: when both texts hold at least :data:`PARALLEL_CHARS` characters and another core is
    idle, :func:`irdiff.normalize.parallel.idle_core`), ``b`` is normalized in a forked process while this process
    normalizes ``a`` (:mod:`irdiff.normalize.parallel`: the child dies with this process and is stopped on an
    interruption); its lines, shapes, raw line numbers, columns and regions come back packed (a few strings), and
    its per-line symbols and spans are computed here only if read (the aligner of a huge function does not read
    them). On the 10 MB pairs of ``benchmarks/bench_align_large.py`` (``benchmarks/results/bench_align_large.txt``,
    2026-12-02: an idle 16-core host, Python 3.12) normalize + align took 1.4-2.3 s wall with the fork against
    2.4-4.3 s serially, both processes at once holding PSS 189-222 MB (serially one held 133-186 MB); the fork adds
    about 1 CPU second. It was off from eda7f82 until then: both processes held 284-307 MB at once, over the 300 MB
    target, because each side's raw lines, pre-rename chunks, renaming tables kept by a reference cycle and the
    pickled result were held twice. Raw texts, plain-text stages, no ``os.fork``, other threads running: ``b`` is
    normalized here after ``a``, as when the child fails.

    :raises: what :func:`normalize` raises (nothing for any text).
    """
    from irdiff.normalize.parallel import Forked, idle_core

    def norm_b() -> NormalizedStage:
        return normalize(stage, b, kernel_b, raw=raw, line_range=line_range_b)

    def again_b() -> NormalizedStage:  # the forked side's per-line symbols, when read
        return _normalize(stage, b, kernel_b, raw=raw, line_range=line_range_b, keep=True)

    child = None
    if parallel is None:
        parallel = min(len(a), len(b)) >= PARALLEL_CHARS and idle_core()
    if parallel and not raw and dialect_of(stage) in _DIALECTS:
        import importlib

        # imported before the fork: the child then takes no import lock
        importlib.import_module(f"irdiff.normalize.{dialect_of(stage)}")
        importlib.import_module("irdiff.normalize.builder")
        child = Forked.start(norm_b, b, again_b)
    try:
        na = normalize(stage, a, kernel_a, raw=raw, line_range=line_range_a)
        nb = child.result() if child is not None else None
    finally:
        if child is not None:
            child.close()
    return na, nb if nb is not None else norm_b()


def dialect_normalizer(dialect: str) -> Callable[[Any, list[str], str | None], None]:
    """The normalizer of a dialect in :data:`_DIALECTS` (``normalize_mlir`` ...), which drives either builder
    (:class:`~irdiff.normalize.builder.Builder`, the reference, or :class:`~irdiff.normalize.builder.BulkBuilder`:
    the same result, ``tests/test_normalize_fast.py``).

    :raises KeyError: for a dialect without a normalizer (plain text)."""
    if dialect not in _DIALECTS:
        raise KeyError(dialect)
    import importlib

    fn: Callable[[Any, list[str], str | None], None] = getattr(
        importlib.import_module(f"irdiff.normalize.{dialect}"), f"normalize_{dialect}"
    )
    return fn


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


def _ranges(line_range: Any, n: int) -> list[tuple[int, int]]:
    """One ``(first, last)`` or several (the kernel, then the functions it calls), clipped to ``1..n``."""
    if not line_range:
        return [(1, n)]
    if isinstance(line_range[0], int):
        line_range = [line_range]
    return [(max(1, int(a)), min(n, int(b))) for a, b in line_range]


def _plain(
    stage: str,
    text: str,
    raw_lines: Sequence[str],
    *,
    strip: bool,
    line_range: tuple[int, int] | Sequence[tuple[int, int]] | None = None,
    kernel_name: str | None = None,
) -> NormalizedStage:
    ranges = _ranges(line_range, len(raw_lines))
    numbers = list(dict.fromkeys(n for first, last in ranges for n in range(first, last + 1)))
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
