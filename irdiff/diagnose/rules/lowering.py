"""Lowering to LLIR/PTX: masks whose alignment the lowering cannot prove (narrower global instructions)."""

from __future__ import annotations

import re
from typing import Any

from irdiff.diagnose.facts import Access, ArgFact, LoweredAccess, VariantFacts
from irdiff.diagnose.model import Evidence, Finding
from irdiff.diagnose.rules.common import Context, _ev, _names, same_param
from irdiff.diagnose.rules.registry import Emits, rule


def _same_origin(fb: VariantFacts, x: LoweredAccess, y: LoweredAccess) -> bool:
    """The first pointer parameter of both addresses is the same parameter (paired by role, not by name)."""
    if not x.ptr_args or not y.ptr_args:
        return x.ptr_args[:1] == y.ptr_args[:1]
    return same_param(fb, x.ptr_args[0], y.ptr_args[0])


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
            if not (x.name and y.name) and not _same_origin(fb, x, y):
                continue
            pairs.append((x, y))
            used.add(j)
            break
    # then by pointer origin (same kind, element type and pointer parameter) when the tile shapes differ
    paired = {id(x) for x, _ in pairs}
    for x in fa.lowered:
        if id(x) in paired or not x.ptr_args:
            continue
        for j, y in enumerate(fb.lowered):
            if j in used or (x.kind, x.elem, len(x.shape)) != (y.kind, y.elem, len(y.shape)):
                continue
            if not x.ptr_args or not _same_origin(fb, x, y) or (x.name and y.name and x.name != y.name):
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


@rule(
    Emits(
        "lower.mask-alignment",
        causes=(
            "spec.constexpr-one-lost",
            "spec.divisibility-lost",
            "spec.type-changed",
            "spec.constexpr-changed",
            "options.changed",
        ),
    ),
    reads=("kernel", "accesses", "lowered", "text.python"),
)
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
            an, aw = fn.arg(name), fw.peer(name)
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
