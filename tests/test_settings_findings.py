"""Settings findings (irdiff/diagnose/settings.py) read directly, on real compiles with per-pass snapshots
(``--passes``): ``tests/suites/settings_variants.py::tiles`` on sm90 with and without ``DISABLE_MMA_V3`` (a Triton knob
that turns off ``wgmma``), and ``tests/suites/root_cases.py::warps`` compiled for sm80 and sm90 (the bundles
``tests/test_passes.py`` uses, from the shared compile cache). Records of other releases and of old bundles are the
same real records with their ``settings`` edited (what an older irdiff or another Triton environment writes); a kernel
edited outside its own lines is a copy of the real variant directory. ``tests/test_settings.py`` runs the same
findings through ``diagnose`` and the CLI."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from irdiff.bundle import Bundle, VariantResult
from irdiff.diagnose.model import Finding
from irdiff.diagnose.passes import PassDivergence, pass_names
from irdiff.diagnose.settings import (
    KNOWN_KNOBS,
    SettingChange,
    link_to_settings,
    same_source,
    settings_diff,
    settings_findings,
)

SUITES = Path(__file__).parent / "suites"
TILES = f"{SUITES / 'settings_variants.py'}::tiles"
CASES = f"{SUITES / 'root_cases.py'}::warps"
# An older release and its ptxas, as its environment records them (neither is a release CI runs: both differ from the
# current one under Triton 3.6 and 3.9).
OLD_TRITON = "3.3.1"
OLD_PTXAS = "ptxas V12.4.131"


@pytest.fixture(scope="module")
def tiles(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(TILES, ["on_sm90", "no_wgmma"], "sm90", passes=True)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def w80(compile_suite) -> VariantResult:  # type: ignore[no-untyped-def]
    return compile_suite(CASES, ["w4"], "sm80", passes=True).variants["w4"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def w90(compile_suite) -> VariantResult:  # type: ignore[no-untyped-def]
    return compile_suite(CASES, ["w4"], "sm90", passes=True).variants["w4"]  # type: ignore[no-any-return]


def _edit(v: VariantResult, **settings: object) -> VariantResult:
    """The same record with some settings as another Triton environment would have written them."""
    return dataclasses.replace(v, settings={**v.settings, **settings})


def _texts(f: Finding) -> list[tuple[str, str, str]]:
    return [(e.variant, e.stage, e.text) for e in f.evidence]


# ------------------------------------------------------------------------------------------------ settings_diff


def test_recorded_settings_of_real_compiles(tiles: Bundle, w80: VariantResult, w90: VariantResult) -> None:
    on, off = tiles.variants["on_sm90"], tiles.variants["no_wgmma"]
    assert settings_diff(on, off) == [SettingChange("env.DISABLE_MMA_V3", "", "1")]
    assert settings_diff(off, on) == [SettingChange("env.DISABLE_MMA_V3", "1", "")]
    # Triton 3.9 assembles sm80 with its bundled ptxas and sm90 with ptxas-blackwell; 3.6 uses one ptxas for both
    p80, p90 = w80.settings["ptxas"], w90.settings["ptxas"]
    assert p80.startswith("ptxas V") and p90.startswith(("ptxas V", "ptxas-blackwell V"))
    assmb = [SettingChange("ptxas", p80, p90)] if p80 != p90 else []
    assert settings_diff(w80, w90) == [SettingChange("target", "sm80", "sm90"), *assmb]
    assert settings_diff(w90, w80) == [
        SettingChange("target", "sm90", "sm80"),
        *(SettingChange(c.key, c.b, c.a) for c in assmb),
    ]
    assert settings_diff(on, on) == [] and settings_findings("x", "y", on, on) == []


def test_diff_order_and_values(w90: VariantResult) -> None:
    """Target, Triton, ptxas, then each environment variable by name; a value set on both sides but different is
    quoted as both values."""
    old = _edit(w90, target="sm80", triton=OLD_TRITON, ptxas=OLD_PTXAS, env={"Z_KNOB": "1", "A_KNOB": "x"})
    new = _edit(w90, env={"A_KNOB": "y", "DISABLE_LLVM_OPT": "1"})
    assert settings_diff(old, new) == [
        SettingChange("target", "sm80", "sm90"),
        SettingChange("triton", OLD_TRITON, w90.settings["triton"]),
        SettingChange("ptxas", OLD_PTXAS, w90.settings["ptxas"]),
        SettingChange("env.A_KNOB", "x", "y"),
        SettingChange("env.DISABLE_LLVM_OPT", "", "1"),
        SettingChange("env.Z_KNOB", "1", ""),
    ]


def test_bundles_without_recorded_settings_fall_back_to_the_record(w80: VariantResult, w90: VariantResult) -> None:
    """A bundle made before ``settings`` were recorded: the variant's ``target``, ``metadata["triton_version"]`` and
    ptxas version from its resources stand in; a value missing on one side is no difference."""
    a = dataclasses.replace(w80, settings={})
    b = dataclasses.replace(w90, settings={})
    p80, p90 = w80.resources.ptxas_version, w90.resources.ptxas_version
    assert [(x.key, x.a, x.b) for x in settings_diff(a, b)] == [
        ("target", "sm80", "sm90"),
        *([("ptxas", p80, p90)] if p80 != p90 else []),
    ]
    c = dataclasses.replace(
        w90,
        settings={},
        metadata={**w90.metadata, "triton_version": OLD_TRITON},
        resources=dataclasses.replace(w90.resources, ptxas_version=OLD_PTXAS),
    )
    assert [(x.key, x.a, x.b) for x in settings_diff(b, c)] == [
        ("triton", w90.metadata["triton_version"], OLD_TRITON),
        ("ptxas", w90.resources.ptxas_version, OLD_PTXAS),
    ]
    unknown = dataclasses.replace(
        w90, settings={}, target="", metadata={}, resources=dataclasses.replace(w90.resources, ptxas_version="")
    )
    assert settings_diff(a, unknown) == [] and settings_diff(unknown, a) == []


# ------------------------------------------------------------------------------------------------ findings


@pytest.mark.parametrize("swap", [False, True])
def test_env_knob_finding_names_the_pass_that_picks_the_mma(tiles: Bundle, swap: bool) -> None:
    """``DISABLE_MMA_V3=1``: the first pass whose output differs is ``TritonGPUAccelerateMatmul`` (it picks the MMA
    version); each side's evidence quotes its own MMA layout (v3 ``wgmma`` where the knob is unset, v2 where set)."""
    a, b = ("no_wgmma", "on_sm90") if swap else ("on_sm90", "no_wgmma")
    (f,) = settings_findings(a, b, tiles.variants[a], tiles.variants[b])
    side = {"on_sm90": "DISABLE_MMA_V3 unset in `on_sm90`", "no_wgmma": "DISABLE_MMA_V3=1 in `no_wgmma`"}
    assert (f.id, f.severity, f.stage) == ("settings.env-changed", "major", "settings")
    assert f.title == f"Compile environment differs: {side[a]} vs {side[b]}"
    assert f"`DISABLE_MMA_V3` {KNOWN_KNOBS['DISABLE_MMA_V3']}." in f.explanation
    assert "so nothing else about the two sides differs" in f.explanation
    assert "The first pass whose output differs is `TritonGPUAccelerateMatmul`: `#mma_v" in f.explanation
    mine = "versionMajor = 3" if a == "on_sm90" else "versionMajor = 2"
    assert mine in f.explanation.split("TritonGPUAccelerateMatmul")[1]
    ev = _texts(f)
    assert ev[:2] == [(a, "settings", side[a]), (b, "settings", side[b])]
    assert ev[2][:2] == (a, "passes") and ev[3][:2] == (b, "passes")
    for v, _, text in ev[2:]:
        assert text.startswith("after TritonGPUAccelerateMatmul: #mma_")
        assert ("versionMajor = 3" if v == "on_sm90" else "versionMajor = 2") in text
    assert "Passes run on one side only" not in f.explanation and f.explanation.endswith("`.")


