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


# ------------------------------------------------------------------------------- a whole module, written by hand

# A TTGIR module in Triton 3.2's spelling (``triton_gpu.``, ``!tt.memdesc``) next to today's, with what a kernel can
# hold: a zero-argument helper function, a signature with attributes, ``scf.if``/``else``, a ``tt.reduce`` combiner
# region (quoted op name: no op to name the region by), two shared layouts that name alike, location aliases, a
# parameter whose name starts like a block argument's (``argmax_ptr``).
MODULE_32 = """\
#blocked = #triton_gpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#shared1 = #ttg.padded_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #triton_gpu.shared_memory
#loc = loc("/tmp/k.py":7:0)
module attributes {"triton_gpu.num-warps" = 4 : i32, triton_gpu.target = "cuda:90"} {
  tt.func private @helper() -> i32 attributes {noinline = true} {
    %c1_i32 = arith.constant 1 : i32 loc(#loc)
    tt.return %c1_i32 : i32 loc(#loc)
  } loc(#loc)
  tt.func public @kern(%argmax_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("argmax_ptr"(#loc)), %n: i32 loc("n"(#loc))) attributes {noinline = false} {
    %0 = tt.call @helper() : () -> i32 loc(#loc)
    %a = triton_gpu.local_alloc : () -> !tt.memdesc<4x128xf16, #shared, #smem, mutable> loc(#loc)
    %b = ttg.local_alloc : () -> !tt.memdesc<4x128xf16, #shared1, #smem, mutable> loc(#loc)
    %c = arith.cmpi slt, %0, %n : i32 loc(#loc)
    %1 = scf.if %c -> (i32) {
      scf.yield %0 : i32 loc(#loc)
    } else {
      scf.yield %n : i32 loc(#loc)
    } loc(#loc)
    %x_6 = "tt.reduce"(%x_5) <{axis = 0 : i32}> ({
    ^bb0(%arg7: f32 loc(#loc), %arg8: f32 loc(#loc)):
      %x_13 = arith.maxnumf %arg7, %arg8 : f32 loc(#loc)
      tt.reduce.return %x_13 : f32 loc(#loc)
    }) : (tensor<1024xf32, #blocked>) -> f32 loc(#loc)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)"""

SHARED_B = "#shared_v8_p1_m8_o1x0_" + _h("#ttg.padded_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>")
MODULE_32_LINES = [
    "#blocked_s1_t32_w4_o0 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>",
    "#shared_v8_p1_m8_o1x0 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
    # the same fields, another attribute: the second name gets the body's hash, the uses follow their definition
    f"{SHARED_B} = #ttg.padded_shared<{{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}}>",
    "#smem = #ttg.shared_memory",
    'module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:90"} {',
    "  tt.func private @helper(",  # no arguments: the head, then the rest of the signature
    "  ) -> i32 attributes {noinline = true} {",
    "    %c1_i32.0 = arith.constant 1 : i32",
    "    tt.return %c1_i32.0 : i32",
    "  }",
    "  tt.func public @KERNEL(",
    "      %argmax_ptr.0: !tt.ptr<f32> {tt.divisibility = 16 : i32}",  # a name, not a block argument
    "      %n.0: i32",
    "  ) attributes {noinline = false} {",
    "    %0 = tt.call @helper() : () -> i32",
    "    %a.0 = ttg.local_alloc : () -> !ttg.memdesc<4x128xf16, #shared_v8_p1_m8_o1x0, #smem, mutable>",
    f"    %b.0 = ttg.local_alloc : () -> !ttg.memdesc<4x128xf16, {SHARED_B}, #smem, mutable>",
    "    %c.0 = arith.cmpi slt, %0, %n.0 : i32",
    "    %1 = scf.if %c.0 -> (i32) {",
    "      scf.yield %0 : i32",
    "    } else {",
    "      scf.yield %n.0 : i32",
    "    }",
    '    %x.0 = "tt.reduce"(%x.1) <{axis = 0 : i32}> ({',
    "    ^bb0(%arg0: f32, %arg1: f32):",
    "      %x.2 = arith.maxnumf %arg0, %arg1 : f32",
    "      tt.reduce.return %x.2 : f32",
    "    }) : (tensor<1024xf32, #blocked_s1_t32_w4_o0>) -> f32",
    "    tt.return",
    "  }",
    "}",
]


