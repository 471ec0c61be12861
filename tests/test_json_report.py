"""The JSON report (``--json-report``, schema ``irdiff.report/1``): validated against its JSON Schema and checked
against real facts of the seed-000 compile (``matmul`` sm86, ``annotated`` against ``unannotated``)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from irdiff.cli import cli
from irdiff.pipeline import build_comparison
from irdiff.render.json_report import SCHEMA, render_json, report_json, schema
from irdiff.render.order import present_findings
from irdiff.render.report import is_irdiff_report

jsonschema = pytest.importorskip("jsonschema")  # a dev extra: absent from the GPU image, whose run skips this file


@pytest.fixture(scope="module")
def seed0(matmul_sm86):  # type: ignore[no-untyped-def]
    return build_comparison(matmul_sm86, "annotated", "unannotated")


@pytest.fixture(scope="module")
def doc(seed0):  # type: ignore[no-untyped-def]
    return json.loads(render_json(seed0))


def test_schema_is_valid_and_matches(doc) -> None:  # type: ignore[no-untyped-def]
    jsonschema.Draft202012Validator.check_schema(schema())
    jsonschema.validate(doc, schema())
    assert doc["schema"] == SCHEMA == "irdiff.report/1"
    bad = dict(doc, schema="irdiff.report/2")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema())


def test_facts_of_seed0(doc, seed0) -> None:  # type: ignore[no-untyped-def]
    assert (doc["a"]["name"], doc["b"]["name"]) == ("annotated", "unannotated")
    assert doc["a"]["kernel"] == "matmul_kernel_annotated"
    assert [s["stage"] for s in doc["stages"]] == [d.stage for d in seed0.stage_diffs]
    spec = {r["name"]: r for r in doc["specialization"]}
    assert spec["stride_ak"]["differs"] and spec["stride_ak"]["a"]["type"] == "i32"
    assert spec["stride_ak"]["b"]["type"] == "constexpr" and spec["stride_ak"]["b"]["constexpr"] == "1"
    assert not spec["M"]["differs"]
    ids = [f["id"] for f in doc["diagnosis"]["findings"]]
    assert ids == [p.finding.id for p in present_findings(seed0.diagnosis)]  # reading order, as every format
    assert doc["a"]["resources"]["registers"] == seed0.bundle.variants["annotated"].resources.registers
    # Counts: the annotated TTGIR has no async copies, the unannotated one has them.
    ttgir = next(s for s in doc["stages"] if s["stage"] == "ttgir")
    counts = {c["key"]: (c["a"], c["b"]) for c in ttgir["counts"]}
    a_async, b_async = counts["ttg.async_copy_global_to_local"]
    assert a_async == 0 < b_async


def test_lines_carry_raw_and_source_lines(doc, seed0) -> None:  # type: ignore[no-untyped-def]
    src = seed0.bundle.variants["unannotated"].text("python").splitlines()
    raw = seed0.bundle.variants["unannotated"].text("ttgir").splitlines()
    by_stage = {d.stage: d for d in seed0.stage_diffs}
    seen_dot = 0
    for s in doc["stages"]:
        d = by_stage[s["stage"]]
        assert sum(len(h["lines"]) for h in s["hunks"]) == sum(len(h.lines) for h in d.hunks)
        for h in s["hunks"]:
            for ln in h["lines"]:
                if ln["b"] is not None:
                    assert ln["b_text"] == d.b.lines[ln["b"]]
                    assert ln["b_raw"] == d.b.raw_line[ln["b"]]
                if s["stage"] == "ttgir" and ln["b_text"] and " tt.dot " in ln["b_text"]:
                    assert " tt.dot " in raw[ln["b_raw"] - 1]
                    assert "tl.dot(" in src[ln["b_source"] - 1]
                    seen_dot += 1
    assert seen_dot >= 1


def test_cli_writes_reports_from_compare(matmul_sm86, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``irdiff matmul --json-report FILE --md FILE --html FILE`` (compiles from irdiff's cache)."""
    runner = CliRunner()
    j, m, h = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "r.html"
    args = ["matmul", "--variant", "annotated", "--against", "unannotated", "--target", "sm86", "--no-run"]
    res = runner.invoke(cli, [*args, "--json-report", str(j), "--md", str(m), "--html", str(h), "--color", "never"])
    assert res.exit_code == 0, res.output
    for p in (j, m, h):
        assert is_irdiff_report(p), p
    d = json.loads(j.read_text())
    jsonschema.validate(d, schema())
    assert [f["id"] for f in d["diagnosis"]["findings"]] == [
        f["id"] for f in report_json(build_comparison(matmul_sm86, "annotated", "unannotated"))["diagnosis"]["findings"]
    ]
    # "-" writes the JSON to stdout, alone.
    res = runner.invoke(cli, ["report", matmul_sm86.directory, "--variant", "annotated", "--against", "unannotated",
                              "-o", "-", "--format", "json"])  # fmt: skip
    assert res.exit_code == 0
    assert json.loads(res.stdout)["schema"] == SCHEMA
    # A user's file is refused before anything is compiled.
    user = tmp_path / "mine.json"
    user.write_text("{}")
    res = runner.invoke(cli, [*args, "--json-report", str(user)])
    assert res.exit_code == 2 and "not overwriting" in res.output and user.read_text() == "{}"
