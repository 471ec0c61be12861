"""Noise between two compiles that normalization removes: LLIR attribute-group numbering and SASS physical register
allocation (issue 17). Real compiles of ``tests/suites/norm_noise.py`` (``plain``/``fenced``/``offset``) and of the
matmul suite; the terminal, HTML and Markdown views show the normalized names, ``--raw`` the physical ones."""

from __future__ import annotations

import html
import random
import re
from pathlib import Path

import pytest

from irdiff.align import StageDiff, diff_stage
from irdiff.bundle import Bundle
from irdiff.normalize import normalize
from irdiff.pipeline import build_comparison
from irdiff.render.html import render_html
from irdiff.render.markdown import render_markdown
from irdiff.render.terminal import TerminalOptions, render

NOISE = str(Path(__file__).parent / "suites" / "norm_noise.py")
_ATTR_REF = re.compile(r"#attrs\.[0-9a-f]{6}(?:\.\d+)?|#\d+\b")
_REG = re.compile(r"(?<![\w.$])(?:UR|UP|R|P|B)\d+(?![\w$])")


@pytest.fixture(scope="module")
def noise90(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(NOISE, ["plain", "fenced", "offset"], "sm90")


def _diff(bundle: Bundle, stage: str, a: str, b: str, *, raw: bool = False) -> StageDiff:
    va, vb = bundle.variants[a], bundle.variants[b]
    return diff_stage(
        normalize(stage, va.text(stage), va.kernel, raw=raw), normalize(stage, vb.text(stage), vb.kernel, raw=raw)
    )


def _raw_group(text: str, content: str) -> str:
    """The number LLVM gave the attribute group ``{ content }`` in a raw LLIR text."""
    m = re.search(rf"^attributes #(\d+) = \{{ {re.escape(content)} \}}$", text, re.M)
    assert m, content
    return m.group(1)


def _renumbering_only(d: StageDiff) -> list[tuple[str, str]]:
    """Pairs (deleted, inserted) of one hunk that differ only in attribute-group names."""
    out = []
    for h in d.hunks:
        dels = [ln.a_text for ln in h.lines if ln.a_text is not None and ln.tag in ("delete", "replace")]
        ins = [ln.b_text for ln in h.lines if ln.b_text is not None and ln.tag in ("insert", "replace")]
        masked = {_ATTR_REF.sub("#G", x): x for x in ins}
        out += [(x, masked[_ATTR_REF.sub("#G", x)]) for x in dels if _ATTR_REF.sub("#G", x) in masked]
    return out


# ------------------------------------------------------------------------------------------------ LLIR


def test_attribute_groups_are_named_by_content() -> None:
    a = """define void @k(ptr %0) #0 {
  tail call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0) #2
  %2 = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x() #1
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x() #1
attributes #0 = { nounwind "nvvm.reqntid"="128" }
attributes #1 = { nounwind readnone }
attributes #2 = { convergent nounwind }
"""
    # the same module, groups numbered in another order (LLVM numbers them by first use)
    b = a.replace("#1", "#X").replace("#2", "#1").replace("#X", "#2")
    b = b.replace(
        "attributes #2 = { nounwind readnone }\nattributes #1 = { convergent nounwind }\n",
        "attributes #1 = { convergent nounwind }\nattributes #2 = { nounwind readnone }\n",
    )
    assert a != b
    na, nb = normalize("llir", a), normalize("llir", b)
    assert na.lines == nb.lines
    assert not re.search(r"#\d", "\n".join(na.lines))
    # equal contents share a name; a changed group is a change on every line that uses it
    name = {ln.split(" = ")[1]: ln.split()[1] for ln in na.lines if ln.startswith("attributes ")}
    assert len(set(name.values())) == 3
    assert na.lines[0].endswith(name['{ nounwind "nvvm.reqntid"="128" }'] + " {") or any(
        name['{ nounwind "nvvm.reqntid"="128" }'] in ln for ln in na.lines[:3]
    )
    nc = normalize("llir", a.replace('"128"', '"256"'))
    changed = [x for x, y in zip(na.lines, nc.lines, strict=True) if x != y]
    assert any(ln.startswith("attributes ") for ln in changed) and any("%0" in ln or "{" in ln for ln in changed)
    # the raw view keeps LLVM's numbers
    assert "attributes #2 = { convergent nounwind }" in normalize("llir", a, raw=True).lines


@pytest.mark.parametrize("order", [("plain", "fenced"), ("fenced", "plain")])
def test_attribute_renumbering_is_never_a_hunk(noise90: Bundle, order: tuple[str, str]) -> None:
    a, b = order
    ta, tb = noise90.variants[a].text("llir"), noise90.variants[b].text("llir")
    # the premise: an extra intrinsic in `fenced` makes LLVM number the same groups differently
    assert _raw_group(ta, "nounwind") != _raw_group(tb, "nounwind")
    d = _diff(noise90, "llir", a, b)
    assert _renumbering_only(d) == []
    changed = [ln.a_text or ln.b_text or "" for h in d.hunks for ln in h.lines if ln.tag != "equal"]
    # what is left is the barrier: its call, its declaration and its attribute group, on the `fenced` side only
    assert changed and all("barrier" in x or "convergent" in x for x in changed), changed
    side = "b" if b == "fenced" else "a"
    assert all(
        (ln.b_text if side == "b" else ln.a_text) is not None for h in d.hunks for ln in h.lines if ln.tag != "equal"
    )
    # the raw diff still shows LLVM's own numbers
    raw = _diff(noise90, "llir", a, b, raw=True)
    assert any(re.search(r"#\d+", ln.a_text or ln.b_text or "") for h in raw.hunks for ln in h.lines)


def test_matmul_llir_has_no_attribute_renumbering_hunk(matmul_sm90: Bundle) -> None:
    """annotated vs unannotated on sm90: `{ nounwind }` is #8 in one, #4 in the other (first use differs)."""
    ta, tb = matmul_sm90.variants["annotated"].text("llir"), matmul_sm90.variants["unannotated"].text("llir")
    assert _raw_group(ta, "nounwind") != _raw_group(tb, "nounwind")
    for a, b in (("annotated", "unannotated"), ("unannotated", "annotated")):
        assert _renumbering_only(_diff(matmul_sm90, "llir", a, b)) == []


# ------------------------------------------------------------------------------------------------ SASS


def _permute_registers(text: str, seed: int) -> tuple[str, dict[str, str]]:
    """``text`` with every R/UR/P/UP register renamed by a random bijection per class: another allocation of the
    same code."""
    rng = random.Random(seed)
    names = sorted(set(_REG.findall(text)))
    by_cls: dict[str, list[str]] = {}
    for n in names:
        by_cls.setdefault(re.sub(r"\d+", "", n), []).append(n)
    perm: dict[str, str] = {}
    for cls, regs in by_cls.items():
        limit = {"R": 255, "UR": 63, "P": 7, "UP": 7, "B": 16}[cls]
        pool = [f"{cls}{i}" for i in range(limit)]
        rng.shuffle(pool)
        perm.update(zip(regs, pool[: len(regs)], strict=False))
    return _REG.sub(lambda m: perm[m.group(0)], text), perm


@pytest.mark.parametrize("variant", ["plain", "offset"])
def test_sass_register_allocation_is_not_a_difference(noise90: Bundle, variant: str) -> None:
    v = noise90.variants[variant]
    text = v.text("sass")
    other, perm = _permute_registers(text, seed=17)
    assert other != text and sum(k != x for k, x in perm.items()) > 5
    na, nb = normalize("sass", text, v.kernel), normalize("sass", other, v.kernel)
    assert na.lines == nb.lines and na.shapes == nb.shapes
    assert diff_stage(na, nb).identical
    # the raw view keeps the physical registers of each
    assert not diff_stage(
        normalize("sass", text, v.kernel, raw=True), normalize("sass", other, v.kernel, raw=True)
    ).identical
    # renamed by first appearance: R0, R1, ... in order; zero registers and special registers untouched
    first = []
    for line in na.lines:
        for r in re.findall(r"(?<![\w.$])R(\d+)(?![\w$])", line):
            if int(r) not in first:
                first.append(int(r))
    assert first == list(range(len(first)))
    joined = "\n".join(na.lines)
    for keep in ("RZ", "PT", "SR_TID.X", "SR_CTAID.X", "c[0x0]"):
        assert keep in joined, keep


def test_sass_register_rules_on_operands() -> None:
    line = "--:-:-:Y:4\t@!P2 IMAD.WIDE.U32 R12, R40.reuse, 0x2, R12.64;\n"
    special = (
        "--:-:1:-:1\tS2UR UR9, SR_CgaCtaId;\n--:-:-:-:1\tR2UR UR4, R7;\n--:-:-:-:1\tBSSY B1, LBB0;\n"
        "--:-:-:-:1\tMOV.B32 R3, -R7;\n--:-:-:-:1\tISETP.GE.AND P3, PT, |R12|, URZ, !UPT;\n"
    )
    n = normalize("sass", "Function:k\n" + line + special)
    assert n.lines[1] == "@!P0 IMAD.WIDE.U32 R0, R1.reuse, 0x2, R0.64;"
    assert n.shapes[1] == "@!P_ IMAD.WIDE.U32 R_, R_.reuse, 0x2, R_.64;"
    assert n.lines[2] == "S2UR UR0, SR_CgaCtaId;"  # a special register stays whole
    assert n.lines[3] == "R2UR UR1, R2;"  # the opcode R2UR is no register
    assert n.lines[4] == "BSSY B0, LBB0;"
    assert n.lines[5] == "MOV.B32 R3, -R2;"  # .B32 is a modifier
    assert n.lines[6] == "ISETP.GE.AND P1, PT, |R0|, URZ, !UPT;"


def _renamed_lines(d: StageDiff) -> set[str]:
    """Changed SASS lines of the diff whose registers were renamed: the text is in no raw line of either side."""
    raw = {ln.split("\t")[-1].strip() for ln in d.a.raw.splitlines() + d.b.raw.splitlines()}
    out = set()
    for h in d.hunks:
        for ln in h.lines:
            for t in (ln.a_text, ln.b_text):
                if ln.tag != "equal" and t and _REG.search(t) and t.strip() not in raw:
                    out.add(t.strip())
    return out


def _shown(text: str, lines: set[str]) -> set[str]:
    """Which of ``lines`` appear in ``text`` as a whole line's content (after a diff marker or gutter)."""
    found = set()
    for row in text.splitlines():
        for line in lines:
            if row.rstrip().endswith(line):
                found.add(line)
    return found


def test_views_show_normalized_registers_and_raw_shows_physical(noise90: Bundle) -> None:
    from test_html import _inflated  # the report's compressed sections, unpacked as its script does

    c = build_comparison(noise90, "plain", "offset")
    d = next(x for x in c.stage_diffs if x.stage == "sass")
    renamed = _renamed_lines(d)
    assert len(renamed) >= 3
    term = render(c, TerminalOptions(color=False, width=240, hunk_stages=("sass",)))
    assert len(_shown(term, renamed)) >= 3
    md = render_markdown(c)
    assert _shown(md, renamed)
    page = html.unescape(re.sub(r"<[^>]+>", "", _inflated(render_html(c))))
    assert len(_shown(page, renamed)) >= 3
    # --raw: the physical listing, line for line
    rd = next(x for x in build_comparison(noise90, "plain", "offset", raw=True).stage_diffs if x.stage == "sass")
    assert rd.a.lines == rd.a.raw.splitlines() and rd.b.lines == rd.b.raw.splitlines()
