"""Diagnostics: why two compiled variants differ, as a chain of findings from specialization to registers and time.

``diagnose(bundle, a, b)`` reads only the bundle (no Triton import): it extracts facts per variant
(:mod:`irdiff.diagnose.facts`), compares them with the rules (:mod:`irdiff.diagnose.rules`), links each finding to the
findings that cause it (``Finding.causes``), adds the roots rules cannot see and links the rest by provenance
(:mod:`irdiff.diagnose.roots`: source changes, attribute changes, settings, the first diverging pass), orders them
roots first, then effects, then the unexplained ones, and, when the runner has measured both
variants (``bundle.runs["timing"]``), adds a ``time.measured`` finding that says whether the static chain explains
the measured direction and size.

Example::

    d = diagnose(load_bundle("/tmp/b"), "annotated", "unannotated")
    d.findings[0].id        # "spec.constexpr-one-lost"
    print(explain(d, "pipeline.load-not-pipelined"))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from irdiff import stages
from irdiff.bundle import Bundle, VariantResult
from irdiff.diagnose.model import SEVERITIES, Diagnosis, Evidence, Finding, Severity

if TYPE_CHECKING:
    from irdiff.align import StageDiff
    from irdiff.diagnose.counts import KEY_COUNTS, count_ops
    from irdiff.diagnose.facts import VariantFacts, extract_facts
    from irdiff.diagnose.roots import ROOT_IDS
    from irdiff.diagnose.rules import RULE_IDS

# Names re-exported from the modules that define them, imported on first use (PEP 562): importing the package (a
# renderer reading a cached Diagnosis, irdiff.comparison_cache) loads only the data model, not the rules and fact
# extractors with their hundreds of regular expressions; :func:`diagnose` imports those when it runs.
_LAZY = {
    "KEY_COUNTS": "counts",
    "count_ops": "counts",
    "VariantFacts": "facts",
    "extract_facts": "facts",
    "ROOT_IDS": "roots",
    "RULE_IDS": "rules",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "KEY_COUNTS",
    "ROOT_IDS",
    "RULE_IDS",
    "SEVERITIES",
    "Diagnosis",
    "Evidence",
    "Finding",
    "Severity",
    "count_ops",
    "diagnose",
    "causal_paths",
    "effects_of",
    "explain",
    "extract_facts",
    "identical_after_normalization",
]

_WEIGHT = {"info": 0, "minor": 1, "major": 2, "critical": 4}


def identical_after_normalization(va: VariantResult, vb: VariantResult, stage_diffs: Sequence[StageDiff] = ()) -> bool:
    """True when TTIR, TTGIR, LLIR, PTX and SASS are equal after :func:`irdiff.normalize.normalize` (kernel names,
    locations, SSA/register numbering erased) and the specialization (types, divisibility, constants) is the same.

    :param stage_diffs: diffs the pipeline already made of normalized (not raw) stages of ``va`` and ``vb``
        (:func:`irdiff.pipeline.build_comparison`); those stages are not normalized and aligned again.
    """
    from irdiff.align import diff_stage
    from irdiff.diagnose.texts import stage_text
    from irdiff.normalize import normalize_pair

    spec = [(s.name, s.type, s.divisibility, s.constexpr) for s in va.specialization]
    if spec != [(s.name, s.type, s.divisibility, s.constexpr) for s in vb.specialization]:
        return False
    for stage in (s.name for s in stages.text_stages() if s.compared):
        ta, tb = stage_text(va, stage), stage_text(vb, stage)
        if bool(ta) != bool(tb):
            return False
        if not ta:
            continue
        done = next((d for d in stage_diffs if d.stage == stage), None)
        if done is not None:
            if not done.identical:
                return False
            continue
        na, nb = normalize_pair(stage, ta, tb, va.kernel or None, vb.kernel or None)
        # The aligner, not a line comparison: readable lines keep Python-derived name stems (%acc vs %accumulator).
        if not diff_stage(na, nb).identical:
            return False
    return True


def _inert_source_note(va: VariantResult, vb: VariantResult, a: str, b: str) -> list[str]:
    """A note naming the source changes (:func:`irdiff.diagnose.source.diff_sources`, at most 3, with their lines)
    when the two kernels' sources differ but TTIR through SASS and the specialization are identical after
    normalization: the change compiles to nothing (e.g. ``tl.multiple_of`` on a scalar argument, which Triton 3.9
    drops), which is itself the answer, not "no known cause"."""
    from irdiff.diagnose.source import diff_sources

    cs = [c for c in diff_sources(va, vb).semantic if c.kind != "option"]
    if not cs:
        return []

    def where(ln_a: int | None, ln_b: int | None) -> str:
        return ", ".join(f"line {ln} of `{v}`" for v, ln in ((a, ln_a), (b, ln_b)) if ln is not None)

    named = "; ".join(f"{c.words(a, b)} ({where(c.line_a, c.line_b)})" for c in cs[:3])
    more = f" and {len(cs) - 3} more" if len(cs) > 3 else ""
    return [
        f"the source differs ({named}{more}) but the compiled code (TTIR, TTGIR, LLIR, PTX, SASS) and the "
        "specialization are identical after normalization: the change has no effect on this compile"
    ]


def _link(findings: list[Finding]) -> None:
    """Fill ``causes`` from :data:`CAUSES`: the most direct present candidate, plus other present candidates that
    are not already ancestors of a kept one (independent paths, e.g. narrow loads *and* lost pipelining). Candidates
    that point at the other variant (:data:`DIRECTION`) are skipped, and so are candidates too small to explain the
    finding (both give :attr:`Finding.instructions` and the candidate's is under a quarter of the finding's; a
    candidate that adds or removes no instruction, ``instructions == 0``, explains no PTX/SASS count). A finding
    none of whose causes is present stays unlinked here: :func:`irdiff.diagnose.roots.apply_roots` links it by
    provenance or lists it as unexplained (rules declare no structural "fallback" neighbours: a link needs a declared
    cause that is present, or evidence)."""
    from irdiff.diagnose.rules import CAUSES, DIRECTION

    by_id = {f.id: f for f in findings}

    def fits(c: str, f: Finding) -> bool:
        """``c`` is present and, where :data:`DIRECTION` says so, predicts the right variant for ``f``."""
        if c not in by_id or c == f.id:
            return False
        size_c, size_f = by_id[c].instructions, f.instructions
        if size_c is not None and size_f is not None and 4 * size_c < size_f:
            return False  # too small to explain it (e.g. 2 fp64 conversions for 200 more SASS instructions)
        if size_c == 0 and f.id.startswith(("ptx.", "sass.")):
            return False  # adds or removes no instruction (e.g. one conversion each side): explains no count
        sign = DIRECTION.get((c, f.id))
        pc, pf = by_id[c].predicts, f.predicts
        if sign is None or pc is None or pf is None:
            return True
        return (pc == pf) == (sign > 0)

    direct: dict[str, list[str]] = {}
    for f in findings:
        direct[f.id] = [c for c in CAUSES.get(f.id, []) if fits(c, f)]

    def ancestors(fid: str, seen: set[str] | None = None) -> set[str]:
        seen = seen if seen is not None else set()
        for c in direct.get(fid, []):
            if c not in seen:
                seen.add(c)
                ancestors(c, seen)
        return seen

    for f in findings:
        keep: list[str] = []
        for c in direct[f.id]:  # most direct candidate first (CAUSES order)
            if not keep or not any(c in ancestors(k) for k in keep):
                keep.append(c)
        f.causes = list(dict.fromkeys([*f.causes, *keep]))


def _mark_without_effect(findings: list[Finding]) -> None:
    """A stage-0 finding of :data:`EFFECTS` with none of its effects present explains nothing here: say so, make it
    ``info`` and stop it predicting a slower variant (e.g. ``do_not_specialize`` on a bound whose alignment the kernel
    states with ``tl.multiple_of``)."""
    from irdiff.diagnose.rules import EFFECTS

    for f in findings:
        prefixes = EFFECTS.get(f.id)
        if prefixes is None or any(f.id in g.causes for g in findings):
            continue
        if any(g.id.startswith(prefixes) for g in findings if g is not f):
            continue
        f.severity = "info"
        f.predicts = None
        f.remedy = None
        f.explanation += (
            " Nothing downstream differs because of it in this comparison: no coalescing, lowering, pipelining or "
            "PTX memory-instruction difference (the kernel states the fact another way, e.g. with a hint, or does not "
            "depend on it)."
        )


def _timing_rows(timing: Any, a: str, b: str) -> list[tuple[dict[str, Any], float, dict[str, Any]]]:
    """``[(shape, ratio a/b of median ms, verdict)]`` from the runner's record; ``verdict`` is the runner's own
    (``verdict`` word, ``ci``, ``min_effect``, ``sentence``), oriented ``a`` against ``b``; tolerant of missing
    fields. Records without verdicts give ``{"a_ms", "b_ms"}`` (no interval)."""
    out: list[tuple[dict[str, Any], float, dict[str, Any]]] = []
    if not isinstance(timing, dict):
        return out
    flip = {"faster": "slower", "slower": "faster"}
    for vd in timing.get("verdicts") or []:
        if not isinstance(vd, dict) or not isinstance(vd.get("ratio"), (int, float)) or vd["ratio"] <= 0:
            continue
        if (vd.get("a"), vd.get("b")) == (a, b):
            out.append((vd.get("shape") or {}, float(vd["ratio"]), dict(vd)))
        elif (vd.get("a"), vd.get("b")) == (b, a):
            ci = vd.get("ci") or []
            word = vd.get("verdict")
            out.append(
                (
                    vd.get("shape") or {},
                    1.0 / float(vd["ratio"]),
                    {
                        "sentence": vd.get("sentence", ""),
                        "verdict": flip.get(str(word), word),
                        "ci": [1.0 / ci[1], 1.0 / ci[0]] if len(ci) == 2 and ci[0] > 0 and ci[1] > 0 else None,
                        "min_effect": vd.get("min_effect"),
                    },
                )
            )
    if out:
        return out
    for row in timing.get("rows") or []:
        if not isinstance(row, dict):
            continue
        vs = row.get("variants") or {}
        ma = (vs.get(a) or {}).get("median_ms") if isinstance(vs.get(a), dict) else None
        mb = (vs.get(b) or {}).get("median_ms") if isinstance(vs.get(b), dict) else None
        if isinstance(ma, (int, float)) and isinstance(mb, (int, float)) and ma > 0 and mb > 0:
            out.append((row.get("shape") or {}, float(ma) / float(mb), {"a_ms": ma, "b_ms": mb}))
    return out


def _gmem(f: VariantFacts) -> int:
    c = f.counts.get("ptx", {})
    return sum(n for k, n in c.items() if k.startswith(("ld.global", "st.global", "cp.async ")))


_FALLBACK_EFFECT = 0.05  # records without the runner's verdict: the smallest ratio read as a difference


def _direction(a: str, b: str, ratio: float, vd: dict[str, Any]) -> str | None:
    """The variant measured slower at one shape, by the runner's own verdict (its interval and minimum effect); a
    record without one falls back to ±5 %."""
    word = vd.get("verdict")
    if word in ("slower", "faster", "no significant difference"):
        return a if word == "slower" else b if word == "faster" else None
    return a if ratio > 1 + _FALLBACK_EFFECT else b if ratio < 1 / (1 + _FALLBACK_EFFECT) else None


def _shape_text(shape: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in shape.items()) or "the default shape"


def _indicators(
    a: str, b: str, fa: VariantFacts, fb: VariantFacts, findings: list[Finding]
) -> list[tuple[str, str | None]]:
    """Static indicators of speed, each with the variant it predicts slower: ``[(text, variant)]``. Equal counts
    are no indicator (a ratio of 1.0 explains nothing)."""
    out: list[tuple[str, str | None]] = []
    ga, gb = _gmem(fa), _gmem(fb)
    if ga and gb and ga != gb:
        more = a if ga > gb else b
        out.append((f"{max(ga, gb) / min(ga, gb):.1f}× the global memory instructions in `{more}`", more))
    for f in findings:
        if f.id == "pipeline.load-not-pipelined":
            out.append((f.title.rstrip("."), f.predicts))
            break
    oa, ob = fa.occupancy, fb.occupancy
    if oa and ob and oa.ctas_per_sm != ob.ctas_per_sm:
        fewer = a if oa.ctas_per_sm < ob.ctas_per_sm else b
        out.append((f"{oa.ctas_per_sm} vs {ob.ctas_per_sm} CTAs per SM (`{a}` vs `{b}`)", fewer))
    return out


def _time_finding(
    bundle: Bundle, a: str, b: str, fa: VariantFacts, fb: VariantFacts, findings: list[Finding]
) -> Finding | None:
    """``time.measured``: the measured ratio, and whether the static chain predicts its direction and size.

    The direction at each shape is the runner's verdict (its bootstrap interval and minimum effect,
    :mod:`irdiff.run.stats`), so this finding never contradicts the printed verdicts. Static indicators are quoted
    as support only when they predict the measured direction, otherwise as contradicting it; the top static finding
    (most severe, earliest) predicting the opposite direction is flagged.
    """
    timing = (bundle.runs or {}).get("timing") if isinstance(bundle.runs, dict) else None
    rows = _timing_rows(timing, a, b)
    if not rows:
        return None
    score = sum(_WEIGHT[f.severity] * (1 if f.predicts == a else -1 if f.predicts == b else 0) for f in findings)
    predicted = a if score > 0 else b if score < 0 else None
    ev: list[Evidence] = []
    for shape, ratio, extra in rows[:6]:
        line = extra.get("sentence") or f"{a} {ratio:.3g}× the time of {b} (no interval recorded)"
        ev.append(Evidence(a, "time", None, f"{_shape_text(shape)}: {line}"))
    dirs = [_direction(a, b, r, x) for _, r, x in rows]
    significant = {d for d in dirs if d is not None}
    measured = next(iter(significant)) if len(significant) == 1 else None
    mixed = len(significant) > 1
    # the shape quoted: the largest significant difference (else the largest ratio)
    pool = [(sh, r) for (sh, r, _), d in zip(rows, dirs) if d is not None] or [(sh, r) for sh, r, _ in rows]
    q_shape, q_ratio = max(pool, key=lambda t: t[1] if t[1] >= 1 else 1 / t[1])
    size = q_ratio if q_ratio >= 1 else 1 / q_ratio
    at = f"at {_shape_text(q_shape)}"
    ratios = [r for _, r, _ in rows]
    lo, hi = min(ratios), max(ratios)
    times = f"{lo:.3g}×" if abs(hi - lo) < 0.01 else f"{lo:.3g}–{hi:.3g}×"
    inds = _indicators(a, b, fa, fb, findings)
    top = next(
        (f for f in sorted(findings, key=lambda f: -_WEIGHT[f.severity]) if f.predicts in (a, b)),
        None,
    )
    if measured is None:
        ind = "; ".join(t for t, _ in inds) or "no large static indicator"
        why = "the direction depends on the shape" if mixed else "no significant difference by the runner's interval"
        if predicted is not None and abs(score) >= 4:
            sev: Severity = "major"
            agree = False
            verdict = (
                f"Disagreement: the static chain predicts `{predicted}` slower ({ind}), but the measured time ratio "
                f"{a}/{b} is {times}: {why}. The kernel may be bound by something the IR does not show (launch "
                "overhead, DRAM bandwidth, a problem size too small to expose the difference)."
            )
        else:
            sev = "info"
            agree = True
            verdict = f"Measured time ratio {a}/{b} is {times}: {why}" + (
                ", as the static chain suggests." if predicted is None else "."
            )
    else:
        slower = measured
        faster = b if slower == a else a
        support = [t for t, v in inds if v == slower]
        against = [t for t, v in inds if v == faster]
        quoted = "; ".join(support) if support else "no large static indicator"
        contra = f" Contradicting it: {'; '.join(against)}." if against else ""
        if predicted == slower:
            agree = True
            sev = "critical" if size >= 2 else "major" if size >= 1.2 else "minor"
            verdict = (
                f"`{slower}` is measured {size:.3g}× slower than `{faster}` {at}; the static chain predicts this "
                f"direction ({quoted}).{contra}"
            )
            ga, gb = _gmem(fa), _gmem(fb)
            more = a if ga > gb else b
            g = max(ga, gb) / min(ga, gb) if ga and gb and ga != gb else None
            if g and more == slower and size > 1.5 * g:
                verdict += (
                    f" The slowdown is larger than the {g:.1f}× memory-instruction ratio alone: latency that the lost "
                    "overlap (pipelining, occupancy) no longer hides adds to the instruction count."
                )
            elif g and more == slower and size < g / 3:
                verdict += (
                    f" The slowdown is well below the {g:.1f}× memory-instruction ratio: part of the extra instructions "
                    "is hidden (the kernel is bound elsewhere, e.g. by the tensor cores or DRAM bandwidth)."
                )
        else:
            agree = False
            sev = "critical"
            verdict = (
                f"Disagreement: `{slower}` is measured {size:.3g}× slower than `{faster}` {at}, but the static chain "
                + (
                    f"predicts `{predicted}` slower ({'; '.join(against) or 'by the weight of its findings'})."
                    if predicted
                    else "predicts no difference."
                )
                + (f" Supporting the measurement: {'; '.join(support)}." if support else "")
                + " Check the measurement (clocks, shapes) and what the IR does not model (caches, DRAM, launch)."
            )
        if top is not None and top.predicts == faster:
            verdict += (
                f" The top static finding, {top.title.rstrip('.')} (`{top.id}`), predicts `{faster}` slower, the "
                "opposite of what was measured: the static chain does not explain the clock."
            )
    # link to the findings that predicted the measured slower variant (their leaves), or to nothing on disagreement
    causes: list[str] = []
    if measured is not None:
        pred = [f for f in findings if f.predicts == measured and f.severity in ("major", "critical")]
        inner = {c for f in pred for c in f.causes}
        crit = [f.id for f in pred if f.severity == "critical"]
        causes = list(dict.fromkeys([*crit[-1:], *[f.id for f in pred if f.id not in inner][-3:]]))
    if agree and measured is not None:
        title = f"`{measured}` is measured {size:.3g}× slower than `{b if measured == a else a}` {at}"
    elif agree:
        title = f"No significant time difference between `{a}` and `{b}` (ratio {times})"
    else:
        title = f"Measured {a}/{b} time ratio {times} disagrees with the static chain"
    return Finding(
        id="time.measured",
        severity=sev,
        title=title,
        explanation=verdict,
        evidence=ev,
        causes=causes,
        stage="time",
        predicts=measured,
    )


_FAILING = ("correctness", "agreement", "error")


def _result_finding(bundle: Bundle, a: str, b: str) -> Finding | None:
    """``time.wrong-result``: a variant of the pair computed a wrong result, the two disagree, or one failed to run
    (from the runner's ``runs["timing"]`` or ``runs["interpret"]`` findings). Critical; every format shows it
    first."""
    runs = bundle.runs if isinstance(bundle.runs, dict) else {}
    bad: list[dict[str, Any]] = []
    for key in ("timing", "interpret"):
        rec = runs.get(key)
        if not isinstance(rec, dict):
            continue
        for f in rec.get("findings") or []:
            if (
                isinstance(f, dict)
                and f.get("kind") in _FAILING
                and (f.get("variant") in (a, b) or "," in str(f.get("variant", "")))
            ):
                bad.append({**f, "source": key})
    if not bad:
        return None
    wrong = [f for f in bad if f["kind"] == "correctness"]
    failed = [f for f in bad if f["kind"] == "error"]
    first = (wrong or failed or bad)[0]
    v = str(first.get("variant"))
    msg = str(first.get("message", "")).splitlines()[0] if first.get("message") else ""
    if wrong:
        title = f"`{v}` computes a wrong result"
    elif failed:
        title = f"`{v}` failed to run"
    else:
        title = f"`{a}` and `{b}` compute different results"
    explanation = (
        f"{msg}. Timing a wrong or failed kernel says nothing about the code the comparison is about: fix the result "
        "first."
        if msg
        else "Fix the result first."
    )
    # a runner finding may carry no message (a crash before it wrote one): its kind is the evidence then
    ev = [
        Evidence(str(f.get("variant")), "time", None, (str(f.get("message") or "").splitlines() or [str(f["kind"])])[0])
        for f in bad[:6]
    ]
    return Finding(
        id="time.wrong-result", severity="critical", title=title, explanation=explanation, evidence=ev, stage="time"
    )


def diagnose(bundle: Bundle, a: str, b: str, stage_diffs: Sequence[StageDiff] = ()) -> Diagnosis:
    """Compare variants ``a`` (inspected, ``--variant``) and ``b`` (baseline, ``--against``) of a bundle.

    :param stage_diffs: the pipeline's diffs of the normalized stages of ``a`` and ``b`` (computed once, reused for
        "identical after normalization"); stages missing from it are normalized and aligned here.

    :returns: a :class:`Diagnosis` whose findings form a cause→effect chain, earliest stage first; ``identical`` is
        True (and ``findings`` empty) when both compile to the same code after normalization.
    :raises ValueError: a variant is missing from the bundle or failed to compile (one-line message).
    """
    from irdiff.diagnose.counters import join as join_counters
    from irdiff.diagnose.facts import extract_facts
    from irdiff.diagnose.mechfacts import extract_mech_facts
    from irdiff.diagnose.params import pair_params
    from irdiff.diagnose.roots import apply_roots
    from irdiff.diagnose.rules import Context, run_rules
    from irdiff.diagnose.rules.resources import link_occupancy
    from irdiff.diagnose.settings import link_to_settings, same_source, settings_diff, settings_findings
    from irdiff.diagnose.source import diff_sources
    from irdiff.diagnose.texts import stage_text

    va, vb = bundle.compiled_variant(a), bundle.compiled_variant(b)
    fa, fb = extract_facts(va), extract_facts(vb)
    fa.mech, fb.mech = extract_mech_facts(va), extract_mech_facts(vb)
    facts = {a: fa.to_json(), b: fb.to_json()} if a != b else {a: fa.to_json()}
    settings = settings_findings(a, b, va, vb) if a != b else []
    if a == b or identical_after_normalization(va, vb, stage_diffs):
        notes = []
        if settings:
            changed = ", ".join(f"{c.key} {c.a} vs {c.b}" for c in settings_diff(va, vb))
            notes.append(f"the settings differ ({changed}) but the compiled code is identical after normalization")
        notes += _inert_source_note(va, vb, a, b) if a != b else []
        return Diagnosis(a, b, [], True, facts, verdict=None, notes=notes)
    pairing = pair_params(
        va.specialization,
        stage_text(va, "ttir") or stage_text(va, "ttgir"),
        vb.specialization,
        stage_text(vb, "ttir") or stage_text(vb, "ttgir"),
    )
    fa.peer_names, fb.peer_names = pairing.aliases("a"), pairing.aliases("b")
    ctx = Context(
        a=a,
        b=b,
        fa=fa,
        fb=fb,
        ttgir={a: stage_text(va, "ttgir"), b: stage_text(vb, "ttgir")},
        python={a: stage_text(va, "python"), b: stage_text(vb, "python")},
        pairing=pairing,
    )
    findings = run_rules(ctx)
    _link(findings)
    link_occupancy(findings, fa, fb)
    link_to_settings(findings, settings, same_source(va, vb))
    findings = [*settings, *findings]
    _mark_without_effect(findings)
    sd = diff_sources(va, vb, [(p.a.name if p.a else None, p.b.name if p.b else None) for p in pairing.pairs])
    findings, unexplained = apply_roots(
        findings, a, b, va, vb, sd=sd, dots=(fa.mech.dots, fb.mech.dots), lowered=(fa.lowered, fb.lowered)
    )
    tf = _time_finding(bundle, a, b, fa, fb, findings)
    if tf is not None:
        findings.append(tf)
    wr = _result_finding(bundle, a, b)
    if wr is not None:
        findings.append(wr)
    nc = (bundle.runs or {}).get("ncu") if isinstance(bundle.runs, dict) else None
    if isinstance(nc, dict):
        join_counters(findings, nc, a, b)
    notes = [
        f"`{f.name}` has no LLVM debug log (TRITON_ENABLE_LLVM_DEBUG): coalescing and pipeliner decisions are not "
        "available, so the contiguity, vector-width and pipelining findings may be missing"
        for f in (fa, fb)
        if not f.llvm_debug_present and (stage_text(va, "ttgir") or stage_text(vb, "ttgir"))
    ]
    if sd.note:
        notes.append(f"source diff: {sd.note}")
    return Diagnosis(
        a,
        b,
        findings,
        False,
        facts,
        verdict=tf.explanation if tf else None,
        notes=notes,
        unexplained=unexplained,
        source_changes=[c.to_json() for c in sd.changes],
    )


_EXPLAIN_STAGES = (
    "settings",
    "passes",
    "spec",
    "options",
    "python",
    "ttir",
    "llvm_debug",
    "ttgir",
    "llir",
    "ptx",
    "sass",
    "ptxas",
    "resources",
    "metadata",
    "time",
)


def causal_paths(diagnosis: Diagnosis, finding_id: str, limit: int = 12) -> tuple[list[list[str]], int]:
    """Every cause→effect path through ``finding_id``: from a root cause (a finding with no present cause) along the
    ``causes`` links (not the list order) to it, then on to a final effect (a finding that causes nothing).

    :returns: ``(paths, left_off)``: at most ``limit`` paths of finding ids, each containing ``finding_id``, in
        diagnosis order; ``left_off`` counts the paths beyond ``limit``.
    """
    by_id = {x.id: x for x in diagnosis.findings}
    order = {x.id: i for i, x in enumerate(diagnosis.findings)}
    effects: dict[str, list[str]] = {x.id: [] for x in diagnosis.findings}
    for x in diagnosis.findings:
        for c in x.causes:
            if c in effects and x.id not in effects[c]:
                effects[c].append(x.id)
    for v in effects.values():
        v.sort(key=lambda i: order[i])

    def walk(fid: str, step: Any, seen: tuple[str, ...]) -> list[list[str]]:
        nxt = [n for n in step(fid) if n not in seen]
        if not nxt:
            return [[fid]]
        return [[fid, *rest] for n in nxt for rest in walk(n, step, (*seen, fid))]

    ups = walk(finding_id, lambda i: sorted((c for c in by_id[i].causes if c in by_id), key=lambda c: order[c]), ())
    downs = walk(finding_id, lambda i: effects[i], ())
    paths = [[*reversed(u[1:]), *d] for u in ups for d in downs]
    return paths[:limit], max(0, len(paths) - limit)


def effects_of(diagnosis: Diagnosis, finding_id: str) -> list[str]:
    """Every finding linked to ``finding_id`` directly or through others (its effects), in diagnosis order."""
    below: dict[str, list[str]] = {}
    for x in diagnosis.findings:
        for c in x.causes:
            below.setdefault(c, []).append(x.id)
    seen: set[str] = set()
    todo = list(below.get(finding_id, []))
    while todo:
        i = todo.pop()
        if i not in seen and i != finding_id:
            seen.add(i)
            todo.extend(below.get(i, []))
    return [x.id for x in diagnosis.findings if x.id in seen]


def explain(diagnosis: Diagnosis, finding_id: str, bundle: Bundle | None = None, context: int = 0) -> str:
    """Plain text for ``--explain``: the finding, its causal paths (:func:`causal_paths`), then the evidence lines of
    every finding on those paths grouped by stage in pipeline order, each tagged with its finding id.

    :param bundle: when given with ``context`` > 0, that many raw lines around each evidence line are shown too.
    :raises KeyError: no finding with that id (or unique id prefix); the message lists the ids.
    """
    f = diagnosis.finding(finding_id)
    if f is None:
        ids = ", ".join(x.id for x in diagnosis.findings) or "none"
        raise KeyError(f"no finding {finding_id!r} (findings: {ids})")
    paths, more = causal_paths(diagnosis, f.id)
    on_path = {fid for p in paths for fid in p}
    order = {x.id: i for i, x in enumerate(diagnosis.findings)}
    chain = sorted((x for x in diagnosis.findings if x.id in on_path or x is f), key=lambda x: order[x.id])
    out = [f"{f.id} [{f.severity}] {f.title}", ""]
    if len(chain) > 1:
        head = "causal path" if len(paths) == 1 else f"causal paths ({len(paths) + more})"
        out.append(f"{head} through {f.id} (causes → it → effects, following each finding's `causes`):")
        out += ["  " + " → ".join(p) for p in paths]
        if more:
            out.append(f"  … and {more} more")
        out.append("")
    effects = effects_of(diagnosis, f.id)
    if effects:
        out += [f"effects linked to {f.id} ({len(effects)}): " + ", ".join(effects), ""]
    if f.id in diagnosis.unexplained:
        out += ["unexplained: its chain reaches no root (no source, stage-0, option or settings change)", ""]
    out.append(f.explanation)
    if f.remedy:
        out += ["", f"remedy (not tested by irdiff): {f.remedy}"]
    out += ["", "evidence (every stage along these paths; * = this finding):"]
    rank = {s: i for i, s in enumerate(_EXPLAIN_STAGES)}
    rows = [(x, e) for x in chain for e in x.evidence]
    for stage in sorted({e.stage for _, e in rows}, key=lambda s: rank.get(s, 99)):
        out.append(f"── {stage}")
        for x, e in rows:
            if e.stage != stage:
                continue
            loc = f":{e.line}" if e.line else ""
            mark = "*" if x is f else " "
            out.append(f" {mark}[{x.id}] {e.variant}{loc}  {e.text}")
            if bundle is not None and context > 0 and e.line and e.variant in bundle.variants:
                lines = bundle.variants[e.variant].text(stage).splitlines()
                for i in range(max(1, e.line - context), min(len(lines), e.line + context) + 1):
                    if i != e.line:
                        out.append(f"        {i:5d}  {lines[i - 1].strip()[:200]}")
    return "\n".join(out)
