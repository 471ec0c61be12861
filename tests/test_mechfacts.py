"""The mechanism facts themselves (irdiff/diagnose/mechfacts.py), read from real compiles of
``tests/suites/diag_mech.py`` (sm80, sm90) and ``diag_loop.py`` (sm100): what each ``tt.dot`` was lowered to, the
atomics, the layout conversions and the shared memory PTX spends on them, the cache hints, the pipeline and
Blackwell MMA waits, fp64 work and the compiler's warnings. Every number asserted here is checked against the kernel:
tile shapes and types from the suite, instruction counts from the PTX (``tests/test_mechanisms.py`` tests the rules
that read these facts). Cheap: the session's cached compiles, a few ms of parsing per variant."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from irdiff.bundle import ArgSpec, Bundle, VariantResult
from irdiff.diagnose.facts import Ref, strip_loc
from irdiff.diagnose.mechfacts import (
    MechFacts,
    clear_memos,
    compiler_messages,
    extract_mech_facts,
    mma_instructions,
)


@pytest.fixture(autouse=True)
def _cold_memos() -> None:
    """Each test parses the texts itself (the op lines and location tables are memoized per text)."""
    clear_memos()


def _refs(f: MechFacts) -> list[Ref]:
    out: list[Ref] = []
    for d in f.dots:
        out += [d.ttir, *(r for r in (d.ttgir, d.python) if r)]
    for a in f.atomics:
        out += [a.ref, *(r for r in (a.python,) if r)]
    for c in f.converts:
        out += [c.ref, *(r for r in (c.python,) if r)]
    for h in f.hints:
        out += [h.ref, *(r for r in (h.python,) if r)]
    for m in f.mma_waits:
        out += [m.ref, m.mma_ref]
    out += [w.ref for w in f.async_waits] + [r for _, r in f.cp_async_waits] + f.compiler_messages
    out += [r for r in (f.f64_first, f.f64_python) if r]
    return out


def check_refs(v: VariantResult, f: MechFacts) -> None:
    """Every reference names the raw line it quotes (1-based, in that stage's file)."""
    for r in _refs(f):
        assert r.line is not None, r
        raw = v.text(r.stage).splitlines()[r.line - 1]
        if r.stage in ("ttir", "ttgir"):
            assert strip_loc(raw).strip() == r.text, r
        else:
            assert raw.strip()[:400] == r.text, r


def facts(b: Bundle, variant: str) -> MechFacts:
    v = b.variants[variant]
    f = extract_mech_facts(v)
    check_refs(v, f)
    return f


# ------------------------------------------------------------------------------------------------ dots


def test_fp32_dot_precision_and_lowering_sm80(mech80: Bundle) -> None:
    """``fdot``: a 64×32 by 32×64 fp32 product with one warp. tf32 and tf32x3 become ``mma.sync`` (an ``#mma`` v2
    result, instrShape 16×8), ieee becomes FMA (a ``#blocked`` result; TTIR prints no ``inputPrecision``)."""
    (tf32,) = facts(mech80, "tf32").dots
    assert (tf32.name, tf32.precision, tf32.a_type, tf32.b_type, tf32.acc_type) == ("acc", "tf32", "f32", "f32", "f32")
    assert tf32.shape == [64, 64, 32] and tf32.rank == 2 and tf32.warps == 1
    assert (tf32.lowering, tf32.instr_shape, tf32.operands) == ("mma_v2", [16, 8], ["registers", "registers"])
    assert tf32.max_imprecise_acc is None and tf32.upcast == [] and tf32.acc_chained
    assert "inputPrecision = tf32" in tf32.ttir.text and tf32.ttgir is not None and "#mma>" in tf32.ttgir.text
    assert tf32.python is not None and tf32.python.text.startswith("acc = tl.dot(")
    (x3,) = facts(mech80, "tf32x3").dots
    assert (x3.precision, x3.lowering, x3.instr_shape) == ("tf32x3", "mma_v2", [16, 8])
    (ieee,) = facts(mech80, "ieee").dots
    assert "inputPrecision" not in ieee.ttir.text  # ieee is the default: Triton prints nothing
    assert (ieee.precision, ieee.lowering, ieee.instr_shape, ieee.shape) == ("ieee", "fma", [], [64, 64, 32])
    assert ieee.ttgir is not None and re.search(r"-> tensor<64x64xf32, #blocked\d*>$", ieee.ttgir.text)


def test_fp16_dot_lowering_per_target(mech80: Bundle, mech90: Bundle, loop100: Bundle) -> None:
    """The same fp16 64×64×64 product (``dot_atomic``, 4 warps): ``mma.sync`` from registers on sm80, ``wgmma`` with
    both operands in shared memory on sm90 (instrShape 16×64×16); the sm100 K loop becomes ``tcgen05.mma``. fp16
    operands have no input precision."""
    (d80,) = facts(mech80, "atomic").dots
    (d90,) = facts(mech90, "atomic").dots
    for d in (d80, d90):
        assert (d.name, d.precision, d.a_type, d.acc_type, d.shape, d.warps) == (
            "part",
            "",
            "f16",
            "f32",
            [64, 64, 64],
            4,
        )
    assert (d80.lowering, d80.instr_shape, d80.operands) == ("mma_v2", [16, 8], ["registers", "registers"])
    assert (d90.lowering, d90.instr_shape, d90.operands) == ("wgmma", [16, 64, 16], ["shared", "shared"])
    assert d90.ttgir is not None and d90.ttgir.text.split(" = ")[1].startswith("ttng.warp_group_dot")
    for v in ("dot3", "dot1"):
        (d,) = facts(loop100, v).dots
        assert (d.lowering, d.operands, d.shape, d.a_type, d.acc_type) == (
            "tcgen05",
            ["shared", "shared"],
            [64, 64, 32],
            "f16",
            "f32",
        )
        assert d.ttgir is not None and d.ttgir.text.startswith("ttng.tc_gen5_mma")
        assert d.acc_chained  # ``acc = tl.dot(a, b, acc)``


def test_fp8_dots(mech80: Bundle, mech90: Bundle) -> None:
    """fp8e5 operands are converted to fp16 right before the sm80 ``mma.sync`` (TTGIR ``tt.fp_to_fp``); fp16 ones
    are not. On sm90 fp8 ``wgmma`` takes K = 32 per instruction, and ``max_num_imprecise_acc=32`` is kept while the
    default (2**30 in TTIR: never promote) reads as None."""
    (e5,) = facts(mech80, "e5_dot").dots
    assert (e5.a_type, e5.b_type, e5.upcast, e5.lowering) == ("f8E5M2", "f8E5M2", ["f8E5M2 → f16"], "mma_v2")
    assert facts(mech80, "f16_dot").dots[0].upcast == []
    (acc32,) = facts(mech90, "fp8_acc32").dots
    (default,) = facts(mech90, "fp8_default").dots
    assert "maxNumImpreciseAcc = 1073741824" in default.ttir.text and default.max_imprecise_acc is None
    assert acc32.max_imprecise_acc == 32 and acc32.a_type == "f8E4M3FN"
    assert acc32.instr_shape == default.instr_shape == [16, 64, 32] and acc32.lowering == "wgmma"


# ------------------------------------------------------------------------------------------------ atomics


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_atomics(request: pytest.FixtureRequest, target: str) -> None:
    """``tl.atomic_add`` of a 64×64 dot result: ``fadd``, the default ``acq_rel``/``gpu``, its value converted
    from the MMA layout; ``sem="relaxed"``; into bf16 (through ``arith.truncf``). Inline-asm ``red`` is no atomic op."""
    b: Bundle = request.getfixturevalue({"sm80": "mech80", "sm90": "mech90"}[target])
    (a,) = facts(b, "atomic").atomics
    assert (a.op, a.sem, a.scope, a.elem, a.shape, a.from_mma) == ("fadd", "acq_rel", "gpu", "f32", [64, 64], True)
    assert a.ref.text.split(" = ")[1].startswith("tt.atomic_rmw fadd, acq_rel, gpu,")
    assert a.python is not None and a.python.text == "tl.atomic_add(c_ptrs, part)"
    (r,) = facts(b, "relaxed").atomics
    assert (r.op, r.sem, r.scope, r.elem, r.from_mma) == ("fadd", "relaxed", "gpu", "f32", True)
    (h,) = facts(b, "bf16").atomics
    assert (h.sem, h.elem, h.shape, h.from_mma) == ("relaxed", "bf16", [64, 64], True)
    assert facts(b, "red_asm").atomics == []


# ------------------------------------------------------------------------------------------------ conversions


def _ptx_shared_at(v: VariantResult, line: int, col: int) -> str:
    """The shared-memory stores (``s``), loads (``l``) and barriers (``b``) the PTX emits under ``.loc N line col``
    directives, in order (one letter per instruction)."""
    out = []
    here = False
    for raw in v.text("ptx").splitlines():
        m = re.match(r"^\s*\.loc\s+\d+\s+(\d+)\s+(\d+)", raw)
        if m:
            here = (int(m[1]), int(m[2])) == (line, col)
            continue
        s = raw.strip()
        if not here or not s or s.startswith(("//", "$", ".")):
            continue
        op = s.split()[1] if s.startswith("@") else s.split()[0]
        if op.startswith(("st.shared", "stmatrix")):
            out.append("s")
        elif op.startswith(("ld.shared", "ldmatrix")):
            out.append("l")
        elif op.startswith(("bar.sync", "barrier.sync")):
            out.append("b")
    return "".join(out)


def _rounds(seq: str) -> int:
    """Blocks of stores, each followed by loads (barriers between them do not count)."""
    return len(re.findall(r"s+", seq.replace("b", "")))


def test_mma_to_blocked_conversion_staged_through_shared(mech80: Bundle) -> None:
    """``tl.store`` of the tf32 dot result (1 warp) converts ``#mma`` → ``#blocked``: the PTX at that source
    position stores and loads 512 bytes per thread through shared memory. 64×64 fp32 is 16 KB; 32 threads × 512 B in
    4 rounds of stores-then-loads stage 4 KB at a time."""
    f = facts(mech80, "tf32")
    (c,) = f.converts
    assert (c.src, c.dst, c.shape, c.elem, c.producer, c.consumers) == (
        "mma_v2",
        "blocked",
        [64, 64],
        "f32",
        "tt.dot",
        ["tt.store"],
    )
    assert (c.shared_stores, c.shared_loads, c.barriers, c.stored_bytes) == (32, 32, 1, 512)
    assert c.scratch_bytes == 512 * 32 // 4
    assert c.python is not None and c.python.text.startswith("tl.store(c_ptr")
    # the counts are the PTX's own at the op's source position
    seq = _ptx_shared_at(mech80.variants["tf32"], c.python.line or 0, _col(mech80, "tf32", c.ref))
    assert (seq.count("s"), seq.count("l"), seq.count("b"), _rounds(seq)) == (32, 32, 1, 4)
    # the tf32x3 sum is an arith.addf of three products
    assert facts(mech80, "tf32x3").converts[0].producer == "arith.addf"


def _col(b: Bundle, variant: str, ref: Ref) -> int:
    """The source column of a TTGIR op line, resolved through its ``#loc`` aliases."""
    text = b.variants[variant].text("ttgir")
    raw = text.splitlines()[(ref.line or 0) - 1]
    name = re.search(r"loc\((#loc\d*)\)\s*$", raw)
    assert name
    table = dict(re.findall(r"^(#loc\d*) = loc\((.*)\)$", text, re.M))
    body = table[name[1]]
    for _ in range(10):
        m = re.match(r'^"[^"]*":\d+:(\d+)', body)
        if m:
            return int(m[1])
        nm = re.search(r"(#loc\d*)", body)
        assert nm
        body = table[nm[1]]
    raise AssertionError(body)


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_atomic_on_mma_result_conversion(request: pytest.FixtureRequest, target: str) -> None:
    """The atomic's conversion (4 warps, 128 threads): 128 bytes per thread = the 16 KB of the 64×64 fp32 result,
    consumed by the atomic, staged in as many rounds as the PTX at its source position has blocks of stores (Triton
    3.9 uses one on sm80, 3.6 two). On sm90 the producer is the ``wgmma``; the bf16 value (``arith.truncf``) is half
    the bytes."""
    b: Bundle = request.getfixturevalue({"sm80": "mech80", "sm90": "mech90"}[target])
    for variant, elem, producer, size in (
        ("atomic", "f32", "tt.dot" if target == "sm80" else "ttng.warp_group_dot", 4),
        ("bf16", "bf16", "arith.truncf", 2),
    ):
        (c,) = facts(b, variant).converts
        assert (c.src, c.dst) == ("mma_v2" if target == "sm80" else "wgmma", "blocked")
        assert (c.elem, c.producer, c.consumers, c.shape) == (elem, producer, ["tt.atomic_rmw"], [64, 64])
        assert c.stored_bytes * 128 == 64 * 64 * size
        assert c.python is not None and c.python.line is not None
        seq = _ptx_shared_at(b.variants[variant], c.python.line, _col(b, variant, c.ref))
        assert (
            (c.shared_stores, c.shared_loads, c.barriers)
            == (seq.count("s"), seq.count("l"), seq.count("b"))
            != (0, 0, 0)
        )
        assert c.scratch_bytes == c.stored_bytes * 128 // _rounds(seq)
    assert facts(b, "red_asm").converts == []  # the asm reads the MMA layout as it is


def test_register_conversions_have_no_scratch(mech80: Bundle) -> None:
    """The FMA dot converts its loaded B operand to ``#ttg.dot_op`` and its ``#blocked`` result to another blocked
    layout, both in registers: no shared traffic, no scratch."""
    cs = facts(mech80, "ieee").converts
    assert [(c.src, c.dst, c.producer, c.consumers) for c in cs] == [
        ("blocked", "dot_op", "tt.load", ["tt.dot"]),
        ("blocked", "blocked", "tt.dot", ["tt.store"]),
    ]
    assert cs[0].shape == [32, 64]
    for c in cs:
        assert (c.shared_stores, c.shared_loads, c.barriers, c.stored_bytes, c.scratch_bytes) == (0, 0, 0, 0, None)


def test_loop_result_and_tmem_conversions(mech80: Bundle, loop100: Bundle) -> None:
    """A K loop's accumulator leaves the loop as an ``scf.for`` result (``%acc#0``): its conversion's producer is the
    loop. On sm100 the tensor-memory load gives a ``#linear`` layout, truncated to fp16 before the store."""
    (k,) = facts(mech80, "kloop2").converts
    assert (k.producer, k.src, k.consumers, k.scratch_bytes) == ("scf.for", "mma_v2", ["tt.store"], 8192)
    (t,) = facts(loop100, "dot3").converts
    assert (t.src, t.dst, t.elem, t.producer, t.stored_bytes, t.scratch_bytes) == (
        "linear",
        "blocked",
        "f16",
        "arith.truncf",
        64,
        2048,
    )


# ------------------------------------------------------------------------------------------------ hints


def test_cache_hints(mech80: Bundle) -> None:
    """``eviction_policy="evict_first"`` on the load and ``cache_modifier=".cs"`` on the store, each quoted with its
    Python line, in both releases' TTIR spellings; the defaults (``none``, ``evict_normal``) Triton 3.9 prints in the
    same ``cachePolicy`` are no hint."""
    hs = facts(mech80, "hints").hints
    assert [(h.kind, h.value, h.op) for h in hs] == [
        ("eviction_policy", "evict_first", "tt.load"),
        ("cache_modifier", "cs", "tt.store"),
    ]
    assert hs[0].python is not None and 'eviction_policy="evict_first"' in hs[0].python.text
    assert hs[1].python is not None and 'cache_modifier=".cs"' in hs[1].python.text
    assert all(h.value in h.ref.text for h in hs)
    if "cachePolicy" in hs[0].ref.text:  # Triton 3.9 prints both attributes on every access, defaults included
        assert "cache_modifier = none" in hs[0].ref.text and "eviction_policy = evict_normal" in hs[1].ref.text
    else:  # Triton 3.6: only what the kernel set, camelCase
        assert "evictionPolicy = evict_first" in hs[0].ref.text and "cacheModifier = cs" in hs[1].ref.text
    assert facts(mech80, "nohints").hints == []


# ------------------------------------------------------------------------------------------------ waits


def _loop_waits(ttgir: str) -> list[tuple[int, bool]]:
    """``(num, immediate)`` of each ``ttg.async_wait`` in the (single, innermost) ``scf.for`` body, read line by line:
    immediate when a token it waits on is defined earlier in the same loop body."""
    lines = ttgir.splitlines()
    start = next(i for i, ln in enumerate(lines) if " scf.for " in ln)
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(" " * indent + "}"))
    out: list[tuple[int, bool]] = []
    defined: set[str] = set()
    for ln in lines[start + 1 : end]:
        m = re.match(r"\s*(%[\w.#]+)(?::\d+)? = ", ln)
        if "ttg.async_wait" in ln:
            tokens = re.findall(r"%[\w.#]+", ln.split("ttg.async_wait", 1)[1].split("{", 1)[0])
            out.append((int(re.search(r"num = (\d+)", ln)[1]), any(t in defined for t in tokens)))  # type: ignore[index]
        if m:
            defined.add(m[1])
    return out


