"""Every format presents findings in one reading order: root, then effects by severity, then unexplained.

Unit cases build diagnoses by hand (the ordering is pure); the cross-format test renders the real seed-000
comparison (matmul sm86) and a 12-finding diagnosis in all four formats and checks they agree. The Markdown list is
parsed with markdown-it (GitHub's CommonMark): item 10 and later must stay in one list with their evidence bullets.
"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from markdown_it import MarkdownIt

from irdiff.diagnose import Diagnosis, Evidence, Finding
from irdiff.pipeline import build_comparison
from irdiff.render import Comparison
from irdiff.render.html import render_html
from irdiff.render.json_report import render_json
from irdiff.render.markdown import render_markdown
from irdiff.render.order import present_findings
from irdiff.render.terminal import TerminalOptions, render


def F(fid: str, sev: str, causes: tuple[str, ...] = (), stage: str = "ttgir") -> Finding:
    return Finding(
        id=fid,
        severity=sev,  # type: ignore[arg-type]
        title=f"title of {fid}",
        explanation=f"why {fid}",
        evidence=[Evidence("a", "ttgir", 3, f"evidence of {fid}")],
        causes=list(causes),
        stage=stage,
    )


def ids(d: Diagnosis) -> list[tuple[str, str]]:
    return [(p.finding.id, p.role) for p in present_findings(d)]


def test_major_effect_before_minor_effects() -> None:
    """The issue's case: a major finding printed after two minor ones. Effects go by severity."""
    d = Diagnosis(
        "a",
        "b",
        [F("root.spec", "major"), F("e.minor1", "minor", ("root.spec",)), F("e.minor2", "minor", ("root.spec",)),
         F("e.major", "major", ("e.minor1",)), F("e.crit", "critical", ("root.spec",))],
    )  # fmt: skip
    assert ids(d) == [
        ("root.spec", "root"),
        ("e.crit", "effect"),
        ("e.major", "effect"),
        ("e.minor1", "effect"),
        ("e.minor2", "effect"),
    ]


def test_unexplained_findings_come_last_whatever_their_severity() -> None:
    d = Diagnosis(
        "a",
        "b",
        [F("lone.critical", "critical"), F("root", "minor"), F("eff", "info", ("root",)), F("lone.minor", "minor")],
    )
    # The diagnosis' first finding is its root even without effects; the other isolated ones are unexplained.
    assert ids(d) == [("lone.critical", "root"), ("root", "root"), ("eff", "effect"), ("lone.minor", "unexplained")]
    d2 = Diagnosis("a", "b", [F("root", "minor"), F("lone", "critical"), F("eff", "info", ("root",))])
    assert ids(d2) == [("root", "root"), ("eff", "effect"), ("lone", "unexplained")]


def test_a_cause_not_in_the_diagnosis_links_nothing() -> None:
    d = Diagnosis("a", "b", [F("root", "major"), F("orphan", "critical", ("gone",))])
    assert ids(d) == [("root", "root"), ("orphan", "unexplained")]


def test_marked_roles_win() -> None:
    f = F("x", "minor", ("root",))
    object.__setattr__(f, "role", "unexplained")
    d = Diagnosis("a", "b", [F("root", "major"), f])
    assert ids(d)[-1] == ("x", "unexplained")


def test_order_is_a_permutation() -> None:
    d = Diagnosis("a", "b", [F(f"f{i}", s, ("f0",) if i % 2 else ()) for i, s in enumerate(["info", "minor"] * 5)])
    assert sorted(p.finding.id for p in present_findings(d)) == sorted(f.id for f in d.findings)


# --------------------------------------------------------------------------------------------------------------
# The same order in every format
# --------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def seed0(matmul_sm86) -> Comparison:  # type: ignore[no-untyped-def]
    return build_comparison(matmul_sm86, "annotated", "unannotated")


