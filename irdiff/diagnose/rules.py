"""Rules: compare the facts of two variants and turn each difference into a :class:`Finding` that names its mechanism.

Each rule looks at one kind of fact (specialization, integer width, coalescing, pipelining, loops, PTX/SASS ops,
resources) and returns findings with a stable id (:data:`RULE_IDS`), evidence lines from both variants, and a
plain explanation. ``a`` is the inspected variant (``--variant``), ``b`` the baseline (``--against``); explanations
name both. :data:`CAUSES` lists, per finding id, which findings can cause it; ``irdiff.diagnose`` uses it to link the
chain.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from irdiff.diagnose.facts import Access, ArgFact, LoweredAccess, PipelineLoad, Ref, VariantFacts, strip_loc
from irdiff.diagnose.model import Evidence, Finding, Severity

__all__ = ["CAUSES", "DIRECTION", "EFFECTS", "FALLBACK_CAUSES", "RULES", "RULE_IDS", "Context", "run_rules"]


@dataclass
class Context:
    """The two variants being compared and their facts; ``texts`` gives raw stage texts for tracing (by variant)."""

    a: str
    b: str
    fa: VariantFacts
    fb: VariantFacts
    ttgir: dict[str, str]
    python: dict[str, str]

    def facts(self, which: str) -> VariantFacts:
        return self.fa if which == self.a else self.fb


def _ev(variant: str, ref: Ref | None, text: str | None = None) -> Evidence:
    if ref is None:
        return Evidence(variant, "spec", None, text or "")
    return Evidence(variant, ref.stage, ref.line, text if text is not None else ref.text)


def _names(items: list[str]) -> str:
    quoted = [f"`{x}`" for x in items]
    if len(quoted) <= 1:
        return "".join(quoted)
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _bytes(n: int | None) -> str:
    return "?" if n is None else f"{n} byte" if n == 1 else f"{n} bytes"


def _kb(n: int | None) -> str:
    if n is None:
        return "?"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KB"
    return f"{n / 1024:.1f} KB ({n} B)" if n >= 1024 else f"{n} B"


def _param_line(python: str, kernel: str, name: str) -> Ref | None:
    """The line of parameter ``name`` in ``def kernel(...)`` of the saved source."""
    lines = python.splitlines()
    start = next((i for i, ln in enumerate(lines) if re.match(rf"\s*def\s+{re.escape(kernel)}\s*\(", ln)), None)
    if start is None:
        return None
    for i in range(start, min(start + 80, len(lines))):
        if re.search(rf"(?:\(|,|^)\s*{re.escape(name)}\s*(?::|,|=|\))", lines[i]):
            return Ref("python", i + 1, lines[i].strip())
        if i > start and re.search(r"\)\s*(->[^:]*)?:\s*$", lines[i]):
            break
    return None


def _decorator_line(python: str, kernel: str, word: str) -> Ref | None:
    """A line mentioning ``word`` (``do_not_specialize``) in the decorator above ``def kernel``."""
    lines = python.splitlines()
    start = next((i for i, ln in enumerate(lines) if re.match(rf"\s*def\s+{re.escape(kernel)}\s*\(", ln)), None)
    if start is None:
        return None
    for i in range(start - 1, max(start - 15, -1), -1):
        if word in lines[i]:
            return Ref("python", i + 1, lines[i].strip())
        if lines[i].strip() == "" or lines[i].lstrip().startswith("def "):
            break
    return None


# ------------------------------------------------------------------------------------------------ stage 0


def _spec_cause(arg: ArgFact) -> str:
    """Why the JIT did not specialize ``arg`` (one clause)."""
    if arg.do_not_specialize:
        return f"`{arg.name}` is listed in `do_not_specialize`"
    if arg.annotation and arg.annotation not in ("tl.constexpr", "constexpr"):
        return f"`{arg.name}` is annotated `{arg.annotation}`"
    if arg.do_not_specialize_on_alignment:
        return f"`{arg.name}` is listed in `do_not_specialize_on_alignment`"
    return arg.reason or f"`{arg.name}` was passed a different value"


def _spec_cause_groups(args: list[ArgFact]) -> list[str]:
    """Why the JIT did not specialize each of ``args``, one clause per reason (parameters sharing it grouped)."""
    groups: dict[str, list[str]] = {}
    for arg in args:
        if arg.do_not_specialize:
            key = "listed in `do_not_specialize`"
        elif arg.annotation and arg.annotation not in ("tl.constexpr", "constexpr"):
            key = f"annotated `{arg.annotation}`"
        elif arg.do_not_specialize_on_alignment:
            key = "listed in `do_not_specialize_on_alignment`"
        else:
            key = ""
        groups.setdefault(key, []).append(arg.name)
    out = []
    for key, names in groups.items():
        if key:
            out.append(f"{_names(names)} {'is' if len(names) == 1 else 'are'} {key}")
        else:
            out.extend(_spec_cause(a) for a in args if a.name in names)
    return out


def rule_constexpr_one(ctx: Context) -> list[Finding]:
    """``spec.constexpr-one-lost``: a parameter equal to 1 is a constant in one variant and a runtime value in the
    other (``int`` annotation since Triton 3.4, or ``do_not_specialize``)."""
    out: list[Finding] = []
    for lost, kept in ((ctx.a, ctx.b), (ctx.b, ctx.a)):
        fl, fk = ctx.facts(lost), ctx.facts(kept)
        hits: list[tuple[ArgFact, ArgFact]] = []
        for arg in fl.args:
            other = fk.arg(arg.name)
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
        unit_strides = all(n.lower().startswith("stride") for n in names)
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
                    f" ({_names(sorted({a.annotation or '' for a in annotated}))} annotation)"
                    if annotated
                    else " (`do_not_specialize`)"
                    if dns
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


def rule_divisibility(ctx: Context) -> list[Finding]:
    """``spec.divisibility-lost``: ``tt.divisibility = 16`` on a pointer/integer in one variant only."""
    for lost, kept in ((ctx.a, ctx.b), (ctx.b, ctx.a)):
        fl, fk = ctx.facts(lost), ctx.facts(kept)
        hits = []
        for arg in fl.args:
            other = fk.arg(arg.name)
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
                f"{_names(mask_only)} {'is' if one else 'are'} only used in mask{'s' if one else ''} "
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
        dnsa = [h[0].name for h in hits if h[0].do_not_specialize_on_alignment and not h[0].do_not_specialize]
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


def rule_type_changed(ctx: Context) -> list[Finding]:
    """``spec.type-changed``: the same parameter gets a different runtime type (``i32`` vs ``i64``, ``*fp16`` vs
    ``*fp32``)."""
    hits = []
    for arg in ctx.fa.args:
        other = ctx.fb.arg(arg.name)
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
            title=f"{_names([h[0].name for h in hits])} change{'s' if len(hits) == 1 else ''} type",
            explanation=expl,
            evidence=ev,
            stage="spec",
            predicts=next((ctx.a if h[0].type == "i64" else ctx.b for h in wider), None),
        )
    ]


def rule_constexpr_changed(ctx: Context) -> list[Finding]:
    """``spec.constexpr-changed``: a ``tl.constexpr`` parameter has different values (tile sizes, ``NUM_STAGES``)."""
    hits = []
    for arg in ctx.fa.args:
        other = ctx.fb.arg(arg.name)
        if other and arg.type == "constexpr" and other.type == "constexpr" and arg.constexpr != other.constexpr:
            if arg.constexpr == "1" or other.constexpr == "1":
                if not (arg.is_constexpr_param if hasattr(arg, "is_constexpr_param") else True):
                    continue
            hits.append((arg, other))
    if not hits:
        return []
    ev: list[Evidence] = []
    for arg, other in hits:
        ev.append(Evidence(ctx.a, "spec", None, f"{arg.name}: constexpr = {arg.constexpr}"))
        ev.append(Evidence(ctx.b, "spec", None, f"{other.name}: constexpr = {other.constexpr}"))
    desc = ", ".join(f"`{h[0].name}` = {h[0].constexpr} in `{ctx.a}` vs {h[1].constexpr} in `{ctx.b}`" for h in hits)
    stages = [h for h in hits if "STAGE" in h[0].name.upper()]
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
            severity="major"
            if stages or any(k in h[0].name.upper() for h in hits for k in ("FLATTEN", "STAGE"))
            else "minor",
            title=f"Constexpr {_names([h[0].name for h in hits])} differ{'s' if len(hits) == 1 else ''}: {desc}",
            explanation=expl,
            evidence=ev,
            stage="spec",
        )
    ]


def rule_options(ctx: Context) -> list[Finding]:
    """``options.changed``: launch/compile options differ (``num_warps``, ``num_stages``, ``maxnreg`` …)."""
    keys = ("num_warps", "num_stages", "num_ctas", "maxnreg")
    diffs = [(k, ctx.fa.options.get(k), ctx.fb.options.get(k)) for k in keys]
    diffs = [d for d in diffs if d[1] != d[2] and not (d[1] is None or d[2] is None)]
    if not diffs:
        return []
    desc = ", ".join(f"`{k}` = {x} in `{ctx.a}` vs {y} in `{ctx.b}`" for k, x, y in diffs)
    expl = f"Compile options differ: {desc}."
    if any(k == "num_stages" for k, _, _ in diffs):
        expl += " `num_stages` is the default pipelining depth of every `scf.for` with loads (cp.async ring size)."
    if any(k == "num_warps" for k, _, _ in diffs):
        expl += " `num_warps` changes the layouts (warpsPerCTA), the work per thread, and the registers each may use."
    ev = [Evidence(v, "options", None, f"{k} = {val}") for k, x, y in diffs for v, val in ((ctx.a, x), (ctx.b, y))]
    return [Finding("options.changed", "major", f"Options differ: {desc}", expl, ev, stage="options")]


# ------------------------------------------------------------------------------------------------ TTIR


def rule_i64(ctx: Context) -> list[Finding]:
    """``ttir.i64-index-math``: index arithmetic is 64-bit in one variant (counts TTIR ops with ``i64`` results)."""
    fa, fb = ctx.fa, ctx.fb
    if fa.i64_ops == fb.i64_ops or max(fa.i64_ops, fb.i64_ops) < 2:
        return []
    wide, narrow = (ctx.a, ctx.b) if fa.i64_ops > fb.i64_ops else (ctx.b, ctx.a)
    fw, fn = ctx.facts(wide), ctx.facts(narrow)
    divrem = bool(fw.divrem64_ttir) or _c(fw, "ptx", "div.s64") + _c(fw, "ptx", "rem.s64") > 0
    first = fw.i64_first
    ev: list[Evidence] = []
    origin = ""
    if first is not None:
        ev.append(_ev(wide, first))
        op = re.search(r"=\s*([\w.]+)", first.text)
        stem = _stem_of(first.text)
        origin = (
            f" The first 64-bit value is {f'`{stem}`' if stem else 'a value'}"
            f"{f' (`{op.group(1)}`, TTIR line {first.line})' if op else ''}"
        )
        if fw.i64_first_python is not None:
            ev.append(_ev(wide, fw.i64_first_python))
            origin += f", from `{fw.i64_first_python.text}` (line {fw.i64_first_python.line})"
        if "get_program_id" in first.text or "extsi" in first.text:
            origin += (
                "; everything derived from it (offsets, the `//` and `%` that split a flat index) is 64-bit"
                if divrem
                else "; everything derived from it (the offsets and the bound check) is 64-bit"
            )
        origin += "."
    if fn.i64_first is not None:
        ev.append(_ev(narrow, fn.i64_first))
    expl = (
        f"`{wide}` computes {fw.i64_ops} TTIR values as `i64` where `{narrow}` has {fn.i64_ops}.{origin} "
        "64-bit integer multiply/add take two 32-bit instructions each"
        + (
            ", 64-bit division and remainder have no hardware instruction (ptxas calls a software routine),"
            if divrem
            else ""
        )
        + " and every index needs two registers."
    )
    return [
        Finding(
            "ttir.i64-index-math",
            "major",
            f"Index arithmetic is 64-bit in `{wide}` ({fw.i64_ops} i64 ops vs {fn.i64_ops})",
            expl,
            ev,
            remedy=(
                "keep the program id and offsets in int32 when every index fits below 2^31; widen only the final "
                "offset (or the base pointer) to int64 if a tensor exceeds 2^31 elements"
            ),
            stage="ttir",
            predicts=wide,
        )
    ]


def rule_divrem64(ctx: Context) -> list[Finding]:
    """``ttir.divrem-64``: 64-bit ``divsi``/``remsi`` in TTIR and ``div.s64``/``rem.s64`` in PTX in one variant."""
    da = len(ctx.fa.divrem64_ttir) + _c(ctx.fa, "ptx", "div.s64") + _c(ctx.fa, "ptx", "rem.s64")
    db = len(ctx.fb.divrem64_ttir) + _c(ctx.fb, "ptx", "div.s64") + _c(ctx.fb, "ptx", "rem.s64")
    if da == db:
        return []
    wide = ctx.a if da > db else ctx.b
    narrow = ctx.b if wide == ctx.a else ctx.a
    fw, fn = ctx.facts(wide), ctx.facts(narrow)
    ev = [_ev(wide, r) for r in fw.divrem64_ttir[:4]]
    for k in ("div.s64", "rem.s64", "div.u64", "rem.u64"):
        r = fw.first_lines.get("ptx", {}).get(k)
        if r:
            ev.append(_ev(wide, r, f"{r.text}   ({_c(fw, 'ptx', k)}× {k})"))
    for k in ("div.s32", "rem.s32"):
        r = fn.first_lines.get("ptx", {}).get(k)
        if r:
            ev.append(_ev(narrow, r, f"{r.text}   ({_c(fn, 'ptx', k)}× {k})"))
    n_ptx = sum(_c(fw, "ptx", k) for k in ("div.s64", "rem.s64", "div.u64", "rem.u64"))
    expl = (
        f"`{wide}` divides 64-bit integers: {len(fw.divrem64_ttir)} `arith.divsi`/`arith.remsi` on `i64` in TTIR, "
        f"{n_ptx} `div.s64`/`rem.s64` in PTX ({len(fn.divrem64_ttir)} and "
        f"{sum(_c(fn, 'ptx', k) for k in ('div.s64', 'rem.s64', 'div.u64', 'rem.u64'))} in `{narrow}`). "
        "GPUs have no 64-bit integer divider: ptxas expands each into a call to a division subroutine of dozens of "
        "instructions, where a 32-bit division by a value is a short inline sequence."
    )
    return [
        Finding(
            "ttir.divrem-64",
            "major",
            f"64-bit division/remainder in `{wide}` ({n_ptx} `div.s64`/`rem.s64` in PTX)",
            expl,
            ev,
            remedy="compute the index split (`//`, `%`) in int32, e.g. keep `tl.program_id` and `tl.arange` in int32",
            stage="ttir",
            predicts=wide,
        )
    ]


def _c(f: VariantFacts, stage: str, key: str) -> int:
    return f.counts.get(stage, {}).get(key, 0)


def _ttir_loop_summary(f: VariantFacts) -> tuple[int, int, bool]:
    depth = max((lp.depth for lp in f.loops_ttir), default=0)
    gdepth = max((lp.depth for lp in f.loops_ttgir), default=0)
    flat = any(lp.flatten for lp in f.loops_ttir)
    return depth, gdepth, flat


def rule_loops(ctx: Context) -> list[Finding]:
    """``loop.flattened`` (a nest marked ``tt.flatten`` is fused into one loop in TTGIR) and ``loop.nest`` (the
    ``scf.for`` structure differs otherwise), with the number of loop-carried values."""
    out: list[Finding] = []
    fused: dict[str, bool] = {}
    for v in (ctx.a, ctx.b):
        f = ctx.facts(v)
        d, gd, flat = _ttir_loop_summary(f)
        fused[v] = flat and d >= 2 and gd < d
    if fused[ctx.a] != fused[ctx.b]:
        fz = ctx.a if fused[ctx.a] else ctx.b
        other = ctx.b if fz == ctx.a else ctx.a
        ff, fo = ctx.facts(fz), ctx.facts(other)
        outer = next(lp for lp in ff.loops_ttir if lp.flatten)
        inner = next((lp for lp in ff.loops_ttir if lp.depth == 2), None)
        main = max((lp for lp in ff.loops_ttgir), key=lambda lp: lp.iter_args, default=None)
        omain = max((lp for lp in fo.loops_ttgir), key=lambda lp: lp.iter_args, default=None)
        ev = [_ev(fz, outer.ref, outer.ref.text[:240]), Evidence(fz, "ttir", outer.end_line, "} {tt.flatten}")]
        if inner:
            ev.append(_ev(fz, inner.ref, inner.ref.text[:240]))
        if main:
            ev.append(_ev(fz, main.ref, main.ref.text[:240]))
        for lp in fo.loops_ttgir[:2]:
            ev.append(_ev(other, lp.ref, lp.ref.text[:240]))
        n_for = len(ff.loops_ttgir)
        expl = (
            f"In `{fz}` the tile loop is written `tl.range(..., flatten=True)` (`tt.flatten` on the outer `scf.for`), "
            "and the NVIDIA backend's `TritonGPUFuseNestedLoops` pass (run for compute capability 8.x and 9.x) fuses it "
            "with the inner K loop into a single loop over tiles × K steps "
            f"(TTIR: {len(ff.loops_ttir)} nested `scf.for`; TTGIR: {n_for} `scf.for`, the steady-state one carrying "
            f"{main.iter_args if main else '?'} values)"
            + (
                f"; `{other}` keeps {len(fo.loops_ttgir)} loop(s) with {omain.iter_args} loop-carried values"
                if omain
                else ""
            )
            + ". The per-tile work (computing the tile's row/column offsets, the epilogue store) now happens inside "
            "the fused loop under `scf.if`, and values that used to be recomputed per tile become loop-carried."
        )
        out.append(
            Finding(
                "loop.flattened",
                "major",
                f"Tile loop and K loop are fused into one loop in `{fz}` (`flatten=True`)",
                expl,
                ev,
                remedy="`flatten=False` on the tile loop keeps the nest (both operands can then be pipelined)",
                stage="ttir",
                predicts=None,
            )
        )
        return out
    # other structural changes
    sa = [(lp.depth, lp.iter_args) for lp in ctx.fa.loops_ttgir]
    sb = [(lp.depth, lp.iter_args) for lp in ctx.fb.loops_ttgir]
    ta = [lp.depth for lp in ctx.fa.loops_ttir]
    tb = [lp.depth for lp in ctx.fb.loops_ttir]
    if ta != tb or [d for d, _ in sa] != [d for d, _ in sb]:
        ev = [_ev(ctx.a, lp.ref, lp.ref.text[:240]) for lp in ctx.fa.loops_ttgir[:3]]
        ev += [_ev(ctx.b, lp.ref, lp.ref.text[:240]) for lp in ctx.fb.loops_ttgir[:3]]
        expl = (
            f"`{ctx.a}` has {len(ta)} `scf.for` in TTIR (max depth {max(ta, default=0)}) and {len(sa)} in TTGIR; "
            f"`{ctx.b}` has {len(tb)} (max depth {max(tb, default=0)}) and {len(sb)}. "
            f"Loop-carried values of the TTGIR loops: {[n for _, n in sa]} vs {[n for _, n in sb]}."
        )
        title = (
            f"Loop nest differs: {len(ta)} `scf.for` (depth {max(ta, default=0)}) in `{ctx.a}` vs {len(tb)} "
            f"(depth {max(tb, default=0)}) in `{ctx.b}`"
        )
        out.append(Finding("loop.nest", "minor", title, expl, ev, stage="ttir"))
    return out


def rule_num_stages_attr(ctx: Context) -> list[Finding]:
    """``loop.num-stages``: the ``tt.num_stages`` attribute of a TTIR loop differs."""

    def stages(f: VariantFacts) -> list[tuple[int, Evidence]]:
        out = []
        for lp in f.loops_ttir:
            m = re.search(r"tt\.num_stages = (\d+)", lp.attrs)
            if m:
                out.append((int(m.group(1)), Evidence(f.name, "ttir", lp.end_line, lp.attrs)))
        return out

    sa, sb = stages(ctx.fa), stages(ctx.fb)
    if not (sa or sb):
        return []

    def values(st_: list[tuple[int, Evidence]], f: VariantFacts) -> list[int]:
        if st_:
            return [v for v, _ in st_]
        opt = f.options.get("num_stages")
        return [int(opt)] * max(1, len(f.loops_ttir)) if isinstance(opt, int) else []

    xa, xb = values(sa, ctx.fa), values(sb, ctx.fb)
    if sorted(set(xa)) == sorted(set(xb)):
        return []
    ev = [e for _, e in sa] + [e for _, e in sb]
    va = ", ".join(str(s) for s, _ in sa) or f"default ({ctx.fa.options.get('num_stages')})"
    vb = ", ".join(str(s) for s, _ in sb) or f"default ({ctx.fb.options.get('num_stages')})"
    ma, mb = min(xa, default=0), min(xb, default=0)
    low = ctx.a if ma < mb else ctx.b if mb < ma else None
    expl = (
        f"The loop's `tt.num_stages` is {va} in `{ctx.a}` and {vb} in `{ctx.b}`. The software pipeliner "
        "(`triton-loop-pipeline`) prefetches loads `num_stages - 1` iterations ahead with `cp.async` into a ring of "
        "shared-memory buffers; with `num_stages = 1` it leaves the loop alone, so each iteration waits for its own "
        "global loads."
    )
    return [
        Finding(
            "loop.num-stages",
            "major",
            f"Loop pipelining depth `tt.num_stages`: {va} in `{ctx.a}` vs {vb} in `{ctx.b}`",
            expl,
            ev,
            remedy="`num_stages >= 2` on the loop (`tl.range(..., num_stages=N)`) lets the row loads be prefetched",
            stage="ttir",
            predicts=low,
        )
    ]


# ------------------------------------------------------------------------------------------------ coalescing


def _same_warps(ctx: Context) -> bool:
    """Per-thread counts (instructions, registers) compare only when both variants use the same ``num_warps``."""
    return bool(ctx.fa.options.get("num_warps") == ctx.fb.options.get("num_warps"))


def _warps_note(ctx: Context) -> str:
    """When ``num_warps`` differs: why per-thread counts differ without more work per CTA (one sentence), else ""."""
    wa, wb = ctx.fa.options.get("num_warps"), ctx.fb.options.get("num_warps")
    if wa == wb or not isinstance(wa, int) or not isinstance(wb, int) or min(wa, wb) <= 0:
        return ""
    k = max(wa, wb) / min(wa, wb)
    times = "twice" if k == 2 else f"{k:g}×"
    frac = "half" if k == 2 else f"1/{k:g} of"
    return (
        f" `num_warps` is {wa} in `{ctx.a}` and {wb} in `{ctx.b}`: per-thread counts scale with the work per thread "
        f"({times} the threads, {frac} the instructions each: the same work per CTA), so they do not compare directly."
    )


def _ratio(x: float, y: float) -> str:
    """``x/y`` as "(0.5×)", or "" when ``y`` is 0."""
    return f" ({x / y:.2g}×)" if y else ""


def _pair_accesses(fa: VariantFacts, fb: VariantFacts) -> list[tuple[Access, Access]]:
    """Pair ``tt.load``/``tt.store`` of two variants by (kind, shape, element type) and order."""
    pairs = []
    used: set[int] = set()
    for x in fa.accesses:
        for j, y in enumerate(fb.accesses):
            if j in used:
                continue
            if (x.kind, x.shape, x.elem) == (y.kind, y.shape, y.elem) and (
                not x.name or not y.name or x.name == y.name
            ):
                pairs.append((x, y))
                used.add(j)
                break
    return pairs


def _fast_dim(acc: Access) -> int:
    return acc.order[0] if acc.order else len(acc.shape) - 1


def rule_contiguity(ctx: Context) -> list[Finding]:
    """``coalesce.contiguity``: AxisInfo's contiguity or divisibility of a global pointer differs."""
    rows = []
    orders = []
    for x, y in _pair_accesses(ctx.fa, ctx.fb):
        d = _fast_dim(x)
        if x.contiguity and y.contiguity and len(x.contiguity) == len(y.contiguity):
            # the dimension where either variant proves the most contiguity (orders may differ: with nothing
            # contiguous the coalescing pass may pick another order, as Triton 3.6 does)
            d = max(range(len(x.contiguity)), key=lambda i: (max(x.contiguity[i], y.contiguity[i]), i))
        if x.order != y.order:
            orders.append((x, y))
        cx = x.contiguity[d] if d < len(x.contiguity) else None
        cy = y.contiguity[d] if d < len(y.contiguity) else None
        dx = x.divisibility[d] if d < len(x.divisibility) else None
        dy = y.divisibility[d] if d < len(y.divisibility) else None
        if cx != cy or dx != dy:
            rows.append((x, y, d, cx, cy, dx, dy))
    if not rows:
        return []
    ev: list[Evidence] = []
    parts = []
    for x, y, d, cx, cy, dx, dy in rows:
        ev.append(_ev(ctx.a, x.ref, f"{x.label}: " + x.ref.text.split("Considering op:")[-1].strip()[:200]))
        ev.append(_ev(ctx.a, x.axis_ref))
        ev.append(_ev(ctx.b, y.axis_ref))
        bits = []
        if cx != cy:
            bits.append(f"contiguity {cx} in `{ctx.a}` vs {cy} in `{ctx.b}`")
        if dx != dy:
            bits.append(
                f"divisibility {dx} vs {dy} bytes"
                if cx != cy
                else f"divisibility {_bytes(dx)} in `{ctx.a}` vs {_bytes(dy)} in `{ctx.b}`"
            )
        parts.append(f"{x.label} (dim {d}): " + ", ".join(bits))
    worse = (
        ctx.a
        if sum(r[3] or 0 for r in rows) + sum(r[5] or 0 for r in rows)
        < sum(r[4] or 0 for r in rows) + sum(r[6] or 0 for r in rows)
        else ctx.b
    )
    expl = (
        "The coalescing pass (`tritongpu-coalesce`) asks AxisInfo how many consecutive elements of each pointer "
        "tensor are contiguous and how aligned (in bytes) the first one is; "
        + "; ".join(parts)
        + ". Contiguity along the fastest dimension and alignment bound how many elements one thread may load "
        "with a single vector instruction."
        + (
            " With nothing contiguous the coalescing pass also changes the access order: "
            + "; ".join(f"{x.label} order {x.order} in `{ctx.a}` vs {y.order} in `{ctx.b}`" for x, y in orders)
            + "."
            if orders
            else ""
        )
    )
    cont = any(r[3] != r[4] for r in rows)
    what = (
        "contiguity"
        if cont and all(r[5] == r[6] for r in rows)
        else "contiguity and alignment"
        if cont
        else "alignment"
    )
    r0 = rows[0]
    title = (
        f"Pointer {what} proven by AxisInfo: {r0[0].label} "
        + (
            f"contiguity {r0[3]} in `{ctx.a}` vs {r0[4]} in `{ctx.b}`"
            if r0[3] != r0[4]
            else f"divisibility {_bytes(r0[5])} in `{ctx.a}` vs {_bytes(r0[6])} in `{ctx.b}`"
        )
        + (f" (+{len(rows) - 1} more)" if len(rows) > 1 else "")
    )
    return [
        Finding(
            "coalesce.contiguity",
            "critical" if any((r[3] or 0) == 1 or (r[4] or 0) == 1 for r in rows) else "major",
            title,
            expl,
            ev,
            stage="ttgir",
            predicts=worse,
        )
    ]


