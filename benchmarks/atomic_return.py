"""GPU check of ``atomic.result-used`` (irdiff/diagnose/rules/atomics.py): is the variant that reads an atomic's old
value (PTX ``atom``, SASS ``ATOMG``) measured slower than the one that does not (``red``/``RED``), as the finding
predicts? Run by ``benchmarks/gpu_atomic_return.sh OUTDIR`` (needs a CUDA GPU; results in
``benchmarks/results/atomic-return-h200/``).

A relaxed i32 histogram of ``N`` elements, bin ``(i * 7919) & (BINS - 1)`` for element ``i``: 256 bins (every bin
updated N/256 times: contention at the L2) and 65,536 bins. Both variants store the same values (``tl.where(old >=
0, k, -1)`` is ``k``, since every count starts at 0 and only grows, but Triton cannot prove it, so the old value
stays used), so the runner's correctness check compares like with like: same grid, same stores, same atomics; only
the use of the old value differs.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def hist_ret(counts, out, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = (offs * 7919) & (BINS - 1)
    old = tl.atomic_add(counts + k, 1, mask=ok, sem="relaxed")
    tl.store(out + offs, tl.where(old >= 0, k, -1), mask=ok)


@triton.jit
def hist_noret(counts, out, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = (offs * 7919) & (BINS - 1)
    tl.atomic_add(counts + k, 1, mask=ok, sem="relaxed")
    tl.store(out + offs, k, mask=ok)


def _args(s: dict[str, int]) -> dict[str, object]:
    return {
        "counts": Tensor((1 << 16,), "i32", output=True, init="zeros"),
        "out": Tensor((s["N"],), "i32", output=True, init="zeros"),
        "n": s["N"],
    }


suite = Suite(
    name="atomic-return",
    description="a relaxed i32 histogram whose atomic_add old value is read (atom) or not (red)",
    variants={
        "ret256": Variant(hist_ret, "old value read, 256 bins", {"BINS": 256, "BLOCK": 1024}),
        "noret256": Variant(hist_noret, "old value unused, 256 bins", {"BINS": 256, "BLOCK": 1024}),
        "ret64k": Variant(hist_ret, "old value read, 65536 bins", {"BINS": 1 << 16, "BLOCK": 1024}),
        "noret64k": Variant(hist_noret, "old value unused, 65536 bins", {"BINS": 1 << 16, "BLOCK": 1024}),
    },
    args=_args,
    shape={"N": 1 << 24},
    options={"num_warps": 4},
    grid=lambda s, meta: (triton.cdiv(s["N"], meta["BLOCK"]),),
)
