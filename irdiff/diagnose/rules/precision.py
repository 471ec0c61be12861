"""Numeric precision: ``tl.dot`` input precision and accumulation, fp64 arithmetic, fp32 division and approximate
math. Every finding says whether the two variants can compute different numbers, not only which is faster.

Facts: :class:`~irdiff.diagnose.mechfacts.MechFacts` (TTIR ``tt.dot`` attributes, ``f64`` ops) and the PTX/SASS
counts (``div.full.f32`` vs ``div.rn.f32``, ``ex2.approx.f32``, ``f64 ops``, ``DFMA``/``DMUL``/``DADD``).
"""

from __future__ import annotations

from irdiff.diagnose.facts import VariantFacts
from irdiff.diagnose.mechfacts import DotFact, MechFacts
from irdiff.diagnose.model import Evidence, Finding, Severity
from irdiff.diagnose.rules.common import Context, _c, _ev
from irdiff.diagnose.rules.registry import Emits, rule

_PRECISION_WORDS = {
    "ieee": "`ieee`: exact fp32 products (Triton lowers an fp32 dot with ieee precision to FMA instructions; "
    "NVIDIA tensor cores have no fp32 mode)",
    "tf32": "`tf32`: each fp32 input is rounded to tf32 (10-bit mantissa, about 3 decimal digits) and multiplied "
    "on the tensor cores, accumulating in fp32",
    "tf32x3": "`tf32x3`: each input is split into a tf32 high part and a tf32 remainder and three tensor-core "
    "products are summed (hi·hi + hi·lo + lo·hi), close to fp32 accuracy for 3× the MMA instructions",
    "bf16x3": "`bf16x3`: three bf16 products per fp32 product",
    "bf16x6": "`bf16x6`: six bf16 products per fp32 product",
}


def mech(f: VariantFacts) -> MechFacts:
    """The variant's mechanism facts (empty when the facts were built without them)."""
    return f.mech if f.mech is not None else MechFacts()


def _dot_label(d: DotFact) -> str:
    what = f"`{d.name}` " if d.name else ""
    shape = "x".join(map(str, d.shape)) if d.shape else "?"
    return f"{what}dot {shape} ({d.a_type} × {d.b_type})"


def pair_dots(fa: VariantFacts, fb: VariantFacts) -> list[tuple[DotFact, DotFact]]:
    """Dots of two variants paired in program order (the same ``tl.dot`` calls, when both have the same number)."""
    da, db = mech(fa).dots, mech(fb).dots
    return list(zip(da, db, strict=False)) if len(da) == len(db) else []


@rule(
    Emits("precision.dot-input", causes=("spec.constexpr-changed", "options.changed")),
    reads=("mech",),
)
def rule_dot_input(ctx: Context) -> list[Finding]:
    """``precision.dot-input``: an fp32 ``tl.dot``'s ``input_precision`` (``allow_tf32`` in older code) differs:
    ieee (FMA), tf32 (one MMA) or tf32x3 (three MMAs)."""
    out: list[Finding] = []
    for x, y in pair_dots(ctx.fa, ctx.fb):
        if not x.precision or not y.precision or x.precision == y.precision:
            continue
        ev = [_ev(ctx.a, x.ttir), _ev(ctx.b, y.ttir)]
        ev += [_ev(v, d.python) for v, d in ((ctx.a, x), (ctx.b, y)) if d.python]
        expl = (
            f"{_dot_label(x)} uses input precision `{x.precision}` in `{ctx.a}` and `{y.precision}` in `{ctx.b}`. "
            f"{_PRECISION_WORDS.get(x.precision, x.precision)}; {_PRECISION_WORDS.get(y.precision, y.precision)}. "
            "Results can differ numerically: tf32 keeps about 3 significant decimal digits of each input, so "
            "products differ from fp32 (ieee) in the 4th digit; tf32x3 is close to fp32. The precision is an "
            "argument of `tl.dot` (`input_precision=`, or `allow_tf32=` in older code; the default is "
            "`tf32` for fp32 inputs, set by `TRITON_F32_DEFAULT` or the backend option `default_dot_input_precision`)."
        )
        spelled = [v for v, d in ((ctx.a, x), (ctx.b, y)) if d.python and "allow_tf32" in d.python.text]
        if spelled:
            expl += (
                f" `{spelled[0]}` spells it `allow_tf32=` (deprecated): `allow_tf32=False` means `ieee`, "
                "`True` or unset means `tf32`."
            )
        slow = None
        rank = {"tf32": 0, "tf32x3": 1, "bf16x3": 1, "bf16x6": 2, "ieee": 3}
        ra, rb = rank.get(x.precision, 1), rank.get(y.precision, 1)
        if ra != rb:
            slow = ctx.a if ra > rb else ctx.b
        out.append(
            Finding(
                "precision.dot-input",
                "major",
                f"{_dot_label(x)}: input precision `{x.precision}` in `{ctx.a}` vs `{y.precision}` in `{ctx.b}` "
                "(results can differ numerically)",
                expl,
                ev,
                stage="ttir",
                predicts=slow,
            )
        )
        break
    return out


