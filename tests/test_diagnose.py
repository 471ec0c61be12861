"""Diagnostics on the seed cases and the three extra pairs, compiled by the real Triton; the CLI's ``--json`` and
``--explain``; the verdict against (given) timing records."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from diag_helpers import diagnose, get, ids, texts

from irdiff.bundle import Bundle
from irdiff.cli import cli
from irdiff.diagnose import Diagnosis, explain

SUITES = Path(__file__).parent / "suites"


def before(d: Diagnosis, *chain: str) -> None:
    """The ids appear in this order, each caused (directly or through others) by the previous one."""
    order = ids(d)
    pos = [order.index(c) for c in chain]
    assert pos == sorted(pos), (chain, order)
    by_id = {f.id: f for f in d.findings}

    def ancestors(fid: str) -> set[str]:
        out: set[str] = set()
        todo = list(by_id[fid].causes)
        while todo:
            c = todo.pop()
            if c not in out:
                out.add(c)
                todo.extend(by_id[c].causes)
        return out

    for cause, effect in zip(chain, chain[1:]):
        assert cause in ancestors(effect), (cause, effect, by_id[effect].causes)


# ------------------------------------------------------------------------------------------------ seed 000


@pytest.mark.parametrize("fixture", ["matmul_sm86", "matmul_sm90"])
def test_seed_000_chain(fixture: str, request: pytest.FixtureRequest) -> None:
    bundle: Bundle = request.getfixturevalue(fixture)
    d = diagnose(bundle, "annotated", "unannotated")
    first = d.findings[0]
    assert first.id == "spec.constexpr-one-lost"
    for name in ("stride_ak", "stride_bn", "stride_cn"):
        assert f"`{name}`" in first.title
        assert f"{name}: i32" in texts(first, "annotated", "spec")
        assert f"{name}: constexpr = 1" in texts(first, "unannotated", "spec")
        assert f"{name}: int" in texts(first, "annotated", "python")
    assert "annotated `int`" in first.explanation
    before(
        d,
        "spec.constexpr-one-lost",
        "coalesce.contiguity",
        "coalesce.vector-width",
        "pipeline.load-not-pipelined",
        "ptx.memory-ops",
        "resources.registers",
    )
    c = get(d, "coalesce.contiguity")
    assert "contiguity = [1, 1]" in texts(c, "annotated", "llvm_debug")
    assert "contiguity = [1, 32]" in texts(c, "unannotated", "llvm_debug")
    v = get(d, "coalesce.vector-width")
    assert "`a` load 128x32xf16 16 vs 128 bits" in v.title
    p = get(d, "pipeline.load-not-pipelined")
    assert "is too small for pipelining" in texts(p, "annotated", "llvm_debug")
    assert "has width 16" in texts(p, "annotated", "llvm_debug")
    assert "considered for pipelining" in texts(p, "unannotated", "llvm_debug")
    m = get(d, "ptx.memory-ops")
    assert "ld.global.b16" in texts(m, "annotated", "ptx") and "st.global.b16" in texts(m, "annotated", "ptx")
    assert "cp.async" in texts(m, "unannotated", "ptx") and "st.global.v4.b32" in texts(m, "unannotated", "ptx")
    r = get(d, "resources.registers")
    assert "Used 255 registers" in texts(r, "annotated", "ptxas")
    assert r.causes == ["ptx.memory-ops"]
    assert all(f.predicts in (None, "annotated") for f in d.findings)
    # the loads are not pipelined because they are too narrow; the unpipelined load goes through registers into a
    # single shared-memory buffer (a matmul operand)
    p = get(d, "pipeline.load-not-pipelined")
    assert "staged through registers" in p.explanation and "multiplied" not in p.explanation
    # ptxas's predicated CALL out of the K loop is a branch, not a software routine
    assert "sass.calls" not in ids(d)
    if bundle.target == "sm86":
        assert d.facts["annotated"]["sass_branch_calls"] and not d.facts["annotated"]["sass_calls"]
    if bundle.target == "sm90":
        w = get(d, "pipeline.wgmma-wait")
        assert "pendings = 0" in texts(w, "annotated", "ttgir")
        assert w.title.endswith("in `annotated` (`pendings` 0; 1 in `unannotated`)")
        assert "dotCanBeProperlyAsync" in w.explanation and "ttg.local_alloc" in texts(w, "annotated", "ttgir")
        assert w.causes[0] == "pipeline.load-not-pipelined"
        # the other direction: the same variant is named as the serial one
        r2 = get(diagnose(bundle, "unannotated", "annotated"), "pipeline.wgmma-wait")
        assert r2.title == w.title


# ------------------------------------------------------------------------------------------------ seed 001


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_seed_001_persistent(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    bundle = compile_suite("persistent-matmul", ["tiled", "persistent", "persistent-noflatten"], target)
    d = diagnose(bundle, "persistent", "tiled")
    assert d.findings[0].id == "loop.flattened"
    assert "fused" in d.findings[0].title
    before(d, "loop.flattened", "pipeline.load-not-pipelined", "pipeline.buffers", "resources.shared")
    p = get(d, "pipeline.load-not-pipelined")
    assert p.title.startswith("`b` load 64x256xf16 not pipelined in `persistent`")
    assert "loop-carried" in p.title
    assert "Only `a` is still pipelined" in p.explanation
    assert "is too small for pipelining" in texts(p, "persistent", "llvm_debug")
    assert "iter_args" in texts(p, "persistent", "ttgir")
    assert "contiguity = [1, 256]" in texts(p, "persistent", "llvm_debug")  # coalescing still saw it contiguous
    # the width loss is the pipeliner's view only: the lowering still emits 128-bit loads for the same tt.load
    assert "still emits 128-bit loads" in p.explanation
    assert "ld.global.v4.b32" in texts(p, "persistent", "ptx")
    assert p.remedy and "flatten=False" in p.remedy
    s = get(d, "resources.shared")
    assert "pipeline.buffers" in s.causes
    assert "sass.calls" not in ids(d)  # sm80: a CALL ptxas uses as a loop exit, not a routine
    if target == "sm80":
        assert "resources.spills" in ids(d) or "resources.registers" in ids(d)
    else:
        w = get(d, "pipeline.wgmma-wait")
        assert "pendings = 0" in texts(w, "persistent", "ttgir")
        assert "`b` is loaded synchronously" in w.explanation
        before(d, "loop.flattened", "pipeline.load-not-pipelined", "pipeline.wgmma-wait")
        r = get(diagnose(bundle, "tiled", "persistent"), "pipeline.wgmma-wait")
        assert r.title == w.title and "1 in `tiled`" in r.title
    # flatten=False keeps a nest: its pendings = 0 wait after the K loop is not a per-iteration wait
    d3 = diagnose(bundle, "persistent-noflatten", "tiled")
    assert d3.findings[0].id == "loop.nest" and "pipeline.wgmma-wait" not in ids(d3)
    assert "2 `scf.for` (depth 2) in `persistent-noflatten` vs 1 (depth 1) in `tiled`" in d3.findings[0].title
    assert get(d3, "resources.registers").causes == ["loop.nest"]
    # the control: flatten=False keeps both operands pipelined, FLATTEN is the first cause
    d2 = diagnose(bundle, "persistent", "persistent-noflatten")
    assert d2.findings[0].id == "config.changed" and "`FLATTEN`" in d2.findings[0].title
    assert d2.findings[1].id == "spec.constexpr-changed" and "`FLATTEN`" in d2.findings[1].title
    before(d2, "config.changed", "spec.constexpr-changed", "loop.flattened", "pipeline.load-not-pipelined")


# ------------------------------------------------------------------------------------------------ extra pairs


def test_rmsnorm_do_not_specialize(compile_suite) -> None:  # type: ignore[no-untyped-def]
    bundle = compile_suite("rmsnorm", ["specialized", "dns"], "sm86")
    d = diagnose(bundle, "dns", "specialized")
    first = d.findings[0]
    assert first.id == "spec.divisibility-lost"
    assert "`x_ptr`" in first.title and "`stride_x_row`" in first.title
    assert "do_not_specialize" in first.explanation
    before(d, "spec.divisibility-lost", "coalesce.contiguity", "coalesce.vector-width", "ptx.memory-ops")
    v = get(d, "coalesce.vector-width")
    assert "16-bit (2-byte)" in v.explanation and "128-bit (16-byte)" in v.explanation
    m = get(d, "ptx.memory-ops")
    assert "ld.global.b16" in texts(m, "dns", "ptx") and "ld.global.v4.b32" in texts(m, "specialized", "ptx")
    # reasons grouped per decorator list; the strides feed offsets (not only masks); hints that work
    assert "`x_ptr`, `w_ptr` and `y_ptr` are listed in `do_not_specialize_on_alignment`" in first.explanation
    assert "`stride_x_row` and `stride_y_row` are listed in `do_not_specialize`" in first.explanation
    assert "Offsets built from `stride_x_row` and `stride_y_row`" in first.explanation
    assert first.remedy and "tl.multiple_of(x_ptr + offs, 16)" in first.remedy
    assert "tl.multiple_of(row * stride_x_row, 16)" in first.remedy
    c = get(d, "coalesce.contiguity")
    assert "divisibility 1 byte in `dns` vs 16 bytes in `specialized`" in c.explanation
    assert "lower.mask-alignment" not in ids(d)  # the coalescing pass already chose 1 element per thread


def test_permute_int64_program_id(compile_suite) -> None:  # type: ignore[no-untyped-def]
    bundle = compile_suite("permute", ["i32", "i64"], "sm86")
    d = diagnose(bundle, "i64", "i32")
    first = d.findings[0]
    assert first.id == "ttir.i64-index-math"
    assert "arith.extsi" in texts(first, "i64", "ttir")
    assert "tl.program_id(0).to(tl.int64)" in texts(first, "i64", "python")
    before(d, "ttir.i64-index-math", "ttir.divrem-64", "sass.division-calls", "sass.instructions")
    assert "div.s64" in texts(get(d, "ttir.divrem-64"), "i64", "ptx")
    assert "CALL" in texts(get(d, "sass.division-calls"), "i64", "sass")
    assert "resources.registers" in ids(d)


def test_softmax_num_stages(compile_suite) -> None:  # type: ignore[no-untyped-def]
    bundle = compile_suite("softmax", ["stages4", "stages1"], "sm86")
    d = diagnose(bundle, "stages1", "stages4")
    assert d.findings[0].id == "config.changed" and "`NUM_STAGES` (1→4)" in d.findings[0].title
    first = d.findings[1]
    assert first.id == "spec.constexpr-changed" and "`NUM_STAGES` = 1 in `stages1` vs 4 in `stages4`" in first.title
    before(d, "spec.constexpr-changed", "loop.num-stages", "pipeline.load-not-pipelined", "pipeline.buffers")
    a = get(d, "pipeline.async-copies")
    assert "ttg.async_copy_global_to_local" in texts(a, "stages4", "ttgir")
    # a row load, not a matmul operand: no multiply, no shared-memory staging in stages1
    p = get(d, "pipeline.load-not-pipelined")
    assert "multiplied" not in p.explanation and "staged through registers" not in p.explanation
    assert "go straight to registers" in get(d, "pipeline.buffers").explanation
    assert "cp.async" in texts(get(d, "ptx.memory-ops"), "stages4", "ptx")
    sh = get(d, "resources.shared")
    assert "stages4" in sh.title


# ------------------------------------------------------------------------------------------------ verdict


def _with_timing(bundle: Bundle, timing: object) -> Bundle:
    """A copy of a real bundle with a runner record attached (timings are given here, not measured)."""
    return dataclasses.replace(bundle, runs={"timing": timing})


def test_verdict_agrees(matmul_sm86: Bundle) -> None:
    rows = [{"shape": {"M": 1024}, "variants": {"annotated": {"median_ms": 0.8}, "unannotated": {"median_ms": 0.1}}}]
    d = diagnose(_with_timing(matmul_sm86, {"rows": rows}), "annotated", "unannotated")
    t = d.findings[-1]
    assert t.id == "time.measured" and t.stage == "time" and t.predicts == "annotated"
    assert t.severity == "critical" and "8× slower" in t.title
    assert "predicts this direction" in t.explanation
    assert "pipeline.load-not-pipelined" in t.causes
    assert d.verdict == t.explanation


def test_verdict_disagrees(matmul_sm86: Bundle) -> None:
    vd = [{"a": "unannotated", "b": "annotated", "shape": {"M": 4096}, "ratio": 2.0, "sentence": "x"}]
    d = diagnose(_with_timing(matmul_sm86, {"verdicts": vd}), "annotated", "unannotated")
    t = d.findings[-1]
    assert t.id == "time.measured" and "disagrees" in t.title and t.severity == "critical"
    assert "Disagreement" in t.explanation


@pytest.mark.parametrize("timing", ["garbage", {}, {"rows": [{"variants": {"annotated": {}}}]}, {"verdicts": [1]}])
def test_verdict_tolerates_partial_records(matmul_sm86: Bundle, timing: object) -> None:
    d = diagnose(_with_timing(matmul_sm86, timing), "annotated", "unannotated")
    assert "time.measured" not in ids(d) and d.verdict is None


# ------------------------------------------------------------------------------------------------ output / CLI


def test_explain_text(matmul_sm86: Bundle) -> None:
    d = diagnose(matmul_sm86, "annotated", "unannotated")
    text = explain(d, "coalesce.vector-width")
    assert "  spec.constexpr-one-lost → coalesce.contiguity → coalesce.vector-width" in text
    # every printed path follows the `causes` links, never the list order (user report: registers ← shared)
    by_id = {f.id: f for f in d.findings}
    paths = [ln.strip().split(" → ") for ln in text.splitlines() if ln.startswith("  ") and " → " in ln]
    assert paths and all("coalesce.vector-width" in p for p in paths)
    for p in paths:
        for cause, effect in zip(p, p[1:]):
            assert cause in by_id[effect].causes, (cause, effect)
    reg = explain(d, "resources.registers")
    assert "resources.shared → resources.registers" not in reg and "ptx.memory-ops → resources.registers" in reg
    for stage in ("── spec", "── python", "── ttir", "── llvm_debug", "── ttgir", "── ptx", "── sass"):
        assert stage in text
    with pytest.raises(KeyError, match="no finding"):
        explain(d, "nope")


def test_json_roundtrip(matmul_sm90: Bundle) -> None:
    d = diagnose(matmul_sm90, "annotated", "unannotated")
    data = json.loads(json.dumps(d.to_json()))
    assert data["findings"][0]["id"] == "spec.constexpr-one-lost"
    assert data["facts"]["annotated"]["resources"]["registers"] == 255
    assert {"variant", "stage", "line", "text"} <= set(data["findings"][0]["evidence"][0])


def test_cli_json_explain_identical() -> None:
    runner = CliRunner()
    suite = str(SUITES / "diag_copy.py")
    r = runner.invoke(cli, [suite, "--variant", "annotated", "--against", "plain", "--target", "sm86", "--json",
                            "--no-run"])  # fmt: skip
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["schema"] == "irdiff.diagnosis/1" and data["findings"][0]["id"] == "spec.constexpr-one-lost"
    r = runner.invoke(cli, [suite, "--variant", "annotated", "--against", "plain", "--target", "sm86", "--explain",
                            "coalesce.vector-width", "--no-run"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "perThread" in r.stdout and "── ttir" in r.stdout
    r = runner.invoke(cli, [suite, "--variant", "annotated", "--against", "plain", "--target", "sm86", "--explain",
                            "nope", "--no-run"])  # fmt: skip
    assert r.exit_code == 2 and "error: no finding 'nope'" in r.stderr
    r = runner.invoke(cli, [suite, "--variant", "plain_twin", "--against", "plain", "--target", "sm86", "--explain",
                            "x", "--no-run"])  # fmt: skip
    assert r.exit_code == 0 and r.stdout.strip().count("\n") == 0 and "identical" in r.stdout


# ------------------------------------------------------------------------------------------------ verdicts agree


def _vd(a: str, b: str, ratio: float, word: str, ci: tuple[float, float], shape: dict | None = None) -> dict:
    return {"a": a, "b": b, "ratio": ratio, "verdict": word, "ci": list(ci), "min_effect": 0.01,
            "shape": shape or {"M": 4096}, "sentence": f"{a} vs {b}: {word} (time ratio {ratio})"}  # fmt: skip


def test_verdict_uses_the_runners_statistics(matmul_sm86: Bundle) -> None:
    """A 4 % difference the runner calls significant is a difference here too (no fixed 5 % threshold)."""
    vd = [_vd("annotated", "unannotated", 1.04, "slower", (1.03, 1.05))]
    t = get(diagnose(_with_timing(matmul_sm86, {"verdicts": vd}), "annotated", "unannotated"), "time.measured")
    assert t.predicts == "annotated" and "1.04× slower" in t.title and "at M=4096" in t.title
    vd = [_vd("annotated", "unannotated", 1.04, "no significant difference", (0.99, 1.09))]
    t = get(diagnose(_with_timing(matmul_sm86, {"verdicts": vd}), "annotated", "unannotated"), "time.measured")
    assert t.predicts is None and "no significant difference by the runner's interval" in t.explanation


@pytest.mark.parametrize("flip", [False, True])
def test_evidence_for_the_faster_side_is_quoted_as_contradicting(matmul_sm86: Bundle, flip: bool) -> None:
    """unannotated measured slower; the chain (lost pipelining, more memory instructions in annotated) predicts
    annotated: that evidence must not be quoted as support, and the top finding is flagged. Same with the record's
    verdict written the other way round."""
    vd = (
        [_vd("annotated", "unannotated", 0.5, "faster", (0.48, 0.52))]
        if not flip
        else [_vd("unannotated", "annotated", 2.0, "slower", (1.9, 2.1))]
    )
    d = diagnose(_with_timing(matmul_sm86, {"verdicts": vd}), "annotated", "unannotated")
    t = get(d, "time.measured")
    assert t.predicts == "unannotated" and t.severity == "critical"
    assert "`unannotated` is measured 2× slower than `annotated` at M=4096" in t.explanation
    assert "predicts `annotated` slower" in t.explanation
    assert "the static chain does not explain the clock" in t.explanation
    assert "Supporting the measurement" not in t.explanation  # nothing static favours unannotated being slower


def test_equal_counts_are_never_a_cause(matmul_sm86: Bundle) -> None:
    for ratio, word in ((8.0, "slower"), (1.3, "slower"), (0.2, "faster")):
        ci = (ratio * 0.98, ratio * 1.02)
        d = diagnose(_with_timing(matmul_sm86, {"verdicts": [_vd("annotated", "unannotated", ratio, word, ci)]}),
                     "annotated", "unannotated")  # fmt: skip
        assert "1.0×" not in get(d, "time.measured").explanation


def test_wrong_result_is_the_first_finding_everywhere(matmul_sm86: Bundle) -> None:
    from irdiff.render.order import present_findings

    rec = {"verdicts": [_vd("annotated", "unannotated", 8.0, "slower", (7.9, 8.1))],
           "findings": [{"kind": "correctness", "variant": "unannotated", "message": "unannotated: c_ptr differs from "
                         "reference: relative Frobenius error 0.707 (tolerance 0.005) at M=N=K=4096"}]}  # fmt: skip
    d = diagnose(_with_timing(matmul_sm86, rec), "annotated", "unannotated")
    first = present_findings(d)[0]
    assert first.role == "result" and first.finding.id == "time.wrong-result"
    assert first.finding.severity == "critical" and first.finding.title == "`unannotated` computes a wrong result"
    assert "relative Frobenius error 0.707" in first.finding.explanation
    # the chain's own root is still a root
    assert present_findings(d)[1].role == "root"
    ok = diagnose(_with_timing(matmul_sm86, {**rec, "findings": []}), "annotated", "unannotated")
    assert "time.wrong-result" not in ids(ok)
