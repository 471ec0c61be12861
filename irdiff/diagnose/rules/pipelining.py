"""Software pipelining: loads the pipeliner skipped, shared-memory buffers, cp.async, wgmma waits and TMA."""

from __future__ import annotations

import re

from irdiff.diagnose.facts import PipelineLoad, Ref, VariantFacts, strip_loc
from irdiff.diagnose.mechfacts import DotFact
from irdiff.diagnose.model import Evidence, Finding
from irdiff.diagnose.rules.common import Context, _ev, _kb, _names, _stem_of, _unroll_note
from irdiff.diagnose.rules.registry import Emits, rule
from irdiff.normalize.text import split_top_level


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
    """Types of an ``scf.for`` result list, split at top-level commas and stripped."""
    parts = split_top_level(s)
    if parts and parts[-1] == "":
        parts.pop()
    return [p.strip() for p in parts]


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
    # a load whose element type changed (fp8 vs fp16 operands of one dot): the same tile shape and name
    for i, (xa, yb) in enumerate(pairs):
        if xa is None or yb is not None:
            continue
        for j, yo in enumerate(fb.pipeline):
            if j not in used and xa.shape == yo.shape and (xa.name == yo.name or not (xa.name and yo.name)):
                used.add(j)
                pairs[i] = (xa, yo)
                break
    pairs.extend((None, y) for j, y in enumerate(fb.pipeline) if j not in used)
    return pairs


def _sync_load(f: VariantFacts, ld: PipelineLoad) -> bool:
    """Does ``f`` load a tile of ``ld``'s shape synchronously (``tt.load``) inside a loop?"""
    for r in f.sync_loads_loop:
        m = re.search(r"tensor<((?:\d+x)+)!tt\.ptr<(\w+)>", r.text)
        if m and [int(x) for x in m.group(1).rstrip("x").split("x")] == ld.shape and m.group(2) == ld.elem:
            return True
    return False


def _transposed_stage(ctx: Context, variant: str, ld: PipelineLoad) -> str:
    """When the synchronous load of ``ld``'s shape is staged into a shared buffer whose TTGIR layout is
    ``#ttg.nvmma_shared<{... transposed = true, elementBitWidth = N}>``: that it is transposed on the way (a clause
    starting with "; "), else ""."""
    text = ctx.ttgir.get(variant, "")
    shape = "x".join(map(str, ld.shape))
    for load, alloc in _staged_loads(ctx.facts(variant)):
        if f"tensor<{shape}x!tt.ptr<" not in load.text:
            continue
        m = re.search(r"->\s*!ttg\.memdesc<[^,>]*,\s*(#[\w]+)", alloc.text)
        if not m:
            continue
        d = re.search(rf"^{re.escape(m.group(1))} = #ttg\.nvmma_shared<\{{([^}}]*)\}}>", text, re.M)
        if d and re.search(r"transposed = true", d.group(1)):
            bits = re.search(r"elementBitWidth = (\d+)", d.group(1))
            return (
                "; its data goes through registers into a shared-memory buffer with a transposed layout (`"
                + m.group(1)
                + "`: `transposed = true`"
                + (f", {bits.group(1)}-bit elements" if bits else "")
                + ")"
                + (
                    ": `wgmma` reads 8-bit operands from shared memory only K-major, so a tile whose fast dimension "
                    "is not K is transposed on the way"
                    if bits and bits.group(1) == "8"
                    else ""
                )
            )
    return ""


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


@rule(
    Emits(
        "pipeline.load-not-pipelined",
        causes=("coalesce.vector-width", "loop.flattened", "loop.num-stages", "options.changed", "spec.type-changed"),
    ),
    reads=("accesses", "pipeline", "buffers", "sync_loads_loop", "loops_ttir", "lowered", "text.ttgir"),
)
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
        elif ld.reason:
            parts.append(f'{ld.label}: "{ld.reason}"')
        else:
            parts.append(f"{ld.label}: the pipeliner's log gives no reason" + _transposed_stage(ctx, variant, ld))
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


@rule(
    Emits(
        "pipeline.buffers",
        causes=(
            "pipeline.load-not-pipelined",
            "loop.num-stages",
            "loop.flattened",
            "loop.unrolled",
            "options.changed",
            "spec.constexpr-changed",
        ),
    ),
    reads=("buffers", "sync_loads_loop", "loops_ttir", "mech"),
)
def rule_buffers(ctx: Context) -> list[Finding]:
    """``pipeline.buffers``: shared-memory buffer rings (``ttg.local_alloc``) differ in number or depth.

    When every ring of one variant is one slot deeper and only that variant's dots are asynchronous ``wgmma`` reading
    both operands from shared memory (:func:`_reads_ring_in_place`), the extra slot is the lowering's: the finding
    says so and, when the two dots are lowered differently, is caused by ``mma.lowering``."""
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
    # the side with fewer ring slots in all; equal totals (rings reshaped, not shrunk) predict neither side
    sa, sb = sum(d for d, _ in ra), sum(d for d, _ in rb)
    fewer = ctx.a if sa < sb else ctx.b if sa > sb else None
    unroll = _unroll_note(ctx)
    if unroll:  # one ring per unrolled copy of a load: more rings, not deeper ones
        fewer = None
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
        + unroll
    )
    causes: list[str] = []
    deeper = _one_slot_deeper(ra, rb, ctx.a, ctx.b)
    if deeper is not None:
        other = ctx.b if deeper == ctx.a else ctx.a
        fd, fo = ctx.facts(deeper), ctx.facts(other)
        if _reads_ring_in_place(fd) and not _reads_ring_in_place(fo):
            lo = ", ".join(dict.fromkeys(d.lowering or "?" for d in _dots(fo)))
            expl += (
                f" Each ring of `{deeper}` has one slot more: its `tl.dot` is an asynchronous `wgmma` "
                "(`ttng.warp_group_dot` on `!ttg.memdesc` operands) that reads both operands straight from the ring, "
                "so the slot it reads stays in use until a later `ttng.warp_group_dot_wait` retires the `wgmma`, and "
                f"the pipeliner allocates one more slot for it; `{other}`'s dot ({lo}) reads an operand into "
                "registers first, which frees the slot at once. The depth follows from the dot's lowering, not from "
                "`num_stages`."
            )
            if [d.lowering for d in _dots(fd)] != [d.lowering for d in _dots(fo)]:
                causes.append("mma.lowering")
    return [
        Finding(
            "pipeline.buffers",
            "major",
            f"Multi-buffered shared memory: `{ctx.a}` {desc(ctx.fa)}; `{ctx.b}` {desc(ctx.fb)}",
            expl,
            ev,
            stage="ttgir",
            predicts=fewer,
            causes=causes,
        )
    ]


