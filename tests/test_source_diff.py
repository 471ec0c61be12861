"""Source diff as Python syntax trees (``irdiff.diagnose.source``): kinds, lines in both variants, semantic vs
rename, moves, called ``@triton.jit`` helpers (same file and recorded from other files). Pure text: no compile."""

from __future__ import annotations

import ast
import keyword
import textwrap
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from irdiff.bundle import VariantResult
from irdiff.diagnose.source import diff_sources

HEAD = "import triton\nimport triton.language as tl\n\n\n"


def variant(tmp: Path, name: str, body: str, kernel: str, **meta: object) -> VariantResult:
    d = tmp / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "kernel.py").write_text(HEAD + textwrap.dedent(body))
    return VariantResult(
        name=name, kernel=kernel, stages={"python": "kernel.py"}, directory=str(d), metadata=dict(meta)
    )


def pair(tmp: Path, a: str, b: str, ka: str = "k", kb: str = "k") -> tuple[VariantResult, VariantResult]:
    return variant(tmp, "A", a, ka), variant(tmp, "B", b, kb)


STREAM = """
@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m{kw})
    tl.store(y_ptr + offs, v * 2, mask=m)
"""


def test_kwarg_added_with_lines_in_both(tmp_path: Path) -> None:
    va, vb = pair(tmp_path, STREAM.format(kw=""), STREAM.format(kw=', eviction_policy="evict_last"'))
    sd = diff_sources(va, vb)
    assert [c.kind for c in sd.changes] == ["kwarg-changed"]
    c = sd.changes[0]
    assert c.semantic and c.name == "eviction_policy" and c.old == "" and c.new == "'evict_last'"
    assert c.line_a == c.line_b == 10  # 4 header lines + the kernel's 6th line
    assert "tl.load" in c.text_a and "evict_last" in c.text_b
    assert c.words("plain", "hinted") == (
        "`tl.load` has `eviction_policy='evict_last'` in `hinted`, no `eviction_policy` in `plain` (the default)"
    )
    # the other order names the other variant
    rev = diff_sources(vb, va).changes[0]
    assert rev.old == "'evict_last'" and rev.new == "" and "in `A`" in rev.words("A", "B")


def test_kwarg_value_changed(tmp_path: Path) -> None:
    va, vb = pair(tmp_path, STREAM.format(kw=', cache_modifier=".cg"'), STREAM.format(kw=', cache_modifier=".ca"'))
    (c,) = diff_sources(va, vb).changes
    assert (c.kind, c.name, c.old, c.new) == ("kwarg-changed", "cache_modifier", "'.cg'", "'.ca'")


def test_nested_hint_calls_added(tmp_path: Path) -> None:
    a = STREAM.format(kw="")
    b = a.replace(
        "offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
        "offs = tl.max_contiguous(tl.multiple_of(tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), BLOCK), BLOCK)",
    )
    changes = diff_sources(*pair(tmp_path, a, b)).changes
    assert [(c.kind, c.name) for c in changes] == [
        ("call-added", "tl.max_contiguous"),
        ("call-added", "tl.multiple_of"),
    ]
    assert all(c.line_a == c.line_b == 8 for c in changes)
    removed = diff_sources(*pair(tmp_path / "r", b, a)).changes
    assert [(c.kind, c.name) for c in removed] == [
        ("call-removed", "tl.max_contiguous"),
        ("call-removed", "tl.multiple_of"),
    ]


def test_operator_to_call_and_operator_change(tmp_path: Path) -> None:
    a = STREAM.format(kw="").replace("v * 2", "v / n")
    b = STREAM.format(kw="").replace("v * 2", "tl.div_rn(v, n)")
    (c,) = diff_sources(*pair(tmp_path, a, b)).changes
    assert c.kind == "op-changed" and (c.old, c.new) == ("/", "tl.div_rn")
    c2 = diff_sources(*pair(tmp_path / "2", a, a.replace("v / n", "v - n"))).changes
    assert [(x.kind, x.old, x.new) for x in c2] == [("op-changed", "/", "-")]


