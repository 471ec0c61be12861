"""Pair the parameters of two kernels by role, not by name.

Two kernels compiled from related sources often list the same parameters under other names or at other positions:
TorchInductor numbers its pointers by position (``in_ptr0``, ``in_ptr1`` …), so a new runtime size (``ks0``) or a
scalar that stopped being folded into the code (``eps`` as ``in_ptr2``) shifts every later name; a hand-written
variant may rename ``x_ptr`` to ``inp``. Pairing by name then compares a weight pointer with an ``fp64`` scalar.

This module reads what each parameter *is* and how the kernel *uses* it, from the kernel's TTIR (TTGIR works the same
way): a forward data-flow pass over the ``tt.func`` body marks every SSA value with the parameters (and
``tt.get_program_id``) it is computed from, then records, per parameter,

* pointers: whether ``tt.load`` and/or ``tt.store`` (or an atomic) read/write through it, whether the address
  depends on the program id (per-row data) or not (the same vector for every program: a weight or bias), and the
  loads' ``evictionPolicy``;
* integers: ``stride`` (an operand of an ``arith.muli`` whose product feeds a ``tt.addptr`` offset; ``row`` when the
  other factor comes from the program id), ``offset`` (feeds an address without a multiply), ``mask`` (feeds a
  ``tt.load``/``tt.store`` mask), ``loop`` (a ``scf.for`` bound), ``value`` (reaches floating-point arithmetic);
* floats: ``value``; a parameter with none of these is ``unused``.

:func:`pair_params` matches ``tl.constexpr`` parameters by name (they are the kernel's configuration, see
``config.changed``), and the others greedily by kind (pointer / integer / float), role, element type, name and
position. Unmatched parameters are *added* in one variant; :func:`describe_role` names them in words ("the row
stride, a runtime i64").

Pure Python over texts; no Triton import. Used by the stage-0 rules (``spec.*``, ``spec.param-added``) and by the
stage-0 table of every renderer, for suite variants and captures alike.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "ParamPair",
    "ParamPairing",
    "ParamRole",
    "describe_role",
    "pair_params",
    "param_roles",
]

PID = "<program_id>"  # pseudo-parameter: values derived from tt.get_program_id
_MUL = "<mul>"  # prefix of pseudo-parameters: values derived from one arith.muli result

_LOC = re.compile(r"\s*loc\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)")
_VALUE = re.compile(r"%[\w.$-]+(?:#\d+)?")
_DEF = re.compile(r"^\s*((?:%[\w.$-]+(?::\d+)?\s*,\s*)*%[\w.$-]+(?::\d+)?)\s*=\s*([\w.]+)(.*)$")
_FUNC = re.compile(r"tt\.func\s+(?:public\s+|private\s+)?@[\w.$-]+\s*\((.*?)\)\s*(?:->|attributes|\{)", re.S)
_FLOAT_OPS = (
    "arith.addf",
    "arith.subf",
    "arith.mulf",
    "arith.divf",
    "arith.sitofp",
    "arith.uitofp",
    "arith.extf",
    "arith.truncf",
    "arith.maximumf",
    "arith.minimumf",
    "arith.maxnumf",
    "arith.minnumf",
    "arith.cmpf",
    "tt.extern_elementwise",
    "tt.precise_sqrt",
    "tt.precise_divf",
)


_POINTER_USES = {"load", "store", "atomic", "per-program", "shared", "evict_first", "evict_last", "evict_normal"}
_SCALAR_USES = {"stride", "row", "offset", "mask", "loop", "value"}


class _Spec(Protocol):
    name: str
    type: str
    constexpr: str | None
    divisibility: int | None


@dataclass
class ParamRole:
    """One parameter: what it is and how the kernel uses it.

    :ivar kind: ``pointer``, ``int``, ``float`` or ``constexpr`` (declared ``tl.constexpr``: a configuration value).
    :ivar type: the stage-0 type (``*bf16``, ``i64``, ``fp64``, ``constexpr``).
    :ivar features: uses read from the IR (see the module docstring): ``load``, ``store``, ``atomic``,
        ``per-program``, ``shared``, ``evict_first``/``evict_last``, ``stride``, ``row``, ``offset``, ``mask``,
        ``loop``, ``value``. Empty when the parameter is not used or the IR is not available.
    :ivar ir_seen: whether the parameter was found in the IR's function signature (a JIT constant is not).
    """

    name: str
    index: int
    kind: str
    type: str
    divisibility: int | None = None
    constexpr: str | None = None
    features: frozenset[str] = frozenset()
    ir_seen: bool = False
    addresses: tuple[str, ...] = ()  # pointer parameters whose addresses this integer enters (strides, offsets)

    @property
    def elem(self) -> str:
        return self.type[1:] if self.type.startswith("*") else self.type


@dataclass
class ParamPair:
    """One parameter of ``a`` matched with one of ``b``; ``a`` or ``b`` is None for a parameter only one side has.

    :ivar how: ``same`` (same name), ``renamed`` (same role under another name), ``config`` (a ``tl.constexpr``
        matched by name), ``added`` (only ``b`` has it), ``removed`` (only ``a`` has it).
    """

    a: ParamRole | None
    b: ParamRole | None
    how: str
    score: float = 1.0

    @property
    def label(self) -> str:
        """``in_ptr2`` for a same-name pair, ``in_ptr2 → in_ptr3`` for a renamed one."""
        na = self.a.name if self.a else None
        nb = self.b.name if self.b else None
        if na and nb and na != nb:
            return f"{na} → {nb}"
        return str(na or nb)


@dataclass
class ParamPairing:
    """Result of :func:`pair_params`: pairs in ``a``'s parameter order, then the parameters only ``b`` has."""

    pairs: list[ParamPair] = field(default_factory=list)

    def b_for(self, name_a: str) -> ParamRole | None:
        """``b``'s parameter paired with ``a``'s parameter ``name_a`` (None: unpaired or unknown)."""
        return next((p.b for p in self.pairs if p.a is not None and p.a.name == name_a), None)

    def a_for(self, name_b: str) -> ParamRole | None:
        return next((p.a for p in self.pairs if p.b is not None and p.b.name == name_b), None)

    def aliases(self, side: str) -> dict[str, str | None]:
        """For a lookup on ``side`` (``"a"`` or ``"b"``) by the *other* side's parameter name: {other name: this
        side's paired name, or None when the other side's parameter has no partner}. Names not in the mapping
        are looked up as they are."""
        out: dict[str, str | None] = {}
        for p in self.pairs:
            mine, other = (p.a, p.b) if side == "a" else (p.b, p.a)
            if other is not None:
                out[other.name] = mine.name if mine is not None else None
        return out

    @property
    def renamed(self) -> list[ParamPair]:
        return [p for p in self.pairs if p.how == "renamed"]

    def only(self, side: str) -> list[ParamRole]:
        """Parameters only ``side`` has (``"a"``: removed in ``b``; ``"b"``: added in ``b``)."""
        if side == "a":
            return [p.a for p in self.pairs if p.b is None and p.a is not None]
        return [p.b for p in self.pairs if p.a is None and p.b is not None]

    @property
    def shifted(self) -> bool:
        """True when pairing by name would pair other parameters than pairing by role (renames or additions)."""
        return any(p.how in ("renamed", "added", "removed") for p in self.pairs)


