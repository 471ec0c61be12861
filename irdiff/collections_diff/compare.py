"""``irdiff diff A B`` for two kernel collections: captures, Triton cache directories, ``TRITON_KERNEL_DUMP`` dirs.

Each side is opened as a bundle (:func:`open_collection`), the kernels are paired
(:func:`irdiff.collections_diff.pairing.pair_kernels`), and each pair goes through the same pipeline as a suite comparison
(:func:`irdiff.pipeline.build_comparison`: normalize, align, diagnose), so every renderer can show it. The terminal
output starts with an overview table — one row per pair: kernel, how it was paired, the stages that differ, the key
operation counts that differ, registers — then lists the unpaired kernels, then the full comparison of each pair
that differs.

Direction: ``A`` is shown as ``-`` (left), ``B`` as ``+`` (right), as in every irdiff diff.

Size: just over 800 lines because opening each kind of collection, the overview table (with its per-stage key
counts) and the per-pair sections share one set of data classes; the pairing itself lives in ``pairing.py``.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irdiff.bundle import Bundle, BundleError, load_bundle, variant_dirname
from irdiff.collections_diff.pairing import KernelPair, Pairing, pair_kernels, target_note
from irdiff.render.words import plural

if TYPE_CHECKING:
    from irdiff.render import Comparison

__all__ = [
    "CollectionDiff",
    "OverviewRow",
    "PairResult",
    "compare_collections",
    "describe_alternative",
    "input_kind",
    "is_collection",
    "mixed_inputs_error",
    "open_collection",
    "overview_rows",
    "render_collection_diff",
]

# Count keys preferred in the overview's "key counts" column, by stage (first differing ones are shown).
OVERVIEW_STAGES = ("ptx", "ttgir", "sass", "ttir")


def is_collection(path: str | os.PathLike[str]) -> bool:
    """True for inputs :func:`compare_collections` handles and a plain bundle diff does not: an ``irdiff capture``
    directory, a Triton cache entry or root, a ``TRITON_KERNEL_DUMP`` directory."""
    from irdiff.capture import is_capture
    from irdiff.collections_diff.artifacts import is_artifact_dir

    p = Path(path)
    return is_capture(p) or is_artifact_dir(p)


# What each kind of ``irdiff diff`` input is called in messages (see :func:`input_kind`).
VARIANT_DIR = "a variant dir"
BUNDLE = "a bundle"
CAPTURE = "a capture"
TRITON_CACHE = "a Triton cache dir"
TRITON_DUMP = "a TRITON_KERNEL_DUMP dir"
COLLECTION_KINDS = (CAPTURE, TRITON_CACHE, TRITON_DUMP)


def input_kind(path: str | os.PathLike[str]) -> str | None:
    """What an ``irdiff diff`` input is: :data:`VARIANT_DIR` (``variant.json``), :data:`CAPTURE` (a bundle written
    by ``irdiff capture``), :data:`BUNDLE` (any other ``manifest.json``), :data:`TRITON_CACHE` (kernel directories
    with Triton's metadata ``<name>.json``), :data:`TRITON_DUMP` (kernel directories without it), or None (none of
    these, or missing). Reads only directory listings and the manifest's ``suite``."""
    from irdiff.capture import is_capture
    from irdiff.collections_diff.artifacts import find_kernel_dirs

    p = Path(path)
    if not p.is_dir():
        return None
    if (p / "variant.json").is_file():
        return VARIANT_DIR
    if (p / "manifest.json").is_file():
        return CAPTURE if is_capture(p) else BUNDLE
    kdirs = find_kernel_dirs(p, limit=1)
    if not kdirs:
        return None
    try:
        cache = any(f.suffix == ".json" and not f.name.startswith("__grp__") for f in kdirs[0].iterdir())
    except OSError:
        return None
    return TRITON_CACHE if cache else TRITON_DUMP


