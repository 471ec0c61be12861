"""What each source change *records* (``irdiff.diagnose.source``): which function is the kernel (``kernel_lines``),
which called functions are compared (same file, transitively, recorded from other files), every field of a change
(lines and last lines in both variants, the source lines, files, function names), the paired lines
(``SourceDiff.line_pairs``), the statements inside ``if``/``while``/``else``/``with`` bodies, and the words of the
rarer kinds — each checked against what the kernel source says, in both orders where the direction matters.
Pure text: no compile."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from irdiff.bundle import VariantResult
from irdiff.diagnose.source import SourceChange, SourceDiff, diff_sources

HEAD = "import triton\nimport triton.language as tl\n\n\n"  # a kernel source's own first line is line 5
BOTH = pytest.mark.parametrize("swap", [False, True], ids=["as-named", "swapped"])


def variant(tmp: Path, name: str, body: str, kernel: str = "k", **meta: Any) -> VariantResult:
    d = tmp / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "kernel.py").write_text(HEAD + textwrap.dedent(body))
    return VariantResult(
        name=name, kernel=kernel, stages={"python": "kernel.py"}, directory=str(d), metadata=dict(meta)
    )


def diff(tmp: Path, named: dict[str, str], swap: bool = False, **meta: dict[str, Any]) -> tuple[SourceDiff, str, str]:
    """The diff of the two named sources (the first inspected unless ``swap``), with the names in that order;
    ``meta[name]``: that variant's metadata."""
    (na, sa), (nb, sb) = named.items()
    if swap:
        (na, sa), (nb, sb) = (nb, sb), (na, sa)
    va = variant(tmp, na, sa, **meta.get(na, {}))
    vb = variant(tmp, nb, sb, **meta.get(nb, {}))
    return diff_sources(va, vb), na, nb


def record(c: SourceChange) -> tuple[Any, ...]:
    return (c.kind, c.function, c.function_b, c.line_a, c.end_a, c.line_b, c.end_b, c.text_a, c.text_b)


# ------------------------------------------------------------------------------------------------ the kernel


OLDER_AND_NEWER = """
@triton.jit
def k(x_ptr, n):
    tl.store(x_ptr + tl.arange(0, 16), tl.full((16,), 1.0, tl.float32))


@triton.jit
def _fill(x_ptr, v):
    tl.store(x_ptr + tl.arange(0, 16), tl.full((16,), v, tl.float32))


@triton.jit
{newer}
"""
NEWER = {
    "one-line": "def k(x_ptr, n): _fill(x_ptr, {c})",
    "two-lines": "def k(x_ptr, n):\n    _fill(x_ptr, {c})",
}


@pytest.mark.parametrize("form", list(NEWER))
@BOTH
def test_kernel_is_the_def_of_its_name_inside_its_recorded_lines(tmp_path: Path, form: str, swap: bool) -> None:
    """A file that defines ``k`` twice (an older kernel left above, as notebooks and reloaded modules do): the
    kernel compared is the ``k`` inside ``metadata["kernel_lines"]`` (lines 11-17 or 11-18: ``_fill``'s lines
    come first), not the first ``k`` of the file nor the first function in those lines."""
    src = OLDER_AND_NEWER.format(newer=NEWER[form])
    last = 17 if form == "one-line" else 18
    meta = {"kernel_lines": [11, last]}
    sd, a, b = diff(tmp_path, {"two": src.format(c="2.0"), "three": src.format(c="3.0")}, swap, two=meta, three=meta)
    assert sd.note == "" and sd.functions == [("k", "k"), ("_fill", "_fill")]
    (c,) = sd.changes
    value = {"two": "2.0", "three": "3.0"}
    assert (c.kind, c.function, c.old, c.new) == ("constant-changed", "k", value[a], value[b])
    assert c.line_a == c.line_b == last and c.text_a.endswith(f"_fill(x_ptr, {value[a]})")
    # without the recorded lines the first `k` (unchanged, line 7) is the kernel: nothing differs
    plain, _, _ = diff(tmp_path / "plain", {"two": src.format(c="2.0"), "three": src.format(c="3.0")}, swap)
    assert plain.functions == [("k", "k")] and plain.changes == []


CAPTURED = """
@triton.jit
def scale(v):
    return v * 2.0


def impl(x_ptr, n): tl.store(x_ptr + tl.arange(0, 16), scale(tl.load(x_ptr + tl.arange(0, 16))) + {c})


@triton.jit
def other(x_ptr):
    tl.store(x_ptr, 0.0)


k_fast = triton.jit(impl)
"""