def test_async_waits_and_cp_async_depths(mech80: Bundle) -> None:
    """``num_stages=2`` leaves no copy group in flight (``ttg.async_wait {num = 0}``), ``num_stages=4`` leaves 4;
    each wait is "immediate" exactly when it waits on a token committed earlier in the same iteration (Triton 3.9's
    two-stage loop does, 3.6's waits on loop-carried tokens). The PTX ``cp.async.wait_group`` depths are read in
    order."""
    for variant, depth in (("kloop2", 0), ("kloop4", 4)):
        f = facts(mech80, variant)
        ttgir = mech80.variants[variant].text("ttgir")
        waits = [(w.num, w.immediate) for w in f.async_waits]
        assert waits == _loop_waits(ttgir) and waits and {n for n, _ in waits} == {depth}
        assert all(w.ref.text.split(" = ")[1].startswith("ttg.async_wait") for w in f.async_waits)
        ptx = mech80.variants[variant].text("ptx")
        assert [n for n, _ in f.cp_async_waits] == [
            int(m) for m in re.findall(r"^\s*cp\.async\.wait_group\s+(\d+);", ptx, re.M)
        ]
        assert f.cp_async_waits[0][0] == depth and f.cp_async_waits[-1][0] == 0  # the epilogue drains all
    assert facts(mech80, "tf32").async_waits == [] and facts(mech80, "tf32").cp_async_waits == []


