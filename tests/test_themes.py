"""Terminal themes: dark, light and mono palettes, chosen by ``--theme`` or from the terminal (``COLORFGBG``, an
``OSC 11`` query on a real terminal); changed text always keeps a readable foreground on its diff background.

Goldens (``tests/golden/terminal/themes/``) are ANSI captures of the recorded matmul pair (``tests/terminal_data``:
independent of the installed Triton); ``cat`` them in a terminal to see them, rewrite them with
``pytest tests/test_themes.py --update-goldens``. The screenshot test converts the ANSI output to HTML with rich
(``Text.from_ansi`` + ``Console(record=True).export_html``) and checks it in headless Chromium.
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from terminal_data import FIXED, RECORDED, recorded_bundle

from irdiff.cli import cli
from irdiff.pipeline import build_comparison
from irdiff.render import Comparison
from irdiff.render.terminal import (
    MIN_CONTRAST,
    MIN_TOKEN_CONTRAST,
    THEMES,
    TerminalOptions,
    choose_theme,
    contrast,
    query_background,
    render,
    render_stage_text,
    theme_from_colorfgbg,
    theme_from_osc11,
    xterm_rgb,
)

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).parent / "golden" / "terminal" / "themes"
SGR = re.compile(r"\x1b\[([0-9;]*)m")
UPDATE = "`.venv/bin/python -m pytest tests/test_themes.py --update-goldens`"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Comparison:
    b = recorded_bundle(tmp_path_factory.mktemp("themes"))
    c = build_comparison(b, "annotated", "unannotated", stages="python,ttgir")
    return dataclasses.replace(c, diagnosis=FIXED)


def paint(c: Comparison, theme: str, **kw: object) -> str:
    return render(c, TerminalOptions(color=True, width=120, theme=theme, **kw))  # type: ignore[arg-type]


def sgr_runs(text: str) -> list[tuple[dict[str, int | bool], str]]:
    """``[(style, text)]`` for every painted run: style has ``fg``/``bg`` (256-colour indices), ``reverse``."""
    out: list[tuple[dict[str, int | bool], str]] = []
    pos = 0
    style: dict[str, int | bool] = {}
    for m in SGR.finditer(text):
        if m.start() > pos:
            out.append((dict(style), text[pos : m.start()]))
        codes = [int(x) for x in m.group(1).split(";") if x] or [0]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                style = {}
            elif c == 7:
                style["reverse"] = True
            elif c in (38, 48) and codes[i + 1] == 5:
                style["fg" if c == 38 else "bg"] = codes[i + 2]
                i += 2
            i += 1
        pos = m.end()
    if pos < len(text):
        out.append((dict(style), text[pos:]))
    return out


@pytest.mark.parametrize("theme", ["dark", "light", "mono"])
@pytest.mark.parametrize("layout", ["unified", "side-by-side"])
def test_theme_golden(recorded: Comparison, theme: str, layout: str, update_goldens: bool) -> None:
    got = paint(recorded, theme, side_by_side=layout == "side-by-side")
    path = GOLDEN / f"matmul-sm86.{layout}.{theme}.ansi"
    if update_goldens:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got)
        return
    assert path.exists(), f"missing {path.relative_to(ROOT)}; run {UPDATE}"
    assert got == path.read_text(), f"{path.relative_to(ROOT)} changed; if intended run {UPDATE} and review the diff"


@pytest.mark.parametrize("theme", ["dark", "light"])
@pytest.mark.parametrize("side_by_side", [False, True])
def test_changed_text_is_readable_on_its_background(recorded: Comparison, theme: str, side_by_side: bool) -> None:
    """Every run painted on a background has an explicit foreground (the terminal's default text colour is
    unknown: light on a light terminal, dark on a dark one) with WCAG contrast ≥ 3 against it; text without a
    syntax colour gets ≥ 4.5."""
    t = THEMES[theme]
    runs = sgr_runs(paint(recorded, theme, side_by_side=side_by_side))
    on_bg = [(st, t) for st, t in runs if "bg" in st and t.strip()]
    assert len(on_bg) > 50, "expected many changed lines"
    plain_text = 0
    for st, text in on_bg:
        assert "fg" in st, f"no foreground on background {st['bg']}: {text!r}"
        ratio = contrast(int(st["fg"]), int(st["bg"]))
        assert ratio >= MIN_TOKEN_CONTRAST, (theme, st, text)
        if st["fg"] in t.text:
            plain_text += 1
            assert ratio >= MIN_CONTRAST, (theme, st, text)
    assert plain_text > 10


def test_light_and_dark_backgrounds(recorded: Comparison) -> None:
    """Light diff backgrounds are light (luminance high), dark ones dark; both tell removed (red) from added."""
    for theme, light in (("light", True), ("dark", False)):
        bgs = {int(st["bg"]) for st, _ in sgr_runs(paint(recorded, theme)) if "bg" in st}
        assert len(bgs) == 4, bgs  # minus, minus emphasis, plus, plus emphasis
        for bg in bgs:
            r, g, b = xterm_rgb(bg)
            assert (min(r, g, b) >= 135) == light, (theme, bg)
            assert r != g, "a diff background is red or green, not grey"


def test_mono_has_no_colours(recorded: Comparison) -> None:
    out = paint(recorded, "mono")
    assert "38;5;" not in out and "48;5;" not in out
    runs = sgr_runs(out)
    marked = {t for st, t in runs if st.get("reverse")}
    assert "8" in marked and "1" in marked, "the changed sizePerThread elements are in reverse video"
    assert SGR.sub("", out) == render(recorded, TerminalOptions(color=False, width=120))


def test_themes_do_not_change_the_text(recorded: Comparison) -> None:
    plain = render(recorded, TerminalOptions(color=False, width=120))
    for theme in ("dark", "light", "mono"):
        assert SGR.sub("", paint(recorded, theme)) == plain


def test_show_uses_the_theme() -> None:
    text = (RECORDED / "annotated" / "ttgir.mlir").read_text()
    dark = render_stage_text("ttgir", text, color=True, theme="dark")
    light = render_stage_text("ttgir", text, color=True, theme="light")
    assert "38;5;75m" in dark and "38;5;75m" not in light and "38;5;25m" in light
    assert SGR.sub("", dark) == SGR.sub("", light) == text


# --------------------------------------------------------------------------------------------------------------
# Choosing the theme
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "theme"),
    [("15;0", "dark"), ("0;15", "light"), ("0;default;15", "light"), ("12;8", "dark"), ("0;7", "light"),
     ("default;default", None), ("", None), ("15;", None)],
)  # fmt: skip
def test_colorfgbg(value: str, theme: str | None) -> None:
    assert theme_from_colorfgbg(value) == theme


@pytest.mark.parametrize(
    ("reply", "theme"),
    [(b"\x1b]11;rgb:ffff/ffff/ffff\x07", "light"), (b"\x1b]11;rgb:0000/0000/0000\x1b\\", "dark"),
     (b"\x1b]11;rgb:28/2c/34\x07", "dark"), (b"\x1b]11;rgb:fdfd/f6f6/e3e3\x07", "light"), (b"", None),
     (b"garbage", None)],
)  # fmt: skip
def test_osc11_reply(reply: bytes, theme: str | None) -> None:
    assert theme_from_osc11(reply) == theme


def test_choose_theme_rules() -> None:
    assert choose_theme("light", env={"COLORFGBG": "15;0"}) == "light"
    assert choose_theme("mono", env={}) == "mono"
    assert choose_theme("auto", env={"COLORFGBG": "0;15"}) == "light"
    # Not a terminal: no query, the dark default.
    assert choose_theme("auto", env={}, stream=open(os.devnull, "w")) == "dark"
    with pytest.raises(ValueError, match="--theme 'pink'"):
        choose_theme("pink", env={})


def test_query_background_through_a_pty() -> None:
    """A real pseudo-terminal: the query is written to the terminal, the reply read back within the timeout, and
    the terminal's mode is restored."""
    import termios

    master, slave = os.openpty()
    before = termios.tcgetattr(slave)
    seen: list[bytes] = []

    def terminal() -> None:
        seen.append(os.read(master, 64))
        os.write(master, b"\x1b]11;rgb:ffff/fefe/f0f0\x07")

    t = threading.Thread(target=terminal)
    t.start()
    try:
        reply = query_background(slave, timeout=2.0)
    finally:
        t.join(5)
    assert seen == [b"\x1b]11;?\x07"]
    assert theme_from_osc11(reply) == "light"
    assert termios.tcgetattr(slave) == before
    # A terminal that never answers: empty reply after the timeout, mode restored.
    assert query_background(slave, timeout=0.05) == b""
    assert termios.tcgetattr(slave) == before
    os.close(master)
    os.close(slave)