@pytest.fixture(scope="module")
def twelve(seed0: Comparison) -> Comparison:
    """Seed 000 with a 12-finding diagnosis: one root, 10 effects, one unexplained."""
    sev = ["minor", "major", "info", "critical", "minor", "major", "info", "minor", "major", "minor"]
    fs = [F("spec.root", "major", stage="spec")]
    fs += [F(f"effect.{i:02d}", s, ("spec.root",)) for i, s in enumerate(sev)]
    fs.append(F("lone.thing", "critical", stage="sass"))
    assert seed0.diagnosis is not None
    return dataclasses.replace(seed0, diagnosis=dataclasses.replace(seed0.diagnosis, findings=fs, verdict=None))


def orders(c: Comparison) -> dict[str, list[str]]:
    assert c.diagnosis is not None
    known = [f.id for f in c.diagnosis.findings]
    term = render(c, TerminalOptions(color=False, width=140))
    term = term[term.index("── findings") : term.index("── stage 0")]
    term_ids = [m.group(1) for m in re.finditer(r"^  (?:critical|major|minor|info)\s+(\S+)", term, re.M)]
    md = render_markdown(c)
    md = md[md.index("### Findings") : md.index("### Stage 0")]
    md_ids = [m.group(1) for m in re.finditer(r"^\d+\. .*\(`([^`]+)`\)$", md, re.M)]
    html = render_html(c)
    html = html[html.index('<section id="findings">') : html.index('<section id="spec">')]
    html_ids = [m.group(1) for m in re.finditer(r'<code class="fid">([^<]+)</code>', html)]
    js = [f["id"] for f in json.loads(render_json(c))["diagnosis"]["findings"]]
    out = {"terminal": term_ids, "markdown": md_ids, "html": html_ids, "json": js}
    for k, v in out.items():
        assert sorted(v) == sorted(known), k
    return out


@pytest.mark.parametrize("which", ["seed0", "twelve"])
def test_every_format_has_the_same_order(which: str, request: pytest.FixtureRequest) -> None:
    c: Comparison = request.getfixturevalue(which)
    assert c.diagnosis is not None
    want = [p.finding.id for p in present_findings(c.diagnosis)]
    for fmt, got in orders(c).items():
        assert got == want, fmt
    roles = [f["role"] for f in json.loads(render_json(c))["diagnosis"]["findings"]]
    assert roles[0] == "root"
    assert roles == sorted(roles, key=["root", "effect", "unexplained"].index)


def test_twelve_findings_order(twelve: Comparison) -> None:
    assert twelve.diagnosis is not None
    got = [p.finding.id for p in present_findings(twelve.diagnosis)]
    assert got[0] == "spec.root" and got[-1] == "lone.thing"
    sev = {f.id: f.severity for f in twelve.diagnosis.findings}
    ranks = [["critical", "major", "minor", "info"].index(sev[i]) for i in got[1:-1]]
    assert ranks == sorted(ranks)


def test_markdown_list_survives_item_ten(twelve: Comparison) -> None:
    """GitHub (CommonMark): with 3-space continuation lines item 10's evidence bullets fall out of the list and
    ``11.`` opens a second list. Every item keeps its bullets, and the numbering runs 1..12 across the groups."""
    md = render_markdown(twelve)
    md = md[md.index("### Findings") : md.index("### Stage 0")]
    tokens = MarkdownIt("gfm-like", options_update={"linkify": False}).parse(md)
    depth = 0
    starts: list[int] = []
    items_per_list: list[int] = []
    for t in tokens:
        if t.type == "ordered_list_open":
            starts.append(int(t.attrGet("start") or 1))
            items_per_list.append(0)
        if t.type == "list_item_open" and t.level == 1:
            items_per_list[-1] += 1
        if t.type == "bullet_list_open":
            assert depth > 0, "an evidence list escaped its finding"
        if t.type == "ordered_list_open":
            depth += 1
        if t.type == "ordered_list_close":
            depth -= 1
    # Three groups (root, effects, unexplained), numbered on: 1, 2..11, 12.
    assert starts == [1, 2, 12]
    assert items_per_list == [1, 10, 1]
    assert sum(t.type == "bullet_list_open" for t in tokens) == 12
