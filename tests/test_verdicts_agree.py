"""Every verdict sentence agrees in direction with the measured ratio (issue 20): over the runner records measured
on the H200 (``benchmarks/results/runner-kinds-h200/records.json``, the built-in suites and the runner kinds), the
JSON reports of compare runs committed beside them, and diagnoses of real bundles with records in both orders."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results"
SENTENCE = re.compile(r"^(\S+) is ([\d.]+)x (slower|faster) than (\S+) \(time ratio ([\d.]+)")
MEASURED = re.compile(r"`([^`]+)` is measured ([\d.]+)× slower than `([^`]+)`")


def verdict_problems(rec: dict[str, Any]) -> list[str]:
    """Disagreements between each verdict's sentence, its word, its ratio and the row medians."""
    bad = []
    rows = {json.dumps(r["shape"], sort_keys=True): r for r in rec.get("rows", [])}
    for vd in rec.get("verdicts", []):
        s, ratio, word = vd["sentence"], vd["ratio"], vd["verdict"]
        m = SENTENCE.match(s)
        if word == "no significant difference":
            if m or "no significant difference" not in s:
                bad.append(f"{s!r}: says a direction the verdict does not have")
            lo, hi = vd["ci"]
            if lo > 1 + vd["min_effect"] or hi < 1 / (1 + vd["min_effect"]):
                bad.append(f"{s!r}: interval {lo}-{hi} is significant")
            continue
        if not m:
            bad.append(f"{s!r}: no direction")
            continue
        a, _, direction, b, _ = m.groups()
        if (a, b) != (vd["a"], vd["b"]) or direction != word or (ratio > 1) != (direction == "slower"):
            bad.append(f"{s!r}: ratio {ratio}, verdict {word}")
        row = rows.get(json.dumps(vd.get("shape") or {}, sort_keys=True))
        if row is None:
            continue
        ea = row["variants"].get(a) or ((row.get("reference") or {}) if a == rec.get("reference_name") else {})
        eb = row["variants"].get(b) or ((row.get("reference") or {}) if b == rec.get("reference_name") else {})
        if ea.get("median_ms") and eb.get("median_ms") and (ea["median_ms"] > eb["median_ms"]) != (ratio > 1):
            bad.append(f"{s!r}: medians {ea['median_ms']} vs {eb['median_ms']} point the other way")
    return bad


def measured_problems(findings: list[dict[str, Any]], timing: dict[str, Any]) -> list[str]:
    """``time.measured`` sentences against the runner's verdicts of the same pair."""
    bad = []
    words = {}
    for vd in timing.get("verdicts", []):
        words[(vd["a"], vd["b"])] = vd["verdict"]
        words[(vd["b"], vd["a"])] = {"slower": "faster", "faster": "slower"}.get(vd["verdict"], vd["verdict"])
    for f in findings:
        if f["id"] != "time.measured":
            continue
        for text in (f["title"], f["explanation"]):
            for slow, _, fast in MEASURED.findall(text):
                if words.get((slow, fast)) != "slower":
                    bad.append(f"{text!r}: the runner says {slow} vs {fast}: {words.get((slow, fast))}")
        if f.get("predicts") and words.get((f["predicts"], _other(f, words))) not in (None, "slower"):
            bad.append(f"{f['title']!r}: predicts {f['predicts']} against the runner's verdict")
    return bad


def _other(f: dict[str, Any], words: dict[tuple[str, str], str]) -> str:
    return next((b for (a, b) in words if a == f["predicts"]), "")


def _records() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for p in sorted(RESULTS.glob("*/records.json")):
        for name, runs in json.loads(p.read_text()).items():
            if isinstance(runs, dict) and "timing" in runs:
                out.append((f"{p.parent.name}/{name}", runs["timing"]))
    return out


RECORDS = _records()


