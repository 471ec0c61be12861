"""The sweep's result table: one row per pair and setting, stored as Parquet (pyarrow) with the schema
:data:`SCHEMA` (version :data:`SCHEMA_VERSION`, in the file's metadata as ``irdiff.sweep.schema``).

Columns (``_a`` is the inspected variant, ``_b`` the baseline; sizes in bytes, registers per thread)::

    row_id          string   digest of the pair and setting (:func:`match_key`): equal across executors, reruns, checkouts
    suite           string   suite name (``matmul``)
    suite_ref       string   built-in name or suite file as the plan named it
    variant_a/_b    string   suite variant names
    target_a/_b     string   GPU targets (``sm90``)
    triton_a/_b     string   Triton releases (the compiled-with version; ``installed`` resolved)
    config          int32    autotune config index (null: the suite's default)
    config_text     string   the config's constexprs, ``w`` num_warps, ``s`` num_stages (``128×128×64×8 w4 s3``)
    shape           string   shape overrides as JSON (``{}``: the suite's shape)
    status          string   ``ok`` or ``failed``
    error           string   first line of the failure (null when ok)
    identical       bool     both sides compile to the same code after normalization
    root_id         string   id of the root finding (first in reading order, irdiff.render.order), null: none
    root_severity   string   info | minor | major | critical
    root_title      string   its one-line title
    chain_severity  string   the most severe of the root and its effects (findings whose causes lead to the root): a
                             ``major`` root whose effect is ``critical`` has a ``critical`` chain (null: no root;
                             tables of schema ``irdiff.sweep/1`` lack it)
    max_severity    string   the most severe finding
    findings        int32    findings shown
    n_critical, n_major, n_minor, n_info   int32  findings per severity
    finding_ids     list<string>  sorted ids of every finding
    counts_differ   int32    key operation counts that differ (irdiff.diagnose.counts.KEY_COUNTS, every stage)
    counts_a/_b     map<string,int64>  those key counts, ``stage:op`` → count
    registers_a/_b, spill_store_a/_b, spill_load_a/_b, shared_a/_b   int32  ptxas -v / Triton metadata
    time_ms_a/_b    float64  measured kernel time (ms); sweeps compile only, so null (kept for measured sweeps)
    report          string   the pair's HTML report, relative to the table's directory (null: not written)

Rows are sorted by ``(suite, variant_a, variant_b, target_a, target_b, triton_a, triton_b, config, shape)``. The
table is queryable with DuckDB: ``SELECT suite, root_id FROM 'results.parquet' WHERE root_severity = 'major'``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irdiff.sweep.plan import DiagnosisJob

if TYPE_CHECKING:
    import pyarrow as pa

    from irdiff.render import Comparison

__all__ = [
    "SCHEMA_VERSION",
    "SEVERITY_RANK",
    "chain_of",
    "failed_row",
    "match_key",
    "read_table",
    "row_from_comparison",
    "schema",
    "sort_rows",
    "write_table",
]

SCHEMA_VERSION = "irdiff.sweep/2"  # /2: chain_severity
SEVERITY_RANK = {"info": 0, "minor": 1, "major": 2, "critical": 3}

_INT_COLUMNS = [
    "registers_a", "registers_b", "spill_store_a", "spill_store_b", "spill_load_a", "spill_load_b",
    "shared_a", "shared_b",
]  # fmt: skip


def schema() -> pa.Schema:
    """The Parquet schema (pyarrow), column order as documented in the module docstring."""
    import pyarrow as pa

    s = pa.string()
    i = pa.int32()
    fields = [
        ("row_id", s), ("suite", s), ("suite_ref", s), ("variant_a", s), ("variant_b", s),
        ("target_a", s), ("target_b", s), ("triton_a", s), ("triton_b", s), ("config", i), ("config_text", s),
        ("shape", s), ("status", s), ("error", s), ("identical", pa.bool_()), ("root_id", s),
        ("root_severity", s), ("root_title", s), ("chain_severity", s), ("max_severity", s), ("findings", i), ("n_critical", i),
        ("n_major", i), ("n_minor", i), ("n_info", i), ("finding_ids", pa.list_(s)), ("counts_differ", i),
        ("counts_a", pa.map_(s, pa.int64())), ("counts_b", pa.map_(s, pa.int64())),
        *[(c, i) for c in _INT_COLUMNS],
        ("time_ms_a", pa.float64()), ("time_ms_b", pa.float64()), ("report", s),
    ]  # fmt: skip
    return pa.schema(fields, metadata={"irdiff.sweep.schema": SCHEMA_VERSION})


def _installed() -> str:
    from irdiff.compile.compat import triton_version

    return triton_version() or "installed"


def match_key(row: dict[str, Any]) -> tuple[Any, ...]:
    """What identifies a row across sweeps (and checkouts): suite name, variants, targets, Triton releases, config,
    shape. :func:`irdiff.sweep.gate.compare` pairs baseline and new rows by it; ``row_id`` is its digest."""
    return tuple(
        row[k]
        for k in ("suite", "variant_a", "variant_b", "target_a", "target_b", "triton_a", "triton_b", "config", "shape")
    )


def _base_row(job: DiagnosisJob) -> dict[str, Any]:
    a, b = job.a, job.b
    try:
        from irdiff.suite import load_suite

        suite_name = load_suite(job.suite).name
    except Exception:  # noqa: BLE001 - a name only
        suite_name = Path(job.suite.partition("::")[0]).stem
    row: dict[str, Any] = {
        "row_id": "",
        "suite": suite_name,
        "suite_ref": job.suite,
        "variant_a": a.variant,
        "variant_b": b.variant,
        "target_a": a.target,
        "target_b": b.target,
        "triton_a": a.triton or _installed(),
        "triton_b": b.triton or _installed(),
        "config": a.config,
        "config_text": None,
        "shape": json.dumps(dict(a.shape), sort_keys=True),
        "status": "failed",
        "error": None,
        "identical": None,
        "root_id": None,
        "root_severity": None,
        "root_title": None,
        "chain_severity": None,
        "max_severity": None,
        "findings": None,
        "n_critical": None,
        "n_major": None,
        "n_minor": None,
        "n_info": None,
        "finding_ids": None,
        "counts_differ": None,
        "counts_a": None,
        "counts_b": None,
        **{c: None for c in _INT_COLUMNS},
        "time_ms_a": None,
        "time_ms_b": None,
        "report": None,
    }
    row["row_id"] = hashlib.sha256(json.dumps(match_key(row), default=str).encode()).hexdigest()[:16]
    return row


def failed_row(job: DiagnosisJob, error: str) -> dict[str, Any]:
    """The row of a pair that could not be diagnosed (a side failed to compile, or the job broke)."""
    row = _base_row(job)
    row["error"] = error.strip().splitlines()[0][:400] if error.strip() else "failed"
    return row


def _key_counts(v: Any) -> dict[str, int]:
    from irdiff.diagnose.counts import KEY_COUNTS, count_ops

    out: dict[str, int] = {}
    for stage, keys in KEY_COUNTS.items():
        text = v.text(stage)
        if not text:
            continue
        counts = count_ops(stage, text)
        for k in keys:
            out[f"{stage}:{k}"] = int(counts.get(k, 0))
    return out


def row_from_comparison(job: DiagnosisJob, c: Comparison, report: str | None) -> dict[str, Any]:
    """The row of a diagnosed pair: root finding (:func:`irdiff.render.order.present_findings`), severities, key
    operation counts (:data:`irdiff.diagnose.counts.KEY_COUNTS`), ptxas resources of both variants."""
    from irdiff.render.configs import config_text
    from irdiff.render.order import present_findings

    row = _base_row(job)
    va, vb = c.bundle.variants[c.a], c.bundle.variants[c.b]
    presented = present_findings(c.diagnosis)
    sev = [str(p.finding.severity) for p in presented]
    ca, cb = _key_counts(va), _key_counts(vb)
    row.update(
        status="ok" if c.diagnosis_error is None else "failed",
        error=c.diagnosis_error,
        config_text=config_text(va) or None,
        identical=bool(c.diagnosis.identical) if c.diagnosis else None,
        findings=len(presented),
        n_critical=sev.count("critical"),
        n_major=sev.count("major"),
        n_minor=sev.count("minor"),
        n_info=sev.count("info"),
        finding_ids=sorted(p.finding.id for p in presented),
        counts_differ=sum(ca.get(k, 0) != cb.get(k, 0) for k in set(ca) | set(cb)),
        counts_a=sorted(ca.items()),
        counts_b=sorted(cb.items()),
        report=report,
    )
    if presented:
        root = presented[0].finding
        chain = [str(f.severity) for f in chain_of([p.finding for p in presented], root.id)]
        row.update(root_id=root.id, root_severity=str(root.severity), root_title=root.title)
        row["chain_severity"] = max(chain, key=lambda s: SEVERITY_RANK.get(s, -1))
        row["max_severity"] = max(sev, key=lambda s: SEVERITY_RANK.get(s, -1))
    for side, v in (("a", va), ("b", vb)):
        r = v.resources
        row[f"registers_{side}"] = r.registers
        row[f"spill_store_{side}"] = r.spill_store_bytes
        row[f"spill_load_{side}"] = r.spill_load_bytes
        row[f"shared_{side}"] = r.shared_bytes
    return row


def chain_of(findings: list[Any], root_id: str) -> list[Any]:
    """The root finding ``root_id`` and its effects: every finding whose ``causes`` lead to it, directly or through
    another effect (``Finding.causes``, :mod:`irdiff.diagnose.roots`), in the order given."""
    ids = {root_id}
    grew = True
    while grew:
        grew = False
        for f in findings:
            if f.id not in ids and any(c in ids for c in f.causes):
                ids.add(f.id)
                grew = True
    return [f for f in findings if f.id in ids]


def sort_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows in the table's documented order."""

    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        return (
            r["suite"], r["suite_ref"], r["variant_a"], r["variant_b"], r["target_a"], r["target_b"],
            r["triton_a"], r["triton_b"], -1 if r["config"] is None else r["config"], r["shape"], r["row_id"],
        )  # fmt: skip

    return sorted(rows, key=key)


