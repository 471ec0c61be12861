"""``--interpret``: the correctness check on the CPU through Triton's interpreter (no GPU needed).

``TRITON_INTERPRET=1`` must be set before the kernel's module is imported (``@triton.jit`` then returns an
``InterpretedFunction``; ``triton/runtime/interpreter.py``), so the check runs in a fresh Python process:
``python -m irdiff.run.interpret REQUEST.json RESULT.json``. It builds the inputs on the CPU, launches each variant
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

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
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
) -> dict[str, Any]:
    """Run the correctness check under Triton's interpreter in a child process.

    :param suite: suite reference as on the command line (a file path is resolved to an absolute path).
    :param target: target name used to resolve per-target values (``NUM_SMS``).
    :raises RuntimeError: the child failed (its last error line is in the message) or timed out.
    """
    ref = suite
    path_part, sep, name = suite.partition("::")
    if path_part.endswith(".py") or os.path.isfile(path_part):
        ref = str(Path(path_part).resolve()) + (sep + name if sep else "")
    req = {"suite": ref, "variants": variants, "shapes": shapes, "config": config, "target": target, "seed": seed}
    env = dict(os.environ)
    env["TRITON_INTERPRET"] = "1"
    pkg_root = str(Path(__file__).resolve().parent.parent.parent)
    env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    with tempfile.TemporaryDirectory(prefix="irdiff-interp-") as d:
        req_file, out_file = Path(d) / "request.json", Path(d) / "result.json"
        req_file.write_text(json.dumps(req))
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "irdiff.run.interpret", str(req_file), str(out_file)],
                capture_output=True,
                text=True,
                env=env,
                timeout=timeout_s,
            )
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"the interpreter run did not finish within {timeout_s:.0f} s") from None
        if proc.returncode != 0 or not out_file.is_file():
            lines = [ln for ln in (proc.stderr or proc.stdout).strip().splitlines() if ln.strip()]
            raise RuntimeError(f"interpreter run failed: {lines[-1] if lines else f'exit status {proc.returncode}'}")
        result: dict[str, Any] = json.loads(out_file.read_text())
    return result


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


def _child(req: dict[str, Any]) -> dict[str, Any]:
    """Runs in the child process with ``TRITON_INTERPRET=1`` already in the environment."""
    import torch
    import triton

    _index_compat()

    from irdiff.run.runner import check_shape
    from irdiff.run.sweep import shape_label
    from irdiff.suite import load_suite

    suite = load_suite(req["suite"])
    rows = []
    findings: list[dict[str, Any]] = []
    for shape in req["shapes"]:
        chk = check_shape(suite, req["variants"], shape, "cpu", req["target"], req.get("config"), req.get("seed", 0))
        for v in chk.variants.values():
            v.pop("resources", None)
        rows.append({"shape": chk.shape, "label": shape_label(chk.shape), "variants": chk.variants,
                     "agreement": chk.agreement})  # fmt: skip
        findings.extend(chk.findings)
    return {
        "method": "Triton interpreter (TRITON_INTERPRET=1) on the CPU; outputs NaN-poisoned before the launch; "
        "relative Frobenius error against the suite's reference and between variants",
        "suite": suite.name,
        "variants": list(req["variants"]),
        "target": req["target"],
        "versions": {"triton": triton.__version__, "torch": torch.__version__},
        "rows": rows,
        "findings": findings,
    }


def main(argv: list[str]) -> int:
    if os.environ.get("TRITON_INTERPRET") != "1":
        print(
            "error: run through irdiff.run.interpret.run_interpreted (TRITON_INTERPRET=1 must be set)", file=sys.stderr
        )
        return 2
    req = json.loads(Path(argv[0]).read_text())
    result = _child(req)
    Path(argv[1]).write_text(json.dumps(result, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