@pytest.mark.parametrize("lines", [[11, 11], [11, 16]], ids=["its-own-line", "with-the-next-function"])
@BOTH
def test_kernel_named_otherwise_is_the_first_def_inside_its_lines(tmp_path: Path, lines: list[int], swap: bool) -> None:
    """``k_fast = triton.jit(impl)``: the kernel's name (``k_fast``) is no function of the file, so the kernel is
    the first function defined inside its recorded lines (``impl``, undecorated, on line 11), whatever follows it
    in those lines; without the lines it is not found (a note says so)."""
    meta = {"kernel_lines": lines}
    named = {"one": CAPTURED.format(c="1.0"), "half": CAPTURED.format(c="0.5")}
    sd, a, b = diff(tmp_path, named, swap, one=meta, half=meta)
    assert sd.functions == [("impl", "impl"), ("scale", "scale")]
    (c,) = sd.changes
    value = {"one": "1.0", "half": "0.5"}
    assert (c.kind, c.function, c.line_a, c.line_b, c.old, c.new) == (
        "constant-changed",
        "impl",
        11,
        11,
        value[a],
        value[b],
    )
    va, vb = (
        variant(tmp_path / "n", "one", named["one"], "k_fast"),
        variant(tmp_path / "n", "half", named["half"], "k_fast"),
    )
    missing = diff_sources(va, vb)
    assert missing.changes == [] and missing.note == "`one`: kernel function `k_fast` not found in its source"
    # recorded lines that hold no function (stale: the file was edited since) find no kernel either
    stale = {"kernel_lines": [1, 3]}
    va, vb = (
        variant(tmp_path / "s", "one", named["one"], "k_fast", **stale),
        variant(tmp_path / "s", "half", named["half"], "k_fast", **stale),
    )
    assert diff_sources(va, vb).note == "`one`: kernel function `k_fast` not found in its source"


# ------------------------------------------------------------------------------------------------ called functions


CHAIN = """
@triton.jit
def sigmoid(x):
    return 1.0 / (1.0 + tl.exp(-x))


@triton.jit
def inner(v):
    return v * {f}


@triton.jit
def outer(v):
    return inner(v) + 1.0


@triton.jit
def bias(v):
    return v + 0.5


@triton.jit
def k(x_ptr, n):
    offs = tl.arange(0, 16)
    v = outer(tl.load(x_ptr + offs))
    w = bias(v) + bias(v * 2.0)
    tl.store(x_ptr + offs, tl.sigmoid(w) + triton.language.sigmoid(v))
"""


@BOTH
def test_called_functions_transitively_once_each_not_triton_library(tmp_path: Path, swap: bool) -> None:
    """The kernel calls ``outer`` (which calls ``inner``) and ``bias`` twice: each compared once, in the order
    found (kernel first, then breadth first); ``tl.sigmoid``/``triton.language.sigmoid`` are Triton's, not the
    file's own ``@triton.jit`` ``sigmoid`` (not compared). The change two calls deep is found, in ``inner``."""
    sd, a, b = diff(tmp_path, {"two": CHAIN.format(f="2.0"), "four": CHAIN.format(f="4.0")}, swap)
    assert sd.note == ""
    assert sd.functions == [("k", "k"), ("outer", "outer"), ("bias", "bias"), ("inner", "inner")]
    (c,) = sd.changes
    value = {"two": "2.0", "four": "4.0"}
    assert record(c) == (
        "constant-changed",
        "inner",
        "inner",
        13,
        13,
        13,
        13,
        f"return v * {value[a]}",
        f"return v * {value[b]}",
    )
    assert (c.old, c.new, c.file_a, c.file_b) == (value[a], value[b], "", "")


KERNEL_CALLS_LIB = """
@triton.jit
def k(x_ptr, n):
    offs = tl.arange(0, 16)
    v = lib.broken(tl.load(x_ptr + offs))
    tl.store(x_ptr + offs, lib.scale(v, 2.0) + lib.scale(v, 0.5))
"""


def _lib(op: str, first_line: int | None, file: str | None) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "source": f"@triton.jit{'(noinline=True)' if op == '/' else ''}\ndef scale(v, f):\n    return v {op} f\n"
    }
    if first_line is not None:
        rec["first_line"] = first_line
    if file is not None:
        rec["file"] = file
    # recorded under the short name (as a helper's own callees are); the kernel calls it as `lib.scale`
    return {"lib.broken": {"source": "def broken(v:\n", "first_line": 3}, "scale": rec}


@pytest.mark.parametrize(
    ("first", "file", "line", "path"),
    [(30, "/x/lib.py", 32, "/x/lib.py"), (1, "/x/lib.py", 3, "/x/lib.py"), (None, None, 3, "<lib.scale>")],
    ids=["line-30", "line-1", "no-position"],
)
@BOTH
def test_recorded_function_lines_are_its_own_files(
    tmp_path: Path, first: int | None, file: str | None, line: int, path: str, swap: bool
) -> None:
    """A helper from another file, known from the compile worker's record: its changes carry that file and its
    lines there (``first_line`` + the line in its source; without a position, the line in the recorded source),
    with the text of those lines, in both variants; a record whose source does not parse is skipped (not the
    records after it). Called twice, the helper is compared once."""
    meta = {"mul": {"jit_functions": _lib("*", first, file)}, "div": {"jit_functions": _lib("/", first, file)}}
    sd, a, b = diff(tmp_path, {"mul": KERNEL_CALLS_LIB, "div": KERNEL_CALLS_LIB}, swap, **meta)
    assert sd.functions == [("k", "k"), ("scale", "scale")]
    deco, op = sd.changes
    top = line - 2  # the decorator, the record's first line
    jit = {"mul": "@triton.jit", "div": "@triton.jit(noinline=True)"}
    assert record(deco) == ("annotation", "scale", "scale", top, top, top, top, jit[a], jit[b])
    assert (deco.words(a, b), deco.name) == ("decorator `@triton.jit` differs", "triton.jit")
    sign = {"mul": "*", "div": "/"}
    assert record(op) == (
        "op-changed",
        "scale",
        "scale",
        line,
        line,
        line,
        line,
        f"return v {sign[a]} f",
        f"return v {sign[b]} f",
    )
    assert (op.old, op.new, op.file_a, op.file_b) == (sign[a], sign[b], path, path)
    assert sd.line_pairs == {8: 8, 9: 9, 10: 10}  # the kernel's own lines only (never the helper's)


