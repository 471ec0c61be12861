"""Peak fp16 tensor-core throughput and memory bandwidth of common NVIDIA GPUs, looked up by device name.

The numbers are the vendor's datasheet figures: dense fp16 tensor-core TFLOP/s with fp32 accumulation (half the
"with sparsity" figure the datasheets print first) and the DRAM bandwidth in GB/s (1 GB = 10^9 bytes). They are
ceilings for "% of peak", not measurements: a well-tuned cuBLAS GEMM reaches 70–80 % of the H100/H200 figure
(the clock drops under tensor-core load).

Sources (NVIDIA product datasheets): H200 Tensor Core GPU (SXM: 1,979 TFLOPS fp16 with sparsity, 4.8 TB/s; NVL:
1,671, 4.8 TB/s); H100 Tensor Core GPU (SXM 1,979 / 3.35 TB/s, PCIe 1,513 / 2 TB/s, NVL 1,671 / 3.9 TB/s); A100
Tensor Core GPU (312 TFLOPS fp16 dense; 1,555 GB/s 40 GB, 2,039 GB/s 80 GB SXM, 1,935 GB/s 80 GB PCIe); A40
(149.7 TFLOPS, 696 GB/s); L40S (362.05 TFLOPS, 864 GB/s); L40 (181.05, 864); L4 (121, 300); A10 (125, 600);
A30 (165, 933); V100 SXM2 (125, 900); B200 (HGX B200: 2.25 PFLOPS fp16 dense per GPU, 8 TB/s).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Peak", "lookup_peak", "pct_of_peak"]


@dataclass(frozen=True)
class Peak:
    """Datasheet ceilings of one GPU model: ``tflops`` (dense fp16 tensor core, fp32 accumulate), ``gbps`` (DRAM)."""

    model: str
    tflops: float
    gbps: float
    source: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# (pattern matched against the lower-cased device name, Peak); the first match wins, so specific names come first.
_TABLE: list[tuple[str, Peak]] = [
    (r"h200.*nvl", Peak("H200 NVL", 835.5, 4800, "NVIDIA H200 datasheet (NVL)")),
    (r"h200", Peak("H200 SXM", 989.5, 4800, "NVIDIA H200 datasheet (SXM)")),
    (r"h100.*pcie", Peak("H100 PCIe", 756.5, 2000, "NVIDIA H100 datasheet (PCIe)")),
    (r"h100.*nvl", Peak("H100 NVL", 835.5, 3900, "NVIDIA H100 datasheet (NVL)")),
    (r"h100|h800", Peak("H100 SXM", 989.5, 3350, "NVIDIA H100 datasheet (SXM)")),
    (r"gh200", Peak("GH200", 989.5, 4000, "NVIDIA GH200 datasheet")),
    (r"a100.*80gb.*pcie", Peak("A100 80GB PCIe", 312, 1935, "NVIDIA A100 datasheet (80GB PCIe)")),
    (r"a100.*(sxm.*80gb|80gb.*sxm)", Peak("A100 80GB SXM", 312, 2039, "NVIDIA A100 datasheet (80GB SXM)")),
    (r"a100", Peak("A100 40GB", 312, 1555, "NVIDIA A100 datasheet (40GB)")),
    (r"a800", Peak("A800", 312, 2039, "NVIDIA A800 datasheet")),
    (r"l40s", Peak("L40S", 362.05, 864, "NVIDIA L40S datasheet")),
    (r"l40", Peak("L40", 181.05, 864, "NVIDIA L40 datasheet")),
    (r"\bl4\b", Peak("L4", 121, 300, "NVIDIA L4 datasheet")),
    (r"a40", Peak("A40", 149.7, 696, "NVIDIA A40 datasheet")),
    (r"a30", Peak("A30", 165, 933, "NVIDIA A30 datasheet")),
    (r"\ba10\b", Peak("A10", 125, 600, "NVIDIA A10 datasheet")),
    (r"v100", Peak("V100 SXM2", 125, 900, "NVIDIA V100 datasheet (SXM2)")),
    (r"b200", Peak("B200", 2250, 8000, "NVIDIA HGX B200 datasheet (per GPU)")),
]


def lookup_peak(device_name: str) -> Peak | None:
    """Datasheet peak for a device name as CUDA reports it (``"NVIDIA H200"``, ``"NVIDIA A100-SXM4-80GB"``);
    None for models not in the table."""
    name = device_name.lower()
    for pattern, peak in _TABLE:
        if re.search(pattern, name):
            return peak
    return None


def pct_of_peak(tflops: float | None, gbps: float | None, peak: Peak | None) -> tuple[float | None, str]:
    """Percent of the roofline ceiling: the larger of ``tflops / peak.tflops`` and ``gbps / peak.gbps``.

    :returns: ``(percent, basis)`` where basis is ``"compute"`` or ``"memory"`` (which ceiling binds);
        ``(None, "")`` when the peak or both rates are unknown.
    """
    if peak is None:
        return None, ""
    c = tflops / peak.tflops if tflops is not None and peak.tflops else None
    m = gbps / peak.gbps if gbps is not None and peak.gbps else None
    if c is None and m is None:
        return None, ""
    if m is None or (c is not None and c >= m):
        return 100.0 * (c or 0.0), "compute"
    return 100.0 * m, "memory"