def _kind(s: _Spec, declared_constexpr: bool) -> str:
    if declared_constexpr:
        return "constexpr"
    t = s.type
    if t.startswith("*"):
        return "pointer"
    if t.startswith(("fp", "bf")):
        return "float"
    if t == "constexpr":  # a runtime parameter the JIT turned into a constant (value 1, None)
        c = str(s.constexpr)
        return "float" if re.fullmatch(r"-?\d+\.\d*(e-?\d+)?", c) else "int"
    return "int"


def _signature_args(text: str) -> list[str]:
    """SSA names of the ``tt.func`` arguments, in order (``%in_ptr0`` or ``%arg0``)."""
    m = _FUNC.search(_LOC.sub("", text))
    if not m:
        return []
    return re.findall(r"(%[\w.$-]+)\s*:", m.group(1))


def _features(text: str, args: list[str], addresses: dict[str, set[str]] | None = None) -> dict[str, set[str]]:
    """Forward data flow over the function body: the uses of each argument (see the module docstring). When
    ``addresses`` is given it receives, per argument that enters an address offset, the arguments that are the
    base pointers of those addresses."""
    taint: dict[str, frozenset[str]] = {a: frozenset([a]) for a in args}
    feats: dict[str, set[str]] = {a: set() for a in args}
    into_offset: set[str] = set()  # arith.muli results that reach a tt.addptr offset
    products: dict[str, tuple[frozenset[str], frozenset[str]]] = {}  # muli result -> taints of its two operands
    lines = [_LOC.sub("", ln) for ln in text.splitlines() if not ln.lstrip().startswith("#loc")]
    body = False
    for ln in lines:
        if not body:
            if "tt.func" in ln:
                body = True
            continue
        s = ln.strip()
        if not s or s.startswith(("}", "^bb", "//")):
            continue
        m = _DEF.match(s)
        if m:
            results = [r.split(":")[0].strip() for r in m.group(1).split(",")]
            op, rest = m.group(2), m.group(3)
        else:
            results = []
            op, _, rest = s.partition(" ")
        if op == "tt.get_program_id":
            for r in results:
                taint[r] = frozenset([PID])
            continue
        operand_text = rest.split(" : ")[0] if op not in ("scf.for",) else rest
        operands = _VALUE.findall(operand_text)
        # scf.for %iv = %lb to %ub step %st iter_args(%x = %init, ...)
        if op == "scf.for":
            head = re.match(r"\s*(%[\w.$-]+)\s*=\s*(%[\w.$-]+)\s+to\s+(%[\w.$-]+)\s+step\s+(%[\w.$-]+)", rest)
            if head:
                iv, lb, ub, st = head.groups()
                for bound in (lb, ub, st):
                    for o in taint.get(bound, ()):
                        if o in feats:
                            feats[o].add("loop")
                taint[iv] = taint.get(lb, frozenset()) | taint.get(st, frozenset())
            # only the iter_args pairs (without iter_args the head's `%iv = %lb` must not be read as one)
            _, _, carried = rest.partition("iter_args")
            inits = re.findall(r"(%[\w.$-]+)\s*=\s*(%[\w.$-]+(?:#\d+)?)", carried)
            for x, init in inits:
                taint[x] = taint.get(init, frozenset())
            # the loop's results carry its iter_args' values, not its bounds (a trip count is not data)
            union = frozenset().union(*(taint.get(init, frozenset()) for _, init in inits))
            for r in results:
                taint[r] = union
            continue
        ts = [taint.get(o.split("#")[0] if o not in taint else o, frozenset()) for o in operands]
        # Loaded data is not derived from the address's parameters; a select's result not from its condition.
        flowing = [] if op == "tt.load" else ts[1:] if op == "arith.select" else ts
        union = frozenset().union(*flowing) if flowing else frozenset()
        for r in results:
            taint[r] = union
        if op == "arith.muli" and len(ts) >= 2 and results:
            products[results[0]] = (ts[0], ts[1])
            taint[results[0]] = union | {_MUL + results[0]}
        if op == "tt.addptr" and len(operands) >= 2:
            if addresses is not None:
                bases = {b for b in ts[0] if b in feats}
                for o in ts[1]:
                    if o in feats:
                        addresses.setdefault(o, set()).update(bases)
            for o in ts[1]:
                if o in feats:
                    feats[o].add("offset")
                elif o.startswith(_MUL):
                    into_offset.add(o[len(_MUL) :])
        elif op in ("tt.load", "tt.store") or op.startswith("tt.atomic"):
            use = "load" if op == "tt.load" else "store" if op == "tt.store" else "atomic"
            ptr_t = ts[0] if ts else frozenset()
            for o in ptr_t:
                if o in feats:
                    feats[o].add(use)
                    feats[o].add("per-program" if PID in ptr_t else "shared")
                    # Triton 3.6 prints `evictionPolicy = evict_first`, 3.9 `#tt.cache_policy<... eviction_policy = ...>`
                    ev = re.search(r"(?:evictionPolicy|eviction_policy)\s*=\s*(\w+)", rest)
                    if ev and use == "load":
                        feats[o].add(ev.group(1))
            mask_i = 1 if op == "tt.load" else 2 if op == "tt.store" else None
            if mask_i is not None and len(ts) > mask_i:
                for o in ts[mask_i]:
                    if o in feats:
                        feats[o].add("mask")
        elif op in _FLOAT_OPS or op.startswith("math."):
            for t in ts:
                for o in t:
                    if o in feats:
                        feats[o].add("value")
    # Strides: a multiply whose product reaches an address offset.
    for res in into_offset:
        t0, t1 = products.get(res, (frozenset(), frozenset()))
        for mine, other in ((t0, t1), (t1, t0)):
            for o in mine:
                if o in feats:
                    feats[o].add("stride")
                    if PID in other:
                        feats[o].add("row")
    for a in args:
        f = feats[a]
        if "offset" in f and "stride" in f:
            f.discard("offset")
    return feats