def test_env_finding_without_a_known_knob_or_snapshots(tiles: Bundle) -> None:
    """An unknown variable gets no effect sentence; without ``--passes`` snapshots the finding says how to get the
    pass; a variable set on both sides is quoted with both values."""
    on = dataclasses.replace(tiles.variants["on_sm90"], passes=[])
    a = _edit(on, env={"MY_FLAG": "1"})
    b = _edit(on, env={"MY_FLAG": "2"})
    (f,) = settings_findings("a", "b", a, b)
    assert f.title == "Compile environment differs: MY_FLAG=1 in `a` vs MY_FLAG=2 in `b`"
    assert f.explanation.endswith(
        "nothing else about the two sides differs. Run with `--passes` to name the first compiler pass whose output "
        "differs."
    )
    assert _texts(f) == [("a", "settings", "MY_FLAG=1 in `a`"), ("b", "settings", "MY_FLAG=2 in `b`")]


@pytest.mark.parametrize("swap", [False, True])
def test_target_finding_with_snapshots_that_differ_only_in_the_target(
    w80: VariantResult, w90: VariantResult, swap: bool
) -> None:
    """sm80 vs sm90 of one softmax row: the snapshots differ only in the ``ttg.target`` module attribute (from
    ``ConvertTritonToTritonGPU`` on, which writes it), and each target runs passes the other does not."""
    va, vb = (w90, w80) if swap else (w80, w90)
    a, b = va.target, vb.target
    (f,) = settings_findings(a, b, va, vb)
    assert (f.id, f.severity) == ("settings.target-changed", "major")
    assert f.title == f"Target differs: {a} in `{a}` vs {b} in `{b}`"
    assert f.explanation.startswith(f"`{a}` is compiled for {a} and `{b}` for {b}.")
    assert (
        "differ only in module attributes that record the setting (from `ConvertTritonToTritonGPU` on): no MLIR pass"
        in (f.explanation)
    )
    assert "The first pass whose output differs" not in f.explanation
    pa, pb = va.settings["ptxas"], vb.settings["ptxas"]
    assembler = f"assembled by different ptxas builds too ({pa} vs {pb}; Triton picks ptxas by architecture)"
    assert (assembler in f.explanation) == (pa != pb)  # 3.9: ptxas vs ptxas-blackwell; 3.6: one ptxas
    # another assembler recorded for one side (whatever the release): said in the target finding
    (g,) = settings_findings(a, b, _edit(va, ptxas=OLD_PTXAS), vb)
    assert f"assembled by different ptxas builds too ({OLD_PTXAS} vs {pb}; Triton picks ptxas by architecture)." in (
        g.explanation
    )
    assert g.explanation.index("every later difference starts here") < g.explanation.index(OLD_PTXAS)
    assert g.explanation.index(OLD_PTXAS) < g.explanation.index("The per-pass snapshots")
    only = f.explanation.split("Passes run on one side only: ")[1]
    na, nb = pass_names(va), pass_names(vb)
    one_side = [n for n in na if n not in nb] + [n for n in nb if n not in na]
    assert "TritonNvidiaGPUTMALoweringPass" in one_side  # sm90's TMA lowering; 3.9 also prefetches on sm80 only
    assert only == ", ".join(dict.fromkeys(one_side)) + "."
    ev = _texts(f)
    assert ev[:2] == [(a, "settings", f"target {a}"), (b, "settings", f"target {b}")]
    cuda = {"sm80": '"cuda:80"', "sm90": '"cuda:90"'}
    assert (
        ev[2][0] == a
        and ev[2][2].startswith("after ConvertTritonToTritonGPU: module attributes")
        and cuda[a] in ev[2][2]
    )
    assert ev[3][0] == b and cuda[b] in ev[3][2]


