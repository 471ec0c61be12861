"""The runner (irdiff/run): argument building on CPU torch, correctness measure, statistics and verdicts on
synthetic samples with known answers, the --shapes grammar, the peak table, interpreter runs of real kernels
(matmul with tl.swizzle2d/tl.assume; a planted bug), the CLI, and GPU runs (marked ``gpu``)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from irdiff.bundle import load_bundle
from irdiff.cli import cli
from irdiff.run import NO_GPU_NOTICE
from irdiff.run.command import format_timing
from irdiff.run.correctness import TOLERANCES, check_outputs, rel_frobenius
from irdiff.run.inputs import build_inputs, poison_outputs
from irdiff.run.peaks import lookup_peak, pct_of_peak
from irdiff.run.stats import FASTER, NO_DIFFERENCE, SLOWER, bootstrap_ratio, summarize, verdict
from irdiff.run.sweep import parse_shapes, shape_label
from irdiff.run.timing import schedule
from irdiff.suite import Tensor

torch = pytest.importorskip("torch")

HERE = Path(__file__).resolve().parent
PLANTED = str(HERE / "suites" / "planted_bug.py")
GOLDEN = HERE / "golden"
SMALL_CFG = "BLOCK_SIZE_M=32,BLOCK_SIZE_N=32,BLOCK_SIZE_K=32,GROUP_SIZE=2"
MATMUL = {"M": 1024, "N": 1024, "K": 1024}


def _gpu() -> bool:
    return bool(torch.cuda.is_available())


# ---------------------------------------------------------------- inputs


def test_inputs_layout_alignment_and_poison() -> None:
    values = {
        "a": Tensor((6, 5), "fp16"),
        "b": Tensor((5, 7), "fp16", strides=(1, 8)),  # column-major with a gap between columns
        "c": Tensor((6, 7), "fp32", output=True, align=8),
        "n": 6,
        "eps": 1e-5,
    }
    inp = build_inputs(values, device="cpu", seed=3)
    a, b, c = inp.args["a"], inp.args["b"], inp.args["c"]
    assert inp.args["n"] == 6 and inp.args["eps"] == 1e-5
    assert a.stride() == (5, 1) and b.stride() == (1, 8) and c.stride() == (7, 1)
    assert a.dtype == torch.float16 and c.dtype == torch.float32
    assert a.data_ptr() % 16 == 0 and b.data_ptr() % 16 == 0
    assert c.data_ptr() % 16 == 8  # align=8 models a misaligned view: 8-byte but not 16-byte aligned
    assert inp.outputs == ["c"]
    assert bool(torch.isnan(c).all())
    assert bool(a.ne(0).any()) and bool(b.ne(0).any())
    c.zero_()
    poison_outputs(inp)
    assert bool(torch.isnan(c).all())


def test_inputs_seeded_and_layout_independent() -> None:
    row = build_inputs({"b": Tensor((5, 7), "bf16")}, device="cpu", seed=1).args["b"]
    col = build_inputs({"b": Tensor((5, 7), "bf16", strides=(1, 5))}, device="cpu", seed=1).args["b"]
    again = build_inputs({"b": Tensor((5, 7), "bf16")}, device="cpu", seed=1).args["b"]
    other_seed = build_inputs({"b": Tensor((5, 7), "bf16")}, device="cpu", seed=2).args["b"]
    other_name = build_inputs({"x": Tensor((5, 7), "bf16")}, device="cpu", seed=1).args["x"]
    assert torch.equal(row, col) and torch.equal(row, again)
    assert not torch.equal(row, other_seed) and not torch.equal(row, other_name)


@pytest.mark.parametrize("dtype", ["i8", "i32", "u8", "i1", "fp32", "bf16"])
def test_inputs_never_all_zero(dtype: str) -> None:
    for n in (1, 2, 3):
        t = build_inputs({"x": Tensor((n,), dtype)}, device="cpu", seed=0).args["x"]
        if dtype != "i1":
            assert bool(t.ne(0).any()), (dtype, n, t)
    out = build_inputs({"y": Tensor((4,), dtype, output=True)}, device="cpu").args["y"]
    if dtype in ("fp32", "bf16"):
        assert bool(torch.isnan(out.float()).all())


def test_inputs_bad_alignment_is_one_line_error() -> None:
    with pytest.raises(ValueError, match="alignment 1 bytes is not a multiple"):
        build_inputs({"x": Tensor((4,), "fp16", align=1)}, device="cpu")


# ---------------------------------------------------------------- correctness


def test_rel_frobenius_known_answers() -> None:
    g = torch.Generator().manual_seed(0)
    ref = torch.randn(64, 64, generator=g)
    err, bad = rel_frobenius(ref * (1 + 1e-3), ref)
    assert bad == 0 and err == pytest.approx(1e-3, rel=1e-4)
    # Half of K accumulated: C' = A[:, :K/2] @ B[:K/2]; ||C - C'|| / ||C|| ≈ sqrt(1/2) on random data.
    a, b = torch.randn(256, 512, generator=g), torch.randn(512, 256, generator=g)
    err, _ = rel_frobenius(a[:, :256] @ b[:256], a @ b)
    assert err == pytest.approx(math.sqrt(0.5), abs=0.02)
    holes = ref.clone()
    holes[3, :5] = float("nan")
    err, bad = rel_frobenius(holes, ref)
    assert err is None and bad == 5
    err, bad = rel_frobenius(torch.zeros(3), torch.zeros(3))
    assert err == 0.0 and bad == 0


def test_check_outputs_tolerance_per_dtype() -> None:
    ref = torch.randn(128, 128, generator=torch.Generator().manual_seed(1))
    fp16 = ref.half()  # rounding alone: ~3e-4, inside fp16's tolerance
    (c,) = check_outputs({"c": fp16}, {"c": ref}, {"c": "fp16"})
    assert c.ok and c.rel_err is not None and c.rel_err < TOLERANCES["fp16"] / 5
    off = ref * (1 + 1e-2)  # a 1 % error: wrong for an fp16 output, within bf16's rounding allowance
    (c,) = check_outputs({"c": off}, {"c": ref}, {"c": "fp16"})
    assert not c.ok and c.tolerance == TOLERANCES["fp16"]
    (c,) = check_outputs({"c": off}, {"c": ref}, {"c": "bf16"})
    assert c.ok
    (c,) = check_outputs({"c": ref.bfloat16()}, {"c": ref}, {"c": "bf16"})
    assert c.ok and c.rel_err is not None and c.rel_err < TOLERANCES["bf16"] / 5
    (c,) = check_outputs({"c": torch.tensor([1, 2, 3])}, {"c": torch.tensor([1, 2, 4])}, {"c": "i32"})
    assert not c.ok and "relative Frobenius error" in c.message("v")


# ---------------------------------------------------------------- statistics


def test_summary_known_values() -> None:
    s = summarize([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s.median_ms, s.q1_ms, s.q3_ms, s.iqr_ms, s.n, s.min_ms, s.max_ms) == (3.0, 2.0, 4.0, 2.0, 5, 1.0, 5.0)
    with pytest.raises(ValueError):
        summarize([])


def _noisy(center: float, n: int, seed: int, spread: float = 0.02) -> list[float]:
    r = random.Random(seed)
    return [center * math.exp(r.gauss(0.0, spread)) + (r.random() < 0.05) * center * 0.5 for _ in range(n)]


def test_verdict_known_answers() -> None:
    fast, slow = _noisy(1.0, 200, 1), _noisy(2.0, 200, 2)
    v = verdict("a", fast, "b", slow)
    assert v.verdict == FASTER and v.ratio == pytest.approx(0.5, rel=0.02)
    assert v.ci[0] < v.ratio < v.ci[1] and v.ci[1] < 0.99
    assert "a is 2.00x faster than b" in v.sentence()
    assert verdict("b", slow, "a", fast).verdict == SLOWER
    same = verdict("a", _noisy(1.0, 200, 3), "b", _noisy(1.0, 200, 4))
    assert same.verdict == NO_DIFFERENCE and same.ci[0] <= 1.0 <= same.ci[1]
    # A real but tiny (0.5 %) difference: significant by the interval, below the 1 % minimum effect.
    tiny = verdict("a", _noisy(1.0, 2000, 5, 0.001), "b", _noisy(1.005, 2000, 6, 0.001))
    assert tiny.ci[1] < 1.0 and tiny.verdict == NO_DIFFERENCE
    assert (
        verdict("a", _noisy(1.0, 2000, 5, 0.001), "b", _noisy(1.005, 2000, 6, 0.001), min_effect=0.0).verdict == FASTER
    )


def test_verdict_minimum_effect_on_the_slower_side() -> None:
    """The 1 % minimum effect holds on both sides: a real 0.5 % slowdown (significant by the interval) is no
    significant difference, and becomes "slower" only with ``min_effect=0``; a 3 % slowdown is "slower"."""
    slow, fast = _noisy(1.005, 2000, 6, 0.001), _noisy(1.0, 2000, 5, 0.001)
    tiny = verdict("b", slow, "a", fast)
    assert tiny.ci[0] > 1.0 and tiny.verdict == NO_DIFFERENCE
    assert verdict("b", slow, "a", fast, min_effect=0.0).verdict == SLOWER
    assert verdict("b", _noisy(1.03, 2000, 7, 0.001), "a", fast).verdict == SLOWER


def test_bootstrap_false_positive_rate() -> None:
    """Same distribution on both sides: the 95 % interval should exclude 1 in about 5 % of trials."""
    flagged = 0
    trials = 120
    for t in range(trials):
        _, lo, hi = bootstrap_ratio(_noisy(1.0, 60, 2 * t), _noisy(1.0, 60, 2 * t + 1), n_boot=600, seed=t)
        flagged += not (lo <= 1.0 <= hi)
    assert flagged / trials <= 0.12


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0.01, 100.0), min_size=3, max_size=40),
    st.lists(st.floats(0.01, 100.0), min_size=3, max_size=40),
    st.floats(0.1, 1000.0),
)
def test_verdict_symmetry_and_scale_invariance(a: list[float], b: list[float], k: float) -> None:
    ab = verdict("a", a, "b", b, n_boot=200)
    ba = verdict("b", b, "a", a, n_boot=200)
    assert ab.ratio == pytest.approx(1.0 / ba.ratio, rel=1e-9)
    mirror = {FASTER: SLOWER, SLOWER: FASTER, NO_DIFFERENCE: NO_DIFFERENCE}
    assert mirror[ab.verdict] == ba.verdict
    assert ba.ci == pytest.approx((1.0 / ab.ci[1], 1.0 / ab.ci[0]), rel=1e-9)
    scaled = verdict("a", [x * k for x in a], "b", [x * k for x in b], n_boot=200)
    assert scaled.ratio == pytest.approx(ab.ratio, rel=1e-9)
    assert scaled.ci == pytest.approx(ab.ci, rel=1e-9) and scaled.verdict == ab.verdict


def test_schedule_interleaves_and_rotates() -> None:
    rounds = schedule(["A", "B", "R"], 25, 10)
    assert [len(r) for r in rounds] == [30, 30, 15]
    assert rounds[0][:6] == ["A", "B", "R", "A", "B", "R"]
    assert rounds[1][:3] == ["B", "R", "A"] and rounds[2][:3] == ["R", "A", "B"]
    flat = [n for r in rounds for n in r]
    assert all(flat.count(n) == 25 for n in "ABR")
    with pytest.raises(ValueError):
        schedule(["A"], 0, 10)


# ---------------------------------------------------------------- shapes, peaks, table


def test_parse_shapes_grammar() -> None:
    assert [s["M"] for s in parse_shapes(["256:4096:256"], MATMUL)] == list(range(256, 4097, 256))
    assert parse_shapes(["512,1024"], MATMUL) == [{"M": 512, "N": 512, "K": 512}, {"M": 1024, "N": 1024, "K": 1024}]
    assert parse_shapes(["128:512"], MATMUL)[-1] == {"M": 512, "N": 512, "K": 512}  # step defaults to start
    ks = parse_shapes(["M=N=8192", "K=512,2048,8192"], MATMUL)
    assert ks == [{"M": 8192, "N": 8192, "K": k} for k in (512, 2048, 8192)]
    assert parse_shapes(["M=N=1024,2048;K=512:2048:512"], MATMUL)[:2] == [
        {"M": 1024, "N": 1024, "K": 512},
        {"M": 1024, "N": 1024, "K": 1024},
    ]
    assert len(parse_shapes(["M=N=1024,2048;K=512:2048:512"], MATMUL)) == 8
    assert parse_shapes([], MATMUL) == [MATMUL]
    for bad, msg in [
        (["X=3"], "no dimension 'X'"),
        (["0:3"], "0 < START"),
        (["4:2"], "0 < START"),
        (["1,,2"], "empty value"),
        (["a"], "not a positive integer"),
        (["1:2:3:4"], "START:STOP"),
        (["1:100000:1", "1:100000:1"], "more than"),
    ]:
        with pytest.raises(ValueError, match=msg):
            parse_shapes(bad, MATMUL)
    with pytest.raises(ValueError, match="no shape dimensions"):
        parse_shapes(["64"], {})


def test_shape_label() -> None:
    assert shape_label({"M": 4096, "N": 4096, "K": 4096}) == "M=N=K=4096"
    assert shape_label({"M": 8192, "N": 8192, "K": 512}) == "M=N=8192 K=512"


@pytest.mark.parametrize(
    "name, model",
    [
        ("NVIDIA H200", "H200 SXM"),
        ("NVIDIA H200 NVL", "H200 NVL"),
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("NVIDIA H100 PCIe", "H100 PCIe"),
        ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM"),
        ("NVIDIA A100 80GB PCIe", "A100 80GB PCIe"),
        ("NVIDIA A100-SXM4-40GB", "A100 40GB"),
        ("NVIDIA A40", "A40"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA L40", "L40"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA A10", "A10"),
    ],
)
def test_peak_lookup(name: str, model: str) -> None:
    peak = lookup_peak(name)
    assert peak is not None and peak.model == model


def test_pct_of_peak() -> None:
    h200 = lookup_peak("NVIDIA H200")
    assert lookup_peak("NVIDIA GeForce GT 710") is None
    assert pct_of_peak(494.75, 100.0, h200) == (pytest.approx(50.0), "compute")
    assert pct_of_peak(1.0, 2400.0, h200) == (pytest.approx(50.0), "memory")
    assert pct_of_peak(None, None, h200) == (None, "")
    assert pct_of_peak(1.0, 1.0, None) == (None, "")


def _synthetic_record() -> dict:
    """A timing record as run_timing writes it, with round numbers (for the rendering golden file)."""

    def entry(ms: float, correct: bool = True, err: float = 2.1e-4) -> dict:
        tflops = 2 * 4096**3 / (ms * 1e-3) / 1e12
        return {"median_ms": ms, "iqr_ms": ms / 100, "n": 60, "tflops": tflops, "gbps": 100.0 * 0.27 / ms,
                "pct_peak": tflops / 9.895, "correct": correct, "rel_err": err,
                "median_ci_ms": [ms * 0.996, ms * 1.006]}  # fmt: skip

    shape = {"M": 4096, "N": 4096, "K": 4096}
    v = verdict("annotated", [5.5, 5.6, 5.4], "unannotated", [0.27, 0.28, 0.27])
    v.shape = shape
    return {
        "method": "CUDA events around each launch",
        "device": {
            "name": "NVIDIA H200",
            "capability": "sm90",
            "sm_count": 132,
            "peak": lookup_peak("NVIDIA H200").to_json(),
        },  # type: ignore[union-attr]  # fmt: skip
        "variants": ["annotated", "unannotated"],
        "reference_name": "torch_matmul",
        "versions": {"triton": "3.6.0", "torch": "2.11.0", "cuda": "13.0"},
        "rows": [
            {
                "shape": shape,
                "variants": {"annotated": entry(5.5), "unannotated": entry(0.275, False, 0.707)},
                "reference": {"name": "torch_matmul", **entry(0.2)},
            }
        ],
        "verdicts": [v.to_json()],
        "findings": [{"kind": "correctness", "variant": "unannotated", "message": "unannotated: c_ptr differs"}],
    }


def test_format_timing_golden(update_goldens: bool) -> None:
    text = format_timing(_synthetic_record())
    golden = GOLDEN / "run_timing.txt"
    if update_goldens:
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text + "\n")
    assert text + "\n" == golden.read_text(), "rendering changed: rerun pytest with --update-goldens if intended"
    assert "499.8 ✗" in text and "20.37x slower" in text and "25.0 ✗" not in text
    assert text.count("-0.4/+0.6%") == 3  # each kernel's interval of the median from its block medians


# ---------------------------------------------------------------- interpreter (real kernels, CPU)


def test_interpret_matmul_both_variants_correct() -> None:
    """Our matmul kernels (tl.swizzle2d, tl.assume, tl.range, annotations) run under Triton's interpreter."""
    from irdiff.compile import parse_config_option
    from irdiff.run.interpret import run_interpreted

    shapes = [{"M": 64, "N": 64, "K": 64}, {"M": 96, "N": 64, "K": 80}]
    rec = run_interpreted("matmul", ["annotated", "unannotated"], shapes, parse_config_option(SMALL_CFG))
    assert rec["findings"] == []
    for row in rec["rows"]:
        for name in ("annotated", "unannotated"):
            v = row["variants"][name]
            assert v["correct"] is True and v["state"] == "correct" and v["rel_err"] < TOLERANCES["fp16"]
            assert v["config"]["BLOCK_SIZE_M"] == 32 and v["reference_dtype"] == "float64"
        assert row["agreement"] == [
            {"a": "annotated", "b": "unannotated", "ok": True, "rel_err": 0.0, "comparable": True, "notes": []}
        ]


