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


# ------------------------------------------------------------------ hand-written TTIR (Triton 3.9's printed forms)

_LOOPS_TTIR = """module {
  tt.func public @loops(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y_ptr: !tt.ptr<f32>, %lo: i32, %st: i32, %n: i32, %m: i32) attributes {noinline = false} {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant dense<4> : tensor<4xi32>
    scf.for %k = %lo to %n step %st  : i32 {
      %0 = tt.addptr %y_ptr, %k : !tt.ptr<f32>, i32
      tt.store %0, %cst : !tt.ptr<f32>
    }
    %4 = "tt.reduce"(%cst_0) <{axis = 0 : i32}> ({
    ^bb0(%a: i32, %b: i32):
      %5 = arith.maxsi %a, %b : i32
      tt.reduce.return %5 : i32
    }) : (tensor<4xi32>) -> i32
    %r:3 = scf.for %j = %c0_i32 to %m step %c1_i32 iter_args(%p = %x_ptr, %acc = %cst, %z = %4) -> (!tt.ptr<f32>, f32, i32)  : i32 {
      %1 = tt.load %p : !tt.ptr<f32>
      %2 = arith.addf %acc, %1 : f32
      %3 = tt.addptr %p, %c1_i32 : !tt.ptr<f32>, i32
      %8 = arith.addi %z, %c1_i32 : i32
      scf.yield %3, %2, %8 : !tt.ptr<f32>, f32, i32
    }
    tt.store %r#0, %r#1 : !tt.ptr<f32>
    scf.for %i = %4 to %m step %st  : i32 {
      %6 = tt.addptr %y_ptr, %i : !tt.ptr<f32>, i32
      tt.store %6, %cst : !tt.ptr<f32>
    }
    scf.for %i2 = %lo to %m step %4  : i32 {
      %7 = tt.addptr %y_ptr, %i2 : !tt.ptr<f32>, i32
      tt.store %7, %cst : !tt.ptr<f32>
    }
    tt.return
  }
}
"""  # noqa: E501


def test_loops_without_iter_args_carried_pointers_and_unparsed_bounds() -> None:
    """A loop without ``iter_args`` (its induction variable from ``lo`` and ``st``: both offsets of ``y_ptr``), a
    pointer carried through ``iter_args`` and read back from the loop's first result (``%r#0`` of ``%r:3``), and
    bounds and an ``iter_args`` initial value computed by a generic-form op (``"tt.reduce"``, whose result the pass
    does not parse: no taint, and no error)."""
    spec = [ArgSpec(n, i, t) for i, (n, t) in enumerate(
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "lo": "i32", "st": "i32", "n": "i32", "m": "i32"}.items())]  # fmt: skip
    got = {r.name: (sorted(r.features), r.addresses) for r in param_roles(spec, _LOOPS_TTIR)}
    assert got == {
        "x_ptr": (["load", "shared", "store"], ()),  # loaded through %p = x_ptr, stored through %r#0
        "y_ptr": (["shared", "store"], ()),
        "lo": (["loop", "offset"], ("y_ptr",)),
        "st": (["loop", "offset"], ("y_ptr",)),  # the step enters %k even though the loop carries no value
        "n": (["loop"], ()),
        "m": (["loop"], ()),
    }