def test_snapshots_that_agree(tiles: Bundle) -> None:
    """The same snapshots on both sides (the first six of one variant) under different recorded settings: the
    difference arises after the passes."""
    on = dataclasses.replace(tiles.variants["on_sm90"], passes=tiles.variants["on_sm90"].passes[:6])
    (f,) = settings_findings("a", "b", on, _edit(on, env={"DISABLE_PTXAS_OPT": "1"}))
    assert f.explanation.endswith(
        "`DISABLE_PTXAS_OPT` runs ptxas without optimization. The per-pass snapshots agree pass by pass (the "
        "difference arises outside the MLIR passes)."
    )
    assert [e.stage for e in f.evidence] == ["settings", "settings"]


@pytest.mark.parametrize("swap", [False, True])
def test_triton_release_finding(tiles: Bundle, swap: bool) -> None:
    """Another release (and its bundled ptxas): both versions, the ptxas sentence, and what the older release lacks
    (the compile driver's ``metadata["missing"]``), once each."""
    new = dataclasses.replace(tiles.variants["on_sm90"], passes=[])
    old = _edit(new, triton=OLD_TRITON, ptxas=OLD_PTXAS)
    old = dataclasses.replace(old, metadata={**old.metadata, "missing": ["TMA descriptors", "warp specialization"]})
    new = dataclasses.replace(new, metadata={**new.metadata, "missing": ["TMA descriptors"]})
    (va, a), (vb, b) = ((new, "new"), (old, "old")) if swap else ((old, "old"), (new, "new"))
    (f,) = settings_findings(a, b, va, vb)
    ta, tb = va.settings["triton"], vb.settings["triton"]
    pa, pb = va.settings["ptxas"], vb.settings["ptxas"]
    assert f.id == "settings.triton-changed" and f.title == f"Triton release differs: {ta} in `{a}` vs {tb} in `{b}`"
    assert f"`{a}` is compiled by Triton {ta} and `{b}` by Triton {tb}." in f.explanation
    assert f"ptxas differs too ({pa} vs {pb}): SASS and registers can change with the same PTX." in f.explanation
    assert "The older release lacks: TMA descriptors; warp specialization." in f.explanation
    assert _texts(f) == [(a, "settings", f"Triton {ta}, {pa}"), (b, "settings", f"Triton {tb}, {pb}")]
    # the same ptxas: no ptxas sentence, versions alone; nothing missing: no "lacks"
    same = _edit(old, ptxas=new.settings["ptxas"])
    same = dataclasses.replace(same, metadata={**same.metadata, "missing": []})
    plain = dataclasses.replace(new, metadata={**new.metadata, "missing": []})
    (g,) = settings_findings("o", "n", same, plain)
    assert "ptxas differs" not in g.explanation and "lacks" not in g.explanation
    assert _texts(g) == [
        ("o", "settings", f"Triton {OLD_TRITON}"),
        ("n", "settings", f"Triton {new.settings['triton']}"),
    ]


