"""Normalize the two sides of a huge stage pair at once: the second side in a forked process (the machine's other
core), the first in this one (:func:`irdiff.normalize.normalize_pair`).

The forked process dies with this one (``PR_SET_PDEATHSIG``, so even after ``kill -9``), ignores SIGINT (a
terminal's Ctrl-C reaches the whole process group: this process stops it), writes nothing but its result to a
pipe and leaves by ``os._exit`` (no atexit handler, no inherited buffer flushed twice). Whatever goes wrong in it
(an exception, a signal, a short or broken result) makes :meth:`Forked.result` return None, and the caller
normalizes that side itself: the output is the same either way (``tests/test_normalize_parallel.py``).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import threading
from collections.abc import Callable
from typing import Any

from irdiff.interrupt import die_with_parent
from irdiff.normalize.model import LazyPerLine, NormalizedStage

# NormalizedStage fields sent back whole (the lazy per-line symbols and spans are recomputed here when read).
_FIELDS = ("stage", "lines", "shapes", "raw_line", "columns", "regions", "fallback")


class Forked:
    """One side normalized in a forked child process; :meth:`result` waits for it, :meth:`close` stops it."""

    def __init__(self, pid: int, fd: int, again: Callable[[], NormalizedStage], raw: str) -> None:
        self.pid = pid
        self._fd: int | None = fd
        self._again = again  # the same normalization in this process, for the per-line symbols and spans
        self._raw = raw

    @classmethod
    def start(
        cls, normalize_it: Callable[[], NormalizedStage], raw: str, again: Callable[[], NormalizedStage] | None = None
    ) -> Forked | None:
        """Fork a child that runs ``normalize_it()`` (which normalizes ``raw``) and sends its result back (``again``,
        default ``normalize_it``: the same normalization, run here if the per-line symbols are read); None where
        forking is not possible or not safe: no ``os.fork`` (Windows), or other threads running (a lock one of them
        holds would stay locked in the child)."""
        if not hasattr(os, "fork") or threading.active_count() > 1:
            return None
        parent = os.getpid()
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return None
        if pid == 0:  # the child: never returns
            code = 1
            try:
                os.close(r)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                die_with_parent(parent)
                got = normalize_it()
                fields = tuple(getattr(got, f) for f in _FIELDS)
                del got  # what only its lazy fields hold (the renaming tables) is freed before the transfer
                with os.fdopen(w, "wb") as out:  # streamed: no second copy of the result in memory
                    pickle.dump(fields, out, protocol=pickle.HIGHEST_PROTOCOL)
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        return cls(pid, r, again or normalize_it, raw)

    def result(self) -> NormalizedStage | None:
        """The child's normalized stage (its symbols and spans are computed here when first read), or None when
        the child failed (then normalize that side here)."""
        if self._fd is None:
            return None
        fd, self._fd = self._fd, None
        fields: Any = None
        with os.fdopen(fd, "rb") as f, contextlib.suppress(Exception):  # a short result: the child failed
            fields = pickle.load(f)  # our own child's output, never a file
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        if os.waitstatus_to_exitcode(status) != 0 or not isinstance(fields, tuple) or len(fields) != len(_FIELDS):
            return None
        got = dict(zip(_FIELDS, fields, strict=True))
        symbols, spans = LazyPerLine.recomputed(len(got["lines"]), self._again)
        return NormalizedStage(raw=self._raw, symbols=symbols, symbol_spans=spans, **got)

    def close(self) -> None:
        """Stop the child if it still runs and reap it (after :meth:`result`, or when this process is
        interrupted while the child works)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
        if self.pid:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(self.pid, 0)
            self.pid = 0
