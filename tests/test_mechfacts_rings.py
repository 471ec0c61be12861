"""The MMA barrier ring of a Blackwell loop (``MmaWaitFact.ring``) on ``tests/suites/mma_rings.py`` (sm100, a TMA K
loop at ``num_stages=4`` and at 1): the ring is the barrier array the ``ttng.tc_gen5_mma`` commits to (2), not the
largest ``xi64`` array of the kernel, which is the TMA loads' ring (4, one barrier per stage). The mechanism rule
``mma.blackwell-wait`` quotes it, in both orders."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from irdiff.bundle import Bundle
from irdiff.diagnose import diagnose
from irdiff.diagnose.mechfacts import (
    _barrier_ring,
    _converts,
    _lines,
    _loc_table,
    _mma_waits,
    _pos,
    _ptx_files,
    _ptx_shared_at,
    clear_memos,
    extract_mech_facts,
)
from tests.diag_helpers import get

SUITE = str(Path(__file__).parent / "suites" / "mma_rings.py")


@pytest.fixture(scope="module")
def rings(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(SUITE, ["deep", "flat"], "sm100")


def test_ring_is_the_mma_barrier_array_not_the_load_ring(rings: Bundle) -> None:
    clear_memos()
    ttgir = rings.variants["deep"].text("ttgir")
    arrays = sorted(int(n) for n in re.findall(r"= ttg\.local_alloc : \(\) -> !ttg\.memdesc<(\d+)x1xi64", ttgir))
    assert arrays == [2, 4]  # the MMA's two barriers and the loads' four
    waits = extract_mech_facts(rings.variants["deep"]).mma_waits
    assert waits and all(w.ring == 2 and not w.immediate for w in waits)
    assert all("ttng.tc_gen5_mma" in w.mma_ref.text for w in waits)
    flat = extract_mech_facts(rings.variants["flat"]).mma_waits
    assert flat and all(w.ring == 1 for w in flat) and any(w.immediate for w in flat)


def test_barrier_ring_follows_the_index_chain_to_its_allocation(rings: Bundle) -> None:
    clear_memos()
    g = _lines(rings.variants["deep"].text("ttgir"))
    defs = {r: ln for ln in g for r in ln.results}
    mma = next(ln for ln in g if ln.op == "ttng.tc_gen5_mma" and ln.inner)
    bar = re.search(r"(%[\w.#-]+)\[[^\]]*\]\s*(?:\{|:)", mma.text)
    assert bar is not None and defs[bar.group(1)].op == "ttg.memdesc_index"
    assert _barrier_ring(bar.group(1), defs) == 2
    load_bar = next(r for ln in g if ln.op == "ttg.memdesc_index" and "4x1xi64" in ln.text for r in ln.results)
    assert _barrier_ring(load_bar, defs) == 4
    fg = _lines(rings.variants["flat"].text("ttgir"))
    fdefs = {r: ln for ln in fg for r in ln.results}
    fmma = next(ln for ln in fg if ln.op == "ttng.tc_gen5_mma" and ln.inner)
    fbar = re.search(r"(%[\w.#-]+)\[[^\]]*\]\s*(?:\{|:)", fmma.text)
    assert fbar is not None and fdefs[fbar.group(1)].op == "ttg.local_alloc"  # a single barrier, no index
    assert _barrier_ring(fbar.group(1), fdefs) == 1
    assert _barrier_ring("%nowhere", defs) is None
    # a value defined by another op than an index chain or an allocation has no ring
    other = next(r for ln in g if ln.op == "tt.make_range" for r in ln.results)
    assert _barrier_ring(other, defs) is None


@pytest.mark.parametrize("pair", [("flat", "deep"), ("deep", "flat")])
def test_blackwell_wait_names_the_mma_ring(rings: Bundle, pair: tuple[str, str]) -> None:
    f = get(diagnose(rings, *pair), "mma.blackwell-wait")
    assert f.predicts == "flat"
    assert "In `deep` the wait is on an earlier MMA's barrier (2 MMA barriers)" in f.explanation


# ------------------------------------------------------------------------------------------------ .loc files


@pytest.fixture(scope="module")
def signs(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(str(Path(__file__).parent / "suites" / "mech_signs.py"), ["s8", "copy"], "sm80")


def test_convert_traffic_is_read_at_its_own_file(signs: Bundle) -> None:
    """The MMA → blocked ``ttg.convert_layout`` of ``mech_signs.py::s8`` stages its tile through shared memory at its
    source position (file 1, line 27 in PTX). Shared stores that a second file (an inlined helper's ``.file 2``)
    puts at the same line and column are not the conversion's; the same stores at file 1 are."""
    clear_memos()
    v = signs.variants["s8"]
    ttgir, ptx = v.text("ttgir"), v.text("ptx")
    (c,) = _converts(ttgir, ptx, "", "")
    assert (c.src, c.dst, c.shared_stores, c.shared_loads, c.stored_bytes) == ("mma_v2", "blocked", 4, 4, 32)
    path, line, col = _pos(next(ln for ln in ttgir.splitlines() if "ttg.convert_layout" in ln), _loc_table(ttgir))
    assert path == v.metadata["source_path"] or path.endswith("mech_signs.py")
    files = _ptx_files(ptx)
    assert files["1"] == path  # the PTX names the kernel's file as MLIR does
    assert line == 27

    def extra(index: int) -> str:
        stores = f"\t.loc\t{index} {line} {col}\n\tst.shared.b32 \t[%r1], %r2;\n"
        out = ptx.replace("\tret;", stores + "\tret;", 1)
        return out + '\t.file\t2 "/elsewhere/helper.py"\n'

    (other,) = _converts(ttgir, extra(2), "", "")
    assert (other.shared_stores, other.stored_bytes, other.scratch_bytes) == (4, 32, c.scratch_bytes)
    (same,) = _converts(ttgir, extra(1), "", "")
    assert (same.shared_stores, same.stored_bytes) == (5, 36)
    assert _ptx_shared_at(extra(2), "/elsewhere/helper.py") == {(line, col): [("st", 4)]}
    assert _ptx_shared_at(extra(2), path)[(line, col)] == _ptx_shared_at(ptx)[(line, col)]
    assert _ptx_files('\t.file\t3 "/d" "k.py"\n\t.file 4 "/x/y.py"\n') == {"3": "/d/k.py", "4": "/x/y.py"}


def test_barrier_ring_of_odd_chains() -> None:
    """Chains a compiled kernel of the installed Triton does not print: ``ttg.memdesc_subview`` (the name Triton
    3.3/3.4 print for ``memdesc_index``) still leads to the allocation; an index line cut before its operand, a value
    indexed from itself (an untrusted bundle) and an allocation that holds no barriers (a tile) have no ring, and
    none raises or loops."""
    bars = "!ttg.memdesc<3x1xi64, #shared1, #smem, mutable>"
    one = "!ttg.memdesc<1xi64, #shared1, #smem, mutable, 3x1>"
    text = "\n".join(
        [
            f"%bars = ttg.local_alloc : () -> {bars}",
            f"%b = ttg.memdesc_subview %bars[%c1_i32] : {bars} -> {one}",
            "%cut = ttg.memdesc_index",
            f"%self = ttg.memdesc_index %self[%c0_i32] : {bars} -> {one}",
            "%tile = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>",
        ]
    )
    g = _lines(text)
    defs = {r: ln for ln in g for r in ln.results}
    assert _barrier_ring("%b", defs) == 3
    assert [_barrier_ring(x, defs) for x in ("%cut", "%self", "%tile")] == [None, None, None]


def test_untraced_mma_barrier_ring_is_the_largest_array_or_one() -> None:
    """An MMA whose barrier is a loop-carried value (not traced to its allocation) gets the largest ``Nx1xi64``
    barrier array of the kernel as its ring; with only single barriers allocated, 1 (one MMA in flight)."""
    mem = "!ttg.memdesc<64x32xf16, #shared, #smem>"
    acc = "!ttg.memdesc<64x64xf32, #tmem, #ttng.tensor_memory, mutable>"
    bar = "!ttg.memdesc<1xi64, #shared1, #smem, mutable>"

    def waits(alloc: str) -> list[tuple[int, bool]]:
        text = "\n".join(
            [
                f"%one = ttg.local_alloc : () -> {alloc}",
                f"%r = scf.for %i = %c0_i32 to %K step %c32_i32 iter_args(%bar = %one) -> ({bar})  : i32 {{",
                f"  ttng.tc_gen5_mma %a, %b, %acc, %true, %true, %bar[%true] {{is_async}} : {mem}, {mem}, {acc}, {bar}",
                f"  ttng.wait_barrier %bar, %c0_i32 : {bar}",
                f"  scf.yield %bar : {bar}",
                "}",
            ]
        )
        return [(w.ring, w.immediate) for w in _mma_waits(text)]

    assert waits(bar) == [(1, True)]
    assert waits("!ttg.memdesc<4x1xi64, #shared1, #smem, mutable>") == [(4, True)]


def test_source_positions_and_files_of_odd_texts() -> None:
    """A location naming a ``#loc`` the table lacks (a cut text) has no position, never an exception; a PTX
    ``.file`` directory written with a trailing slash, or ending in ``X``, joins its name with one slash."""
    table = {"#loc1": "callsite(#loc9 at #loc2)", "#loc2": '"/k/kern.py":5:10'}
    assert _pos("%x = tt.load %p loc(#loc1)", table) is None
    assert _pos("%x = tt.load %p loc(#loc2)", table) == ("/k/kern.py", 5, 10)
    ptx = '\t.file\t1 "/k/" "kern.py"\n\t.file\t2 "/work/MAX" "k.py"\n'
    assert _ptx_files(ptx) == {"1": "/k/kern.py", "2": "/work/MAX/k.py"}