@rule(
    Emits("precision.dot-accumulate", causes=("spec.constexpr-changed", "options.changed")),
    reads=("mech",),
)
def rule_dot_accumulate(ctx: Context) -> list[Finding]:
    """``precision.dot-accumulate``: how a dot accumulates differs: ``max_num_imprecise_acc`` (fp8), the
    accumulator/output type, or ``acc += tl.dot(a, b)`` (a separate fp32 add) vs ``tl.dot(a, b, acc)``."""
    out: list[Finding] = []
    for x, y in pair_dots(ctx.fa, ctx.fb):
        parts = []
        numeric = False
        slower: str | None = None
        if x.max_imprecise_acc != y.max_imprecise_acc:

            def acc_words(n: int | None) -> str:
                return "the default (no promotion: the whole K in the fast accumulator)" if n is None else str(n)

            parts.append(
                f"`max_num_imprecise_acc` is {acc_words(x.max_imprecise_acc)} in `{ctx.a}` and "
                f"{acc_words(y.max_imprecise_acc)} in `{ctx.b}`: an fp8 `wgmma` accumulates that many products in "
                "the tensor core's reduced-precision accumulator before Triton adds them into a separate fp32 "
                "accumulator (a smaller value means more promotions: more accurate, more instructions and registers)"
            )
            numeric = True
            big = 1 << 62
            va = x.max_imprecise_acc if x.max_imprecise_acc is not None else big
            vb = y.max_imprecise_acc if y.max_imprecise_acc is not None else big
            slower = ctx.a if va < vb else ctx.b
        if x.acc_type != y.acc_type:
            parts.append(
                f"the accumulator/output type is `{x.acc_type}` in `{ctx.a}` and `{y.acc_type}` in `{ctx.b}` "
                "(`out_dtype=`): a narrower accumulator rounds every partial sum"
            )
            numeric = True
        if x.acc_chained != y.acc_chained:
            chained, sep = (ctx.a, ctx.b) if x.acc_chained else (ctx.b, ctx.a)
            parts.append(
                f"`{chained}` passes the accumulator into the dot (`tl.dot(a, b, acc)`: the MMA adds into it), "
                f"`{sep}` adds the product afterwards (`acc += tl.dot(a, b)`: a zero-initialised MMA result plus "
                "a separate elementwise `arith.addf`, one more register tile and add per iteration; the sums are "
                "rounded in a different order, so results can differ in the last bits)"
            )
            numeric = True
        if not parts:
            continue
        ev = [_ev(ctx.a, x.ttir), _ev(ctx.b, y.ttir)]
        ev += [_ev(v, d.python) for v, d in ((ctx.a, x), (ctx.b, y)) if d.python]
        expl = f"{_dot_label(x)}: " + "; ".join(parts) + "."
        if numeric:
            expl += " Results can differ numerically."
        out.append(
            Finding(
                "precision.dot-accumulate",
                "minor",
                (
                    f"{_dot_label(x)} accumulates in `{x.acc_type}` in `{ctx.a}` vs `{y.acc_type}` in `{ctx.b}`"
                    if x.acc_type != y.acc_type
                    else f"{_dot_label(x)} accumulates differently in `{ctx.a}` and `{ctx.b}`"
                ),
                expl,
                ev,
                stage="ttir",
                predicts=slower,
            )
        )
        break
    return out