def mixed_inputs_error(path_a: str | os.PathLike[str], path_b: str | os.PathLike[str]) -> str | None:
    """The one-line error for two ``irdiff diff`` inputs that cannot be compared with each other, else None.

    Comparable: two variant dirs, two bundles or a bundle and a variant dir (:func:`irdiff.pipeline.load_pair`); two
    kernel collections of any kind (capture, Triton cache, TRITON_KERNEL_DUMP dir), or a bundle and a collection
    (every variant of the bundle is a kernel). A variant dir is one kernel's compile, not a collection: mixed with a
    collection, the message names both kinds (``cannot mix a variant dir with a capture``). A path that is none of
    the kinds is named as such.
    """
    kinds = []
    for p in (path_a, path_b):
        k = input_kind(p)
        if k is None:
            what = (
                "does not exist"
                if not Path(p).exists()
                else "is not a directory"
                if not Path(p).is_dir()
                else (
                    "is not an irdiff bundle, variant dir or capture, nor a Triton cache or TRITON_KERNEL_DUMP dir "
                    "(no manifest.json, variant.json or kernel directories)"
                )
            )
            return f"{p} {what}"
        kinds.append(k)
    ka, kb = kinds
    if VARIANT_DIR in kinds and (ka in COLLECTION_KINDS or kb in COLLECTION_KINDS):
        return (
            f"cannot mix {ka} with {kb}: {path_a} is {ka}, {path_b} is {kb} "
            "(compare a variant dir with another variant dir or a bundle; collections kernel by kernel)"
        )
    return None


def open_collection(path: str | os.PathLike[str]) -> Bundle:
    """Open one side: any irdiff bundle (capture or suite) as is; Triton artifacts converted to a temporary bundle.

    :raises BundleError: missing path, a bundle of another schema version, or a directory with no kernels.
    """
    from irdiff.collections_diff.artifacts import is_artifact_dir, load_artifacts

    p = Path(path)
    if not p.exists():
        raise BundleError(f"{p}: no such directory")
    if (p / "manifest.json").is_file():
        return load_bundle(p)
    if is_artifact_dir(p):
        bundle = load_artifacts(p)
        return bundle
    raise BundleError(
        f"{p}: not an irdiff capture or bundle, nor a Triton cache or TRITON_KERNEL_DUMP directory (no kernels found)"
    )


@dataclass
class PairResult:
    """One pair and its comparison (None when it could not be built: ``error`` says why, in one line)."""

    pair: KernelPair
    comparison: Comparison | None = None
    error: str | None = None


@dataclass
class CollectionDiff:
    """Two kernel collections compared: the two bundles, their labels, the pairing and each pair's comparison."""

    a: Bundle
    b: Bundle
    label_a: str
    label_b: str
    pairing: Pairing
    results: list[PairResult] = field(default_factory=list)


def _labels(a: Path, b: Path) -> tuple[str, str]:
    la, lb = a.resolve().name or "A", b.resolve().name or "B"
    if la == lb:
        la, lb = f"{a.resolve().parent.name}/{la}", f"{b.resolve().parent.name}/{lb}"
    if la == lb:
        la, lb = "A", "B"
    return la, lb


def pair_bundle(cd_a: Bundle, cd_b: Bundle, pair: KernelPair, label_a: str, label_b: str) -> tuple[Bundle, str, str]:
    """An in-memory bundle holding the two kernels of ``pair``, named ``<label>:<variant>`` (e.g.
    ``before:scale_rows`` and ``after:scale_rows``); stage files stay where they are."""
    va, vb = cd_a.variants[pair.a], cd_b.variants[pair.b]
    na, nb = f"{label_a}:{pair.a}", f"{label_b}:{pair.b}"

    def both(x: str, y: str) -> str:
        return x if x == y or not y else (y if not x else f"{x} | {y}")

    bundle = Bundle(
        suite=both(cd_a.suite, cd_b.suite),
        target=both(va.target or cd_a.target, vb.target or cd_b.target),
        triton_version=both(
            str(va.metadata.get("triton_version") or cd_a.triton_version),
            str(vb.metadata.get("triton_version") or cd_b.triton_version),
        ),
        ptxas_version=both(va.resources.ptxas_version, vb.resources.ptxas_version),
        variants={na: replace(va, name=na), nb: replace(vb, name=nb)},
        pair=[na, nb],
        directory="",
    )
    return bundle, na, nb


