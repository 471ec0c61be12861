"""Pair the kernels of two captures (or two Triton caches): which kernel of A corresponds to which kernel of B.

Pure Python over bundles (no Triton import). Rounds, each on the kernels still unpaired, each greedy and
deterministic (best rank first, then capture order):

1. **same name** — same kernel name. Among several candidates (specializations, autotuning configs, or
   TorchInductor kernels of different graphs that got the same name), the rank prefers, in this order: kernels the
   program itself launched (launch counts recorded on a GPU, an autotuner's benchmark launches not counted), the
   same stage-0 signature (every parameter's name, type, divisibility, constexpr value) and the same
   ``num_warps``/``num_stages``/``num_ctas`` (paired as **name+signature**: the same kernel compiled the same way,
   typical of before/after a code change elsewhere, or two Triton versions), the most parameters specialized alike
   and the same options (**name**: ``dynamic=True``, an annotation, another autotune config), the most similar
   source, the most launches;
2. **fused ops** — TorchInductor names equal once the kind (``poi``/``per``/``red``) and counter are dropped (a
   reduction that is persistent with static sizes and looped with dynamic ones);
3. **source** — different names, similar ``@triton.jit`` source (``difflib`` ratio ≥ ``min_similarity`` on the
   function text with its name and blank lines removed; the TTIR without locations when the source is unknown).

**Target first:** when the two collections share a target (``sm90`` kernels on both sides), a kernel is only
paired with a kernel compiled for the same target, so an sm80 kernel never pairs with an sm90 one when an sm90 twin
exists; a kernel left without a same-target partner is listed as unpaired (:func:`target_note` says why). Two
collections with no target in common (an sm80 cache against an sm90 one) are paired across targets.

A kernel left over whose name is also the name of a paired kernel of the same side, compiled for the same target,
is that kernel's alternative
(:attr:`Pairing.also_a`/:attr:`Pairing.also_b`: "also compiled"), e.g. the autotuning configs TorchInductor compiled
and benchmarked but did not pick. The others are unpaired (kernels only one program has). TritonParse's
``diff --trace`` pairs the same way (hash, name groups, source similarity ≥ 0.75, then within-group by
``num_stages``/``num_warps``).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from irdiff.bundle import Bundle, VariantResult

__all__ = [
    "KernelPair",
    "Pairing",
    "launch_counts",
    "pair_kernels",
    "program_launches",
    "signature_key",
    "source_similarity",
    "target_note",
]

OPTION_KEYS = ("num_warps", "num_stages", "num_ctas")


@dataclass
class KernelPair:
    """One kernel of A matched to one of B.

    :ivar a: variant name in bundle A; :ivar b: variant name in bundle B.
    :ivar how: ``"name+signature"``, ``"name"``, ``"fused ops"``, ``"source"`` or ``"only kernels"`` (one kernel on
        each side).
    :ivar score: 1.0 for name+signature; the similarity in [0, 1] otherwise.
    """

    a: str
    b: str
    how: str
    score: float = 1.0


@dataclass
class Pairing:
    """Result of :func:`pair_kernels`: pairs in A's capture order, then the kernels each side has alone.

    :ivar only_a: kernels of A that pair with nothing (and are no alternative); :ivar only_b: the same for B.
    :ivar also_a: paired kernel of A → other kernels of A with the same name that lost the tie-break (other
        specializations or autotuning configs: "also compiled"), in capture order; :ivar also_b: the same for B.
    Every kernel of a side is in exactly one of: a pair, ``only_*``, an ``also_*`` list.
    """

    pairs: list[KernelPair] = field(default_factory=list)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    also_a: dict[str, list[str]] = field(default_factory=dict)
    also_b: dict[str, list[str]] = field(default_factory=dict)


def signature_key(v: VariantResult) -> tuple[object, ...]:
    """What must be equal for round 1: parameters (name, type, divisibility, constexpr) and launch options."""
    args = tuple((s.name, s.type, s.divisibility, s.constexpr) for s in v.specialization)
    opts = tuple((k, v.options.get(k, v.metadata.get(k))) for k in OPTION_KEYS)
    return (args, opts)


def _spec_score(va: VariantResult, vb: VariantResult) -> float:
    """Similarity of two specializations in [0, 1]: parameters specialized alike, and options alike."""
    a = {s.name: (s.type, s.divisibility, s.constexpr) for s in va.specialization}
    b = {s.name: (s.type, s.divisibility, s.constexpr) for s in vb.specialization}
    names = set(a) | set(b)
    same_args = sum(1 for n in names if a.get(n) == b.get(n)) / len(names) if names else 1.0
    opts = sum(
        1 for k in OPTION_KEYS if va.options.get(k, va.metadata.get(k)) == vb.options.get(k, vb.metadata.get(k))
    ) / len(OPTION_KEYS)
    return round(0.7 * same_args + 0.3 * opts, 4)


def launch_counts(v: VariantResult) -> tuple[int, int] | None:
    """``(launches, of which an autotuner's benchmark runs)`` recorded for a captured kernel
    (``metadata["launches"]``, written by :mod:`irdiff.capture.finalize`), None when none were recorded (no GPU,
    ``--launches 0``, or never launched)."""
    launches = v.metadata.get("launches")
    if not isinstance(launches, dict):
        return None
    try:
        return int(launches.get("count", 0)), int(launches.get("autotune", 0) or 0)
    except (TypeError, ValueError):
        return None


def program_launches(v: VariantResult) -> int:
    """Launches of a captured kernel by the program itself (autotuner benchmark runs not counted); 0 if unknown."""
    c = launch_counts(v)
    return max(0, c[0] - c[1]) if c else 0


_LOC = re.compile(r"\s*loc\((?:[^()]|\([^()]*\))*\)")


def _source_text(v: VariantResult) -> str:
    src = v.metadata.get("fn_source")
    if isinstance(src, str) and src.strip():
        text = re.sub(r"^(\s*def\s+)\w+", r"\1KERNEL", src, count=1, flags=re.M)
    else:
        ttir = v.text("ttir")
        text = "\n".join(_LOC.sub("", ln) for ln in ttir.splitlines() if not ln.startswith("#loc"))
        if v.kernel:
            text = text.replace(v.kernel, "KERNEL")
    return "\n".join(ln.rstrip() for ln in text.splitlines() if ln.strip())


def source_similarity(va: VariantResult, vb: VariantResult) -> float:
    """``difflib.SequenceMatcher`` ratio of the two kernels' source lines (function renamed to ``KERNEL``)."""
    a, b = _source_text(va).splitlines(), _source_text(vb).splitlines()
    if not a or not b:
        return 0.0
    return round(difflib.SequenceMatcher(None, a, b, autojunk=False).ratio(), 4)


_INDUCTOR_NAME = re.compile(r"^triton_(?:poi|per|red|tem|for|spl|mm|bmm)_(.+?)(?:_\d+)?$")


def inductor_stem(kernel: str) -> str | None:
    """``triton_red_fused__to_copy_add_mean_0`` → ``fused__to_copy_add_mean`` (None for other names): the fused
    operations TorchInductor names its kernels after, without the kernel kind and the per-graph counter."""
    m = _INDUCTOR_NAME.match(kernel or "")
    return m.group(1) if m else None


def _target(v: VariantResult) -> str:
    """The kernel's target (``sm90``), or ``""`` when the record does not say."""
    return v.target or ""


def _targets(b: Bundle) -> set[str]:
    return {_target(v) for v in b.variants.values() if not v.error and _target(v)}


def _same_target(va: VariantResult, vb: VariantResult) -> bool:
    ta, tb = _target(va), _target(vb)
    return not ta or not tb or ta == tb


def target_note(v: VariantResult, other: Bundle) -> str | None:
    """Why an unpaired kernel has no partner, when the target is the reason: ``"sm80; no sm80 kernel in the other
    collection"`` (the other side compiled kernels of that name only for other targets), else None."""
    t = _target(v)
    if not t or not v.kernel:
        return None
    same_name = [w for w in other.variants.values() if not w.error and w.kernel == v.kernel]
    if not same_name or any(_same_target(v, w) for w in same_name):
        return None
    others = sorted({_target(w) for w in same_name})
    return f"{t}; `{v.kernel}` there only for {', '.join(others)}"


def pair_kernels(a: Bundle, b: Bundle, *, min_similarity: float = 0.75) -> Pairing:
    """Pair the variants of two kernel collections (see the module docstring for the rounds).

    :param a: the capture shown first / ``-`` (e.g. before a change); :param b: the other (``+``).
    :param min_similarity: lowest source similarity accepted in round 3.
    :returns: pairs ordered as the kernels of ``a`` were captured, and the unpaired names of each side.
    """
    left = [n for n, v in a.variants.items() if not v.error]
    right = [n for n, v in b.variants.items() if not v.error]
    va, vb = a.variants, b.variants
    pairs: list[KernelPair] = []

    def take(
        candidates: list[tuple[tuple[float, ...], int, int, str, float]], left_now: list[str], right_now: list[str]
    ) -> None:
        # candidates: (rank, index in left, index in right, how, score); best rank first, then capture order.
        used_a: set[str] = set()
        used_b: set[str] = set()
        for _rank, i, j, how, score in sorted(candidates, key=lambda c: (tuple(-r for r in c[0]), c[1], c[2])):
            x, y = left_now[i], right_now[j]
            if x in used_a or y in used_b:
                continue
            used_a.add(x)
            used_b.add(y)
            pairs.append(KernelPair(x, y, how, score))
        left[:] = [n for n in left if n not in used_a]
        right[:] = [n for n in right if n not in used_b]

    # target first: collections that share a target pair only kernels of the same target
    strict = bool(_targets(a) & _targets(b))

    def comparable(x: str, y: str) -> bool:
        return not strict or _same_target(va[x], vb[y])

    if len(left) == 1 and len(right) == 1 and comparable(left[0], right[0]):
        x, y = left[0], right[0]
        how = "name+signature" if signature_key(va[x]) == signature_key(vb[y]) and va[x].kernel == vb[y].kernel else ""
        score = 1.0 if how else source_similarity(va[x], vb[y])
        return Pairing([KernelPair(x, y, how or "only kernels", score)])

    # Round 1: same name; the rank decides among several kernels of one name (see the module docstring).
    left_now, right_now = list(left), list(right)
    cands: list[tuple[tuple[float, ...], int, int, str, float]] = []
    for i, x in enumerate(left_now):
        for j, y in enumerate(right_now):
            if not va[x].kernel or va[x].kernel != vb[y].kernel or not comparable(x, y):
                continue
            exact = signature_key(va[x]) == signature_key(vb[y])
            spec = 1.0 if exact else _spec_score(va[x], vb[y])
            ran = (program_launches(va[x]) > 0) + (program_launches(vb[y]) > 0)
            n = program_launches(va[x]) + program_launches(vb[y])
            rank = (ran, float(exact), spec, source_similarity(va[x], vb[y]), n)
            cands.append((rank, i, j, "name+signature" if exact else "name", spec))
    take(cands, left_now, right_now)
    # Round 2: same TorchInductor kernel name once the kind and counter are dropped
    # (``triton_per_fused_add_mean_0`` and ``triton_red_fused_add_mean_1`` both compute ``fused_add_mean``).
    left_now, right_now = list(left), list(right)
    cands = []
    for i, x in enumerate(left_now):
        for j, y in enumerate(right_now):
            if not comparable(x, y):
                continue
            if inductor_stem(va[x].kernel) and inductor_stem(va[x].kernel) == inductor_stem(vb[y].kernel):
                spec = _spec_score(va[x], vb[y])
                ran = (program_launches(va[x]) > 0) + (program_launches(vb[y]) > 0)
                cands.append(((ran, spec), i, j, "fused ops", spec))
    take(cands, left_now, right_now)
    # Round 3: similar source.
    left_now, right_now = list(left), list(right)
    cands = []
    for i, x in enumerate(left_now):
        for j, y in enumerate(right_now):
            if not comparable(x, y):
                continue
            s = source_similarity(va[x], vb[y])
            if s >= min_similarity:
                cands.append(((s,), i, j, "source", s))
    take(cands, left_now, right_now)

    order = {n: k for k, n in enumerate(a.variants)}
    pairs.sort(key=lambda p: order.get(p.a, 0))
    also_a = _alternatives(va, [p.a for p in pairs], left)
    also_b = _alternatives(vb, [p.b for p in pairs], right)
    taken_a = {n for alts in also_a.values() for n in alts}
    taken_b = {n for alts in also_b.values() for n in alts}
    return Pairing(pairs, [n for n in left if n not in taken_a], [n for n in right if n not in taken_b], also_a, also_b)


def _alternatives(vs: dict[str, VariantResult], paired: list[str], leftover: list[str]) -> dict[str, list[str]]:
    """Leftover kernels named like a paired kernel of the same side → {that paired kernel: [leftovers]}; with
    several paired kernels of that name, the one with the most similar specialization (then source) gets it. A
    kernel compiled for another target is no alternative (it stays unpaired)."""
    out: dict[str, list[str]] = {}
    for n in leftover:
        same = [p for p in paired if vs[p].kernel and vs[p].kernel == vs[n].kernel and _target(vs[p]) == _target(vs[n])]
        if not same:
            continue
        best = max(same, key=lambda p: (_spec_score(vs[p], vs[n]), source_similarity(vs[p], vs[n])))
        out.setdefault(best, []).append(n)
    return out