def test_every_setting_at_once(w90: VariantResult) -> None:
    """Target, release and environment all differ: one finding each, in that order, each with the pass sentence."""
    base = dataclasses.replace(w90, passes=[])
    other = _edit(base, target="sm100", triton=OLD_TRITON, env={"TRITON_F32_DEFAULT": "ieee"})
    fs = settings_findings("x", "y", other, base)
    assert [f.id for f in fs] == ["settings.target-changed", "settings.triton-changed", "settings.env-changed"]
    assert all(f.explanation.endswith("whose output differs.") for f in fs)
    assert "ptxas" not in fs[0].explanation.split("architecture, so")[1]  # the same ptxas: nothing to add
    assert "TRITON_F32_DEFAULT=ieee in `x` vs TRITON_F32_DEFAULT unset in `y`" in fs[2].title
    assert [f.stage for f in fs] == ["settings"] * 3 and [f.severity for f in fs] == ["major"] * 3
    again = "Run with `--passes` to name the first compiler pass whose output differs."
    target = (
        "`x` is compiled for sm100 and `y` for sm90. The NVIDIA backend chooses passes, layouts and instructions by "
        "compute capability (e.g. `mma.sync` on sm8x, `wgmma` and TMA on sm90, `tcgen05` on sm100; "
        "`backends/nvidia/compiler.py`), and ptxas schedules and allocates registers per architecture, so every later "
        "difference starts here. "
    )
    assert fs[0].explanation == target + again
    release = (
        f"`x` is compiled by Triton {OLD_TRITON} and `y` by Triton {base.settings['triton']}. Between releases the "
        "JIT's specialization rules, the pass pipeline and the bundled ptxas change; with the same kernel source, the "
        "release is the root of the differences below. "
    )
    assert fs[1].explanation == release + again
    # another ptxas too: said once, in the release finding (the target finding adds nothing about it)
    fp = settings_findings("x", "y", _edit(other, ptxas=OLD_PTXAS), base)
    assert fp[0].explanation == target + again
    assert fp[1].explanation == (
        release.rstrip()
        + f" ptxas differs too ({OLD_PTXAS} vs {base.settings['ptxas']}): SASS and registers can change with the "
        "same PTX. " + again
    )


