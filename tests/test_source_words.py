"""What the source diff (``irdiff.diagnose.source``) *says*, in both orders of the variants: the wording of wrapped
calls (functions and methods), which called functions count as ``@triton.jit`` helpers, operand swaps under renames,
module paths vs methods, and the lines a change reaches (:meth:`SourceDiff.affected`) in either variant. Pure text:
no compile."""

from __future__ import annotations

import ast
import re
import sys
import textwrap
from pathlib import Path

import pytest

from irdiff.bundle import VariantResult
from irdiff.diagnose.source import SourceChange, SourceDiff, _index_kinds, diff_sources

HEAD = "import triton\nimport triton.language as tl\n\n\n"  # kernel sources start on line 5
BOTH = pytest.mark.parametrize("swap", [False, True], ids=["as-named", "swapped"])


def variant(tmp: Path, name: str, body: str, kernel: str = "k") -> VariantResult:
    d = tmp / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "kernel.py").write_text(HEAD + textwrap.dedent(body))
    return VariantResult(name=name, kernel=kernel, stages={"python": "kernel.py"}, directory=str(d))


def diff(tmp: Path, named: dict[str, str], swap: bool) -> tuple[SourceDiff, str, str]:
    """The diff of the two named sources, the first inspected unless ``swap``; with the names in that order."""
    (na, sa), (nb, sb) = named.items()
    if swap:
        (na, sa), (nb, sb) = (nb, sb), (na, sa)
    return diff_sources(variant(tmp, na, sa), variant(tmp, nb, sb)), na, nb


def said(sd: SourceDiff, a: str, b: str) -> list[str]:
    return [c.words(a, b) for c in sd.changes]


ROW = """
@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = {offs}
    v = {load}
    tl.store(y_ptr + offs, v, mask=offs < n)
"""
PLAIN = {"offs": "pid * BLOCK + tl.arange(0, BLOCK)", "load": "tl.load(x_ptr + offs, mask=offs < n)"}


@BOTH
def test_function_wrappers_are_worded_the_same_in_both_orders(tmp_path: Path, swap: bool) -> None:
    """Hints wrapped around the offsets: each wrapping call is one change, worded as what the hinted variant does
    (with the call's other arguments), whichever variant is inspected; the kind says the direction."""
    hinted = dict(PLAIN, offs="tl.max_contiguous(tl.multiple_of(pid * BLOCK + tl.arange(0, BLOCK), BLOCK), BLOCK)")
    sd, a, b = diff(tmp_path, {"plain": ROW.format(**PLAIN), "hinted": ROW.format(**hinted)}, swap)
    assert said(sd, a, b) == [
        "`hinted` wraps `pid * BLOCK + tl.arange(0, BLOCK)` in `tl.max_contiguous` (with BLOCK), `plain` does not",
        "`hinted` wraps `pid * BLOCK + tl.arange(0, BLOCK)` in `tl.multiple_of` (with BLOCK), `plain` does not",
    ]
    kind = "call-removed" if a == "hinted" else "call-added"
    assert [(c.kind, c.name, c.line_a, c.line_b) for c in sd.changes] == [
        (kind, "tl.max_contiguous", 9, 9),
        (kind, "tl.multiple_of", 9, 9),
    ]


@BOTH
def test_wrapper_arguments_and_keywords_are_listed(tmp_path: Path, swap: bool) -> None:
    """``tl.clamp(v, lo, hi, propagate_nan=…)`` lists every argument after the wrapped one; ``tl.abs(v)`` has none
    (no parenthesis)."""
    clamped = dict(
        PLAIN, load="tl.clamp(tl.load(x_ptr + offs, mask=offs < n), -1.0, 1.0, propagate_nan=tl.PropagateNan.ALL)"
    )
    sd, a, b = diff(tmp_path, {"plain": ROW.format(**PLAIN), "clamped": ROW.format(**clamped)}, swap)
    assert said(sd, a, b) == [
        "`clamped` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.clamp` (with -1.0, 1.0, "
        "propagate_nan=tl.PropagateNan.ALL), `plain` does not"
    ]
    absolute = dict(PLAIN, load="tl.abs(tl.load(x_ptr + offs, mask=offs < n))")
    sd, a, b = diff(tmp_path / "abs", {"plain": ROW.format(**PLAIN), "absolute": ROW.format(**absolute)}, swap)
    assert said(sd, a, b) == ["`absolute` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `plain` does not"]


@BOTH
def test_method_wrapper_is_worded_as_applied(tmp_path: Path, swap: bool) -> None:
    """``tl.program_id(0).to(tl.int64, bitcast=False)``: a method applied to the expression, with its arguments."""
    src = ROW.replace("pid = tl.program_id(0)", "pid = {pid}")
    plain = src.format(pid="tl.program_id(0)", **PLAIN)
    wide = src.format(pid="tl.program_id(0).to(tl.int64, bitcast=False)", **PLAIN)
    sd, a, b = diff(tmp_path, {"plain": plain, "wide": wide}, swap)
    assert said(sd, a, b) == ["`wide` applies `.to(tl.int64, bitcast=False)` to `tl.program_id(0)`, `plain` does not"]
    (c,) = sd.changes
    assert c.kind == ("call-removed" if a == "wide" else "call-added") and c.line_a == c.line_b == 8
    assert c.name == "tl.program_id(0).to"


HELPERS = """
{imports}

def host_scale(v):
    return v * {host}


{deco}
def scale(v):
    return v * {factor}


@triton.jit
def k(x_ptr, n):
    offs = tl.arange(0, 16)
    tl.store(x_ptr + offs, scale(host_scale(tl.load(x_ptr + offs))))
"""


@pytest.mark.parametrize(
    ("imports", "deco"),
    [("", "@triton.jit(noinline=True)"), ("from triton import jit", "@jit"), ("", "@triton.jit")],
    ids=["jit-call", "bare-jit", "triton.jit"],
)
def test_called_jit_functions_are_compared_plain_python_is_not(tmp_path: Path, imports: str, deco: str) -> None:
    """A helper decorated ``@triton.jit(...)``, ``@jit`` or ``@triton.jit`` is compared with the kernel; a plain
    Python function it also calls is not a device function (not compared, whatever changes in it)."""
    a = HELPERS.format(imports=imports, deco=deco, host="2.0", factor="2.0")
    b = HELPERS.format(imports=imports, deco=deco, host="3.0", factor="4.0")
    for x, y in ((a, b), (b, a)):
        sd = diff_sources(variant(tmp_path, "A", x), variant(tmp_path, "B", y))
        assert sd.functions == [("k", "k"), ("scale", "scale")]
        (c,) = sd.changes
        assert (c.kind, c.function, c.old, c.new) == (
            ("constant-changed", "scale", "2.0", "4.0") if x is a else ("constant-changed", "scale", "4.0", "2.0")
        )


def test_source_change_to_json_round_trips(tmp_path: Path) -> None:
    sd, _, _ = diff(
        tmp_path,
        {"plain": ROW.format(**PLAIN), "plus": ROW.format(**PLAIN).replace("pid * BLOCK", "pid + BLOCK")},
        False,
    )
    (c,) = sd.changes
    data = c.to_json()
    assert data["kind"] == "op-changed" and data["line_a"] == 9 and data["old"] == "*" and data["new"] == "+"
    assert SourceChange(**data) == c


GATHER = """
@triton.jit
def k({src}, out, W, B: tl.constexpr):
    {i} = tl.arange(0, B)[:, None]
    {j} = tl.arange(0, B)[None, :]
    v = tl.load({src} + {addr})
    tl.store(out + {i} * W + {j}, v)
"""


@BOTH
def test_swap_under_renamed_locals(tmp_path: Path, swap: bool) -> None:
    """``i * W + j`` in one variant is ``c * W + r`` in the other, where ``i``/``j`` are called ``r``/``c`` (and
    ``src`` is ``inp``): the two indices trade places (a transposed load), named in the inspected variant's terms;
    the renames are not semantic."""
    old = GATHER.format(src="src", i="i", j="j", addr="i * W + j")
    new = GATHER.format(src="inp", i="r", j="c", addr="c * W + r")
    sd, a, b = diff(tmp_path, {"old": old, "new": new}, swap)
    (c,) = sd.semantic
    assert c.kind == "args-reordered" and c.line_a == c.line_b == 10
    assert c.name == ("i ↔ j" if a == "old" else "c ↔ r")
    renames = {(x.old, x.new) for x in sd.changes if x.kind == "renamed"}
    pairs = {("src", "inp"), ("i", "r"), ("j", "c")}
    assert renames == (pairs if a == "old" else {(y, x) for x, y in pairs})


GLOBAL_STRIDES = """
ROWS = 64
COLS = 1


@triton.jit
def k(src, out, B: tl.constexpr):
    i = tl.arange(0, B)[:, None]
    j = tl.arange(0, B)[None, :]
    v = tl.load(src + {addr})
    tl.store(out + i * B + j, v)
"""


@BOTH
def test_swapped_module_constants(tmp_path: Path, swap: bool) -> None:
    """Two module-level strides trade places (not locals, so no renaming applies): named in sorted order."""
    sd, a, b = diff(
        tmp_path,
        {
            "rows": GLOBAL_STRIDES.format(addr="i * ROWS + j * COLS"),
            "cols": GLOBAL_STRIDES.format(addr="i * COLS + j * ROWS"),
        },
        swap,
    )
    (c,) = sd.changes
    assert (c.kind, c.name) == ("args-reordered", "COLS ↔ ROWS")
    assert c.words(a, b).startswith("`COLS` and `ROWS` swapped: `v = tl.load(src + ")


