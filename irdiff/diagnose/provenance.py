"""Provenance: which Python line each IR line comes from, and what each Python line compiles to in every stage.

Built on :func:`irdiff.normalize.locations.source_map` (TTIR/TTGIR ``loc(...)``, LLIR ``!dbg``, PTX ``.loc``, SASS
``//##`` line comments; Triton's own SASS listing usually has none, so SASS lines mostly map to nothing). Pure text
over the bundle (no Triton import).

* :func:`python_lines` — the Python lines an :class:`~irdiff.diagnose.model.Evidence` points at (``python``
  evidence directly, IR evidence through the stage's location map).
* :func:`ops_at` — per stage, the instructions a set of Python lines compiled to, as ``{key: count}`` (MLIR: the op
  with its attributes, SSA names and locations erased; LLIR: the instruction; PTX/SASS: the full opcode with every
  modifier, e.g. ``ld.global.L1::evict_first.L2::cache_hint.v4.b32``).
* :func:`attr_changes` — TTIR ops at paired Python lines that differ only in their attributes (``evict``,
  ``cache``, memory order and scope of atomics, ``inputPrecision``, ``tt.divisibility``/``tt.contiguity`` hints):
  the root named in words when nothing earlier explains it.
* :func:`stage_trace` — the per-stage instruction differences at a change's lines, and whether anything outside
  them differs (so a root can say "nothing else differs").
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from irdiff.bundle import VariantResult
from irdiff.diagnose.counts import ptx_instructions, sass_instructions
from irdiff.diagnose.model import Evidence
from irdiff.diagnose.texts import stage_text
from irdiff.normalize.locations import source_map

__all__ = [
    "ATTR_WORDS",
    "AttrChange",
    "StageDelta",
    "arange_strides",
    "attr_changes",
    "line_map",
    "ops_at",
    "python_lines",
    "stage_text",
    "stage_trace",
]

TRACE_STAGES: tuple[str, ...] = ("ttir", "ttgir", "llir", "ptx", "sass")

# Attribute words in TTIR and what they mean (used to name an attribute change in words).
ATTR_WORDS: dict[str, str] = {
    "evict_first": "eviction policy `evict_first`",
    "evict_last": "eviction policy `evict_last`",
    "evict_normal": "eviction policy `evict_normal`, the default",
    "eviction_policy": "eviction policy",
    "cache_modifier": "cache modifier",
    "cachePolicy": "cache policy",
    "cache": "cache modifier",
    "evict": "eviction policy",
    "isVolatile": "volatile access",
    "acq_rel": "memory order `acq_rel` (acquire-release)",
    "acquire": "memory order `acquire`",
    "release": "memory order `release`",
    "relaxed": "memory order `relaxed`",
    "sem": "memory order",
    "gpu": "scope `gpu`",
    "cta": "scope `cta`",
    "sys": "scope `sys`",
    "scope": "memory scope",
    "inputPrecision": "dot input precision",
    "tf32": "`tf32` (TensorFloat-32 inputs)",
    "tf32x3": "`tf32x3` (three-pass TF32)",
    "ieee": "`ieee` (full fp32 inputs)",
    "bf16x3": "`bf16x3` (three bf16 products per fp32 product)",
    "bf16x6": "`bf16x6` (six bf16 products per fp32 product)",
    "maxNumImpreciseAcc": "max imprecise accumulations",
    "tt.divisibility": "divisibility hint (`tl.multiple_of`)",
    "tt.contiguity": "contiguity hint (`tl.max_contiguous`)",
    "tt.constancy": "constancy hint (`tl.max_constancy`)",
    "rounding": "rounding mode",
    "rtne": "round to nearest even",
    "rtz": "round toward zero",
    "boundaryCheck": "boundary check",
    "padding": "padding",
}

_SSA = re.compile(r"%[\w.#-]+")
_TOKENS = re.compile(r"[A-Za-z_][\w.:]*|\d+|\S")


def _strip_loc(line: str) -> str:
    i = line.find(" loc(")
    return line[:i] if i >= 0 else line


def _mlir_key(raw: str) -> str:
    s = _strip_loc(raw).strip()
    s = _SSA.sub("%", s)
    return re.sub(r"@\w+", "@K", s)


@lru_cache(maxsize=64)
def _map(directory: str, stage: str, text_len: int, source_path: str, text: str) -> dict[int, int]:
    return source_map(stage, text, source_path)


def line_map(v: VariantResult, stage: str) -> dict[int, int]:
    """``{raw line of stage: line of the variant's kernel.py}`` (cached per variant directory and stage)."""
    text = stage_text(v, stage)
    if not text or stage == "python":
        return {}
    src = str(v.metadata.get("source_path") or "kernel.py")
    return _map(v.directory, stage, len(text), src, text)


def python_lines(v: VariantResult, ev: Evidence) -> set[int]:
    """The kernel.py lines one piece of evidence (of variant ``v``) points at; empty when unknown."""
    if ev.line is None:
        return set()
    if ev.stage == "python":
        return {ev.line}
    m = line_map(v, ev.stage)
    return {m[ev.line]} if ev.line in m else set()


@lru_cache(maxsize=64)
def _stage_ops(directory: str, stage: str, text_len: int, source_path: str, text: str) -> dict[int, list[str]]:
    """``{python line: [instruction key, ...]}`` in text order for one stage."""
    m = _map(directory, stage, text_len, source_path, text)
    out: dict[int, list[str]] = {}
    if not m:
        return out  # no location info (Triton's own SASS listing): nothing to attribute
    if stage in ("ttir", "ttgir"):
        lines = text.splitlines()
        for no, py in m.items():
            raw = lines[no - 1]
            s = raw.strip()
            if not s or s.startswith(("#", "}", "^", "module", "tt.func", "tt.return", "scf.yield")):
                continue
            out.setdefault(py, []).append(_mlir_key(raw))
    elif stage == "llir":
        lines = text.splitlines()
        for no, py in m.items():
            s = lines[no - 1].split(", !dbg", 1)[0].strip()
            s = re.sub(r"%[\w.]+", "%", s)
            op = s.split("=", 1)[1].strip() if "=" in s.split("(", 1)[0] else s
            out.setdefault(py, []).append(" ".join(op.split()[:3]))
    elif stage in ("ptx", "sass"):
        instrs = ptx_instructions(text) if stage == "ptx" else sass_instructions(text)
        for no, op, _ in instrs:
            at = m.get(no)
            if at is not None:
                out.setdefault(at, []).append(op)
    return out


def _ops(v: VariantResult, stage: str) -> dict[int, list[str]]:
    text = stage_text(v, stage)
    if not text:
        return {}
    src = str(v.metadata.get("source_path") or "kernel.py")
    try:
        return _stage_ops(v.directory, stage, len(text), src, text)
    except (ValueError, IndexError, RecursionError):
        return {}


def ops_at(v: VariantResult, stage: str, lines: set[int]) -> Counter[str]:
    """What ``lines`` of the variant's kernel.py compiled to in ``stage``: ``{instruction key: count}``."""
    by = _ops(v, stage)
    out: Counter[str] = Counter()
    for ln in lines:
        out.update(by.get(ln, []))
    return out


def _opname(key: str) -> str:
    m = re.search(r"=\s*([a-z_]+\.[\w.]+)", key) or re.match(r"\s*([a-z_]+\.[\w.]+)", key)
    return m.group(1) if m else key.split(" ")[0]


@dataclass
class AttrChange:
    """A TTIR op at paired Python lines whose text differs only in attributes.

    :ivar op: the op name (``tt.load``).
    :ivar line_a: kernel.py line in ``a``; ``line_b`` in ``b``.
    :ivar ttir_a: the TTIR line number in ``a`` (raw), ``ttir_b`` in ``b``; ``text_a``/``text_b`` the raw op lines.
    :ivar only_a: attribute tokens present in ``a`` only (``evict_first``), ``only_b`` in ``b`` only.
    """

    op: str
    line_a: int
    line_b: int
    ttir_a: int
    ttir_b: int
    text_a: str
    text_b: str
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)

    def words(self, a: str, b: str) -> str:
        """``tt.load`` at line 41 has ``evict = evict_first`` in ``a`` where ``b`` has ``...``, in words."""

        def name(toks: list[str]) -> str:
            if not toks:
                return "nothing"
            parts = [p for t in toks for p in re.split(r"\s*=\s*", t)]
            named = [ATTR_WORDS.get(p) for p in parts if p in ATTR_WORDS]
            code = ", ".join(toks)
            code = code if len(code) <= 90 else code[:87] + "..."
            return f"`{code}`" + (f" ({'; '.join(dict.fromkeys(n for n in named if n))})" if any(named) else "")

        return (
            f"TTIR `{self.op}` from line {self.line_a} of `{a}` (line {self.line_b} of `{b}`) differs only in its "
            f"attributes: {name(self.only_a)} in `{a}`, {name(self.only_b)} in `{b}`"
        )


