"""The root engine: every chain of findings starts at what the user changed.

After the rules have run and linked by their declared causes (``CAUSES``), :func:`apply_roots` adds the roots
that rules cannot see and links every remaining finding to one, or lists it as unexplained:

* **Source changes** (:mod:`irdiff.diagnose.source`): a semantic change that no rule finding already names at its
  line becomes a ``source.<kind>`` root (``source.kwarg-changed``, ``source.call-added``, ``source.op-changed``,
  ...). A rule finding whose evidence sits on the changed line (through IR locations,
  :mod:`irdiff.diagnose.provenance`) *claims* the change: the rule names the mechanism, the change is added to its
  evidence, and it stays the root (e.g. ``ttir.i64-index-math`` for ``.to(tl.int64)``).
* **Attribute changes** ``ttir.attr-changed``: TTIR ops at the same Python line differing only in attributes
  (``evict``, ``cache``, memory order/scope, ``inputPrecision``, hints); caused by the source change on that line
  when there is one, else a root of its own.
* **Settings** ``settings.changed``: the target, Triton version or ptxas version differs.
* **First diverging pass** ``pass.first-diverging``: when both variants carry per-pass snapshots (``--passes``)
  and the TTIR is equal, the first pass whose output differs, with its hunk; linked to the option/settings root,
  whose title then names the pass.

Every root's explanation ends with a trace through the stages (what its lines compile to in each variant, from the
IR locations; the whole PTX/SASS when those carry no usable line info) and says when nothing else differs.

Linking, in order: the rules' ``CAUSES`` (done before); then provenance (a finding whose evidence maps to a Python
line that uses a value defined on a changed line is linked to that change); then, for whole-kernel findings
(registers, instruction counts) without line evidence, the single root when there is exactly one; registers are
attributed from evidence (:func:`register_story`). Findings whose chain reaches no root are marked unexplained and
ordered last (:data:`UNEXPLAINED_NOTE`).

For other rule modules (mechanism rules): declare ``source.<kind>``, ``ttir.attr-changed``, ``options.changed``,
``settings.changed`` or ``pass.first-diverging`` as causes in ``CAUSES``; :data:`ROOT_IDS` lists the ids this
engine may emit, :data:`ROOT_PREFIXES` which findings count as roots. ``register_mechanism(fn)`` adds a function
``fn(RootContext) -> str | None`` whose sentence is appended to a root's explanation (e.g. what `div.full.f32`
means); :data:`MECHANISMS` holds the built-in ones.

Size: just over 800 lines because the root kinds above share one linking pass and one trace-through-the-stages
writer; splitting them would duplicate those.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain

from irdiff.bundle import VariantResult
from irdiff.diagnose.facts import LoweredAccess, extract_facts
from irdiff.diagnose.mechfacts import DotFact, extract_mech_facts
from irdiff.diagnose.model import ROOT_PREFIXES, Evidence, Finding
from irdiff.diagnose.passes import PassDivergence, first_diverging_pass
from irdiff.diagnose.provenance import AttrChange, StageDelta, attr_changes, python_lines, stage_text, stage_trace
from irdiff.diagnose.source import KINDS, SourceChange, SourceDiff, StmtFlow, diff_sources

__all__ = [
    "MECHANISMS",
    "ROOT_IDS",
    "ROOT_PREFIXES",
    "UNEXPLAINED_NOTE",
    "RootContext",
    "apply_roots",
    "register_mechanism",
    "source_id",
]

SOURCE_IDS: dict[str, str] = {k: f"source.{k}" for k in KINDS if k not in ("renamed", "option")}
ROOT_IDS: tuple[str, ...] = (
    *SOURCE_IDS.values(),
    "ttir.attr-changed",
    "settings.changed",
    "pass.first-diverging",
)
# Findings with these id prefixes are roots when nothing causes them (stage 0, options, source, settings).
# Findings that only count (instructions by kind, registers, shared memory): they never claim a source change, the
# change's own root names it and the count links to it as an effect.
_COUNT_IDS: tuple[str, ...] = ("ptx.memory-ops", "sass.instructions", "resources.")

# A hint call (``tl.multiple_of``, ``tl.max_contiguous``, ``tl.max_constancy``, ``tl.assume``) creates no op: the
# frontend sets ``tt.divisibility``/``tt.contiguity``/``tt.constancy`` on the op that *defines* the hinted value, so
# the attribute lands on another line than the call when the hint is a statement of its own
# (``start = row * stride`` then ``start = tl.multiple_of(start, 8)``; triton/language/semantic.py, multiple_of).
_HINT_CALL = re.compile(r"\b(?:multiple_of|max_contiguous|max_constancy|assume)\s*\(")
_HINT_ATTRS = frozenset({"tt.divisibility", "tt.contiguity", "tt.constancy"})
_HINT_FINDINGS = frozenset({"hint.axis-info"})


def _is_hint_change(c: SourceChange) -> bool:
    """``c`` adds, removes or edits a hint call (on either side)."""
    return bool(_HINT_CALL.search(f"{c.text_a}\n{c.text_b}"))


def _hint_attrs_only(attrs: list[AttrChange]) -> bool:
    """Every differing attribute is one a hint call sets (``tt.divisibility = dense<8>`` …)."""
    toks = [t for ac in attrs for t in (*ac.only_a, *ac.only_b)]
    return bool(toks) and all(t.split("=")[0].strip() in _HINT_ATTRS for t in toks)


# More unclaimed source changes than this make the pair a rewrite (no source change is taken as a root).
REWRITE_CHANGES = 12
UNEXPLAINED_NOTE = (
    " Unexplained: no rule links it to a root above, and its evidence does not come from a changed source line."
)


def source_id(kind: str) -> str:
    """Finding id of a source change kind (``kwarg-changed`` → ``source.kwarg-changed``)."""
    return SOURCE_IDS.get(kind, f"source.{kind}")


@dataclass
class RootContext:
    """What a mechanism function sees for one root finding."""

    a: str
    b: str
    finding: Finding
    changes: list[SourceChange]
    attrs: list[AttrChange]
    trace: list[StageDelta]
    whole: dict[str, tuple[dict[str, int], dict[str, int]]] = field(default_factory=dict)


MechanismFn = Callable[[RootContext], "str | None"]


def _all_ops(ctx: RootContext) -> tuple[set[str], set[str]]:
    """Instruction keys present only in ``a`` / only in ``b`` across the trace and the whole-stage deltas."""
    xa: set[str] = set()
    xb: set[str] = set()
    for d in ctx.trace:
        xa.update(d.only_a)
        xb.update(d.only_b)
    for oa, ob in ctx.whole.values():
        xa.update(oa)
        xb.update(ob)
    return xa, xb


def _has(keys: set[str], *words: str) -> bool:
    return any(all(w in k for w in words) for k in keys)


def _mech_division(ctx: RootContext) -> str | None:
    xa, xb = _all_ops(ctx)
    fast = "div.full.f32"
    if not ((_has(xa, fast) and _has(xb, "div.rn.f32")) or (_has(xb, fast) and _has(xa, "div.rn.f32"))):
        return None
    approx = ctx.a if _has(xa, fast) else ctx.b
    ieee = ctx.b if approx == ctx.a else ctx.a
    return (
        f"`{approx}` divides with `div.full.f32` (Triton lowers `/` on fp32 to the approximate division, max error "
        f"2 ulp), `{ieee}` with `div.rn.f32` (IEEE round-to-nearest, from `tl.div_rn` / `tt.precise_divf`): results "
        "may differ in the last bits, and the IEEE division is a longer instruction sequence (ptxas expands it, "
        "with a slow path it calls as a subroutine)."
    )


# ``tt.atomic_rmw``/``tt.atomic_cas`` scope words (TTIR ``MemSyncScope``; ``tl.atomic_*(..., scope=)``)
_SCOPES = {"cta": "the threads of its own CTA", "gpu": "every thread on the GPU", "sys": "every thread of the system"}


def _mech_atomic(ctx: RootContext) -> str | None:
    """An atomic's memory ordering (``sem``) or scope changed (TTIR ``tt.atomic_rmw add, acq_rel, gpu``): what each
    means, the atomic instructions each variant has only (PTX ``atom``/``red``, SASS ``ATOMG``/``RED``) and the fences
    and barriers each has only (``MEMBAR.ALL.GPU`` from ptxas, ``bar.sync`` around a returning atomic)."""
    words = {t for ac in ctx.attrs for t in (*ac.only_a, *ac.only_b)}
    sem, scope = words & {"relaxed", "acq_rel", "acquire", "release"}, words & set(_SCOPES)
    if not (sem or scope):
        return None
    xa, xb = _all_ops(ctx)
    fences = [k for k in (*xa, *xb) if k.startswith(("fence", "membar", "MEMBAR", "FENCE", "bar.sync"))]
    fa = sorted(k for k in xa if k in fences)
    fb = sorted(k for k in xb if k in fences)
    atom_a = sorted(k for k in xa if k.startswith(("atom", "red", "ATOM", "RED")))
    atom_b = sorted(k for k in xb if k.startswith(("atom", "red", "ATOM", "RED")))
    out = (
        "The atomic's memory ordering differs: with `acq_rel` (Triton's default `sem`) the update also orders the "
        "thread's earlier and later memory accesses, which the lowering implements with fences and a returning "
        "atomic; `relaxed` only makes the update itself atomic."
        if sem
        else ""
    )
    if scope:
        sa = next((t for ac in ctx.attrs for t in ac.only_a if t in _SCOPES), None)
        sb = next((t for ac in ctx.attrs for t in ac.only_b if t in _SCOPES), None)
        said = [f"`{v}` (`{s}`) against {_SCOPES[s]}" for v, s in ((ctx.a, sa), (ctx.b, sb)) if s]
        out += (
            " The atomic's scope differs: the update is atomic, and ordered, only with respect to the threads of its "
            f"scope: {' and '.join(said)}. A narrower scope needs cheaper fences, but an update of the same address "
            "from a thread outside it is not atomic with this one (a data race in the PTX memory model)."
        )
    if atom_a or atom_b:
        out += f" Atomic instructions: {', '.join(f'`{k}`' for k in atom_a) or 'none'} in `{ctx.a}` vs " + (
            f"{', '.join(f'`{k}`' for k in atom_b) or 'none'} in `{ctx.b}`."
        )
    for v, mine, w, theirs in ((ctx.a, fa, ctx.b, fb), (ctx.b, fb, ctx.a, fa)):
        if mine:
            out += f" Fences and barriers only in `{v}`: {', '.join(f'`{k}`' for k in mine)}" + (
                f"; `{w}` drops them." if not theirs else "."
            )
    return out.strip()


_CACHE_WORDS = {
    "ca": "`.ca` (caches at all levels, the default for loads)",
    "cg": "`.cg` (caches in L2 only, bypassing L1)",
    "cs": "`.cs` (streams: likely accessed once, evicted first)",
    "lu": "`.lu` (marks the last use of the line)",
    "cv": "`.cv` (does not cache and fetches again on every access, volatile)",
    "wb": "`.wb` (writes back through the caches, the default for stores)",
    "wt": "`.wt` (writes through to system memory)",
}
_EVICT_WORDS = {
    "evict_first": "`evict_first` (the loaded lines are the first to be replaced: for data read once, so it does not "
    "push out data that is reused)",
    "evict_last": "`evict_last` (the lines stay longer than others: for data that is reused)",
    "evict_unchanged": "`evict_unchanged` (the lines keep their eviction priority)",
    "no_allocate": "`no_allocate` (the lines are not allocated in the cache)",
}
_HINT_OPS = ("evict", "cache_hint", "createpolicy")
# cache-operator qualifiers, matched as whole dot-separated parts (``LDG.E.EF``, ``ld.global.cg``), never inside
# another word (``LOP3.LUT`` is no ``.LU``)
_HINT_PARTS = frozenset({"EF", "EL", "LU", "NA", "cg", "cs", "ca", "lu", "cv"})


# instructions whose cache qualifier the lowering or ptxas picks, not the source: spill traffic to local memory
# (``LDL.LU``: the last use of a spilled register) and async copies (``cp.async.cg`` for 16-byte copies, ``.ca`` below)
_CHOSEN_QUALIFIER = ("LDL", "STL", "ld.local", "st.local", "cp.async", "LDGSTS")


def _is_hint_op(key: str) -> bool:
    """``key`` (a PTX/SASS instruction key) carries a cache hint or builds a cache policy (a qualifier the lowering
    chooses itself, on spills and async copies, is none)."""
    if any(h in key for h in _HINT_OPS):
        return True
    return not key.startswith(_CHOSEN_QUALIFIER) and bool(_HINT_PARTS & set(re.split(r"[.\s]+", key)[1:]))


def _hint_values(tokens: list[str]) -> tuple[set[str], set[str]]:
    """Cache modifiers and eviction policies a variant's attribute tokens actually set (defaults left out):
    ``cache_modifier = cg`` → ``{"cg"}``, ``eviction_policy = evict_first`` → ``{"evict_first"}``."""
    cache: set[str] = set()
    evict: set[str] = set()
    for t in tokens:
        k, _, v = t.partition("=")
        k, v = k.strip().lower(), v.strip().lower().lstrip(".")
        if "evict" in k and v in _EVICT_WORDS:
            evict.add(v)
        elif "cache" in k and v in _CACHE_WORDS:
            cache.add(v)
    return cache, evict


def _mech_eviction(ctx: RootContext) -> str | None:
    """Cache modifiers and eviction policies, in words, from what each variant's TTIR attributes set and what its
    PTX/SASS carries (a ``createpolicy`` is named only when the PTX has one)."""
    ca, ea = _hint_values([t for ac in ctx.attrs for t in ac.only_a])
    cb, eb = _hint_values([t for ac in ctx.attrs for t in ac.only_b])
    low = [d for d in ctx.trace if d.stage in ("ptx", "sass")]
    xa = {k for oa, _ in ctx.whole.values() for k in oa} | {k for d in low for k in d.only_a}
    xb = {k for _, ob in ctx.whole.values() for k in ob} | {k for d in low for k in d.only_b}
    hint_a = sorted(k for k in xa if _is_hint_op(k))
    hint_b = sorted(k for k in xb if _is_hint_op(k))
    if not (ca or ea or cb or eb or hint_a or hint_b):
        return None
    parts: list[str] = []
    for v, cache, evict in ((ctx.a, ca, ea), (ctx.b, cb, eb)):
        said = [_CACHE_WORDS[c] for c in sorted(cache)] + [_EVICT_WORDS[e] for e in sorted(evict)]
        if said:
            parts.append(f"`{v}` sets {'; '.join(said)}")
    out = (
        ("Cache hints: " + "; ".join(parts) + ".") if parts else "The memory instructions carry different cache hints."
    )
    out += " Results do not change; the caches keep different data."
    for v, hints in ((ctx.a, hint_a), (ctx.b, hint_b)):
        if hints:
            out += f" Only in `{v}`'s PTX/SASS: {', '.join(f'`{k}`' for k in hints[:4])}."
    if any("createpolicy" in k for k in (*xa, *xb)):
        out += " `createpolicy` builds the L2 cache-policy operand the loads carry."
    return out


def _mech_hints(ctx: RootContext) -> str | None:
    """What ``tl.multiple_of``/``tl.max_contiguous`` tell AxisInfo, on the root that added, removed or edited one: a
    source change that calls it (as its own statement too, ``start = tl.multiple_of(start, 16)``, whose attribute
    lands on the line defining ``start``), or an uncaused ``tt.divisibility``/``tt.contiguity`` attribute change
    (an attribute change a hint call causes leaves the sentence to that call's root)."""
    names = {t.split("=")[0].strip() for ac in ctx.attrs for t in (*ac.only_a, *ac.only_b)}
    texts = "\n".join(f"{c.text_a}\n{c.text_b}" for c in ctx.changes)
    attr = bool({"tt.contiguity", "tt.divisibility"} & names) and not ctx.finding.causes
    if not (attr or re.search(r"\b(?:multiple_of|max_contiguous)\s*\(", texts)):
        return None
    return (
        "`tl.multiple_of` attaches `tt.divisibility` and `tl.max_contiguous` attaches `tt.contiguity` to the value: "
        "AxisInfo then knows the offsets are aligned and contiguous even through `%` or other ops it cannot see "
        "through, which lets the coalescing pass vectorize the loads that use them and the pipeliner copy them "
        "asynchronously."
    )


def _mech_reduce_axis(ctx: RootContext) -> str | None:
    """A reduction's ``axis=`` changed: where its partial results meet (warp shuffles vs shared memory)."""
    if not any(c.kind == "kwarg-changed" and c.name == "axis" for c in ctx.changes):
        return None
    wa, wb = ctx.whole.get("ptx", ({}, {}))
    if not (wa or wb):
        wa = {k: v for d in ctx.trace if d.stage == "ptx" for k, v in d.only_a.items()}
        wb = {k: v for d in ctx.trace if d.stage == "ptx" for k, v in d.only_b.items()}

    def n(d: dict[str, int], word: str) -> int:
        return sum(v for k, v in d.items() if k.startswith(word))

    facts = [
        f"`{op}` {n(wa, op)} more in `{ctx.a}`, {n(wb, op)} more in `{ctx.b}`"
        for op in ("shfl.sync", "bar.sync", "st.shared", "ld.shared")
        if n(wa, op) or n(wb, op)
    ]
    return (
        "The reduction runs along another axis of the same tile: along the axis whose elements sit in one thread "
        "and the lanes of one warp it finishes with warp shuffles (`shfl.sync.bfly`); along an axis spread across "
        "warps the partial results meet in shared memory, with barriers (`bar.sync`) around it, and the result "
        "comes out in another layout (a `ttg.convert_layout` may follow)."
        + (" PTX: " + "; ".join(facts) + "." if facts else "")
    )


MECHANISMS: list[MechanismFn] = [_mech_division, _mech_atomic, _mech_eviction, _mech_hints, _mech_reduce_axis]


def register_mechanism(fn: MechanismFn) -> MechanismFn:
    """Add a mechanism explanation for roots (usable as a decorator); called in registration order."""
    if fn not in MECHANISMS:
        MECHANISMS.append(fn)
    return fn


# ------------------------------------------------------------------------------------------------ helpers


def _ev_lines(f: Finding, variant: str, v: VariantResult) -> set[int]:
    out: set[int] = set()
    for e in f.evidence:
        if e.variant == variant:
            out |= python_lines(v, e)
    return out


def _fmt_ops(d: dict[str, int], limit: int = 4) -> str:
    items = sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))
    s = ", ".join(f"`{_short(k)}`" + (f" ×{n}" if n > 1 else "") for k, n in items[:limit])
    if len(items) > limit:
        s += f" and {len(items) - limit} more"
    return s or "nothing"