def _complete_pairs(sides: list[tuple[Bundle, list[str]]], explain: bool) -> None:
    """Complete kernels on demand before they are compared, for both sides at once. Triton cache/dump kernels have no
    resources, SASS or compiler log yet: all listed kernels get all three. Capture kernels got their resources
    after the program ran; SASS and the compiler log are added here, only for the kernels listed (those of pairs
    whose code differs), and written into the capture (done once). A read-only capture is compared as it is.

    Both sides are done together (:func:`irdiff.capture.finalize.finalize_many`): SASS of each side and the
    compiler logs of all kernels (one worker process, Triton imported once) run at the same time."""
    from irdiff.capture import is_capture

    jobs: list[tuple[Path, list[str] | None, bool]] = []
    owners: list[Bundle] = []
    for bundle, names in sides:
        capture = is_capture(bundle.directory) if bundle.directory else False
        if capture:
            names = [n for n in names if not _complete(bundle.variants[n], explain)]
        elif bundle.suite not in ("triton-cache", "triton-dump", "triton-artifacts"):
            continue
        if not names:
            continue
        root = Path(bundle.directory)
        if capture and not os.access(root, os.W_OK):
            continue
        side_explain = explain
        if explain and bundle.triton_version:
            # Recompiling another version's TTIR with this Triton would not reproduce the kernel (nor its reasoning).
            from irdiff.compile.compat import triton_version

            side_explain = bundle.triton_version == triton_version()
        jobs.append((root, names, side_explain))
        owners.append(bundle)
    if not jobs:
        return
    from irdiff.bundle import load_variant_dir
    from irdiff.capture.finalize import finalize_many
    from irdiff.capture.hooks import STATE_DIR

    for root, _, _ in jobs:
        (root / STATE_DIR).mkdir(exist_ok=True)
    finalize_many(jobs, sass=True)
    for bundle, (root, done, _) in zip(owners, jobs, strict=True):
        for n in done or []:
            bundle.variants[n] = load_variant_dir(root / variant_dirname(n))


def _complete(v: Any, explain: bool) -> bool:
    parts = v.metadata.get("finalized_parts")
    if not isinstance(parts, list):
        return bool(v.metadata.get("finalized")) and "sass" in v.stages
    return "sass" in parts and (not explain or "explain" in parts)


def quick_identical(va: Any, vb: Any) -> bool:
    """Whether two kernels are certainly the same, without normalizing or aligning anything: their code
    fingerprints (:mod:`irdiff.capture.fingerprint`: stage 0, options, the kernel's source lines, TTIR…PTX without
    debug information, names left out) are equal. A capture stores each kernel's fingerprint, so a capture of
    hundreds of kernels, most of them unchanged, is compared without reading their stages. False means "compare
    them fully", not "they differ"."""
    from irdiff.capture.fingerprint import stored_or_computed

    fa = stored_or_computed(va)
    return fa is not None and fa == stored_or_computed(vb)


def ptx_identical(va: Any, vb: Any) -> bool:
    """Whether two kernels' PTX is the same once line info, comments, the header and the kernel names are left out
    (cheap: no normalization); then their SASS is the same too (same ptxas), and nothing needs disassembling."""
    from irdiff.capture.fingerprint import stage_lines

    ta, tb = va.text("ptx"), vb.text("ptx")
    if not ta or not tb:
        return False
    return stage_lines("ptx", ta, va.kernel or "") == stage_lines("ptx", tb, vb.kernel or "")


def compare_collections(
    path_a: str | os.PathLike[str],
    path_b: str | os.PathLike[str],
    *,
    stages: list[str] | None = None,
    raw: bool = False,
    context: int = 3,
    kernel: str | None = None,
    explain: bool = True,
) -> CollectionDiff:
    """Pair the kernels of two collections and build a :class:`~irdiff.render.Comparison` for each pair.

    :param stages: stage names to diff (None: all).
    :param kernel: regular expression; only pairs where either kernel name matches are compared (the others are
        left out of the result).
    :param explain: for Triton artifacts, recompile paired kernels to record the compiler's reasoning log.
    :raises BundleError: a side that cannot be opened (see :func:`open_collection`), e.g. an older bundle version.
    :raises ValueError: a bad ``kernel`` pattern.
    """
    import re

    from irdiff.pipeline import build_comparison

    a, b = open_collection(path_a), open_collection(path_b)
    if not a.variants:
        raise BundleError(f"{path_a}: no kernels captured")
    if not b.variants:
        raise BundleError(f"{path_b}: no kernels captured")
    la, lb = _labels(Path(path_a), Path(path_b))
    pairing = pair_kernels(a, b)
    if kernel:
        try:
            pat = re.compile(kernel)
        except re.error as e:
            raise ValueError(f"--kernel {kernel!r}: not a regular expression: {e}") from None
        kept = [p for p in pairing.pairs if pat.search(p.a) or pat.search(p.b)]
        pairing = Pairing(
            kept,
            [n for n in pairing.only_a if pat.search(n)],
            [n for n in pairing.only_b if pat.search(n)],
            {k: alts for k, alts in pairing.also_a.items() if k in {p.a for p in kept}},
            {k: alts for k, alts in pairing.also_b.items() if k in {p.b for p in kept}},
        )
    same = {id(p) for p in pairing.pairs if quick_identical(a.variants[p.a], b.variants[p.b])}
    differ = [p for p in pairing.pairs if id(p) not in same and not ptx_identical(a.variants[p.a], b.variants[p.b])]
    artifacts = ("triton-cache", "triton-dump", "triton-artifacts")
    _complete_pairs(
        [
            (a, [p.a for p in (pairing.pairs if a.suite in artifacts else differ)]),
            (b, [p.b for p in (pairing.pairs if b.suite in artifacts else differ)]),
        ],
        explain,
    )
    cd = CollectionDiff(a, b, la, lb, pairing)
    from irdiff.diagnose import Diagnosis
    from irdiff.render import Comparison

    for p in pairing.pairs:
        pb, na, nb = pair_bundle(a, b, p, la, lb)
        if not raw and id(p) in same:
            # Certainly identical: no stage to show, no finding (nothing normalized or aligned).
            diag = Diagnosis(na, nb, [], True, {}, verdict=None)
            cd.results.append(PairResult(p, Comparison(pb, na, nb, [], diag, raw=raw, context=context)))
            continue
        try:
            cd.results.append(PairResult(p, build_comparison(pb, na, nb, stages=stages, raw=raw, context=context)))
        except ValueError as e:
            cd.results.append(PairResult(p, None, str(e)))
    return cd