_KV = re.compile(r"([A-Za-z_][\w.]*)\s*=\s*(dense<[^>]*>|\[[^\]]*\]|[\w.:-]+)")
_WORD = re.compile(r"[A-Za-z_][\w.:]*")
_TYPE_WORDS = {"tensor", "dense", "ptr", "tt.ptr", "i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"}


# A structured attribute (``cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_first>``)
# stands for its items; the items that mean "no hint" are what an op without the attribute has.
_STRUCT_ATTR = re.compile(r"[A-Za-z_][\w.]*\s*=\s*#[\w.]+<([^<>]*)>")
_DEFAULT_ITEMS = {"cache_modifier = none", "eviction_policy = evict_normal", "isVolatile = false"}


def _attr_tokens(key: str) -> list[str]:
    """Attribute items of an MLIR op key: ``name = value`` pairs (``eviction_policy = evict_first``; a structured
    attribute's items, default-valued items left out), then the bare words outside them (``acq_rel``, ``gpu``);
    types (``tensor<64x1x!tt.ptr<f32>>``, nested or not), type words and SSA names left out, so ops whose result
    *types* differ (a ``64x1`` vs a ``1x64`` splat) are not an attribute change."""
    key = _STRUCT_ATTR.sub(lambda m: f" {m.group(1)} ", key)
    pairs = [p for p in (f"{k} = {v}" for k, v in _KV.findall(key)) if p not in _DEFAULT_ITEMS]
    rest = _KV.sub(" ", key)
    while True:  # innermost angle brackets first, until no type is left
        nxt = re.sub(r"<[^<>]*>", " ", rest)
        if nxt == rest:
            break
        rest = nxt
    words = [
        w
        for w in _WORD.findall(rest)
        if w not in _TYPE_WORDS and not re.fullmatch(r"x?[if]\d+|xi\d+|x[\dx]*", w) and not w.startswith("tt.ptr")
    ]
    return pairs + words[1:]  # the first word is the op name


