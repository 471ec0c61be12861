"""Memory hints (``cache_modifier``, ``eviction_policy``, ``volatile``, ``tl.multiple_of``/``tl.max_contiguous``/
``tl.assume``), the compiler's own warnings, and pipeline wait depth.

Facts: TTIR ``cachePolicy``/``isVolatile`` attributes, ``tt.divisibility``/``tt.contiguity`` op attributes and
``tt.assume``/``llvm.intr.assume`` (:class:`~irdiff.diagnose.mechfacts.HintFact`); PTX qualifier counts
(``hint .cg``, ``hint L1::evict_first``, ``hint L2::cache_hint``, ``createpolicy``); SASS ``LDG hint .EF``; the
``compile`` log; TTGIR ``ttg.async_wait {num}`` and PTX ``cp.async.wait_group N``.
"""

from __future__ import annotations

from irdiff.diagnose.facts import VariantFacts
from irdiff.diagnose.mechfacts import HintFact
from irdiff.diagnose.model import Evidence, Finding
from irdiff.diagnose.rules.common import Context, _ev
from irdiff.diagnose.rules.precision import mech
from irdiff.diagnose.rules.registry import Emits, rule

_HINT_PTX = {
    ("cache_modifier", "cg"): "`.cg`: cache in L2 only, bypass L1",
    ("cache_modifier", "ca"): "`.ca`: cache at all levels",
    ("cache_modifier", "cs"): "`.cs`: streaming, likely accessed once (evict first)",
    ("cache_modifier", "cv"): "`.cv`: volatile, fetch again on every access",
    ("cache_modifier", "wb"): "`.wb`: write-back",
    ("cache_modifier", "wt"): "`.wt`: write-through to system memory",
    ("eviction_policy", "evict_first"): "`L1::evict_first` plus an L2 `createpolicy` cache hint: evicted first",
    ("eviction_policy", "evict_last"): "`L1::evict_last` plus an L2 `createpolicy` cache hint: kept longest",
    ("volatile", "true"): "`ld.volatile`: never cached or merged",
}


def _ptx_hints(f: VariantFacts) -> dict[str, int]:
    return {k: n for k, n in f.counts.get("ptx", {}).items() if n and (k.startswith("hint ") or k == "createpolicy")}


def _sass_hints(f: VariantFacts) -> dict[str, int]:
    return {k: n for k, n in f.counts.get("sass", {}).items() if n and " hint " in k}


