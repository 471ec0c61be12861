"""What a new user hit from the README (stop 11): only the variants a command asks for decide its output and exit
status (an old compile failure in the same bundle does not), a variant compared with itself is accepted alike by
compare, diff and report, bare ``irdiff`` prints click's help, a first compile interrupted leaves no bundle
directory, a suite's bad tensor names its argument, and reports name the run that wrote them.

Every test drives the real CLI in subprocesses (``python -m irdiff``) on kernels written here into ``tmp_path``
(edited between runs), with a private ``IRDIFF_CACHE_DIR``; compiles are real (Triton, sm90).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VIEW = ["--no-run", "--color", "never", "--paging", "never", "--target", "sm90", "-q"]

# Four variants: two that compile and differ (a copy, a copy times three), and two kinds of compile failure (a
# tl.arange whose range is not a power of 2, an undefined name). `RANGE` is edited by the tests.
SUITE = """
import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def copy_rows(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


@triton.jit
def triple_rows(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n) * 3.0, mask=offs < n)


@triton.jit
def ranged_rows(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, RANGE)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


@triton.jit
def named_rows(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n) * not_defined_here, mask=offs < n)


rows = Suite(
    name="rows",
    variants={
        "copy": Variant(copy_rows),
        "triple": Variant(triple_rows),
        "ranged": Variant(ranged_rows),
        "named": Variant(named_rows),
    },
    args=lambda s: {"src": Tensor((s["N"],), "fp32"), "dst": Tensor((s["N"],), "fp32", output=True), "n": s["N"]},
    shape={"N": 4096},
    constexprs={"BLOCK": 256},
    options={"num_warps": 4},
    grid=lambda s, meta: (triton.cdiv(s["N"], meta["BLOCK"]),),
)
"""


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(ROOT), IRDIFF_CACHE_DIR=str(cache), IRDIFF_NO_GPU_PROBE="1", COLUMNS="120")
    env.pop("NO_COLOR", None)
    return env


def irdiff(*args: str, cache: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "irdiff", *args], capture_output=True, text=True, env=_env(cache), cwd=cwd, timeout=600
    )


def _suite(tmp_path: Path, arange: int) -> str:
    path = tmp_path / "rows_suite.py"
    path.write_text(SUITE.replace("tl.arange(0, RANGE)", f"tl.arange(0, {arange})"))
    return f"{path}::rows"


def _errors(r: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in r.stderr.splitlines() if line.startswith("error:")]


def test_only_the_requested_variants_decide_output_and_exit_status(tmp_path: Path) -> None:
    """A variant that failed to compile earlier stays recorded in the suite's bundle; comparing, compiling or
    showing other variants of that bundle prints their output and exits 0 (before: nothing printed, exit 1, "error:
    variant 'ranged' failed to compile", also with --no-cache and after the kernel was fixed, quoting the old line).
    A failing side still fails in either order, naming itself; once fixed in the file it is compiled again, with
    and without --no-cache (a failure is never reused)."""
    cache = tmp_path / "cache"
    suite = _suite(tmp_path, 96)

    r = irdiff(suite, "--variant", "ranged", "--against", "copy", *VIEW, cache=cache, cwd=tmp_path)
    assert r.returncode == 1 and r.stdout == "", r.stderr
    assert _errors(r) == ["error: variant 'ranged' failed to compile: "
                          "CompilationError: ValueError: arange's range must be a power of 2"], r.stderr  # fmt: skip
    assert "tl.arange(0, 96)" in r.stderr

    for args in (
        ["--variant", "copy", "--against", "triple"],
        ["--variant", "triple", "--against", "copy", "--no-cache"],
    ):
        r = irdiff(suite, *args, *VIEW, cache=cache, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert "ranged" not in r.stderr and "ranged" not in r.stdout and not _errors(r)
        assert "3.0" in r.stdout or "3.000000e+00" in r.stdout  # the multiplication is the difference shown

    # the other kind of failure (an undefined name), in both orders: the failing side is the one named
    for args in (["--variant", "copy", "--against", "named"], ["--variant", "named", "--against", "copy"]):
        r = irdiff(suite, *args, *VIEW, cache=cache, cwd=tmp_path)
        assert r.returncode == 1 and r.stdout == "", r.stderr
        errors = _errors(r)
        assert len(errors) == 1 and errors[0].startswith("error: variant 'named' failed to compile:"), r.stderr
        assert "not_defined_here" in r.stderr and "ranged" not in r.stderr

    r = irdiff(suite, "--variant", "copy", "--against", "triple", *VIEW, cache=cache, cwd=tmp_path)
    assert r.returncode == 0 and not _errors(r), r.stderr
    r = irdiff("compile", suite, "--variant", "triple", "--target", "sm90", cache=cache, cwd=tmp_path)
    assert r.returncode == 0 and not _errors(r), r.stderr
    assert r.stdout.startswith("triple: triple_rows sm90") and "named" not in r.stdout
    r = irdiff("show", suite, "--variant", "copy", "--stage", "ttir", "--color", "never", "--paging", "never",
               "--target", "sm90", cache=cache, cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0 and "tt.load" in r.stdout and not _errors(r), r.stderr
    # compiling every variant still reports both failures and exits 1
    r = irdiff("compile", suite, "--target", "sm90", cache=cache, cwd=tmp_path)
    assert r.returncode == 1
    assert sorted(e.split("'")[1] for e in _errors(r)) == ["named", "ranged"], r.stderr

    _suite(tmp_path, 256)  # the user fixes the kernel: it compiles now, and the old failure is not what is shown
    r = irdiff(suite, "--variant", "copy", "--against", "triple", *VIEW, cache=cache, cwd=tmp_path)
    assert r.returncode == 0 and not _errors(r), r.stderr
    for extra in ([], ["--no-cache"]):
        r = irdiff(suite, "--variant", "ranged", "--against", "copy", *VIEW, *extra, cache=cache, cwd=tmp_path)
        assert r.returncode == 0 and not _errors(r), r.stderr
        assert "arange(0, 96)" not in r.stderr
        assert "ranged_rows" in r.stdout and "copy_rows" in r.stdout


def test_a_variant_against_itself_is_accepted_by_compare_diff_and_report(tmp_path: Path) -> None:
    """``irdiff SUITE --variant X --against X`` is accepted (reported identical) and records that pair; ``irdiff
    diff BUNDLE`` and ``irdiff report BUNDLE`` then show the same pair (before: exit 2, "--variant and --against
    are both 'X'"), and so do they when both sides are named. A bundle of one variant without that pair recorded
    is refused in one line (a side would be chosen to be the other), and a real pair compared afterwards becomes
    the recorded pair again, in either order."""
    cache = tmp_path / "cache"
    suite = _suite(tmp_path, 256)
    r = irdiff(suite, "--variant", "triple", "--against", "triple", *VIEW, cache=cache, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("triple and triple are identical after normalization")
    (bundle,) = [d for d in (cache / "bundles").iterdir() if d.is_dir()]
    assert json.loads((bundle / "manifest.json").read_text())["pair"] == ["triple", "triple"]

    r = irdiff("diff", str(bundle), "--color", "never", "--paging", "never", cache=cache, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("triple and triple are identical") and "the pair its manifest records" in r.stderr
    r = irdiff("report", str(bundle), "-o", "same.json", cache=cache, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rep = json.loads((tmp_path / "same.json").read_text())
    assert (rep["a"]["name"], rep["b"]["name"], rep["identical"]) == ("triple", "triple", True)
    # the report names the run that wrote it, beside the one that compiled the bundle
    assert rep["command"][1:] == [suite, "--variant", "triple", "--against", "triple", *VIEW]
    assert rep["report_command"] == ["irdiff", "report", str(bundle), "-o", "same.json"]
    assert rep["report_created"] >= rep["created"]
    r = irdiff("report", str(bundle), "-o", "same.html", cache=cache, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "same.html").read_text()
    assert 'report written by</dt><dd><code class="cmd">irdiff report' in html and "-o same.html" in html

    one = tmp_path / "one"
    r = irdiff("compile", suite, "--variant", "copy", "--target", "sm90", "--save", str(one), cache=cache, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = irdiff("diff", str(one), "--color", "never", cache=cache, cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [f"error: {one}: only 'copy' is there to compare; name both sides "
                                     "(--variant copy --against copy compares it with itself)"]  # fmt: skip
    r = irdiff(
        "diff", str(one), "--variant", "copy", "--against", "copy", "--color", "never", cache=cache, cwd=tmp_path
    )
    assert r.returncode == 0 and r.stdout.startswith("copy and copy are identical"), r.stderr

    for a, b in (("copy", "triple"), ("triple", "copy")):
        r = irdiff(suite, "--variant", a, "--against", b, *VIEW, cache=cache, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        r = irdiff("report", str(bundle), "-o", "pair.json", "--force", cache=cache, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        rep = json.loads((tmp_path / "pair.json").read_text())
        assert (rep["a"]["name"], rep["b"]["name"], rep["identical"]) == (a, b, False)


def test_bare_irdiff_prints_clicks_help(tmp_path: Path) -> None:
    """``irdiff`` alone prints click's multi-line help (usage, options, every command) on stderr with exit status 2,
    as click does for a group without a command, not one squashed ``error: Usage: …`` line; other usage errors
    stay one line."""
    env = _env(tmp_path / "cache")
    r = subprocess.run([sys.executable, "-m", "irdiff"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines[0] == "Usage: irdiff [OPTIONS] COMMAND [ARGS]..." and "error" not in r.stderr
    assert "Commands:" in lines and "Options:" in lines
    assert {ln.split()[0] for ln in lines[lines.index("Commands:") + 1 :] if ln.strip()} >= {
        "compare", "compile", "diff", "list", "report", "show"}  # fmt: skip
    r = subprocess.run([sys.executable, "-m", "irdiff", "--nope"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2 and r.stderr.splitlines() == ["error: No such option '--nope'. (see 'irdiff --help')"]


def test_ctrl_c_in_the_first_compile_leaves_no_bundle_directory(tmp_path: Path) -> None:
    """Ctrl-C while the very first compile of a suite runs (workers started, no manifest yet): exit 130, and the
    cache holds no bundle directory (before: an empty ``bundles/<suite>-sm90-<hash>`` was left) nor a temporary;
    the next run compiles and succeeds."""
    cache = tmp_path / "cache"
    suite = _suite(tmp_path, 256)
    p = subprocess.Popen([sys.executable, "-m", "irdiff", suite, "--variant", "copy", "--against", "triple", *VIEW],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(cache), cwd=tmp_path)  # fmt: skip
    deadline = time.monotonic() + 120
    while not list((cache / "results").glob(".tmp-*")) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert p.poll() is None, "the compile finished before any worker started"
    assert [d.name for d in (cache / "bundles").iterdir() if d.is_dir()], "the bundle directory is made before workers"
    p.send_signal(signal.SIGINT)
    _out, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert [d.name for d in (cache / "bundles").iterdir() if d.is_dir() or not d.name.endswith(".lock")] == []
    assert not list((cache / "results").glob(".tmp-*"))
    r = irdiff(suite, "--variant", "copy", "--against", "triple", *VIEW, cache=cache, cwd=tmp_path)
    assert r.returncode == 0, r.stderr


BAD_ARGS = """
import triton
import triton.language as tl

from irdiff.suite import Scalar, Suite, Tensor, Variant


@triton.jit
def scale(src, dst, alpha, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n) * alpha, mask=offs < n)


def _args(s):
    return dict(
        src=Tensor((s["N"],), "fp32"),
        dst=Tensor((s["N"],), DST, output=True),
        alpha=ALPHA, n=s["N"],
    )


wrong = Suite(
    name="wrong",
    variants={"a": Variant(scale), "b": Variant(scale)},
    args=lambda s: {"src": Tensor((s["N"],), SRC), "dst": Tensor((s["N"],), "fp32", output=True), "alpha": 2.0, "n": s["N"]},
    shape={"N": 1024},
    constexprs={"BLOCK": 1024},
)
keywords = Suite(name="keywords", variants={"a": Variant(scale), "b": Variant(scale)}, args=_args, shape={"N": 1024},
                 constexprs={"BLOCK": 1024})
"""


@pytest.mark.parametrize(
    ("ref", "src", "dst", "alpha", "says"),
    [
        ("wrong", '"float33"', '"fp32"', "2.0", "args(shape) argument 'src' (bad_args.py:25): unknown dtype 'float33'"),
        ("keywords", '"fp32"', '"fp17"', "2.0", "args(shape) argument 'dst' (bad_args.py:17): unknown dtype 'fp17'"),
        ("keywords", '"fp32"', '"fp32"', 'Scalar(2.0, "float")',
         "args(shape) argument 'alpha' (bad_args.py:18): Scalar type 'float' is not one of"),
    ],
)  # fmt: skip
def test_a_bad_argument_of_args_names_suite_variant_and_argument(
    tmp_path: Path, ref: str, src: str, dst: str, alpha: str, says: str
) -> None:
    """An unknown dtype (or Scalar type) in a suite's ``args(shape)`` is one line naming the suite file, the suite,
    the variant and the argument (a dict entry of a lambda, or a keyword of ``dict(...)`` in a function), exit 2
    (before: only ``unknown dtype 'float33'; known: …``)."""
    path = tmp_path / "bad_args.py"
    path.write_text(BAD_ARGS.replace("SRC", src).replace("DST", dst).replace("ALPHA", alpha))
    r = irdiff(f"{path}::{ref}", "--variant", "a", "--against", "b", *VIEW, cache=tmp_path / "cache", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"error: suite file {path}, suite '{ref}', variant 'a': {says}"), line


def test_the_runner_names_the_argument_too(tmp_path: Path) -> None:
    """``irdiff run`` (and ``--ncu``) build the inputs through :func:`irdiff.suite.example_args`, which says the
    argument and line of a bad tensor as the compile does; a suite's own exception that is not about a tensor
    passes unchanged."""
    from irdiff.suite import SuiteError, example_args, load_suite

    path = tmp_path / "bad_args.py"
    path.write_text(BAD_ARGS.replace("SRC", '"fp32"').replace("DST", '"f32"').replace("ALPHA", "2.0"))
    with pytest.raises(SuiteError) as e:
        example_args(load_suite(f"{path}::keywords"), "b", {"N": 64})
    assert str(e.value).startswith("args(shape) argument 'dst' (bad_args.py:17): unknown dtype 'f32'; known: ")
    good = load_suite(f"{path}::wrong")
    with pytest.raises(KeyError):
        example_args(good, "a", {})  # no N: the suite's own KeyError, for the caller to word


def test_a_failed_compile_exits_1_with_json_and_reports_too(tmp_path: Path) -> None:
    """The compile failure's exit status is 1 whatever the output asked for: the terminal comparison, ``--json``,
    ``--explain`` or a report file (``--json`` exited 2, the usage-error status, with a second error line); nothing
    goes to stdout and no report file is written; the failing side is named in either order."""
    cache = tmp_path / "cache"
    suite = _suite(tmp_path, 96)
    for extra in (
        ["--json"],
        ["--explain", "spec.constexpr-changed"],
        ["--md", str(tmp_path / "r.md")],
        ["--html", str(tmp_path / "r.html")],
        [],
    ):
        for pair in (["--variant", "ranged", "--against", "copy"], ["--variant", "copy", "--against", "ranged"]):
            r = irdiff(suite, *pair, *VIEW, *extra, cache=cache, cwd=tmp_path)
            assert r.returncode == 1 and r.stdout == "", (extra, r.stderr)
            assert _errors(r) == ["error: variant 'ranged' failed to compile: "
                                  "CompilationError: ValueError: arange's range must be a power of 2"], r.stderr  # fmt: skip
    assert not (tmp_path / "r.md").exists() and not (tmp_path / "r.html").exists()