def _width_phrase(x: Access, variant: str) -> str:
    """How ``x``'s vector width follows from its facts: ``min(perThread × element bits, contiguity, alignment, 128)``,
    e.g. "4 elements per thread, issued as 32-bit (4-byte) accesses in `mis8` because the pointer is proven only
    1-byte aligned"."""
    d = _fast_dim(x)
    lanes = f"{x.per_thread} element{'s' if x.per_thread != 1 else ''} per thread"
    head = f"{lanes}, issued as {x.vector_bits}-bit ({x.vector_bits // 8}-byte) accesses in `{variant}`"
    full = x.per_thread * x.elem_bits
    if x.vector_bits >= min(full, 128):
        return f"{lanes} × {x.elem_bits} bits = {x.vector_bits}-bit ({x.vector_bits // 8}-byte) accesses in `{variant}`"
    why = []
    div = x.divisibility[d] if d < len(x.divisibility) else None
    if div is not None and max(1, div * 8 // max(x.elem_bits, 1)) * x.elem_bits <= x.vector_bits:
        why.append(f"the pointer is proven only {div}-byte aligned")
    cont = x.contiguity[d] if d < len(x.contiguity) else None
    if cont is not None and cont * x.elem_bits <= x.vector_bits:
        why.append(f"only {cont} consecutive element{'s are' if cont != 1 else ' is'} proven contiguous")
    return head + (f" because {' and '.join(why)}" if why else "")


def rule_vector_width(ctx: Context) -> list[Finding]:
    """``coalesce.vector-width``: elements per thread (``perThread``) × element width differs."""
    rows = [(x, y) for x, y in _pair_accesses(ctx.fa, ctx.fb) if x.vector_bits != y.vector_bits]
    if not rows:
        return []
    ev: list[Evidence] = []
    parts = []
    for x, y in rows:
        ev.append(_ev(ctx.a, x.per_thread_ref, f"{x.label}: {x.per_thread_ref.text}"))
        ev.append(_ev(ctx.b, y.per_thread_ref, f"{y.label}: {y.per_thread_ref.text}"))
        parts.append(f"{x.label}: {_width_phrase(x, ctx.a)} vs {_width_phrase(y, ctx.b)}")
    for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb)):
        for bl in f.blocked[:2]:
            r = bl["ref"]
            ev.append(Evidence(v, r["stage"], r["line"], r["text"]))
    narrow = ctx.a if sum(x.vector_bits for x, _ in rows) < sum(y.vector_bits for _, y in rows) else ctx.b
    expl = (
        "The coalescing pass gives each thread `perThread` consecutive elements (the blocked layout's "
        "`sizePerThread` along the fastest dimension); one access moves min(perThread × element bits, proven "
        "contiguity, proven alignment, 128 bits): "
        + "; ".join(parts)
        + ". Narrower accesses mean proportionally more load/store instructions for the same bytes."
    )
    return [
        Finding(
            "coalesce.vector-width",
            "critical" if any(min(x.vector_bits, y.vector_bits) < 32 for x, y in rows) else "major",
            f"Vector width of global accesses (`{ctx.a}` vs `{ctx.b}`): "
            + ", ".join(f"{x.label} {x.vector_bits} vs {y.vector_bits} bits" for x, y in rows[:3]),
            expl,
            ev,
            stage="ttgir",
            predicts=narrow,
        )
    ]


