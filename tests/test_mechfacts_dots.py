"""Dot kinds, layout conversions and waits the first mechanism-fact tests (``tests/test_mechfacts.py``) never compile:
operands converted right before the product (fp16 → fp32 ``arith.extf``, int8 ``arith.sitofp`` and uint8
``arith.uitofp`` → fp16), an fp16 accumulator converted before it is chained in (no operand upcast), a batched 3-D
product (sm90 keeps it on ``mma.sync``: ``wgmma`` has no batch dimension), real compiles of
``tests/suites/mech_dots.py`` on sm80 and sm90; then op lines as Triton prints them (3.9 and 3.6) for what a small
kernel cannot pin down: a conversion sharing its source position with another shared-memory op, tokens and barriers
named ``%x#N``, and lines an untrusted bundle may hold (a missing signature, operand or ``num``) that must give empty
facts, never an exception."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from irdiff.bundle import Bundle
from irdiff.diagnose.facts import Ref, strip_loc
from irdiff.diagnose.mechfacts import (
    MechFacts,
    _async_waits,
    _contiguous_dims,
    _converts,
    _dots,
    _loc_table,
    _mma_waits,
    _pos,
    _ptx_shared_at,
    _region_ends,
    _transposing_copies,
    clear_memos,
    extract_mech_facts,
)

DOTS_SUITE = str(Path(__file__).parent / "suites" / "mech_dots.py")
VARIANTS = ["ext32", "i8", "u8", "acc16", "rowmax", "bmm"]


@pytest.fixture(autouse=True)
def _cold_memos() -> None:
    clear_memos()


@pytest.fixture(scope="module", params=["sm80", "sm90"])
def dots(request: pytest.FixtureRequest, compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    b: Bundle = compile_suite(DOTS_SUITE, VARIANTS, request.param)
    return b


def _facts(b: Bundle, variant: str) -> MechFacts:
    return extract_mech_facts(b.variants[variant])


# ------------------------------------------------------------------------------------------------ real compiles


def test_operand_upcasts_named_by_their_conversion(dots: Bundle) -> None:
    """``a.to(tl.float32)`` of fp16 operands is an ``arith.extf`` right before an fp32 (tf32) dot; int8 and uint8
    ``.to(tl.float16)`` are ``arith.sitofp`` / ``arith.uitofp`` (MLIR integers are signless: both print ``i8``; the
    upcast names the unsigned one ``u8``, as the conversion reads it). The dot
    itself then multiplies the converted types; the upcast names the conversion, found whether the operand stays in
    registers or goes through shared memory first (sm90's ``wgmma`` B operand: ``ttg.local_alloc``)."""
    sm90 = "cuda:90" in dots.variants["ext32"].text("ttgir")
    for variant, op, upcast, a, precision in (
        ("ext32", "arith.extf", "f16 → f32", "f32", "tf32"),
        ("i8", "arith.sitofp", "i8 → f16", "f16", ""),
        ("u8", "arith.uitofp", "u8 → f16", "f16", ""),
    ):
        ttgir = dots.variants[variant].text("ttgir")
        assert f" = {op} " in ttgir  # the kernel's conversion is in the final TTGIR
        (d,) = _facts(dots, variant).dots
        assert (d.a_type, d.b_type, d.acc_type, d.precision, d.upcast) == (a, a, "f32", precision, [upcast]), variant
        assert d.shape == [64, 64, 32] and d.rank == 2 and d.warps == 4 and d.acc_chained
        assert d.lowering == ("wgmma" if sm90 else "mma_v2")
        assert d.python is not None and d.python.text.startswith("acc = tl.dot(")
        if sm90:  # the converted A stays in registers, B is read from shared memory
            assert d.operands == ["registers", "shared"]


def test_converted_accumulator_is_no_operand_upcast(dots: Bundle) -> None:
    """``tl.dot(a, b, c.to(tl.float32))``: the ``arith.extf`` feeds the accumulator (third operand), not A or B, so
    no operand is upcast; the fp16 C is converted from its load layout to the MMA layout (a conversion produced by the
    ``tt.load``, consumed by the ``arith.extf``) and the chained accumulator reads as such."""
    (d,) = _facts(dots, "acc16").dots
    assert (d.a_type, d.b_type, d.acc_type, d.upcast, d.acc_chained) == ("f16", "f16", "f32", [], True)
    sm90 = "cuda:90" in dots.variants["acc16"].text("ttgir")
    mma = "wgmma" if sm90 else "mma_v2"
    assert d.lowering == mma
    cs = _facts(dots, "acc16").converts
    into = [c for c in cs if c.dst == mma]
    assert [(c.src, c.producer, c.consumers, c.shape, c.elem) for c in into] == [
        ("blocked", "tt.load", ["arith.extf"], [64, 64], "f16")
    ]
    out = [c for c in cs if c.src == mma]
    assert [(c.dst, c.consumers, c.elem) for c in out] == [("blocked", ["tt.store"], "f32")]
    for c in out:  # the MMA result goes out through shared memory, in whole bytes
        assert c.scratch_bytes is not None and type(c.scratch_bytes) is int and c.stored_bytes > 0


def test_batched_dot_shape_is_m_n_k(dots: Bundle) -> None:
    """``[2, 32, 16] × [2, 16, 64]``: rank 3, ``shape`` = ``[M, N, K]`` = ``[32, 64, 16]`` of the last two dims of
    each operand (M, N and K all differ, so a swapped index shows). Even on sm90 the batched dot is ``mma.sync``
    (``wgmma`` has no batch dimension), its instrShape has the batch 1 in front."""
    (d,) = _facts(dots, "bmm").dots
    assert (d.shape, d.rank, d.a_type, d.acc_type) == ([32, 64, 16], 3, "f16", "f32")
    assert "tensor<2x32x16xf16" in d.ttir.text and "tensor<2x16x64xf16" in d.ttir.text
    assert (d.lowering, d.instr_shape, d.operands) == ("mma_v2", [1, 16, 8], ["registers", "registers"])
    (c,) = _facts(dots, "bmm").converts
    assert (c.src, c.dst, c.shape, c.producer, c.consumers) == (
        "mma_v2",
        "blocked",
        [2, 32, 64],
        "tt.dot",
        ["tt.store"],
    )


def test_reduction_result_converted_for_the_store(dots: Bundle) -> None:
    """``tl.store(d, tl.max(tl.dot(a, b), axis=1))``: the row maximum is reduced in the MMA layout (a ``#ttg.slice``
    of it) and converted to a blocked layout for the store; the conversion's producer is the ``tt.reduce``. When the
    reduction and the conversion have their own source positions (columns), the conversion's shared memory must
    hold at least the 64 fp32 maxima it redistributes; on a shared position it claims none."""
    v = dots.variants["rowmax"]
    (c,) = extract_mech_facts(v).converts
    assert (c.src, c.dst, c.producer, c.consumers, c.shape, c.elem) == (
        "slice",
        "blocked",
        "tt.reduce",
        ["tt.store"],
        [64],
        "f32",
    )
    assert c.python is not None and c.python.text == "tl.store(d_ptr + rm, tl.max(tl.dot(a, b), axis=1))"
    ttgir = v.text("ttgir").splitlines()
    close = next(ln for ln in ttgir if ln.strip().startswith("}) : (tensor<64x64xf32"))  # the reduce's location
    table = _loc_table(v.text("ttgir"))
    if _pos(close, table) == _pos(ttgir[(c.ref.line or 0) - 1], table):
        assert c.scratch_bytes is None
    else:
        assert c.scratch_bytes is not None and c.scratch_bytes >= 64 * 4 and c.shared_loads > 0


# ------------------------------------------------------------------------------------------------ real op lines

# A module header and op lines as Triton prints them (sm80, 4 warps), the locations in one kernel file.
HEAD = """\
#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
#loc = loc("/k/kern.py":3:0)
#loc1 = loc("/k/kern.py":5:10)
#loc2 = loc("/k/kern.py":6:4)
#loc3 = loc("/other/helper.py":9:8)
"""
MODULE = 'module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {'
T = "tensor<64x64xf32, #mma>"
B = "tensor<64x64xf32, #blocked>"
CVT = f"%c = ttg.convert_layout %acc : {T} -> {B} loc(#loc1)"
PY = (
    "def kern(x):\n    pass\n    pass\n    pass\n    y = tl.max(tl.dot(a, b), 1)\n    tl.store(p, y)\n"
    + "    pass\n" * 6
)
# PTX of the conversion at 5:10: two 16-byte stores, a barrier, one 16-byte load (one round), per thread
PTX = "\n".join(
    [
        ".visible .entry kern(",
        ")",
        "{",
        "\t.loc\t1 5 10",
        "\tst.shared.v4.b32 \t[%r1], {%r2, %r3, %r4, %r5};",
        "\tst.shared.v4.b32 \t[%r6], {%r2, %r3, %r4, %r5};",
        "\tbar.sync \t0;",
        "\tld.shared.v4.b32 \t{%r2, %r3, %r4, %r5}, [%r7];",
        "\t.loc\t1 6 4",
        "\tld.shared.v4.b32 \t{%r2, %r3, %r4, %r5}, [%r7];",
        "\tret;",
        "}",
    ]
)


def _module(*ops: str, header: str = HEAD, module: str = MODULE) -> str:
    body = "\n".join("    " + o for o in ops)
    return f"{header}{module}\n  tt.func public @kern(%arg0: !tt.ptr<f32>) {{\n{body}\n    tt.return loc(#loc)\n  }} loc(#loc)\n}}\n"


def test_conversion_alone_at_its_position_gets_the_ptx_shared_traffic() -> None:
    """One conversion at 5:10 (4 warps = 128 threads): 2 stores of 16 bytes, 1 load, 1 barrier, one round, so it
    stages 32 × 128 = 4096 bytes per CTA (an int: whole bytes). The tensor atomic on the same line uses no shared
    memory (``tt.atomic_rmw`` and ``tt.atomic_cas`` alike), nor do the constant and the dot there: none of them changes
    anything."""
    for extra in (
        "",
        f"%r = tt.atomic_rmw fadd, acq_rel, gpu, %p, %c, %m : (tensor<64x64x!tt.ptr<f32>, #blocked>, {B}, "
        f"tensor<64x64xi1, #blocked>) -> {B} loc(#loc1)",
        f"%r = tt.atomic_cas acq_rel, gpu, %p, %cmp, %c : (tensor<64x64x!tt.ptr<f32>, #blocked>, {B}, {B}) -> {B} "
        "loc(#loc1)",
    ):
        ttgir = _module(
            f"%z = arith.constant dense<0.000000e+00> : {T} loc(#loc1)",
            f"%acc = tt.dot %a, %b, %z : {T} * {T} -> {T} loc(#loc1)",
            CVT,
            extra,
        )
        (c,) = _converts(ttgir, PTX, "/k/kern.py", PY)
        assert (c.src, c.dst, c.producer, c.shape, c.elem) == ("mma_v2", "blocked", "tt.dot", [64, 64], "f32")
        assert (c.shared_stores, c.shared_loads, c.barriers, c.stored_bytes) == (2, 1, 1, 32), extra
        assert c.scratch_bytes == 4096 and type(c.scratch_bytes) is int
        assert c.consumers == (["tt.atomic_cas"] if "atomic_cas" in extra else ["tt.atomic_rmw"] if extra else [])
        assert c.python is not None and c.python.text == "y = tl.max(tl.dot(a, b), 1)" and c.python.line == 5


SHARERS = {
    "tt.reduce": f'%r = "tt.reduce"(%c) <{{axis = 1 : i32}}> ({{\n    ^bb0(%x: f32, %y: f32):\n'
    f"      %m = arith.maxnumf %x, %y : f32 loc(#loc1)\n      tt.reduce.return %m : f32 loc(#loc1)\n"
    f"    }}) : ({B}) -> tensor<64xf32, #ttg.slice<{{dim = 1, parent = #blocked}}>> loc(#loc1)",
    "tt.scan": f'%r = "tt.scan"(%c) <{{axis = 1 : i32, reverse = false}}> ({{\n    ^bb0(%x: f32, %y: f32):\n'
    f"      %m = arith.addf %x, %y : f32 loc(#loc1)\n      tt.scan.return %m : f32 loc(#loc1)\n"
    f"    }}) : ({B}) -> {B} loc(#loc1)",
    "tt.histogram": "%r = tt.histogram %i : tensor<64xi32, #blocked> -> tensor<32xi32, #blocked> loc(#loc1)",
    "tt.gather": f"%r = tt.gather %c[%i] {{axis = 0 : i32}} : ({B}, tensor<64x64xi32, #blocked>) -> {B} loc(#loc1)",
    "ttg.local_alloc": f"%r = ttg.local_alloc %c : ({B}) -> !ttg.memdesc<64x64xf32, #shared, #smem> loc(#loc1)",
    "ttg.local_load": f"%r = ttg.local_load %s : !ttg.memdesc<64x64xf32, #shared, #smem> -> {B} loc(#loc1)",
    "ttg.local_store": f"ttg.local_store %c, %s : {B} -> !ttg.memdesc<64x64xf32, #shared, #smem, mutable> loc(#loc1)",
    "ttg.convert_layout": f"%r = ttg.convert_layout %c : {B} -> {T} loc(#loc1)",
}


@pytest.mark.parametrize("op", sorted(SHARERS))
def test_shared_traffic_of_a_shared_position_is_nobodys(op: str) -> None:
    """``tl.max(tl.dot(a, b), 1)`` puts a conversion and a reduction on one source position; so can a scan,
    histogram, gather, a shared buffer (``local_alloc``/``local_load``/``local_store``) or a second conversion. PTX
    ``.loc`` cannot tell whose stores are whose, so the conversion claims none (counts 0, scratch None), in either
    order of the two ops."""
    for ops in ((CVT, SHARERS[op]), (SHARERS[op], CVT)):
        ttgir = _module(f"%acc = tt.dot %a, %b, %z : {T} * {T} -> {T} loc(#loc1)", *ops)
        got = [c for c in _converts(ttgir, PTX, "/k/kern.py", PY) if c.src == "mma_v2"]
        assert len(got) == 1
        (c,) = got
        assert (c.shared_stores, c.shared_loads, c.barriers, c.stored_bytes, c.scratch_bytes) == (0, 0, 0, 0, None)
    # the same op on another line leaves the conversion its traffic
    alone = _module(CVT, SHARERS[op].replace("loc(#loc1)", "loc(#loc2)"))
    (c,) = [c for c in _converts(alone, PTX, "/k/kern.py", PY) if c.src == "mma_v2"]
    assert c.scratch_bytes == 4096


def test_conversion_facts_from_odd_but_possible_lines() -> None:
    """A conversion of a block argument (a loop-carried value: no producer op), one nobody uses, one with loads but
    no stores at its position (no scratch: nothing staged), one whose location is in another file (no Python line of
    this kernel), a module without ``ttg.num-warps`` (Triton's default 4 warps), a conversion line without a
    signature or operand (skipped or read as far as it goes, never an exception), and one without a location."""
    ttgir = _module(
        f"%c = ttg.convert_layout %arg5 : {T} -> {B} loc(#loc2)",
        f"%d = ttg.convert_layout %acc : {T} -> {B} loc(#loc3)",
        "%e = ttg.convert_layout %acc loc(#loc3)",
        f"%f = ttg.convert_layout : {T} -> {B} loc(#loc3)",
        f"%g = ttg.convert_layout %acc : {T} -> {B} loc(#loc1)",
        f"%h = ttg.convert_layout %acc : {T} -> {B}",
        module="module {",
    )
    c, d, f, g, h = _converts(ttgir, PTX, "/k/kern.py", PY)
    assert (c.producer, c.consumers, c.shared_loads, c.shared_stores, c.scratch_bytes) == ("", [], 1, 0, None)
    assert c.python is not None and c.python.text == "tl.store(p, y)"
    assert d.python is None and (d.src, d.dst) == ("mma_v2", "blocked")  # /other/helper.py:9 is not kern.py
    assert f.producer == "" and f.shape == [64, 64]
    assert g.scratch_bytes == 32 * 128 and g.stored_bytes == 32  # 4 warps by default
    # no location: no PTX traffic attributed, no Python line
    assert (h.python, h.shared_stores, h.shared_loads, h.barriers, h.scratch_bytes) == (None, 0, 0, 0, None)


# ------------------------------------------------------------------------------------------------ dots, odd lines

A_OP = "tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>"
B_OP = "tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>>"
TTIR_DOT = (
    "%acc = tt.dot %a, %b, %cst, inputPrecision = tf32 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32> "
    "loc(#loc1)"
)


def test_upcast_found_through_shared_memory_and_conversions() -> None:
    """The int8 A operand converted (``arith.sitofp``) and then staged: ``convert_layout`` → ``local_alloc`` →
    ``local_load`` → dot (3 ops between), or with a second conversion (4 ops between); B comes straight from a
    loop-carried block argument (no producer). Both reach the upcast; a cycle of conversions (an untrusted bundle)
    ends the walk."""
    blk = "tensor<64x32xf16, #blocked>"
    mem = "!ttg.memdesc<64x32xf16, #shared, #smem>"
    chain = [
        "%x = arith.sitofp %a_i8 : tensor<64x32xi8, #blocked> to tensor<64x32xf16, #blocked> loc(#loc1)",
        f"%y = ttg.convert_layout %x : {blk} -> {blk} loc(#loc1)",
        f"%y2 = ttg.convert_layout %y : {blk} -> {blk} loc(#loc1)",
        f"%s = ttg.local_alloc %y2 : ({blk}) -> {mem} loc(#loc1)",
        f"%w = ttg.local_load %s : {mem} -> {A_OP} loc(#loc1)",
        f"%acc = tt.dot %w, %arg7, %cst : {A_OP} * {B_OP} -> {T} loc(#loc1)",
    ]
    ttir = _module(TTIR_DOT)
    for ops in (chain, [chain[0], chain[1], chain[3].replace("%y2", "%y"), *chain[4:]]):
        (d,) = _dots(ttir, _module(*ops), "/k/kern.py", PY)
        assert (d.upcast, d.lowering, d.instr_shape, d.operands) == (["i8 → f16"], "mma_v2", [16, 8], ["registers"] * 2)
    # a third conversion (5 ops between): the walk stops after 4 ops and names no upcast
    five = [*chain[:3], f"%y3 = ttg.convert_layout %y2 : {blk} -> {blk} loc(#loc1)", chain[3].replace("%y2", "%y3")]
    (d,) = _dots(ttir, _module(*five, *chain[4:]), "/k/kern.py", PY)
    assert (d.upcast, d.lowering) == ([], "mma_v2")
    cycle = [
        f"%p = ttg.convert_layout %q : {blk} -> {A_OP} loc(#loc1)",
        f"%q = ttg.convert_layout %p : {A_OP} -> {blk} loc(#loc1)",
        f"%acc = tt.dot %p, %arg7, %cst : {A_OP} * {B_OP} -> {T} loc(#loc1)",
    ]
    (d,) = _dots(ttir, _module(*cycle), "/k/kern.py", PY)
    assert d.upcast == []


def test_shared_operand_without_source_ends_the_walk() -> None:
    """sm90: a ``wgmma`` operand read from an empty ``ttg.local_alloc`` (a pipelined buffer: no tensor operand) and
    an ``arith.extf`` with its signature cut off: no upcast, no exception."""
    mem = "!ttg.memdesc<64x32xf16, #shared, #smem, mutable>"
    ttgir = _module(
        f"%s = ttg.local_alloc : () -> {mem} loc(#loc1)",
        "%e = arith.extf %h loc(#loc1)",
        f"%acc = ttng.warp_group_dot %s, %e, %cst : {mem} * {mem} -> {T} loc(#loc1)",
    )
    (d,) = _dots(_module(TTIR_DOT), ttgir, "/k/kern.py", PY)
    assert (d.upcast, d.lowering, d.operands) == ([], "wgmma", ["shared", "shared"])


def test_dot_lines_without_signature_or_result() -> None:
    """A TTGIR dot without a type signature (no layout: no lowering, no instrShape), TTIR dots with a cut signature or
    without a result name, and one whose location is in another file: empty facts where the text says nothing."""
    ttir = _module(
        "%acc = tt.dot %a, %b, %cst loc(#loc1)",
        "%d = tt.dot %a, %b, %cst : tensor<64x32xf16> loc(#loc3)",
        "tt.dot %a, %b, %cst : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32> loc(#loc1)",
    )
    ttgir = _module("%acc = tt.dot %a, %b, %cst loc(#loc1)")
    d0, d1, d2 = _dots(ttir, ttgir, "/k/kern.py", PY)
    assert (d0.name, d0.shape, d0.rank, d0.lowering, d0.instr_shape, d0.operands) == ("acc", [], 0, "", [], [])
    assert d0.python is not None and d0.python.line == 5
    assert (d1.name, d1.shape, d1.rank, d1.a_type, d1.python, d1.ttgir) == ("d", [], 2, "f16", None, None)
    assert (d2.name, d2.shape, d2.rank) == ("", [64, 64, 32], 2)


def test_dot_types_of_cut_signatures_and_no_ttgir() -> None:
    """Each operand type a cut signature still names is read, the missing ones are "" (never a made-up type, never
    an exception): no types, one (A), two (A and B; no accumulator). A TTIR without its TTGIR (a bundle saved
    before that stage) has no lowering, no instrShape, no operand places and 0 warps."""
    ttir = _module(
        "%acc = tt.dot %a, %b, %cst loc(#loc1)",
        "%d = tt.dot %a, %b, %cst : tensor<64x32xf16> loc(#loc1)",
        "%e = tt.dot %a, %b, %cst : tensor<64x32xf16> * tensor<32x64xbf16> loc(#loc1)",
    )
    d0, d1, d2 = _dots(ttir, "", "/k/kern.py", PY)
    assert [(d.a_type, d.b_type, d.acc_type) for d in (d0, d1, d2)] == [
        ("", "", ""),
        ("f16", "", ""),
        ("f16", "bf16", ""),
    ]
    assert (d2.shape, d2.rank) == ([64, 64, 32], 2)
    for d in (d0, d1, d2):
        assert (d.lowering, d.instr_shape, d.operands, d.upcast, d.warps, d.ttgir) == ("", [], [], [], 0, None)


@pytest.mark.parametrize("order", ["chained", "separate"])
def test_dot_result_added_to_another_sum_is_not_chained(order: str) -> None:
    """``tl.dot(a, b, acc) + other``: Triton folds an ``arith.addf`` of a dot into the dot's accumulator only when
    that accumulator is zero, so this sum stays an ``arith.addf`` of the dot's result: the product is not accumulated
    in the MMA's own accumulator (``acc_chained`` False); a dot whose result only feeds the next dot (or a store) is
    chained. Both orders of the two dots in one function."""
    t = "tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>"
    chained = [f"%acc = tt.dot %a, %b, %c0 : {t} loc(#loc1)", f"%acc_1 = tt.dot %a, %b, %acc : {t} loc(#loc1)"]
    separate = [
        f"%p = tt.dot %a, %b, %c1 : {t} loc(#loc1)",
        "%s = arith.addf %other, %p : tensor<64x64xf32> loc(#loc1)",
    ]
    ops = chained + separate if order == "chained" else separate + chained
    facts = {d.name: d.acc_chained for d in _dots(_module(*ops), "", "/k/kern.py", PY)}
    assert facts == {"acc": True, "p": False}


# ------------------------------------------------------------------------------------------------ waits


def test_async_wait_tokens_of_this_iteration() -> None:
    """A wait is immediate only on a token committed earlier in the same loop body: a loop-carried token (block
    argument) or one committed before the loop is not; a token that is one result of a multi-result op of this
    iteration (``%both#1``) is. A wait with no ``num`` reads -1."""
    cp = "%cp = ttg.async_copy_global_to_local %ptrs, %buf : tensor<64x32x!tt.ptr<f16>, #blocked> -> <64x32xf16>"
    tok = "!ttg.async.token"
    ttgir = _module(
        "%t0 = ttg.async_commit_group tokens %c0",
        f"%r:2 = scf.for %i = %c0_i32 to %K step %c32_i32 iter_args(%tok = %t0) -> ({tok})  : i32 {{",
        "  %w0 = ttg.async_wait %tok {num = 1 : i32}",
        "  %w1 = ttg.async_wait %t0 {num = 0 : i32}",
        f"  {cp}",
        "  %g = ttg.async_commit_group tokens %cp",
        f"  %both:2 = scf.if %p -> ({tok}, {tok}) {{",
        f"    scf.yield %g, %g : {tok}, {tok}",
        "  } else {",
        f"    scf.yield %g, %g : {tok}, {tok}",
        "  }",
        "  %w2 = ttg.async_wait %both#1 {num = 0 : i32}",
        "  %w3 = ttg.async_wait %g {num = 2 : i32}",
        "  %w4 = ttg.async_wait %g",
        f"  scf.yield %g : {tok}",
        "}",
    )
    got = [(w.num, w.immediate, w.ref.text.split(" = ")[0]) for w in _async_waits(ttgir)]
    assert got == [(1, False, "%w0"), (0, False, "%w1"), (0, True, "%w2"), (2, True, "%w3"), (-1, True, "%w4")]


def test_blackwell_wait_names_the_exact_barrier() -> None:
    """The MMA's barrier and the wait's are compared as whole SSA names: ``%bars#1`` (result 1 of a multi-result
    op) is not ``%bars#0``. An MMA without a barrier operand (synchronous form) and a wait without an operand are no
    immediate pair, and the ring is the largest ``Nx1xi64`` barrier allocation."""
    mem = "!ttg.memdesc<64x32xf16, #shared, #smem>"
    acc = "!ttg.memdesc<64x64xf32, #tmem, #ttng.tensor_memory, mutable>"
    bar = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"
    mma = f"ttng.tc_gen5_mma %a, %b, %acc, %true, %true, BAR[%true] {{is_async}} : {mem}, {mem}, {acc}, {bar}"
    ttgir = _module(
        "%ring = ttg.local_alloc : () -> !ttg.memdesc<2x1xi64, #shared, #smem, mutable>",
        "%r:2 = scf.for %i = %c0_i32 to %K step %c32_i32 iter_args(%x = %c0_i32) -> (i32)  : i32 {",
        f"  %bars:2 = scf.if %p -> ({bar}, {bar}) {{",
        "  } else {",
        "  }",
        "  " + mma.replace("BAR", "%bars#1"),
        f"  ttng.wait_barrier %bars#1, %c0_i32 : {bar}",
        f"  ttng.wait_barrier %bars#0, %c0_i32 : {bar}",
        f"  ttng.tc_gen5_mma %a, %b, %acc, %true, %true : {mem}, {mem}, {acc}",
        "  ttng.wait_barrier",
        "  scf.yield %x : i32",
        "}",
    )
    got = [(w.immediate, w.ring, w.ref.text.split(",")[0], w.mma_ref.text.count("[")) for w in _mma_waits(ttgir)]
    assert got[:3] == [
        (True, 2, "ttng.wait_barrier %bars#1", 1),
        (False, 2, "ttng.wait_barrier %bars#0", 1),
        (False, 2, "ttng.wait_barrier", 1),
    ]
    assert all(not imm for imm, *_ in got[3:]) and len(got) == 6  # the barrier-less MMA pairs with no wait


# ------------------------------------------------------------------------------------------------ PTX


def test_shared_instructions_of_odd_ptx() -> None:
    """Lines an untrusted PTX may hold: a vector store with no type (8 registers read as 32-bit ones), an untyped ``ld.shared``, ``ld``/``bar`` with no
    qualifier at all (no shared access, no barrier), an ``ldmatrix`` with no ``.xN`` (read as the smallest, ``.x1``):
    counted or skipped, never an exception."""
    ptx = "\n".join(
        [
            "\t.loc\t1 7 3",
            "\tst.shared.v8 \t[%r1], {%r2, %r2, %r2, %r2, %r2, %r2, %r2, %r2};",
            "\tld.shared \t%r1, [%r2];",
            "\tld \t%r1, [%r2];",
            "\tbar;",
            "\tldmatrix.sync.aligned.m8n8.shared.b16 \t{%r1}, [%r5];",
            "\tbarrier.sync \t0;",
        ]
    )
    assert _ptx_shared_at(ptx) == {(7, 3): [("st", 32), ("ld", 4), ("ld", 4), ("bar", 0)]}


def test_region_ends_pair_each_region_op_with_its_closing_line() -> None:
    """A reduction whose combiner has an ``scf.if``/``else`` still pairs with its own ``})`` line; a closing line
    with nothing open (a cut text) pairs with nothing and raises nothing."""
    text = "\n".join(
        [
            '%r = "tt.reduce"(%c) <{axis = 1 : i32}> ({',
            "^bb0(%x: f32, %y: f32):",
            "  %m = scf.if %p -> (f32) {",
            "    scf.yield %x : f32",
            "  } else {",
            "    scf.yield %y : f32",
            "  }",
            "  tt.reduce.return %m : f32",
            "}) : (tensor<64x64xf32>) -> tensor<64xf32> loc(#loc1)",
        ]
    )
    assert _region_ends(text) == {1: "}) : (tensor<64x64xf32>) -> tensor<64xf32> loc(#loc1)"}
    assert _region_ends("}) : (tensor<64xf32>) -> f32 loc(#loc1)\n}") == {}


# ------------------------------------------------------------------------------------------------ transposing copies

KMM = str(Path(__file__).parent / "suites" / "truth_kmm.py")


@pytest.fixture(scope="module")
def kmm90(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    """``truth_kmm`` on sm90 (the variants ``tests/test_truth_findings.py`` compiles: one cached compile)."""
    b: Bundle = compile_suite(KMM + "::truth_kmm", ["ieee", "tf32", "tf32x3", "f16", "tf32_tn"], "sm90")
    return b


# the contiguous dimension of each 2-D layout alias: ``order[0]`` of a blocked or swizzled layout, for
# ``nvmma_shared`` 1 (the last dimension) or 0 with ``transposed = true``; ``#mma`` states none
KMM_DIMS = {
    "ieee": {"#blocked": 1, "#blocked1": 1, "#blocked2": 1, "#shared": 1},  # FMA: swizzled_shared, all row-major
    "tf32": {"#blocked": 1, "#blocked1": 1, "#shared": 1, "#shared1": 0},  # wgmma: B into a transposed layout
    "tf32_tn": {"#blocked": 0, "#blocked1": 0, "#blocked2": 1, "#shared": 1, "#shared1": 0},  # A, B column-major
}


@pytest.mark.parametrize("variant", sorted(KMM_DIMS))
def test_contiguous_dims_of_the_layouts_as_compiled(kmm90: Bundle, variant: str) -> None:
    """Each 2-D blocked, swizzled or nvmma shared layout with its contiguous dimension and its definition as the
    TTGIR header writes it (the ``#mma`` layout states none; ``#loc`` lines between the definitions are skipped)."""
    ttgir = kmm90.variants[variant].text("ttgir")
    dims = _contiguous_dims(ttgir)
    assert {k: d for k, (d, _) in dims.items()} == KMM_DIMS[variant]
    for alias, (_, text) in dims.items():
        m = re.search(rf"^{alias} = #ttg\.(.*)$", ttgir, re.M)
        assert m and text == m.group(1)
    assert ("nvidia_mma" in ttgir) == (variant != "ieee") and "#mma" not in dims


@pytest.mark.parametrize(
    ("variant", "name", "shape", "src", "dst", "shared"),
    [
        ("tf32", "y", [16, 64], 1, 0, "#shared1"),  # B row-major (N contiguous) into K-major shared memory
        ("tf32_tn", "x", [64, 16], 0, 1, "#shared"),  # A column-major (M contiguous) into K-major shared memory
    ],
)
def test_transposing_copies_are_the_operand_copies_that_turn(
    kmm90: Bundle, variant: str, name: str, shape: list[int], src: int, dst: int, shared: str
) -> None:
    """sm90 tf32 ``wgmma`` reads its 32-bit operands K-major from shared memory: the tile whose global addresses
    run along the other dimension is copied by ``cp.async`` into a layout contiguous along K, each copy op of it in
    the TTGIR (3 prologue copies at ``num_stages`` 4 and the loop's) is one fact; the other operand's copies keep
    their dimension and are none. ``ieee`` (FMA, swizzled shared memory along the loads) has none."""
    v = kmm90.variants[variant]
    ttgir = v.text("ttgir")
    lines = ttgir.splitlines()
    copies = [no for no, raw in enumerate(lines, 1) if "= ttg.async_copy_global_to_local" in raw]
    mine = [no for no in copies if f"-> <{'x'.join(map(str, shape))}xf32, {shared}," in lines[no - 1]]
    assert len(copies) == 8 and len(mine) == 4  # x and y, each 3 prologue copies and 1 in the loop
    out = _transposing_copies(ttgir, str(v.metadata.get("source_path", "")), v.text("python"))
    assert [c.ref.line for c in out] == mine
    definition = re.search(rf"^{shared} = #ttg\.(.*)$", ttgir, re.M)
    assert definition is not None
    py = v.text("python").splitlines()
    # ``if LAY == "tn"`` loads the tile first (column-major), its ``else`` branch second (row-major)
    loads = [no for no, t in enumerate(py, 1) if t.strip().startswith(f"{name} = tl.load(")]
    load = loads[0] if variant.endswith("_tn") else loads[1]
    for c in out:
        assert (c.name, c.shape, c.elem, c.src_dim, c.dst_dim) == (name, shape, "f32", src, dst)
        assert c.shared == definition.group(1)
        assert (c.ref.stage, c.ref.text) == ("ttgir", strip_loc(lines[c.ref.line - 1]).strip())
        assert c.python is not None and (c.python.stage, c.python.line) == ("python", load)
        assert c.python.text == py[load - 1].strip()
    assert extract_mech_facts(v).transposing_copies == out
    ieee = kmm90.variants["ieee"]
    assert "ttg.async_copy_global_to_local" in ieee.text("ttgir")
    assert extract_mech_facts(ieee).transposing_copies == []


def test_transposing_copies_of_odd_lines() -> None:
    """Copy lines the compiled kernels above do not hold, ahead of one that transposes (it is still found): a 3-D
    copy into a ``rank = 3`` ``nvmma_shared`` layout (Triton prints the rank only for rank ≠ 2; its contiguous
    dimension is not the 2-D rule's, so the layout has none here), a copy from a ``#ttg.linear`` register layout
    (no ``order``), a line cut before its signature, and a copy without a result (an untrusted bundle): each is
    skipped or gives an unnamed fact, never an exception."""
    header = [
        "#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>",
        "#blocked3 = #ttg.blocked<{sizePerThread = [1, 1, 8], threadsPerWarp = [1, 4, 8], warpsPerCTA = [1, 4, 1], "
        "order = [2, 1, 0]}>",
        "#linear = #ttg.linear<{register = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]], "
        "warp = [[8, 0], [16, 0]], block = []}>",
        "#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 32}>",
        "#shared1 = #ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = true, elementBitWidth = 32}>",
        "#shared3 = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16, rank = 3}>",
        "#smem = #ttg.shared_memory",
    ]
    dims = _contiguous_dims("\n".join(header))
    assert {k: d for k, (d, _) in dims.items()} == {"#blocked": 1, "#blocked3": 2, "#shared": 1, "#shared1": 0}
    cut = "#blocked9 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16]}>"  # cut before its order
    assert _contiguous_dims("\n".join([*header, cut])) == dims  # states no dimension: left out, no exception
    copy = "ttg.async_copy_global_to_local %p, %q mask %r : tensor<{}x!tt.ptr<{}>, {}> -> <{}x{}, {}, #smem, mutable>"
    ops = [
        "%a_1 = ttg.async_copy_global_to_local %p, %q mask %r",  # cut before its signature
        "%b_2 = " + copy.format("2x64x16", "f16", "#blocked3", "2x64x16", "f16", "#shared3"),  # 3-D, rank 3
        "%c_3 = " + copy.format("32x16", "f32", "#linear", "32x16", "f32", "#shared"),  # no order stated
        # transposes, at a line of the kernel's file; then in a helper's file (inlined from another module)
        "%y_4 = " + copy.format("16x64", "f32", "#blocked", "16x64", "f32", "#shared1") + " loc(#loc1)",
        copy.format("16x64", "f32", "#blocked", "16x64", "f32", "#shared1") + " loc(#loc2)",  # no result
        "%x_5 = " + copy.format("64x16", "f32", "#blocked", "64x16", "f32", "#shared"),  # keeps its dimension
    ]
    locs = ['#loc1 = loc("/k/kernel.py":2:13)', '#loc2 = loc("/k/helpers.py":3:9)']
    text = "\n".join(header + ["  " + o for o in ops] + locs)
    python = "def k(p):\n    y = tl.load(p)\n    z = y + 1\n"
    out = _transposing_copies(text, "/k/kernel.py", python)
    assert [(c.name, c.shape, c.elem, c.src_dim, c.dst_dim, c.ref.line) for c in out] == [
        ("y", [16, 64], "f32", 1, 0, 11),
        ("", [16, 64], "f32", 1, 0, 12),
    ]
    assert all(c.shared == header[4].split(" = #ttg.", 1)[1] for c in out)
    # the kernel's own line is quoted; a line of another file is not (line 3 of the kernel is another statement)
    assert [c.python for c in out] == [Ref("python", 2, "y = tl.load(p)"), None]


def test_pos_follows_at_most_40_location_references() -> None:
    """An op's position is found through at most 40 references (aliases, call sites, names, fused lists: a cycle in
    an untrusted bundle ends there): a file location read at the 40th lookup is found, one more hop gives None."""
    for hops, want in ((39, ("/k/kern.py", 3, 4)), (40, None)):
        table = {f"#loc{k}": f"#loc{k + 1}" for k in range(hops)}
        table[f"#loc{hops}"] = '"/k/kern.py":3:4'
        assert _pos("%x = arith.addf %a, %b : f32 loc(#loc0)", table) == want
