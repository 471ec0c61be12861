"""One masked tensor ``tl.atomic_add`` of fp32 values into a histogram row, per memory order and scope, its old
value stored (so every variant returns it, ``ATOMG``): ``relaxed`` (``sem="relaxed"``), ``acq_rel_cta``,
``acq_rel_gpu`` (the defaults), ``acq_rel_sys``, ``release_sys``, ``acquire_sys``. tests/test_rule_atomic_fences.py
checks which SASS fences each carries (``MEMBAR.ALL.SYS``/``MEMBAR.SC.SYS`` for system scope …) and that the
ordering rule quotes them."""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def bump(hist, vals, old, n, SEM: tl.constexpr, SCOPE: tl.constexpr, W: tl.constexpr):
    k = tl.arange(0, W)
    ok = k < n
    v = tl.load(vals + k, mask=ok)
    prev = tl.atomic_add(hist + k % 16, v, mask=ok, sem=SEM, scope=SCOPE)
    tl.store(old + k, prev, mask=ok)


def _v(sem: str, scope: str) -> Variant:
    return Variant(bump, f"atomic_add sem={sem} scope={scope}", {"SEM": sem, "SCOPE": scope})


suite = Suite(
    name="atomic-fences",
    variants={
        "relaxed": _v("relaxed", "gpu"),
        "acq_rel_cta": _v("acq_rel", "cta"),
        "acq_rel_gpu": _v("acq_rel", "gpu"),
        "acq_rel_sys": _v("acq_rel", "sys"),
        "release_sys": _v("release", "sys"),
        "acquire_sys": _v("acquire", "sys"),
    },
    args=lambda s: {
        "hist": Tensor((16,), "fp32", output=True),
        "vals": Tensor((s["N"],), "fp32"),
        "old": Tensor((s["N"],), "fp32", output=True),
        "n": s["N"],
    },
    shape={"N": 200},
    constexprs={"W": 256},
    options={"num_warps": 4},
    default_pair=("relaxed", "acq_rel_sys"),
)
