"""`irdiff capture` and `irdiff diff` of two captures: real programs, real Triton compiles (sm90 stand-in driver),
real bundles. GPU-only behaviour (launch sampling) is in the ``gpu``-marked test at the end."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from irdiff.bundle import ArgSpec, Bundle, VariantResult, load_bundle
from irdiff.capture import program_command
from irdiff.capture.hooks import CaptureConfig, describe_arg, target_name
from irdiff.cli import cli
from irdiff.collections_diff.artifacts import load_artifacts, ttir_signature
from irdiff.collections_diff.pairing import inductor_stem, pair_kernels, source_similarity

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "scripts"
WARMUP = str(SCRIPTS / "warmup_kernels.py")
PY36 = ROOT / ".venv36" / "bin" / "python"


def capture(out: Path, *program: str, opts: tuple[str, ...] = (), env: dict[str, str] | None = None):
    """Run ``irdiff capture --target sm90 -o OUT OPTS -- PROGRAM`` as a user would (its own process)."""
    e = dict(os.environ if env is None else env)
    e.pop("TRITON_DEFAULT_FP_FUSION", None)  # the program's environment is the program's: nothing set for it
    cmd = [sys.executable, "-m", "irdiff", "capture", "--target", "sm90", "-o", str(out), *opts, "--", *program]
    return subprocess.run(cmd, capture_output=True, text=True, env=e, cwd=ROOT)


@pytest.fixture(scope="module")
def captures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Two captures of the same program, before and after a code change (the 'after' one exits with status 3)."""
    root = tmp_path_factory.mktemp("captures")
    cache, dump = root / "triton-cache", root / "triton-dump"
    env = dict(os.environ, TRITON_CACHE_DIR=str(cache), TRITON_KERNEL_DUMP="1", TRITON_DUMP_DIR=str(dump))
    # Everything at capture time (--sass --explain) for `before`; `after` gets SASS and the compiler log on demand.
    before = capture(
        root / "before", sys.executable, WARMUP, "--version", "before", "--torch", opts=("--sass", "--explain"), env=env
    )
    # Compiled here, not read from another run's cache; dumped too (TRITON_KERNEL_DUMP adds `!llvm.ident` to LLIR).
    fresh = dict(env, TRITON_CACHE_DIR=str(root / "cache-after"), TRITON_DUMP_DIR=str(root / "dump-after"))
    after = capture(root / "after", WARMUP, "--version", "after", "--exit", "3", env=fresh)
    return {"root": root, "before": before, "after": after, "cache": cache, "dump": dump}


def test_capture_passes_output_and_exit_status_through(captures: dict) -> None:
    before, after = captures["before"], captures["after"]
    assert before.returncode == 0, before.stderr
    assert before.stdout == "program: warming kernels up (before)\nprogram: done\n"
    assert "program: a line on stderr" in before.stderr
    assert "irdiff capture: 4 kernels" in before.stderr
    assert after.returncode == 3, after.stderr
    assert after.stdout == "program: warming kernels up (after)\nprogram: done\n"
    assert "irdiff capture: 5 kernels" in after.stderr


def test_capture_is_a_bundle_with_every_stage(captures: dict) -> None:
    b = load_bundle(captures["root"] / "before")
    assert b.suite == "capture" and b.target == "sm90"
    assert list(b.variants) == ["add_kernel", "add_kernel-2", "scale_rows", "copy_kernel"]
    assert b.triton_version and b.ptxas_version
    for v in b.variants.values():
        assert {"python", "ttir", "ttgir", "llir", "ptx", "sass", "cubin"} <= set(v.stages), v.name
        assert 'ttg.target = "cuda:90"' in v.text("ttgir")
        assert ".target sm_90a" in v.text("ptx")
        assert v.resources.registers and v.resources.registers > 0
        assert "Used" in v.text("ptxas")
        assert v.options["num_warps"] == 4
        assert v.metadata["compiled_by"] == "triton.runtime.jit.JITFunction.run"
        assert v.metadata["explain"]["reproduced"] is True
    # Two specializations of one kernel: n = 4096 is divisible by 16, n = 4001 is not.
    n1 = {s.name: s for s in b.variants["add_kernel"].specialization}["n"]
    n2 = {s.name: s for s in b.variants["add_kernel-2"].specialization}["n"]
    assert (n1.type, n1.divisibility, n2.type, n2.divisibility) == ("i32", 16, "i32", None)
    assert "4001" in n2.value and "not a multiple of 16" in n2.reason
    # Argument values from the JIT's call: a torch tensor's dtype, shape, strides and alignment.
    x = b.variants["scale_rows"].metadata["compile_call"]["args"]["x_ptr"]
    assert x == {"dtype": "fp16", "shape": [64, 256], "strides": [256, 1], "align": 16}
    stride_col = {s.name: s for s in b.variants["scale_rows"].specialization}["stride_col"]
    assert stride_col.type == "constexpr" and stride_col.constexpr == "1"
    # The compiler's coalescing reasoning, recorded by recompiling the captured TTIR.
    assert "tritongpu-coalesce" in b.variants["scale_rows"].text("llvm_debug") or "contiguity" in b.variants[
        "scale_rows"
    ].text("llvm_debug")