HOME = """
@triton.jit
def scale(v, f):
    return v * f


@triton.jit
def k(x_ptr, n):
    offs = tl.arange(0, 16)
    v = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, scale(v, 2.0))
"""
MOVED_OUT = HOME.replace("@triton.jit\ndef scale(v, f):\n    return v * f\n\n\n", "")


@BOTH
def test_helper_moved_into_a_library_file(tmp_path: Path, swap: bool) -> None:
    """``scale`` defined in ``kernel.py`` in one variant and imported from ``/x/lib.py`` (recorded) in the other,
    now computing ``v / f``: compared by name, each side with its own file and lines; the paired lines and the
    statements' names (``line_pairs``, ``affected``) cover only the kernel's ``kernel.py`` lines."""
    rec = {
        "scale": {"file": "/x/lib.py", "first_line": 40, "source": "@triton.jit\ndef scale(v, f):\n    return v / f\n"}
    }
    sd, a, b = diff(tmp_path, {"home": HOME, "lib": MOVED_OUT}, swap, lib={"jit_functions": rec})
    assert sd.functions == [("k", "k"), ("scale", "scale")]
    (c,) = sd.changes
    where = {"home": (8, "", "return v * f"), "lib": (42, "/x/lib.py", "return v / f")}
    assert (c.kind, c.old, c.new) == ("op-changed", "*" if a == "home" else "/", "/" if a == "home" else "*")
    assert (c.line_a, c.file_a, c.text_a) == where[a] and (c.line_b, c.file_b, c.text_b) == where[b]
    # the kernel's statements are on lines 13-15 in `home`, 8-10 in `lib`
    kernel = {"home": (13, 14, 15), "lib": (8, 9, 10)}
    assert sd.line_pairs == dict(zip(kernel[a], kernel[b], strict=True))
    assert sorted(f.first for f in sd.flow_a if f.function == "k") == list(kernel[a])
    assert sorted(f.first for f in sd.flow_b if f.function == "k") == list(kernel[b])
    assert not any(f.function == "scale" for f in (sd.flow_b if a == "home" else sd.flow_a))


FLOWS = """
@triton.jit
def scale(x, f):
    v = x * f
    return v + {c}


@triton.jit
def k(x_ptr, n):
    v = tl.load(x_ptr + tl.arange(0, 16))
    w = scale(v, 2.0)
    tl.store(x_ptr + tl.arange(0, 16), v + w)
"""


def test_affected_lines_stay_in_their_function(tmp_path: Path) -> None:
    """The helper and the kernel both name a local ``v``: a change of the helper's ``v`` (line 8) reaches the
    helper's own use of it (line 9), never the kernel's lines that read the kernel's ``v`` (14-16)."""
    sd, _, _ = diff(tmp_path, {"a": FLOWS.format(c="1.0"), "b": FLOWS.format(c="0.0")})
    (c,) = sd.changes
    assert (c.function, c.line_a) == ("scale", 9)
    assert sd.affected("a", {8}) == {8, 9}
    assert sd.affected("b", {8}) == {8, 9}
    assert sd.affected("a", {14}) == {14, 15, 16}
    assert {f.function for f in sd.flow_a} == {"scale", "k"} == {f.function for f in sd.flow_b}


# ------------------------------------------------------------------------------------------------ every field


SPLIT = """
@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs,
                mask=offs < n)
    w = v * 2
    tl.store(y_ptr + offs, w, mask=offs < n)
"""
JOINED = """
@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)
    w = v * 2
    tl.store(y_ptr + offs,
             w,
             mask=offs < n)
"""


@BOTH
def test_change_on_a_split_line_records_both_spans(tmp_path: Path, swap: bool) -> None:
    """A ``.to(tl.float32)`` added to a load written over two lines in ``split`` and one in ``joined``: the change
    spans lines 9-10 in ``split`` and line 9 in ``joined``; the paired lines map each line of a statement to the
    other variant's line at the same offset (the last line when the other is shorter)."""
    sd, a, b = diff(tmp_path, {"split": SPLIT, "joined": JOINED}, swap)
    (c,) = sd.changes
    kind = "call-added" if a == "split" else "call-removed"
    span = {
        "split": (9, 10, "v = tl.load(x_ptr + offs,"),
        "joined": (9, 9, "v = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)"),
    }
    assert (c.kind, c.function, c.function_b, c.name) == (kind, "k", "k", "tl.load(x_ptr + offs, mask=offs < n).to")
    assert (c.line_a, c.end_a, c.text_a) == span[a] and (c.line_b, c.end_b, c.text_b) == span[b]
    assert (c.file_a, c.file_b, c.semantic) == ("", "", True)
    if a == "split":
        assert sd.line_pairs == {8: 8, 9: 9, 10: 9, 11: 10, 12: 11}
    else:
        assert sd.line_pairs == {8: 8, 9: 9, 10: 11, 11: 12, 12: 12, 13: 12}


