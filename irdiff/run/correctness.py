"""Correctness: each variant's outputs against the suite's reference, and the variants against each other.

The measure is the relative Frobenius error ``||out - ref||_F / ||ref||_F`` computed in float64 over every element
of an output (``||out||_F`` when the reference is all zeros). An output holding NaN or infinity where the
reference is finite (an element the kernel never wrote keeps the NaN poison, see :mod:`irdiff.run.inputs`) fails
whatever its error.

Tolerances (per output dtype, :data:`TOLERANCES`) are a few to a few tens of times the rounding error of storing an
fp32-accumulated result in that dtype (unit roundoff: fp16 4.9e-4, bf16 3.9e-3, fp8e4nv 6.3e-2, TF32 inputs 4.9e-4),
far below the error of a real indexing bug: a K loop that accumulates half of K gives about 0.707.

Outputs of different shapes (a variant that pads its rows, a reference without the padding) are compared only as
the suite says (``Suite.compare``: ``"common"`` region or a function); otherwise the check is *not comparable*.

Every variant ends in one of four correctness states (:data:`STATES`): ``correct`` (within tolerance of the
reference), ``wrong``, ``agrees`` (no reference, but the variants agree with each other) and ``not checked``
(no reference and nothing to agree with, outputs not comparable, a start value refused, or the variant failed).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from irdiff.suite import Suite

__all__ = ["STATES", "TOLERANCES", "Check", "NotComparable", "check_outputs", "compare_outputs", "expected_outputs",
           "comparable_pair", "rel_frobenius", "state_of"]  # fmt: skip

CORRECT, WRONG, AGREES, NOT_CHECKED = "correct", "wrong", "agrees", "not checked"
STATES = (CORRECT, WRONG, AGREES, NOT_CHECKED)
ACCURACY_GAP = 10.0
"""A variant this many times less accurate than its partner (both against the reference) gets a finding."""


class NotComparable(ValueError):
    """Two outputs differ in shape and the suite does not say how to compare them."""


TOLERANCES: dict[str, float] = {
    "fp64": 1e-10,
    "fp32": 2e-3,  # allows TF32 tensor-core inputs (tl.dot's default precision for fp32)
    "fp16": 5e-3,
    "bf16": 2e-2,
    "fp8e4nv": 1.5e-1,
    "fp8e5": 2.5e-1,
}


def tolerance(dtype: str) -> float:
    """Tolerance on the relative Frobenius error for an output of ``dtype`` (integers and booleans: exact)."""
    return TOLERANCES.get(dtype, 0.0)


@dataclass
class Check:
    """One output compared with its expected value.

    :ivar rel_err: relative Frobenius error (None when the output holds NaN/inf where the reference does not).
    :ivar nonfinite: number of NaN/inf elements in the output where the reference is finite (unwritten elements
        show up here).
    """

    output: str
    rel_err: float | None
    tolerance: float
    ok: bool
    nonfinite: int
    numel: int
    against: str = "reference"
    comparable: bool = True
    note: str = ""

    def message(self, variant: str) -> str:
        if not self.comparable:
            return f"{variant}: {self.output} not comparable with {self.against}: {self.note}"
        if self.nonfinite:
            return (
                f"{variant}: {self.output} has {self.nonfinite} of {self.numel} elements NaN/inf "
                f"(never written, or overflow) against {self.against}"
            )
        return (
            f"{variant}: {self.output} differs from {self.against}: relative Frobenius error {self.rel_err:.3g}"
            f" (tolerance {self.tolerance:g})"
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def rel_frobenius(actual: Any, expected: Any) -> tuple[float | None, int]:
    """``(||actual - expected||_F / ||expected||_F, number of non-finite elements of actual where expected is
    finite)``, in float64. The error is None when that number is non-zero.

    :raises ValueError: the two shapes differ.
    """
    import torch

    a = actual.detach().to(torch.float64)
    e = expected.detach().to(device=a.device, dtype=torch.float64)
    if tuple(a.shape) != tuple(e.shape):
        raise ValueError(f"output shape {tuple(a.shape)} differs from the reference's {tuple(e.shape)}")
    bad = int((~torch.isfinite(a) & torch.isfinite(e)).sum().item())
    if bad:
        return None, bad
    num = float(torch.linalg.vector_norm(a - e).item())
    den = float(torch.linalg.vector_norm(e).item())
    if den == 0.0:
        return num, 0
    err = num / den
    return (err if math.isfinite(err) else None), 0


def expected_outputs(suite: Suite, args: Mapping[str, Any], outputs: list[str], shape: Mapping[str, int]) -> dict:
    """The suite's reference for these inputs: ``{output param: tensor}``.

    A reference returning a single tensor is assigned to the only output parameter.

    :raises ValueError: no reference, the reference failed, or it names outputs the kernel does not have.
    """
    if suite.reference is None:
        raise ValueError(f"suite {suite.name!r} has no reference: correctness cannot be checked")
    try:
        ref = suite.reference(dict(args), dict(shape))
    except Exception as e:  # noqa: BLE001 - user code
        raise ValueError(f"suite {suite.name!r}: reference failed: {type(e).__name__}: {e}") from None
    if not isinstance(ref, Mapping):
        if len(outputs) != 1:
            raise ValueError(
                f"suite {suite.name!r}: reference returned one tensor but the kernel has outputs {outputs}; "
                "return {name: tensor}"
            )
        return {outputs[0]: ref}
    unknown = [k for k in ref if k not in outputs]
    if unknown:
        raise ValueError(f"suite {suite.name!r}: reference returns {unknown}, which are not outputs {outputs}")
    return dict(ref)


def _dims(t: Any) -> str:
    return "×".join(str(int(d)) for d in t.shape) or "scalar"


def comparable_pair(name: str, actual: Any, expected: Any, how: Any = None, shape: Any = None) -> tuple[Any, Any, str]:
    """``(actual, expected, note)`` cut to what must match, per the suite's ``compare`` (see :class:`Suite`).

    :raises NotComparable: the shapes differ and ``how`` is None, or ``how`` does not make them equal.
    """
    if tuple(actual.shape) == tuple(expected.shape):
        return actual, expected, ""
    if how is None:
        raise NotComparable(
            f"shape {_dims(actual)} vs {_dims(expected)}; set compare='common' (or a function) in the suite to "
            "compare the common region"
        )
    if how == "common":
        if actual.dim() != expected.dim():
            raise NotComparable(f"shape {_dims(actual)} vs {_dims(expected)}: different ranks have no common region")
        region = tuple(slice(0, min(int(x), int(y))) for x, y in zip(actual.shape, expected.shape))
        a, e = actual[region], expected[region]
        return a, e, f"{_dims(actual)} vs {_dims(expected)}, compared on the common {_dims(a)} region"
    if callable(how):
        try:
            a, e = how(name, actual, dict(shape or {})), how(name, expected, dict(shape or {}))
        except Exception as ex:  # noqa: BLE001 - user code
            raise NotComparable(f"the suite's compare function failed: {type(ex).__name__}: {ex}") from None
        if tuple(a.shape) != tuple(e.shape):
            raise NotComparable(
                f"shape {_dims(actual)} vs {_dims(expected)} is still {_dims(a)} vs {_dims(e)} after the suite's "
                "compare function"
            )
        return a, e, f"{_dims(actual)} vs {_dims(expected)}, compared as {_dims(a)} through the suite's compare"
    raise NotComparable(f"unknown compare {how!r} (use 'common' or a function)")


def check_outputs(
    outputs: Mapping[str, Any],
    expected: Mapping[str, Any],
    dtypes: Mapping[str, str],
    against: str = "reference",
    how: Any = None,
    shape: Any = None,
) -> list[Check]:
    """Compare every expected output (``{param: tensor}``) with the kernel's (``outputs``).

    :param dtypes: output param → Triton dtype name, for the tolerance.
    :param how: the suite's ``compare`` (outputs of different shapes); see :func:`comparable_pair`.
    """
    checks = []
    for name, exp in expected.items():
        tol = tolerance(dtypes.get(name, "fp32"))
        try:
            act, ex, note = comparable_pair(name, outputs[name], exp, how, shape)
        except NotComparable as e:
            checks.append(Check(name, None, tol, False, 0, int(exp.numel()), against, comparable=False, note=str(e)))
            continue
        err, bad = rel_frobenius(act, ex)
        ok = bad == 0 and err is not None and err <= tol
        checks.append(Check(name, err, tol, ok, bad, int(ex.numel()), against, note=note))
    return checks


def compare_outputs(
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    dtypes: Mapping[str, str],
    b_name: str,
    how: Any = None,
    shape: Any = None,
) -> list[Check]:
    """Variant against variant: ``a``'s outputs against ``b``'s (same parameters), same tolerances."""
    common = {k: v for k, v in b.items() if k in a}
    return check_outputs(a, common, dtypes, against=b_name, how=how, shape=shape)


def state_of(checks: list[Check]) -> str:
    """``correct`` / ``wrong`` against a reference, or ``not checked`` when no output could be compared."""
    usable = [c for c in checks if c.comparable]
    if not usable:
        return NOT_CHECKED
    if not all(c.ok for c in usable):
        return WRONG
    return CORRECT if len(usable) == len(checks) else NOT_CHECKED


def worst(checks: list[Check]) -> tuple[bool, float | None]:
    """``(all ok, largest rel_err)``; the error is None when an output held NaN/inf."""
    checks = [c for c in checks if c.comparable]
    if not checks:
        return True, None
    ok = all(c.ok for c in checks)
    errs = [c.rel_err for c in checks]
    if any(e is None for e in errs):
        return ok, None
    return ok, max(e for e in errs if e is not None)