def _short(k: str) -> str:
    k = re.sub(r"\s*:\s*(tensor|\(|!tt|i\d|f\d).*$", "", k)  # drop the type signature of MLIR ops
    return k if len(k) <= 110 else k[:107] + "..."


@lru_cache(maxsize=32)
def _instructions(stage: str, text: str) -> tuple[tuple[int, str], ...]:
    from irdiff.diagnose.counts import ptx_instructions, sass_instructions

    fn = ptx_instructions if stage == "ptx" else sass_instructions
    return tuple((no, op) for no, op, _ in fn(text))


def _whole_delta(va: VariantResult, vb: VariantResult, stage: str) -> tuple[dict[str, int], dict[str, int]]:
    ta, tb = stage_text(va, stage), stage_text(vb, stage)
    if not ta or not tb:
        return {}, {}
    ca: Counter[str] = Counter(op for _, op in _instructions(stage, ta))
    cb: Counter[str] = Counter(op for _, op in _instructions(stage, tb))
    return dict(ca - cb), dict(cb - ca)


def _trace_text(
    a: str, b: str, trace: list[StageDelta], whole: dict[str, tuple[dict[str, int], dict[str, int]]]
) -> str:
    parts: list[str] = []
    for d in trace:
        if d.stage in whole or not (d.only_a or d.only_b):
            continue
        parts.append(
            f"{d.stage.upper()} at these lines: {_fmt_ops(d.only_a)} in `{a}` where `{b}` has {_fmt_ops(d.only_b)}"
        )
    for stage, (oa, ob) in whole.items():
        if oa or ob:
            parts.append(f"{stage.upper()} (whole kernel): {_fmt_ops(oa)} only in `{a}`, {_fmt_ops(ob)} only in `{b}`")
    return "; ".join(parts)


