"""The CI gate: compare a sweep's table with a baseline table and decide whether the change is acceptable.

Rows are paired by :func:`irdiff.sweep.table.match_key` (suite, variants, targets, Triton releases, config, shape).
:func:`compare` lists what changed: rows added or removed, new and gone root findings, status changes, and
resources that moved (registers per thread, spilled bytes, shared memory bytes). :func:`evaluate` applies the
``--fail-on`` rules:

==========================  =========================================================================================
``severity>=LEVEL``         a row's root finding whose chain (the root and its effects: ``chain_severity``) reaches
                            LEVEL (info/minor/major/critical) is new (row new, or another root id than the
                            baseline's), or its number of findings ≥ LEVEL grew; without a baseline: any row with
                            such a finding
``findings>+N``             a row gained more than N findings
``counts>+N``               a row has more than N more differing key operation counts than in the baseline
``registers>+N`` / ``+N%``  a side's registers per thread grew by more than N (or N percent)
``spills>+N``               a side's spilled bytes (stores + loads) grew by more than N
``shared>+N`` / ``+N%``     a side's shared memory grew by more than N bytes (or N percent)
``failed>N``                more than N rows failed (no baseline needed)
``registers>N`` etc.        without ``+``: an absolute limit on the new table (any side above N)
==========================  =========================================================================================

Errors in a rule are :class:`ValueError` with a one-line message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from irdiff.sweep.table import SEVERITY_RANK, match_key

__all__ = ["Change", "Rule", "Trip", "compare", "evaluate", "parse_rule"]

_RULE = re.compile(
    r"^\s*(severity|findings|counts|registers|spills|shared|failed)\s*(>=|>)\s*(\+?)\s*([\w.]+?)(%?)\s*$"
)
_RESOURCES = {
    "registers": ("registers_a", "registers_b"),
    "shared": ("shared_a", "shared_b"),
    "spills": ("spill_store_a", "spill_store_b"),
}


@dataclass(frozen=True)
class Rule:
    """One ``--fail-on`` rule. ``relative``: compared with the baseline (``+``); ``percent``: N is a percentage."""

    text: str
    metric: str
    op: str
    value: float
    relative: bool = False
    percent: bool = False
    level: str = ""


def parse_rule(text: str) -> Rule:
    """``"severity>=major"``, ``"registers>+10%"``, ``"failed>0"`` → :class:`Rule`.

    :raises ValueError: a malformed rule (the message shows the accepted forms).
    """
    m = _RULE.match(text)
    forms = "severity>=LEVEL, findings>+N, counts>+N, registers>+N[%], spills>+N, shared>+N[%], failed>N"
    if not m:
        raise ValueError(f"--fail-on {text!r}: expected one of {forms}")
    metric, op, plus, value, pct = m.groups()
    if metric == "severity":
        if value not in SEVERITY_RANK or plus or pct:
            raise ValueError(f"--fail-on {text!r}: severity is one of {', '.join(SEVERITY_RANK)}")
        return Rule(text.strip(), metric, op, float(SEVERITY_RANK[value] + (op == ">")), level=value)
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"--fail-on {text!r}: {value!r} is not a number ({forms})") from None
    if pct and metric not in ("registers", "shared"):
        raise ValueError(f"--fail-on {text!r}: percentages apply to registers and shared only")
    if metric == "failed" and plus:
        raise ValueError(f"--fail-on {text!r}: failed takes an absolute count (failed>0)")
    if metric in ("findings", "counts") and not plus:
        raise ValueError(f"--fail-on {text!r}: {metric} compares with the baseline: write {metric}>+{value}")
    return Rule(text.strip(), metric, op, number, relative=bool(plus), percent=bool(pct))


@dataclass
class Change:
    """One difference between the baseline and the new table (``kind``: added, removed, root, status, resource)."""

    kind: str
    row: str
    detail: str


@dataclass
class Trip:
    """A rule that tripped, and on which rows (their one-line descriptions)."""

    rule: str
    rows: list[str] = field(default_factory=list)


def describe(row: dict[str, Any]) -> str:
    """``matmul annotated vs unannotated sm90 triton 3.9.0 config 3`` (what differs between the sides is shown)."""
    pair = f"{row['variant_a']} vs {row['variant_b']}"
    tgt = row["target_a"] if row["target_a"] == row["target_b"] else f"{row['target_a']} vs {row['target_b']}"
    tv = row["triton_a"] if row["triton_a"] == row["triton_b"] else f"{row['triton_a']} vs {row['triton_b']}"
    cfg = f" config {row['config']}" if row.get("config") is not None else ""
    shape = f" shape {row['shape']}" if row.get("shape") not in (None, "{}") else ""
    return f"{row['suite']} {pair} {tgt} triton {tv}{cfg}{shape}"


def _root(row: dict[str, Any]) -> str:
    if row.get("status") != "ok":
        return f"failed ({row.get('error') or '?'})"
    if not row.get("root_id"):
        return "no finding"
    chain = row.get("chain_severity")
    more = f"; chain {chain}" if chain and chain != row["root_severity"] else ""
    return f"{row['root_id']} [{row['root_severity']}{more}]"


def compare(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[Change]:
    """Every change from ``old`` to ``new`` rows, in the new table's order (removed rows last)."""
    before = {match_key(r): r for r in old}
    after_keys = set()
    out: list[Change] = []
    for r in new:
        k = match_key(r)
        after_keys.add(k)
        d = describe(r)
        o = before.get(k)
        if o is None:
            out.append(Change("added", d, f"new row: {_root(r)}"))
            continue
        if o.get("status") != r.get("status"):
            out.append(Change("status", d, f"{o.get('status')} → {r.get('status')}: {_root(r)}"))
        elif (o.get("root_id"), o.get("root_severity")) != (r.get("root_id"), r.get("root_severity")):
            out.append(Change("root", d, f"root {_root(o)} → {_root(r)}"))
        for col in ("registers_a", "registers_b", "spill_store_a", "spill_store_b", "shared_a", "shared_b"):
            if o.get(col) != r.get(col):
                out.append(Change("resource", d, f"{col} {o.get(col)} → {r.get(col)}"))
    for k, o in before.items():
        if k not in after_keys:
            out.append(Change("removed", describe(o), f"row gone (was: {_root(o)})"))
    return out