def test_pairing_of_two_captures(captures: dict) -> None:
    a, b = load_bundle(captures["root"] / "before"), load_bundle(captures["root"] / "after")
    p = pair_kernels(a, b)
    got = [(x.a, x.b, x.how) for x in p.pairs]
    assert got == [
        ("add_kernel", "add_kernel", "name+signature"),
        ("add_kernel-2", "add_kernel-2", "name+signature"),
        ("scale_rows", "scale_rows", "name"),
        ("copy_kernel", "copy_rows", "source"),
    ]
    assert p.only_a == [] and p.only_b == ["relu_kernel"]


def test_diff_of_two_captures(captures: dict) -> None:
    root = captures["root"]
    r = CliRunner().invoke(
        cli, ["diff", str(root / "before"), str(root / "after"), "--color", "never", "--paging", "never"]
    )
    assert r.exit_code == 0, r.output
    out = r.output
    head, _, details = out.partition("━━ ")
    assert "before vs after" in head
    rows = {ln.split()[0]: ln for ln in head.splitlines() if ln.startswith("  ") and ln.split()}
    assert "identical" in rows["add_kernel"] and "identical" in rows["add_kernel-2"]
    assert "spec" in rows["scale_rows"] and "ptx" in rows["scale_rows"] and "12→18" in rows["scale_rows"]
    assert "copy_kernel → copy_rows" in head
    assert "only in after: relu_kernel" in head
    # On demand: SASS and the compiler log were added to `after` for the kernels of pairs whose PTX differs only.
    after = load_bundle(root / "after")
    assert "sass" in after.variants["scale_rows"].stages and after.variants["scale_rows"].text("llvm_debug")
    assert "sass" not in after.variants["add_kernel"].stages and not after.variants["add_kernel"].text("llvm_debug")
    assert after.variants["add_kernel"].resources.registers  # resources for every kernel, at capture time
    # Only the pair that differs is detailed, with the finding that names the mechanism.
    assert details.startswith("scale_rows (name)")
    # Each pair's sides are labelled by the captures as the user named them, not by options never given.
    for sign, side in (("-", "before"), ("+", "after")):
        line = rf"^  {re.escape(sign)} {side}:scale_rows +scale_rows  \({re.escape(str(root / side))}\)$"
        assert re.search(line, details, re.M), (line, details[:600])
    assert "(--variant)" not in out and "(--against)" not in out and "irdiff capture" not in out
    assert "spec.constexpr-one-lost" in details
    assert "stride_col" in details
    assert out.count("━━ ") >= 1 and "━━ add_kernel" not in out


def test_overview_counts_name_their_stage_when_several_stages_count_the_key(captures: dict) -> None:
    """`instructions` (PTX and SASS) or `tt.load` (TTIR and TTGIR) in the overview's key counts carry their stage,
    and every count shown is the one that stage's summary has."""
    from irdiff.collections_diff.compare import compare_collections, overview_rows
    from irdiff.render import stage_summaries

    root = captures["root"]
    cd = compare_collections(root / "before", root / "after")
    rows = overview_rows(cd, max_counts=50)
    shown = [c for r in rows for c in r.counts]
    assert shown, "the pair that differs shows key counts"
    for row, res in zip(rows, cd.results):
        keys = [k for k, _, _ in row.counts]
        assert len(keys) == len(set(keys)), keys
        if res.comparison is None:
            continue
        by_stage = {s.stage: {k: (x, y) for k, x, y in s.counts} for s in stage_summaries(res.comparison)}
        for key, x, y in row.counts:
            stage, _, op = key.partition(" ")
            if stage in by_stage and op in by_stage[stage]:
                assert by_stage[stage][op] == (x, y), key
                assert sum(op in c for c in by_stage.values()) > 1  # a prefix only where the key is ambiguous
            else:
                assert sum(key in c for c in by_stage.values()) == 1, key
    assert any(k.startswith(("ptx instructions", "sass instructions")) for k, _, _ in shown), shown


def test_diff_writes_reports_for_pairs_that_differ(captures: dict, tmp_path: Path) -> None:
    root, rep = captures["root"], tmp_path / "reports"
    args = ["diff", str(root / "before"), str(root / "after"), "--overview", "--reports", str(rep), "--color", "never"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in rep.iterdir()) == ["index.md", "scale_rows.html", "scale_rows.json", "scale_rows.md"]
    assert "spec.constexpr-one-lost" in (rep / "scale_rows.json").read_text()
    assert "[HTML](scale_rows.html)" in (rep / "index.md").read_text()
    assert CliRunner().invoke(cli, args).exit_code == 0  # its own earlier reports are overwritten


