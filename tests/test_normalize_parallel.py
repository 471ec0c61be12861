"""``irdiff.normalize.normalize_pair``: the second side normalized in a forked process gives exactly what two
``normalize`` calls give (lines, shapes, raw lines, columns, regions, and the per-line symbols and spans computed
when read), and the child never outlives its parent: stopped on an interruption, killed with a ``kill -9``-ed
parent, replaced by an in-process normalization when it fails."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from irdiff.bundle import Bundle
from irdiff.normalize import NormalizedStage, normalize, normalize_pair
from irdiff.normalize.parallel import Forked

ROOT = Path(__file__).resolve().parent.parent


def _same(got: NormalizedStage, ref: NormalizedStage) -> None:
    assert got.lines == ref.lines
    assert got.shapes == ref.shapes
    assert got.raw_line == ref.raw_line
    assert got.columns == ref.columns
    assert got.regions == ref.regions
    assert got.fallback == ref.fallback
    assert got.raw == ref.raw
    assert list(got.symbols) == list(ref.symbols)
    assert list(got.symbol_spans) == list(ref.symbol_spans)


def _gone(pid: int, within: float = 10.0) -> bool:
    """True once ``pid`` no longer runs (reaped, or a zombie of a dead parent being reaped by init)."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_pair_equals_two_calls_on_real_stages(matmul_sm86: Bundle) -> None:
    """Every stage of a real compile, both orders of the two variants, through the fork."""
    va, vb = list(matmul_sm86.variants.values())[:2]
    seen = 0
    for stage in ("ttir", "ttgir", "llir", "ptx", "sass"):
        ta, tb = va.text(stage), vb.text(stage)
        if not ta or not tb:
            continue
        for (x, kx), (y, ky) in (((ta, va.kernel), (tb, vb.kernel)), ((tb, vb.kernel), (ta, va.kernel))):
            na, nb = normalize_pair(stage, x, y, kx, ky, parallel=True)
            _same(na, normalize(stage, x, kx))
            _same(nb, normalize(stage, y, ky))
            assert sum(map(len, nb.symbols)) > 50  # real symbols, computed in this process when read
        seen += 1
    assert seen == 5


@pytest.mark.parametrize("stage", ["ptx", "ttgir", "llir", "sass"])
def test_pair_equals_two_calls_on_generated_functions(stage: str) -> None:
    """A fully unrolled function of each dialect (the large-function benchmark's generator, 0.2 MB) and an edited
    copy: what the child sends back is the serial result, byte for byte."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_align_large as gen
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    a = gen.STAGES[stage][0](0.2)
    b = gen.edit(a, seed=5, stage=stage)
    na, nb = normalize_pair(stage, a, b, "big_kernel", "big_kernel", parallel=True)
    _same(na, normalize(stage, a, "big_kernel"))
    _same(nb, normalize(stage, b, "big_kernel"))
    assert nb.lines != na.lines


def test_small_pairs_stay_in_process() -> None:
    """Below the size threshold nothing is forked (a small diff does not pay a process start)."""
    before = os.times().children_user + os.times().children_system
    text = "\t.reg .b32 %r<4>;\n\tmov.u32 %r1, %r2;\n"
    na, nb = normalize_pair("ptx", text, text.replace("%r2", "%r3"))
    assert na.lines[1] == nb.lines[1] == "\tmov.u32 %r0, %r1;"
    assert os.times().children_user + os.times().children_system == before


def test_a_failed_child_is_replaced_by_this_process() -> None:
    """A child that dies (here: killed by a signal) gives no result; normalize_pair then normalizes that side
    itself, so the caller sees the normal result."""
    child = Forked.start(lambda: os.kill(os.getpid(), signal.SIGKILL), "x")  # type: ignore[arg-type,return-value]
    assert child is not None
    pid = child.pid
    try:
        assert child.result() is None
    finally:
        child.close()
    assert _gone(pid)


def test_close_stops_a_running_child() -> None:
    """Interrupted while the child works (Ctrl-C raises in this process): close() kills and reaps it."""

    def slow() -> NormalizedStage:
        time.sleep(60)
        raise AssertionError("not stopped")

    child = Forked.start(slow, "x")
    assert child is not None
    pid = child.pid
    t0 = time.monotonic()
    child.close()
    assert time.monotonic() - t0 < 5
    assert _gone(pid)
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no zombie left


def test_child_dies_with_a_killed_parent() -> None:
    """``kill -9`` of the process that forked: the child (PR_SET_PDEATHSIG) does not stay behind."""
    script = (
        "import os, sys, time\n"
        "from irdiff.normalize.parallel import Forked\n"
        "child = Forked.start(lambda: time.sleep(120), 'x')\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        assert not _gone(pid, within=0.2)
    finally:
        parent.kill()
        parent.wait()
    assert _gone(pid)


def test_no_fork_while_other_threads_run() -> None:
    """A lock another thread holds would stay locked in a forked child: with threads running, no fork."""
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert Forked.start(lambda: normalize("ptx", "x"), "x") is None
    finally:
        stop.set()
        t.join()


def test_huge_stages_recompute_their_per_line_symbols(matmul_sm86: Bundle, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above RECOMPUTE_LINES a stage keeps no renaming tables; its per-line symbols and spans, computed by
    normalizing again when read, are those a stage that kept them gives (every stage of a real compile)."""
    import irdiff.normalize as N

    v = next(iter(matmul_sm86.variants.values()))
    seen = 0
    for stage in ("ttir", "ttgir", "llir", "ptx", "sass"):
        text = v.text(stage)
        if not text:
            continue
        monkeypatch.setattr(N, "RECOMPUTE_LINES", 10**9)
        kept = normalize(stage, text, v.kernel)
        monkeypatch.setattr(N, "RECOMPUTE_LINES", 10)
        forgot = normalize(stage, text, v.kernel)
        assert "lines>" in repr(forgot.symbols)  # not computed yet
        _same(forgot, kept)
        assert sum(map(len, forgot.symbols)) > 50
        seen += 1
    assert seen == 5