@BOTH
def test_module_path_vs_method_of_a_value(tmp_path: Path, swap: bool) -> None:
    """``tl.extra.cuda.libdevice.exp`` vs ``tl.math.exp`` is another function (named whole); ``x.to(…)`` vs
    ``y.to(…)`` is the same method on another value: the statement differs, no call changed."""
    body = """
    @triton.jit
    def k(x_ptr, y_ptr, o_ptr):
        offs = tl.arange(0, 16)
        x = tl.load(x_ptr + offs)
        y = tl.load(y_ptr + offs)
        tl.store(o_ptr + offs, {fn}({val}.to(tl.float32)))
    """
    sd, a, b = diff(
        tmp_path,
        {
            "libdevice": body.format(fn="tl.extra.cuda.libdevice.exp", val="x"),
            "math": body.format(fn="tl.math.exp", val="x"),
        },
        swap,
    )
    (c,) = sd.changes
    names = {"libdevice": "tl.extra.cuda.libdevice.exp", "math": "tl.math.exp"}
    assert (c.kind, c.old, c.new) == ("call-changed", names[a], names[b])
    sd, a, b = diff(
        tmp_path / "m", {"x": body.format(fn="tl.exp", val="x"), "y": body.format(fn="tl.exp", val="y")}, swap
    )
    assert [x.kind for x in sd.changes] == ["statement"] and sd.changes[0].line_a == 11


LOOP = """
@triton.jit
def k(x_ptr, y_ptr, R):
    offs = tl.arange(0, 16)
    w = tl.zeros((16,), tl.float32)
    v = tl.zeros((16,), tl.float32)
    for r in range(0, R):
        tl.store(y_ptr + r * 16 + offs, w)
        w = v * 2.0
        v = tl.load(
            x_ptr + r * 16 + offs,
        ){extra}
    tl.store(y_ptr + offs, tl.zeros((16,), tl.float32))
"""


def test_affected_follows_loop_carried_values_in_either_variant(tmp_path: Path) -> None:
    """``v`` (loaded on lines 14-16 in ``a``) feeds ``w`` (line 13), which the store on line 12 reads in the next
    iteration (a second pass over the loop body); the statements after the loop do not use them. ``b`` has one
    more statement before the loop, so its lines are one further down."""
    a = LOOP.format(extra="")
    b = a.replace("    offs = tl.arange(0, 16)\n", "    offs = tl.arange(0, 16)\n    n = R * 16\n", 1)
    sd = diff_sources(variant(tmp_path, "a", a), variant(tmp_path, "b", b))
    assert sd.affected("a", {14}) == {12, 13, 14, 15, 16}
    assert sd.affected("b", {15}) == {13, 14, 15, 16, 17}
    assert sd.affected("b", {9}) == {9}  # `n` is never read
    assert sd.affected("a", {13}) == {12, 13}  # `w` reaches only the store
    # an update in place (line 17) reaches what reads the value, not the statements between
    c = LOOP.format(extra="\n        v += 1.0")
    sd = diff_sources(variant(tmp_path, "c", c), variant(tmp_path, "d", c))
    assert sd.affected("a", {17}) == {12, 13, 17}
    # a value read only by the statement that updates it reaches nothing else
    d = LOOP.replace("    tl.store(y_ptr + offs, tl.zeros((16,), tl.float32))\n", "    count = 0\n    count += 1\n")
    sd = diff_sources(variant(tmp_path, "e", d.format(extra="")), variant(tmp_path, "f", d.format(extra="")))
    assert sd.affected("a", {18}) == {18}


# -- every kind of change, worded per variant, in both orders ------------------------------------------------------
# Each expected row is (kind, line_a, line_b, name, old, new, words(inspected, baseline)); the second list is the same
# pair with the variants swapped. Checked by reading: each sentence names the right variant, the right direction and
# the right line of each variant's kernel.py.
SIG_A = """
@triton.jit
def k(x_ptr, y_ptr, n, eps=1e-5, BLOCK: tl.constexpr = 128):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) + eps, mask=offs < n)
"""
SIG_B = """
@triton.heuristics({"BLOCK": lambda args: 256})
@triton.jit(do_not_specialize=["n"])
def k(x_ptr, ks0, y_ptr, n: tl.int64, eps=1e-6, BLOCK: tl.constexpr = 128):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) + eps, mask=offs < n)
"""

EXPR = """
ROWS = 64
COLS = 1


@triton.jit
def k(x_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = {cmp}
    v = tl.load(x_ptr + offs * {stride}, mask=m, other={other}, eviction_policy={ev})
    w = {arith}
    z = {unary}
    q = (v > 0) {boolop} (w > 0)
    tl.store(y_ptr + offs, tl.clamp(w.to({dt}), -1.0, 1.0, propagate_nan=tl.PropagateNan.{nan}) + z, mask=m)
"""
EA = dict(
    cmp="offs < n",
    stride="ROWS",
    other="0.0",
    ev='"evict_first"',
    arith="v * 2 + eps",
    unary="-v",
    boolop="&",
    dt="tl.float16",
    nan="ALL",
)
EB = dict(
    cmp="offs <= n",
    stride="COLS",
    other="eps",
    ev='"evict_last"',
    arith="v * 2 - eps",
    unary="~v",
    boolop="|",
    dt="tl.bfloat16",
    nan="NONE",
)
C = dict(EA, arith="v * 2", other="0", unary="tl.exp(v)")
D = dict(EA, arith="v * 2 + 1.0", other="0.0", unary="tl.exp2(v)")
E = dict(EA, arith="v / eps", unary="tl.sum(v, 0)")
F = dict(EA, arith="tl.div_rn(v, eps)", unary="tl.sum(v, 0, keep_dims=True)")
G = dict(EA, arith="v * eps", unary="tl.maximum(v, w)")
H = dict(EA, arith="w + n", unary="tl.maximum(v)")
BODY_A = """
@triton.jit
def k(x_ptr, y_ptr, R, n):
    \"\"\"Row sums.\"\"\"
    offs = tl.arange(0, 16)
    scale = tl.load(x_ptr)
    acc = tl.zeros((16,), tl.float32)
    for r in range(0, R):
        a = tl.load(x_ptr + r * 16 + offs)
        b = tl.load(y_ptr + r * 16 + offs)
        acc += a * b
    i = 0
    while i < n:
        i += 1
    if n > 4:
        acc = acc * scale
    tl.store(y_ptr + offs, acc)
"""
BODY_B = """
@triton.jit
def k(x_ptr, y_ptr, R, n):
    \"\"\"Row sums, scaled.\"\"\"
    acc = tl.zeros((16,), tl.float32)
    offs = tl.arange(0, 16)
    for r in range(1, R):
        b = tl.load(y_ptr + r * 16 + offs)
        a = tl.load(x_ptr + r * 16 + offs)
        scale = tl.load(x_ptr)
        acc += a * b
    i = 0
    while i <= n:
        i += 1
    if n > 8:
        acc = acc * scale
    tl.debug_barrier()
    tl.store(y_ptr + offs, acc)
"""

