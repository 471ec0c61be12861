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

from irdiff.diagnose.rules.registry import Emits, RuleId, declare

_SOURCE: tuple[RuleId, ...] = (
    "source.call-added",
    "source.call-removed",
    "source.call-changed",
    "source.kwarg-changed",
    "source.args-reordered",
    "source.op-changed",
    "source.dtype-changed",
    "source.constant-changed",
    "source.moved",
    "source.annotation",
    "source.statement",
)

declare(
    Emits("source.call-added"),
    Emits("source.call-removed"),
    Emits("source.call-changed"),
    Emits("source.kwarg-changed"),
    Emits("source.args-reordered"),
    Emits("source.op-changed"),
    Emits("source.dtype-changed"),
    Emits("source.constant-changed"),
    Emits("source.moved"),
    Emits("source.annotation"),
    Emits("source.statement"),
    reads=("text.python",),
    module=__name__,
)
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
