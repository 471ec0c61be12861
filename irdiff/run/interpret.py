"""``--interpret``: the correctness check on the CPU through Triton's interpreter (no GPU needed).

``TRITON_INTERPRET=1`` must be set before the kernel's module is imported (``@triton.jit`` then returns an
``InterpretedFunction``; ``triton/runtime/interpreter.py``), so the check runs in fresh Python processes, one per
variant (:mod:`irdiff.run.isolate`). Each builds the inputs on the CPU, launches each variant
through the interpreter (NumPy underneath, so keep the shapes small: by default each dimension of the suite's
shape is capped at :data:`SMALL`), and compares with the suite's reference and between variants, exactly as the
GPU run does (:func:`irdiff.run.runner.check_shape`).

The record stored as ``bundle.runs["interpret"]``::

    {"method": str, "suite": str, "variants": [...], "target": str, "versions": {"triton", "torch"},
     "rows": [{"shape", "variants": {name: {"correct", "rel_err", "checks", "config"} | {"error"}},
               "agreement": [...]}],
     "findings": [...]}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["SMALL", "run_interpreted", "small_shape"]

SMALL = 64


def small_shape(shape: Mapping[str, int], cap: int = SMALL) -> dict[str, int]:
    """``shape`` with every dimension capped at ``cap`` (the interpreter runs programs one by one in NumPy)."""
    return {k: min(int(v), cap) for k, v in shape.items()}


def run_interpreted(
    suite: str,
    variants: list[str],
    shapes: list[dict[str, int]],
    config: Any = None,
    target: str = "sm90",
    seed: int = 0,
    timeout_s: float = 1800,
    ttirs: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Run the correctness check under Triton's interpreter, each variant in a child process of its own
    (:mod:`irdiff.run.isolate`), then compare the variants here.

    :param suite: suite reference as on the command line (a file path is resolved to an absolute path).
    :param target: target name used to resolve per-target values (``NUM_SMS``).
    :param ttirs: variant → TTIR (from a bundle), to find outputs the kernel also reads (the interpreter has none).
    :raises RuntimeError: a child could not run at all.
    """
    import torch
    import triton

    from irdiff.run.isolate import check_isolated
    from irdiff.run.runner import combine
    from irdiff.run.sweep import shape_label
    from irdiff.suite import load_suite

    s = load_suite(suite)
    per_shape = check_isolated(
        suite, variants, shapes, "cpu", target, config, seed, ttirs=ttirs, interpret=True, timeout_s=timeout_s
    )
    rows = []
    findings: list[dict[str, Any]] = []
    for shape, checks in zip(shapes, per_shape):
        chk = combine(s, dict(shape), variants, checks)
        for v in chk.variants.values():
            v.pop("resources", None)
        rows.append({"shape": chk.shape, "label": shape_label(chk.shape), "variants": chk.variants,
                     "agreement": chk.agreement})  # fmt: skip
        findings.extend(chk.findings)
    return {
        "method": "Triton interpreter (TRITON_INTERPRET=1) on the CPU, one process per variant; outputs start as "
        "the suite says (NaN-poisoned by default); relative Frobenius error against the suite's reference (on "
        "float64 inputs) and between variants",
        "suite": s.name,
        "variants": list(variants),
        "target": target,
        "versions": {"triton": triton.__version__, "torch": torch.__version__},
        "rows": rows,
        "findings": findings,
    }


def _index_compat() -> None:
    """Let Triton 3.6's interpreter run with NumPy >= 2.4.

    The interpreter holds a scalar as a NumPy array of shape ``(1,)`` and converts it to a Python int (for
    ``range``/``tl.range`` bounds) with ``int(self.handle.data)`` (3.6 ``triton/runtime/interpreter.py``,
    ``_patch_lang_tensor``), which NumPy 2.4 rejects ("only 0-dimensional arrays can be converted to Python
    scalars"). Triton 3.9 squeezes the array first; this applies the same ``__index__`` on versions that do not.
    """
    import inspect

    from triton.runtime import interpreter as itp

    orig = getattr(itp, "_patch_lang_tensor", None)
    if orig is None or ".squeeze()" in inspect.getsource(orig):
        return

    def patched(tensor: Any, scope: Any) -> None:
        orig(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.squeeze()))

    itp._patch_lang_tensor = patched  # type: ignore[attr-defined]