def rule_mma(ctx: Context) -> list[Finding]:
    """``layout.mma``: the MMA layout (version, instruction shape) differs."""
    ma = [(m["version"], m["instrShape"], m["warpsPerCTA"]) for m in ctx.fa.mma]
    mb = [(m["version"], m["instrShape"], m["warpsPerCTA"]) for m in ctx.fb.mma]
    if ma == mb:
        return []

    def desc(ms: list[tuple[Any, Any, Any]]) -> str:
        return "; ".join(f"v{v} instrShape {i} warpsPerCTA {w}" for v, i, w in ms) or "none"

    ev = [
        Evidence(v, m["ref"]["stage"], m["ref"]["line"], m["ref"]["text"])
        for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb))
        for m in f.mma
    ]
    expl = (
        f"MMA layouts: {desc(ma)} in `{ctx.a}` vs {desc(mb)} in `{ctx.b}` (versionMajor 2 = `mma.sync`, "
        "3 = Hopper `wgmma`, 5 = Blackwell `tcgen05`; instrShape is the per-instruction tile, warpsPerCTA how the "
        "warps split the output tile)."
    )
    return [Finding("layout.mma", "minor", f"MMA layout: {desc(ma)} vs {desc(mb)}", expl, ev, stage="ttgir")]


# ------------------------------------------------------------------------------------------------ pipelining


