"""The PTX normalizer (irdiff/normalize/ptx.py), line by line: a real Triton 3.6 kernel (tests/data/normalize) and a
small PTX module with a ``.func`` helper, a branch and a DWARF section (tests/data/normalize/helper_and_kernel.ptx,
laid out as LLVM's NVPTX back end prints it). Exact lines, symbols and regions, so that a normalizer that keeps a debug
line, renumbers across classes or closes a block one line late fails here. Cheap: no compile."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from irdiff.normalize import NormalizedStage, Region, normalize
from irdiff.normalize.builder import Sym

DATA = Path(__file__).parent / "data" / "normalize"
SMALL = (DATA / "helper_and_kernel.ptx").read_text()


@pytest.fixture(autouse=True)
def _fresh_class_tables() -> None:
    """The fast path's per-class name tables (``ptx._prefix``, ``ptx._erased``) fill themselves on first use and
    live as long as the module: emptied before each test, so that every test builds them (a mutation run forks
    each mutant from a process whose tables the clean run filled; see benchmarks/results/mutation/README.md)."""
    from irdiff.normalize import ptx

    ptx._prefix.clear()
    ptx._erased.clear()


def test_small_module_lines_symbols_and_regions() -> None:
    n = normalize("ptx", SMALL, "my_kernel")
    assert n.lines[:4] == [
        ".version 8.7",
        ".target sm_90a",
        ".address_size 64",
        ".func  (.param .b32 func_retval0) helper(",
    ]
    # Comments, .file/.loc, $L__func_begin/$L__tmp labels, blank lines and the DWARF section are gone; the
    # kernel's name is KERNEL; registers are renumbered per class by first appearance, labels as $L__BBn.
    assert n.lines[8:11] == [
        "\tld.param.b32 \t%r0, [helper_param_0];",
        "\tadd.s32 \t%r1, %r0, 1;",
        "\tst.param.b32 \t[func_retval0], %r1;",
    ]
    assert n.lines[13:] == [
        ".visible .entry KERNEL(",
        "\t.param .u64 KERNEL_param_0",
        ")",
        "{",
        "\t.reg .pred \t%p<2>;",
        "\t.reg .b32 \t%r<5>;",
        "\t.reg .b64 \t%rd<3>;",
        "\tld.param.u64 \t%rd0, [KERNEL_param_0];",
        "\tmov.u32 \t%r2, %tid.x;",
        "\tsetp.lt.s32 \t%p0, %r2, 64;",
        "\t@%p0 bra \t$L__BB0;",
        "\tbra.uni \t$L__BB1;",
        "$L__BB0:",
        "\t{",
        "\tst.global.b32 \t[%rd0], %r2;",
        "\t}",
        "$L__BB1:",
        "\tret;",
        "}",
    ]
    assert n.raw_line[13:] == [20, 21, 22, 23, 24, 25, 26, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 43]
    assert n.shapes[22] == "\tsetp.lt.s32 \t%p_, %r_, 64;" and n.symbols[22] == ("%p0", "%r2")
    assert n.shapes[23] == "\t@%p_ bra \t$L__BB_;" and n.symbols[23] == ("%p0", "$L__BB0")
    assert n.symbol_spans[23] == ((2, 5), (11, 18))
    assert n.shapes[25] == "$L__BB_:" and n.symbols[25] == ("$L__BB0",)
    assert n.regions == [
        Region(3, 12, ".func helper", ".func helper", anchor=True, function=True),
        Region(13, 31, ".entry KERNEL", ".entry KERNEL", anchor=True, function=True),
        Region(25, 28, "block", "$L__BB1_2: (line 36)", anchor=False),
        Region(29, 30, "block", "$L__BB1_1: (line 40)", anchor=False),
    ]
    assert not n.fallback


def test_unterminated_function_still_gets_its_regions() -> None:
    """Text cut inside the kernel (a truncated file): the open block and the function run to the last line."""
    cut = "\n".join(SMALL.splitlines()[:38])  # up to the store inside $L__BB1_2
    n = normalize("ptx", cut, "my_kernel")
    assert n.lines[-1] == "\tst.global.b32 \t[%rd0], %r2;"
    end = len(n.lines) - 1
    assert n.regions[1:] == [  # in pre-order: the function before its block
        Region(13, end, ".entry KERNEL", ".entry KERNEL", anchor=True, function=True),
        Region(25, end, "block", "$L__BB1_2: (line 36)", anchor=False),
    ]
    cut = "\n".join(SMALL.splitlines()[:35])  # before the first block label
    n = normalize("ptx", cut, "my_kernel")
    assert n.regions[1:] == [Region(13, len(n.lines) - 1, ".entry KERNEL", ".entry KERNEL", anchor=True, function=True)]


def test_real_triton36_kernel() -> None:
    raw = gzip.decompress((DATA / "triton36-sm86-moved_a.ptx.gz").read_bytes()).decode()
    raw_lines = raw.splitlines()
    debug_from = next(i for i, line in enumerate(raw_lines, 1) if line.strip().startswith(".section\t.debug"))
    n = normalize("ptx", raw, "moved_kernel")
    assert len(n.lines) == 377 and max(n.raw_line) < debug_from
    assert not any(line.lstrip().startswith((".loc", ".file", "$L__tmp", "$L__func", "//")) for line in n.lines)
    assert not any("//" in line or "moved_kernel" in line or not line.strip() for line in n.lines)
    assert n.lines[4] == ".visible .entry KERNEL(" and n.raw_line[4] == 12
    assert n.lines[19] == "\tld.param.b32 \t%r0, [KERNEL_param_5];" and n.raw_line[19] == 32
    assert n.lines[22] == "\tld.param.b64 \t%rd0, [KERNEL_param_2];"
    assert n.lines[37] == "\tmul.lo.s32 \t%r15, %r0, %r11;" and n.shapes[37] == "\tmul.lo.s32 \t%r_, %r_, %r_;"
    assert n.regions == [
        Region(4, 376, ".entry KERNEL", ".entry KERNEL", anchor=True, function=True),
        Region(116, 187, "block", "$L__BB0_2: (line 175)", anchor=False),
        Region(188, 278, "block", "$L__BB0_3: (line 249)", anchor=False),
        Region(279, 296, "block", "$L__BB0_1: (line 392)", anchor=False),
        Region(297, 375, "block", "$L__BB0_5: (line 411)", anchor=False),
    ]
    # Every register of the text is renumbered, per class, from 0 in order of first appearance.
    seen: dict[str, list[str]] = {}
    for syms in n.symbols:
        for s in syms:
            cls = s.rstrip("0123456789")
            if s not in seen.setdefault(cls, []):
                seen[cls].append(s)
    for cls, names in seen.items():
        assert names == [f"{cls}{i}" for i in range(len(names))], cls
    assert set(seen) == {"%r", "%rd", "%p", "$L__BB"}


def test_text_without_functions_has_no_regions() -> None:
    n = normalize("ptx", ".version 8.7\n.target sm_90a\n.address_size 64\n", None)
    assert n.lines == [".version 8.7", ".target sm_90a", ".address_size 64"]
    assert n.regions == [] and not n.fallback


def test_brace_block_before_any_function_is_not_a_function() -> None:
    text = "{\n\t.reg .b32 %r<2>;\n}\n" + SMALL
    n = normalize("ptx", text, "my_kernel")
    assert not n.fallback
    assert [(r.start, r.end, r.kind) for r in n.regions if r.function] == [
        (6, 15, ".func helper"),
        (16, 34, ".entry KERNEL"),
    ]


def test_function_left_open_before_the_debug_sections_ends_at_the_last_line() -> None:
    lines = SMALL.splitlines()
    close = max(i for i, line in enumerate(lines) if line == "}")  # the kernel's closing brace, before .section
    n = normalize("ptx", "\n".join(lines[:close] + lines[close + 1 :]), "my_kernel")
    end = len(n.lines) - 1
    assert n.lines[-1] == "\tret;"
    assert n.regions[1] == Region(13, end, ".entry KERNEL", ".entry KERNEL", anchor=True, function=True)
    assert n.regions[-1] == Region(29, end, "block", "$L__BB1_1: (line 40)", anchor=False)


def test_kernel_with_blocks_then_stray_braces_then_helper_without_blocks() -> None:
    lines = SMALL.splitlines()
    helper = lines[8:18]  # .func helper( ... }
    kernel = lines[19:43]  # .visible .entry my_kernel( ... }
    text = "\n".join(lines[4:7] + kernel + ["{", "}"] + helper)
    n = normalize("ptx", text, "my_kernel")
    assert not n.fallback
    assert [(r.kind, r.start, r.end) for r in n.regions] == [
        (".entry KERNEL", 3, 21),
        ("block", 15, 18),
        ("block", 19, 20),
        (".func helper", 24, 33),
    ]


def _fast_equals_general(text: str, kernel: str | None) -> None:
    """The chunked fast path (normalize_ptx_fast), the general normalizer through the reference Builder and through
    the BulkBuilder: the same lines, shapes, raw lines, regions and (lazy) symbols and spans."""
    from irdiff.normalize.builder import Builder, BulkBuilder
    from irdiff.normalize.ptx import normalize_ptx, normalize_ptx_fast

    fast = normalize_ptx_fast("ptx", text, text.splitlines(), kernel)
    assert fast is not None
    for make in (Builder, BulkBuilder):
        out = make("ptx", text)
        normalize_ptx(out, text.splitlines(), kernel)
        ref = out.build()
        assert (fast.lines, fast.shapes, fast.raw_line, fast.regions) == (
            ref.lines,
            ref.shapes,
            ref.raw_line,
            ref.regions,
        )
        assert list(fast.symbols) == list(ref.symbols) and list(fast.symbol_spans) == list(ref.symbol_spans)
        assert fast.columns is None and fast.raw == text and fast.stage == "ptx"


def test_fast_path_equals_the_general_normalizer_on_the_data() -> None:
    """Cheap and exact (the mutation selection of ptx.py): the small module, the real Triton 3.6 kernel, and texts
    that stress the fast path's own loop: comments and trailing blanks, a string-free kernel name in several places,
    stray braces, a function left open, labels before any function, more than one chunk of lines."""
    # new registers in the second chunk too (%rd1 from line 4100 on)
    big = "\n".join(f"\tadd.s32 \t%r{k % 7}, %r{k % 5}, %rd{k // 4100};  // c{k}" for k in range(4200))
    texts = [
        (SMALL, "my_kernel"),
        (gzip.decompress((DATA / "triton36-sm86-moved_a.ptx.gz").read_bytes()).decode(), "moved_kernel"),
        (gzip.decompress((DATA / "triton36-sm86-moved_b.ptx.gz").read_bytes()).decode(), "moved_kernel"),
        ("$L__BB0_1:\n{\n}\n.entry k(\n.param .u64 k_param_0\n)\n{\n$L__BB0_2:\n\tbra $L__BB0_1;  \n", "k"),
        (".func f()\n{\n\tmov.u32 %r1, %rd2;\n\t}\n}\n\n\t// x\n.visible .entry kk()\n{\n" + big + "\n}\n", "kk"),
        (".visible .entry k()\n{\n\t.loc 1 2 3\n$L__tmp0:\n\t@%p1 bra $L__BB0_3;\n$L__BB0_3:\n\tret;\n", None),
        # one kept line; a chunk with one symbol, with two; a register with Unicode digits (digits to the split)
        ("\tret;\n", None),
        (".entry k()\n{\n\tmov.u32 %r1, 1;\n}\n", "k"),
        (".entry k()\n{\n\tmov.u32 %r1, %r1;\n}\n", "k"),
        (".entry k()\n{\n\tmov.u32 %r\u0661, %rd2;\n\tmov.u32 %r1, %r\u0661;\n}\n", "k"),
        # a kernel name holding a line break: replaced line by line only (never across two lines)
        (".entry a\nb()\n{\n\tmov.u32 %r1, a\nb.u32 %r2;\n}\n", "a\nb"),
        # braces and block labels where LLVM never puts them: an indented label, a brace opening a function on a
        # line with a branch, one closing it on such a line, functions named like labels, a function opened by a
        # balanced line that does not end in "}" and closed by a balanced one that does not start with "{", an
        # unbalanced brace in the middle of a line
        (".entry k()\n{ bra $L__BB0_1;\n  $L__BB0_1:\n\tbra $L__BB0_1; }\n.entry k2()\n{\n\tret;\n}\n", "k"),
        (".entry $L__BB9_9()\n{\n\tret;\n}\n.func $L__BB8_8()\n{\n$L__BB0_1:\n\tret;\n}\n", None),
        (".entry k()\n\t{ x } y\n\tmov.u32 %r1, 1;\nz {}\n.entry k2()\n{\n\tfoo {\n\t}\n$L__BB0_1:\n}\n", "k"),
        (".entry k()\n{\n\tret;\n} x\n.entry k2()\n{\n$L__BB0_1:\n\tret;\n}\n", "k"),  # a "}" not at the end
        # the kernel's name before a symbol (spans move), a symbol in a comment, a section that is not DWARF
        (".entry kk()\n{\n\tld.u64 %rd1, [kk_param_0], %rd2; // %r9 x\n.section .nv.info\n\tmov %r3, %r9;\n}\n", "kk"),
    ]
    for text, kernel in texts:
        _fast_equals_general(text, kernel)
    from irdiff.normalize.ptx import normalize_ptx_fast

    text = '.entry k()\n{\n\t.pragma "%r1";\n}\n'  # a string on a kept line: the general normalizer's job
    assert normalize_ptx_fast("ptx", text, text.splitlines(), "k") is None


# The head of a module whose kernel calls tl.device_print, as LLVM's NVPTX back end prints it (Triton 3.6, sm_86):
# vprintf's prototype (a ``.func`` header without a body) and the format string, a global whose initializer holds
# braces at depth 0, before the kernel.
PRINTF_HEAD = """\
.version 8.8
.target sm_86
.address_size 64

