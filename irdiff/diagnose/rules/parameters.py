"""The kernels' parameter lists as a whole, from the pairing by role (:mod:`irdiff.diagnose.params`).

* ``spec.param-added`` — a parameter only one variant has, named with its role ("`ks0` is new in `dynamic`: the
  row stride, a runtime i64 (no divisibility)"). A new integer that enters addresses (a stride or an offset) or masks
  is a root cause: in the other variant that quantity is a compile-time constant (or absent), so AxisInfo knows its
  divisibility, and an ``i64`` makes the index arithmetic 64-bit. New scalars used only in arithmetic (an ``eps``
  passed instead of folded into the code) are named as such and blamed for nothing.
* ``config.changed`` — the kernels' configuration differs: ``tl.constexpr`` parameters both kernels declare (tile
  sizes such as TorchInductor's ``XBLOCK``/``R0_BLOCK``, an autotuner's choice), with the launch options (``num_warps``,
  ``num_stages``, ``num_ctas``, ``maxnreg``) that differ beside them. Launch options alone are ``options.changed``'s
  (one finding for one fact: it is the root then, and says what each option is). It is the root of ``spec.constexpr-changed`` and ``options.changed``
  and the root (linked by the root engine when it is the only root) of effects that no signature finding explains: layouts, buffers,
  loop structure, instruction counts and resources that follow from the configuration alone.

Both read :attr:`Context.pairing <irdiff.diagnose.rules.common.Context.pairing>`; the other rules compare "the
same parameter" of two variants through :meth:`VariantFacts.arg <irdiff.diagnose.facts.VariantFacts.arg>`, which
follows the same pairing.
"""

from __future__ import annotations

from typing import Any

from irdiff.diagnose.model import Evidence, Finding
from irdiff.diagnose.params import ParamPairing, ParamRole, addressing, describe_role
from irdiff.diagnose.rules.common import Context
from irdiff.diagnose.rules.registry import Emits, rule

OPTION_KEYS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def _names(items: list[str]) -> str:
    quoted = [f"`{x}`" for x in items]
    if len(quoted) <= 1:
        return "".join(quoted)
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _arg_ref(facts: Any, name: str) -> Any:
    arg = next((x for x in facts.args if x.name == name), None)
    return getattr(arg, "ttir", None)


def _added(
    side: str, other: str, new: list[ParamRole], pairing: ParamPairing, facts: Any, labels: tuple[str, str]
) -> Finding | None:
    rooted = [r for r in new if addressing(r) or (r.kind == "int" and "mask" in r.features)]
    if not rooted:
        return None
    weak = [r for r in rooted if not r.divisibility or r.type == "i64"]
    main = rooted[0]
    title = f"`{main.name}` is new in `{side}`: {describe_role(main)}"
    if len(rooted) > 1:
        title += f" (+{len(rooted) - 1} more)"
    parts = [
        f"`{side}` takes {len(new)} parameter{'s' if len(new) != 1 else ''} that `{other}` does not have; the "
        "parameters are paired by role (pointer or scalar, element type, the loads, stores, masks and index "
        "expressions each one feeds), not by name or position."
    ]
    for r in rooted:
        parts.append(f"`{r.name}`: {describe_role(r)}.")
    addr = [r for r in rooted if addressing(r)]
    strides = [r.name for r in addr]
    blind = [r for r in addr if not r.divisibility]  # no `tt.divisibility`: AxisInfo knows nothing of it
    masks = [r.name for r in rooted if "mask" in r.features and r.name not in strides]
    if strides:
        parts.append(
            f"In `{other}` the addresses have no such parameter: that quantity is a compile-time constant folded "
            "into the code, whose divisibility AxisInfo knows."
        )
    if blind:
        parts.append(
            f"A runtime {_names([r.name for r in blind])} without `tt.divisibility` tells it nothing: offsets "
            "computed with it can only be assumed one element aligned, which caps the vector width of every load "
            "and store addressed with it."
        )
    known = [r for r in addr if r.divisibility]
    if known:
        parts.append(
            "; ".join(f"`{r.name}` is specialized divisible by {r.divisibility}" for r in known)
            + " (`tt.divisibility`): offsets computed with "
            + ("it keep" if len(known) == 1 else "them keep")
            + " that alignment, so the vector width need not drop."
        )
    if any(r.type == "i64" for r in rooted):
        parts.append("As an `i64` it also makes every index computed from it 64-bit (two instructions per op).")
    if masks:
        parts.append(
            f"{_names(masks)} bound{'s' if len(masks) == 1 else ''} the masks: without a known divisibility the "
            "lowering cannot prove that several consecutive mask bits are equal, so masked accesses stay narrow."
        )
    others = [r for r in new if r not in rooted]
    if others:
        parts.append(
            "Also only in `" + side + "`: " + "; ".join(f"`{r.name}`, {describe_role(r)}" for r in others) + "."
        )
    renamed = [p for p in pairing.renamed if p.a is not None and p.b is not None]
    if renamed:
        parts.append(
            "Paired by role, not by name: "
            + "; ".join(
                f"`{p.a.name}` of `{labels[0]}` is `{p.b.name}` of `{labels[1]}` ({describe_role(p.b)})"
                for p in renamed
                if p.a and p.b
            )
            + "."
        )
    ev = [
        Evidence(
            side,
            "spec",
            None,
            f"{r.name}: {r.type}{' div' + str(r.divisibility) if r.divisibility else ''} — {describe_role(r)}",
        )
        for r in rooted
    ]
    ev += [Evidence(side, "ttir", ref.line, ref.text) for r in rooted if (ref := _arg_ref(facts, r.name)) is not None]
    remedy = None
    if blind:
        first = blind[0]
        hint = (
            f"`tl.multiple_of(row * {first.name}, 16)` on the computed offset"
            if "stride" in first.features
            else f"`tl.multiple_of` on the offset computed from `{first.name}`"
        )
        remedy = (
            f"when every caller's {_names([r.name for r in blind])} is a multiple of 16 elements, say so in the "
            f"kernel with {hint} (a hint on the bare parameter has no effect), or pass it as a multiple of 16 from a "
            "caller that lets the JIT specialize it; with TorchInductor, compile this shape statically "
            "(`dynamic=False`, or `torch._dynamo.mark_static` on the dimension)"
        )
    wide = [r.name for r in addr if r.type == "i64"]
    if wide:
        keep = (
            f"when every index fits below 2^31, pass {_names(wide)} as a 32-bit integer (the JIT types an integer "
            "argument i64 only when it is annotated `tl.int64` or its value does not fit in 32 bits)"
        )
        remedy = f"{remedy}; {keep}" if remedy else keep
    return Finding(
        id="spec.param-added",
        severity="major" if weak else "minor",
        title=title,
        explanation=" ".join(p for p in parts if p),
        evidence=ev,
        remedy=remedy,
        stage="spec",
        predicts=side if weak else None,
    )


