"""Atomics and memory ordering, and layout conversions through shared memory.

Facts: TTIR ``tt.atomic_rmw``/``tt.atomic_cas`` (op, ``sem``, ``scope``, type, the ops that read the returned old
value; :class:`~irdiff.diagnose.mechfacts.AtomicFact`), TTGIR ``ttg.convert_layout`` with the PTX shared-memory
traffic at its source position (:class:`~irdiff.diagnose.mechfacts.ConvertFact`), and counts: PTX ``atom``/``red``
by op, type and width (``atom.add.f32``, ``red.add.v4.f32``, ``atom.cas.b32``), ``atom.acq_rel``; SASS ``ATOMG``/
``RED``/``ATOMS``, ``MEMBAR``/``ERRBAR``/``CCTL`` (fences and L1 invalidation ptxas emits around acquire/release
atomics).
"""

from __future__ import annotations

from irdiff.diagnose.facts import VariantFacts
from irdiff.diagnose.mechfacts import AtomicFact, ConvertFact
from irdiff.diagnose.model import Evidence, Finding, Severity
from irdiff.diagnose.rules.common import Context, _c, _ev, _kb, _names
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


# The fence a variant's evidence quotes: its widest ``MEMBAR`` (ptxas writes ``MEMBAR.ALL.SYS``/``.GPU``/``.CTA``
# for a ``sys``/``gpu``/``cta`` acquire-release or release atomic, ``MEMBAR.SC.*`` for a ``fence.sc``; sm80 and
# sm90 alike), else the error barrier or L1 invalidation an acquire adds (``ERRBAR``, ``CCTL.IVALL``).
_QUOTED = ("MEMBAR.SYS", "MEMBAR.GPU", "MEMBAR.CTA", "CCTL", "ERRBAR")


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
        for k in _QUOTED:
            # the first line of this fence kind (``MEMBAR.ALL.SYS`` for ``MEMBAR.SYS``), not the first ``MEMBAR`` of
            # any scope
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
    if (ca and na) or (cb and nb):  # the user's own ``tl.atomic_cas``: not an emulation, and it hides Triton's
        return []
    # who emulates: Triton (``atom.cas`` in PTX for an op it cannot express) or ptxas (a native PTX ``atom`` the
    # target lacks, e.g. ``atom.add.noftz.f16`` on sm80, becomes ``ATOMG.CAS`` in SASS); both: no difference
    em = {v: "triton" if c else "ptxas" if _sass_cas(ctx.facts(v)) else "" for v, c in ((ctx.a, ca), (ctx.b, cb))}
    if bool(em[ctx.a]) == bool(em[ctx.b]):
        return []
    loop = ctx.a if em[ctx.a] else ctx.b
    other = ctx.b if loop == ctx.a else ctx.a
    f = ctx.facts(loop)
    atoms = mech(f).atomics
    ev: list[Evidence] = []
    if atoms:
        ev.append(_ev(loop, atoms[0].ref, atoms[0].ref.text[:220]))
    what = f"`{atoms[0].op}` on `{atoms[0].elem}`" if atoms else "the atomic"
    if em[loop] == "triton":
        r = f.first_lines.get("ptx", {}).get("atom.cas")
        if r:
            ev.append(_ev(loop, r, f"{r.text}   ({_c(f, 'ptx', 'atom.cas')}× atom.cas)"))
        how = (
            f"In `{loop}` {what} has no native atomic instruction on {f.target}, so Triton emits a compare-and-swap "
            f"loop: load the old value, compute the new one, `atom.cas` it, and retry when another thread changed the "
            f"word in between ({_c(f, 'ptx', 'atom.cas')} `atom.cas` per thread)."
        )
    else:
        native = sorted(k for k in _atomic_keys(f, "ptx") if k.count(".") >= 2 and not k.startswith(("atom.cas",)))
        r = f.first_lines.get("ptx", {}).get(native[0]) if native else None
        if r:
            ev.append(_ev(loop, r, f"{r.text}   ({_c(f, 'ptx', native[0])}× {native[0]})"))
        n = _sass_cas(f)
        rs = f.first_lines.get("sass", {}).get("ATOMG.CAS") or f.first_lines.get("sass", {}).get("ATOM.CAS")
        if rs:
            ev.append(_ev(loop, rs, f"{rs.text}   ({n}× ATOMG.CAS)"))
        how = (
            f"In `{loop}` the PTX has a native atomic for {what}"
            + (f" (`{native[0]}`)" if native else "")
            + f", but ptxas has no SASS atomic for it on {f.target} and emulates it with a compare-and-swap loop "
            f"({n}× `ATOMG.CAS` per thread in SASS: read the word, compute the new value, swap it in, retry when "
            "another thread changed it)."
        )
    ev.append(
        Evidence(other, "ptx", None, ", ".join(f"{n}× {k}" for k, n in _atomic_keys(ctx.facts(other), "ptx").items()))
    )
    expl = (
        how + " Under contention (split-K, histograms) each retry is another round trip to L2. "
        f"`{other}` uses a native atomic/reduction. Results are the same up to the (unordered) summation order."
    )
    return [
        Finding(
            "atomic.cas-loop",
            "major",
            f"`{loop}` emulates {what} with a compare-and-swap loop"
            + (" (by ptxas, in SASS)" if em[loop] == "ptxas" else ""),
            expl,
            ev,
            stage="ptx" if em[loop] == "triton" else "sass",
            predicts=loop,
        )
    ]


