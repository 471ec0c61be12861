"""Coalescing: pointer contiguity/alignment (AxisInfo) and the vector width the coalesce pass chose."""

from __future__ import annotations

from irdiff.diagnose.facts import Access, VariantFacts
from irdiff.diagnose.model import Evidence, Finding
from irdiff.diagnose.rules.common import Context, _bytes, _ev, _names, same_param
from irdiff.diagnose.rules.registry import Emits, rule


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
    # Accesses left over are paired by pointer origin (the same pointer, paired by role, same kind, element type and rank)
    # even when the tile shapes differ (a stride-2 [8, 64] load of `x_ptrs` vs a contiguous [8, 128] one).
    paired = {id(x) for x, _ in pairs}
    for x in fa.accesses:
        if id(x) in paired or not x.pointer:
            continue
        for j, y in enumerate(fb.accesses):
            if j in used or (x.kind, x.elem, len(x.shape)) != (y.kind, y.elem, len(y.shape)):
                continue
            if not same_param(fb, x.pointer, y.pointer):
                continue
            pairs.append((x, y))
            used.add(j)
            break
    return pairs


def _pair_label(x: Access, y: Access) -> str:
    """``x``'s label, with ``y``'s tile shape added when the paired accesses have different shapes."""
    if x.shape == y.shape:
        return x.label
    return f"{x.label} (`{'x'.join(map(str, y.shape))}x{y.elem}` in the other variant)"


def _fast_dim(acc: Access) -> int:
    return acc.order[0] if acc.order else len(acc.shape) - 1


def _order_reason(x: Access, y: Access, ctx: Context) -> str:
    """Why the coalescing pass ordered two paired accesses differently: each is most contiguous along another
    dimension (a transposed access), or one has nothing contiguous and its order is the pass's tie-break among equally
    contiguous dimensions (``lib/Dialect/TritonGPU/Transforms/Coalesce.cpp`` sorts the dimensions by contiguity:
    ``getOrderFromContiguity`` in Triton 3.9, ``argSort`` in 3.6; the two break the tie differently)."""
    flat = [v for v, acc in ((ctx.a, x), (ctx.b, y)) if max(acc.contiguity, default=1) <= 1]
    if flat:
        return f"nothing is contiguous in {_names(flat)}: the order there is the tie-break among equal contiguities"
    ix = max(range(len(x.contiguity)), key=lambda i: x.contiguity[i])
    iy = max(range(len(y.contiguity)), key=lambda i: y.contiguity[i])
    return f"most contiguous along dim {ix} in `{ctx.a}`, dim {iy} in `{ctx.b}`"