def test_blackwell_mma_waits(loop100: Bundle) -> None:
    """sm100 K loop: with ``num_stages=1`` the loop waits on the barrier its own ``tc_gen5_mma`` commits to (one MMA
    barrier); with 3 stages a ring of 2 barriers lets the next MMA be issued first."""
    (w1,) = facts(loop100, "dot1").mma_waits
    assert w1.immediate and w1.ring == 1
    assert w1.ref.text.startswith("ttng.wait_barrier") and w1.mma_ref.text.startswith("ttng.tc_gen5_mma")
    waits3 = facts(loop100, "dot3").mma_waits
    assert waits3 and all(not w.immediate and w.ring == 2 for w in waits3)
    assert facts(loop100, "dot3").async_waits[0].num == 2


# ------------------------------------------------------------------------------------------------ fp64, messages


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_fp64_work(request: pytest.FixtureRequest, target: str) -> None:
    """``eps: tl.float64``: five TTIR ops make f64 tensors (the ``arith.extf`` of x, the splat of eps, the multiply,
    the add, the truncation is f32 again), the first quoted with its Python line; the fp32 variant has none."""
    b: Bundle = request.getfixturevalue({"sm80": "mech80", "sm90": "mech90"}[target])
    f = facts(b, "eps64")
    ttir = b.variants["eps64"].text("ttir")
    made = [
        ln
        for ln in ttir.splitlines()
        if " = " in ln and "arith.constant" not in ln and re.search(r"xf64>|\bf64\b", strip_loc(ln).rsplit(":", 1)[-1])
    ]
    assert f.f64_ttir == len(made) == 5 and f.f64_tensor == 5
    assert f.f64_first is not None and f.f64_first.text.startswith("%") and "arith.extf" in f.f64_first.text
    assert f.f64_python is not None and f.f64_python.text == "tl.store(y_ptr + offs, x * eps + 1.0, mask=offs < N)"
    assert f.f64_args == ["eps"]
    e32 = facts(b, "eps32")
    assert (e32.f64_ttir, e32.f64_tensor, e32.f64_first, e32.f64_python, e32.f64_args) == (0, 0, None, None, [])