def _sass_cas(f: VariantFacts) -> int:
    """Compare-and-swap atomics in the SASS (``ATOMG.CAS``, ``ATOM.CAS``): a loop ptxas emulates an op with, when
    the PTX has no ``atom.cas``."""
    return _c(f, "sass", "ATOMG.CAS") + _c(f, "sass", "ATOM.CAS")


_OP_WORDS = {
    "fadd": "`tl.atomic_add`",
    "add": "`tl.atomic_add`",
    "max": "`tl.atomic_max`",
    "umax": "`tl.atomic_max`",
    "min": "`tl.atomic_min`",
    "umin": "`tl.atomic_min`",
    "exch": "`tl.atomic_xchg`",
    "cas": "`tl.atomic_cas`",
    "and": "`tl.atomic_and`",
    "or": "`tl.atomic_or`",
    "xor": "`tl.atomic_xor`",
}


def _ops(atoms: list[AtomicFact]) -> str:
    """```fadd` on 128x128xf32 ×2, `cas` on i32``: the atomics' ops in program order, with their shapes."""
    seen: dict[str, int] = {}
    for a in atoms:
        shape = "x".join(map(str, a.shape))
        k = f"`{a.op}` on {shape + 'x' if shape else ''}{a.elem}"
        seen[k] = seen.get(k, 0) + 1
    return ", ".join(k + (f" ×{n}" if n > 1 else "") for k, n in seen.items()) or "none"


