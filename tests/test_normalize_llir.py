"""LLIR normalization details (``irdiff/normalize/llir.py``) on the real LLIR of ``matmul`` sm86 (the session's
compile): one function region with its basic blocks, debug info dropped, values and metadata renumbered by first
appearance, attribute groups named by content and listed sorted by it."""

from __future__ import annotations

import hashlib
import itertools
import re

import pytest

from irdiff.bundle import Bundle
from irdiff.normalize import NormalizedStage, llir, normalize
from irdiff.normalize.builder import Builder, BulkBuilder
from irdiff.normalize.llir import _drop_dbg, attribute_group_names, normalize_llir
from irdiff.normalize.model import Region


def test_llir_of_matmul(matmul_sm86: Bundle) -> None:
    v = matmul_sm86.variants["annotated"]
    raw = v.text("llir")
    raw_lines = raw.splitlines()
    ns = normalize("llir", raw, kernel_name=v.kernel)
    f, *blocks = ns.regions
    assert (f.kind, f.label, f.anchor, f.function) == ("define @KERNEL", "define @KERNEL", True, True)
    assert ns.lines[f.start] == "define ptx_kernel void @KERNEL(" and ns.lines[f.end] == "}"
    assert len(blocks) >= 3
    for b, nxt in itertools.pairwise([*blocks, None]):
        assert (b.kind, b.anchor, b.function) == ("block", False, False)
        assert re.fullmatch(r"[\w.$-]+:", ns.lines[b.start]) and b.label == f"block at line {ns.raw_line[b.start]}"
        assert re.match(r"[\w.$-]+:", raw_lines[ns.raw_line[b.start] - 1])
        assert b.end == (nxt.start - 1 if nxt else f.end - 1)  # blocks tile the function after its entry block
    assert f.start < blocks[0].start - 1  # the entry block has no label: no region
    # Debug info dropped; nothing else.
    assert "!dbg" in raw and not any("!dbg" in ln or "!DI" in ln or "llvm.dbg" in ln for ln in ns.lines)
    assert not any(ln.startswith(("; ModuleID", "source_filename")) for ln in ns.lines)
    # Numbered values by first appearance (%0, %1, ... the kernel's arguments first), none merged.
    numbered = list(dict.fromkeys(s for syms in ns.symbols for s in syms if re.fullmatch(r"%\d+", s)))
    assert numbered == [f"%{n}" for n in range(len(numbered))] and ns.lines[f.start + 1] == "    ptr addrspace(1) %0"
    in_body = {m for m in re.findall(r"%(\d+)\b", raw)}
    assert len(in_body) - 2 <= len(numbered) <= len(in_body)  # none merged (a dropped comment may hold one)
    meta = list(dict.fromkeys(s for syms in ns.symbols for s in syms if s.startswith("!")))
    # Triton 3.6 keeps 3 non-debug nodes, 3.9 more
    assert meta == [f"!{n}" for n in range(len(meta))] and len(meta) >= 2
    for line, shape, syms in zip(ns.lines, ns.shapes, ns.symbols, strict=True):
        erased = shape.count("%_") + shape.count("!_") + shape.count("#_")
        assert erased == len(syms) and line.rstrip() == line and not line.isspace()
    # Attribute groups: named by content, uses renamed with them, listed sorted by content.
    names = attribute_group_names(raw_lines)
    defs = dict(re.findall(r"^attributes #(\d+) = \{(.*)\}\s*$", raw, re.M))
    assert set(names) == set(defs) and len(set(names.values())) == len(defs)
    attrs = [ln for ln in ns.lines if ln.startswith("attributes ")]
    assert attrs == [
        f"attributes {names[k]} = {{{defs[k]}}}" for k in sorted(defs, key=lambda k: " ".join(defs[k].split()))
    ]
    assert ns.lines[f.start + 1 : f.start + 20][-1].startswith(")") or any(
        names["0"] in ln for ln in ns.lines[: f.start + 20]
    )
    assert not any(re.search(r"(?<![\w\"])#\d+\b", ln) for ln in ns.lines)


