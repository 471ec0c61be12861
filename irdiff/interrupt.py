"""Ctrl-C and SIGTERM as one exception, so that every layer stops cleanly and the CLI exits with one line.

:func:`install` (called by ``irdiff.cli.main``) makes SIGINT and SIGTERM raise :class:`Interrupted`. It derives from
``BaseException`` and not ``KeyboardInterrupt`` so that click does not turn it into "Aborted!" with status 1: the
CLI prints ``irdiff: interrupted (SIGINT)`` and exits ``128 + signal`` (130, 143). Code that stops work on an
interruption (the compile driver's workers, the capture's after-run step) catches ``(KeyboardInterrupt,
Interrupted)`` or ``BaseException``.
"""

from __future__ import annotations

import signal
from typing import Any


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived (``signum``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise(signum: int, frame: Any) -> None:
    raise Interrupted(signum)


def install() -> None:
    """SIGINT and SIGTERM raise :class:`Interrupted` in the main thread from now on."""
    signal.signal(signal.SIGINT, _raise)
    signal.signal(signal.SIGTERM, _raise)