def test_diff_overview_only_and_kernel_filter(captures: dict) -> None:
    root = captures["root"]
    args = ["diff", str(root / "before"), str(root / "after"), "--overview", "--kernel", "copy", "--color", "never"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert "copy_kernel → copy_rows" in r.output and "scale_rows" not in r.output and "━━" not in r.output


def test_older_bundle_version_is_a_one_line_error(captures: dict, tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(captures["root"] / "before", old)
    mf = old / "manifest.json"
    m = json.loads(mf.read_text())
    m["schema"] = "irdiff.bundle/0"
    mf.write_text(json.dumps(m))
    r = CliRunner().invoke(cli, ["diff", str(old), str(captures["root"] / "after")])
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "irdiff.bundle/0" in lines[0]
    assert "Traceback" not in r.output


def test_triton_cache_and_dump_directories(captures: dict) -> None:
    cache, dump = captures["cache"], captures["dump"]
    bc, bd = load_artifacts(cache), load_artifacts(dump)
    assert bc.suite == "triton-cache" and bd.suite == "triton-dump"
    assert list(bc.variants) == ["add_kernel", "add_kernel-2", "scale_rows", "copy_kernel"]
    assert sorted(bd.variants) == sorted(bc.variants)
    v = bc.variants["scale_rows"]
    assert v.target == "sm90" and v.options["num_warps"] == 4 and "sass" not in v.stages
    assert [s.summary() for s in v.specialization] == ["*fp16 div16", "*fp16 div16", "i32 div16", "i32 div16", "fp32"]
    assert "sass" in bd.variants["scale_rows"].stages  # the dump keeps SASS; the cache does not
    r = CliRunner().invoke(cli, ["diff", str(cache), str(dump), "--overview", "--color", "never"])
    assert r.exit_code == 0, r.output
    assert "Triton cache" in r.output and "TRITON_KERNEL_DUMP" in r.output
    assert "4 pairs" in r.output
    # One cache entry against the capture's kernel: the same compile, paired and identical.
    entry = next(d for d in cache.iterdir() if (d / "scale_rows.ttir").is_file())
    r = CliRunner().invoke(
        cli,
        ["diff", str(entry), str(captures["root"] / "before"), "--overview", "--kernel", "scale", "--color", "never"],
    )
    assert r.exit_code == 0, r.output
    assert "scale_rows" in r.output and "identical" in r.output


def test_program_that_crashes_keeps_its_kernels(tmp_path: Path) -> None:
    python = str(PY36) if PY36.exists() else sys.executable  # the program's own Triton (3.6 where installed)
    r = capture(tmp_path / "crash", python, WARMUP, "--crash", opts=("--no-explain",))
    assert r.returncode == 1
    assert "RuntimeError: the program failed after two kernels" in r.stderr
    b = load_bundle(tmp_path / "crash")
    assert list(b.variants) == ["add_kernel", "add_kernel-2"]
    assert all(v.resources.registers for v in b.variants.values())
    if PY36.exists():
        assert b.triton_version == "3.6.0" and "12.8" in b.ptxas_version


def test_filter_and_python_m_entry_point(tmp_path: Path) -> None:
    out = tmp_path / "filtered"
    cmd = [sys.executable, "-m", "irdiff.capture", "-o", str(out), "--target", "sm90", "--filter", "^scale"]
    r = subprocess.run([*cmd, "--no-explain", "--", WARMUP], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert list(load_bundle(out).variants) == ["scale_rows"]
    assert "3 left out by --filter" in r.stderr


def test_child_python_processes_are_captured(tmp_path: Path) -> None:
    r = capture(tmp_path / "spawn", sys.executable, str(SCRIPTS / "spawn_kernels.py"), opts=("--no-explain",))
    assert r.returncode == 0, r.stderr
    b = load_bundle(tmp_path / "spawn")
    assert sorted(b.variants) == ["child_kernel", "parent_kernel"]
    assert b.variants["child_kernel"].metadata["pid"] != b.variants["parent_kernel"].metadata["pid"]


def test_direct_triton_compile_as_inductor_does(tmp_path: Path) -> None:
    """No JIT on the stack (TorchInductor calls triton.compile itself): the specialization is the caller's."""
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"))
    for out in ("direct", "again"):  # the second run loads the kernel from Triton's cache: recorded all the same
        r = capture(tmp_path / out, sys.executable, str(SCRIPTS / "direct_compile.py"), opts=("--no-explain",), env=env)
        assert r.returncode == 0, r.stderr
    v = load_bundle(tmp_path / "direct").variants["triton_red_fused_add_mean_0"]
    again = load_bundle(tmp_path / "again").variants["triton_red_fused_add_mean_0"]
    assert (v.cache_hit, again.cache_hit) == (False, True)
    assert again.text("ptx") == v.text("ptx") and again.resources.registers == v.resources.registers
    assert v.resources.registers and v.resources.registers > 0 and v.resources.spill_store_bytes == 0
    assert v.metadata["compiled_by"] == "__main__._precompile_config"
    assert v.metadata["inductor"]["size_hints"] == {"x": 8192, "r0_": 4096}
    assert v.metadata["inductor"]["config"] == {"XBLOCK": 1, "R0_BLOCK": 1024}
    specs = {s.name: s for s in v.specialization}
    assert specs["ks0"].summary() == "i32" and "caller of triton.compile" in specs["ks0"].reason
    assert specs["in_ptr0"].summary() == "*bf16 div16"
    assert specs["R0_BLOCK"].constexpr == "1024" and v.config == {"XBLOCK": "1", "R0_BLOCK": "1024"}
    assert v.options["num_stages"] == 1 and "ks0" in v.text("ttir")


def _triton_tool(python: str, expr: str) -> str:
    """Ask ``python``'s Triton (3.6 in .venv36, the newest in .venv) for a tool path, e.g. ``get_ptxas(90).path``."""
    code = f"from triton.backends.nvidia.compiler import get_ptxas; from triton import knobs; print({expr})"
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def _cuda_release(ptxas: str) -> tuple[int, int]:
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+)\.(\d+)", out)
    assert m, out
    return int(m.group(1)), int(m.group(2))


@pytest.mark.parametrize("program_triton", ["3.6", "current"])
def test_direct_compile_with_the_programs_own_ptxas(tmp_path: Path, program_triton: str) -> None:
    """TorchInductor points ``TRITON_PTXAS_PATH`` at the ptxas of torch's CUDA inside the program, so the kernel's
    PTX ``.version`` is newer than the program Triton's own ptxas can assemble (on the H200: PTX 9.0 from CUDA
    13.0's ptxas, Triton 3.6's ptxas 12.8). The capture must still give registers and spills (assembled by the
    ptxas the program used, recorded at compile time) and reproduce the compile for the compiler's log."""
    if program_triton == "3.6":
        if not PY36.exists():
            pytest.skip(".venv36 (Triton 3.6) not installed")
        python, arch = str(PY36), 90  # Triton 3.6 assembles sm90 with its `ptxas` (CUDA 12.8)
    else:
        python, arch = sys.executable, 86  # the newest Triton assembles sm86 with its `ptxas` (CUDA 12.9)
    default = _triton_tool(python, f"get_ptxas({arch}).path")
    newer = _triton_tool(sys.executable, "knobs.nvidia.ptxas_blackwell.path")  # CUDA 13.x
    if _cuda_release(newer) <= _cuda_release(default):
        pytest.skip(f"no ptxas newer than {default} to point TRITON_PTXAS_PATH at")
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TRITON_PTXAS_PATH", None)
    if program_triton == "3.6":
        # The newer ptxas belongs to another environment (irdiff's Triton), not to the program's: the after-run step
        # runs only binaries its environment offers (a path recorded in a bundle is never executed), so the user's
        # environment names it, as TorchInductor's torch/bin/ptxas is offered by the program's own environment.
        env["TRITON_PTXAS_PATH"] = newer
    program = [python, str(SCRIPTS / "direct_compile.py"), "--arch", str(arch), "--ptxas", newer]
    r = capture(tmp_path / "cap", *program, opts=("--explain",), env=env)
    assert r.returncode == 0, r.stderr
    assert "irdiff capture: warning" not in r.stderr, r.stderr
    v = load_bundle(tmp_path / "cap").variants["triton_red_fused_add_mean_0"]
    major, minor = _cuda_release(newer)
    ptx = int(_triton_tool(python, f"__import__('triton.backends.nvidia.compiler').backends.nvidia.compiler."
                                   f"ptx_get_version('{major}.{minor}')"))  # fmt: skip
    assert f".version {ptx // 10}.{ptx % 10}\n" in v.text("ptx")  # the PTX version Triton derives from that ptxas
    assert "Unsupported .version" not in v.text("ptxas") and "Used" in v.text("ptxas")
    assert v.resources.registers and v.resources.registers > 0 and v.resources.spill_store_bytes == 0
    assert v.metadata["explain"]["reproduced"] is True
    assert "tritongpu-coalesce" in v.text("llvm_debug")
    assert f" V{major}.{minor}." in v.resources.ptxas_version  # the manifest names the ptxas that built it
    # The report is Triton's own ptxas run inside the program (kept by the hooks), not a second run afterwards.
    assert v.metadata["ptxas_path"] == newer and v.metadata["ptxas_report"] == "captured"
    assert "ptxas_rerun" not in v.metadata
    assert "resources_note" not in v.metadata  # the report agrees with the captured cubin's register count


def test_launch_sampling_replayed_without_gpu(tmp_path: Path) -> None:
    """The kernel-load and launch hooks, driven as a GPU run drives them (see tests/scripts/simulated_launches.py)."""
    r = capture(tmp_path / "sim", sys.executable, str(SCRIPTS / "simulated_launches.py"), opts=("--no-explain",))
    assert r.returncode == 0, r.stderr
    b = load_bundle(tmp_path / "sim")
    add = b.variants["add_kernel"].metadata["launches"]
    assert add["count"] == 5
    assert [s["grid"] for s in add["samples"]] == [[4], [64]]  # distinct launches only
    assert add["samples"][1]["args"]["x_ptr"] == {"dtype": "fp16", "shape": [65536], "strides": [1], "align": 16}
    assert add["autotune"] == 0
    other = b.variants["other_kernel"].metadata["launches"]  # read from the launcher's frame
    assert other["count"] == 5 and other["samples"][0]["grid"] == [2, 1, 1]
    assert other["autotune"] == 3  # the three launches from the autotuner's `kernel_call`, not the program's two
    assert other["samples"][0]["autotune"] is True  # the first distinct launch was a benchmark run
    assert other["samples"][0]["args"] == {
        "x_ptr": {"dtype": "fp16", "shape": [512], "strides": [1], "align": 16},
        "n": 512,
    }


def test_capture_errors_are_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    cases = [
        (["capture", "-o", str(busy), "--", "python", "x.py"], "not empty"),
        (["capture", "-o", str(busy), "--force", "--", "python", "x.py"], "not an irdiff capture"),
        (["capture", "-o", str(tmp_path / "a"), "--target", "sm42", "--", "python", "x.py"], "unsupported target"),
        (["capture", "-o", str(tmp_path / "b"), "--filter", "(", "--", "python", "x.py"], "not a regular expression"),
        (["capture", "-o", str(tmp_path / "c"), "--", "no-such-program-xyz"], "program not found"),
    ]
    for args, msg in cases:
        r = runner.invoke(cli, args)
        assert r.exit_code == 2, (args, r.output)
        assert r.output.startswith("error: ") and msg in r.output and len(r.output.strip().splitlines()) == 1
    assert (busy / "notes.txt").read_text() == "mine"


def test_program_without_triton_gets_a_warning(tmp_path: Path) -> None:
    r = capture(tmp_path / "plain", sys.executable, "-c", "print('hello'); raise SystemExit(7)")
    assert r.returncode == 7 and r.stdout == "hello\n"
    assert "0 kernels" in r.stderr and "no Python process" in r.stderr


def test_no_gpu_and_no_target_names_the_option(tmp_path: Path) -> None:
    """Without a GPU and without --target, a program's launches fail before anything compiles (Triton finds no
    driver): the capture says which option captures without a GPU instead of only "0 kernels"."""
    from irdiff.compile import local_gpu_capability

    if local_gpu_capability() is not None:
        pytest.skip("a CUDA GPU is present: launches compile")
    prog = tmp_path / "launch.py"
    prog.write_text(
        "import torch, triton, triton.language as tl\n"
        "@triton.jit\n"
        "def scale(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)\n"
        "x = torch.ones(300)\n"
        "scale[(3,)](x, 300, BLOCK=128)\n"
    )
    cmd = [sys.executable, "-m", "irdiff", "capture", "-o", str(tmp_path / "c"), "--", sys.executable, str(prog)]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert r.returncode != 0  # the program's own failure, passed through
    assert "0 kernels" in r.stderr
    assert "no CUDA GPU here" in r.stderr and "--target" in r.stderr.split("no CUDA GPU here")[1]


def test_killed_program_gives_128_plus_signal(tmp_path: Path) -> None:
    r = capture(tmp_path / "killed", sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)")
    assert r.returncode == 128 + 15


def test_shadowed_sitecustomize_still_runs(tmp_path: Path) -> None:
    other = tmp_path / "site"
    other.mkdir()
    # (irdiff's own process runs it too, under the same PYTHONPATH: print only inside the captured program)
    (other / "sitecustomize.py").write_text(
        "import os\nif os.environ.get('IRDIFF_CAPTURE_DIR'):\n    print('their sitecustomize ran')\n"
    )
    env = dict(os.environ, PYTHONPATH=str(other))
    r = capture(tmp_path / "chain", sys.executable, "-c", "print('program')", env=env)
    assert r.returncode == 0
    assert r.stdout == "their sitecustomize ran\nprogram\n"


# --------------------------------------------------------------------------------------------- no compiles below


def test_program_command_and_config_round_trip(tmp_path: Path) -> None:
    assert program_command(["train.py", "--x"], python="/py") == ["/py", "train.py", "--x"]
    assert program_command(["-m", "pkg.mod"], python="/py") == ["/py", "-m", "pkg.mod"]
    assert program_command(["torchrun", "train.py"]) == ["torchrun", "train.py"]
    c = CaptureConfig(tmp_path, filter="^a", target="sm90", launches=3)
    assert CaptureConfig.from_env(c.to_env()) == c
    assert CaptureConfig.from_env({}) is None
    assert target_name({"backend": "cuda", "arch": 90, "warp_size": 32}) == "sm90"


def test_describe_arg() -> None:
    import torch

    t = torch.empty(8, 16, dtype=torch.bfloat16)[:, 1:]
    d = describe_arg(t)
    assert d["dtype"] == "bf16" and d["shape"] == [8, 15] and d["strides"] == [16, 1] and d["align"] == 2
    assert describe_arg(7) == 7 and describe_arg(None) is None and describe_arg(0.5) == 0.5


def test_ttir_signature_both_triton_versions_format() -> None:
    ttir = (
        'tt.func public @k(%x_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32} loc("x_ptr"(#loc)), '
        '%n: i32 loc("n"(#loc)), %arg2: !tt.ptr<bf16, 1> loc(unknown), %s: f32 loc("s"(#loc))) attributes {noinline = false} {'
    )
    got = [(s.name, s.summary()) for s in ttir_signature(ttir)]
    assert got == [("x_ptr", "*fp16 div16"), ("n", "i32"), ("arg2", "*bf16"), ("s", "fp32")]


def _variant(
    name: str,
    kernel: str,
    sig: list[tuple[str, str, int | None]],
    src: str = "",
    warps: int = 4,
    *,
    config: dict[str, int] | None = None,
    launches: tuple[int, int] | None = None,
    inductor_configs: int = 0,
) -> VariantResult:
    """A captured kernel as finalize leaves it: stage-0 parameters, then ``config`` constexprs; ``launches`` =
    (launches, of which an autotuner's benchmark runs); ``inductor_configs``: autotuning configs Inductor compiled."""
    specs = [ArgSpec(name=n, index=i, type=t, divisibility=d) for i, (n, t, d) in enumerate(sig)]
    for k, v in (config or {}).items():
        specs.append(ArgSpec(name=k, index=len(specs), type="constexpr", constexpr=str(v), is_constexpr_param=True))
    meta: dict[str, object] = {"fn_source": src} if src else {}
    if launches is not None:
        meta["launches"] = {"count": launches[0], "autotune": launches[1], "samples": []}
    if inductor_configs:
        meta["inductor"] = {"kernel_name": kernel, "config": config, "configs": inductor_configs}
    return VariantResult(
        name=name,
        kernel=kernel,
        specialization=specs,
        options={"num_warps": warps},
        metadata=meta,
        config={k: str(v) for k, v in (config or {}).items()},
    )


def _bundle(*vs: VariantResult) -> Bundle:
    return Bundle(suite="capture", target="sm90", variants={v.name: v for v in vs})


def test_pairing_rounds_without_compiles() -> None:
    body = "def {}(x_ptr, n):\n    offs = tl.arange(0, 128)\n    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)\n"
    ptr, n16, n = ("x_ptr", "*fp16", 16), ("n", "i32", 16), ("n", "i32", None)
    a = _bundle(
        _variant("k", "k", [ptr, n16]),
        _variant("k-2", "k", [ptr, n], warps=8),
        _variant("triton_per_fused_add_mean_0", "triton_per_fused_add_mean_0", [ptr]),
        _variant("old_name", "old_name", [ptr], src=body.format("old_name")),
        _variant("gone", "gone", [ptr], src="def gone(y):\n    return completely_different(y)\n"),
    )
    b = _bundle(
        _variant("k", "k", [ptr, n], warps=8),  # pairs with k-2 (same name, closest specialization)
        _variant("k-2", "k", [ptr, n16]),  # pairs with k (identical signature)
        _variant("triton_red_fused_add_mean_1", "triton_red_fused_add_mean_1", [ptr, ("ks0", "i32", None)]),
        _variant("new_name", "new_name", [ptr], src=body.format("new_name")),
    )
    p = pair_kernels(a, b)
    assert [(x.a, x.b, x.how) for x in p.pairs] == [
        ("k", "k-2", "name+signature"),
        ("k-2", "k", "name+signature"),
        ("triton_per_fused_add_mean_0", "triton_red_fused_add_mean_1", "fused ops"),
        ("old_name", "new_name", "source"),
    ]
    assert p.only_a == ["gone"] and p.only_b == []
    assert (
        inductor_stem("triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0") == "fused__to_copy_add_mean_mul_pow_rsqrt"
    )
    assert inductor_stem("add_kernel") is None
    assert source_similarity(a.variants["old_name"], b.variants["new_name"]) == 1.0


RED = "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0"
STATIC_SIG = [("in_ptr0", "*bf16", 16), ("xnumel", "i32", 16), ("r0_numel", "i32", 16)]
DYNAMIC_SIG = [("in_ptr0", "*bf16", 16), ("ks0", "i64", None), ("xnumel", "i32", None), ("r0_numel", "i32", None)]


def test_pairing_prefers_the_config_the_program_ran_over_autotuning_configs() -> None:
    """The H200 capture of a torch.compile'd RMSNorm: with static sizes TorchInductor compiled two configs of one
    reduction and benchmarked both (106 launches each), then ran R0_BLOCK=2048 (411 more); with dynamic sizes it
    compiled one. The dynamic kernel pairs with the config the program ran; the other config is listed as also
    compiled, not as only in static."""
    static = _bundle(
        _variant(RED, RED, STATIC_SIG, config={"XBLOCK": 1, "R0_BLOCK": 4096}, launches=(106, 106), inductor_configs=2),
        _variant(
            f"{RED}-2", RED, STATIC_SIG, config={"XBLOCK": 1, "R0_BLOCK": 2048}, launches=(517, 106), inductor_configs=2
        ),
    )
    dynamic = _bundle(_variant(RED, RED, DYNAMIC_SIG, config={"XBLOCK": 1, "R0_BLOCK": 2048}, launches=(411, 0)))
    p = pair_kernels(static, dynamic)
    assert [(x.a, x.b, x.how) for x in p.pairs] == [(f"{RED}-2", RED, "name")]
    assert p.only_a == [] and p.only_b == [] and p.also_a == {f"{RED}-2": [RED]} and p.also_b == {}
    q = pair_kernels(dynamic, static)  # the same from the other side
    assert [(x.a, x.b) for x in q.pairs] == [(RED, f"{RED}-2")] and q.also_b == {f"{RED}-2": [RED]}
    # The config the program ran wins even when the benchmarked-only one matches the other side's signature better.
    twin = _variant(RED, RED, DYNAMIC_SIG, config={"XBLOCK": 1, "R0_BLOCK": 2048}, launches=(106, 106))
    ran = _variant(f"{RED}-2", RED, STATIC_SIG, config={"XBLOCK": 1, "R0_BLOCK": 4096}, launches=(517, 106))
    p = pair_kernels(_bundle(twin, ran), dynamic)
    assert [(x.a, x.b, x.how) for x in p.pairs] == [(f"{RED}-2", RED, "name")] and p.also_a == {f"{RED}-2": [RED]}
    # The overview says what the other static kernel is.
    from irdiff.collections_diff.compare import CollectionDiff, render_overview

    p = pair_kernels(static, dynamic)
    text = render_overview(CollectionDiff(static, dynamic, "static", "dynamic", p), width=200)
    assert "only in static" not in text
    assert (
        f"also compiled in static: {RED}: another compile of {RED}-2 (paired) — R0_BLOCK=4096 (paired: 2048) — one "
        "of 2 autotuning configs TorchInductor compiled for this kernel — 106 launches, all by the autotuner's "
        "benchmark (not picked); paired: 517 (106 by the autotuner's benchmark)"
    ) in text


def test_pairing_tie_break_without_launch_counts() -> None:
    """No GPU, no launch counts: among kernels of one name the same signature wins, then the most similar
    signature, then the most similar source; the losers are alternatives of the winner."""
    body = "def k(x_ptr, n):\n    offs = tl.arange(0, 128)\n    tl.store(x_ptr + offs, tl.load(x_ptr + offs) {} 2)\n"
    ptr, n16, n = ("x_ptr", "*fp16", 16), ("n", "i32", 16), ("n", "i32", None)
    a = _bundle(
        _variant("k", "k", [ptr, n16], src=body.format("*")),
        _variant("k-2", "k", [ptr, n16], src=body.format("+")),  # same signature as k, source as B's k
        _variant("k-3", "k", [ptr, n], src=body.format("+")),
        _variant("other", "other", [ptr]),
    )
    b = _bundle(_variant("k", "k", [ptr, n16], src=body.format("+")), _variant("another", "another", [ptr]))
    p = pair_kernels(a, b)
    assert [(x.a, x.b, x.how) for x in p.pairs] == [("k-2", "k", "name+signature")]
    assert p.also_a == {"k-2": ["k", "k-3"]} and p.only_a == ["other"] and p.only_b == ["another"]
    # A launched kernel wins over an identical signature that never ran.
    a.variants["k-3"].metadata["launches"] = {"count": 5, "autotune": 0, "samples": []}
    b.variants["k"].metadata["launches"] = {"count": 5, "autotune": 0, "samples": []}
    p = pair_kernels(a, b)
    assert [(x.a, x.b, x.how) for x in p.pairs] == [("k-3", "k", "name")] and p.also_a == {"k-3": ["k", "k-2"]}


NAMES = st.sampled_from(["k", "triton_poi_fused_add_0", "triton_red_fused_add_1", "m", "other"])
SIGS = st.lists(st.tuples(st.sampled_from(["x", "y", "n"]), st.sampled_from(["*fp16", "i32", "constexpr"]),
                          st.sampled_from([None, 16])), max_size=3)  # fmt: skip


LAUNCHES = st.sampled_from([None, (0, 0), (5, 5), (9, 2)])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(NAMES, SIGS, LAUNCHES), max_size=6), st.lists(st.tuples(NAMES, SIGS, LAUNCHES), max_size=6))
def test_pairing_invariants(xs: list, ys: list) -> None:
    a = _bundle(*[_variant(f"{n}-{i}", n, s, launches=c) for i, (n, s, c) in enumerate(xs)])
    b = _bundle(*[_variant(f"{n}-{i}", n, s, launches=c) for i, (n, s, c) in enumerate(ys)])
    p = pair_kernels(a, b)
    also_a = [n for alts in p.also_a.values() for n in alts]
    also_b = [n for alts in p.also_b.values() for n in alts]
    left = [x.a for x in p.pairs] + p.only_a + also_a
    right = [x.b for x in p.pairs] + p.only_b + also_b
    assert sorted(left) == sorted(a.variants) and sorted(right) == sorted(b.variants)  # each kernel exactly once
    assert len(set(left)) == len(left) and len(set(right)) == len(right)
    for side, also in ((a, p.also_a), (b, p.also_b)):  # an alternative has the name of the paired kernel it follows
        paired = {x.a for x in p.pairs} if side is a else {x.b for x in p.pairs}
        assert all(k in paired and all(side.variants[n].kernel == side.variants[k].kernel for n in ns)
                   for k, ns in also.items())  # fmt: skip
    q = pair_kernels(b, a)
    assert len(q.pairs) == len(p.pairs)  # pairing does not depend on which side is A
    for x in p.pairs:
        if x.how in ("name+signature", "name"):
            assert a.variants[x.a].kernel == b.variants[x.b].kernel