@pytest.mark.parametrize("name,rec", RECORDS, ids=[n for n, _ in RECORDS])
def test_measured_records_verdicts_agree(name: str, rec: dict[str, Any]) -> None:
    assert verdict_problems(rec) == []


def test_there_are_measured_records() -> None:
    assert len(RECORDS) >= 10 and sum(len(r.get("verdicts", [])) for _, r in RECORDS) >= 12


REPORTS = sorted(RESULTS.glob("*/*.report.json"))


@pytest.mark.parametrize("path", REPORTS, ids=[p.name for p in REPORTS])
def test_committed_reports_time_finding_agrees(path: Path) -> None:
    rep = json.loads(path.read_text())
    timing = rep.get("timing") or {}
    assert verdict_problems(timing) == []
    assert measured_problems(rep["diagnosis"]["findings"], timing) == []


@pytest.mark.parametrize("order", [("annotated", "unannotated"), ("unannotated", "annotated")])
@pytest.mark.parametrize("ratio", [25.0, 1.04, 0.5, 1.0])
def test_diagnosis_time_finding_agrees(matmul_sm86: Any, order: tuple[str, str], ratio: float) -> None:
    """A real bundle with a record in either order, each direction, and no difference."""
    import dataclasses

    from irdiff.diagnose import diagnose

    word = "slower" if ratio > 1.01 else "faster" if ratio < 0.99 else "no significant difference"
    ci = [ratio * 0.995, ratio * 1.005] if word != "no significant difference" else [0.98, 1.02]
    a, b = order
    vd = {"a": a, "b": b, "ratio": ratio, "verdict": word, "ci": ci, "min_effect": 0.01, "shape": {"M": 4096},
          "sentence": "x"}  # fmt: skip
    bundle = dataclasses.replace(matmul_sm86, runs={"timing": {"verdicts": [vd]}})
    for x, y in (("annotated", "unannotated"), ("unannotated", "annotated")):
        d = diagnose(bundle, x, y)
        assert measured_problems([f.to_json() for f in d.findings], {"verdicts": [vd]}) == []
        t = d.finding("time.measured")
        assert t is not None
        want = a if word == "slower" else b if word == "faster" else None
        assert t.predicts == want


def test_counters_join_confirms_and_flags(matmul_sm86: Any) -> None:
    """Counters (values as ncu measured them on the H200, ``runner-h200-blocks100/compare.txt``) joined to the real
    findings of matmul annotated vs unannotated: pipelining and vector width confirmed with both figures, the
    predicted occupancy drop flagged as not shown."""
    import dataclasses

    from irdiff.diagnose import diagnose

    units = {"stall_long_scoreboard": ["x", "cycles/inst"], "global_load_requests": ["x", "requests"],
             "achieved_occupancy": ["x", "% of warps"], "instructions": ["x", "warp instructions"]}  # fmt: skip
    ann = {"stall_long_scoreboard_share": 82.83, "global_load_requests": 3.355e7, "load_sectors_per_request": 32.0,
           "achieved_occupancy": 12.23, "instructions": 2.549e8, "stall_long_scoreboard": 1.75e6}  # fmt: skip
    una = {"stall_long_scoreboard_share": 33.5, "global_load_requests": 4.194e6, "load_sectors_per_request": 16.0,
           "achieved_occupancy": 12.21, "instructions": 5.899e7, "stall_long_scoreboard": 1.551e4}  # fmt: skip
    nc = {"metrics": units, "variants": {"annotated": {"metrics": ann}, "unannotated": {"metrics": una}}}
    for a, b in (("annotated", "unannotated"), ("unannotated", "annotated")):
        d = diagnose(dataclasses.replace(matmul_sm86, runs={"ncu": nc}), a, b)
        lines = {f.id: [e.text for e in f.evidence if e.stage == "ncu"] for f in d.findings}
        pipe = lines["pipeline.load-not-pipelined"]
        assert pipe == ["counters confirm: stall long scoreboard share 83% of stall cycles in `annotated` vs 34% of "
                        "stall cycles in `unannotated`"]  # fmt: skip
        vw = " ".join(lines["coalesce.vector-width"])
        assert "load sectors per request 32.0 sectors/request in `annotated` vs 16.0" in vw
        regs = " ".join(lines.get("resources.registers", []) + lines.get("resources.occupancy", []))
        if regs:
            assert "not shown by the counters" in regs