BODY_B2 = BODY_B.replace(
    "        b = tl.load(y_ptr + r * 16 + offs)\n        a = tl.load(x_ptr + r * 16 + offs)\n",
    "        a = tl.load(x_ptr + r * 16 + offs)\n        b = tl.load(y_ptr + r * 16 + offs)\n",
)
REORDERED = """
@triton.jit
def k(a_ptr, b_ptr, c_ptr):
    r = tl.arange(0, 16)
    a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
    b = tl.load(b_ptr + r[:, None] * 16 + r[None, :])
    c = tl.dot({ab}, out_dtype=tl.float32)
    c = tl.clamp(c * {two}, -1.0, 1.0, tl.PropagateNan.{nan})
    tl.store(c_ptr + r[:, None] * 16 + r[None, :], c)
"""
PARAMS = [("x_ptr", "x_ptr"), (None, "ks0"), ("y_ptr", "y_ptr"), ("n", "n"), ("eps", "eps"), ("BLOCK", "BLOCK")]
CASES = {
    "signature": (SIG_A, SIG_B, PARAMS),
    "decorator_keyword": (
        SIG_A.replace("@triton.jit", '@triton.jit(do_not_specialize=["eps"])'),
        SIG_A.replace("@triton.jit", '@triton.jit(do_not_specialize=["n"])'),
        None,
    ),
    "expressions": (EXPR.format(**EA), EXPR.format(**EB), None),
    "operands": (EXPR.format(**C), EXPR.format(**D), None),
    "calls": (EXPR.format(**E), EXPR.format(**F), None),
    "arguments": (EXPR.format(**G), EXPR.format(**H), None),
    "statements": (BODY_A, BODY_B2, None),
    "reordered": (
        REORDERED.format(ab="a, b", two="2", nan="ALL"),
        REORDERED.format(ab="b, a", two="2.0", nan="NONE"),
        None,
    ),
}
EXPECTED = {
    "reordered": (
        [
            (
                "args-reordered",
                11,
                11,
                "tl.dot",
                "a, b",
                "b, a",
                "arguments of `tl.dot` reordered: `a, b` in `old`, `b, a` in `new`",
            ),
            ("constant-changed", 12, 12, "2.0", "2", "2.0", "constant `2` in `old` vs `2.0` in `new`"),
            (
                "call-changed",
                12,
                12,
                "tl.PropagateNan.NONE",
                "tl.PropagateNan.ALL",
                "tl.PropagateNan.NONE",
                "name `tl.PropagateNan.ALL` in `old` vs `tl.PropagateNan.NONE` in `new`",
            ),
        ],
        [
            (
                "args-reordered",
                11,
                11,
                "tl.dot",
                "b, a",
                "a, b",
                "arguments of `tl.dot` reordered: `b, a` in `new`, `a, b` in `old`",
            ),
            ("constant-changed", 12, 12, "2", "2.0", "2", "constant `2.0` in `new` vs `2` in `old`"),
            (
                "call-changed",
                12,
                12,
                "tl.PropagateNan.ALL",
                "tl.PropagateNan.NONE",
                "tl.PropagateNan.ALL",
                "name `tl.PropagateNan.NONE` in `new` vs `tl.PropagateNan.ALL` in `old`",
            ),
        ],
    ),
    "signature": (
        [
            ("statement", None, 8, "ks0", "", "ks0", "parameter `ks0` only in `new`"),
            ("annotation", 7, 8, "n", "", "tl.int64", "`n` is annotated `(nothing)` in `old` and `tl.int64` in `new`"),
            ("annotation", 7, 8, "eps", "1e-05", "1e-06", "default of `eps`: `1e-05` in `old`, `1e-06` in `new`"),
            (
                "annotation",
                6,
                7,
                "triton.jit",
                "triton.jit",
                "triton.jit(do_not_specialize=['n'])",
                "decorator `@triton.jit` differs",
            ),
            (
                "annotation",
                7,
                6,
                "triton.heuristics",
                "",
                "triton.heuristics({'BLOCK': lambda args: 256})",
                "decorator `@triton.heuristics` only in `new`",
            ),
        ],
        [
            ("statement", 8, None, "ks0", "ks0", "", "parameter `ks0` only in `new`"),
            ("annotation", 8, 7, "n", "tl.int64", "", "`n` is annotated `tl.int64` in `new` and `(nothing)` in `old`"),
            ("annotation", 8, 7, "eps", "1e-06", "1e-05", "default of `eps`: `1e-06` in `new`, `1e-05` in `old`"),
            (
                "annotation",
                6,
                7,
                "triton.heuristics",
                "triton.heuristics({'BLOCK': lambda args: 256})",
                "",
                "decorator `@triton.heuristics` only in `new`",
            ),
            (
                "annotation",
                7,
                6,
                "triton.jit",
                "triton.jit(do_not_specialize=['n'])",
                "triton.jit",
                "decorator `@triton.jit` differs",
            ),
        ],
    ),
    "decorator_keyword": (
        [
            (
                "kwarg-changed",
                6,
                6,
                "do_not_specialize",
                "['eps']",
                "['n']",
                "`triton.jit` keyword `do_not_specialize=['eps']` in `old`, `do_not_specialize=['n']` in `new`",
            ),
        ],
        [
            (
                "kwarg-changed",
                6,
                6,
                "do_not_specialize",
                "['n']",
                "['eps']",
                "`triton.jit` keyword `do_not_specialize=['n']` in `new`, `do_not_specialize=['eps']` in `old`",
            ),
        ],
    ),
    "expressions": (
        [
            ("op-changed", 13, 13, "< → <=", "<", "<=", "comparison `<` in `old` vs `<=` in `new` (`offs <= n`)"),
            ("call-changed", 14, 14, "COLS", "ROWS", "COLS", "`ROWS` in `old` vs `COLS` in `new`"),
            ("statement", 14, 14, "", "", "", "`0.0` in `old` vs `eps` in `new`"),
            (
                "kwarg-changed",
                14,
                14,
                "eviction_policy",
                "'evict_first'",
                "'evict_last'",
                "`tl.load` keyword `eviction_policy='evict_first'` in `old`, `eviction_policy='evict_last'` in `new`",
            ),
            ("op-changed", 15, 15, "+ → -", "+", "-", "operator `+` in `old` vs `-` in `new` (`v * 2 - eps`)"),
            ("op-changed", 16, 16, "- → ~", "-", "~", "operator `-` in `old` vs `~` in `new` (`~v`)"),
            ("op-changed", 17, 17, "& → |", "&", "|", "operator `&` in `old` vs `|` in `new` (`(v > 0) | (w > 0)`)"),
            (
                "dtype-changed",
                18,
                18,
                "tl.bfloat16",
                "tl.float16",
                "tl.bfloat16",
                "dtype `tl.float16` in `old` vs `tl.bfloat16` in `new`",
            ),
            (
                "kwarg-changed",
                18,
                18,
                "propagate_nan",
                "tl.PropagateNan.ALL",
                "tl.PropagateNan.NONE",
                "`tl.clamp` keyword `propagate_nan=tl.PropagateNan.ALL` in `old`, `propagate_nan=tl.PropagateNan.NONE` in `new`",
            ),
        ],
        [
            ("op-changed", 13, 13, "<= → <", "<=", "<", "comparison `<=` in `new` vs `<` in `old` (`offs < n`)"),
            ("call-changed", 14, 14, "ROWS", "COLS", "ROWS", "`COLS` in `new` vs `ROWS` in `old`"),
            ("statement", 14, 14, "", "", "", "`eps` in `new` vs `0.0` in `old`"),
            (
                "kwarg-changed",
                14,
                14,
                "eviction_policy",
                "'evict_last'",
                "'evict_first'",
                "`tl.load` keyword `eviction_policy='evict_last'` in `new`, `eviction_policy='evict_first'` in `old`",
            ),
            ("op-changed", 15, 15, "- → +", "-", "+", "operator `-` in `new` vs `+` in `old` (`v * 2 + eps`)"),
            ("op-changed", 16, 16, "~ → -", "~", "-", "operator `~` in `new` vs `-` in `old` (`-v`)"),
            ("op-changed", 17, 17, "| → &", "|", "&", "operator `|` in `new` vs `&` in `old` (`(v > 0) & (w > 0)`)"),
            (
                "dtype-changed",
                18,
                18,
                "tl.float16",
                "tl.bfloat16",
                "tl.float16",
                "dtype `tl.bfloat16` in `new` vs `tl.float16` in `old`",
            ),
            (
                "kwarg-changed",
                18,
                18,
                "propagate_nan",
                "tl.PropagateNan.NONE",
                "tl.PropagateNan.ALL",
                "`tl.clamp` keyword `propagate_nan=tl.PropagateNan.NONE` in `new`, `propagate_nan=tl.PropagateNan.ALL` in `old`",
            ),
        ],
    ),
    "operands": (
        [
            (
                "kwarg-changed",
                14,
                14,
                "other",
                "0",
                "0.0",
                "`tl.load` keyword `other=0` in `old`, `other=0.0` in `new`",
            ),
            ("statement", 15, 15, "", "", "", "`v * 2` in `old` is `v * 2 + 1.0` in `new`"),
            ("call-changed", 16, 16, "tl.exp2", "tl.exp", "tl.exp2", "`tl.exp` in `old` vs `tl.exp2` in `new`"),
        ],
        [
            (
                "kwarg-changed",
                14,
                14,
                "other",
                "0.0",
                "0",
                "`tl.load` keyword `other=0.0` in `new`, `other=0` in `old`",
            ),
            ("statement", 15, 15, "", "", "", "`v * 2 + 1.0` in `new` is `v * 2` in `old`"),
            ("call-changed", 16, 16, "tl.exp", "tl.exp2", "tl.exp", "`tl.exp2` in `new` vs `tl.exp` in `old`"),
        ],
    ),
    "calls": (
        [
            (
                "op-changed",
                15,
                15,
                "/ → tl.div_rn",
                "/",
                "tl.div_rn",
                "`v / eps` in `old` is `tl.div_rn(v, eps)` in `new`",
            ),
            (
                "kwarg-changed",
                16,
                16,
                "keep_dims",
                "",
                "True",
                "`tl.sum` has `keep_dims=True` in `new`, no `keep_dims` in `old` (the default)",
            ),
        ],
        [
            (
                "op-changed",
                15,
                15,
                "tl.div_rn → /",
                "tl.div_rn",
                "/",
                "`tl.div_rn(v, eps)` in `new` is `v / eps` in `old`",
            ),
            (
                "kwarg-changed",
                16,
                16,
                "keep_dims",
                "True",
                "",
                "`tl.sum` has `keep_dims=True` in `new`, no `keep_dims` in `old` (the default)",
            ),
        ],
    ),
    "arguments": (
        [
            ("statement", 15, 15, "", "", "", "`v * eps` in `old` is `w + n` in `new`"),
            ("statement", 16, 16, "tl.maximum", "w", "", "argument `w` of `tl.maximum` only in `old`"),
        ],
        [
            ("statement", 15, 15, "", "", "", "`w + n` in `new` is `v * eps` in `old`"),
            ("statement", 16, 16, "tl.maximum", "", "w", "argument `w` of `tl.maximum` only in `old`"),
        ],
    ),
    "statements": (
        [
            (
                "moved",
                10,
                14,
                "scale = tl.load(x_ptr)",
                "loop depth 0",
                "loop depth 1",
                "`scale = tl.load(x_ptr)` is at loop depth 0 in `old` (line 10) and 1 in `new` (line 14): moved into the loop",
            ),
            (
                "moved",
                11,
                9,
                "acc = tl.zeros((16,), tl.float32)",
                "loop depth 0",
                "loop depth 0",
                "`acc = tl.zeros((16,), tl.float32)` is at loop depth 0 in `old` (line 11) and 0 in `new` (line 9): moved to another place",
            ),
            ("constant-changed", 12, 11, "1", "0", "1", "constant `0` in `old` vs `1` in `new`"),
            ("op-changed", 17, 17, "< → <=", "<", "<=", "comparison `<` in `old` vs `<=` in `new` (`i <= n`)"),
            ("constant-changed", 19, 19, "8", "4", "8", "constant `4` in `old` vs `8` in `new`"),
            ("statement", None, 21, "", "", "", "statement `tl.debug_barrier()` only in `new`"),
        ],
        [
            (
                "moved",
                10,
                9,
                "offs = tl.arange(0, 16)",
                "loop depth 0",
                "loop depth 0",
                "`offs = tl.arange(0, 16)` is at loop depth 0 in `new` (line 10) and 0 in `old` (line 9): moved to another place",
            ),
            (
                "moved",
                14,
                10,
                "scale = tl.load(x_ptr)",
                "loop depth 1",
                "loop depth 0",
                "`scale = tl.load(x_ptr)` is at loop depth 1 in `new` (line 14) and 0 in `old` (line 10): moved out of the loop",
            ),
            ("constant-changed", 11, 12, "0", "1", "0", "constant `1` in `new` vs `0` in `old`"),
            ("op-changed", 17, 17, "<= → <", "<=", "<", "comparison `<=` in `new` vs `<` in `old` (`i < n`)"),
            ("constant-changed", 19, 19, "4", "8", "4", "constant `8` in `new` vs `4` in `old`"),
            ("statement", 21, None, "", "", "", "statement `tl.debug_barrier()` only in `new`"),
        ],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
@BOTH
def test_each_kind_is_worded_for_the_right_variant(tmp_path: Path, case: str, swap: bool) -> None:
    """``old`` and ``new`` differ in the signature (a parameter inserted, paired by role; an annotation; a default;
    decorators), in expressions (comparison, operators, a module constant, a keyword, a dtype), in operands and
    calls, and in statements (moved into a loop, reordered, added, loop bounds and tests): every change with its
    lines in both variants and its words, in both orders."""
    a, b, params = CASES[case]
    na, nb = ("new", "old") if swap else ("old", "new")
    if swap:
        a, b = b, a
        params = [(y, x) for x, y in params] if params else None
    sd = diff_sources(variant(tmp_path, na, a), variant(tmp_path, nb, b), params)
    got = [(c.kind, c.line_a, c.line_b, c.name, c.old, c.new, c.words(na, nb)) for c in sd.semantic]
    assert got == EXPECTED[case][swap]


def test_affected_refuses_a_side_other_than_a_or_b(tmp_path: Path) -> None:
    """Any other side than ``"a"``/``"b"`` is an error (it used to be read as ``"b"``)."""
    a = LOOP.format(extra="")
    sd = diff_sources(variant(tmp_path, "a", a), variant(tmp_path, "b", a))
    assert sd.affected("b", {13}) == {12, 13}
    for bad in ("c", "A", "", "ab"):
        with pytest.raises(ValueError, match="side must be 'a' or 'b', not"):
            sd.affected(bad, {13})


def _index(text: str) -> ast.AST:
    """The index of the subscript expression ``text`` (``r[None, :]`` → its ``None, :`` tuple)."""
    node = ast.parse(text, mode="eval").body
    assert isinstance(node, ast.Subscript)
    return node.slice


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("r[None, :]", ("None", "slice")),
        ("r[:, None]", ("slice", "None")),
        ("x[i]", ("expr",)),
        ("x[0]", ("expr",)),
        ("x[...]", ("...",)),
        ("x[None]", ("None",)),
        ("x[:]", ("slice",)),
        ("x[1:n, ..., None, i + 1, 'k']", ("slice", "...", "None", "expr", "expr")),
    ],
)
def test_index_kinds_are_the_shape_of_the_index(text: str, kinds: tuple[str, ...]) -> None:
    """One kind per position of the index: a slice, a new axis (``None``), an ellipsis, or any other expression
    (constants other than ``None``/``...`` included); a single index is one position, a tuple one per element."""
    assert _index_kinds(_index(text)) == kinds