def test_drop_dbg() -> None:
    assert _drop_dbg("  %5 = add i32 %3, %4, !dbg !12") == "  %5 = add i32 %3, %4"
    assert _drop_dbg("  call void @f(), !dbg !7, !tbaa !3") == "  call void @f(), !tbaa !3"
    assert _drop_dbg("define void @k(ptr %0) #0 !dbg !5 {") == "define void @k(ptr %0) #0 {"
    assert _drop_dbg("  br label %9, !dbg !12, !dbg !13") == "  br label %9"
    assert _drop_dbg("!dbg !1") == "" and _drop_dbg("x !dbg !") == "x" and _drop_dbg("ret void") == "ret void"


def test_attribute_group_names_by_content() -> None:
    lines = [
        "attributes #0 = { nounwind }",
        'attributes #1 = { nounwind   "nvvm.reqntid"="128" }',
        "attributes #2 = {  nounwind  }",
        "attributes #3 = bad",
        "  attributes #4 = { nounwind }",
    ]
    names = attribute_group_names(lines)
    digest = "#attrs." + hashlib.blake2b(b"nounwind", digest_size=3).hexdigest()
    assert names == {"0": digest, "1": names["1"], "2": digest} and names["1"] != digest
    # Two contents whose digests share their six hex digits: the second gets ``.2``, then ``.3``.
    seen: dict[str, str] = {}
    pair = None
    for i in itertools.count():
        c = f"a{i}"
        h = hashlib.blake2b(c.encode(), digest_size=3).hexdigest()
        if h in seen:
            pair = (seen[h], c)
            break
        seen[h] = c
    a, b = pair
    got = attribute_group_names(
        [f"attributes #0 = {{ {a} }}", f"attributes #1 = {{ {b} }}", f"attributes #2 = {{ {a} }}"]
    )
    assert got["1"] == got["0"] + ".2" and got["2"] == got["0"]


def test_drop_dbg_of_lines_the_one_attachment_shortcut_skips() -> None:
    """Non-ASCII lines (a quoted global name) and lines with two attachments take the character loop: the same
    result as the one-attachment shortcut, whatever the metadata number's length."""
    assert _drop_dbg('  call void @"nä"(i32 %3), !dbg !123, !tbaa !7') == '  call void @"nä"(i32 %3), !tbaa !7'
    assert _drop_dbg('  call void @"nä"(i32 %3), !dbg !12345') == '  call void @"nä"(i32 %3)'
    assert _drop_dbg('define void @"kä"(ptr %0) #0 !dbg !123 {') == 'define void @"kä"(ptr %0) #0 {'
    assert _drop_dbg("  br label %9, !dbg !123,!dbg !4567, !llvm.loop !8") == "  br label %9, !llvm.loop !8"
    assert _drop_dbg("!dbg !123, !dbg !4 x") == " x"
    for line in ["  %5 = add i32 %3, %4, !dbg !123, !tbaa !7", "  ret void, !dbg !98765"]:
        two = line.replace("!dbg !", "!dbg !1, !dbg !", 1)  # the loop, on the same line with one more attachment
        assert _drop_dbg(line) == _drop_dbg(two) == _drop_dbg(line.replace("  ", "  ä", 1))[:2] + _drop_dbg(line)[2:]


