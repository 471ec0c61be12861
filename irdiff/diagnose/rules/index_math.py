"""Index math in TTIR: 64-bit index arithmetic and 64-bit division/remainder."""

from __future__ import annotations

import re

from irdiff.diagnose.facts import VariantFacts
from irdiff.diagnose.model import Evidence, Finding
from irdiff.diagnose.rules.common import Context, _c, _ev, _stem_of
from irdiff.diagnose.rules.registry import Emits, rule


def _i64_title(wide: str, narrow: str, n_wide: int, n_narrow: int, first: str) -> str:
    """``Index arithmetic in i64 in `a` vs i32 in `b` (26 vs 0 TTIR values of type i64, the first from `row = …`)``
    (``More index arithmetic in i64 in `a` than in `b` …`` when both have some): the integer width each side computes
    its indices in, the counts, and the source line of the first i64 value."""
    start = f", the first from `{first}`" if first and len(first) <= 60 else ""
    counts = f"({n_wide} vs {n_narrow} TTIR values of type i64{start})"
    if n_narrow == 0:
        return f"Index arithmetic in i64 in `{wide}` vs i32 in `{narrow}` {counts}"
    return f"More index arithmetic in i64 in `{wide}` than in `{narrow}` {counts}"


@rule(
    Emits("ttir.i64-index-math", causes=("spec.param-added", "spec.type-changed")),
    reads=("i64_ops", "i64_first", "i64_first_python", "divrem64_ttir", "counts"),
)
def rule_i64(ctx: Context) -> list[Finding]:
    """``ttir.i64-index-math``: index arithmetic is 64-bit in one variant (counts TTIR ops with ``i64`` results)."""
    fa, fb = ctx.fa, ctx.fb
    if fa.i64_ops == fb.i64_ops or max(fa.i64_ops, fb.i64_ops) < 2:
        return []
    wide, narrow = (ctx.a, ctx.b) if fa.i64_ops > fb.i64_ops else (ctx.b, ctx.a)
    fw, fn = ctx.facts(wide), ctx.facts(narrow)
    divrem = bool(fw.divrem64_ttir) or _ptx_divrem64(fw) > 0
    # 64-bit division that reached the PTX (LLVM narrows a 64-bit `//`/`%` whose operands provably fit in 32 bits)
    soft = _ptx_divrem64(fw) > 0 if "ptx" in fw.counts else divrem
    first, py = fw.i64_first, fw.i64_first_python
    py_text = py.text if py is not None else ""
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
        if py is not None:
            ev.append(_ev(wide, py))
            origin += f", from `{py_text}` (line {py.line})"
        # A 32-bit value widened (`arith.extsi`): the program id's cast (`tl.program_id(0).to(tl.int64)`; the
        # `tt.get_program_id` op itself is always i32, triton/language/semantic.py), or a value widened to meet a
        # 64-bit one (`offs < N` with `N: tl.int64`). A first value of any other op (e.g. `N // S` of two
        # `tl.int64` arguments, an `arith.divsi`) gets no clause: nothing says what derives from it.
        if "extsi" in first.text:
            if divrem:
                origin += "; everything derived from it (offsets, the `//` and `%` that split a flat index) is 64-bit"
            elif "program_id" in py_text:
                origin += "; everything derived from it (the offsets and the bound check) is 64-bit"
            else:
                origin += "; what is computed from the widened value is 64-bit"
        origin += "."
    if fn.i64_first is not None:
        ev.append(_ev(narrow, fn.i64_first))
    expl = (
        f"`{wide}` computes {fw.i64_ops} TTIR values as `i64` where `{narrow}` has {fn.i64_ops}.{origin} "
        "64-bit integer multiply/add take two 32-bit instructions each"
        + (
            ", 64-bit division and remainder have no hardware instruction (ptxas calls a software routine),"
            if soft
            else ""
        )
        + " and every index needs two registers."
    )
    return [
        Finding(
            "ttir.i64-index-math",
            "major",
            _i64_title(wide, narrow, fw.i64_ops, fn.i64_ops, py_text),
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


@rule(
    Emits("ttir.divrem-64", causes=("ttir.i64-index-math",)),
    reads=("divrem64_ttir", "counts", "first_lines"),
)
def rule_divrem64(ctx: Context) -> list[Finding]:
    """``ttir.divrem-64``: 64-bit ``divsi``/``remsi`` in TTIR and ``div``/``rem`` ``.s64``/``.u64`` in PTX in one
    variant. When the PTX of the variant with more of them has none (LLVM narrowed the division to 32 bits because
    its operands provably fit), the finding says so and predicts nothing: no software division is called."""
    da = len(ctx.fa.divrem64_ttir) + _ptx_divrem64(ctx.fa)
    db = len(ctx.fb.divrem64_ttir) + _ptx_divrem64(ctx.fb)
    if da == db:
        return []
    wide = ctx.a if da > db else ctx.b
    narrow = ctx.b if wide == ctx.a else ctx.a
    fw, fn = ctx.facts(wide), ctx.facts(narrow)
    if "ptx" in fw.counts and _ptx_divrem64(fw) <= _ptx_divrem64(fn):
        return [_narrowed(wide, narrow, fw, fn)]
    ev = [_ev(wide, r) for r in fw.divrem64_ttir[:4]]
    for k in ("div.s64", "rem.s64", "div.u64", "rem.u64"):
        r = fw.first_lines.get("ptx", {}).get(k)
        if r:
            ev.append(_ev(wide, r, f"{r.text}   ({_c(fw, 'ptx', k)}× {k})"))
    for k in ("div.s32", "rem.s32"):
        r = fn.first_lines.get("ptx", {}).get(k)
        if r:
            ev.append(_ev(narrow, r, f"{r.text}   ({_c(fn, 'ptx', k)}× {k})"))
    n_ptx = _ptx_divrem64(fw)
    expl = (
        f"`{wide}` divides 64-bit integers: {len(fw.divrem64_ttir)} `arith.divsi`/`arith.remsi` on `i64` in TTIR, "
        f"{n_ptx} `div.s64`/`rem.s64` in PTX ({len(fn.divrem64_ttir)} and {_ptx_divrem64(fn)} in `{narrow}`). "
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


_DIVREM64_PTX = ("div.s64", "rem.s64", "div.u64", "rem.u64")
_DIVREM32_PTX = ("div.s32", "rem.s32", "div.u32", "rem.u32")


def _ptx_divrem64(f: VariantFacts) -> int:
    """64-bit integer ``div``/``rem`` instructions in the variant's PTX (signed and unsigned)."""
    return sum(_c(f, "ptx", k) for k in _DIVREM64_PTX)


def _narrowed(wide: str, narrow: str, fw: VariantFacts, fn: VariantFacts) -> Finding:
    """More 64-bit ``divsi``/``remsi`` in ``wide``'s TTIR, but no more 64-bit division in its PTX than ``narrow``:
    LLVM proved the operands fit in 32 bits (sign-extended 32-bit values) and divides in 32 bits."""
    ev = [_ev(wide, r) for r in fw.divrem64_ttir[:4]]
    for k in _DIVREM32_PTX:
        r = fw.first_lines.get("ptx", {}).get(k)
        if r:
            ev.append(_ev(wide, r, f"{r.text}   ({_c(fw, 'ptx', k)}× {k})"))
    n32 = sum(_c(fw, "ptx", k) for k in _DIVREM32_PTX)
    expl = (
        f"`{wide}` has {len(fw.divrem64_ttir)} `arith.divsi`/`arith.remsi` on `i64` in TTIR where `{narrow}` has "
        f"{len(fn.divrem64_ttir)}, but its PTX has {_ptx_divrem64(fw)} 64-bit `div`/`rem` ({_ptx_divrem64(fn)} in "
        f"`{narrow}`) and {n32} 32-bit ones: LLVM narrowed the 64-bit division because its operands provably fit in "
        "32 bits, so no software division routine is called for it."
    )
    return Finding(
        "ttir.divrem-64",
        "info",
        f"64-bit division/remainder in the TTIR of `{wide}`, narrowed to 32-bit in its PTX",
        expl,
        ev,
        stage="ttir",
    )