def test_terminal_says_the_timing_once_and_which_shapes(matmul_sm86: Any) -> None:
    import dataclasses

    from irdiff.pipeline import build_comparison
    from irdiff.render.terminal import TerminalOptions, render

    vd = {"a": "annotated", "b": "unannotated", "ratio": 25.4, "verdict": "slower", "ci": [25.3, 25.5],
          "min_effect": 0.01, "shape": {"M": 4096, "N": 4096, "K": 4096}, "sentence": "annotated is 25.4x slower"}  # fmt: skip
    rec = {"rows": [{"shape": vd["shape"], "variants": {}}], "verdicts": [vd]}
    b = dataclasses.replace(matmul_sm86, runs={"timing": rec}, shape={"M": 1024, "N": 1024, "K": 1024})
    text = render(build_comparison(b, "annotated", "unannotated"), TerminalOptions(color=False, width=120))
    assert text.count("is measured 25.4× slower than `unannotated`") == 2  # the finding's title and its explanation
    assert "compiled at M=1024,N=1024,K=1024; timed at M=4096,N=4096,K=4096" in text


def _said(c: Any, fmt: str) -> str:
    """What a reader of ``fmt`` sees, whitespace collapsed (HTML: tags stripped, entities decoded)."""
    import html as html_mod

    from irdiff.render.html import render_html
    from irdiff.render.json_report import report_json
    from irdiff.render.markdown import render_markdown
    from irdiff.render.terminal import TerminalOptions, render

    if fmt == "terminal":
        text = render(c, TerminalOptions(color=False, width=120))
    elif fmt == "markdown":
        text = render_markdown(c)
    elif fmt == "json":
        text = json.dumps([f["id"] for f in report_json(c)["diagnosis"]["findings"]])
    else:
        body = re.sub(r"<script.*?</script>|<style.*?</style>", "", render_html(c), flags=re.S)
        text = html_mod.unescape(re.sub(r"<[^>]+>", " ", body))
    return " ".join(text.split())


FORMATS = ["terminal", "markdown", "html"]


def _timed_comparison(bundle: Any, a: str, b: str, ratio: float, findings: list[dict[str, Any]] | None = None) -> Any:
    import dataclasses

    from irdiff.pipeline import build_comparison

    shape = {"M": 4096, "N": 4096, "K": 4096}
    vd = {"a": "annotated", "b": "unannotated", "ratio": ratio, "verdict": "slower", "ci": [ratio * 0.99, ratio * 1.01],
          "min_effect": 0.01, "shape": shape, "sentence": f"annotated is {ratio}x slower"}  # fmt: skip
    rec = {"rows": [{"shape": shape, "variants": {}}], "verdicts": [vd], "findings": findings or []}
    b2 = dataclasses.replace(bundle, runs={"timing": rec}, shape={"M": 1024, "N": 1024, "K": 1024})
    return build_comparison(b2, a, b)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("order", [("annotated", "unannotated"), ("unannotated", "annotated")])
def test_every_format_says_the_timing_once_and_names_its_shape(matmul_sm86: Any, fmt: str, order: tuple[str, str]) -> None:  # fmt: skip
    """The timing finding's sentence (the verdict) is said once, in its finding, with the shape it quotes; the
    stage-0 table says the IR was compiled at 1024 and timed at 4096 (issue 14)."""
    c = _timed_comparison(matmul_sm86, *order, ratio=7.3)
    text = _said(c, fmt)
    sentence = "`annotated` is measured 7.3× slower than `unannotated` at M=4096,N=4096,K=4096"
    plain = sentence.replace("`", "")
    # the title and the explanation start with it; the explanation goes on with "; the static chain …"
    said = text.count(sentence) + (text.count(plain) if fmt == "html" else 0)
    assert said == 2, (fmt, said)
    assert (text.count(sentence + ";") + (text.count(plain + ";") if fmt == "html" else 0)) == 1
    assert "compiled at M=1024,N=1024,K=1024; timed at M=4096,N=4096,K=4096" in text


