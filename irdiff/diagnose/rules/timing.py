"""Timing: ``time.measured`` compares the static chain with the runner's measured time. The finding is written by
:func:`irdiff.diagnose.diagnose` (it needs the bundle's ``runs["timing"]`` record, not two variants' facts); it is
declared here so that its id takes part in :data:`~irdiff.diagnose.rules.RULE_IDS` like every other finding."""

from __future__ import annotations

from irdiff.diagnose.rules.registry import Emits, declare

declare(Emits("time.measured"), reads=("runs",), module=__name__)