@rule(
    Emits("hint.cache", causes=("spec.constexpr-changed",)),
    reads=("mech", "counts"),
)
def rule_cache_hints(ctx: Context) -> list[Finding]:
    """``hint.cache``: ``cache_modifier``/``eviction_policy``/``volatile`` on loads and stores differ, with the PTX
    qualifiers and SASS modifiers they became."""
    ha = sorted(
        {
            (h.kind, h.value, h.op)
            for h in mech(ctx.fa).hints
            if h.kind in ("cache_modifier", "eviction_policy", "volatile")
        }
    )
    hb = sorted(
        {
            (h.kind, h.value, h.op)
            for h in mech(ctx.fb).hints
            if h.kind in ("cache_modifier", "eviction_policy", "volatile")
        }
    )
    pa, pb = _ptx_hints(ctx.fa), _ptx_hints(ctx.fb)
    if ha == hb and pa == pb:
        return []
    ev: list[Evidence] = []
    for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb)):
        for h in mech(f).hints:
            if h.kind in ("cache_modifier", "eviction_policy", "volatile"):
                ev.append(_ev(v, h.ref, h.ref.text[:220]))
                if h.python:
                    ev.append(_ev(v, h.python))
        ph = _ptx_hints(f)
        sh = _sass_hints(f)
        if ph or sh:
            ev.append(Evidence(v, "ptx", None, ", ".join(f"{n}× {k}" for k, n in sorted({**ph, **sh}.items()))))

    def desc(hs: list[tuple[str, str, str]]) -> str:
        return ", ".join(f"{op.split('.')[-1]} {k}={val}" for k, val, op in hs) or "none"

    effects = sorted({_HINT_PTX[(k, val)] for k, val, _ in ha + hb if (k, val) in _HINT_PTX})
    expl = (
        f"Memory hints: {desc(ha)} in `{ctx.a}`; {desc(hb)} in `{ctx.b}`. In PTX: "
        + "; ".join(
            f"`{v}` " + (", ".join(f"{n}× `{k}`" for k, n in sorted(p.items())) or "no cache qualifiers")
            for v, p in ((ctx.a, pa), (ctx.b, pb))
        )
        + ". "
        + (" ".join(e + "." for e in effects) + " " if effects else "")
        + "Hints change where data is cached: they help when the data is touched once (streaming) and other data "
        "should stay cached, and can hurt when it is reused. "
        + (
            "The L2 policy costs instructions of its own (`createpolicy` makes the 64-bit policy operand the "
            "accesses carry). "
            if pa.get("createpolicy", 0) != pb.get("createpolicy", 0)
            else "They change no instruction count. "
            if ctx.fa.counts.get("sass", {}) == ctx.fb.counts.get("sass", {})
            else ""
        )
        + "Results are the same (except `volatile`/`.cv`, which re-read memory other threads may change)."
    )
    return [
        Finding(
            "hint.cache",
            "info",
            f"Cache hints: {desc(ha)} in `{ctx.a}` vs {desc(hb)} in `{ctx.b}`",
            expl,
            ev,
            stage="ttir",
        )
    ]


def _hinted(h: HintFact) -> str:
    """The source of the value a hint wraps (``tl.load(rowptr + pid)``), or ``""`` without a Python line."""
    return _hinted_value(h.python.text, h.kind) if h.python is not None else ""


def _hinted_value(line: str, kind: str) -> str:
    """The expression a hint wraps on a Python line (``pid = tl.multiple_of(tl.program_id(0), 16)`` →
    ``tl.program_id(0)``), or ``""``."""
    import ast

    try:
        tree = ast.parse(line.strip())
    except SyntaxError:
        return ""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if name == kind:
                text = ast.unparse(node.args[0])
                return text if len(text) <= 60 else text[:57] + "..."
    return ""


