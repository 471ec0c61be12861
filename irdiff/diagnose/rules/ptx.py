"""PTX: memory instructions (global/shared, widths) and MMA instructions."""

from __future__ import annotations

import re

from irdiff.diagnose.facts import VariantFacts
from irdiff.diagnose.mechfacts import CopyFact, MechFacts
from irdiff.diagnose.model import Evidence, Finding
from irdiff.diagnose.rules.common import Context, _ev, _ratio, _same_warps, _unroll_note, _warps_note
from irdiff.diagnose.rules.registry import Emits, rule

_PTX_MEM_PREFIX = ("ld.global", "st.global", "cp.async", "ld.shared", "st.shared", "ldmatrix", "stmatrix")


_PTX_MEM_SYNC = ("commit_group", "wait_group", "wait_all", "mbarrier")

# Every PTX atomic of the kernel (``atom``, ``red``; the counter's own keys, one per instruction): an atomic is a global
# memory operation (a read-modify-write at the L2), so a pair whose atomics differ lists them with the loads and stores.
_PTX_ATOMICS = ("atom", "red")


def _global_atomics(c: dict[str, int]) -> int:
    """Global ``atom``/``red`` instructions in the PTX counts ``c``: every atomic less those on shared memory."""
    shared = sum(n for k, n in c.items() if k.startswith(("atom.shared.", "red.shared.")))
    return c.get("atom", 0) + c.get("red", 0) - shared


def _mem_rank(key: str) -> tuple[int, str]:
    """Order of PTX memory-instruction kinds in ``ptx.memory-ops``: global data movement first (``ld.global``,
    ``st.global``, ``cp.async`` copies, TMA ``cp.async.bulk.tensor``), then shared-memory data movement, then the
    ``cp.async`` group/barrier bookkeeping (``commit_group``, ``wait_group``, ...), which moves no data."""
    if any(w in key for w in _PTX_MEM_SYNC):
        return (2, key)
    return (0 if key.startswith(("ld.global", "st.global", "cp.async")) or key in _PTX_ATOMICS else 1, key)


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


_NARROW_CP = re.compile(r"^cp\.async (\d+)B$")


def _operand(c: CopyFact, f: VariantFacts) -> str:
    """ "A"/"B" when the copied tile is the M×K or K×N operand of the variant's first dot (its shape), else ""."""
    dots = f.mech.dots if f.mech is not None else []
    if not dots or len(dots[0].shape) != 3:
        return ""
    m, n, k = dots[0].shape
    return "A" if c.shape == [m, k] else "B" if c.shape == [k, n] else ""


def _narrow_copies_note(ctx: Context, keys: list[str]) -> tuple[str, list[Evidence]]:
    """Which tiles the narrow ``cp.async`` copies (under 16 B) of the variant with more of them move, and why: a
    copy into a shared layout contiguous along another dimension than the global addresses
    (:class:`~irdiff.diagnose.mechfacts.CopyFact`, from the TTGIR layouts) moves one element per instruction. Empty
    when the narrow copies do not differ or the TTGIR shows no such copy."""
    narrow = [k for k in keys if (m := _NARROW_CP.match(k)) and int(m.group(1)) < 16]
    ca, cb = ctx.fa.counts.get("ptx", {}), ctx.fb.counts.get("ptx", {})
    out, ev = "", []
    for v, f, mine, theirs in ((ctx.a, ctx.fa, ca, cb), (ctx.b, ctx.fb, cb, ca)):
        n = sum(mine.get(k, 0) for k in narrow)
        if n <= sum(theirs.get(k, 0) for k in narrow):
            continue
        seen: dict[tuple[str, tuple[int, ...], int, int], CopyFact] = {}
        for c in (f.mech or MechFacts()).transposing_copies:
            seen.setdefault((c.name, tuple(c.shape), c.src_dim, c.dst_dim), c)
        for c in seen.values():
            op = _operand(c, f)
            tile = f"{'x'.join(map(str, c.shape))}x{c.elem}"
            wgmma32 = any(d.lowering == "wgmma" and d.a_type == "f32" for d in (f.mech or MechFacts()).dots)
            out += (
                f" In `{v}` the {f'operand {op} ' if op else ''}tile"
                + (f" `{c.name}`" if c.name else "")
                + f" ({tile}) is copied into a shared layout contiguous along dimension {c.dst_dim} "
                f"(`{c.shared}`) while its global addresses run along dimension {c.src_dim}: the elements a thread "
                f"reads contiguously land at separate shared addresses, so each `cp.async` moves one element "
                f"({sum(mine.get(k, 0) for k in narrow)} narrow copies in all)"
                + (
                    "; `wgmma` reads 32-bit (tf32) operands from shared memory only K-major (PTX ISA: the transpose "
                    "flags are for 16-bit types), so a tile stored the other way round in global memory is "
                    "transposed by these copies."
                    if wgmma32
                    else "."
                )
            )
            ev.append(_ev(v, c.ref, c.ref.text[:240]))
            if c.python:
                ev.append(_ev(v, c.python))
    return out, ev


