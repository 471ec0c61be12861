"""Parameters paired by role on a kernel pair no capture test uses: two row-softmax kernels, compiled for sm90 by
the real Triton (``triton.compile`` of the ``@triton.jit`` source), whose pointers are renamed and whose argument
list gains runtime row strides and a scale at other positions."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from irdiff.bundle import ArgSpec
from irdiff.diagnose.params import addressing, describe_role, pair_params, param_roles

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


# ------------------------------------------------------------------ every use, each by one parameter (sm90 TTIR)

SIG_A = {"x_ptr": "*fp32", "w_ptr": "*fp32", "out_ptr": "*fp32", "cnt_ptr": "*i32", "stride_row": "i32",
         "stride_col": "i64", "off": "i32", "n_cols": "i32", "K": "i32", "scale": "fp32", "unused": "i32",
         "BLOCK": "constexpr"}  # fmt: skip
SIG_B = {"factor": "fp32", "dst": "*fp32", "src": "*fp32", "weight": "*fp32", "counter": "*i32", "n": "i32",
         "trip": "i32", "ld": "i32", "inc": "i64", "shift": "i32", "BLOCK": "constexpr"}  # fmt: skip
# a's parameter -> b's (roles_b renames and reorders every parameter and drops `unused`)
A_TO_B = {"x_ptr": "src", "w_ptr": "weight", "out_ptr": "dst", "cnt_ptr": "counter", "stride_row": "ld",
          "stride_col": "inc", "off": "shift", "n_cols": "n", "K": "trip", "scale": "factor"}  # fmt: skip


@pytest.fixture(scope="module")
def roles() -> tuple[tuple[list[ArgSpec], str], tuple[list[ArgSpec], str]]:
    import param_roles_kernels as k

    return _compile(k.roles_a, SIG_A, {"BLOCK": 128}), _compile(k.roles_b, SIG_B, {"BLOCK": 128})


def test_each_use_is_read_from_the_ir(roles) -> None:  # type: ignore[no-untyped-def]
    (sa, ta), _ = roles
    got = {r.name: r for r in param_roles(sa, ta)}
    assert [r.name for r in got.values()] == list(SIG_A) and [r.index for r in got.values()] == list(range(12))
    assert {n: sorted(r.features) for n, r in got.items()} == {
        "x_ptr": ["evict_first", "load", "per-program"],  # eviction_policy="evict_first"
        "w_ptr": ["load", "shared"],  # no program id in its address: the same vector for every program
        "out_ptr": ["per-program", "store"],
        "cnt_ptr": ["atomic", "per-program"],
        "stride_row": ["row", "stride"],  # pid * stride_row
        "stride_col": ["stride"],  # (cols + k) * stride_col: a stride, not of rows
        "off": ["offset"],
        "n_cols": ["mask"],
        "K": ["loop"],  # the trip count: the loop's results are not computed from it
        "scale": ["value"],
        "unused": [],
        "BLOCK": [],
    }
    assert {n: r.kind for n, r in got.items()} == {
        **{n: "pointer" for n in ("x_ptr", "w_ptr", "out_ptr", "cnt_ptr")},
        **{n: "int" for n in ("stride_row", "stride_col", "off", "n_cols", "K", "unused")},
        "scale": "float",
        "BLOCK": "constexpr",
    }
    # the pointers each integer's addresses are based on (never another integer already in the base)
    assert {n: r.addresses for n, r in got.items() if r.addresses} == {
        "stride_row": ("out_ptr", "x_ptr"),
        "stride_col": ("x_ptr",),
        "off": ("w_ptr",),
    }
    assert all(r.ir_seen for n, r in got.items() if n != "BLOCK") and not got["BLOCK"].ir_seen
    assert got["cnt_ptr"].elem == "i32" and got["K"].elem == "i32"
    assert {n for n, r in got.items() if addressing(r)} == {"stride_row", "stride_col", "off"}
    words = {n: describe_role(r) for n, r in got.items()}
    assert words == {
        "x_ptr": "a pointer to fp32 loaded from, at an address that depends on the program id",
        "w_ptr": "a pointer to fp32 loaded from, at the same address in every program (a weight or bias vector)",
        "out_ptr": "a pointer to fp32 stored to, at an address that depends on the program id",
        "cnt_ptr": "a pointer to i32 updated atomically, at an address that depends on the program id",
        "stride_row": "the row stride of `out_ptr` and `x_ptr`, a runtime i32 (no divisibility)",
        "stride_col": "a stride of `x_ptr` (multiplies an index in an address), a runtime i64 (no divisibility)",
        "off": "an offset added to the address of `w_ptr`, a runtime i32 (no divisibility)",
        "n_cols": "a bound in load/store masks, a runtime i32 (no divisibility)",
        "K": "a loop bound, a runtime i32 (no divisibility)",
        "scale": "a runtime fp32 used only in arithmetic (no address depends on it)",
        "unused": "a runtime i32, not used by the kernel",
        "BLOCK": "a `tl.constexpr` (= 128)",
    }


def test_renamed_and_reordered_parameters_pair_by_role(roles) -> None:  # type: ignore[no-untyped-def]
    (sa, ta), (sb, tb) = roles
    for order in ("ab", "ba"):
        x, tx, y, ty = (sa, ta, sb, tb) if order == "ab" else (sb, tb, sa, ta)
        want = A_TO_B if order == "ab" else {v: k for k, v in A_TO_B.items()}
        p = pair_params(x, tx, y, ty)
        got = {q.a.name: q.b.name for q in p.pairs if q.a and q.b and q.how == "renamed"}
        assert got == want, order
        assert [(q.a.name, q.b.name) for q in p.pairs if q.how == "config"] == [("BLOCK", "BLOCK")]  # type: ignore[union-attr]
        assert all(q.score >= 2.0 for q in p.renamed) and p.shifted
        if order == "ab":
            assert [r.name for r in p.only("a")] == ["unused"] and p.only("b") == []
            assert [q.how for q in p.pairs][-2:] == ["removed", "config"]  # a's order, `unused` at its place
            assert p.b_for("x_ptr").name == "src" and p.a_for("src").name == "x_ptr"  # type: ignore[union-attr]
            assert p.b_for("unused") is None and p.a_for("nothing") is None and p.b_for("nothing") is None
            assert p.aliases("b")["x_ptr"] == "src" and p.aliases("b")["unused"] is None
            assert p.aliases("a")["src"] == "x_ptr" and "unused" not in p.aliases("a")
            assert next(q for q in p.pairs if q.a and q.a.name == "x_ptr").label == "x_ptr → src"
            assert next(q for q in p.pairs if q.how == "config").label == "BLOCK"
            assert next(q for q in p.pairs if q.how == "removed").label == "unused"
        else:
            assert [r.name for r in p.only("b")] == ["unused"] and p.only("a") == []
            assert [q.how for q in p.pairs][-1] == "added" and p.pairs[-1].label == "unused"
    same = pair_params(sa, ta, sa, ta)
    assert {q.how for q in same.pairs} == {"same", "config"} and not same.shifted and not same.renamed


def test_jit_constants_are_constants_of_their_kind(roles) -> None:  # type: ignore[no-untyped-def]
    """Runtime parameters the JIT turned into constants (an int 1, a float) are left out of the TTIR signature;
    the others still line up with it."""
    import param_roles_kernels as k

    sig = {**SIG_A, "stride_col": "constexpr", "scale": "constexpr"}
    spec, ttir = _compile(k.roles_a, sig, {"BLOCK": 128, "stride_col": 1, "scale": 0.5})
    for s in spec:
        s.is_constexpr_param = s.name == "BLOCK"  # only BLOCK is declared tl.constexpr
    got = {r.name: r for r in param_roles(spec, ttir)}
    assert (got["stride_col"].kind, got["scale"].kind, got["BLOCK"].kind) == ("int", "float", "constexpr")
    assert not got["stride_col"].ir_seen and describe_role(got["stride_col"]) == "a constant"
    assert describe_role(got["scale"]) == "a constant"
    assert got["stride_row"].features == {"row", "stride"} and got["off"].addresses == ("w_ptr",)
    (sa, ta), _ = roles
    p = pair_params(sa, ta, spec, ttir)  # a runtime i64 stride against a constant 1: still the same parameter
    assert p.b_for("stride_col").type == "constexpr" and p.b_for("scale").kind == "float"  # type: ignore[union-attr]


def test_role_similarity_and_score() -> None:
    from irdiff.diagnose.params import ParamRole, _role_similarity, _score

    def role(name: str, kind: str, typ: str, feats: set[str], seen: bool = True, i: int = 0) -> ParamRole:
        return ParamRole(name, i, kind, typ, features=frozenset(feats), ir_seen=seen)

    x = role("x", "pointer", "*fp16", {"load", "per-program", "evict_first"})
    assert _role_similarity(x, role("y", "pointer", "*fp16", {"load", "per-program"})) == 2 / 2.5  # hints count half
    assert _role_similarity(x, role("y", "pointer", "*fp16", {"load", "shared"})) == 1 / 3.5
    assert _role_similarity(x, role("y", "pointer", "*fp16", set(), seen=False)) == 0.5  # uses unknown
    assert _role_similarity(role("a", "int", "i32", set()), role("b", "int", "i32", set())) == 1.0
    assert _role_similarity(x, role("y", "pointer", "*fp16", set())) == 0.25  # used on one side only
    # score: 3 × role similarity, +2 same name, +0.5 same pointee, +0.25 same integer type, +0.5 × position closeness
    assert _score(x, role("x", "int", "i32", {"load"}), 2, 2) is None  # other kinds never pair
    assert _score(x, role("x", "pointer", "*fp16", set(x.features)), 1, 1) == 3 + 2 + 0.5 + 0.5
    assert _score(x, role("y", "pointer", "*bf16", set(x.features), i=1), 2, 2) == 3 + 0.5 * 0.5
    # positions compared as fractions of each list: 2nd of 4 against 2nd of 4 is as close as can be
    assert _score(role("p", "int", "i32", set(), i=1), role("q", "int", "i64", set(), i=1), 4, 4) == 3 + 0.5
    s, t = role("s", "int", "i32", {"stride"}), role("t", "int", "i64", {"stride"}, i=3)
    assert _score(s, t, 4, 4) == 3 + 0.5 * 0.25 and _score(s, role("t", "int", "i32", {"stride"}), 4, 4) == 3.75


def test_descriptions_of_combined_uses() -> None:
    import param_roles_kernels as k

    sig = {"buf": "*fp32", "table": "*i64", "unused_ptr": "*fp32", "a_ptr": "*fp32", "b_ptr": "*fp32",
           "c_ptr": "*fp32", "step": "i32", "lim": "i32", "thresh": "fp32", "hop": "i32", "BLOCK": "constexpr"}  # fmt: skip
    spec, ttir = _compile(k.roles_c, sig, {"BLOCK": 128})
    spec[6].divisibility = 16  # step, as if specialized for a multiple of 16
    got = {r.name: describe_role(r) for r in param_roles(spec, ttir)}
    assert got == {
        "buf": "a pointer to fp32 loaded from and stored to, at an address that depends on the program id",
        "table": "a pointer to i64 loaded from, at an address that depends on the program id",
        "unused_ptr": "a pointer to fp32",
        "a_ptr": "a pointer to fp32 loaded from, at the same address in every program (a weight or bias vector)",
        "b_ptr": "a pointer to fp32 loaded from, at the same address in every program (a weight or bias vector)",
        "c_ptr": "a pointer to fp32 loaded from, at the same address in every program (a weight or bias vector)",
        # a stride that is also the trip count: the stride is what matters
        "step": "a stride of `a_ptr`, `b_ptr` and `c_ptr` (multiplies an index in an address), a runtime i32 "
        "divisible by 16",
        "lim": "an offset added to the address of `a_ptr`, a bound in load/store masks, also used in arithmetic, "
        "a runtime i32 (no divisibility)",
        "thresh": "a bound in load/store masks, also used in arithmetic, a runtime fp32",
        "hop": "an offset added to the address, a runtime i32 (no divisibility)",
        "BLOCK": "a `tl.constexpr` (= 128)",
    }


def test_unmatched_parameters_and_configuration(roles) -> None:  # type: ignore[no-untyped-def]
    """A configuration value pairs by name only; unmatched parameters score 0."""
    (sa, ta), (sb, tb) = roles
    renamed = [ArgSpec("BLOCK_SIZE", s.index, s.type, None, s.constexpr, is_constexpr_param=True) if s.name == "BLOCK"
               else s for s in sb]  # fmt: skip
    p = pair_params(sa, ta, renamed, tb)
    assert [(q.a.name, q.b) for q in p.pairs if q.a and q.a.kind == "constexpr"] == [("BLOCK", None)]
    assert [q.b.name for q in p.pairs if q.how == "added"] == ["BLOCK_SIZE"]
    assert {q.score for q in p.pairs if q.how in ("added", "removed")} == {0.0}
    assert [q.score for q in pair_params(sa, ta, sb, tb).pairs if q.how == "config"] == [1.0]


def test_loop_induction_variable_and_load_mask() -> None:
    """``for k in range(start, stop, step)``: ``k`` is computed from ``start`` and ``step`` (both enter the address
    through it), ``stop`` only bounds the loop; a parameter used only in a load's mask is a mask bound."""
    import param_roles_kernels as k

    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "start": "i32", "stop": "i32", "step": "i32", "lim": "i32",
           "BLOCK": "constexpr"}  # fmt: skip
    spec, ttir = _compile(k.roles_d, sig, {"BLOCK": 128})
    got = {r.name: sorted(r.features) for r in param_roles(spec, ttir)}
    assert got == {
        "x_ptr": ["load", "shared"],
        "y_ptr": ["load", "shared", "store"],
        "start": ["loop", "offset"],
        "stop": ["loop"],
        "step": ["loop", "offset"],
        "lim": ["mask"],
        "BLOCK": [],
    }
