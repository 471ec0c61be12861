"""Stage 0 and options: what the JIT specialized (constexpr, divisibility, types) and the compile options."""

from __future__ import annotations

import re

from irdiff.diagnose.facts import ArgFact
from irdiff.diagnose.model import Evidence, Finding
from irdiff.diagnose.provenance import arange_strides
from irdiff.diagnose.rules.common import Context, _decorator_line, _ev, _names, _param_line
from irdiff.diagnose.rules.registry import Emits, rule


def _spec_cause_groups(args: list[ArgFact]) -> list[str]:
    """Why the JIT did not specialize each of ``args``, one clause per reason (parameters sharing it grouped); a
    parameter the JIT was free to specialize is given its own stage-0 reason (the value it was passed)."""
    groups: dict[str, list[ArgFact]] = {}
    for arg in args:
        if arg.do_not_specialize:
            key = "listed in `do_not_specialize`"
        elif arg.annotation and arg.annotation not in ("tl.constexpr", "constexpr"):
            key = f"annotated `{arg.annotation}`"
        elif arg.do_not_specialize_on_alignment:
            key = "listed in `do_not_specialize_on_alignment`"
        else:
            key = ""
        groups.setdefault(key, []).append(arg)
    out = []
    for key, group in groups.items():
        if key:
            out.append(f"{_names([a.name for a in group])} {'is' if len(group) == 1 else 'are'} {key}")
        else:
            out.extend(f"`{a.name}`: {a.reason}" if a.reason else f"`{a.name}` was passed another value" for a in group)
    return out


