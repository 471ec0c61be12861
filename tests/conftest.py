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
    for item in items:
        # Every test that compares with (and can rewrite) a golden file is a golden test: `pytest -m golden` selects
        # them all, which is how CI runs them under its second Triton version.
        if "update_goldens" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.golden)
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


GOLDEN_SKIP = (
    "golden tests must not skip (a skipped golden protects nothing, e.g. after a Triton upgrade): render from a "
    "recorded bundle, or record this version with `.venv/bin/python -m pytest {path} --update-goldens` and review "
    "the diff; the skip said: {reason}"
)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """A skipped golden test is reported as a failure, with the command that records the golden."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and item.get_closest_marker("golden") is not None:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = GOLDEN_SKIP.format(path=item.nodeid.split("::")[0], reason=reason)


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


# The mechanism-family kernels (tests/suites/diag_mech.py, diag_loop.py) as tests/test_mechanisms.py (rules) and
# tests/test_mechfacts.py (the facts they read) share them: one cached compile per target.
MECH_SUITE = str(Path(__file__).parent / "suites" / "diag_mech.py")
LOOP_SUITE = str(Path(__file__).parent / "suites" / "diag_loop.py")


@pytest.fixture(scope="session")
def mech80(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(
        MECH_SUITE,
        ["tf32", "ieee", "tf32x3", "atomic", "red_asm", "eps32", "eps64", "acq_rel", "relaxed", "bf16", "hints"]
        + ["nohints", "where_bool", "where_int", "div_full", "div_rn", "kloop2", "kloop4", "stride2", "contig"]
        + ["e5_dot", "f16_dot"],
        "sm80",
    )


@pytest.fixture(scope="session")
def mech90(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(
        MECH_SUITE,
        ["tf32", "ieee", "atomic", "red_asm", "eps32", "eps64", "relaxed", "bf16", "fp8_default", "fp8_acc32"],
        "sm90",
    )


@pytest.fixture(scope="session")
def loop100(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(LOOP_SUITE, ["dot3", "dot1"], "sm100")
