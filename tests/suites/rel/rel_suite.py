"""Small suite for tests/test_reliability.py: kernels live in sibling modules (rel_ops.py, rel_other.py).

Variants: ``wide`` (BLOCK 256) and ``narrow`` (BLOCK 64) of the axpy kernel, ``neg`` from the other module, and
``odd/name`` whose name holds a slash (it must become a safe directory name)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from rel_ops import axpy_kernel  # noqa: E402
from rel_other import neg_kernel  # noqa: E402

from irdiff.suite import Suite, Tensor, Variant  # noqa: E402


def _args(shape: dict[str, int]) -> dict[str, object]:
    n = shape["N"]
    return {
        "x_ptr": Tensor((n,), "fp32"),
        "y_ptr": Tensor((n,), "fp32"),
        "out_ptr": Tensor((n,), "fp32", output=True),
        "n": n,
    }


def _neg_args(shape: dict[str, int]) -> dict[str, object]:
    n = shape["N"]
    return {"x_ptr": Tensor((n,), "fp32"), "out_ptr": Tensor((n,), "fp32", output=True), "n": n}


suite = Suite(
    name="rel",
    variants={
        "wide": Variant(axpy_kernel, "BLOCK 256", constexprs={"BLOCK": 256}),
        "narrow": Variant(axpy_kernel, "BLOCK 64", constexprs={"BLOCK": 64}),
        "neg": Variant(neg_kernel, "another module", args=_neg_args, constexprs={"BLOCK": 128}),
        "odd/name": Variant(axpy_kernel, "a name with a slash", constexprs={"BLOCK": 128}),
    },
    args=_args,
    shape={"N": 4096},
    options={"num_warps": 4},
)