def test_facts_of_a_saved_variant_with_cut_lines(tmp_path: Path) -> None:
    """A saved variant whose texts an untrusted bundle may hold: a TTIR op line cut before its type (no fp64 read
    from it, no exception) next to an fp64 add, and a PTX ``cp.async.wait_group`` cut before its depth (depth 0,
    as PTX's ``wait_group 0``: wait for all); parameters typed ``fp64`` (Triton's signature) or ``f64`` (MLIR's
    spelling) are fp64 arguments, a pointer to fp64 is not."""
    (tmp_path / "k.ttir").write_text(
        "module {\n"
        "  tt.func public @k(%p: !tt.ptr<f64>, %a: f64) {\n"
        "    %x = tt.get_program_id x\n"
        "    %y = arith.addf %a, %a : f64\n"
        "    tt.return\n"
        "  }\n"
        "}\n"
    )
    (tmp_path / "k.ptx").write_text("\tcp.async.wait_group \t2;\n\tcp.async.wait_group;\n")
    spec = [ArgSpec("p", 0, "*fp64"), ArgSpec("a", 1, "fp64"), ArgSpec("b", 2, "f64")]
    v = VariantResult("v", directory=str(tmp_path), stages={"ttir": "k.ttir", "ptx": "k.ptx"}, specialization=spec)
    f = extract_mech_facts(v)
    assert (f.f64_ttir, f.f64_tensor, f.f64_args) == (1, 0, ["a", "b"])
    assert f.f64_first == Ref("ttir", 4, "%y = arith.addf %a, %a : f64")
    assert [(n, r.line) for n, r in f.cp_async_waits] == [(2, 1), (0, 2)]


