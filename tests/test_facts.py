"""Facts of real compiles (``irdiff/diagnose/facts.py``), checked against the kernels' source and the raw stage texts.

Kernels: ``tests/suites/diag_loop.py`` on sm90 (Triton's Hopper path), from the shared compile cache:
``stages3``/``stages1`` (a row-sum loop with a 3-stage cp.async pipeline vs synchronous loads), ``dot3``/``dot1`` (a
K loop of ``tl.dot``, 3 stages vs none), ``tma`` (``dot3`` through tensor descriptors) and ``flat``/``nest`` (a tile
loop around the K loop, fused or kept nested). Every expected value is worked out from the kernel source or read from
the stage text it comes from (so a Triton release that changes a count changes the expectation with it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from irdiff.diagnose.facts import Ref, VariantFacts, extract_facts, strip_loc
from irdiff.diagnose.texts import stage_text

SUITES = Path(__file__).parent / "suites"
LOOP = str(SUITES / "diag_loop.py")
VARIANTS = ["stages3", "stages1", "dot3", "dot1", "tma", "flat", "nest"]


@pytest.fixture(scope="module")
def loop90(compile_suite):  # type: ignore[no-untyped-def]
    return compile_suite(LOOP, VARIANTS, "sm90")


class _Facts(dict[str, VariantFacts]):
    """Facts extracted on first use inside each test (not in a shared fixture: mutation testing maps a function to
    the tests that call it, and a module fixture's calls would be credited to its first test only)."""

    def __init__(self, bundle) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self.bundle = bundle

    def __missing__(self, name: str) -> VariantFacts:
        self[name] = extract_facts(self.bundle.variants[name])
        return self[name]


@pytest.fixture
def facts(loop90) -> _Facts:  # type: ignore[no-untyped-def]
    return _Facts(loop90)


def _line(text: str, no: int | None) -> str:
    assert no is not None
    return text.splitlines()[no - 1]


def test_resources_come_from_the_ptxas_report(loop90, facts: dict[str, VariantFacts]) -> None:  # type: ignore[no-untyped-def]
    for n in VARIANTS:
        f = facts[n]
        log = stage_text(loop90.variants[n], "ptxas")
        regs = f.resource_refs["registers"]
        assert regs.stage == "ptxas" and _line(log, regs.line).strip() == regs.text
        assert f.resources["registers"] == int(re.search(r"Used (\d+) registers", regs.text)[1])  # type: ignore[index]
        spills = f.resource_refs["spills"]
        assert "spill stores" in _line(log, spills.line) and f.resource_refs["stack"] == spills
        assert f.resources["spill_store_bytes"] == int(re.search(r"(\d+) bytes spill stores", spills.text)[1])  # type: ignore[index]
        # the saved TTGIR is from before shared-memory allocation (no ``ttg.shared`` attribute): the amount is
        # Triton's metadata, quoted without a line
        assert (
            not re.search(r"\bttg\.shared\"? = ", stage_text(loop90.variants[n], "ttgir"))
            and "shared" not in f.resource_refs
        )
        assert f.resources["shared_bytes"] == loop90.variants[n].metadata["shared"]
        # occupancy is the model's answer for these resources, sm90 and 4 warps
        o = f.occupancy
        assert o is not None and f.arch == 90 and f.options["num_warps"] == 4
        assert o.limits["warps"] == 2048 // 32 // 4 and o.limits["CTA slots"] == 32
        assert o.warps_per_sm == o.ctas_per_sm * 4 and o.ctas_per_sm == min(o.limits.values())
    # no buffers in the synchronous row loop: the shared memory is what the ring of the pipelined one needs
    assert facts["stages1"].resources["shared_bytes"] == 0
    assert facts["stages3"].resources["shared_bytes"] == sum(b.bytes for b in facts["stages3"].buffers) == 2 * 256 * 2


def test_pipelined_row_loop_vs_synchronous(facts: dict[str, VariantFacts]) -> None:
    s3, s1 = facts["stages3"], facts["stages1"]
    # one 256 x f16 row per iteration: a ring of (stages - 1) = 2 slots of 512 B
    assert [(b.depth, b.tile, b.elem, b.bytes) for b in s3.buffers] == [(2, [256], "f16", 1024)]
    assert s1.buffers == []
    # two prologue copies (stages - 1), one copy per iteration in the loop, waited for with one group in flight
    assert (len(s3.async_copies_prologue), len(s3.async_copies_loop), len(s3.sync_loads_loop)) == (2, 1, 0)
    assert all("ttg.async_copy_global_to_local" in r.text for r in s3.async_copies_prologue + s3.async_copies_loop)
    assert (len(s1.async_copies_prologue), len(s1.async_copies_loop), len(s1.sync_loads_loop)) == (0, 0, 1)
    assert "tt.load" in s1.sync_loads_loop[0].text
    assert [(w.op, w.value, w.in_loop, w.in_inner_loop) for w in s3.waits] == [
        ("ttg.async_wait", 1, True, True),
        ("ttg.async_wait", 0, False, False),
    ]
    assert s1.waits == []
    # the pipeliner's log: the 32-bit load (2 x f16 per thread) is pipelined, named after the Python `acc +=`
    (p,) = s3.pipeline
    assert (p.shape, p.elem, p.width_bits, p.pipelined) == ([256], "f16", 32, True)
    assert p.reason.startswith("considered for pipelining") and p.label.endswith("load 256xf16")
    assert s1.pipeline == []
    # the loop: TTIR carries only `acc`; TTGIR adds the ring's indices and the copies' tokens
    assert [(lp.depth, lp.iter_args, lp.flatten, lp.has_inner) for lp in s3.loops_ttir] == [(1, 1, False, False)]
    assert s3.loops_ttgir[0].iter_args > s1.loops_ttgir[0].iter_args == 1
    # the pipelined row load is left in TTGIR only as cp.async copies: they give the parameters their roles (address
    # from x_ptr, mask from R) but are not lowered accesses of their own; the store is
    assert s3.arg_roles == s1.arg_roles == {"x_ptr": ["pointer"], "R": ["mask"], "y_ptr": ["pointer"]}
    assert [(a.kind, a.ptr_args) for a in s3.lowered] == [("store", ["y_ptr"])]


def test_coalescing_and_lowering_of_the_row_load(loop90, facts: dict[str, VariantFacts]) -> None:  # type: ignore[no-untyped-def]
    s1 = facts["stages1"]
    load, store = s1.accesses
    # 256 contiguous f16, 16-byte aligned pointers, 4 warps x 32 lanes: 2 elements (32 bits) per thread
    assert (load.kind, load.shape, load.elem, load.elem_bits) == ("load", [256], "f16", 16)
    assert (load.contiguity, load.divisibility, load.order, load.per_thread) == ([256], [16], [0], 2)
    assert load.vector_bits == 32 and store.kind == "store" and store.vector_bits == 32
    log = stage_text(loop90.variants["stages1"], "llvm_debug")
    assert _line(log, load.axis_ref.line).strip() == load.axis_ref.text and "contiguity = [256]" in load.axis_ref.text
    assert load.per_thread_ref.text.endswith("perThread: 2") and load.ref.text.endswith(load.ref.text.split()[-1])
    # the loop's load is left in TTGIR and lowered to 32-bit PTX loads, one per row of the loop body (unrolled 8x)
    ld, st = s1.lowered
    assert (ld.kind, ld.shape, ld.elem, ld.per_thread, ld.coalesce_bits, ld.coalesce_index) == (
        "load", [256], "f16", 2, 32, 0,
    )  # fmt: skip
    assert (ld.ptx_bits, ld.ptx_key, ld.llir_bits) == (32, "ld.global.b32", 32)
    assert ld.ptx_count == ld.llir_count >= 1
    assert ld.mask_args == ["R"] and ld.ptr_args == ["x_ptr"] and ld.mask
    assert any("arith.cmpi" in r.text and "%R" in r.text for r in ld.mask_refs)
    assert ld.ptx_ref is not None and ld.ptx_ref.text.startswith(("ld.global.b32", "@"))
    assert (st.kind, st.ptr_args, st.mask_args, st.mask, st.ptx_key) == ("store", ["y_ptr"], [], "", "st.global.b32")
    assert s1.arg_roles == {"x_ptr": ["pointer"], "R": ["mask"], "y_ptr": ["pointer"]}


def test_dot_loop_buffers_layouts_and_waits(facts: dict[str, VariantFacts]) -> None:
    d3, d1 = facts["dot3"], facts["dot1"]
    # 3 stages of a 64x32 A tile and a 32x64 B tile, f16: 3 x 4096 B each
    assert [(b.depth, b.tile, b.bytes) for b in d3.buffers] == [(3, [64, 32], 12288), (3, [32, 64], 12288)]
    assert [(b.depth, b.tile, b.bytes) for b in d1.buffers] == [(1, [64, 32], 4096), (1, [32, 64], 4096)]
    assert (len(d3.async_copies_prologue), len(d3.async_copies_loop)) == (4, 2)
    assert (len(d1.async_copies_loop), len(d1.sync_loads_loop)) == (0, 2)
    # Hopper: wgmma (MMA v3), 4 warps along M
    assert [(m["version"], m["warpsPerCTA"]) for m in d3.mma] == [(3, [4, 1])]
    assert d3.mma[0]["instrShape"][0] == 16
    assert d3.blocked and all(b["order"] == [1, 0] and b["sizePerThread"] == [1, 8] for b in d3.blocked)
    waits = {(w.op, w.value, w.in_inner_loop) for w in d3.waits}
    assert ("ttng.warp_group_dot_wait", 1, True) in waits and ("ttg.async_wait", 2, True) in waits
    assert [(w.op, w.value, w.in_loop) for w in d1.waits] == [("ttng.warp_group_dot_wait", 0, True)]
    # the A load: rows of 32 contiguous f16 at 16-byte alignment, 8 per thread = 128 bits
    a, b, c = d3.accesses
    assert (a.name, a.shape, a.contiguity, a.divisibility, a.per_thread, a.vector_bits) == (
        "a", [64, 32], [1, 32], [2, 16], 8, 128,
    )  # fmt: skip
    assert (b.name, b.shape, c.kind) == ("b", [32, 64], "store")
    assert [(p.name, p.width_bits, p.pipelined) for p in d3.pipeline] == [("a", 128, True), ("b", 128, True)]
    # the dot1 loads stay in TTGIR: 128-bit PTX loads, from `a_ptr` (and K, the row stride) / `b_ptr`
    la, lb, _ = d1.lowered
    assert (la.name, la.ptx_bits, la.ptx_key, la.ptr_args) == ("a", 128, "ld.global.v4.b32", ["a_ptr", "K"])
    assert (lb.name, lb.ptr_args, lb.label) == ("b", ["b_ptr"], "`b` load 32x64xf16")
    assert d3.arg_roles["a_ptr"] == ["pointer"] and "pointer" in d3.arg_roles["K"]


def test_tma_copies_and_args(facts: dict[str, VariantFacts]) -> None:
    t = facts["tma"]
    # one TMA copy per operand in the prologue (2 stages ahead) and one per operand in the loop
    assert len(t.tma_copies) == 6 and (len(t.async_copies_prologue), len(t.async_copies_loop)) == (4, 2)
    assert all("tma" in r.text for r in t.tma_copies)
    assert [(b.depth, b.tile) for b in t.buffers] == [(3, [64, 32]), (3, [32, 64])]
    assert t.accesses[0].kind == "store" and len(t.accesses) == 1  # descriptor loads are not coalesced accesses
    assert t.arg_roles == {"c_ptr": ["pointer"]}
    # stage 0 with the TTIR signature fragment of each runtime parameter
    by = {a.name: a for a in t.args}
    assert by["a_ptr"].summary == "*fp16 div16" and by["BK"].summary == "constexpr = 32"
    assert by["K"].ttir is not None and by["K"].ttir.text == "%K: i32 {tt.divisibility = 16 : i32}"
    assert by["BM"].ttir is None and [a.index for a in t.args] == list(range(len(t.args)))


def test_memory_facts_quote_their_ttgir_lines(loop90, facts: dict[str, VariantFacts]) -> None:  # type: ignore[no-untyped-def]
    # buffers, copies (cp.async and TMA), synchronous loads and waits each quote the TTGIR op they come from, and a
    # buffer's size is a whole number of bytes
    for n in ("stages3", "stages1", "dot3", "tma"):
        f, ttgir = facts[n], stage_text(loop90.variants[n], "ttgir")
        quoted = [(b.ref, "ttg.local_alloc") for b in f.buffers] + [(w.ref, w.op) for w in f.waits]
        quoted += [
            (r, "ttg.async_copy_global_to_local")
            for r in f.async_copies_prologue + f.async_copies_loop
            if "tma" not in r.text
        ]
        quoted += [(r, "tma") for r in f.tma_copies] + [(r, "tt.load") for r in f.sync_loads_loop]
        assert quoted, n
        for ref, op in quoted:
            assert ref is not None and ref.stage == "ttgir" and op in ref.text, (n, ref)
            assert ref.text == strip_loc(_line(ttgir, ref.line)).strip(), (n, ref)
        assert all(isinstance(b.bytes, int) and b.bytes > 0 for b in f.buffers)
    assert facts["tma"].waits and facts["stages3"].waits and facts["tma"].tma_copies


def test_flattened_vs_nested_loops(facts: dict[str, VariantFacts]) -> None:
    flat, nest = facts["flat"], facts["nest"]
    # TTIR keeps both loops as written; the outer one of `flat` is marked tt.flatten and holds the K loop
    assert [(lp.depth, lp.flatten, lp.has_inner) for lp in flat.loops_ttir] == [(1, True, True), (2, False, False)]
    assert [(lp.depth, lp.flatten, lp.has_inner) for lp in nest.loops_ttir] == [(1, False, True), (2, False, False)]
    assert all(lp.end_line > (lp.ref.line or 0) for lp in flat.loops_ttir + nest.loops_ttir)
    assert flat.loops_ttir[0].loc and flat.loops_ttir[0].loc != flat.loops_ttir[1].loc
    # TTGIR: `nest` keeps the K loop inside the tile loop; `flat` has no loop nested in another any more
    assert [lp.depth for lp in nest.loops_ttgir] == [1, 2] and nest.loops_ttgir[0].has_inner
    assert all(lp.depth == 1 and not lp.has_inner for lp in flat.loops_ttgir)
    # waits after the K loop but inside the tile loop are in a loop, not in the innermost one
    assert any(w.in_loop and not w.in_inner_loop for w in nest.waits)
    assert all(w.in_inner_loop == w.in_loop for w in flat.waits)


# ------------------------------------------------------------------------------------------------ own loop kernels


@pytest.fixture(scope="module")
def gains(compile_suite):  # type: ignore[no-untyped-def]
    return compile_suite(str(SUITES / "facts_loops.py"), ["reread", "once", "unroll2"], "sm80")


def test_invariant_load_in_the_loop(gains) -> None:  # type: ignore[no-untyped-def]
    reread, once = extract_facts(gains.variants["reread"]), extract_facts(gains.variants["once"])
    # `gain = tl.load(g_ptr)` inside the row loop reads the same address every iteration; the row load does not
    (ref,) = reread.invariant_loads
    ttir = stage_text(gains.variants["reread"], "ttir")
    assert ref.stage == "ttir" and re.match(r"%\w+ = tt\.load %g_ptr\b", ref.text)
    assert ref.text in _line(ttir, ref.line)
    assert reread.loops_ttir[0].ref.line < ref.line < reread.loops_ttir[0].end_line  # type: ignore[operator]
    assert once.invariant_loads == []
    # the row loop's load and store: address from the pointer and the runtime row count, mask from both bounds
    ld, st = once.lowered
    assert (ld.kind, ld.name, ld.ptr_args, sorted(ld.mask_args)) == ("load", "v", ["x_ptr", "ROWS"], ["R", "ROWS"])
    assert (st.kind, st.ptr_args, st.label) == ("store", ["y_ptr", "ROWS"], "store 128xf32 to `y_ptr`")
    assert once.arg_roles == {"x_ptr": ["pointer"], "ROWS": ["mask", "pointer"], "R": ["mask"], "y_ptr": ["pointer"]}
    assert ld.ptx_count == ld.llir_count == 1 and ld.ptx_bits == ld.llir_bits == 32  # 128 f32 over 128 threads


def test_unrolled_loop_and_its_remainder(gains) -> None:  # type: ignore[no-untyped-def]
    un, once = extract_facts(gains.variants["unroll2"]), extract_facts(gains.variants["once"])
    for loops in (un.loops_ttir, un.loops_ttgir):
        main, rest = loops
        # loop_unroll_factor=2: the body twice in the main loop, once in the remainder loop right after it
        assert (main.depth, main.unroll, main.remainder) == (1, 2, False)
        assert (rest.depth, rest.unroll, rest.remainder) == (1, 1, True)
        assert "tt.num_stages = 1" in rest.attrs and rest.loc == main.loc != ""
        assert main.end_line < (rest.ref.line or 0)
    assert [(lp.unroll, lp.remainder) for lp in once.loops_ttir] == [(1, False)]
    assert [lp.kind for lp in un.lowered] == ["load", "store"] * 3 and len(un.sync_loads_loop) == 3


def test_index_width_facts(compile_suite) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(str(SUITES / "index_width.py"), ["row32", "row64", "row64split"], "sm80")
    f32, f64, split = (extract_facts(b.variants[n]) for n in ("row32", "row64", "row64split"))
    assert (f32.i64_ops, f32.i64_first, f32.i64_first_python, f32.divrem64_ttir) == (0, None, None, [])
    for f, n in ((f64, "row64"), (split, "row64split")):
        ttir = stage_text(b.variants[n], "ttir")
        first = f.i64_first
        # the first i64 value is the widened program id, quoted with its TTIR line and its Python line
        assert first is not None and re.match(r"%\w+ = arith\.extsi %\w+ : i32 to i64$", first.text)
        assert first.stage == "ttir" and first.text in _line(ttir, first.line)
        assert f.i64_first_python is not None and f.i64_first_python.stage == "python"
        assert f.i64_first_python.text == "row = tl.program_id(0).to(tl.int64)"
        assert _line(stage_text(b.variants[n], "python"), f.i64_first_python.line).strip() == f.i64_first_python.text
    # only the split divides and takes the remainder in 64 bits (`//` and `%` by the runtime G)
    assert f64.divrem64_ttir == [] and split.i64_ops > f64.i64_ops > 2
    assert sorted(re.search(r"arith\.(\w+)", r.text)[1] for r in split.divrem64_ttir) == ["divsi", "remsi"]  # type: ignore[index]
    assert all(r.text.endswith(": i64") for r in split.divrem64_ttir)


def test_variant_fields_and_first_lines(loop90, facts: dict[str, VariantFacts]) -> None:  # type: ignore[no-untyped-def]
    v, f = loop90.variants["dot3"], facts["dot3"]
    assert (f.name, f.kernel, f.target, f.arch) == ("dot3", "dot_loop", "sm90", 90)
    assert f.config == dict(v.config) and f.config["STAGES"] == 3 and f.config["BK"] == 32
    assert f.triton_version == v.metadata["triton_version"] != "" and f.llvm_debug_present
    assert f.options["num_warps"] == 4 and f.options["num_stages"] == v.options.get("num_stages", 3)
    assert f.sass_calls == [] and f.sass_branch_calls == [] and f.invariant_loads == []
    # every counted stage: each count key's first line is a real line of that stage holding the op
    for stage in ("ttir", "ttgir", "llir", "ptx", "sass"):
        assert f.counts[stage], stage
        text = stage_text(v, stage)
        for key, ref in f.first_lines[stage].items():
            assert ref.stage == stage and ref.line is not None
            raw = _line(text, ref.line)
            if stage in ("ttir", "ttgir"):
                assert key in raw and ref.text == strip_loc(raw).strip(), (stage, key, raw)
    assert f.counts["ttir"]["tt.dot"] == 1 and f.first_lines["ttir"]["tt.dot"].text.split(" = ")[1].startswith("tt.dot")


def test_shared_memory_line_after_allocation(loop90) -> None:  # type: ignore[no-untyped-def]
    from irdiff.diagnose.facts import resource_facts

    # after Triton's allocate-shared-memory pass the module carries the amount; the saved TTGIR is from before it,
    # so the line is taken from the module line as that pass prints it
    v = loop90.variants["dot3"]
    ttgir = stage_text(v, "ttgir")
    head = 'module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.shared = 24576 : i32} {'
    after = "#blocked = #ttg.blocked<{sizePerThread = [1, 8]}>\n" + head + "\n" + ttgir.split("\n", 1)[1]
    res, refs, occ = resource_facts(v, after, 90)
    assert refs["shared"] == Ref("ttgir", 2, "ttg.shared = 24576 : i32")
    assert res["shared_bytes"] == v.metadata["shared"] and res["registers"] == v.resources.registers
    assert occ is not None and occ.limits["shared memory"] == 228 * 1024 // (res["shared_bytes"] + 1024)
    quoted = after.replace("ttg.shared = 24576", '"ttg.shared" = 24576')
    assert resource_facts(v, quoted, 90)[1]["shared"] == Ref("ttgir", 2, "ttg.shared = 24576 : i32")
    assert "shared" not in resource_facts(v, ttgir, 90)[1]
    # no num_warps in the options: metadata's, else 4
    assert resource_facts(v, ttgir, 0)[2] is None


def test_warps_from_the_metadata_when_the_options_lack_them(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """A variant whose options do not name ``num_warps`` (a suite leaving it to Triton's default or to an autotune
    config) gets it from Triton's compile metadata: ``warps8`` compiled with 8 warps, its options dropped. Occupancy
    then divides sm90's 64 warps per SM by 8, not by the fallback 4."""
    from dataclasses import replace

    from irdiff.diagnose.facts import option_facts, resource_facts

    v = compile_suite(LOOP, ["stages3", "warps8"], "sm90").variants["warps8"]
    assert v.options["num_warps"] == 8 == v.metadata["num_warps"]
    bare = replace(v, options={k: x for k, x in v.options.items() if k != "num_warps"})
    assert option_facts(bare)["num_warps"] == 8
    ttgir = stage_text(v, "ttgir")
    occ = resource_facts(bare, ttgir, 90)[2]
    assert occ is not None and occ == resource_facts(v, ttgir, 90)[2]
    assert occ.limits["warps"] == 64 // 8 and occ.warps_per_sm == occ.ctas_per_sm * 8


def test_first_64_bit_op_is_quoted_only_from_the_kernels_own_source(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """The Python line of the first i64 op is quoted from the saved kernel source only when the op's location is in
    that file (``metadata["source_path"]``); a bundle without a recorded path accepts any file. ``row64`` compiled,
    its metadata's path then pointed elsewhere or dropped."""
    from dataclasses import replace

    v = compile_suite(str(SUITES / "index_width.py"), ["row32", "row64", "row64split"], "sm80").variants["row64"]
    assert v.metadata["source_path"]
    own = extract_facts(v).i64_first_python
    assert own is not None and own.text == "row = tl.program_id(0).to(tl.int64)"
    elsewhere = replace(v, metadata={**v.metadata, "source_path": "/elsewhere/helpers.py"})
    assert extract_facts(elsewhere).i64_first_python is None
    nopath = replace(v, metadata={k: x for k, x in v.metadata.items() if k != "source_path"})
    assert extract_facts(nopath).i64_first_python == own


def test_sass_calls_of_real_kernels(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """SASS CALLs in the facts, as :func:`irdiff.diagnose.facts.sass_calls` reads the variant's SASS: ``i64`` of
    ``tests/suites/diag_copy.py`` on sm86 calls ptxas' 64-bit division subroutine (CALL ... RET); the annotated matmul
    on sm86 has ptxas' predicated CALL out of its loop into code ending in EXIT (a branch, no routine)."""
    from irdiff.diagnose.facts import sass_calls

    v = compile_suite(str(SUITES / "diag_copy.py"), ["i64", "i32"], "sm86").variants["i64"]
    f = extract_facts(v)
    subs, branches = sass_calls(stage_text(v, "sass"))
    assert subs and f.sass_calls == subs and f.sass_branch_calls == branches
    m = compile_suite("matmul", ["unannotated", "annotated"], "sm86").variants["annotated"]
    fm = extract_facts(m)
    subs, branches = sass_calls(stage_text(m, "sass"))
    assert branches and fm.sass_branch_calls == branches and fm.sass_calls == subs


_LOWER_TTGIR = """\
    %x = tt.load %x_ptrs : tensor<256x!tt.ptr<f16>, #blocked>
    %y = tt.load %y_ptrs : tensor<256x!tt.ptr<f16>, #blocked>
    %z = tt.load %z_ptrs : tensor<128x!tt.ptr<f32>, #blocked>
    %7 = tt.load %6 : tensor<64x!tt.ptr<f32>, #blocked>
    %r = tt.splat %R : i32 -> tensor<64xi32, #blocked>
    %c = tt.splat %C : i32 -> tensor<64xi32, #blocked>
    %m1 = arith.cmpi slt, %offs, %r : tensor<64xi32, #blocked>
    %m2 = arith.cmpi slt, %offs, %c : tensor<64xi32, #blocked>
    %m = arith.andi %m1, %m2 : tensor<64xi1, #blocked>
    tt.store %out_ptrs, %7, %m : tensor<64x!tt.ptr<f32>, #blocked>
    %cp = ttg.async_copy_global_to_local %z_ptrs, %buf : tensor<128x!tt.ptr<f32>, #blocked> -> <128xf32, #shared, #smem, mutable>
"""
_LOWER_LOG = "".join(
    f"[tritongpu-coalesce]: Considering op: %{i} = tt.load %{i + 1} : tensor<{t}, #blocked>\n"
    f"[tritongpu-coalesce]: axis info of pointer: contiguity = [{n}], divisibility = [16]\n"
    f"[tritongpu-coalesce]: perThread: {p}\n"
    for i, t, n, p in (
        (1, "256x!tt.ptr<f16>", 256, 2),
        (3, "256x!tt.ptr<f16>", 256, 8),
        (5, "128x!tt.ptr<f32>", 128, 4),
    )
) + (
    "[tritongpu-coalesce]: Considering op: %9 = tt.load %8 : tensor<64x!tt.ptr<f32>, #blocked>\n"
    "[tritongpu-coalesce]: axis info of pointer: contiguity = [64], divisibility = [16]\n"
    "[tritongpu-coalesce]: perThread: 1\n"
)


def test_lowered_accesses_match_coalesce_blocks_by_name(loop90) -> None:  # type: ignore[no-untyped-def]
    """Each TTGIR access takes the first unused coalesce-log block of its kind, shape and type whose Python name does
    not disagree (a block or an op without a name matches any); an op without a name takes its block's; a mask quotes
    its 4 nearest ops; an async copy without a mask has none. TTGIR lines written as Triton prints them, the LLIR/PTX
    those of ``stages1`` (no source positions here, so nothing lowered is matched)."""
    from irdiff.diagnose.facts import _walk_mlir, coalesce_facts, lowering_facts

    names = {("load", (256,), "f16"): [("y", "y_ptrs"), ("x", "x_ptrs")], ("load", (64,), "f32"): [("w", "w_ptrs")]}
    accesses = coalesce_facts(_LOWER_LOG, names)
    assert [(a.name, a.per_thread) for a in accesses] == [("y", 2), ("x", 8), ("", 4), ("w", 1)]
    ttgir = "module {\n  tt.func public @k() {\n" + _LOWER_TTGIR + "    tt.return\n  }\n}\n"
    ops, _ = _walk_mlir(ttgir, "ttgir")
    lowered, _ = lowering_facts(loop90.variants["stages1"], ttgir, ops, accesses)
    assert [(lw.kind, lw.name, lw.coalesce_index, lw.per_thread) for lw in lowered] == [
        ("load", "x", 1, 8),  # the block named `y` is skipped for `x`
        ("load", "y", 0, 2),
        ("load", "z", 2, 4),  # an unnamed block matches a named op
        ("load", "w", 3, 1),  # an op without a name takes the block's
        ("store", "", None, None),
    ]
    store = lowered[-1]
    assert store.mask == "%m" and [r.text.split(" = ")[0] for r in store.mask_refs] == ["%m", "%m1", "%m2", "%r"]


def test_lowered_access_quotes_its_widest_instruction(loop90, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """One source position lowered to global loads of two widths (copies of a body with different alignment): the
    access quotes the widest (128-bit ``ld.global.v2.b64``), not the greatest spelling (the 64-bit
    ``ld.global.v4.b16`` sorts after it). LLIR and PTX written as LLVM and Triton print them, in ``stages1``'s record."""
    from dataclasses import replace

    from irdiff.diagnose.facts import _walk_mlir, lowering_facts

    (tmp_path / "k.llir").write_text(
        '  %5 = tail call { i16, i16, i16, i16 } asm sideeffect "ld.global.v4.b16 { $0, $1, $2, $3 }, '
        '[ $4 + 0 ];", "=h,=h,=h,=h,l"(ptr addrspace(1) %4) #2, !dbg !19\n'
        '  %6 = tail call { i64, i64 } asm sideeffect "ld.global.v2.b64 { $0, $1 }, '
        '[ $2 + 0 ];", "=l,=l,l"(ptr addrspace(1) %4) #2, !dbg !19\n'
        "!19 = !DILocation(line: 33, column: 16, scope: !4)\n"
    )
    (tmp_path / "k.ptx").write_text(
        "\t.loc\t1 33 16\n\tld.global.v4.b16 \t{ %rs1, %rs2, %rs3, %rs4 }, [%rd1];\n"
        "\tld.global.v2.b64 \t{ %rd3, %rd4 }, [%rd2];\n"
    )
    v = replace(loop90.variants["stages1"], directory=str(tmp_path), stages={"llir": "k.llir", "ptx": "k.ptx"})
    ttgir = (
        '#loc3 = loc("/k.py":33:16)\nmodule {\n  tt.func public @k() {\n'
        "    %x = tt.load %x_ptrs : tensor<256x!tt.ptr<f32>, #blocked> loc(#loc3)\n    tt.return\n  }\n}\n"
    )
    ops, _ = _walk_mlir(ttgir, "ttgir")
    (lw,) = lowering_facts(v, ttgir, ops, [])[0]
    assert (lw.llir_count, lw.ptx_count, lw.llir_bits, lw.ptx_bits) == (2, 2, 128, 128)
    assert lw.ptx_key == "ld.global.v2.b64"
    assert lw.llir_ref is not None and lw.llir_ref.line == 2 and lw.ptx_ref is not None and lw.ptx_ref.line == 3
