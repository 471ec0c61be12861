"""Two Triton cache directories holding kernels for several targets: kernels are paired by target first.

Real Triton cache entries: ``irdiff compile --env TRITON_CACHE_DIR=...`` makes the compile worker's Triton write its
cache there (the ``plain`` kernel of ``tests/suites/norm_noise.py`` for sm80 and for sm90)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from irdiff.cli import cli
from irdiff.collections_diff.artifacts import load_artifacts
from irdiff.collections_diff.pairing import pair_kernels, target_note

NOISE = str(Path(__file__).parent / "suites" / "norm_noise.py")


def _cache_entry(cache: Path, target: str, tmp: Path) -> Path:
    """Compile ``plain`` for ``target`` into the Triton cache ``cache``; its new entry directory."""
    before = set(cache.iterdir()) if cache.exists() else set()
    args = ["compile", NOISE, "--variant", "plain", "--target", target, "--no-cache", "-q", "-j", "1"]
    r = CliRunner().invoke(cli, [*args, "--env", f"TRITON_CACHE_DIR={cache}", "--save", str(tmp / f"b-{target}")])
    assert r.exit_code == 0, r.output
    (entry,) = [d for d in cache.iterdir() if d not in before and (d / "axpy_plain.json").is_file()]
    return entry


@pytest.fixture(scope="module")
def caches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``both``: the kernel for sm80 and sm90; ``sm90``/``sm80``: a copy of one entry each."""
    root = tmp_path_factory.mktemp("target-caches")
    both = root / "both"
    e80 = _cache_entry(both, "sm80", root)
    e90 = _cache_entry(both, "sm90", root)
    out = {"both": both, "sm90": root / "only90", "sm80": root / "only80"}
    shutil.copytree(e90, out["sm90"] / e90.name)
    shutil.copytree(e80, out["sm80"] / e80.name)
    return out


@pytest.mark.parametrize("order", ["both-first", "both-second"])
def test_kernels_pair_by_target_first(caches: dict[str, Path], order: str) -> None:
    both, only90 = load_artifacts(caches["both"]), load_artifacts(caches["sm90"])
    assert sorted(v.target for v in both.variants.values()) == ["sm80", "sm90"]
    a, b = (both, only90) if order == "both-first" else (only90, both)
    p = pair_kernels(a, b)
    assert len(p.pairs) == 1
    (pair,) = p.pairs
    assert a.variants[pair.a].target == b.variants[pair.b].target == "sm90"
    assert pair.how == "name+signature"
    # the sm80 kernel has no sm80 partner: unpaired (not an "also compiled" alternative), and the note says why
    left = p.only_a if order == "both-first" else p.only_b
    assert p.also_a == {} and p.also_b == {}
    (name,) = left
    v80 = both.variants[name]
    assert v80.target == "sm80"
    assert target_note(v80, only90) == "sm80; `axpy_plain` there only for sm90"
    assert target_note(both.variants[pair.a if order == "both-first" else pair.b], only90) is None


def test_overview_names_the_kernel_without_a_same_target_partner(caches: dict[str, Path]) -> None:
    for args in ([caches["both"], caches["sm90"]], [caches["sm90"], caches["both"]]):
        r = CliRunner().invoke(cli, ["diff", *map(str, args), "--overview", "--color", "never", "--width", "200"])
        assert r.exit_code == 0, r.output
        assert "1 pair" in r.output and "identical" in r.output
        only = [ln for ln in r.output.splitlines() if ln.strip().startswith("only in")]
        assert len(only) == 1 and "sm80; `axpy_plain` there only for sm90" in only[0], r.output


def test_collections_without_a_common_target_pair_across_targets(caches: dict[str, Path]) -> None:
    p = pair_kernels(load_artifacts(caches["sm80"]), load_artifacts(caches["sm90"]))
    assert len(p.pairs) == 1 and not p.only_a and not p.only_b


@pytest.mark.parametrize(
    ("theme", "want", "avoid"),
    [
        ("dark", "\x1b[0;38;5;203m", "\x1b[0;38;5;160m"),  # the `-` side's name: light red on dark
        ("light", "\x1b[0;38;5;160m", "\x1b[0;38;5;203m"),  # darker red, readable on white
        ("mono", "\x1b[0;1m", "38;5;"),  # no colours at all
    ],
)
def test_collection_diff_takes_the_theme(caches: dict[str, Path], theme: str, want: str, avoid: str) -> None:
    args = ["diff", str(caches["both"]), str(caches["sm90"]), "--overview", "--color", "always", "--theme", theme]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert want in r.output and avoid not in r.output, repr(r.output[:400])
    plain = CliRunner().invoke(cli, [*args[:-4], "--color", "never", "--theme", theme])
    assert plain.exit_code == 0 and "\x1b" not in plain.output


def test_every_command_that_prints_colour_takes_the_same_colour_options() -> None:
    """A command with --color has --paging and --theme too, with the same choices (and the main command)."""
    import click

    def opts(cmd: click.Command) -> dict[str, tuple[str, ...]]:
        return {
            p.name: tuple(p.type.choices) if isinstance(p.type, click.Choice) else ()
            for p in cmd.params
            if p.name in ("color", "paging", "theme")
        }

    ctx = click.Context(cli)
    names = cli.list_commands(ctx)  # type: ignore[attr-defined]
    with_color = {n: opts(cli.get_command(ctx, n)) for n in names}  # type: ignore[attr-defined,arg-type]
    with_color = {n: o for n, o in with_color.items() if o}
    assert {"diff", "show", "compare", "bisect"} <= set(with_color)
    reference = with_color["diff"]
    assert set(reference) == {"color", "paging", "theme"} and reference["theme"] == ("auto", "dark", "light", "mono")
    for name, o in with_color.items():
        assert o == reference, name
    main = CliRunner().invoke(cli, ["matmul", "--help"])
    assert all(x in main.output for x in ("--color", "--paging", "--theme")), main.output
