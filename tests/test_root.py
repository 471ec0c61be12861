"""Root causes on real compiles (sm80 and sm90): the first finding names what the user changed, every effect links
back to it, the rest is listed last as unexplained. Kernels: ``tests/suites/root_cases.py`` (stage 0 identical in
every pair)."""

from __future__ import annotations

from pathlib import Path

import pytest
from diag_helpers import diagnose, get, ids, texts

from irdiff.bundle import VariantResult
from irdiff.diagnose import Diagnosis, causal_paths, explain
from irdiff.diagnose.model import Finding
from irdiff.diagnose.roots import UNEXPLAINED_NOTE, apply_roots
from irdiff.diagnose.source import SourceDiff
from irdiff.pipeline import load_pair

CASES = str(Path(__file__).parent / "suites" / "root_cases.py")
TARGETS = ["sm80", "sm90"]


def line_of(v: VariantResult, needle: str) -> int:
    """1-based line of the first source line containing ``needle`` inside the variant's kernel function."""
    first, last = v.metadata["kernel_lines"]
    lines = v.text("python").splitlines()
    return next(i for i in range(first, last + 1) if needle in lines[i - 1])


def effects_of(d: Diagnosis, root: str) -> set[str]:
    out = set()
    for f in d.findings:
        todo = list(f.causes)
        seen: set[str] = set()
        while todo:
            c = todo.pop()
            if c == root:
                out.add(f.id)
            if c not in seen:
                seen.add(c)
                g = d.finding(c)
                todo.extend(g.causes if g else [])
    return out


def names_change(f: Finding, variant: str, line: int) -> bool:
    """The root names the source change: python evidence on that line (its own, or ``source change:`` evidence a
    mechanism rule carries after claiming the change)."""
    return any(e.stage == "python" and e.variant == variant and e.line == line for e in f.evidence)


def chain(d: Diagnosis, *order: str) -> None:
    """The ids appear in this order and each is caused (transitively) by the previous one."""
    pos = [ids(d).index(i) for i in order]
    assert pos == sorted(pos), (order, ids(d))
    for cause, effect in zip(order, order[1:]):
        assert effect in effects_of(d, cause), (cause, effect, get(d, effect).causes)