def test_args_reordered_dtype_and_constant(tmp_path: Path) -> None:
    a = """
    @triton.jit
    def k(a_ptr, b_ptr, c_ptr):
        r = tl.arange(0, 16)
        a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
        b = tl.load(b_ptr + r[:, None] * 16 + r[None, :])
        c = tl.dot(a, b).to(tl.float16) * 0.5
        tl.store(c_ptr + r[:, None] * 16 + r[None, :], c)
    """
    b = a.replace("tl.dot(a, b)", "tl.dot(b, a)").replace("tl.float16", "tl.bfloat16").replace("0.5", "0.25")
    kinds = {c.kind: c for c in diff_sources(*pair(tmp_path, a, b)).changes}
    assert set(kinds) == {"args-reordered", "dtype-changed", "constant-changed"}
    assert kinds["args-reordered"].name == "tl.dot"
    assert (kinds["dtype-changed"].old, kinds["dtype-changed"].new) == ("tl.float16", "tl.bfloat16")
    assert (kinds["constant-changed"].old, kinds["constant-changed"].new) == ("0.5", "0.25")


def test_statement_moved_out_of_loop(tmp_path: Path) -> None:
    a = """
    @triton.jit
    def k(x_ptr, s_ptr, R):
        for r in range(0, R):
            s = tl.load(s_ptr)
            tl.store(x_ptr + r, tl.load(x_ptr + r) * s)
    """
    b = """
    @triton.jit
    def k(x_ptr, s_ptr, R):
        s = tl.load(s_ptr)
        for r in range(0, R):
            tl.store(x_ptr + r, tl.load(x_ptr + r) * s)
    """
    (c,) = diff_sources(*pair(tmp_path, a, b)).changes
    assert c.kind == "moved" and c.line_a == 9 and c.line_b == 8
    assert "moved out of the loop" in c.words("in", "out") and (c.old, c.new) == ("loop depth 1", "loop depth 0")
    (back,) = diff_sources(*pair(tmp_path / "r", b, a)).changes
    assert "moved into the loop" in back.words("out", "in")


def test_rename_only_is_not_semantic_and_kernel_names_may_differ(tmp_path: Path) -> None:
    a = STREAM.format(kw="")
    b = a.replace("def k(", "def k2(").replace("offs", "idx").replace("v =", "val =").replace("v * 2", "val * 2")
    sd = diff_sources(*pair(tmp_path, a, b, "k", "k2"))
    assert sd.changes and all(c.kind == "renamed" and not c.semantic for c in sd.changes)
    assert {(c.old, c.new) for c in sd.changes} == {("offs", "idx"), ("v", "val")}
    assert sd.semantic == []


def test_annotation_and_decorator(tmp_path: Path) -> None:
    a = """
    @triton.jit
    def k(x_ptr, stride, n):
        tl.store(x_ptr + tl.arange(0, 16) * stride, tl.zeros((16,), tl.float32), mask=tl.arange(0, 16) < n)
    """
    b = a.replace("stride, n", "stride: int, n").replace("@triton.jit", "@triton.jit(do_not_specialize=['n'])")
    kinds = [(c.kind, c.name) for c in diff_sources(*pair(tmp_path, a, b)).changes]
    assert ("annotation", "stride") in kinds
    assert any(k == "annotation" and "jit" in n for k, n in kinds)


