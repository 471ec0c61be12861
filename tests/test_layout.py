"""Layout rules from docs/architecture.md that a test can keep: no module over ~800 lines without a reason written at
its top (a ``Size:`` paragraph in its docstring). The import-layer contracts are checked by ``lint-imports`` in CI."""

from __future__ import annotations

import ast
from pathlib import Path

import irdiff

LIMIT = 800


def test_long_modules_say_why() -> None:
    root = Path(irdiff.__file__).parent
    unexplained = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        if text.count("\n") <= LIMIT:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if "Size:" not in doc:
            unexplained.append(f"{path.relative_to(root)} ({text.count(chr(10))} lines)")
    assert not unexplained, f"modules over {LIMIT} lines without a 'Size:' reason in their docstring: {unexplained}"
