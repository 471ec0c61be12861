"""Compile driver on real Triton compiles (no GPU): specialization, stages, resources, errors, cache, configs.

Runs under the newest Triton (main venv) and Triton 3.6.0 (second venv in .ci/run).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from irdiff.bundle import load_bundle
from irdiff.cli import cli
from irdiff.compile import CompileRequest, compat, compile_bundle, parse_config_option

SUITES = Path(__file__).parent / "suites"
UNIT_STRIDES = ("stride_ak", "stride_bn", "stride_cn")


def spec_by_name(variant):  # type: ignore[no-untyped-def]
    return {a.name: a for a in variant.specialization}


@pytest.mark.parametrize("fixture", ["matmul_sm86", "matmul_sm90"])
def test_stage0_unit_strides(fixture: str, request: pytest.FixtureRequest) -> None:
    bundle = request.getfixturevalue(fixture)
    plain = spec_by_name(bundle.variants["unannotated"])
    annotated = spec_by_name(bundle.variants["annotated"])
    for name in UNIT_STRIDES:
        assert plain[name].type == "constexpr" and plain[name].constexpr == "1", plain[name]
        assert "equal to 1" in plain[name].reason
        assert annotated[name].type == "i32", annotated[name]
        assert annotated[name].divisibility is None
        assert annotated[name].annotation == "int"
        assert "annotated `int`" in annotated[name].reason and "constant" in annotated[name].reason
    # The other ints keep i32 + divisibility 16 in both variants; pointers are *fp16 div16.
    for name in ("M", "N", "K", "stride_am", "stride_bk", "stride_cm"):
        assert plain[name].summary() == annotated[name].summary() == "i32 div16"
    assert plain["a_ptr"].summary() == "*fp16 div16"
    assert plain["BLOCK_SIZE_K"].type == "constexpr" and plain["BLOCK_SIZE_K"].constexpr == "32"


@pytest.mark.parametrize("fixture", ["matmul_sm86", "matmul_sm90"])
def test_ptx_async_copies_vs_scalar_loads(fixture: str, request: pytest.FixtureRequest) -> None:
    bundle = request.getfixturevalue(fixture)
    plain_ptx = bundle.variants["unannotated"].text("ptx")
    annotated_ptx = bundle.variants["annotated"].text("ptx")
    cp16 = re.compile(r"cp\.async\.cg\.shared\.global \[[^]]+\], \[[^]]+\], 0x10")
    assert len(cp16.findall(plain_ptx)) == 32
    assert "ld.global.b16" not in plain_ptx
    assert len(re.findall(r"\bld\.global\.b16\b", annotated_ptx)) == 64
    assert "cp.async" not in annotated_ptx


def test_every_stage_and_resources(matmul_sm86) -> None:  # type: ignore[no-untyped-def]
    for v in matmul_sm86.variants.values():
        assert v.error is None
        for stage in ("python", "ttir", "ttgir", "llir", "ptx", "sass", "cubin"):
            assert v.path(stage) is not None and v.path(stage).stat().st_size > 0, stage  # type: ignore[union-attr]
        assert "def _matmul_tile" in v.text("python")
        assert 'ttg.target = "cuda:86"' in v.text("ttgir")
        assert ".target sm_86" in v.text("ptx")
        assert v.metadata["num_warps"] == 4 and v.metadata["num_stages"] == 4
        r = v.resources
        assert r.registers is not None and 32 <= r.registers <= 255
        assert r.spill_store_bytes is not None and r.stack_bytes is not None
        assert r.shared_bytes and r.shared_bytes > 0
        assert r.ptxas_version.startswith("ptxas")
        assert "Used" in v.text("ptxas")
    # Shared memory: the pipelined variant holds a multi-buffered ring, the annotated one does not.
    assert matmul_sm86.variants["unannotated"].resources.shared_bytes > (  # type: ignore[operator]
        matmul_sm86.variants["annotated"].resources.shared_bytes
    )
    assert matmul_sm86.triton_version and matmul_sm86.ptxas_version


def test_compiler_reasoning_logs(matmul_sm86) -> None:  # type: ignore[no-untyped-def]
    plain = matmul_sm86.variants["unannotated"].text("llvm_debug")
    annotated = matmul_sm86.variants["annotated"].text("llvm_debug")
    assert "contiguity = [1, 32]" in plain and "[tritongpu-coalesce]" in plain
    assert "contiguity = [1, 1]" in annotated
    assert "too small for pipelining" in annotated
    assert "too small for pipelining" not in plain


def test_bundle_round_trip(matmul_sm86) -> None:  # type: ignore[no-untyped-def]
    again = load_bundle(matmul_sm86.directory)
    manifest = json.loads((Path(matmul_sm86.directory) / "manifest.json").read_text())
    assert manifest["schema"] == "irdiff.bundle/1"
    assert manifest["target"] == "sm86" and manifest["suite"] == "matmul"
    assert set(again.variants) == {"unannotated", "annotated"}
    assert again.variants["annotated"].specialization == matmul_sm86.variants["annotated"].specialization


def test_second_run_is_cached(tmp_path: Path) -> None:
    req = CompileRequest(suite=str(SUITES / "two_configs.py"), variants=["plain"], target="sm80")
    first = compile_bundle(req, tmp_path / "a", command=[])
    second = compile_bundle(req, tmp_path / "b", command=[])
    assert second.variants["plain"].cache_hit
    assert first.variants["plain"].text("ptx") == second.variants["plain"].text("ptx")


def test_targets_change_the_code(tmp_path: Path) -> None:
    ref = str(SUITES / "two_configs.py")
    b80 = compile_bundle(CompileRequest(suite=ref, variants=["plain"], target="sm80"), tmp_path / "80", command=[])
    b100 = compile_bundle(CompileRequest(suite=ref, variants=["plain"], target="sm100"), tmp_path / "100", command=[])
    assert ".target sm_80" in b80.variants["plain"].text("ptx")
    assert ".target sm_100a" in b100.variants["plain"].text("ptx")


def test_alignment_and_do_not_specialize(tmp_path: Path) -> None:
    b = compile_bundle(
        CompileRequest(suite=str(SUITES / "two_configs.py"), variants=["plain", "dns"], target="sm86"),
        tmp_path / "b",
        command=[],
    )
    plain, dns = spec_by_name(b.variants["plain"]), spec_by_name(b.variants["dns"])
    assert plain["x_ptr"].divisibility == 16
    assert plain["y_ptr"].divisibility is None and "8-byte aligned" in plain["y_ptr"].reason
    assert plain["n"].divisibility == 16
    assert dns["n"].divisibility is None and dns["n"].do_not_specialize
    assert "do_not_specialize" in dns["n"].reason
    assert plain["alpha"].type == "fp32"
    assert b.variants["plain"].config == {"BLOCK": 1024}


def test_config_selection_and_all_configs(tmp_path: Path) -> None:
    ref = str(SUITES / "two_configs.py")
    by_index = compile_bundle(CompileRequest(ref, ["plain"], "sm86", config=0), tmp_path / "i", command=[])
    assert by_index.variants["plain"].config == {"BLOCK": 256}
    assert by_index.variants["plain"].metadata["num_warps"] == 2
    by_kv = compile_bundle(
        CompileRequest(ref, ["plain"], "sm86", config=parse_config_option("BLOCK=256")), tmp_path / "k", command=[]
    )
    assert by_kv.variants["plain"].config == {"BLOCK": 256}
    every = compile_bundle(CompileRequest(ref, ["plain", "dns"], "sm86", config="all"), tmp_path / "all", command=[])
    assert set(every.variants) == {"plain@0", "plain@1", "dns@0", "dns@1"}
    assert {v.config["BLOCK"] for v in every.variants.values()} == {256, 1024}


def test_pass_snapshots(tmp_path: Path) -> None:
    b = compile_bundle(
        CompileRequest(str(SUITES / "two_configs.py"), ["plain"], "sm86", passes=True), tmp_path / "p", command=[]
    )
    v = b.variants["plain"]
    assert len(v.passes) > 20
    names = " ".join(v.passes)
    assert "TritonGPUCoalesce" in names or "tritongpu-coalesce" in names
    first = (Path(v.directory) / "passes" / v.passes[0]).read_text()
    assert first.startswith("// -----// IR Dump")


def test_failing_variant_keeps_the_other(tmp_path: Path) -> None:
    b = compile_bundle(CompileRequest(str(SUITES / "broken.py"), ["ok", "broken"], "sm86"), tmp_path / "b", command=[])
    assert b.variants["ok"].error is None and b.variants["ok"].text("ptx")
    err = b.variants["broken"].error
    assert err is not None and "undefined_scale" in err


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_cli_bad_input_is_one_line(tmp_path: Path) -> None:
    code, out = run_cli("compile", "matmull", "--target", "sm86")
    assert code == 2 and "did you mean 'matmul'" in out and "Traceback" not in out
    code, out = run_cli("matmul", "--variant", "anotated", "--against", "unannotated")
    assert code == 2 and "'annotated'" in out
    code, out = run_cli("compile", "matmul", "--target", "sm75")
    assert code == 2 and "unsupported target" in out and len(out.strip().splitlines()) == 1
    code, out = run_cli("compile", str(SUITES / "syntax_error.py"), "--target", "sm86")
    assert code == 2 and "syntax error" in out and "syntax_error.py:2" in out
    code, out = run_cli("compile", str(SUITES / "broken.py"), "--target", "sm86", "--save", str(tmp_path / "b"))
    assert code == 1
    assert "variant 'broken' failed to compile" in out and "undefined_scale" in out
    assert "ok:" in out  # the working variant's result is still reported
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("user data")
    code, out = run_cli("compile", "matmul", "--target", "sm86", "--save", str(tmp_path / "mine"))
    assert code == 2 and "not an irdiff bundle" in out
    assert (tmp_path / "mine" / "notes.txt").read_text() == "user data"


def test_old_triton_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compat, "triton_version", lambda: "3.1.0")
    with pytest.raises(compat.UnsupportedTriton, match="too old"):
        compat.check_triton()
    code, out = run_cli("compile", "matmul", "--target", "sm86")
    assert code == 2 and "Triton 3.1.0 is too old" in out


def test_triton_version_read_from_dist_info_as_importlib_metadata_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm path reads Triton's version from its ``METADATA`` without importlib.metadata: the same answer for
    the installed Triton, the first ``sys.path`` entry wins, and anything ambiguous is left to importlib.metadata."""
    from importlib.metadata import version

    assert compat._dist_info_version() == version("triton") == compat.triton_version()

    def dist(where: Path, dirname: str, name: str = "triton", ver: str = "9.8.7") -> None:
        (where / dirname).mkdir(parents=True)
        (where / dirname / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {ver}\n\nbody\n")

    first, second = tmp_path / "first", tmp_path / "second"
    dist(first, "triton-9.8.7.dist-info")
    dist(first, "triton_kernels-1.0.dist-info", "triton_kernels", "1.0")  # another package: not triton
    dist(second, "triton-1.2.3.dist-info", ver="1.2.3")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(first), str(second), *sys.path])
    assert compat._dist_info_version() == "9.8.7" == version("triton")
    dist(first, "triton-9.9.9.dist-info", ver="9.9.9")  # two in one entry: importlib.metadata decides
    assert compat._dist_info_version() is None and compat.triton_version() == version("triton")
    shutil.rmtree(first)
    dist(first, "triton.egg-info")
    assert compat._dist_info_version() is None
    shutil.rmtree(first)
    dist(first, "triton-4.0.dist-info", name="other")  # a METADATA naming another project
    assert compat._dist_info_version() is None


