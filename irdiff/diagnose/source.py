"""What the user changed, at the source: the two variants' kernels (and the ``@triton.jit`` functions they call)
compared as Python syntax trees, not as text.

``diff_sources(va, vb)`` parses each variant's saved ``kernel.py`` (the file that defines the kernel; the compile
driver saves it, ``VariantResult.stages["python"]``), finds the kernel function (``VariantResult.kernel``, inside
``metadata["kernel_lines"]`` when recorded) and every ``@triton.jit`` function it calls, directly or not: those in
the same file by name, others from ``metadata["jit_functions"]`` (source text recorded by the compile worker; older
bundles without it simply compare the kernel file's functions). Each function pair is compared statement by
statement (loop headers and ``if`` tests are statements too, so a statement hoisted out of a loop is a *move*), and
each paired statement expression by expression. Every difference becomes a :class:`SourceChange` with its line in
both variants, a kind, and whether it is semantic:

===================  =========================================================================================
kind                 example
===================  =========================================================================================
``call-added``       ``offs`` → ``tl.max_contiguous(tl.multiple_of(offs, BM), BM)`` (one change per call)
``call-removed``     the same, the other way round
``call-changed``     ``tl.exp(x)`` → ``tl.exp2(x)``
``kwarg-changed``    ``eviction_policy="evict_first"`` added, removed or given another value
``args-reordered``   ``tl.dot(a, b)`` → ``tl.dot(b, a)`` (same arguments, another order)
``op-changed``       ``x / y`` → ``tl.div_rn(x, y)``, ``a * b`` → ``a + b``, ``<`` → ``<=``
``dtype-changed``    ``tl.float16`` → ``tl.float32``
``constant-changed`` ``0.5`` → ``0.25``
``moved``            a statement moved into or out of a loop (or only reordered)
``annotation``       a parameter annotation or default changed (``stride: int``), a decorator argument changed
``statement``        a statement added, removed, or changed in a way none of the above names
``renamed``          a local variable or parameter renamed (not semantic)
``option``           launch option (``num_warps``, ``num_stages``, ``num_ctas``, ``maxnreg``) or constexpr value
===================  =========================================================================================

Pure Python over the bundle's text (no Triton import); unparseable sources give no changes (``SourceDiff.note``
says why). Lines are 1-based lines of each variant's ``kernel.py`` (or of the recorded function's own file for
functions from other files; ``SourceChange.file_a``/``file_b`` say which).

Used by :mod:`irdiff.diagnose.roots`, which turns unexplained semantic changes into ``source.<kind>`` root
findings and links downstream findings to them through :mod:`irdiff.diagnose.provenance`.

Size: over 800 lines because one syntax-tree comparison (statement pairing, expression walk, the
table of change kinds above and their wording) is one algorithm; split, each part would need the others' private
helpers.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from irdiff.bundle import VariantResult

__all__ = [
    "KINDS",
    "SourceChange",
    "SourceDiff",
    "diff_functions",
    "diff_sources",
    "jit_functions",
]

KINDS: tuple[str, ...] = (
    "call-added",
    "call-removed",
    "call-changed",
    "kwarg-changed",
    "args-reordered",
    "op-changed",
    "dtype-changed",
    "constant-changed",
    "moved",
    "annotation",
    "statement",
    "renamed",
    "option",
)

_DTYPES = {
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "float8e4nv",
    "float8e5",
    "float8e4b15",
    "float8e4b8",
    "float8e5b16",
    "int1",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "fp16",
    "bf16",
    "fp32",
    "fp64",
    "fp8e4nv",
    "fp8e5",
}
_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
_OPNAMES = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.BitAnd: "&",
    ast.MatMult: "@",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.And: "and",
    ast.Or: "or",
    ast.USub: "-",
    ast.Not: "not",
    ast.Invert: "~",
    ast.UAdd: "+",
}


@dataclass
class SourceChange:
    """One difference between the two variants' sources.

    :ivar kind: one of :data:`KINDS`.
    :ivar semantic: False only for renames (the compiled code cannot differ because of it).
    :ivar summary: one clause in words, with code in backticks (``\\`tl.load\\` gains \\`eviction_policy="evict_first"\\```).
    :ivar function: the function in the inspected variant (``a``) where it happens (the kernel or a called
        ``@triton.jit`` function); ``function_b`` the same in the baseline.
    :ivar line_a: line in ``a``'s file, or None (absent there, or an option); ``line_b`` the same in ``b``.
    :ivar text_a: that source line, stripped (``""`` when absent); ``text_b`` the same in ``b``.
    :ivar name: the call, keyword, operator or option the change is about (``tl.multiple_of``,
        ``eviction_policy``, ``/``, ``num_warps``), or ``""``.
    :ivar old: the value in ``a`` (source text), ``new``: in ``b``; ``""`` when absent.
    :ivar file_a: the file ``line_a`` refers to (``""``: the variant's ``kernel.py``; ``"<lib.scale>"``: a
        recorded function whose file is unknown, lines of its recorded source); ``file_b`` the same.
    """

    kind: str
    semantic: bool
    summary: str
    function: str = ""
    function_b: str = ""
    line_a: int | None = None
    line_b: int | None = None
    text_a: str = ""
    text_b: str = ""
    name: str = ""
    old: str = ""
    new: str = ""
    file_a: str = ""
    file_b: str = ""
    end_a: int | None = None
    end_b: int | None = None

    def words(self, a: str, b: str) -> str:
        """:attr:`summary` with the variant names filled in (``a`` inspected, ``b`` baseline)."""
        return self.summary.replace("{A}", a).replace("{B}", b)

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class SourceDiff:
    """All source changes between two variants.

    :ivar changes: in source order of ``a`` (options last).
    :ivar defined: per change index, the names the changed statement assigns in ``a`` and ``b`` (used by
        :mod:`irdiff.diagnose.provenance` to follow a change to the lines that use its values).
    :ivar functions: the function names compared, as ``(name in a, name in b)`` pairs, kernel first.
    :ivar note: why nothing could be compared (no source saved, a syntax error), else ``""``.
    """

    changes: list[SourceChange] = field(default_factory=list)
    functions: list[tuple[str, str]] = field(default_factory=list)
    note: str = ""
    line_pairs: dict[int, int] = field(default_factory=dict)
    flow_a: list[StmtFlow] = field(default_factory=list)
    flow_b: list[StmtFlow] = field(default_factory=list)

    def affected(self, side: str, lines: set[int]) -> set[int]:
        """Lines of ``side`` (``"a"`` or ``"b"``) whose statements use, directly or through other statements, a
        value defined on ``lines`` (the lines themselves included): where a change at ``lines`` can show up.
        Names are followed within one function of the variant's ``kernel.py`` (not into called functions).

        :raises ValueError: ``side`` is neither ``"a"`` nor ``"b"``."""
        if side not in ("a", "b"):
            raise ValueError(f"side must be 'a' or 'b', not {side!r}")
        flow = self.flow_a if side == "a" else self.flow_b
        out = set(lines)
        hit = [f for f in flow if any(f.first <= ln <= f.last for ln in lines)]
        names: dict[str, set[str]] = {}
        for f in hit:
            out.update(range(f.first, f.last + 1))
            names.setdefault(f.function, set()).update(f.defs)
        changed = True
        while changed:
            changed = False
            for f in flow:
                live = names.get(f.function)
                if not live or not (f.uses & live):
                    continue
                if not set(range(f.first, f.last + 1)) <= out or not f.defs <= live:
                    out.update(range(f.first, f.last + 1))
                    if not f.defs <= live:
                        live.update(f.defs)
                    changed = True
        return out

    @property
    def semantic(self) -> list[SourceChange]:
        return [c for c in self.changes if c.semantic]


@dataclass(frozen=True)
class StmtFlow:
    """One statement (or loop/if header) of a compared function: its lines and the local names it defines and
    uses."""

    function: str
    first: int
    last: int
    defs: frozenset[str]
    uses: frozenset[str]


# ------------------------------------------------------------------------------------------------ parsing


@dataclass
class _Fn:
    name: str
    node: ast.FunctionDef
    lines: list[str]  # the file's lines
    file: str  # "" for the variant's kernel.py
    offset: int = 0  # added to node line numbers (functions parsed from their own source text)


def _is_jit(fn: ast.FunctionDef) -> bool:
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = _dotted(target)
        if name.split(".")[-1] in ("jit", "autotune", "heuristics"):
            return True
    return False


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def _functions(tree: ast.AST) -> dict[str, list[ast.FunctionDef]]:
    out: dict[str, list[ast.FunctionDef]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            out.setdefault(node.name, []).append(node)
    return out


@lru_cache(maxsize=16)
def _parse(text: str) -> ast.Module:
    """``ast.parse``, once per text (both variants of a suite usually share one file). The tree is never changed.

    :raises SyntaxError: also for a text nested deeper than Python's parser allows (its RecursionError: a sum of
        some thousands of terms), so that callers that report unparseable sources report this one too."""
    try:
        return ast.parse(text)
    except RecursionError as e:
        raise SyntaxError("nested too deeply for Python's parser") from e


def jit_functions(v: VariantResult) -> tuple[list[_Fn], str]:
    """The kernel function of ``v`` and every ``@triton.jit`` function it calls (transitively), kernel first.

    :returns: ``(functions, note)``; ``note`` says why the list is empty (no source, syntax error, kernel not found).
    """
    from irdiff.diagnose.provenance import stage_text

    text = stage_text(v, "python")
    if not text:
        return [], f"`{v.name}` has no saved kernel source"
    try:
        tree = _parse(text)
    except SyntaxError as e:
        return [], f"`{v.name}`: kernel source does not parse ({e.msg}, line {e.lineno})"
    lines = text.splitlines()
    defs = _functions(tree)
    kl = v.metadata.get("kernel_lines")
    cands = defs.get(v.kernel, [])
    kernel = None
    if isinstance(kl, list) and len(kl) == 2:
        within = [f for f in cands if int(kl[0]) <= f.lineno <= int(kl[1])]
        kernel = within[0] if within else None
        if kernel is None:  # the kernel name differs from the function name (capture): the def inside the lines
            inside = [f for fs in defs.values() for f in fs if int(kl[0]) <= f.lineno <= int(kl[1])]
            kernel = min(inside, key=lambda f: f.lineno) if inside else None
    if kernel is None and cands:
        kernel = cands[0]
    if kernel is None:
        return [], f"`{v.name}`: kernel function `{v.kernel}` not found in its source"
    recorded = v.metadata.get("jit_functions")
    recorded = recorded if isinstance(recorded, dict) else {}
    out: list[_Fn] = [_Fn(kernel.name, kernel, lines, "")]
    seen = {kernel.name}
    i = 0
    while i < len(out):
        fn = out[i]
        i += 1
        for node in ast.walk(fn.node):
            if not isinstance(node, ast.Call):
                continue
            name = _dotted(node.func)
            short = name.split(".")[-1]
            if not short or short in seen or name.startswith(("tl.", "triton.")):
                continue
            local = [f for f in defs.get(short, []) if _is_jit(f) and f is not fn.node]
            if local:
                seen.add(short)
                out.append(_Fn(short, local[0], lines, ""))
                continue
            rec = recorded.get(name) or recorded.get(short)
            if isinstance(rec, dict) and isinstance(rec.get("source"), str):
                try:
                    sub = ast.parse(rec["source"])
                except SyntaxError:
                    continue
                found = [n for n in sub.body if isinstance(n, ast.FunctionDef)]
                if found:
                    seen.add(short)
                    first = int(rec.get("first_line") or 1)
                    # a record without its file is still not the kernel's file: "<name>", as Python names code
                    # without a file ("<string>"), so its lines are never taken for lines of kernel.py
                    file = str(rec.get("file") or f"<{name}>")
                    out.append(_Fn(short, found[0], rec["source"].splitlines(), file, first - 1))
    return out, ""


# ------------------------------------------------------------------------------------------------ keys


def _key(node: Any, name: Callable[[str], str]) -> str:
    """A structural key of ``node`` (like ``ast.dump`` without positions and load/store contexts) with every
    ``Name``/``arg`` identifier passed through ``name``; no copy of the tree is made."""
    if isinstance(node, ast.Name):
        return f"N({name(node.id)})"
    if isinstance(node, ast.arg):
        return f"A({name(node.arg)},{_key(node.annotation, name) if node.annotation is not None else ''})"
    if isinstance(node, ast.AST):
        return (
            type(node).__name__
            + "("
            + ",".join(_key(getattr(node, f, None), name) for f in node._fields if f not in ("ctx", "type_comment"))
            + ")"
        )
    if isinstance(node, list):
        return "[" + ",".join(_key(x, name) for x in node) + "]"
    return repr(node)


def _same_name(n: str) -> str:
    return n


def _dump(node: ast.AST) -> str:
    return _key(node, _same_name)


def _locals(fn: ast.FunctionDef) -> set[str]:
    out = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
    return out


def _erase(node: ast.AST, local: set[str]) -> str:
    return _key(node, lambda n: "_" if n in local else n)


@dataclass
class _Stmt:
    node: ast.AST  # the statement, or for compound statements its header expression node
    header: str  # "", "for", "while", "if", "with"
    loops: tuple[int, ...]  # ids (positions) of the enclosing loop headers
    exact: str = ""
    erased: str = ""
    line: int = 0
    last: int = 0
    defs: frozenset[str] = frozenset()
    uses: frozenset[str] = frozenset()

    def loop_depth(self) -> int:
        return len(self.loops)


def _header_node(s: ast.stmt) -> ast.AST:
    if isinstance(s, (ast.For, ast.AsyncFor)):
        return ast.Tuple(elts=[s.target, s.iter], ctx=ast.Load())
    if isinstance(s, (ast.While, ast.If)):
        return s.test
    if isinstance(s, (ast.With, ast.AsyncWith)):
        return ast.Tuple(elts=[i.context_expr for i in s.items], ctx=ast.Load())
    return s


def _flatten(body: list[ast.stmt], loops: tuple[int, ...], out: list[_Stmt], local: set[str]) -> None:
    for s in body:
        kind = (
            "for"
            if isinstance(s, (ast.For, ast.AsyncFor))
            else "while"
            if isinstance(s, ast.While)
            else "if"
            if isinstance(s, ast.If)
            else "with"
            if isinstance(s, (ast.With, ast.AsyncWith))
            else ""
        )
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            continue  # docstring
        node = _header_node(s)
        body0 = getattr(s, "body", None)
        last = (body0[0].lineno - 1) if kind and body0 else (getattr(s, "end_lineno", None) or s.lineno)
        scope = node if kind else s
        defs = {n.id for n in ast.walk(scope) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        uses = {n.id for n in ast.walk(scope) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            uses.add(s.target.id)
        st = _Stmt(node, kind, loops, line=s.lineno, last=max(last, s.lineno), defs=frozenset(defs & local),
                   uses=frozenset(uses & local))  # fmt: skip
        st.exact = kind + ":" + _dump(node)
        st.erased = kind + ":" + _erase(node, local)
        out.append(st)
        if kind in ("for", "while"):
            inner = (*loops, len(out) - 1)
            _flatten(s.body, inner, out, local)  # type: ignore[attr-defined]
            _flatten(s.orelse, loops, out, local)  # type: ignore[attr-defined]
        elif kind == "if":
            _flatten(s.body, loops, out, local)  # type: ignore[attr-defined]
            _flatten(s.orelse, loops, out, local)  # type: ignore[attr-defined]
        elif kind == "with":
            _flatten(s.body, loops, out, local)  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------------------------ comparing


def _src(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - unparse of odd nodes
        return "?"
    return text if len(text) <= 80 else text[:77] + "..."


class _Cmp:
    """Compare one pair of functions; appends to ``out``."""

    def __init__(
        self, fa: _Fn, fb: _Fn, out: list[SourceChange], params: list[tuple[str | None, str | None]] | None = None
    ):
        self.fa, self.fb, self.out = fa, fb, out
        self.params = params  # the kernels' parameters paired by role (names, None: only on one side); else by position
        self.la, self.lb = _locals(fa.node), _locals(fb.node)
        self.renames: dict[tuple[str, str], tuple[int, int]] = {}
        self.map: dict[str, str] = {}
        self.line_pairs: dict[int, int] = {}
        self.flow_a: list[StmtFlow] = []
        self.flow_b: list[StmtFlow] = []

    def ka(self, node: ast.AST) -> str:
        """``a``'s node with its local names mapped to ``b``'s (:meth:`build_map`)."""
        m = self.map
        return _key(node, lambda n: m.get(n, n)) if m else _dump(node)

    def kb(self, node: ast.AST) -> str:
        return _dump(node)

    def same(self, x: ast.AST, y: ast.AST) -> bool:
        return self.ka(x) == self.kb(y)

    def build_map(self, pairs: list[tuple[ast.AST, ast.AST]]) -> None:
        """A one-to-one renaming of ``a``'s locals to ``b``'s, from parameters by position and from statements
        that are equal once names are erased (the most frequent partner of each name wins)."""
        from collections import Counter

        votes: dict[str, Counter[str]] = {}
        pa = [*self.fa.node.args.posonlyargs, *self.fa.node.args.args]
        pb = [*self.fb.node.args.posonlyargs, *self.fb.node.args.args]
        for x, y in zip(pa, pb, strict=False):
            votes.setdefault(x.arg, Counter())[y.arg] += 3
        for sx, sy in pairs:
            nx = [n.id for n in ast.walk(sx) if isinstance(n, ast.Name) and n.id in self.la]
            ny = [n.id for n in ast.walk(sy) if isinstance(n, ast.Name) and n.id in self.lb]
            if len(nx) != len(ny):
                continue
            for p, q in zip(nx, ny, strict=True):
                votes.setdefault(p, Counter())[q] += 1
        taken: set[str] = set()
        for p, c in sorted(votes.items(), key=lambda kv: -max(kv[1].values())):
            q = c.most_common(1)[0][0]
            if q not in taken:
                self.map[p] = q
                taken.add(q)

    def line_a(self, n: int | None) -> int | None:
        return None if n is None else n + self.fa.offset

    def line_b(self, n: int | None) -> int | None:
        return None if n is None else n + self.fb.offset

    def text(self, fn: _Fn, line: int | None) -> str:
        if line is None:
            return ""
        i = line - fn.offset - 1
        return fn.lines[i].strip() if 0 <= i < len(fn.lines) else ""

    def add(
        self,
        kind: str,
        summary: str,
        na: Any,
        nb: Any,
        name: str = "",
        old: str = "",
        new: str = "",
        semantic: bool = True,
    ) -> None:
        la = self.line_a(getattr(na, "lineno", None)) if na is not None else None
        lb = self.line_b(getattr(nb, "lineno", None)) if nb is not None else None
        ea = self.line_a(getattr(na, "end_lineno", None)) if na is not None else None
        eb = self.line_b(getattr(nb, "end_lineno", None)) if nb is not None else None
        self.out.append(
            SourceChange(
                kind=kind,
                semantic=semantic,
                summary=summary,
                function=self.fa.name,
                function_b=self.fb.name,
                line_a=la,
                line_b=lb,
                text_a=self.text(self.fa, la),
                text_b=self.text(self.fb, lb),
                name=name,
                old=old,
                new=new,
                file_a=self.fa.file,
                file_b=self.fb.file,
                end_a=ea if ea is not None else la,
                end_b=eb if eb is not None else lb,
            )
        )

    # -- signature

    def signature(self) -> None:
        a, b = self.fa.node.args, self.fb.node.args
        pa, pb = [*a.posonlyargs, *a.args], [*b.posonlyargs, *b.args]
        da = [None] * (len(pa) - len(a.defaults)) + list(a.defaults)
        db = [None] * (len(pb) - len(b.defaults)) + list(b.defaults)
        # Pairs of (parameter, its default) by position, or by role when the kernels' pairing is known (a parameter
        # inserted before others shifts their positions; TorchInductor also renames them by position).
        pos = [
            (pa[i] if i < len(pa) else None, pb[i] if i < len(pb) else None, i if i < len(pa) else None,
             i if i < len(pb) else None)
            for i in range(max(len(pa), len(pb)))
        ]  # fmt: skip
        if self.params is not None:
            ia = {p.arg: i for i, p in enumerate(pa)}
            ib = {p.arg: i for i, p in enumerate(pb)}
            known = [(ia.get(x) if x else None, ib.get(y) if y else None) for x, y in self.params]
            known = [(i, j) for i, j in known if i is not None or j is not None]
            seen_a = {i for i, _ in known if i is not None}
            seen_b = {j for _, j in known if j is not None}
            known += [(i, None) for i in range(len(pa)) if i not in seen_a]
            known += [(None, j) for j in range(len(pb)) if j not in seen_b]
            pos = [(pa[i] if i is not None else None, pb[j] if j is not None else None, i, j) for i, j in known]
        for x, y, i_a, i_b in pos:
            if x is None or y is None:
                p = x or y
                assert p is not None
                self.add(
                    "statement",
                    f"parameter `{p.arg}` only in `{'{A}' if y is None else '{B}'}`",
                    x,
                    y,
                    name=p.arg,
                    old=x.arg if x else "",
                    new=y.arg if y else "",
                )
                continue
            if x.arg != y.arg:
                self.renames.setdefault((x.arg, y.arg), (x.lineno, y.lineno))
            ann_a = _src(x.annotation) if x.annotation else ""
            ann_b = _src(y.annotation) if y.annotation else ""
            if ann_a != ann_b:
                what = f"`{y.arg}` is annotated `{ann_a or '(nothing)'}` in `{{A}}` and `{ann_b or '(nothing)'}` in `{{B}}`"
                self.add("annotation", what, x, y, name=y.arg, old=ann_a, new=ann_b)
            xa_ = da[i_a] if i_a is not None else None
            yb_ = db[i_b] if i_b is not None else None
            dfa = _src(xa_) if xa_ is not None else ""
            dfb = _src(yb_) if yb_ is not None else ""
            if dfa != dfb:
                self.add(
                    "annotation",
                    f"default of `{y.arg}`: `{dfa or '(none)'}` in `{{A}}`, `{dfb or '(none)'}` in `{{B}}`",
                    x,
                    y,
                    y.arg,
                    dfa,
                    dfb,
                )
        deca = {_dotted(d.func if isinstance(d, ast.Call) else d): d for d in self.fa.node.decorator_list}
        decb = {_dotted(d.func if isinstance(d, ast.Call) else d): d for d in self.fb.node.decorator_list}
        for k in dict.fromkeys([*deca, *decb]):
            x2, y2 = deca.get(k), decb.get(k)
            if x2 is None or y2 is None or _dump(x2) != _dump(y2):
                if x2 is not None and y2 is not None and isinstance(x2, ast.Call) and isinstance(y2, ast.Call):
                    self.keywords(x2, y2, k)
                    if len(x2.args) == len(y2.args):
                        # ``@triton.heuristics({...})``: a changed positional argument, compared as an expression
                        for ax, ay in zip(x2.args, y2.args, strict=True):
                            if _dump(ax) != _dump(ay):
                                self.expr(ax, ay)
                        continue
                    if list(map(_dump, x2.keywords)) == list(
                        map(_dump, y2.keywords)
                    ):  # (else the keywords' changes name it)
                        self.add("annotation", f"decorator `@{k}` differs", x2, y2, name=k, old=_src(x2), new=_src(y2))
                    continue
                self.add(
                    "annotation",
                    f"decorator `@{k}` "
                    + ("only in `{B}`" if x2 is None else "only in `{A}`" if y2 is None else "differs"),
                    x2 or self.fa.node,
                    y2 or self.fb.node,
                    name=k,
                    old=_src(x2) if x2 is not None else "",
                    new=_src(y2) if y2 is not None else "",
                )

    # -- statements

    def body(self) -> None:
        sa: list[_Stmt] = []
        sb: list[_Stmt] = []
        _flatten(self.fa.node.body, (), sa, self.la)
        _flatten(self.fb.node.body, (), sb, self.lb)
        if not self.fa.file:
            self.flow_a = [StmtFlow(self.fa.name, x.line, x.last, x.defs, x.uses) for x in sa]
        if not self.fb.file:
            self.flow_b = [StmtFlow(self.fb.name, x.line, x.last, x.defs, x.uses) for x in sb]
        # aligned on the erased form *and* the loop depth, so a hoisted statement (not its loop) is what moved
        sm = difflib.SequenceMatcher(
            a=[f"{s.loop_depth()}@{s.erased}" for s in sa],
            b=[f"{s.loop_depth()}@{s.erased}" for s in sb],
            autojunk=False,
        )
        gone: list[int] = []
        new: list[int] = []
        pairs: list[tuple[int, int]] = []
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            if tag == "equal":
                pairs.extend(zip(range(i1, i2), range(j1, j2), strict=True))
                continue
            ia, jb = list(range(i1, i2)), list(range(j1, j2))
            # pair by similarity, most similar pair first (not first statement first: that pairs differently when
            # the variants are swapped), ties by position in the block
            cands: list[tuple[float, int, int, int]] = []
            for i in ia:
                for j in jb:
                    if sa[i].header != sb[j].header:
                        continue
                    r = difflib.SequenceMatcher(a=sa[i].erased, b=sb[j].erased, autojunk=False).quick_ratio()
                    # the same assigned name is the user's own pairing (``start = …`` with ``start = …``): a hint
                    # moved from one assignment to another must not pair the two look-alike right-hand sides
                    bonus = 0.3 if sa[i].defs and sa[i].defs == sb[j].defs and not sa[i].header else 0.0
                    if r + bonus > 0.45:
                        r = difflib.SequenceMatcher(a=sa[i].erased, b=sb[j].erased, autojunk=False).ratio() + bonus
                    if r > 0.45:
                        cands.append((-r, abs((i - i1) - (j - j1)), i, j))
            used_a: set[int] = set()
            used: set[int] = set()
            for _, _, i, j in sorted(cands):
                if i not in used_a and j not in used:
                    used_a.add(i)
                    used.add(j)
                    pairs.append((i, j))
            gone.extend(i for i in ia if i not in used_a)
            new.extend(j for j in jb if j not in used)
        # moves: a removed and an added statement with the same erased form
        for i in list(gone):
            hit = next((j for j in new if sb[j].erased == sa[i].erased), None)
            if hit is None:
                continue
            j = hit
            gone.remove(i)
            new.remove(j)
            da, db = sa[i].loop_depth(), sb[j].loop_depth()
            where = (
                "out of the loop" if da > db else "into the loop" if db > da else "to another place in the same loop"
            )
            if da == db == 0:
                where = "to another place"
            stmt = _src(sa[i].node).split("\n")[0]
            self.add(
                "moved",
                f"`{stmt}` is at loop depth {da} in `{{A}}` (line {self.line_a(sa[i].line)}) and {db} in `{{B}}` (line {self.line_b(sb[j].line)}): moved {where}",
                _with_line(sa[i]),
                _with_line(sb[j]),
                name=stmt,
                old=f"loop depth {da}",
                new=f"loop depth {db}",
            )
            pairs.append((i, j))
        self.build_map([(sa[i].node, sb[j].node) for i, j in pairs if sa[i].erased == sb[j].erased])
        for i, j in sorted(pairs):
            x, y = sa[i], sb[j]
            if not self.fa.file and not self.fb.file:
                for k in range(max(x.last - x.line, y.last - y.line) + 1):
                    self.line_pairs.setdefault(min(x.line + k, x.last), min(y.line + k, y.last))
            if x.exact == y.exact:
                continue
            if self.same(x.node, y.node):
                self.rename_pairs(x.node, y.node)
                continue
            n0 = len(self.out)
            self.expr(x.node, y.node)
            # two names trade places (``rows * W + cols`` → ``cols * W + rows``): locals leave no change behind
            # (their pairs are renames), two module-level names (``ROWS``/``COLS`` constants) leave two changed names
            names_only = all(c.old.isidentifier() and c.new.isidentifier() for c in self.out[n0:])
            sw = self.swapped(x.node, y.node) if names_only else None
            if sw is not None:
                del self.out[n0:]
                self.add(
                    "args-reordered",
                    f"`{sw[0]}` and `{sw[1]}` swapped: `{_src(x.node)}` in `{{A}}` vs `{_src(y.node)}` in `{{B}}`",
                    _with_line(x),
                    _with_line(y),
                    name=f"{sw[0]} ↔ {sw[1]}",
                    old=_src(x.node),
                    new=_src(y.node),
                )
            elif len(self.out) == n0:
                self.add(
                    "statement",
                    f"`{_src(x.node)}` in `{{A}}` vs `{_src(y.node)}` in `{{B}}`",
                    _with_line(x),
                    _with_line(y),
                )
        for i in gone:
            self.add("statement", f"statement `{_src(sa[i].node)}` only in `{{A}}`", _with_line(sa[i]), None)
        for j in new:
            self.add("statement", f"statement `{_src(sb[j].node)}` only in `{{B}}`", None, _with_line(sb[j]))

    def swapped(self, x: ast.AST, y: ast.AST) -> tuple[str, str] | None:
        """Two names of ``x`` whose exchange makes it ``y`` (the operands of an address computation swapped), or
        None; ``a``'s locals are first mapped to ``b``'s (:meth:`build_map`)."""
        m = self.map
        target = self.kb(y)
        names = sorted({n.id for n in ast.walk(x) if isinstance(n, ast.Name)})
        if len(names) > 12:
            return None
        for i, p in enumerate(names):
            for q in names[i + 1 :]:
                trade = {p: m.get(q, q), q: m.get(p, p)}

                def rename(n: str, t: dict[str, str] = trade) -> str:
                    return t.get(n, m.get(n, n))

                if _key(x, rename) == target:
                    return p, q
        return None

    def rename_pairs(self, x: ast.AST, y: ast.AST) -> None:
        for p, q in zip(ast.walk(x), ast.walk(y), strict=False):
            if isinstance(p, ast.Name) and isinstance(q, ast.Name) and p.id != q.id:
                self.renames.setdefault((p.id, q.id), (p.lineno, q.lineno))

    def renamed(self) -> None:
        seen: set[str] = set()
        for (x, y), (la, lb) in self.renames.items():
            if x in seen or (self.map and self.map.get(x, x) != y):
                continue
            seen.add(x)
            self.add(
                "renamed",
                f"`{x}` in `{{A}}` is called `{y}` in `{{B}}`",
                _Line(la),
                _Line(lb),
                name=x,
                old=x,
                new=y,
                semantic=False,
            )

    # -- expressions

    def expr(self, x: Any, y: Any) -> None:
        """Recursive comparison of two nodes already paired; reports the innermost differences."""
        if isinstance(x, list) or isinstance(y, list):
            xs, ys = list(x or []), list(y or [])
            for p, q in zip(xs, ys, strict=False):
                self.expr(p, q)
            return
        if not isinstance(x, ast.AST) or not isinstance(y, ast.AST):
            if x != y:
                self.add("statement", f"`{x}` in `{{A}}` vs `{y}` in `{{B}}`", None, None)
            return
        if self.same(x, y):
            if _dump(x) != _dump(y):
                self.rename_pairs(x, y)
            return
        # a call wrapped around (or unwrapped from) the same expression
        path, method = _wrap_path(y, x, self.kb, self.ka)
        if path:
            for call in path:
                fname = _dotted(call.func) or _src(call.func)
                self.add(
                    "call-added",
                    _wrap_words(call, x, "{B}", "{A}", method),
                    x,
                    call,
                    name=fname,
                    new=_src(call),
                    old=_src(x),
                )
            return
        path, method = _wrap_path(x, y, self.ka, self.kb)
        if path:
            for call in path:
                fname = _dotted(call.func) or _src(call.func)
                self.add(
                    "call-removed",
                    _wrap_words(call, y, "{A}", "{B}", method),
                    call,
                    y,
                    name=fname,
                    old=_src(call),
                    new=_src(y),
                )
            return
        # one side is the other with an operand or operation added around it (`v * f` → `v * f + 1.0`)
        for outer, inner, key_o, key_i in ((y, x, self.kb, self.ka), (x, y, self.ka, self.kb)):
            if isinstance(outer, (ast.BinOp, ast.BoolOp, ast.Compare, ast.UnaryOp)):
                kids = [c for c in ast.iter_child_nodes(outer) if isinstance(c, ast.expr)]
                if any(key_o(c) == key_i(inner) for c in kids):
                    self.add("statement", f"`{_src(x)}` in `{{A}}` is `{_src(y)}` in `{{B}}`", x, y)
                    return
        if type(x) is not type(y):
            if isinstance(x, (ast.BinOp, ast.Call)) and isinstance(y, (ast.BinOp, ast.Call)):
                ox = _OPNAMES.get(type(x.op), "?") if isinstance(x, ast.BinOp) else _dotted(x.func)
                oy = _OPNAMES.get(type(y.op), "?") if isinstance(y, ast.BinOp) else _dotted(y.func)
                self.add(
                    "op-changed",
                    f"`{_src(x)}` in `{{A}}` is `{_src(y)}` in `{{B}}`",
                    x,
                    y,
                    name=f"{ox} → {oy}",
                    old=ox,
                    new=oy,
                )
                return
            self.add("statement", f"`{_src(x)}` in `{{A}}` vs `{_src(y)}` in `{{B}}`", x, y)
            return
        yy: Any = y
        if isinstance(x, ast.Call):
            self.call(x, yy)
            return
        if isinstance(x, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.AugAssign)):
            tx, ty = type(x.op), type(yy.op)
            if (
                tx is not ty
                and isinstance(x, ast.BinOp)
                and not (self.same(x.left, yy.left) and self.same(x.right, yy.right))
            ):
                self.add("statement", f"`{_src(x)}` in `{{A}}` is `{_src(y)}` in `{{B}}`", x, y)
                return
            if tx is not ty:
                a, b = _OPNAMES.get(tx, tx.__name__), _OPNAMES.get(ty, ty.__name__)
                self.add(
                    "op-changed",
                    f"operator `{a}` in `{{A}}` vs `{b}` in `{{B}}` (`{_src(y)}`)",
                    x,
                    y,
                    name=f"{a} → {b}",
                    old=a,
                    new=b,
                )
        if isinstance(x, ast.Compare) and [type(o) for o in x.ops] != [type(o) for o in yy.ops]:
            a = " ".join(_OPNAMES.get(type(o), "?") for o in x.ops)
            b = " ".join(_OPNAMES.get(type(o), "?") for o in yy.ops)
            self.add(
                "op-changed",
                f"comparison `{a}` in `{{A}}` vs `{b}` in `{{B}}` (`{_src(y)}`)",
                x,
                y,
                name=f"{a} → {b}",
                old=a,
                new=b,
            )
        if isinstance(x, ast.Attribute) and isinstance(y, ast.Attribute):
            dx, dy = _dotted(x), _dotted(y)
            if dx and dy and dx != dy:
                kind = (
                    "dtype-changed" if dx.split(".")[-1] in _DTYPES or dy.split(".")[-1] in _DTYPES else "call-changed"
                )
                what = "dtype" if kind == "dtype-changed" else "name"
                self.add(kind, f"{what} `{dx}` in `{{A}}` vs `{dy}` in `{{B}}`", x, y, name=dy, old=dx, new=dy)
                return
        if isinstance(x, ast.Constant):
            if x.value != y.value or type(x.value) is not type(y.value):
                self.add(
                    "constant-changed",
                    f"constant `{_src(x)}` in `{{A}}` vs `{_src(y)}` in `{{B}}`",
                    x,
                    y,
                    name=_src(y),
                    old=_src(x),
                    new=_src(y),
                )
            return
        if isinstance(x, ast.Name):
            if x.id != y.id:
                if x.id in self.la or y.id in self.lb:
                    self.renames.setdefault((x.id, y.id), (x.lineno, y.lineno))
                else:
                    kind = "dtype-changed" if x.id in _DTYPES or y.id in _DTYPES else "call-changed"
                    self.add(kind, f"`{x.id}` in `{{A}}` vs `{y.id}` in `{{B}}`", x, y, name=y.id, old=x.id, new=y.id)
            return
        if isinstance(x, ast.Subscript) and _index_kinds(x.slice) != _index_kinds(yy.slice):
            # the indexing itself changed (`rows[None, :]` vs `rows[:, None]`: which axis a new dimension is added
            # on, a slice for an index): the subscript is the changed expression; its bare tokens (`None`, `:`) say
            # nothing on their own
            self.add("statement", f"`{_src(x)}` in `{{A}}` vs `{_src(y)}` in `{{B}}`", x, y)
            return
        for fld in x._fields:
            if fld in ("op", "ops", "ctx"):
                continue
            fx, fy = getattr(x, fld, None), getattr(y, fld, None)
            if isinstance(fx, ast.AST) is not isinstance(fy, ast.AST) and (fx is None or fy is None):
                # an optional part on one side only (`return` vs `return v`): the enclosing node is what changed
                self.add("statement", f"`{_src(x)}` in `{{A}}` vs `{_src(y)}` in `{{B}}`", x, y)
                continue
            self.expr(fx, fy)

    def call(self, x: ast.Call, y: ast.Call) -> None:
        fx, fy = _dotted(x.func), _dotted(y.func)
        if (fx or _src(x.func)) != (fy or _src(y.func)):
            if (
                isinstance(x.func, ast.Attribute)
                and isinstance(y.func, ast.Attribute)
                and x.func.attr == y.func.attr
                and not (self.module_path(x.func.value, self.la) and self.module_path(y.func.value, self.lb))
            ):
                self.expr(x.func.value, y.func.value)  # same method on another object: compare the objects
            else:
                self.add(
                    "call-changed",
                    f"`{fx or _src(x.func)}` in `{{A}}` vs `{fy or _src(y.func)}` in `{{B}}`",
                    x,
                    y,
                    fy,
                    fx,
                    fy,
                )
        elif isinstance(x.func, ast.Attribute) and not fx:
            self.expr(x.func.value, y.func.value)  # type: ignore[attr-defined]
        name = fy or fx or _src(y.func)
        ea = [self.ka(a) for a in x.args]
        eb = [self.kb(a) for a in y.args]
        if len(ea) == len(eb) and ea != eb and sorted(ea) == sorted(eb):
            self.add(
                "args-reordered",
                f"arguments of `{name}` reordered: `{', '.join(_src(a) for a in x.args)}` in `{{A}}`, "
                f"`{', '.join(_src(a) for a in y.args)}` in `{{B}}`",
                x,
                y,
                name=name,
                old=", ".join(_src(a) for a in x.args),
                new=", ".join(_src(a) for a in y.args),
            )
        else:
            for p, q in zip(x.args, y.args, strict=False):
                self.expr(p, q)
            for p in x.args[len(y.args) :]:
                self.add("statement", f"argument `{_src(p)}` of `{name}` only in `{{A}}`", p, y, name=name, old=_src(p))
            for q in y.args[len(x.args) :]:
                self.add("statement", f"argument `{_src(q)}` of `{name}` only in `{{B}}`", x, q, name=name, new=_src(q))
        self.keywords(x, y, name, fx or _src(x.func))

    @staticmethod
    def module_path(node: ast.AST, local: set[str]) -> bool:
        """``node`` is a dotted name rooted at a global (a module such as ``tl`` or ``libdevice``), not at a local
        value: ``libdevice.exp`` vs ``tl.exp`` is another function, ``x.to`` vs ``y.to`` the same method."""
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and root.id not in local and bool(_dotted(node))

    def keywords(self, x: ast.Call, y: ast.Call, name: str, name_a: str = "") -> None:
        """Keyword arguments added, removed or changed; a keyword only in ``a`` is named on ``a``'s callee
        (``name_a``: ``tl.range`` has ``loop_unroll_factor=4``, not ``range``)."""
        name_a = name_a or name
        kx = {k.arg: k.value for k in x.keywords if k.arg}
        ky = {k.arg: k.value for k in y.keywords if k.arg}
        for k in dict.fromkeys([*kx, *ky]):
            vx, vy = kx.get(k), ky.get(k)
            if vx is not None and vy is not None:
                if self.same(vx, vy):
                    continue
                if _dump(vx) != _dump(vy) and isinstance(vx, ast.Constant) is isinstance(vy, ast.Constant):
                    self.add(
                        "kwarg-changed",
                        f"`{name}` keyword `{k}={_src(vx)}` in `{{A}}`, `{k}={_src(vy)}` in `{{B}}`",
                        vx,
                        vy,
                        name=k,
                        old=_src(vx),
                        new=_src(vy),
                    )
                    continue
                self.expr(vx, vy)
            elif vy is not None:
                self.add(
                    "kwarg-changed",
                    f"`{name}` has `{k}={_src(vy)}` in `{{B}}`, no `{k}` in `{{A}}` (the default)",
                    x,
                    vy,
                    name=k,
                    old="",
                    new=_src(vy),
                )
            elif vx is not None:
                self.add(
                    "kwarg-changed",
                    f"`{name_a}` has `{k}={_src(vx)}` in `{{A}}`, no `{k}` in `{{B}}` (the default)",
                    vx,
                    y,
                    name=k,
                    old=_src(vx),
                    new="",
                )


@dataclass
class _Line:
    lineno: int


def _index_kinds(index: ast.AST) -> tuple[str, ...]:
    """The shape of a subscript's index, position by position: ``rows[None, :]`` → ``("None", "slice")``,
    ``x[i]`` → ``("expr",)``; two indexes of different shapes index differently whatever their expressions."""
    elts = index.elts if isinstance(index, ast.Tuple) else [index]
    return tuple(
        "slice"
        if isinstance(e, ast.Slice)
        else "None"
        if isinstance(e, ast.Constant) and e.value is None
        else "..."
        if isinstance(e, ast.Constant) and e.value is Ellipsis
        else "expr"
        for e in elts
    )


def _with_line(s: _Stmt) -> _Line:
    return _Line(s.line)


def _wrap_words(call: ast.Call, inner: ast.AST, side: str, other: str, method: bool) -> str:
    """How ``side`` wraps ``inner`` in ``call`` and ``other`` does not, in the kernel author's terms: a method applied
    to the expression (``x.to(tl.int64)``: "applies `.to(tl.int64)` to `x`"), or a function around it
    (``tl.multiple_of(x, 16)``: "wraps `x` in `tl.multiple_of` (with 16)")."""
    func = call.func
    if method and isinstance(func, ast.Attribute):
        args = ", ".join([_src(a) for a in call.args] + [f"{k.arg}={_src(k.value)}" for k in call.keywords])
        return f"`{side}` applies `.{func.attr}({args})` to `{_src(inner)}`, `{other}` does not"
    fname = _dotted(func) or _src(func)
    extra = [_src(a) for a in call.args[1:]] + [f"{k.arg}={_src(k.value)}" for k in call.keywords]
    return (
        f"`{side}` wraps `{_src(inner)}` in `{fname}`"
        + (f" (with {', '.join(extra)})" if extra else "")
        + (f", `{other}` does not")
    )


def _wrap_path(
    outer: ast.AST, inner: ast.AST, key_outer: Callable[[ast.AST], str], key_inner: Callable[[ast.AST], str]
) -> tuple[list[ast.Call], bool]:
    """The calls of ``outer`` (outermost first) that wrap an expression equal to ``inner`` (compared through the
    keys, which map renamed locals), following each call's first argument, or else each method call's object
    (``x.to(tl.int64)``: then the flag is True); empty when ``outer`` does not wrap ``inner``."""
    target = key_inner(inner)
    path: list[ast.Call] = []
    node = outer
    while isinstance(node, ast.Call) and node.args and len(path) < 8:
        path.append(node)
        node = node.args[0]
        if key_outer(node) == target:
            return path, False
    # method-style wrapper: x.to(tl.int64)
    node = outer
    path = []
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and len(path) < 8:
        path.append(node)
        node = node.func.value
        if key_outer(node) == target:
            return path, True
    return [], False


def diff_functions(
    fa: _Fn,
    fb: _Fn,
    into: SourceDiff | None = None,
    params: list[tuple[str | None, str | None]] | None = None,
) -> list[SourceChange]:
    """Compare two parsed functions (signature, decorators, body); renames are reported once per name. With
    ``into``, also record the paired lines and the statements' names there. ``params``: the parameters paired by
    role (``(name in a or None, name in b or None)``, :func:`irdiff.diagnose.params.pair_params`); without it they
    are paired by position."""
    out: list[SourceChange] = []
    cmp = _Cmp(fa, fb, out, params)
    cmp.signature()
    cmp.body()
    cmp.renamed()
    if into is not None:
        for k, v in cmp.line_pairs.items():
            into.line_pairs.setdefault(k, v)
        into.flow_a.extend(cmp.flow_a)
        into.flow_b.extend(cmp.flow_b)
    return out


def diff_sources(
    va: VariantResult, vb: VariantResult, params: list[tuple[str | None, str | None]] | None = None
) -> SourceDiff:
    """Every source change from ``va`` (inspected) to ``vb`` (baseline): the kernels, the ``@triton.jit``
    functions they call (paired by name; the kernel always with the kernel), then launch options and constexpr
    values (``kind="option"``, no line). ``params``: the kernels' parameters paired by role (see
    :func:`diff_functions`); the functions they call keep positional pairing.

    Never raises on odd input: a missing or unparseable source gives an empty diff with ``note`` set.
    """
    out = SourceDiff()
    fns_a, note_a = jit_functions(va)
    fns_b, note_b = jit_functions(vb)
    if fns_a and fns_b:
        pairs = [(fns_a[0], fns_b[0])]
        by_b = {f.name: f for f in fns_b[1:]}
        for f in fns_a[1:]:
            if f.name in by_b:
                pairs.append((f, by_b[f.name]))
        for k, (fa, fb) in enumerate(pairs):
            out.functions.append((fa.name, fb.name))
            try:
                out.changes.extend(diff_functions(fa, fb, out, params if k == 0 else None))
            except (RecursionError, ValueError):
                continue
    else:
        out.note = note_a or note_b
    for key in _OPTIONS:
        x, y = va.options.get(key), vb.options.get(key)
        if x != y and x is not None and y is not None:
            out.changes.append(
                SourceChange(
                    "option", True, f"`{key}` = {x} in `{{A}}`, {y} in `{{B}}`", name=key, old=str(x), new=str(y)
                )
            )
    for key in dict.fromkeys([*va.config, *vb.config]):
        x, y = va.config.get(key), vb.config.get(key)
        if x != y:
            out.changes.append(
                SourceChange(
                    "option",
                    True,
                    f"constexpr `{key}` = {x} in `{{A}}`, {y} in `{{B}}`",
                    name=key,
                    old=str(x),
                    new=str(y),
                )
            )
    return out
