"""The runner: correctness and CUDA timing of compiled variants, sweeps, autotune winners, interpreter checks.

Modules: :mod:`~irdiff.run.inputs` (real arguments from a suite's description), :mod:`~irdiff.run.launch`
(``kernel[grid](**args, **meta)`` through the installed JIT), :mod:`~irdiff.run.correctness` (relative Frobenius
error), :mod:`~irdiff.run.timing` (CUDA events, L2 flush, interleaving, graphs), :mod:`~irdiff.run.stats`
(median/IQR, bootstrap verdict), :mod:`~irdiff.run.peaks` (datasheet ceilings), :mod:`~irdiff.run.sweep`
(``--shapes`` and the table), :mod:`~irdiff.run.autotune`, :mod:`~irdiff.run.interpret` (``--interpret``),
:mod:`~irdiff.run.runner` (the records stored in ``bundle.runs``) and :mod:`~irdiff.run.command` (what the CLI calls).

torch and Triton are imported lazily: importing this package needs neither.
"""

from __future__ import annotations

__all__ = ["NO_GPU_NOTICE"]

NO_GPU_NOTICE = "no CUDA device: compile and diff only"