def _trace_loop_carried(ttgir: str, shape: list[int]) -> list[Ref]:
    """For a synchronous ``tt.load`` of ``shape`` inside a loop, follow its pointer's definitions back to loop-carried
    integer tensors (``iter_args`` of an enclosing ``scf.for``); return the load, the iter_arg and its definitions."""
    lines = ttgir.splitlines()
    defs: dict[str, tuple[int, str]] = {}
    iter_args: dict[str, tuple[int, str, str, str]] = {}  # name -> (for line, init, type, for text)
    load_line: tuple[int, str] | None = None
    want = "x".join(map(str, shape)) + "x!tt.ptr"
    for no, raw in enumerate(lines, 1):
        s = strip_loc(raw).strip()
        m = re.match(r"^(%[\w.-]+)(?::\d+)?\s*=\s*(.*)$", s)
        if m:
            defs[m.group(1)] = (no, s)
        if " scf.for " in f" {s}" and "iter_args(" in s:
            ia = re.search(r"iter_args\((.*?)\)\s*->\s*\((.*)\)\s*(?::\s*\w+)?\s*\{$", s)
            if ia:
                pairs = re.findall(r"(%[\w.-]+)\s*=\s*(%[\w.#-]+)", ia.group(1))
                types = _split_top(ia.group(2))
                for i, (name, init) in enumerate(pairs):
                    iter_args[name] = (no, init, types[i] if i < len(types) else "", s)
        if re.search(r"=\s*tt\.load\s", s) and want in s and load_line is None:
            # only loads inside a loop are interesting: require an enclosing for seen before
            if iter_args:
                load_line = (no, s)
    if load_line is None:
        return []
    ptr = re.search(r"tt\.load\s+(%[\w.#-]+)", load_line[1])
    if not ptr:
        return []
    seen: set[str] = set()
    frontier = [ptr.group(1).split("#")[0]]
    found: list[str] = []
    for _ in range(14):
        nxt: list[str] = []
        for name in frontier:
            if name in seen:
                continue
            seen.add(name)
            if name in iter_args:
                _, _, typ, _ = iter_args[name]
                if "tensor<" in typ and "!tt.ptr" not in typ and re.search(r"xi(32|64)", typ):
                    found.append(name)
                continue
            d = defs.get(name)
            if d is None:
                continue
            rhs = d[1].split("=", 1)[1]
            rhs = rhs.split(" : ")[0]
            nxt.extend(x.split("#")[0] for x in re.findall(r"%[\w.#-]+", rhs))
        frontier = nxt
        if not frontier:
            break
    if not found:
        return []
    out = [Ref("ttgir", load_line[0], load_line[1])]
    for name in found[:2]:
        fl, init, typ, ftext = iter_args[name]
        out.append(Ref("ttgir", fl, f"scf.for … iter_args(… {name} = {init} …) : {typ}"))
        d = defs.get(init.split("#")[0])
        if d:
            out.append(Ref("ttgir", d[0], d[1][:240]))
    return out


def _split_top(s: str) -> list[str]:
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in s:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur).strip())
    return out


def _pair_pipeline(fa: VariantFacts, fb: VariantFacts) -> list[tuple[PipelineLoad | None, PipelineLoad | None]]:
    pairs: list[tuple[PipelineLoad | None, PipelineLoad | None]] = []
    used: set[int] = set()
    for x in fa.pipeline:
        match = None
        for j, y in enumerate(fb.pipeline):
            if j not in used and (x.shape, x.elem) == (y.shape, y.elem):
                match = j
                break
        if match is not None:
            used.add(match)
            pairs.append((x, fb.pipeline[match]))
        else:
            pairs.append((x, None))
    pairs.extend((None, y) for j, y in enumerate(fb.pipeline) if j not in used)
    return pairs


def _sync_load(f: VariantFacts, ld: PipelineLoad) -> bool:
    """Does ``f`` load a tile of ``ld``'s shape synchronously (``tt.load``) inside a loop?"""
    for r in f.sync_loads_loop:
        m = re.search(r"tensor<((?:\d+x)+)!tt\.ptr<(\w+)>", r.text)
        if m and [int(x) for x in m.group(1).rstrip("x").split("x")] == ld.shape and m.group(2) == ld.elem:
            return True
    return False


def _staged_loads(f: VariantFacts) -> list[tuple[Ref, Ref]]:
    """Synchronous loop loads whose result is copied into a single shared-memory buffer (``ttg.local_alloc %x``):
    ``[(load line, local_alloc line)]``."""
    out = []
    for r in f.sync_loads_loop:
        m = re.match(r"^(%[\w.-]+)", r.text)
        if not m:
            continue
        for b in f.buffers:
            if b.depth == 1 and re.search(rf"local_alloc\s+{re.escape(m.group(1))}\b", b.ref.text):
                out.append((r, b.ref))
    return out


def rule_pipelined(ctx: Context) -> list[Finding]:
    """``pipeline.load-not-pipelined``: a loop load is pipelined (``cp.async``) in one variant and not in the other,
    with the pipeliner's own reason quoted."""
    lost: list[tuple[str, PipelineLoad, PipelineLoad | None]] = []  # (variant where not pipelined, its load, other)
    for x, y in _pair_pipeline(ctx.fa, ctx.fb):
        if x is not None and y is not None and x.pipelined != y.pipelined:
            lost.append((ctx.a, x, y) if not x.pipelined else (ctx.b, y, x))
        elif x is None and y is not None and y.pipelined and _sync_load(ctx.fa, y):
            lost.append((ctx.a, PipelineLoad(y.shape, y.elem, None, False, "", y.name, []), y))
        elif y is None and x is not None and x.pipelined and _sync_load(ctx.fb, x):
            lost.append((ctx.b, PipelineLoad(x.shape, x.elem, None, False, "", x.name, []), x))
    if not lost:
        return []
    variant = lost[0][0]
    other = ctx.b if variant == ctx.a else ctx.a
    fv, fo = ctx.facts(variant), ctx.facts(other)
    ev: list[Evidence] = []
    parts = []
    loop_carried = False
    small = False
    for v, ld, oth in lost:
        if v != variant:
            continue
        ev.extend(_ev(v, r) for r in ld.refs[:2])
        if oth:
            ev.extend(_ev(other, r) for r in oth.refs[:2])
        if ld.refs and ld.width_bits is not None and ld.width_bits < 32:
            # is the narrow width explained by coalescing, or does it appear only in the pipeliner (loop-carried)?
            acc = next((a for a in fv.accesses if a.kind == "load" and a.shape == ld.shape), None)
            if acc is not None and acc.vector_bits >= 32:
                trace = _trace_loop_carried(ctx.ttgir.get(variant, ""), ld.shape)
                loop_carried = True
                ev.append(
                    _ev(v, acc.axis_ref, f"(coalescing saw {acc.label} as {acc.vector_bits}-bit) {acc.axis_ref.text}")
                )
                ev.extend(_ev(v, r) for r in trace)
                what = (
                    f'{ld.label}: the pipeliner computes a width of {ld.width_bits} bits and rejects it ("{ld.reason}"), '
                    f"although the coalescing pass, which ran before the loops were fused, saw {acc.vector_bits}-bit "
                    "accesses. The pipeliner re-runs AxisInfo on the fused loop, where the pointer is built from "
                    "loop-carried offsets"
                )
                low = next(
                    (x for x in fv.lowered if x.kind == "load" and x.shape == ld.shape and x.elem == ld.elem), None
                )
                if len(trace) > 1:
                    m = re.search(r"iter_args\(… (%[\w.-]+) = (%[\w.#-]+)", trace[1].text)
                    if m:
                        stem = re.sub(r"_\d+$", "", m.group(2).lstrip("%").split("#")[0])
                        what += (
                            f" (`{stem}`: `iter_args` value `{m.group(1)}` of the fused `scf.for`, initialised from "
                            f"`{m.group(2)}`)"
                        )
                what += (
                    " that are redefined under `scf.if` when a new tile starts; joining the definitions, AxisInfo no "
                    f"longer proves more than one contiguous, aligned element ({ld.width_bits} bits) along the fast "
                    "dimension (the log gives only the width, not whether contiguity or alignment was lost)"
                )
                if low is not None and low.ptx_ref is not None and (low.ptx_bits or 0) > ld.width_bits:
                    what += (
                        f". The final lowering, which runs AxisInfo again after pipelining, still emits "
                        f"{low.ptx_bits}-bit loads for it ({low.ptx_count}× `{low.ptx_key}`): only the pipeliner's "
                        "decision is affected, not the width of the synchronous load"
                    )
                    ev.append(_ev(v, low.ptx_ref, f"{low.ptx_ref.text}   ({low.ptx_count}× {low.ptx_key} for this op)"))
                parts.append(what)
                continue
            parts.append(f'{ld.label} has width {ld.width_bits} bits → "{ld.reason}"')
            small = True
        elif not ld.refs:
            lp = next((lp for lp in fv.loops_ttir if "tt.num_stages = 1" in lp.attrs), None)
            parts.append(
                f"{ld.label} is not considered at all"
                + (" (its loop has `tt.num_stages = 1`)" if lp else "")
                + (f'; in `{other}` it is "{oth.reason}"' if oth else "")
            )
            if lp:
                ev.append(Evidence(variant, "ttir", lp.end_line, lp.attrs))
        else:
            parts.append(f'{ld.label}: "{ld.reason}"')
    pipelined_o = [p for p in fo.pipeline if p.pipelined]
    kept = [p for p in fv.pipeline if p.pipelined]
    names = [ld.label for v, ld, _ in lost if v == variant]
    expl = (
        f"In `{variant}` the software pipeliner (`triton-loop-pipeline`) does not make "
        + ("these loads" if len(names) > 1 else "this load")
        + " asynchronous: "
        + "; ".join(parts)
        + ". "
        + (
            "The pipeliner's `isSmallLoad` check rejects loads narrower than 32 bits per thread, because `cp.async` "
            "copies 4, 8 or 16 bytes. "
            if small
            else ""
        )
        + (
            f"Only {_names([p.name or 'x'.join(map(str, p.shape)) for p in kept])} "
            f"{'is' if len(kept) == 1 else 'are'} still pipelined. "
            if kept
            else ""
        )
        + f"In `{other}` {len(pipelined_o)} load(s) are prefetched with `cp.async` into a ring of shared-memory buffers "
        "while earlier iterations compute; in `"
        + variant
        + "` the non-pipelined load is issued and waited for in the iteration that uses it, so its latency is exposed"
        + (
            ", and its data is staged through registers into a single shared-memory buffer (`ttg.local_alloc`) "
            "rewritten every iteration."
            if _staged_loads(fv)
            else "."
        )
    )
    remedy = None
    if loop_carried:
        remedy = (
            "recompute the operand's offsets inside the K loop from `tl.arange` (with `tl.max_contiguous`/"
            "`tl.multiple_of` hints), or use `flatten=False` on the tile loop"
        )
    return [
        Finding(
            "pipeline.load-not-pipelined",
            "critical",
            f"{', '.join(names)} not pipelined in `{variant}`"
            + (" (loop-carried offsets lose contiguity or alignment)" if loop_carried else ""),
            expl,
            ev,
            remedy=remedy,
            stage="ttgir",
            predicts=variant,
        )
    ]