def _dots(f: VariantFacts) -> list[DotFact]:
    return f.mech.dots if f.mech is not None else []


def _reads_ring_in_place(f: VariantFacts) -> bool:
    """Every dot of ``f`` is a Hopper ``wgmma`` with both operands in shared memory (``!ttg.memdesc`` in TTGIR): the
    asynchronous MMA reads the pipelined buffers themselves."""
    dots = _dots(f)
    return bool(dots) and all(d.lowering == "wgmma" and d.operands == ["shared", "shared"] for d in dots)


def _one_slot_deeper(
    ra: list[tuple[int, tuple[int, ...]]], rb: list[tuple[int, tuple[int, ...]]], a: str, b: str
) -> str | None:
    """The variant whose rings (``(depth, tile)``, the same tiles on both sides) are each exactly one slot deeper,
    or None."""
    da, db = {t: d for d, t in ra}, {t: d for d, t in rb}
    if not ra or len(da) != len(ra) or len(db) != len(rb) or set(da) != set(db):
        return None  # other tiles, or two rings of one tile (which pairs with which is not known)
    if all(da[t] == db[t] + 1 for t in da):
        return a
    if all(db[t] == da[t] + 1 for t in da):
        return b
    return None


@rule(
    Emits(
        "pipeline.async-copies",
        causes=("pipeline.load-not-pipelined", "loop.num-stages", "loop.flattened", "loop.unrolled", "options.changed"),
    ),
    reads=("async_copies_prologue", "async_copies_loop", "sync_loads_loop", "loops_ttir"),
)
def rule_async_copies(ctx: Context) -> list[Finding]:
    """``pipeline.async-copies``: ``ttg.async_copy_global_to_local`` before/inside loops differ (the synchronous loop
    loads of both variants are shown beside them)."""
    a = (len(ctx.fa.async_copies_prologue), len(ctx.fa.async_copies_loop), len(ctx.fa.sync_loads_loop))
    b = (len(ctx.fb.async_copies_prologue), len(ctx.fb.async_copies_loop), len(ctx.fb.sync_loads_loop))
    if a[:2] == b[:2]:
        # The same async copies on both sides: a different number of synchronous loop loads alone (e.g. one more
        # load in a loop that is not pipelined in either variant) is not an async-copy difference; the loads
        # themselves are counted by ptx.memory-ops and pipeline.load-not-pipelined.
        return []
    ev: list[Evidence] = []
    for v, f in ((ctx.a, ctx.fa), (ctx.b, ctx.fb)):
        ev.extend(_ev(v, r, r.text[:220]) for r in f.async_copies_prologue[:1])
        ev.extend(_ev(v, r, r.text[:220]) for r in f.async_copies_loop[:2])
        ev.extend(_ev(v, r, r.text[:220]) for r in f.sync_loads_loop[:2])
    expl = (
        f"TTGIR async copies (prologue / inside the loop) and synchronous loop loads: `{ctx.a}` {a[0]} / {a[1]} and "
        f"{a[2]} `tt.load`; `{ctx.b}` {b[0]} / {b[1]} and {b[2]} `tt.load`. Prologue copies fill the ring before the "
        "loop; copies inside the loop fetch iteration i+num_stages-1 while iteration i computes." + _unroll_note(ctx)
    )
    fewer = ctx.a if a[0] + a[1] < b[0] + b[1] else ctx.b if a[0] + a[1] > b[0] + b[1] else None
    if _unroll_note(ctx):  # unrolled copies of one load, not more prefetching
        fewer = None
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


@rule(
    Emits(
        "pipeline.wgmma-wait",
        causes=(
            "pipeline.load-not-pipelined",
            "pipeline.buffers",
            "loop.flattened",
            "loop.num-stages",
            # only the accumulator's type differs (``out_dtype=tl.float16``): the wgmma pipeliner's choice follows it
            "precision.dot-accumulate",
        ),
    ),
    reads=("buffers", "sync_loads_loop", "waits"),
)
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
    if ma == mb:
        return []  # both wait for their wgmma in every iteration (e.g. one more dot): neither keeps one in flight
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
            f"the loop; in `{serial}` {_names(stems) or ('operands' if many else 'an operand')} "
            f"{'are' if many else 'is'} loaded synchronously "
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


@rule(
    Emits("ttgir.tma"),
    reads=("tma_copies",),
)
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
