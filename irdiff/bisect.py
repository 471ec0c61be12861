"""``irdiff bisect``: find the first published Triton release where a fact about one variant changes.

The releases come from the package index pip is configured with (``pip index versions triton``,
:func:`irdiff.compile.envs.published_versions`); each one tried compiles the variant in that release's environment
(created once, reused: :mod:`irdiff.compile.envs`) into one bundle whose variants are named
``<variant>@triton-<release>``, so the last good and first bad release can be diagnosed against each other with
the usual pipeline (the ``settings.triton-changed`` finding is the root).

A *fact* is an expression evaluated on one compiled variant (:func:`parse_fact`):

* ``spec.PARAM[.type|.divisibility|.constexpr|.summary] OP VALUE``: the JIT's specialization of a parameter (stage
  0); e.g. ``spec.stride_ak.type!=constexpr`` is true when the constant-1 specialization of ``stride_ak`` is lost.
  Stage 0 is recorded even when the compile fails afterwards.
* ``ptxas.registers|shared|spill_stores|spill_loads|stack|barriers OP N``: resources (ptxas ``-v`` report and
  Triton's metadata; ``shared`` in bytes).
* ``ttir|ttgir|llir|ptx|sass.OPCODE OP N``: how many operations/instructions of that name or with that dotted
  prefix the stage holds (``ptx.cp.async==0``, ``ttgir.ttg.async_copy_global_to_local>0``, ``sass.HMMA``).
* ``compile.failed``: the variant fails to compile.
* ``finding:ID`` (or a bare finding id such as ``spec.constexpr-one-lost``): that finding appears when the variant
  is diagnosed against ``--against`` (default: the suite's other variant) compiled by the same release.

``OP`` is one of ``== != > >= < <=``; a fact without one is true when its value is non-zero / present. A fact
that cannot be evaluated at a release (the compile failed before the value exists) makes that release *skipped*,
as ``git bisect skip`` does.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from irdiff.bundle import Bundle, VariantResult

__all__ = ["BisectResult", "Fact", "Trial", "bisect_releases", "parse_fact", "releases_between"]

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}
_EXPR = re.compile(r"^\s*(?P<lhs>[^=!<>\s]+)\s*(?:(?P<op>==|!=|>=|<=|>|<)\s*(?P<rhs>.+?))?\s*$")
_RESOURCES = {
    "registers": "registers",
    "regs": "registers",
    "shared": "shared_bytes",
    "spill_stores": "spill_store_bytes",
    "spills": "spill_store_bytes",
    "spill_loads": "spill_load_bytes",
    "stack": "stack_bytes",
    "barriers": "barriers",
}
_STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")
_SPEC_FIELDS = ("type", "divisibility", "constexpr", "summary")


class FactError(ValueError):
    """A fact expression cannot be parsed (one-line message)."""


@dataclass(frozen=True)
class Fact:
    """A parsed ``--fact``: ``kind`` (``spec``, ``resource``, ``count``, ``compile``, ``finding``), what it reads
    (``key``, ``sub``), and the comparison (``op``, ``rhs``; None: truthiness)."""

    text: str
    kind: str
    key: str
    sub: str = ""
    op: str | None = None
    rhs: str | None = None

    @property
    def needs_pair(self) -> bool:
        return self.kind == "finding"

    def value(self, v: VariantResult, diagnosis_ids: list[str] | None = None) -> Any:
        """The fact's value on one compiled variant; None when it cannot be known (failed compile)."""
        if self.kind == "compile":
            return bool(v.error)
        if self.kind == "spec":
            for a in v.specialization:
                if a.name == self.key:
                    if self.sub == "summary":
                        return a.summary()
                    return getattr(a, self.sub)
            if v.error:
                return None
            names = ", ".join(a.name for a in v.specialization)
            raise FactError(f"--fact {self.text}: the kernel has no parameter {self.key!r} (it has: {names})")
        if v.error:
            return None
        if self.kind == "resource":
            return getattr(v.resources, self.sub)
        if self.kind == "count":
            return count_prefix(self.key, v.text(self.key), self.sub)
        if self.kind == "finding":
            return None if diagnosis_ids is None else self.key in diagnosis_ids
        raise FactError(f"--fact {self.text}: unknown kind")

    def holds(self, value: Any) -> bool | None:
        """True when the fact holds for ``value`` (the *bad* state), None when ``value`` is unknown."""
        if value is None:
            return None
        if self.op is None:
            return bool(value)
        rhs: Any = self.rhs
        if isinstance(value, bool):
            rhs = str(rhs).lower() in ("1", "true", "yes")
        elif isinstance(value, (int, float)):
            try:
                rhs = float(str(rhs))
            except ValueError:
                raise FactError(f"--fact {self.text}: {self.rhs!r} is not a number") from None
        else:
            value = str(value)
            if rhs in ("None", "none", "null"):
                return _OPS[self.op](value, "None")
        return bool(_OPS[self.op](value, rhs))


