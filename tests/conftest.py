"""Shared fixtures: real compiles of the built-in suites (cached by irdiff across tests and runs)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from irdiff.bundle import Bundle
from irdiff.compile import CompileRequest, compile_bundle

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")


def has_gpu() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:
        return False


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="Rewrite golden files under tests/golden/ from the current output instead of comparing.",
    )


@pytest.fixture(scope="session")
def update_goldens(request: pytest.FixtureRequest) -> bool:
    """True under ``pytest --update-goldens``: tests rewrite their golden files instead of comparing."""
    return bool(request.config.getoption("--update-goldens"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


_BUNDLES: dict[tuple[str, tuple[str, ...], str, str], Bundle] = {}


def compiled(
    suite: str, variants: list[str], target: str, tmp_root: Path, config: object = None, passes: bool = False
) -> Bundle:
    """Compile (or reuse) a bundle for the session; returns the same object for the same request."""
    key = (suite, tuple(variants), target, repr(config) + str(passes))
    if key not in _BUNDLES:
        d = tmp_root / f"{suite.replace('/', '_').replace(':', '_')}-{'-'.join(variants)}-{target}-{len(_BUNDLES)}"
        if d.exists():
            shutil.rmtree(d)
        _BUNDLES[key] = compile_bundle(
            CompileRequest(suite=suite, variants=variants, target=target, config=config, passes=passes),
            d,
            command=["pytest"],
        )
    return _BUNDLES[key]


@pytest.fixture(scope="session")
def bundle_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bundles")


@pytest.fixture(scope="session")
def compile_suite(bundle_root: Path):  # type: ignore[no-untyped-def]
    """``compile_suite(suite, variants, target, config=None, passes=False) -> Bundle`` (session-cached)."""

    def _compile(suite: str, variants: list[str], target: str, config: object = None, passes: bool = False) -> Bundle:
        return compiled(suite, variants, target, bundle_root, config, passes)

    return _compile


@pytest.fixture(scope="session")
def matmul_sm86(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite("matmul", ["unannotated", "annotated"], "sm86")


@pytest.fixture(scope="session")
def matmul_sm90(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite("matmul", ["unannotated", "annotated"], "sm90")
