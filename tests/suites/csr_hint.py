"""A CSR-style row whose start is loaded (``start = tl.load(rowptr + pid)``): ``aligned`` states
``tl.multiple_of(start, 16)``, ``plain`` does not. The root (``hint.axis-info``) is ``minor`` while its effect, fp16
loads of 16 vs 128 bits (``coalesce.vector-width``), is ``critical``: the sweep's ``chain_severity``
(``tests/test_sweep.py``)."""

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def row_sum_plain(rowptr, vals, out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    start = tl.load(rowptr + pid)
    end = tl.load(rowptr + pid + 1)
    offs = tl.arange(0, BLOCK)
    v = tl.load(vals + start + offs, mask=offs < end - start, other=0.0)
    tl.store(out + pid, tl.sum(v.to(tl.float32), axis=0).to(tl.float16))


@triton.jit
def row_sum_aligned(rowptr, vals, out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    start = tl.load(rowptr + pid)
    end = tl.load(rowptr + pid + 1)
    start = tl.multiple_of(start, 16)
    offs = tl.arange(0, BLOCK)
    v = tl.load(vals + start + offs, mask=offs < end - start, other=0.0)
    tl.store(out + pid, tl.sum(v.to(tl.float32), axis=0).to(tl.float16))


suite = Suite(
    name="csr-rows",
    variants={"plain": Variant(row_sum_plain), "aligned": Variant(row_sum_aligned)},
    args=lambda s: {
        "rowptr": Tensor((s["R"] + 1,), "i32", init="arange"),
        "vals": Tensor((s["R"] * 1024,), "fp16"),
        "out": Tensor((s["R"],), "fp16", output=True),
    },
    shape={"R": 64},
    constexprs={"BLOCK": 1024},
    options={"num_warps": 4},
)