# An LLIR module as ``make_llir`` prints it (Triton 3.9, LLVM 21): a loop (block labels with ``; preds``), a call
# to a ``noinline`` helper defined after the kernel, a declaration, attribute groups numbered by first use (not
# sorted by content), debug metadata and a loop's metadata (kept).
ROWSUM = """\
; ModuleID = 'LLVMDialectModule'
source_filename = "LLVMDialectModule"

; Function Attrs: nounwind
define ptx_kernel void @rowsum(ptr addrspace(1) %0, i32 %1) local_unnamed_addr #0 !dbg !4 {
  %3 = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x(), !dbg !12
  %.not = icmp sgt i32 %1, 0, !dbg !13
  br i1 %.not, label %.lr.ph, label %._crit_edge, !dbg !13

.lr.ph:                                           ; preds = %2, %.lr.ph
  %4 = phi i32 [ %5, %.lr.ph ], [ 0, %2 ]
  %5 = add nuw nsw i32 %4, 1, !dbg !14
  %exitcond = icmp eq i32 %5, %1, !dbg !13
  br i1 %exitcond, label %._crit_edge, label %.lr.ph, !dbg !13, !llvm.loop !15

._crit_edge:                                      ; preds = %.lr.ph, %2
  tail call void @helper(i32 %3) #2, !dbg !16
  ret void, !dbg !17
}

define internal void @helper(i32 %0) #1 {
  ret void
}

declare noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() #3

attributes #0 = { nounwind "nvvm.reqntid"="128" }
attributes #1 = { noinline nounwind }
attributes #2 = {  nounwind }
attributes #3 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}

!0 = distinct !DICompileUnit(language: DW_LANG_C, file: !1, producer: "triton", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "k.py", directory: "/tmp")
!2 = !{i32 2, !"Debug Info Version", i32 3}
!3 = !{i32 4, !"nvvm-reflect-ftz", i32 1}
!15 = distinct !{!15, !18}
!18 = !{!"llvm.loop.mustprogress"}"""


def _attrs(content: str) -> str:
    return "#attrs." + hashlib.blake2b(content.encode(), digest_size=3).hexdigest()


def _normalize_both(text: str, kernel: str | None) -> NormalizedStage:
    """:func:`normalize`, the bulk builder (called directly: :func:`normalize` would fall back to the reference
    builder if it raised) and the reference builder give one stage; no fallback to raw lines."""
    ns = normalize("llir", text, kernel_name=kernel)
    for make in (Builder, BulkBuilder):
        out = make("llir", text)
        normalize_llir(out, text.splitlines(), kernel)
        assert out.build() == ns
    assert not ns.fallback
    return ns


def test_llir_module_lines_regions_and_attribute_groups() -> None:
    ns = _normalize_both(ROWSUM, "rowsum")
    a0, a1, a2, a3 = (
        _attrs('nounwind "nvvm.reqntid"="128"'),
        _attrs("noinline nounwind"),
        _attrs("nounwind"),  # blanks collapsed
        _attrs("mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)"),
    )
    assert ns.lines == [
        "define ptx_kernel void @KERNEL(",
        "    ptr addrspace(1) %0",
        "    i32 %1",
        f") local_unnamed_addr {a0} {{",
        "  %2 = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()",
        "  %.not.0 = icmp sgt i32 %1, 0",
        "  br i1 %.not.0, label %.lr.ph.0, label %._crit_edge.0",
        ".lr.ph.0:",  # a label's definition is shown without its sigil, renamed like its uses
        "  %3 = phi i32 [ %4, %.lr.ph.0 ], [ 0, %5 ]",  # %2, the entry block, is first used here
        "  %4 = add nuw nsw i32 %3, 1",
        "  %exitcond.0 = icmp eq i32 %4, %1",
        "  br i1 %exitcond.0, label %._crit_edge.0, label %.lr.ph.0, !llvm.loop !0",
        "._crit_edge.0:",
        f"  tail call void @helper(i32 %2) {a2}",
        "  ret void",
        "}",
        "define internal void @helper(",
        "    i32 %0",
        f") {a1} {{",
        "  ret void",
        "}",
        f"declare noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() {a3}",
        # the attribute groups, sorted by content (LLVM numbers them by first use)
        f"attributes {a3} = {{ mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }}",
        f"attributes {a1} = {{ noinline nounwind }}",
        f"attributes {a2} = {{  nounwind }}",
        f'attributes {a0} = {{ nounwind "nvvm.reqntid"="128" }}',
        "!llvm.module.flags = !{!1, !2}",
        '!2 = !{i32 4, !"nvvm-reflect-ftz", i32 1}',
        "!0 = distinct !{!0, !3}",
        '!3 = !{!"llvm.loop.mustprogress"}',
    ]
    assert ns.raw_line == [5, 5, 5, 5, 6, 7, 8, 10, 11, 12, 13, 14, 16, 17, 18, 19, 21, 21, 21, 22, 23, 25,
                           30, 28, 29, 27, 33, 38, 39, 40]  # fmt: skip
    assert ns.regions == [
        Region(0, 15, "define @KERNEL", "define @KERNEL", anchor=True, function=True),
        Region(7, 11, "block", "block at line 10", anchor=False, function=False),
        Region(12, 14, "block", "block at line 16", anchor=False, function=False),
        Region(16, 20, "define @helper", "define @helper", anchor=True, function=True),
    ]
    # Shapes: values, labels and metadata erased to their class; attribute-group names compared exactly.
    assert ns.shapes[7] == "%_:" and ns.symbols[7] == ("%.lr.ph.0",)
    assert ns.shapes[8] == "  %_ = phi i32 [ %_, %_ ], [ 0, %_ ]"
    assert ns.symbols[8] == ("%3", "%4", "%.lr.ph.0", "%5")
    assert ns.shapes[11] == "  br i1 %_, label %_, label %_, !llvm.loop !_" and ns.symbols[11][-1] == "!0"
    assert ns.shapes[28] == "!_ = distinct !{!_, !_}" and ns.symbols[28] == ("!0", "!0", "!3")
    assert ns.shapes[13] == f"  tail call void @helper(i32 %_) {a2}" and ns.symbols[13] == ("%2",)