@rule(
    Emits("spec.constexpr-one-lost", effects=("coalesce.", "lower.", "pipeline.", "ptx.memory-ops")),
    reads=("kernel", "args", "text.python", "text.ttgir"),
)
def rule_constexpr_one(ctx: Context) -> list[Finding]:
    """``spec.constexpr-one-lost``: a parameter equal to 1 is a constant in one variant and a runtime value in the
    other (``int`` annotation since Triton 3.4, or ``do_not_specialize``)."""
    out: list[Finding] = []
    for lost, kept in ((ctx.a, ctx.b), (ctx.b, ctx.a)):
        fl, fk = ctx.facts(lost), ctx.facts(kept)
        hits: list[tuple[ArgFact, ArgFact]] = []
        for arg in fl.args:
            other = fk.peer(arg.name)
            if other and other.type == "constexpr" and other.constexpr == "1" and arg.type != "constexpr":
                hits.append((arg, other))
        if not hits:
            continue
        names = [h[0].name for h in hits]
        annotated = [h[0] for h in hits if h[0].annotation and not h[0].do_not_specialize]
        dns = [h[0] for h in hits if h[0].do_not_specialize]
        causes = []
        if annotated:
            anns = sorted({a.annotation or "" for a in annotated})
            causes.append(
                f"{_names([a.name for a in annotated])} {'is' if len(annotated) == 1 else 'are'} annotated "
                f"{_names(anns)}: the JIT types {'it' if len(annotated) == 1 else 'them'} "
                f"`{annotated[0].type}` from the annotation and no longer turns the value 1 into a constant "
                "(since Triton 3.4 the annotation replaces the specialized type in the generated binder, "
                "`create_function_from_signature` in `triton/runtime/jit.py`)"
            )
        if dns:
            causes.append(
                f"{_names([a.name for a in dns])} {'is' if len(dns) == 1 else 'are'} listed in `do_not_specialize`: "
                "the JIT passes the value as a runtime integer and never makes 1 a constant"
            )
        other_hits = [h[0] for h in hits if h[0] not in annotated and h[0] not in dns]
        if other_hits:
            causes.append("; ".join(f"`{a.name}`: {a.reason}" for a in other_hits))
        # decided from the IR, not the names: each is multiplied with a `tl.arange` offset that reaches an address
        runtime = [a.name for a in fl.args if a.type != "constexpr"]
        strides = arange_strides(ctx.ttgir.get(lost, ""), runtime)
        unit_strides = all(n in strides for n in names)
        expl = (
            f"In `{lost}`, {_names(names)} {'is a' if len(names) == 1 else 'are'} runtime "
            f"`{hits[0][0].type}` argument{'' if len(names) == 1 else 's'}, while in `{kept}` the JIT saw the value 1 and made "
            f"{'it' if len(names) == 1 else 'them'} a compile-time constant. " + ". ".join(causes) + ". "
        )
        if unit_strides:
            expl += (
                "A unit stride that is a constant lets AxisInfo prove that `offs * stride` is contiguous; as a runtime "
                "value the product has contiguity 1 along that dimension, so the coalescing pass cannot vectorize "
                "the tile's loads and stores, and everything downstream (vector width, cp.async pipelining) follows."
            )
        ev: list[Evidence] = []
        for arg, other in hits:
            ev.append(Evidence(lost, "spec", None, f"{arg.name}: {arg.summary} — {arg.reason}"))
            ev.append(Evidence(kept, "spec", None, f"{other.name}: {other.summary} — {other.reason}"))
        for arg, _ in hits:
            if arg.ttir:
                ev.append(_ev(lost, arg.ttir))
            pl = _param_line(ctx.python.get(lost, ""), fl.kernel, arg.name)
            if pl and (arg.annotation or ""):
                ev.append(_ev(lost, pl))
        if dns:
            dl = _decorator_line(ctx.python.get(lost, ""), fl.kernel, "do_not_specialize")
            if dl:
                ev.append(_ev(lost, dl))
        remedy_parts = []
        if annotated:
            remedy_parts.append(
                f"drop the `{annotated[0].annotation}` annotation on {_names([a.name for a in annotated])} "
                "(or declare unit strides `tl.constexpr`)"
            )
        if dns:
            remedy_parts.append(f"remove {_names([a.name for a in dns])} from `do_not_specialize`")
        remedy_parts.append(
            "or, if the value is always 1, state the contiguity on the strided offsets: "
            f"`tl.max_contiguous(tl.multiple_of(offs * {names[0]}, BLOCK), BLOCK)` (the same hint on `offs` alone "
            "does not help: the product with a runtime value loses it)"
        )
        out.append(
            Finding(
                id="spec.constexpr-one-lost",
                severity="critical" if unit_strides else "major",
                title=f"{_names(names)} lose{'s' if len(names) == 1 else ''} the constant-1 specialization in "
                f"`{lost}`"
                + (
                    " ("
                    + ", ".join(
                        [f"{_names(sorted({a.annotation or '' for a in annotated}))} annotation"] * bool(annotated)
                        + ["`do_not_specialize`"] * bool(dns)
                    )
                    + ")"
                    if annotated or dns
                    else ""
                ),
                explanation=expl,
                evidence=ev,
                remedy="; ".join(remedy_parts[:-1]) + ("; " if len(remedy_parts) > 1 else "") + remedy_parts[-1] + ".",
                stage="spec",
                predicts=lost,
            )
        )
        break
    return out


