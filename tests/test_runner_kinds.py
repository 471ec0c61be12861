"""The runner on kernels of every kind (issue 20), on the CPU: outputs the kernel reads found in real TTIR, NaN
refused for them, accumulating outputs started as the suite says, a faulting variant isolated in its own process,
padded outputs compared on their common region or reported not comparable, the four correctness states, the
accuracy-gap finding, and the exit statuses. Kernels: ``tests/suites/runner_kinds.py``. GPU runs are marked ``gpu``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from irdiff.cli import cli
from irdiff.compile import CompileRequest, compile_bundle
from irdiff.run.access import outputs_read
from irdiff.run.correctness import AGREES, CORRECT, NOT_CHECKED
from irdiff.run.inputs import build_inputs
from irdiff.suite import SuiteError, Tensor, load_suite

torch = pytest.importorskip("torch")

KINDS = str(Path(__file__).resolve().parent / "suites" / "runner_kinds.py")


def _ref(name: str) -> str:
    return f"{KINDS}::{name}"


@pytest.fixture(scope="module")
def ttirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """TTIR of the read/write kinds, compiled for sm90 through irdiff's compile driver (cached)."""
    out: dict[str, dict[str, str]] = {}
    for suite, variants in {
        "splitk-fp32": ["splitk", "direct", "rmw"],
        "histogram": ["atomic", "private"],
        "tma": ["descriptor", "pointers"],
    }.items():
        req = CompileRequest(suite=_ref(suite), variants=variants, target="sm90")
        b = compile_bundle(req, tmp_path_factory.mktemp(suite), command=[])
        out[suite] = {n: v.text("ttir") for n, v in b.variants.items()}
        assert all(out[suite].values()), {n: v.error for n, v in b.variants.items()}
    return out


# ---------------------------------------------------------------- outputs the kernel reads (TTIR data-flow)


def test_reads_found_through_atomics_loads_and_loops(ttirs: dict[str, dict[str, str]]) -> None:
    sk = ttirs["splitk-fp32"]
    assert outputs_read(sk["splitk"], ["c_ptr"]) == {"c_ptr": ["tt.atomic_rmw fadd"]}
    assert outputs_read(sk["rmw"], ["c_ptr"]) == {"c_ptr": ["tt.load"]}  # load + store of C inside the K loop
    assert outputs_read(sk["direct"], ["c_ptr"]) == {}  # stores only
    # inputs are read, of course; only the names asked about are reported
    assert set(outputs_read(sk["direct"], ["a_ptr", "b_ptr", "c_ptr"])) == {"a_ptr", "b_ptr"}
    h = ttirs["histogram"]
    assert outputs_read(h["atomic"], ["h_ptr"]) == {"h_ptr": ["tt.atomic_rmw add"]}
    assert outputs_read(h["private"], ["h_ptr"]) == {"h_ptr": ["tt.atomic_rmw add"]}
    t = ttirs["tma"]
    assert outputs_read(t["descriptor"], ["c_ptr"]) == {}  # descriptor store only
    assert outputs_read(t["descriptor"], ["a_ptr"]) == {"a_ptr": ["tt.descriptor_load"]}
    assert outputs_read(t["pointers"], ["not_a_param"]) == {}


# ---------------------------------------------------------------- starting values


def test_output_starts_as_the_suite_says() -> None:
    values = {
        "z": Tensor((4,), "fp32", output=True, init="zeros"),
        "o": Tensor((2, 2), "bf16", output=True, init="ones"),
        "v": Tensor((3,), "i32", output=True, init=7),
        "f": Tensor((3,), "fp32", output=True, init=lambda t: t.copy_(torch.arange(3.0))),
        "n": Tensor((3,), "fp32", output=True),
        "i": Tensor((3,), "i32", output=True),
    }
    inp = build_inputs(values, device="cpu")
    a = inp.args
    assert a["z"].eq(0).all() and a["o"].eq(1).all() and a["v"].eq(7).all()
    assert a["f"].tolist() == [0.0, 1.0, 2.0] and bool(torch.isnan(a["n"]).all())
    # integers are poisoned with a value that adding a count to cannot overflow
    assert int(a["i"][0]) == torch.iinfo(torch.int32).max // 2
    assert int(a["i"][0]) + 10**9 <= torch.iinfo(torch.int32).max
    ref = inp.reference_args()
    assert ref["z"] is inp.initial["z"] and ref["n"].eq(0).all()  # NaN starts reach the reference as zeros
    with pytest.raises(SuiteError, match="unknown init 'nan' for an input"):
        Tensor((3,), "fp32", init="nan")
    with pytest.raises(SuiteError, match="unknown init 'random'"):
        Tensor((3,), "fp32", output=True, init="random")