# ------------------------------------------------------------------------------------------------ linking


def _finding(fid: str, causes: list[str] | None = None) -> Finding:
    return Finding(id=fid, severity="minor", title=fid, explanation=fid, causes=list(causes or []))


def test_link_to_settings() -> None:
    s = [_finding("settings.target-changed"), _finding("settings.env-changed")]
    loose, linked = _finding("ptx.mma"), _finding("resources.registers", ["ptx.mma"])
    link_to_settings([*s, loose, linked], s, True)
    assert loose.causes == ["settings.target-changed", "settings.env-changed"]
    assert linked.causes == ["ptx.mma"] and s[0].causes == [] and s[1].causes == []
    other = _finding("ptx.mma")
    link_to_settings([other], s, False)  # different sources: the source may be the root
    link_to_settings([other], [], True)
    assert other.causes == []


# ------------------------------------------------------------------------------------------------ same source


def test_same_source(tiles: Bundle, w90: VariantResult, tmp_path: Path) -> None:
    """The kernel's own lines (``metadata["kernel_lines"]`` of the saved ``kernel.py``) decide, not the rest of the
    file; another kernel, a renamed kernel or a missing source is not the same source."""
    on, off = tiles.variants["on_sm90"], tiles.variants["no_wgmma"]
    assert same_source(on, off) and same_source(off, on)
    assert not same_source(on, w90)
    assert not same_source(on, dataclasses.replace(off, kernel="other_name"))

    def copy(v: VariantResult, name: str, edit) -> VariantResult:  # type: ignore[no-untyped-def]
        d = tmp_path / name
        shutil.copytree(v.directory, d)
        p = d / v.stages["python"]
        p.write_text(edit(p.read_text()))
        return dataclasses.replace(v, directory=str(d))

    first, last = off.metadata["kernel_lines"]
    lines = off.text("python").splitlines()
    assert lines[first - 1] == "@triton.jit" and lines[first].startswith("def tile_product(")
    assert "tl.store(" in lines[last - 1]
    outside = copy(off, "outside", lambda t: t + "\n# an edit after the kernel\n")
    assert same_source(on, outside)

    def around(t: str) -> str:  # the lines right before and right after the kernel's own lines
        ls = t.splitlines()
        ls[first - 2] += "# just before the kernel"
        ls[last] += "# just after the kernel"
        return "\n".join(ls) + "\n"

    assert same_source(on, copy(off, "around", around))
    signature = copy(off, "signature", lambda t: t.replace("stride_cb, BLOCK", "stride_c, BLOCK"))
    assert not same_source(on, signature)  # the def line is the kernel's own
    inside = copy(off, "inside", lambda t: t.replace("acc += tl.dot(a, b)", "acc = tl.dot(a, b, acc)"))
    assert not same_source(on, inside)
    last_line = copy(off, "last", lambda t: t.replace("acc.to(tl.float16))", "acc.to(tl.bfloat16))"))
    assert not same_source(on, last_line)  # the kernel's last line is its own
    whole = dataclasses.replace(outside, metadata={k: x for k, x in outside.metadata.items() if k != "kernel_lines"})
    assert not same_source(dataclasses.replace(on, metadata=whole.metadata), whole)  # whole files: the edit counts
    assert same_source(
        dataclasses.replace(on, metadata=whole.metadata), dataclasses.replace(off, metadata=whole.metadata)
    )
    empty = copy(off, "empty", lambda t: "")
    assert not same_source(empty, dataclasses.replace(empty))


