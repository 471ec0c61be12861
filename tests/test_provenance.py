"""Provenance on real compiles (``irdiff/diagnose/provenance.py``): which kernel.py line each IR line comes from,
what a line compiles to per stage, TTIR ops that differ only in attributes, and the per-stage trace of a change.

Kernels: ``tests/suites/root_cases.py`` (``streaming``: the last load with ``eviction_policy="evict_first"`` or
without; ``splitk``: ``tl.atomic_add`` with ``sem="relaxed"`` or the default ``acq_rel``), sm80, from the shared
compile cache. Both variant orders are checked where a result names a side. Small real-dialect TTIR snippets pin the
attribute tokenizer and the ``tl.arange`` stride data flow.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from irdiff.bundle import Bundle, VariantResult
from irdiff.diagnose import provenance as P
from irdiff.diagnose.model import Evidence

CASES = str(Path(__file__).parent / "suites" / "root_cases.py")


@pytest.fixture(scope="module")
def streaming(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80")


@pytest.fixture(scope="module")
def splitk(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(CASES + "::splitk", ["relaxed", "ordered"], "sm80")


def line_of(v: VariantResult, needle: str) -> int:
    first, last = v.metadata["kernel_lines"]
    lines = v.text("python").splitlines()
    return next(i for i in range(first, last + 1) if needle in lines[i - 1])


def ttir_line(v: VariantResult, needle: str) -> int:
    return next(i for i, ln in enumerate(v.text("ttir").splitlines(), 1) if needle in ln)


def test_line_map_and_python_lines(streaming: Bundle) -> None:
    ev = streaming.variants["evict"]
    load_py = line_of(ev, 'eviction_policy="evict_first"')
    load_ir = ttir_line(ev, "eviction_policy = evict_first")
    m = P.line_map(ev, "ttir")
    assert m[load_ir] == load_py
    # every mapped TTIR line lies inside the kernel (signature line included) and the module header is not mapped
    first, last = ev.metadata["kernel_lines"]
    assert m and all(first <= py <= last for py in m.values())
    assert ttir_line(ev, "module") not in m
    assert P.line_map(ev, "python") == {}
    assert P.python_lines(ev, Evidence("evict", "ttir", load_ir, "")) == {load_py}
    assert P.python_lines(ev, Evidence("evict", "python", 7, "")) == {7}
    assert P.python_lines(ev, Evidence("evict", "ttir", None, "")) == set()
    assert P.python_lines(ev, Evidence("evict", "python", None, "")) == set()
    assert P.python_lines(ev, Evidence("evict", "ttir", 1, "")) == set()  # the module line maps nowhere
    # PTX .loc lines map into the kernel too (the load's line appears among them)
    assert load_py in set(P.line_map(ev, "ptx").values())


def test_ops_at_names_what_a_line_compiled_to(streaming: Bundle) -> None:
    ev, kp = streaming.variants["evict"], streaming.variants["keep"]
    le, lk = line_of(ev, "y = tl.load"), line_of(kp, "y = tl.load")
    ttir_e, ttir_k = P.ops_at(ev, "ttir", {le}), P.ops_at(kp, "ttir", {lk})
    load_e = [k for k in ttir_e if "tt.load" in k]
    load_k = [k for k in ttir_k if "tt.load" in k]
    assert len(load_e) == 1 and "eviction_policy = evict_first" in load_e[0] and ttir_e[load_e[0]] == 1
    assert len(load_k) == 1 and "cachePolicy" not in load_k[0]
    # SSA names and locations erased: the other keys of the line are the same op text in both variants
    assert all("%y" not in k and "loc(" not in k for k in ttir_e)
    assert {k for k in ttir_e if "tt.load" not in k} == {k for k in ttir_k if "tt.load" not in k}
    assert sum(ttir_e.values()) == 3  # splat, addptr, load
    # two lines count the ops of both
    lx = line_of(ev, "x = tl.load")
    both = P.ops_at(ev, "ttir", {le, lx})
    assert sum(both.values()) == 6 and sum(1 for k in both.elements() if "tt.load" in k) == 2
    # TTGIR keys carry the layout
    assert any("tt.load" in k and "#blocked" in k for k in P.ops_at(ev, "ttgir", {le}))
    # LLIR: the instruction's first three words, no SSA names, no !dbg
    llir = P.ops_at(ev, "llir", {le})
    assert llir and all("!dbg" not in k and len(k.split()) <= 3 for k in llir)
    assert any(k.startswith("getelementptr") for k in llir)
    # PTX: full opcodes of instructions whose .loc is the line
    ptx = P.ops_at(ev, "ptx", {le})
    assert ptx and all(" " not in k and "%" not in k for k in ptx)
    assert P.ops_at(ev, "ttir", {10_000}) == {}
    # Triton's own SASS listing has no line info: nothing is attributed
    assert P.ops_at(ev, "sass", {le}) == {}


def test_attr_change_of_an_eviction_policy_both_orders(streaming: Bundle) -> None:
    ev, kp = streaming.variants["evict"], streaming.variants["keep"]
    fe, ke = ev.metadata["kernel_lines"]
    fk, _ = kp.metadata["kernel_lines"]
    pairs = {ln: ln - fe + fk for ln in range(fe, ke + 1)}
    le, lk = line_of(ev, "y = tl.load"), line_of(kp, "y = tl.load")
    (c,) = P.attr_changes(ev, kp, pairs)
    assert (c.op, c.line_a, c.line_b) == ("tt.load", le, lk)
    assert (c.ttir_a, c.ttir_b) == (ttir_line(ev, "evict_first"), ttir_line(kp, "%y_9 = tt.load"))
    assert c.only_a == ["eviction_policy = evict_first"] and c.only_b == []
    assert "evict_first" in c.text_a and "cachePolicy" not in c.text_b and "tt.load" in c.text_b
    assert c.words("evict", "keep") == (
        f"TTIR `tt.load` from line {le} of `evict` (line {lk} of `keep`) differs only in its attributes: "
        "`eviction_policy = evict_first` (eviction policy; eviction policy `evict_first`) in `evict`, "
        "nothing in `keep`"
    )
    (r,) = P.attr_changes(kp, ev, {b: a for a, b in pairs.items()})
    assert (r.op, r.line_a, r.line_b, r.ttir_a, r.ttir_b) == ("tt.load", lk, le, c.ttir_b, c.ttir_a)
    assert r.only_a == [] and r.only_b == ["eviction_policy = evict_first"]
    assert r.words("keep", "evict").endswith(
        "nothing in `keep`, `eviction_policy = evict_first` (eviction policy; eviction policy `evict_first`) in `evict`"
    )
    # unpaired lines (identity pairing of two functions at different lines) find nothing
    assert P.attr_changes(ev, kp, {}) == []
    # a variant against itself: nothing
    assert P.attr_changes(ev, ev, {}) == []


def test_attr_change_of_an_atomic_memory_order_both_orders(splitk: Bundle) -> None:
    rx, od = splitk.variants["relaxed"], splitk.variants["ordered"]
    fr, kr = rx.metadata["kernel_lines"]
    fo, _ = od.metadata["kernel_lines"]
    pairs = {ln: ln - fr + fo for ln in range(fr, kr + 1)}
    (c,) = P.attr_changes(rx, od, pairs)
    assert c.op == "tt.atomic_rmw" and c.line_a == line_of(rx, "tl.atomic_add")
    assert c.only_a == ["relaxed"] and c.only_b == ["acq_rel"]
    words = c.words("relaxed", "ordered")
    assert "`relaxed` (memory order `relaxed`) in `relaxed`" in words
    assert "`acq_rel` (memory order `acq_rel` (acquire-release)) in `ordered`" in words
    (r,) = P.attr_changes(od, rx, {b: a for a, b in pairs.items()})
    assert r.only_a == ["acq_rel"] and r.only_b == ["relaxed"] and r.line_b == c.line_a


def test_stage_trace_both_orders(streaming: Bundle) -> None:
    ev, kp = streaming.variants["evict"], streaming.variants["keep"]
    le, lk = {line_of(ev, "y = tl.load")}, {line_of(kp, "y = tl.load")}
    trace = {d.stage: d for d in P.stage_trace(ev, kp, le, lk)}
    assert list(trace)[:2] == ["ttir", "ttgir"] and "sass" not in trace
    t = trace["ttir"]
    assert [k for k in t.only_a if "tt.load" in k] == list(t.only_a) and "evict_first" in next(iter(t.only_a))
    assert list(t.only_b) and all("tt.load" in k and "cachePolicy" not in k for k in t.only_b)
    assert t.elsewhere is False  # the rest of the TTIR is the same ops
    assert trace["ttgir"].elsewhere is False
    back = {d.stage: d for d in P.stage_trace(kp, ev, lk, le)}
    assert set(back) == set(trace)
    for s in trace:
        assert (back[s].only_a, back[s].only_b, back[s].elsewhere) == (
            trace[s].only_b,
            trace[s].only_a,
            trace[s].elsewhere,
        )
    # wrong lines: everything at them is "only" on one side and the rest differs
    off = {d.stage: d for d in P.stage_trace(ev, kp, le, set())}
    assert off["ttir"].elsewhere is True and off["ttir"].only_b == {} and sum(off["ttir"].only_a.values()) == 3
    # a variant against itself at its own lines: no stage differs
    assert P.stage_trace(ev, ev, le, le) == []
    # only the stages asked for
    assert [d.stage for d in P.stage_trace(ev, kp, le, lk, stages=("ttgir",))] == ["ttgir"]


def test_attr_tokens_of_real_dialect_ops() -> None:
    # a structured attribute stands for its items; default items are what an op without it has
    key = P._mlir_key(
        "    %y_9 = tt.load %y_8, %inb_5 {cachePolicy = #tt.cache_policy<cache_modifier = cg, eviction_policy = "
        'evict_normal>, isVolatile = false} : tensor<1024x!tt.ptr<f32>> loc("k.py":3:4)'
    )
    assert key == (
        "% = tt.load %, % {cachePolicy = #tt.cache_policy<cache_modifier = cg, eviction_policy = evict_normal>, "
        "isVolatile = false} : tensor<1024x!tt.ptr<f32>>"
    )
    assert P._attr_tokens(key) == ["cache_modifier = cg"]
    # bare words after the op name: memory order and scope; types and SSA names left out
    k2 = P._mlir_key(
        "%5 = tt.atomic_rmw fadd, relaxed, gpu, %4, %p, %2 : (tensor<256x!tt.ptr<f32>>, tensor<256xf32>, "
        "tensor<256xi1>) -> tensor<256xf32> loc(#loc16)"
    )
    assert P._attr_tokens(k2) == ["fadd", "relaxed", "gpu"]
    # a splat to 64x1 vs 1x64 differs in its type only: no attribute tokens either way
    s1 = P._mlir_key("%3 = tt.splat %2 : i32 -> tensor<64x1xi32> loc(#loc3)")
    s2 = P._mlir_key("%3 = tt.splat %2 : i32 -> tensor<1x64xi32> loc(#loc3)")
    assert s1 != s2 and P._attr_tokens(s1) == P._attr_tokens(s2) == []
    # hints as attribute pairs (dense values kept whole), function references named @K
    k3 = P._mlir_key("%c = arith.constant {tt.divisibility = dense<16> : tensor<1xi32>} dense<0> : tensor<4xi32>")
    assert "tt.divisibility = dense<16>" in P._attr_tokens(k3)
    assert P._mlir_key("tt.call @kernel_a(%x) : (i32) -> ()") == "tt.call @K(%) : (i32) -> ()"
    assert P._opname("% = tt.load %, % : tensor<4xf32>") == "tt.load"
    assert P._opname("tt.store %, % : tensor<4xf32>") == "tt.store"
    assert P._opname("scf.for % = % to %") == "scf.for"
    assert P._opname("llvm weird") == "llvm"
    assert P._strip_loc('x loc("a") y') == "x" and P._strip_loc("no location") == "no location"


def test_attr_change_words_name_and_shorten() -> None:
    long = ["inputPrecision = " + "x" * 100]
    c = P.AttrChange("tt.dot", 3, 4, 10, 11, "a", "b", long, ["inputPrecision = tf32", "maxNumImpreciseAcc = 0"])
    w = c.words("p", "q")
    code = ("inputPrecision = " + "x" * 100)[:87] + "..."
    assert f"`{code}` (dot input precision) in `p`" in w
    assert (
        "`inputPrecision = tf32, maxNumImpreciseAcc = 0` (dot input precision; `tf32` (TensorFloat-32 inputs); "
        "max imprecise accumulations) in `q`"
    ) in w
    assert w.startswith("TTIR `tt.dot` from line 3 of `p` (line 4 of `q`)")
    # a token with no known word is quoted without a gloss
    assert "`foo = bar` in `p`" in P.AttrChange("tt.x", 1, 1, 1, 1, "", "", ["foo = bar"], []).words("p", "q")
    # exactly 90 characters are kept whole
    t90 = "k = " + "y" * 86
    assert f"`{t90}` in" in P.AttrChange("tt.x", 1, 1, 1, 1, "", "", [t90], []).words("p", "q")


_TTIR = """\
module {
  tt.func public @k(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %ld: i32, %n: i32, %other: i32) {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32> loc(#loc1)
    %s = tt.splat %ld : i32 -> tensor<64xi32> loc(#loc2)
    %m = arith.muli %r, %s : tensor<64xi32> loc(#loc3)
    %o = tt.splat %other : i32 -> tensor<64xi32> loc(#loc2)
    %q = arith.muli %o, %o : tensor<64xi32> loc(#loc3)
    %p = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>> loc(#loc4)
    %a = tt.addptr %p, %m : tensor<64x!tt.ptr<f32>>, tensor<64xi32> loc(#loc5)
    %b = tt.addptr %p, %q : tensor<64x!tt.ptr<f32>>, tensor<64xi32> loc(#loc5)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
"""


def test_arange_strides_follow_the_data_flow() -> None:
    # ``ld`` multiplies the arange offset that reaches an address; ``other`` multiplies only itself; ``n`` is unused
    assert P.arange_strides(_TTIR) == {"ld"}
    # the stride on the left of the product
    assert P.arange_strides(_TTIR.replace("arith.muli %r, %s", "arith.muli %s, %r")) == {"ld"}
    # a product that never reaches an address is no stride
    assert P.arange_strides(_TTIR.replace("tt.addptr %p, %m", "tt.addptr %p, %o")) == set()
    # numbered arguments (Triton <= 3.3) are named from the signature's parameter list
    numbered = _TTIR.replace("%x_ptr", "%arg0").replace("%ld", "%arg1").replace("%n:", "%arg2:")
    numbered = numbered.replace("%other", "%arg3")
    assert P.arange_strides(numbered, ["x_ptr", "lda", "n", "other"]) == {"lda"}
    assert P.arange_strides(numbered) == {"arg1"}
    assert P.arange_strides(numbered, ["x_ptr"]) == {"arg1"}  # too short a list: the IR's own names
    assert P.arange_strides("module {\n}\n") == set()
    # a loop carries the offset and the stride through iter_args into an addptr inside the loop
    loop = """\
  tt.func public @k(%x_ptr: !tt.ptr<f32>, %ld: i32, %n: i32) {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %s = tt.splat %ld : i32 -> tensor<64xi32>
    %m = arith.muli %r, %s : tensor<64xi32>
    %p = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %res = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %m) -> (tensor<64xi32>) : i32 {
      %a = tt.addptr %p, %acc : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
      scf.yield %acc : tensor<64xi32>
    }
    tt.return
  }
"""
    assert P.arange_strides(loop) == {"ld"}
    # the loop's iter_arg carries a ranged value; the stride is applied inside the loop
    loop2 = loop.replace("iter_args(%acc = %m)", "iter_args(%acc = %r)").replace(
        "tt.addptr %p, %acc", "tt.addptr %p, %in"
    )
    loop2 = loop2.replace("      %a =", "      %in = arith.muli %acc, %s : tensor<64xi32>\n      %a =")
    assert P.arange_strides(loop2) == {"ld"}


def test_arange_strides_of_a_real_matmul(compile_suite) -> None:  # type: ignore[no-untyped-def]
    # stride_am = stride_bn = 1 are specialized away; stride_ak, stride_bk multiply aranges in addresses, and N
    # multiplies the row offsets of the store
    b = compile_suite(CASES + "::hinted", ["hint", "bare"], "sm80")
    for name in ("hint", "bare"):
        v = b.variants[name]
        assert P.arange_strides(v.text("ttir")) == {"stride_ak", "stride_bk", "N"}
        assert P.arange_strides(v.text("ttgir")) == {"stride_ak", "stride_bk", "N"}


def _saved(tmp: Path, name: str, ttir: str) -> VariantResult:
    """A variant holding only a TTIR file (and no ``source_path``: a bundle whose kernel was saved as kernel.py)."""
    d = tmp / name
    d.mkdir()
    (d / "k.ttir").write_text(ttir)
    return VariantResult(name, kernel="axpy_evict", directory=str(d), stages={"ttir": "k.ttir"})


def test_attr_changes_skip_other_differences_on_edited_ttir(streaming: Bundle, tmp_path: Path) -> None:
    """Edited copies of the real TTIR, its locations naming ``kernel.py`` (the default source file): a line whose ops
    differ in name, a line whose op differs only in a type, and a signature attribute are not attribute changes;
    the eviction policy after them still is."""
    ev = streaming.variants["evict"]
    text = ev.text("ttir").replace(str(ev.metadata["source_path"]), "/elsewhere/kernel.py")
    a = _saved(tmp_path, "a", text)
    le = line_of(ev, "y = tl.load")
    assert P.line_map(a, "ttir") == P.line_map(ev, "ttir")
    assert sum(1 for k in P.ops_at(a, "ttir", {le}) if "evict_first" in k) == 1
    edited = (
        text.replace("arith.cmpi slt", "arith.cmpf olt", 1)
        .replace(
            "%x = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>",
            "%x = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f16>>",
        )
        .replace(
            "%y = tt.splat %y_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>",
            "%y = tt.splat %y_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f16>>",
        )
        .replace(" {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_first>}", "")
        .replace("%n: i32 {tt.divisibility = 16 : i32}", "%n: i32")
    )
    assert edited.count("\n") == text.count("\n") and edited.count("tensor<1024x!tt.ptr<f16>>") == 2
    assert "%n: i32 loc" in edited
    b = _saved(tmp_path, "b", edited)
    (c,) = P.attr_changes(a, b, {})
    assert (c.op, c.line_a, c.line_b, c.only_a, c.only_b) == ("tt.load", le, le, ["eviction_policy = evict_first"], [])
    (r,) = P.attr_changes(b, a, {})
    assert (r.op, r.only_a, r.only_b) == ("tt.load", [], ["eviction_policy = evict_first"])


def test_is_op() -> None:
    for not_op in ("", "   ", "#loc3 = loc(unknown)", "  } loc(#loc)", "^bb0(%a: f32, %b: f32):", "module {",
                   "module attributes {} {", "tt.func public @k(%x: i32) {", "  tt.return loc(#loc)",
                   "    scf.yield %acc : tensor<64xf32>"):  # fmt: skip
        assert not P._is_op(not_op), not_op
    assert P._is_op("  %x = tt.load %p : tensor<4x!tt.ptr<f32>>") and P._is_op("tt.store %p, %x")


def test_attr_change_words_boundary() -> None:
    t91 = "k = " + "y" * 87
    assert f"`{t91[:87]}...` in `p`" in P.AttrChange("tt.x", 1, 1, 1, 1, "", "", [t91], []).words("p", "q")


def test_arbitrary_width_types_are_not_attributes() -> None:
    assert P._attr_tokens(P._mlir_key("%3 = arith.trunci %2 : i48 to i24")) == ["to"]
    # a structured attribute stands for its items (here one bare word)
    assert P._attr_tokens(P._mlir_key("%3 = arith.extf %2 {fastmath = #arith.fastmath<none>} : f32 to f64")) == [
        "none",
        "to",
    ]


def test_stage_trace_one_sided_and_missing_stages(streaming: Bundle) -> None:
    ev, kp = streaming.variants["evict"], streaming.variants["keep"]
    le, lk = {line_of(ev, "y = tl.load")}, {line_of(kp, "y = tl.load")}
    full = {d.stage: d for d in P.stage_trace(ev, kp, le, lk)}
    # lines without ops on either side change nothing
    assert {d.stage: d for d in P.stage_trace(ev, kp, le | {10_000}, lk | {10_001})} == full
    # the evict_first load's extra cache-policy call is the only LLIR difference at its line: one-sided, nothing
    # else differs
    llir = full["llir"]
    assert llir.only_a and llir.only_b == {} and llir.elsewhere is False
    assert all(k.startswith("tail call") for k in llir.only_a)
    # a stage one variant did not save is skipped, the later ones still traced
    no_ttir = dataclasses.replace(kp, stages={k: f for k, f in kp.stages.items() if k != "ttir"})
    part = [d.stage for d in P.stage_trace(ev, no_ttir, le, lk)]
    assert "ttir" not in part and part == [s for s in full if s != "ttir"]
    # nothing at the lines and only attributes differ elsewhere: MLIR stages compare op names there, so no TTIR or
    # TTGIR entry; LLIR/PTX compare whole instructions
    none = {d.stage for d in P.stage_trace(ev, kp, set(), set())}
    assert "ttir" not in none and "ttgir" not in none and "ptx" in none


def _kernel(body: str, sig: str = "%x_ptr: !tt.ptr<f32>, %ld: i32, %ld2: i32, %n: i32") -> str:
    head = '#loc = loc("/home/me@work/k.py":1:0)\nmodule {\n'
    return head + f"  tt.func public @k({sig}) {{\n" + body + "    tt.return\n  }\n}\n"


_RANGE = """\
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %s = tt.splat %ld : i32 -> tensor<64xi32>
    %s2 = tt.splat %ld2 : i32 -> tensor<64xi32>
    %p = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
"""


def test_arange_strides_more_data_flow() -> None:
    # a product of a strided offset and a second stride: both are strides (either operand order)
    two = _RANGE + "    %m = arith.muli %r, %s : tensor<64xi32>\n    %m2 = arith.muli %m, %s2 : tensor<64xi32>\n"
    two += "    %a = tt.addptr %p, %m2 : tensor<64x!tt.ptr<f32>>, tensor<64xi32>\n"
    assert P.arange_strides(_kernel(two)) == {"ld", "ld2"}
    assert P.arange_strides(_kernel(two.replace("arith.muli %m, %s2", "arith.muli %s2, %m"))) == {"ld", "ld2"}
    # results printed one by one (tt.split): the second result carries the range too
    split = _RANGE + "    %lo, %hi = tt.split %r : tensor<64xi32> -> tensor<32xi32>\n"
    split += "    %m = arith.muli %lo, %s : tensor<64xi32>\n"
    split += "    %a = tt.addptr %p, %m : tensor<64x!tt.ptr<f32>>, tensor<64xi32>\n"
    assert P.arange_strides(_kernel(split)) == {"ld"}
    # a loop carries the stride value (not the offset) through iter_args; the product is formed inside the loop
    loop = _RANGE + "    %res = scf.for %i = %c0 to %n step %c1 iter_args(%st = %s) -> (tensor<64xi32>) : i32 {\n"
    loop += "      %m = arith.muli %r, %st : tensor<64xi32>\n"
    loop += "      %a = tt.addptr %p, %m : tensor<64x!tt.ptr<f32>>, tensor<64xi32>\n"
    loop += "      scf.yield %st : tensor<64xi32>\n    }\n"
    assert P.arange_strides(_kernel(loop)) == {"ld"}
    # a function line without an argument list: nothing, never an error
    assert P.arange_strides("module {\n  tt.func @k\n}\n") == set()