@pytest.mark.parametrize("builder", ["bulk", "reference"])
def test_module_of_triton_32_lines_regions_and_names(builder: str) -> None:
    """Every line, raw line, shape, symbol and region of :data:`MODULE_32`, through :func:`normalize` (the bulk
    builder) and through the reference builder: both give the same stage, and nothing falls back to raw text."""
    from irdiff.normalize.builder import Builder, BulkBuilder
    from irdiff.normalize.mlir import normalize_mlir

    raw_lines = MODULE_32.splitlines()
    if builder == "bulk":
        ns = normalize("ttgir", MODULE_32, kernel_name="kern")
    else:
        out = Builder("ttgir", MODULE_32)
        normalize_mlir(out, raw_lines, "kern")
        ns = out.build()
        bulk = BulkBuilder("ttgir", MODULE_32)
        normalize_mlir(bulk, raw_lines, "kern")
        assert bulk.build() == ns
    assert not ns.fallback and ns.lines == MODULE_32_LINES
    # Raw lines: the ``#loc`` alias (line 5) is dropped; a split signature's lines all point at the signature.
    assert ns.raw_line == [1, 2, 3, 4, 6, 7, 7, 8, 9, 10, 11, 11, 11, 11, *range(12, 29)]
    assert ns.regions == [
        Region(5, 9, "tt.func @helper", "tt.func @helper", anchor=True, function=True),
        Region(10, 29, "tt.func @KERNEL", "tt.func @KERNEL", anchor=True, function=True),
        # "} else {" ends the "then" region on the line before it and opens "else" on its own line
        Region(18, 19, "scf.if", "scf.if (line 16)", anchor=True, function=False),
        Region(20, 22, "else", "else (line 18)", anchor=True, function=False),
        Region(23, 27, "region", "region (line 21)", anchor=True, function=False),
    ]
    # Shapes erase every renamed value to ``%_``: numbered (``%0``), block arguments (``%arg7``) and named alike.
    assert ns.shapes[14] == "    %_ = tt.call @helper() : () -> i32"
    assert ns.shapes[17] == "    %_ = arith.cmpi slt, %_, %_ : i32"
    assert ns.shapes[24] == "    ^bb0(%_: f32, %_: f32):"
    assert ns.symbols[17] == ("%c.0", "%0", "%n.0")
    assert ns.symbols[24] == ("%arg0", "%arg1")
    assert ns.symbols[23] == ("%x.0", "%x.1")
    assert ns.shapes[:4] == ns.lines[:4] and ns.symbols[:4] == [()] * 4  # alias names are compared exactly


def test_release_spelling_applies_to_each_line_on_its_own() -> None:
    """A line with only a ``triton_gpu.`` prefix, or only ``!tt.memdesc``, is renamed: the IR of Triton 3.2 and of
    3.9 normalize alike."""
    old = "\n".join(
        [
            "  %5 = triton_gpu.convert_layout %4 : tensor<128xf32, #blocked> -> tensor<128xf32, #blocked1>",
            "  %6 = ttg.local_load %3 : !tt.memdesc<128xf16, #shared, #smem> -> tensor<128xf16, #blocked>",
            "  %7 = triton_nvidia_gpu.warp_group_dot_wait %6 {pendings = 0 : i32} : tensor<128xf16, #blocked>",
        ]
    )
    new = (
        old.replace("triton_nvidia_gpu.", "ttng.").replace("triton_gpu.", "ttg.").replace("!tt.memdesc", "!ttg.memdesc")
    )
    a, b = normalize("ttgir", old), normalize("ttgir", new)
    assert a.lines == b.lines and a.shapes == b.shapes and not a.fallback
    assert a.lines[0].startswith("  %0 = ttg.convert_layout ") and "!ttg.memdesc<128xf16" in a.lines[1]
    assert a.lines[2].startswith("  %4 = ttng.warp_group_dot_wait %2 ")  # %7, then %6 (third value seen)