RENAMES = """
@triton.jit
def k(x_ptr, y_ptr, z_ptr, n):
    offs = tl.arange(0, 16)
    v = tl.load(x_ptr + offs, mask=offs < n)
    u = v * 2
    tl.store(y_ptr + offs, {stored}, mask=offs < n)
    {t} = u + 1
    tl.store(z_ptr + offs, {t}, mask=offs < n)
"""


@BOTH
def test_wrong_value_stored_and_a_rename_after_it(tmp_path: Path, swap: bool) -> None:
    """``tl.store(y_ptr + offs, v)`` in one variant stores ``u`` in the other (both locals of both: a real change,
    not a rename), and ``t`` is called ``out`` further down (a rename, not semantic, reported once with its lines)."""
    named = {"v": RENAMES.format(stored="v", t="t"), "u": RENAMES.format(stored="u", t="out")}
    sd, a, b = diff(tmp_path, named, swap)
    (stored,) = sd.semantic
    text = {"v": "tl.store(y_ptr + offs, v, mask=offs < n)", "u": "tl.store(y_ptr + offs, u, mask=offs < n)"}
    assert record(stored) == ("statement", "k", "k", 11, 11, 11, 11, text[a], text[b])
    assert stored.words(a, b) == f"`{text[a]}` in `{a}` vs `{text[b]}` in `{b}`"
    (ren,) = (c for c in sd.changes if c.kind == "renamed")
    name = {"v": "t", "u": "out"}
    assert (ren.semantic, ren.name, ren.old, ren.new, ren.line_a, ren.line_b) == (
        False,
        name[a],
        name[a],
        name[b],
        12,
        12,
    )
    assert ren.words(a, b) == f"`{name[a]}` in `{a}` is called `{name[b]}` in `{b}`"
    assert ren.text_a == f"{name[a]} = u + 1"


SWAP = """
@triton.jit
def k(src, out, W, B: tl.constexpr):
    r = tl.arange(0, B)[:, None]
    c = tl.arange(0, B)[None, :]
    v = tl.load(src + {addr})
    tl.store(out + r * W + c, v)
"""


@BOTH
def test_swapped_indices_record(tmp_path: Path, swap: bool) -> None:
    """A transposed load: the change names the two indices and quotes both statements whole."""
    named = {"rows": SWAP.format(addr="r * W + c"), "cols": SWAP.format(addr="c * W + r")}
    sd, a, b = diff(tmp_path, named, swap)
    (c,) = sd.changes
    stmt = {"rows": "v = tl.load(src + r * W + c)", "cols": "v = tl.load(src + c * W + r)"}
    assert (c.kind, c.name, c.old, c.new) == ("args-reordered", "c ↔ r", stmt[a], stmt[b])
    assert c.words(a, b) == f"`c` and `r` swapped: `{stmt[a]}` in `{a}` vs `{stmt[b]}` in `{b}`"
    assert (c.line_a, c.line_b, c.text_a, c.text_b) == (10, 10, stmt[a], stmt[b])
    assert [x.kind for x in sd.changes] == ["args-reordered"]


# ------------------------------------------------------------------------------------------------ bodies


BRANCHES = """
@triton.jit
def k(x_ptr, b_ptr, n, HAS_BIAS: tl.constexpr, STEPS: tl.constexpr):
    offs = tl.arange(0, 16)
    v = tl.load(x_ptr + offs, mask=offs < n)
    if HAS_BIAS:
        v += tl.load(b_ptr + offs, mask=offs < n, other={bias_other})
    else:
        v = v * {scale}
    i = 0
    while i < STEPS:
        v = tl.maximum(v, {floor})
        i += 1
    tl.store(x_ptr + offs, v, mask=offs < n)
"""


@BOTH
def test_changes_inside_if_else_and_while_bodies(tmp_path: Path, swap: bool) -> None:
    """Statements inside an ``if`` body, its ``else`` and a ``while`` body are compared one by one (each with its own
    line), not as one changed compound statement."""
    named = {
        "old": BRANCHES.format(bias_other="0.0", scale="2.0", floor="0.0"),
        "new": BRANCHES.format(bias_other="1.0", scale="3.0", floor="-1.0"),
    }
    sd, a, b = diff(tmp_path, named, swap)
    values = {"old": ("0.0", "2.0", "0.0"), "new": ("1.0", "3.0", "-1.0")}
    got = [(c.kind, c.line_a, c.line_b, c.old, c.new) for c in sd.changes]
    assert got[:2] == [
        ("kwarg-changed", 11, 11, values[a][0], values[b][0]),
        ("constant-changed", 13, 13, values[a][1], values[b][1]),
    ]
    floor = {"old": "0.0", "new": "-1.0"}
    assert got[2] == ("statement", 16, 16, "", "") and len(got) == 3
    assert sd.changes[2].words(a, b) == f"`{floor[a]}` in `{a}` vs `{floor[b]}` in `{b}`"
    assert sd.line_pairs == {k: k for k in range(8, 19) if k not in (12,)}