def test_interpret_catches_planted_bug() -> None:
    from irdiff.compile import parse_config_option
    from irdiff.run.interpret import run_interpreted

    rec = run_interpreted(
        PLANTED, ["half_k", "correct"], [{"M": 64, "N": 64, "K": 128}], parse_config_option(SMALL_CFG)
    )
    row = rec["rows"][0]["variants"]
    assert row["correct"]["correct"] is True
    assert row["half_k"]["correct"] is False
    assert row["half_k"]["rel_err"] == pytest.approx(math.sqrt(0.5), abs=0.06)
    kinds = {(f["kind"], f["variant"]) for f in rec["findings"]}
    assert ("correctness", "half_k") in kinds and ("agreement", "half_k") in kinds


def test_cli_run_interpret_planted_bug_saves_bundle(tmp_path: Path) -> None:
    out = tmp_path / "b"
    res = CliRunner().invoke(cli, ["run", PLANTED, "--interpret", "--shapes", "64", "--save", str(out)])
    assert res.exit_code == 1, res.output
    assert "WRONG" in res.output and "relative Frobenius error" in res.output
    b = load_bundle(out)
    assert b.runs["interpret"]["rows"][0]["variants"]["half_k"]["correct"] is False
    json.dumps(b.runs)  # the record is plain JSON


