"""Ctrl-C and SIGTERM as one exception, so that every layer stops cleanly and the CLI exits with one line.

:func:`install` (called by ``irdiff.cli.main``) makes SIGINT and SIGTERM raise :class:`Interrupted`. It derives from
``BaseException`` and not ``KeyboardInterrupt`` so that click does not turn it into "Aborted!" with status 1: the
CLI prints ``irdiff: interrupted (SIGINT)`` and exits ``128 + signal`` (130, 143). Code that stops work on an
interruption (the compile driver's workers, the capture's after-run step) catches ``(KeyboardInterrupt,
Interrupted)`` or ``BaseException``.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterable
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived (``signum``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_received = 0  # signals received since install()
_held = 0  # depth of held() blocks the main thread is in
_pending: int | None = None  # a signal that arrived inside held(), raised when the outermost block ends


def _raise(signum: int, frame: Any) -> None:
    """The first signal raises :class:`Interrupted` (put off, :func:`_redeliver`, while the main thread runs Python
    code for a native module's initialisation: :func:`_in_native_init`); a second one, while that first interruption is being cleaned
    up (workers stopped, temporaries removed), is ignored so the cleanup finishes: a double Ctrl-C, or
    ``timeout -s INT``, which signals irdiff and then its process group; a third exits at once (``128 + N``)."""
    global _received, _pending
    _received += 1
    if _received == 1:
        if _held:
            _pending = signum  # counted: a second signal during the cleanup is still ignored
            return
        if frame is not None and _in_native_init(frame):
            _received -= 1  # not now: raised into the C++ that called this Python code it would abort irdiff
            _redeliver(signum)
            return
        raise Interrupted(signum)
    if _received >= 3:
        import os

        os._exit(128 + signum)


def _unraisable(unraisable: Any) -> None:
    """``sys.unraisablehook``: an :class:`Interrupted` that Python could not propagate is delivered again.

    Python runs a signal handler at the next bytecode boundary of the main thread, wherever that is; when it is in
    code whose exceptions Python reports and drops (a ``__del__``, a weakref or GC callback: CI and a loaded
    machine hit importlib's module-lock callback ``_get_module_lock.<locals>.cb`` while the suite imports Triton),
    the interruption would be lost: one "Exception ignored in" traceback on stderr, and irdiff compiling on to
    the end (``tests/test_reliability.py::test_interrupted_compile_then_clean_rerun`` then timed out after
    120 s). Instead the signal is not counted and is sent again to the main thread (``pthread_kill``, which also
    wakes a main thread blocked on a lock) :data:`_REDELIVER_S` later, from a helper thread: by then the main
    thread has left the dropping context (a signal raised there again comes back here). Silently. Anything else
    goes to the previous hook."""
    global _received
    exc = getattr(unraisable, "exc_value", None)
    if not isinstance(exc, Interrupted):
        _previous_unraisablehook(unraisable)
        return
    _received = max(0, _received - 1)
    _redeliver(exc.signum)


def _redeliver(signum: int) -> None:
    """Send ``signum`` to the main thread again :data:`_REDELIVER_S` from now, from a helper thread (by then the
    main thread has left the place where it could not be raised; if not, it is put off again)."""
    import threading
    import time

    main = threading.main_thread().ident

    def again() -> None:
        time.sleep(_REDELIVER_S)
        if main is not None:
            signal.pthread_kill(main, signum)

    threading.Thread(target=again, name="irdiff-redeliver-signal", daemon=True).start()


def _in_native_init(frame: Any) -> bool:
    """Whether the main thread runs Python code called from an extension module's initialisation (a frame of
    ``ExtensionFileLoader.exec_module``/``create_module`` below ``frame``): ``import triton`` initialises
    ``libtriton``, whose nanobind code builds its enums through Python's ``enum``. An exception raised there
    reaches C++ as ``nanobind::python_error``, which nothing catches: ``std::terminate``, irdiff aborted (status
    -6, a C++ message and a traceback on stderr), seen once in 10 runs of
    ``test_interrupted_compile_then_clean_rerun[2]`` under load."""
    f = frame
    while f is not None:
        code = f.f_code
        if code.co_name in ("exec_module", "create_module") and "importlib" in code.co_filename:
            loader = f.f_locals.get("self")
            if type(loader).__name__ == "ExtensionFileLoader":
                return True
        f = f.f_back
    return False


_REDELIVER_S = 0.05  # seconds before a dropped interruption is signalled again (see _unraisable)


_previous_unraisablehook: Any = None


def install() -> None:
    """SIGINT and SIGTERM raise :class:`Interrupted` in the main thread from now on (once: see :func:`_raise`);
    one raised where Python drops exceptions is raised again (:func:`_unraisable`)."""
    import sys

    global _received, _previous_unraisablehook, _pending
    _received = 0
    _pending = None
    if sys.unraisablehook is not _unraisable:
        _previous_unraisablehook = sys.unraisablehook
        sys.unraisablehook = _unraisable
    signal.signal(signal.SIGINT, _raise)
    signal.signal(signal.SIGTERM, _raise)


def ignore_from_now() -> None:
    """SIGINT and SIGTERM are ignored from now on: called when the command is over (its output written, its
    status decided), just before the interpreter shuts down.

    Python's shutdown (``Py_FinalizeEx``) resets every signal that has a Python handler to the default action
    (``_PySignal_Fini``) and only then tears down the modules, which with Triton and torch loaded takes 0.1-2 s
    (2.1 s measured under load: ``rt_sigaction(SIGINT, SIG_DFL)`` to ``exit_group``, strace). A Ctrl-C in that
    window killed irdiff by the signal itself: status -2 and nothing on stderr, the flake of
    ``test_interrupted_compile_then_clean_rerun[2]``. An ignored signal is left ignored by the shutdown, so such a
    late Ctrl-C now changes nothing: the command's own status (0 for a finished compile) stands."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


class held:
    """``with held():`` — an interruption (SIGINT, SIGTERM) arriving inside the block is raised when the block
    ends (as :class:`Interrupted`, also when the block raised something else), not in the middle of it.

    For short bookkeeping that must not be cut in two: :func:`thread_map` submits its tasks inside one, because
    ``concurrent.futures.ThreadPoolExecutor.submit`` starts a thread and only then records it in the pool
    (``_adjust_thread_count``); raised between the two, the thread runs on unrecorded, ``shutdown(wait=True)``
    does not wait for it, and irdiff exited while it still compiled: its ``.tmp-*`` directory was left in the
    cache (CI, ``tests/test_cli_requested.py::test_ctrl_c_in_the_first_compile_leaves_no_bundle_directory``;
    4 of 60 Ctrl-C runs under load). Without :func:`install` (irdiff used as a library) it changes nothing."""

    def __enter__(self) -> held:
        global _held
        _held += 1
        return self

    def __exit__(self, *exc: object) -> None:
        global _held, _pending
        _held -= 1
        if _held == 0 and _pending is not None:
            signum, _pending = _pending, None
            raise Interrupted(signum)


def thread_map(
    fn: Callable[[T], R], items: Iterable[T], workers: int, stop: Callable[[], None] | None = None
) -> list[R]:
    """``[fn(x) for x in items]`` on up to ``workers`` threads, in order. When a call raises, or an interruption
    arrives, ``stop()`` (e.g. kill the worker processes the calls wait on) runs first, the calls not started are
    cancelled, and every call already started has ended before the exception is re-raised: nothing keeps
    running, or writing, behind an exiting irdiff (see :class:`held`).

    :raises: the first exception of a call (in ``items`` order), or :class:`Interrupted`.
    """
    from concurrent.futures import ThreadPoolExecutor  # not at import time: a warm run starts no thread

    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        with held():
            futures = [pool.submit(fn, x) for x in items]
        out = [f.result() for f in futures]
    except BaseException:
        if stop is not None:
            stop()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return out


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