def rule_buffers(ctx: Context) -> list[Finding]:
    """``pipeline.buffers``: shared-memory buffer rings (``ttg.local_alloc``) differ in number or depth."""
    ra = sorted((b.depth, tuple(b.tile)) for b in ctx.fa.buffers if b.depth > 1)
    rb = sorted((b.depth, tuple(b.tile)) for b in ctx.fb.buffers if b.depth > 1)
    if ra == rb:
        return []

    def desc(f: VariantFacts) -> str:
        rings = [b for b in f.buffers if b.depth > 1]
        if not rings:
            return "no multi-buffered ring"
        return ", ".join(f"{b.depth}×{'x'.join(map(str, b.tile))}x{b.elem} ({_kb(b.bytes)})" for b in rings)

    ev = [_ev(v, b.ref) for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb)) for b in f.buffers[:4]]
    fewer = ctx.a if sum(d for d, _ in ra) < sum(d for d, _ in rb) else ctx.b
    staged = {v: _staged_loads(ctx.facts(v)) for v in (ctx.a, ctx.b)}
    expl = (
        f"Shared-memory rings for pipelined loads: {desc(ctx.fa)} in `{ctx.a}`; {desc(ctx.fb)} in `{ctx.b}`. "
        "Each ring slot holds one future iteration's tile, filled by `cp.async` while earlier iterations compute."
        + "".join(
            f" In `{v}` {len(st)} synchronous loop load(s) are instead copied from registers into a single buffer "
            "(`ttg.local_alloc`) every iteration."
            for v, st in staged.items()
            if st
        )
        + "".join(
            f" In `{v}` the loop's loads without a ring go straight to registers."
            for v in (ctx.a, ctx.b)
            if ctx.facts(v).sync_loads_loop and not staged[v]
        )
    )
    return [
        Finding(
            "pipeline.buffers",
            "major",
            f"Multi-buffered shared memory: `{ctx.a}` {desc(ctx.fa)}; `{ctx.b}` {desc(ctx.fb)}",
            expl,
            ev,
            stage="ttgir",
            predicts=fewer,
        )
    ]


def rule_async_copies(ctx: Context) -> list[Finding]:
    """``pipeline.async-copies``: ``ttg.async_copy_global_to_local`` before/inside loops, and synchronous loop loads."""
    a = (len(ctx.fa.async_copies_prologue), len(ctx.fa.async_copies_loop), len(ctx.fa.sync_loads_loop))
    b = (len(ctx.fb.async_copies_prologue), len(ctx.fb.async_copies_loop), len(ctx.fb.sync_loads_loop))
    if a == b:
        return []
    ev: list[Evidence] = []
    for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb)):
        ev.extend(_ev(v, r, r.text[:220]) for r in f.async_copies_prologue[:1])
        ev.extend(_ev(v, r, r.text[:220]) for r in f.async_copies_loop[:2])
        ev.extend(_ev(v, r, r.text[:220]) for r in f.sync_loads_loop[:2])
    expl = (
        f"TTGIR async copies (prologue / inside the loop) and synchronous loop loads: `{ctx.a}` {a[0]} / {a[1]} and "
        f"{a[2]} `tt.load`; `{ctx.b}` {b[0]} / {b[1]} and {b[2]} `tt.load`. Prologue copies fill the ring before the "
        "loop; copies inside the loop fetch iteration i+num_stages-1 while iteration i computes."
    )
    fewer = ctx.a if a[0] + a[1] < b[0] + b[1] else ctx.b if a[0] + a[1] > b[0] + b[1] else None
    return [
        Finding(
            "pipeline.async-copies",
            "major",
            f"Async copies (prologue/loop): {a[0]}/{a[1]} in `{ctx.a}` vs {b[0]}/{b[1]} in `{ctx.b}`",
            expl,
            ev,
            stage="ttgir",
            predicts=fewer,
        )
    ]


def rule_wgmma_wait(ctx: Context) -> list[Finding]:
    """``pipeline.wgmma-wait``: ``ttng.warp_group_dot_wait {pendings = N}`` in the steady-state loop (one without
    nested loops) differs (0 = the wgmma is waited for in every iteration). Waits after a K loop, in the body of an
    outer tile loop, are not per-iteration waits and are ignored."""

    def inloop(f: VariantFacts) -> list[tuple[int, Ref]]:
        return [(w.value, w.ref) for w in f.waits if w.op == "ttng.warp_group_dot_wait" and w.in_inner_loop]

    wa, wb = inloop(ctx.fa), inloop(ctx.fb)
    if not (wa or wb) or sorted(v for v, _ in wa) == sorted(v for v, _ in wb):
        return []
    ma, mb = min((v for v, _ in wa), default=99), min((v for v, _ in wb), default=99)
    if min(ma, mb) != 0:
        return []  # neither variant waits for its wgmma in every iteration
    serial = ctx.a if ma < mb else ctx.b
    other = ctx.b if serial == ctx.a else ctx.a
    ws, wo = (wa, wb) if serial == ctx.a else (wb, wa)
    ev = [_ev(serial, r, r.text[:200]) for _, r in ws[:2]] + [_ev(other, r, r.text[:200]) for _, r in wo[:2]]
    vs = ", ".join(str(v) for v, _ in ws) or "none"
    vo = ", ".join(str(v) for v, _ in wo) or "none"
    staged = _staged_loads(ctx.facts(serial))
    expl = (
        f"In the loop, `ttng.warp_group_dot_wait` has `pendings` = {vs} in `{serial}` and {vo} in `{other}`. "
        f"`pendings = 0` in `{serial}` means each iteration waits for its own wgmma to finish before going on "
        "(`wgmma.wait_group 0`), so the tensor cores are idle while the next operands are loaded; `pendings = 1` "
        "keeps one wgmma in flight across iterations."
    )
    if staged:
        stems = sorted({_stem_of(r.text) for r, _ in staged if _stem_of(r.text)})
        many = len(stems) > 1 or len(staged) > 1
        expl += (
            " Triton's wgmma pipelining (`dotCanBeProperlyAsync` in `WGMMAPipeline.cpp`) leaves a wgmma in flight "
            "only when each shared-memory operand is multi-buffered (a slot of a pipelined ring) or defined outside "
            f"the loop; in `{serial}` {_names(stems) or 'an operand'} {'are' if many else 'is'} loaded synchronously "
            f"and copied into {'single buffers' if many else 'a single buffer'} (`ttg.local_alloc`) that the next "
            f"iteration overwrites, so the wgmma reading {'them' if many else 'it'} must finish first."
        )
        ev.extend(_ev(serial, b, b.text[:200]) for _, b in staged[:2])
    return [
        Finding(
            "pipeline.wgmma-wait",
            "major",
            f"wgmma is waited on at every iteration in `{serial}` (`pendings` {vs}; {vo} in `{other}`)",
            expl,
            ev,
            stage="ttgir",
            predicts=serial,
        )
    ]


def _stem_of(line: str) -> str:
    """Python name hint of the value an MLIR line defines (``%b_112 = ...`` → ``b``)."""
    m = re.match(r"^%([A-Za-z_][\w]*?)(?:_\d+)?\s*=", line)
    return m.group(1) if m and not re.match(r"^(arg|c|cst)\d*$", m.group(1)) else ""


def rule_tma(ctx: Context) -> list[Finding]:
    """``ttgir.tma``: TMA copies present in one variant only."""
    a, b = len(ctx.fa.tma_copies), len(ctx.fb.tma_copies)
    if a == b:
        return []
    ev = [_ev(ctx.a, r, r.text[:200]) for r in ctx.fa.tma_copies[:2]] + [
        _ev(ctx.b, r, r.text[:200]) for r in ctx.fb.tma_copies[:2]
    ]
    title = f"TMA copies (`ttng.async_tma_copy_global_to_local`): {a} in `{ctx.a}` vs {b} in `{ctx.b}`"
    expl = (
        title + ". A TMA copy moves a whole tile global→shared with one instruction per CTA (`cp.async.bulk.tensor`), "
        "addressed through a tensor descriptor and completed on an mbarrier; without TMA every thread issues its "
        "own `cp.async` or loads. Which is faster depends on the tile and the architecture; the counts below are "
        "not comparable one to one."
    )
    return [Finding("ttgir.tma", "minor", title, expl, ev, stage="ttgir", predicts=None)]


# ------------------------------------------------------------------------------------------------ lowering (LLIR)


def _pair_lowered(fa: VariantFacts, fb: VariantFacts) -> list[tuple[LoweredAccess, LoweredAccess]]:
    """Pair the global ``tt.load``/``tt.store`` left in two variants' TTGIR by (kind, shape, element type), name and
    order."""
    pairs = []
    used: set[int] = set()
    for x in fa.lowered:
        for j, y in enumerate(fb.lowered):
            if j in used or (x.kind, x.shape, x.elem) != (y.kind, y.shape, y.elem):
                continue
            if x.name and y.name and x.name != y.name:
                continue
            if not (x.name and y.name) and x.ptr_args[:1] != y.ptr_args[:1]:
                continue
            pairs.append((x, y))
            used.add(j)
            break
    return pairs


