"""``--all-configs``: one line per autotune config (what differs between the two variants under that config), and
the choice of the config whose full diagnosis is shown.

Input: a bundle compiled with ``config="all"`` (variants named ``<variant>@<index>``, :func:`irdiff.compile.
compile_bundle`). Per config the two variants are diagnosed (:func:`irdiff.diagnose.diagnose`); the row shows the
config's constexprs and options, how many key operation counts differ (:data:`irdiff.diagnose.counts.KEY_COUNTS`,
every stage), registers and shared memory of both variants (ptxas ``-v``, bytes), and the root finding
(:mod:`irdiff.render.order`). The config that "differs most" has the most severe findings (critical 3, major 2,
minor 1, info 0, summed), then the most differing counts, then the lowest index.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from irdiff.render.order import present_findings
from irdiff.render.words import plural

if TYPE_CHECKING:
    from irdiff.bundle import Bundle, VariantResult
    from irdiff.diagnose import Diagnosis

__all__ = [
    "ConfigRow",
    "config_legend",
    "config_text",
    "config_rows",
    "most_different",
    "render_config_table",
    "split_config_name",
]

_WEIGHT = {"critical": 3, "major": 2, "minor": 1, "info": 0}


@dataclass
class ConfigRow:
    """One autotune config of an ``--all-configs`` comparison.

    :ivar index: the config's index in the suite's autotune list.
    :ivar a: / :ivar b: the bundle's variant names (``annotated@3``).
    :ivar config: the config's constexprs and options (``BLOCK_SIZE_M=128 … num_warps=4``).
    :ivar counts_differ: how many key operation counts differ, over every stage.
    :ivar registers: / :ivar shared: ``(a, b)`` registers per thread and shared memory bytes (None: unknown).
    :ivar root: id and title of the first finding in reading order, or None (no finding).
    :ivar error: a variant failed to compile (its first line).
    """

    index: int
    a: str
    b: str
    config: str
    counts_differ: int = 0
    registers: tuple[int | None, int | None] = (None, None)
    shared: tuple[int | None, int | None] = (None, None)
    findings: int = 0
    score: int = 0
    root: tuple[str, str] | None = None
    error: str | None = None
    diagnosis: Diagnosis | None = field(default=None, repr=False)


def split_config_name(name: str) -> tuple[str, int | None]:
    """``"annotated@3"`` → ``("annotated", 3)``; a name without ``@N`` → ``(name, None)``."""
    base, at, idx = name.rpartition("@")
    if at and idx.isdigit():
        return base, int(idx)
    return name, None


def config_text(v: VariantResult) -> str:
    """``128×128×32×8 w4 s4``: the config's constexpr values (in the order :func:`config_legend` names them), then
    num_warps and num_stages."""
    opts = v.options or {}
    text = "×".join(str(x) for x in (v.config or {}).values())
    for key, short in (("num_warps", "w"), ("num_stages", "s")):
        if key in opts:
            text += f" {short}{opts[key]}"
    return text.strip()


def config_legend(bundle: Bundle, rows: list[ConfigRow]) -> str:
    """One line naming the constexprs whose values the config column shows."""
    for r in rows:
        v = bundle.variants[r.a]
        if v.config:
            return "config: " + "×".join(v.config) + ", w = num_warps, s = num_stages"
    return "config: w = num_warps, s = num_stages"


def _count_differences(va: VariantResult, vb: VariantResult) -> int:
    from irdiff.diagnose.counts import KEY_COUNTS, count_ops

    n = 0
    for stage, keys in KEY_COUNTS.items():
        ta, tb = va.text(stage), vb.text(stage)
        if not ta or not tb:
            continue
        ca, cb = count_ops(stage, ta), count_ops(stage, tb)
        n += sum(ca.get(k, 0) != cb.get(k, 0) for k in keys)
    return n


def config_indices(bundle: Bundle, a: str, b: str) -> list[int]:
    """The config indices compiled for both ``a`` and ``b`` (``a@0``, ``b@0``, …), in order."""
    return sorted(
        {i for n in bundle.variants for base, i in [split_config_name(n)] if base == a and i is not None}
        & {i for n in bundle.variants for base, i in [split_config_name(n)] if base == b and i is not None}
    )


def config_row(bundle: Bundle, a: str, b: str, i: int) -> ConfigRow:
    """The row of config ``i``: counts that differ, registers, shared memory, and the diagnosis of ``a@i`` vs
    ``b@i`` (:func:`irdiff.diagnose.diagnose`)."""
    from irdiff.diagnose import diagnose

    na, nb = f"{a}@{i}", f"{b}@{i}"
    va, vb = bundle.variants[na], bundle.variants[nb]
    row = ConfigRow(i, na, nb, config_text(va if not va.error else vb))
    bad = va.error or vb.error
    if bad:
        row.error = bad.strip().splitlines()[0] if bad.strip() else "failed to compile"
        return row
    row.counts_differ = _count_differences(va, vb)
    row.registers = (va.resources.registers, vb.resources.registers)
    row.shared = (va.resources.shared_bytes, vb.resources.shared_bytes)
    d = diagnose(bundle, na, nb)
    row.diagnosis = d
    presented = present_findings(d)
    row.findings = len(presented)
    row.score = sum(_WEIGHT.get(str(p.finding.severity), 0) for p in presented)
    if presented:
        row.root = (presented[0].finding.id, presented[0].finding.title)
    return row


def config_row_at(i: int, bundle_dir: str, a: str, b: str) -> ConfigRow:
    """:func:`config_row` for a bundle on disk: what an executor's worker process runs (it loads the bundle)."""
    from irdiff.bundle import load_bundle

    return config_row(load_bundle(bundle_dir), a, b, i)