@rule(
    Emits("precision.dot-upcast", causes=("spec.type-changed", "spec.constexpr-changed")),
    reads=("mech",),
)
def rule_dot_upcast(ctx: Context) -> list[Finding]:
    """``precision.dot-upcast``: a dot's operands are converted to a wider type right before it in one variant
    (e.g. fp8 upcast to fp16 because the target has no MMA for that fp8 format, or mixed operand types)."""
    for x, y in pair_dots(ctx.fa, ctx.fb):
        if x.upcast == y.upcast:
            continue
        if x.upcast and y.upcast:  # both convert, from other types (int8 read signed vs unsigned, fp8 vs fp16)
            return [_upcasts_differ(ctx, x, y)]
        up, other = (ctx.a, ctx.b) if x.upcast else (ctx.b, ctx.a)
        d = x if up == ctx.a else y
        ev = [_ev(up, d.ttgir or d.ttir, (d.ttgir or d.ttir).text[:220])]
        expl = (
            f"In `{up}` the operands of {_dot_label(d)} are converted ({', '.join(d.upcast)}) right before the MMA; "
            f"in `{other}` they are used as loaded. An upcast means the MMA runs at the wider type's rate (fp16 "
            "tensor cores run at half the fp8 rate on Hopper/Blackwell) and the conversion costs instructions and "
            "registers; values are exact after an upcast, so results differ only through the accumulation."
        )
        return [
            Finding(
                "precision.dot-upcast",
                "major",
                f"`{up}` upcasts the operands of {_dot_label(d)} before the MMA ({', '.join(d.upcast)})",
                expl,
                ev,
                stage="ttgir",
                predicts=up,
            )
        ]
    return []


def _upcasts_differ(ctx: Context, x: DotFact, y: DotFact) -> Finding:
    """Both variants convert the dot's operands right before it, differently (``i8 → f16`` vs ``u8 → f16``)."""
    ua, ub = ", ".join(f"`{u}`" for u in x.upcast), ", ".join(f"`{u}`" for u in y.upcast)
    expl = (
        f"The operands of {_dot_label(x)} are converted right before the MMA in both variants, from other types: "
        f"{ua} in `{ctx.a}`, {ub} in `{ctx.b}`."
    )
    src_a = {u.split(" → ")[0] for u in x.upcast}
    src_b = {u.split(" → ")[0] for u in y.upcast}
    if any(s[1:] == t[1:] and {s[0], t[0]} == {"i", "u"} for s in src_a for t in src_b):
        expl += (
            " The same integer width is read signed in one (`arith.sitofp`, an `i` type: -128…127 for 8 bits) and "
            "unsigned in the other (`arith.uitofp`, a `u` type: 0…255): bytes with the top bit set become different "
            "values, so the results differ; the MMA itself is the same."
        )
    else:
        expl += " The MMA multiplies what the conversions give; its rate follows the converted type."
    ev = [_ev(v, d.ttgir or d.ttir, (d.ttgir or d.ttir).text[:220]) for v, d in ((ctx.a, x), (ctx.b, y))]
    return Finding(
        "precision.dot-upcast",
        "major",
        f"The operands of {_dot_label(x)} are upcast from other types: {ua} in `{ctx.a}` vs {ub} in `{ctx.b}`",
        expl,
        ev,
        stage="ttgir",
    )