@rule(
    Emits("spec.divisibility-lost", effects=("coalesce.", "lower.", "pipeline.", "ptx.memory-ops")),
    reads=("kernel", "args", "arg_roles", "text.python"),
)
def rule_divisibility(ctx: Context) -> list[Finding]:
    """``spec.divisibility-lost``: ``tt.divisibility = 16`` on a pointer/integer in one variant only."""
    for lost, kept in ((ctx.a, ctx.b), (ctx.b, ctx.a)):
        fl, fk = ctx.facts(lost), ctx.facts(kept)
        hits = []
        for arg in fl.args:
            other = fk.peer(arg.name)
            if (
                other
                and arg.type != "constexpr"
                and other.type != "constexpr"
                and (other.divisibility or 0) > (arg.divisibility or 0)
            ):
                hits.append((arg, other))
        if not hits:
            continue
        names = [h[0].name for h in hits]
        ptrs = [h[0].name for h in hits if h[0].type.startswith("*")]
        ints = [h[0].name for h in hits if not h[0].type.startswith("*")]
        expl = (
            f"In `{kept}` the JIT marks {_names(names)} `tt.divisibility = 16` (pointers 16-byte aligned, integers "
            f"multiples of 16); in `{lost}` {'it does' if len(names) == 1 else 'they do'} not: "
            + "; ".join(_spec_cause_groups([h[0] for h in hits]))
            + ". "
        )
        if ptrs:
            expl += (
                f"Without it AxisInfo assumes nothing about the alignment of {_names(ptrs)} (divisibility 1 byte), so "
                "even a contiguous row cannot be read with vector loads wider than one element. "
            )
        roles = fl.arg_roles
        mask_only = [n for n in ints if roles.get(n) == ["mask"]]
        offsets = [n for n in ints if n not in mask_only]
        if offsets:
            expl += (
                f"Offsets built from {_names(offsets)} (e.g. `row * stride`) lose their known divisibility, which caps "
                "the alignment AxisInfo can prove for every pointer that uses them. "
            )
        if mask_only:
            one = len(mask_only) == 1
            expl += (
                f"{_names(mask_only)} {'is' if one else 'are'} only used in masks "
                f"(bound checks such as `offs < {mask_only[0]}`): without a known divisibility AxisInfo cannot prove "
                "that the mask is the same for several consecutive elements, and the load/store lowering never "
                "vectorizes wider than that. "
            )
        ev: list[Evidence] = []
        for arg, other in hits:
            ev.append(Evidence(lost, "spec", None, f"{arg.name}: {arg.summary} — {arg.reason}"))
            ev.append(Evidence(kept, "spec", None, f"{other.name}: {other.summary} — {other.reason}"))
        for arg, other in hits[:6]:
            if arg.ttir:
                ev.append(_ev(lost, arg.ttir))
            if other.ttir:
                ev.append(_ev(kept, other.ttir))
        for word in ("do_not_specialize_on_alignment", "do_not_specialize"):
            if any(getattr(h[0], word) for h in hits):
                dl = _decorator_line(ctx.python.get(lost, ""), fl.kernel, word)
                if dl and all(e.line != dl.line for e in ev if e.stage == "python"):
                    ev.append(_ev(lost, dl))
        dns = [h[0].name for h in hits if h[0].do_not_specialize]
        # a parameter in both lists is named under both: either one alone keeps its divisibility unknown (the JIT's
        # `specialize` and `align` flags, triton/runtime/jit.py `create_function_from_signature`)
        dnsa = [h[0].name for h in hits if h[0].do_not_specialize_on_alignment]
        rem = []
        if dns:
            rem.append(f"remove {_names(dns)} from `do_not_specialize`")
        if dnsa:
            rem.append(f"remove {_names(dnsa)} from `do_not_specialize_on_alignment`")
        if rem:
            rem[-1] += " (the cost is one extra compile per alignment class)"
        # the JIT was free to specialize but the value itself did not qualify: the caller's data is the first remedy
        plain = [
            h[0]
            for h in hits
            if not (h[0].do_not_specialize or h[0].do_not_specialize_on_alignment)
            and not (h[0].annotation and h[0].annotation not in ("tl.constexpr", "constexpr"))
        ]
        plain_ptrs = [a.name for a in plain if a.type.startswith("*")]
        plain_ints = [a.name for a in plain if not a.type.startswith("*")]
        if plain_ptrs:
            rem.append(
                f"pass a 16-byte-aligned tensor for {_names(plain_ptrs)} (a fresh allocation, or a `.clone()` of an "
                "offset view: the JIT specializes on the base address of each call)"
            )
        if plain_ints:
            rem.append(f"pass a multiple of 16 for {_names(plain_ints)} (e.g. pad the size)")
        hints = [f"`tl.multiple_of({n} + offs, 16)` on the pointer tensor" for n in ptrs[:1]]
        hints += [f"`tl.multiple_of(row * {n}, 16)` on the computed offset" for n in offsets[:1]]
        hints += [
            f"`offs < tl.multiple_of(tl.full(offs.shape, {n}, tl.int32), 16)` as the bound" for n in mask_only[:1]
        ]
        rem.append(
            f"{'or ' if rem else ''}state the alignment in the kernel, when every caller guarantees it, with {' / '.join(hints)}: "
            f"a hint on the bare parameter (`tl.multiple_of({names[0]}, 16)`) has no effect, because Triton attaches "
            "hints to the operation that defines a value and a parameter has none"
        )
        remedy = "; ".join(rem)
        return [
            Finding(
                id="spec.divisibility-lost",
                severity="major",
                title=f"{_names(names)} lose{'s' if len(names) == 1 else ''} `tt.divisibility = 16` in `{lost}`",
                explanation=expl,
                evidence=ev,
                remedy=remedy + ".",
                stage="spec",
                predicts=lost,
            )
        ]
    return []


