"""Capture the Triton kernels a real program compiles, into a bundle (``irdiff capture -o DIR -- python train.py``).

How the hooks get into the program: ``irdiff capture`` starts the command unchanged, with
``irdiff/capture/bootstrap`` first on ``PYTHONPATH``. Its ``sitecustomize`` runs at start-up of *every* Python
process of the program — the script itself, TorchInductor's compile workers (started with ``sys.executable`` and
``PYTHONPATH=os.pathsep.join(sys.path)``), ``torchrun`` ranks, ``multiprocessing`` children — and installs
:mod:`irdiff.capture.hooks` right after that process imports ``triton``. A ``runpy`` wrapper would only reach the
first process and would change what ``__main__``, ``sys.argv[0]`` and ``-m`` mean to the program; the environment
route keeps the command line exactly as the user wrote it (``python -m pkg``, shebang scripts, ``pytest``, shell
scripts that start Python). It does not reach interpreters started with ``-S``, ``-I`` or ``-E``; the summary says
so when no process installed the hooks.

The program's stdin/stdout/stderr are its own and its exit status is returned unchanged (a signal ``N`` gives
``128 + N``). Kernels are written while the program runs (a crash keeps them); afterwards
:mod:`irdiff.capture.finalize` adds SASS, registers/spills and the compiler's reasoning log, in the program's own
Python. The result is an ordinary bundle (``suite`` = ``capture``, one variant per kernel) plus ``capture.json``
(command, exit status, timings).

Modules: :mod:`~irdiff.capture.run` (the parent: :func:`run_capture`), :mod:`~irdiff.capture.hooks` (inside the
program), :mod:`~irdiff.capture.finalize` (after the program). Reading captures back (``irdiff diff`` of two
captures, Triton cache and dump directories) lives in :mod:`irdiff.collections_diff`.
This ``__init__`` imports nothing: it is loaded into every process of the captured program.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from irdiff.capture.run import (
        CAPTURE_SUITE,
        CaptureError,
        CaptureResult,
        is_capture,
        program_command,
        run_capture,
    )

__all__ = ["CAPTURE_SUITE", "CaptureError", "CaptureResult", "is_capture", "program_command", "run_capture"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from irdiff.capture import run

        return getattr(run, name)
    raise AttributeError(f"module 'irdiff.capture' has no attribute {name!r}")