def count_prefix(stage: str, text: str, name: str) -> int:
    """Operations of ``stage`` named ``name`` or starting with ``name.`` (PTX/SASS instructions by opcode,
    MLIR/LLVM ops by name; :mod:`irdiff.diagnose.counts`)."""
    from irdiff.diagnose.counts import count_ops, ptx_instructions, sass_instructions

    if not text:
        return 0

    def match(op: str) -> bool:
        return op == name or op.startswith(name + ".")

    if stage == "ptx":
        return sum(1 for _, op, _ in ptx_instructions(text) if match(op))
    if stage == "sass":
        return sum(1 for _, op, _ in sass_instructions(text) if match(op))
    counts = count_ops(stage, text)
    return sum(n for k, n in counts.items() if " " not in k and match(k))


def parse_fact(text: str) -> Fact:
    """Parse a ``--fact`` expression (see the module docstring).

    :raises FactError: unknown form, stage, resource or operator (the message lists the valid ones).
    """
    s = text.strip()
    if s.startswith("finding:"):
        fid = s[len("finding:") :].strip()
        if not fid:
            raise FactError("--fact finding:ID needs a finding id")
        return Fact(text, "finding", fid)
    m = _EXPR.match(s)
    if not m:
        raise FactError(f"--fact {text!r}: expected NAME[ OP VALUE] with OP one of {' '.join(_OPS)}")
    lhs, op, rhs = m.group("lhs"), m.group("op"), m.group("rhs")
    if lhs in ("compile.failed", "compile.fails", "compile-fails"):
        return Fact(text, "compile", "compile", "failed", op, rhs)
    if op is None and "-" in lhs and "." in lhs:  # a bare finding id (no parameter name has a dash)
        return Fact(text, "finding", lhs)
    head, _, rest = lhs.partition(".")
    if head == "spec":
        param, _, sub = rest.partition(".")
        sub = sub or "summary"
        if not param or sub not in _SPEC_FIELDS:
            raise FactError(f"--fact {text!r}: expected spec.PARAM[.{'|.'.join(_SPEC_FIELDS)}]")
        return Fact(text, "spec", param, sub, op, rhs)
    if head == "ptxas" or head == "resources":
        if rest not in _RESOURCES:
            raise FactError(f"--fact {text!r}: unknown resource {rest!r} (known: {', '.join(_RESOURCES)})")
        return Fact(text, "resource", "resources", _RESOURCES[rest], op, rhs)
    if head in _STAGES and rest:
        return Fact(text, "count", head, rest, op, rhs)
    raise FactError(
        f"--fact {text!r}: expected spec.PARAM…, ptxas.RESOURCE, {'|'.join(_STAGES)}.OPCODE, compile.failed or "
        "finding:ID"
    )


def releases_between(good: str, bad: str, available: list[str], pre: bool = False) -> list[str]:
    """Releases from ``good`` to ``bad`` inclusive, oldest first (both must be among ``available``).

    :raises ValueError: an endpoint the index does not offer, or ``good`` not older than ``bad``.
    """
    from irdiff.compile.envs import version_key

    for v, what in ((good, "--good"), (bad, "--bad")):
        if v not in available:
            from irdiff.suite import did_you_mean

            raise ValueError(f"{what} {v}: not a published Triton release{did_you_mean(v, available)}")
    lo, hi = version_key(good), version_key(bad)
    if not lo < hi:
        raise ValueError(f"--good {good} must be older than --bad {bad}")
    out = [v for v in available if lo <= version_key(v) <= hi]
    if not pre:
        from packaging.version import Version

        out = [v for v in out if v in (good, bad) or not Version(v).is_prerelease]
    return sorted(out, key=version_key)


@dataclass
class Trial:
    """One release tried: the fact's ``value`` there, whether it ``holds`` (bad) — None: skipped — and the
    bundle variant name, the compile error's first line (if any)."""

    release: str
    name: str
    value: Any
    holds: bool | None
    error: str = ""
    seconds: float = 0.0


@dataclass
class BisectResult:
    """Outcome: the releases in range, the trials in the order run, the last good and first bad release (None when
    the range did not narrow to one step, e.g. all between were skipped) and the bundle holding every compile."""

    releases: list[str]
    trials: list[Trial] = field(default_factory=list)
    last_good: str | None = None
    first_bad: str | None = None
    bundle: Bundle | None = None
    skipped_between: list[str] = field(default_factory=list)
    first_bad_candidates: list[str] = field(default_factory=list)

    def trial(self, release: str) -> Trial | None:
        return next((t for t in self.trials if t.release == release), None)