SUB = """
@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + {idx})
    tl.store(y_ptr + r, v)
"""


@BOTH
def test_a_changed_index_shape_is_the_subscript(tmp_path: Path, swap: bool) -> None:
    """``r[:, None]`` vs ``r[None, :]`` (the new axis on the other side): the subscript is the changed expression,
    one change per subscript (not the bare ``None`` and ``:`` tokens), on line 9 of both variants."""
    sd, a, b = diff(
        tmp_path,
        {"rows": SUB.format(idx="r[:, None] * n + r[None, :]"), "cols": SUB.format(idx="r[None, :] * n + r[:, None]")},
        swap,
    )
    first, second = ("`r[:, None]`", "`r[None, :]`") if a == "rows" else ("`r[None, :]`", "`r[:, None]`")
    assert said(sd, a, b) == [f"{first} in `{a}` vs {second} in `{b}`", f"{second} in `{a}` vs {first} in `{b}`"]
    assert [(c.kind, c.line_a, c.line_b, c.end_a, c.end_b) for c in sd.changes] == [("statement", 9, 9, 9, 9)] * 2


@BOTH
def test_an_index_of_the_same_shape_is_compared_inside(tmp_path: Path, swap: bool) -> None:
    """``tl.arange(0, BLOCK)[None, :]`` vs ``tl.arange(0, 2 * BLOCK)[None, :]``: the index keeps its shape, so the
    change is the innermost one (the range's end), not the whole subscript."""
    sd, a, b = diff(
        tmp_path,
        {
            "one": SUB.format(idx="tl.arange(0, BLOCK)[None, :]"),
            "two": SUB.format(idx="tl.arange(0, 2 * BLOCK)[None, :]"),
        },
        swap,
    )
    words = "`BLOCK` in `one` is `2 * BLOCK` in `two`" if a == "one" else "`2 * BLOCK` in `two` is `BLOCK` in `one`"
    assert said(sd, a, b) == [words]
    assert [(c.kind, c.line_a, c.line_b) for c in sd.changes] == [("statement", 9, 9)]


@BOTH
def test_an_attribute_of_a_computed_value(tmp_path: Path, swap: bool) -> None:
    """``tl.load(…).T`` vs ``tl.load(…).mT``: the attribute name of a value that is not a dotted name is a plain
    field, reported as the two names (no line of its own)."""
    sd, a, b = diff(tmp_path, {"t": SUB.format(idx="r).T + (0"), "mt": SUB.format(idx="r).mT + (0")}, swap)
    words = "`T` in `t` vs `mT` in `mt`" if a == "t" else "`mT` in `mt` vs `T` in `t`"
    assert said(sd, a, b) == [words]
    assert [(c.kind, c.line_a, c.line_b, c.name) for c in sd.changes] == [("statement", None, None, "")]


HELPER = """
@triton.jit
def h(v):
    {ret}


@triton.jit
def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + r)
    h(v)
    tl.store(y_ptr + r, v)
"""


@BOTH
def test_an_optional_part_on_one_side_is_the_enclosing_statement(tmp_path: Path, swap: bool) -> None:
    """``return`` vs ``return v`` (a field that is a node on one side, absent on the other): the enclosing
    statement is the change, with its line (8 in both), not a Python object's repr."""
    sd, a, b = diff(tmp_path, {"bare": HELPER.format(ret="return"), "value": HELPER.format(ret="return v")}, swap)
    words = (
        "`return` in `bare` vs `return v` in `value`" if a == "bare" else "`return v` in `value` vs `return` in `bare`"
    )
    assert said(sd, a, b) == [words]
    assert [(c.kind, c.function, c.line_a, c.line_b) for c in sd.changes] == [("statement", "h", 8, 8)]


MOVE = {
    "hoisted": """
@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    s = tl.load(x_ptr + r) * 2.0
    for i in range(n):
        acc += s
    tl.store(y_ptr + r, acc)
""",
    "extra": """
@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    extra = tl.load(y_ptr + r)
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(n):
        s = tl.load(x_ptr + r) * 2.0
        acc += s
    tl.store(y_ptr + r, acc)
""",
}


@BOTH
def test_a_move_after_a_removed_statement_is_still_a_move(tmp_path: Path, swap: bool) -> None:
    """``extra`` is only in one variant and comes before the loop whose load the other variant hoists: the load is
    one move (line 12 in the loop, line 10 before it), the extra statement one statement only on its side."""
    sd, a, b = diff(tmp_path, {"extra": MOVE["extra"], "hoisted": MOVE["hoisted"]}, swap)
    moved = [(c.kind, c.name, c.old, c.new) for c in sd.changes if c.kind == "moved"]
    depth = ("loop depth 1", "loop depth 0") if a == "extra" else ("loop depth 0", "loop depth 1")
    assert moved == [("moved", "s = tl.load(x_ptr + r) * 2.0", *depth)]
    lines = {
        (c.kind, c.line_a if a == "extra" else c.line_b, c.line_b if a == "extra" else c.line_a) for c in sd.changes
    }
    assert lines == {("moved", 12, 10), ("statement", 9, None)}
    assert [c.words(a, b) for c in sd.changes if c.kind == "statement"] == [
        f"statement `extra = tl.load(y_ptr + r)` only in `{a}`"
        if a == "extra"
        else "statement `extra = tl.load(y_ptr + r)` only in `extra`"
    ]


