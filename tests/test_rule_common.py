"""The helpers every rule module shares (``irdiff/diagnose/rules/common.py``): evidence, sizes and names in words,
the parameter and decorator lines of the saved kernel source, the ``num_warps`` note, value pairs quoted in titles.

Source lines are looked up in real suite files (``tests/suites/spec_kinds.py``: ``@triton.jit(do_not_specialize=…)``
above ``def mul_mixed(...)``) and in small kernels written here the way users write them (multi-line signatures,
annotations, return annotations, a decorator stack with a blank line above).
"""

from __future__ import annotations

from pathlib import Path

from irdiff.diagnose.facts import Ref
from irdiff.diagnose.model import Evidence
from irdiff.diagnose.rules.common import (
    _bytes,
    _c,
    _decorator_line,
    _ev,
    _kb,
    _names,
    _param_line,
    _ratio,
    _same_warps,
    _stem_of,
    _warps_note,
    quoted_comparisons,
    same_param,
    states_no_difference,
)
from irdiff.diagnose.testing import make_context, make_facts

SPEC = (Path(__file__).parent / "suites" / "spec_kinds.py").read_text()


def test_ev_from_a_ref_or_the_spec() -> None:
    """A ref gives its stage and line (its text unless one is given); without one the evidence is the
    specialization's (no line)."""
    r = Ref("ttgir", 12, "%a = tt.load %p")
    assert _ev("x", r) == Evidence("x", "ttgir", 12, "%a = tt.load %p")
    assert _ev("x", r, "other") == Evidence("x", "ttgir", 12, "other")
    assert _ev("x", r, "") == Evidence("x", "ttgir", 12, "")
    assert _ev("y", None, "ld: i32") == Evidence("y", "spec", None, "ld: i32")
    assert _ev("y", None) == Evidence("y", "spec", None, "")
    assert _ev("y", None, None) == Evidence("y", "spec", None, "")


def test_sizes_in_words() -> None:
    assert (_bytes(None), _bytes(0), _bytes(1), _bytes(2), _bytes(16)) == (
        "?",
        "0 bytes",
        "1 byte",
        "2 bytes",
        "16 bytes",
    )
    assert _kb(None) == "?"
    assert (_kb(0), _kb(1), _kb(1023)) == ("0 B", "1 B", "1023 B")
    assert (_kb(1024), _kb(16384), _kb(2048)) == ("1 KB", "16 KB", "2 KB")
    assert _kb(1025) == "1.0 KB (1025 B)"
    assert _kb(1536) == "1.5 KB (1536 B)"
    assert _kb(10240 + 512) == "10.5 KB (10752 B)"
    assert _kb(102500) == "100.1 KB (102500 B)"  # KB of 1024 bytes


def test_names_and_ratio() -> None:
    assert _names([]) == ""
    assert _names(["x"]) == "`x`"
    assert _names(["x", "y"]) == "`x` and `y`"
    assert _names(["x", "y", "z"]) == "`x`, `y` and `z`"
    assert _ratio(1, 2) == " (0.5×)"
    assert _ratio(3, 1) == " (3×)"
    assert _ratio(1, 3) == " (0.33×)"
    assert _ratio(5, 0) == ""


def test_stem_of_mlir_values() -> None:
    """The Python name hint of the value an MLIR line defines; Triton's own names (``%arg3``, ``%c1``, ``%cst_2``)
    and numbered values have none."""
    assert _stem_of("%b_112 = tt.load %p") == "b"
    assert _stem_of("%acc = tt.dot %a, %b, %c") == "acc"
    assert _stem_of("%Acc_3 = arith.addf %x, %y") == "Acc"
    assert _stem_of("%row_ptr_7 = tt.addptr %p, %o") == "row_ptr"
    assert _stem_of("%offs_n_2 = arith.addi %a, %b") == "offs_n"
    for line in ("%arg3 = x", "%c1 = arith.constant 1", "%cst_2 = arith.constant dense<0>", "%c = arith.constant 0",
                 "%cst = arith.constant 1.0", "%12 = arith.addi %a, %b", "tt.store %p, %v", "  %x_1 = y"):  # fmt: skip
        assert _stem_of(line) == "", line
    assert _stem_of("%carg = tt.load %p") == "carg" and _stem_of("%argmax = tt.reduce") == "argmax"