def test_cli_bad_shapes_is_one_line_error() -> None:
    res = CliRunner().invoke(cli, ["run", "matmul", "--interpret", "--shapes", "Q=4"])
    assert res.exit_code == 2 and res.output.strip().splitlines() == [
        "error: --shapes 'Q=4': the shape has no dimension 'Q' (dimensions: M, N, K)"
    ]


@pytest.mark.skipif(_gpu(), reason="checks the no-GPU path")
def test_cli_without_gpu_prints_notice(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["run", "matmul"])
    assert res.exit_code == 2
    assert (
        res.output.strip()
        == f"error: nothing was timed: {NO_GPU_NOTICE}; check correctness on the CPU with --interpret"
    )
    res = CliRunner().invoke(cli, ["matmul", "--target", "sm90", "--save", str(tmp_path / "b")])
    assert res.exit_code == 0, res.output
    assert NO_GPU_NOTICE in res.output
    assert "timing" not in load_bundle(tmp_path / "b").runs


def test_cli_compare_interpret_stores_record(tmp_path: Path) -> None:
    args = ["matmul", "--target", "sm90", "--interpret", "--shapes", "64", "--save", str(tmp_path / "b")]
    res = CliRunner().invoke(cli, [*args, "--config", SMALL_CFG])
    assert res.exit_code == 0, res.output
    rec = load_bundle(tmp_path / "b").runs["interpret"]
    assert rec["variants"] == ["annotated", "unannotated"] and rec["findings"] == []


