"""Which output parameters a kernel also *reads*, from its TTIR.

A kernel that accumulates into its output (split-K with ``tl.atomic_add``, a histogram, ``out += …`` through a
``tl.load`` of the output) needs the output to start at a real value: the runner's default NaN poison would make
every result NaN (floats) or garbage (integers). This module finds such outputs so the runner can refuse the NaN
start with a clear message instead of reporting a wrong result.

Method (a forward data-flow over the TTIR text of ``tt.func``, as printed by Triton with the parameters named,
``%c_ptr: !tt.ptr<f32>``): every SSA value computed from a parameter's pointer (``tt.splat``, ``tt.broadcast``,
``tt.addptr``, ``tt.make_tensor_ptr``, ``tt.advance``, ``tt.make_tensor_descriptor``, ``arith.select``, loop
``iter_args`` …) carries the parameter's name, iterated to a fixed point for loops. A *read* is a ``tt.load``,
``tt.descriptor_load``/``tt.descriptor_gather``, ``tt.atomic_rmw``, ``tt.atomic_cas`` or ``tt.descriptor_reduce``
whose pointer (or descriptor) operand carries the name. Values produced by those reading ops are data, not
pointers, and carry nothing.

Pure text processing: no Triton or torch import.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["READ_OPS", "outputs_read", "pointer_readers"]

READ_OPS = (
    "tt.load",
    "tt.descriptor_load",
    "tt.descriptor_gather",
    "tt.atomic_rmw",
    "tt.atomic_cas",
    "tt.descriptor_reduce",
)
_DATA_RESULT_OPS = ("tt.load", "tt.descriptor_load", "tt.descriptor_gather", "tt.atomic_rmw", "tt.atomic_cas")

_VALUE = re.compile(r"%([\w.$-]+)(?:#\d+)?")
_DEF = re.compile(r"^\s*%([\w.$-]+)(?::\d+)?\s*=\s*(\"?[\w.]+\"?)")
_ITER_ARG = re.compile(r"%([\w.$-]+)\s*=\s*%([\w.$-]+)")
_LOC = re.compile(r"\s*loc\((?:[^()]|\([^()]*\))*\)\s*$")


def _func_params(ttir: str) -> list[str]:
    for line in ttir.splitlines():
        if "tt.func" in line and "(" in line:
            head = line[line.index("(") :]
            return re.findall(r"%([\w.$-]+):", head)
    return []


def _operands(op: str, rest: str) -> list[str]:
    """The SSA operands of an operation (everything before the type signature after ``:``)."""
    body = rest.split(" : ", 1)[0]
    return [m.group(1) for m in _VALUE.finditer(body)]


def pointer_readers(ttir: str, params: Iterable[str]) -> dict[str, list[str]]:
    """``param → [op, …]``: the reading operations (``tt.atomic_rmw fadd``, ``tt.load`` …) on memory reached
    through each of ``params``' pointers. Parameters never read map to ``[]``.
    """
    wanted = list(params)
    taint: dict[str, set[str]] = {p: {p} for p in wanted}
    lines = [_LOC.sub("", ln) for ln in ttir.splitlines()]
    reads: dict[str, list[str]] = {p: [] for p in wanted}
    for _ in range(8):  # loops feed values back through iter_args/yield: iterate to a fixed point
        changed = False
        for line in lines:
            m = _DEF.match(line)
            if "iter_args(" in line:
                inside = line.split("iter_args(", 1)[1].split(")", 1)[0]
                for blk, init in _ITER_ARG.findall(inside):
                    src = taint.get(init)
                    if src and not src <= taint.get(blk, set()):
                        taint.setdefault(blk, set()).update(src)
                        changed = True
            if not m:
                continue
            res, op = m.group(1), m.group(2).strip('"')
            if op in _DATA_RESULT_OPS:
                continue
            rest = line[m.end() :]
            if "iter_args(" in rest:
                rest = rest.split("iter_args(", 1)[1]
            srcs: set[str] = set()
            for v in _operands(op, rest):
                srcs |= taint.get(v, set())
            if srcs and not srcs <= taint.get(res, set()):
                taint.setdefault(res, set()).update(srcs)
                changed = True
        if not changed:
            break
    for line in lines:
        s = line.strip()
        body = s.split("=", 1)[1].strip() if _DEF.match(line) else s
        op = body.split(" ", 1)[0].strip('"')
        if op not in READ_OPS:
            continue
        rest = body[len(op) :]
        ops = _operands(op, rest)
        if not ops:
            continue
        kind = op
        if op == "tt.atomic_rmw":
            km = re.match(r"\s*(\w+)", rest)
            kind = f"{op} {km.group(1)}" if km else op
        for p in taint.get(ops[0], set()):
            if kind not in reads[p]:
                reads[p].append(kind)
    return reads


def outputs_read(ttir: str, outputs: Iterable[str]) -> dict[str, list[str]]:
    """The outputs among ``outputs`` that the kernel also reads: ``{name: [reading op, …]}`` (names read only).

    Names that are not parameters of the TTIR ``tt.func`` (a constexpr, a parameter specialized away) are ignored.
    """
    params = set(_func_params(ttir))
    found = pointer_readers(ttir, [o for o in outputs if o in params])
    return {k: v for k, v in found.items() if v}