def _param_added(ctx: Any, pairing: ParamPairing) -> list[Finding]:
    ranked: list[tuple[tuple[bool, bool, str], Finding]] = []
    for side, other, which, facts in ((ctx.a, ctx.b, "a", ctx.fa), (ctx.b, ctx.a, "b", ctx.fb)):
        new = pairing.only(which)
        f = _added(side, other, new, pairing, facts, (ctx.a, ctx.b))
        if f is not None:
            # the weightier first; ties go to the variant that gains an address parameter, then to the first
            # variant name (never to the inspected side: both orders of the variants give the same finding)
            ranked.append(((f.severity != "major", not any(addressing(r) for r in new), side), f))
    out = [f for _, f in sorted(ranked, key=lambda kf: kf[0])]
    if len(out) > 1:  # one finding per id: keep the weightier, fold the other's title into its explanation
        out[0].explanation += f" In the other direction: {out[1].title}."
        out[0].evidence += out[1].evidence
        out = out[:1]
    return out


def _config_changed(ctx: Any, pairing: ParamPairing) -> list[Finding]:
    cx: list[tuple[str, Any, Any]] = [
        (p.a.name, p.a.constexpr, p.b.constexpr)
        for p in pairing.pairs
        if p.how == "config" and p.a and p.b and str(p.a.constexpr) != str(p.b.constexpr)
    ]
    # A `tl.constexpr` only one kernel declares is a difference of the source (another kernel), not of the
    # configuration: it is left to the signature findings.
    opts: list[tuple[str, Any, Any]] = [(k, ctx.fa.options.get(k), ctx.fb.options.get(k)) for k in OPTION_KEYS]
    opts = [o for o in opts if o[1] != o[2] and o[1] is not None and o[2] is not None]
    if not cx:
        # launch options alone: ``options.changed`` says what they are and what each does (one finding for one
        # fact); it is the root then
        return []
    items = [f"`{k}` = {_shown(x)} in `{ctx.a}` vs {_shown(y)} in `{ctx.b}`" for k, x, y in cx + opts]
    names = [k for k, _, _ in cx + opts]
    # a code change beside the configuration: the kernels' own text differs (the python stage)
    src_a, src_b = ctx.python.get(ctx.a, ""), ctx.python.get(ctx.b, "")
    code_too = bool(src_a and src_b and src_a != src_b)
    expl = (
        "The two kernels were compiled with different configurations: "
        + "; ".join(items)
        + ". These values are not part of the kernel's signature: they are chosen per compile (a `tl.constexpr` "
        "argument, an autotuner's pick among its configs — TorchInductor benchmarks several `XBLOCK`/`R0_BLOCK` "
        "choices per kernel and keeps the fastest on this run —, or the launch options). A `tl.constexpr` value is "
        "compiled into the code: as a tile size it decides the layouts (elements per thread), the loop trip "
        "counts, the scratch for reductions and layout conversions, and so the instruction mix and resources; "
        "differences below that no signature finding explains follow from the configuration alone."
        + (" What the launch options do is said by `options.changed`." if opts else "")
        + (
            " The kernels' source differs too: compare kernels with the same configuration to see what the code "
            "change itself does."
            if code_too
            else ""
        )
    )
    ev = [
        Evidence(v, "spec" if k not in OPTION_KEYS else "options", None, f"{k} = {_shown(val)}")
        for k, x, y in cx + opts
        for v, val in ((ctx.a, x), (ctx.b, y))
    ]
    return [
        Finding(
            id="config.changed",
            severity="major",
            title=f"Configuration differs: {_names(names)} "
            f"({', '.join(f'{_shown(x)}→{_shown(y)}' for _, x, y in cx + opts)})",
            explanation=expl,
            evidence=ev,
            stage="spec",
        )
    ]


@rule(Emits("spec.param-added"), reads=("pairing", "args"))
def rule_param_added(ctx: Context) -> list[Finding]:
    """``spec.param-added``: parameters only one variant has, named by role (see the module docstring)."""
    return _param_added(ctx, ctx.pairing) if ctx.pairing is not None else []


def _shown(value: Any) -> str:
    """A configuration value as ``config.changed`` prints it everywhere (title, explanation, evidence): ``—`` where
    a variant has no value for it."""
    return "—" if value is None else str(value)


@rule(Emits("config.changed"), reads=("pairing", "options"))
def rule_config_changed(ctx: Context) -> list[Finding]:
    """``config.changed``: the constexpr configuration or the launch options differ (see the module docstring)."""
    return _config_changed(ctx, ctx.pairing) if ctx.pairing is not None else []