@pytest.mark.gpu
def test_capture_records_launches_on_gpu(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "irdiff", "capture", "-o", str(tmp_path / "gpu"), "--no-explain", "--",
           sys.executable, str(SCRIPTS / "launch_kernels.py")]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("checksum ")
    b = load_bundle(tmp_path / "gpu")
    assert sorted(b.variants) == ["add_kernel", "scale_kernel"]
    launches = b.variants["add_kernel"].metadata["launches"]
    assert launches["count"] == 5
    grids = sorted(s["grid"][0] for s in launches["samples"])
    assert grids == [4, 64]  # distinct launches only: n = 4096 and n = 65536 with BLOCK 1024
    x = launches["samples"][0]["args"]["x_ptr"]
    assert x["dtype"] == "fp16" and x["strides"] == [1]


def test_mixed_input_kinds_name_the_mismatch(captures: dict, matmul_sm86: Bundle, tmp_path: Path) -> None:
    """Every pair of input kinds: comparable ones pass the check, the others fail with one line naming both kinds."""
    from irdiff.collections_diff.compare import input_kind, mixed_inputs_error

    root = captures["root"]
    inputs = {
        "a variant dir": Path(matmul_sm86.directory) / "annotated",
        "a bundle": Path(matmul_sm86.directory),
        "a capture": root / "before",
        "a Triton cache dir": captures["cache"],
        "a TRITON_KERNEL_DUMP dir": captures["dump"],
    }
    for kind, path in inputs.items():
        assert input_kind(path) == kind, path
    assert input_kind(root / "before" / "scale_rows") == "a variant dir"  # a capture's kernel is a variant dir too
    collections = ("a capture", "a Triton cache dir", "a TRITON_KERNEL_DUMP dir")
    for ka, pa in inputs.items():
        for kb, pb in inputs.items():
            err = mixed_inputs_error(pa, pb)
            if "a variant dir" in (ka, kb) and (ka in collections or kb in collections):
                assert err is not None and err.startswith(f"cannot mix {ka} with {kb}:"), err
            else:
                assert err is None, (ka, kb, err)
    # as a user sees it: one line, exit status 2, no traceback
    r = CliRunner().invoke(cli, ["diff", str(inputs["a variant dir"]), str(root / "before")])
    assert r.exit_code == 2, r.output
    assert r.output.strip().splitlines() == [r.output.strip()]
    assert "cannot mix a variant dir with a capture" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(cli, ["diff", str(captures["dump"]), str(root / "before" / "scale_rows")])
    assert r.exit_code == 2 and "cannot mix a TRITON_KERNEL_DUMP dir with a variant dir" in r.output, r.output
    empty = tmp_path / "empty"
    empty.mkdir()
    r = CliRunner().invoke(cli, ["diff", str(empty), str(root / "before")])
    assert r.exit_code == 2 and f"{empty} is not an irdiff bundle, variant dir or capture" in r.output, r.output