@rule(
    Emits("precision.fp64", causes=("spec.type-changed", "spec.param-added", "spec.constexpr-changed")),
    reads=("mech", "args", "counts", "first_lines"),
)
def rule_fp64(ctx: Context) -> list[Finding]:
    """``precision.fp64``: fp64 arithmetic in one variant only (TTIR ops with ``f64`` results, PTX ``.f64``
    instructions, SASS ``DFMA``/``DMUL``/``DADD``), typically promoted from an fp64 scalar argument."""
    ma, mb = mech(ctx.fa), mech(ctx.fb)
    pa, pb = _c(ctx.fa, "ptx", "f64 ops"), _c(ctx.fb, "ptx", "f64 ops")
    if (ma.f64_ttir > 0) == (mb.f64_ttir > 0) and (pa > 0) == (pb > 0):
        return []
    more = ctx.a if (ma.f64_ttir, pa) > (mb.f64_ttir, pb) else ctx.b
    other = ctx.b if more == ctx.a else ctx.a
    f = ctx.facts(more)
    m = mech(f)
    sass = {k: _c(f, "sass", k) for k in ("DFMA", "DMUL", "DADD", "F2F.F64")}
    ev: list[Evidence] = []
    if m.f64_first:
        ev.append(_ev(more, m.f64_first))
    if m.f64_python:
        ev.append(_ev(more, m.f64_python))
    # The other variant's partner of each fp64 argument comes from the pairing by role (``peer``), never by name: a
    # parameter inserted before it shifts every later name (TorchInductor's `in_ptr2` is eps on one side, the weight
    # pointer on the other).
    partner: dict[str, str | None] = {}
    for arg in m.f64_args:
        a = f.arg(arg)
        if a is not None:
            ev.append(Evidence(more, "spec", None, f"{a.name}: {a.summary} — {a.reason}"))
            o = ctx.facts(other).peer(arg)
            partner[arg] = o.name if o is not None else None
            if o is not None:
                ev.append(Evidence(other, "spec", None, f"{o.name}: {o.summary} — {o.reason}"))

    def arg_name(name: str) -> str:
        if name not in partner:
            return f"`{name}`"
        p = partner[name]
        if p is None:
            return f"`{name}` (a parameter only `{more}` has)"
        return f"`{name}`" if p == name else f"`{name}` (paired by role with `{p}` of `{other}`)"

    for stage, key in (("ptx", "f64 ops"), ("sass", "DFMA"), ("sass", "DMUL"), ("sass", "DADD")):
        r = f.first_lines.get(stage, {}).get(key)
        if r:
            ev.append(_ev(more, r, f"{r.text}   ({_c(f, stage, key)}× {key})"))
    src = (
        f"the fp64 argument{'s' if len(m.f64_args) > 1 else ''} "
        + ", ".join(arg_name(a) for a in m.f64_args)
        + " promote"
        + ("" if len(m.f64_args) > 1 else "s")
        + " the arithmetic it meets to fp64 (Triton's type promotion: fp32 × fp64 → fp64)"
        if m.f64_args
        else "an fp64 value (a tensor or a constant) promotes the arithmetic it meets to fp64"
    )
    sass_txt = ", ".join(f"{n} `{k}`" for k, n in sass.items() if n)
    # Scalar-only fp64 (an fp64 argument meeting other scalars, no tensor of f64 in TTIR) costs a handful of
    # instructions per program, not throughput: say so rather than rank it major. Its SASS fp64 math (a `g * g + 0.5`
    # on the scalar is one DFMA) works on one value per thread, never per element.
    scalar_only = m.f64_tensor == 0
    math = sum(sass[k] for k in ("DFMA", "DMUL", "DADD"))
    cost = (
        "Only scalars are fp64 here (no TTIR tensor has an `f64` element type"
        + (f"; the {math} SASS fp64 instruction{'s' if math > 1 else ''} work on scalars" if math else "")
        + "): a few instructions per program, the per-element arithmetic stays fp32, so the cost is negligible. "
        if scalar_only
        else "fp64 throughput is a small fraction of fp32 on most GPUs "
        "(1/64 on consumer parts; 1/2 on A100/H100) and every fp64 value takes two registers. "
    )
    expl = (
        f"`{more}` computes in fp64: {m.f64_ttir} TTIR ops with `f64` results, {_c(f, 'ptx', 'f64 ops')} PTX "
        f"`.f64` instructions" + (f" and {sass_txt} in SASS" if sass_txt else "") + f"; `{other}` has "
        f"{mech(ctx.facts(other)).f64_ttir} and {_c(ctx.facts(other), 'ptx', 'f64 ops')}. In `{more}` {src}, with "
        "conversions (`cvt.f64.f32`/`F2F`) in and out. " + cost + "Results can differ "
        "numerically (fp64 intermediates are rounded to fp32 once, at the end). Remedy: pass the scalar as fp32 "
        "(drop a `tl.float64` annotation) or cast it inside the kernel (`eps.to(tl.float32)`)."
    )
    return [
        Finding(
            "precision.fp64",
            "minor" if scalar_only else "major",
            f"`{more}` computes in fp64 ({_c(f, 'ptx', 'f64 ops')} PTX f64 instructions"
            + (f", {sass_txt}" if sass_txt else "")
            + ")",
            expl,
            ev,
            stage="ttir",
            predicts=more,
            # Scalar-only fp64 is bounded by its own instructions (the f64 PTX ops, SASS conversions and scalar fp64
            # math): it cannot be the cause of an instruction-count change many times larger (irdiff.diagnose._link).
            instructions=_c(f, "ptx", "f64 ops") + sass["F2F.F64"] + math if scalar_only else None,
        )
    ]