@rule(
    Emits(
        "coalesce.contiguity",
        causes=(
            "spec.param-added",
            "spec.constexpr-one-lost",
            "spec.divisibility-lost",
            "spec.type-changed",
            "ttir.i64-index-math",
            "hint.axis-info",
            "spec.constexpr-changed",
        ),
    ),
    reads=("accesses",),
)
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
        dim: int | str = d
        if x.contiguity and y.contiguity and len(x.contiguity) == len(y.contiguity):
            ix = max(range(len(x.contiguity)), key=lambda i: x.contiguity[i])
            iy = max(range(len(y.contiguity)), key=lambda i: y.contiguity[i])
            if ix != iy and x.contiguity[ix] > 1 and y.contiguity[iy] > 1:
                # contiguous in both, along another dimension each (a transposed access): compare each one's own
                # contiguous dimension, not one variant's against the other's strided one
                cx, cy = x.contiguity[ix], y.contiguity[iy]
                dx = x.divisibility[ix] if ix < len(x.divisibility) else None
                dy = y.divisibility[iy] if iy < len(y.divisibility) else None
                dim = f"{ix} in `{ctx.a}`, {iy} in `{ctx.b}`"
        if cx != cy or dx != dy:
            rows.append((x, y, dim, cx, cy, dx, dy))
    if not rows:
        return []
    ev: list[Evidence] = []
    parts = []
    for x, y, dim, cx, cy, dx, dy in rows:
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
        parts.append(f"{_pair_label(x, y)} (dim {dim}): " + ", ".join(bits))
    # the variant with less proven contiguity and alignment in all; neither when they balance out (one access loses
    # what another gains)
    sa = sum(r[3] or 0 for r in rows) + sum(r[5] or 0 for r in rows)
    sb = sum(r[4] or 0 for r in rows) + sum(r[6] or 0 for r in rows)
    worse = ctx.a if sa < sb else ctx.b if sb < sa else None
    expl = (
        "The coalescing pass (`tritongpu-coalesce`) asks AxisInfo how many consecutive elements of each pointer "
        "tensor are contiguous and how aligned (in bytes) the first one is; "
        + "; ".join(parts)
        + ". Contiguity along the fastest dimension and alignment bound how many elements one thread may load "
        "with a single vector instruction."
        + (
            " The coalescing pass orders each access's dimensions by proven contiguity, the most contiguous first, so "
            "the access order differs: "
            + "; ".join(
                f"{x.label} order {x.order} in `{ctx.a}` vs {y.order} in `{ctx.b}` ({_order_reason(x, y, ctx)})"
                for x, y in orders
            )
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
        f"Pointer {what} proven by AxisInfo: {_pair_label(r0[0], r0[1])} "
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


# Global memory moves whole 32-byte sectors between DRAM, L2 and L1 (CUDA C++ Best Practices Guide, "Coalesced
# Access to Global Memory"): a warp's access costs the sectors its addresses touch, used or not.
SECTOR_BYTES = 32


def _strides(f: VariantFacts, acc: Access) -> list[int | None] | None:
    """The element strides of ``acc``'s address per dimension (``LoweredAccess.strides``), None when unknown."""
    i = next((k for k, a in enumerate(f.accesses) if a is acc), None)
    low = next((lo for lo in f.lowered if i is not None and lo.coalesce_index == i), None)
    return low.strides if low is not None else None


def _stride_pair(ctx: Context, x: Access, y: Access) -> tuple[int | None, str, int, int] | None:
    """For two paired accesses of which one reads adjacent elements along its fastest dimension: ``(stride, strided
    variant, stride, dim)`` when the other's neighbours along that dimension are ``|stride| >= 2`` elements apart,
    ``(None, "", 1, dim)`` when both read adjacent elements (the same sectors; each along its own fastest dimension
    for a transposed pair), None when a stride is unknown."""
    sx, sy = _strides(ctx.fa, x), _strides(ctx.fb, y)
    if sx is None or sy is None or len(sx) != len(sy):
        return None
    for unit, other, side in ((sy, sx, ctx.a), (sx, sy, ctx.b)):
        acc = y if unit is sy else x
        d = _fast_dim(acc)
        if d >= len(unit) or unit[d] not in (1, -1):
            continue
        # the other access reads adjacent elements along its own fastest dimension (a transposed access: `tt`'s
        # column-major store against `dskew`'s row-major one): both use whole sectors, whatever its stride along `d`
        od = _fast_dim(x if unit is sy else y)
        if od < len(other) and other[od] in (1, -1):
            return (None, "", 1, d)
        s = other[d]
        if s is None or s == 0:
            return None
        if abs(s) >= 2:
            return (abs(s), side, abs(s), d)
        return (None, "", 1, d)
    return None


def _contiguous(acc: Access) -> bool:
    """AxisInfo proves neighbours along the fastest dimension adjacent (contiguity above 1 there)."""
    d = _fast_dim(acc)
    return d < len(acc.contiguity) and acc.contiguity[d] > 1


def _traffic(
    ctx: Context, strided: list[tuple[Access, Access, tuple[int | None, str, int, int]]], adjacent: bool
) -> str:
    """What narrower accesses cost: for a strided access (neighbours ``s`` elements apart) the sectors it fetches
    are only partly used, ``min(s, 32 / element bytes)``× the DRAM/L2 bytes of the data used; only when both read
    adjacent elements is it the same bytes in more instructions."""
    if strided:
        said = []
        for x, y, (_, side, s, d) in strided:
            acc = x if side == ctx.a else y
            other = ctx.b if side == ctx.a else ctx.a
            e = max(1, acc.elem_bits // 8)
            factor = max(1, min(s, SECTOR_BYTES // e))
            used = SECTOR_BYTES // factor
            said.append(
                f"{acc.label} in `{side}` reads every {_nth(s)} element (neighbours {s} elements, {s * e} bytes, "
                f"apart along dim {d}) where `{other}` reads adjacent ones: global memory moves whole "
                f"{SECTOR_BYTES}-byte sectors, of which `{side}` uses {used} bytes, so it moves about {factor}× the "
                "DRAM/L2 bytes for the data it uses, on top of the narrower (more) instructions"
            )
        return (
            "A stride is not only more instructions: "
            + "; ".join(said)
            + ". Contiguous (unit-stride) indexing along the fastest dimension, or a tile whose fastest dimension is "
            "the contiguous one, reads only what is used."
        )
    if adjacent:
        return (
            "Both read adjacent elements, so the same sectors are fetched: narrower accesses mean proportionally "
            "more load/store instructions for the same bytes."
        )
    return (
        "Narrower accesses mean proportionally more load/store instructions; where the elements are not adjacent in "
        "memory (a runtime stride or a gather, which AxisInfo cannot see through), each 32-byte sector is also only "
        "partly used: more DRAM/L2 traffic, not only more instructions."
    )


def _nth(n: int) -> str:
    """English ordinal of ``n`` ≥ 1: 1st, 2nd, 3rd, 4th, 11th–13th, 21st, 112th."""
    if n % 100 in (11, 12, 13):
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


@rule(
    Emits(
        "coalesce.vector-width",
        causes=(
            "coalesce.contiguity",
            "spec.constexpr-one-lost",
            "spec.divisibility-lost",
            "spec.type-changed",
            "options.changed",
        ),
    ),
    reads=("accesses", "blocked", "lowered"),
)
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
        parts.append(f"{_pair_label(x, y)}: {_width_phrase(x, ctx.a)} vs {_width_phrase(y, ctx.b)}")
    for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb)):
        for bl in f.blocked[:2]:
            r = bl["ref"]
            ev.append(Evidence(v, r["stage"], r["line"], r["text"]))
    # the variant whose accesses move fewer bits in all; neither when they balance out (one access narrows, another widens)
    na, nb = sum(x.vector_bits for x, _ in rows), sum(y.vector_bits for _, y in rows)
    narrow = ctx.a if na < nb else ctx.b if nb < na else None
    strides = [_stride_pair(ctx, x, y) for x, y in rows]
    strided = [(x, y, st) for (x, y), st in zip(rows, strides, strict=True) if st is not None and st[0] is not None]
    expl = (
        "The coalescing pass gives each thread `perThread` consecutive elements (the blocked layout's "
        "`sizePerThread` along the fastest dimension); one access moves min(perThread × element bits, proven "
        "contiguity, proven alignment, 128 bits): "
        + "; ".join(parts)
        + ". "
        + _traffic(
            ctx,
            strided,
            all(
                (st is not None and st[0] is None) or (st is None and _contiguous(x) and _contiguous(y))
                for (x, y), st in zip(rows, strides, strict=True)
            ),
        )
    )
    return [
        Finding(
            "coalesce.vector-width",
            "critical" if strided or any(min(x.vector_bits, y.vector_bits) < 32 for x, y in rows) else "major",
            f"Vector width of global accesses (`{ctx.a}` vs `{ctx.b}`): "
            + ", ".join(f"{_pair_label(x, y)} {x.vector_bits} vs {y.vector_bits} bits" for x, y in rows[:3]),
            expl,
            ev,
            stage="ttgir",
            predicts=narrow,
        )
    ]