@rule(
    Emits("atomic.ops", causes=("spec.constexpr-changed", "options.changed")),
    reads=("mech", "counts", "first_lines"),
)
def rule_atomic_ops(ctx: Context) -> list[Finding]:
    """``atomic.ops``: the variants update memory with different atomic operations (TTIR ``tt.atomic_rmw`` op,
    ``tt.atomic_cas``), or one writes with atomics where the other writes with plain ``tt.store`` (split-K partial
    sums added into C vs stored per split, a scatter-add vs a scatter-store): what each atomic costs (a
    read-modify-write at the L2, serialized per address) and whether the results can differ."""
    aa, ab = mech(ctx.fa).atomics, mech(ctx.fb).atomics
    ka, kb = sorted(a.op for a in aa), sorted(a.op for a in ab)
    if ka == kb:
        return []
    sa, sb = _c(ctx.fa, "ttir", "tt.store"), _c(ctx.fb, "ttir", "tt.store")
    ev: list[Evidence] = []
    for v, f, atoms in ((ctx.a, ctx.fa, aa), (ctx.b, ctx.fb, ab)):
        for a in atoms[:2]:
            ev.append(_ev(v, a.ref, a.ref.text[:220]))
            if a.python:
                ev.append(_ev(v, a.python))
        if not atoms:
            r = f.first_lines.get("ttir", {}).get("tt.store")
            if r:
                ev.append(_ev(v, r, r.text[:220]))
        keys = _atomic_keys(f, "sass")
        if keys:
            ev.append(Evidence(v, "sass", None, ", ".join(f"{n}× {k}" for k, n in sorted(keys.items()))))
    only = ctx.a if aa and not ab else ctx.b if ab and not aa else None
    if only:
        atoms = aa if only == ctx.a else ab
        plain = ctx.b if only == ctx.a else ctx.a
        n_st = sb if only == ctx.a else sa
        words = sorted({_OP_WORDS.get(a.op, f"`{a.op}`") for a in atoms})
        title = f"`{only}` updates memory with {' and '.join(words)} ({_ops(atoms)}) where `{plain}` has no atomic" + (
            f" ({n_st} plain `tl.store`)" if n_st else ""
        )
        expl = (
            f"`{only}` writes through {len(atoms)} atomic operation(s) in TTIR ({_ops(atoms)}); `{plain}` has none"
            + (f" and {n_st} `tt.store`" if n_st else "")
            + ". An atomic is a read-modify-write performed at the L2 (PTX `atom`/`red`, SASS `ATOMG`/`RED`): "
            "updates of one address from different threads or programs are serialized there, and an atomic that "
            "returns its old value (`ATOMG`, the default `sem='acq_rel'`) also waits for it; a plain store only "
            "writes, can be merged in the L2 and never waits. The results are the same only when every address is "
            f"written once: where two programs write the same address (duplicate scatter indices, split-K partial "
            f"sums into one C tile) `{only}` accumulates all updates and `{plain}` keeps whichever write lands last."
        )
        predicts: str | None = only
    else:
        title = f"Atomic operations differ: {_ops(aa)} in `{ctx.a}` vs {_ops(ab)} in `{ctx.b}`"
        user_cas = [v for v, atoms in ((ctx.a, aa), (ctx.b, ab)) if any(a.op == "cas" for a in atoms)]
        expl = (
            f"The TTIR atomics are {_ops(aa)} in `{ctx.a}` and {_ops(ab)} in `{ctx.b}` (`tt.atomic_rmw` op, or "
            "`tt.atomic_cas`). Each is one read-modify-write at the L2 per element"
            + (
                "; a `tl.atomic_cas` written by the user (" + ", ".join(f"`{v}`" for v in user_cas) + ") swaps only "
                "when the word still holds the expected value, so a loop around it retries under contention where a "
                "single `atomic_max`/`atomic_add` always succeeds in one operation"
                if len(user_cas) == 1
                else ""
            )
            + ". Per thread, SASS has "
            + "; ".join(
                f"`{v}` " + (", ".join(f"{n}× `{k}`" for k, n in sorted(_atomic_keys(f, "sass").items())) or "none")
                for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb))
            )
            + "."
        )
        predicts = user_cas[0] if len(user_cas) == 1 else None
    return [Finding("atomic.ops", "major", title, expl, ev, stage="ttir", predicts=predicts)]


# The ``tt.atomic_rmw`` ops Triton may lower to a reduction (PTX ``red``, no value returned) when the result has no
# use: every op but ``xchg`` (PTX has no ``red.exch``), and only with ``sem`` ``relaxed`` or ``release``
# (``useRed`` in ``AtomicRMWOpConversion::matchAndRewrite``,
# ``third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/LoadStoreOpToLLVM.cpp``; Triton 3.9 compiles agree: an unused
# ``acq_rel`` add and an unused ``relaxed`` ``tl.atomic_xchg`` stay ``atom``).
_RED_SEMS = ("relaxed", "release")


def _may_reduce(a: AtomicFact) -> bool:
    """Whether ``a`` could become a reduction were its result unused (its op and ``sem`` allow ``red``)."""
    return a.op not in ("exch", "cas") and a.sem in _RED_SEMS


def _returning(f: VariantFacts, stage: str) -> tuple[int, int]:
    """``(atomics that return a value, reductions)`` per thread in ``stage``: PTX ``atom`` (less ``atom.cas``) and
    ``red``; SASS ``ATOMG``/``ATOM`` (less their ``.CAS``) and ``RED`` (``REDG`` counts as ``RED``)."""
    if stage == "ptx":
        return _c(f, "ptx", "atom") - _c(f, "ptx", "atom.cas"), _c(f, "ptx", "red")
    atoms = _c(f, "sass", "ATOMG") + _c(f, "sass", "ATOM") - _sass_cas(f)
    return atoms, _c(f, "sass", "RED")


def _user_words(a: AtomicFact, code: bool = True) -> str:
    """```tt.store`` (line 12: `tl.store(prev + offs, old, mask=ok)`)``: what reads an atomic's old value (``code``
    False: ```tt.store`` at line 12``)."""
    ops = _names(a.users)
    if a.user_python is None:
        return ops
    if not code:
        return f"{ops} at line {a.user_python.line}"
    return f"{ops} (line {a.user_python.line}: `{a.user_python.text}`)"


