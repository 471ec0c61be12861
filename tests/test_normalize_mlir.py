"""TTIR/TTGIR normalization details (``irdiff/normalize/mlir.py``): layout aliases named by content, and the
dialect spellings of older Triton releases mapped to today's. The alias bodies are the ones Triton 3.9 prints for
the recorded ``matmul`` sm86 bundle (``tests/data/bundles/matmul-sm86/*/ttgir.mlir``) plus the other field kinds a
layout attribute can carry."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from irdiff.normalize.mlir import _alias_name, release_spelling

RECORDED = Path(__file__).parent / "data" / "bundles" / "matmul-sm86"


def _h(body: str) -> str:
    return hashlib.sha1(body.strip().encode()).hexdigest()[:6]


@pytest.mark.parametrize(
    ("stem", "body", "name"),
    [
        ("blocked", "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>", "blocked_s1x8_t2x16_w4x1_o1x0"),
        ("mma", "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>", "mma_v2_v0_w2x2_i16x8"),
        ("shared", "#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>", "shared_v8_p2_m4_o1x0"),
        ("smem", " #ttg.shared_memory ", "smem"),  # no parameters: the alias keeps its stem
        ("x", "#ttg.foo<{}>", "x"),  # no fields: nothing to name it by
        ("x", "#ttg.foo<{ }>", "x"),
        # an i32-typed field (quoted key), a negative number, an empty list, booleans
        ("x", '#ttg.foo<{"ttg.num-warps" = 4 : i32, neg = -2, e = [], b = true, c = false}>', "x_t4_nm2_ee_bT_cF"),
        ("x", "#ttg.foo<{a = [-1, 2]}>", "x_am1x2"),
        ("x", "#ttg.foo<{= 3}>", "x_k3"),  # no key: ``k``
    ],
)  # fmt: skip
def test_alias_named_by_its_fields(stem: str, body: str, name: str) -> None:
    assert _alias_name(stem, body) == name


@pytest.mark.parametrize(
    "body",
    [
        "#ttg.foo<{a = b}>",  # a field that is not a number, a list of numbers or a boolean
        "#ttg.foo<{a}>",  # not ``key = value``
        "#ttg.foo<[1]>",  # not a ``<{...}>`` attribute
        "#ttg.foo<{a = [1, 2], b = #ttg.bar<{c = 1}>}>",  # a nested attribute
        "#ttg.foo<{aaaa = [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3], bbbb = [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3]}>",  # over 48
    ],
)
def test_alias_named_by_a_hash_otherwise(body: str) -> None:
    assert _alias_name("x", body) == f"x_{_h(body)}"
    assert _alias_name("x", body + "  ") == f"x_{_h(body)}"  # of the stripped body


def test_alias_of_48_characters_keeps_its_fields() -> None:
    body = "#ttg.foo<{aaaa = [1, 2, 3, 4, 5, 6, 7, 8], bbbb = [1, 2, 3, 4, 5, 6, 7, 8, 9, 1]}>"
    assert (
        _alias_name("stem", body) == "stem_a1x2x3x4x5x6x7x8_b1x2x3x4x5x6x7x8x9x1"
        and len(_alias_name("stem", body)) == 42
    )
    body48 = "#ttg.foo<{aaaa = [1, 2, 3, 4, 5, 6, 7, 8], bbbb = [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4]}>"
    assert len(_alias_name("stem", body48)) == 48 and _alias_name("stem", body48).endswith("x4")
    body49 = body48.replace("4]}>", "4, 5]}>")
    assert _alias_name("stem", body49) == f"stem_{_h(body49)}"


def test_every_alias_of_the_recorded_ttgir_gets_a_field_name() -> None:
    seen = set()
    for f in sorted(RECORDED.glob("*/ttgir.mlir")):
        for line in f.read_text().splitlines():
            if line.startswith("#") and not line.startswith("#loc") and " = " in line:
                alias, body = line[1:].split(" = ", 1)
                name = _alias_name(alias.rstrip("0123456789"), body)
                seen.add(name)
                assert len(name) <= 48 and "_" + _h(body) not in name
    assert {"blocked_s1x8_t8x4_w4x1_o1x0", "blocked_s1x1_t1x32_w1x4_o0x1", "smem", "shared_v8_p1_m8_o1x0"} <= seen


def test_release_spelling_of_triton_3_2() -> None:
    assert (
        release_spelling(
            "%67 = triton_gpu.local_alloc  : () -> !tt.memdesc<4x128x32xf16, #shared, #triton_gpu.shared_memory, mutable>"
        )
        == "%67 = ttg.local_alloc  : () -> !ttg.memdesc<4x128x32xf16, #shared, #ttg.shared_memory, mutable>"
    )
    assert (
        release_spelling("%162 = triton_nvidia_gpu.warp_group_dot %159, %161")
        == "%162 = ttng.warp_group_dot %159, %161"
    )
    assert release_spelling('module attributes {"triton_gpu.num-warps" = 4 : i32, triton_gpu.target = "cuda:90"}') == (
        'module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:90"}'
    )
    assert release_spelling("%a = !tt.memdesc<4xf16>") == "%a = !ttg.memdesc<4xf16>"
    # Not a dialect prefix (no word boundary), and today's spelling: unchanged.
    assert release_spelling("%x = mytriton_gpu.op") == "%x = mytriton_gpu.op"
    today = "%67 = ttg.local_alloc : () -> !ttg.memdesc<4x128x32xf16, #shared, #smem, mutable>"
    assert release_spelling(today) is today