@BOTH
def test_statement_moved_inside_its_loop_and_one_removed_before_a_hoist(tmp_path: Path, swap: bool) -> None:
    """Two loads traded places inside the loop (moved to another place in the same loop), and, in a second pair, a
    statement removed before a load hoisted out of the loop: both moves are named, the removal too."""
    base = """
    @triton.jit
    def k(x_ptr, y_ptr, s_ptr, R):
        for r in range(0, R):
            {first}
            {second}
            tl.store(x_ptr + r, a + b)
    """
    la, lb = "a = tl.load(x_ptr + r)", "b = tl.load(y_ptr + r) * 2.0"
    sd, x, y = diff(tmp_path, {"ab": base.format(first=la, second=lb), "ba": base.format(first=lb, second=la)}, swap)
    (c,) = sd.changes
    assert c.kind == "moved" and (c.old, c.new) == ("loop depth 1", "loop depth 1")
    assert c.words(x, y).endswith(": moved to another place in the same loop")
    hoist = """
    @triton.jit
    def k(x_ptr, s_ptr, R):
        acc = 0.0
        for r in range(0, R):
            s = tl.load(s_ptr)
            acc += tl.load(x_ptr + r) * s
        tl.store(x_ptr, acc)
    """
    hoisted = hoist.replace("        acc = 0.0\n", "").replace(
        "    for r in range(0, R):\n            s = tl.load(s_ptr)\n",
        "    s = tl.load(s_ptr)\n        acc = 0.0\n        for r in range(0, R):\n",
    )
    assert hoisted != hoist
    sd, x, y = diff(tmp_path / "h", {"in": hoist, "out": hoisted}, swap)
    kinds = sorted(c.kind for c in sd.changes)
    moved = [c for c in sd.changes if c.kind == "moved"]
    assert "moved" in kinds and all(m.name in ("s = tl.load(s_ptr)", "acc = 0.0") for m in moved)
    s_move = next(m for m in moved if m.name == "s = tl.load(s_ptr)")
    assert s_move.words(x, y).endswith("moved out of the loop" if x == "in" else "moved into the loop")


@BOTH
def test_statement_removed_beside_a_changed_one(tmp_path: Path, swap: bool) -> None:
    """``w = tl.load(…)`` only in one variant, next to ``v = tl.load(…)`` that gains ``other=0.0``: one keyword
    change and one removed statement (the removed one is not paired with the changed one as well)."""
    base = """
    @triton.jit
    def k(x_ptr, n):
        offs = tl.arange(0, 16)
        v = tl.load(x_ptr + offs, mask=offs < n{other})
        {extra}
        tl.store(x_ptr + offs, v, mask=offs < n)
    """
    named = {
        "two": base.format(other="", extra="w = tl.load(x_ptr + offs + 16, mask=offs < n)"),
        "one": base.format(other=", other=0.0", extra=""),
    }
    sd, a, b = diff(tmp_path, named, swap)
    got = sorted((c.kind, c.line_a, c.line_b, c.name) for c in sd.changes)
    removed = ("statement", 10, None, "") if a == "two" else ("statement", None, 10, "")
    assert got == sorted([("kwarg-changed", 9, 9, "other"), removed])
    (gone,) = (c for c in sd.changes if c.kind == "statement")
    extra = "w = tl.load(x_ptr + offs + 16, mask=offs < n)"
    assert (gone.text_a, gone.text_b) == ((extra, "") if a == "two" else ("", extra))


GLUON = """
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def k(a_ptr, b_ptr, c_ptr, K: gl.constexpr):
    acc = 0.0
    for i in range(0, K):
        with gl.amd.warp_pipeline_stage("load", priority={prio}):
            a = gl.load(a_ptr + i)
            b = gl.load(b_ptr + i){scale}
        with gl.amd.warp_pipeline_stage("compute"):
            acc += a * b
    gl.store(c_ptr, acc)
"""


@BOTH
def test_with_stage_headers_and_bodies(tmp_path: Path, swap: bool) -> None:
    """A Gluon warp-pipeline kernel (``with gl.amd.warp_pipeline_stage(…)`` blocks in a loop): the stage's priority
    is a keyword of the ``with`` header (line 14), a scaled load inside the stage's body a change of that line
    (16)."""
    named = {"plain": GLUON.format(prio=3, scale=""), "scaled": GLUON.format(prio=2, scale=" * 2.0")}
    sd, a, b = diff(tmp_path, named, swap)
    prio = {"plain": "3", "scaled": "2"}
    load = {"plain": "gl.load(b_ptr + i)", "scaled": "gl.load(b_ptr + i) * 2.0"}
    got = [(c.kind, c.line_a, c.line_b, c.name, c.old, c.new) for c in sd.changes]
    assert got == [
        ("kwarg-changed", 14, 14, "priority", prio[a], prio[b]),
        ("statement", 16, 16, "", "", ""),
    ]
    assert sd.changes[1].words(a, b) == f"`{load[a]}` in `{a}` is `{load[b]}` in `{b}`"
    assert sd.line_pairs == {k: k for k in range(12, 20)}


# ------------------------------------------------------------------------------------------------ expressions


STREAM = """
@triton.jit
def k(x_ptr, y_ptr, b_ptr, n):
    offs = tl.arange(0, 16)
    v = tl.load(x_ptr + offs, mask=offs < n)
    if b_ptr {check} None:
        v += tl.load(b_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, {stored}, mask=offs < n)
"""


