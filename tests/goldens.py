"""Golden-file helpers shared by the rendering tests.

A golden test either renders recorded input (``tests/data/bundles``: the same bytes under every Triton) and compares
exactly, or renders a live compile and compares a *normalized* rendering (:func:`normalize`: SSA names, IR line
numbers and counts become placeholders, so the golden is about layout and which findings appear, not about numbers a
release moves) with a golden recorded for the installed Triton (:func:`version_golden`). A Triton with no recorded
golden fails — never skips — and the message names the update command; exact numbers are asserted by targeted tests
that read the facts from the bundle.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# `%a_72`, `%arg13`, `%107`, `%cst_1`, `%c0_i32`, PTX `%rd15`: the numbered part of an SSA value or register name
# (`%stride_ak` has no digit and stays: parameter names are facts, not numbering).
_SSA = re.compile(r"%([A-Za-z_.$]*?)\d[\w.$]*")
# SASS registers and predicates: R10, UR4, P0, UP1.
_SASS_REG = re.compile(r"\b(U?R|U?P)\d+\b")
# Every free-standing number: line numbers (`ttgir:130`), counts (`32×`, `0/32`), ratios (`1.70×`), bytes, register
# counts, versions (`3.9.0`).
_INT = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?![\w])")


def normalize(text: str) -> str:
    """``text`` with SSA names, SASS register numbers and free-standing numbers replaced by ``#`` (a shape such as
    ``128x32xf16``, a target such as ``sm86`` and identifiers keep their digits)."""
    text = _SSA.sub(lambda m: f"%{m.group(1)}#", text)
    text = _SASS_REG.sub(lambda m: f"{m.group(1)}#", text)
    return _INT.sub("#", text)


def version_golden(directory: Path, stem: str, version: str, suffix: str) -> Path:
    """``directory/stem.triton-VERSION.suffix``: a golden recorded for one Triton release."""
    return directory / f"{stem}.triton-{version}{suffix}"


def check_golden(path: Path, got: str, update: bool, test_file: str) -> None:
    """Compare ``got`` with the golden at ``path`` (rewrite it under ``--update-goldens``).

    :raises AssertionError: the golden is missing or differs; the message has the first lines of the diff and the
        command that records it (``pytest TEST_FILE --update-goldens``).
    """
    rel = path.relative_to(ROOT)
    command = f"`.venv/bin/python -m pytest {test_file} --update-goldens` (and the same with .venv36/bin/python)"
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
        return
    if not path.exists():
        others = sorted(p.name for p in path.parent.glob(path.name.split(".triton-")[0] + ".*"))
        raise AssertionError(f"no golden {rel} (recorded: {', '.join(others) or 'none'}); record it with {command}")
    expected = path.read_text(encoding="utf-8")
    if got != expected:
        diff = "\n".join(
            list(difflib.unified_diff(expected.splitlines(), got.splitlines(), str(rel), "now", lineterm=""))[:40]
        )
        raise AssertionError(f"{rel} changed; if intended run {command} and review the diff:\n{diff}")
