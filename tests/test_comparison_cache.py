"""The comparison cache (irdiff/comparison_cache.py, issue 17 item 8): a warm comparison renders byte for byte what a
cold one renders in every format; an edited variant, another option, other irdiff sources or a damaged entry give a
freshly computed result, never a stale one and never an error."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from irdiff import comparison_cache as cc
from irdiff.bundle import STAGES, Bundle, load_bundle
from irdiff.cli import cli
from irdiff.pipeline import build_comparison
from irdiff.render import Comparison
from irdiff.render.report import FORMATS
from irdiff.render.terminal import TerminalOptions, render

RECORDED = Path(__file__).parent / "data" / "bundles" / "matmul-sm86"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh irdiff cache directory for this test (the comparison cache lives in ``<cache>/comparisons``)."""
    monkeypatch.setenv("IRDIFF_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "comparisons"


@pytest.fixture
def recorded(tmp_path: Path) -> Bundle:
    """A private copy of the recorded matmul bundle (its texts may be edited by a test)."""
    shutil.copytree(RECORDED, tmp_path / "b")
    return load_bundle(tmp_path / "b")


def outputs(
    c: Comparison, monkeypatch: pytest.MonkeyPatch, formats: tuple[str, ...] = tuple(FORMATS)
) -> dict[str, str]:
    """Renderings of ``c``: terminal (plain, coloured, side by side, every stage) and the report ``formats`` (the
    HTML report's per-render CSP nonce fixed)."""
    import irdiff.render.html as html

    monkeypatch.setattr(html.secrets, "token_urlsafe", lambda n=16: "NONCE")
    out = {
        "terminal": render(c, TerminalOptions(color=False, width=100, hunk_stages=("python", "ttir", "ttgir"))),
        "color": render(c, TerminalOptions(color=True, width=140, theme="light")),
        "side": render(c, TerminalOptions(color=False, width=160, side_by_side=True)),
    }
    out.update({name: FORMATS[name].render(c) for name in formats})
    return out


def entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.json.z")) if cache.is_dir() else []


def test_warm_renders_byte_identical_to_cold(matmul_sm86: Bundle, cache: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Every stage (Python to SASS) of a real compile, both orders: the entry written by the first comparison is
    read back by the second (no normalization, alignment or diagnosis runs: they are made to fail), and it renders
    the same bytes as a comparison computed without the cache (every format in one order, the terminal and
    Markdown in the other: the HTML of all six stages is the slow part)."""
    import irdiff.align as align
    import irdiff.diagnose as diagnose

    for a, b, formats in (("annotated", "unannotated", tuple(FORMATS)), ("unannotated", "annotated", ("md",))):
        cold = build_comparison(matmul_sm86, a, b, cache=False)
        build_comparison(matmul_sm86, a, b)  # computed again, and stored
        with monkeypatch.context() as m:
            m.setattr(align, "diff_stage", lambda *x, **k: pytest.fail("aligned although cached"))
            m.setattr(diagnose, "diagnose", lambda *x, **k: pytest.fail("diagnosed although cached"))
            warm = build_comparison(matmul_sm86, a, b)
        assert warm.diagnosis is not None and warm.diagnosis.findings
        assert [d.stage for d in warm.stage_diffs] == ["python", "ttir", "ttgir", "llir", "ptx", "sass"]
        assert outputs(warm, monkeypatch, formats) == outputs(cold, monkeypatch, formats)
    assert len(entries(cache)) == 2


def test_cli_outputs_identical_cold_and_warm(tmp_path: Path, cache: Path) -> None:
    """``irdiff diff`` and ``irdiff report`` of the recorded bundle, twice: the second run reads the entry the
    first wrote, and the terminal output and the Markdown, JSON and HTML reports are the same bytes (the HTML
    report's nonce aside)."""
    runs = []
    for k in range(2):
        out = tmp_path / f"run{k}"
        out.mkdir()
        r = CliRunner().invoke(cli, ["diff", str(RECORDED), "--color", "never", "--paging", "never", "--stage", "all"])
        assert r.exit_code == 0, r.output
        files = {}
        for ext in ("md", "json", "html"):
            rr = CliRunner().invoke(cli, ["report", str(RECORDED), "-o", str(out / f"r.{ext}")])
            assert rr.exit_code == 0, rr.output
            files[ext] = (out / f"r.{ext}").read_text()
        files["html"] = __import__("re").sub(r'nonce="[^"]+"|nonce-[A-Za-z0-9_-]+', "NONCE", files["html"])
        for ext in files:  # the run that wrote each report (its own -o path and time) differs by design
            files[ext] = __import__("re").sub(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d\S*", "TIME", files[ext])
            files[ext] = files[ext].replace(f"run{k}", "runK")
        runs.append((r.output, files))
        assert len(entries(cache)) == 1
    assert runs[0] == runs[1]


def test_edited_variant_gets_a_new_result(recorded: Bundle, cache: Path) -> None:
    """An edited kernel gives other IR: a new key, and the comparison shows the edit (never the stored result)."""
    a, b = "annotated", "unannotated"
    before = build_comparison(recorded, a, b)
    key = cc.comparison_key(recorded, a, b, ["python", "ttir", "ttgir"], False, 3)
    ttgir = Path(recorded.variants[a].path("ttgir") or "")
    text = ttgir.read_text()
    at = text.index("tt.return")
    ttgir.write_text(text[:at] + 'tt.print " edited " {hex = false, isSigned = array<i32>} : \n    ' + text[at:])
    assert cc.comparison_key(recorded, a, b, ["python", "ttir", "ttgir"], False, 3) != key
    after = build_comparison(recorded, a, b)
    diff = next(d for d in after.stage_diffs if d.stage == "ttgir")
    old = next(d for d in before.stage_diffs if d.stage == "ttgir")
    assert any(r.a_text and "edited" in r.a_text for r in diff.lines)
    assert diff.removed == old.removed + 1
    assert len(entries(cache)) == 2
    # the variant record counts too (e.g. another compile's metadata), and so does the timing the bundle holds
    recorded.variants[b].metadata["num_warps"] = 8
    assert cc.comparison_key(recorded, a, b, ["python", "ttir", "ttgir"], False, 3) != key
    recorded.variants[b].metadata.pop("num_warps")
    recorded.runs = {"timing": {"shapes": []}}
    assert cc.comparison_key(recorded, a, b, ["python", "ttir", "ttgir"], False, 3) != key


def test_every_option_that_changes_the_result_is_in_the_key(recorded: Bundle, cache: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Another context, stage list, ``--raw``, pair order or irdiff source digest: a new entry, computed afresh
    (the results differ where the option shows); the same options again: no new entry."""
    a, b = "annotated", "unannotated"
    base = build_comparison(recorded, a, b, context=3)
    ctx1 = build_comparison(recorded, a, b, context=1)
    assert len(entries(cache)) == 2
    assert sum(len(h.lines) for d in ctx1.stage_diffs for h in d.hunks) < sum(
        len(h.lines) for d in base.stage_diffs for h in d.hunks
    )
    only = build_comparison(recorded, a, b, stages="ttgir")
    assert [d.stage for d in only.stage_diffs] == ["ttgir"]
    raw = build_comparison(recorded, a, b, raw=True)
    assert raw.raw and any("loc(" in ln for d in raw.stage_diffs for ln in d.a.lines)
    swapped = build_comparison(recorded, b, a)
    assert swapped.diagnosis is not None and swapped.diagnosis.a == b
    assert len(entries(cache)) == 5
    build_comparison(recorded, a, b, context=1)
    assert len(entries(cache)) == 5
    monkeypatch.setattr(cc, "_SOURCES", "0" * 64)  # an edit to normalize/align/diagnose
    build_comparison(recorded, a, b, context=1)
    assert len(entries(cache)) == 6


def _damaged(data: bytes) -> list[bytes]:
    """Ways an entry can be damaged: truncated, bytes flipped, not zlib, and well-formed JSON that lies (an index
    or a span out of range, a wrong type, another format, a field missing)."""
    doc = json.loads(zlib.decompress(data))
    lies = []
    for change in (
        lambda d: d["stage_diffs"][1]["lines"]["a"].__setitem__(0, 10**6),  # a row's line index out of range
        lambda d: d["stage_diffs"][1]["lines"]["b"].__setitem__(0, -2),
        lambda d: d["stage_diffs"][1]["lines"]["a"].pop(),  # columns of different lengths
        lambda d: d["stage_diffs"][1]["lines"].__setitem__("tag", "x" + d["stage_diffs"][1]["lines"]["tag"][1:]),
        lambda d: d["stage_diffs"][1]["lines"]["a"].__setitem__(0, True),
        lambda d: d["stage_diffs"][2]["lines"]["sa"][0].__setitem__(2, 10**6),  # a span past its line's end
        lambda d: d["stage_diffs"][2]["lines"]["sa"][0].__setitem__(0, 10**6),  # spans of no row
        lambda d: d["stage_diffs"][2]["lines"]["sa"].append(d["stage_diffs"][2]["lines"]["sa"][0]),  # row twice
        lambda d: d["stage_diffs"][2]["lines"]["sa"][0].append(1),  # an odd number of offsets
        lambda d: d["stage_diffs"][2]["lines"]["at"].append([10**6, "x"]),  # a text of no row
        lambda d: d["stage_diffs"][2]["lines"]["bt"].append([0, 7]),  # a text that is not one
        lambda d: d["stage_diffs"][1]["a"]["lines"].__setitem__(0, 7),
        lambda d: d["stage_diffs"][1]["hunks"][0].__setitem__("rows", [10**6, 3]),
        lambda d: d["diagnosis"]["findings"][0].__setitem__("severity", "fatal"),
        lambda d: d["diagnosis"]["findings"][0].pop("causes"),
        lambda d: d.__setitem__("format", "irdiff.comparison-cache/0"),
        lambda d: d["stage_diffs"][1]["a"]["shapes"].pop(),
    ):
        d = json.loads(json.dumps(doc))
        change(d)
        lies.append(zlib.compress(json.dumps(d).encode()))
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x55
    return [data[: len(data) // 2], bytes(flipped), b"{}", b"", *lies]


def test_damaged_entries_are_recomputed(recorded: Bundle, cache: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A damaged or lying entry is a miss: the comparison is computed again (the same output as a cold one) and the
    entry rewritten, never trusted and never an error."""
    a, b = "annotated", "unannotated"
    want = outputs(build_comparison(recorded, a, b, cache=False), monkeypatch, ("md", "json"))
    build_comparison(recorded, a, b)
    (entry,) = entries(cache)
    good = entry.read_bytes()
    key = entry.name.removesuffix(".json.z")
    texts = {s: (recorded.variants[a].text(s), recorded.variants[b].text(s)) for s in STAGES}
    assert cc.load(key, a, b, texts) is not None
    for bad in _damaged(good):
        entry.write_bytes(bad)
        assert cc.load(key, a, b, texts) is None
        assert outputs(build_comparison(recorded, a, b), monkeypatch, ("md", "json")) == want
        assert entry.read_bytes() == good  # rewritten by the recomputation
    entry.write_bytes(good)
    assert cc.load(key, "unannotated", "annotated", texts) is None  # an entry of another pair: not used


def test_codec_knows_every_field() -> None:
    """A field added to a class of the comparison makes every entry a miss until the codec stores it."""
    assert cc._known_layout()


def test_diagnose_package_imports_only_its_data_model() -> None:
    """Reading a cached comparison imports the data model, not the rules and fact extractors (the warm main job's
    cost): ``import irdiff.diagnose`` stays light, and its re-exported names still resolve."""
    code = (
        "import sys, irdiff.diagnose as d, irdiff.comparison_cache\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('irdiff.diagnose.', 'irdiff.run', 'irdiff.render'))"
        " and m != 'irdiff.diagnose.model')\n"
        "print(heavy)\n"
        "print(len(d.KEY_COUNTS) > 0, callable(d.count_ops), callable(d.extract_facts), len(d.RULE_IDS) > 0)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.splitlines() == ["[]", "True True True True"]


def test_pass_trace_decision_from_a_cached_comparison(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The main job decides whether a pass trace is needed (TTIR identical, a later stage not) from the cached
    comparison's TTIR diff when there is one: a pair whose passes-less comparison was cached by ``irdiff diff``
    is still compiled again with per-pass snapshots, and the first diverging pass is named. (The session's irdiff
    cache: its compiles are shared with test_root.)"""
    suite = str(Path(__file__).parent / "suites" / "root_cases.py") + "::warps"
    b = tmp_path / "b"
    r = CliRunner().invoke(cli, ["compile", suite, "--target", "sm90", "--save", str(b)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["diff", str(b), "--color", "never", "--paging", "never"])
    assert r.exit_code == 0, r.output
    from irdiff.pipeline import cached_comparison

    bundle = load_bundle(b)
    a, bb = bundle.pair
    known = cached_comparison(bundle, a, bb)
    assert known is not None and not any(v.passes for v in bundle.variants.values())
    assert next(d for d in known.stage_diffs if d.stage == "ttir").identical  # the case the decision is about
    import irdiff.diagnose.passes as passes

    told: list[object] = []
    real = passes.needs_pass_trace
    monkeypatch.setattr(passes, "needs_pass_trace", lambda va, vb, t=None: told.append(t) or real(va, vb, t))
    r = CliRunner().invoke(cli, ["compare", suite, "--target", "sm90", "--no-run", "--json", "--save", str(b)])
    assert r.exit_code == 0, r.output
    assert "per-pass snapshots" in r.stderr and told == [True]  # decided from the cached TTIR diff
    out = json.loads(r.stdout)
    assert "first diverging pass: `ConvertTritonToTritonGPU`" in out["findings"][0]["title"]


def test_warm_main_job_reads_its_comparison_once_and_normalizes_nothing() -> None:
    """A repeated main job prints its stored output (nothing decoded or rendered; the pass-trace decision reads the
    TTIR verdict stored with it, the one a comparison of this pair gives); a warm main job whose output is not
    stored (here: made to miss) looks its comparison up once (the pass-trace decision and the printed comparison
    share it). Neither imports a normalizer or line matcher (the TTIR check used to normalize and align TTIR on
    every run; the aligner imports rapidfuzz on first use) nor, coloured, a lexer (the tokens of the shown lines are
    in ``<cache>/tokens``); all print the first run's output, plain and coloured (the session's irdiff cache: the
    first run may be cold or warm)."""
    probe = (
        "import os, runpy, sys\n"
        "import irdiff.comparison_cache as cc, irdiff.diagnose.passes as passes\n"
        "real, real_out, real_trace = cc.load, cc.load_output, passes.needs_pass_trace\n"
        "calls, outs, said = [], [], []\n"
        "cc.load = lambda *a, **k: calls.append(1) or real(*a, **k)\n"
        "miss = os.environ.get('PROBE_MISS') == '1'\n"
        "cc.load_output = lambda *a, **k: outs.append(1) or (None if miss else real_out(*a, **k))\n"
        "passes.needs_pass_trace = lambda va, vb, t=None: said.append(t) or real_trace(va, vb, t)\n"
        "sys.argv = ['irdiff'] + sys.argv[1:]\n"
        "try:\n    runpy.run_module('irdiff', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "print('PROBE', len(calls), len(outs), said, sorted(m for m in sys.modules if m.startswith(('irdiff.normalize.',"
        " 'irdiff.lexers', 'pygments.lexers', 'rapidfuzz')) and m not in ('irdiff.normalize.model',)), file=sys.stderr)\n"
    )
    env = {**__import__("os").environ, "IRDIFF_NO_GPU_PROBE": "1"}
    args = ["matmul", "--variant", "annotated", "--against", "unannotated", "--target", "sm86", "--no-run",
            "--paging", "never", "-q"]  # fmt: skip
    for color in ("never", "always"):
        runs = [
            subprocess.run(
                [sys.executable, "-c", probe, *args, "--color", color],
                capture_output=True,
                text=True,
                env={**env, "PROBE_MISS": miss},
                timeout=600,
            )  # fmt: skip
            for miss in ("0", "0", "1")
        ]
        assert [r.returncode for r in runs] == [0, 0, 0], runs[0].stderr + runs[1].stderr + runs[2].stderr
        assert runs[0].stdout == runs[1].stdout == runs[2].stdout
        stored, missed = (next(ln for ln in r.stderr.splitlines() if ln.startswith("PROBE")) for r in runs[1:])
        # matmul's annotated and unannotated TTIR differ (the divisibility hints), so no pass trace is needed
        assert stored == "PROBE 0 1 [False] []", stored
        assert missed == "PROBE 1 1 [False] []", missed


def test_sources_digest_covers_the_pipeline_not_the_renderers(tmp_path: Path) -> None:
    """An edit to a module the comparison is computed by (a rule, the aligner, a normalizer) changes
    :func:`sources_digest`; an edit to a renderer, the command line or a bytecode cache does not (a copy of the
    package, digested in a fresh interpreter each time)."""
    pkg = tmp_path / "irdiff"
    shutil.copytree(Path(cc.__file__).parent, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    code = "import irdiff.comparison_cache as cc, sys; assert cc.__file__.startswith(sys.argv[1]); print(cc.sources_digest())"

    def digest() -> str:
        env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path)}
        r = subprocess.run([sys.executable, "-B", "-c", code, str(pkg)], capture_output=True, text=True, env=env,
                           cwd=tmp_path)  # fmt: skip
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    first = digest()
    assert digest() == first
    for rel in ("render/terminal.py", "cli.py", "__main__.py"):
        (pkg / rel).write_text((pkg / rel).read_text() + "\n# edited\n")
    (pkg / "render" / "__pycache__").mkdir(exist_ok=True)
    (pkg / "render" / "__pycache__" / "x.pyc").write_bytes(b"junk")
    (pkg / "__pycache__").mkdir(exist_ok=True)
    (pkg / "__pycache__" / "y.pyc").write_bytes(b"junk")
    assert digest() == first
    for rel in ("align.py", "diagnose/roots.py", "normalize/mlir.py"):
        text = (pkg / rel).read_text()
        (pkg / rel).write_text(text + "\n# edited\n")
        assert digest() != first, rel
        (pkg / rel).write_text(text)
    assert digest() == first
    (pkg / "diagnose" / "new_rule.py").write_text("X = 1\n")
    assert digest() != first


def test_output_sources_digest_covers_the_whole_package(tmp_path: Path) -> None:
    """A rendered output depends on every file of the package: an edit to a renderer, the command line or a
    module of the pipeline changes :func:`output_sources_digest`; a bytecode cache does not (a copy of the
    package, digested in a fresh interpreter each time)."""
    pkg = tmp_path / "irdiff"
    shutil.copytree(Path(cc.__file__).parent, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    code = "import irdiff.comparison_cache as cc, sys; assert cc.__file__.startswith(sys.argv[1]); print(cc.output_sources_digest())"

    def digest() -> str:
        env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path)}
        r = subprocess.run([sys.executable, "-B", "-c", code, str(pkg)], capture_output=True, text=True, env=env,
                           cwd=tmp_path)  # fmt: skip
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    first = digest()
    (pkg / "render" / "__pycache__").mkdir(exist_ok=True)
    (pkg / "render" / "__pycache__" / "x.pyc").write_bytes(b"junk")
    assert digest() == first
    for rel in ("render/terminal.py", "render/views.py", "cli.py", "__main__.py", "align.py", "textsafe.py"):
        text = (pkg / rel).read_text()
        (pkg / rel).write_text(text + "\n# edited\n")
        assert digest() != first, rel
        (pkg / rel).write_text(text)
    assert digest() == first


def _diff(*args: str) -> str:
    r = CliRunner().invoke(cli, ["diff", *args, "--paging", "never"])
    assert r.exit_code == 0, r.output
    return r.output


def test_repeated_command_prints_its_stored_output(tmp_path: Path, cache: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``irdiff diff`` of the recorded bundle, again: the output is the first run's, read from ``<cache>/outputs``
    (nothing is decoded or rendered: both are made to fail). Every render option, the pair, the comparison's
    options and the bundle's place are in the output's key: each change renders afresh, and prints what a run
    with a cache of its own prints."""
    import irdiff.pipeline as pipeline
    import irdiff.render.terminal as terminal

    plain = ["--color", "never"]
    first = _diff(str(RECORDED), *plain)
    assert len(list((cache.parent / "outputs").glob("*.txt.z"))) == 1
    with monkeypatch.context() as m:
        m.setattr(terminal, "render", lambda *a, **k: pytest.fail("rendered although its output is cached"))
        m.setattr(pipeline, "build_comparison", lambda *a, **k: pytest.fail("compared although cached"))
        m.setattr(cc, "load", lambda *a, **k: pytest.fail("decoded although its output is cached"))
        assert _diff(str(RECORDED), *plain) == first
    shutil.copytree(RECORDED, tmp_path / "copy")
    rendered: list[int] = []
    real = terminal.render
    monkeypatch.setattr(terminal, "render", lambda *a, **k: rendered.append(1) or real(*a, **k))
    for args in (
        [str(RECORDED), "--color", "never", "--width", "90"],
        [str(RECORDED), "--color", "always"],
        [str(RECORDED), "--color", "always", "--theme", "light"],
        [str(RECORDED), "--color", "always", "--theme", "mono"],
        [str(RECORDED), *plain, "--side-by-side"],
        [str(RECORDED), *plain, "--stage", "ttir,ttgir"],
        [str(RECORDED), *plain, "--stage", "ttgir"],
        [str(RECORDED), *plain, "--stage0", "full"],
        [str(RECORDED), *plain, "--context", "1"],
        [str(RECORDED), *plain, "--variant", "unannotated", "--against", "annotated"],
        [str(tmp_path / "copy"), *plain],  # the same content elsewhere: the header names the other directory
        [str(RECORDED / "annotated"), str(RECORDED / "unannotated"), *plain],  # two variant directories
    ):
        rendered.clear()
        got = _diff(*args)
        assert rendered == [1], args  # a miss: rendered afresh
        with monkeypatch.context() as m:
            m.setenv("IRDIFF_CACHE_DIR", str(tmp_path / "fresh"))  # a cache of its own: computed and rendered anew
            assert got == _diff(*args), args
        if args[0] == str(RECORDED):
            assert got != first, args  # an option that shows
        rendered.clear()
        assert _diff(*args) == got and rendered == [], args  # and now stored
    monkeypatch.setattr(cc, "_OUTPUT_SOURCES", "0" * 64)  # an edit to a renderer or the command line
    rendered.clear()
    assert _diff(str(RECORDED), *plain) == first and rendered == [1]


def test_stored_outputs_are_untrusted(recorded: Bundle, cache: Path) -> None:
    """An output entry is read back only when it is well formed and inert: terminal controls other than the
    colour escapes of a coloured output (a title or clear-screen sequence, a C1 control, a bidirectional override),
    another format or key, a wrong type or a damaged file are misses, never printed and never an error."""
    key = "k" * 40
    path = cache.parent / "outputs" / f"{key}.txt.z"
    assert cc.load_output(key, False) is None  # nothing stored
    assert cc.store_output(key, "plain\n", True)
    assert cc.load_output(key, False) == cc.CachedOutput("plain\n", True)
    assert cc.store_output(key, "\x1b[0;1;38;5;75mttgir\x1b[0m\tx\n", None)
    assert cc.load_output(key, True) == cc.CachedOutput("\x1b[0;1;38;5;75mttgir\x1b[0m\tx\n", None)
    assert cc.load_output(key, False) is None  # colour escapes in what should be a plain output
    good = path.read_bytes()
    for text in ("\x1b]0;owned\x07x\n", "\x1b[2J\n", "a\x9bb\n", "a\u202eb\n", "a\x07\n", "\x1b[0m\x1bc\n"):
        assert cc.store_output(key, text, False)
        assert cc.load_output(key, True) is None and cc.load_output(key, False) is None, repr(text)
    doc = json.loads(zlib.decompress(good))
    for change in (
        lambda d: d.__setitem__("format", "irdiff.output-cache/0"),
        lambda d: d.__setitem__("key", "x" * 40),
        lambda d: d.__setitem__("text", ["a"]),
        lambda d: d.__setitem__("ttir_identical", 1),
        lambda d: d.pop("ttir_identical"),
        lambda d: d.__setitem__("extra", 1),
    ):
        d = json.loads(json.dumps(doc))
        change(d)
        path.write_bytes(zlib.compress(json.dumps(d).encode()))
        assert cc.load_output(key, True) is None, d
    for bad in (good[: len(good) // 2], b"", b"junk", zlib.compress(b"[1, 2]"), zlib.compress(b"\xff\xfe")):
        path.write_bytes(bad)
        assert cc.load_output(key, True) is None


def test_stored_output_keeps_the_ttir_verdict(recorded: Bundle, cache: Path) -> None:
    """The pass-trace decision of a repeated main job reads whether TTIR was identical from the output entry: it
    is the comparison's own verdict (both orders of a pair whose TTIR differs, one whose TTIR is the same), and
    None for a raw comparison or one without TTIR."""
    from irdiff.pipeline import store_output

    for a, b in (("annotated", "unannotated"), ("unannotated", "annotated"), ("annotated", "annotated")):
        c = build_comparison(recorded, a, b, stages="python,ttir,ttgir")
        ttir = next(d for d in c.stage_diffs if d.stage == "ttir")
        assert ttir.identical == (a == b)
        assert store_output("t" * 40, c, "x\n")
        assert cc.load_output("t" * 40, False) == cc.CachedOutput("x\n", a == b)
    for c in (build_comparison(recorded, "annotated", "unannotated", raw=True, stages="ttir"),
              build_comparison(recorded, "annotated", "unannotated", stages="ttgir")):  # fmt: skip
        assert store_output("t" * 40, c, "x\n")
        assert cc.load_output("t" * 40, False) == cc.CachedOutput("x\n", None)


def test_repeated_main_job_after_a_pass_trace(tmp_path: Path) -> None:
    """A pair whose TTIR is identical (num_warps only): the main job compiles again with per-pass snapshots and
    prints the first diverging pass; the same command again prints the same output (read back from the output
    cache once the bundle holds the snapshots), never the output of the snapshot-less comparison. (The session's
    irdiff cache: its compiles are shared with test_root.)"""
    suite = str(Path(__file__).parent / "suites" / "root_cases.py") + "::warps"
    args = ["compare", suite, "--target", "sm90", "--no-run", "--color", "never", "--paging", "never", "-q", "--save",
            str(tmp_path / "b")]  # fmt: skip
    runs = [CliRunner().invoke(cli, args) for _ in range(3)]
    assert [r.exit_code for r in runs] == [0, 0, 0], runs[0].output
    assert "per-pass snapshots" in runs[0].stderr
    assert "ConvertTritonToTritonGPU" in runs[0].stdout  # the first diverging pass, named in the findings
    assert runs[1].stdout == runs[2].stdout == runs[0].stdout
    assert all(v.passes for v in load_bundle(tmp_path / "b").variants.values())
