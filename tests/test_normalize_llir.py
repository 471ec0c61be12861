"""LLIR normalization details (``irdiff/normalize/llir.py``) on the real LLIR of ``matmul`` sm86 (the session's
compile): one function region with its basic blocks, debug info dropped, values and metadata renumbered by first
appearance, attribute groups named by content and listed sorted by it."""

from __future__ import annotations

import hashlib
import itertools
import re

from irdiff.bundle import Bundle
from irdiff.normalize import normalize
from irdiff.normalize.llir import _drop_dbg, attribute_group_names


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
    assert meta == [f"!{n}" for n in range(len(meta))] and len(meta) > 3
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