def test_called_helpers_same_file_and_recorded(tmp_path: Path) -> None:
    helper = """
    @triton.jit
    def scale(v, f):
        return v * f{op}


    @triton.jit
    def k(x_ptr, n):
        offs = tl.arange(0, 16)
        tl.store(x_ptr + offs, scale(tl.load(x_ptr + offs), 2.0))
    """
    changes = diff_sources(*pair(tmp_path, helper.format(op=""), helper.format(op=" + 1.0"))).changes
    assert [(c.kind, c.function) for c in changes] == [("statement", "scale")]
    assert changes[0].line_a == changes[0].line_b == 8

    # a helper from another file, known only from the compile worker's record (metadata["jit_functions"])
    kern = """
    @triton.jit
    def k(x_ptr, n):
        offs = tl.arange(0, 16)
        tl.store(x_ptr + offs, lib.scale(tl.load(x_ptr + offs), 2.0))
    """
    rec = {
        "lib.scale": {
            "file": "/x/lib.py",
            "first_line": 30,
            "source": "@triton.jit\ndef scale(v, f):\n    return v * f\n",
        }
    }
    rec_b = {"lib.scale": dict(rec["lib.scale"], source="@triton.jit\ndef scale(v, f):\n    return v / f\n")}
    va = variant(tmp_path / "o", "A", kern, "k", jit_functions=rec)
    vb = variant(tmp_path / "o", "B", kern, "k", jit_functions=rec_b)
    (c,) = diff_sources(va, vb).changes
    assert (c.kind, c.function, c.old, c.new, c.file_a, c.line_a) == ("op-changed", "scale", "*", "/", "/x/lib.py", 32)
    # an older bundle without the record compares the kernels only
    assert diff_sources(variant(tmp_path / "n", "A", kern, "k"), variant(tmp_path / "n", "B", kern, "k")).changes == []


def test_options_and_constexprs(tmp_path: Path) -> None:
    va, vb = pair(tmp_path, STREAM.format(kw=""), STREAM.format(kw=""))
    va.options, vb.options = {"num_warps": 4, "num_stages": 3}, {"num_warps": 8, "num_stages": 3}
    va.config, vb.config = {"BLOCK": 1024}, {"BLOCK": 512}
    changes = diff_sources(va, vb).changes
    assert [(c.kind, c.name, c.old, c.new) for c in changes] == [
        ("option", "num_warps", "4", "8"),
        ("option", "BLOCK", "1024", "512"),
    ]


def test_bad_sources_give_a_note(tmp_path: Path) -> None:
    va = variant(tmp_path, "A", "def k(:\n", "k")
    vb = variant(tmp_path, "B", STREAM.format(kw=""), "k")
    sd = diff_sources(va, vb)
    assert sd.changes == [] and "does not parse" in sd.note
    missing = VariantResult(name="C", kernel="k", directory=str(tmp_path))
    assert "no saved kernel source" in diff_sources(missing, vb).note


def test_affected_lines_follow_values(tmp_path: Path) -> None:
    a = STREAM.format(kw="")
    b = a.replace("m = offs < n", "m = offs <= n")
    sd = diff_sources(*pair(tmp_path, a, b))
    (c,) = sd.changes
    assert c.kind == "op-changed" and c.line_a == 9
    # m is used by the load (line 10) and the store (line 11); v (line 10) by the store
    assert sd.affected("a", {9}) == {9, 10, 11}
    assert sd.affected("a", {8}) == {8, 9, 10, 11}


_NAMES = st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True), min_size=4, max_size=4, unique=True)