# ---------------------------------------------------------------- interpreter runs (one process per run, isolated)


@pytest.fixture(scope="module")
def interpreted(ttirs: dict[str, dict[str, str]]) -> dict[str, dict[str, Any]]:
    from irdiff.run.interpret import run_interpreted

    out = {}
    for name, variants, tt in [
        ("splitk-fp32", ["splitk", "direct", "rmw"], ttirs["splitk-fp32"]),
        ("splitk-nan", ["splitk", "direct", "rmw"], ttirs["splitk-fp32"]),
        ("histogram", ["atomic", "private"], ttirs["histogram"]),
        ("padded-rows", ["padded", "exact"], None),
        ("padded-rows-nocompare", ["padded", "exact"], None),
        ("no-reference", ["plain", "again"], None),
        ("crash", ["wild", "plain"], None),
    ]:
        s = load_suite(_ref(name))
        out[name] = run_interpreted(_ref(name), variants, [s.shape], ttirs=tt)
        json.dumps(out[name])  # plain JSON
    return out


def _states(rec: dict[str, Any]) -> dict[str, str]:
    return {n: e["state"] for n, e in rec["rows"][0]["variants"].items()}


def test_accumulating_outputs_correct_when_started_at_zero(interpreted: dict[str, dict[str, Any]]) -> None:
    rec = interpreted["splitk-fp32"]
    assert _states(rec) == {"splitk": CORRECT, "direct": CORRECT, "rmw": CORRECT}
    assert rec["findings"] == []
    v = rec["rows"][0]["variants"]
    assert v["splitk"]["reads_outputs"] == {"c_ptr": ["tt.atomic_rmw fadd"]} and v["direct"]["reads_outputs"] == {}
    assert v["splitk"]["reference_dtype"] == "float64" and v["splitk"]["rel_err"] < 1e-5
    h = interpreted["histogram"]
    assert _states(h) == {"atomic": CORRECT, "private": CORRECT} and h["rows"][0]["variants"]["atomic"]["rel_err"] == 0


def test_nan_start_refused_for_outputs_the_kernel_reads(interpreted: dict[str, dict[str, Any]]) -> None:
    rec = interpreted["splitk-nan"]
    assert _states(rec) == {"splitk": NOT_CHECKED, "direct": CORRECT, "rmw": NOT_CHECKED}
    msgs = {f["variant"]: f["message"] for f in rec["findings"] if f["kind"] == "init"}
    assert set(msgs) == {"splitk", "rmw"}
    assert "c_ptr is read by the kernel (tt.atomic_rmw fadd) and would start as NaN" in msgs["splitk"]
    assert "init='zeros'" in msgs["splitk"] and "(tt.load)" in msgs["rmw"]
    assert not any(f["kind"] in ("correctness", "agreement", "error") for f in rec["findings"])


def test_padded_outputs_compared_on_common_region_or_not_comparable(interpreted: dict[str, dict[str, Any]]) -> None:
    rec = interpreted["padded-rows"]
    assert _states(rec) == {"padded": CORRECT, "exact": CORRECT} and rec["findings"] == []
    agr = rec["rows"][0]["agreement"][0]
    assert agr["ok"] is True and agr["notes"] == ["8×128 vs 8×100, compared on the common 8×100 region"]
    rec = interpreted["padded-rows-nocompare"]
    assert _states(rec) == {"padded": NOT_CHECKED, "exact": CORRECT}
    assert rec["rows"][0]["agreement"][0]["comparable"] is False
    kinds = {f["kind"] for f in rec["findings"]}
    assert kinds == {"not-comparable"}
    assert any("shape 8×128 vs 8×100" in f["message"] and "compare='common'" in f["message"] for f in rec["findings"])


def test_without_reference_variants_only_agree(interpreted: dict[str, dict[str, Any]]) -> None:
    from irdiff.run.command import format_interpret

    rec = interpreted["no-reference"]
    assert _states(rec) == {"plain": AGREES, "again": AGREES}
    text = format_interpret(rec)
    assert "the variants agree with each other (no reference" in text and "matches the reference" not in text


def test_faulting_variant_isolated(interpreted: dict[str, dict[str, Any]]) -> None:
    """The wild load kills the interpreter's process (SIGSEGV); the other variant still runs in a fresh one."""
    rec = interpreted["crash"]
    v = rec["rows"][0]["variants"]
    assert v["plain"]["state"] == CORRECT
    assert v["wild"]["state"] == NOT_CHECKED and "SIGSEGV" in v["wild"]["error"]
    errs = [f for f in rec["findings"] if f["kind"] == "error"]
    assert len(errs) == 1 and errs[0]["variant"] == "wild" and errs[0]["message"].startswith("wild failed at N=2048")