def _coalesced(f: VariantFacts, x: LoweredAccess) -> Access | None:
    """The coalescing log's view of a lowered access, if it was matched."""
    i = x.coalesce_index
    return f.accesses[i] if i is not None and 0 <= i < len(f.accesses) else None


def _same_pointer_info(x: Access | None, y: Access | None) -> bool:
    """The coalescing pass saw the same pointer contiguity and alignment in both variants."""
    return x is not None and y is not None and (x.contiguity, x.divisibility) == (y.contiguity, y.divisibility)


def _mask_source(python: str, kernel: str, names: list[str]) -> tuple[int, str] | None:
    """``(line, text)`` of the first comparison (``m = offs < n``) using one of ``names`` in the body of ``def kernel``
    in the saved Python source."""
    lines = python.splitlines()
    start = next((i for i, ln in enumerate(lines) if re.match(rf"\s*def\s+{re.escape(kernel)}\s*\(", ln)), None)
    if start is None:
        return None
    for i in range(start + 1, len(lines)):
        if re.match(r"(def|class|@)\b|\S", lines[i]) and not lines[i].startswith((" ", "\t")):
            break
        code = lines[i].split("#")[0].strip()
        if re.search(r"\w\s*[<>]=?\s*\w", code) and any(re.search(rf"\b{re.escape(n)}\b", code) for n in names):
            return i + 1, code
    return None


def rule_mask_alignment(ctx: Context) -> list[Finding]:
    """``lower.mask-alignment``: the coalescing pass gives a masked access the same elements per thread and the same
    pointer contiguity/alignment in both variants, but the LLIR/PTX instructions are narrower in one: the load/store
    lowering capped the vector at the mask's alignment (``getMaskAlignment``: AxisInfo's constancy of the mask)."""
    rows: list[tuple[str, LoweredAccess, str, LoweredAccess]] = []  # (narrow variant, its access, other, its access)
    for x, y in _pair_lowered(ctx.fa, ctx.fb):
        if x.llir_bits is None or y.llir_bits is None or x.llir_bits == y.llir_bits:
            continue
        (vn, n), (vw, w) = ((ctx.a, x), (ctx.b, y)) if x.llir_bits < y.llir_bits else ((ctx.b, y), (ctx.a, x))
        if not n.mask or n.per_thread is None or n.per_thread != w.per_thread:
            continue  # unmasked, or the coalescing pass already chose fewer elements (coalesce.vector-width)
        fn_, fw_ = ctx.facts(vn), ctx.facts(vw)
        if not _same_pointer_info(_coalesced(fn_, n), _coalesced(fw_, w)) or (n.coalesce_bits or 0) <= (
            n.llir_bits or 0
        ):
            continue  # the pointer, not the mask, limits the width
        rows.append((vn, n, vw, w))
    if not rows:
        return []
    vn = rows[0][0]
    vw = ctx.b if vn == ctx.a else ctx.a
    rows = [r for r in rows if r[0] == vn]
    fn, fw = ctx.facts(vn), ctx.facts(vw)
    # the parameters the mask is computed from whose divisibility differs
    lost: list[tuple[ArgFact, ArgFact]] = []
    for _, n, _, _ in rows:
        for name in n.mask_args:
            an, aw = fn.arg(name), fw.arg(name)
            if an and aw and (aw.divisibility or 0) > (an.divisibility or 0) and all(an is not x for x, _ in lost):
                lost.append((an, aw))
    ev: list[Evidence] = []
    parts = []
    for _, n, _, w in rows:
        ev.append(_ev(vn, n.ref, n.ref.text[:240]))
        ev.extend(_ev(vn, r, r.text[:240]) for r in n.mask_refs[:3])
        for v, fx, acc in ((vn, fn, n), (vw, fw, w)):
            co = _coalesced(fx, acc)
            if co is not None:
                ev.append(_ev(v, co.per_thread_ref, f"{acc.label}: {co.per_thread_ref.text}"))
        for v, acc in ((vn, n), (vw, w)):
            if acc.llir_ref is not None:
                ev.append(_ev(v, acc.llir_ref, f"{acc.llir_ref.text[:200]}   ({acc.llir_count}× for this op)"))
            if acc.ptx_ref is not None:
                ev.append(_ev(v, acc.ptx_ref, f"{acc.ptx_ref.text}   ({acc.ptx_count}× {acc.ptx_key} for this op)"))
    groups: dict[tuple[Any, ...], list[str]] = {}
    for _, n, _, w in rows:
        key = (n.llir_count, n.llir_bits, w.llir_count, w.llir_bits, n.ptx_key, w.ptx_key)
        groups.setdefault(key, []).append(n.label)
    for (cn, bn, cw, bw, kn, kw), labels in groups.items():
        parts.append(
            f"{', '.join(labels)}: {cn} × {bn}-bit instructions per thread{' each' if len(labels) > 1 else ''} in "
            f"`{vn}` vs {cw} × {bw}-bit in `{vw}`" + (f" (`{kn}` vs `{kw}`)" if kn and kw else "")
        )
    n0, w0 = rows[0][1], rows[0][3]
    per = n0.per_thread or 1
    expl = (
        f"The coalescing pass treats these accesses alike in both variants: each thread gets {per} contiguous "
        f"elements (`perThread: {per}`), and AxisInfo proves the same pointer contiguity and alignment, enough for "
        f"{n0.coalesce_bits}-bit vectors. The difference appears when TTGIR is lowered to LLVM IR: "
        + "; ".join(parts)
        + ". Triton's load/store lowering (`LoadOpConversion`/`StoreOpConversion` in `LoadStoreOpToLLVM.cpp`) takes "
        "`vec = min(vector size of the pointer, getMaskAlignment(mask))`, where the mask alignment is AxisInfo's "
        "constancy of the mask along the fastest dimension: how many consecutive elements are known to share one mask "
        "bit. "
    )
    if lost:
        names = _names([a.name for a, _ in lost])
        # describe the comparison by its Python source (`offs < n`), not by raw SSA names (`%offs_3, %m`)
        pred = next((m.group(1) for r in n0.mask_refs if (m := re.search(r"arith\.cmpi\s+(\w+)", r.text))), "")
        src = _mask_source(ctx.python.get(vn, ""), ctx.facts(vn).kernel, [a.name for a, _ in lost])
        cmp = f"`{src[1]}`, line {src[0]}" if src else f"an `arith.cmpi {pred}` in TTGIR" if pred else ""
        expl += (
            f"The mask is computed from {names}"
            + (f" ({cmp})" if cmp else "")
            + f", which `{vw}` marks `tt.divisibility = 16` and `{vn}` does not. For a bound check `offs < n` on "
            "contiguous offsets, AxisInfo's `CmpOpAxisInfoVisitor` sets the mask's constancy to gcd(contiguity of "
            "`offs`, divisibility of `offs`, divisibility of `n`): with `n` a multiple of 16 that is up to 16 "
            f"elements (enough for the {per}-element vectors of `{vw}`), without it 1, so every element in `{vn}` gets "
            f"its own predicated {n0.elem_bits}-bit instruction."
        )
    else:
        expl += f"In `{vn}` that constancy is lower, so the lowering splits each thread's vector."
    remedy_parts = []
    for an, _ in lost:
        fix = []
        if an.do_not_specialize:
            fix.append(
                f"remove `{an.name}` from `do_not_specialize` (the JIT then marks it divisible by 16 whenever "
                "its value is)"
            )
        if an.value.lstrip("-").isdigit() and int(an.value) % 16:
            fix.append(f"pad the tensor so that `{an.name}` is a multiple of 16")
        fix.append(
            f"compare with `tl.multiple_of(tl.full(offs.shape, {an.name}, tl.int32), 16)` instead of `{an.name}`, "
            f"only if every caller passes a multiple of 16 (a false hint lets the last vector read or write past "
            f"the bound; `tl.multiple_of({an.name}, 16)` on the parameter itself has no effect)"
        )
        remedy_parts.append("; ".join(fix))
    labels = [r[1].label for r in rows]
    ev = list({(e.variant, e.stage, e.line, e.text): e for e in ev}.values())
    return [
        Finding(
            "lower.mask-alignment",
            "major",
            f"Mask alignment splits {', '.join(labels[:3])}{' …' if len(labels) > 3 else ''} into "
            f"{n0.llir_bits}-bit accesses in `{vn}` ({w0.llir_bits}-bit in `{vw}`)",
            expl,
            ev,
            remedy="; ".join(remedy_parts) + "." if remedy_parts else None,
            stage="llir",
            predicts=vn,
        )
    ]


# ------------------------------------------------------------------------------------------------ PTX / SASS

_PTX_MEM_PREFIX = ("ld.global", "st.global", "cp.async", "ld.shared", "st.shared", "ldmatrix", "stmatrix")


