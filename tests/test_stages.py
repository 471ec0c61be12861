"""Stages are declared once (irdiff/stages.py): every consumer handles every declared stage, and a stage declared in
a test (nowhere else) shows up in the bundle, the terminal summary and the HTML report. No compile: the bundle is
written by hand from real TTIR/TTGIR lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from irdiff import stages
from irdiff.bundle import STAGE_FILES, STAGES, ArgSpec, Bundle, VariantResult, load_bundle
from irdiff.cli import default_hunk_stages
from irdiff.diagnose.counts import KEY_COUNTS
from irdiff.diagnose.model import finding_stages
from irdiff.lexers import lexer_for_stage
from irdiff.normalize import dialect_of, normalize
from irdiff.normalize.locations import source_map, stages_with_locations
from irdiff.pipeline import build_comparison, parse_stages
from irdiff.render.html import _stage_title, render_html
from irdiff.render.markdown import render_markdown, stage_title
from irdiff.render.terminal import TerminalOptions, render

# Real TTGIR lines (Triton 3.9, sm86; a copy kernel) with two variants differing in the vector width.
_TTGIR = """#blocked = #ttg.blocked<{{sizePerThread = [{vec}], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}}>
#loc = loc("/tmp/k.py":3:0)
module attributes {{"ttg.num-warps" = 4 : i32, ttg.target = "cuda:86"}} {{
  tt.func public @copy(%x_ptr: !tt.ptr<f16> loc("x_ptr"(#loc))) attributes {{noinline = false}} {{
    %offs = tt.get_program_id x : i32 loc(#loc2)
    tt.return loc(#loc3)
  }} loc(#loc)
}} loc(#loc)
#loc2 = loc("/tmp/k.py":4:10)
#loc3 = loc("/tmp/k.py":5:4)
"""
_PY = "import triton\n\n\n@triton.jit\ndef copy(x_ptr):\n    pid = 0\n    return\n"

LATE = stages.Stage(
    "ttgir_late",
    "ttgir-late.mlir",
    "TTGIR after late passes",
    dialect="mlir",
    lexer="ttgir",
    locations="mlir",
    origin="triton",
    shown_by_default=True,
)


def _sample(st: stages.Stage) -> str:
    return {"mlir": _TTGIR.format(vec=8), "text": _PY}.get(st.dialect, "mov.u32 %r1, %r2;\n")


@pytest.mark.parametrize("st", stages.text_stages(), ids=lambda s: s.name)
def test_every_declared_stage_reaches_every_consumer(st: stages.Stage) -> None:
    assert STAGE_FILES[st.name] == st.file and st.name in STAGES
    assert [s.file for s in stages.text_stages()].count(st.file) == 1
    assert dialect_of(st.name) == st.dialect
    ns = normalize(st.name, _sample(st), "copy")
    assert ns.lines and not ns.fallback
    assert (lexer_for_stage(st.name) is not None) == (st.lexer is not None), "lexer alias unknown to irdiff.lexers"
    assert (st.name in stages_with_locations()) == (st.locations is not None), "location format unknown"
    assert (st.name in KEY_COUNTS) == st.counted, "counted stages need KEY_COUNTS keys (irdiff/diagnose/counts.py)"
    assert stage_title(st.name) == st.title and st.title in _stage_title(st.name)
    assert (st.name in default_hunk_stages()) == st.shown_by_default
    assert st.name in finding_stages()
    assert parse_stages(st.name) == [st.name]


def _bundle(root: Path) -> Bundle:
    b = Bundle(suite="copy", target="sm86", triton_version="3.9.0", directory=str(root))
    for name, vec in (("wide", 8), ("narrow", 2)):
        vdir = root / name
        vdir.mkdir(parents=True)
        v = VariantResult(name=name, kernel="copy", target="sm86", directory=str(vdir))
        v.specialization = [ArgSpec("x_ptr", 0, "*fp16", 16)]
        v.metadata = {"source_path": "/tmp/k.py"}
        for st, text in (("python", _PY), ("ttgir", _TTGIR.format(vec=vec)), ("ttgir_late", _TTGIR.format(vec=vec))):
            (vdir / STAGE_FILES[st]).write_text(text)
            v.stages[st] = STAGE_FILES[st]
        b.variants[name] = v
    b.save()
    return b


def test_throwaway_stage_appears_in_bundle_summary_and_html(tmp_path: Path) -> None:
    with stages.declared(LATE, after="ttgir"):
        bundle = load_bundle(_bundle(tmp_path / "b").directory)
        assert "ttgir_late" in STAGES and STAGES.index("ttgir_late") == STAGES.index("ttgir") + 1
        assert (tmp_path / "b" / "wide" / "ttgir-late.mlir").is_file()
        assert "sizePerThread = [8]" in bundle.variants["wide"].text("ttgir_late")

        c = build_comparison(bundle, "wide", "narrow")
        late = next(d for d in c.stage_diffs if d.stage == "ttgir_late")
        assert not late.identical and late.removed == late.added == 1

        text = render(c, TerminalOptions(color=False, width=120, hunk_stages=default_hunk_stages()))
        summary = text.split("stage 0")[0]
        row = next(ln for ln in summary.splitlines() if ln.strip().startswith("ttgir_late"))
        assert "-1" in row and "+1" in row
        assert "sizePerThread = [2]" in text  # its hunk: shown by default, as declared

        html = render_html(c)
        assert "TTGIR after late passes" in html
        md = render_markdown(c)
        assert "TTGIR after late passes" in md
    assert "ttgir_late" not in STAGES  # gone with the block
    assert source_map("ttgir_late", _TTGIR.format(vec=8), "/tmp/k.py") == {}


def test_declare_rejects_duplicates() -> None:
    with pytest.raises(ValueError, match="already declared"):
        stages.declare(stages.Stage("ttgir", "other.mlir", "TTGIR"))
    with pytest.raises(ValueError, match="no stage named"):
        stages.declare(LATE, after="nope")