def test_console_script_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "irdiff", "list"], capture_output=True, text=True, check=True)
    assert "matmul" in out.stdout and "unannotated" in out.stdout


def test_bad_shape_config_and_target_forms(tmp_path: Path) -> None:
    code, out = run_cli("compile", "matmul", "--shape", "Q=5", "--target", "sm86")
    assert code == 2 and "has no size 'Q'" in out and "M=1024" in out
    code, out = run_cli("compile", "matmul", "--config", "99", "--target", "sm86")
    assert code == 2 and "configs 0..15" in out and out.count("error:") == 1
    assert compat_target("sm_90a") == compat_target("SM90") == compat_target("90") == "sm90"
    code, out = run_cli("compile", "matmul", "--target", "sm_75")
    assert code == 2 and "unsupported target 'sm_75'" in out


def compat_target(name: str) -> str:
    from irdiff.compile import normalize_target

    return normalize_target(name)


def test_same_variant_twice_and_suite_by_variable(tmp_path: Path) -> None:
    ref = str(SUITES / "two_configs.py")
    b = compile_bundle(CompileRequest(ref, ["plain", "plain"], "sm86"), tmp_path / "b", command=[])
    assert list(b.variants) == ["plain"] and b.variants["plain"].error is None
    code, out = run_cli("compare", f"{ref}::suite", "--variant", "plain", "--against", "plain", "--target", "sm86")
    assert code == 0 and "identical after normalization" in out
    code, out = run_cli("compile", f"{ref}::nope", "--target", "sm86")
    assert code == 2 and "(suites: two-configs)" in out


