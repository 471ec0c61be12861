"""First diverging pass (``irdiff/diagnose/passes.py``) on real ``--passes`` snapshots (Triton's ``MLIR_ENABLE_DUMP``).

Kernels: ``tests/suites/root_cases.py::warps`` (one softmax row kernel, ``num_warps`` 8 vs 4 on sm90; and the same
variant on sm80 vs sm90), from the shared compile cache, in both orders. Edited copies of real snapshots pin the
cases no compile gives on demand: a change only in module attributes that record an option, a pass only one side
runs, a missing snapshot file.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from irdiff.bundle import Bundle, VariantResult
from irdiff.diagnose.passes import _norm, first_diverging_pass, needs_pass_trace, pass_names

CASES = str(Path(__file__).parent / "suites" / "root_cases.py")


@pytest.fixture(scope="module")
def warps(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(CASES + "::warps", ["w8", "w4"], "sm90", passes=True)


def test_pass_names_read_the_snapshot_file_names() -> None:
    v = VariantResult("a", passes=["000-before-InlinerPass_.mlir", "012-after-CSEPass.mlir", "notes.txt"])
    assert pass_names(v) == ["InlinerPass", "CSEPass", "notes.txt"]


def test_num_warps_diverges_at_the_layout_pass_both_orders(warps: Bundle) -> None:
    w8, w4 = warps.variants["w8"], warps.variants["w4"]
    names = pass_names(w8)
    assert names == pass_names(w4) and names[0] == "InlinerPass"
    k = names.index("ConvertTritonToTritonGPU")
    for a, b, mine, theirs in ((w8, w4, "[8]", "[4]"), (w4, w8, "[4]", "[8]")):
        d = first_diverging_pass(a, b)
        assert d is not None
        assert (d.pass_name, d.index_a, d.index_b) == ("ConvertTritonToTritonGPU", k, k)
        assert d.records_only is False and d.code_pass == "ConvertTritonToTritonGPU"
        assert d.only_a == [] and d.only_b == []
        assert any(ln.startswith("-") and f"warpsPerCTA = {mine}" in ln for ln in d.hunk)
        assert any(ln.startswith("+") and f"warpsPerCTA = {theirs}" in ln for ln in d.hunk)
        assert d.hunk[0].startswith("@@") and not any(ln.startswith(("---", "+++")) for ln in d.hunk)
        # the normalized snapshot's own lines: the layout alias first, named by its content
        assert d.hunk[1].startswith(f"-#blocked_s1_t32_w{mine[1]}_o0 = #ttg.blocked<{{")
        assert d.hunk[1].endswith("order = [0]}>")
        assert len(d.hunk) == 40 and max(map(len, d.hunk)) <= 200
    # a variant against itself: every snapshot equal
    same = first_diverging_pass(w4, w4)
    assert same is not None and (same.pass_name, same.index_a, same.hunk, same.only_a) == ("", None, [], [])
    # no snapshots on one side: nothing to say
    assert first_diverging_pass(w4, VariantResult("x")) is None
    assert first_diverging_pass(VariantResult("x"), w4) is None


def test_target_change_records_only_then_code_both_orders(compile_suite) -> None:  # type: ignore[no-untyped-def]
    v80 = compile_suite(CASES + "::warps", ["w4"], "sm80", passes=True).variants["w4"]
    v90 = compile_suite(CASES + "::warps", ["w4"], "sm90", passes=True).variants["w4"]
    d = first_diverging_pass(v80, v90)
    assert d is not None
    # the first differing output is the module's ttg.target attribute, written by ConvertTritonToTritonGPU
    assert d.pass_name == "ConvertTritonToTritonGPU" and d.records_only is True
    assert d.code_pass != d.pass_name
    assert pass_names(v80)[d.index_a or 0] == pass_names(v90)[d.index_b or 0] == d.pass_name
    only80 = [n for n in pass_names(v80) if n not in pass_names(v90)]
    only90 = [n for n in pass_names(v90) if n not in pass_names(v80)]
    assert only80 and only90
    assert set(d.only_a) == set(only80) and set(d.only_b) == set(only90)
    r = first_diverging_pass(v90, v80)
    assert r is not None
    assert (r.pass_name, r.code_pass, r.records_only) == (d.pass_name, d.code_pass, True)
    assert (r.index_a, r.index_b, r.only_a, r.only_b) == (d.index_b, d.index_a, d.only_b, d.only_a)
    # Through the last snapshot no pass changes code for sm80 vs sm90 on this kernel (the targets differ from LLVM
    # IR on): no code pass, and the hunk shows the attribute change. (Read before the worker exited, the last
    # snapshot was cut at a path-dependent point, which read as a "code" difference in the LLVM dialect.)
    assert d.code_pass == ""
    assert any(ln.startswith("-") and "cuda:80" in ln for ln in d.hunk)
    assert d.hunk and max(map(len, d.hunk)) <= 200


def _copy(tmp: Path, src: VariantResult, name: str, picks: list[int], edit=None) -> VariantResult:  # type: ignore[no-untyped-def]
    """A variant whose snapshots are copies of ``src``'s snapshots ``picks`` (renumbered), each passed through
    ``edit(position, text)`` when given."""
    d = tmp / name
    (d / "passes").mkdir(parents=True)
    files = []
    for pos, i in enumerate(picks):
        text = (Path(src.directory) / "passes" / src.passes[i]).read_text()
        if edit is not None:
            text = edit(pos, text)
        fn = f"{pos:03d}-before-{pass_names(src)[i]}_.mlir"
        (d / "passes" / fn).write_text(text)
        files.append(fn)
    return VariantResult(name, kernel=src.kernel, directory=str(d), passes=files)


def test_edited_snapshots(warps: Bundle, tmp_path: Path) -> None:
    w4 = warps.variants["w4"]
    k = pass_names(w4).index("ConvertTritonToTritonGPU")
    picks = [k, k + 1, k + 2, k + 3]
    names = [pass_names(w4)[i] for i in picks]
    base = _copy(tmp_path, w4, "base", picks)

    def target(pos: int, text: str) -> str:
        return text.replace('"cuda:90"', '"cuda:80"')

    # only the option-recording attribute differs, in every output: records only, no code pass, hunk with attributes
    rec = _copy(tmp_path, w4, "rec", picks, target)
    d = first_diverging_pass(base, rec)
    assert d is not None and (d.pass_name, d.index_a, d.index_b) == (names[0], 0, 0)
    assert d.records_only is True and d.code_pass == ""
    assert any(ln.startswith("-") and "cuda:90" in ln for ln in d.hunk)
    assert any(ln.startswith("+") and "cuda:80" in ln for ln in d.hunk)

    # the same, and the third pass changes an op: records first, code at the third pass; hunk without attributes
    def target_and_code(pos: int, text: str) -> str:
        text = target(pos, text)
        return text.replace("arith.subf", "arith.addf") if pos >= 3 else text

    both = _copy(tmp_path, w4, "both", picks, target_and_code)
    d = first_diverging_pass(base, both)
    assert d is not None and d.pass_name == names[0] and d.records_only is True and d.code_pass == names[2]
    assert any(ln.startswith("-") and "arith.subf" in ln for ln in d.hunk)
    assert any(ln.startswith("+") and "arith.addf" in ln for ln in d.hunk)
    assert not any("cuda:" in ln for ln in d.hunk)

    # an op change alone at the last snapshot: the pass before it, not records-only
    def code(pos: int, text: str) -> str:
        return text.replace("arith.subf", "arith.addf") if pos == 3 else text

    d = first_diverging_pass(base, _copy(tmp_path, w4, "code", picks, code))
    assert d is not None and (d.pass_name, d.index_a, d.records_only, d.code_pass) == (names[2], 2, False, names[2])
    # one changed line: the header, one line of context on each side, the line removed and added
    assert len(d.hunk) == 5 and re.fullmatch(r"@@ -\d+,3 \+\d+,3 @@", d.hunk[0]), d.hunk
    assert d.hunk[1].startswith(" ") and d.hunk[4].startswith(" ")
    assert (
        d.hunk[2].startswith("-")
        and "arith.subf" in d.hunk[2]
        and d.hunk[3] == "+" + d.hunk[2][1:].replace("arith.subf", "arith.addf")
    )

    # a changed line longer than 200 characters (a long string attribute) is cut at 200
    def long(pos: int, text: str) -> str:
        return text.replace("arith.subf", 'arith.subf {irdiff.note = "' + "x" * 300 + '"}') if pos == 3 else text

    d = first_diverging_pass(base, _copy(tmp_path, w4, "long", picks, long))
    assert d is not None and [len(ln) for ln in d.hunk if ln.startswith("+")] == [200]

    # a single differing snapshot: that pass, and its own text as the hunk (the final module is not dumped)
    one_a = _copy(tmp_path, w4, "one_a", [k + 3])
    one_b = _copy(tmp_path, w4, "one_b", [k + 3], code)  # code() edits position 3 only: the same text
    d = first_diverging_pass(one_a, _copy(tmp_path, w4, "one_c", [k + 3], lambda p, t: code(3, t)))
    assert d is not None and (d.pass_name, d.index_a, d.index_b, d.records_only) == (names[3], 0, 0, False)
    assert any("arith.addf" in ln for ln in d.hunk)
    d = first_diverging_pass(one_a, one_b)
    assert d is not None and d.pass_name == "" and d.hunk == []

    # the dump's own header line (which names the pass options) is not IR
    hdr = _copy(tmp_path, w4, "hdr", picks, lambda p, t: t.replace("num-warps=4", "num-warps=16"))
    assert "num-warps=4" in (Path(base.directory) / "passes" / base.passes[0]).read_text()
    d = first_diverging_pass(base, hdr)
    assert d is not None and d.pass_name == ""

    # the kernel's own name is normalized away (the same pipeline under another kernel name is equal)
    renamed = _copy(tmp_path, w4, "renamed", picks, lambda p, t: t.replace("@" + w4.kernel, "@other_name"))
    renamed.kernel = "other_name"
    assert "@other_name" in (Path(renamed.directory) / "passes" / renamed.passes[1]).read_text()
    d = first_diverging_pass(base, renamed)
    assert d is not None and d.pass_name == ""

    # bytes that are not UTF-8 (a string constant in the IR) read as replacement characters, not an error
    def bad_bytes(path: Path) -> None:
        path.write_bytes(path.read_bytes().replace(b"tt.func", b"\xff\xfe tt.func", 1))

    raw_a, raw_b = _copy(tmp_path, w4, "raw_a", picks), _copy(tmp_path, w4, "raw_b", picks)
    for v in (raw_a, raw_b):
        bad_bytes(Path(v.directory) / "passes" / v.passes[1])
    d = first_diverging_pass(raw_a, raw_b)
    assert d is not None and d.pass_name == ""
    assert first_diverging_pass(base, raw_b).pass_name == names[0]  # type: ignore[union-attr]
    # option attributes blanked where only code counts
    mod = [ln for ln in _norm(base, base.passes[1], False) if ln.startswith("module")]
    assert mod == ["module attributes {, , , } {"]
    assert [ln for ln in _norm(base, base.passes[1], True) if ln.startswith("module")][0].count("ttg.") == 4

    # a pass that only one side runs is named, and the others still pair up
    extra = _copy(tmp_path, w4, "extra", [k, k + 1, k + 1, k + 2, k + 3], lambda p, t: t)
    extra.passes[2] = extra.passes[2].replace(names[1], "TritonExtraPass")
    (Path(extra.directory) / "passes" / "002-before-TritonGPUCoalesce_.mlir").rename(
        Path(extra.directory) / "passes" / extra.passes[2]
    )
    d = first_diverging_pass(base, extra)
    assert d is not None and d.pass_name == "" and d.only_a == [] and d.only_b == ["TritonExtraPass"]
    d = first_diverging_pass(extra, base)
    assert d is not None and d.only_a == ["TritonExtraPass"] and d.only_b == []

    # a snapshot file that cannot be read reads as empty: it differs from the real one
    gone = _copy(tmp_path, w4, "gone", picks)
    (Path(gone.directory) / "passes" / gone.passes[2]).unlink()
    d = first_diverging_pass(base, gone)
    assert d is not None and (d.pass_name, d.index_a) == (names[1], 1)


def test_needs_pass_trace(compile_suite) -> None:  # type: ignore[no-untyped-def]
    plain = compile_suite(CASES + "::warps", ["w8", "w4"], "sm90")
    w8, w4 = plain.variants["w8"], plain.variants["w4"]
    # same TTIR, different TTGIR, no snapshots: only a pass trace can say where
    assert needs_pass_trace(w8, w4) and needs_pass_trace(w4, w8)
    assert not needs_pass_trace(w4, w4)  # nothing later differs
    traced = compile_suite(CASES + "::warps", ["w8", "w4"], "sm90", passes=True)
    assert not needs_pass_trace(traced.variants["w8"], traced.variants["w4"])  # both carry snapshots already
    assert needs_pass_trace(traced.variants["w8"], w4)  # one side without: a trace is still needed
    # different TTIR: the source diff says where
    s = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80")
    assert not needs_pass_trace(s.variants["evict"], s.variants["keep"])
    assert not needs_pass_trace(VariantResult("x"), w4)
    # either later stage alone tells (the other one not saved)
    for stage in ("ttgir", "ptx"):
        only = dataclasses.replace(w4, stages={k: f for k, f in w4.stages.items() if k != stage})
        assert needs_pass_trace(w8, only) and needs_pass_trace(only, w8)
    neither = dataclasses.replace(w4, stages={k: f for k, f in w4.stages.items() if k not in ("ttgir", "ptx")})
    assert not needs_pass_trace(w8, neither)


def test_every_snapshot_is_whole(warps: Bundle) -> None:
    """Triton flushes its MLIR dump only at process exit (``mlirDumps()``, a static ``raw_fd_ostream``): the compile
    driver splits it after the worker exits, so the last snapshot ends like every other one (a closed module, then
    only complete ``#locN = loc(...)`` lines), never at a buffer boundary."""
    for v in warps.variants.values():
        assert len(v.passes) > 10
        for name in (v.passes[0], v.passes[-1]):
            text = (Path(v.directory) / "passes" / name).read_text()
            assert text.endswith("\n")
            lines = [ln for ln in text.splitlines() if ln.strip()]
            assert lines[0].startswith("// -----// IR Dump")
            ends = [i for i, ln in enumerate(lines) if re.fullmatch(r"\}( loc\(.*\))?", ln)]
            assert ends, name  # the module's closing brace, at column 0
            tail = lines[ends[-1] + 1 :]
            for ln in tail:
                assert re.fullmatch(r"#loc\d* = loc\(.*\)", ln) and ln.count("(") == ln.count(")"), (name, ln)
        assert not (Path(v.directory) / "passes.raw.mlir").exists()


@pytest.mark.parametrize("swap", [False, True], ids=["ttir-first", "ttir-second"])
def test_needs_pass_trace_needs_both_ttirs(tmp_path: Path, swap: bool) -> None:
    """A variant without TTIR gives no pass trace to ask for, even when the caller says the TTIR diff is identical
    (``ttir_identical=True``) and the TTGIR differs: only when both have TTIR does a later difference call for one.
    Small hand-written stage files (the function reads only the texts)."""
    for name, text in {"a.ttir": "module {}\n", "a.ttgir": "module { w8 }\n", "b.ttgir": "module { w4 }\n"}.items():
        (tmp_path / name).write_text(text)
    full = VariantResult("a", kernel="k", stages={"ttir": "a.ttir", "ttgir": "a.ttgir"}, directory=str(tmp_path))
    bare = VariantResult("b", kernel="k", stages={"ttgir": "b.ttgir"}, directory=str(tmp_path))
    both = dataclasses.replace(bare, stages={"ttir": "a.ttir", "ttgir": "b.ttgir"})
    pair = (bare, full) if swap else (full, bare)
    assert not needs_pass_trace(*pair, ttir_identical=True)
    assert not needs_pass_trace(*pair)
    assert needs_pass_trace(*((both, full) if swap else (full, both)), ttir_identical=True)  # both TTIRs: asked