def test_llir_cut_inside_a_function() -> None:
    """A text cut inside the kernel (``irdiff show`` of a range): the open function and its last block end at the
    last line; attribute groups without a definition are numbered by first appearance and erased in the shape."""
    cut = "\n".join(ROWSUM.splitlines()[:17])
    ns = _normalize_both(cut, "rowsum")
    assert ns.lines[3] == ") local_unnamed_addr #0 {" and ns.shapes[3] == ") local_unnamed_addr #_ {"
    assert ns.lines[-1] == "  tail call void @helper(i32 %2) #1" and ns.symbols[-1] == ("%2", "#1")
    assert ns.regions == [  # (the stage lists regions by start line)
        Region(0, 13, "define @KERNEL", "define @KERNEL", anchor=True, function=True),
        Region(7, 11, "block", "block at line 10", anchor=False, function=False),
        Region(12, 13, "block", "block at line 16", anchor=False, function=False),
    ]
    # Cut after a label, before its first instruction: the label's block is the last line; without the define,
    # labels make no block (there is no function to tile).
    ns = _normalize_both("\n".join(ROWSUM.splitlines()[:10]), None)
    assert ns.lines[-1] == ".lr.ph.0:" and ns.lines[0] == "define ptx_kernel void @rowsum("
    assert ns.regions == [
        Region(0, 7, "define @rowsum", "define @rowsum", anchor=True, function=True),
        Region(7, 7, "block", "block at line 10", anchor=False, function=False),
    ]
    body = _normalize_both("\n".join(ROWSUM.splitlines()[9:18]), None)
    assert body.lines[0] == ".lr.ph.0:" and body.regions == []


