"""Ctrl-C and SIGTERM as one exception, so that every layer stops cleanly and the CLI exits with one line.

:func:`install` (called by ``irdiff.cli.main``) makes SIGINT and SIGTERM raise :class:`Interrupted`. It derives from
``BaseException`` and not ``KeyboardInterrupt`` so that click does not turn it into "Aborted!" with status 1: the
CLI prints ``irdiff: interrupted (SIGINT)`` and exits ``128 + signal`` (130, 143). Code that stops work on an
interruption (the compile driver's workers, the capture's after-run step) catches ``(KeyboardInterrupt,
Interrupted)`` or ``BaseException``.
"""

from __future__ import annotations

import signal
from typing import Any, NoReturn


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived (``signum``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_received = 0  # signals received since install()


def _raise(signum: int, frame: Any) -> None:
    """The first signal raises :class:`Interrupted`; a second one, while that first interruption is being cleaned
    up (workers stopped, temporaries removed), is ignored so the cleanup finishes: a double Ctrl-C, or
    ``timeout -s INT``, which signals irdiff and then its process group; a third exits at once (``128 + N``)."""
    global _received
    _received += 1
    if _received == 1:
        raise Interrupted(signum)
    if _received >= 3:
        import os

        os._exit(128 + signum)


def install() -> None:
    """SIGINT and SIGTERM raise :class:`Interrupted` in the main thread from now on (once: see :func:`_raise`)."""
    global _received
    _received = 0
    signal.signal(signal.SIGINT, _raise)
    signal.signal(signal.SIGTERM, _raise)


def exit_interrupted(e: Interrupted) -> NoReturn:
    """Say ``irdiff: interrupted (SIGINT)`` on stderr (one line) and exit ``128 + signal`` at once (130, 143)."""
    import contextlib
    import os
    import sys

    with contextlib.suppress(OSError):
        sys.stderr.write(f"irdiff: interrupted ({signal.Signals(e.signum).name})\n")
        sys.stderr.flush()
    os._exit(128 + e.signum)


def die_with_parent(parent: int | None = None) -> None:
    """Make this process (a worker irdiff started) die when its parent dies, even by ``kill -9`` (Linux
    ``prctl(PR_SET_PDEATHSIG, SIGKILL)``; elsewhere the parent stops its workers itself); exit at once (status 1)
    when the parent ``parent`` (a pid) is already gone."""
    import ctypes
    import os

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):  # not Linux
        pass
    if parent is not None and os.getppid() != parent:
        os._exit(1)