@dataclass
class OverviewRow:
    """One line of the overview table.

    :ivar kernel: variant name in A (``a → b`` when the names differ).
    :ivar paired: how the pair was found (``name+signature``, ``name``, ``source 0.93``).
    :ivar changed: stages that differ after normalization (``spec`` = the stage-0 specialization), or empty.
    :ivar counts: ``[(key, count in A, count in B)]`` of key operation counts that differ (at most ``max_counts``);
        a key more than one stage counts is prefixed with its stage (``ptx instructions``, ``sass instructions``).
    :ivar registers: ``(A, B)`` registers per thread from ptxas; :ivar spills: spill stores in bytes ``(A, B)``.
    :ivar launches: launches recorded ``(A, B)`` (None when not recorded).
    :ivar config: the kernel's distinguishing configuration: its ``tl.constexpr`` values (``XBLOCK=1
        R0_BLOCK=2048``), ``name a→b`` where the two sides differ, and launch options that differ.
    :ivar root: the pair's root finding (``id (severity): title``, the most severe finding nothing else causes),
        or "".
    :ivar severity: the most severe finding of the pair (``critical`` … ``info``), or "" (identical / no findings).
    """

    kernel: str
    paired: str
    changed: list[str]
    counts: list[tuple[str, int, int]]
    registers: tuple[int | None, int | None]
    spills: tuple[int | None, int | None]
    launches: tuple[int | None, int | None] = (None, None)
    error: str | None = None
    config: str = ""
    root: str = ""
    severity: str = ""


def overview_rows(cd: CollectionDiff, max_counts: int = 3) -> list[OverviewRow]:
    """The overview table's rows, in the order of ``cd.results``."""
    from irdiff.render import spec_rows, stage_summaries

    rows = []
    for r in cd.results:
        p = r.pair
        va, vb = cd.a.variants[p.a], cd.b.variants[p.b]
        name = p.a if p.a == p.b else f"{p.a} → {p.b}"
        how = p.how if p.score >= 1.0 or p.how == "name+signature" else f"{p.how} {p.score:.2f}"
        changed: list[str] = []
        counts: list[tuple[str, int, int]] = []
        quick = r.comparison is not None and not r.comparison.stage_diffs and r.comparison.identical
        if r.comparison is not None and not quick:  # quick_identical: same stage 0 by construction
            if any(s.differs for s in spec_rows(r.comparison)):
                changed.append("spec")
            sums = {s.stage: s for s in stage_summaries(r.comparison)}
            changed += [s for s in sums if not sums[s].identical]
            # a key several stages count (`instructions` in PTX and SASS) is named with its stage
            seen: dict[str, int] = {}
            for s in sums.values():
                for k, _, _ in s.counts:
                    seen[k] = seen.get(k, 0) + 1
            for st in OVERVIEW_STAGES:
                if st in sums:
                    counts += [(f"{st} {k}" if seen[k] > 1 else k, x, y) for k, x, y in sums[st].counts
                               if x != y and len(counts) < max_counts]  # fmt: skip
        rows.append(
            OverviewRow(
                kernel=name,
                paired=how,
                changed=changed,
                counts=counts[:max_counts],
                registers=(va.resources.registers, vb.resources.registers),
                spills=(va.resources.spill_store_bytes, vb.resources.spill_store_bytes),
                launches=(_launch_count(va.metadata), _launch_count(vb.metadata)),
                error=r.error,
                config=_config_cell(va, vb),
                root=_root_cell(r.comparison),
                severity=_severity(r.comparison),
            )
        )
    return rows


