"""A Blackwell (sm100) K loop whose operands come through device-side tensor descriptors (TMA), pipelined with
``num_stages=4``: the loads' barriers are one ``ttg.local_alloc`` ring (``!ttg.memdesc<4x1xi64>``, one per stage)
and the ``tcgen05.mma`` commits to another (``!ttg.memdesc<2x1xi64>``). ``deep`` against ``flat`` (``num_stages=1``,
one MMA barrier waited on every iteration). tests/test_mechfacts_rings.py checks the MMA wait's ring is the MMA's
own barrier array, not the larger load ring."""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def tma_loop(x_ptr, w_ptr, out_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, DEPTH: tl.constexpr):
    xd = tl.make_tensor_descriptor(x_ptr, shape=[BM, K], strides=[K, 1], block_shape=[BM, BK])
    wd = tl.make_tensor_descriptor(w_ptr, shape=[K, BN], strides=[BN, 1], block_shape=[BK, BN])
    total = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=DEPTH):
        total = tl.dot(xd.load([0, k]), wd.load([k, 0]), total)
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    tl.store(out_ptr + rows[:, None] * BN + cols[None, :], total)


_T = {"BM": 128, "BN": 128, "BK": 64}
suite = Suite(
    name="mma-rings",
    variants={
        "deep": Variant(tma_loop, "TMA K loop num_stages=4", {**_T, "DEPTH": 4}),
        "flat": Variant(tma_loop, "TMA K loop num_stages=1", {**_T, "DEPTH": 1}),
    },
    args=lambda s: {
        "x_ptr": Tensor((128, s["K"]), "fp16"),
        "w_ptr": Tensor((s["K"], 128), "fp16"),
        "out_ptr": Tensor((128, 128), "fp32", output=True),
        "K": s["K"],
    },
    shape={"K": 2048},
    constexprs={},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
    default_pair=("flat", "deep"),
)