def test_param_line_in_real_and_multiline_signatures() -> None:
    """The line of parameter ``name`` in ``def kernel(...)``: one-line signatures (a real suite file), parameters
    on their own lines, annotated or defaulted, never a same-named local after the signature ended."""
    r = _param_line(SPEC, "mul_mixed", "incw")
    assert r is not None and r.stage == "python" and r.text.startswith("def mul_mixed(")
    assert SPEC.splitlines()[r.line - 1].strip() == r.text
    assert _param_line(SPEC, "mul_mixed", "incx") == r  # annotated `incx: int` on the same line
    assert _param_line(SPEC, "mul_missing", "incw") is None
    src = (
        "import triton\n"
        "\n"
        "@triton.jit\n"
        "def k(\n"
        "    x_ptr,\n"
        "    n: int,\n"
        "    scale=1.0,\n"
        "    BLOCK: tl.constexpr,\n"
        ") -> None:\n"
        "    n = 3\n"
        "    scale = n\n"
        "    other = tl.load(x_ptr)\n"
    )
    assert _param_line(src, "k", "x_ptr") == Ref("python", 5, "x_ptr,")
    assert _param_line(src, "k", "n") == Ref("python", 6, "n: int,")
    assert _param_line(src, "k", "scale") == Ref("python", 7, "scale=1.0,")
    assert _param_line(src, "k", "BLOCK") == Ref("python", 8, "BLOCK: tl.constexpr,")
    assert _param_line(src, "k", "other") is None  # a local after the signature's end
    one = "def k2(a, b):\n    b = 1\n    c = 2\n"
    assert _param_line(one, "k2", "b") == Ref("python", 1, "def k2(a, b):")
    assert _param_line(one, "k2", "c") is None  # the signature ends on its own first line
    tail = "def k3(a,\n       b) -> tl.tensor:\n    c = a\n"
    assert _param_line(tail, "k3", "b") == Ref("python", 2, "b) -> tl.tensor:")
    assert _param_line(tail, "k3", "c") is None
    # a signature longer than 80 lines is not searched past its 80th
    long = "def big(\n" + "".join(f"    p{i},\n" for i in range(100)) + "):\n    pass\n"
    assert _param_line(long, "big", "p78") == Ref("python", 80, "p78,")
    assert _param_line(long, "big", "p79") is None


def test_decorator_line_above_def() -> None:
    """The decorator line naming ``word`` above ``def kernel``: found in a real suite file; the search stops at a
    blank line or another ``def`` and looks at most 14 lines up."""
    r = _decorator_line(SPEC, "mul_mixed", "do_not_specialize")
    assert r is not None and r.text == '@triton.jit(do_not_specialize=["incw"])'
    assert SPEC.splitlines()[r.line - 1].strip() == r.text
    assert _decorator_line(SPEC, "mul_ragged", "do_not_specialize_on_alignment") is not None
    assert _decorator_line(SPEC, "mul_missing", "do_not_specialize") is None
    # the word above a blank line belongs to another function's decorators
    src = "@triton.jit(do_not_specialize=['n'])\ndef a(n):\n    pass\n\n@triton.jit\ndef b(n):\n    pass\n"
    assert _decorator_line(src, "b", "do_not_specialize") is None
    assert _decorator_line(src, "a", "do_not_specialize") == Ref("python", 1, "@triton.jit(do_not_specialize=['n'])")
    # a def directly above (no blank line) stops the search too
    tight = "@triton.jit(do_not_specialize=['n'])\ndef a(n):\n    pass\n@triton.jit\ndef b(n):\n    pass\n"
    assert _decorator_line(tight, "b", "do_not_specialize") is None
    indented = "class K:\n    @triton.jit(do_not_specialize=['n'])\n    def a(n):\n        pass\n"
    assert _decorator_line(indented, "a", "do_not_specialize") == Ref(
        "python", 2, "@triton.jit(do_not_specialize=['n'])"
    )
    # a decorator stack: the word two and 14 lines above the def is found, 15 lines above is not
    stack = "@triton.jit(do_not_specialize=['n'])\n@other\ndef c(n):\n    pass\n"
    assert _decorator_line(stack, "c", "do_not_specialize") == Ref("python", 1, "@triton.jit(do_not_specialize=['n'])")
    # a kernel on the file's first line has nothing above it (the search never wraps to the file's last line)
    first = "def f(n):\n    pass\n# do_not_specialize\n"
    assert _decorator_line(first, "f", "do_not_specialize") is None
    # a blank line ends the decorators even when no def is above it
    comment = "# do_not_specialize is not used here\n\n@triton.jit\ndef g(n):\n    pass\n"
    assert _decorator_line(comment, "g", "do_not_specialize") is None
    # an indented def (a method) above ends them too
    methods = "class K:\n    @triton.jit(do_not_specialize=['n'])\n    def a(n):\n        pass\n    @triton.jit\n    def b(n):\n"
    assert _decorator_line(methods, "b", "do_not_specialize") is None
    for gap, found in ((13, True), (14, False)):
        deep = "@triton.jit(do_not_specialize=['n'])\n" + "@d\n" * gap + "def e(n):\n    pass\n"
        assert (_decorator_line(deep, "e", "do_not_specialize") is not None) is found, gap