@BOTH
def test_flipped_none_check_is_named(tmp_path: Path, swap: bool) -> None:
    """``if b_ptr is not None`` vs ``if b_ptr is None`` (a constexpr ``None`` test): the comparison operators are
    named (``is not``, ``is``), never ``?``."""
    named = {"isnot": STREAM.format(check="is not", stored="v"), "is": STREAM.format(check="is", stored="v")}
    sd, a, b = diff(tmp_path, named, swap)
    (c,) = sd.changes
    op = {"isnot": "is not", "is": "is"}
    assert (c.kind, c.line_a, c.name, c.old, c.new) == ("op-changed", 10, f"{op[a]} → {op[b]}", op[a], op[b])
    assert c.words(a, b) == f"comparison `{op[a]}` in `{a}` vs `{op[b]}` in `{b}` (`b_ptr {op[b]} None`)"


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("v", "-v", "`v` in `{A}` is `-v` in `{B}`"),
        ("v * 2", "v + 1", "`v * 2` in `{A}` is `v + 1` in `{B}`"),
        ("v", "tl.zeros((16, 16), tl.float32)", "`v` in `{A}` vs `tl.zeros((16, 16), tl.float32)` in `{B}`"),
    ],
    ids=["negated", "operator-and-operand", "replaced"],
)
def test_operand_negated_or_rewritten_is_one_statement_change(tmp_path: Path, old: str, new: str, words: str) -> None:
    """``v`` stored as ``-v`` (an operation around the same value), ``v * 2`` as ``v + 1`` (operator and operand
    both changed: not an operator change alone), ``v`` as another expression: one ``statement`` change each."""
    sd, _, _ = diff(
        tmp_path, {"A": STREAM.format(check="is not", stored=old), "B": STREAM.format(check="is not", stored=new)}
    )
    (c,) = sd.changes
    assert (c.kind, c.line_a, c.line_b, c.words("A", "B")) == ("statement", 12, 12, words.format(A="A", B="B"))


TILE = """
@triton.jit
def k(x_ptr, BM: tl.constexpr, BN: tl.constexpr):
    acc = tl.zeros({shape}, dtype=tl.float32)
    tl.store(x_ptr + tl.arange(0, BM), tl.sum(acc, axis=1))
"""


@BOTH
def test_tile_shape_with_one_dimension_less(tmp_path: Path, swap: bool) -> None:
    """``tl.zeros((BM, BN))`` vs ``tl.zeros((BM,))``: tuples of different lengths are one changed statement."""
    sd, a, b = diff(tmp_path, {"2d": TILE.format(shape="(BM, BN)"), "1d": TILE.format(shape="(BM,)")}, swap)
    (c,) = sd.changes
    stmt = {"2d": "acc = tl.zeros((BM, BN), dtype=tl.float32)", "1d": "acc = tl.zeros((BM,), dtype=tl.float32)"}
    assert (c.kind, c.line_a, c.words(a, b)) == ("statement", 8, f"`{stmt[a]}` in `{a}` vs `{stmt[b]}` in `{b}`")


CAST = """
{imports}
@triton.jit
def k(x_ptr, y_ptr, OUT_TY: tl.constexpr):
    offs = tl.arange(0, 16)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to({ty}))
"""


@pytest.mark.parametrize(
    ("ta", "tb", "kind"),
    [
        ("tl.float16", "y_ptr.dtype.element_ty", "dtype-changed"),
        ("triton.language.float16", "y_ptr.dtype.element_ty", "dtype-changed"),
        ("float16", "float32", "dtype-changed"),
        ("float16", "ACC_TY", "dtype-changed"),
        ("tl.PropagateNan.ALL", "tl.PropagateNan.NONE", "call-changed"),
    ],
    ids=["dotted-vs-pointer-type", "long-spelling", "bare-names", "bare-vs-constexpr", "not-a-dtype"],
)
@BOTH
def test_cast_target_dtype_named(tmp_path: Path, ta: str, tb: str, kind: str, swap: bool) -> None:
    """A cast to a dtype in one variant and to the output pointer's element type (or another dtype, spelled
    ``tl.x``, ``triton.language.x`` or imported bare) in the other is a dtype change, whichever side names the
    dtype (``ACC_TY``: a module constant); a changed attribute that is no dtype is a changed name."""
    imports = "from triton.language import float16, float32\n\nACC_TY = tl.float32\n\n"
    named = {"a": CAST.format(imports=imports, ty=ta), "b": CAST.format(imports=imports, ty=tb)}
    sd, x, y = diff(tmp_path, named, swap)
    (c,) = sd.changes
    ty = {"a": ta, "b": tb}
    assert (c.kind, c.old, c.new, c.name) == (kind, ty[x], ty[y], ty[y])
    assert c.text_a == f"tl.store(y_ptr + offs, tl.load(x_ptr + offs).to({ty[x]}))"