@rule(
    Emits("spec.type-changed"),
    reads=("args",),
)
def rule_type_changed(ctx: Context) -> list[Finding]:
    """``spec.type-changed``: the same parameter gets a different runtime type (``i32`` vs ``i64``, ``*fp16`` vs
    ``*fp32``)."""
    hits = []
    for arg in ctx.fa.args:
        other = ctx.fb.peer(arg.name)
        if other and "constexpr" not in (arg.type, other.type) and arg.type != other.type:
            hits.append((arg, other))
    if not hits:
        return []
    ev: list[Evidence] = []
    parts = []
    for arg, other in hits:
        parts.append(f"`{arg.name}` is `{arg.type}` in `{ctx.a}` and `{other.type}` in `{ctx.b}` ({arg.reason})")
        ev.append(Evidence(ctx.a, "spec", None, f"{arg.name}: {arg.summary} — {arg.reason}"))
        ev.append(Evidence(ctx.b, "spec", None, f"{other.name}: {other.summary} — {other.reason}"))
        if arg.ttir:
            ev.append(_ev(ctx.a, arg.ttir))
        if other.ttir:
            ev.append(_ev(ctx.b, other.ttir))
    wider = [h for h in hits if h[0].type == "i64" or h[1].type == "i64"]
    expl = "; ".join(parts) + "."
    if wider:
        expl += " A 64-bit integer argument makes every index computed from it 64-bit."
    return [
        Finding(
            id="spec.type-changed",
            severity="major" if wider else "minor",
            title="; ".join(f"`{x.name}` is {x.type} in `{ctx.a}`, {y.type} in `{ctx.b}`" for x, y in hits[:2])
            + (f" (and {len(hits) - 2} more)" if len(hits) > 2 else ""),
            explanation=expl,
            evidence=ev,
            stage="spec",
            predicts=next((ctx.a if h[0].type == "i64" else ctx.b for h in wider), None),
        )
    ]