_SEVERITY_ORDER = ("critical", "major", "minor", "info")


def _config_cell(va: Any, vb: Any) -> str:
    """``XBLOCK=1 R0_BLOCK=2048`` (the kernel's declared constexprs), ``R0_BLOCK=2048→1024`` where A and B differ,
    plus launch options that differ."""
    ca = {s.name: s.constexpr for s in va.specialization if s.is_constexpr_param}
    cb = {s.name: s.constexpr for s in vb.specialization if s.is_constexpr_param}
    bits = []
    for k in list(dict.fromkeys([*ca, *cb])):
        x, y = ca.get(k), cb.get(k)
        bits.append(f"{k}={x}" if x == y else f"{k}={x if x is not None else '—'}→{y if y is not None else '—'}")
    for k in ("num_warps", "num_stages"):
        x, y = va.options.get(k, va.metadata.get(k)), vb.options.get(k, vb.metadata.get(k))
        if x != y and x is not None and y is not None:
            bits.append(f"{k}={x}→{y}")
    return " ".join(bits)


def _roots(c: Comparison | None) -> list[Any]:
    if c is None or c.diagnosis is None:
        return []
    fs = [f for f in c.diagnosis.findings if not f.id.startswith("time.")]
    roots = [f for f in fs if not f.causes]
    return sorted(roots, key=lambda f: _SEVERITY_ORDER.index(f.severity) if f.severity in _SEVERITY_ORDER else 9)


def _root_cell(c: Comparison | None) -> str:
    roots = _roots(c)
    if not roots:
        return ""
    f = roots[0]
    more = f" (+{len(roots) - 1} more roots)" if len(roots) > 1 else ""
    return f"{f.id} ({f.severity}): {f.title}{more}"


def _severity(c: Comparison | None) -> str:
    if c is None or c.diagnosis is None or not c.diagnosis.findings:
        return ""
    ranks = [_SEVERITY_ORDER.index(f.severity) for f in c.diagnosis.findings if f.severity in _SEVERITY_ORDER]
    return _SEVERITY_ORDER[min(ranks)] if ranks else ""


def _rank(r: OverviewRow) -> tuple[int, int]:
    """Sort key of the grouped overview: errors first, then differing pairs by severity, then identical ones."""
    if r.error:
        return (0, 0)
    if r.changed:
        return (1, _SEVERITY_ORDER.index(r.severity) if r.severity in _SEVERITY_ORDER else len(_SEVERITY_ORDER))
    return (2, 0)


def summary_line(rows: list[OverviewRow]) -> str:
    """``54 pairs: 45 identical, 9 differ — by severity: critical 1, major 5, minor 3`` (plus errors)."""
    same = sum(1 for r in rows if not r.changed and not r.error)
    errors = sum(1 for r in rows if r.error)
    differ = len(rows) - same - errors
    text = f"{plural(len(rows), 'pair')}: {same} identical, {differ} differ"
    if errors:
        text += f", {errors} not compared"
    counts = [(sev, sum(1 for r in rows if r.changed and not r.error and r.severity == sev)) for sev in _SEVERITY_ORDER]
    shown = [f"{sev} {n}" for sev, n in counts if n]
    unranked = differ - sum(n for _, n in counts)
    if unranked:
        shown.append(f"no finding {unranked}")
    if shown:
        text += " — by severity: " + ", ".join(shown)
    return text


def _launch_count(meta: dict[str, Any]) -> int | None:
    launches = meta.get("launches")
    return int(launches.get("count", 0)) if isinstance(launches, dict) else None


def _ab(x: object, y: object) -> str:
    fx = "?" if x is None else str(x)
    fy = "?" if y is None else str(y)
    return fx if fx == fy else f"{fx}→{fy}"


def _describe_side(label: str, b: Bundle, sign: str) -> str:
    what = {"capture": "capture", "triton-cache": "Triton cache", "triton-dump": "TRITON_KERNEL_DUMP"}.get(
        b.suite, f"bundle {b.suite}"
    )
    bits = [plural(len(b.variants), "kernel"), what]
    if b.target:
        bits.append(b.target)
    if b.triton_version:
        bits.append(f"Triton {b.triton_version}")
    if b.command:
        bits.append("$ " + " ".join(b.command))
    return f"  {sign} {label}: " + " · ".join(bits)


