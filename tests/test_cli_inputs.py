"""Strict inputs: every option is checked before anything is compiled, with a one-line ``error: …`` and exit 2;
plain output fits the terminal; counts have the right plural; the README lists every command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from irdiff.cli import cli, parse_shape
from irdiff.render.words import plural

ROOT = Path(__file__).resolve().parent.parent


def run(args: list[str], **env: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, args, env={"IRDIFF_NO_GPU_PROBE": "1", **env})
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["matmul", "--target", ""], "unsupported target ''"),
        (["matmul", "--target", "sm75"], "unsupported target 'sm75'"),
        (["compile", "matmul", "--target", " "], "unsupported target"),
        (["matmul", "--shape", "M=-5"], "sizes must be positive"),
        (["matmul", "--shape", "K=0"], "sizes must be positive"),
        (["matmul", "--shape", "M=4,M=8"], "given twice"),
        (["matmul", "--shape", "=8"], "expected NAME=INT"),
        (["matmul", "--shape", ""], "expected NAME=INT"),
        (["run", "matmul", "--shape", "N=-1"], "sizes must be positive"),
        (["matmul", "--config", ""], "expected an index"),
        (["matmul", "--config", "BLOCK_SIZE_M"], "expected an index"),
        (["matmul", "--config", "BLOCK_SIZE_M=abc"], "BLOCK_SIZE_M is an integer"),
        (["compile", "softmax", "--config", "num_warps=four"], "num_warps"),
        (["matmul", "--config", "num_stages=0"], "must be a positive integer"),
        (["matmul", "--config", "NOT_A_PARAM=3"], "not a parameter or option"),
        (["matmul", "-j", "-1"], "-1 is not in the range"),
        (["matmul", "--context", "-2"], "not in the range"),
        (["matmul", "--no-such-option"], "No such option"),
        (["matmul", "--color", "sometimes"], "sometimes"),
        # --shapes is checked before compiling, also when nothing will be timed (no GPU here, --no-run)
        (["matmul", "--shapes", "abc"], "'abc' is not a positive integer"),
        (["matmul", "--shapes", "Z=512"], "no dimension 'Z'"),
        (["matmul", "--shapes", "M=0"], "--shapes 'M=0'"),
        (["matmul", "--shape", "M=64", "--shapes", "Q=1,2"], "no dimension 'Q'"),
        (["run", "softmax", "--shapes", "N=x"], "--shapes 'N=x'"),
        (["run", "rmsnorm", "--interpret", "--shapes", "Z=4"], "no dimension 'Z'"),
        # two different configs for the two sides: named as typed, never a Python None
        (["matmul", "--variant", "annotated@1", "--against", "unannotated@2"], "--variant annotated@1 and --against"),
        (["matmul", "--variant", "annotated@1", "--config", "3"], "--variant annotated@1 and --config 3 name"),
        # an empty variant name silently meant the default pair; a config key given twice silently took the last
        (["matmul", "--variant", ""], "--variant '': give a variant name"),
        (["matmul", "--against", " "], "--against ' ': give a variant name"),
        (["compile", "matmul", "--variant", "unannotated", "--variant", ""], "--variant '': give a variant name"),
        (["show", "matmul", "--variant", ""], "--variant '': give a variant name"),
        (["run", "matmul", "--against", ""], "--against '': give a variant name"),
        (
            ["diff", str(ROOT / "tests" / "data" / "bundles" / "matmul-sm86"), "--variant", ""],
            "--variant '': give a variant name",
        ),
        (["matmul", "--config", "BLOCK_SIZE_M=64,num_warps=4,BLOCK_SIZE_M=32"], "BLOCK_SIZE_M is given twice"),
    ],
)
def test_bad_option_is_one_line_exit_2(args: list[str], says: str) -> None:
    code, out, err = run([*args, "--no-run"] if args[0] == "matmul" else args)
    assert code == 2, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert says in lines[0]
    assert "None" not in lines[0]
    assert "Traceback" not in err and not out.strip()


def test_parse_shape_accepts_good_input() -> None:
    assert parse_shape("M=4096, N=512") == {"M": 4096, "N": 512}
    assert parse_shape(None) == {}


def test_plural() -> None:
    assert plural(1, "kernel") == "1 kernel"
    assert plural(0, "kernel") == "0 kernels"
    assert plural(2, "launch", "launches") == "2 launches"


@pytest.mark.parametrize("columns", [60, 80, 100])
def test_list_fits_the_terminal(columns: int) -> None:
    code, out, _ = run(["list"], COLUMNS=str(columns))
    assert code == 0
    assert max(len(ln) for ln in out.splitlines()) <= columns
    assert re.search(r"^  annotated\s+wrapper", out, re.M)
    # Every variant of every built-in suite is still listed.
    for name in ("unannotated", "persistent-noflatten", "dns", "i64", "stages1"):
        assert re.search(rf"^  {name}\s", out, re.M), name


def test_list_takes_suite_paths_like_the_other_commands() -> None:
    """``irdiff list path.py`` lists every suite the file defines (the name to give other commands, then the variants),
    ``path.py::name`` one, a built-in name one; a missing file, an unknown suite or a file without suites is one line,
    exit 2 (``list`` took no argument before)."""
    kinds = str(ROOT / "tests" / "suites" / "bad_launch.py")
    code, out, err = run(["list", kinds])
    assert code == 0, err
    heads = [ln for ln in out.splitlines() if not ln.startswith(" ")]
    assert heads[:2] == [f"{kinds}::missing-arg", f"{kinds}::missing-constexpr"] and len(heads) == 8, out
    assert re.search(r"^  plain\n  clamped$", out, re.M)
    code, out, err = run(["list", f"{ROOT / 'tests' / 'suites' / 'readme_add.py'}::suite", "softmax"])
    assert code == 0, err
    assert [ln.split(":")[0] for ln in out.splitlines() if not ln.startswith(" ")][-1] == "softmax"
    assert re.search(r"^  dns_param_hint$", out, re.M) and "readme_add.py::add" in out
    for args, says in [
        (["list", "nope/missing.py"], "does not exist"),
        (["list", f"{kinds}::nope"], "has no suite 'nope'"),
        (["list", str(ROOT / "irdiff" / "textsafe.py")], "defines no irdiff.suite.Suite"),
        (["list", "matmull"], "did you mean 'matmul'"),
    ]:
        code, out, err = run(args)
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1, (args, err)


def test_readme_lists_every_command() -> None:
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## Commands") :]
    table = table[: table.index("\n\n", table.index("|"))]
    for name in cli.commands:  # type: ignore[attr-defined]
        assert f"`irdiff {name} " in table or f"`irdiff {name}`" in table, f"README's command table lacks {name}"


RECORDED = ROOT / "tests" / "data" / "bundles" / "matmul-sm86"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["report", str(RECORDED), "-o", "{m}/x.html"], "{m}/x.html: directory {m} does not exist"),
        (["report", str(RECORDED), "-o", "{m}/deeper/x.md"], "directory {m}/deeper does not exist"),
        (["matmul", "--target", "sm86", "--no-run", "--html", "{m}/r.html"], "directory {m} does not exist"),
        (["matmul", "--target", "sm86", "--no-run", "--json-report", "{m}/r.json"], "directory {m} does not exist"),
        (["compile", "matmul", "--target", "sm86", "--save", "{m}/B"], "--save {m}/B: directory {m} does not exist"),
        (["capture", "-o", "{m}/C", "--", "python", "-c", "pass"], "-o {m}/C: directory {m} does not exist"),
        (["diff", f"{RECORDED}/annotated", f"{RECORDED}/unannotated", "--reports", "{m}/R"], "--reports {m}/R"),
        (["sweep", "{plan}", "--out", "{m}/S"], "--out {m}/S: directory {m} does not exist"),
        (["report", str(RECORDED), "-o", "{file}/x.html"], "{file} is not a directory"),
    ],
)
def test_no_directory_is_created_that_was_not_asked_for(tmp_path: Path, args: list[str], says: str) -> None:
    """A report file or a directory irdiff is asked to create goes into a directory that exists: a missing parent is
    one line, exit 2, and nothing is created (``report -o /missing/dir/x.html`` made both directories)."""
    (tmp_path / "a-file").write_text("x")
    plan = tmp_path / "p.toml"
    plan.write_text('name = "p"\n[[suite]]\nname = "matmul"\n')
    fill = {"m": str(tmp_path / "missing"), "file": str(tmp_path / "a-file"), "plan": str(plan)}
    before = sorted(tmp_path.rglob("*"))
    code, out, err = run([a.format(**fill) for a in args])
    assert code == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: "), err
    assert says.format(**fill) in err, err
    assert sorted(tmp_path.rglob("*")) == before
