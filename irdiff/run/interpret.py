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
     "findings": [...], "notes": [str]}

``notes`` (added by ``irdiff run``/``irdiff SUITE --interpret``): one line each for what the check could not cover,
:func:`reduced_shape_note` (the shape was capped) and :func:`unmodelled_note` (a ``tl.dot`` precision the
interpreter does not model), printed after the correctness verdict.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["SMALL", "reduced_shape_note", "run_interpreted", "small_shape", "unmodelled_note"]

SMALL = 64

# ``tt.dot`` in TTIR: its input precision (absent: ``ieee``, the attribute's default) and operand element types.
_DOT = re.compile(r"\btt\.dot\s[^\n]*?:\s*tensor<(?:\d+x)+([a-z]\w*)[^>]*>\s*\*\s*tensor<(?:\d+x)+([a-z]\w*)")
_PRECISION = re.compile(r"\binputPrecision\s*=\s*(\w+)")
_FP8 = re.compile(r"^f8E")


def small_shape(shape: Mapping[str, int], cap: int = SMALL) -> dict[str, int]:
    """``shape`` with every dimension capped at ``cap`` (the interpreter runs programs one by one in NumPy)."""
    return {k: min(int(v), cap) for k, v in shape.items()}


def _unmodelled(ttir: str) -> list[str]:
    """What one variant's TTIR computes on the GPU that the interpreter does not reproduce: ``tl.dot`` on fp32
    inputs at a reduced input precision (``tf32``, ``tf32x3``, ``bf16x3``: the GPU rounds each input, the interpreter's
    ``create_dot`` multiplies them in fp32 with NumPy whatever ``input_precision`` says) and ``tl.dot`` on fp8
    inputs (the interpreter widens them to fp16 and accumulates in full precision; the GPU may accumulate with
    fewer bits, ``maxNumImpreciseAcc``). Source: ``triton/runtime/interpreter.py``, ``InterpreterBuilder.create_dot``."""
    out: list[str] = []
    for line in ttir.splitlines():
        m = _DOT.search(line)
        if m is None:
            continue
        ta, tb = m.group(1), m.group(2)
        p = _PRECISION.search(line)
        prec = p.group(1) if p else "ieee"
        if "f32" in (ta, tb) and prec != "ieee":
            what = f"`tl.dot` input precision `{prec}` (fp32 inputs rounded on the GPU)"
        elif _FP8.match(ta) or _FP8.match(tb):
            what = f"`tl.dot` on fp8 inputs (`{ta}` × `{tb}`: the GPU's fp8 accumulation)"
        else:
            continue
        if what not in out:
            out.append(what)
    return out


def unmodelled_note(ttirs: Mapping[str, str]) -> str | None:
    """One line warning that a variant computes something the CPU interpreter does not model (see
    :func:`_unmodelled`), naming the variants; None when none does. The interpreter then checks only the
    program's logic: a result that differs on the GPU can match the reference here."""
    per = {v: _unmodelled(t) for v, t in ttirs.items()}
    said: dict[str, list[str]] = {}
    for v, whats in per.items():
        for w in whats:
            said.setdefault(w, []).append(v)
    if not said:
        return None
    parts = "; ".join(f"{w} in {', '.join(f'`{v}`' for v in vs)}" for w, vs in said.items())
    return (
        f"note: the CPU interpreter does not model {parts}: it multiplies in full precision, so a numeric "
        "difference the GPU shows is not checked here (run on a GPU)"
    )


def reduced_shape_note(full: list[dict[str, int]], used: list[dict[str, int]]) -> str | None:
    """One line saying the interpreter ran a smaller shape than the suite's (``M=512→64``); None when the same."""
    if not full or not used or full == used:
        return None
    changed = [f"{k}={full[0][k]}→{v}" for k, v in used[0].items() if k in full[0] and full[0][k] != v]
    if not changed:
        return None
    return (
        f"note: shape reduced for the interpreter (it runs every program in NumPy, each dimension capped at "
        f"{SMALL}): {', '.join(changed)}; choose one with --shape K=V or --shapes"
    )


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
