"""Headless Chromium for the report tests: Debian's ``chromium`` driven by Playwright's Python package.

Playwright never downloads a browser here: it launches ``/usr/bin/chromium`` (``apt-get install -y chromium``) with
flags that keep it off the network. :func:`open_report` loads a report from ``file://`` and records what a user
would not see: console messages, page errors, every request, and any dialog (``alert``) — dialogs are dismissed so
a page that fires one cannot hang the test.

Tests call :func:`require_browser` (or use the ``browser`` fixture built on it), which skips with a one-line
reason when Chromium or Playwright is missing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def chromium_path() -> str | None:
    env = os.environ.get("IRDIFF_CHROMIUM")
    if env and Path(env).is_file():
        return env
    for c in CHROMIUM_CANDIDATES:
        if Path(c).is_file():
            return c
    return shutil.which("chromium")


def require_browser() -> str:
    """Path of Chromium, or skip the test with a one-line reason."""
    path = chromium_path()
    if path is None:
        pytest.skip("chromium not installed (apt-get install -y chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("playwright (PyPI) not installed")
    return path


@dataclass
class PageLog:
    """What happened while a page was open."""

    console: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    @property
    def console_errors(self) -> list[str]:
        return [text for kind, text in self.console if kind == "error"] + self.errors


def wait_until(page: Any, js_function: str, timeout: float = 10.0) -> Any:
    """Poll ``js_function`` (a JavaScript function expression) until it returns a truthy value; return it.

    Playwright's ``wait_for_function`` compiles its predicate with ``eval``, which the report's
    Content-Security-Policy forbids (no ``'unsafe-eval'``); ``page.evaluate`` goes through DevTools and is allowed.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(js_function)
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {js_function}")
        time.sleep(0.05)


class Browser:
    """One Chromium process (launched through Playwright) for a test module."""

    def __init__(self, executable: str) -> None:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self._profile = tempfile.mkdtemp(prefix="irdiff-chromium-")
        self._context = self._pw.chromium.launch_persistent_context(
            self._profile,
            executable_path=executable,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1400, "height": 900},
        )

    @contextmanager
    def open_report(self, path: str | os.PathLike[str], ready: bool = True) -> Iterator[tuple[Any, PageLog]]:
        """Open ``path`` from ``file://``; with ``ready``, wait until the report's script has unpacked its
        compressed sections (``<html data-irdiff-ready>``)."""
        page = self._context.new_page()
        log = PageLog()
        page.on("console", lambda m: log.console.append((m.type, m.text)))
        page.on("pageerror", lambda e: log.errors.append(str(e)))
        page.on("request", lambda r: log.requests.append(r.url))

        def on_dialog(d: Any) -> None:
            log.dialogs.append(f"{d.type}: {d.message}")
            d.dismiss()

        page.on("dialog", on_dialog)
        try:
            page.goto(Path(path).resolve().as_uri(), wait_until="load")
            if ready:
                wait_until(page, "() => document.documentElement.dataset.irdiffReady", timeout=30.0)
            yield page, log
        finally:
            page.close()

    def close(self) -> None:
        try:
            self._context.close()
            self._pw.stop()
        finally:
            shutil.rmtree(self._profile, ignore_errors=True)