def write_table(rows: list[dict[str, Any]], path: str | Path) -> Path:
    """Write ``rows`` (sorted, :func:`sort_rows`) as Parquet with :func:`schema`; returns the path."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    sc = schema()
    table = pa.Table.from_pylist(sort_rows(rows), schema=sc)
    tmp = p.with_name(p.name + ".tmp")
    pq.write_table(table, tmp)
    tmp.replace(p)
    return p


def read_table(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a sweep table written by :func:`write_table`.

    :raises ValueError: not a readable Parquet file, or not an irdiff sweep table (schema metadata missing or of
        another major version).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(str(path))
    except (OSError, pa.ArrowException) as e:
        raise ValueError(f"{path}: not a readable Parquet file ({e})") from None
    meta = table.schema.metadata or {}
    version = meta.get(b"irdiff.sweep.schema", b"").decode()
    if version.split("/")[0] != SCHEMA_VERSION.split("/")[0]:
        raise ValueError(f"{path}: not an irdiff sweep table (schema {version or 'unknown'})")
    rows = table.to_pylist()
    for r in rows:
        r.setdefault(
            "chain_severity", None
        )  # a table of schema irdiff.sweep/1  # maps read back as [(key, value)]; keep them as such (as written)
        for col in ("counts_a", "counts_b"):
            if r.get(col) is not None:
                r[col] = [tuple(kv) for kv in r[col]]
    return rows