def test_llir_labels_defined_before_use_and_llvm_suffixes() -> None:
    """A rotated loop (its body ``3:`` printed before the header that branches to it), a preheader named
    ``.lr.ph5`` branched to before ``.lr.ph`` is defined, LLVM's digit suffix (``%.frozen1147``: stem ``.frozen``)
    and a helper without arguments. Every name is given at its first appearance, definition or use."""
    text = """\
define ptx_kernel void @two(ptr addrspace(1) %0, i32 %1) local_unnamed_addr #0 {
  %.frozen1147 = freeze i32 %1
  br label %6

3:                                                ; preds = %6
  %4 = add nuw nsw i32 %7, 1
  br label %6

6:                                                ; preds = %3, %2
  %7 = phi i32 [ 0, %2 ], [ %4, %3 ]
  %8 = icmp slt i32 %7, %.frozen1147
  br i1 %8, label %3, label %.lr.ph5

.lr.ph:                                           ; preds = %.lr.ph5
  tail call void @zero() #1
  ret void

.lr.ph5:                                          ; preds = %6
  br label %.lr.ph
}

define internal void @zero() #1 {
  ret void
}

attributes #0 = { nounwind }
attributes #1 = { noinline nounwind }"""
    ns = _normalize_both(text, "two")
    a0, a1 = _attrs("nounwind"), _attrs("noinline nounwind")
    assert ns.lines == [
        "define ptx_kernel void @KERNEL(",
        "    ptr addrspace(1) %0",
        "    i32 %1",
        f") local_unnamed_addr {a0} {{",
        "  %.frozen.0 = freeze i32 %1",
        "  br label %2",
        "3:",  # first seen at its definition: the next number
        "  %4 = add nuw nsw i32 %5, 1",
        "  br label %2",
        "2:",
        "  %5 = phi i32 [ 0, %6 ], [ %4, %3 ]",
        "  %7 = icmp slt i32 %5, %.frozen.0",
        "  br i1 %7, label %3, label %.lr.ph.0",
        ".lr.ph.1:",  # the stem's second name: .lr.ph5 came first
        f"  tail call void @zero() {a1}",
        "  ret void",
        ".lr.ph.0:",
        "  br label %.lr.ph.1",
        "}",
        "define internal void @zero(",  # no arguments: the head, then the rest of the signature
        f") {a1} {{",
        "  ret void",
        "}",
        f"attributes {a1} = {{ noinline nounwind }}",
        f"attributes {a0} = {{ nounwind }}",
    ]
    assert ns.symbols[6] == ("%3",) and ns.shapes[6] == "%_:" and ns.symbols[13] == ("%.lr.ph.1",)
    assert [(r.start, r.end, r.label) for r in ns.regions] == [
        (0, 18, "define @KERNEL"),
        (6, 8, "block at line 5"),
        (9, 12, "block at line 9"),
        (13, 15, "block at line 14"),
        (16, 17, "block at line 18"),
        (19, 22, "define @zero"),
    ]


def test_drop_dbg_of_three_attachments_and_malformed_attribute_groups() -> None:
    assert _drop_dbg("  br label %9, !dbg !1, !dbg !22, !dbg !333") == "  br label %9"
    names = attribute_group_names(["attributes #3 = bad", "attributes #5 = { nounwind }"])
    assert names == {"5": _attrs("nounwind")}  # a malformed group does not end the list


def test_llir_cut_at_a_function_end() -> None:
    """A text that starts inside a function and ends with its ``}``: no function, so no region, and the closer
    stays a line."""
    body = _normalize_both("\n".join(ROWSUM.splitlines()[9:19]), None)
    assert body.lines[0] == ".lr.ph.0:" and body.lines[-1] == "}" and body.regions == []


def test_attribute_groups_sorted_by_their_attributes() -> None:
    """Attribute groups are listed sorted by their attribute text (blanks collapsed), not by their numbers: ``uwtable
    nounwind`` sorts before ``uwtable(sync)`` (a blank before a parenthesis), whichever number each group has."""
    for first, second in (("#0", "#1"), ("#1", "#0")):
        text = (
            f"define void @k() {first} {{\n  ret void\n}}\n\ndefine void @h() {second} {{\n  ret void\n}}\n\n"
            f"attributes {second} = {{ uwtable(sync) }}\nattributes {first} = {{ uwtable   nounwind }}\n"
        )
        ns = _normalize_both(text, None)
        a, b = _attrs("uwtable nounwind"), _attrs("uwtable(sync)")
        assert ns.lines[-2:] == [f"attributes {a} = {{ uwtable   nounwind }}", f"attributes {b} = {{ uwtable(sync) }}"]