\t// .globl\tprinting_kernel         // -- Begin function printing_kernel
.extern .func  (.param .b32 func_retval0) vprintf
(
\t.param .b64 vprintf_param_0,
\t.param .b64 vprintf_param_1
)
;
.global .align 1 .b8 printfFormat_0[8] = {120, 32, 61, 32, 37, 102, 10, 0};
.extern .shared .align 16 .b8 global_smem[];
"""
PRINTF_KERNEL = """\
.visible .entry printing_kernel(
\t.param .u64 .ptr .global .align 1 printing_kernel_param_0
)
.reqntid 128
{
\t.reg .pred \t%p<2>;
\t.reg .b32 \t%r<4>;
\tmov.u32 \t%r1, %tid.x;
\tsetp.ne.s32 \t%p1, %r1, 0;
\t@%p1 bra \t$L__BB0_2;
\t{ // callseq 0, 0
\t.param .b64 param0;
\tcall.uni (retval0), vprintf, (param0, param1);
\t} // callseq 0
$L__BB0_2:
\tret;
}
"""


def test_prototype_and_format_string_are_not_a_function() -> None:
    """vprintf's prototype leaves a pending ``.func`` header; the format string's ``{...};`` that follows is a
    global's initializer, not that function's body: only the kernel (whose ``{`` opens a line at depth 0) is a
    function, its call sequence braces do not close it, and a module cut before the kernel has no function."""
    for fast in (True, False):
        for text, kernel in ((PRINTF_HEAD, None), (PRINTF_HEAD + PRINTF_KERNEL, "printing_kernel")):
            n = _normalized(text, kernel, fast)
            assert n.lines[9] == ".global .align 1 .b8 printfFormat_0[8] = {120, 32, 61, 32, 37, 102, 10, 0};"
            if kernel is None:
                assert n.regions == []
                continue
            entry = n.lines.index(".visible .entry KERNEL(")
            label = n.lines.index("$L__BB0:")
            assert n.regions == [
                Region(entry, len(n.lines) - 1, ".entry KERNEL", ".entry KERNEL", anchor=True, function=True),
                Region(label, len(n.lines) - 2, "block", "$L__BB0_2: (line 28)", anchor=False),
            ]


def test_block_label_outside_a_function_opens_no_block() -> None:
    """A ``$L__BB`` label before any function (a fragment, or a header the normalizer did not recognize) opens no
    block: otherwise that block would run on into the next function and end before its first label."""
    text = "$L__BB9_9:\n\tret;\n" + SMALL
    for fast in (True, False):
        n = _normalized(text, "my_kernel", fast)
        assert n.lines[:2] == ["$L__BB0:", "\tret;"]
        blocks = [r for r in n.regions if r.kind == "block"]
        assert [(r.start, r.end, r.label) for r in blocks] == [
            (27, 30, "$L__BB1_2: (line 38)"),
            (31, 32, "$L__BB1_1: (line 42)"),
        ]
        assert all(any(f.start <= b.start and b.end <= f.end for f in n.regions if f.function) for b in blocks)


def _normalized(text: str, kernel: str | None, fast: bool) -> NormalizedStage:
    """The fast path's result, or the general normalizer's through the reference Builder."""
    from irdiff.normalize.builder import Builder
    from irdiff.normalize.ptx import normalize_ptx, normalize_ptx_fast

    if fast:
        got = normalize_ptx_fast("ptx", text, text.splitlines(), kernel)
        assert got is not None
        return got
    out = Builder("ptx", text)
    normalize_ptx(out, text.splitlines(), kernel)
    return out.build()


def test_quick_names_symbols_as_make_does() -> None:
    """``Symbols.quick`` is a shortcut for ``make`` (builder.py: the same namespace, name, counter stem, new name and
    shape text), so a builder may name a symbol either way and number each class once: checked on every symbol of
    the real Triton 3.6 kernel and the small module (all ten register classes and block labels)."""
    from irdiff.normalize.builder import stem_of
    from irdiff.normalize.ptx import SYMBOLS

    assert SYMBOLS.quick is not None
    real = gzip.decompress((DATA / "triton36-sm86-moved_a.ptx.gz").read_bytes()).decode()
    every_class = " ".join(f"%{c}{n}" for c in ("hh", "rd", "rs", "rq", "fd", "f", "h", "r", "p", "b") for n in (0, 17))
    seen: set[str] = set()
    for text in (real, SMALL, every_class):
        for m in SYMBOLS.pattern.finditer(text):
            sym = SYMBOLS.make(m)
            assert isinstance(sym, Sym)
            q = SYMBOLS.quick(m.group(0))
            assert q is not None  # PTX's quick knows every symbol (make is never needed)
            ns, name, stem, prefix, erased = q
            assert (ns, name, erased) == (sym.cls, sym.name, sym.erased), m.group(0)
            assert stem == (stem_of(sym.cls, sym.name) if "{stem}" in sym.fmt else "")
            for n in (0, 3, 41):  # Renamer's name for the class's n-th symbol
                assert prefix + str(n) == sym.fmt.format(stem=stem, n=n)
            seen.add(ns)
    assert len(seen) == 11  # ten register classes and the block labels, each its own namespace


def test_class_tables_name_and_erase_each_class() -> None:
    """The fast path's class tables (a symbol's text without its digits → its new name's prefix, or its shape):
    registers keep their class (``%rd`` → ``%rd0``..., shape ``%rd_``), block labels lose the ``_`` between their
    two numbers (``$L__BB_`` → ``$L__BB0``..., shape ``$L__BB_``), as the general normalizer's Sym formats say."""
    from irdiff.normalize.ptx import _ClassNames

    prefix, erased = _ClassNames(erased=False), _ClassNames(erased=True)
    assert [prefix[c] for c in ("%rd", "%p", "$L__BB_")] == ["%rd", "%p", "$L__BB"]
    assert [erased[c] for c in ("%rd", "%p", "$L__BB_")] == ["%rd_", "%p_", "$L__BB_"]
    assert dict(prefix) == {"%rd": "%rd", "%p": "%p", "$L__BB_": "$L__BB"}  # each computed once, then looked up
