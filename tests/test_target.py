"""One target parser (irdiff/target.py): every spelling users, bundles and Triton write, and one error for the rest."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from irdiff.compile import normalize_target
from irdiff.compile.worker import parse_target as worker_arch
from irdiff.diagnose.facts import arch_of
from irdiff.suite import SuiteError
from irdiff.target import SUPPORTED_NAMES, Target, TargetError, parse_target


@pytest.mark.parametrize(
    ("text", "name", "family"),
    [
        ("sm80", "sm80", "ampere"),
        ("sm_90a", "sm90", "hopper"),
        ("SM90", "sm90", "hopper"),
        ("90", "sm90", "hopper"),
        ("100", "sm100", "blackwell"),
        ("cuda:90", "sm90", "hopper"),
        (" sm120 ", "sm120", "blackwell-consumer"),
    ],
)
def test_spellings(text: str, name: str, family: str) -> None:
    t = parse_target(text)
    assert (t.name, t.family, t.backend, t.warp_size) == (name, family, "cuda", 32)
    # every former parser now agrees with it
    assert normalize_target(text) == name
    assert worker_arch(text) == t.capability
    assert arch_of(text, {}) == t.capability


def test_what_the_code_asks() -> None:
    ampere, hopper, blackwell = parse_target("sm80"), parse_target("sm90a"), parse_target("sm100")
    assert hopper.arch_specific and not ampere.arch_specific
    assert (ampere.has_cp_async, ampere.has_tma, ampere.has_wgmma) == (True, False, False)
    assert (hopper.has_tma, hopper.has_wgmma) == (True, True)
    assert (blackwell.has_tma, blackwell.has_wgmma) == (True, False)
    assert Target.from_triton({"backend": "cuda", "arch": 86, "warp_size": 32}) == parse_target("sm86")


@pytest.mark.parametrize("text", ["", "sm75", "sm_91", "ptx", "sm9", "cuda:", "90b", "gfx942"])
def test_bad_targets_one_line_error(text: str) -> None:
    with pytest.raises(TargetError) as e:
        parse_target(text)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"unsupported target {text!r}") and ", ".join(SUPPORTED_NAMES) in msg
    with pytest.raises(SuiteError, match="unsupported target"):
        normalize_target(text)


def test_amd_parsed_as_family_but_not_compiled() -> None:
    with pytest.raises(TargetError, match=r"AMD \(cdna3\) is not supported yet"):
        parse_target("gfx942")
    t = parse_target("hip:gfx942", supported_only=False)
    assert (t.backend, t.name, t.family, t.warp_size, t.capability) == ("hip", "gfx942", "cdna3", 64, 0)
    assert arch_of("gfx942", {}) == 0  # no CUDA capability (the old regex read 942)


@given(st.text(max_size=12))
def test_parse_never_raises_anything_else(text: str) -> None:
    try:
        t = parse_target(text, supported_only=False)
    except TargetError as e:
        assert "\n" not in str(e)
    else:
        assert parse_target(t.name, supported_only=False) == Target(t.backend, t.arch)
