"""TTIR/TTGIR normalization details (``irdiff/normalize/mlir.py``): layout aliases named by content, and the
dialect spellings of older Triton releases mapped to today's. The alias bodies are the ones Triton 3.9 prints for
the recorded ``matmul`` sm86 bundle (``tests/data/bundles/matmul-sm86/*/ttgir.mlir``) plus the other field kinds a
layout attribute can carry."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from irdiff.bundle import Bundle
from irdiff.normalize import normalize
from irdiff.normalize.mlir import _alias_name, release_spelling
from irdiff.normalize.model import Region

RECORDED = Path(__file__).parent / "data" / "bundles" / "matmul-sm86"


@pytest.fixture(scope="module")
def softmax(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite("softmax", ["stages4", "stages1"], "sm86")  # the same compile as tests/test_rules.py


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
        ("x", "#ttg.foo<{Xdim = 2, n = 4:i32}>", "x_x2_n4"),  # the key's initial, lower-cased; a type without blanks
        ("x", '#ttg.foo<{"a=b" = 4 : i32}>', "x_" + hashlib.sha1(b'#ttg.foo<{"a=b" = 4 : i32}>').hexdigest()[:6]),
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
    body49 = body48.replace("4]}>", "14]}>")
    assert len(_alias_name("stem", body49.replace("14]", "1]"))) == 48  # one character shorter: kept
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


# ------------------------------------------------------------------------------------- whole texts, real IR


def _recorded(stage: str) -> tuple[str, str]:
    from irdiff.bundle import load_bundle

    v = load_bundle(RECORDED).variants["annotated"]
    return v.text(stage), v.kernel


def test_recorded_ttir_regions() -> None:
    raw, kernel = _recorded("ttir")
    ns = normalize("ttir", raw, kernel_name=kernel)
    loop = next(i for i, ln in enumerate(ns.lines) if "scf.for" in ln)
    end = len(ns.lines) - 2  # the function's closing brace; the module's is last and makes no region
    assert ns.lines[end].strip() == "}" and ns.lines[-1] == "}"
    assert ns.regions == [
        Region(1, end, "tt.func @KERNEL", "tt.func @KERNEL", anchor=True, function=True),
        Region(loop, 115, "scf.for", f"scf.for (line {ns.raw_line[loop]})", anchor=True, function=False),
    ]
    assert ns.lines[115].strip().startswith("}") and (loop, ns.raw_line[loop]) == (91, 92)


def test_recorded_ttir_names_by_first_appearance_and_shapes_erase_them() -> None:
    raw, kernel = _recorded("ttir")
    ns = normalize("ttir", raw, kernel_name=kernel)
    numbered = [s for syms in ns.symbols for s in syms if s[1:].isdigit()]
    firsts = list(dict.fromkeys(numbered))
    assert firsts == [f"%{n}" for n in range(len(firsts))]  # numbered values: %0, %1, ... in order of appearance
    assert len(firsts) == len(set(re.findall(r"%(\d+)\b", raw))) > 10  # none merged
    named = {s for syms in ns.symbols for s in syms if not s[1:].isdigit()}
    assert len(named) == len(set(re.findall(r"%([A-Za-z_][\w$.\-]*)", raw)))
    assert {"%a_ptr.0", "%pid.0", "%grid_m.0", "%grid_m.1"} <= named
    for line, shape, syms, spans in zip(ns.lines, ns.shapes, ns.symbols, ns.symbol_spans, strict=True):
        assert shape.count("%_") == len(syms) and shape.count("%") == len(syms)
        assert [line[s:e] for s, e in spans] == list(syms)
    # Indentation kept as printed (after the signature, which is split one argument per line).
    body = [i for i in range(len(ns.lines)) if ns.raw_line[i] > ns.raw_line[1]]
    raw_lines = raw.splitlines()
    for i in body:
        printed = raw_lines[ns.raw_line[i] - 1]
        assert len(ns.lines[i]) - len(ns.lines[i].lstrip()) == len(printed) - len(printed.lstrip())


def test_blank_lines_change_nothing_but_raw_numbers() -> None:
    raw, kernel = _recorded("ttgir")
    ns = normalize("ttgir", raw, kernel_name=kernel)
    spaced = normalize("ttgir", "\n   \n".join(raw.splitlines()), kernel_name=kernel)
    assert spaced.lines == ns.lines and spaced.shapes == ns.shapes
    assert spaced.raw_line == [2 * n - 1 for n in ns.raw_line]


def test_block_arguments_and_strings(softmax: Bundle) -> None:
    """The pipelined loop's block arguments (``scf.for %arg6 = ... iter_args(%arg7 = ...``, Triton 3.9 softmax with
    ``num_stages=4``) keep ``%argN`` names, renumbered by first appearance; a string (``tt.print``'s prefix) is never rewritten, aliases outside it are."""
    v = softmax.variants["stages4"]
    raw = v.text("ttgir")
    ns = normalize("ttgir", raw, kernel_name=v.kernel)
    args = [s for syms in ns.symbols for s in syms if s.startswith("%arg")]
    assert args and list(dict.fromkeys(args)) == [f"%arg{n}" for n in range(len(set(args)))]
    assert len(set(args)) == len(set(re.findall(r"%(arg\d+)\b", raw)))
    assert any(" = scf.for %arg0 = " in ln for ln in ns.lines)
    text = "\n".join(
        [
            "#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>",
            'module attributes {"ttg.num-warps" = 4 : i32} {',
            "  tt.func public @k(%x: tensor<128xi32, #blocked>) {",
            '    tt.print " #blocked %x: " {hex = false, isSigned = array<i32: 1>} : %x : tensor<128xi32, #blocked>',
            "    tt.return",
            "  }",
            "}",
        ]
    )
    out = normalize("ttgir", text)
    assert out.lines[5] == (
        '    tt.print " #blocked %x: " {hex = false, isSigned = array<i32: 1>} : %x.0 : tensor<128xi32, #blocked_s1_t32_w4_o0>'
    )
