"""From a bundle to a :class:`~irdiff.render.Comparison`: normalize and align every stage, then diagnose.

This is the step between the compile driver and the renderers; it reads only the bundle (no Triton import), so a
bundle made on another machine can be compared here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from irdiff.bundle import STAGES, Bundle, VariantResult, load_bundle, load_variant_dir
from irdiff.render import Comparison

__all__ = ["PAIR_CHOICES", "build_comparison", "bundle_pair", "cached_output", "load_pair", "output_key", "parse_stages",
           "store_output"]  # fmt: skip


def parse_stages(text: str | Iterable[str] | None) -> list[str] | None:
    """``"ttgir,ptx"`` (or a list of names) → stage names in pipeline order; None means every stage, and so does
    ``"all"``.

    :raises ValueError: an unknown stage name (the message lists the valid ones).
    """
    if text is None:
        return None
    if isinstance(text, str) and text.strip().lower() == "all":
        return list(STAGES)
    parts = text.split(",") if isinstance(text, str) else list(text)
    names = [p.strip().lower() for p in parts if p.strip()]
    unknown = [n for n in names if n not in STAGES]
    if unknown:
        from irdiff.suite import did_you_mean

        hint = did_you_mean(unknown[0], STAGES)
        raise ValueError(f"unknown stage {unknown[0]!r}{hint} (choose from {', '.join(STAGES)})")
    if not names:
        raise ValueError(f"--stage: no stage named (choose from {', '.join(STAGES)})")
    return [s for s in STAGES if s in names]


def build_comparison(
    bundle: Bundle,
    a: str,
    b: str,
    stages: Iterable[str] | str | None = None,
    raw: bool = False,
    context: int = 3,
    cache: bool = True,
) -> Comparison:
    """Normalize and diff each stage present in both variants, in pipeline order, then diagnose.

    The stage diffs and the diagnosis are taken from :mod:`irdiff.comparison_cache` when the same pair (by content),
    options and irdiff sources were compared before, and stored there otherwise; ``cache=False`` neither reads nor
    writes it.

    :param a: the inspected variant (``--variant``; shown ``-``/left).
    :param b: the baseline (``--against``; shown ``+``/right).
    :param stages: stage names or ``"ttgir,ptx"``; None for all of ``irdiff.bundle.STAGES``.
    :param raw: diff the raw texts (``--raw``: no normalization, kernel names kept).
    :param context: lines of context around each hunk (≥ 0).
    :raises ValueError: unknown variant or stage, a variant that failed to compile, negative context.
    """
    if context < 0:
        raise ValueError(f"--context must be 0 or more, not {context}")
    wanted = parse_stages(stages) or list(STAGES)
    va, vb = bundle.compiled_variant(a), bundle.compiled_variant(b)
    key = None
    if cache:
        from irdiff import comparison_cache

        key, hit = _lookup(bundle, a, b, wanted, raw, context)
        if hit is not None:
            return hit

    from irdiff.align import diff_stage
    from irdiff.normalize import normalize_pair

    diffs, texts = [], []
    for stage in wanted:
        ta, tb = va.text(stage), vb.text(stage)
        if not ta or not tb:
            continue
        ra, rb = _kernel_lines(va, stage, raw), _kernel_lines(vb, stage, raw)
        na, nb = normalize_pair(
            stage, ta, tb, va.kernel or None, vb.kernel or None, raw=raw, line_range_a=ra, line_range_b=rb
        )
        diffs.append(diff_stage(na, nb, context=context))
        texts.append((ta, tb))

    diagnosis, note = None, None
    try:
        from irdiff.diagnose import diagnose
    except ImportError:
        diagnose = None  # type: ignore[assignment]
    if diagnose is not None:
        try:
            # the stage diffs made above are reused (each stage is normalized and aligned once); raw diffs are not
            diagnosis = diagnose(bundle, a, b, stage_diffs=[] if raw else diffs)
        except Exception as e:  # the diffs stay useful when a diagnostic rule breaks on unusual input
            note = f"diagnostics failed: {type(e).__name__}: {e}"
    if key is not None and note is None:
        comparison_cache.store(key, diffs, diagnosis, texts)
    return Comparison(
        bundle=bundle,
        a=a,
        b=b,
        stage_diffs=diffs,
        diagnosis=diagnosis,
        raw=raw,
        context=context,
        diagnosis_error=note,
    )


def cached_comparison(
    bundle: Bundle, a: str, b: str, stages: Iterable[str] | str | None = None, raw: bool = False, context: int = 3
) -> Comparison | None:
    """What :func:`build_comparison` would return, when it is in :mod:`irdiff.comparison_cache`; None otherwise
    (nothing is normalized, aligned or diagnosed here).

    :raises ValueError: as :func:`build_comparison`.
    """
    if context < 0:
        raise ValueError(f"--context must be 0 or more, not {context}")
    return _lookup(bundle, a, b, parse_stages(stages) or list(STAGES), raw, context)[1]


def _lookup(
    bundle: Bundle, a: str, b: str, wanted: list[str], raw: bool, context: int
) -> tuple[str, Comparison | None]:
    """The comparison cache's key of this comparison, and the comparison when it is stored there."""
    from irdiff import comparison_cache

    va, vb = bundle.compiled_variant(a), bundle.compiled_variant(b)
    key = comparison_cache.comparison_key(bundle, a, b, wanted, raw, context)
    hit = comparison_cache.load(key, a, b, {s: (va.text(s), vb.text(s)) for s in wanted})
    if hit is None:
        return key, None
    return key, Comparison(bundle=bundle, a=a, b=b, stage_diffs=hit[0], diagnosis=hit[1], raw=raw, context=context)