@BOTH
def test_two_keywords_and_two_decorators_changed(tmp_path: Path, swap: bool) -> None:
    """Every changed keyword of a call is named (not only the first); every changed decorator too, including a
    keyword only one variant's ``@triton.jit(…)`` passes (named on that decorator), and a parameter default that
    only one variant has."""
    base = """
    @triton.autotune(configs=CONFIGS, key=[{key}])
    @triton.jit({jit})
    def k(x_ptr, n, BLOCK: tl.constexpr{default}):
        offs = tl.arange(0, BLOCK)
        v = tl.load(x_ptr + offs, mask=offs < n, cache_modifier="{cm}", eviction_policy="{ev}")
        tl.store(x_ptr + offs, v, mask=offs < n)
    """
    named = {
        "old": base.format(key='"n"', jit='do_not_specialize=["n"]', default="", cm=".cg", ev="evict_first"),
        "new": base.format(key='"n", "BLOCK"', jit="", default=" = 128", cm=".ca", ev="evict_last"),
    }
    sd, a, b = diff(tmp_path, named, swap)
    words = [c.words(a, b) for c in sd.changes]
    key = {"old": "['n']", "new": "['n', 'BLOCK']"}
    dflt = {"old": "(none)", "new": "128"}
    assert f"default of `BLOCK`: `{dflt[a]}` in `{a}`, `{dflt[b]}` in `{b}`" in words
    assert f"`triton.autotune` keyword `key={key[a]}` in `{a}`, `key={key[b]}` in `{b}`" in words
    # only `old` passes the keyword: named on its decorator, whichever variant is inspected
    assert "`triton.jit` has `do_not_specialize=['n']` in `old`, no `do_not_specialize` in `new` (the default)" in words
    kw = [(c.name, c.old, c.new) for c in sd.changes if c.kind == "kwarg-changed" and c.line_a == 10]
    cm = {"old": "'.cg'", "new": "'.ca'"}
    ev = {"old": "'evict_first'", "new": "'evict_last'"}
    assert kw == [("cache_modifier", cm[a], cm[b]), ("eviction_policy", ev[a], ev[b])]


@BOTH
def test_long_code_is_cut_at_80_characters(tmp_path: Path, swap: bool) -> None:
    """Code quoted in a change's words is cut to 77 characters and ``...`` when longer than 80 (an 80-character
    statement is quoted whole, an 81-character one is cut)."""
    base = """
    @triton.jit
    def k(x_ptr, n):
        offs = tl.arange(0, 16)
        {extra}
        tl.store(x_ptr + offs, tl.zeros((16,), tl.float32))
    """
    for width in (80, 81):
        stmt = "tl.store(x_ptr + offs + 16, tl.full((16,), 1.0, tl.float32), mask=offs < n)"
        stmt = stmt.replace("offs + 16", "offs + " + "1" * (width - len(stmt) + 2))
        assert len(stmt) == width
        sd, a, b = diff(
            tmp_path / str(width), {"with": base.format(extra=stmt), "without": base.format(extra="")}, swap
        )
        (c,) = sd.changes
        shown = stmt if width <= 80 else stmt[:77] + "..."
        assert c.words(a, b) == f"statement `{shown}` only in `with`"


# ------------------------------------------------------------------------------------------------ options


def test_options_and_constexprs_are_semantic_and_worded(tmp_path: Path) -> None:
    """Launch options and constexpr values: semantic changes, worded with both values, no line."""
    src = CHAIN.format(f="2.0")
    va, vb = variant(tmp_path, "A", src), variant(tmp_path, "B", src)
    va.options, vb.options = {"num_warps": 4, "num_stages": 2}, {"num_warps": 8, "num_stages": 2}
    va.config, vb.config = {"BLOCK": 64}, {"BLOCK": 128}
    sd = diff_sources(va, vb)
    assert [(c.kind, c.semantic, c.line_a, c.words("fast", "base")) for c in sd.changes] == [
        ("option", True, None, "`num_warps` = 4 in `fast`, 8 in `base`"),
        ("option", True, None, "constexpr `BLOCK` = 64 in `fast`, 128 in `base`"),
    ]


def test_role_pairing_applies_to_the_kernel_only(tmp_path: Path) -> None:
    """Parameters paired by role (``params``) are the kernel's: a helper with other parameter names keeps its own
    positional pairing (its parameter renamed, not one removed and one added)."""
    base = """
    @triton.jit
    def helper({p}):
        return {p} * 2.0


    @triton.jit
    def k(x_ptr, n):
        offs = tl.arange(0, 16)
        tl.store(x_ptr + offs, helper(tl.load(x_ptr + offs)))
    """
    va, vb = variant(tmp_path, "A", base.format(p="v")), variant(tmp_path, "B", base.format(p="val"))
    sd = diff_sources(va, vb, [("x_ptr", "x_ptr"), ("n", "n")])
    assert [(c.kind, c.function, c.old, c.new, c.semantic) for c in sd.changes] == [
        ("renamed", "helper", "v", "val", False)
    ]


REWRITTEN = """
@triton.jit
def k(x_ptr, y_ptr, n, S):
    offs = tl.arange(0, 16)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    {store}
"""