class _Rename(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]):
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.copy_location(ast.Name(id=self.mapping.get(node.id, node.id), ctx=node.ctx), node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self.mapping.get(node.arg, node.arg)
        return node


@settings(max_examples=25, deadline=None)
@given(_NAMES)
def test_renaming_every_local_is_never_semantic(tmp_path_factory, names: list[str]) -> None:  # type: ignore[no-untyped-def]
    a = textwrap.dedent(STREAM.format(kw=""))
    taken = {"tl", "triton", "k", "n", "y_ptr", "BLOCK", "offs", "m", "v", "x_ptr"}
    if set(names) & taken or any(keyword.iskeyword(n) for n in names):
        return
    b = ast.unparse(_Rename(dict(zip(["offs", "m", "v", "x_ptr"], names, strict=True))).visit(ast.parse(a)))
    tmp = tmp_path_factory.mktemp("ren")
    sd = diff_sources(*pair(tmp, a, b))
    assert sd.semantic == []
    assert {(c.old, c.new) for c in sd.changes} == set(zip(["offs", "m", "v", "x_ptr"], names, strict=True))
    assert diff_sources(*pair(tmp / "same", a, a)).changes == []


GATHER = """
@triton.jit
def k(src, idx, out, W, B: tl.constexpr):
    i = tl.arange(0, B)[:, None]
    j = tl.arange(0, B)[None, :]
    v = tl.load(src + {addr})
    w = {fn}(v)
    for s in {loop}:
        tl.store(out + s + i * W + j, w)
"""


def test_swapped_operands_named(tmp_path: Path) -> None:
    """Two names trading places in an address (a transposed access) are named as such, in both orders."""
    kw = {"fn": "tl.exp", "loop": "range(0, 4)"}
    va, vb = pair(tmp_path, GATHER.format(addr="i * W + j", **kw), GATHER.format(addr="j * W + i", **kw))
    for x, y in ((va, vb), (vb, va)):
        (c,) = diff_sources(x, y).changes
        assert (c.kind, c.name) == ("args-reordered", "i ↔ j") and c.line_a == c.line_b == 10
        assert c.words("a", "b").startswith("`i` and `j` swapped: `v = tl.load(src + ")


def test_module_qualified_call_and_kwarg_callee(tmp_path: Path) -> None:
    """``libdevice.exp`` vs ``tl.exp`` is a changed call named whole (not ``libdevice`` vs ``tl``); a keyword only
    in one variant is named on that variant's callee (``tl.range``, not the other side's ``range``)."""
    a = GATHER.format(addr="i * W + j", fn="libdevice.exp", loop="tl.range(0, 4, loop_unroll_factor=2)")
    b = GATHER.format(addr="i * W + j", fn="tl.exp", loop="range(0, 4)")
    va, vb = pair(tmp_path, a, b)
    got = {c.kind: c for c in diff_sources(va, vb).changes}
    assert (got["call-changed"].old, got["call-changed"].new) in (("libdevice.exp", "tl.exp"), ("tl.range", "range"))
    calls = [c for c in diff_sources(va, vb).changes if c.kind == "call-changed"]
    assert {(c.old, c.new) for c in calls} == {("libdevice.exp", "tl.exp"), ("tl.range", "range")}
    kw = got["kwarg-changed"]
    assert kw.words("a", "b").startswith("`tl.range` has `loop_unroll_factor=2` in `a`")
    kw_rev = next(c for c in diff_sources(vb, va).changes if c.kind == "kwarg-changed")
    assert kw_rev.words("b", "a").startswith("`tl.range` has `loop_unroll_factor=2` in `a`")


HINTED = """
@triton.jit
def k(table, starts, out, B: tl.constexpr):
    pid = {pid}
    start = {start}
    tl.store(out + pid * B + tl.arange(0, B), tl.load(table + start + tl.arange(0, B)))
"""


def test_hint_moved_between_assignments_pairs_by_name(tmp_path: Path) -> None:
    """The same hint on another assignment: statements pair by the name they assign, so the change is the hint
    added on one line and removed on the other (not two look-alike right-hand sides swapped)."""
    a = HINTED.format(pid="tl.multiple_of(tl.program_id(0), 16)", start="tl.load(starts + pid)")
    b = HINTED.format(pid="tl.program_id(0)", start="tl.multiple_of(tl.load(starts + pid), 16)")
    va, vb = pair(tmp_path, a, b)
    got = sorted((c.kind, c.line_a, c.line_b, c.old, c.new) for c in diff_sources(va, vb).changes)
    assert got == [
        ("call-added", 9, 9, "tl.load(starts + pid)", "tl.multiple_of(tl.load(starts + pid), 16)"),
        ("call-removed", 8, 8, "tl.multiple_of(tl.program_id(0), 16)", "tl.program_id(0)"),
    ]
