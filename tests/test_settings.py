"""Variants that differ in settings (target, compile environment, Triton release, typed scalars), on real compiles.

The cross-release tests use the two Triton environments CI installs beside the checkout (``.venv`` with the newest
Triton, ``.venv36`` with 3.6.0), registered through ``IRDIFF_TRITON_ENVS`` so nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from irdiff.bisect import FactError, bisect_releases, count_prefix, parse_fact, releases_between
from irdiff.bundle import Bundle
from irdiff.cli import cli
from irdiff.compile import CompileRequest, Side, compile_bundle, side_names
from irdiff.compile.envs import EnvError, local_env, resolve_env
from irdiff.diagnose import diagnose
from irdiff.diagnose.settings import settings_diff
from irdiff.suite import Scalar, SuiteError

SUITES = Path(__file__).parent / "suites" / "settings_variants.py"
TILES = f"{SUITES}::tiles"
SCALED = f"{SUITES}::scaled"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def tiles(bundle_root: Path) -> Bundle:
    req = CompileRequest(suite=TILES, variants=["on_sm80", "on_sm90", "no_wgmma", "as_is"], target="sm90")
    return compile_bundle(req, bundle_root / "tiles", command=["pytest"])


@pytest.fixture(scope="session")
def scaled(bundle_root: Path) -> Bundle:
    req = CompileRequest(suite=SCALED, variants=["plain", "typed"], target="sm90")
    return compile_bundle(req, bundle_root / "scaled", command=["pytest"])


def _ttgir_mma(b: Bundle, name: str) -> int:
    text = b.variants[name].text("ttgir")
    return int(text.split("versionMajor = ", 1)[1][0])


@pytest.mark.parametrize("a,b", [("on_sm80", "on_sm90"), ("on_sm90", "on_sm80")])
def test_target_is_the_root_in_both_orders(tiles: Bundle, a: str, b: str) -> None:
    assert tiles.variants["on_sm80"].settings["target"] == "sm80"
    assert tiles.variants["on_sm90"].settings["target"] == "sm90"
    d = diagnose(tiles, a, b)
    first = d.findings[0]
    assert first.id == "settings.target-changed"
    assert f"{tiles.variants[a].target} in `{a}` vs {tiles.variants[b].target} in `{b}`" in first.title
    # every other chain leads back to it: nothing else is a root
    by_id = {f.id: f for f in d.findings}
    roots = [f.id for f in d.findings if not f.causes]
    assert roots == ["settings.target-changed"], roots
    assert "settings.target-changed" in by_id["layout.mma"].causes


def test_env_knob_named_and_other_variant_unaffected(tiles: Bundle) -> None:
    assert _ttgir_mma(tiles, "no_wgmma") == 2  # DISABLE_MMA_V3 took effect: mma.sync instead of wgmma
    assert _ttgir_mma(tiles, "on_sm90") == 3
    assert (
        tiles.variants["as_is"].text("ttgir") == tiles.variants["on_sm90"].text("ttgir").replace("on_sm90", "as_is")
        or diagnose(tiles, "as_is", "on_sm90").identical
    )
    for a, b in (("no_wgmma", "on_sm90"), ("on_sm90", "no_wgmma")):
        d = diagnose(tiles, a, b)
        first = d.findings[0]
        assert first.id == "settings.env-changed"
        assert "DISABLE_MMA_V3=1 in `no_wgmma`" in first.title and "wgmma" in first.explanation
        assert "DISABLE_MMA_V3 unset in `on_sm90`" in first.title
        assert [f.id for f in d.findings if not f.causes] == ["settings.env-changed"]
    assert settings_diff(tiles.variants["no_wgmma"], tiles.variants["on_sm90"])[0].key == "env.DISABLE_MMA_V3"


def test_same_settings_no_settings_finding(tiles: Bundle) -> None:
    d = diagnose(tiles, "on_sm90", "as_is")
    assert d.identical and not d.notes


def test_scalar_fp64_matches_torch_compile_signature(scaled: Bundle) -> None:
    typed = {a.name: a for a in scaled.variants["typed"].specialization}
    plain = {a.name: a for a in scaled.variants["plain"].specialization}
    assert (plain["eps"].type, typed["eps"].type) == ("fp32", "fp64")
    assert (plain["n"].type, plain["n"].divisibility) == ("i32", 16)
    assert (typed["n"].type, typed["n"].divisibility) == ("i64", None)  # a dynamic size: nothing specialized
    assert "eps: fp64" in scaled.variants["typed"].text("ttir") or "%eps: f64" in scaled.variants["typed"].text("ttir")
    sympy = pytest.importorskip("sympy")
    pytest.importorskip("torch")
    from torch._inductor.codegen.common import SizeArg
    from torch._inductor.codegen.triton_utils import signature_of
    from torch._inductor.virtualized import V

    class Graph:  # what signature_of asks of the graph: the device (None: not an XPU without fp64)
        current_device = None

    with V.set_graph_handler(Graph()):  # type: ignore[arg-type]
        assert signature_of(SizeArg("eps", 1e-6), size_dtype=None) == typed["eps"].type
        assert signature_of(SizeArg("ks0", sympy.Symbol("ks0")), size_dtype="tl.int64") == typed["n"].type


def test_scalar_diagnosis_names_the_types(scaled: Bundle) -> None:
    d = diagnose(scaled, "typed", "plain")
    ids = [f.id for f in d.findings]
    assert "spec.type-changed" in ids and "spec.divisibility-lost" in ids
    assert not any(i.startswith("settings.") for i in ids)


def test_bad_scalar_and_env() -> None:
    with pytest.raises(SuiteError, match="fp65"):
        Scalar(1.0, "fp65")
    from irdiff.suite import Variant

    with pytest.raises(SuiteError, match="strings"):
        Variant(lambda: None, env={"X": 1})  # type: ignore[dict-item]


def test_side_names() -> None:
    assert side_names([Side("a", target="sm80"), Side("a", target="sm90")]) == ["a@sm80", "a@sm90"]
    assert side_names([Side("a", triton="3.6.0"), Side("b", triton="3.9.0")]) == ["a", "b"]
    assert side_names([Side("a"), Side("a", env={"DISABLE_MMA_V3": "1"})]) == ["a@default-env", "a@DISABLE_MMA_V3-1"]


def test_cli_same_variant_two_targets(tiles: Bundle, tmp_path: Path) -> None:
    r = CliRunner().invoke(
        cli,
        ["compare", TILES, "--variant", "as_is", "--target", "sm80", "--against-target", "sm90", "--no-run",
         "--json", "--save", str(tmp_path / "b")],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    import json

    out = json.loads(r.output[r.output.index("{") :])
    assert (out["a"], out["b"]) == ("as_is@sm80", "as_is@sm90")
    assert out["findings"][0]["id"] == "settings.target-changed"
    r = CliRunner().invoke(cli, ["compare", TILES, "--variant", "as_is", "--against", "as_is", "--no-run",
                                 "--target", "sm90", "--color", "never"])  # fmt: skip
    assert r.exit_code == 0 and "identical" in r.output


def test_cli_bad_settings(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["compare", TILES, "--variant", "as_is", "--against-target", "sm42", "--no-run"])
    assert r.exit_code == 2 and "unsupported target 'sm42'" in r.output
    r = CliRunner().invoke(cli, ["compare", TILES, "--env", "NOEQUALS", "--no-run"])
    assert r.exit_code == 2 and "NAME=VALUE" in r.output
    r = CliRunner().invoke(cli, ["compare", TILES, "--triton-path", str(tmp_path / "nope"), "--no-run"])
    assert r.exit_code == 2 and "does not exist" in r.output
    with pytest.raises(EnvError, match="not a Triton release"):
        resolve_env("latest; rm -rf /")


def test_fact_parsing() -> None:
    f = parse_fact("spec.stride_ak.type!=constexpr")
    assert (f.kind, f.key, f.sub, f.op) == ("spec", "stride_ak", "type", "!=")
    assert f.holds("i32") is True and f.holds("constexpr") is False and f.holds(None) is None
    f = parse_fact("ptxas.shared>2048")
    assert f.kind == "resource" and f.holds(4096) and not f.holds(2048)
    assert parse_fact("ptx.cp.async==0").holds(0)
    assert parse_fact("spec.constexpr-one-lost").kind == "finding"
    assert parse_fact("compile.failed").holds(True)
    for bad in ("ptxas.watts>1", "spec.x.colour==1", "nonsense", "ptx.cp.async=>3"):
        with pytest.raises(FactError):
            parse_fact(bad)
    with pytest.raises(ValueError, match="older"):
        releases_between("3.6.0", "3.4.0", ["3.4.0", "3.6.0"])
    assert releases_between("3.4.0", "3.6.0", ["3.3.1", "3.4.0", "3.5.0rc1", "3.5.1", "3.6.0", "3.9.0"]) == [
        "3.4.0",
        "3.5.1",
        "3.6.0",
    ]


def test_fact_values_on_real_compiles(tiles: Bundle) -> None:
    v80, v90 = tiles.variants["on_sm80"], tiles.variants["on_sm90"]
    assert count_prefix("ptx", v80.text("ptx"), "mma") > 0 and count_prefix("ptx", v90.text("ptx"), "mma") == 0
    assert count_prefix("ptx", v90.text("ptx"), "wgmma") > 0
    assert parse_fact("ptx.cp.async>0").holds(parse_fact("ptx.cp.async>0").value(v80))
    shared = parse_fact("ptxas.shared").value(v90)
    assert shared == v90.resources.shared_bytes and shared > 0
    assert parse_fact("spec.K.divisibility==16").holds(parse_fact("spec.K.divisibility==16").value(v80))


def _venv_version(venv: Path) -> str:
    try:
        return local_env(venv).version
    except EnvError:
        return ""


def _two_releases() -> tuple[str, str, str]:
    """``(IRDIFF_TRITON_ENVS value, older, newer)`` from the checkout's ``.venv36`` and ``.venv`` (CI installs both),
    or skip."""
    envs = [p for p in (ROOT / ".venv36", ROOT / ".venv", Path(sys.prefix)) if (p / "bin" / "python").exists()]
    versions = {v: p for p in envs if (v := _venv_version(p))}
    if len(versions) < 2:
        pytest.skip("needs two Triton environments (.venv36 and .venv, as CI installs them)")
    from irdiff.compile.envs import version_key

    old, new = sorted(versions, key=version_key)[0], sorted(versions, key=version_key)[-1]
    return os.pathsep.join(str(versions[v]) for v in (old, new)), old, new


def test_cross_release_compare_and_bisect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registered, old, new = _two_releases()
    monkeypatch.setenv("IRDIFF_TRITON_ENVS", registered)
    assert resolve_env(old).kind in ("registered", "current")  # nothing to download
    req = CompileRequest(
        suite="matmul",
        variants=[],
        target="sm90",
        sides=[Side("annotated", triton=old), Side("annotated", triton=new)],
    )
    b = compile_bundle(req, tmp_path / "x", command=["pytest"])
    a_name, b_name = f"annotated@triton-{old}", f"annotated@triton-{new}"
    assert b.variants[a_name].settings["triton"] == old and b.variants[b_name].settings["triton"] == new
    assert b.variants[a_name].metadata["triton_version"] == old
    assert b.variants[a_name].settings["ptxas"] and b.variants[b_name].settings["ptxas"]
    d = diagnose(b, b_name, a_name)
    assert d.findings[0].id == "settings.triton-changed"
    assert f"{new} in `{b_name}` vs {old} in `{a_name}`" in d.findings[0].title
    assert [f.id for f in d.findings if not f.causes] == ["settings.triton-changed"]

    # bisect over the two releases with a fact that differs between them (the compile results above are reused)
    spills = {n: b.variants[n].resources.spill_store_bytes for n in (a_name, b_name)}
    if not (spills[a_name] and spills[b_name] == 0):
        pytest.skip(f"expected spills in {old} only (Triton 3.6 sm90 annotated matmul), got {spills}")
    fact = parse_fact("ptxas.spill_stores==0")
    lines: list[str] = []
    res = bisect_releases("matmul", "annotated", fact, [old, new], "sm90", save=str(tmp_path / "x"), echo=lines.append)
    assert (res.last_good, res.first_bad) == (old, new)
    assert [t.value for t in res.trials] == [spills[a_name], 0]
    assert any(new in ln and "BAD" in ln for ln in lines)


def test_reports_show_both_sides_settings(tiles: Bundle) -> None:
    from irdiff.pipeline import build_comparison
    from irdiff.render.markdown import render_markdown
    from irdiff.render.views import header

    c = build_comparison(tiles, "on_sm80", "on_sm90", stages=["ttgir"])
    h = header(c)
    assert h.target == "sm80 (on_sm80) · sm90 (on_sm90)"
    assert "--target sm80 --against-target sm90" in h.reproduce
    md = render_markdown(c)
    assert "sm80 (on\\_sm80) · sm90 (on\\_sm90)" in md  # Markdown escapes the underscores
    c = build_comparison(tiles, "no_wgmma", "on_sm90", stages=["ttgir"])
    assert ("env DISABLE_MMA_V3", "1", "—") in header(c).options
    assert "DISABLE_MMA_V3" in render_markdown(c)


def test_release_renames_normalized() -> None:
    from irdiff.normalize import normalize

    # Triton 3.2 spelling (real lines of the matmul TTGIR, sm90) and the 3.3+ spelling of the same ops
    old = [
        "    %67 = triton_gpu.local_alloc  : () -> !tt.memdesc<4x128x32xf16, #shared, #triton_gpu.shared_memory, mutable>",
        "    %162 = triton_nvidia_gpu.warp_group_dot %159, %161, %arg10 {isAsync = true} : !tt.memdesc<128x32xf16>",
    ]
    new = [
        "    %67 = ttg.local_alloc  : () -> !ttg.memdesc<4x128x32xf16, #shared, #ttg.shared_memory, mutable>",
        "    %162 = ttng.warp_group_dot %159, %161, %arg10 {isAsync = true} : !ttg.memdesc<128x32xf16>",
    ]
    assert normalize("ttgir", "\n".join(old)).lines == normalize("ttgir", "\n".join(new)).lines


def test_envs_lists_and_prunes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRDIFF_CACHE_DIR", str(tmp_path))
    r = CliRunner().invoke(cli, ["envs"])
    assert r.exit_code == 0 and "no environments" in r.output
    half = tmp_path / "envs" / "triton-3.4.0"  # an interrupted creation: no env.json
    (half / "bin").mkdir(parents=True)
    (half / "bin" / "python").write_text("")
    r = CliRunner().invoke(cli, ["envs"])
    assert "triton 3.4.0" in r.output and "incomplete" in r.output
    r = CliRunner().invoke(cli, ["envs", "--prune"])
    assert r.exit_code == 0 and "removed Triton 3.4.0" in r.output and not half.exists()


def test_envs_prune_keep_refuses_a_release_it_does_not_have(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--keep`` naming no environment here (a typo: ``3.6`` for ``3.6.0``) is refused with one line and removes
    nothing; a release that is there is kept while the others go; ``--keep`` alone is refused."""
    monkeypatch.setenv("IRDIFF_CACHE_DIR", str(tmp_path))
    envs = {}
    for v in ("3.4.0", "3.6.0"):
        d = tmp_path / "envs" / f"triton-{v}"
        (d / "bin").mkdir(parents=True)
        (d / "env.json").write_text(json.dumps({"triton": v}))
        envs[v] = d
    for bad in (["--keep", "3.6"], ["--keep", "zz"], ["--keep", "3.6.0", "--keep", "3.5.0"]):
        r = CliRunner().invoke(cli, ["envs", "--prune", "--all", *bad])
        assert r.exit_code != 0 and "no Triton environment of that release" in r.output, r.output
        assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1
        assert all(d.exists() for d in envs.values())
    r = CliRunner().invoke(cli, ["envs", "--keep", "3.6.0"])
    assert r.exit_code != 0 and "--keep only applies with --prune --all" in r.output
    assert all(d.exists() for d in envs.values())
    r = CliRunner().invoke(cli, ["envs", "--prune", "--all", "--keep", "3.6.0"])
    assert r.exit_code == 0, r.output
    assert "removed Triton 3.4.0" in r.output and not envs["3.4.0"].exists() and envs["3.6.0"].exists()


def test_compile_says_what_an_old_release_lacks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Triton 3.3+ managed envs are not in CI; this runs where irdiff already created one (or IRDIFF_TRITON_ENVS
    names one)."""
    from irdiff.compile.envs import managed_env

    try:
        env = managed_env("3.3.1", create=False)
    except EnvError:
        pytest.skip("no Triton 3.3.1 environment here (irdiff creates one on first use; CI does not download)")
    r = CliRunner().invoke(
        cli, ["compile", TILES, "--variant", "as_is", "--target", "sm80", "--triton-path", env.location,
              "--save", str(tmp_path / "b")],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "Triton 3.3.1 lacks: no triton.knobs" in r.output
    assert "7 stages" in r.output  # python, ttir, ttgir, llir, ptx, cubin, sass
