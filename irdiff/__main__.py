"""``python -m irdiff`` and the ``irdiff`` console script (:func:`run`).

Ctrl-C is handled from before the CLI's modules load (click, the bundle and report modules: about 0.2 s of imports,
longer on a busy machine): a Ctrl-C then also exits 130 with one line, never a ``KeyboardInterrupt`` traceback. Only
a signal that arrives while the interpreter itself starts (its ``site`` and ``runpy`` steps, about the first 50 ms,
before any of irdiff runs) still gets Python's default behaviour.
"""

from __future__ import annotations

from irdiff.interrupt import Interrupted, exit_interrupted, install


def run() -> None:
    """Install the interruption handlers (:func:`irdiff.interrupt.install`), then load and run the CLI
    (:func:`irdiff.cli.main`); an interruption while it loads exits ``128 + signal`` with one line on stderr."""
    install()
    try:
        from irdiff.cli import main
    except Interrupted as e:
        exit_interrupted(e)
    main()


if __name__ == "__main__":
    run()