def test_when_the_second_side_is_forked(monkeypatch: pytest.MonkeyPatch) -> None:
    """By default only a pair whose SHORTER text has at least PARALLEL_CHARS characters forks, and only with an
    idle core; ``parallel`` overrides the default; raw texts and plain-text stages never fork. Whatever the
    decision, both sides are what two ``normalize`` calls give (each with its own kernel name and line range)."""
    import irdiff.normalize as N
    from irdiff.normalize import parallel

    started: list[str] = []
    real = Forked.start

    def spy(normalize_it, raw, again=None):  # type: ignore[no-untyped-def]
        started.append(raw)
        return real(normalize_it, raw, again)

    monkeypatch.setattr(parallel.Forked, "start", spy)
    idle = [True]
    monkeypatch.setattr(parallel, "idle_core", lambda: idle[0])
    a = ".visible .entry ka(\n)\n{\n\tmov.u32 %r4, %tid.x;\n\tret;\n}\n"
    b = ".visible .entry kb(\n)\n{\n\tadd.s32 %r9, %r7, 1;\n\tmov.u32 %r7, %r9;\n\tret;\n}\n"
    monkeypatch.setattr(N, "PARALLEL_CHARS", len(a))  # a is the shorter text
    for parallel_arg, is_idle, forks in ((None, True, True), (None, False, False), (True, False, True),
                                         (False, True, False)):  # fmt: skip
        for x, y, kx, ky in ((a, b, "ka", "kb"), (b, a, "kb", "ka")):
            idle[0] = is_idle
            started.clear()
            na, nb = normalize_pair("ptx", x, y, kx, ky, parallel=parallel_arg)
            assert started == ([y] if forks else [])
            _same(na, normalize("ptx", x, kx))
            _same(nb, normalize("ptx", y, ky))
            assert na.lines[0] == nb.lines[0] == ".visible .entry KERNEL("
    idle[0] = True
    monkeypatch.setattr(N, "PARALLEL_CHARS", len(a) + 1)  # the shorter text is one character short
    started.clear()
    normalize_pair("ptx", a, b, "ka", "kb")
    normalize_pair("ptx", b, a, "kb", "ka")
    assert started == []
    # raw texts and plain-text stages stay here even when asked to fork; ranges and names are each side's own
    py = "def ka(x):\n    return x\n\ndef kb(y):  \n    return ka(y)\n"
    for stage, raw, ra, rb in (("ptx", True, None, None), ("python", False, (1, 2), (4, 5)),
                               ("python", True, (4, 5), (1, 2))):  # fmt: skip
        text_a, text_b = (a, b) if stage == "ptx" else (py, py)
        started.clear()
        na, nb = normalize_pair(stage, text_a, text_b, "ka", "kb", raw=raw, line_range_a=ra, line_range_b=rb,
                                parallel=True)  # fmt: skip
        assert started == []
        _same(na, normalize(stage, text_a, "ka", raw=raw, line_range=ra))
        _same(nb, normalize(stage, text_b, "kb", raw=raw, line_range=rb))
    assert nb.lines == ["def ka(x):", "    return x"] and na.lines == ["def kb(y):  ", "    return ka(y)"]