# ---------------------------------------------------------------- accuracy gap, states on synthetic checks


def _vc(name: str, err: float | None, state: str) -> Any:
    from irdiff.run.runner import VariantCheck

    return VariantCheck(name, {"state": state, "rel_err": err}, [], {"y": torch.ones(4)}, {"y": "fp32"})


@pytest.mark.parametrize("order", [("tf32", "ieee"), ("ieee", "tf32")])
def test_accuracy_gap_finding_names_the_less_accurate_variant(order: tuple[str, str]) -> None:
    from irdiff.run.runner import agreement

    s = load_suite(_ref("dot-precision"))
    checks = {"tf32": _vc("tf32", 3.1e-4, CORRECT), "ieee": _vc("ieee", 2.0e-7, CORRECT)}
    _, findings = agreement(s, {"M": 64}, checks, list(order))
    gap = [f for f in findings if f["kind"] == "numerics"]
    assert len(gap) == 1 and gap[0]["variant"] == "tf32" and gap[0]["against"] == "ieee"
    assert "tf32 is 1.55e+03× less accurate than ieee" in gap[0]["message"]
    assert "although both pass the tolerance" in gap[0]["message"]
    checks = {"tf32": _vc("tf32", 3.1e-4, CORRECT), "ieee": _vc("ieee", 1.0e-4, CORRECT)}
    assert not [f for f in agreement(s, {"M": 64}, checks, list(order))[1] if f["kind"] == "numerics"]


# ---------------------------------------------------------------- command line


def test_cli_refusal_and_exit_status(tmp_path: Path) -> None:
    """A wrong result is said first and exits 1; a refused start is reported without a failing status."""
    res = CliRunner().invoke(cli, ["run", str(Path(KINDS).parent / "planted_bug.py"), "--interpret", "--shapes", "64"])
    assert res.exit_code == 1
    assert res.output.splitlines()[0].startswith("✗ WRONG RESULT: half_k: c_ptr differs from reference")


def test_version_from_checkout() -> None:
    import subprocess
    import sys

    import irdiff

    p = subprocess.run([sys.executable, "-m", "irdiff", "--version"], capture_output=True, text=True, check=False)
    assert p.returncode == 0 and p.stdout.strip() == f"irdiff, version {irdiff.__version__}"


def test_shape_label_for_unnamed_shapes() -> None:
    from irdiff.run.sweep import shape_label

    assert shape_label({}) == "default shape" and shape_label({"M": 4, "N": 4}) == "M=N=4"


# ---------------------------------------------------------------- GPU (the H200 acceptance runs these)

GPU_CASES = {
    "splitk-fp32": (("splitk", "direct"), {"M": 512, "N": 512, "K": 2048}, (CORRECT, CORRECT)),
    "splitk-bf16": (("splitk", "direct"), {"M": 512, "N": 512, "K": 2048}, (CORRECT, CORRECT)),
    "splitk-nan": (("rmw", "direct"), {"M": 512, "N": 512, "K": 2048}, (NOT_CHECKED, CORRECT)),
    "histogram": (("atomic", "private"), {"N": 1 << 20}, (CORRECT, CORRECT)),
    "hint-fault": (("hinted", "plain"), {"N": 1 << 20}, (NOT_CHECKED, CORRECT)),
    "crash": (("wild", "plain"), {"N": 1 << 16}, (NOT_CHECKED, CORRECT)),
    "tma": (("descriptor", "pointers"), {"M": 512, "N": 512, "K": 512}, (CORRECT, CORRECT)),
    "padded-rows": (("padded", "exact"), {"M": 4096, "N": 100}, (CORRECT, CORRECT)),
    "padded-rows-nocompare": (("padded", "exact"), {"M": 4096, "N": 100}, (NOT_CHECKED, CORRECT)),
    "dot-precision": (("tf32", "ieee"), {"M": 256, "N": 256, "K": 1024}, (CORRECT, CORRECT)),
    "no-reference": (("plain", "again"), {"N": 1 << 20}, (AGREES, AGREES)),
}


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(GPU_CASES))
def test_gpu_every_kind_runs_with_the_right_state(name: str) -> None:
    from irdiff.run.runner import RunRequest, run_timing
    from irdiff.run.timing import TimingOptions

    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU on this machine")
    pair, shape, want = GPU_CASES[name]
    rec = run_timing(RunRequest(_ref(name), list(pair), [shape], timing=TimingOptions(block_ms=20, blocks=3)))
    json.dumps(rec)
    v = rec["rows"][0]["variants"]
    assert (v[pair[0]]["state"], v[pair[1]]["state"]) == want, json.dumps(rec["findings"])[:2000]
    for n in pair:  # every variant that did not fault was timed
        assert ("error" in v[n]) or v[n]["median_ms"] > 0
    if name in ("hint-fault", "crash"):
        err = v[pair[0]]["error"]
        assert "misaligned address" in err or "illegal" in err.lower(), err
        assert rec["verdicts"] == [] and v[pair[1]]["median_ms"] > 0
    if name == "dot-precision":
        gap = [f for f in rec["findings"] if f["kind"] == "numerics"]
        assert gap and gap[0]["variant"] == "tf32", rec["findings"]