# What each PTX math modifier means (PTX ISA, "Floating-Point Instructions"); the wording of precision.math is built
# from the modifiers present on each side, never assumed.
_MODE_WORDS = {
    "approx": "approximate (special function unit, a few ulp of error)",
    "full": "full-range approximate (2 ulp)",
    "rn": "IEEE round-to-nearest-even",
    "rz": "IEEE round-toward-zero",
    "rm": "IEEE round-down",
    "rp": "IEEE round-up",
    "ftz": "subnormal inputs and results flushed to zero",
}


def _modes(key: str) -> set[str]:
    return {p for p in key.split(".")[1:] if p in _MODE_WORDS}


def math_modes_words(a: str, b: str, ka: dict[str, int], kb: dict[str, int]) -> str:
    """Sentences on how two variants' math instructions differ, from the modifiers present on each side
    (``{opcode: count}``, only the opcodes whose counts differ): approximate vs IEEE-rounded, ``.ftz`` or not.

    Example: ``ex2.approx.f32`` in ``a`` and ``ex2.approx.ftz.f32`` in ``b`` gives "both are approximate; `b` also
    flushes subnormals to zero (`.ftz`), `a` keeps them"."""
    ma = {m for k, n in ka.items() if n for m in _modes(k)}
    mb = {m for k, n in kb.items() if n for m in _modes(k)}
    out: list[str] = []
    for v, ms in ((a, ma), (b, mb)):
        if ms:
            out.append(f"`{v}`: " + ", ".join(_MODE_WORDS[m] for m in sorted(ms)))
    text = "; ".join(out) + "." if out else ""
    rounding = {"approx", "full", "rn", "rz", "rm", "rp"}
    ra, rb = ma & rounding, mb & rounding
    if ra and rb and ra == rb:
        text += f" Both use the same rounding ({', '.join(f'`.{m}`' for m in sorted(ra))})"
        if ("ftz" in ma) != ("ftz" in mb):
            flush, keep = (a, b) if "ftz" in ma else (b, a)
            text += (
                f"; the difference is `.ftz`: `{flush}` flushes subnormal values (below 2^-126 in fp32) to zero, "
                f"`{keep}` keeps them, so results differ only for tiny inputs or results"
            )
        text += "."
    elif ra != rb:
        text += " The rounding differs, so results can differ in the last bits."
    elif ("ftz" in ma) != ("ftz" in mb):
        flush, keep = (a, b) if "ftz" in ma else (b, a)
        text += f" `{flush}` flushes subnormal values to zero (`.ftz`), `{keep}` keeps them."
    return text.strip()


def _count_pair(ctx: Context, stage: str, keys: tuple[str, ...]) -> dict[str, tuple[int, int]]:
    return {
        k: (_c(ctx.fa, stage, k), _c(ctx.fb, stage, k)) for k in keys if _c(ctx.fa, stage, k) != _c(ctx.fb, stage, k)
    }