_OPS_TTIR = """module {
  tt.func public @ops(%x_ptr: !tt.ptr<f32>, %w_ptr: !tt.ptr<f32>, %c_ptr: !tt.ptr<i32>, %off: i32, %sel: i32, %pick: i32, %half: i32, %cap: i32, %scale: f32) attributes {noinline = false} {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %pid = tt.get_program_id x : i32
    %0 = arith.addi %off, %pid : i32
    %1 = tt.addptr %x_ptr, %0 : !tt.ptr<f32>, i32
    %2 = tt.load %1 evictionPolicy = evict_last : !tt.ptr<f32>
    %3 = arith.cmpi slt, %sel, %c1_i32 : i32
    %4 = arith.select %3, %pick, %c0_i32 : i32
    %5 = tt.addptr %w_ptr, %4 : !tt.ptr<f32>, i32
    %6 = tt.load %5 : !tt.ptr<f32>
    %7 = arith.cmpi slt, %pid, %cap : i32
    %8 = tt.atomic_rmw add, acq_rel, gpu, %c_ptr, %c1_i32, %7 : (!tt.ptr<i32>, i32, i1) -> i32
    %9 = math.exp %scale : f32
    tt.store %1, %9 : !tt.ptr<f32>
    %10 = tt.splat %half : i32 -> tensor<2xi32>
    %11 = tt.join %10, %10 : tensor<2xi32> -> tensor<2x2xi32>
    %lhs, %rhs = tt.split %11 : tensor<2x2xi32> -> tensor<2xi32>
    %12 = tt.splat %w_ptr : !tt.ptr<f32> -> tensor<2x!tt.ptr<f32>>
    %13 = tt.addptr %12, %lhs : tensor<2x!tt.ptr<f32>>, tensor<2xi32>
    %14 = tt.load %13 : tensor<2x!tt.ptr<f32>>
    tt.return
  }
}
"""  # noqa: E501


def test_select_sum_atomic_mask_math_split_and_old_eviction_spelling() -> None:
    """``off + pid`` into an address is an offset (only a multiply makes a stride); a select's condition (``sel``)
    does not flow into its result, its chosen value (``pick``) does; an atomic's mask (``cap``) is not a load/store
    mask; a ``math.*`` op makes ``scale`` a value; the first result of a two-result op (``%lhs, %rhs = tt.split``)
    carries ``half``; Triton 3.6's ``evictionPolicy = evict_last`` spelling is read like 3.9's."""
    sig = {"x_ptr": "*fp32", "w_ptr": "*fp32", "c_ptr": "*i32", "off": "i32", "sel": "i32", "pick": "i32",
           "half": "i32", "cap": "i32", "scale": "fp32"}  # fmt: skip
    spec = [ArgSpec(n, i, t) for i, (n, t) in enumerate(sig.items())]
    got = {r.name: (sorted(r.features), r.addresses) for r in param_roles(spec, _OPS_TTIR)}
    assert got == {
        "x_ptr": (["evict_last", "load", "per-program", "store"], ()),
        "w_ptr": (["load", "shared"], ()),
        "c_ptr": (["atomic", "shared"], ()),
        "off": (["offset"], ("x_ptr",)),
        "sel": ([], ()),
        "pick": (["offset"], ("w_ptr",)),
        "half": (["offset"], ("w_ptr",)),
        "cap": ([], ()),
        "scale": (["value"], ()),
    }


def test_spec_objects_without_argspec_fields() -> None:
    """``param_roles`` takes ``ArgFact`` objects (no ``is_constexpr_param``: a declared constexpr is read from the
    annotation) and any object with the four ``_Spec`` fields (no ``annotation`` either); a bf16 scalar is a float;
    when the runtime parameters do not line up with the IR signature no parameter is taken as seen."""
    from dataclasses import dataclass

    from irdiff.diagnose.facts import ArgFact

    def fact(name: str, i: int, typ: str, annotation: str | None, constexpr: str | None = None) -> ArgFact:
        return ArgFact(name, i, typ, None, constexpr, "", annotation, "", False, False)

    facts = [fact("n", 0, "i32", None), fact("B", 1, "constexpr", "tl.constexpr", "64"),
             fact("one", 2, "constexpr", "int", "1"), fact("s", 3, "bf16", None)]  # fmt: skip
    assert [(r.name, r.kind) for r in param_roles(facts, "")] == [
        ("n", "int"), ("B", "constexpr"), ("one", "int"), ("s", "float")]  # fmt: skip

    @dataclass
    class Spec:
        name: str
        type: str
        constexpr: str | None = None
        divisibility: int | None = None

    assert [r.kind for r in param_roles([Spec("one", "constexpr", "1"), Spec("h", "bf16")], "")] == ["int", "float"]
    ttir = _OPS_TTIR.replace(", %cap: i32, %scale: f32", "")  # 7 IR arguments for 9 runtime parameters
    sig = ["x_ptr", "w_ptr", "c_ptr", "off", "sel", "pick", "half", "cap", "scale"]
    roles = param_roles([ArgSpec(n, i, "*fp32" if n.endswith("_ptr") else "i32") for i, n in enumerate(sig)], ttir)
    assert [(r.ir_seen, r.features, r.addresses) for r in roles] == [(False, frozenset(), ())] * 9


