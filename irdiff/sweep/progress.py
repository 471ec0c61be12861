"""Sweep progress on stderr: one rich progress bar with jobs done/failed/cached and the rate (jobs/s), only when
stderr is a terminal (:func:`irdiff.render.progress.progress_enabled`); otherwise silent."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

__all__ = ["sweep_progress"]


@contextmanager
def sweep_progress(enabled: bool, stream: IO[str] | Any = None) -> Iterator[Callable[[str, str], None] | None]:
    """A ``progress(event, label)`` callback for :func:`irdiff.sweep.run_sweep`, or None when disabled."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from irdiff.textsafe import one_line

    console = Console(file=sys.stderr if stream is None else stream)
    columns = (
        TextColumn("sweep"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("done {task.fields[done]} · cached {task.fields[cached]} · failed {task.fields[failed]}"),
        TextColumn("· {task.fields[rate]} jobs/s"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[last]}"),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        state: dict[str, Any] = {"done": 0, "cached": 0, "failed": 0}
        task = bar.add_task("sweep", total=None, last="", rate="0.0", **state)

        def update(event: str, label: str) -> None:
            if event == "start":
                bar.update(task, total=int(label))
                return
            state[event] = state.get(event, 0) + 1
            elapsed = bar.tasks[0].elapsed or 0.0
            n = sum(state.values())
            rate = f"{n / elapsed:.2f}" if elapsed > 0 else "0.0"
            bar.update(task, advance=1, rate=rate, last=one_line(label)[:60], **state)

        yield update