def test_warps_note() -> None:
    def note(wa: object, wb: object) -> str:
        fa = make_facts("a", options={"num_warps": wa, "num_stages": 3})
        fb = make_facts("b", options={"num_warps": wb, "num_stages": 3})
        return _warps_note(make_context(fa, fb))

    assert note(4, 8) == (
        " `num_warps` is 4 in `a` and 8 in `b`: per-thread counts scale with the work per thread (twice the threads, "
        "half the instructions each: the same work per CTA), so they do not compare directly."
    )
    assert note(8, 2) == (
        " `num_warps` is 8 in `a` and 2 in `b`: per-thread counts scale with the work per thread (4× the threads, 1/4 "
        "of the instructions each: the same work per CTA), so they do not compare directly."
    )
    assert "1.5× the threads, 1/1.5 of the instructions" in note(2, 3)
    assert note(1, 2).startswith(" `num_warps` is 1 in `a` and 2 in `b`")
    for wa, wb in ((4, 4), (None, 4), (4, None), ("4", 8), (4, "8"), (0, 4), (4, 0), (-1, 4)):
        assert note(wa, wb) == "", (wa, wb)


def test_quoted_comparisons() -> None:
    assert quoted_comparisons("count 200 in `a` vs 408 in `b`") == [("200", "408")]
    assert quoted_comparisons("sm80 tile 4 x 2 in `a` vs 8 x 2 in `b`") == [("4 x 2", "8 x 2")]
    assert quoted_comparisons("Async copies (prologue/loop): 0/0 in `a` vs 0/0 in `b`") == [("0/0", "0/0")]
    assert quoted_comparisons("registers 40 vs 64, stages 2→3") == [("40", "64"), ("2", "3")]
    # a per-variant pair is not counted again as a bare "X vs Y"
    assert quoted_comparisons("width 128 in `a` vs 64 in `b`; 4 vs 2 warps") == [("128", "64"), ("4", "2")]
    # the per-variant pair is taken out whole: neither its parts nor the gap it leaves read as another pair
    assert quoted_comparisons("n 1 in `a` vs 2→3 in `b`") == [("1", "2→3")]
    assert quoted_comparisons("n 1 in `a` vs 2 in `b` vs 3") == [("1", "2")]
    assert states_no_difference("Async copies: 0/0 in `a` vs 0/0 in `b`")
    assert not states_no_difference("width 128 in `a` vs 64 in `b`")
    assert not states_no_difference("no values here")


def test_same_param_by_role() -> None:
    fb = make_facts("b")
    fb.peer_names = {"x_ptr": "src", "ld": "stride"}
    assert same_param(fb, "x_ptr", "src") and same_param(fb, "ld", "stride")
    assert not same_param(fb, "x_ptr", "x_ptr")  # paired by role with another name
    assert same_param(fb, "acc", "acc") and not same_param(fb, "acc", "src")  # locals: by name


def test_context_facts_counts_and_warps() -> None:
    """``Context.facts`` by variant name, ``_c`` (a stage's count, 0 when absent), ``_same_warps``."""
    fa = make_facts("a", counts={"ptx": {"mma.sync": 3}}, options={"num_warps": 4})
    fb = make_facts("b", counts={"sass": {"HMMA": 2}}, options={"num_warps": 8})
    ctx = make_context(fa, fb)
    assert ctx.facts("a") is fa and ctx.facts("b") is fb
    assert (_c(fa, "ptx", "mma.sync"), _c(fa, "ptx", "wgmma"), _c(fa, "sass", "HMMA"), _c(fb, "sass", "HMMA")) == (
        3,
        0,
        0,
        2,
    )
    assert not _same_warps(ctx)
    assert _same_warps(make_context(fa, make_facts("c", options={"num_warps": 4})))
    assert _same_warps(make_context(make_facts("d", options={}), make_facts("e", options={})))
    assert not _same_warps(make_context(make_facts("d", options={}), fa))