def test_compiler_warning(mech80: Bundle) -> None:
    """``tl.where`` on an int32 mask: Python's UserWarning is quoted (its file:line prefix included), not the
    ``warnings.warn(`` source line under it, nor the ptxas ``-v`` report or the ``[pass]`` debug lines around it."""
    (m,) = facts(mech80, "where_int").compiler_messages
    assert "UserWarning: tl.where with a non-boolean condition is deprecated" in m.text and m.stage == "compile"
    assert facts(mech80, "where_bool").compiler_messages == []


def test_compiler_messages_filter() -> None:
    """The log lines a compile prints (ptxas ``-v``, pass debug, Python warnings): only warnings and remarks count."""
    log = "\n".join(
        [
            "ptxas info    : Used 16 registers, used 0 barriers, 392 bytes cmem[0]",
            "ptxas info    : Compiling entry function 'k' for 'sm_80' warning",  # never a message: the -v report
            "",
            "/x/semantic.py:1759: UserWarning: tl.where with a non-boolean condition is deprecated",
            "  warnings.warn(",
            "[tritongpu-coalesce]: Considering op: %9 = tt.load %8 warning",
            "ptxas warning : Registers are spilled to local memory in function 'k', 16 bytes spill stores",
            "  remark: loop not pipelined",
            "TRITON_DEFAULT_FP_FUSION is not set: warning printed once per compile",
            "Warning: deprecated option",
            "warnings are off",  # no word "warning" on its own
            "x" * 500 + " warning",
        ]
    )
    got = compiler_messages(log)
    assert [r.line for r in got] == [4, 7, 8, 10, 12]
    assert got[0].text == "/x/semantic.py:1759: UserWarning: tl.where with a non-boolean condition is deprecated"
    assert got[2].text == "remark: loop not pipelined" and len(got[4].text) == 400
    assert all(r.stage == "compile" for r in got)
    assert compiler_messages("") == []