@pytest.mark.parametrize(
    ("args", "env", "colored"),
    [(["--theme", "light", "--color", "never"], {}, False), (["--theme", "light"], {"NO_COLOR": "1"}, False),
     (["--theme", "light", "--color", "always"], {}, True), ([], {"IRDIFF_THEME": "light", "FORCE_COLOR": "1"}, True)],
)  # fmt: skip
def test_cli_theme(tmp_path: Path, args: list[str], env: dict[str, str], colored: bool) -> None:
    b = recorded_bundle(tmp_path)
    d = str(tmp_path / "recorded-matmul-sm86")
    del b
    r = CliRunner().invoke(cli, ["diff", d, "--stage", "ttgir", "--paging", "never", *args], env=env)
    assert r.exit_code == 0, r.output
    assert ("\x1b[" in r.stdout) == colored
    if colored:
        assert "48;5;224m" in r.stdout and "48;5;52m" not in r.stdout  # the light palette's minus background


def test_cli_bad_theme(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["diff", str(RECORDED), "--theme", "pink"])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "pink" in r.stderr


# --------------------------------------------------------------------------------------------------------------
# Screenshot: the terminal output as HTML (rich's ANSI converter) in headless Chromium
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_terminal_screenshot(recorded: Comparison, theme: str, tmp_path: Path) -> None:
    from report_browser import Browser, require_browser
    from rich.console import Console
    from rich.terminal_theme import DEFAULT_TERMINAL_THEME, MONOKAI
    from rich.text import Text

    exe = require_browser()
    ansi = paint(recorded, theme)
    console = Console(record=True, width=120, file=open(os.devnull, "w"), color_system="256", force_terminal=True)
    console.print(Text.from_ansi(ansi), soft_wrap=True)
    page_html = tmp_path / f"terminal-{theme}.html"
    page_html.write_text(
        console.export_html(theme=DEFAULT_TERMINAL_THEME if theme == "light" else MONOKAI, inline_styles=True)
    )
    browser = Browser(exe)
    try:
        with browser.open_report(page_html, ready=False) as (page, log):
            shot = tmp_path / f"terminal-{theme}.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
            # What the browser shows is the terminal text, and every span with a background reads (WCAG ≥ 4.5).
            shown = page.evaluate("() => document.querySelector('pre, code').innerText")
            assert "sizePerThread = [1, 8]" in shown and "── findings" in shown
            worst = page.evaluate(
                """() => {
                  const lum = c => { const v = c.match(/\\d+/g).slice(0, 3).map(x => { x /= 255;
                      return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
                    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
                  let worst = 21, n = 0;
                  for (const s of document.querySelectorAll('span')) {
                    const st = getComputedStyle(s);
                    if (st.backgroundColor === 'rgba(0, 0, 0, 0)' || !s.textContent.trim()) continue;
                    const a = lum(st.color), b = lum(st.backgroundColor);
                    worst = Math.min(worst, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)); n++;
                  }
                  return [worst, n];
                }"""
            )
            assert worst[1] > 50 and worst[0] >= MIN_TOKEN_CONTRAST - 0.1, worst
            assert not log.console_errors and not log.dialogs
    finally:
        browser.close()
