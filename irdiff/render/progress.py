"""Compile progress on stderr (rich's live progress display), only when stderr is a terminal and not ``-q``.

One row per variant: ``compiling`` with a spinner and the elapsed time while Triton runs its stages (TTIR → TTGIR →
LLIR → PTX → cubin, then SASS from the cubin), then ``done``/``failed`` with the time it took; variants taken from
irdiff's cache are marked ``cached``. Piped output (CI, ``| less``) gets nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

__all__ = ["compile_progress", "progress_enabled"]

STAGES_NOTE = "TTIR → TTGIR → LLIR → PTX → cubin → SASS"


def progress_enabled(quiet: bool, stream: IO[str] | Any = None) -> bool:
    """Show progress: not ``-q`` and ``stream`` (stderr) is a terminal."""
    stream = sys.stderr if stream is None else stream
    try:
        return not quiet and bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


@contextmanager
def compile_progress(enabled: bool, stream: IO[str] | Any = None) -> Iterator[Callable[[str, str], None] | None]:
    """A ``progress(variant, event)`` callback for :func:`irdiff.compile.compile_bundle` drawing on ``stream``
    (stderr), or None when disabled. The display is left on screen when done (one line per variant)."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(file=sys.stderr if stream is None else stream)
    columns = (SpinnerColumn(finished_text="✓"), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=console) as bar:
        tasks: dict[str, Any] = {}

        def update(name: str, event: str) -> None:
            if event == "cached":
                tasks[name] = bar.add_task(f"{name}: cached", total=1, completed=1)
            elif event == "compiling":
                tasks[name] = bar.add_task(f"{name}: compiling ({STAGES_NOTE})", total=1)
            elif name in tasks:
                bar.update(tasks[name], description=f"{name}: {event}", completed=1)

        yield update