def _width_note(keys: list[str]) -> str:
    """What the global memory instructions among ``keys`` move per thread, e.g. "`ld.global.b32` moves 4 bytes per
    thread and instruction, `ld.global.v4.b32` 16"; plus what ``cp.async`` is, when present."""
    sizes = []
    for k in keys:
        if k.startswith(("ld.global", "st.global")):
            m = re.search(r"\.(?:v(\d+)\.)?[a-z]+(\d+)$", k)
            if m:
                sizes.append((k, (int(m.group(1) or 1) * int(m.group(2))) // 8))
        elif re.match(r"^cp\.async \d+B$", k):
            sizes.append((k, int(k.split()[1][:-1])))
    out = ""
    if sizes:
        first, rest = sizes[0], sizes[1:]
        out = f"`{first[0]}` moves {first[1]} byte{'s' if first[1] != 1 else ''} per thread and instruction" + "".join(
            f", `{k}` {n}" for k, n in rest
        )
        out += ". "
    if any(k.startswith("cp.async") for k in keys):
        out += "`cp.async` copies global→shared memory without passing through registers."
    return out.strip()


def rule_ptx_memory(ctx: Context) -> list[Finding]:
    """``ptx.memory-ops``: global/shared memory instructions in PTX by kind and width."""
    ca, cb = ctx.fa.counts.get("ptx", {}), ctx.fb.counts.get("ptx", {})
    keys = sorted(
        {k for k in (*ca, *cb) if k.startswith(_PTX_MEM_PREFIX) and ca.get(k, 0) != cb.get(k, 0)},
        key=lambda k: (not k.startswith(("ld.global", "cp.async", "st.global")), k),
    )
    if not keys:
        return []
    ev: list[Evidence] = []
    for k in keys[:8]:
        for v, f, c in ((ctx.a, ctx.fa, ca), (ctx.b, ctx.fb, cb)):
            r = f.first_lines.get("ptx", {}).get(k)
            if r and c.get(k, 0):
                ev.append(_ev(v, r, f"{r.text}   ({c[k]}× {k})"))
    table = "; ".join(f"`{k}` {ca.get(k, 0)} vs {cb.get(k, 0)}" for k in keys[:10])

    def gmem(c: dict[str, int]) -> int:
        return sum(n for k, n in c.items() if k.startswith(("ld.global", "st.global", "cp.async ")))

    ga, gb = gmem(ca), gmem(cb)
    expl = (
        f"PTX memory instructions (`{ctx.a}` vs `{ctx.b}`): {table}. Global memory instructions in total: {ga} in "
        f"`{ctx.a}` vs {gb} in `{ctx.b}`{_ratio(ga, gb)}. " + _width_note(keys[:10]) + _warps_note(ctx)
    )

    def sync(c: dict[str, int]) -> int:
        return sum(n for k, n in c.items() if k.startswith(("ld.global", "st.global")))

    def cpa(c: dict[str, int]) -> int:
        return sum(n for k, n in c.items() if k.startswith("cp.async ") or k == "cp.async.bulk.tensor")

    if not _same_warps(ctx):
        predicts: str | None = None  # per-thread counts of different num_warps are not comparable
    elif bool(ca.get("cp.async.bulk.tensor")) != bool(cb.get("cp.async.bulk.tensor")):
        predicts = None  # TMA (one instruction per CTA) vs per-thread copies: counts not comparable
    elif cpa(ca) != cpa(cb):  # fewer asynchronous copies: loads wait in the loop
        predicts = ctx.a if cpa(ca) < cpa(cb) else ctx.b
    elif abs(sync(ca) - sync(cb)) > 0.2 * max(sync(ca), sync(cb), 1):
        predicts = ctx.a if sync(ca) > sync(cb) else ctx.b
    else:
        predicts = None
    return [
        Finding(
            "ptx.memory-ops",
            "major" if _same_warps(ctx) else "minor",
            f"PTX memory ops (`{ctx.a}`/`{ctx.b}`): "
            + ", ".join(f"{k} {ca.get(k, 0)}/{cb.get(k, 0)}" for k in keys[:4]),
            expl,
            ev,
            stage="ptx",
            predicts=predicts,
        )
    ]


def rule_ptx_mma(ctx: Context) -> list[Finding]:
    """``ptx.mma``: ``mma.sync``/``wgmma`` counts differ."""
    ca, cb = ctx.fa.counts.get("ptx", {}), ctx.fb.counts.get("ptx", {})
    keys = [k for k in ("mma.sync", "wgmma") if ca.get(k, 0) != cb.get(k, 0)]
    if not keys:
        return []
    ev = []
    for k in keys:
        for v, f, c in ((ctx.a, ctx.fa, ca), (ctx.b, ctx.fb, cb)):
            r = f.first_lines.get("ptx", {}).get(k)
            if r:
                ev.append(_ev(v, r, f"{r.text}   ({c.get(k, 0)}× {k})"))
    expl = "Matrix instructions: " + "; ".join(f"`{k}` {ca.get(k, 0)} vs {cb.get(k, 0)}" for k in keys) + "."
    return [Finding("ptx.mma", "minor", expl, expl, ev, stage="ptx")]


def rule_sass_calls(ctx: Context) -> list[Finding]:
    """``sass.division-calls`` / ``sass.calls``: SASS calls into subroutines (code that returns with ``RET``, such as
    ptxas' 64-bit division routine) differ. ``CALL`` instructions ptxas uses as branches (a predicated
    ``CALL.REL.NOINC`` out of a loop to code that ends in ``EXIT``) are control flow and not counted."""
    na, nb = len(ctx.fa.sass_calls), len(ctx.fb.sass_calls)
    if na == nb:
        return []
    more = ctx.a if na > nb else ctx.b
    f = ctx.facts(more)
    ev = [_ev(more, r, f"{r.text}   ({len(f.sass_calls)} subroutine call(s))") for r in f.sass_calls[:2]]
    for v, fx in ((ctx.a, ctx.fa), (ctx.b, ctx.fb)):
        ev.append(Evidence(v, "sass", None, f"{fx.counts.get('sass', {}).get('instructions', 0)} SASS instructions"))
    divs = sum(_c(f, "ptx", k) for k in ("div.s64", "rem.s64", "div.u64", "rem.u64"))
    expl = (
        f"SASS subroutine calls (`CALL` to code that returns with `RET`): {na} in `{ctx.a}` vs {nb} in `{ctx.b}`. "
        + (
            f"They call ptxas' 64-bit integer division routine ({divs} `div.s64`/`rem.s64` in PTX): each call is a "
            "subroutine of tens of instructions with a return jump, on the path of every index computation."
            if divs
            else "The PTX has no 64-bit division; ptxas emits such subroutines for operations without a single "
            "hardware instruction (e.g. some divisions and math functions); the SASS listing does not name the routine."
        )
    )
    return [
        Finding(
            "sass.division-calls" if divs else "sass.calls",
            "major" if divs else "info",
            f"`{more}` calls a software routine in SASS ({max(na, nb)} `CALL`)",
            expl,
            ev,
            stage="sass",
            predicts=more,
        )
    ]


def rule_sass_instructions(ctx: Context) -> list[Finding]:
    """``sass.instructions``: SASS instruction count differs by more than 10 %, with the memory ops that differ."""
    ca, cb = ctx.fa.counts.get("sass", {}), ctx.fb.counts.get("sass", {})
    na, nb = ca.get("instructions", 0), cb.get("instructions", 0)
    if not na or not nb or abs(na - nb) <= 0.1 * max(na, nb):
        return []
    keys = [
        k
        for k in sorted({*ca, *cb})
        if k.split(".")[0] in ("LDG", "STG", "LDGSTS", "LDS", "STS", "LDSM", "HMMA", "HGMMA", "UTMALDG")
        and ca.get(k, 0) != cb.get(k, 0)
        and k != "LDGSTS"
    ]
    ev = [Evidence(ctx.a, "sass", None, f"{na} instructions"), Evidence(ctx.b, "sass", None, f"{nb} instructions")]
    for k in keys[:6]:
        for v, f, c in ((ctx.a, ctx.fa, ca), (ctx.b, ctx.fb, cb)):
            r = f.first_lines.get("sass", {}).get(k)
            if r and c.get(k, 0):
                ev.append(_ev(v, r, f"{r.text}   ({c[k]}× {k})"))
    expl = (
        f"SASS has {na} instructions in `{ctx.a}` and {nb} in `{ctx.b}` ({na / nb:.2f}×)."
        + (
            " Memory/matrix ops that differ: "
            + "; ".join(f"`{k}` {ca.get(k, 0)} vs {cb.get(k, 0)}" for k in keys[:8])
            + "."
            if keys
            else ""
        )
        + _warps_note(ctx)
    )
    return [
        Finding(
            "sass.instructions",
            "minor" if _same_warps(ctx) else "info",
            f"SASS instruction count {na} in `{ctx.a}` vs {nb} in `{ctx.b}` ({na / nb:.2f}×)",
            expl,
            ev,
            stage="sass",
            predicts=(ctx.a if na > nb else ctx.b) if _same_warps(ctx) else None,
        )
    ]


# ------------------------------------------------------------------------------------------------ resources


def _res_ev(v: str, f: VariantFacts, key: str, fallback: str) -> Evidence:
    r = f.resource_refs.get(key)
    return _ev(v, r) if r else Evidence(v, "resources", None, fallback)


def rule_registers(ctx: Context) -> list[Finding]:
    """``resources.registers``: registers per thread (ptxas) differ by at least 8 or one variant is at the cap."""
    ra, rb = ctx.fa.resources.get("registers"), ctx.fb.resources.get("registers")
    if ra is None or rb is None or ra == rb or (abs(ra - rb) < 8 and max(ra, rb) < 255):
        return []
    more = ctx.a if ra > rb else ctx.b
    ev = [
        _res_ev(ctx.a, ctx.fa, "registers", f"{ra} registers"),
        _res_ev(ctx.b, ctx.fb, "registers", f"{rb} registers"),
    ]
    cap = max(ra, rb) >= 255
    expl = (
        f"ptxas allocates {ra} registers per thread in `{ctx.a}` and {rb} in `{ctx.b}`"
        + (" (255 is the hardware limit: ptxas had to fit the kernel under the cap)" if cap else "")
        + ". More registers per thread mean fewer warps can be resident per SM."
        + _warps_note(ctx)
    )
    sev: Severity = "major" if cap or abs(ra - rb) >= 32 or max(ra, rb) >= 1.5 * min(ra, rb) else "minor"
    if not _same_warps(ctx) and not cap:
        sev = "minor" if sev == "major" else "info"
    return [
        Finding(
            "resources.registers",
            sev,
            f"Registers per thread: {ra} in `{ctx.a}` vs {rb} in `{ctx.b}`",
            expl,
            ev,
            stage="resources",
            predicts=more,
        )
    ]


def rule_spills(ctx: Context) -> list[Finding]:
    """``resources.spills``: spill stores/loads (ptxas ``-v``) differ."""

    def sp(f: VariantFacts) -> tuple[int, int]:
        return (f.resources.get("spill_store_bytes") or 0, f.resources.get("spill_load_bytes") or 0)

    sa, sb = sp(ctx.fa), sp(ctx.fb)
    if sa == sb:
        return []
    more = ctx.a if sum(sa) > sum(sb) else ctx.b
    ev = [
        _res_ev(ctx.a, ctx.fa, "spills", f"{sa[0]} B spill stores, {sa[1]} B spill loads"),
        _res_ev(ctx.b, ctx.fb, "spills", f"{sb[0]} B spill stores, {sb[1]} B spill loads"),
    ]
    expl = (
        f"Register spills: {sa[0]} B stored / {sa[1]} B loaded in `{ctx.a}`, {sb[0]} B / {sb[1]} B in `{ctx.b}`. "
        "Spilled values live in local memory (cached in L1, backed by DRAM) and cost a memory round trip on each use."
    )
    return [
        Finding(
            "resources.spills",
            "major" if max(sum(sa), sum(sb)) >= 64 else "minor",
            f"Register spills: {sa[0]}/{sa[1]} B in `{ctx.a}` vs {sb[0]}/{sb[1]} B in `{ctx.b}`",
            expl,
            ev,
            stage="resources",
            predicts=more,
        )
    ]


def rule_shared(ctx: Context) -> list[Finding]:
    """``resources.shared``: dynamic shared memory per CTA (Triton metadata ``shared``) differs."""
    sa, sb = ctx.fa.resources.get("shared_bytes"), ctx.fb.resources.get("shared_bytes")
    if sa is None or sb is None or sa == sb:
        return []
    ev = [
        _res_ev(ctx.a, ctx.fa, "shared", f"shared = {sa} B (metadata)"),
        _res_ev(ctx.b, ctx.fb, "shared", f"shared = {sb} B (metadata)"),
    ]
    expl = (
        f"Shared memory per CTA: {_kb(sa)} in `{ctx.a}` vs {_kb(sb)} in `{ctx.b}` (Triton's `metadata.shared`, "
        "the dynamic shared memory the launcher requests). Explicit TTGIR buffers (`ttg.local_alloc`): "
        + "; ".join(
            f"`{v}`: "
            + (", ".join(f"{b.depth}×{'x'.join(map(str, b.tile))} = {_kb(b.bytes)}" for b in f.buffers) or "none")
            + f" (total {_kb(sum(b.bytes for b in f.buffers))})"
            for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb))
        )
        + "; the rest is scratch the compiler reserves for layout conversions and reductions, reusing freed buffers."
    )
    return [
        Finding(
            "resources.shared",
            "minor",
            f"Shared memory: {_kb(sa)} in `{ctx.a}` vs {_kb(sb)} in `{ctx.b}`",
            expl,
            ev,
            stage="resources",
        )
    ]


