"""Normalization of real Triton stages (matmul suite, sm86/sm90) and robustness on arbitrary text."""

from __future__ import annotations

import re
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irdiff.bundle import Bundle
from irdiff.normalize import NormalizedStage, normalize, rename

STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")


def _norm(bundle: Bundle, variant: str, stage: str) -> NormalizedStage:
    v = bundle.variants[variant]
    return normalize(stage, v.text(stage), v.kernel)


def _check_invariants(n: NormalizedStage) -> None:
    k = len(n.lines)
    assert len(n.shapes) == k and len(n.raw_line) == k and len(n.symbols) == k
    assert n.columns is None or len(n.columns) == k
    raw_count = len(n.raw.splitlines())
    assert all(1 <= r <= max(raw_count, 1) for r in n.raw_line)
    # the raw order is kept, except LLIR's attribute-group definitions (sorted by content: LLVM numbers and
    # orders them by first use, which differs between variants)
    kept = [r for r, line in zip(n.raw_line, n.lines, strict=True) if not line.startswith("attributes #")]
    assert kept == sorted(kept), "normalized lines keep the raw order"
    for r in n.regions:
        assert 0 <= r.start <= r.end < k
    assert len(n.symbol_spans) == k
    for line, syms, spans in zip(n.lines, n.symbols, n.symbol_spans, strict=True):
        assert len(spans) == len(syms)
        for sym, (start, end) in zip(syms, spans, strict=True):
            assert line[start:end] in (sym, sym[1:]), (line, sym, start, end)  # sym[1:]: LLIR label "12:"


@pytest.mark.parametrize("stage", STAGES)
def test_debug_info_and_kernel_name_are_gone(matmul_sm86: Bundle, stage: str) -> None:
    for variant in ("annotated", "unannotated"):
        n = _norm(matmul_sm86, variant, stage)
        _check_invariants(n)
        assert not n.fallback
        text = "\n".join(n.lines)
        raw = n.raw
        name = matmul_sm86.variants[variant].kernel
        assert name in raw and name not in text
        assert "KERNEL" in text
        # absolute paths of the suite file only live in debug info
        assert "/work/" not in text and "matmul.py" not in text
        for noise in ("loc(", "#loc", "!dbg", "!DI", ".loc\t", ".file", "$L__tmp", ".debug_", "/*0"):
            assert noise not in text, (stage, noise)
        assert len(n.lines) < len(raw.splitlines()) or stage == "sass"