def bisect_releases(
    suite: str,
    variant: str,
    fact: Fact,
    releases: list[str],
    target: str,
    against: str | None = None,
    save: str | None = None,
    shape: dict[str, int] | None = None,
    config: Any = None,
    echo: Callable[[str], None] = print,
    jobs: int = 1,
) -> BisectResult:
    """Binary-search ``releases`` (oldest first: the first is the known-good end, the last the known-bad end) for
    the first release where ``fact`` holds for ``variant``. Both ends are checked first.

    :raises ValueError: the fact already holds at the good end, or does not hold (or is unknown) at the bad end.
    """
    import time

    from irdiff.compile import CompileRequest, Side, compile_bundle

    result = BisectResult(releases=list(releases))
    state: dict[str, Any] = {"bundle": None, "save": save}

    def run(release: str) -> Trial:
        t0 = time.perf_counter()
        sides = [Side(variant, triton=release, name=f"{variant}@triton-{release}")]
        if fact.needs_pair and against:
            sides.append(Side(against, triton=release, name=f"{against}@triton-{release}"))
        req = CompileRequest(suite=suite, variants=[], target=target, sides=sides, shape=dict(shape or {}),
                             config=config, jobs=jobs)  # fmt: skip
        bundle = compile_bundle(
            req, state["save"], command=["irdiff", "bisect", suite, "--variant", variant], echo=echo
        )
        state["bundle"], state["save"] = bundle, bundle.directory  # every release goes into one bundle
        v = bundle.variants[sides[0].name]
        ids: list[str] | None = None
        if fact.needs_pair and len(sides) == 2 and not v.error and not bundle.variants[sides[1].name].error:
            from irdiff.diagnose import diagnose

            ids = [f.id for f in diagnose(bundle, sides[0].name, sides[1].name).findings]
        value = fact.value(v, ids)
        trial = Trial(release, sides[0].name, value, fact.holds(value), first_line(v.error), time.perf_counter() - t0)
        result.trials.append(trial)
        echo(_trial_line(trial))
        return trial

    good = run(releases[0])
    if good.holds is None:
        raise ValueError(f"the fact cannot be evaluated at --good {releases[0]}: {good.error or 'no value'}")
    if good.holds:
        raise ValueError(f"the fact already holds at --good {releases[0]} (value {good.value!r}): nothing to bisect")
    bad = run(releases[-1])
    if bad.holds is None:
        raise ValueError(f"the fact cannot be evaluated at --bad {releases[-1]}: {bad.error or 'no value'}")
    if not bad.holds:
        raise ValueError(f"the fact does not hold at --bad {releases[-1]} (value {bad.value!r}): nothing to bisect")
    lo, hi = 0, len(releases) - 1
    skipped: set[int] = set()
    while hi - lo > 1:
        mid = (lo + hi) // 2
        order = sorted((i for i in range(lo + 1, hi) if i not in skipped), key=lambda i: (abs(i - mid), i))
        if not order:
            break
        i = order[0]
        t = run(releases[i])
        if t.holds is None:
            skipped.add(i)
        elif t.holds:
            hi = i
        else:
            lo = i
    result.bundle = state["bundle"]
    result.last_good = releases[lo]
    # With releases left between that could not be evaluated (skipped), the first bad one is among them or hi.
    result.first_bad = releases[hi] if hi - lo == 1 else None
    result.skipped_between = [releases[i] for i in range(lo + 1, hi)]
    if result.first_bad is None:
        result.first_bad_candidates = result.skipped_between + [releases[hi]]
    return result


def first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[-1].strip()[:160] if lines else ""


def format_value(v: Any) -> str:
    return "—" if v is None else str(v)


def _trial_line(t: Trial) -> str:
    verdict = "skip" if t.holds is None else "BAD" if t.holds else "good"
    err = f"   (compile failed: {t.error})" if t.error else ""
    return f"  {t.release:<10} {format_value(t.value):<24} {verdict:<5} {t.seconds:6.1f} s{err}"


def stage0_diagnosis(bundle: Bundle, a: str, b: str) -> tuple[list[Any], list[str]]:
    """Findings up to stage 0 (settings, specialization, options) for a pair where a side failed to compile after
    the JIT specialized it (its specialization is recorded, its IR is not). Returns ``(findings, notes)``."""
    from dataclasses import replace

    from irdiff.diagnose import diagnose

    variants = dict(bundle.variants)
    notes = []
    for n in (a, b):
        v = variants[n]
        if v.error:
            notes.append(f"`{n}` failed to compile ({first_line(v.error)}): only its stage 0 is compared")
            variants[n] = replace(v, error=None, stages={k: f for k, f in v.stages.items() if k == "python"})
    d = diagnose(replace(bundle, variants=variants, runs={}), a, b)
    keep = [f for f in d.findings if f.stage in ("settings", "spec", "options")]
    return keep, notes