def test_a_pair_whose_child_dies_is_normalized_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """normalize_pair with a child that dies before sending anything (killed by a signal): the second side is
    normalized in this process, the same result as a call of ``normalize``."""
    from irdiff.normalize import parallel

    real = Forked.start
    pids: list[int] = []

    def dying(normalize_it, raw, again=None):  # type: ignore[no-untyped-def]
        child = real(lambda: os.kill(os.getpid(), signal.SIGKILL), raw, again)  # type: ignore[arg-type,return-value]
        assert child is not None
        pids.append(child.pid)
        return child

    monkeypatch.setattr(parallel.Forked, "start", dying)
    a = ".visible .entry ka(\n)\n{\n\tmov.u32 %r4, %tid.x;\n\tret;\n}\n"
    b = a.replace("ka", "kb").replace("%r4", "%r8")
    na, nb = normalize_pair("ptx", a, b, "ka", "kb", parallel=True)
    assert len(pids) == 1 and _gone(pids[0])
    _same(na, normalize("ptx", a, "ka"))
    _same(nb, normalize("ptx", b, "kb"))
    assert nb.lines[3] == "\tmov.u32 %r0, %tid.x;" and nb.raw == b


def test_the_forked_side_is_normalized_here_only_when_its_symbols_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a fork, this process normalizes only the first side; the second side's per-line symbols and spans,
    when read, come from ONE normalization here that keeps its tables (also above RECOMPUTE_LINES, where a plain
    ``normalize`` result would normalize yet again), with the second side's own kernel name: the line whose
    kernel name stands before a register has its spans moved as in ``normalize``."""
    import irdiff.normalize as N

    a = ".visible .entry ka(\n)\n{\n\tmov.u32 %r4, %tid.x;\n\tret;\n}\n"
    b = ".visible .entry kbb(\n)\n{\n\tld.u64 %rd3, [kbb_param_0], %rd5;\n\tadd.s32 %r9, %r7, 1;\n\tret;\n}\n"
    ref_a, ref_b = normalize("ptx", a, "ka"), normalize("ptx", b, "kbb")
    assert ref_b.lines[3] == "\tld.u64 %rd0, [KERNEL_param_0], %rd1;" and ref_b.symbol_spans[3] == ((8, 12), (32, 36))
    real = N._normalize
    calls: list[tuple[str, str | None, object]] = []

    def spy(stage, text, kernel_name, *, raw, line_range, keep):  # type: ignore[no-untyped-def]
        calls.append(("a" if text == a else "b", kernel_name, keep))
        return real(stage, text, kernel_name, raw=raw, line_range=line_range, keep=keep)

    monkeypatch.setattr(N, "_normalize", spy)
    monkeypatch.setattr(N, "RECOMPUTE_LINES", 3)  # both sides count as huge: no renaming tables kept
    na, nb = normalize_pair("ptx", a, b, "ka", "kbb", parallel=True)
    assert calls == [("a", "ka", False)]  # the second side was normalized in the child
    assert nb.lines == ref_b.lines and nb.shapes == ref_b.shapes and nb.regions == ref_b.regions
    assert list(nb.symbols) == list(ref_b.symbols) and list(nb.symbol_spans) == list(ref_b.symbol_spans)
    assert calls == [("a", "ka", False), ("b", "kbb", True)]  # once, for symbols and spans together
    _same(na, ref_a)
    assert calls[2:] == [("a", "ka", True)]  # the first side: a normalize result above the threshold


def test_idle_core_reads_the_load_and_the_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """A core is idle when this process may run on two or more CPUs and the 1-minute load is at most their count
    minus one; one CPU, or a load average that cannot be read, is never idle."""
    from irdiff.normalize import parallel

    for cpus, load, idle in ((2, 0.5, True), (2, 1.0, True), (2, 1.01, False), (16, 14.9, True), (1, 0.0, False)):
        monkeypatch.setattr(os, "sched_getaffinity", lambda _pid, n=cpus: set(range(n)))
        monkeypatch.setattr(os, "getloadavg", lambda x=load: (x, 0.0, 0.0))
        assert parallel.idle_core() is idle, (cpus, load)

    def unreadable() -> tuple[float, float, float]:
        raise OSError("no load average")

    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3})
    monkeypatch.setattr(os, "getloadavg", unreadable)
    assert parallel.idle_core() is False
