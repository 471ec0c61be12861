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
from array import array
from collections.abc import Callable
from typing import Any

from irdiff.interrupt import die_with_parent
from irdiff.normalize.model import LazyPerLine, NormalizedStage, Region


def idle_core() -> bool:
    """True when another core is free for a forked normalizer: this process may run on at least two CPUs and the
    1-minute load average is at most that count minus one (on a busy machine a second process only adds the cost
    of forking and of sending the result back, and its memory)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:
        return False
    return cpus >= 2 and load <= cpus - 1


# NormalizedStage fields sent back (the lazy per-line symbols and spans are recomputed here when read).
_FIELDS = ("stage", "lines", "shapes", "raw_line", "columns", "regions", "fallback")
_TEXTS = ("lines", "shapes", "columns")  # per-line strings, sent as one string each


def pack(normalize_it: Callable[[], NormalizedStage]) -> tuple[Any, ...]:
    """The :data:`_FIELDS` of ``normalize_it()`` in a compact form for :func:`unpack`, each list freed once packed:
    the per-line strings joined by line breaks (a list left as it is if one of its strings holds one), the raw line
    numbers as machine integers, the regions as tuples. A forked normalizer holds this while it waits for its
    parent (about the text's size) instead of the objects and, while it pickled them, a pickle's memo of each (a
    10 MB PTX side: 40-45 MB more at its peak, ``benchmarks/bench_align_large.py``)."""
    got = normalize_it()
    fields = {f: getattr(got, f) for f in _FIELDS}
    del got  # the only reference: its lists are now only in fields
    for f in _TEXTS:
        items = fields[f]
        if items is not None:
            joined = "\n".join(items)
            if joined.count("\n") == len(items) - 1 and items:
                fields[f] = (joined,)  # a tuple: joined; a list: the items as they are
            del items, joined
    fields["raw_line"] = array("q", fields["raw_line"]).tobytes()
    regions = fields["regions"]
    kinds, labels = "\n".join([r.kind for r in regions]), "\n".join([r.label for r in regions])
    if kinds.count("\n") == labels.count("\n") == len(regions) - 1 and regions:
        nums = array("q", [x for r in regions for x in (r.start, r.end, r.anchor, r.function)]).tobytes()
        fields["regions"] = (nums, kinds, labels)  # no small object left: freed memory goes back whole
    else:
        fields["regions"] = [(r.start, r.end, r.kind, r.label, r.anchor, r.function) for r in regions]
    del regions, kinds, labels
    return tuple(fields[f] for f in _FIELDS)


def unpack(packed: Any) -> dict[str, Any] | None:
    """The :data:`_FIELDS` (name -> value) of what :func:`pack` made, or None if it is not such a value."""
    if not isinstance(packed, tuple) or len(packed) != len(_FIELDS):
        return None
    got = dict(zip(_FIELDS, packed, strict=True))
    for f in _TEXTS:
        if isinstance(got[f], tuple):
            got[f] = got[f][0].split("\n")
    for f in ("shapes", "columns"):  # one string per distinct shape or side column, as the normalizers pool them
        if got[f] is not None:
            pool: dict[str, str] = {}
            got[f] = list(map(pool.setdefault, got[f], got[f]))
    nums = array("q")
    nums.frombytes(got["raw_line"])
    got["raw_line"] = nums.tolist()
    regions = got["regions"]
    if isinstance(regions, tuple):
        nums = array("q")
        nums.frombytes(regions[0])
        kinds: dict[str, str] = {}
        k = list(map(kinds.setdefault, *[regions[1].split("\n")] * 2))
        lab = regions[2].split("\n")
        v = nums.tolist()
        regions = [
            (v[4 * i], v[4 * i + 1], k[i], lab[i], bool(v[4 * i + 2]), bool(v[4 * i + 3])) for i in range(len(k))
        ]
    got["regions"] = [Region(*r) for r in regions]
    return got


def release_freed_memory() -> None:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``; nothing elsewhere): a forked
    normalizer waiting for its parent to read its packed result then holds that and little else (10 MB LLIR side:
    RSS 114 -> 97 MB)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)


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
                packed = pack(normalize_it)  # its objects are freed here, before the parent reads it
                release_freed_memory()
                with os.fdopen(w, "wb") as out:
                    pickle.dump(packed, out, protocol=pickle.HIGHEST_PROTOCOL)
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
        got: dict[str, Any] | None = None
        with os.fdopen(fd, "rb") as f, contextlib.suppress(Exception):  # a short result: the child failed
            got = unpack(pickle.load(f))  # our own child's output, never a file
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        if os.waitstatus_to_exitcode(status) != 0 or got is None:
            return None
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
