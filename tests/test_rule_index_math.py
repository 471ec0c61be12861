"""``ttir.i64-index-math`` and ``ttir.divrem-64`` (``irdiff/diagnose/rules/index_math.py``) on the facts of real
compiles, in both orders.

Kernels: ``tests/suites/index_width.py`` (one row copied per program; ``row32``, ``row64`` with the row index widened,
``row64split`` that also splits it with ``//`` and ``%`` by a runtime ``G`` — LLVM narrows that division back to 32
bits, so the PTX has no 64-bit ``div``) and ``tests/suites/diag_copy.py`` (``i64``: a flat index widened and split,
whose PTX keeps 8 ``div.s64``), ``tests/suites/index_scalars.py`` (``N // S`` or ``N % S`` of two ``tl.int64``
arguments: the first 64-bit value is a division, not a widening), sm80/sm86, from the shared compile cache.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from irdiff.diagnose.facts import VariantFacts, extract_facts
from irdiff.diagnose.model import Finding
from irdiff.diagnose.rules.index_math import rule_divrem64, rule_i64
from irdiff.diagnose.testing import make_context

SUITES = Path(__file__).parent / "suites"
SOFT = "64-bit division and remainder have no hardware instruction (ptxas calls a software routine)"
REMEDY_I64 = (
    "keep the program id and offsets in int32 when every index fits below 2^31; widen only the final offset (or the "
    "base pointer) to int64 if a tensor exceeds 2^31 elements"
)


@pytest.fixture(scope="module")
def facts(compile_suite) -> dict[str, VariantFacts]:  # type: ignore[no-untyped-def]
    rows = compile_suite(str(SUITES / "index_width.py"), ["row32", "row64", "row64split"], "sm80")
    copy = compile_suite(str(SUITES / "diag_copy.py"), ["i64", "i32"], "sm86")
    out = {n: extract_facts(v) for n, v in rows.variants.items()}
    out.update({n: extract_facts(v) for n, v in copy.variants.items()})
    return out


def both(rule, fa: VariantFacts, fb: VariantFacts) -> tuple[list[Finding], list[Finding]]:  # type: ignore[no-untyped-def]
    return rule(make_context(fa, fb)), rule(make_context(fb, fa))


def test_widened_row_index_both_orders(facts: dict[str, VariantFacts]) -> None:
    f64, f32 = facts["row64"], facts["row32"]
    assert f64.i64_ops > 2 and f32.i64_ops == 0
    for (f,) in both(rule_i64, f64, f32):
        assert (f.id, f.severity, f.stage, f.predicts) == ("ttir.i64-index-math", "major", "ttir", "row64")
        assert f.title == (
            f"Index arithmetic in i64 in `row64` vs i32 in `row32` ({f64.i64_ops} vs 0 TTIR values of type i64, the "
            f"first from `{f64.i64_first_python.text}`)"  # type: ignore[union-attr]
        )
        assert f.explanation.startswith(f"`row64` computes {f64.i64_ops} TTIR values as `i64` where `row32` has 0.")
        assert (
            f"The first 64-bit value is `row` (`arith.extsi`, TTIR line {f64.i64_first.line}), from "  # type: ignore[union-attr]
            f"`row = tl.program_id(0).to(tl.int64)` (line {f64.i64_first_python.line}); everything derived from it "  # type: ignore[union-attr]
            "(the offsets and the bound check) is 64-bit."
        ) in f.explanation
        assert f.explanation.endswith(
            "64-bit integer multiply/add take two 32-bit instructions each and every index needs two registers."
        )
        assert SOFT not in f.explanation and "`//`" not in f.explanation
        assert [(e.variant, e.stage) for e in f.evidence] == [("row64", "ttir"), ("row64", "python")]
        assert "arith.extsi" in f.evidence[0].text and ".to(tl.int64)" in f.evidence[1].text
        assert f.remedy == REMEDY_I64
    # no 64-bit division anywhere: no divrem finding
    assert both(rule_divrem64, f64, f32) == ([], [])


def test_split_in_64_bits_that_llvm_narrows(facts: dict[str, VariantFacts]) -> None:
    """``row // G`` and ``row % G`` are 64-bit in TTIR, but the PTX divides in 32 bits: the index finding names the
    split and no software routine; the divrem finding says the division was narrowed and predicts nothing."""
    fs, f32, f64 = facts["row64split"], facts["row32"], facts["row64"]
    assert len(fs.divrem64_ttir) == 2 and fs.counts["ptx"].get("div.s64", 0) == 0
    for (f,) in both(rule_i64, fs, f64):
        assert f.predicts == "row64split" and f.title.startswith(
            f"More index arithmetic in i64 in `row64split` than in `row64` ({fs.i64_ops} vs {f64.i64_ops} TTIR values"
        )
        assert (
            f"(line {fs.i64_first_python.line}); everything derived from it (offsets, the `//` and `%` that split a "  # type: ignore[union-attr]
            "flat index) is 64-bit. 64-bit integer multiply/add take two 32-bit instructions each and every index"
        ) in f.explanation
        assert SOFT not in f.explanation
        # the narrow variant's first 64-bit value is evidence too, on its own side
        assert [(e.variant, e.stage) for e in f.evidence] == [
            ("row64split", "ttir"),
            ("row64split", "python"),
            ("row64", "ttir"),
        ]
        assert f.evidence[2].line == f64.i64_first.line  # type: ignore[union-attr]
    for other in (f32, f64):
        for (d,) in both(rule_divrem64, fs, other):
            assert (d.id, d.severity, d.predicts, d.stage) == ("ttir.divrem-64", "info", None, "ttir")
            assert d.title == "64-bit division/remainder in the TTIR of `row64split`, narrowed to 32-bit in its PTX"
            assert d.explanation.startswith(
                f"`row64split` has 2 `arith.divsi`/`arith.remsi` on `i64` in TTIR where `{other.name}` has 0, but its "
                f"PTX has 0 64-bit `div`/`rem` (0 in `{other.name}`) and "
            )
            assert d.explanation.endswith(
                "LLVM narrowed the 64-bit division because its operands provably fit in 32 bits, so no software "
                "division routine is called for it."
            )
            ttir = [e for e in d.evidence if e.stage == "ttir"]
            assert [e.line for e in ttir] == [r.line for r in fs.divrem64_ttir]
            assert {"arith.remsi", "arith.divsi"} == {e.text.split("=")[1].split()[0] for e in ttir}
            ptx = [e for e in d.evidence if e.stage == "ptx"]
            assert ptx and all(".s32" in e.text and "×" in e.text for e in ptx)
            for e in ptx:  # each quoted with its own count
                k = e.text.split()[0]
                assert e.text.endswith(f"({fs.counts['ptx'][k]}× {k})")
            n32 = sum(fs.counts["ptx"].get(k, 0) for k in ("div.s32", "rem.s32", "div.u32", "rem.u32"))
            assert n32 >= 2 and f"and {n32} 32-bit ones: LLVM narrowed" in d.explanation
            assert {e.variant for e in d.evidence} == {"row64split"}
    # without first PTX lines recorded: the TTIR lines alone
    bare = dataclasses.replace(fs, name="bare", first_lines={})
    (d,) = rule_divrem64(make_context(bare, f32))
    assert {e.stage for e in d.evidence} == {"ttir"} and d.severity == "info"
    # at most four TTIR lines quoted
    many = dataclasses.replace(fs, name="many", divrem64_ttir=fs.divrem64_ttir * 3)
    (d,) = rule_divrem64(make_context(many, f32))
    assert len([e for e in d.evidence if e.stage == "ttir"]) == 4 and "has 6 `arith.divsi`" in d.explanation


def test_flat_split_with_software_division_both_orders(facts: dict[str, VariantFacts]) -> None:
    fw, fn = facts["i64"], facts["i32"]
    n64 = fw.counts["ptx"]["div.s64"] + fw.counts["ptx"].get("rem.s64", 0)
    assert n64 > 0
    # its first 64-bit value's Python line is longer than 60 characters: the title leaves it out (the explanation
    # quotes it)
    assert fw.i64_first_python is not None and len(fw.i64_first_python.text) > 60
    for (f,) in both(rule_i64, fw, fn):
        assert f.predicts == "i64" and "`//` and `%`" in f.explanation
        assert (
            f.title == f"Index arithmetic in i64 in `i64` vs i32 in `i32` ({fw.i64_ops} vs 0 TTIR values of type i64)"
        )
        assert f"from `{fw.i64_first_python.text}` (line {fw.i64_first_python.line})" in f.explanation
        assert f"instructions each, {SOFT}, and every index needs two registers." in f.explanation
    for (d,) in both(rule_divrem64, fw, fn):
        assert (d.id, d.stage, d.severity, d.predicts) == ("ttir.divrem-64", "ttir", "major", "i64")
        assert d.explanation.endswith(
            "GPUs have no 64-bit integer divider: ptxas expands each into a call to a division subroutine of dozens "
            "of instructions, where a 32-bit division by a value is a short inline sequence."
        )
        assert d.remedy == (
            "compute the index split (`//`, `%`) in int32, e.g. keep `tl.program_id` and `tl.arange` in int32"
        )
        narrow_ev = [e for e in d.evidence if e.variant == "i32"]
        assert [(e.stage, e.line) for e in narrow_ev] == [("ptx", fn.first_lines["ptx"]["div.s32"].line)]
        assert d.title == f"64-bit division/remainder in `i64` ({n64} `div.s64`/`rem.s64` in PTX)"
        assert (
            f"`i64` divides 64-bit integers: {len(fw.divrem64_ttir)} `arith.divsi`/`arith.remsi` on `i64` in TTIR, "
            f"{n64} `div.s64`/`rem.s64` in PTX (0 and 0 in `i32`). GPUs have no 64-bit integer divider"
        ) in d.explanation
        assert d.remedy and "int32" in d.remedy
        ptx_w = [e.text for e in d.evidence if e.variant == "i64" and e.stage == "ptx"]
        assert (
            ptx_w and ptx_w[0].startswith("div.s64") and ptx_w[0].endswith(f"({fw.counts['ptx']['div.s64']}× div.s64)")
        )
        # the 32-bit variant's own 32-bit division, with its count
        ptx_n = [e.text for e in d.evidence if e.variant == "i32"]
        assert (
            ptx_n and ptx_n[0].startswith("div.s32") and ptx_n[0].endswith(f"({fn.counts['ptx']['div.s32']}× div.s32)")
        )
        assert len([e for e in d.evidence if e.stage == "ttir"]) == min(4, len(fw.divrem64_ttir))
        assert {e.variant for e in d.evidence if e.stage == "ttir"} == {"i64"}
    # the narrow side's 32-bit remainder is quoted too; a narrow side without first PTX lines quotes nothing
    ref32 = fn.first_lines["ptx"]["div.s32"]
    rem = dataclasses.replace(
        fn,
        name="rem",
        counts={**fn.counts, "ptx": {**fn.counts["ptx"], "rem.s32": 3}},
        first_lines={**fn.first_lines, "ptx": {**fn.first_lines["ptx"], "rem.s32": ref32}},
    )
    (d,) = rule_divrem64(make_context(fw, rem))
    assert [e.text.rsplit("(", 1)[1] for e in d.evidence if e.variant == "rem"][-1] == "3× rem.s32)"
    (d,) = rule_divrem64(make_context(fw, dataclasses.replace(fn, name="bare32", first_lines={})))
    assert [e for e in d.evidence if e.variant == "bare32"] == []
    # every 64-bit opcode is quoted with its count (signed and unsigned division and remainder)
    ref = fw.first_lines["ptx"]["div.s64"]
    ops = ("div.s64", "rem.s64", "div.u64", "rem.u64")
    all4 = dataclasses.replace(
        fw,
        name="all4",
        counts={**fw.counts, "ptx": {**fw.counts["ptx"], **{k: i + 1 for i, k in enumerate(ops)}}},
        first_lines={**fw.first_lines, "ptx": {**fw.first_lines["ptx"], **dict.fromkeys(ops, ref)}},
    )
    (d,) = rule_divrem64(make_context(all4, fn))
    assert [e.text.rsplit("(", 1)[1] for e in d.evidence if e.variant == "all4" and e.stage == "ptx"] == [
        "1× div.s64)",
        "2× rem.s64)",
        "3× div.u64)",
        "4× rem.u64)",
    ]
    assert d.title == "64-bit division/remainder in `all4` (10 `div.s64`/`rem.s64` in PTX)"
    # at most four TTIR lines; without first PTX lines, the TTIR lines alone
    many = dataclasses.replace(fw, name="many", divrem64_ttir=fw.divrem64_ttir * 3, first_lines={})
    (d,) = rule_divrem64(make_context(many, fn))
    assert [e.stage for e in d.evidence if e.variant == "many"] == ["ttir"] * 4 and d.severity == "major"


def test_thresholds_and_missing_facts(facts: dict[str, VariantFacts]) -> None:
    f64, f32 = facts["row64"], facts["row32"]
    # equal counts, or at most one i64 op on either side: not index arithmetic
    assert rule_i64(make_context(f64, dataclasses.replace(f64, name="twin"))) == []
    one = dataclasses.replace(f64, name="one", i64_ops=1)
    assert both(rule_i64, one, f32) == ([], [])
    two = dataclasses.replace(f64, name="two", i64_ops=2)
    assert [f.predicts for f in rule_i64(make_context(f32, two))] == ["two"]
    # without a first i64 op (facts of an older bundle): the count alone, no origin sentence
    bare = dataclasses.replace(f64, name="bare", i64_first=None, i64_first_python=None)
    (f,) = rule_i64(make_context(bare, f32))
    assert "The first 64-bit value" not in f.explanation and f.evidence == []
    assert (
        f.title == f"Index arithmetic in i64 in `bare` vs i32 in `row32` ({f64.i64_ops} vs 0 TTIR values of type i64)"
    )
    assert f.explanation.startswith(f"`bare` computes {f64.i64_ops} TTIR values as `i64` where `row32` has 0. 64-bit")
    # the first op without its Python line: TTIR evidence only, the sentence ends after the TTIR line
    nopy = dataclasses.replace(f64, name="nopy", i64_first_python=None)
    (g,) = rule_i64(make_context(nopy, f32))
    assert [e.stage for e in g.evidence] == ["ttir"]
    assert (
        g.title == f"Index arithmetic in i64 in `nopy` vs i32 in `row32` ({f64.i64_ops} vs 0 TTIR values of type i64)"
    )
    # the title quotes the first 64-bit value's Python line up to 60 characters (the real line plus a comment)
    py = f64.i64_first_python
    assert py is not None
    for n, quoted in ((59, True), (60, True), (61, False), (62, False)):
        text = (py.text + "  # row index, widened ").ljust(n, "x")
        assert len(text) == n
        long = dataclasses.replace(f64, name="long", i64_first_python=dataclasses.replace(py, text=text))
        (t,) = rule_i64(make_context(f32, long))
        assert t.title.endswith(f"TTIR values of type i64, the first from `{text}`)" if quoted else "of type i64)"), n
        assert f"from `{text}` (line {py.line})" in t.explanation
    # a widening whose Python line is unknown: no claim about offsets, only what is computed from it
    assert f"TTIR line {f64.i64_first.line}); what is computed from the widened value is 64-bit." in g.explanation  # type: ignore[union-attr]
    # a first op that is neither a program id nor a sign extension: no "everything derived" clause
    other = dataclasses.replace(
        f64,
        name="other",
        i64_first=dataclasses.replace(f64.i64_first, text="%acc_3 = arith.addi %x, %y : i64"),  # type: ignore[type-var]
    )
    (h,) = rule_i64(make_context(other, f32))
    assert "The first 64-bit value is `acc` (`arith.addi`, TTIR line" in h.explanation
    assert "everything derived" not in h.explanation
    # an unnamed value (a constant-like SSA name), no op name: "a value"
    anon = dataclasses.replace(f64, name="anon", i64_first=dataclasses.replace(f64.i64_first, text="%c5 i64"))  # type: ignore[type-var]
    (k,) = rule_i64(make_context(anon, f32))
    assert "The first 64-bit value is a value, from" in k.explanation
    # a single 64-bit division in the PTX is a software routine too
    one_div = dataclasses.replace(facts["row64split"], name="one_div", counts={"ptx": {"div.s64": 1}})
    assert SOFT in rule_i64(make_context(one_div, f32))[0].explanation
    # a 64-bit division only the PTX shows (none in the TTIR list) still makes the widened index a split one
    ptx_div = dataclasses.replace(
        f64, name="ptx_div", counts={**f64.counts, "ptx": {**f64.counts["ptx"], "div.s64": 1}}
    )
    assert ptx_div.divrem64_ttir == []
    (p,) = rule_i64(make_context(f32, ptx_div))
    assert "everything derived from it (offsets, the `//` and `%` that split a flat index) is 64-bit." in p.explanation
    assert SOFT in p.explanation and "bound check" not in p.explanation
    # without PTX counts, the TTIR division decides: the software-routine sentence and a major divrem finding
    fs = facts["row64split"]
    noptx = dataclasses.replace(fs, name="noptx", counts={k: v for k, v in fs.counts.items() if k != "ptx"})
    (m,) = rule_i64(make_context(noptx, f32))
    assert SOFT in m.explanation
    (d,) = rule_divrem64(make_context(noptx, f32))
    assert (d.severity, d.predicts) == ("major", "noptx")


def test_i64_scalar_widens_only_what_meets_it_both_orders(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """``n: tl.int64`` (``tests/suites/annot_scalars.py``): the offsets stay i32 and are widened (``arith.extsi``)
    only to be compared with ``n``. The explanation says what is computed from the widened value is 64-bit and does
    not claim the offsets are (it said "everything derived from it (the offsets and the bound check) is 64-bit")."""
    b = compile_suite(str(Path(__file__).parent / "suites" / "annot_scalars.py"), ["wide", "plain"], "sm80")
    fw, fp = extract_facts(b.variants["wide"]), extract_facts(b.variants["plain"])
    fw.name, fp.name = "wide", "plain"
    assert fw.i64_first is not None and "arith.extsi" in fw.i64_first.text
    assert "tt.get_program_id" in b.variants["wide"].text("ttir")  # a program id exists, but it stays i32
    assert not re.search(r"tt\.get_program_id[^\n]*: i64", b.variants["wide"].text("ttir"))
    for x, y in ((fw, fp), (fp, fw)):
        (f,) = rule_i64(make_context(x, y))
        assert f.predicts == "wide"
        assert "what is computed from the widened value is 64-bit" in f.explanation
        assert "offsets" not in f.explanation and "everything derived" not in f.explanation


def test_i64_scalars_divided_first_both_orders(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """``N: tl.int64, S: tl.int64`` (``tests/suites/index_scalars.py``): the first 64-bit value is ``N // S``
    (``head64``, an ``arith.divsi``) or ``N % S`` (``tail64``, an ``arith.remsi``) of two arguments, not a widened
    program id: the explanation names that op and its line and claims nothing about what derives from it (no
    "everything derived" clause, which is about a widened value); the 64-bit division stays in the PTX, so the
    software-routine sentence is there and the divrem finding is major."""
    b = compile_suite(str(SUITES / "index_scalars.py"), ["head32", "head64", "tail64"], "sm80")
    fs = {n: extract_facts(v) for n, v in b.variants.items()}
    for n, f in fs.items():
        f.name = n
    f32 = fs["head32"]
    assert f32.i64_ops == 0 and f32.divrem64_ttir == []
    for wide, op, py_text, ptx_op in (
        ("head64", "arith.divsi", "seg_len = N // S", "div.s64"),
        ("tail64", "arith.remsi", "rest = N % S", "rem.s64"),
    ):
        fw = fs[wide]
        first, py = fw.i64_first, fw.i64_first_python
        assert first is not None and py is not None and py.text == py_text
        assert first.text.split("=")[1].split()[0] == op and "extsi" not in first.text
        assert [r.line for r in fw.divrem64_ttir] == [first.line] and fw.counts["ptx"][ptx_op] >= 1
        for (f,) in both(rule_i64, fw, f32):
            assert (f.id, f.severity, f.predicts) == ("ttir.i64-index-math", "major", wide)
            assert f.title == (
                f"Index arithmetic in i64 in `{wide}` vs i32 in `head32` ({fw.i64_ops} vs 0 TTIR values of type i64, "
                f"the first from `{py_text}`)"
            )
            stem = py_text.split()[0]
            assert (
                f"The first 64-bit value is `{stem}` (`{op}`, TTIR line {first.line}), from `{py_text}` "
                f"(line {py.line}). 64-bit integer multiply/add take two 32-bit instructions each, {SOFT}, and every "
                "index needs two registers."
            ) in f.explanation
            assert "everything derived" not in f.explanation and "widened" not in f.explanation
            assert [(e.variant, e.stage, e.line) for e in f.evidence] == [
                (wide, "ttir", first.line),
                (wide, "python", py.line),
            ]
        for (d,) in both(rule_divrem64, fw, f32):
            assert (d.severity, d.predicts) == ("major", wide)
            n = fw.counts["ptx"].get("div.s64", 0) + fw.counts["ptx"].get("rem.s64", 0)
            assert d.title == f"64-bit division/remainder in `{wide}` ({n} `div.s64`/`rem.s64` in PTX)"
    # each divides once in 64 bits, in TTIR and in PTX: no divrem finding between them
    for f in (fs["head64"], fs["tail64"]):
        assert len(f.divrem64_ttir) == 1 and sum(f.counts["ptx"].get(k, 0) for k in ("div.s64", "rem.s64")) == 1
    assert both(rule_divrem64, fs["head64"], fs["tail64"]) == ([], [])
