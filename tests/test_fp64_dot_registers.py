"""Register evidence for an fp64 tile product (irdiff/diagnose/roots.py ``_dot_facts``/``_reduce_product`` in
``register_story``): ``tests/suites/tile_products.py::dot-f64`` on sm80, a 32x32x16 fp64 product by ``tl.dot`` (fp64 MMA, 40
registers per thread with Triton 3.9) and by a broadcast multiply summed over K (no ``tt.dot``: FMA, at the 255
cap). Both orders; the numbers follow from the tiles: 32·32 accumulators over 128 threads = 8 fp64 values, 32·16·32
products over 128 threads = 128 fp64 values = 256 32-bit registers."""

from __future__ import annotations

from pathlib import Path

import pytest
from diag_helpers import diagnose

from irdiff.diagnose import roots as R

SUITE = str(Path(__file__).parent / "suites" / "tile_products.py") + "::dot-f64"


@pytest.fixture(scope="module")
def f64(compile_suite):  # type: ignore[no-untyped-def]
    return compile_suite(SUITE, ["mma", "fma", "ieee"], "sm80")


def test_fp64_dot_facts(f64) -> None:  # type: ignore[no-untyped-def]
    # an fp64 tt.dot is read (it was skipped: the accumulator type list had no f64), input precision or not
    assert R._dot_facts(f64.variants["mma"]) == R._dot_facts(f64.variants["ieee"]) == (8, "mma")
    assert R._dot_type(f64.variants["mma"]) == "fp64"
    assert R._dot_facts(f64.variants["fma"]) is None and R._dot_type(f64.variants["fma"]) == ""
    assert R._reduce_product(f64.variants["fma"]) == ("32x16x32", 128, "fp64")
    assert R._reduce_product(f64.variants["mma"]) is None


@pytest.mark.parametrize(("a", "b"), [("mma", "fma"), ("fma", "mma")])
def test_fp64_fma_vs_mma_registers_have_evidence(f64, a: str, b: str) -> None:  # type: ignore[no-untyped-def]
    d = diagnose(f64, a, b)
    (reg,) = [f for f in d.findings if f.id == "resources.registers"]
    assert f64.variants["fma"].resources.registers > f64.variants["mma"].resources.registers  # type: ignore[operator]
    assert (
        "`fma` computes the product without `tt.dot` (FMA): a broadcast multiply of a 32x16x32 fp64 tile summed by "
        "`tt.reduce`, 128 fp64 values (256 32-bit registers) per thread before the sum; `mma`'s dot is MMA with 8 "
        "fp64 accumulator values per thread" in reg.explanation
    )
    assert "another MMA layout changes the fragment sizes" not in reg.explanation