@rule(
    Emits(
        "ptx.memory-ops",
        causes=(
            "coalesce.vector-width",
            "lower.mask-alignment",
            "pipeline.async-copies",
            "pipeline.load-not-pipelined",
            "coalesce.contiguity",
            "loop.flattened",
            "ttgir.tma",
            "mma.lowering",
            "layout.convert-shared",
            "options.changed",
            "loop.unrolled",
            "precision.dot-input",
            "atomic.ops",
            # an f16 accumulator moves through shared memory as b16 where an f32 one moves as b32 (the epilogue's
            # layout conversion)
            "precision.dot-accumulate",
        ),
    ),
    reads=("options", "counts", "first_lines", "loops_ttir", "mech"),
)
def rule_ptx_memory(ctx: Context) -> list[Finding]:
    """``ptx.memory-ops``: global/shared memory instructions in PTX by kind and width."""
    ca, cb = ctx.fa.counts.get("ptx", {}), ctx.fb.counts.get("ptx", {})
    # atomics are rows only when their number differs (a tile of atomics against one); the same atomics in another
    # form (``atom`` with a result and ordering vs ``red``) are the atomic rules' (``atomic.ordering``, ``atomic.ops``,
    # ``atomic.result-used``)
    atomics = _global_atomics(ca) != _global_atomics(cb)
    keys = sorted(
        {
            k
            for k in (*ca, *cb)
            if (k.startswith(_PTX_MEM_PREFIX) or (atomics and k in _PTX_ATOMICS)) and ca.get(k, 0) != cb.get(k, 0)
        },
        key=_mem_rank,
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
        """Global loads, stores, ``cp.async`` copies and atomics (an ``atom``/``red`` reads and writes global
        memory: a tile of atomics where the other variant has one is not "the same global instructions")."""
        return _global_atomics(c) + sum(
            n for k, n in c.items() if k.startswith(("ld.global", "st.global", "cp.async "))
        )

    ga, gb = gmem(ca), gmem(cb)
    expl = (
        f"PTX memory instructions (`{ctx.a}` vs `{ctx.b}`): {table}. Global memory instructions in total: {ga} in "
        f"`{ctx.a}` vs {gb} in `{ctx.b}`{_ratio(ga, gb)}. "
        + _width_note(keys[:10])
        + _warps_note(ctx)
        + _unroll_note(ctx)
    )
    note, note_ev = _narrow_copies_note(ctx, keys)
    expl += note
    ev += note_ev

    def sync(c: dict[str, int]) -> int:
        """Global loads, stores and atomics (``atom``/``red`` on global memory: a plain store replaced by an
        atomic is not fewer memory operations)."""
        return _global_atomics(c) + sum(n for k, n in c.items() if k.startswith(("ld.global", "st.global")))

    def cpa(c: dict[str, int]) -> int:
        return sum(n for k, n in c.items() if k.startswith("cp.async ") or k == "cp.async.bulk.tensor")

    if not _same_warps(ctx):
        predicts: str | None = None  # per-thread counts of different num_warps are not comparable
    elif _unroll_note(ctx):
        predicts = None  # an unrolled loop's body is written N times: static counts, not more memory traffic
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


@rule(
    Emits("ptx.mma", causes=("mma.lowering", "precision.dot-input", "layout.mma")),
    reads=("mma", "counts", "first_lines"),
)
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