def test_upstream_mlir_functions_and_regions() -> None:
    """MLIR given to ``irdiff show`` (stage ``source``) may use upstream ops: ``gpu.module``/``gpu.func``,
    ``func.func`` (a function region named by its symbol; signatures stay whole: only ``tt.func``/``llvm.func``
    are split), ``scf.while`` with its ``} do {`` region."""
    src = """\
module attributes {gpu.container_module} {
  gpu.module @device {
    gpu.func @k(%arg0: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func @count(%n: i32) -> i32 {
    %c0 = arith.constant 0 : i32
    %0 = scf.while (%arg1 = %c0) : (i32) -> i32 {
      %1 = arith.cmpi slt, %arg1, %n : i32
      scf.condition(%1) %arg1 : i32
    } do {
    ^bb0(%arg1: i32):
      scf.yield %arg1 : i32
    }
    return %0 : i32
  }
}"""
    ns = normalize("source", src)
    assert not ns.fallback and ns.lines[2] == "    gpu.func @k(%arg0: memref<4xf32>) kernel {"
    assert ns.lines[6] == "  func.func @count(%n.0: i32) -> i32 {" and ns.lines[11] == "    } do {"
    assert ns.regions == [
        Region(1, 5, "gpu.module", "gpu.module (line 2)", anchor=True, function=False),  # a symbol, not a function
        Region(2, 4, "gpu.func @k", "gpu.func @k", anchor=True, function=True),
        Region(6, 16, "func.func @count", "func.func @count", anchor=True, function=True),
        Region(8, 10, "scf.while", "scf.while (line 9)", anchor=True, function=False),
        Region(11, 14, "do", "do (line 12)", anchor=True, function=False),
    ]


def test_cut_module_regions_end_at_the_last_line() -> None:
    """A text cut inside regions (``irdiff show`` of a line range; a cut real IR): every open region ends at the
    last line; a signature cut before its ``)`` keeps its arguments and gets an empty closing line."""
    ns = normalize("ttgir", "\n".join(MODULE_32.splitlines()[:19]), kernel_name="kern")
    assert ns.lines == MODULE_32_LINES[:22] and not ns.fallback
    assert ns.regions == [
        Region(5, 9, "tt.func @helper", "tt.func @helper", anchor=True, function=True),
        Region(10, 21, "tt.func @KERNEL", "tt.func @KERNEL", anchor=True, function=True),
        Region(18, 19, "scf.if", "scf.if (line 16)", anchor=True, function=False),
        Region(20, 21, "else", "else (line 18)", anchor=True, function=False),
    ]
    cut = "  tt.func public @kern(%argmax_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.di"
    ns = normalize("ttgir", cut, kernel_name="kern")
    assert ns.lines == [
        "  tt.func public @KERNEL(",
        "      %argmax_ptr.0: !tt.ptr<f32> {tt.divisibility = 16 : i32}",
        "      %n.0: i32 {tt.di",
        "",
    ]
    assert ns.regions == [Region(0, 3, "tt.func @KERNEL", "tt.func @KERNEL", anchor=True, function=True)]


def test_bare_region_continuation_is_a_region() -> None:
    """A second region opened by a bare ``} {`` (no keyword between the braces, as a hand-written op with two regions
    can have) is a region of its own named ``region``, like the first one of the op (whose generic quoted name is
    not an op name the normalizer reads)."""
    text = (
        'module {\n  tt.func @k() {\n    %0 = "test.two"() ({\n      scf.yield\n    } {\n      scf.yield\n    }) : () '
        "-> i32\n    tt.return\n  }\n}"
    )
    ns = normalize("ttir", text)
    assert not ns.fallback and ns.lines[5] == "    } {"
    assert ns.regions == [
        Region(1, 9, "tt.func @k", "tt.func @k", anchor=True, function=True),
        Region(3, 4, "region", "region (line 3)", anchor=True, function=False),
        Region(5, 7, "region", "region (line 5)", anchor=True, function=False),
    ]
