"""Built-in suites beyond ``matmul``: each variant pair shows its effect on real compiles (no GPU, no mocks).

- ``persistent-matmul`` (seed 001): flattening the persistent tile loop leaves B un-pipelined.
- ``rmsnorm``: ``do_not_specialize`` on pointers and strides turns 16-byte loads into 2-byte loads.
- ``permute``: an int64 program id makes the index math 64-bit, with division subroutine calls in SASS.
- ``softmax``: ``num_stages=4`` on the row loop brings ``cp.async`` prefetch and a shared-memory ring.

Facts asserted here hold on Triton 3.6 and 3.9 for sm80 and sm90 (checked with both virtual environments).
Also: ``irdiff list``, the ``Derived`` constexpr hook, grids, byte counts and the torch references.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from click.testing import CliRunner

from irdiff.bundle import Bundle, VariantResult
from irdiff.cli import cli
from irdiff.suite import Derived, Suite, SuiteError, Tensor, by_target, load_suite, resolve_values

ASYNC_COPY = re.compile(r"ttg\.async_copy_global_to_local\b[^\n]*?: (tensor<[^>]*>)")
TOO_SMALL = "is too small for pipelining"


def count(pattern: str, text: str) -> int:
    return len(re.findall(pattern, text))


def spec(variant: VariantResult) -> dict[str, Any]:
    return {a.name: a for a in variant.specialization}


def sass_instructions(variant: VariantResult) -> int:
    return sum(1 for line in variant.text("sass").splitlines() if line.rstrip().endswith(";"))


def compiled_ok(bundle: Bundle, *names: str) -> list[VariantResult]:
    out = [bundle.variants[n] for n in names]
    for v in out:
        assert v.error is None, f"{v.name}: {v.error}"
    return out


# --- persistent-matmul (seed 001) ---------------------------------------------------------------------------


@pytest.mark.parametrize("target, num_sms", [("sm80", 108), ("sm90", 132)])
def test_persistent_matmul_pipelines_one_operand(compile_suite, target: str, num_sms: int) -> None:  # type: ignore[no-untyped-def]
    bundle = compile_suite("persistent-matmul", ["tiled", "persistent", "persistent-noflatten"], target)
    tiled, persistent, noflat = compiled_ok(bundle, "tiled", "persistent", "persistent-noflatten")

    # NUM_SMS is resolved per target by the Derived hook and shows up in the saved config and stage 0.
    assert persistent.config["NUM_SMS"] == noflat.config["NUM_SMS"] == num_sms
    assert spec(persistent)["NUM_SMS"].constexpr == str(num_sms)
    assert "NUM_SMS" not in tiled.config
    assert "tt.flatten" in persistent.text("ttir") and "tt.flatten" not in noflat.text("ttir")

    # TTGIR: tiled and the nested control copy both operands asynchronously (A 128x64, B 64x256; 3 each: two
    # prologue stages and one in the loop); the flattened kernel copies only A.
    copies = {v.name: ASYNC_COPY.findall(v.text("ttgir")) for v in (tiled, persistent, noflat)}
    assert len(copies["tiled"]) == 6 and len(copies["persistent-noflatten"]) == 6, copies
    assert len(copies["persistent"]) == 3, copies
    assert all(t.startswith("tensor<128x64x") for t in copies["persistent"]), copies["persistent"]
    assert sum(t.startswith("tensor<64x256x") for t in copies["tiled"]) == 3

    # The pipeliner's own log names the B load (64x256) as too small; nothing is rejected in the others.
    rejected = [ln for ln in persistent.text("llvm_debug").splitlines() if TOO_SMALL in ln]
    assert len(rejected) == 1 and "tensor<64x256x!tt.ptr<f16>" in rejected[0], rejected
    assert TOO_SMALL not in tiled.text("llvm_debug") and TOO_SMALL not in noflat.text("llvm_debug")
    assert "has width 128" in persistent.text("llvm_debug")

    # PTX: 12 cp.async (A: 4 per stage x 3) against 36 (A and B); B is staged through registers instead.
    cp_async = r"\bcp\.async\.cg\.shared\.global\b"
    assert count(cp_async, persistent.text("ptx")) == 12
    assert count(cp_async, tiled.text("ptx")) == count(cp_async, noflat.text("ptx")) == 36
    assert count(r"\bld\.global\.v4\.b32\b", persistent.text("ptx")) > 0
    assert count(r"\bld\.global\.v4\.b32\b", tiled.text("ptx")) == 0

    # Shared memory: only A's ring in the flattened kernel.
    shared = {v.name: v.resources.shared_bytes or 0 for v in (tiled, persistent, noflat)}
    assert shared["persistent"] < shared["tiled"] == shared["persistent-noflatten"], shared

    if target == "sm90":
        # wgmma: the flattened loop waits for every warp-group dot (pendings 0); the others keep one in flight.
        assert "pendings = 1" not in persistent.text("ttgir")
        assert "pendings = 1" in tiled.text("ttgir") and "pendings = 1" in noflat.text("ttgir")


# --- rmsnorm ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_rmsnorm_do_not_specialize_loses_vector_loads(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    bundle = compile_suite("rmsnorm", ["specialized", "dns"], target)
    plain, dns = compiled_ok(bundle, "specialized", "dns")
    sp, sd = spec(plain), spec(dns)
    for name in ("x_ptr", "w_ptr", "y_ptr"):
        assert sp[name].summary() == "*bf16 div16", sp[name]
        assert sd[name].type == "*bf16" and sd[name].divisibility is None, sd[name]
        assert sd[name].do_not_specialize_on_alignment and "do_not_specialize_on_alignment" in sd[name].reason
    for name in ("stride_x_row", "stride_y_row"):
        assert sp[name].summary() == "i32 div16", sp[name]
        assert sd[name].type == "i32" and sd[name].divisibility is None, sd[name]
        assert sd[name].do_not_specialize and "do_not_specialize" in sd[name].reason
    assert sp["N"].summary() == sd["N"].summary() == "i32 div16"  # not listed: still specialized
    assert sp["BLOCK_N"].constexpr == "4096"  # Derived from the shape

    # 4096 bf16 per row, 256 threads: 16 elements of x and 16 of w per thread = 2 + 2 16-byte loads, or 32 scalars.
    p_ptx, d_ptx = plain.text("ptx"), dns.text("ptx")
    assert count(r"\bld\.global\.v4\.b32\b", p_ptx) == 4 and count(r"\bld\.global\.b16\b", p_ptx) == 0
    assert count(r"\bld\.global\.b16\b", d_ptx) == 32 and count(r"\bld\.global\.v4\.b32\b", d_ptx) == 0
    assert count(r"\bst\.global\.v4\.b32\b", p_ptx) == 2 and count(r"\bst\.global\.b16\b", d_ptx) == 16


# --- permute --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_permute_int64_index_math(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    bundle = compile_suite("permute", ["i32", "i64"], target)
    i32, i64 = compiled_ok(bundle, "i32", "i64")

    # TTIR: the same 6 divisions/remainders (by D, H, S), on i32 tensors vs. i64 tensors.
    div_rem = r"arith\.(?:divsi|remsi) [^\n]*: tensor<1024x{}>"
    assert count(div_rem.format("i32"), i32.text("ttir")) == 6
    assert count(div_rem.format("i64"), i32.text("ttir")) == 0
    assert count(div_rem.format("i64"), i64.text("ttir")) == 6

    # PTX: 64-bit division only in the i64 variant; SASS: calls to the division subroutine.
    ptx64 = r"\b(?:div|rem)\.s64\b"
    assert count(ptx64, i64.text("ptx")) >= 2 and count(ptx64, i32.text("ptx")) == 0
    assert count(r"\bCALL\.REL", i64.text("sass")) >= 2 and count(r"\bCALL\.REL", i32.text("sass")) == 0

    # Both copies stay vectorized (D is a constexpr); the cost is instructions and registers.
    for v in (i32, i64):
        assert count(r"\bld\.global\.v4\.b32\b", v.text("ptx")) == 1
    assert sass_instructions(i64) > 2 * sass_instructions(i32)
    assert (i64.resources.registers or 0) > (i32.resources.registers or 0) > 0


# --- softmax --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_softmax_stages_bring_async_prefetch(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    bundle = compile_suite("softmax", ["stages4", "stages1"], target)
    s4, s1 = compiled_ok(bundle, "stages4", "stages1")
    assert "tt.num_stages = 4" in s4.text("ttir") and "tt.num_stages = 1" in s1.text("ttir")

    # 3 rows prefetched in the prologue + 1 copy in the loop; nothing asynchronous with one stage.
    assert len(ASYNC_COPY.findall(s4.text("ttgir"))) == 4
    assert len(ASYNC_COPY.findall(s1.text("ttgir"))) == 0
    assert count(r"\bcp\.async\.cg\.shared\.global\b", s4.text("ptx")) == 4
    assert "cp.async" not in s1.text("ptx")
    assert count(r"\bld\.global\.v4\.b32\b", s1.text("ptx")) == 1
    assert "considered for pipelining" in s4.text("llvm_debug")

    # Shared memory: a ring of 3 fp16 rows of 1024 (6144 B) on top of the reduction scratch both variants use.
    sh4, sh1 = s4.resources.shared_bytes or 0, s1.resources.shared_bytes or 0
    assert sh4 - sh1 >= 3 * 1024 * 2, (sh4, sh1)
    assert sh1 < 1024


# --- listing, the Derived hook, grids, byte counts ----------------------------------------------------------

NEW_SUITES = {
    "persistent-matmul": ["tiled", "persistent", "persistent-noflatten"],
    "rmsnorm": ["specialized", "dns"],
    "permute": ["i32", "i64"],
    "softmax": ["stages4", "stages1"],
}


def test_irdiff_list_shows_the_suites() -> None:
    result = CliRunner().invoke(cli, ["list"])
    assert result.exit_code == 0, result.output
    for name, variants in NEW_SUITES.items():
        assert re.search(rf"^{re.escape(name)}: ", result.output, re.M), result.output
        for v in variants:
            assert re.search(rf"^\s+{re.escape(v)}\s", result.output, re.M), (v, result.output)
    assert list(load_suite("persistent-matmul").variants) == NEW_SUITES["persistent-matmul"]


def meta_for(suite: Suite, variant: str, target: str) -> dict[str, Any]:
    v = suite.variant(variant)
    raw = {**suite.constexprs, **suite.options, **v.constexprs, **v.options}
    return resolve_values(raw, suite.shape, target)


def test_derived_values_and_grids() -> None:
    pm = load_suite("persistent-matmul")
    assert meta_for(pm, "persistent", "sm80")["NUM_SMS"] == 108
    assert meta_for(pm, "persistent", "sm90")["NUM_SMS"] == 132
    tiles = (4096 // 128) * (4096 // 256)
    assert pm.grid is not None
    assert pm.grid(pm.shape, meta_for(pm, "tiled", "sm80")) == (tiles,)
    assert pm.grid(pm.shape, meta_for(pm, "persistent", "sm80")) == (108,)
    assert pm.grid({"M": 256, "N": 256, "K": 64}, meta_for(pm, "persistent", "sm90")) == (2,)  # fewer tiles than SMs

    rms = load_suite("rmsnorm")
    assert meta_for(rms, "dns", "sm80")["BLOCK_N"] == 4096
    assert resolve_values(rms.constexprs, {"M": 2, "N": 3000}, "sm80")["BLOCK_N"] == 4096
    perm = load_suite("permute")
    assert meta_for(perm, "i32", "sm90")["D"] == 64
    assert perm.grid is not None
    assert perm.grid(perm.shape, meta_for(perm, "i32", "sm90")) == (8 * 16 * 2048 * 64 // 1024,)

    # Values that are not Derived pass through untouched; an unknown target is a one-line SuiteError.
    assert resolve_values({"A": 1, "f": len}, {}, "sm90") == {"A": 1, "f": len}
    with pytest.raises(SuiteError, match=r"^NUM_SMS: no value for target 'sm75'"):
        resolve_values({"NUM_SMS": by_target({"sm80": 108})}, {}, "sm75")
    assert resolve_values({"X": by_target({"sm80": 1}, default=7)}, {}, "sm75") == {"X": 7}
    with pytest.raises(SuiteError, match="BLOCK: cannot compute the value for sm90: KeyError"):
        resolve_values({"BLOCK": Derived(lambda s, t: s["missing"])}, {}, "sm90")


@pytest.mark.parametrize("name", list(NEW_SUITES))
def test_bytes_formula_matches_the_tensors(name: str) -> None:
    """Each of these kernels reads every input and writes every output once: the byte count the runner reports
    must equal the bytes of the tensors the argument builder describes."""
    suite = load_suite(name)
    tensors = [v for v in suite.args(suite.shape).values() if isinstance(v, Tensor)]
    assert suite.bytes is not None and suite.flops is not None
    assert suite.bytes(suite.shape) == sum(t.nbytes for t in tensors)
    assert any(t.output for t in tensors)


# --- references (CPU torch, small shapes) -------------------------------------------------------------------

SMALL = {
    "persistent-matmul": {"M": 48, "N": 40, "K": 24},
    "rmsnorm": {"M": 6, "N": 64},
    "permute": {"B": 2, "H": 3, "S": 5, "D": 4},
    "softmax": {"M": 7, "N": 33},
}


def materialize(values: dict[str, Any]) -> dict[str, Any]:
    """CPU torch tensors for the suite's Tensor descriptions (outputs included), other values as given."""
    torch = pytest.importorskip("torch")
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
    gen = torch.Generator().manual_seed(0)
    out: dict[str, Any] = {}
    for k, v in values.items():
        if isinstance(v, Tensor):
            t = torch.randn(v.shape, generator=gen) if v.init == "randn" else torch.rand(v.shape, generator=gen)
            out[k] = t.to(dtypes[v.dtype])
        else:
            out[k] = v
    return out


