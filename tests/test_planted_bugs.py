"""One-line bugs that the old suite let through (issue 19's planted bugs; mutmut cannot plant some of them because
they sit in module-level constants): per-warp register rounding in the occupancy model, and the word boundary of
``loc(`` stripping. Exact answers worked out in the comments. Cheap: no compile."""

from __future__ import annotations

import pytest

from irdiff.diagnose.facts import occupancy
from irdiff.normalize import normalize
from irdiff.normalize.text import strip_locs


@pytest.mark.parametrize(
    ("arch", "warps", "regs", "want"),
    [
        # 33 registers x 32 lanes = 1056, allocated per warp in units of 256: 1280. 65536 // 1280 = 51 warps
        # (without the rounding 62), // 4 warps per CTA = 12 CTAs (without: 15).
        (86, 4, 33, 12),
        (86, 1, 33, 51),
        # 130 x 32 = 4160 -> 4352 per warp: 65536 // 4352 = 15 warps (without: 15 too) -> 1 CTA of 8 warps.
        (90, 8, 130, 1),
        # 200 x 32 = 6400 -> 6400 (already a multiple of 256): 65536 // 6400 = 10 warps -> 2 CTAs of 4 warps.
        (90, 4, 200, 2),
    ],
)
def test_register_limit_rounds_each_warp_to_256_registers(arch: int, warps: int, regs: int, want: int) -> None:
    o = occupancy(arch, warps, regs, 0)
    assert o is not None and o.limits["registers"] == want


def test_register_rounding_decides_the_limiter() -> None:
    # sm86, 4 warps, 33 registers: registers allow 12 CTAs, warps 48 // 4 = 12, slots 16 -> a tie, named in the
    # documented order (registers first). Without rounding registers would allow 15 and warps would limit.
    o = occupancy(86, 4, 33, 0)
    assert o is not None and (o.ctas_per_sm, o.limiter, o.warps_per_sm) == (12, "registers", 48)
    o = occupancy(86, 4, 40, 0)  # 1280 exactly: the same 12 CTAs
    assert o is not None and o.limits["registers"] == 12
    o = occupancy(86, 4, 41, 0)  # 1312 -> 1536: 42 warps -> 10 CTAs, now registers alone limit
    assert o is not None and (o.ctas_per_sm, o.limiter) == (10, "registers")


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("%x = myloc(%a)", "%x = myloc(%a)"),  # a name ending in "loc" is not a location
        ("%x = tt.call @myloc(%a) : (i32) -> i32 loc(#loc3)", "%x = tt.call @myloc(%a) : (i32) -> i32"),
        ('a_loc(1) loc("f.py":1:2)', "a_loc(1)"),
        ("%z = foo.loc(3)", "%z = foo.loc(3)"),
        ("%y = arith.addi %a, %b : i32 loc(#loc4)", "%y = arith.addi %a, %b : i32"),
        ('x = "loc(" loc(#loc1)', 'x = "loc("'),
        ('tt.func @k(%a: i32 loc("a"(#loc)), %b: i32 loc("b"(#loc))) {', "tt.func @k(%a: i32, %b: i32) {"),
    ],
)
def test_strip_locs_keeps_names_that_end_in_loc(line: str, want: str) -> None:
    assert strip_locs(line) == want


def test_ttir_calling_a_function_named_myloc() -> None:
    ttir = (
        "module {\n"
        '  tt.func public @k(%x_ptr: !tt.ptr<f32> loc("x_ptr"(#loc))) attributes {noinline = false} {\n'
        "    %0 = tt.call @myloc(%x_ptr) : (!tt.ptr<f32>) -> i32 loc(#loc2)\n"
        "    tt.return loc(#loc3)\n"
        "  } loc(#loc1)\n"
        "} loc(#loc)\n"
        '#loc = loc("/k.py":1:0)\n'
    )
    n = normalize("ttir", ttir, "k")
    assert n.lines == [
        "module {",
        "  tt.func public @KERNEL(",
        "      %x_ptr.0: !tt.ptr<f32>",
        "  ) attributes {noinline = false} {",
        "    %0 = tt.call @myloc(%x_ptr.0) : (!tt.ptr<f32>) -> i32",
        "    tt.return",
        "  }",
        "}",
    ]