def rule_occupancy(ctx: Context) -> list[Finding]:
    """``resources.occupancy``: CTAs per SM allowed by registers/shared memory/warps/CTA slots differ."""
    oa, ob = ctx.fa.occupancy, ctx.fb.occupancy
    if oa is None or ob is None or (oa.ctas_per_sm == ob.ctas_per_sm and oa.warps_per_sm == ob.warps_per_sm):
        return []
    ev = []
    for v, o in ((ctx.a, oa), (ctx.b, ob)):
        lim = ", ".join(f"{k} {n}" for k, n in o.limits.items())
        ev.append(
            Evidence(
                v,
                "resources",
                None,
                f"{o.ctas_per_sm} CTAs/SM ({o.warps_per_sm} warps), limited by {o.limiter} [{lim}]",
            )
        )
    wa, wb = oa.warps_per_sm, ob.warps_per_sm
    lower = ctx.a if wa < wb else ctx.b if wb < wa else None
    expl = (
        f"On {ctx.fa.target} one SM holds {oa.ctas_per_sm} CTA(s) of `{ctx.a}` ({wa} warps; limited by {oa.limiter}) "
        f"and {ob.ctas_per_sm} of `{ctx.b}` ({wb} warps; limited by {ob.limiter}). "
        + (
            f"Fewer resident warps in `{lower}` leave less parallelism to hide memory latency. "
            if lower
            else f"The resident warps are the same ({wa}), in CTAs of different sizes: the same parallelism to hide "
            "memory latency. "
        )
        + f"Limits used: {oa.source}."
    )
    big = min(wa, wb) == 0 or max(wa, wb) >= 2 * min(wa, wb)
    return [
        Finding(
            "resources.occupancy",
            "major" if big else "minor" if lower else "info",
            f"Occupancy: {oa.ctas_per_sm} CTAs ({wa} warps) per SM in `{ctx.a}` vs {ob.ctas_per_sm} ({wb} warps) in "
            f"`{ctx.b}` (limited by {oa.limiter} / {ob.limiter})",
            expl,
            ev,
            stage="resources",
            predicts=lower,
        )
    ]


RuleFn = Callable[[Context], list[Finding]]

# Rules in chain order (earliest stage first); ids each may emit.
RULES: list[tuple[RuleFn, tuple[str, ...]]] = [
    (rule_constexpr_one, ("spec.constexpr-one-lost",)),
    (rule_divisibility, ("spec.divisibility-lost",)),
    (rule_type_changed, ("spec.type-changed",)),
    (rule_constexpr_changed, ("spec.constexpr-changed",)),
    (rule_options, ("options.changed",)),
    (rule_i64, ("ttir.i64-index-math",)),
    (rule_divrem64, ("ttir.divrem-64",)),
    (rule_loops, ("loop.flattened", "loop.nest")),
    (rule_num_stages_attr, ("loop.num-stages",)),
    (rule_contiguity, ("coalesce.contiguity",)),
    (rule_vector_width, ("coalesce.vector-width",)),
    (rule_mma, ("layout.mma",)),
    (rule_pipelined, ("pipeline.load-not-pipelined",)),
    (rule_buffers, ("pipeline.buffers",)),
    (rule_async_copies, ("pipeline.async-copies",)),
    (rule_wgmma_wait, ("pipeline.wgmma-wait",)),
    (rule_tma, ("ttgir.tma",)),
    (rule_mask_alignment, ("lower.mask-alignment",)),
    (rule_ptx_memory, ("ptx.memory-ops",)),
    (rule_ptx_mma, ("ptx.mma",)),
    (rule_sass_calls, ("sass.division-calls", "sass.calls")),
    (rule_sass_instructions, ("sass.instructions",)),
    (rule_registers, ("resources.registers",)),
    (rule_spills, ("resources.spills",)),
    (rule_shared, ("resources.shared",)),
    (rule_occupancy, ("resources.occupancy",)),
]
RULE_IDS: tuple[str, ...] = tuple(i for _, ids in RULES for i in ids) + ("time.measured",)

# Which findings can cause which (candidates in priority order); used to link the chain.
_SPEC = ["spec.constexpr-one-lost", "spec.divisibility-lost", "spec.type-changed"]
CAUSES: dict[str, list[str]] = {
    "ttir.i64-index-math": ["spec.type-changed"],
    "ttir.divrem-64": ["ttir.i64-index-math"],
    "loop.flattened": ["spec.constexpr-changed"],
    "loop.nest": ["spec.constexpr-changed"],
    "loop.num-stages": ["spec.constexpr-changed", "options.changed"],
    "coalesce.contiguity": [*_SPEC, "ttir.i64-index-math"],
    "coalesce.vector-width": ["coalesce.contiguity", *_SPEC, "options.changed"],
    "layout.mma": ["options.changed", "spec.constexpr-changed"],
    "pipeline.load-not-pipelined": ["coalesce.vector-width", "loop.flattened", "loop.num-stages", "options.changed"],
    "pipeline.buffers": [
        "pipeline.load-not-pipelined",
        "loop.num-stages",
        "loop.flattened",
        "options.changed",
        "spec.constexpr-changed",
    ],
    "pipeline.async-copies": ["pipeline.load-not-pipelined", "loop.num-stages", "loop.flattened", "options.changed"],
    "pipeline.wgmma-wait": ["pipeline.load-not-pipelined", "pipeline.buffers", "loop.flattened", "loop.num-stages"],
    "ttgir.tma": [],
    "lower.mask-alignment": [*_SPEC, "spec.constexpr-changed", "options.changed"],
    "ptx.memory-ops": [
        "coalesce.vector-width",
        "lower.mask-alignment",
        "pipeline.async-copies",
        "pipeline.load-not-pipelined",
        "coalesce.contiguity",
        "loop.flattened",
        "ttgir.tma",
        "options.changed",
    ],
    "ptx.mma": ["layout.mma"],
    "sass.division-calls": ["ttir.divrem-64"],
    "sass.calls": [],
    "sass.instructions": ["ptx.memory-ops", "sass.division-calls", "ttir.i64-index-math"],
    "resources.registers": [
        "ptx.memory-ops",
        "loop.flattened",
        "ttir.i64-index-math",
        "sass.division-calls",
        "options.changed",
    ],
    "resources.spills": ["resources.registers"],
    "resources.shared": ["pipeline.buffers", "loop.num-stages", "loop.flattened", "options.changed"],
    "resources.occupancy": ["resources.registers", "resources.shared", "options.changed"],
}


# Causes used only when none of a finding's CAUSES is present: weaker, structural explanations (more pipeline buffers
# or another loop nest also change register use, but when PTX memory ops differ those are the direct reason).
FALLBACK_CAUSES: dict[str, list[str]] = {
    "resources.registers": ["pipeline.buffers", "pipeline.async-copies", "loop.nest", "spec.constexpr-changed"],
    "resources.spills": ["ptx.memory-ops", "loop.flattened", "pipeline.buffers", "loop.nest"],
    "sass.instructions": ["loop.nest", "loop.flattened", "pipeline.async-copies"],
}


# Links that hold only in one direction: (cause, effect) → +1 when both must predict the same variant, -1 when
# opposite ones. Extra staged memory instructions explain more registers only in the variant that has them; more
# pipeline buffers (predicted for the variant with fewer) explain more registers in the other one.
DIRECTION: dict[tuple[str, str], int] = {
    ("ptx.memory-ops", "resources.registers"): 1,
    ("ptx.memory-ops", "resources.spills"): 1,
    ("resources.registers", "resources.spills"): 1,
    ("ttir.i64-index-math", "resources.registers"): 1,
    ("sass.division-calls", "resources.registers"): 1,
    ("ttir.i64-index-math", "sass.instructions"): 1,
    ("sass.division-calls", "sass.instructions"): 1,
    ("pipeline.buffers", "resources.registers"): -1,
    ("pipeline.buffers", "resources.spills"): -1,
    ("pipeline.async-copies", "resources.registers"): -1,
}

# Stage-0 findings whose explanation predicts effects downstream, and the id prefixes of those effects. When none is
# present (the kernel states the fact another way, e.g. a `tl.multiple_of` hint), the finding is kept as information.
EFFECTS: dict[str, tuple[str, ...]] = {
    "spec.divisibility-lost": ("coalesce.", "lower.", "pipeline.", "ptx.memory-ops"),
    "spec.constexpr-one-lost": ("coalesce.", "lower.", "pipeline.", "ptx.memory-ops"),
}


def run_rules(ctx: Context) -> list[Finding]:
    """Run every rule; findings in rule order (the chain order before linking)."""
    out: list[Finding] = []
    for fn, _ in RULES:
        out.extend(fn(ctx))
    return out