def output_key(
    bundle: Bundle, a: str, b: str, stages: Iterable[str] | str | None, raw: bool, context: int, view: Any
) -> str:
    """The output cache's key of rendering :func:`build_comparison`'s comparison (same arguments) with the
    renderer options ``view`` (JSON-able: :func:`irdiff.comparison_cache.output_key`).

    :raises irdiff.bundle.BundleError: as :func:`irdiff.comparison_cache.comparison_key`.
    """
    from irdiff import comparison_cache

    wanted = parse_stages(stages) or list(STAGES)
    return comparison_cache.output_key(
        comparison_cache.comparison_key(bundle, a, b, wanted, raw, context), bundle, view
    )


def cached_output(key: str, color: bool) -> Any:
    """The rendered output stored under ``key`` (:func:`output_key`), an
    :class:`irdiff.comparison_cache.CachedOutput`, or None (see :func:`irdiff.comparison_cache.load_output`)."""
    from irdiff import comparison_cache

    return comparison_cache.load_output(key, color)


def store_output(key: str, comparison: Comparison, text: str) -> bool:
    """Keep ``text``, the rendering of ``comparison``, under ``key`` (:func:`output_key`), with whether the pair's
    normalized TTIR is identical in it (None when not compared or compared raw)."""
    from irdiff import comparison_cache

    ttir = None if comparison.raw else next((d for d in comparison.stage_diffs if d.stage == "ttir"), None)
    return comparison_cache.store_output(key, text, None if ttir is None else ttir.identical)


def _kernel_lines(v: VariantResult, stage: str, raw: bool) -> list[tuple[int, int]] | None:
    """For the ``python`` stage: the kernel function's own lines (recorded by the compile driver and the capture
    hooks), then those of the ``@triton.jit`` functions it calls in the same file (``callee_lines``, captures), so
    the diff shows the kernels' sources rather than the (often shared) file that defines them: a change elsewhere
    in the file is not a difference of the kernel; with ``--raw`` too (then the function names are kept)."""
    lines = v.metadata.get("kernel_lines")
    if stage != "python" or not (isinstance(lines, list) and len(lines) == 2):
        return None
    ranges = [(int(lines[0]), int(lines[1]))]
    for r in v.metadata.get("callee_lines") or []:
        if isinstance(r, list) and len(r) == 2:
            ranges.append((int(r[0]), int(r[1])))
    return ranges


def _is_bundle(p: Path) -> bool:
    return (p / "manifest.json").is_file()


def _is_variant_dir(p: Path) -> bool:
    return (p / "variant.json").is_file()


def _pick(bundle: Bundle, name: str | None, role: str) -> str:
    if name:
        if name not in bundle.variants:
            have = ", ".join(bundle.variants) or "none"
            raise ValueError(f"{bundle.directory}: no variant {name!r} (it has: {have})")
        return name
    if len(bundle.variants) == 1:
        return next(iter(bundle.variants))
    raise ValueError(
        f"{bundle.directory} holds {len(bundle.variants)} variants ({', '.join(bundle.variants)}): name the {role}"
    )


# How :func:`bundle_pair` chose a side the user did not name: (the sentence ``irdiff diff BUNDLE`` prints on
# stderr, the short label the terminal header puts beside that side).
PAIR_CHOICES: dict[str, tuple[str, str]] = {
    "recorded": ("the pair its manifest records", "recorded pair"),
    "order": ("its only two variants, in its order", "bundle order"),
    "other": ("the other of its two variants", "the other variant"),
}