def test_reproduce_line_is_the_command_that_made_it() -> None:
    """File suites keep their path::name, --shapes and every option."""
    import shlex
    from types import SimpleNamespace

    from irdiff.bundle import Bundle
    from irdiff.render.views import _reproduce

    cmd = ["irdiff", f"{KINDS}::splitk-fp32", "--variant", "splitk", "--against", "direct", "--shapes", "512,1024",
           "--config", "BM=64", "--target", "sm90"]  # fmt: skip
    b = Bundle(suite="splitk-fp32", target="sm90", command=cmd)
    assert _reproduce(SimpleNamespace(bundle=b, a="splitk", b="direct")) == shlex.join(cmd)  # type: ignore[arg-type]
    old = Bundle(suite="matmul", target="sm90", command=[])
    assert _reproduce(SimpleNamespace(bundle=old, a="x", b="y")).startswith("irdiff matmul --variant x")  # type: ignore[arg-type]


def test_reproduce_line_reproduces_the_pair_shown() -> None:
    """A recorded command that is not a comparison of the pair shown (a `compile` of four variants, a comparison
    of another pair) is not offered as "reproduce": the line is rebuilt for this pair, keeping the suite argument
    as typed (a file suite's path::name); two kernels of a capture reproduce as `irdiff diff DIR_A DIR_B`."""
    import shlex
    from types import SimpleNamespace

    from irdiff.bundle import Bundle, VariantResult
    from irdiff.render.views import _reproduce

    def rep(b: Bundle, a: str, c: str) -> list[str]:
        return shlex.split(_reproduce(SimpleNamespace(bundle=b, a=a, b=c)))  # type: ignore[arg-type]

    compiled = Bundle(suite="add", target="sm80", shape={"N": 4096},
                      command=["irdiff", "compile", "k/add.py::add", "--target", "sm80", "--save", "b1"])  # fmt: skip
    for a, b in (("dns", "plain"), ("plain", "dns")):  # both orders
        assert rep(compiled, a, b) == ["irdiff", "k/add.py::add", "--variant", a, "--against", b, "--target", "sm80",
                                       "--shape", "N=4096"]  # fmt: skip
    other_pair = ["irdiff", "k/add.py::add", "--variant", "i64", "--against", "plain", "-q"]
    b = Bundle(suite="add", target="sm80", command=other_pair, pair=["dns", "plain"])
    assert rep(b, "dns", "plain")[:6] == ["irdiff", "k/add.py::add", "--variant", "dns", "--against", "plain"]
    assert rep(b, "i64", "plain") == other_pair  # the very pair it compared: kept as typed
    assert rep(b, "i64@2", "plain@2") == other_pair  # config 2 of that pair (--all-configs names)
    named = ["irdiff", "compare", "matmul", "--against=unannotated"]
    assert rep(Bundle(suite="matmul", target="sm90", command=named), "annotated", "unannotated") == named
    assert rep(Bundle(suite="matmul", target="sm90", command=named), "annotated", "tiled")[:2] == ["irdiff", "matmul"]
    default = ["irdiff", "matmul"]  # the suite's default pair, recorded as bundle.pair
    assert rep(Bundle(suite="matmul", target="sm90", command=default, pair=["annotated", "unannotated"]), "annotated",
               "unannotated") == default  # fmt: skip
    assert rep(Bundle(suite="matmul", target="sm90", command=default, pair=["x", "y"]), "annotated", "unannotated")[2:4] == [
        "--variant", "annotated"]  # fmt: skip
    cap = Bundle(
        suite="capture",
        target="sm80",
        command=["python", "train.py"],
        variants={"k1": VariantResult(name="k1", directory="/c/k1"), "k2": VariantResult(name="k2", directory="/c/k2")},
    )
    assert rep(cap, "k1", "k2") == ["irdiff", "diff", "/c/k1", "/c/k2"]


def test_missing_torch_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from irdiff.run import command

    real = importlib.util.find_spec
    monkeypatch.setattr(command.importlib.util, "find_spec", lambda n, *a: None if n == "torch" else real(n, *a))
    res = CliRunner().invoke(cli, ["run", "matmul"])
    assert res.exit_code == 2
    assert "torch is not installed" in res.output and "pip install 'irdiff[run]'" in res.output
    assert "--interpret" in res.output