def test_mma_instructions() -> None:
    """Matrix instructions per lowering from PTX counts; a packed ``fma.f32x2`` is two fp32 FMAs."""
    counts = {"ptx": {"fma.f32": 10, "fma.f32x2": 3, "mma.sync": 4, "wgmma": 5, "tcgen05.mma": 6}, "sass": {"HMMA": 9}}
    assert mma_instructions(counts) == {"fma.f32": 16, "mma.sync": 4, "wgmma": 5, "tcgen05.mma": 6}
    assert mma_instructions({}) == {"fma.f32": 0, "mma.sync": 0, "wgmma": 0, "tcgen05.mma": 0}


def test_warp_specialization_absent(mech80: Bundle, loop100: Bundle) -> None:
    assert not facts(mech80, "kloop4").warp_specialized and not facts(loop100, "dot3").warp_specialized


# ------------------------------------------------------------------------------------------------ helpers, real IR text

# Module headers and op lines copied from the compiles above (Triton 3.9.0: tf32 on sm80, atomic on sm90, dot3 on
# sm100), trimmed to the layouts they define.
HEADER = """\
#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>
#mma1 = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#linear = #ttg.linear<{register = [[0, 1], [0, 2]], lane = [[1, 0], [2, 0]], warp = [[16, 0], [32, 0]], block = []}>
#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#loc = loc("/work/wt/mut4/tests/suites/diag_mech.py":37:1)
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 64, blockN = 64, colStride = 1>
"""
WGMMA = (
    "%part = ttng.warp_group_dot %a_19, %b_24, %cst_2 {inputPrecision = 0 : i32} : !ttg.memdesc<64x64xf16, #shared, "
    "#smem> * !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf32, #mma> loc(#loc20)"
)


def test_layout_aliases_and_kinds() -> None:
    from irdiff.diagnose.mechfacts import _aliases, _layout_kind

    al = _aliases(HEADER)
    assert al == {
        "#blocked": "blocked",
        "#mma": "mma_v2",
        "#mma1": "wgmma",
        "#linear": "linear",
        "#shared": "swizzled_shared",
        "#tmem": "tmem",
    }  # ``#smem = #ttg.shared_memory`` has no ``<...>``; ``#loc`` is no layout
    assert _aliases(HEADER.replace("versionMajor = 2", "versionMajor = 5"))["#mma"] == "tcgen05"
    assert _aliases(HEADER.replace("versionMajor = 2", "versionMajor = 4"))["#mma"] == "mma"
    # encodings printed inline (a slice of an aliased parent always is; the others when not aliased)
    assert _layout_kind("#ttg.slice<{dim = 1, parent = #blocked}>", al) == "slice"
    assert _layout_kind(" #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 1}>", al) == "dot_op"
    assert _layout_kind("#ttg.linear<{register = [[0, 1]], lane = [], warp = [], block = []}>", al) == "linear"
    assert _layout_kind("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8]}>", al) == "blocked"
    assert [_layout_kind(x, al) for x in ("#mma", "#mma1", "#linear", "#tmem", "#blocked")] == [
        "mma_v2",
        "wgmma",
        "linear",
        "tmem",
        "blocked",
    ]
    assert _layout_kind("#shared1", al) == "shared1" and _layout_kind("", al) == ""  # unknown alias: its name