@BOTH
def test_rewritten_store_is_still_the_same_store(tmp_path: Path, swap: bool) -> None:
    """``tl.store(y_ptr + offs, v, mask=m)`` rewritten with a strided address, a scaled value and a narrower mask is
    one store changed (all its changes on line 11 of both variants: the value and the mask among them), never one
    store removed and another added, however long the rewritten one is."""
    plain, strided = (
        "tl.store(y_ptr + offs, v, mask=m)",
        "tl.store(y_ptr + offs * S + 1, v * 2.0 + 1.0, mask=m & (offs > 0))",
    )
    sd, a, b = diff(
        tmp_path, {"plain": REWRITTEN.format(store=plain), "strided": REWRITTEN.format(store=strided)}, swap
    )
    assert sd.changes and all((c.line_a, c.line_b) == (11, 11) for c in sd.changes)
    value = {"plain": "v", "strided": "v * 2.0 + 1.0"}
    mask = {"plain": "m", "strided": "m & (offs > 0)"}
    words = [c.words(a, b) for c in sd.changes]
    assert f"`{value[a]}` in `{a}` vs `{value[b]}` in `{b}`" in words
    assert f"`tl.store` keyword `mask={mask[a]}` in `{a}`, `mask={mask[b]}` in `{b}`" in words


ACCUMULATE = """
@triton.jit
def k(x_ptr, y_ptr, R):
    acc = tl.zeros((16,), tl.float32)
    for r in tl.range(0, R,
                      num_stages={stages}):
        acc += tl.load(x_ptr + r * 16 + tl.arange(0, 16))
    tl.store(y_ptr + tl.arange(0, 16), acc)
"""


def test_split_loop_header_and_accumulator_flow(tmp_path: Path) -> None:
    """A ``for`` header written over two lines (9-10) is one statement of both lines: the ``num_stages`` change is on
    line 10, and both lines are paired; ``acc += …`` reads ``acc``, so the accumulator's initialisation (line 8)
    reaches the loop body (11) and the store (12)."""
    sd, _, _ = diff(tmp_path, {"a": ACCUMULATE.format(stages=2), "b": ACCUMULATE.format(stages=3)})
    (c,) = sd.changes
    assert (c.kind, c.name, c.old, c.new, c.line_a, c.line_b) == ("kwarg-changed", "num_stages", "2", "3", 10, 10)
    assert sd.line_pairs == {8: 8, 9: 9, 10: 10, 11: 11, 12: 12}
    assert sd.affected("a", {8}) == {8, 11, 12}


@BOTH
def test_decorator_positional_argument_changed(tmp_path: Path, swap: bool) -> None:
    """A changed positional argument of a decorator call (``@triton.heuristics({...})``'s dict, the usual way to
    derive a constexpr) is named as the expression that changed, on the decorator's line; a decorator whose
    positional arguments differ in number is named as differing."""
    base = """
    @triton.heuristics({{"EVEN": lambda args: args["n"] % {m} == 0}})
    @triton.jit
    def k(x_ptr, n, EVEN: tl.constexpr):
        offs = tl.arange(0, 128)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs))
    """
    named = {"old": base.format(m=16), "new": base.format(m=32)}
    sd, a, b = diff(tmp_path, named, swap)
    m = {"old": "16", "new": "32"}
    assert [(c.kind, c.line_a, c.line_b, c.old, c.new) for c in sd.changes] == [("constant-changed", 6, 6, m[a], m[b])]
    assert sd.changes[0].words(a, b) == f"constant `{m[a]}` in `{a}` vs `{m[b]}` in `{b}`"
    two = base.format(m=16).replace('heuristics({"EVEN"', 'heuristics({"EVEN": lambda args: True}, {"EVEN"')
    sd, a, b = diff(tmp_path / "two", {"old": base.format(m=16), "new": two}, swap)
    assert [(c.kind, c.name, c.words(a, b)) for c in sd.changes] == [
        ("annotation", "triton.heuristics", "decorator `@triton.heuristics` differs")
    ]


@BOTH
def test_decorator_positional_count_changed_with_same_keywords(tmp_path: Path, swap: bool) -> None:
    """A decorator call whose positional arguments differ in number while its keywords are the same is named as
    differing, on its line, with each variant's decorator as the old and new text; the decorators after it are
    still compared (``@triton.jit``'s changed keyword is named too)."""
    old = """
    @triton.heuristics({"EVEN": lambda args: True}, key="n")
    @triton.jit(debug=True)
    def k(x_ptr, n):
        tl.store(x_ptr, n)
    """
    new = old.replace("True}, key", 'True}, {"ODD": lambda args: False}, key').replace("debug=True", "debug=False")
    sd, a, b = diff(tmp_path, {"old": old, "new": new}, swap)
    heur = {
        "old": "triton.heuristics({'EVEN': lambda args: True}, key='n')",
        "new": "triton.heuristics({'EVEN': lambda args: True}, {'ODD': lambda args: False}, k...",
    }
    line = {
        "old": '@triton.heuristics({"EVEN": lambda args: True}, key="n")',
        "new": '@triton.heuristics({"EVEN": lambda args: True}, {"ODD": lambda args: False}, key="n")',
    }
    dbg = {"old": "True", "new": "False"}
    jit = {v: f"@triton.jit(debug={dbg[v]})" for v in dbg}
    assert [(c.kind, c.name, c.line_a, c.line_b, c.old, c.new, c.text_a, c.text_b) for c in sd.changes] == [
        ("annotation", "triton.heuristics", 6, 6, heur[a], heur[b], line[a], line[b]),
        ("kwarg-changed", "debug", 7, 7, dbg[a], dbg[b], jit[a], jit[b]),
    ]
    assert sd.changes[0].words(a, b) == "decorator `@triton.heuristics` differs"