@rule(
    Emits("spec.constexpr-changed", causes=("config.changed",)),
    reads=("args", "text.python"),
)
def rule_constexpr_changed(ctx: Context) -> list[Finding]:
    """``spec.constexpr-changed``: a ``tl.constexpr`` parameter has different values (tile sizes, ``NUM_STAGES``)."""
    hits = []
    for arg in ctx.fa.args:
        other = ctx.fb.peer(arg.name)
        if other and arg.type == "constexpr" and other.type == "constexpr" and arg.constexpr != other.constexpr:
            hits.append((arg, other))
    if not hits:
        return []
    ev: list[Evidence] = []
    for arg, other in hits:
        ev.append(Evidence(ctx.a, "spec", None, f"{arg.name}: constexpr = {arg.constexpr}"))
        ev.append(Evidence(ctx.b, "spec", None, f"{other.name}: constexpr = {other.constexpr}"))
    desc = ", ".join(f"`{h[0].name}` = {h[0].constexpr} in `{ctx.a}` vs {h[1].constexpr} in `{ctx.b}`" for h in hits)
    # what each constant feeds, read from the kernel source (not from its name): a loop's pipelining depth or flattening
    src_a = ctx.python.get(ctx.a, "")

    def feeds(name: str, keyword: str) -> bool:
        return re.search(rf"\b{keyword}\s*=\s*{re.escape(name)}\b", src_a) is not None

    stages = [h for h in hits if feeds(h[0].name, "num_stages")]
    loop_opts = [h for h in hits if feeds(h[0].name, "flatten") or feeds(h[0].name, "loop_unroll_factor")]
    expl = f"Compile-time constants differ: {desc}. Each value is a separate compilation; code that depends on it "
    expl += "(loop bounds, tile shapes, pipelining depth) is specialized for it."
    if stages:
        expl += (
            f" `{stages[0][0].name}` feeds `tl.range(..., num_stages=...)`, which sets the loop's `tt.num_stages` "
            "attribute: how many iterations ahead the software pipeliner may prefetch."
        )
    return [
        Finding(
            id="spec.constexpr-changed",
            severity="major" if stages or loop_opts else "minor",
            title=f"Constexpr {_names([h[0].name for h in hits])} differ{'s' if len(hits) == 1 else ''}: {desc}",
            explanation=expl,
            evidence=ev,
            stage="spec",
        )
    ]


@rule(
    Emits("options.changed", causes=("config.changed",)),
    reads=("options",),
)
def rule_options(ctx: Context) -> list[Finding]:
    """``options.changed``: launch/compile options differ (``num_warps``, ``num_stages``, ``maxnreg`` …)."""
    keys = ("num_warps", "num_stages", "num_ctas", "maxnreg")
    diffs = [(k, ctx.fa.options.get(k), ctx.fb.options.get(k)) for k in keys]
    # an unset ``maxnreg`` is a setting of its own (no cap: ptxas picks the count); an unset other option is unknown
    diffs = [d for d in diffs if d[1] != d[2] and (d[0] == "maxnreg" or not (d[1] is None or d[2] is None))]
    if not diffs:
        return []

    def val(k: str, x: object) -> object:
        return "unset (no cap)" if k == "maxnreg" and x is None else x

    desc = ", ".join(f"`{k}` = {val(k, x)} in `{ctx.a}` vs {val(k, y)} in `{ctx.b}`" for k, x, y in diffs)
    expl = f"Compile options differ: {desc}."
    if any(k == "maxnreg" for k, _, _ in diffs):
        expl += (
            " `maxnreg` caps the registers per thread (Triton passes it to ptxas as `.maxnreg` in the PTX): a cap "
            "below what the kernel needs makes ptxas spill to local memory (slow, through L1/L2), while fewer "
            "registers per thread can let more warps fit on an SM."
        )
    if any(k == "num_stages" for k, _, _ in diffs):
        expl += " `num_stages` is the default pipelining depth of every `scf.for` with loads (cp.async ring size)."
    w = next(((x, y) for k, x, y in diffs if k == "num_warps"), None)
    if w is not None and isinstance(w[0], int) and isinstance(w[1], int):
        x, y = int(w[0]), int(w[1])
        expl += (
            f" `num_warps` is the number of warps per CTA: {x} ({32 * x} threads) in `{ctx.a}` vs {y} ({32 * y} "
            f"threads) in `{ctx.b}`. The layouts split each tile over them (`warpsPerCTA`), so with more warps each "
            "thread holds and issues fewer elements, a reduction across warps combines its partial results through "
            "shared memory, and each thread may use fewer registers (one SM's register file is shared by all its "
            "resident threads)."
        )
    elif w is not None:
        expl += " `num_warps` changes the layouts (warpsPerCTA), the work per thread, and the registers each may use."
    ev = [Evidence(v, "options", None, f"{k} = {val(k, w)}") for k, x, y in diffs for v, w in ((ctx.a, x), (ctx.b, y))]
    return [Finding("options.changed", "major", f"Options differ: {desc}", expl, ev, stage="options")]