@rule(
    Emits("hint.axis-info", causes=("spec.constexpr-changed",)),
    reads=("mech", "accesses", "lowered"),
)
def rule_axis_hints(ctx: Context) -> list[Finding]:
    """``hint.axis-info``: ``tl.multiple_of``/``tl.max_contiguous`` (TTIR ``tt.divisibility``/``tt.contiguity`` op
    attributes) or ``tl.assume`` present in one variant only, when the global accesses differ (AxisInfo's contiguity
    or alignment, or the width of the PTX instructions): then the hint is a candidate cause of that difference. A
    hint that changes nothing downstream (it restates what the other variant proves) is not reported."""
    kinds = ("multiple_of", "max_contiguous", "assume")
    # keyed by the op the hint sits on too: the same ``tl.multiple_of(…, 16)`` on the program id in one variant and
    # on a loaded start offset in the other is a hint moved to another value
    # (kind, value, the op it sits on, what it wraps): two loads hinted alike are told apart by the source value
    ha = sorted({(h.kind, h.value, h.op, _hinted(h)) for h in mech(ctx.fa).hints if h.kind in kinds})
    hb = sorted({(h.kind, h.value, h.op, _hinted(h)) for h in mech(ctx.fb).hints if h.kind in kinds})
    if ha == hb:
        return []

    def access_shape(
        f: VariantFacts,
    ) -> tuple[list[tuple[int, list[int], list[int]]], list[tuple[str, int | None]]]:
        return (  # what AxisInfo proves (contiguity, alignment), then what the lowering made of it
            sorted((a.vector_bits, a.contiguity, a.divisibility) for a in f.accesses),
            sorted((x.kind, x.ptx_bits) for x in f.lowered),
        )

    if access_shape(ctx.fa) == access_shape(ctx.fb):
        return []
    only_a = [h for h in ha if h not in hb]
    only_b = [h for h in hb if h not in ha]
    ev: list[Evidence] = []
    for v, f, only in ((ctx.a, ctx.fa, only_a), (ctx.b, ctx.fb, only_b)):
        for h in mech(f).hints:
            if (h.kind, h.value, h.op, _hinted(h)) in only:
                ev.append(_ev(v, h.python or h.ref, (h.python or h.ref).text[:220]))
                if len(ev) > 6:
                    break
    moved = {(k, val) for k, val, _, _ in only_a} & {(k, val) for k, val, _, _ in only_b}
    where: dict[tuple[str, str, str, str, str], str] = {}
    for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb)):
        for h in mech(f).hints:
            if h.python is not None and h.python.line:
                arg = _hinted_value(h.python.text, h.kind)
                on = f"on `{arg}` " if arg else ""
                where.setdefault((v, h.kind, h.value, h.op, _hinted(h)), f" {on}at line {h.python.line} of `{v}`")

    def desc(hs: list[tuple[str, str, str, str]], v: str = "") -> str:
        return (
            ", ".join(
                f"`tl.{k}`"
                + (f"({val})" if val else "")
                + (where.get((v, k, val, op, w), f" on `{op}`") if (k, val) in moved else "")
                for k, val, op, w in hs
            )
            or "none"
        )

    placed = (
        "The same hint sits on another value in each variant: only the value whose divisibility or contiguity "
        "reaches an address changes an access (AxisInfo propagates the hint through the arithmetic that uses it). "
        if moved
        else ""
    )
    expl = (
        f"Hints only in `{ctx.a}`: {desc(only_a, ctx.a)}; only in `{ctx.b}`: {desc(only_b, ctx.b)}. {placed}"
        "`tl.multiple_of` and "
        "`tl.max_contiguous` state divisibility and contiguity that AxisInfo cannot prove (they become "
        "`tt.divisibility`/`tt.contiguity` attributes), `tl.assume` a condition; they change code only through "
        "vector width and pipelining (see the coalescing/pipelining findings, if any). "
        + (
            "Here the PTX loads and stores keep the same widths in both variants: the alignment AxisInfo proves "
            "differs, but something else (a mask, the layout) bounds the vector width. "
            if access_shape(ctx.fa)[1] == access_shape(ctx.fb)[1]
            else ""
        )
        + "A hint that is false makes "
        "results wrong (misaligned vector accesses); a true one does not change results."
    )
    return [
        Finding(
            "hint.axis-info",
            # the hint is why the accesses differ (the rule fires only then): as severe as a width change
            "major" if access_shape(ctx.fa)[1] != access_shape(ctx.fb)[1] else "minor",
            f"AxisInfo hints differ: {desc(only_a, ctx.a)} only in `{ctx.a}`, {desc(only_b, ctx.b)} only in `{ctx.b}`",
            expl,
            ev,
            stage="ttir",
        )
    ]


