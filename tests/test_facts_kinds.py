"""Facts of ``tests/suites/facts_kinds.py`` (sm80, from the shared compile cache): which loads in a loop read the same
address on every iteration, which Python name a load or store is labelled with, unsigned 64-bit division in TTIR,
and what each global access of TTGIR is lowered to and made of. Every expected value follows from the kernel source
(the comments say how); names are compared by their Python stem (``%fixed_7`` -> ``fixed``), which does not depend
on the Triton release's SSA numbering.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from irdiff.diagnose.counts import sass_instructions, sass_key
from irdiff.diagnose.facts import (
    Ref,
    _load_name,
    _name_loads,
    _stem,
    _walk_mlir,
    extract_facts,
    invariant_loads,
    ttir_int_width_facts,
)
from irdiff.diagnose.texts import stage_text

SUITE = str(Path(__file__).parent / "suites" / "facts_kinds.py")


@pytest.fixture(scope="module")
def kinds(compile_suite):  # type: ignore[no-untyped-def]
    return compile_suite(SUITE, ["chase", "nested", "names", "udiv", "piped", "seq"], "sm80")


def _load_stem(ref: Ref) -> str:
    m = re.match(r"(%[\w.]+) = tt\.load ", ref.text)
    assert m, ref.text
    return _stem(m.group(1))


def _check_refs(refs: list[Ref], text: str, stage: str) -> None:
    lines = text.splitlines()
    for r in refs:
        assert r.stage == stage and r.line is not None and r.text and r.text in lines[r.line - 1], r


def test_loads_that_read_the_same_address_every_iteration(kinds) -> None:  # type: ignore[no-untyped-def]
    ttir = stage_text(kinds.variants["chase"], "ttir")
    ops, loops = _walk_mlir(ttir, "ttir")
    got = invariant_loads(ops, loops)
    # `fixed` (w_ptr + base + cols, loaded with cache_modifier=".ca") and `j` (idx_ptr + K) use only values from before
    # the loop; `chased` is indexed by `j` (a load in the loop), `counted` by an atomic's result, `moving` through the
    # pointer the loop advances (an iter_arg): those differ per iteration; `pre`'s offset is
    # computed in the loop (one product used twice) from `off`, loaded once before the loop
    assert [_load_stem(r) for r in got] == ["fixed", "j", "pre"]
    _check_refs(got, ttir, "ttir")
    (loop,) = loops
    assert all(loop.ref.line < (r.line or 0) < (loop.end_line or 0) for r in got)
    assert re.search(r"cache_?[mM]odifier = ca\b", got[0].text)  # Triton 3.9 / 3.6 spellings
    # extract_facts reports the same loads
    assert extract_facts(kinds.variants["chase"]).invariant_loads == got


def test_invariance_is_judged_per_innermost_loop_and_sibling_names(kinds) -> None:  # type: ignore[no-untyped-def]
    ttir = stage_text(kinds.variants["nested"], "ttir")
    ops, loops = _walk_mlir(ttir, "ttir")
    # the inner loop's `row` load is indexed by the OUTER index only (the same on every inner iteration), `col` by the
    # inner one; the later sibling loop prints its index with the same name as the first outer loop and loads by it
    assert [(lp.depth, lp.has_inner) for lp in loops] == [(1, True), (2, False), (1, False)]
    got = invariant_loads(ops, loops)
    assert [_load_stem(r) for r in got] == ["row"]
    _check_refs(got, ttir, "ttir")
    inner = loops[1]
    assert inner.ref.line < (got[0].line or 0) < (inner.end_line or 0)
    heads = [re.search(r"scf\.for (%\w+) =", lp.ref.text)[1] for lp in loops]  # type: ignore[index]
    assert heads[0] == heads[2] != heads[1]  # the sibling loops share the index's printed name


def test_names_of_nested_and_assigned_loads_and_stores(kinds) -> None:  # type: ignore[no-untyped-def]
    v = kinds.variants["names"]
    ttir_ops, _ = _walk_mlir(stage_text(v, "ttir"), "ttir")
    # `w = tl.load(w_ptr + cols)`: MLIR names the value and its pointer `w`; `acc = tl.sum(tl.load(a_ptrs) * w)`: the
    # load is nested in `acc`'s expression (the next `acc` value multiplies it), so its pointer `a_ptrs` names it;
    # `x = tl.load(x_ptrs)`: assigned, named `x`; the stores: the stored value names them (`scaled`), and the scalar
    # store to `sum_ptr` has no tensor type (not an access of the coalescing log)
    assert _name_loads(ttir_ops) == {
        ("load", (64,), "f32"): [("w", "w"), ("a_ptrs", "a_ptrs"), ("x", "x_ptrs")],
        ("store", (64,), "f32"): [("scaled", "")],
    }
    # `chase`: the scalar load `j` (no tensor type: not an access of the coalescing log) sits between tensor loads,
    # which keep their names; the hinted `fixed` load's pointer follows its first `=`; `moving` loads through `p`;
    # the store after the loop goes through the loop's result named after `acc` (`%acc_2#0`)
    chase_ops, _ = _walk_mlir(stage_text(kinds.variants["chase"], "ttir"), "ttir")
    assert _name_loads(chase_ops) == {
        ("load", (64,), "f32"): [
            ("fixed", "fixed"), ("chased", "chased"), ("counted", "counted"), ("moving", "p"), ("pre", "pre"),
        ],
        ("store", (64,), "f32"): [("acc", ""), ("acc", "acc")],
    }  # fmt: skip
    loads = [i for i, o in enumerate(ttir_ops) if o.op == "tt.load"]
    assert [_load_name(ttir_ops, i, "p") for i in loads] == ["w", "p", "x"]  # only the nested one takes the pointer
    assert [_load_name(ttir_ops, i, "") for i in loads] == ["w", "acc", "x"]  # no pointer name: the value's own
    # the same names on the TTGIR accesses, with what they were lowered to
    f = extract_facts(v)
    got = [(a.kind, a.name, a.shape, a.elem, a.elem_bits, a.ptr_args, a.mask, a.mask_args) for a in f.lowered]
    assert got == [
        ("load", "w", [64], "f32", 32, ["w_ptr"], "", []),
        ("load", "a_ptrs", [64], "f32", 32, ["a_ptr"], "", []),
        ("load", "x", [64], "f32", 32, ["x_ptr"], "", []),
        ("store", "scaled", [64], "f32", 32, ["out_ptr"], "", []),
    ]
    ttgir = stage_text(v, "ttgir")
    _check_refs([a.ref for a in f.lowered], ttgir, "ttgir")
    assert [a.ref.text.split(" = ")[-1].split()[0] for a in f.lowered] == ["tt.load"] * 3 + ["tt.store"]
    for a in f.lowered:
        # 64 f32 over 2 warps: one 32-bit access per thread, one instruction in LLIR and in PTX, quoted from there
        assert (a.llir_count, a.ptx_count, a.llir_bits, a.ptx_bits) == (1, 1, 32, 32), a
        assert a.ptx_key == ("ld.global.b32" if a.kind == "load" else "st.global.b32")
        assert a.ptx_ref is not None and a.ptx_key in a.ptx_ref.text and a.ptx_ref.stage == "ptx"
        assert a.llir_ref is not None and a.llir_ref.stage == "llir"
        assert a.coalesce_index is not None and f.accesses[a.coalesce_index].name == a.name
    _check_refs([a.ptx_ref for a in f.lowered if a.ptx_ref], stage_text(v, "ptx"), "ptx")
    _check_refs([a.llir_ref for a in f.lowered if a.llir_ref], stage_text(v, "llir"), "llir")
    assert f.arg_roles == {"w_ptr": ["pointer"], "a_ptr": ["pointer"], "x_ptr": ["pointer"], "out_ptr": ["pointer"]}
    # every address is a pointer parameter plus `cols` (tl.arange): neighbours 1 element apart
    assert [a.strides for a in f.lowered] == [[1]] * 4
    # a bundle without LLIR and PTX: the same accesses, lowered to nothing that can be quoted
    unlowered = extract_facts(
        dataclasses.replace(v, stages={k: x for k, x in v.stages.items() if k not in ("llir", "ptx")})
    )
    assert [a.name for a in unlowered.lowered] == ["w", "a_ptrs", "x", "scaled"]
    for a in unlowered.lowered:
        assert (a.llir_count, a.ptx_count, a.llir_bits, a.ptx_bits, a.ptx_key) == (0, 0, None, None, ""), a
        assert (a.llir_ref, a.ptx_ref) == (None, None)
    # a bundle without the LLVM debug log (no coalescing log): the same names, read from TTGIR itself (the loads'
    # result and pointer names, the stored value's name), with no coalescing facts to pair
    bare = dataclasses.replace(
        v,
        stages={k: x for k, x in v.stages.items() if k != "llvm_debug"},
        logs={k: x for k, x in v.logs.items() if k != "llvm_debug"},
    )
    g = extract_facts(bare)
    assert not g.llvm_debug_present and g.accesses == [] and g.pipeline == []
    assert [(a.kind, a.name, a.coalesce_index, a.per_thread, a.coalesce_bits) for a in g.lowered] == [
        ("load", "w", None, None, None),
        ("load", "a_ptrs", None, None, None),
        ("load", "x", None, None, None),
        ("store", "scaled", None, None, None),
    ]


def test_unsigned_64_bit_division(kinds) -> None:  # type: ignore[no-untyped-def]
    v = kinds.variants["udiv"]
    ttir = stage_text(v, "ttir")
    ops, _ = _walk_mlir(ttir, "ttir")
    n, first, py, divrem = ttir_int_width_facts(
        ttir, ops, str(v.metadata.get("source_path", "")), stage_text(v, "python")
    )
    # `pid % g` and `pid // g` of uint64 values: arith.remui and arith.divui on i64, in source order
    assert [re.search(r"arith\.(\w+)", r.text)[1] for r in divrem] == ["remui", "divui"]  # type: ignore[index]
    assert all(r.text.endswith(": i64") for r in divrem)
    _check_refs(divrem, ttir, "ttir")
    # the first 64-bit value is the widened program id, quoted with its Python line
    assert (
        first is not None and first.stage == "ttir" and re.match(r"%\w+ = arith\.extsi %\w+ : i32 to i64$", first.text)
    )
    assert py is not None and py.text == "pid = tl.program_id(0).to(tl.uint64)"
    # every i64 value except the constant 64: the two widenings, %, *, //, +, the offset product and both pointer
    # advances by an i64 offset
    expected = [
        o for o in ops if o.op != "arith.constant" and re.search(r"(: (.*, )?i64|to i64)$", o.text) and o.results
    ]
    assert n == len(expected) and {o.op for o in expected} >= {"arith.extsi", "arith.remui", "arith.divui"}
    assert sum(1 for o in ops if o.op == "arith.extsi") == 2 and n >= 7
    # the Python line is only quoted for the kernel's own source file
    assert ttir_int_width_facts(ttir, ops, "/elsewhere.py", stage_text(v, "python"))[2] is None
    # in TTGIR neither access has a Python name (`tl.store(y_ptr + ..., tl.load(x_ptr + src + cols))`: the loaded
    # value and both pointers are unnamed expressions), with or without the coalescing log; both read `cols`
    bare = dataclasses.replace(
        v,
        stages={k: x for k, x in v.stages.items() if k != "llvm_debug"},
        logs={k: x for k, x in v.logs.items() if k != "llvm_debug"},
    )
    for f in (extract_facts(v), extract_facts(bare)):
        assert [(a.kind, a.name, a.strides) for a in f.lowered] == [("load", "", [1]), ("store", "", [1])]


def test_options_resources_arguments_and_lookups(kinds) -> None:  # type: ignore[no-untyped-def]
    v = kinds.variants["names"]
    f = extract_facts(v)
    # options: the suite's num_warps=2 and num_stages=3, completed from Triton's metadata (num_ctas, maxnreg)
    assert "num_ctas" not in v.options and "maxnreg" not in v.options
    assert f.options == {"num_warps": 2, "num_stages": 3, "num_ctas": v.metadata["num_ctas"], "maxnreg": None}
    assert f.options["num_ctas"] == 1
    # every resource of the ptxas report, under its own key; the registers also limit the occupancy model
    r = v.resources
    assert f.resources == {
        "registers": r.registers,
        "spill_store_bytes": r.spill_store_bytes,
        "spill_load_bytes": r.spill_load_bytes,
        "stack_bytes": r.stack_bytes,
        "shared_bytes": r.shared_bytes,
        "static_shared_bytes": r.static_shared_bytes,
        "ptxas_version": r.ptxas_version,
    }
    assert (f.resources["spill_load_bytes"], f.resources["stack_bytes"]) == (0, 0)
    assert f.resources["ptxas_version"].startswith("ptxas V") and f.resources["registers"] > 0
    assert f.occupancy is not None and "registers" in f.occupancy.limits and f.occupancy.limits["warps"] == 64 // 2
    # the JIT's specialization of each parameter, with its TTIR signature fragment (none for the constexpr)
    assert [(a.name, a.annotation, a.value, a.do_not_specialize, a.do_not_specialize_on_alignment) for a in f.args] == [
        (s.name, s.annotation, s.value, False, False) for s in v.specialization
    ]
    assert [a.reason for a in f.args] == [s.reason for s in v.specialization] and all(a.reason for a in f.args)
    c = f.arg("C")
    assert c is not None and (c.annotation, c.value, c.constexpr, c.ttir) == ("tl.constexpr", "64", "64", None)
    x = f.arg("x_ptr")
    assert x is not None and x.index == 2 and x.ttir is not None and x.ttir.text.startswith("%x_ptr: !tt.ptr<f32>")
    assert f.arg("nope") is None
    # peer(): the other variant's parameter paired by role (unpaired: None; not in the pairing: the same name)
    f.peer_names = {"src": "x_ptr", "gone": None}
    assert f.peer("src") is x and f.peer("gone") is None and f.peer("w_ptr") is f.arg("w_ptr") is not None
    assert f.peer("x_ptr") is x and f.peer("nope") is None
    # the loops of each stage are quoted from that stage; to_json is the dataclass as plain data
    for name in ("chase", "nested"):
        g = extract_facts(kinds.variants[name])
        assert g.loops_ttir and {lp.ref.stage for lp in g.loops_ttir} == {"ttir"}
        assert g.loops_ttgir and {lp.ref.stage for lp in g.loops_ttgir} == {"ttgir"}
    j = f.to_json()
    assert j["name"] == "names" and j["args"][5]["name"] == "C" and j["peer_names"] == {"src": "x_ptr", "gone": None}


def test_what_each_access_address_and_mask_come_from(kinds) -> None:  # type: ignore[no-untyped-def]
    chase = extract_facts(kinds.variants["chase"])
    got = [(a.kind, a.name, a.ptr_args, a.mask, a.mask_args) for a in chase.lowered]
    # pointer parameters first, then the integers; a value read in the loop is followed back to what it was read
    # from (`chased` = w_ptr + a load of idx_ptr + K, hinted evict_last); the advancing pointer is a loop-carried
    # block argument (not followed); the store after the loop goes through the loop's result (`%x#0`) back to the
    # loop's operands: x_ptr (the pointer's start) and N (its trip count)
    assert got == [
        ("load", "fixed", ["w_ptr"], "", []),
        ("load", "chased", ["idx_ptr", "w_ptr", "K"], "", []),
        ("load", "counted", ["cnt_ptr", "w_ptr"], "", []),
        ("load", "moving", [], "", []),
        ("load", "pre", ["idx_ptr", "w_ptr"], "", []),  # w_ptr + f(off), off loaded from idx_ptr
        ("store", "acc", ["y_ptr"], "", []),
        ("store", "acc", ["x_ptr", "N"], "", []),
    ]
    assert re.search(r"tt\.store %\w+#0, ", chase.lowered[-1].ref.text)
    # each access is paired with its own block of the coalescing log (the two stores of `acc` with one each)
    idx = [a.coalesce_index for a in chase.lowered]
    assert None not in idx and len(set(idx)) == len(idx) == 7
    assert all(
        (chase.accesses[i].kind, chase.accesses[i].shape) == (a.kind, a.shape) for i, a in zip(idx, chase.lowered)
    )
    assert chase.arg_roles == {k: ["pointer"] for k in ("w_ptr", "idx_ptr", "K", "cnt_ptr", "y_ptr", "N", "x_ptr")}
    piped = extract_facts(kinds.variants["piped"])
    ld, st = piped.lowered
    ttgir = stage_text(kinds.variants["piped"], "ttgir")
    # `mask=cols < n` on the load and the store: the same i1 tensor, made of a comparison with the splatted n (the
    # arange it compares is not part of the mask's story); the load's address: X + r * stride
    for a in (ld, st):
        assert a.mask and a.mask_args == ["n"]
        assert [r.text.split(" = ")[1].split()[0] for r in a.mask_refs] == ["arith.cmpi", "tt.splat"]
        assert "%n " in a.mask_refs[1].text
        _check_refs(a.mask_refs, ttgir, "ttgir")
    assert (ld.ptr_args, st.ptr_args, ld.mask == st.mask) == (["X", "stride"], ["y_ptr"], True)
    assert piped.arg_roles == {"X": ["pointer"], "stride": ["pointer"], "n": ["mask"], "y_ptr": ["pointer"]}
    # each stage's first line of each count key is that stage's own line holding it
    v = kinds.variants["piped"]
    for stage in ("ptx", "sass"):
        text = stage_text(v, stage).splitlines()
        assert piped.first_lines[stage], stage
        for key, ref in piped.first_lines[stage].items():
            assert ref.stage == stage and ref.line is not None and ref.text and ref.text in text[ref.line - 1], key
    # ... filed under every key that stage counts, and only those
    sass = stage_text(v, "sass")
    assert set(piped.first_lines["sass"]) == {k for _, op, _ in sass_instructions(sass) for k in sass_key(op)}
    ptx = stage_text(v, "ptx").splitlines()
    first_ld = next(i for i, s in enumerate(ptx, 1) if "ld.global" in s)
    assert min(r.line or 0 for k, r in piped.first_lines["ptx"].items() if k.startswith("ld.global")) == first_ld


def test_loops_in_sequence_unrolled_and_branching(kinds) -> None:  # type: ignore[no-untyped-def]
    v = kinds.variants["seq"]
    for stage in ("ttir", "ttgir"):
        text = stage_text(v, stage)
        ops, loops = _walk_mlir(text, stage)
        # a plain loop; `loop_unroll_factor=2`: the unrolled loop (two loads per iteration) and its remainder (one,
        # marked tt.num_stages = 1, right after it from the same Python `for`); a `num_stages=1` loop from another
        # `for` (not a remainder); a loop that carries nothing (no iter_args) around an if/else
        got = [(lp.stage, lp.depth, lp.iter_args, lp.flatten, lp.unroll, lp.remainder) for lp in loops]
        assert got == [
            (stage, 1, 1, False, 1, False),
            (stage, 1, 1, False, 2, False),
            (stage, 1, 1, False, 1, True),
            (stage, 1, 1, False, 1, False),
            (stage, 1, 0, False, 1, False),
        ], stage
        assert loops[1].loc == loops[2].loc != loops[3].loc and "tt.num_stages = 1" in loops[3].attrs
        lines = text.splitlines()
        for lp in loops:
            assert lp.ref.stage == stage and lp.ref.text.startswith(("scf.for", "%")) and "scf.for" in lp.ref.text
            assert lines[lp.end_line - 1].strip().startswith("}") and lp.ref.line < lp.end_line
        # the branch's `} else {` keeps the loop open: both stores are in the last loop, the return after it
        last = loops[-1]
        stores = [o for o in ops if o.op == "tt.store"]
        assert len(stores) == 2 and all(o.loop is last and o.loop_depth == 1 for o in stores)
        assert any("} else {" in lines[n - 1] for n in range(stores[0].line, stores[1].line))
        ret = next(o for o in ops if o.op == "tt.return")
        assert (ret.loop, ret.loop_depth) == (None, 0) and last.end_line < ret.line
        assert all(o.loop is None for o in ops if o.line > last.end_line)


def test_strides_of_addresses_that_come_out_of_a_loop_or_a_branch(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """``carried`` (C = 64, f32): element strides of each store's address, in source order. ``p`` is advanced by the
    scalar ``C * C`` in an ``scf.for`` and stored to after it: still [C, 1] (the loop result's type is the tile, not
    the ``: i32`` of the loop counter, which used to give [0, 0]); ``s`` is an ``scf.if`` whose branches differ by a
    scalar offset: [C, 1]; ``t``'s branches disagree (row-major vs transposed): unknown; ``q += cols`` moves each
    element by its own amount per iteration: unknown. The load beside them is a plain [C, 1] tile."""
    b = compile_suite(SUITE, ["carried"], "sm80")
    v = b.variants["carried"]
    assert v.error is None
    ops, _ = _walk_mlir(stage_text(v, "ttgir"), "ttgir")
    assert {o.op for o in ops} >= {"scf.for", "scf.if"}  # the control flow survived to TTGIR
    f = extract_facts(v)
    got = [(a.kind, a.shape, a.strides) for a in f.lowered]
    assert got == [
        ("load", [64, 64], [64, 1]),
        ("store", [64, 64], [64, 1]),  # p, out of the scf.for
        ("store", [64, 64], [64, 1]),  # s, out of the scf.if
        ("store", [64, 64], None),  # t: the branches disagree
        ("store", [64], None),  # q: moved by a tensor in the loop
    ]
