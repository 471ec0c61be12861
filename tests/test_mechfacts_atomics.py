"""The atomic facts of irdiff/diagnose/mechfacts.py (``AtomicFact``) against what each kernel of
``tests/suites/mech_atomics.py`` forces: every read-modify-write kind, CAS, the memory order and scope each call
names, scalar vs tensor results, and whether the value written is an MMA result converted to the atomic's layout
(sm80 ``mma.sync``, sm100 through ``ttng.tmem_load``), directly or through casts. Real IR text from those compiles
covers the stages a bundle may lack or hold damaged. Cheap: one cached compile per target."""

from __future__ import annotations

from pathlib import Path

import pytest

from irdiff.bundle import Bundle
from irdiff.diagnose.mechfacts import AtomicFact, _atomics, clear_memos, extract_mech_facts
from tests.test_mechfacts import check_refs

SUITE = str(Path(__file__).parent / "suites" / "mech_atomics.py")


@pytest.fixture(scope="session")
def atom80(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(SUITE, ["kinds", "cas", "fmax", "ext1", "fp8"], "sm80")


@pytest.fixture(scope="session")
def atom100(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(SUITE, ["ext1"], "sm100")


@pytest.fixture(autouse=True)
def _cold_memos() -> None:
    clear_memos()


def atomics(b: Bundle, variant: str) -> list[AtomicFact]:
    v = b.variants[variant]
    f = extract_mech_facts(v)
    check_refs(v, f)
    return f.atomics


def row(a: AtomicFact) -> tuple[str, str, str, str, list[int], bool]:
    return (a.op, a.sem, a.scope, a.elem, a.shape, a.from_mma)


def test_rmw_kinds_orders_and_scopes(atom80: Bundle) -> None:
    """One atomic per call, in program order: the kind TTIR prints (``exch`` for ``tl.atomic_xchg``), the ``sem`` and
    ``scope`` the call names (defaults ``acq_rel``/``gpu``), the memory's element type (fp16 for the masked add of a
    down-cast fp32 load), ``[128]`` tensors and ``[]`` for the two single-word adds; nothing here comes from a dot."""
    got = atomics(atom80, "kinds")
    assert [row(a) for a in got] == [
        ("exch", "release", "cta", "i32", [128], False),
        ("max", "acquire", "sys", "i32", [128], False),
        ("min", "relaxed", "gpu", "i32", [128], False),
        ("and", "acq_rel", "gpu", "i32", [128], False),
        ("or", "acq_rel", "gpu", "i32", [128], False),
        ("xor", "acq_rel", "gpu", "i32", [128], False),
        ("fadd", "acq_rel", "gpu", "f16", [128], False),
        ("fadd", "acq_rel", "gpu", "f32", [], False),
        ("fadd", "acq_rel", "gpu", "f32", [], False),
    ]
    calls = [a.python.text if a.python else "" for a in got]
    assert calls[0].startswith("old = tl.atomic_xchg(i_ptr + offs, k + 1")
    assert [c.split("(")[0] for c in calls[1:]] == ["tl." + k for k in ("atomic_max", "atomic_min", "atomic_and")] + [
        "tl.atomic_or",
        "tl.atomic_xor",
        "tl.atomic_add",
        "tl.atomic_add",
        "tl.atomic_add",
    ]
    assert calls[-2:] == ["tl.atomic_add(f_ptr + BLOCK, v)", "tl.atomic_add(f_ptr + BLOCK + 1, 1.0)"]


def test_cas_fields_and_new_value(atom80: Bundle) -> None:
    """``tl.atomic_cas`` prints no kind: ``op`` is ``cas`` and its first two words are ``sem`` and ``scope``. The
    value a CAS writes is its third operand: the tensor CAS writes a dot result (converted from the MMA layout), while
    its comparand, a load converted between two blocked layouts, is no MMA value (the add of that load says so too)."""
    got = atomics(atom80, "cas")
    assert [row(a) for a in got] == [
        ("cas", "acquire", "gpu", "i32", [], False),
        ("cas", "relaxed", "cta", "f32", [64, 64], True),
        ("fadd", "acq_rel", "gpu", "f32", [64, 64], False),
        ("exch", "release", "gpu", "i32", [], False),
    ]
    assert got[1].python is not None and got[1].python.text.startswith("tl.atomic_cas(c_ptrs, expected, tl.dot(a, b)")
    assert got[0].python is not None and "tl.atomic_cas(lock_ptr, 0, 1" in got[0].python.text


def test_float_max_of_a_dot(atom80: Bundle) -> None:
    """A float ``tl.atomic_max`` is an int ``max`` and an unsigned ``umin`` on the bit cast value, both written from
    the MMA-layout dot result (the bit cast happens before the conversion)."""
    got = atomics(atom80, "fmax")
    assert [row(a) for a in got] == [
        ("max", "acq_rel", "gpu", "i32", [64, 64], True),
        ("umin", "acq_rel", "gpu", "i32", [64, 64], True),
    ]


@pytest.mark.parametrize(("target", "variant"), [("sm80", "ext1"), ("sm80", "fp8"), ("sm100", "ext1")])
def test_mma_value_through_casts(request: pytest.FixtureRequest, target: str, variant: str) -> None:
    """Triton converts the fp16 dot result's layout before widening it (``arith.extf``; ``tt.fp_to_fp`` from fp8): the
    atomic's value is a cast of the conversion, and still counts as the MMA's. On sm100 the accumulator is read from
    tensor memory into a ``#ttg.linear`` layout, and that is what is converted."""
    b: Bundle = request.getfixturevalue({"sm80": "atom80", "sm100": "atom100"}[target])
    (a,) = atomics(b, variant)
    assert row(a) == ("fadd", "acq_rel", "gpu", "f32", [64, 64], True)
    ttgir = b.variants[variant].text("ttgir")
    cast = {"ext1": "arith.extf", "fp8": "tt.fp_to_fp"}[variant]
    atom = next(ln for ln in ttgir.splitlines() if "tt.atomic_rmw" in ln)
    value = atom.split(", ")[4]
    (defn,) = [ln for ln in ttgir.splitlines() if ln.strip().startswith(value + " = ")]
    assert cast in defn  # the kernel forces what the test says: a cast sits between conversion and atomic


# ------------------------------------------------------------------------------------------------ real IR text
# Lines of the ``cas`` (sm80) and ``ext1`` compiles above (Triton 3.9.0), locations left out.

TTIR = """\
%3 = tt.atomic_cas acquire, gpu, %lock_ptr, %c0_i32, %c1_i32 : (!tt.ptr<i32>, i32, i32) -> i32
%6 = tt.atomic_rmw fadd, acq_rel, gpu, %5, %part_22, %cst : (tensor<64x64x!tt.ptr<f32>>, tensor<64x64xf32>, \
tensor<64x64xi1>) -> tensor<64x64xf32>
"""
HEAD = """\
#blocked2 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
%5 = tt.atomic_cas acquire, gpu, %lock_ptr, %c0_i32, %c1_i32 : (!tt.ptr<i32>, i32, i32) -> i32
"""
CONVERT = (
    "%part_34 = ttg.convert_layout %part : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #blocked2>\n"
    "%part_35 = arith.extf %part_34 : tensor<64x64xf16, #blocked2> to tensor<64x64xf32, #blocked2>\n"
)
RMW = (
    "%6 = tt.atomic_rmw fadd, acq_rel, gpu, %5, %part_35, %cst_2 : (tensor<64x64x!tt.ptr<f32>, #blocked2>, "
    "tensor<64x64xf32, #blocked2>, tensor<64x64xi1, #blocked2>) -> tensor<64x64xf32, #blocked2>\n"
)


def test_atomic_text_cases() -> None:
    """From the TTIR alone (no TTGIR saved): the fields, never an MMA source; with the TTGIR: the MMA value found
    through a down-cast too (``arith.truncf`` after the conversion), not through other arithmetic, and a value defined
    through itself (damaged text) ends the walk instead of looping."""
    alone = _atomics(TTIR, "", "", "")
    assert [row(a) for a in alone] == [
        ("cas", "acquire", "gpu", "i32", [], False),
        ("fadd", "acq_rel", "gpu", "f32", [64, 64], False),
    ]
    assert [a.ref.line for a in alone] == [1, 2] and all(a.python is None for a in alone)
    full = _atomics(TTIR, HEAD + CONVERT + RMW, "", "")
    assert [a.from_mma for a in full] == [False, True]
    for major in ("3", "5"):  # a wgmma (sm90) or a tcgen05-versioned MMA layout is an MMA's too
        head = HEAD.replace("versionMajor = 2", "versionMajor = " + major)
        assert _atomics(TTIR, head + CONVERT + RMW, "", "")[1].from_mma is True
    down = CONVERT.replace("arith.extf", "arith.truncf").replace("to tensor<64x64xf32", "to tensor<64x64xbf16")
    assert _atomics(TTIR, HEAD + down + RMW, "", "")[1].from_mma is True
    scaled = CONVERT.replace("arith.extf %part_34 :", "arith.mulf %part_34, %part_34 :")
    assert _atomics(TTIR, HEAD + scaled + RMW, "", "")[1].from_mma is False
    blocked = CONVERT.replace("#mma>", "#blocked2>")
    assert _atomics(TTIR, HEAD + blocked + RMW, "", "")[1].from_mma is False
    loop = "%part_35 = arith.extf %part_35 : tensor<64x64xf16, #blocked2> to tensor<64x64xf32, #blocked2>\n"
    assert _atomics(TTIR, HEAD + loop + RMW, "", "")[1].from_mma is False


def test_damaged_atomic_lines() -> None:
    """Atomic lines (and a cast before one) cut short, as in a damaged bundle: the words that are there, empty fields
    for the rest, no MMA source, no error."""
    cut = [
        "%3 = tt.atomic_cas acquire",
        "%4 = tt.atomic_cas",
        "%5 = tt.atomic_cas relaxed, cta",
        "%6 = tt.atomic_rmw fadd",
        "%7 = tt.atomic_rmw fadd, relaxed",
        "%8 = tt.atomic_rmw fadd, relaxed, cta",
    ]
    got = _atomics("\n".join(cut), "\n".join(cut), "", "")
    assert [row(a) for a in got] == [
        ("cas", "acquire", "", "", [], False),
        ("cas", "", "", "", [], False),
        ("cas", "relaxed", "cta", "", [], False),
        ("fadd", "", "", "", [], False),
        ("fadd", "relaxed", "", "", [], False),
        ("fadd", "relaxed", "cta", "", [], False),
    ]
    # the value's cast lost its operand
    bare = HEAD + "%part_35 = arith.extf\n" + RMW
    assert _atomics(TTIR, bare, "", "")[1].from_mma is False


# ------------------------------------------------------------------------------------------------ helpers they use


def test_operands_skip_results_and_strings() -> None:
    """The values an op uses: not its results (two of them for ``tt.split``), not the ``$1``/``%r1`` text, braces and
    `` : `` of an inline-asm string (Triton 3.9's ``red_asm`` line of ``tests/suites/diag_mech.py``, sm80 TTIR)."""
    from irdiff.diagnose.mechfacts import _Line, _operands

    def ops(text: str, op: str, results: list[str]) -> list[str]:
        return _operands(_Line(1, text, text, op, results, None, False))

    split = "%outLHS, %outRHS = tt.split %acc_3 : tensor<64x32x2xf32, #blocked> -> tensor<64x32xf32, #blocked1>"
    assert ops(split, "tt.split", ["%outLHS", "%outRHS"]) == ["%acc_3"]
    asm = (
        '%0 = tt.elementwise_inline_asm "red.global.add.f32 [$1], $2;\\0A\\09mov.u32 $0, 0;" {constraints = "=r,l,r", '
        "packed_element = 1 : i32, pure = false} %c_ptrs_15, %part_12 : tensor<64x64x!tt.ptr<f32>>, "
        "tensor<64x64xf32> -> tensor<64x64xi32>"
    )
    assert ops(asm, "tt.elementwise_inline_asm", ["%0"]) == ["%c_ptrs_15", "%part_12"]
    regs = asm.replace("red.global.add.f32 [$1], $2;", '{ .reg .pred %p1; setp.ne.b32 %p1, $2, 0; } \\"%r\\" : ')
    assert ops(regs, "tt.elementwise_inline_asm", ["%0"]) == ["%c_ptrs_15", "%part_12"]


def test_mma_alias_without_a_version() -> None:
    """An ``#ttg.nvidia_mma`` definition that names no ``versionMajor`` is an MMA of unknown version: ``mma``."""
    from irdiff.diagnose.mechfacts import _aliases

    text = "#mma = #ttg.nvidia_mma<{versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>\n"
    assert _aliases(text) == {"#mma": "mma"}


def test_reader_in_another_file_has_no_kernel_line(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """The atomic's old value is stored by ``keep_old`` in ``tests/suites/hintfacts/other.py``: the reader is named
    (``tt.store`` and its TTIR line) but no line of the kernel's own file is quoted for it (its line number lies
    inside ``hintfacts.py``, so a reader of positions that ignored the file would quote an unrelated kernel line);
    the atomic itself is on the kernel's line."""
    b = compile_suite(str(Path(__file__).parent / "suites" / "hintfacts" / "hintfacts.py"), ["oldelse"], "sm80")
    (a,) = extract_mech_facts(b.variants["oldelse"]).atomics
    assert a.users == ["tt.store"] and a.user is not None and a.user.text.lstrip().startswith("tt.store")
    assert a.python is not None and a.python.text.startswith("old = tl.atomic_add(cnt_ptr + k")
    assert a.user_python is None
