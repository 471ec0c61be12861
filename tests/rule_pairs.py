"""The :class:`~irdiff.diagnose.rules.common.Context` of two compiled variants as :func:`irdiff.diagnose.diagnose`
builds it (facts, mechanism facts, parameters paired by role), memoized per process: the unit tests of the mechanism
rules (``tests/test_rule_atomics.py``, ``tests/test_rule_hints.py``, ``tests/test_rule_mma_lowering.py``) call one
rule on it. Mutation runs fork the test process per mutant: the facts are inputs, not under test.

:func:`read_once` serves the rule tests that keep no bundle at all (``tests/test_rule_coalescing.py``,
``tests/test_rule_loops.py``): facts, specialization and stage texts read once per process."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from irdiff.bundle import Bundle
from irdiff.diagnose.facts import VariantFacts, extract_facts, strip_loc
from irdiff.diagnose.mechfacts import extract_mech_facts
from irdiff.diagnose.model import Finding
from irdiff.diagnose.params import pair_params
from irdiff.diagnose.rules.common import Context
from irdiff.diagnose.texts import stage_text

SUITES = Path(__file__).parent / "suites"
MECH = str(SUITES / "diag_mech.py")
KINDS = str(SUITES / "kinds" / "kinds.py")
OWN = str(SUITES / "rule_mech.py")
OWN_VARIANTS = [
    "wg4",
    "wg2",
    "m16",
    "f64",
    "dot80",
    "ld80",
    "dot90",
    "ld90",
    "acquire",
    "relaxed",
    "lock",
    "cg",
    "ca",
    "vol",
    "plain",
    "contig",
]

_MEMO: dict[tuple[int, str, str], Context] = {}


def context(bundle: Bundle, a: str, b: str) -> Context:
    """``a`` (inspected) against ``b`` (baseline) of ``bundle``."""
    key = (id(bundle), a, b)
    if key not in _MEMO:
        va, vb = bundle.compiled_variant(a), bundle.compiled_variant(b)
        fa, fb = extract_facts(va), extract_facts(vb)
        fa.mech, fb.mech = extract_mech_facts(va), extract_mech_facts(vb)
        p = pair_params(va.specialization, stage_text(va, "ttir"), vb.specialization, stage_text(vb, "ttir"))
        fa.peer_names, fb.peer_names = p.aliases("a"), p.aliases("b")
        _MEMO[key] = Context(a, b, fa, fb, {}, {}, p)
    return _MEMO[key]


def lines(bundle: Bundle, variant: str, stage: str, pattern: str) -> list[tuple[int, str]]:
    """``(1-based line, stripped text)`` of the lines of a stage text that match ``pattern`` (a regex)."""
    text = stage_text(bundle.compiled_variant(variant), stage)
    return [(i, ln.strip()) for i, ln in enumerate(text.splitlines(), 1) if re.search(pattern, ln)]


def ev(f: Finding) -> list[tuple[str, str]]:
    """The (variant, stage) of each evidence item, in order."""
    return [(e.variant, e.stage) for e in f.evidence]


def at_line(bundle: Bundle, f: Finding, k: int) -> str:
    """The stage line evidence item ``k`` of ``f`` points to (its variant's own text, stripped, without ``loc(...)``)."""
    e = f.evidence[k]
    assert e.line is not None
    return strip_loc(stage_text(bundle.compiled_variant(e.variant), e.stage).splitlines()[e.line - 1]).strip()


def one(
    rule: Callable[[Context], list[Finding]], bundle: Bundle, x: str, y: str, swap: bool
) -> tuple[Finding, str, str]:
    """The single finding of ``rule`` on ``x`` against ``y`` (or ``y`` against ``x`` when ``swap``), with the
    inspected and baseline names in that order."""
    a, b = (y, x) if swap else (x, y)
    found = rule(context(bundle, a, b))
    assert len(found) == 1, found
    return found[0], a, b


def n_ptx(bundle: Bundle, v: str, pattern: str) -> int:
    """How many PTX lines of variant ``v`` match ``pattern``."""
    return len(lines(bundle, v, "ptx", pattern))


def n_sass(bundle: Bundle, v: str, pattern: str) -> int:
    """How many SASS lines of variant ``v`` match ``pattern``, predicated-off (``@!PT``) lines left out."""
    return len([t for _, t in lines(bundle, v, "sass", pattern) if not t.startswith("@!PT")])


# ``real[variant]``: (facts, specialization, {stage: text}) of a compiled variant.
STAGES = ("ttir", "ttgir", "llvm_debug")
Real = dict[str, tuple[VariantFacts, list[Any], dict[str, str]]]


def read_once(
    compile_suite: Callable[..., Bundle], specs: Iterable[tuple[str, list[str], str, list[str] | None]], into: Real
) -> Real:
    """Compile (from the shared cache) each ``(suite, variants, target, used)`` of ``specs`` and put the facts,
    specialization and :data:`STAGES` texts of each variant in ``used`` (all when ``None``) into ``into`` unless already
    there; returns ``into``. mutmut runs a selection twice in one process, then forks it per mutant; a bundle
    directory of the first session may be gone by the second, so nothing here reads a bundle file again."""
    for suite, variants, target, used in specs:
        bundle = compile_suite(suite, variants, target)
        for n in used or variants:
            if n not in into:
                v = bundle.compiled_variant(n)
                into[n] = (extract_facts(v), v.specialization, {s: stage_text(v, s) for s in STAGES})
    return into