def param_roles(specialization: Sequence[Any], ir_text: str) -> list[ParamRole]:
    """The role of every parameter of one kernel.

    :param specialization: stage 0 (:class:`irdiff.bundle.ArgSpec` or :class:`irdiff.diagnose.facts.ArgFact`
        objects: ``name``, ``type``, ``divisibility``, ``constexpr``; ``is_constexpr_param`` when present).
    :param ir_text: the kernel's TTIR (or TTGIR); "" gives roles without features.
    :returns: one :class:`ParamRole` per parameter, in parameter order. The IR's arguments are the parameters that
        are not constants, in order (Triton drops constexprs and JIT constants from the ``tt.func`` signature).
    """
    args = _signature_args(ir_text) if ir_text else []
    addr: dict[str, set[str]] = {}
    feats = _features(ir_text, args, addr) if args else {}
    runtime = [s for s in specialization if s.type != "constexpr"]
    by_name = {s.name: a for s, a in zip(runtime, args)} if len(runtime) == len(args) else {}
    to_name = {a: n for n, a in by_name.items()}
    # the base of an address is a pointer parameter (an integer already in the base, e.g. a row offset, is not)
    pointers = {a: n for a, n in to_name.items() if next(s for s in runtime if s.name == n).type.startswith("*")}
    out = []
    for i, s in enumerate(specialization):
        declared = bool(getattr(s, "is_constexpr_param", False)) or (
            s.type == "constexpr" and str(getattr(s, "annotation", "") or "").endswith("constexpr")
        )
        ssa = by_name.get(s.name)
        kind = _kind(s, declared)
        used = feats.get(ssa, set()) if ssa else set()
        used = used & (_POINTER_USES if kind == "pointer" else _SCALAR_USES)
        out.append(
            ParamRole(
                name=s.name,
                index=i,
                kind=kind,
                type=s.type,
                divisibility=s.divisibility,
                constexpr=s.constexpr,
                features=frozenset(used),
                ir_seen=ssa is not None,
                addresses=tuple(sorted(pointers[b] for b in addr.get(ssa, ()) if b in pointers)) if ssa else (),
            )
        )
    return out


