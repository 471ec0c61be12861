"""Two loop nests in one kernel, for ``tests/test_two_nests.py`` (sm80): the first nest is flattened
(``tl.range(..., flatten=True)``) in both variants, the second only in ``both``; ``first`` keeps it nested. The
outer loops sum rows of ``x`` (no ``tl.dot``).

- ``both``: both nests flattened; ``first``: only the first.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def two_nests(x, y, M, N, B: tl.constexpr, SECOND: tl.constexpr):
    c = tl.arange(0, B)
    acc = tl.zeros([B], dtype=tl.float32)
    for i in tl.range(0, M, flatten=True):
        for j in range(0, N):
            acc += tl.load(x + (i * N + j) * B + c)
    tl.store(y + c, acc)
    acc2 = tl.zeros([B], dtype=tl.float32)
    for k in tl.range(0, N, flatten=SECOND):
        for m in range(0, M):
            acc2 += tl.load(x + (m * N + k) * B + c) * 2.0
    tl.store(y + B + c, acc2)


suite = Suite(
    name="two-nests",
    description="two loop nests, the second flattened in one variant only",
    variants={
        "both": Variant(two_nests, "both nests flatten=True", {"B": 64, "SECOND": True}, target="sm80"),
        "first": Variant(two_nests, "only the first nest flatten=True", {"B": 64, "SECOND": False}, target="sm80"),
    },
    args=lambda s: {"x": Tensor((4096,), "fp32"), "y": Tensor((128,), "fp32", output=True), "M": 4, "N": 8},
    shape={},
    options={"num_warps": 2},
    grid=lambda s, meta: (1,),
)