def attr_changes(va: VariantResult, vb: VariantResult, line_pairs: dict[int, int]) -> list[AttrChange]:
    """TTIR ops that pair up one-to-one at paired Python lines (``line_pairs``: a line → b line, from
    :class:`irdiff.diagnose.source.SourceDiff`; identity when empty) and differ only in attribute tokens."""
    ta, tb = stage_text(va, "ttir"), stage_text(vb, "ttir")
    if not ta or not tb:
        return []
    ma, mb = line_map(va, "ttir"), line_map(vb, "ttir")
    la_lines, lb_lines = ta.splitlines(), tb.splitlines()
    by_a: dict[int, list[int]] = {}
    by_b: dict[int, list[int]] = {}
    for no, py in ma.items():
        by_a.setdefault(py, []).append(no)
    for no, py in mb.items():
        by_b.setdefault(py, []).append(no)
    pairs = line_pairs or {ln: ln for ln in by_a}
    out: list[AttrChange] = []
    for pa, pb in sorted(pairs.items()):
        xa = [n for n in by_a.get(pa, []) if _is_op(la_lines[n - 1])]
        xb = [n for n in by_b.get(pb, []) if _is_op(lb_lines[n - 1])]
        if not xa or len(xa) != len(xb):
            continue
        ka = [_mlir_key(la_lines[n - 1]) for n in xa]
        kb = [_mlir_key(lb_lines[n - 1]) for n in xb]
        if [_opname(k) for k in ka] != [_opname(k) for k in kb]:
            continue
        for na, nb, x, y in zip(xa, xb, ka, kb, strict=True):
            if x == y:
                continue
            tx, ty = _attr_tokens(x), _attr_tokens(y)
            cx, cy = Counter(tx), Counter(ty)
            only_a = list((cx - cy).elements())
            only_b = list((cy - cx).elements())
            if not only_a and not only_b:
                continue
            out.append(
                AttrChange(
                    _opname(x), pa, pb, na, nb, la_lines[na - 1].strip(), lb_lines[nb - 1].strip(), only_a, only_b
                )
            )
    return out


def _is_op(raw: str) -> bool:
    s = raw.strip()
    return bool(s) and not s.startswith(("#", "}", "^", "module", "tt.func", "tt.return", "scf.yield"))


@dataclass
class StageDelta:
    """What the change's lines compile to in one stage, where the two variants differ.

    :ivar only_a: ``{instruction: count}`` more in ``a`` at those lines; ``only_b`` more in ``b``.
    :ivar elsewhere: True when the rest of the stage (lines mapped to other Python lines, or none) also differs.
    """

    stage: str
    only_a: dict[str, int]
    only_b: dict[str, int]
    elsewhere: bool