# ---------------------------------------------------------------- GPU


@pytest.mark.gpu
def test_gpu_timing_matmul_record() -> None:
    from irdiff.run.runner import RunRequest, run_timing
    from irdiff.run.timing import TimingOptions

    req = RunRequest("matmul", ["annotated", "unannotated"], [{"M": 512, "N": 512, "K": 512}],
                     timing=TimingOptions(block_ms=20, blocks=3))  # fmt: skip
    rec = run_timing(req)
    row = rec["rows"][0]
    for name in ("annotated", "unannotated"):
        v = row["variants"][name]
        assert v["correct"] is True and v["n"] >= 30 and v["median_ms"] > 0 and v["tflops"] > 0
        assert v["iqr_ms"] >= 0 and v["resources"].get("registers", 0) > 0
    assert row["reference"]["name"] == "torch_matmul" and row["reference"]["correct"] is True
    assert rec["verdicts"][0]["a"] == "annotated" and rec["verdicts"][0]["verdict"] in (FASTER, SLOWER, NO_DIFFERENCE)
    assert "L2 flushed" in rec["method"] and rec["findings"] == []


@pytest.mark.gpu
def test_gpu_graph_mode_and_planted_bug() -> None:
    from irdiff.run.runner import RunRequest, run_timing
    from irdiff.run.timing import TimingOptions

    req = RunRequest(PLANTED, ["half_k", "correct"], [{"M": 1024, "N": 1024, "K": 1024}],
                     timing=TimingOptions(graph=True, block_ms=20, blocks=3))  # fmt: skip
    rec = run_timing(req)
    v = rec["rows"][0]["variants"]
    assert v["half_k"]["correct"] is False and v["half_k"]["rel_err"] == pytest.approx(math.sqrt(0.5), abs=0.03)
    assert v["correct"]["correct"] is True and v["half_k"]["median_ms"] > 0
    assert "CUDA graph" in rec["method"]
    assert any(f["kind"] == "correctness" and f["variant"] == "half_k" for f in rec["findings"])


