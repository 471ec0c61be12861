"""Every regex of the normalizers sits under a comment quoting real lines it matches (``#   <line>``); this test
keeps those comments true: each quoted line must be matched by the regex below it."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import irdiff.normalize

_DIR = Path(irdiff.normalize.__file__).parent


def _regex_constants() -> list[tuple[str, str, list[str]]]:
    out = []
    for path in sorted(_DIR.glob("*.py")):
        lines = path.read_text().splitlines()
        for node in ast.parse(path.read_text()).body:
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
                continue
            fn = node.value.func
            if not (isinstance(fn, ast.Attribute) and fn.attr == "compile"):
                continue
            examples, i = [], node.lineno - 2
            while i >= 0 and lines[i].startswith("#"):
                if lines[i].startswith("#   "):
                    examples.append(lines[i][4:])
                i -= 1
            for target in node.targets:
                assert isinstance(target, ast.Name)
                out.append((f"irdiff.normalize.{path.stem}".replace(".__init__", ""), target.id, examples))
    return out


_CONSTANTS = _regex_constants()


def test_found_the_regexes() -> None:
    assert len(_CONSTANTS) >= 25


@pytest.mark.parametrize(("module", "name", "examples"), _CONSTANTS, ids=[f"{m}.{n}" for m, n, _ in _CONSTANTS])
def test_regex_matches_the_lines_quoted_above_it(module: str, name: str, examples: list[str]) -> None:
    assert examples, f"{module}.{name}: quote a real IR line it matches in a '#   <line>' comment above it"
    pattern = getattr(importlib.import_module(module), name)
    assert isinstance(pattern, re.Pattern)
    for line in examples:
        assert pattern.search(line), f"{module}.{name} does not match its quoted line {line!r}"