@rule(
    Emits("atomic.result-used", causes=("spec.constexpr-changed", "options.changed")),
    reads=("mech", "counts", "first_lines"),
)
def rule_atomic_result(ctx: Context) -> list[Finding]:
    """``atomic.result-used``: the same atomic (TTIR ``tt.atomic_rmw``, paired in program order, same op) has its
    returned old value used in one variant and unused in the other, and the lowering shows it: per thread, the
    variant that uses it has more value-returning atomics and fewer reductions — PTX ``atom`` vs ``red`` (Triton
    emits ``red`` only for an unused result, an op other than ``xchg`` and ``sem`` ``relaxed``/``release``:
    ``AtomicRMWOpConversion``, ``third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/LoadStoreOpToLLVM.cpp``), or, when the
    PTX has ``atom`` in both (Triton 3.6 emits ``atom`` whatever the use), SASS ``ATOMG`` vs ``RED`` (ptxas turns
    an ``atom`` whose destination register is never read into ``RED``). Counts are instructions per thread.

    Facts: :attr:`~irdiff.diagnose.mechfacts.AtomicFact.users` (the TTIR ops that read the result, with the first
    one's source line), PTX/SASS counts (:mod:`irdiff.diagnose.counts`). Silent when both variants use (or both
    ignore) the values, when the atomics differ in number or op (``atomic.ops``), and when the lowering is the same
    (an ``xchg`` or an ``acq_rel`` atomic returns its value either way); an ``xchg`` whose use differs is never named
    (nor blamed on its ``sem``), even beside another atomic whose lowering does differ. A ``sem`` that differs as well is
    ``atomic.ordering``'s; this finding then says whether the used side's ``sem`` alone would keep ``atom``.

    Measured (H200, Triton 3.6, ``benchmarks/gpu_atomic_return.sh``, ``benchmarks/results/atomic-return-h200/``):
    16 Mi relaxed i32 adds into 65,536 bins took 0.249 ms with the old value read and 0.188 ms without (1.32×);
    into 256 bins both took 3.19 ms (the L2 serializes the updates of each address either way)."""
    aa = [x for x in mech(ctx.fa).atomics if x.op != "cas"]
    ab = [x for x in mech(ctx.fb).atomics if x.op != "cas"]
    if not aa or len(aa) != len(ab):
        return []
    # an `xchg` stays `atom` whether its value is read or not (no `red.exch`): its use shows in no lowering
    pairs = [
        (x, y)
        for x, y in zip(aa, ab, strict=True)
        if x.op == y.op and x.op != "exch" and bool(x.users) != bool(y.users)
    ]
    sides = {ctx.a if x.users else ctx.b for x, _ in pairs}
    if len(sides) != 1:  # none, or some atomics used in `a` and others in `b`: no side to name
        return []
    user = sides.pop()
    other = ctx.b if user == ctx.a else ctx.a
    fu, fo = ctx.facts(user), ctx.facts(other)
    # the lowering that shows it: fewer reductions in `user`, in PTX when Triton chose (`red`), else in SASS when the
    # PTX has as many in both and ptxas did (`RED`). Only the reductions are compared: other atomics (inline PTX)
    # may add value-returning ones to either side.
    (_, red_u), (_, red_o) = _returning(fu, "ptx"), _returning(fo, "ptx")
    if red_u < red_o:
        stage = "ptx"
    elif red_u == red_o and _returning(fu, "sass")[1] < _returning(fo, "sass")[1]:
        stage = "sass"
    else:
        return []
    used = [x if user == ctx.a else y for x, y in pairs]
    unused = [y if user == ctx.a else x for x, y in pairs]
    u0, o0 = used[0], unused[0]
    what = _ops(used)
    words = " and ".join(sorted({_OP_WORDS.get(x.op, f"`{x.op}`") for x in used}))
    (nu_atom, nu_red), (no_atom, no_red) = _returning(fu, stage), _returning(fo, stage)
    if stage == "ptx":
        lowered_u, lowered_o = "`atom` (SASS `ATOMG`)", "`red` (SASS `RED`)"
    else:
        lowered_u, lowered_o = "`ATOMG`", "`RED`"
    title = (
        f"`{user}` uses the old value of {words} ({what}; read by {_user_words(u0, code=False)}): it lowers to "
        f"{lowered_u} and waits for it; unused in `{other}`, it lowers to {lowered_o}"
    )
    ev: list[Evidence] = [_ev(user, u0.ref, u0.ref.text[:220])]
    if u0.python:
        ev.append(_ev(user, u0.python))
    if u0.user is not None:
        ev.append(_ev(user, u0.user, u0.user.text[:220]))
    if u0.user_python is not None and (u0.python is None or u0.user_python.line != u0.python.line):
        ev.append(_ev(user, u0.user_python))
    ev.append(_ev(other, o0.ref, o0.ref.text[:220]))
    if o0.python:
        ev.append(_ev(other, o0.python))
    for v, f, key in (
        (user, fu, "atom" if stage == "ptx" else "ATOMG"),
        (other, fo, "red" if stage == "ptx" else "RED"),
    ):
        r = f.first_lines.get(stage, {}).get(key)
        if r:
            ev.append(_ev(v, r, f"{r.text}   ({_c(f, stage, key)}× {key})"))
    for v, f in ((user, fu), (other, fo)):
        keys = _atomic_keys(f, "sass")
        if keys:
            ev.append(Evidence(v, "sass", None, ", ".join(f"{n}× {k}" for k, n in sorted(keys.items()))))
    how = (
        "Triton lowers a `tt.atomic_rmw` to a reduction — PTX `red`, which returns nothing — only when its result has "
        "no use, its op is not `xchg` and its `sem` is `relaxed` or `release` (`AtomicRMWOpConversion`, "
        "`third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/LoadStoreOpToLLVM.cpp`); otherwise it emits `atom`, which "
        "returns the old value."
    )
    if stage == "sass":
        how += (
            " Here the PTX has `atom` in both variants (this Triton emits `atom` whatever the use) and ptxas makes "
            f"the difference: the `atom` whose destination register is never read becomes `RED` in `{other}`."
        )
    counts = (
        f" Per thread, {stage.upper()} has {nu_atom} value-returning atomic(s) and {nu_red} reduction(s) in `{user}`, "
        f"{no_atom} and {no_red} in `{other}`."
    )
    sem_too = [x.sem for x in used if not _may_reduce(x)]
    also = (
        f" `{user}`'s `sem={sem_too[0]}` would keep `atom` even without the use (`atomic.ordering` names the sems): "
        "both differences lead to it."
        if sem_too
        else ""
    )
    expl = (
        f"In `{user}` the old value returned by {what} is read by {_user_words(u0)}; in `{other}` the same atomic's "
        f"result has no use. {how}{counts} An `atom` whose value is read holds a destination register and the first "
        "instruction that reads it waits until the value comes back from the L2 (a round trip per atomic); a `red` "
        "is issued and not waited for. Where many threads update the same few addresses the updates serialize at "
        "the L2 in both variants, and that can hide the wait; it shows where the updates are spread out."
        + (
            f" In `{user}` the returned values are also moved to another layout through shared memory before their "
            "use (`layout.convert-shared`)."
            if any(c.producer == "tt.atomic_rmw" and _needs_shared(c) for c in mech(fu).converts)
            else ""
        )
        + f" The memory updates are the same; only `{user}` reads the values the atomics replaced.{also}"
    )
    return [Finding("atomic.result-used", "major", title, expl, ev, stage="ttir", predicts=user)]


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
    Emits(
        "layout.convert-shared",
        causes=("spec.constexpr-changed", "options.changed", "mma.lowering", "atomic.result-used"),
        direction={"atomic.result-used": +1},
    ),
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
    # the conversions the other side lacks, each of the other side's matching one conversion of this side (by layout
    # kinds, shape and element type): a 256xi32 atomic result converted back for its store is not the 256x!tt.ptr<i32>
    # pointer conversion both sides make before the atomic, nor a second blocked-to-blocked 256xf32 conversion
    theirs = [(o.src, o.dst, o.shape, o.elem) for o in others]
    extra: list[ConvertFact] = []
    for x in cs:
        key = (x.src, x.dst, x.shape, x.elem)
        if key in theirs:
            theirs.remove(key)
        else:
            extra.append(x)
    extra = extra or cs
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
    # the shared-memory instructions the conversions add or remove per thread: conversions that differ only in their
    # layouts but move the same elements (one each side, the same st.shared/ld.shared) explain no count difference
    traffic = abs(sum(x.shared_stores + x.shared_loads for x in ca) - sum(x.shared_stores + x.shared_loads for x in cb))
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
            instructions=traffic,
        )
    ]