def stage_trace(
    va: VariantResult,
    vb: VariantResult,
    lines_a: set[int],
    lines_b: set[int],
    stages: tuple[str, ...] = TRACE_STAGES,
) -> list[StageDelta]:
    """Per stage (default TTIR → SASS), the instruction differences at ``lines_a``/``lines_b`` and whether
    anything outside them differs. Stages without location info in either variant are skipped."""
    out: list[StageDelta] = []
    for stage in stages:
        oa, ob = _ops(va, stage), _ops(vb, stage)
        if not oa or not ob:
            continue
        at_a = Counter(k for ln in lines_a for k in oa.get(ln, []))
        at_b = Counter(k for ln in lines_b for k in ob.get(ln, []))
        rest_a = Counter(k for ln, ks in oa.items() if ln not in lines_a for k in ks)
        rest_b = Counter(k for ln, ks in ob.items() if ln not in lines_b for k in ks)
        if stage in ("ttir", "ttgir"):
            rest_a, rest_b = Counter(map(_opname, rest_a.elements())), Counter(map(_opname, rest_b.elements()))
        only_a, only_b = dict(at_a - at_b), dict(at_b - at_a)
        elsewhere = rest_a != rest_b
        if only_a or only_b or elsewhere:
            out.append(StageDelta(stage, only_a, only_b, elsewhere))
    return out


# ------------------------------------------------------------------------------------------------ data flow

_FUNC_ARG = re.compile(r"%([\w.$-]+)\s*:")
_RESULTS = re.compile(r"^\s*((?:%[\w.$#-]+(?::\d+)?\s*,\s*)*%[\w.$#-]+(?::\d+)?)\s*=\s*\"?([\w.]+)\"?")
_ITER_ARGS = re.compile(r"iter_args\(([^)]*)\)")
_ASSIGN = re.compile(r"(%[\w.$#-]+)\s*=\s*(%[\w.$#-]+)")
_USE = re.compile(r"%[\w.$#-]+")


def arange_strides(mlir: str, params: list[str] | None = None) -> set[str]:
    """Kernel parameters that act as the stride of a ``tl.arange`` offset in an address: a value derived from the
    parameter is multiplied (``arith.muli``) with a value derived from ``tt.make_range``, and the product reaches a
    ``tt.addptr``. Read from the TTIR/TTGIR text of the variant in which the parameter is a runtime value.

    :param params: the non-constexpr parameter names in signature order, for IR whose function arguments are
        numbered (``%arg3``, Triton ≤ 3.3); named arguments (3.4+) are used as they are.
    :returns: parameter names; empty when the function signature cannot be read. Never raises.
    """
    lines = mlir.splitlines()
    start = next((i for i, ln in enumerate(lines) if "tt.func" in ln and "@" in ln), None)
    if start is None:
        return set()
    sig = lines[start].split("(", 1)[1] if "(" in lines[start] else ""
    args = [m.group(1) for m in _FUNC_ARG.finditer(sig)]
    name_of: dict[str, str] = {}
    for i, a in enumerate(args):
        if re.fullmatch(r"arg\d+", a) and params and i < len(params):
            name_of["%" + a] = params[i]
        else:
            name_of["%" + a] = a
    from_arg: dict[str, set[str]] = {k: {v} for k, v in name_of.items()}
    ranged: set[str] = set()
    stride: dict[str, set[str]] = {}
    found: set[str] = set()
    for raw in lines[start + 1 :]:
        line = _strip_loc(raw)
        if "iter_args" in line:
            for it in _ITER_ARGS.finditer(line):
                for x, y in _ASSIGN.findall(it.group(1)):
                    from_arg.setdefault(x, set()).update(from_arg.get(y, set()))
                    if y in ranged:
                        ranged.add(x)
                    stride.setdefault(x, set()).update(stride.get(y, set()))
        m = _RESULTS.match(line)
        op = m.group(2) if m else line.strip().split(" ", 1)[0]
        rhs = line.split("=", 1)[1] if m else line
        uses = [u for u in _USE.findall(rhs)]
        results = [r.split(":")[0].strip() for r in m.group(1).split(",")] if m else []
        if op == "tt.addptr":
            for u in uses:
                found |= stride.get(u, set())
        if not results:
            continue
        args_in = set().union(*(from_arg.get(u, set()) for u in uses)) if uses else set()
        is_ranged = op == "tt.make_range" or any(u in ranged for u in uses)
        strides_in = set().union(*(stride.get(u, set()) for u in uses)) if uses else set()
        if op == "arith.muli" and len(uses) >= 2:
            x, y = uses[0], uses[1]
            if x in ranged and from_arg.get(y):
                strides_in |= from_arg[y]
            if y in ranged and from_arg.get(x):
                strides_in |= from_arg[x]
        for r in results:
            if args_in:
                from_arg[r] = set(args_in)
            if is_ranged:
                ranged.add(r)
            if strides_in:
                stride[r] = set(strides_in)
    return found