def config_rows(bundle: Bundle, a: str, b: str, executor: Any = None) -> list[ConfigRow]:
    """One row per config index present for both ``a`` and ``b`` (``a@0``, ``b@0``, …), in index order.

    :param executor: diagnose the configs in parallel on a sweep executor (``map_unordered(fn, items, *args)``,
        :mod:`irdiff.sweep.executors`; the bundle must be saved: workers load it from ``bundle.directory``);
        None diagnoses them here, one after the other.
    :raises Exception: whatever a worker's diagnosis raised (as when run here).
    """
    idx = config_indices(bundle, a, b)
    if executor is None or len(idx) < 2 or not bundle.directory:
        return [config_row(bundle, a, b, i) for i in idx]
    got: dict[int, ConfigRow] = {}
    for i, res in executor.map_unordered(config_row_at, idx, str(bundle.directory), a, b):
        if isinstance(res, BaseException):
            raise res
        got[i] = res
    return [got[i] for i in idx]


def most_different(rows: list[ConfigRow]) -> ConfigRow | None:
    """The row whose variants differ most (see the module docstring); None when every config failed."""
    ok = [r for r in rows if r.error is None]
    if not ok:
        return None
    return max(ok, key=lambda r: (r.score, r.counts_differ, -r.index))


def _pair(x: tuple[int | None, int | None], unit: str = "") -> str:
    return "|".join("?" if v is None else f"{v}{unit}" for v in x)


def render_config_table(rows: list[ConfigRow], a: str, b: str, chosen: int | None, width: int = 120) -> str:
    """The per-config summary as plain text lines fitted to ``width`` columns (titles cut with ``…``)."""
    head = ["#", "config", "counts≠", f"registers {a}|{b}", "shared B", "root finding"]
    body = []
    for r in rows:
        mark = "▶" if r.index == chosen else " "
        if r.error:
            body.append([f"{mark}{r.index}", r.config, "", "", "", f"failed: {r.error}"])
            continue
        root = f"{r.root[0]} ({plural(r.findings, 'finding')} in all)" if r.root else "no finding"
        body.append([f"{mark}{r.index}", r.config, str(r.counts_differ), _pair(r.registers), _pair(r.shared), root])
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head) - 1)]
    lines = []
    for row in [head, *body]:
        cells = [f"{c:<{w}}" for c, w in zip(row[:-1], widths)]
        text = "  " + "  ".join(cells) + "  " + row[-1]
        lines.append(text if len(text) <= width else text[: width - 1] + "…")
    return "\n".join(lines) + "\n"