@pytest.mark.gpu
def test_gpu_autotune_two_configs() -> None:
    import triton

    from irdiff.run.autotune import tune_variant
    from irdiff.run.inputs import build_inputs as build
    from irdiff.suite import load_suite

    suite = load_suite("matmul")
    shape = {"M": 1024, "N": 1024, "K": 1024}
    cfgs = [triton.Config({"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE": 8}, num_warps=2,
                          num_stages=2),
            triton.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE": 8},
                          num_warps=4, num_stages=4)]  # fmt: skip
    inputs = build(suite.args(shape), device="cuda")
    w = tune_variant(suite, "unannotated", inputs, shape, "sm90", configs=cfgs)
    assert w.tried == 2 and w.config["BLOCK_SIZE_M"] in (32, 128) and w.bench_ms and w.bench_ms > 0
    assert len(w.timings_ms) == 2


@pytest.mark.gpu
def test_gpu_run_timing_autotune_records_winners() -> None:
    from irdiff.run.runner import RunRequest, run_timing
    from irdiff.run.timing import TimingOptions

    suite = str(HERE / "suites" / "matmul_two_configs.py")
    req = RunRequest(suite, ["annotated", "unannotated"], [{"M": 2048, "N": 2048, "K": 2048}], autotune=True,
                     timing=TimingOptions(block_ms=20, blocks=3))  # fmt: skip
    rec = run_timing(req)
    winners = rec["autotune"]["rows"][0]["winners"]
    assert set(winners) == {"annotated", "unannotated"}
    row = rec["rows"][0]
    for name in ("annotated", "unannotated"):
        assert winners[name]["config"]["BLOCK_SIZE_M"] in (64, 128) and len(winners[name]["timings_ms"]) == 2
        assert row["tuned"][name]["config"] == winners[name]["config"] and row["tuned"][name]["median_ms"] > 0
    assert any(v["a"] == "annotated@tuned" for v in rec["verdicts"])