@pytest.mark.parametrize("target", TARGETS)
def test_eviction_policy_on_the_last_load(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(CASES + "::streaming", ["evict", "keep"], target)
    for a, other in (("evict", "keep"), ("keep", "evict")):
        d = diagnose(b, a, other)
        first = d.findings[0]
        assert first.id in ("source.kwarg-changed", "hint.cache"), ids(d)
        le = line_of(b.variants["evict"], 'eviction_policy="evict_first"')
        lk = line_of(b.variants["keep"], "y = tl.load")
        assert (names_change(first, "evict", le) or names_change(first, "keep", lk)) and "evict_first" in first.title
        # the PTX effect, named from the compiled PTX along the chain
        chain_text = " ".join(f.explanation + " ".join(e.text for e in f.evidence) for f in d.findings)
        assert "ld.global.L1::evict_first" in chain_text
        attr = get(d, "ttir.attr-changed")
        assert attr.causes == [first.id] and "eviction_policy = evict_first" in attr.title
        assert "tt.load" in attr.title and "evict_first" in texts(attr, "evict", "ttir")
        assert d.unexplained == []


@pytest.mark.parametrize("target", TARGETS)
def test_hints_on_matmul_offsets(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(CASES + "::hinted", ["bare", "hint"], target)
    assert [s.summary() for s in b.variants["bare"].specialization] == [
        s.summary() for s in b.variants["hint"].specialization
    ]  # stage 0 identical
    for a, other in (("bare", "hint"), ("hint", "bare")):
        d = diagnose(b, a, other)
        first = d.findings[0]
        root = first.id
        assert root in ("source.call-added", "source.call-removed", "hint.axis-info"), ids(d)
        assert "tl.max_contiguous" in first.title
        line = line_of(b.variants["hint"], "tl.max_contiguous")
        assert names_change(first, "hint", line) or names_change(first, "bare", line_of(b.variants["bare"], "offs_m ="))
        chain(d, root, "coalesce.contiguity", "coalesce.vector-width", "pipeline.load-not-pipelined")
        assert "not pipelined in `bare`" in get(d, "pipeline.load-not-pipelined").title
        assert get(d, "ttir.attr-changed").causes == [root]
        assert "tt.contiguity = dense<128>" in get(d, "ttir.attr-changed").title
        assert d.unexplained == []
        assert d.unexplained == []


@pytest.mark.parametrize("target", TARGETS)
def test_division_rounding(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(CASES + "::division", ["approx", "ieee"], target)
    for a, other in (("approx", "ieee"), ("ieee", "approx")):
        d = diagnose(b, a, other)
        first = d.findings[0]
        assert first.id in ("source.op-changed", "precision.division"), ids(d)
        assert names_change(first, "approx", line_of(b.variants["approx"], "x / y")) or names_change(
            first, "ieee", line_of(b.variants["ieee"], "tl.div_rn")
        )
        text = first.title + first.explanation
        assert "div.full.f32" in text and "div.rn.f32" in text
        assert d.unexplained == []
        assert all(f.id in effects_of(d, first.id) for f in d.findings[1:])


@pytest.mark.parametrize("target", TARGETS)
def test_atomic_memory_order(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(CASES + "::splitk", ["relaxed", "ordered"], target)
    for a, other in (("relaxed", "ordered"), ("ordered", "relaxed")):
        d = diagnose(b, a, other)
        first = d.findings[0]
        # the root names the change: the source diff's finding, or the mechanism rule that claimed it on its line
        assert first.id in ("source.kwarg-changed", "atomic.ordering"), ids(d)
        assert names_change(first, "relaxed", line_of(b.variants["relaxed"], 'sem="relaxed"')) or names_change(
            first, "ordered", line_of(b.variants["ordered"], "tl.atomic_add")
        )
        text = first.title + first.explanation
        assert "relaxed" in text and "acq_rel" in text and "fence" in text.lower()
        attr = get(d, "ttir.attr-changed")
        assert attr.causes == [first.id] and "tt.atomic_rmw" in attr.title
        assert "`relaxed`" in attr.title and "`acq_rel`" in attr.title


@pytest.mark.parametrize("target", TARGETS)
def test_statement_hoisted_out_of_the_loop(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(CASES + "::moved", ["inside", "hoisted"], target)
    d = diagnose(b, "inside", "hoisted")
    first = d.findings[0]
    # the move itself, or the rule that names what it costs (a load of one address re-issued on every iteration),
    # carrying the move in its title
    assert first.id in ("source.moved", "loop.invariant-load") and "moved out of the loop" in first.title
    assert f"line {line_of(b.variants['inside'], 'scale = ')} of `inside`" in first.title


def test_num_warps_only_names_option_and_first_pass(compile_suite) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(CASES + "::warps", ["w8", "w4"], "sm90", passes=True)
    d = diagnose(b, "w8", "w4")
    first = d.findings[0]
    assert first.id in ("options.changed", "config.changed") and "num_warps" in first.title
    assert "first diverging pass: `ConvertTritonToTritonGPU`" in first.title
    p = get(d, "pass.first-diverging")
    assert p.causes == [first.id]
    assert "warpsPerCTA = [8]" in texts(p, "w8", "passes") and "warpsPerCTA = [4]" in texts(p, "w4", "passes")
    assert d.unexplained == []
    # --explain on the root lists every effect
    text = explain(d, first.id)
    line = next(ln for ln in text.splitlines() if ln.startswith(f"effects linked to {first.id}"))
    assert set(line.split(": ", 1)[1].split(", ")) == {f.id for f in d.findings[1:] if f.id != "time.measured"}


def test_target_only_names_target_and_first_pass(compile_suite) -> None:  # type: ignore[no-untyped-def]
    b80 = compile_suite(CASES + "::warps", ["w4"], "sm80", passes=True)
    b90 = compile_suite(CASES + "::warps", ["w4"], "sm90", passes=True)
    bundle, a, b = load_pair(Path(b80.directory) / "w4", Path(b90.directory) / "w4")
    d = diagnose(bundle, a, b)
    first = d.findings[0]
    assert first.id.startswith("settings."), ids(d)
    assert "sm80" in first.title and "sm90" in first.title
    assert "first diverging pass: `" in first.title
    assert get(d, "pass.first-diverging").causes == [first.id]
    paths, _ = causal_paths(d, first.id)
    assert {fid for p in paths for fid in p} >= {f.id for f in d.findings if f.id not in d.unexplained}


def _variant(tmp: Path, name: str) -> VariantResult:
    (tmp / name).mkdir(parents=True, exist_ok=True)
    return VariantResult(name=name, kernel="k", directory=str(tmp / name))


def test_unexplained_listed_last_not_linked(tmp_path: Path) -> None:
    """Two roots and a whole-kernel finding neither explains: it is unexplained, not linked to a neighbour."""
    va, vb = _variant(tmp_path, "a"), _variant(tmp_path, "b")
    fs = [
        Finding("sass.instructions", "minor", "SASS count", "x.", stage="sass"),
        Finding("options.changed", "major", "Options differ", "y.", stage="options"),
        Finding("spec.constexpr-changed", "major", "Constexpr differs", "z.", stage="spec"),
        Finding("coalesce.contiguity", "major", "contiguity", "w.", causes=["spec.constexpr-changed"]),
    ]
    out, unexplained = apply_roots(fs, "a", "b", va, vb, sd=SourceDiff())
    assert unexplained == ["sass.instructions"]
    assert [f.id for f in out][-1] == "sass.instructions" and out[-1].causes == []
    assert out[-1].explanation.endswith(UNEXPLAINED_NOTE)
    assert [f.id for f in out][:2] == ["spec.constexpr-changed", "options.changed"]
    # with a single root, a whole-kernel finding is that root's effect
    fs2 = [Finding("sass.instructions", "minor", "SASS count", "x.", stage="sass"),
           Finding("options.changed", "major", "Options differ", "y.", stage="options")]  # fmt: skip
    out2, un2 = apply_roots(fs2, "a", "b", va, vb, sd=SourceDiff())
    assert un2 == [] and out2[0].id == "options.changed" and out2[1].causes == ["options.changed"]


def test_compare_recompiles_with_passes_when_ttir_is_identical(tmp_path: Path) -> None:
    """`irdiff compare` on a num_warps-only pair: TTIR equal, so it compiles again with --passes and the JSON names
    the option and the first diverging pass."""
    import json

    from click.testing import CliRunner

    from irdiff.cli import cli

    r = CliRunner().invoke(
        cli,
        ["compare", CASES + "::warps", "--target", "sm90", "--no-run", "--json", "--save", str(tmp_path / "b")],
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["findings"][0]["id"] in ("options.changed", "config.changed")
    assert "first diverging pass: `ConvertTritonToTritonGPU`" in out["findings"][0]["title"]
    assert any(f["id"] == "pass.first-diverging" for f in out["findings"])
    assert "per-pass snapshots" in r.stderr