def test_type_signature_helpers() -> None:
    from irdiff.diagnose.mechfacts import _shape_elem, _stem, _types

    types = _types(WGMMA)
    assert types == [
        "!ttg.memdesc<64x64xf16, #shared, #smem>",
        "!ttg.memdesc<64x64xf16, #shared, #smem>",
        "tensor<64x64xf32, #mma>",
    ]
    assert _shape_elem(types[0]) == ([64, 64], "f16", "#shared, #smem")
    assert _shape_elem(types[2]) == ([64, 64], "f32", "#mma")
    assert _shape_elem("tensor<f32>") == ([], "f32", "") and _shape_elem("i32") == ([], "", "")
    nested = "%6 = ttg.convert_layout %x : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64x1xi32>"
    assert _types(nested) == ["tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>", "tensor<64x1xi32>"]
    assert _types("tt.return") == [] and _types("%x = arith.addi %a, %b : i32") == []
    names = ("%acc_28", "%part", "%a_ptrs#1", "%12", "%arg3", "%cst_2", "%c0_i32", "%true", "%", "%b", "%X_ptr_3")
    assert [_stem(s) for s in names] == [
        "acc",
        "part",
        "a_ptrs",
        "",
        "",
        "",
        "",
        "",
        "",
        "b",
        "X_ptr",
    ]


def test_operands_and_source_positions() -> None:
    """Operands of real op lines (results, the op name, attribute dicts and the type signature left out) and the
    kernel position of an op through Triton's ``#loc`` aliases (name hints, call sites, fused locations)."""
    from irdiff.diagnose.mechfacts import _Line, _operands, _pos

    def line(text: str, op: str, results: list[str]) -> _Line:
        return _Line(1, text, text, op, results, None, False)

    conv = "%6 = ttg.convert_layout %acc_28 : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked1>"
    assert _operands(line(conv, "ttg.convert_layout", ["%6"])) == ["%acc_28"]
    loop = "%acc_37:6 = scf.for %acc_39 = %c0_i32 to %K step %c32_i32 iter_args(%arg5 = %cst) -> (tensor<64xf32>)"
    assert _operands(line(loop, "scf.for", ["%acc_37"])) == ["%acc_39", "%c0_i32", "%K", "%c32_i32", "%arg5", "%cst"]
    store = "tt.store %1, %2, %x_4 cacheModifier = cs : tensor<1024x!tt.ptr<f32>>"
    assert _operands(line(store, "tt.store", [])) == ["%1", "%2", "%x_4"]
    wait = "%acc_62 = ttg.async_wait %acc_49, %acc_50 {num = 0 : i32}"
    assert _operands(line(wait, "ttg.async_wait", ["%acc_62"])) == ["%acc_49", "%acc_50"]
    table = {
        "#loc": '"/k/diag_mech.py":37:1',
        "#loc2": '"/k/diag_mech.py":41:23',
        "#loc13": '"acc"(#loc2)',
        "#loc20": "callsite(#loc13 at #loc)",
        "#loc21": "fused[#loc20, #loc]",
        "#loc22": "#loc21",
    }
    # the file comes too (the PTX ``.loc`` of another file may hold the same line and column)
    assert _pos(conv + " loc(#loc13)", table) == ("/k/diag_mech.py", 41, 23)
    assert _pos(conv + " loc(#loc22)", table) == ("/k/diag_mech.py", 41, 23)  # alias → fused → callsite → name → …
    assert _pos(conv + " loc(#loc)", table) == ("/k/diag_mech.py", 37, 1)
    assert _pos(conv, table) is None and _pos(conv + " loc(#loc99)", table) is None
    assert _pos(conv + " loc(#loc30)", {"#loc30": "unknown(#loc)"}) is None
    assert _pos(conv + " loc(#loc1)", {"#loc1": "#loc1"}) is None  # a cycle ends after the step bound


def test_shared_memory_instructions_per_source_position() -> None:
    """PTX shared-memory traffic per ``.loc`` position, as ptxas input spells it: vector widths and element bits in
    bytes, ``stmatrix``/``ldmatrix`` (4 bytes per 8x8 matrix a thread holds, ``.x4``/``.x2``), CTA barriers in both
    spellings, and neither a warp barrier nor a global load."""
    from irdiff.diagnose.mechfacts import _ptx_shared_at

    ptx = "\n".join(
        [
            ".visible .entry k(",
            ")",
            "{",
            "\tst.shared.b32 \t[%r1], %r2;",  # before any .loc: no source position, not counted
            "\t.loc\t1 44 23",
            "\tst.shared.v2.b32 \t[%r5], {%r1, %r2};",
            "\tbar.sync \t0;",
            "\tld.shared.v4.b32 \t{%r6, %r7, %r8, %r9}, [%r10];",
            "\tstmatrix.sync.aligned.m8n8.x4.shared.b16 \t[%r11], {%r12, %r13, %r14, %r15};",
            "\tldmatrix.sync.aligned.m8n8.x2.shared.b16 \t{%r1, %r2}, [%r5];",
            "\tbarrier.cta.sync.aligned \t0;",
            "\t.loc\t1 45 7",
            "\tst.shared.u8 \t[%r5], %rs1;",
            "\tld.global.b32 \t%r1, [%rd1];",
            "\tbar.warp.sync \t-1;",
            "}",
        ]
    )
    got = _ptx_shared_at(ptx)
    assert got == {
        (44, 23): [("st", 8), ("bar", 0), ("ld", 16), ("st", 16), ("ld", 8), ("bar", 0)],
        (45, 7): [("st", 1)],
    }
    assert all(type(n) is int for seq in got.values() for _, n in seq)  # whole bytes, never 8.0