_MINOR = {"evict_first", "evict_last", "evict_normal"}


def _role_similarity(x: ParamRole, y: ParamRole) -> float:
    """Jaccard similarity of the uses (eviction hints count half); 0.5 when either side's uses are unknown."""
    if not (x.ir_seen and y.ir_seen):
        return 0.5
    fx, fy = set(x.features), set(y.features)
    if not fx and not fy:
        return 1.0
    if not fx or not fy:
        return 0.25  # used on one side only (e.g. a size the other source replaced by a constant)
    w = {f: (0.5 if f in _MINOR else 1.0) for f in fx | fy}
    inter = sum(w[f] for f in fx & fy)
    return inter / sum(w.values())


def _score(x: ParamRole, y: ParamRole, nx: int, ny: int) -> float | None:
    if x.kind != y.kind:
        return None
    role = _role_similarity(x, y)
    score = 3.0 * role
    if x.name == y.name:
        score += 2.0
    if x.kind == "pointer" and x.elem == y.elem:
        score += 0.5
    if x.kind == "int" and x.type == y.type:
        score += 0.25
    score += 0.5 * (1.0 - abs(x.index / max(nx, 1) - y.index / max(ny, 1)))
    return score


MIN_SCORE = 2.0  # a pair needs the same name or most of the same uses


