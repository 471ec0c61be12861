"""Atomics and memory ordering, and layout conversions through shared memory.

Facts: TTIR ``tt.atomic_rmw``/``tt.atomic_cas`` (op, ``sem``, ``scope``, type; :class:`~irdiff.diagnose.mechfacts.
AtomicFact`), TTGIR ``ttg.convert_layout`` with the PTX shared-memory traffic at its source position
(:class:`~irdiff.diagnose.mechfacts.ConvertFact`), and counts: PTX ``atom``/``red`` by op, type and width
(``atom.add.f32``, ``red.add.v4.f32``, ``atom.cas.b32``), ``atom.acq_rel``; SASS ``ATOMG``/``RED``/``ATOMS``,
``MEMBAR``/``ERRBAR``/``CCTL`` (fences and L1 invalidation ptxas emits around acquire/release atomics).
"""

from __future__ import annotations

from irdiff.diagnose.facts import VariantFacts
from irdiff.diagnose.mechfacts import ConvertFact
from irdiff.diagnose.model import Evidence, Finding, Severity
from irdiff.diagnose.rules.common import Context, _c, _ev, _kb
from irdiff.diagnose.rules.precision import mech
from irdiff.diagnose.rules.registry import Emits, rule

_SEM_WORDS = {
    "acq_rel": "`acq_rel` (the default of `tl.atomic_*`): each atomic orders the thread's memory operations around "
    "it — ptxas surrounds it with a fence (`MEMBAR`) and an L1 invalidation (`CCTL.IVALL`), and the atomic must "
    "return its old value (`ATOMG`)",
    "acquire": "`acquire`: later loads may not move before the atomic (L1 invalidated after it)",
    "release": "`release`: earlier stores are made visible before the atomic (a fence before it)",
    "relaxed": "`relaxed`: no ordering beyond the atomic itself; when the result is unused PTX uses a reduction "
    "(`red`) that does not return a value (`RED` in SASS)",
}


def _atomic_keys(f: VariantFacts, stage: str) -> dict[str, int]:
    c = f.counts.get(stage, {})
    if stage == "ptx":
        return {k: n for k, n in c.items() if k.split(".")[0] in ("atom", "red") and n}
    return {k: n for k, n in c.items() if k.split(".")[0] in ("ATOMG", "ATOM", "ATOMS", "RED") and n}


def _fences(f: VariantFacts) -> dict[str, int]:
    sass = ("MEMBAR.CTA", "MEMBAR.GPU", "MEMBAR.SYS", "ERRBAR", "CCTL")
    return {k: _c(f, "sass", k) for k in sass if _c(f, "sass", k)} | {
        k: _c(f, "ptx", k) for k in ("fence.acq_rel", "fence.sc", "membar") if _c(f, "ptx", k)
    }


_FENCE_WORDS = {
    "MEMBAR.SYS": "a system-wide fence (`MEMBAR.SYS`)",
    "MEMBAR.GPU": "a GPU-wide fence (`MEMBAR.GPU`)",
    "MEMBAR.CTA": "a CTA fence (`MEMBAR.CTA`)",
    "CCTL": "an L1 invalidation (`CCTL`)",
    "fence.sc": "a sequentially consistent fence (`fence.sc`)",
    "fence.acq_rel": "a fence (`fence.acq_rel`)",
    "membar": "a fence (`membar`)",
}


def _added(more: dict[str, int], less: dict[str, int]) -> str:
    """What the heavier side adds, in words: each fence or L1 invalidation kind it has more of (a ``release``
    atomic fences but invalidates nothing; a ``cta``-scope atomic fences the CTA only, a ``gpu``-scope one the whole
    GPU and invalidates L1). SASS kinds first; PTX fences only when the SASS shows none."""
    sass = [w for k, w in _FENCE_WORDS.items() if k.isupper() or k == "CCTL"]
    kinds = [w for k, w in _FENCE_WORDS.items() if more.get(k, 0) > less.get(k, 0) and w in sass]
    if not kinds:
        kinds = [w for k, w in _FENCE_WORDS.items() if more.get(k, 0) > less.get(k, 0)]
    return " and ".join(kinds or ["fences"]) + " per atomic"