def test_pointer_tensor_conversion_keeps_its_layouts(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """A ``ttg.convert_layout`` of a tensor of pointers (``tensor<256x!tt.ptr<i32>, #blocked>``: the histogram's
    bucket addresses in tests/suites/rule_mech.py ``tally``, sm80) keeps its shape, element and both layouts, and
    its staging through shared memory (before, the pointer element type failed the type pattern: empty layouts, so
    layout.convert-shared said "converts ... from  to  through shared memory")."""
    from irdiff.diagnose.mechfacts import _shape_elem

    assert _shape_elem("tensor<256x!tt.ptr<i32>, #blocked>") == ([256], "!tt.ptr<i32>", "#blocked")
    assert _shape_elem("tensor<64x!tt.ptr<f16>>") == ([64], "!tt.ptr<f16>", "")
    assert _shape_elem("!tt.ptr<f16>") == ([], "", "")
    b = compile_suite(str(Path(__file__).parent / "suites" / "rule_mech.py"), ["acquire", "relaxed"], "sm80")
    for variant in ("acquire", "relaxed"):
        f = facts(b, variant)
        ptrs = [c for c in f.converts if c.elem.startswith("!tt.ptr<")]
        assert ptrs, [(c.elem, c.ref.text) for c in f.converts]
        for c in ptrs:
            assert "!tt.ptr<" in c.ref.text and c.shape == [256] and c.src == c.dst == "blocked", c
        assert any(c.shared_stores and c.shared_loads for c in ptrs)


def test_fp64_read_from_the_result_type_and_copies_quoted_in_the_kernels_file_only(tmp_path: Path) -> None:
    """Through :func:`extract_mech_facts` on a saved variant: an op whose attribute is typed ``f64`` but whose result
    is ``f32`` is no fp64 work (the result type is the text after the LAST ``:``); of two transposing ``cp.async``
    copies, the one at a line of the kernel's file quotes that line, the one inlined from a helper's file
    (``/k/helpers.py`` line 2) quotes none, though the kernel has a line 2 (the variant's ``source_path`` is used)."""
    (tmp_path / "k.ttir").write_text(
        "module {\n"
        "  tt.func public @k(%a: f32) {\n"
        "    %y = arith.addf %a, %a {irdiff.note = 1.0 : f64} : f32\n"
        "    %z = arith.addf %a, %a : f64\n"
        "    tt.return\n"
        "  }\n"
        "}\n"
    )
    copy = (
        "ttg.async_copy_global_to_local %p, %q : tensor<16x64x!tt.ptr<f32>, #blocked> -> <16x64xf32, #shared1, #smem>"
    )
    (tmp_path / "k.ttgir").write_text(
        "#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], "
        "order = [1, 0]}>\n"
        "#shared1 = #ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = true, elementBitWidth = 32}>\n"
        "#smem = #ttg.shared_memory\n"
        f"    %y_1 = {copy} loc(#loc1)\n"
        f"    %y_2 = {copy} loc(#loc2)\n"
        '#loc1 = loc("/k/kernel.py":2:13)\n'
        '#loc2 = loc("/k/helpers.py":2:9)\n'
    )
    (tmp_path / "k.py").write_text("def k(p):\n    y = tl.load(p)\n")
    stages = {"ttir": "k.ttir", "ttgir": "k.ttgir", "python": "k.py"}
    v = VariantResult("v", directory=str(tmp_path), stages=stages, metadata={"source_path": "/k/kernel.py"})
    f = extract_mech_facts(v)
    assert (f.f64_ttir, f.f64_first) == (1, Ref("ttir", 4, "%z = arith.addf %a, %a : f64"))
    assert [(c.ref.line, c.python) for c in f.transposing_copies] == [
        (4, Ref("python", 2, "y = tl.load(p)")),
        (5, None),
    ]