def test_compiler_message_is_shown_whole(tmp_path: Path) -> None:
    code, out = run_cli("compile", str(SUITES / "broken.py"), "--target", "sm86", "--save", str(tmp_path / "b"))
    assert code == 1
    # CompilationError: the error itself first, then the user's file and line, the source line and the caret.
    lines = out.splitlines()
    assert "failed to compile: CompilationError: NameError('undefined_scale is not defined')" in out
    where = next(i for i, line in enumerate(lines) if "broken.py:18 in copy_broken" in line)
    assert "* undefined_scale" in lines[where + 1]
    assert lines[where + 2].strip() == "^" and lines[where + 2].index("^") == lines[where + 1].index("undefined_scale")


def test_default_bundle_dirs_differ_by_shape(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from irdiff.compile import default_bundle_dir

    a = default_bundle_dir("matmul", CompileRequest("matmul", ["annotated"], "sm86"))
    b = default_bundle_dir("matmul", CompileRequest("matmul", ["annotated"], "sm86", shape={"M": 100}))
    assert a != b and a.name.startswith("matmul-sm86-")


def test_a_bundle_never_mixes_triton_versions(tmp_path: Path) -> None:
    from irdiff.compile import default_bundle_dir

    ref = str(SUITES / "two_configs.py")
    req = CompileRequest(ref, ["plain"], "sm86")
    assert default_bundle_dir("x", req, "3.6.0") != default_bundle_dir("x", req, "3.9.0")
    compile_bundle(req, tmp_path / "b", command=[])
    manifest = tmp_path / "b" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["triton_version"] = "3.6.0-other"  # as if made by another Triton
    manifest.write_text(json.dumps(data))
    code, out = run_cli("compile", ref, "--variant", "dns", "--target", "sm86", "--save", str(tmp_path / "b"))
    assert code == 2 and "made with Triton 3.6.0-other" in out


def test_worker_keeps_torch_out_of_the_compile_only() -> None:
    """Triton 3.6's specializer imports torch only to recognize torch tensors the worker never passes: the compile
    runs with torch refused (a fresh interpreter, so this test's own imports do not matter), nothing is refused
    afterwards, and a torch that a suite already imported is left alone."""
    code = (
        "import importlib.util, sys, types\n"
        "from irdiff.compile.worker import _torch_kept_out\n"
        "with _torch_kept_out():\n"
        "    for name in ('torch', 'torch.nn'):\n"
        "        try:\n"
        "            __import__(name)\n"
        "        except ModuleNotFoundError as e:\n"
        "            assert e.name == 'torch' and 'kept out' in str(e), e  # torch.nn: its parent is refused\n"
        "        else:\n"
        "            raise AssertionError(name + ' was imported')\n"
        "assert 'torch' not in sys.modules and 'torch.nn' not in sys.modules\n"
        "n = len(sys.meta_path)\n"
        "importlib.util.find_spec('torch')  # finders asked again: no error (None when torch is not installed)\n"
        "mine = sys.modules['torch'] = types.ModuleType('torch')  # as if the suite had imported torch\n"
        "with _torch_kept_out():\n"
        "    import torch\n"
        "    assert torch is mine and len(sys.meta_path) == n\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("missing-arg", ["without its parameter 'gain'", "args or constexprs"]),
        ("missing-constexpr", ["without its parameter 'BLOCK_C'"]),
        ("unknown-arg", ["args gives 'stride_col', not a parameter"]),
        ("unknown-constexpr", ["constexprs gives 'BLOCK_CC', not a parameter", "did you mean 'BLOCK_C'"]),
        ("unknown-option", ["variant 'clamped'", "options gives 'num_warp', not a compile option", "'num_warps'"]),
        ("given-twice", ["'BLOCK_C' is given twice, in args and in constexprs"]),
        ("constexpr-tensor", ["'BLOCK_C' is a tl.constexpr but args gives it a Tensor (i32[4]"]),
        ("args-fail", ["args(shape) failed", "KeyError: 'COLS'"]),
    ],
)
def test_a_call_that_does_not_bind_is_a_suite_error(tmp_path: Path, name: str, says: list[str]) -> None:
    """A suite whose JIT call does not bind to the kernel is bad input: one line naming the suite file, the suite, the
    kernel and the parameter, exit 2, before anything is compiled (it was exit 1 with the JIT's Python text)."""
    ref = f"{SUITES / 'bad_launch.py'}::{name}"
    for cmd in (
        ["compile", ref, "--target", "sm86", "--save", str(tmp_path / "b")],
        ["compare", ref, "--variant", "plain", "--against", "clamped", "--target", "sm86", "--no-run"],
    ):
        code, out = run_cli(*cmd)
        assert code == 2, out
        assert len(out.strip().splitlines()) == 1 and out.startswith("error: "), out
        assert str(SUITES / "bad_launch.py") in out and f"suite {name!r}" in out, out
        assert "kernel row_scale" in out or "args(shape)" in out, out
        for s in says:
            assert s in out, out
        assert "Traceback" not in out and "positional argument" not in out and "unrecognised" not in out
    assert not (tmp_path / "b").exists() or not any((tmp_path / "b").iterdir())