def test_pointer_read_per_program_and_shared_is_per_program() -> None:
    from irdiff.diagnose.params import ParamRole

    r = ParamRole("p", 0, "pointer", "*fp16", features=frozenset({"load", "shared", "per-program"}), ir_seen=True)
    assert describe_role(r) == "a pointer to fp16 loaded from, at an address that depends on the program id"


def test_pairing_edges_without_ir() -> None:
    """Without IR every role similarity is 0.5 (3 × 0.5 = 1.5 points), so the scores are exact sums of the name,
    type and position terms (:func:`irdiff.diagnose.params._score`)."""

    def specs(*params: tuple[str, str]) -> list[ArgSpec]:
        return [ArgSpec(n, i, t, None, "64" if t == "constexpr" else None, is_constexpr_param=t == "constexpr")
                for i, (n, t) in enumerate(params)]  # fmt: skip

    def pairs(a: list[ArgSpec], b: list[ArgSpec]) -> list[tuple[str | None, str | None, str, float]]:
        return [(p.a.name if p.a else None, p.b.name if p.b else None, p.how, p.score)
                for p in pair_params(a, "", b, "").pairs]  # fmt: skip

    # a score of exactly MIN_SCORE pairs: 1.5 + 0.5 (same place), other names, other integer types
    assert pairs(specs(("n", "i32")), specs(("m", "i64"))) == [("n", "m", "renamed", 2.0)]
    assert pairs(specs(("m", "i64")), specs(("n", "i32"))) == [("m", "n", "renamed", 2.0)]
    # a constexpr declared first does not stop the pairing of the parameters after it (both orders)
    a, b = specs(("BLOCK", "constexpr"), ("x_ptr", "*fp32")), specs(("BLOCK", "constexpr"), ("y_ptr", "*fp32"))
    assert pairs(a, b) == [("BLOCK", "BLOCK", "config", 1.0), ("x_ptr", "y_ptr", "renamed", 2.5)]
    assert pairs(b, a) == [("BLOCK", "BLOCK", "config", 1.0), ("y_ptr", "x_ptr", "renamed", 2.5)]
    # p-p (4.25) is taken first; p-r (2.0) then conflicts, and q-r (2.0) after it is still made
    a, b = specs(("p", "i32"), ("q", "i64")), specs(("p", "i32"), ("r", "i32"))
    assert pairs(a, b) == [("p", "p", "same", 4.25), ("q", "r", "renamed", 2.0)]
    assert pairs(b, a) == [("p", "p", "same", 4.25), ("r", "q", "renamed", 2.0)]
    # the score is rounded to 3 decimals: 1.5 + 0.25 (both i32) + 0.5 × (1 - 1/3)
    a, b = specs(("s", "i32")), specs(("u", "i64"), ("t", "i32"), ("v", "i64"))
    assert pairs(a, b) == [("s", "t", "renamed", 2.083), (None, "u", "added", 0.0), (None, "v", "added", 0.0)]
    assert pairs(b, a) == [("u", None, "removed", 0.0), ("t", "s", "renamed", 2.083), ("v", None, "removed", 0.0)]


def test_memory_op_without_operands_uses_no_parameter() -> None:
    """A ``tt.store`` line written without operands (hand-written text, not Triton's; ``param_roles`` reads any IR
    text it is given) gives no parameter a use and no error; the load before it is still read."""
    ttir = """module {
  tt.func public @bare(%x_ptr: !tt.ptr<f32>) attributes {noinline = false} {
    %0 = tt.load %x_ptr : !tt.ptr<f32>
    tt.store
    tt.return
  }
}
"""
    (r,) = param_roles([ArgSpec("x_ptr", 0, "*fp32")], ttir)
    assert (r.ir_seen, sorted(r.features), r.addresses) == (True, ["load", "shared"], ())