CHAIN = """
@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    m = {cmp}
    tl.store(y_ptr + r, tl.load(x_ptr + r), mask=m)
"""


@BOTH
def test_a_chained_comparison_lists_its_operators(tmp_path: Path, swap: bool) -> None:
    """``0 <= r < n`` vs ``0 < r <= n`` (a chained comparison, which Triton's code generator rejects, but the
    source diff reads any Python): the operators of each side, in order, separated by one space."""
    sd, a, b = diff(tmp_path, {"closed": CHAIN.format(cmp="0 <= r < n"), "open": CHAIN.format(cmp="0 < r <= n")}, swap)
    ops = {"closed": "<= <", "open": "< <="}
    assert [(c.kind, c.old, c.new, c.line_a, c.line_b) for c in sd.changes] == [("op-changed", ops[a], ops[b], 9, 9)]


DEEP = """
@triton.jit
def h(v):
    return v * {f}


@triton.jit
def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    v = h(tl.load(x_ptr + r))
    w = {deep}
    tl.store(y_ptr + r, w)
"""


@BOTH
def test_a_kernel_too_deep_to_compare_leaves_its_helpers_compared(tmp_path: Path, swap: bool) -> None:
    """A kernel with a 1500-term sum parses but is deeper than Python's recursion limit (1000) for the structural
    keys, so it cannot be compared; the ``@triton.jit`` helper it calls still is (its constant 2.0 vs 3.0, line 8)."""
    assert sys.getrecursionlimit() < 2000
    deep = " + ".join(["v"] * 1500)
    named = {"two": DEEP.format(f="2.0", deep=deep), "three": DEEP.format(f="3.0", deep=deep + " + v")}
    sd, a, b = diff(tmp_path, named, swap)
    assert sd.functions == [("k", "k"), ("h", "h")]
    consts = {"two": "2.0", "three": "3.0"}
    assert [(c.kind, c.function, c.line_a, c.line_b, c.old, c.new) for c in sd.changes] == [
        ("constant-changed", "h", 8, 8, consts[a], consts[b])
    ]


@BOTH
def test_a_source_too_deep_to_parse_is_a_note(tmp_path: Path, swap: bool) -> None:
    """A 50000-term sum is deeper than Python's parser allows (``ast.parse`` raises RecursionError): the diff is
    empty with a note naming the variant, as for any source that does not parse; it does not raise."""
    deep = " + ".join(["v"] * 50000)
    sd, a, b = diff(tmp_path, {"deep": DEEP.format(f="2.0", deep=deep), "flat": DEEP.format(f="2.0", deep="v")}, swap)
    assert sd.changes == []
    assert sd.functions == []
    assert sd.note == "`deep`: kernel source does not parse (nested too deeply for Python's parser, line None)"


# ------------------------------------------------------------------ corner cases of pairing and naming (issue 19)
# Each pair below is the smallest source that tells one decision of the comparison apart (found by mutation
# testing: the mutants of ``irdiff/diagnose/source.py`` named in the comments gave another output on it).

K = "@triton.jit\ndef k({params}):\n{body}"


def _k(params: str, *lines: str) -> str:
    return K.format(params=params, body="".join(f"    {ln}\n" for ln in lines))


def _sum(names: list[str]) -> str:
    return " + ".join(names)


_SWAP_NAMES = [f"C{c}" for c in "ABCDEFGHIJK"]  # module constants; with ``tl`` and ``y_ptr``: 13 names
_LONG = _sum(["u", "v"] * 20)  # longer than the 80 characters a source excerpt keeps
_REPEAT = "tl.store(x_ptr, 1.0)"

