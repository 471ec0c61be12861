"""Roots that no rule function emits: what the user changed, found by the root engine
(:mod:`irdiff.diagnose.roots`) from the source diff, the IR's locations, the settings and the pass trace. Declared
here so their ids take part in :data:`~irdiff.diagnose.rules.RULE_IDS` and other rules can name them as causes
(``Emits(..., causes=("source.kwarg-changed", "ttir.attr-changed"))``).

* ``source.<kind>``: a semantic source change no rule finding names on its line (kinds:
  :data:`irdiff.diagnose.source.KINDS`, options and renames excepted);
* ``ttir.attr-changed``: a TTIR op from the same Python line differing only in attributes;
* ``settings.changed``: target, Triton version or ptxas version;
* ``pass.first-diverging``: the first pass whose output differs (per-pass snapshots).
"""

from __future__ import annotations

from typing import get_args

from irdiff.diagnose.rules.registry import Emits, RuleId, declare

# The ``source.*`` roots, declared once (in :data:`RuleId`).
_SOURCE: tuple[RuleId, ...] = tuple(i for i in get_args(RuleId) if i.startswith("source."))

declare(*(Emits(i) for i in _SOURCE), reads=("text.python",), module=__name__)
declare(
    Emits("ttir.attr-changed", causes=_SOURCE),
    reads=("text.ttir", "text.python"),
    module=__name__,
)
declare(Emits("settings.changed"), reads=("target", "triton_version"), module=__name__)
declare(
    Emits("pass.first-diverging", causes=("options.changed", "settings.changed")),
    reads=("passes",),
    module=__name__,
)
