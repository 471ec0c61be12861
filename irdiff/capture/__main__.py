"""``python -m irdiff.capture -o DIR [OPTIONS] -- script.py ARGS`` — the same as ``irdiff capture`` (a ``.py`` file
or ``-m module`` after ``--`` runs under this Python)."""

from irdiff.cli import capture_cmd

capture_cmd(prog_name="python -m irdiff.capture")