def pair_params(spec_a: Sequence[Any], ir_a: str, spec_b: Sequence[Any], ir_b: str) -> ParamPairing:
    """Pair the parameters of two kernels by role (see the module docstring).

    :param spec_a: stage 0 of ``a`` (``ArgSpec``/``ArgFact`` objects); :param ir_a: its TTIR or TTGIR text.
    :returns: the pairs in ``a``'s parameter order (with parameters only ``a`` has at their place), then the
        parameters only ``b`` has, in ``b``'s order.
    """
    ra, rb = param_roles(spec_a, ir_a), param_roles(spec_b, ir_b)
    matched: dict[int, tuple[int, str, float]] = {}
    used_b: set[int] = set()
    # Configuration values pair by name.
    for i, x in enumerate(ra):
        if x.kind != "constexpr":
            continue
        j = next((j for j, y in enumerate(rb) if y.kind == "constexpr" and y.name == x.name and j not in used_b), None)
        if j is not None:
            matched[i] = (j, "config", 1.0)
            used_b.add(j)
    cands = []
    for i, x in enumerate(ra):
        if i in matched or x.kind == "constexpr":
            continue
        for j, y in enumerate(rb):
            if j in used_b or y.kind == "constexpr":
                continue
            s = _score(x, y, len(ra), len(rb))
            if s is not None and s >= MIN_SCORE:
                cands.append((s, i, j))
    for s, i, j in sorted(cands, key=lambda c: (-c[0], c[1], c[2])):
        if i in matched or j in used_b:
            continue
        matched[i] = (j, "same" if ra[i].name == rb[j].name else "renamed", round(s, 3))
        used_b.add(j)
    pairs: list[ParamPair] = []
    for i, x in enumerate(ra):
        if i in matched:
            j, how, s = matched[i]
            pairs.append(ParamPair(x, rb[j], how, s))
        else:
            pairs.append(ParamPair(x, None, "removed", 0.0))
    pairs += [ParamPair(None, y, "added", 0.0) for j, y in enumerate(rb) if j not in used_b]
    return ParamPairing(pairs)


def describe_role(r: ParamRole) -> str:
    """The parameter's role in words, e.g. ``the row stride, a runtime i64 (no divisibility)``, ``a pointer to bf16
    loaded from, the same address for every program (a weight or bias)``, ``a runtime fp64 used only in
    arithmetic``."""
    f = r.features
    if r.kind == "constexpr":
        return f"a `tl.constexpr` (= {r.constexpr})"
    div = f" divisible by {r.divisibility}" if r.divisibility else " (no divisibility)"
    if r.kind == "pointer":
        use = [
            w for w, k in (("loaded from", "load"), ("stored to", "store"), ("updated atomically", "atomic")) if k in f
        ]
        text = f"a pointer to {r.elem}" + (" " + " and ".join(use) if use else "")
        if "shared" in f and "per-program" not in f:
            text += ", at the same address in every program (a weight or bias vector)"
        elif "per-program" in f:
            text += ", at an address that depends on the program id"
        return text
    what = "constant" if r.type == "constexpr" else f"runtime {r.type}"
    roles = []
    of = ""
    if r.addresses:
        names = [f"`{x}`" for x in r.addresses]
        of = " of " + (names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1])
    if "stride" in f:
        roles.append(f"the row stride{of}" if "row" in f else f"a stride{of} (multiplies an index in an address)")
    if "offset" in f:
        roles.append(f"an offset added to the address{of}")
    if "mask" in f:
        roles.append("a bound in load/store masks")
    if "loop" in f and "stride" not in f:
        roles.append("a loop bound")
    if not roles and "value" in f:
        return f"a {what} used only in arithmetic (no address depends on it)"
    if "value" in f and roles:
        roles.append("also used in arithmetic")
    if not roles:
        return f"a {what}" + (", not used by the kernel" if r.ir_seen else "")
    tail = f"a {what}" + (div if r.kind == "int" and r.type != "constexpr" else "")
    return ", ".join(roles) + ", " + tail


def addressing(r: ParamRole) -> bool:
    """True for an integer parameter that enters address computation (stride or offset): its width and
    divisibility decide the index width and the alignment AxisInfo can prove."""
    return r.kind == "int" and bool({"stride", "offset"} & set(r.features))
