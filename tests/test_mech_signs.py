"""Facts the mechanism rules once misread, on the real compiles of ``tests/suites/mech_signs.py`` (sm80), both
orders of every pair:

* an 8-bit integer tile converted to fp16 before ``tl.dot`` is ``arith.sitofp`` from int8 and ``arith.uitofp`` from
  uint8, and MLIR prints ``i8`` for both: the upcast read ``i8 → f16`` for uint8 too, so int8 against uint8 operands
  compared equal and no finding said the bytes are read with another sign;
* ``f64_ttir`` counted ``tt.splat``/``tt.addptr`` on ``!tt.ptr<f64>`` and ``tt.load`` of f64 as fp64 ops, so an fp64
  copy "computed in fp64" against an fp32 copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from irdiff.bundle import Bundle
from irdiff.diagnose import diagnose
from irdiff.diagnose.mechfacts import _upcast_from, extract_mech_facts
from tests.diag_helpers import get, ids

SUITE = str(Path(__file__).parent / "suites" / "mech_signs.py")


@pytest.fixture(scope="module")
def signs(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(SUITE, ["s8", "u8", "mixed", "copy", "twice", "copy32"], "sm80")


def test_upcast_names_the_sign_the_conversion_reads(signs: Bundle) -> None:
    for variant, ops, upcast in (
        ("s8", {"arith.sitofp"}, ["i8 → f16"]),
        ("u8", {"arith.uitofp"}, ["u8 → f16"]),
        ("mixed", {"arith.sitofp", "arith.uitofp"}, ["i8 → f16", "u8 → f16"]),
    ):
        ttgir = signs.variants[variant].text("ttgir")
        assert {op for op in ("arith.sitofp", "arith.uitofp") if f" = {op} " in ttgir} == ops
        (d,) = extract_mech_facts(signs.variants[variant]).dots
        assert (d.a_type, d.b_type, d.upcast, d.shape) == ("f16", "f16", upcast, [32, 32, 64]), variant
    assert _upcast_from("arith.extui", "i16") == "u16" and _upcast_from("arith.extsi", "i16") == "i16"
    assert _upcast_from("arith.uitofp", "f16") == "f16" and _upcast_from("tt.fp_to_fp", "i8") == "i8"
    assert _upcast_from("arith.sitofp", "i8") == "i8" and _upcast_from("arith.uitofp", "i1") == "u1"


@pytest.mark.parametrize("pair", [("s8", "u8"), ("u8", "s8"), ("u8", "mixed"), ("mixed", "u8")])
def test_upcasts_from_other_signs_are_a_finding(signs: Bundle, pair: tuple[str, str]) -> None:
    a, o = pair
    f = get(diagnose(signs, a, o), "precision.dot-upcast")
    want = {"s8": "`i8 → f16`", "u8": "`u8 → f16`", "mixed": "`i8 → f16`, `u8 → f16`"}
    assert f.title == (
        f"The operands of `prod` dot 32x32x64 (f16 × f16) are upcast from other types: {want[a]} in `{a}` vs "
        f"{want[o]} in `{o}`"
    )
    assert f"converted right before the MMA in both variants, from other types: {want[a]} in `{a}`, " in f.explanation
    assert "read signed in one (`arith.sitofp`" in f.explanation and "used as loaded" not in f.explanation
    assert f.severity == "major" and f.predicts is None and f.causes == ["spec.type-changed"]
    assert sorted(e.variant for e in f.evidence) == sorted([a, o])
    assert all(e.stage == "ttgir" and "tt.dot" in e.text for e in f.evidence)


def test_fp64_counts_arithmetic_not_pointers_loads_or_moves(signs: Bundle) -> None:
    copy, twice, c32 = (extract_mech_facts(signs.variants[v]) for v in ("copy", "twice", "copy32"))
    ttir = signs.variants["copy"].text("ttir")
    # fp64 pointers splat, offset and loaded from (the load's printed type is its pointer operand's)
    assert " = tt.splat %src : !tt.ptr<f64> -> tensor<256x!tt.ptr<f64>>" in ttir
    assert " = tt.load " in ttir and " = tt.addptr " in ttir
    assert (copy.f64_ttir, copy.f64_tensor, copy.f64_first) == (0, 0, None)
    assert (c32.f64_ttir, c32.f64_tensor) == (0, 0)
    assert (twice.f64_ttir, twice.f64_tensor) == (1, 1)
    assert twice.f64_first is not None and " = arith.mulf " in twice.f64_first.text
    assert twice.f64_python is not None and twice.f64_python.text == "v = v * 2.0"


@pytest.mark.parametrize("pair", [("copy", "copy32"), ("copy32", "copy")])
def test_fp64_copy_is_no_fp64_arithmetic(signs: Bundle, pair: tuple[str, str]) -> None:
    d = diagnose(signs, *pair)
    assert "precision.fp64" not in ids(d)
    assert "spec.type-changed" in ids(d)


@pytest.mark.parametrize("pair", [("copy", "twice"), ("twice", "copy")])
def test_fp64_scaling_names_its_one_op(signs: Bundle, pair: tuple[str, str]) -> None:
    f = get(diagnose(signs, *pair), "precision.fp64")
    other = pair[0] if pair[1] == "twice" else pair[1]
    assert f.title.startswith("`twice` computes in fp64 (2 PTX f64 instructions")
    assert "`twice` computes in fp64: 1 TTIR ops with `f64` results" in f.explanation
    assert f"`{other}` has 0 and 0" in f.explanation and f.severity == "major"
