"""A recorded bundle for rendering tests that must not change with the installed Triton.

``tests/data/bundles/matmul-sm86`` holds the python/TTIR/TTGIR stages (and ptxas log) of the matmul pair as Triton
3.9.0 compiled them for sm86 (``irdiff compile matmul --target sm86``, the other stages dropped to keep it small).
Goldens whose point is layout and colour (themes, wrapping, stage 0) render it, so they run — and fail loudly —
under every Triton version CI tests; facts about what a given Triton emits are tested on live compiles instead.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from irdiff.bundle import Bundle, load_bundle
from irdiff.diagnose import Diagnosis, Evidence, Finding

RECORDED = Path(__file__).parent / "data" / "bundles" / "matmul-sm86"


def recorded_bundle(tmp: Path) -> Bundle:
    """A private copy of the recorded bundle (commands must never write into ``tests/data``)."""
    dst = tmp / "recorded-matmul-sm86"
    if not dst.exists():
        shutil.copytree(RECORDED, dst)
    b = load_bundle(dst)
    b.directory = "<bundle>"
    return b


# A fixed diagnosis, so goldens do not move when a diagnostics rule changes (rules are tested on their own).
FIXED = Diagnosis(
    a="annotated",
    b="unannotated",
    findings=[
        Finding(
            id="spec.constexpr-one-lost",
            severity="critical",
            title="`stride_ak` loses the constant-1 specialization in `annotated`",
            explanation="In `annotated` the unit stride is a runtime `i32` argument.",
            evidence=[Evidence("annotated", "spec", None, "stride_ak: i32")],
            remedy="drop the `int` annotation",
            stage="spec",
        ),
        Finding(
            id="coalesce.vector-width",
            severity="major",
            title="loads are 1 element wide in `annotated`, 8 in `unannotated`",
            explanation="The blocked layout's sizePerThread follows the proven contiguity.",
            causes=["spec.constexpr-one-lost"],
            stage="ttgir",
        ),
        Finding(
            id="resources.shared",
            severity="minor",
            title="shared memory differs",
            explanation="Pipelining buffers.",
            causes=["coalesce.vector-width"],
            stage="resources",
        ),
    ],
)