CORNERS: dict[str, tuple[str, str]] = {
    # _erase: only locals are erased for the alignment, so two stores of different module constants do not align
    # (and are not a move); erasing every name would align them and report a move and a changed name
    "global-names-kept": (
        _k("x_ptr, y_ptr", "tl.store(x_ptr, LO)", "tl.store(y_ptr, 1.0)"),
        _k("x_ptr, y_ptr", "tl.store(y_ptr, 1.0)", "tl.store(x_ptr, HI)"),
    ),
    # _flatten: the statements of a loop's ``else:`` are at the loop's own depth
    "loop-else": (
        _k(
            "x_ptr, y_ptr, n",
            "acc = 0.0",
            "for i in range(n):",
            "    acc += tl.load(x_ptr + i)",
            "else:",
            "    tl.store(y_ptr, acc)",
        ),
        _k(
            "x_ptr, y_ptr, n",
            "acc = 0.0",
            "for i in range(n):",
            "    acc += tl.load(x_ptr + i)",
            "else:",
            "    tl.store(y_ptr, acc + 1.0)",
        ),
    ),  # fmt: skip
    # _flatten: an ``if`` header pairs only with ``if`` headers, never with a plain statement
    "if-header": (
        _k("x_ptr, n", "i = 0", "if i < n:", "    tl.store(x_ptr, i)"),
        _k("x_ptr, n", "i = 0", "c = i < n", "tl.store(x_ptr, i)"),
    ),
    # _key: a lambda's parameter names are part of the key (reported, without a line)
    "lambda-parameter": (
        _k("x_ptr", "v = tl.reduce(tl.load(x_ptr), 0, lambda p, q: 0)", "tl.store(x_ptr, v)"),
        _k("x_ptr", "v = tl.reduce(tl.load(x_ptr), 0, lambda r, s: 0)", "tl.store(x_ptr, v)"),
    ),
    # _wrap_path: at most 8 nested wrapping calls are followed, functions and methods alike
    "eight-wrappers": (
        _k(
            "x_ptr, y_ptr, n",
            "offs = tl.arange(0, 16)",
            "v = tl.load(x_ptr + offs, mask=offs < n)",
            "tl.store(y_ptr + offs, v)",
        ),
        _k(
            "x_ptr, y_ptr, n",
            "offs = tl.arange(0, 16)",
            "v = " + "tl.abs(" * 8 + "tl.load(x_ptr + offs, mask=offs < n)" + ")" * 8,
            "tl.store(y_ptr + offs, v)",
        ),
    ),  # fmt: skip
    "nine-wrappers": (
        _k(
            "x_ptr, y_ptr, n",
            "offs = tl.arange(0, 16)",
            "v = tl.load(x_ptr + offs, mask=offs < n)",
            "tl.store(y_ptr + offs, v)",
        ),
        _k(
            "x_ptr, y_ptr, n",
            "offs = tl.arange(0, 16)",
            "v = " + "tl.abs(" * 9 + "tl.load(x_ptr + offs, mask=offs < n)" + ")" * 9,
            "tl.store(y_ptr + offs, v)",
        ),
    ),  # fmt: skip
    "nine-methods": (
        _k(
            "x_ptr, y_ptr, n",
            "offs = tl.arange(0, 16)",
            "v = tl.load(x_ptr + offs, mask=offs < n)",
            "tl.store(y_ptr + offs, v)",
        ),
        _k(
            "x_ptr, y_ptr, n",
            "offs = tl.arange(0, 16)",
            "v = tl.load(x_ptr + offs, mask=offs < n)" + ".ravel()" * 9,
            "tl.store(y_ptr + offs, v)",
        ),
    ),  # fmt: skip
    # _Cmp.body: a similarity of exactly 0.45 (quick ratio 0.5167, ratio 0.45) is below the threshold
    "similarity-0.45": (
        _k("x_ptr, y_ptr, v", "pid = tl.program_id(0)", "tl.store(y_ptr, v, mask=v > 0)"),
        _k("x_ptr, y_ptr, v", "pid = tl.program_id(0)", "tl.static_print('" + "x" * 66 + "')"),
    ),
    # _Cmp.body: equally similar candidates pair by their offset from the diagonal of the changed block
    "similarity-ties": (
        _k("x_ptr, y_ptr", "pid = tl.program_id(0)", "tl.store(x_ptr, 1.0)", "tl.store(y_ptr, 1.0)"),
        _k("x_ptr, y_ptr", "pid = tl.program_id(0)", "tl.debug_barrier()", "tl.store(y_ptr, 2.0)"),
    ),
    # _Cmp.body: no automatic junk: a statement repeated 200 times in a 201-statement function still aligns
    "repeated-200": (
        _k("x_ptr, y_ptr", *[_REPEAT] * 200, "tl.store(y_ptr, 2.0)"),
        _k("x_ptr, y_ptr", "tl.store(y_ptr, 2.0)", *[_REPEAT] * 200),
    ),
    # _Cmp.body: statements equal up to local names stay paired in order (the same assigned name elsewhere does
    # not pull them apart): two names traded are two renames
    "names-traded": (
        _k("x_ptr, y_ptr", "s = tl.load(x_ptr)", "t = tl.load(y_ptr)", "tl.store(x_ptr, s - t)"),
        _k("x_ptr, y_ptr", "t = tl.load(x_ptr)", "s = tl.load(y_ptr)", "tl.store(x_ptr, t - s)"),
    ),
    # _Cmp.body: the same assigned name adds 0.3, not enough for values under 15 % alike
    "same-name-unlike-values": (
        _k("x_ptr, y_ptr", "pid = tl.program_id(0)", "v = 0", "tl.store(y_ptr, v)"),
        _k(
            "x_ptr, y_ptr",
            "pid = tl.program_id(0)",
            "v = tl.load(x_ptr + pid * 16 + tl.arange(0, 16), mask=tl.arange(0, 16) < 8, other=0.0, "
            "eviction_policy='evict_last')",
            "tl.store(y_ptr, v)",
        ),
    ),  # fmt: skip
    # _Cmp.build_map: a parameter's positional partner counts 3 votes, each aligned statement 1: two statements
    # that pair the parameters the other way are outvoted (a swap), four are not (renames)
    "parameter-votes-2": (
        _k("src, dst", "tl.store(dst + 0, tl.load(src + 0))", "tl.store(dst + 1, tl.load(src + 1))"),
        _k("inp, out", "tl.store(inp + 0, tl.load(out + 0))", "tl.store(inp + 1, tl.load(out + 1))"),
    ),
    "parameter-votes-4": (
        _k("src, dst", *[f"tl.store(dst + {i}, tl.load(src + {i}))" for i in range(4)]),
        _k("inp, out", *[f"tl.store(inp + {i}, tl.load(out + {i}))" for i in range(4)]),
    ),
    # _Cmp.build_map: a repeated parameter name (``ast.parse`` accepts it) adds its votes up
    "repeated-parameter": (
        _k("x_ptr, x_ptr", "y_ptr = x_ptr + 1", *[f"tl.store(x_ptr + {i}, 1.0)" for i in range(5)]),
        _k("in_ptr, in_ptr", "out_ptr = in_ptr + 1", *[f"tl.store(out_ptr + {i}, 1.0)" for i in range(5)]),
    ),
    # _Cmp.build_map: one-to-one, the most voted name first: ``zz`` (2 votes) gets ``w``, ``aa`` (1) does not
    "one-partner": (
        _k("x_ptr", "zz = tl.load(x_ptr)", "tl.store(x_ptr, zz)", "aa = tl.load(x_ptr)"),
        _k("x_ptr", "w = tl.load(x_ptr)", "tl.store(x_ptr, w)", "w = tl.load(x_ptr)"),
    ),
    # _Cmp.build_map: a statement whose local names do not pair up (a module name ``_`` erases like a local) is
    # skipped, the statements after it still vote
    "global-underscore": (
        _k("x_ptr, y_ptr", "tl.store(y_ptr, _)", "v = tl.load(x_ptr)", "tl.store(y_ptr, v)"),
        _k("x_ptr, y_ptr", "tl.store(y_ptr, x_ptr)", "w = tl.load(x_ptr)", "tl.store(y_ptr, w)"),
    ),
    # _Cmp.call: a module function and the same-named method of a value compare their objects (``tl`` vs ``v``)
    "function-vs-method": (
        _k("x_ptr, y_ptr", "v = tl.load(x_ptr)", "w = tl.exp(v)", "tl.store(y_ptr, w)"),
        _k("x_ptr, y_ptr", "v = tl.load(x_ptr)", "w = v.exp()", "tl.store(y_ptr, w)"),
    ),
    # _Cmp.call: a call of a lambda (no object to compare) compares its arguments only
    "lambda-call": (
        _k("x_ptr, y_ptr", "v = tl.load(x_ptr)", "w = (lambda t: t)(v + 1)", "tl.store(y_ptr, w)"),
        _k("x_ptr, y_ptr", "v = tl.load(x_ptr)", "w = (lambda t: t)(v + 2)", "tl.store(y_ptr, w)"),
    ),
    # _Cmp.call: the same method on computed values whose source excerpts (80 characters) look alike: the objects
    # are compared
    "method-of-long-value": (
        _k(
            "x_ptr, y_ptr",
            "u = tl.load(x_ptr)",
            "v = tl.load(y_ptr)",
            f"w = ({_LONG} + 1.0).to(tl.float32)",
            "tl.store(y_ptr, w)",
        ),
        _k(
            "x_ptr, y_ptr",
            "u = tl.load(x_ptr)",
            "v = tl.load(y_ptr)",
            f"w = ({_LONG} + 2.0).to(tl.float32)",
            "tl.store(y_ptr, w)",
        ),
    ),  # fmt: skip
    # _Cmp.expr: ``{**opts}`` vs ``{'k': opts}``: a dict key that is None on one side is one change without a line
    # (its words name the ``ast.Constant`` object, not its source: a wording gap, left as it is)
    "dict-unpacking": (
        _k("x_ptr, opts", "cfg = {**opts}", "tl.store(x_ptr, 1.0)"),
        _k("x_ptr, opts", "cfg = {'k': opts}", "tl.store(x_ptr, 1.0)"),
    ),
    # _Cmp.expr: an attribute of a computed value vs of a name: the objects are compared, no name changed
    "attribute-of-computed-value": (
        _k("x_ptr, y_ptr", "u = tl.load(x_ptr)", "v = tl.load(y_ptr)", "t = (u + v).T", "tl.store(y_ptr, t)"),
        _k("x_ptr, y_ptr", "u = tl.load(x_ptr)", "v = tl.load(y_ptr)", "t = v.T", "tl.store(y_ptr, t)"),
    ),
    # _Cmp.expr: a module constant vs a local: no changed name, the statement is the change
    "global-vs-local": (
        _k("x_ptr, y_ptr", "s = tl.load(x_ptr)", "tl.store(y_ptr, SCALE)"),
        _k("x_ptr, y_ptr", "s = tl.load(x_ptr)", "tl.store(y_ptr, s)"),
    ),
    # _Cmp.expr: a slice bound on one side only does not stop the comparison of the next bound
    "slice-bounds": (
        _k("x_ptr, y_ptr", "v = tl.load(x_ptr)", "tl.store(y_ptr, v[:8])"),
        _k("x_ptr, y_ptr", "v = tl.load(x_ptr)", "tl.store(y_ptr, v[1:16])"),
    ),
    # _Cmp.ka: without parameters (an empty rename map) arguments are still compared as written
    "no-parameters": (_k("", "tl.static_print(A, B)"), _k("", "tl.static_print(B, A)")),
    # _Cmp.keywords: a keyword value equal up to a renamed local is no keyword change
    "keyword-renamed-local": (
        _k("x_ptr, y_ptr, n", "offs = tl.arange(0, 16)", "m = offs < n", "tl.store(y_ptr + offs, 1.0, mask=m)"),
        _k("x_ptr, y_ptr, n", "offs = tl.arange(0, 16)", "mm = offs < n", "tl.store(y_ptr + offs, 2.0, mask=mm)"),
    ),
    # _Cmp.keywords: the same keyword text naming another value (the definitions of ``m`` and ``q`` traded) is
    # compared inside, where ``m`` is ``m`` as text: only the renames and the constant are reported (that the mask
    # now holds the other value is not: a gap of the name comparison, left as it is)
    "keyword-same-text": (
        _k(
            "x_ptr, y_ptr, n",
            "offs = tl.arange(0, 16)",
            "m = offs < n",
            "q = offs < 8",
            "tl.store(y_ptr + offs, 1.0, mask=m)",
        ),
        _k(
            "x_ptr, y_ptr, n",
            "offs = tl.arange(0, 16)",
            "q = offs < n",
            "m = offs < 8",
            "tl.store(y_ptr + offs, 2.0, mask=m)",
        ),
    ),  # fmt: skip
    # _Cmp.renamed: one rename per name, the first found
    "renamed-twice": (_k("", "t = A + 1.0", "t = t * A"), _k("", "u = B + 1.0", "w = u * B")),
    # _Cmp.signature: decorators after a changed ``@triton.autotune`` are still compared
    "decorators": (
        "@triton.autotune(configs=CONFIGS, key=['n'])\n" + _k("x_ptr, n", "tl.store(x_ptr, 1.0)"),
        "@triton.autotune(configs=CONFIGS, key=['m'])\n"
        + _k("x_ptr, n", "tl.store(x_ptr, 1.0)").replace("@triton.jit", "@triton.jit(debug=True)"),
    ),
    # _Cmp.swapped: two names traded are looked for in statements of at most 12 names
    "swap-12-names": (
        _k("y_ptr", f"tl.store(y_ptr, {_sum(_SWAP_NAMES[:10])})"),
        _k("y_ptr", f"tl.store(y_ptr, {_sum([_SWAP_NAMES[1], _SWAP_NAMES[0], *_SWAP_NAMES[2:10]])})"),
    ),
    "swap-13-names": (
        _k("y_ptr", f"tl.store(y_ptr, {_sum(_SWAP_NAMES[:11])})"),
        _k("y_ptr", f"tl.store(y_ptr, {_sum([_SWAP_NAMES[1], _SWAP_NAMES[0], *_SWAP_NAMES[2:11]])})"),
    ),
}