@pytest.mark.parametrize("fmt", [*FORMATS, "json"])
def test_wrong_result_is_the_first_thing_said_in_every_format(matmul_sm86: Any, fmt: str) -> None:
    """A wrong result comes before the chain, the timing sentence and every other finding in each format."""
    msg = "unannotated: c_ptr differs from reference: relative Frobenius error 0.707 (tolerance 0.005) at M=N=K=4096"
    c = _timed_comparison(matmul_sm86, "annotated", "unannotated", 1.03,
                          [{"kind": "correctness", "variant": "unannotated", "message": msg}])  # fmt: skip
    text = _said(c, fmt)
    wrong = text.find(
        "unannotated` computes a wrong result" if fmt != "html" else "unannotated computes a wrong result"
    )
    if fmt == "json":
        assert json.loads(text)[0] == "time.wrong-result"
        return
    assert wrong >= 0
    others = [text.find(x) for x in ("is measured", "time ratio", "spec.constexpr-one-lost", "stride_ak")]
    assert all(o < 0 or wrong < o for o in others), (fmt, wrong, others)


def test_shapes_note_without_timing(matmul_sm86: Any) -> None:
    import dataclasses

    from irdiff.pipeline import build_comparison
    from irdiff.render.views import config_text, shapes_note

    c = build_comparison(dataclasses.replace(matmul_sm86, runs={}, shape={"M": 512, "N": 512, "K": 64}),
                         "annotated", "unannotated")  # fmt: skip
    # the config both variants were compiled with, from the bundle (the matmul's default autotune config)
    v = matmul_sm86.variants["annotated"]
    config = config_text(v.config, v.options)
    assert config.startswith("BLOCK_SIZE_M=128, BLOCK_SIZE_N=") and f"num_warps={v.options['num_warps']}" in config
    assert shapes_note(c) == f"compiled at M=512,N=512,K=64; not timed; config {config}"
    assert "compiled at M=512,N=512,K=64; not timed; config BLOCK" in _said(c, "markdown").replace("\\_", "_")
    same = _timed_comparison(matmul_sm86, "annotated", "unannotated", 2.0)
    same = build_comparison(dataclasses.replace(same.bundle, shape={"M": 4096, "N": 4096, "K": 4096}),
                            "annotated", "unannotated")  # fmt: skip
    assert shapes_note(same) == f"compiled and timed at M=4096,N=4096,K=4096; config {config}"
    assert shapes_note(build_comparison(dataclasses.replace(matmul_sm86, runs={}, shape={}), "annotated",
                                        "unannotated")) == f"compiled with {config}; not timed"  # fmt: skip
    # two variants compiled with different configs: each named with its variant
    other = dataclasses.replace(matmul_sm86.variants["unannotated"], config={**v.config, "BLOCK_SIZE_K": 64})
    two = dataclasses.replace(matmul_sm86, runs={}, variants={**matmul_sm86.variants, "unannotated": other})
    note = shapes_note(build_comparison(two, "annotated", "unannotated"))
    assert (
        note is not None and f"{config} in annotated, " in note and "BLOCK_SIZE_K=64" in note.split(" in annotated")[1]
    )
    assert shapes_note(build_comparison(dataclasses.replace(matmul_sm86, runs={}, shape={}, variants={
        n: dataclasses.replace(x, config={}, options={}) for n, x in matmul_sm86.variants.items()}),
        "annotated", "unannotated")) is None  # fmt: skip
