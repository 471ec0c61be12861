"""The built-in matmul suite with only two autotune configs, so ``--autotune`` tests stay short.

(The matmul suite is reached through its module, so this file defines exactly one Suite at module level.)
"""

from __future__ import annotations

from irdiff.suite import Suite
from irdiff.suites import matmul as _m

suite = Suite(
    name="matmul-two-configs",
    description="matmul with two autotune configs (64x32x32 2 warps; 128x128x32 4 warps)",
    variants=dict(_m.suite.variants),
    args=_m.suite.args,
    shape={"M": 1024, "N": 1024, "K": 1024},
    configs=[_m.CONFIGS[6], _m.CONFIGS[2]],
    default_config=1,
    grid=_m.suite.grid,
    flops=_m.suite.flops,
    bytes=_m.suite.bytes,
    reference=_m.suite.reference,
    baseline=_m.suite.baseline,
    default_pair=_m.suite.default_pair,
)