def render_overview(
    cd: CollectionDiff, *, color: bool = False, width: int = 120, top: int | None = None, theme: str = "dark"
) -> str:
    """The overview: both sides, the summary by severity, one table row per pair grouped as errors, pairs that
    differ (most severe first: their configuration and root finding) and identical pairs, then the unpaired
    kernels (plain text, ANSI if ``color``, in the palette ``theme``: ``dark``, ``light``, ``mono``). ``top``: only
    the ``top`` most severe pairs that differ are listed."""
    from irdiff.render.terminal import paint_text

    def st(text: str, role: str) -> str:
        return paint_text(text, role, color=True, theme=theme) if color else text

    all_rows = overview_rows(cd)
    rows = sorted(all_rows, key=_rank)
    out = [st(f"irdiff diff  {cd.label_a} vs {cd.label_b}", "title")]
    out.append(st(_describe_side(cd.label_a, cd.a, "-"), "minus"))
    out.append(st(_describe_side(cd.label_b, cd.b, "+"), "plus"))
    out.append("")
    out.append("  " + summary_line(all_rows))
    out.append("")
    differing = [r for r in rows if r.changed or r.error]
    identical = [r for r in rows if not r.changed and not r.error]
    left_off = 0
    if top is not None and len(differing) > top:
        left_off = len(differing) - top
        differing = differing[:top]
    listed = differing + ([] if top is not None else identical)
    with_launches = any(x is not None for r in listed for x in r.launches)
    head: tuple[str, ...] = ("kernel", "paired by", "differs in", "key counts (A→B)", "registers")
    head += ("launches",) if with_launches else ()
    cells = []
    for r in listed:
        changed = r.error or (" ".join(r.changed) if r.changed else "identical")
        counts = ", ".join(f"{k} {x}→{y}" for k, x, y in r.counts)
        regs = _ab(*r.registers)
        if any(r.spills):
            regs += f" (spills {_ab(*r.spills)} B)"
        row: tuple[str, ...] = (r.kernel, r.paired, changed, counts, regs)
        row += (_ab(*r.launches),) if with_launches else ()
        cells.append(row)
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(head)]
    widths[0] = min(widths[0], 48)
    widths[3] = min(widths[3], max(20, width - sum(widths) + widths[3] - 2 * len(widths)))

    def fmt(row: tuple[str, ...]) -> str:
        parts = []
        for i, (text, w) in enumerate(zip(row, widths)):
            last = i == len(row) - 1
            text = _fit_kernel(text, w) if i == 0 else (text if len(text) <= w or last else text[: w - 1] + "…")
            parts.append(text.ljust(w) if not last else text)
        return "  " + "  ".join(parts).rstrip()

    def detail(r: OverviewRow) -> str | None:
        """Second line of a pair that differs: its configuration and its root finding."""
        bits = [r.config] if r.config else []
        if r.root:
            bits.append(f"root {r.root}")
        if not bits or not (r.changed or r.error):
            return None
        text = "      ↳ " + " · ".join(bits)
        return text if len(text) <= max(width, 60) else text[: max(width, 60) - 1] + "…"

    out.append(st(fmt(head), "dim"))
    for r, c in zip(listed, cells):
        line = fmt(c)
        if r.error:
            line = st(line, "error")
        elif r.changed:
            line = st(line, "differs")
        out.append(line)
        more = detail(r)
        if more:
            out.append(st(more, "dim"))
    if not all_rows:
        out.append("  (no kernel of A pairs with a kernel of B)")
    if left_off:
        out.append(f"  … {plural(left_off, 'more pair')} that differ{'s' if left_off == 1 else ''} (--top {top})")
    if top is not None and identical:
        out.append(f"  {plural(len(identical), 'identical pair')} not listed (--top)")
    out.append("")
    for label, names, b in ((cd.label_a, cd.pairing.only_a, cd.a), (cd.label_b, cd.pairing.only_b, cd.b)):
        if names:
            other = cd.b if b is cd.a else cd.a
            shown = ", ".join(_only_cell(n, b, other) for n in names)
            out.append(f"  only in {label}: {shown}")
    for label, also, b in ((cd.label_a, cd.pairing.also_a, cd.a), (cd.label_b, cd.pairing.also_b, cd.b)):
        for kept, alts in also.items():
            for n in alts:
                out.append(f"  also compiled in {label}: {describe_alternative(b, n, kept)}")
    return "\n".join(out).rstrip("\n") + "\n"