@rule(
    Emits("precision.division", causes=("spec.constexpr-changed", "options.changed")),
    reads=("counts", "first_lines"),
)
def rule_division(ctx: Context) -> list[Finding]:
    """``precision.division``: the PTX division instructions differ: fp32 ``/`` lowers to ``div.full.f32``
    (approximate, 2 ulp), ``tl.div_rn`` to ``div.rn.f32`` (IEEE round-to-nearest, a longer sequence), an fp64 ``/`` to
    ``div.rn.f64``. The title says fp32 or fp64 division from the keys that differ; the side with more IEEE-rounded
    divisions is predicted slower."""
    keys = tuple(
        sorted(
            {
                k
                for f in (ctx.fa, ctx.fb)
                for k in f.counts.get("ptx", {})
                if k.startswith("div.") and k.endswith((".f32", ".f64")) and len(k.split(".")) > 2
            }
        )
    )
    diff = _count_pair(ctx, "ptx", keys)
    if not diff:
        return []
    ev = []
    for k in diff:
        for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb)):
            r = f.first_lines.get("ptx", {}).get(k)
            if r:
                ev.append(_ev(v, r, f"{r.text}   ({_c(f, 'ptx', k)}× {k})"))
    # IEEE-rounded division (`div.rn.f32` from `tl.div_rn`, `div.rn.f64` from fp64 `/`) is the slower side
    rn_a = sum(_c(ctx.fa, "ptx", k) for k in ("div.rn.f32", "div.rn.f64"))
    rn_b = sum(_c(ctx.fb, "ptx", k) for k in ("div.rn.f32", "div.rn.f64"))
    slow = ctx.a if rn_a > rn_b else ctx.b if rn_b > rn_a else None
    present = {k for k, (x, y) in diff.items() if x or y}
    widths = {k.rsplit(".", 1)[1] for k in diff}
    what = "fp32 division" if widths == {"f32"} else "fp64 division" if widths == {"f64"} else "Division"
    expl = (
        f"{what}: "
        + "; ".join(f"`{k}` {x} in `{ctx.a}` vs {y} in `{ctx.b}`" for k, (x, y) in diff.items())
        + ". "
        + math_modes_words(ctx.a, ctx.b, {k: x for k, (x, _) in diff.items()}, {k: y for k, (_, y) in diff.items()})
    )
    if any(k.startswith("div.full.") for k in present):
        expl += " Triton lowers `/` on fp32 to `div.full.f32` (approximate, within 2 ulp, a few instructions)."
    if "div.rn.f32" in present:
        expl += " `div.rn.f32` (from `tl.div_rn`) is IEEE-rounded: ptxas emits a longer sequence with a slow path."
    if "div.rn.f64" in present:
        expl += (
            " `div.rn.f64` is an fp64 `/` (an operand promoted to fp64): IEEE-rounded, and ptxas expands it into an "
            "fp64 (`DFMA`) sequence at the fp64 rate."
        )
    return [
        Finding(
            "precision.division",
            "minor",
            f"{what}: " + ", ".join(f"`{k}` {x} vs {y}" for k, (x, y) in diff.items()),
            expl,
            ev,
            stage="ptx",
            predicts=slow,
        )
    ]


@rule(
    Emits("precision.math", causes=("spec.constexpr-changed", "options.changed")),
    reads=("counts", "first_lines"),
)
def rule_math(ctx: Context) -> list[Finding]:
    """``precision.math``: approximate (``ex2.approx``, ``rsqrt.approx`` …: ``tl.math`` fast functions) vs precise
    (``sqrt.rn`` …: ``tl.sqrt_rn``, libdevice) math instructions differ in PTX."""
    keys = tuple(
        sorted(
            {
                k
                for f in (ctx.fa, ctx.fb)
                for k in f.counts.get("ptx", {})
                if k.split(".")[0] in ("ex2", "lg2", "sin", "cos", "rsqrt", "sqrt", "rcp", "tanh")
            }
        )
    )
    diff = _count_pair(ctx, "ptx", keys)
    if not diff:
        return []
    ev = []
    for k in list(diff)[:4]:
        for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb)):
            r = f.first_lines.get("ptx", {}).get(k)
            if r:
                ev.append(_ev(v, r, f"{r.text}   ({_c(f, 'ptx', k)}× {k})"))
    sev: Severity = "minor"
    expl = (
        "Math instructions: "
        + "; ".join(f"`{k}` {x} in `{ctx.a}` vs {y} in `{ctx.b}`" for k, (x, y) in diff.items())
        + ". "
        + math_modes_words(ctx.a, ctx.b, {k: x for k, (x, _) in diff.items()}, {k: y for k, (_, y) in diff.items()})
    )
    return [
        Finding(
            "precision.math",
            sev,
            "Math instructions differ: " + ", ".join(f"`{k}` {x} vs {y}" for k, (x, y) in list(diff.items())[:3]),
            expl,
            ev,
            stage="ptx",
        )
    ]
