"""Timing: ``time.measured`` compares the static chain with the runner's measured time; ``time.wrong-result`` says
that a variant computed a wrong result, the variants disagree, or a variant failed to run (critical, shown first
in every format). Both are written by :func:`irdiff.diagnose.diagnose` (they need the bundle's ``runs`` records,
not two variants' facts); they are declared here so that their ids take part in
:data:`~irdiff.diagnose.rules.RULE_IDS` like every other finding."""

from __future__ import annotations

from irdiff.diagnose.rules.registry import Emits, declare

declare(Emits("time.measured"), Emits("time.wrong-result"), reads=("runs",), module=__name__)
