"""Parameters paired by role on a kernel pair no capture test uses: two row-softmax kernels, compiled for sm90 by
the real Triton (``triton.compile`` of the ``@triton.jit`` source), whose pointers are renamed and whose argument
list gains runtime row strides and a scale at other positions."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from irdiff.bundle import ArgSpec
from irdiff.diagnose.params import describe_role, pair_params, param_roles

sys.path.insert(0, str(Path(__file__).parent / "scripts"))


def _compile(fn, sig: dict[str, str], constexprs: dict[str, int]) -> tuple[list[ArgSpec], str]:  # type: ignore[no-untyped-def]
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    k = triton.compile(ASTSource(fn, sig, constexprs, {}), target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    spec = [
        ArgSpec(n, i, t, None, str(constexprs[n]) if n in constexprs else None, is_constexpr_param=t == "constexpr")
        for i, (n, t) in enumerate(sig.items())
    ]
    return spec, k.asm["ttir"]


@pytest.fixture(scope="module")
def softmaxes() -> tuple[tuple[list[ArgSpec], str], tuple[list[ArgSpec], str]]:
    import softmax_pair as sp

    a = _compile(
        sp.softmax_a, {"out_ptr": "*fp32", "in_ptr": "*fp32", "n_cols": "i32", "BLOCK": "constexpr"}, {"BLOCK": 1024}
    )
    sig_b = {
        "output": "*fp32",
        "inp": "*fp32",
        "in_stride": "i32",
        "out_stride": "i32",
        "n_cols": "i32",
        "scale": "fp32",
        "BLOCK": "constexpr",
    }
    return a, _compile(sp.softmax_b, sig_b, {"BLOCK": 1024})


def test_renamed_pointers_and_new_strides(softmaxes) -> None:  # type: ignore[no-untyped-def]
    (sa, ta), (sb, tb) = softmaxes
    for x, tx, y, ty in ((sa, ta, sb, tb), (sb, tb, sa, ta)):  # both orders
        pairing = pair_params(x, tx, y, ty)
        got = {(p.a.name if p.a else None, p.b.name if p.b else None): p.how for p in pairing.pairs}
        if x is sa:
            assert got[("out_ptr", "output")] == "renamed" and got[("in_ptr", "inp")] == "renamed"
            assert got[("n_cols", "n_cols")] == "same" and got[("BLOCK", "BLOCK")] == "config"
            assert sorted(r.name for r in pairing.only("b")) == ["in_stride", "out_stride", "scale"]
        else:
            assert got[("output", "out_ptr")] == "renamed" and got[("inp", "in_ptr")] == "renamed"
            assert sorted(r.name for r in pairing.only("a")) == ["in_stride", "out_stride", "scale"]
    roles = {r.name: r for r in param_roles(sb, tb)}
    assert describe_role(roles["in_stride"]).startswith("the row stride of `inp`")
    assert describe_role(roles["out_stride"]).startswith("the row stride of `output`")
    assert "used only in arithmetic" in describe_role(roles["scale"])
    assert {"load", "per-program"} <= roles["inp"].features and "store" not in roles["inp"].features
    assert "store" in roles["output"].features and "load" not in roles["output"].features
    assert {"mask"} <= roles["n_cols"].features


def test_without_ir_names_pair_by_name_and_kind(softmaxes) -> None:  # type: ignore[no-untyped-def]
    (sa, _), (sb, _) = softmaxes
    pairing = pair_params(sa, "", sb, "")  # no IR: roles unknown, only names and kinds
    got = {(p.a.name if p.a else None, p.b.name if p.b else None) for p in pairing.pairs}
    assert ("n_cols", "n_cols") in got and ("BLOCK", "BLOCK") in got
    assert not any(p.a and p.b and p.a.kind != p.b.kind for p in pairing.pairs)
