"""Compile progress: events per variant from the compile driver, drawn by rich on stderr only on a terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from irdiff.bundle import Bundle
from irdiff.cli import cli
from irdiff.compile import CompileRequest, compile_bundle
from irdiff.render.progress import progress_enabled

SUITE = str(Path(__file__).parent / "suites" / "configs_copy.py")


def test_events_per_variant(tmp_path: Path) -> None:
    """A fresh compile reports compiling → done per variant; the same request again reports cached."""
    events: list[tuple[str, str]] = []
    req = CompileRequest(SUITE, ["unit", "annotated"], "sm80", shape={"M": 64, "N": 192})
    b = compile_bundle(req, tmp_path / "a", command=[], progress=lambda n, e: events.append((n, e)))
    if all(v.cache_hit for v in b.variants.values()):  # an earlier run of this test filled irdiff's cache
        assert sorted(events) == [("annotated", "cached"), ("unit", "cached")]
    else:
        assert sorted(events) == sorted(
            [("unit", "compiling"), ("unit", "done"), ("annotated", "compiling"), ("annotated", "done")]
        )
        for n in ("unit", "annotated"):
            assert events.index((n, "done")) > events.index((n, "compiling"))
    again: list[tuple[str, str]] = []
    req2 = CompileRequest(SUITE, ["unit", "annotated"], "sm80", shape={"M": 64, "N": 192})
    compile_bundle(req2, tmp_path / "b", command=[], progress=lambda n, e: again.append((n, e)))
    assert sorted(again) == [("annotated", "cached"), ("unit", "cached")]


def test_progress_only_on_a_terminal() -> None:
    assert not progress_enabled(False, open(os.devnull, "w"))
    master, slave = os.openpty()
    try:
        assert progress_enabled(False, os.fdopen(os.dup(slave), "w"))
        assert not progress_enabled(True, os.fdopen(os.dup(slave), "w"))
    finally:
        os.close(master)
        os.close(slave)


def test_piped_and_quiet_runs_print_no_progress(matmul_sm86: Bundle, tmp_path: Path) -> None:
    for extra in ([], ["-q"]):
        r = CliRunner().invoke(
            cli, ["compile", "matmul", "--target", "sm86", "--save", str(tmp_path / f"b{len(extra)}"), *extra]
        )
        assert r.exit_code == 0, r.stderr
        assert "cached" not in r.stderr and "compiling" not in r.stderr


def test_progress_on_a_terminal_marks_cached_variants(matmul_sm86: Bundle, tmp_path: Path) -> None:
    """stderr on a real pseudo-terminal: one line per variant, cached ones marked, with elapsed time."""
    master, slave = os.openpty()
    cmd = [sys.executable, "-m", "irdiff", "compile", "matmul", "--target", "sm86", "--save", str(tmp_path / "t")]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, env={**os.environ, "COLUMNS": "100"})
    os.close(slave)
    out, _ = p.communicate(timeout=300)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    err = b"".join(chunks).decode("utf-8", "replace")
    assert p.returncode == 0
    assert "annotated: cached" in err and "unannotated: cached" in err
    assert "0:00:0" in err  # rich's elapsed-time column
    assert b"bundle:" in out and b"cached" in out  # stdout keeps its own summary
    cmd_q = [*cmd[:-1], str(tmp_path / "q"), "-q"]
    master, slave = os.openpty()
    p = subprocess.Popen(cmd_q, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    p.communicate(timeout=300)
    os.set_blocking(master, False)
    try:
        quiet = os.read(master, 65536)
    except OSError:
        quiet = b""
    os.close(master)
    assert b"cached" not in quiet
