"""Small wording helpers shared by every renderer and the CLI (counts with the right plural)."""

from __future__ import annotations

__all__ = ["plural"]


def plural(n: int, noun: str, plural_form: str | None = None) -> str:
    """``plural(1, "kernel")`` → ``"1 kernel"``, ``plural(3, "kernel")`` → ``"3 kernels"``;
    ``plural(2, "is", "are")`` style irregular forms through ``plural_form``."""
    return f"{n} {noun if n == 1 else (plural_form or noun + 's')}"