def _only_cell(name: str, b: Bundle, other: Bundle) -> str:
    """An unpaired kernel for the "only in" line: its name, its kernel when the variant name differs, and the
    target when that is why it has no partner (``k (sm80; `k` there only for sm90)``)."""
    v = b.variants[name]
    notes = [v.kernel] if v.kernel != name else []
    why = target_note(v, other)
    if why:
        notes.append(why)
    return f"{name} ({'; '.join(notes)})" if notes else name


def _fit_kernel(text: str, width: int) -> str:
    """Shorten a kernel cell in the middle, each side of ``A → B`` separately, so that the ends (``_0-2``, the
    TorchInductor counter and the variant suffix that tell same-name kernels apart) stay visible."""
    if len(text) <= width:
        return text

    def mid(t: str, w: int) -> str:
        if len(t) <= w:
            return t
        head = max(1, (w - 1) // 2)
        return t[:head] + "…" + t[len(t) - (w - 1 - head) :] if w > 1 else "…"

    if " → " in text:
        a, b = text.split(" → ", 1)
        half = (width - 3) // 2
        return mid(a, half) + " → " + mid(b, width - 3 - half)
    return mid(text, width)


def describe_alternative(b: Bundle, name: str, kept: str) -> str:
    """One line on a kernel that lost the same-name tie-break to ``kept`` (see
    :attr:`~irdiff.collections_diff.pairing.Pairing.also_a`): what differs from the paired one (constexpr config, launch
    options, specialization), whether TorchInductor compiled it as one of several autotuning configs, and its
    launches (``N launches, all by the autotuner's benchmark`` for a config the autotuner timed and did not pick).
    """
    from irdiff.collections_diff.pairing import launch_counts

    v, k = b.variants[name], b.variants[kept]
    diffs = []
    for key in sorted(set(v.config) | set(k.config)):
        if str(v.config.get(key)) != str(k.config.get(key)):
            diffs.append(f"{key}={v.config.get(key, '—')} (paired: {k.config.get(key, '—')})")
    for opt in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
        x, y = v.options.get(opt, v.metadata.get(opt)), k.options.get(opt, k.metadata.get(opt))
        if x != y:
            diffs.append(f"{opt}={x} (paired: {y})")
    ks = {s.name: s for s in k.specialization}
    for s in v.specialization:
        other = ks.get(s.name)
        if s.is_constexpr_param or s.name in v.config or (other is not None and other.summary() == s.summary()):
            continue
        diffs.append(f"{s.name} {s.summary()} (paired: {other.summary() if other else '—'})")
    bits = [f"{name}: another compile of {kept} (paired)"]
    bits.append(", ".join(diffs) if diffs else "same specialization and options")
    inductor = v.metadata.get("inductor")
    if isinstance(inductor, dict) and int(inductor.get("configs") or 0) > 1:
        bits.append(f"one of {inductor['configs']} autotuning configs TorchInductor compiled for this kernel")
    c, ck = launch_counts(v), launch_counts(k)
    if c is None:
        bits.append("no launch recorded")
    else:
        n, auto = c
        if auto and auto >= n:
            text = f"{plural(n, 'launch', 'launches')}, all by the autotuner's benchmark (not picked)"
        elif auto:
            text = f"{plural(n, 'launch', 'launches')} ({auto} by the autotuner's benchmark)"
        else:
            text = plural(n, "launch", "launches")
        if ck is not None:
            text += f"; paired: {ck[0]}" + (f" ({ck[1]} by the autotuner's benchmark)" if ck[1] else "")
        bits.append(text)
    return " — ".join(bits)


def render_collection_diff(
    cd: CollectionDiff, opts: Any, *, overview_only: bool = False, top: int | None = None
) -> str:
    """Overview, then the terminal report of every pair that differs, most severe first (``opts``:
    ``TerminalOptions``, its ``theme`` for the overview too; ``top``: only the ``top`` most severe)."""
    from irdiff.render.terminal import paint_text, render

    parts = [render_overview(cd, color=opts.color, width=opts.width, top=top, theme=opts.theme)]
    if overview_only:
        return "".join(parts)
    order = {
        id(r): _SEVERITY_ORDER.index(s) if (s := _severity(r.comparison)) in _SEVERITY_ORDER else 9 for r in cd.results
    }
    shown = 0
    for r in sorted(cd.results, key=lambda x: order[id(x)]):
        if r.comparison is None:
            continue
        c = r.comparison
        if not c.stage_diffs and c.identical:  # quick_identical: nothing to show
            continue
        spec_differs = any(s.differs for s in _spec_rows(c))
        if c.identical and not spec_differs:
            continue
        if top is not None and shown >= top:
            break
        shown += 1
        title = f"{r.pair.a}" if r.pair.a == r.pair.b else f"{r.pair.a} → {r.pair.b}"
        rule = f"━━ {title} ({r.pair.how}) " + "━" * max(4, opts.width - len(title) - len(r.pair.how) - 8)
        parts.append("\n" + (paint_text(rule, "title", color=True, theme=opts.theme) if opts.color else rule) + "\n")
        parts.append(render(c, opts))
    return "".join(parts)


def _spec_rows(c: Comparison) -> list[Any]:
    from irdiff.render import spec_rows

    return spec_rows(c)


def show_collection_diff(
    path_a: str,
    path_b: str,
    *,
    kernel: str | None,
    overview_only: bool,
    stages: list[str] | None,
    context: int,
    raw: bool,
    side_by_side: bool,
    width: int | None,
    color: str,
    paging: str,
    reports: str | None = None,
    force: bool = False,
    top: int | None = None,
    theme: str = "dark",
    stage0_full: bool = False,
) -> CollectionDiff:
    """``irdiff diff`` for two collections: compare, render for the terminal, print (through the pager); with
    ``reports``, also write the report files of every pair that differs (see :func:`write_pair_reports`);
    ``theme``: the palette (``dark``, ``light``, ``mono``), ``stage0_full``: every stage-0 row (``--stage0 full``)."""
    from irdiff.render.terminal import TerminalOptions, color_enabled, emit, terminal_width

    cd = compare_collections(path_a, path_b, stages=stages, raw=raw, context=context, kernel=kernel)
    if reports:
        for path in write_pair_reports(cd, reports, force=force):
            print(f"report: {path}", file=sys.stderr)
    opts = TerminalOptions(
        color=color_enabled(color),
        width=terminal_width(width),
        side_by_side=side_by_side,
        show_spec=stages is None,
        theme=theme,
        stage0_full=stage0_full,
        sides=(str(path_a), str(path_b)),  # each pair's sides: the collections as the user named them
        title="irdiff diff",
    )
    emit(render_collection_diff(cd, opts, overview_only=overview_only, top=top), paging=paging)
    return cd


def write_pair_reports(cd: CollectionDiff, directory: str, *, force: bool = False) -> list[str]:
    """Write, for every pair that differs, the HTML, Markdown and JSON reports the suite comparisons get
    (:func:`irdiff.render.report.write_reports`), named after the kernel (``DIR/<kernel>.html`` …), and
    ``DIR/index.md``: the overview table with links. Returns the paths written.

    :raises ReportError: a file in ``directory`` exists and is not an irdiff report (without ``force``).
    """
    from irdiff.render.report import check_outputs, write_report, write_reports

    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    jobs: list[tuple[PairResult, str, list[tuple[str, str]]]] = []
    for r in cd.results:
        if r.comparison is None or (r.comparison.identical and not any(x.differs for x in _spec_rows(r.comparison))):
            continue
        slug = re.sub(r"[^A-Za-z0-9_.-]", "_", r.pair.a if r.pair.a == r.pair.b else f"{r.pair.a}--{r.pair.b}")
        jobs.append((r, slug, [(fmt, str(root / f"{slug}.{fmt}")) for fmt in ("html", "md", "json")]))
    index = str(root / "index.md")
    check_outputs([index] + [p for _, _, outs in jobs for _, p in outs], force=force)
    written: list[str] = []
    links = []
    for r, slug, outs in jobs:
        assert r.comparison is not None
        written += write_reports(r.comparison, outs, force=force)
        links.append(f"- `{slug}`: [HTML]({slug}.html) · [Markdown]({slug}.md) · [JSON]({slug}.json)")
    text = "\n".join(
        [
            "<!-- irdiff-report: capture index -->",  # the Markdown report marker: a later run may overwrite it
            f"# irdiff: {cd.label_a} vs {cd.label_b}",
            "",
            "```",
            render_overview(cd, color=False).rstrip(),
            "```",
            "",
            "## Pairs that differ",
            "",
            *(links or ["(none)"]),
            "",
        ]
    )
    written.append(write_report(index, text, force=force))
    return written