def test_pass_sentences_of_each_divergence_kind() -> None:
    """What the finding says for each outcome of :func:`irdiff.diagnose.passes.first_diverging_pass` (built from
    the AccelerateMatmul hunk of DISABLE_MMA_V3 on sm90): a code pass after a records-only one is named, the first
    removed line quoted (else the first added one, else none), at most six one-side passes listed."""
    from irdiff.diagnose.settings import _pass_sentence

    v3 = "#mma_v3 = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0}>"
    v2 = "#mma_v2 = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0}>"
    hunk = ["@@ -1,3 +1,3 @@", " #blocked = #ttg.blocked<{}>", f"-{v3}", f"+{v2}"]
    both = PassDivergence("ConvertTritonToTritonGPU", 15, 15, True, "TritonGPUAccelerateMatmul", hunk)
    assert _pass_sentence(both) == f" The first pass whose output differs is `TritonGPUAccelerateMatmul`: `{v3}`."
    code = PassDivergence("TritonGPUAccelerateMatmul", 20, 20, False, "TritonGPUAccelerateMatmul", hunk[:2] + hunk[3:])
    assert _pass_sentence(code) == f" The first pass whose output differs is `TritonGPUAccelerateMatmul`: `{v2}`."
    bare = PassDivergence("TritonGPUAccelerateMatmul", 20, 20, False, "TritonGPUAccelerateMatmul", hunk[:2])
    assert _pass_sentence(bare) == " The first pass whose output differs is `TritonGPUAccelerateMatmul`."
    many = PassDivergence("P", 1, 1, False, "P", hunk, only_a=[f"A{i}" for i in range(5)], only_b=["B0", "B1", "A0"])
    assert _pass_sentence(many).endswith(" Passes run on one side only: A0, A1, A2, A3, A4, B0.")
    assert _pass_sentence(None) == " Run with `--passes` to name the first compiler pass whose output differs."
    assert _pass_sentence(PassDivergence("")).startswith(" The per-pass snapshots agree pass by pass")


def test_env_finding_with_two_known_knobs(tiles: Bundle) -> None:
    on = dataclasses.replace(tiles.variants["on_sm90"], passes=[])
    a = _edit(on, env={"DISABLE_LLVM_OPT": "1", "DISABLE_PTXAS_OPT": "1"})
    (f,) = settings_findings("a", "b", a, on)
    desc = (
        "DISABLE_LLVM_OPT=1 in `a` vs DISABLE_LLVM_OPT unset in `b`; "
        "DISABLE_PTXAS_OPT=1 in `a` vs DISABLE_PTXAS_OPT unset in `b`"
    )
    assert f.title == f"Compile environment differs: {desc}"
    assert f.explanation == (
        f"The compile environment differs: {desc}. Each variant's variables are set only in its own compile process, "
        f"so nothing else about the two sides differs. `DISABLE_LLVM_OPT` {KNOWN_KNOBS['DISABLE_LLVM_OPT']}; "
        f"`DISABLE_PTXAS_OPT` {KNOWN_KNOBS['DISABLE_PTXAS_OPT']}. Run with `--passes` to name the first compiler pass "
        "whose output differs."
    )


@pytest.mark.parametrize("swap", [False, True])
def test_first_pass_that_only_adds_a_line(tiles: Bundle, tmp_path: Path, swap: bool) -> None:
    """The first six snapshots of ``on_sm90``, and a copy whose fourth snapshot (the third pass's output) has one
    line more: the pass's hunk only adds a line on the copy's side, so the other side's evidence has no line of
    its own to quote (in both orders of the variants)."""
    on = dataclasses.replace(tiles.variants["on_sm90"], passes=tiles.variants["on_sm90"].passes[:6])
    (tmp_path / "passes").mkdir()
    for n in on.passes:
        shutil.copy(Path(on.directory) / "passes" / n, tmp_path / "passes" / n)
    snap = tmp_path / "passes" / on.passes[3]
    text = snap.read_text()
    assert text.count("tt.return") == 1
    snap.write_text(text.replace("tt.return", "%irdiff_extra = arith.constant 7 : i32\n    tt.return"))
    more = dataclasses.replace(on, directory=str(tmp_path))
    plain, extra = _edit(on, env={"DISABLE_PTXAS_OPT": "1"}), more
    va, vb = (extra, plain) if swap else (plain, extra)
    (f,) = settings_findings("a", "b", va, vb)
    name = pass_names(on)[2]
    ev = [t for t in _texts(f) if t[1] == "passes"]
    mine = f"after {name}: %irdiff_extra.0 = arith.constant 7 : i32"  # as normalized
    none = f"after {name}: (no line of its own)"
    assert ev == ([("a", "passes", mine), ("b", "passes", none)] if swap else
                  [("a", "passes", none), ("b", "passes", mine)])  # fmt: skip