def test_llir_whole_text_path_hands_only_the_rare_lines_to_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a text from ``splitlines`` (no line holds a line break) the whole-text path reads every instruction and label
    itself: the per-line walk (:meth:`_LlirWalk.line`) never runs, and :meth:`_LlirWalk.other` gets only the
    ``define``, the ``}`` and the attribute group (raw lines 1, 7, 8), each once, in order; the stage is the
    reference builder's."""
    text = "\n".join(
        [
            "define void @k(i32 %a) #0 {",
            "  %x = add i32 %a, 1 ; one",
            '  call void asm "mov.b32 $0, %r1;", "=r"(i32 %x)',
            "  br label %l",
            "l:",
            "  ret void",
            "}",
            "attributes #0 = { nounwind }",
        ]
    )
    ref = Builder("llir", text)
    normalize_llir(ref, text.splitlines(), None)
    walked: list[int] = []
    others: list[tuple[str, int]] = []
    line, other = llir._LlirWalk.line, llir._LlirWalk.other

    def spy_line(self: llir._LlirWalk, text: str, rawno: int) -> None:
        walked.append(rawno)
        line(self, text, rawno)

    def spy_other(self: llir._LlirWalk, text: str, rawno: int) -> None:
        others.append((text, rawno))
        other(self, text, rawno)

    monkeypatch.setattr(llir._LlirWalk, "line", spy_line)
    monkeypatch.setattr(llir._LlirWalk, "other", spy_other)
    out = BulkBuilder("llir", text)
    normalize_llir(out, text.splitlines(), None)
    ns = out.build()
    a0 = _attrs("nounwind")
    assert ns.lines == [
        "define void @k(",
        "    i32 %a.0",
        f") {a0} {{",
        "  %x.0 = add i32 %a.0, 1",
        '  call void asm "mov.b32 $0, %r1;", "=r"(i32 %x.0)',  # the string's %r1 is no value
        "  br label %l.0",
        "l.0:",
        "  ret void",
        "}",
        f"attributes {a0} = {{ nounwind }}",
    ]
    assert ns.raw_line == [1, 1, 1, 2, 3, 4, 5, 6, 7, 8]
    assert walked == []
    assert others == [("define void @k(i32 %a) #0 {", 1), ("}", 7), ("attributes #0 = { nounwind }", 8)]
    assert ns == ref.build()


def test_llir_raw_line_holding_a_line_break(monkeypatch: pytest.MonkeyPatch) -> None:
    """A raw line that holds a line break (``normalize_llir`` called on lines not from ``splitlines``): its chunk of
    :data:`~irdiff.normalize.llir.BULK_LINES` raw lines (2 here) goes through the per-line walk, each raw line with its
    own 1-based number, and the chunks after it take the whole-text path again. The bulk builder shows that line's
    two halves as two lines (it splits its chunks at line breaks; ``normalize`` never passes such a line), so the
    text, the raw line numbers and the regions are the reference builder's."""
    raw = ["define void @k(i32 %a) {", "  %x = add i32 %a, 1\n  %y = add i32 %x, 2", "l:", "  ret void, !dbg !3", "}"]
    text = "\n".join(raw)
    monkeypatch.setattr(llir, "BULK_LINES", 2)
    ref = Builder("llir", text)
    normalize_llir(ref, raw, None)
    want = ref.build()
    out = BulkBuilder("llir", text)
    normalize_llir(out, raw, None)
    got = out.build()
    text_lines = ["define void @k(", "    i32 %a.0", ") {", "  %x.0 = add i32 %a.0, 1", "  %y.0 = add i32 %x.0, 2"]
    text_lines += ["l.0:", "  ret void", "}"]
    assert "\n".join(got.lines) == "\n".join(want.lines) == "\n".join(text_lines)
    assert got.raw_line == want.raw_line == [1, 1, 1, 2, 3, 4, 5]
    regions = [
        Region(0, 6, "define @k", "define @k", anchor=True, function=True),
        Region(4, 5, "block", "block at line 3", anchor=False, function=False),
    ]
    assert got.regions == want.regions == regions