def by_formula(name: str, x: dict[str, Any], shape: dict[str, int]) -> dict[str, Any]:
    """The same results written out element by element (plain loops and sums), independent of the reference."""
    torch = pytest.importorskip("torch")
    if name == "persistent-matmul":
        a, b = x["a_ptr"].double(), x["b_ptr"].double()
        c = torch.zeros(shape["M"], shape["N"], dtype=torch.float64)
        for k in range(shape["K"]):
            c += a[:, k : k + 1] * b[k : k + 1, :]
        return {"c_ptr": c}
    if name == "rmsnorm":
        xs, w = x["x_ptr"].double(), x["w_ptr"].double()
        rows = [xs[r] / math.sqrt(float((xs[r] * xs[r]).sum()) / shape["N"] + x["eps"]) * w for r in range(shape["M"])]
        return {"y_ptr": torch.stack(rows)}
    if name == "permute":
        B, H, S, D = (shape[k] for k in "BHSD")
        flat_in = x["x_ptr"].reshape(-1)
        y = torch.empty(B * S * H * D, dtype=flat_in.dtype)
        for i in range(y.numel()):
            d, rest = i % D, i // D
            h, rest = rest % H, rest // H
            s, b = rest % S, rest // S
            y[i] = flat_in[((b * H + h) * S + s) * D + d]
        return {"y_ptr": y.reshape(B, S, H, D)}
    if name == "softmax":
        xs = x["x_ptr"].double()
        rows = []
        for r in range(shape["M"]):
            e = [math.exp(float(v - xs[r].max())) for v in xs[r]]
            rows.append(torch.tensor([v / sum(e) for v in e], dtype=torch.float64))
        return {"y_ptr": torch.stack(rows)}
    raise AssertionError(name)


@pytest.mark.parametrize("name", list(NEW_SUITES))
def test_reference_matches_the_formula(name: str) -> None:
    torch = pytest.importorskip("torch")
    suite = load_suite(name)
    shape = SMALL[name]
    inputs = materialize(suite.args(shape))
    assert suite.reference is not None
    got = suite.reference(inputs, shape)
    want = by_formula(name, inputs, shape)
    outputs = {k for k, v in suite.args(shape).items() if isinstance(v, Tensor) and v.output}
    assert set(got) == set(want) == outputs
    for k, expected in want.items():
        assert got[k].dtype == torch.float64, got[k].dtype  # the runner measures errors against fp64
        assert tuple(got[k].shape) == tuple(expected.shape)
        torch.testing.assert_close(got[k].double(), expected.double(), rtol=1e-5, atol=1e-5)

    # The library baseline the runner times beside the variants computes the same thing, in the inputs' dtype.
    assert suite.baseline is not None
    (out_name,) = outputs
    base = suite.baseline(inputs, shape)
    assert base.dtype == inputs[out_name].dtype
    torch.testing.assert_close(base.double(), want[out_name].double(), rtol=2e-2, atol=2e-2)