@rule(
    Emits("compiler.messages"),
    reads=("mech",),
)
def rule_compiler_messages(ctx: Context) -> list[Finding]:
    """``compiler.messages``: warnings or remarks the compiler printed (Python warnings from Triton's frontend,
    MLIR ``warning:``/``remark:`` diagnostics, ptxas warnings) differ between the variants; quoted as evidence."""

    def texts(f: VariantFacts) -> list[str]:
        return [r.text.split("Warning: ", 1)[-1] for r in mech(f).compiler_messages]

    ta, tb = texts(ctx.fa), texts(ctx.fb)
    if sorted(ta) == sorted(tb):
        return []
    ev = [
        _ev(v, r)
        for v, f, own, oth in ((ctx.a, ctx.fa, ta, tb), (ctx.b, ctx.fb, tb, ta))
        for r, t in zip(mech(f).compiler_messages, own, strict=False)
        if t not in oth
    ][:6]
    if not ev:
        return []
    first = ev[0].text
    who = ev[0].variant
    expl = (
        f"The compiler printed messages for one variant only ({len(ev)} shown): "
        + " | ".join(f"`{e.variant}`: {e.text}" for e in ev)
        + ". These are Triton's, MLIR's or ptxas' own words about this kernel (deprecations, upcasts, "
        "pipelining or MMA decisions); they often name the construct that changes the generated code."
    )
    return [
        Finding(
            "compiler.messages",
            "minor",
            f"Compiler message for `{who}`: {first[:140]}",
            expl,
            ev,
            stage="python",
        )
    ]


@rule(
    Emits(
        "pipeline.wait-depth",
        causes=(
            "loop.num-stages",
            "pipeline.load-not-pipelined",
            "loop.unrolled",
            "spec.constexpr-changed",
            "options.changed",
        ),
    ),
    reads=("mech", "async_copies_loop"),
)
def rule_wait_depth(ctx: Context) -> list[Finding]:
    """``pipeline.wait-depth``: ``ttg.async_wait {num = N}`` in the steady-state loop differs, or in one variant the
    loop waits for the copies it has just issued (the wait names tokens committed earlier in the same iteration).
    Fewer stages are not always slower (less shared memory, more CTAs per SM), so the finding states what overlaps
    and leaves the verdict to time."""
    wa, wb = mech(ctx.fa).async_waits, mech(ctx.fb).async_waits
    na, nb = sorted({w.num for w in wa}), sorted({w.num for w in wb})
    ia, ib = any(w.immediate for w in wa), any(w.immediate for w in wb)
    if not (wa and wb) or (na == nb and ia == ib):
        return []
    ev: list[Evidence] = []
    for v, f, ws in ((ctx.a, ctx.fa, wa), (ctx.b, ctx.fb, wb)):
        pick = [w for w in ws if w.immediate][:1] or ws[:1]
        ev += [_ev(v, w.ref, w.ref.text[:200]) for w in pick]
        cw = mech(f).cp_async_waits
        if cw:
            ev.append(_ev(v, cw[0][1], f"{cw[0][1].text}   (cp.async.wait_group depths {sorted({n for n, _ in cw})})"))
    imm = ctx.a if ia and not ib else ctx.b if ib and not ia else None
    deeper = ctx.a if max(na) > max(nb) else ctx.b if max(nb) > max(na) else None
    expl = (
        f"In the loop, `ttg.async_wait` lets {', '.join(map(str, na))} copy group(s) stay in flight in `{ctx.a}` "
        f"and {', '.join(map(str, nb))} in `{ctx.b}` (`cp.async.wait_group N` in PTX)"
        + (f"; `{deeper}` keeps more loads in flight while it computes. " if deeper else ". ")
        + (
            f"In `{imm}` the loop waits for the copies it committed earlier in the same iteration (the wait names "
            "this iteration's `ttg.async_commit_group` tokens, not loop-carried ones): a prefetch waited for right "
            "after it is issued overlaps nothing issued after it. "
            if imm
            else ""
        )
        + "Deeper pipelines cost shared memory (one buffer per stage) and can lower occupancy, so fewer stages can "
        "be as fast or faster when enough CTAs per SM hide the latency; the measured time decides. Results are the "
        "same."
    )
    return [
        Finding(
            "pipeline.wait-depth",
            "minor",
            f"Async-copy wait depth in the loop: {na} in `{ctx.a}` vs {nb} in `{ctx.b}`"
            + (f" (`{imm}` waits for the copies it just issued)" if imm else ""),
            expl,
            ev,
            stage="ttgir",
            predicts=imm,
        )
    ]