def test_llir_chunk_with_every_kind_of_debug_line() -> None:
    """A module that holds every text the dropped lines need (``ModuleID``, ``source_filename``, ``#dbg_``,
    ``@llvm.dbg.``, ``!llvm.dbg.``, ``!DI``, ``Debug Info Version``, ``Dwarf Version``): each such line goes, the
    other metadata stays (renumbered by first appearance), in both builders."""
    text = "\n".join(
        [
            "; ModuleID = 'm'",
            'source_filename = "m"',
            "define void @k(i32 %a) !dbg !4 {",
            "  #dbg_value(i32 %a, !5, !DIExpression(), !6)",
            "  tail call void @llvm.dbg.value(metadata i32 %a, metadata !5)",
            "  ret void, !dbg !6",
            "}",
            "declare void @llvm.dbg.value(metadata, metadata, metadata)",
            "!llvm.dbg.cu = !{!0}",
            "!0 = distinct !DICompileUnit(language: DW_LANG_C, file: !1)",
            '!2 = !{i32 2, !"Debug Info Version", i32 3}',
            '!3 = !{i32 7, !"Dwarf Version", i32 4}',
            "!7 = !{!8}",
            "!8 = !{}",
        ]
    )
    ns = _normalize_both(text, None)
    assert ns.lines == ["define void @k(", "    i32 %a.0", ") {", "  ret void", "}", "!0 = !{!1}", "!1 = !{}"]
    assert ns.raw_line == [3, 3, 3, 6, 7, 13, 14]


def test_attribute_groups_of_one_content_keep_their_order() -> None:
    """Two attribute groups with one content (blanks collapsed: ``nounwind``; LLVM would print one) keep their raw
    order, ``#1`` (raw line 4) before ``#0`` (raw line 5): the sort is by content only, and both get its name."""
    text = "define void @k() #1 {\n  ret void\n}\nattributes #1 = { nounwind }\nattributes #0 = {  nounwind  }"
    ns = _normalize_both(text, None)
    a = _attrs("nounwind")
    assert ns.lines == [
        "define void @k(",
        f") {a} {{",
        "  ret void",
        "}",
        f"attributes {a} = {{ nounwind }}",
        f"attributes {a} = {{  nounwind  }}",
    ]
    assert ns.raw_line == [1, 1, 2, 3, 4, 5]


def test_llir_define_with_an_unclosed_signature_or_an_unclosed_quoted_name() -> None:
    """A ``define`` whose ``(`` is never closed keeps the rest of its line as its one argument and an empty closing
    line; one whose quoted name is never closed (``@"h``) is a function named by no global: its region's kind is
    ``define``."""
    text = 'define void @k(i32 %a {\n  ret void\n}\ndefine void @"h(i32 %b) {\n  ret void\n}'
    ns = _normalize_both(text, None)
    assert ns.lines == [
        "define void @k(",
        "    i32 %a.0 {",
        "",
        "  ret void",
        "}",
        'define void @"h(',
        "    i32 %b.0",
        ") {",
        "  ret void",
        "}",
    ]
    assert ns.raw_line == [1, 1, 1, 2, 3, 4, 4, 4, 5, 6]
    assert ns.regions == [
        Region(0, 4, "define @k", "define @k", anchor=True, function=True),
        Region(5, 9, "define", "define", anchor=True, function=True),
    ]


def test_drop_dbg_of_attachments_llvm_does_not_print() -> None:
    """``!dbg !`` attachments in spellings LLVM never prints (a user's edited text): no number (the next character
    is kept), a second attachment right after the first's ``!``, a tab or another character before it, a letter
    after the number, attachments at the line's start with a blank or a comma at its end, a removal that joins a
    new ``!dbg !``. Each ``!dbg !`` goes with its digits, the blanks before it and one comma before those; nothing
    else goes."""
    assert _drop_dbg("  ret void, !dbg !!dbg !5") == "  ret void"
    assert _drop_dbg("  ret void, !dbg !x") == "  ret voidx"
    assert _drop_dbg("  ret void,\t!dbg !5") == "  ret void,\t"
    assert _drop_dbg("  ret X !dbg !5") == "  ret X"
    assert _drop_dbg("  ret void, !dbg !5X") == "  ret voidX"
    assert _drop_dbg("  a, !dbg !x, !dbg !5") == "  ax"
    assert _drop_dbg("!dbg !1 !dbg !2 ") == " "
    assert _drop_dbg(" !dbg !1 !dbg !2") == ""
    assert _drop_dbg("!dbg !1 !dbg !2,") == ","
    # a removal that joins ``!dbg`` and `` !`` into a new ``!dbg !`` before the cut: not reread (the search goes on
    # from the cut), so it stays
    assert _drop_dbg("a!dbg, !dbg !1 !, !dbg !2") == "a!dbg !"