# The changes each pair gives, as (kind, line in the inspected variant, line in the baseline, words), with ``x``
# inspected (first list) or ``y`` inspected (second list); a Python object's address (``dict-unpacking``: the
# words name an ``ast.Constant`` object, not its source) is left out.
CORNER_CHANGES: dict[str, tuple[list[tuple[str, int | None, int | None, str]], ...]] = {
    "global-names-kept": (
        [
            ("statement", 7, None, "statement `tl.store(x_ptr, LO)` only in `x`"),
            ("statement", None, 8, "statement `tl.store(x_ptr, HI)` only in `y`"),
        ],
        [
            ("statement", 8, None, "statement `tl.store(x_ptr, HI)` only in `y`"),
            ("statement", None, 7, "statement `tl.store(x_ptr, LO)` only in `x`"),
        ],
    ),
    "loop-else": (
        [
            ("statement", 11, 11, "`acc` in `x` is `acc + 1.0` in `y`"),
        ],
        [
            ("statement", 11, 11, "`acc + 1.0` in `y` is `acc` in `x`"),
        ],
    ),
    "if-header": (
        [
            ("statement", 8, None, "statement `i < n` only in `x`"),
            ("statement", None, 8, "statement `c = i < n` only in `y`"),
        ],
        [
            ("statement", 8, None, "statement `c = i < n` only in `y`"),
            ("statement", None, 8, "statement `i < n` only in `x`"),
        ],
    ),
    "lambda-parameter": (
        [
            ("statement", None, None, "`p` in `x` vs `r` in `y`"),
            ("statement", None, None, "`q` in `x` vs `s` in `y`"),
        ],
        [
            ("statement", None, None, "`r` in `y` vs `p` in `x`"),
            ("statement", None, None, "`s` in `y` vs `q` in `x`"),
        ],
    ),
    "eight-wrappers": (
        [
            ("call-added", 8, 8, "`y` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `x` does not"),
            ("call-added", 8, 8, "`y` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `x` does not"),
            ("call-added", 8, 8, "`y` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `x` does not"),
            ("call-added", 8, 8, "`y` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `x` does not"),
            ("call-added", 8, 8, "`y` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `x` does not"),
            ("call-added", 8, 8, "`y` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `x` does not"),
            ("call-added", 8, 8, "`y` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `x` does not"),
            ("call-added", 8, 8, "`y` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `x` does not"),
        ],
        [
            ("call-removed", 8, 8, "`y` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `x` does not"),
            ("call-removed", 8, 8, "`y` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `x` does not"),
            ("call-removed", 8, 8, "`y` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `x` does not"),
            ("call-removed", 8, 8, "`y` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `x` does not"),
            ("call-removed", 8, 8, "`y` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `x` does not"),
            ("call-removed", 8, 8, "`y` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `x` does not"),
            ("call-removed", 8, 8, "`y` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `x` does not"),
            ("call-removed", 8, 8, "`y` wraps `tl.load(x_ptr + offs, mask=offs < n)` in `tl.abs`, `x` does not"),
        ],
    ),
    "nine-wrappers": (
        [
            ("call-changed", 8, 8, "`tl.load` in `x` vs `tl.abs` in `y`"),
            (
                "op-changed",
                8,
                8,
                "`x_ptr + offs` in `x` is `tl.abs(tl.abs(tl.abs(tl.abs(tl.abs(tl.abs(tl.abs(tl.abs(tl.load(x_ptr + offs,...` in `y`",
            ),
            ("kwarg-changed", 8, 8, "`tl.load` has `mask=offs < n` in `x`, no `mask` in `y` (the default)"),
        ],
        [
            ("call-changed", 8, 8, "`tl.abs` in `y` vs `tl.load` in `x`"),
            (
                "op-changed",
                8,
                8,
                "`tl.abs(tl.abs(tl.abs(tl.abs(tl.abs(tl.abs(tl.abs(tl.abs(tl.load(x_ptr + offs,...` in `y` is `x_ptr + offs` in `x`",
            ),
            ("kwarg-changed", 8, 8, "`tl.load` has `mask=offs < n` in `x`, no `mask` in `y` (the default)"),
        ],
    ),
    "nine-methods": (
        [
            (
                "call-changed",
                8,
                8,
                "`tl.load` in `x` vs `tl.load(x_ptr + offs, mask=offs < n).ravel().ravel().ravel().ravel().ravel()....` in `y`",
            ),
            ("statement", 8, 8, "argument `x_ptr + offs` of `tl.load` only in `x`"),
            ("kwarg-changed", 8, 8, "`tl.load` has `mask=offs < n` in `x`, no `mask` in `y` (the default)"),
        ],
        [
            (
                "call-changed",
                8,
                8,
                "`tl.load(x_ptr + offs, mask=offs < n).ravel().ravel().ravel().ravel().ravel()....` in `y` vs `tl.load` in `x`",
            ),
            ("statement", 8, 8, "argument `x_ptr + offs` of `tl.load` only in `x`"),
            ("kwarg-changed", 8, 8, "`tl.load` has `mask=offs < n` in `x`, no `mask` in `y` (the default)"),
        ],
    ),
    "similarity-0.45": (
        [
            ("statement", 8, None, "statement `tl.store(y_ptr, v, mask=v > 0)` only in `x`"),
            (
                "statement",
                None,
                8,
                "statement `tl.static_print('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...` only in `y`",
            ),
        ],
        [
            (
                "statement",
                8,
                None,
                "statement `tl.static_print('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...` only in `y`",
            ),
            ("statement", None, 8, "statement `tl.store(y_ptr, v, mask=v > 0)` only in `x`"),
        ],
    ),
    "similarity-ties": (
        [
            ("call-changed", 8, 8, "`tl.store` in `x` vs `tl.debug_barrier` in `y`"),
            ("statement", 8, 8, "argument `x_ptr` of `tl.debug_barrier` only in `x`"),
            ("statement", 8, 8, "argument `1.0` of `tl.debug_barrier` only in `x`"),
            ("constant-changed", 9, 9, "constant `1.0` in `x` vs `2.0` in `y`"),
        ],
        [
            ("call-changed", 8, 8, "`tl.debug_barrier` in `y` vs `tl.store` in `x`"),
            ("statement", 8, 8, "argument `x_ptr` of `tl.store` only in `x`"),
            ("statement", 8, 8, "argument `1.0` of `tl.store` only in `x`"),
            ("constant-changed", 9, 9, "constant `2.0` in `y` vs `1.0` in `x`"),
        ],
    ),
    "repeated-200": (
        [
            (
                "moved",
                207,
                7,
                "`tl.store(y_ptr, 2.0)` is at loop depth 0 in `x` (line 207) and 0 in `y` (line 7): moved to another place",
            ),
        ],
        [
            (
                "moved",
                7,
                207,
                "`tl.store(y_ptr, 2.0)` is at loop depth 0 in `y` (line 7) and 0 in `x` (line 207): moved to another place",
            ),
        ],
    ),
    "names-traded": (
        [
            ("renamed", 7, 7, "`s` in `x` is called `t` in `y`"),
            ("renamed", 8, 8, "`t` in `x` is called `s` in `y`"),
        ],
        [
            ("renamed", 7, 7, "`t` in `y` is called `s` in `x`"),
            ("renamed", 8, 8, "`s` in `y` is called `t` in `x`"),
        ],
    ),
    "same-name-unlike-values": (
        [
            ("statement", 8, None, "statement `v = 0` only in `x`"),
            (
                "statement",
                None,
                8,
                "statement `v = tl.load(x_ptr + pid * 16 + tl.arange(0, 16), mask=tl.arange(0, 16) < 8, o...` only in `y`",
            ),
        ],
        [
            (
                "statement",
                8,
                None,
                "statement `v = tl.load(x_ptr + pid * 16 + tl.arange(0, 16), mask=tl.arange(0, 16) < 8, o...` only in `y`",
            ),
            ("statement", None, 8, "statement `v = 0` only in `x`"),
        ],
    ),
    "parameter-votes-2": (
        [
            (
                "args-reordered",
                7,
                7,
                "`dst` and `src` swapped: `tl.store(dst + 0, tl.load(src + 0))` in `x` vs `tl.store(inp + 0, tl.load(out + 0))` in `y`",
            ),
            (
                "args-reordered",
                8,
                8,
                "`dst` and `src` swapped: `tl.store(dst + 1, tl.load(src + 1))` in `x` vs `tl.store(inp + 1, tl.load(out + 1))` in `y`",
            ),
            ("renamed", 6, 6, "`src` in `x` is called `inp` in `y`"),
            ("renamed", 6, 6, "`dst` in `x` is called `out` in `y`"),
        ],
        [
            (
                "args-reordered",
                7,
                7,
                "`inp` and `out` swapped: `tl.store(inp + 0, tl.load(out + 0))` in `y` vs `tl.store(dst + 0, tl.load(src + 0))` in `x`",
            ),
            (
                "args-reordered",
                8,
                8,
                "`inp` and `out` swapped: `tl.store(inp + 1, tl.load(out + 1))` in `y` vs `tl.store(dst + 1, tl.load(src + 1))` in `x`",
            ),
            ("renamed", 6, 6, "`inp` in `y` is called `src` in `x`"),
            ("renamed", 6, 6, "`out` in `y` is called `dst` in `x`"),
        ],
    ),
    "parameter-votes-4": (
        [
            ("renamed", 7, 7, "`dst` in `x` is called `inp` in `y`"),
            ("renamed", 7, 7, "`src` in `x` is called `out` in `y`"),
        ],
        [
            ("renamed", 7, 7, "`inp` in `y` is called `dst` in `x`"),
            ("renamed", 7, 7, "`out` in `y` is called `src` in `x`"),
        ],
    ),
    "repeated-parameter": (
        [
            ("statement", 8, 8, "`tl.store(x_ptr + 0, 1.0)` in `x` vs `tl.store(out_ptr + 0, 1.0)` in `y`"),
            ("statement", 9, 9, "`tl.store(x_ptr + 1, 1.0)` in `x` vs `tl.store(out_ptr + 1, 1.0)` in `y`"),
            ("statement", 10, 10, "`tl.store(x_ptr + 2, 1.0)` in `x` vs `tl.store(out_ptr + 2, 1.0)` in `y`"),
            ("statement", 11, 11, "`tl.store(x_ptr + 3, 1.0)` in `x` vs `tl.store(out_ptr + 3, 1.0)` in `y`"),
            ("statement", 12, 12, "`tl.store(x_ptr + 4, 1.0)` in `x` vs `tl.store(out_ptr + 4, 1.0)` in `y`"),
            ("renamed", 6, 6, "`x_ptr` in `x` is called `in_ptr` in `y`"),
            ("renamed", 7, 7, "`y_ptr` in `x` is called `out_ptr` in `y`"),
        ],
        [
            ("statement", 7, 7, "`out_ptr = in_ptr + 1` in `y` vs `y_ptr = x_ptr + 1` in `x`"),
            ("statement", 8, 8, "`tl.store(out_ptr + 0, 1.0)` in `y` vs `tl.store(x_ptr + 0, 1.0)` in `x`"),
            ("statement", 9, 9, "`tl.store(out_ptr + 1, 1.0)` in `y` vs `tl.store(x_ptr + 1, 1.0)` in `x`"),
            ("statement", 10, 10, "`tl.store(out_ptr + 2, 1.0)` in `y` vs `tl.store(x_ptr + 2, 1.0)` in `x`"),
            ("statement", 11, 11, "`tl.store(out_ptr + 3, 1.0)` in `y` vs `tl.store(x_ptr + 3, 1.0)` in `x`"),
            ("statement", 12, 12, "`tl.store(out_ptr + 4, 1.0)` in `y` vs `tl.store(x_ptr + 4, 1.0)` in `x`"),
            ("renamed", 6, 6, "`in_ptr` in `y` is called `x_ptr` in `x`"),
        ],
    ),
    "one-partner": (
        [
            ("statement", 9, 9, "`aa = tl.load(x_ptr)` in `x` vs `w = tl.load(x_ptr)` in `y`"),
            ("renamed", 7, 7, "`zz` in `x` is called `w` in `y`"),
        ],
        [
            ("statement", 9, 9, "`w = tl.load(x_ptr)` in `y` vs `aa = tl.load(x_ptr)` in `x`"),
            ("renamed", 7, 7, "`w` in `y` is called `zz` in `x`"),
        ],
    ),
    "global-underscore": (
        [
            ("statement", 7, 7, "`tl.store(y_ptr, _)` in `x` vs `tl.store(y_ptr, x_ptr)` in `y`"),
            ("renamed", 8, 8, "`v` in `x` is called `w` in `y`"),
        ],
        [
            ("statement", 7, 7, "`tl.store(y_ptr, x_ptr)` in `y` vs `tl.store(y_ptr, _)` in `x`"),
            ("renamed", 8, 8, "`w` in `y` is called `v` in `x`"),
        ],
    ),
    "function-vs-method": (
        [
            ("statement", 8, 8, "argument `v` of `v.exp` only in `x`"),
        ],
        [
            ("statement", 8, 8, "argument `v` of `tl.exp` only in `x`"),
        ],
    ),
    "lambda-call": (
        [
            ("constant-changed", 8, 8, "constant `1` in `x` vs `2` in `y`"),
        ],
        [
            ("constant-changed", 8, 8, "constant `2` in `y` vs `1` in `x`"),
        ],
    ),
    "method-of-long-value": (
        [
            ("constant-changed", 9, 9, "constant `1.0` in `x` vs `2.0` in `y`"),
        ],
        [
            ("constant-changed", 9, 9, "constant `2.0` in `y` vs `1.0` in `x`"),
        ],
    ),
    "dict-unpacking": (
        [
            ("statement", None, None, "`None` in `x` vs `<ast.Constant object>` in `y`"),
        ],
        [
            ("statement", None, None, "`<ast.Constant object>` in `y` vs `None` in `x`"),
        ],
    ),
    "attribute-of-computed-value": (
        [
            ("statement", 9, 9, "`u + v` in `x` is `v` in `y`"),
        ],
        [
            ("statement", 9, 9, "`v` in `y` is `u + v` in `x`"),
        ],
    ),
    "global-vs-local": (
        [
            ("statement", 8, 8, "`tl.store(y_ptr, SCALE)` in `x` vs `tl.store(y_ptr, s)` in `y`"),
        ],
        [
            ("statement", 8, 8, "`tl.store(y_ptr, s)` in `y` vs `tl.store(y_ptr, SCALE)` in `x`"),
        ],
    ),
    "slice-bounds": (
        [
            ("statement", 8, 8, "`:8` in `x` vs `1:16` in `y`"),
            ("constant-changed", 8, 8, "constant `8` in `x` vs `16` in `y`"),
        ],
        [
            ("statement", 8, 8, "`1:16` in `y` vs `:8` in `x`"),
            ("constant-changed", 8, 8, "constant `16` in `y` vs `8` in `x`"),
        ],
    ),
    "no-parameters": (
        [
            ("args-reordered", 7, 7, "arguments of `tl.static_print` reordered: `A, B` in `x`, `B, A` in `y`"),
        ],
        [
            ("args-reordered", 7, 7, "arguments of `tl.static_print` reordered: `B, A` in `y`, `A, B` in `x`"),
        ],
    ),
    "keyword-renamed-local": (
        [
            ("constant-changed", 9, 9, "constant `1.0` in `x` vs `2.0` in `y`"),
            ("renamed", 8, 8, "`m` in `x` is called `mm` in `y`"),
        ],
        [
            ("constant-changed", 9, 9, "constant `2.0` in `y` vs `1.0` in `x`"),
            ("renamed", 8, 8, "`mm` in `y` is called `m` in `x`"),
        ],
    ),
    "keyword-same-text": (
        [
            ("constant-changed", 10, 10, "constant `1.0` in `x` vs `2.0` in `y`"),
            ("renamed", 8, 8, "`m` in `x` is called `q` in `y`"),
            ("renamed", 9, 9, "`q` in `x` is called `m` in `y`"),
        ],
        [
            ("constant-changed", 10, 10, "constant `2.0` in `y` vs `1.0` in `x`"),
            ("renamed", 8, 8, "`q` in `y` is called `m` in `x`"),
            ("renamed", 9, 9, "`m` in `y` is called `q` in `x`"),
        ],
    ),
    "renamed-twice": (
        [
            ("call-changed", 7, 7, "`A` in `x` vs `B` in `y`"),
            ("call-changed", 8, 8, "`A` in `x` vs `B` in `y`"),
            ("renamed", 7, 7, "`t` in `x` is called `u` in `y`"),
        ],
        [
            ("call-changed", 7, 7, "`B` in `y` vs `A` in `x`"),
            ("call-changed", 8, 8, "`B` in `y` vs `A` in `x`"),
            ("renamed", 7, 7, "`u` in `y` is called `t` in `x`"),
            ("renamed", 8, 8, "`w` in `y` is called `t` in `x`"),
        ],
    ),
    "decorators": (
        [
            ("kwarg-changed", 5, 5, "`triton.autotune` keyword `key=['n']` in `x`, `key=['m']` in `y`"),
            ("annotation", 6, 6, "decorator `@triton.jit` differs"),
        ],
        [
            ("kwarg-changed", 5, 5, "`triton.autotune` keyword `key=['m']` in `y`, `key=['n']` in `x`"),
            ("annotation", 6, 6, "decorator `@triton.jit` differs"),
        ],
    ),
    "swap-12-names": (
        [
            (
                "args-reordered",
                7,
                7,
                "`CA` and `CB` swapped: `tl.store(y_ptr, CA + CB + CC + CD + CE + CF + CG + CH + CI + CJ)` in `x` vs `tl.store(y_ptr, CB + CA + CC + CD + CE + CF + CG + CH + CI + CJ)` in `y`",
            ),
        ],
        [
            (
                "args-reordered",
                7,
                7,
                "`CA` and `CB` swapped: `tl.store(y_ptr, CB + CA + CC + CD + CE + CF + CG + CH + CI + CJ)` in `y` vs `tl.store(y_ptr, CA + CB + CC + CD + CE + CF + CG + CH + CI + CJ)` in `x`",
            ),
        ],
    ),
    "swap-13-names": (
        [
            ("call-changed", 7, 7, "`CA` in `x` vs `CB` in `y`"),
            ("call-changed", 7, 7, "`CB` in `x` vs `CA` in `y`"),
        ],
        [
            ("call-changed", 7, 7, "`CB` in `y` vs `CA` in `x`"),
            ("call-changed", 7, 7, "`CA` in `y` vs `CB` in `x`"),
        ],
    ),
}


@pytest.mark.parametrize("case", list(CORNERS))
@BOTH
def test_corner_cases_of_pairing_and_naming(tmp_path: Path, case: str, swap: bool) -> None:
    """Each of :data:`CORNERS` gives exactly the changes of :data:`CORNER_CHANGES` (kinds, 1-based lines of each
    variant's ``kernel.py``, words), in both orders: which statements are paired (threshold 0.45, ties by position,
    no automatic junk, the same-name bonus 0.3, ``if`` headers only with headers, a loop's ``else:``), which names
    rename (parameter votes 3, statement votes 1, one partner each, skipped statements), how deep wrappers are
    followed (8 calls), which changes the expression walk reports, and the 12-name limit of the swap search."""
    x, y = CORNERS[case]
    sd, a, b = diff(tmp_path, {"x": x, "y": y}, swap)
    got = [(c.kind, c.line_a, c.line_b, re.sub(r" at 0x[0-9a-f]+", "", c.words(a, b))) for c in sd.changes]
    assert got == CORNER_CHANGES[case][swap]