# ------------------------------------------------------------------------------------------------ the engine


@dataclass
class _Root:
    finding: Finding
    lines_a: set[int]
    lines_b: set[int]
    affected_a: set[int] = field(default_factory=set)
    affected_b: set[int] = field(default_factory=set)


def _span(first: int | None, last: int | None) -> set[int]:
    if first is None:
        return set()
    return set(range(first, max(first, last or first) + 1))


def _claims(f: Finding, c: SourceChange, la: set[int], lb: set[int]) -> bool:
    """``f`` names the change: a parameter's annotation is claimed by a finding whose stage-0 evidence is about that
    parameter (not by line: several parameters may share one); any other change by a finding with evidence on its
    lines."""
    if c.file_a or c.file_b:  # a called function in another file: IR lines map to the kernel's call site
        return False
    if c.kind == "annotation" and c.name and not c.name.startswith(("triton.", "jit")) and "." not in c.name:
        return any(e.stage == "spec" and e.text.startswith(f"{c.name}:") for e in f.evidence)
    return bool(_span(c.line_a, c.end_a) & la or _span(c.line_b, c.end_b) & lb)


def _root_ids(findings: list[Finding], claimers: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """Findings that start a chain: nothing causes them, and they are a stage-0/option/source/settings/attribute
    difference or a rule finding that claimed a source change (its evidence sits on the changed line)."""
    return {f.id for f in findings if not f.causes and (f.id.startswith(ROOT_PREFIXES) or f.id in claimers)}


def apply_roots(
    findings: list[Finding],
    a: str,
    b: str,
    va: VariantResult,
    vb: VariantResult,
    *,
    sd: SourceDiff | None = None,
    dots: tuple[list[DotFact], list[DotFact]] | None = None,
    lowered: tuple[list[LoweredAccess], list[LoweredAccess]] | None = None,
) -> tuple[list[Finding], list[str]]:
    """Add root findings, link every finding to a root where evidence allows, and order the chain.

    :param findings: the rules' findings, already linked through ``CAUSES`` (``Finding.causes``).
    :param sd: a precomputed source diff (default: :func:`~irdiff.diagnose.source.diff_sources`).
    :param dots: the dots of ``a`` and ``b`` (:attr:`MechFacts.dots`) when already extracted, for the register story.
    :param lowered: the global accesses of ``a`` and ``b`` (:attr:`VariantFacts.lowered`) when already extracted,
        for naming a transposed access in a source root (default: extracted here when a source root needs them).
    :returns: ``(ordered findings, unexplained ids)``: roots first (earliest stage first), then their effects
        (stage, then chain depth), then the unexplained findings (each with :data:`UNEXPLAINED_NOTE` appended).
    """
    sd = sd if sd is not None else diff_sources(va, vb)
    by_id = {f.id: f for f in findings}
    memo: dict[tuple[str, str], set[int]] = {}

    def lines(f: Finding, side: str) -> set[int]:
        """Python lines of ``f``'s evidence in ``a`` or ``b`` (computed on first use: location maps are costly).

        :raises ValueError: ``side`` is neither ``"a"`` nor ``"b"``."""
        if side not in ("a", "b"):
            raise ValueError(f"side must be 'a' or 'b', not {side!r}")
        key = (f.id, side)
        if key not in memo:
            memo[key] = _ev_lines(f, a, va) if side == "a" else _ev_lines(f, b, vb)
        return memo[key]

    # 1. source changes: claimed by a rule finding on the same line, else a source.* root per kind
    unclaimed: list[SourceChange] = []
    claimers: set[str] = set()
    claimed_lines: dict[str, tuple[set[int], set[int]]] = {}
    claimed_changes: dict[str, list[SourceChange]] = {}
    for c in sd.semantic:
        if c.kind == "option":
            continue  # options.changed / spec.constexpr-changed say it
        # only a finding that starts a chain can claim: an effect on the line has its own root already
        # a count (PTX/SASS instructions, resources) names no mechanism: it becomes the change's effect instead
        claim = next(
            (
                f
                for f in findings
                if not f.causes
                and not f.id.startswith(_COUNT_IDS)
                and (
                    _claims(f, c, lines(f, "a"), lines(f, "b"))
                    # the hint finding's evidence sits on the hinted value's line, not the call's (see _HINT_CALL)
                    or (f.id in _HINT_FINDINGS and _is_hint_change(c) and not (c.file_a or c.file_b))
                )
            ),
            None,
        )
        if claim is not None:
            if not claim.causes:
                claimers.add(claim.id)
                claimed_lines.setdefault(claim.id, (set(), set()))
                claimed_lines[claim.id][0].update(_span(c.line_a, c.end_a))
                claimed_lines[claim.id][1].update(_span(c.line_b, c.end_b))
            # the change at its line in both variants (a line absent on one side is named on the other only); a
            # parameter annotation is claimed through the parameter's stage-0 evidence: its line in ``a`` suffices
            sides: tuple[tuple[str, int | None, str], ...] = ((a, c.line_a, c.file_a), (b, c.line_b, c.file_b))
            if c.kind == "annotation":
                # when the claim shows either side's line nothing is added, else both sides' lines are (the same
                # evidence whichever variant is inspected)
                shown = any(e.stage == "python" and (e.variant, e.line) in ((a, c.line_a), (b, c.line_b))
                            for e in claim.evidence)  # fmt: skip
                sides = () if shown else sides
            for v, ln, file in sides:
                if ln is None or file:
                    continue
                if not any(e.variant == v and e.stage == "python" and e.line == ln for e in claim.evidence):
                    claim.evidence.append(Evidence(v, "python", ln, f"source change: {c.words(a, b)}"))
            claimed_changes.setdefault(claim.id, []).append(c)
            continue
        unclaimed.append(c)
    for fid, cs in claimed_changes.items():
        _name_claimed_change(by_id[fid], cs, a, b, va.kernel)
    # a rewrite (many changes): one informational list, not roots; the rules' own findings start the chains
    rewrite = len(unclaimed) > REWRITE_CHANGES
    by_kind: dict[str, list[SourceChange]] = {}
    for c in unclaimed:
        by_kind.setdefault("statement" if rewrite else c.kind, []).append(c)
    if rewrite:
        claimers.update(f.id for f in findings if not f.causes and f.stage not in ("sass", "resources", "time", "ptx"))

    roots: list[_Root] = []
    new: list[Finding] = []
    root_changes: dict[str, list[SourceChange]] = {}
    attrs = attr_changes(va, vb, sd.line_pairs)
    for kind, cs in by_kind.items():
        la = {c.line_a for c in cs if c.line_a is not None and not c.file_a}
        lb = {c.line_b for c in cs if c.line_b is not None and not c.file_b}
        f = _source_finding(kind, cs, a, b, va, vb)
        new.append(f)
        if rewrite and kind == "statement":
            f.severity = "info"
            f.title = f"Source: the kernels differ in {len(cs)} places (a rewrite); see the python stage diff"
            f.explanation = (
                f"{len(cs)} source changes between `{a}` and `{b}`: too many for one of them to be the root of "
                "every difference below. Findings whose evidence is on a changed line name it; the rest follow "
                "their own rules. " + f.explanation
            )
            continue
        roots.append(_Root(f, la, lb, sd.affected("a", la), sd.affected("b", lb)))
        root_changes[f.id] = cs

    # 2. attribute changes on the same op
    if attrs:
        f = _attr_finding(attrs, a, b)
        la = {ac.line_a for ac in attrs}
        lb = {ac.line_b for ac in attrs}
        hinted = _hint_attrs_only(attrs)
        # the first that applies: a root on the attributes' lines; for hint attributes (set on the op that defines the
        # hinted value, not on the call's line) the hint call's change, claimed by a rule or as its source root; a
        # rule that claimed the source change on those lines (it names the mechanism); else the configuration or
        # settings that differ (same source at those lines)
        cause = next(
            chain(
                (r.finding.id for r in roots if la & r.lines_a or lb & r.lines_b),
                (k for k, cs in claimed_changes.items() if hinted and any(map(_is_hint_change, cs))),
                (
                    r.finding.id
                    for r in roots
                    if hinted and any(map(_is_hint_change, root_changes.get(r.finding.id, [])))
                ),
                (k for k, (xa, xb) in claimed_lines.items() if xa & la or xb & lb),
                (g.id for g in findings if g.id.startswith(("config.", "options.", "settings.")) and not g.causes),
            ),
            None,
        )
        if cause is not None:
            f.causes = [cause]
        new.append(f)
        roots.append(_Root(f, la, lb, sd.affected("a", la), sd.affected("b", lb)))

    # 3. settings: target / Triton / ptxas version
    # (irdiff.diagnose.settings names them when the diagnosis ran it: then it is the root, not a second finding)
    sf = None if any(f.id.startswith("settings.") for f in findings) else _settings_finding(a, b, va, vb)
    if sf is not None:
        new.append(sf)
        roots.append(_Root(sf, set(), set()))

    # 4. first diverging pass (both variants carry --passes snapshots)
    pf = _pass_finding(a, b, va, vb, findings + new)
    if pf is not None:
        new.append(pf)

    findings = findings + [f for f in new if f.id not in by_id]
    by_id = {f.id: f for f in findings}
    for r in roots:
        memo[(r.finding.id, "a")] = set()
        memo[(r.finding.id, "b")] = set()

    # 5. traces for the new roots (stage by stage), with mechanisms; whole-kernel PTX/SASS deltas only when one
    # root could have caused them
    n_roots = len(_root_ids(findings, claimers) | {r.finding.id for r in roots if not r.finding.causes})
    for r in roots:
        _add_trace(r, a, b, va, vb, attrs, sd, findings, whole_ok=n_roots == 1)

    # 6. provenance links for findings that no rule linked: evidence on a line that uses a value a change (a root's,
    # or one a rule claimed) defines
    root_ids = _root_ids(findings, claimers)
    claim_roots = [
        _Root(by_id[cid], xa, xb, sd.affected("a", xa), sd.affected("b", xb))
        for cid, (xa, xb) in claimed_lines.items()
        if cid in by_id
    ]
    for f in findings:
        if f.causes or f.id in root_ids or f.id.startswith(ROOT_PREFIXES):
            continue
        fa, fb = lines(f, "a"), lines(f, "b")
        hits = [r.finding.id for r in (*roots, *claim_roots) if (fa & r.affected_a) or (fb & r.affected_b)]
        if hits:
            attr_first = sorted(hits, key=lambda i: 0 if i == "ttir.attr-changed" else 1)
            f.causes = attr_first[:1] if "ttir.attr-changed" in hits else hits[:2]

    # 7. registers from evidence
    reg = by_id.get("resources.registers")
    if reg is not None:
        register_story(reg, a, b, va, vb, findings, dots=dots)

    # 8. whole-kernel findings: the single root, when there is exactly one
    real_roots = [
        i
        for i in _root_ids(findings, claimers)
        if (by_id[i].severity != "info" or i.startswith("source.") or i in claimers)
        and not (rewrite and i == "source.statement")
    ]
    if len(real_roots) == 1:
        only = real_roots[0]
        for f in findings:
            if f.causes or f.id == only or f.id.startswith(ROOT_PREFIXES) or f.id == "time.measured":
                continue
            if not lines(f, "a") and not lines(f, "b"):
                f.causes = [only]

    # 9. unexplained: chains that reach no root
    roots_now = _root_ids(findings, claimers)
    reached: dict[str, bool] = {}

    # a source change no finding follows from is information: the code differs there, no rule sees an effect; so is
    # one followed only by AxisInfo hint attributes when nothing else in the pair differs (a hint restating what the
    # other variant's specialization proves); "no instruction differs" is said only when the whole PTX and SASS are
    # the same (a rule that missed an effect must not make the hint look inert)
    hints_only = bool(attrs) and all(_hint_only(ac) for ac in attrs)
    quiet = (
        hints_only
        and all(x.id == "ttir.attr-changed" or x.id in roots_now for x in findings)
        and not any(d for s in ("ptx", "sass") for d in _whole_delta(va, vb, s))
    )
    for r in roots:
        g = r.finding
        followers = [x for x in findings if g.id in x.causes]
        if not g.id.startswith("source.") or g.severity == "info":
            continue
        if not followers:
            g.severity = "info"
            g.explanation += " No other finding follows from it."
        elif quiet and all(x.id == "ttir.attr-changed" for x in followers):
            g.severity = "info"
            g.explanation += (
                " It only adds AxisInfo hint attributes (`tt.divisibility`/`tt.contiguity`); no access, layout or "
                "instruction differs because of them."
            )
    # findings whose change may transpose an access (named in their titles by _name_transposed): the source roots,
    # a rule that claimed the change, or config.changed when the source is the same (`if TRANSPOSED:` choosing the
    # index expression: the configuration is the root, and the access it transposes is what it does)
    transposing: list[tuple[Finding, list[SourceChange], dict[str, bool]]] = [
        (r.finding, root_changes[r.finding.id], {})
        for r in roots
        if r.finding.id.startswith("source.") and r.finding.severity != "info" and root_changes.get(r.finding.id)
    ]
    transposing += [
        (by_id[fid], cs, {"claimed": True})
        for fid, cs in claimed_changes.items()
        if fid in by_id and not by_id[fid].causes
    ]
    cfg = by_id.get("config.changed")
    if cfg is not None and not cfg.causes and not any(c.kind != "option" for c in sd.semantic):
        transposing.append((cfg, [], {"config": True}))
    if transposing and lowered is None:
        lowered = (extract_facts(va).lowered, extract_facts(vb).lowered)
    for g, cs, how in transposing:
        assert lowered is not None
        _name_transposed(g, cs, a, b, lowered, findings, **how)
    _cap_restatements(findings, by_id)
    _lift_roots(findings, roots_now)
    unexplained = [f.id for f in findings if f.id != "time.measured" and not _reaches(f.id, by_id, roots_now, reached)]
    for fid in unexplained:
        f = by_id[fid]
        if UNEXPLAINED_NOTE not in f.explanation:
            f.explanation += UNEXPLAINED_NOTE
    return _order(findings, roots_now, set(unexplained)), unexplained


def _reaches(fid: str, by_id: dict[str, Finding], roots: set[str], memo: dict[str, bool]) -> bool:
    """Whether the chain of causes from ``fid`` (through ``Finding.causes``, however long) reaches a finding in
    ``roots``. A walk over every finding reachable from ``fid`` (each once, so a cycle of causes ends): a True found
    on the way is definite, and so is a False once the walk is complete; both are kept in ``memo`` for later
    queries (a False for every finding the walk saw, since all their causes were walked too). A cause that names
    no finding leads nowhere."""
    if fid in memo:
        return memo[fid]
    seen: list[str] = []
    seen_set: set[str] = set()
    todo = [fid]
    while todo:
        x = todo.pop()
        if x in seen_set:
            continue
        if memo.get(x) or x in roots:
            memo[fid] = True
            return True
        seen_set.add(x)
        seen.append(x)
        f = by_id.get(x)
        if f is None or x in memo:  # unknown id, or a definite False: nothing to walk from it
            continue
        todo.extend(f.causes)
    for x in seen:
        memo[x] = False
    return False


# Source change kinds a claiming rule's title is prefixed with when it does not name them (the user's edit first,
# then the mechanism), most telling first; annotations are named by the rules themselves.
_NAMED_KINDS = (
    "call-changed",
    "call-added",
    "call-removed",
    "kwarg-changed",
    "op-changed",
    "args-reordered",
    "dtype-changed",
    "constant-changed",
    "statement",
    "moved",
)


def _respelling(c: SourceChange) -> bool:
    """A call changed only in how its module is spelled (``range`` → ``tl.range``, ``tl.exp`` → ``tl.math.exp``):
    the same function, so a keyword argument added beside it says more about the edit."""
    return c.kind == "call-changed" and bool(c.old and c.new) and c.old.split(".")[-1] == c.new.split(".")[-1]


def _name_claimed_change(f: Finding, cs: list[SourceChange], a: str, b: str, kernel: str = "") -> None:
    """Prefix the title of a rule finding that claimed source changes with the most telling one, at its lines, when
    the title does not already name it (``precision.math`` claiming ``tl.exp`` → ``tl.math.exp2``); a title that
    names it already gets the lines only (``hint.cache``: "… eviction_policy=evict_first … (line 65 of `a`, line
    56 of `b`)"). A call respelled with another module prefix (``range`` → ``tl.range``) ranks after a keyword
    argument added on the same line (``loop_unroll_factor=4``), and both are named."""
    named = [c for c in cs if c.kind in _NAMED_KINDS]
    if not named:
        return

    def rank(x: SourceChange) -> tuple[int, int]:
        return (1 if _respelling(x) else 0, _NAMED_KINDS.index(x.kind))

    named.sort(key=rank)
    c = named[0]
    where = ", ".join(
        f"line {ln} of `{v}`" for v, ln, file in ((a, c.line_a, c.file_a), (b, c.line_b, c.file_b)) if ln and not file
    )
    words = [w for w in (c.name, c.old, c.new) if w and len(w) > 1]
    if c.kind == "kwarg-changed":  # the keyword with its value (``num_stages`` alone is also ``tt.num_stages``)
        words = [f"{c.name}={v.strip(chr(39) + chr(34))}" for v in (c.old, c.new) if v]
    if any(w in f.title for w in words):
        if where and where not in f.title and not re.search(rf"line \d+ of `{re.escape(a)}`", f.title):
            f.title = f"{f.title} ({where})"
        return
    what = c.words(a, b)
    if c.function and kernel and c.function != kernel:  # an edit inside a called ``@triton.jit`` function
        what += f" in the called `@triton.jit` function `{c.function}`"
    also = next((x for x in named[1:] if _respelling(x) and (x.line_a, x.line_b) == (c.line_a, c.line_b)), None)
    if also is not None:
        what = f"{what}; {also.words(a, b)}"
    f.title = what + (f" ({where})" if where else "") + f": {f.title}"


def _hint_only(ac: AttrChange) -> bool:
    """An attribute change made only of AxisInfo hints (``tt.divisibility``/``tt.contiguity``)."""
    return all(t.startswith(("tt.divisibility", "tt.contiguity")) for t in (*ac.only_a, *ac.only_b))


def _cap_restatements(findings: list[Finding], by_id: dict[str, Finding]) -> None:
    """A finding that restates its cause's change at another level (the TTIR attribute change behind a hint rule,
    a source change a rule claimed) is no more severe than that cause: the cause judged what the change costs."""
    from irdiff.diagnose.model import SEVERITIES

    rank = {s: i for i, s in enumerate(SEVERITIES)}
    for f in findings:
        if not f.causes or not (f.id == "ttir.attr-changed" or f.id.startswith("source.")):
            continue
        causes = [by_id[c] for c in f.causes if c in by_id]
        if not causes:
            continue
        top = max(causes, key=lambda g: rank.get(g.severity, 0))
        if rank.get(f.severity, 0) > rank.get(top.severity, 0):
            f.severity = top.severity


def _lift_roots(findings: list[Finding], roots: set[str]) -> None:
    """A root is at least as severe as the worst finding its chain leads to (its effects, their effects, …): the
    root is what the user changed, and what it costs is the cost of its worst consequence (``precision.dot-input``
    ``major`` whose ``mma.lowering`` to FMA is ``critical`` is a critical change). Effects keep their own
    severities; only roots are raised, never lowered."""
    from irdiff.diagnose.model import SEVERITIES

    rank = {s: i for i, s in enumerate(SEVERITIES)}
    effects: dict[str, list[Finding]] = {}
    for f in findings:
        for c in f.causes:
            effects.setdefault(c, []).append(f)
    for f in findings:
        if f.id not in roots or f.causes:
            continue
        worst, seen, todo = rank.get(f.severity, 0), {f.id}, list(effects.get(f.id, []))
        while todo:
            g = todo.pop()
            if g.id in seen:
                continue
            seen.add(g.id)
            worst = max(worst, rank.get(g.severity, 0))
            todo.extend(effects.get(g.id, []))
        if worst > rank.get(f.severity, 0):
            f.severity = SEVERITIES[worst]  # type: ignore[assignment]


def _order(findings: list[Finding], roots: set[str], unexplained: set[str]) -> list[Finding]:
    from irdiff.diagnose.model import finding_stages

    rank = {s: i for i, s in enumerate(finding_stages())}
    pos = {f.id: i for i, f in enumerate(findings)}
    by_id = {f.id: f for f in findings}

    def depth(f: Finding, guard: int = 0) -> int:
        if guard > 30 or not f.causes:
            return 0
        return 1 + max((depth(by_id[c], guard + 1) for c in f.causes if c in by_id), default=0)

    def group(f: Finding) -> int:
        if f.id in unexplained:
            return 3
        if f.id in roots:
            # a root that explains nothing and says so (info) after the roots with effects
            return 1 if f.severity == "info" and not any(f.id in g.causes for g in findings) else 0
        return 2

    def key(f: Finding) -> tuple[int, int, int, int]:
        g = group(f)
        if g == 1:
            g = 2
        return (0 if g == 0 else 1 if g == 2 else 2, rank.get(f.stage, len(rank)), depth(f), pos[f.id])

    ordered = sorted(findings, key=key)
    tm = [f for f in ordered if f.id == "time.measured"]
    return [f for f in ordered if f.id != "time.measured"] + tm


def _spec_words(name: str, a: str, b: str, va: VariantResult, vb: VariantResult) -> str | None:
    """How the JIT specialized parameter ``name`` differently in ``a`` and ``b`` (stage 0), in field terms:
    ``"`stride_ak` is a runtime i32 in `a`, the constant 1 in `b`"``, ``"`n` has no divisibility-16 in `a` (16 in
    `b`)"``, ``"`x` is i64 in `a`, i32 in `b`"``; ``""`` when it is specialized alike; None when a side lacks it."""
    sa = next((s for s in va.specialization if s.name == name), None)
    sb = next((s for s in vb.specialization if s.name == name), None)
    if sa is None or sb is None:
        return None
    if sa.constexpr != sb.constexpr:
        x = f"the constant {sa.constexpr}" if sa.constexpr is not None else f"a runtime {sa.type}"
        y = f"the constant {sb.constexpr}" if sb.constexpr is not None else f"a runtime {sb.type}"
        return f"`{name}` is {x} in `{a}`, {y} in `{b}`"
    if sa.type != sb.type:
        return f"`{name}` is {sa.type} in `{a}`, {sb.type} in `{b}`"
    if sa.divisibility != sb.divisibility:
        lost, kept, div = (a, b, sb.divisibility) if not sa.divisibility else (b, a, sa.divisibility)
        if sa.divisibility and sb.divisibility:
            return f"`{name}` has divisibility {sa.divisibility} in `{a}`, {sb.divisibility} in `{b}`"
        return f"`{name}` has no divisibility-{div} in `{lost}` ({div} in `{kept}`)"
    return ""


def _annotation_words(cs: list[SourceChange], a: str, b: str, va: VariantResult, vb: VariantResult) -> str | None:
    """A ``source.annotation`` title in field terms: which parameters are annotated on which side, and what that does
    to the JIT's specialization of each (stage 0: type, divisibility-16, constant). None when a change is not a
    parameter annotation (a default, a decorator): the generic title is used."""
    if not cs or any(not c.name.isidentifier() or c.summary.startswith(("default of", "decorator")) for c in cs):
        return None
    spec = {c.name: _spec_words(c.name, a, b, va, vb) for c in cs}
    groups: dict[str, list[str]] = {}
    if all(c.old and not c.new for c in cs):
        side = f"only in `{a}`"
        for c in cs:
            groups.setdefault(f"`{c.old}`", []).append(c.name)
    elif all(c.new and not c.old for c in cs):
        side = f"only in `{b}`"
        for c in cs:
            groups.setdefault(f"`{c.new}`", []).append(c.name)
    else:
        side = f"that differ between `{a}` and `{b}`"
        for c in cs:
            groups.setdefault(f"`{c.old or '—'}` vs `{c.new or '—'}`", []).append(c.name)

    def names(ns: list[str]) -> str:
        return ", ".join(f"`{x}`" for x in ns[:3]) + (f" and {len(ns) - 3} more" if len(ns) > 3 else "")

    n = len(cs)
    listed = "; ".join(f"{names(ns)}: {ann}" for ann, ns in groups.items())
    what = f"{n} parameter annotation{'s' if n > 1 else ''} {side} ({listed})"
    differ = [w for w in spec.values() if w]
    if not differ:
        unknown = any(w is None for w in spec.values())
        pron = "them" if n > 1 else "it"
        return what + (
            "" if unknown else f": the JIT specializes {pron} alike in both (same type, divisibility, constant)"
        )
    return what + ": " + "; ".join(differ[:2]) + (f"; … {len(differ) - 2} more" if len(differ) > 2 else "")


def _source_finding(kind: str, cs: list[SourceChange], a: str, b: str, va: VariantResult, vb: VariantResult) -> Finding:
    # a change that involves a Triton call (``tl.trans(bt)`` for ``b``) names the edit better than the index
    # arithmetic beside it: it comes first (stable otherwise: source order)
    cs = sorted(cs, key=lambda c: 0 if "`tl." in c.summary else 1)
    words = [c.words(a, b) for c in cs]
    head = words[0] + (f" (and {len(words) - 1} more)" if len(words) > 1 else "")
    where = []
    c0 = cs[0]
    # each side's first changed line (a statement only in `a` and one only in `b` are both located, in either order)
    la = next((c.line_a for c in cs if c.line_a is not None), None)
    lb = next((c.line_b for c in cs if c.line_b is not None), None)
    if la is not None or lb is not None:
        where.append(f"line {la if la is not None else '—'} of `{a}`, line {lb if lb is not None else '—'} of `{b}`")
    fn = f" in the called `@triton.jit` function `{c0.function}`" if c0.function and c0.function != va.kernel else ""
    title = f"Source: {head}{fn}" + (f" ({where[0]})" if where else "")
    if kind == "annotation" and not fn:
        said = _annotation_words(cs, a, b, va, vb)
        if said:
            title = f"Source: {said}" + (f" ({where[0]})" if where else "")
    ev: list[Evidence] = []
    for c in cs[:8]:
        if c.line_a is not None:
            ev.append(Evidence(a, "python", c.line_a if not c.file_a else None, c.text_a or c.words(a, b)))
        if c.line_b is not None:
            ev.append(Evidence(b, "python", c.line_b if not c.file_b else None, c.text_b or c.words(a, b)))
    expl = "What changed in the source (compared as Python syntax trees): " + "; ".join(words[:8]) + "."
    if len(words) > 8:
        expl += f" … and {len(words) - 8} more."
    return Finding(
        id=source_id(kind),
        severity="minor",
        title=title,
        explanation=expl,
        evidence=ev,
        stage="python",
    )


def _unit_dim(strides: list[int | None] | None) -> int | None:
    """The one dimension along which neighbouring elements are adjacent in memory (stride 1), else None."""
    if not strides:
        return None
    units = [d for d, x in enumerate(strides) if x == 1]
    return units[0] if len(units) == 1 else None


def _major(dim: int, rank: int) -> str:
    """How a 2-D tile read along ``dim`` is called (row-major: the last dimension adjacent)."""
    if rank == 2:
        return "row-major" if dim == 1 else "column-major"
    return f"adjacent along dimension {dim}"


def transposed_accesses(
    la: list[LoweredAccess], lb: list[LoweredAccess]
) -> list[tuple[LoweredAccess, LoweredAccess, int, int]]:
    """Pairs of global accesses (the same kind, the same pointer parameters; else the n-th load with the n-th load)
    whose fastest-varying dimension differs between the variants: ``(access in a, access in b, unit-stride dimension
    in a, in b)``. The unit-stride dimension is the one dimension of the address tile along which neighbours are one
    element apart (:attr:`LoweredAccess.strides`, from the TTGIR address arithmetic): ``src + r[:, None] * ld +
    c[None, :]`` reads along dimension 1 (row-major), ``src + r[:, None] + c[None, :] * ld`` along dimension 0
    (column-major, a transposed read), whatever the variables and strides are called."""
    out: list[tuple[LoweredAccess, LoweredAccess, int, int]] = []
    for kind in ("load", "store"):
        xs = [x for x in la if x.kind == kind]
        ys = [y for y in lb if y.kind == kind]
        used: set[int] = set()
        for i, x in enumerate(xs):
            j = next(
                (j for j, y in enumerate(ys) if j not in used and y.ptr_args[:1] == x.ptr_args[:1] and y.ptr_args),
                i if len(xs) == len(ys) and i not in used else None,
            )
            if j is None:
                continue
            used.add(j)
            y = ys[j]
            da, db = _unit_dim(x.strides), _unit_dim(y.strides)
            if da is not None and db is not None and da != db and len(x.shape) == len(y.shape) >= 2:
                out.append((x, y, da, db))
    return out


def _name_transposed(
    g: Finding,
    cs: list[SourceChange],
    a: str,
    b: str,
    lowered: tuple[list[LoweredAccess], list[LoweredAccess]],
    findings: list[Finding],
    *,
    claimed: bool = False,
    config: bool = False,
) -> None:
    """Retitle the source root ``g`` (or, ``claimed``, the rule finding that claimed the change and names it in
    its title; ``config``, ``config.changed`` when the source is the same) when its change flips an access's fastest-varying dimension
    (:func:`transposed_accesses`): the root is then the transposed access (and the layout conversion through shared
    memory Triton adds for it, when ``layout.convert-shared`` follows from ``g`` in that variant), not the syntax of
    the index expression, which stays in the explanation. An access belongs to the change when one of its pointer
    parameters (or its value's name) is on a changed line."""
    texts = " ".join(t for c in cs for t in (c.text_a, c.text_b))
    hits = []
    for x, y, da, db in transposed_accesses(*lowered):
        names = [n for n in (*x.ptr_args, *y.ptr_args, x.name, y.name) if n]
        if texts.strip() and not any(re.search(rf"\b{re.escape(n)}\b", texts) for n in names):
            continue
        hits.append((x, y, da, db))
    if not hits:
        return
    x, y, da, db = hits[0]
    rank = len(x.shape)
    last = rank - 1
    # the transposed side reads away from the last dimension; if both do (rank > 2), name both dimensions
    if db != last and da == last:
        tv, td, ov, od = b, db, a, da
    else:
        tv, td, ov, od = a, da, b, db
    ptr = (x.ptr_args or y.ptr_args or [x.name or y.name or "its pointer"])[0]
    verb = "reads" if x.kind == "load" else "writes"
    what = f"the {x.kind} {verb} `{ptr}` transposed in `{tv}` ({_major(td, rank)}), {_major(od, rank)} in `{ov}`"
    conv = next((f for f in findings if f.id == "layout.convert-shared"), None)
    if claimed:  # the claiming finding says what follows itself
        g.title = f"{what[0].upper()}{what[1:]}: {g.title}"
    else:
        if conv is not None and _follows(conv, g.id, findings) and any(e.variant == tv for e in conv.evidence):
            what += ", so Triton converts the layout through shared memory"
        # `config.changed` (no source change): what the configuration does follows its values
        g.title = f"{g.title}: {what}" if config else f"Source: {what} ({g.title.removeprefix('Source: ')})"
    g.explanation = (
        f"In `{tv}` the {x.kind} of `{ptr}` ({'x'.join(map(str, x.shape))} {x.elem}) steps one element in memory "
        f"along dimension {td} of its tile, in `{ov}` along dimension {od} (element strides {x.strides} in `{a}`, "
        f"{y.strides} in `{b}`, from the TTGIR address arithmetic): the access is transposed. " + g.explanation
    )


def _follows(f: Finding, root: str, findings: list[Finding]) -> bool:
    """Whether ``f``'s chain of causes reaches ``root``."""
    by_id = {x.id: x for x in findings}
    seen: set[str] = set()
    todo = list(f.causes)
    while todo:
        c = todo.pop()
        if c == root:
            return True
        if c in seen or c not in by_id:
            continue
        seen.add(c)
        todo += by_id[c].causes
    return False


def _attr_finding(attrs: list[AttrChange], a: str, b: str) -> Finding:
    ev: list[Evidence] = []
    for ac in attrs[:6]:
        ev.append(Evidence(a, "ttir", ac.ttir_a, ac.text_a[:240]))
        ev.append(Evidence(b, "ttir", ac.ttir_b, ac.text_b[:240]))
    first = attrs[0]
    title = first.words(a, b) + (f" (and {len(attrs) - 1} more op(s))" if len(attrs) > 1 else "")
    return Finding(
        id="ttir.attr-changed",
        severity="minor",
        title=title,
        explanation="; ".join(ac.words(a, b) for ac in attrs[:6]) + ".",
        evidence=ev,
        stage="ttir",
    )


def _settings_finding(a: str, b: str, va: VariantResult, vb: VariantResult) -> Finding | None:
    diffs: list[tuple[str, str, str]] = []
    if va.target and vb.target and va.target != vb.target:
        diffs.append(("target", va.target, vb.target))
    tva, tvb = str(va.metadata.get("triton_version") or ""), str(vb.metadata.get("triton_version") or "")
    if tva and tvb and tva != tvb:
        diffs.append(("Triton version", tva, tvb))
    pva, pvb = va.resources.ptxas_version, vb.resources.ptxas_version
    if pva and pvb and pva != pvb:
        diffs.append(("ptxas", pva, pvb))
    if not diffs:
        return None
    # a value that names its kind already (``ptxas V12.9.86``) is not prefixed with it again
    desc = ", ".join(f"{x if x.startswith(k) else f'{k} {x}'} in `{a}` vs {y} in `{b}`" for k, x, y in diffs)
    expl = f"The compile settings differ: {desc}."
    if diffs[0][0] == "target":
        expl += (
            " The target selects the backend's pass pipeline and lowering (MMA version, async copies, TMA on sm90+) "
            "and the ptxas that assembles the PTX (Triton bundles a different ptxas for sm90+)."
        )
    ev = [Evidence(v, "options", None, f"{k} = {val}") for k, x, y in diffs for v, val in ((a, x), (b, y))]
    return Finding("settings.changed", "major", f"Settings differ: {desc}", expl, ev, stage="options")


def _pass_finding(a: str, b: str, va: VariantResult, vb: VariantResult, findings: list[Finding]) -> Finding | None:
    pd: PassDivergence | None = first_diverging_pass(va, vb)
    if pd is None:
        return None
    parent = next(
        (
            f
            for f in findings
            if (f.id.startswith("settings.") or f.id in ("options.changed", "config.changed")) and not f.causes
        ),
        None,
    )
    if not pd.pass_name:
        title = "Every saved MLIR pass snapshot is equal: the variants diverge after the MLIR pipeline (LLVM/PTX/ptxas)"
        expl = title + "."
    else:
        code = pd.code_pass or pd.pass_name
        title = f"First diverging pass: `{code}`"
        expl = f"The per-pass snapshots are equal up to `{code}`, whose output differs first"
        if pd.records_only and pd.code_pass and pd.code_pass != pd.pass_name:
            expl += f" (before it, `{pd.pass_name}` only records the option in the module attributes)"
        expl += ". Its output hunk is in the evidence."
    if pd.only_a or pd.only_b:
        expl += (
            f" Passes only `{a}` runs: {', '.join(f'`{p}`' for p in dict.fromkeys(pd.only_a)) or 'none'}; only `{b}`: "
            f"{', '.join(f'`{p}`' for p in dict.fromkeys(pd.only_b)) or 'none'}."
        )
    # up to 7 removed and 7 added lines, each cited to its own side (hunk headers cite neither), so `a` vs `b` and
    # `b` vs `a` cite the same variants whatever the order of the hunk's lines
    minus = [ln for ln in pd.hunk if ln.startswith("-")][:7]
    plus = [ln for ln in pd.hunk if ln.startswith("+")][:7]
    ev = [Evidence(a, "passes", None, ln) for ln in minus] + [Evidence(b, "passes", None, ln) for ln in plus]
    f = Finding("pass.first-diverging", "info", title, expl, ev, stage="ttgir")
    if parent is not None:
        f.causes = [parent.id]
        if pd.pass_name and "first diverging pass" not in parent.title:
            parent.title += f"; first diverging pass: `{pd.code_pass or pd.pass_name}`"
    return f


def _add_trace(
    r: _Root,
    a: str,
    b: str,
    va: VariantResult,
    vb: VariantResult,
    attrs: list[AttrChange],
    sd: SourceDiff,
    findings: list[Finding],
    whole_ok: bool = True,
) -> None:
    f = r.finding
    stages = ("ttir", "ttgir") if whole_ok else ("ttir", "ttgir", "ptx")
    # whole statements: a keyword on a continuation line of a multi-line call changes the ops located at the call
    la, lb = _statements(sd.flow_a, r.lines_a), _statements(sd.flow_b, r.lines_b)
    changes = [c for c in sd.semantic if (c.line_a in r.lines_a) or (c.line_b in r.lines_b)]
    if f.id == "ttir.attr-changed":
        mine = attrs
    else:
        mine = [ac for ac in attrs if ac.line_a in la or ac.line_b in lb]
        if f.id.startswith("source."):
            # a hint call's attribute sits on the op defining the hinted value, on another line (see _HINT_CALL)
            hints = [c for c in changes if _is_hint_change(c) and not (c.file_a or c.file_b)]
            ha = _hinted_lines(sd.flow_a, {c.line_a for c in hints if c.line_a is not None})
            hb = _hinted_lines(sd.flow_b, {c.line_b for c in hints if c.line_b is not None})
            extra = [ac for ac in attrs if _hint_only(ac) and ac not in mine and (ac.line_a in ha or ac.line_b in hb)]
            mine += extra
            la |= {ac.line_a for ac in extra}
            lb |= {ac.line_b for ac in extra}
    trace = stage_trace(va, vb, la, lb, stages) if (la or lb) else []
    whole = {s: _whole_delta(va, vb, s) for s in ("ptx", "sass")} if whole_ok else {}
    whole = {s: d for s, d in whole.items() if d[0] or d[1]}
    text = _trace_text(a, b, trace, whole)
    if mine and f.id != "ttir.attr-changed":
        f.explanation += " " + "; ".join(ac.words(a, b) for ac in mine[:3]) + "."
    if text:
        f.explanation += f" Downstream: {text}."
    others = [g for g in findings if g is not f and g.id.startswith(ROOT_PREFIXES) and not g.causes]
    if (
        not others
        and trace
        and not any(d.elsewhere for d in trace if d.stage in ("ttir", "ttgir"))
        and _layouts(va) == _layouts(vb)
    ):
        f.explanation += " Nothing else differs in TTIR/TTGIR."
    ctx = RootContext(a, b, f, changes, mine, trace, whole)
    for mech in MECHANISMS:
        try:
            s = mech(ctx)
        except Exception:  # noqa: BLE001 - a mechanism must not break the diagnosis
            s = None
        if s:
            f.explanation += " " + s
    if any(d.only_a or d.only_b for d in trace) or whole or mine:
        # AxisInfo hints matter only through what they change downstream (their effects say so)
        weighty = [ac for ac in mine if not _hint_only(ac)]
        f.severity = "major" if f.severity == "minor" and (whole or weighty) else f.severity
    elif f.id.startswith("source."):
        f.severity = "info"
        f.explanation += (
            " No TTIR/TTGIR/LLIR/PTX difference is traced to these lines (their IR is the same, or they have none, "
            "like an ignored annotation)."
        )
    for stage in ("ptx", "sass"):
        if stage not in whole:
            continue
        for v, vr, ops in ((a, va, whole[stage][0]), (b, vb, whole[stage][1])):
            if not ops:
                continue
            key = max(ops, key=lambda k: ops[k])
            line = next((no for no, op in _instructions(stage, stage_text(vr, stage)) if op == key), None)
            if line is not None:
                f.evidence.append(Evidence(v, stage, line, f"{key}   ({ops[key]}× only in `{v}`)"))


_LAYOUT_DEF = re.compile(r"^#\w+\s*=\s*#ttg\w*\.", re.M)


def _layouts(v: VariantResult) -> list[str]:
    """The TTGIR layout definitions (``#blocked = #ttg.blocked<{sizePerThread = [4], …}>``), sorted: the op-by-op
    trace compares op names, and a hint that widens the accesses changes only these in TTGIR."""
    return sorted(ln.strip() for ln in stage_text(v, "ttgir").splitlines() if _LAYOUT_DEF.match(ln.strip()))


def _statements(flow: list[StmtFlow], lines: set[int]) -> set[int]:
    """``lines`` with every line of the statements holding them (:class:`~irdiff.diagnose.source.StmtFlow`): the ops
    of a multi-line ``tl.load(…,\n eviction_policy=…)`` are located at the call's first line, not the keyword's."""
    out = set(lines)
    for st in flow:
        if any(st.first <= ln <= st.last for ln in lines):
            out.update(range(st.first, st.last + 1))
    return out


def _hinted_lines(flow: list[StmtFlow], calls: set[int]) -> set[int]:
    """Lines of the statements defining a value that the hint calls on ``calls`` read (``off = tl.multiple_of(off,
    8)`` reads ``off``): where the frontend puts the hint's ``tt.divisibility``/``tt.contiguity``."""
    read = {(st.function, n) for st in flow if any(st.first <= ln <= st.last for ln in calls) for n in st.uses}
    out: set[int] = set()
    for st in flow:
        if not any(st.first <= ln <= st.last for ln in calls) and any((st.function, d) in read for d in st.defs):
            out.update(range(st.first, st.last + 1))
    return out


# ------------------------------------------------------------------------------------------------ registers

_DOT = re.compile(r"=\s*(?:tt\.dot|ttng\.warp_group_dot)\b.*->\s*tensor<([\dx]+)x(f64|f32|f16|bf16|i32)")
# the accumulator (result) type of a dot: fp64 dots are MMA on sm80+ (``mma.sync`` m8n8k4 f64) and FMA before
_DOT_ANY = re.compile(r"(tt\.dot|ttng\.warp_group_dot)\b.*tensor<([\dx]+)x(f64|f32|f16|bf16|i32)\s*,\s*#(\w+)")
_ACC_WORDS = {"f64": "fp64", "f32": "fp32", "f16": "fp16", "bf16": "bf16", "i32": "int32"}
# a product written as a broadcast multiply summed by tt.reduce (``tl.sum(a[:, :, None] * b[None, :, :], axis=1)``):
# the reduce's operand is the whole 3-D product tile
_REDUCE_PRODUCT = re.compile(
    r'"tt\.reduce"\(%[\w.#]+\)\s*<\{axis = 1 : i32\}>.*?\}\)\s*:\s*\(tensor<(\d+)x(\d+)x(\d+)x(f64|f32|f16|bf16)\s*,',
    re.S,
)
_MODULE_WARPS = re.compile(r'"ttg\.num-warps"\s*=\s*(\d+)')


def _dot_facts(v: VariantResult) -> tuple[int, str] | None:
    """Accumulator elements per thread of the first ``tt.dot``/``warp_group_dot`` (tile M×N over the CTA's threads)
    and its layout alias (``mma`` or ``blocked``: FMA lowering), from the TTGIR text; fp64 dots included (their
    type: :func:`_dot_type`)."""
    text = stage_text(v, "ttgir")
    if not text:
        return None
    m = _MODULE_WARPS.search(text)
    warps = int(m.group(1)) if m else int(v.options.get("num_warps") or 4)
    for line in text.splitlines():
        d = _DOT_ANY.search(line.split(" loc(")[0])
        if d:
            dims = [int(x) for x in d.group(2).split("x")]
            n = 1
            for x in dims:
                n *= x
            return n // (warps * 32), d.group(4)
    return None


def _dot_type(v: VariantResult) -> str:
    """The accumulator type of the first dot, as the notes word it (``fp32``, ``fp64``, ...); "" without a dot."""
    for line in (stage_text(v, "ttgir") or "").splitlines():
        d = _DOT_ANY.search(line.split(" loc(")[0])
        if d:
            return _ACC_WORDS[d.group(3)]
    return ""


def _reduce_product(v: VariantResult) -> tuple[str, int, str] | None:
    """A tile product computed without a dot: the first ``tt.reduce`` over axis 1 of a 3-D tile (M×K×N, the
    broadcast multiply ``a[:, :, None] * b[None, :, :]``), as ``(shape, values per thread, type)``: every product
    is held (M·K·N over ``num_warps`` × 32 threads) before the sum, FMA instructions on a blocked layout."""
    text = stage_text(v, "ttgir")
    if not text:
        return None
    m = _REDUCE_PRODUCT.search(text)
    if not m:
        return None
    w = _MODULE_WARPS.search(text)
    warps = int(w.group(1)) if w else int(v.options.get("num_warps") or 4)
    dims = [int(m.group(i)) for i in (1, 2, 3)]
    return "x".join(map(str, dims)), dims[0] * dims[1] * dims[2] // (warps * 32), _ACC_WORDS[m.group(4)]


_MULTI_PASS = ("tf32x3", "bf16x3", "bf16x6")


def _dot_notes(fid: str, a: str, b: str, more: str, dots: tuple[list[DotFact], list[DotFact]]) -> str | None:
    """What a dot mechanism finding ``fid`` says about registers in *these* variants (their first dots, from TTIR and
    TTGIR), or None when their dots show no register cost in ``more``: every note names the precisions, lowerings
    or accumulators the two variants actually have.

    - ``mma.lowering``: FMA keeps every output's operand slices in the FMA variant's registers (only when that
      variant is ``more``); between MMA kinds, the fragments per thread differ.
    - ``precision.dot-input``: a multi-pass precision (``tf32x3``, ``bf16x3``, ``bf16x6``) in ``more`` keeps each
      operand's high and low parts; ``ieee`` in ``more`` is the FMA lowering (the tensor cores have no fp32 mode).
    - ``precision.dot-accumulate``: a smaller ``max_num_imprecise_acc``, a wider accumulator, or
      ``acc += tl.dot(a, b)`` (a second accumulator tile) in ``more``.
    """
    da, db = dots
    if not da or not db:
        return None
    x, y = da[0], db[0]
    mine, theirs = (x, y) if more == a else (y, x)
    other = b if more == a else a
    if fid == "mma.lowering":
        if not x.lowering or not y.lowering or x.lowering == y.lowering:
            return None
        if "fma" in (x.lowering, y.lowering):
            if mine.lowering != "fma":
                return None  # the FMA variant has fewer registers: the lowering does not explain more
            return f"`{more}` lowers the dot to FMA: each thread keeps the operand slices of all its outputs"
        return (
            f"the dot is lowered to `{x.lowering}` in `{a}` and `{y.lowering}` in `{b}`: the operand and accumulator "
            "fragments each thread holds differ"
        )
    if fid == "precision.dot-input":
        if mine.precision == theirs.precision:
            return None
        if mine.precision in _MULTI_PASS and theirs.precision not in _MULTI_PASS:
            return (
                f"`{more}` uses input precision `{mine.precision}` (`{other}`: `{theirs.precision or 'none'}`): each "
                "fp32 operand is split into a high and a low part, both kept in registers for several MMAs"
            )
        if mine.precision == "ieee":
            return (
                f"`{more}` uses input precision `ieee` (`{other}`: `{theirs.precision}`), which the tensor cores "
                "cannot run: its fp32 products are FMA instructions"
            )
        return None
    if fid == "precision.dot-accumulate":
        big = 1 << 62
        ma = mine.max_imprecise_acc if mine.max_imprecise_acc is not None else big
        mb = theirs.max_imprecise_acc if theirs.max_imprecise_acc is not None else big
        if ma < mb:
            return f"`{more}` promotes partial sums into a second fp32 accumulator more often (`max_num_imprecise_acc`)"
        bits = {"f64": 64, "f32": 32, "i32": 32, "f16": 16, "bf16": 16}
        if bits.get(mine.acc_type, 0) > bits.get(theirs.acc_type, 0):
            return f"`{more}` accumulates in `{mine.acc_type}` (`{other}`: `{theirs.acc_type}`): wider registers"
        if theirs.acc_chained and not mine.acc_chained:
            return (
                f"`{more}` adds the product afterwards (`acc += tl.dot(a, b)`): the MMA result is a second "
                "accumulator tile in registers"
            )
        return None
    return None


def register_story(
    f: Finding,
    a: str,
    b: str,
    va: VariantResult,
    vb: VariantResult,
    findings: list[Finding],
    *,
    dots: tuple[list[DotFact], list[DotFact]] | None = None,
) -> None:
    """Attribute a register difference to what the IR shows, and say when occupancy does not change.

    Looked at (both variants, from TTGIR/TTIR and other findings): accumulator elements per thread (the dot tile
    over ``num_warps`` × 32 threads, one 32-bit register each), FMA vs MMA lowering (a dot on a ``#blocked``
    layout), 64-bit index math (``ttir.i64-index-math``), vector width (``coalesce.vector-width``), pipeline depth
    (``pipeline.buffers``: loads in flight). The causes of ``f`` become the findings that fit the direction; when
    none fits, its explanation says "not explained" and its causes are cleared. A dot mechanism finding is named
    only with what the two variants' dots show (:func:`_dot_notes`; ``dots``: the variants' :attr:`MechFacts.dots`
    when the caller has them, else extracted here from ``va``/``vb``: an FMA dot's lowering is read from them).
    """
    by_id = {g.id: g for g in findings}
    ra, rb = va.resources.registers, vb.resources.registers
    if ra is None or rb is None or ra == rb:
        return
    more = a if ra > rb else b
    notes: list[str] = []
    fits: list[str] = []
    if dots is None:
        dots = (extract_mech_facts(va).dots, extract_mech_facts(vb).dots)
    # Mechanism findings that change register demand directly (issue 12's families), most direct first.
    for fid in ("mma.lowering", "precision.dot-input", "precision.dot-accumulate", "precision.fp64"):
        g = by_id.get(fid)
        if g is None or g.predicts not in (None, more):
            continue
        if fid == "precision.fp64":
            if g.instructions is not None and abs(ra - rb) > 2 * max(1, g.instructions):
                continue  # scalar-only fp64 (a few conversions) holds a register pair at most once per value
            what: str | None = "fp64 values take two 32-bit registers each"
        else:
            what = _dot_notes(fid, a, b, more, dots)
        if what is None:
            continue
        if fid == "precision.dot-input" and "mma.lowering" in fits and what.endswith("FMA instructions"):
            fits.append(fid)  # the lowering's note says it already
            continue
        notes.append(what)
        fits.append(fid)
    lowerings = {d.lowering for side in dots for d in side[:1]}
    da, db = _dot_facts(va), _dot_facts(vb)
    if da and db and da[0] != db[0]:
        big = a if da[0] > db[0] else b
        ta, tb = _dot_type(va), _dot_type(vb)  # both have a dot: never ""
        kinds = ta if ta == tb else f"{ta} (`{a}`) / {tb} (`{b}`)"
        notes.append(
            f"the dot accumulator holds {da[0]} {kinds} values per thread in `{a}` and {db[0]} in `{b}` (tile ÷ "
            "threads" + ("; an fp64 value takes two 32-bit registers" if "fp64" in (ta, tb) else "") + ")"
        )
        if big == more:
            fits += [i for i in ("options.changed", "spec.constexpr-changed", "settings.changed") if i in by_id]
    if da and db and (da[1].startswith("blocked") != db[1].startswith("blocked")):
        fma = a if da[1].startswith("blocked") else b
        if not any(n.startswith(f"`{fma}` lowers the dot to FMA") for n in notes):  # said with the lowering's note
            notes.append(f"`{fma}` lowers the dot to FMA (blocked layout), the other to MMA")
        fits += [i for i in ("layout.mma", "settings.changed", "options.changed") if i in by_id]
    if (da is None) != (db is None):  # one product by a dot, the other by a broadcast multiply and a sum
        dv, dname, pv, pname = (va, a, vb, b) if da else (vb, b, va, a)
        dot = da or db
        prod = _reduce_product(pv)
        if dot is not None and prod is not None and pname == more:
            regs = 2 if prod[2] == "fp64" else 1
            how = "FMA (blocked layout)" if dot[1].startswith("blocked") else "MMA"
            notes.append(
                f"`{pname}` computes the product without `tt.dot` (FMA): a broadcast multiply of a {prod[0]} "
                f"{prod[2]} tile summed by `tt.reduce`, {prod[1]} {prod[2]} values ({prod[1] * regs} 32-bit registers) "
                f"per thread before the sum; `{dname}`'s dot is {how} with {dot[0]} {_dot_type(dv)} accumulator "
                "values per thread"
            )
    aa, ab = _address_regs(va), _address_regs(vb)
    if aa != ab and (aa > ab) == (more == a):
        notes.append(
            f"global loads/stores need {aa} address registers per thread in `{a}` and {ab} in `{b}` (one 64-bit "
            "pointer per vector: elements per thread from the blocked layout ÷ vector width × 2)"
        )
        pm = by_id.get("ptx.memory-ops")
        if pm is not None and pm.predicts in (None, more):
            fits.append("ptx.memory-ops")  # the unvectorized accesses it counts are where the addresses live
        fits += [i for i in ("coalesce.vector-width", "coalesce.contiguity", "lower.mask-alignment") if i in by_id]
    ca, cb = _count(va, "ptx", "cp.async"), _count(vb, "ptx", "cp.async")
    if ca != cb and (ca > cb) == (more == a):
        notes.append(f"{ca} vs {cb} `cp.async` in PTX: more loads in flight keep their addresses live")
        fits += [i for i in ("pipeline.async-copies", "pipeline.buffers", "loop.num-stages") if i in by_id]
    if notes and va.options.get("num_warps") != vb.options.get("num_warps") and "options.changed" in by_id:
        fits.append("options.changed")  # the per-thread sizes above scale with num_warps
    for fid, what in (
        ("ttir.i64-index-math", "64-bit index math takes two registers per index"),
        ("loop.flattened", "the fused loop carries more values across iterations"),
        ("loop.nest", "another loop nest changes which values stay live across iterations"),
        ("layout.mma", "another MMA layout changes the fragment sizes per thread"),
    ):
        g = by_id.get(fid)
        if g is None:
            continue
        if fid != "layout.mma" and g.predicts not in (None, more):
            continue  # it predicts the other variant slower: it cannot explain more registers here
        if fid == "layout.mma" and (
            "fma" in lowerings  # a first dot on a #blocked layout (mechfacts DotFact.lowering), either side
            or (any(n.startswith(f"`{x}` computes the product without `tt.dot`") for n in notes for x in (a, b)))
        ):
            fits.append(fid)  # one side has no MMA layout: the FMA-vs-MMA note above says what differs
            continue
        notes.append(what)
        fits.append(fid)
    oa = _occ(findings)

    def ancestors(fid: str, seen: set[str]) -> set[str]:
        for c in by_id[fid].causes if fid in by_id else []:
            if c not in seen:
                seen.add(c)
                ancestors(c, seen)
        return seen

    keep: list[str] = []
    for c in dict.fromkeys(fits):  # the most direct first; drop what an already kept cause descends from
        if c in by_id and c != f.id and not any(c in ancestors(k, set()) for k in keep):
            keep.append(c)
    f.causes = keep[:3]
    if notes:
        f.explanation += " Evidence for the difference: " + "; ".join(notes) + "."
    else:
        f.explanation += (
            " Not explained: the accumulator and fragment sizes per thread, the lowering (FMA/MMA), the index width, "
            "vector width and pipeline depth are the same in both variants."
        )
    capped = max(ra, rb) >= 255 or "resources.spills" in by_id
    if not oa:
        f.explanation += " Occupancy does not change (same CTAs per SM)" + (
            ": the extra registers cost nothing at this launch."
            if not capped
            else ", but the kernel is at the 255-register cap, where ptxas trades registers for spills."
        )
        if f.severity in ("major", "minor") and not capped:
            f.severity = "info"


_BLOCKED_DEF = re.compile(r"^(#blocked\d*)\s*=\s*#ttg\.blocked<\{sizePerThread = \[([\d, ]+)\].*?order = \[([\d, ]+)\]")
_MEM_OP = re.compile(r"\b(tt\.load|tt\.store)\b.*?tensor<([\dx]+)x!tt\.ptr<[^>]*>,\s*(#blocked\d*)>")


def _address_regs(v: VariantResult) -> int:
    """32-bit registers per thread holding global addresses for ``tt.load``/``tt.store`` in TTGIR: per op, elements
    per thread (tile ÷ threads) ÷ contiguous elements per thread (``sizePerThread`` along ``order[0]``) × 2."""
    text = stage_text(v, "ttgir")
    if not text:
        return 0
    m = _MODULE_WARPS.search(text)
    threads = (int(m.group(1)) if m else int(v.options.get("num_warps") or 4)) * 32
    layouts: dict[str, tuple[list[int], list[int]]] = {}
    total = 0
    for line in text.splitlines():
        d = _BLOCKED_DEF.match(line)
        if d:
            layouts[d.group(1)] = ([int(x) for x in d.group(2).split(",")], [int(x) for x in d.group(3).split(",")])
            continue
        op = _MEM_OP.search(line.split(" loc(")[0])
        if not op or op.group(3) not in layouts:
            continue
        n = 1
        for x in op.group(2).split("x"):
            n *= int(x)
        spt, order = layouts[op.group(3)]
        vec = spt[order[0]] if order and order[0] < len(spt) else 1
        total += 2 * max(1, n // threads // max(1, vec))
    return total


def _count(v: VariantResult, stage: str, prefix: str) -> int:
    """Instructions of ``stage`` (PTX) whose opcode starts with ``prefix`` (predicates allowed before it)."""
    text = stage_text(v, stage)
    pat = re.compile(rf"^\s*(?:@!?%\w+\s+)?{re.escape(prefix)}", re.M)
    return len(pat.findall(text)) if text else 0


def _occ(findings: list[Finding]) -> bool:
    return any(g.id == "resources.occupancy" for g in findings)