def test_raw_line_points_at_the_source_line(matmul_sm86: Bundle) -> None:
    for stage in STAGES:
        n = _norm(matmul_sm86, "annotated", stage)
        raw = n.raw.splitlines()
        for i in range(0, len(n.lines), max(1, len(n.lines) // 50)):
            # the opcode (first word after any result/predicate) of the normalized line is on that raw line
            code = re.sub(r"[%#@$!][\w$.\-]+|\bLBB\d+|KERNEL", " ", n.lines[i])
            words = re.findall(r"[A-Za-z_][\w.]*", code)
            opcode = next((w for w in words if "." in w or w.isupper()), None)
            if opcode:
                assert opcode in raw[n.raw_line[i] - 1], (stage, i, n.lines[i], raw[n.raw_line[i] - 1])


def test_mlir_ssa_names_keep_python_stems(matmul_sm86: Bundle) -> None:
    n = _norm(matmul_sm86, "annotated", "ttir")
    text = "\n".join(n.lines)
    assert re.search(r"%a_ptrs\.\d+ = ", text)
    assert "%c128_i32.0 = arith.constant 128 : i32" in text
    assert not re.search(r"%a_ptrs_\d+", text)
    # the signature is split one argument per line
    assert "%stride_ak.0: i32" in [line.strip() for line in n.lines]
    assert any(line.strip() == "%a_ptr.0: !tt.ptr<f16> {tt.divisibility = 16 : i32}" for line in n.lines)
    # shapes erase every SSA name
    assert all("%a_ptrs" not in s for s in n.shapes)
    assert "%_: i32" in [shape.strip() for shape in n.shapes]


def test_ttgir_layout_aliases_are_named_by_content(matmul_sm86: Bundle) -> None:
    a = _norm(matmul_sm86, "annotated", "ttgir")
    b = _norm(matmul_sm86, "unannotated", "ttgir")
    defs_a = {line.split(" = ", 1)[0]: line.split(" = ", 1)[1] for line in a.lines if line.startswith("#")}
    defs_b = {line.split(" = ", 1)[0]: line.split(" = ", 1)[1] for line in b.lines if line.startswith("#")}
    assert "#blocked_s1x8_t2x16_w4x1_o1x0" in defs_b  # the unannotated coalesced layout
    assert defs_b["#blocked_s1x8_t2x16_w4x1_o1x0"].startswith("#ttg.blocked<{sizePerThread = [1, 8]")
    assert not any(re.fullmatch(r"#blocked\d*", k) for k in defs_a)
    # same content, same name on both sides (the MMA layout does not change)
    common = set(defs_a) & set(defs_b)
    assert any(k.startswith("#mma") for k in common)
    for k in common:
        assert defs_a[k] == defs_b[k]
    # every use refers to a defined alias
    for n, defs in ((a, defs_a), (b, defs_b)):
        for line in n.lines:
            for use in re.findall(r"#(?:blocked|mma|shared|linear|smem)\w*", line):
                assert use in defs, use


def test_alias_numbering_does_not_matter() -> None:
    body1 = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>"
    body2 = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>"
    use = "  %x = tt.splat %arg0 : i32 -> tensor<128x32xi32, #{}>\n  %y = tt.splat %arg0 : i32 -> tensor<8xi32, #{}>"
    a = f"#blocked = {body1}\n#blocked1 = {body2}\n" + use.format("blocked", "blocked1")
    b = f"#blocked = {body2}\n#blocked1 = {body1}\n" + use.format("blocked1", "blocked")
    na, nb = normalize("ttgir", a), normalize("ttgir", b)
    assert sorted(na.lines) == sorted(nb.lines)
    assert na.lines[2:] == nb.lines[2:]


def test_llir_renumbering(matmul_sm90: Bundle) -> None:
    n = _norm(matmul_sm90, "annotated", "llir")
    text = "\n".join(n.lines)
    assert "; ModuleID" not in text and "source_filename" not in text and "#dbg_" not in text
    assert n.lines[n.lines.index("define ptx_kernel void @KERNEL(") + 1] == "    ptr addrspace(1) %0"
    # attribute groups are named by content (LLVM's numbers follow first use): definitions and uses agree
    defs = re.findall(r"^attributes (#attrs\.[0-9a-f]{6}) = \{", text, re.M)
    assert defs and len(set(defs)) == len(defs)
    assert not re.search(r"\) #\d+\b", text)
    assert all(f") {d}" in text or f") local_unnamed_addr {d}" in text for d in defs)
    # numeric labels are renumbered like the values that name them
    labels = [line[:-1] for line in n.lines if re.fullmatch(r"\d+:", line)]
    assert labels and all(f"label %{lab}" in text for lab in labels)
    assert any(re.search(r"%\.frozen\.\d+ = freeze", line) for line in n.lines)


def test_ptx_registers_renumbered_per_class(matmul_sm86: Bundle) -> None:
    n = _norm(matmul_sm86, "annotated", "ptx")
    text = "\n".join(n.lines)
    for cls in ("r", "rd", "rs", "p"):
        seen = [int(x) for x in re.findall(rf"%{cls}(\d+)\b", text)]
        assert seen, cls
        first: list[int] = []
        for x in seen:
            if x not in first:
                first.append(x)
        assert first == list(range(len(first))), f"%{cls} numbered by first appearance"
    assert "KERNEL_param_3" in text
    assert re.search(r"\.reg \.b32\s+%r<\d+>;", text)
    # shapes erase registers and labels to their class
    shapes = "\n".join(n.shapes)
    assert not re.search(r"%(r|rd|rs|p)\d", shapes) and "%r_" in shapes and "%rd_" in shapes


def test_sass_triton_format_and_cuobjdump_raw_form_agree(matmul_sm86: Bundle) -> None:
    v = matmul_sm86.variants["unannotated"]
    n = normalize("sass", v.text("sass"), v.kernel)
    assert n.columns is not None and n.columns[1] == n.raw.splitlines()[1].split("\t")[0]
    assert all(re.fullmatch(r"[0-9-]{2}:[0-7-]:[0-7-]:[Y-]:[0-9a-f]", c) for c in n.columns if c)
    assert n.lines[0] == "Function:KERNEL"
    import triton.knobs

    cubin = v.path("cubin")
    assert cubin is not None
    out = subprocess.run(
        [triton.knobs.nvidia.cuobjdump.path, "-sass", str(cubin)], capture_output=True, text=True, check=True
    ).stdout
    assert "/*0000*/" in out
    raw_form = normalize("sass", out, v.kernel)
    assert raw_form.lines == n.lines
    assert raw_form.columns == n.columns


def test_raw_mode_keeps_everything(matmul_sm86: Bundle) -> None:
    v = matmul_sm86.variants["annotated"]
    n = normalize("ttgir", v.text("ttgir"), v.kernel, raw=True)
    assert n.lines == v.text("ttgir").splitlines()
    assert n.shapes == n.lines


def test_python_and_unknown_stages_are_text() -> None:
    n = normalize("python", "def f(x):  \n    return x\n")
    assert n.lines == ["def f(x):", "    return x"]
    assert normalize("llvm_debug", "a\nb").lines == ["a", "b"]


# -- robustness ----------------------------------------------------------------------------------------------

_IR_ALPHABET = st.sampled_from(
    list('%#@!$"(){}[]<>:;,.=-_ \t\n/*0123456789abcxyzRPUL')
    + ["loc(", "#loc1 = loc(", "%arg", "%r", "%rd", "$L__BB0_", ".L_x_", "LBB", "!dbg !", "/*0070*/", "/* 0x"]
    + ["tt.func @k(", ") {", "}", "define void @k(", ".entry k(", "Function:k", "--:-:-:Y:4\t", "attributes #"]
    + ["#blocked", " = #ttg.blocked<{sizePerThread = [1, 8]}>", ".section .debug_info", "scf.for", "\\", "\x00"]
)


@settings(max_examples=300, deadline=None)
@given(
    stage=st.sampled_from(["ttir", "ttgir", "llir", "ptx", "sass", "python", "x"]),
    text=st.one_of(st.text(), st.lists(_IR_ALPHABET, max_size=60).map("".join)),
    kernel=st.one_of(st.none(), st.sampled_from(["k", "KERNEL", "a.b", "(", ""])),
)
def test_normalize_never_raises(stage: str, text: str, kernel: str | None) -> None:
    n = normalize(stage, text, kernel)
    assert not n.fallback, "the dialect normalizer itself must not fail"
    _check_invariants(n)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_normalize_never_raises_on_cut_real_ir(matmul_sm86: Bundle, data: st.DataObject) -> None:
    stage = data.draw(st.sampled_from(STAGES))
    raw = matmul_sm86.variants["annotated"].text(stage)
    i = data.draw(st.integers(0, len(raw)))
    j = data.draw(st.integers(i, min(len(raw), i + 4000)))
    n = normalize(stage, raw[i:j], "matmul_kernel_annotated")
    assert not n.fallback
    _check_invariants(n)


@pytest.mark.parametrize("stage", STAGES)
def test_rename_changes_only_the_names(matmul_sm86: Bundle, stage: str) -> None:
    """``rename`` (used by the aligner for names shared by both sides of a diff) replaces exactly the symbols."""
    n = _norm(matmul_sm86, "annotated", stage)
    assert rename(n, {}).lines == n.lines
    names = sorted({x for syms in n.symbols for x in syms})
    assert names
    mapping = {x: f"{x[:1]}Q{k}" for k, x in enumerate(names)}
    r = rename(n, mapping)
    _check_invariants(r)
    assert r.shapes == n.shapes and r.raw_line == n.raw_line
    assert r.symbols == [tuple(mapping[x] for x in syms) for syms in n.symbols]
    back = rename(r, {v: k for k, v in mapping.items()})
    assert back.lines == n.lines and back.symbol_spans == n.symbol_spans
    changed = [k for k, (x, y) in enumerate(zip(n.lines, r.lines, strict=True)) if x != y]
    assert changed == [k for k, syms in enumerate(n.symbols) if syms]


def test_python_line_range_keeps_raw_numbers_and_replaces_the_kernel_name() -> None:
    text = "import triton\n\n@triton.jit\ndef my_kernel(x_ptr: int):\n    pass\n\nother = 1\n"
    ns = normalize("python", text, "my_kernel", line_range=(3, 5))
    assert ns.lines == ["@triton.jit", "def KERNEL(x_ptr: int):", "    pass"]
    assert ns.raw_line == [3, 4, 5] and ns.raw == text
    assert normalize("python", text, "my_kernel").lines[3] == "def my_kernel(x_ptr: int):"  # whole file: untouched


@pytest.mark.parametrize(
    "line",
    [
        "%5 = tt.call @my_loc(%3) : (i32) -> i32",  # one `loc(` only, the line ends in `)`: the fast path
        "%5 = tt.call @my_loc(%3) : (i32) -> i32 loc(#loc7)",  # two: the scan
        "%r = tt.call @noloc(%x) loc(#loc1)",
        "%r = tt.call @$loc(%x) loc(#loc1)",
        '%r = tt.call @a.loc(%x) loc("k.py":3:4)',
    ],
)
def test_loc_stripping_keeps_names_that_end_in_loc(line: str) -> None:
    """Only a ``loc(`` that starts a word is a location: ``@my_loc(``, ``@noloc(`` are calls and stay."""
    from irdiff.diagnose.facts import strip_loc
    from irdiff.normalize.text import strip_locs

    name = re.search(r"@([\w$.]*loc)\(", line)
    assert name
    for out in (strip_locs(line), strip_locs(line, eat_blanks=False, quoted=False), strip_loc(line)):
        assert f"@{name.group(1)}(%" in out, out
        assert "#loc" not in out and '"k.py"' not in out, out
    assert f"@{name.group(1)}(" in "\n".join(normalize("ttir", f"module {{\n  {line}\n}}\n").lines)


# -- the package's entry points (irdiff/normalize/__init__.py) ---------------------------------------------------


def test_dialects_of_stage_names() -> None:
    from irdiff.normalize import dialect_normalizer, dialect_of
    from irdiff.normalize.llir import normalize_llir
    from irdiff.normalize.mlir import normalize_mlir

    assert [dialect_of(s) for s in ("ttir", "ttgir", "llir", "ptx", "sass")] == ["mlir", "mlir", "llir", "ptx", "sass"]
    assert (dialect_of("source"), dialect_of("python"), dialect_of("nonsense")) == ("mlir", "text", "text")
    assert dialect_normalizer("mlir") is normalize_mlir and dialect_normalizer("llir") is normalize_llir
    with pytest.raises(KeyError, match="text"):
        dialect_normalizer("text")


def test_stage_fields_per_dialect() -> None:
    """Only SASS has a side column (control codes); a plain-text stage keeps its lines, trailing blanks stripped,
    unless ``raw``; a non-string text is read as its ``str``."""
    ttir = normalize("ttir", "module {\n  tt.return  \n}\n")
    assert ttir.columns is None and ttir.lines == ["module {", "  tt.return", "}"] and ttir.stage == "ttir"
    sass = normalize("sass", "Function:k\n--:-:-:Y:4\tEXIT;\n", "k")
    assert sass.columns == ["", "--:-:-:Y:4"] and sass.lines == ["Function:KERNEL", "EXIT;"]
    assert normalize("python", "x = 1  \n").lines == ["x = 1"]
    raw = normalize("python", "x = 1  \n\ty\n", raw=True)
    assert raw.lines == raw.shapes == ["x = 1  ", "\ty"] and raw.raw_line == [1, 2] and raw.regions == []
    assert normalize("ttir", "module {  \n}", raw=True).lines == ["module {  ", "}"]  # raw: no dialect at all
    assert normalize("python", 12345).lines == ["12345"]  # type: ignore[arg-type]
    # Raw mode still cuts a python stage to its line range; every stage keeps its name and its whole raw text.
    cut = normalize("python", "a\nb  \nc\n", raw=True, line_range=(2, 3))
    assert (cut.stage, cut.raw, cut.lines, cut.raw_line) == ("python", "a\nb  \nc\n", ["b  ", "c"], [2, 3])
    assert normalize("python", "a\n").stage == "python" and normalize("llvm_debug", "a\n").stage == "llvm_debug"
    ptx = normalize(
        "ptx", ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\tmov.u32 %r1, %tid.x;\n\tret;\n}\n", "k"
    )
    assert ptx.stage == "ptx" and ptx.lines[0] == ".visible .entry KERNEL(" and not ptx.fallback


def test_a_failing_normalizer_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """The safety net: the bulk builder's failure hands the text to the reference builder (same result); a
    normalizer that fails with both gives the raw lines with ``fallback`` set (the differ still shows the text)."""
    from irdiff.normalize import mlir
    from irdiff.normalize.builder import BulkBuilder

    text = "module {\n  %0 = arith.constant 1 : i32  \n}"
    good = normalize("ttir", text)
    real = mlir.normalize_mlir

    def bulk_fails(out, raw_lines, kernel_name):  # type: ignore[no-untyped-def]
        if isinstance(out, BulkBuilder):
            raise ValueError("bulk builder failed")
        real(out, raw_lines, kernel_name)

    monkeypatch.setattr(mlir, "normalize_mlir", bulk_fails)
    assert normalize("ttir", text) == good and not good.fallback

    def fails(out, raw_lines, kernel_name):  # type: ignore[no-untyped-def]
        raise ValueError("normalizer failed")

    # PTX: a failing fast path hands the text to the builders (same result); a string on a kept line (the loop
    # pragma) makes the fast path decline, and the builders normalize it.
    from irdiff.normalize import ptx

    ptx_text = '.visible .entry k(\n)\n{\n\tmov.u32 %r1, %tid.x;\n$L__BB0_1:\n\t.pragma "nounroll";\n\tret;\n}\n'
    ptx_good = normalize("ptx", ptx_text, "k")
    assert ptx_good.lines[5:7] == ['\t.pragma "nounroll";', "\tret;"] and ptx_good.symbols[3] == ("%r0",)

    def fast_fails(*args):  # type: ignore[no-untyped-def]
        raise ValueError("fast path failed")

    monkeypatch.setattr(ptx, "normalize_ptx_fast", fast_fails)
    assert normalize("ptx", ptx_text, "k") == ptx_good and not ptx_good.fallback

    monkeypatch.setattr(mlir, "normalize_mlir", fails)
    bad = normalize("ttir", text)
    assert bad.fallback and bad.lines == bad.shapes == text.splitlines() and bad.raw_line == [1, 2, 3]
    assert bad.stage == "ttir" and bad.raw == text and bad.symbols == [(), (), ()]


def test_rename_a_label_keeps_its_definition_bare() -> None:
    """LLIR shows a block label's definition without its ``%`` (``.lr.ph.0:``): renamed, it stays bare; its uses
    keep the sigil. The spans follow the new lengths."""
    text = "define void @k(i32 %0) {\n  br label %.lr.ph\n\n.lr.ph:\n  br label %.lr.ph\n}"
    ns = normalize("llir", text)
    assert ns.lines == ["define void @k(", "    i32 %0", ") {", "  br label %.lr.ph.0", ".lr.ph.0:", "  br label %.lr.ph.0",
                        "}"]  # fmt: skip
    r = rename(ns, {"%.lr.ph.0": "%loop", "%0": "%n"})
    assert r.lines == ["define void @k(", "    i32 %n", ") {", "  br label %loop", "loop:", "  br label %loop", "}"]
    assert r.symbols[4] == ("%loop",) and r.symbol_spans[4] == ((0, 4),) and r.symbol_spans[3] == ((11, 16),)
    assert r.symbol_spans[1] == ((8, 10),)
    assert r.shapes == ns.shapes and r.raw_line == ns.raw_line and r.regions == ns.regions


def test_rename_without_spans_finds_whole_symbols() -> None:
    """A stage built by hand has no spans: the symbols are searched left to right as whole tokens (``%1`` is not
    the start of ``%10``); a line whose symbol is missing stays as it is."""
    from dataclasses import replace

    lines = ["%2 = bar", "%10 = arith.addi %1, %1 : i32", "%1 = foo", "  br label %1", "1:"]
    symbols = [("%9",), ("%10", "%1", "%1"), ("%1",), ("%1",), ("%1",)]
    ns = NormalizedStage(stage="ttir", lines=lines, shapes=lines, raw_line=[1, 2, 3, 4, 5], columns=None, raw="",
                         symbols=symbols, regions=[])  # fmt: skip
    r = rename(ns, {"%1": "%x", "%9": "%y"})
    assert r.lines == ["%2 = bar", "%10 = arith.addi %x, %x : i32", "%x = foo", "  br label %x", "x:"]
    assert r.symbols[1] == ("%10", "%x", "%x") and r.symbol_spans[1] == ((0, 3), (17, 19), (21, 23))
    assert r.symbols[0] == ("%9",) and r.symbol_spans[0] == ()  # missing: left alone, the lines after it renamed
    # a line none of whose symbols is renamed is left as it was (no span searched for it)
    six = [*lines, "%5 = baz %1"]
    kept = rename(replace(ns, lines=six, shapes=six, raw_line=[1, 2, 3, 4, 5, 6], symbols=[*symbols, ("%5",)]),
                  {"%1": "%x"})  # fmt: skip
    assert kept.lines[5] == "%5 = baz %1" and kept.symbols[5] == ("%5",) and kept.symbol_spans[5] == ()
    assert kept.symbol_spans[2] == ((0, 2),) and kept.lines[:5] == r.lines
    spanned = rename(replace(ns, symbol_spans=r.symbol_spans), {"%x": "%1"})  # spans known: the same result
    assert spanned.lines == [ln.replace("%x", "%1").replace("x:", "1:") for ln in r.lines]


def test_line_ranges_clip_and_keep_their_order() -> None:
    text = "".join(f"line {n}\n" for n in range(1, 8))
    assert normalize("python", text, line_range=(0, 99)).raw_line == list(range(1, 8))
    several = normalize("python", text, line_range=[(5, 6), (2, 3), (3, 3)])
    assert several.raw_line == [5, 6, 2, 3] and several.lines == ["line 5", "line 6", "line 2", "line 3"]
    kernel = "def k2(x):\n    return k(x)\ndef k(x):\n    pass\n"
    ns = normalize("python", kernel, "k", line_range=(1, 4))
    assert ns.lines == ["def k2(x):", "    return KERNEL(x)", "def KERNEL(x):", "    pass"]  # whole words only
    assert normalize("python", kernel, "k", line_range=(1, 4), raw=True).lines[2] == "def k(x):"


def test_ptx_goes_through_the_fast_path_unless_it_declines(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PTX text without strings is normalized by ``normalize_ptx_fast`` (linear time), with the raw lines and
    the kernel's name it was given; only a text it declines (a ``"`` on a kept line) reaches the builders, which
    give the same lines."""
    from irdiff.normalize import ptx

    calls: list[tuple[str, str, int, str | None]] = []
    fast, general = ptx.normalize_ptx_fast, ptx.normalize_ptx

    def spy_fast(stage: str, text: str, raw_lines: list[str], kernel: str | None) -> NormalizedStage | None:
        calls.append(("fast", stage, len(raw_lines), kernel))
        return fast(stage, text, raw_lines, kernel)

    def spy_general(out, raw_lines, kernel):  # type: ignore[no-untyped-def]
        calls.append(("general", out.stage, len(raw_lines), kernel))
        general(out, raw_lines, kernel)

    monkeypatch.setattr(ptx, "normalize_ptx_fast", spy_fast)
    monkeypatch.setattr(ptx, "normalize_ptx", spy_general)
    plain = ".visible .entry kk(\n)\n{\n\tmov.u32 %r4, %tid.x;  // x\n\tret;\n}\n"
    n = normalize("ptx", plain, "kk")
    assert calls == [("fast", "ptx", 6, "kk")]
    assert n.lines[0] == ".visible .entry KERNEL(" and n.lines[3] == "\tmov.u32 %r0, %tid.x;" and not n.fallback
    calls.clear()
    with_string = plain.replace("\tret;", '\t.pragma "nounroll";\n\tret;')
    n = normalize("ptx", with_string, "kk")
    assert calls == [("fast", "ptx", 7, "kk"), ("general", "ptx", 7, "kk")]  # the bulk builder succeeds
    assert n.lines[4] == '\t.pragma "nounroll";' and n.lines[0] == ".visible .entry KERNEL("
    calls.clear()
    normalize("ttgir", "module {\n}\n")
    assert calls == []  # other dialects never try the PTX fast path


def test_only_huge_stages_normalize_again_for_their_symbols(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above RECOMPUTE_LINES a stage keeps no renaming tables: reading its symbols or spans normalizes the same
    text again (once for both, same stage, text and kernel name); at RECOMPUTE_LINES lines or fewer it never
    does. Either way the symbols are those of the small-threshold-free result."""
    import irdiff.normalize as N

    text = ".visible .entry kk(\n)\n{\n\tmov.u32 %r4, %tid.x;\n\tadd.s32 %r5, %r4, 1;\n\tret;\n}\n"
    ref = normalize("ptx", text, "kk")
    assert len(ref.lines) == 7 and ref.symbols[3] == ("%r0",) and ref.symbols[4] == ("%r1", "%r0")
    real = N._normalize
    again: list[tuple[object, ...]] = []

    def spy(stage, text, kernel_name, *, raw, line_range, keep):  # type: ignore[no-untyped-def]
        if keep:
            again.append((stage, text, kernel_name, raw, line_range))
        return real(stage, text, kernel_name, raw=raw, line_range=line_range, keep=keep)

    monkeypatch.setattr(N, "_normalize", spy)
    for limit, recomputed, spans_first in ((7, False, False), (6, True, False), (6, True, True)):
        monkeypatch.setattr(N, "RECOMPUTE_LINES", limit)
        again.clear()
        n = normalize("ptx", text, "kk")
        assert again == []  # nothing normalized again before a read
        first, then = (n.symbol_spans, n.symbols) if spans_first else (n.symbols, n.symbol_spans)
        assert list(first) == list(ref.symbol_spans if spans_first else ref.symbols)
        assert again == ([("ptx", text, "kk", False, None)] if recomputed else [])  # either list alone recomputes
        assert list(then) == list(ref.symbols if spans_first else ref.symbol_spans)
        assert len(again) == recomputed  # once for both
        assert n.lines == ref.lines and n.shapes == ref.shapes and not n.fallback


@pytest.mark.parametrize("stage", ["sass", "ttgir", "llir"])
def test_reference_builder_fallback_gives_the_bulk_builders_result(
    matmul_sm86: Bundle, stage: str, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """When the bulk builder raises, ``_dialect`` falls back to the reference builder: the same lines, shapes and
    (SASS only) control-code side column; only a failure of both gives the raw lines (``fallback``)."""
    from irdiff.normalize import builder

    v = matmul_sm86.variants["annotated"]
    bulk = normalize(stage, v.text(stage), v.kernel)

    def broken(*args: object, **kw: object) -> None:
        raise RuntimeError("bulk builder broken")

    monkeypatch.setattr(builder, "BulkBuilder", broken)
    ref = normalize(stage, v.text(stage), v.kernel)
    assert not ref.fallback and (ref.lines, ref.shapes, ref.columns) == (bulk.lines, bulk.shapes, bulk.columns)
    assert (ref.columns is not None) == (stage == "sass")
    monkeypatch.setattr(builder, "Builder", broken)
    assert normalize(stage, v.text(stage), v.kernel).fallback