@rule(
    Emits("atomic.ordering", causes=("spec.constexpr-changed", "options.changed")),
    reads=("mech", "counts", "first_lines"),
)
def rule_atomic_ordering(ctx: Context) -> list[Finding]:
    """``atomic.ordering``: the atomics' ``sem``/``scope`` differ, with the fences and L1 invalidations this adds
    in SASS and the instruction each atomic becomes (``ATOMG`` returning a value vs ``RED``)."""
    aa, ab = mech(ctx.fa).atomics, mech(ctx.fb).atomics
    if not aa or not ab:
        return []
    sa = sorted({(a.sem, a.scope) for a in aa})
    sb = sorted({(a.sem, a.scope) for a in ab})
    fa, fb = _fences(ctx.fa), _fences(ctx.fb)
    if sa == sb and fa == fb:
        return []
    ev: list[Evidence] = []
    for v, atoms in ((ctx.a, aa), (ctx.b, ab)):
        ev.append(_ev(v, atoms[0].ref, atoms[0].ref.text[:220]))
        if atoms[0].python:
            ev.append(_ev(v, atoms[0].python))
    for v, f, fences in ((ctx.a, ctx.fa, fa), (ctx.b, ctx.fb, fb)):
        for k in ("MEMBAR.GPU", "CCTL", "ERRBAR"):
            # the first line of this fence kind (``MEMBAR.GPU``), not the first ``MEMBAR`` of any scope
            r = f.first_lines.get("sass", {}).get(k)
            if r and fences.get(k):
                ev.append(_ev(v, r, f"{r.text}   ({fences[k]}× {k})"))
                break
        ka = _atomic_keys(f, "sass")
        if ka:
            ev.append(Evidence(v, "sass", None, ", ".join(f"{n}× {k}" for k, n in sorted(ka.items()))))
    heavy = ctx.a if sum(fa.values()) > sum(fb.values()) else ctx.b if sum(fb.values()) > sum(fa.values()) else None

    def desc(s: list[tuple[str, str]]) -> str:
        return ", ".join(f"sem={x} scope={y}" for x, y in s)

    sems = sorted({x for x, _ in sa + sb})
    expl = (
        f"Atomics use {desc(sa)} in `{ctx.a}` and {desc(sb)} in `{ctx.b}`. "
        + " ".join(_SEM_WORDS[s] + "." for s in sems if s in _SEM_WORDS)
        + " Fences and L1 invalidations in SASS: "
        + "; ".join(
            f"`{v}` " + (", ".join(f"{n}× `{k}`" for k, n in fs.items()) or "none")
            for v, fs in ((ctx.a, fa), (ctx.b, fb))
        )
        + ". Per thread, PTX has "
        + "; ".join(
            f"`{v}` " + ", ".join(f"{n}× `{k}`" for k, n in sorted(_atomic_keys(f, "ptx").items()) if k.count(".") >= 1)
            for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb))
        )
        + ". Results are the same for a plain accumulation (the sum's rounding order across CTAs is not fixed in "
        "either); the ordering only matters when other memory operations depend on the atomic (locks, flags)."
    )
    sev: Severity = "major" if heavy else "minor"
    return [
        Finding(
            "atomic.ordering",
            sev,
            f"Atomic ordering: {desc(sa)} in `{ctx.a}` vs {desc(sb)} in `{ctx.b}`"
            + (
                f" (`{heavy}` adds {_added(fa if heavy == ctx.a else fb, fb if heavy == ctx.a else fa)})"
                if heavy
                else ""
            ),
            expl,
            ev,
            stage="ttir",
            predicts=heavy,
        )
    ]


@rule(
    Emits("atomic.cas-loop", causes=("spec.type-changed", "spec.constexpr-changed")),
    reads=("mech", "counts", "first_lines", "arch"),
)
def rule_cas_loop(ctx: Context) -> list[Finding]:
    """``atomic.cas-loop``: an atomic read-modify-write is emulated with a compare-and-swap retry loop
    (``atom.cas`` in PTX, ``ATOMG.CAS`` in SASS) in one variant: the target has no native instruction for that op
    and type (e.g. bf16 add on sm80)."""
    ca, cb = _c(ctx.fa, "ptx", "atom.cas"), _c(ctx.fb, "ptx", "atom.cas")
    na = sum(1 for a in mech(ctx.fa).atomics if a.op == "cas")
    nb = sum(1 for a in mech(ctx.fb).atomics if a.op == "cas")
    if (ca > 0) == (cb > 0) or (ca and na) or (cb and nb):
        return []
    loop = ctx.a if ca else ctx.b
    other = ctx.b if loop == ctx.a else ctx.a
    f = ctx.facts(loop)
    atoms = mech(f).atomics
    ev: list[Evidence] = []
    if atoms:
        ev.append(_ev(loop, atoms[0].ref, atoms[0].ref.text[:220]))
    r = f.first_lines.get("ptx", {}).get("atom.cas")
    if r:
        ev.append(_ev(loop, r, f"{r.text}   ({_c(f, 'ptx', 'atom.cas')}× atom.cas)"))
    ev.append(
        Evidence(other, "ptx", None, ", ".join(f"{n}× {k}" for k, n in _atomic_keys(ctx.facts(other), "ptx").items()))
    )
    what = f"`{atoms[0].op}` on `{atoms[0].elem}`" if atoms else "the atomic"
    expl = (
        f"In `{loop}` {what} has no native atomic instruction on {f.target}, so Triton emits a compare-and-swap "
        f"loop: load the old value, compute the new one, `atom.cas` it, and retry when another thread changed the "
        f"word in between ({_c(f, 'ptx', 'atom.cas')} `atom.cas` per thread). Under contention (split-K, "
        f"histograms) each retry is another round trip to L2. `{other}` uses a native atomic/reduction. Results are "
        "the same up to the (unordered) summation order."
    )
    return [
        Finding(
            "atomic.cas-loop",
            "major",
            f"`{loop}` emulates {what} with a compare-and-swap loop",
            expl,
            ev,
            stage="ptx",
            predicts=loop,
        )
    ]