def chain_severity(row: dict[str, Any]) -> str | None:
    """The most severe finding of the row's root chain (``chain_severity``; a table of schema ``irdiff.sweep/1``
    has only ``root_severity``)."""
    return row.get("chain_severity") or row.get("root_severity")


def _at_least(row: dict[str, Any], rank: int) -> int:
    names = [s for s, v in SEVERITY_RANK.items() if v >= rank]
    return sum(int(row.get(f"n_{s}") or 0) for s in names)


def _grew(old: Any, new: Any, rule: Rule) -> bool:
    if new is None:
        return False
    if not rule.relative:
        return new > rule.value if rule.op == ">" else new >= rule.value
    base = old or 0
    delta = new - base
    limit = base * rule.value / 100 if rule.percent else rule.value
    return delta > limit if rule.op == ">" else delta >= limit


def evaluate(rules: list[Rule], new: list[dict[str, Any]], old: list[dict[str, Any]] | None) -> list[Trip]:
    """The rules that trip on ``new`` (compared with ``old`` where a rule is relative).

    :raises ValueError: a relative rule (``+N``) without a baseline.
    """
    trips = []
    before = {match_key(r): r for r in old or []}
    for rule in rules:
        if (rule.relative or rule.metric in ("findings", "counts")) and old is None:
            raise ValueError(f"--fail-on {rule.text!r} compares with a baseline: give --baseline OLD.parquet")
        hit: list[str] = []
        if rule.metric == "failed":
            n = sum(r.get("status") != "ok" for r in new)
            if (n > rule.value) if rule.op == ">" else (n >= rule.value):
                hit = [describe(r) + f": {r.get('error')}" for r in new if r.get("status") != "ok"]
            if hit:
                trips.append(Trip(rule.text, hit))
            continue
        for r in new:
            if r.get("status") != "ok":
                continue
            o = before.get(match_key(r))
            d = describe(r)
            if rule.metric == "severity":
                rank = int(rule.value)
                sev = chain_severity(r)
                root_hit = sev is not None and SEVERITY_RANK.get(sev, -1) >= rank
                if old is None:
                    if _at_least(r, rank):
                        hit.append(f"{d}: {_root(r)}")
                elif o is None or o.get("status") != "ok":
                    if root_hit or _at_least(r, rank):
                        hit.append(f"{d}: new row, {_root(r)}")
                elif root_hit and o.get("root_id") != r.get("root_id"):
                    hit.append(f"{d}: root {_root(o)} → {_root(r)}")
                elif _at_least(r, rank) > _at_least(o, rank):
                    hit.append(f"{d}: {_at_least(o, rank)} → {_at_least(r, rank)} findings ≥ {rule.level}")
            elif rule.metric in ("findings", "counts"):
                col = "findings" if rule.metric == "findings" else "counts_differ"
                if o is not None and _grew(o.get(col), r.get(col), rule):
                    hit.append(f"{d}: {col} {o.get(col)} → {r.get(col)}")
            else:
                cols = _RESOURCES[rule.metric]
                for col in cols:
                    new_v = r.get(col)
                    old_v = o.get(col) if o is not None else None
                    if rule.metric == "spills":
                        load = col.replace("store", "load")
                        new_v = None if new_v is None else new_v + (r.get(load) or 0)
                        old_v = None if o is None or old_v is None else old_v + (o.get(load) or 0)
                    if rule.relative and o is None:
                        continue  # a new row has nothing to grow from
                    if _grew(old_v, new_v, rule):
                        hit.append(f"{d}: {col.replace('spill_store', 'spills')} {old_v} → {new_v}")
        if hit:
            trips.append(Trip(rule.text, hit))
    return trips