def bundle_pair(bundle: Bundle, variant: str | None, against: str | None) -> tuple[str, str, str]:
    """The pair of one bundle to compare, ``(a, b, how)``: ``variant``/``against`` where given; otherwise the pair the
    manifest records (``Bundle.pair``), the bundle's only two variants in its order, or the other of two.

    :returns: ``how`` is a key of :data:`PAIR_CHOICES` saying how the sides the user did not name were chosen
        (``""`` when both were named).
    A variant may be compared with itself (reported identical), as ``irdiff compare`` allows: when both sides are
    named so, or the manifest records that pair (``irdiff SUITE --variant X --against X`` saved it).

    :raises ValueError: a name the bundle lacks, a side that cannot be chosen (more than two variants and no pair
        recorded), or a side that would be chosen to be the same variant as the other (one variant in the bundle).
    """
    pair: list[str | None] = list(bundle.pair) if len(bundle.pair) == 2 else [None, None]
    names = list(bundle.variants)
    how = "recorded"
    if pair == [None, None] and len(names) == 2:  # exactly two variants: compare them in bundle order
        pair = [names[0], names[1]]
        how = "order"
    if variant and not against and pair[0] == variant:
        pair = [variant, pair[1]]
    elif variant and not against and len(names) == 2:
        pair = [variant, next(n for n in names if n != variant)]
        how = "other"
    a = _pick(bundle, variant or pair[0], "--variant")
    b = _pick(bundle, against or pair[1], "--against")
    if a == b and not (variant and against) and pair != [a, a]:
        # one side would be chosen to be the other: a variant is compared with itself only when asked for (as
        # `irdiff compare` allows: a check that compiles are reproducible, reported identical) or recorded so
        raise ValueError(
            f"{bundle.directory}: only {a!r} is there to compare; name both sides (--variant {a} --against {a}"
            " compares it with itself)"
        )
    return a, b, "" if variant and against else how


def load_pair(
    path_a: str | os.PathLike[str],
    path_b: str | os.PathLike[str] | None = None,
    variant: str | None = None,
    against: str | None = None,
) -> tuple[Bundle, str, str]:
    """Saved results → ``(bundle, a, b)`` for :func:`build_comparison` (``irdiff diff``).

    Accepted forms:

    * one bundle directory: ``variant``/``against`` name the pair (default: the bundle's recorded pair, or its
      only two variants; ``variant`` alone is compared with the other of two);
    * two variant directories (``DIR/<variant>`` with ``variant.json``);
    * two bundle directories (e.g. the same suite compiled by two Triton versions): ``variant`` is taken from the
      first and ``against`` (default: the same name) from the second; a variant directory may stand for either.

    When both sides have the same variant name, they are told apart by their directory (``bundle36/annotated``).

    :raises ValueError: a path that is neither a bundle nor a variant directory, or variants that cannot be chosen.
    :raises irdiff.bundle.BundleError: an unreadable bundle or variant record.
    """
    pa = Path(path_a)
    for p in (pa, Path(path_b) if path_b is not None else pa):
        if not p.exists():
            raise ValueError(f"{p} does not exist")
    if path_b is None:
        if not _is_bundle(pa):
            raise ValueError(f"{pa} is not an irdiff bundle (no manifest.json); give two variant directories instead")
        bundle = load_bundle(pa)
        a, b, _how = bundle_pair(bundle, variant, against)
        return bundle, a, b

    pb = Path(path_b)
    sides: list[tuple[VariantResult, Bundle | None]] = []
    for p, name in ((pa, variant), (pb, against or variant)):
        if _is_bundle(p):
            bnd = load_bundle(p)
            sides.append((bnd.variants[_pick(bnd, name, "variant")], bnd))
        elif _is_variant_dir(p):
            parent = load_bundle(p.parent) if _is_bundle(p.parent) else None
            sides.append((load_variant_dir(p), parent))
        else:
            raise ValueError(f"{p} is neither an irdiff bundle (manifest.json) nor a variant directory (variant.json)")
    (va, ba), (vb, bb) = sides
    name_a, name_b = va.name, vb.name
    if name_a == name_b:  # tell them apart by the bundle directory they come from
        da = (pa if _is_bundle(pa) else pa.parent).resolve()
        db = (pb if _is_bundle(pb) else pb.parent).resolve()
        name_a, name_b = f"{da.name}/{name_a}", f"{db.name}/{name_b}"
        if name_a == name_b:
            name_a, name_b = f"{name_a} (1)", f"{name_b} (2)"
    va, vb = replace(va, name=name_a), replace(vb, name=name_b)

    def both(get: Callable[[Bundle | None, VariantResult], str]) -> str:
        x, y = get(ba, va), get(bb, vb)
        return x if x == y or not y else (y if not x else f"{x} | {y}")

    bundle = Bundle(
        suite=both(lambda b, v: b.suite if b else ""),
        target=both(lambda b, v: v.target or (b.target if b else "")),
        triton_version=both(lambda b, v: b.triton_version if b else str(v.metadata.get("triton_version", ""))),
        ptxas_version=both(lambda b, v: v.resources.ptxas_version or (b.ptxas_version if b else "")),
        variants={name_a: va, name_b: vb},
        pair=[name_a, name_b],
        directory="",
    )
    return bundle, name_a, name_b