def _needs_shared(c: ConvertFact) -> bool:
    return c.shared_stores > 0


def _required_by(c: ConvertFact) -> str:
    cons = set(c.consumers)
    if c.src in ("mma_v2", "wgmma", "tcgen05", "linear") and cons & {"tt.atomic_rmw", "tt.atomic_cas"}:
        return (
            "an atomic on the MMA result: atomics are emitted in a blocked layout, so the MMA-layout values are "
            "redistributed between threads through shared memory first"
        )
    if c.src in ("mma_v2", "wgmma", "tcgen05", "linear") and "tt.store" in cons:
        return "storing the MMA result: the store is coalesced in a blocked layout"
    if cons & {"tt.reduce"}:
        return "a reduction that needs another distribution of the values"
    if cons & {"tt.trans", "tt.reshape", "tt.split", "tt.join", "tt.cat"}:
        return "a `" + sorted(cons & {"tt.trans", "tt.reshape", "tt.split", "tt.join", "tt.cat"})[0] + "`"
    if "tt.dot" in cons:
        return "feeding a dot operand"
    return "a consumer that expects another layout (" + ", ".join(sorted(cons)) + ")"


@rule(
    Emits("layout.convert-shared", causes=("spec.constexpr-changed", "options.changed", "mma.lowering")),
    reads=("mech", "resources"),
)
def rule_convert_shared(ctx: Context) -> list[Finding]:
    """``layout.convert-shared``: ``ttg.convert_layout`` ops that go through shared memory (PTX ``st.shared``/
    ``ld.shared`` and barriers at their source position) differ: which values, between which layouts, the scratch
    bytes, the instructions they add and what required them."""
    ca = [c for c in mech(ctx.fa).converts if _needs_shared(c)]
    cb = [c for c in mech(ctx.fb).converts if _needs_shared(c)]
    key_a = sorted((c.src, c.dst, tuple(c.shape)) for c in ca)
    key_b = sorted((c.src, c.dst, tuple(c.shape)) for c in cb)
    if key_a == key_b:
        return []
    more = ctx.a if len(ca) > len(cb) else ctx.b if len(cb) > len(ca) else None
    side = more or ctx.a
    cs = ca if side == ctx.a else cb
    others = cb if side == ctx.a else ca
    other = ctx.b if side == ctx.a else ctx.a
    extra = [c for c in cs if (c.src, c.dst, c.shape) not in [(o.src, o.dst, o.shape) for o in others]] or cs
    c = extra[0]
    ev: list[Evidence] = [_ev(side, c.ref, c.ref.text[:240])]
    if c.python:
        ev.append(_ev(side, c.python))
    ev.append(
        Evidence(
            side,
            "ptx",
            None,
            f"{c.shared_stores} st.shared + {c.shared_loads} ld.shared ({c.stored_bytes} B stored per thread), "
            f"{c.barriers} bar.sync at the conversion's source line",
        )
    )
    for o in others[:1]:
        ev.append(_ev(other, o.ref, o.ref.text[:240]))
    shape = "x".join(map(str, c.shape))
    scratch = f"about {_kb(c.scratch_bytes)} of shared-memory scratch" if c.scratch_bytes else "shared-memory scratch"
    expl = (
        f"In `{side}` a `ttg.convert_layout` moves the {shape}x{c.elem} value"
        + (f" produced by `{c.producer}`" if c.producer else "")
        + f" from the {c.src} layout to a {c.dst} layout through shared memory: each thread stores its elements "
        f"({c.shared_stores} `st.shared`, {c.stored_bytes} B), the CTA synchronises ({c.barriers} `bar.sync`) and "
        f"each thread loads the elements it needs ({c.shared_loads} loads) — {scratch} per CTA (bytes stored × "
        f"threads / rounds). It is required by {_required_by(c)}. "
        + (
            f"`{other}` has {len(others)} such conversion(s)"
            + (": it consumes the value in the layout it was produced in." if not others else ".")
        )
        + " The scratch reuses shared memory freed by earlier buffers, so `metadata.shared` may not grow; the cost "
        "is the extra shared-memory traffic and barriers. Results are the same."
    )
    sev: Severity = "minor" if more else "info"
    return [
        Finding(
            "layout.convert-shared",
            sev,
            f"`{side}` converts {shape}x{c.elem} from {c.src} to {c.dst} through shared memory"
            + (f" ({_kb(c.scratch_bytes)} scratch)" if c.scratch_bytes else ""),
            expl,
            ev,
            stage="ttgir",
            predicts=more,
        )
    ]
