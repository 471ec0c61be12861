"""Hand-built facts for rule tests: a :class:`VariantFacts` with empty defaults and a :class:`Context` around two of
them, so a rule can be tested without compiling a kernel.

Example::

    fa = make_facts("a", resources={"registers": 96})
    fb = make_facts("b", resources={"registers": 40})
    rule_registers(make_context(fa, fb))[0].predicts   # "a"
"""

from __future__ import annotations

from typing import Any

from irdiff.diagnose.facts import ArgFact, Ref, VariantFacts
from irdiff.diagnose.rules.common import Context

__all__ = ["make_arg", "make_context", "make_facts"]


def make_facts(name: str = "a", **fields: Any) -> VariantFacts:
    """A :class:`VariantFacts` named ``name`` with every list/dict empty, ``sm90`` and ``num_warps = 4``; ``fields``
    override any field (``resources={"registers": 96}``, ``args=[make_arg("n", "i32")]``)."""
    base: dict[str, Any] = {
        "name": name,
        "kernel": "kernel",
        "target": "sm90",
        "arch": 90,
        "options": {"num_warps": 4, "num_stages": 3},
        "config": {},
        "args": [],
        "accesses": [],
        "pipeline": [],
        "buffers": [],
        "async_copies_prologue": [],
        "async_copies_loop": [],
        "sync_loads_loop": [],
        "tma_copies": [],
        "waits": [],
        "loops_ttir": [],
        "loops_ttgir": [],
        "blocked": [],
        "mma": [],
        "i64_ops": 0,
        "i64_first": None,
        "i64_first_python": None,
        "divrem64_ttir": [],
        "counts": {},
        "first_lines": {},
        "resources": {},
        "resource_refs": {},
        "occupancy": None,
        "llvm_debug_present": True,
    }
    base.update(fields)
    return VariantFacts(**base)


def make_arg(
    name: str,
    type: str,
    *,
    index: int = 0,
    divisibility: int | None = None,
    constexpr: str | None = None,
    reason: str = "",
    annotation: str | None = None,
    value: str = "",
    do_not_specialize: bool = False,
    ttir: Ref | None = None,
) -> ArgFact:
    """One parameter as the JIT specialized it (``type``: ``i32``, ``i64``, ``*fp16``, ``constexpr``)."""
    return ArgFact(
        name, index, type, divisibility, constexpr, reason, annotation, value, do_not_specialize, False, ttir
    )


def make_context(fa: VariantFacts, fb: VariantFacts, *, ttgir: str = "", python: str = "") -> Context:
    """The :class:`Context` comparing ``fa`` (inspected) with ``fb`` (baseline); optional raw TTGIR/Python for both."""
    return Context(fa.name, fb.name, fa, fb, {fa.name: ttgir, fb.name: ttgir}, {fa.name: python, fb.name: python})
