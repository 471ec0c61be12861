"""Hardware counters joined to static findings (``irdiff/diagnose/counters.py``).

The ncu records are built the way :func:`irdiff.run.ncu.profile` builds them (raw ``ncu --csv --page raw`` metric
values through :func:`irdiff.run.ncu._derived`, units from :data:`irdiff.run.ncu.METRICS`), with values of the order
the H200 measured (``benchmarks/results/runner-h200-blocks100/``). Each case runs with the finding predicting either
variant, so a confirmation names the slow variant's value first and the direction follows the prediction.
"""

from __future__ import annotations

from typing import Any

import pytest

from irdiff.diagnose.counters import join
from irdiff.diagnose.model import Finding
from irdiff.run.ncu import METRICS, _derived

_RAW = {name: metric for name, (metric, _) in METRICS.items()}


def record(**variants: dict[str, float]) -> dict[str, Any]:
    """An ncu record of ``irdiff.run.ncu.profile``'s shape from ``{variant: {metric name: raw value}}``."""
    return {
        "tool": "ncu",
        "metrics": {k: list(v) for k, v in METRICS.items()},  # as read back from JSON
        "variants": {
            n: {"kernel": "k", "metrics": _derived({_RAW[k]: x for k, x in m.items()})} for n, m in variants.items()
        },
    }


def finding(fid: str, predicts: str | None) -> Finding:
    return Finding(fid, "major", "t", "e.", predicts=predicts)


SLOW = {"stall_long_scoreboard": 30.0, "stall_wait": 10.0, "global_load_sectors": 3.2e7, "global_load_requests": 1e6,
        "achieved_occupancy": 25.0, "instructions": 2.5e8, "sm_throughput": 40.0}  # fmt: skip
FAST = {"stall_long_scoreboard": 5.0, "stall_wait": 15.0, "global_load_sectors": 1.6e7, "global_load_requests": 1e6,
        "achieved_occupancy": 50.0, "instructions": 6e7, "sm_throughput": 80.0}  # fmt: skip


@pytest.mark.parametrize("order", [("slow", "fast"), ("fast", "slow")])
def test_confirmed_in_the_predicted_direction_both_orders(order: tuple[str, str]) -> None:
    a, b = order
    nc = record(slow=SLOW, fast=FAST)
    pipe, occ = finding("pipeline.load-not-pipelined", "slow"), finding("resources.occupancy", "slow")
    mma = finding("ptx.mma", "slow")
    out = join([pipe, occ, mma], nc, a, b)
    assert [(r["finding"], r["metric"], r["predicted"], r["shown"]) for r in out] == [
        ("pipeline.load-not-pipelined", "stall_long_scoreboard_share", "higher", True),
        ("resources.occupancy", "achieved_occupancy", "lower", True),
        ("ptx.mma", "sm_throughput", "lower", True),
    ]
    assert out[0]["values"] == {"slow": 75.0, "fast": 25.0}
    assert out[0]["text"] == (
        "counters confirm: stall long scoreboard share 75% of stall cycles in `slow` vs 25% of stall cycles in `fast`"
    )
    assert out[1]["text"] == "counters confirm: achieved occupancy 25.0% in `slow` vs 50.0% in `fast`"
    assert out[2]["text"] == "counters confirm: sm throughput 40.0% in `slow` vs 80.0% in `fast`"
    # the line is the finding's evidence, on the slow variant's side
    assert [(e.variant, e.stage, e.line, e.text) for e in pipe.evidence] == [("slow", "ncu", None, out[0]["text"])]
    assert [e.text for e in occ.evidence] == [out[1]["text"]]


@pytest.mark.parametrize("order", [("slow", "fast"), ("fast", "slow")])
def test_not_shown_when_the_counters_disagree(order: tuple[str, str]) -> None:
    a, b = order
    # the finding predicts the variant the counters show faster
    nc = record(slow=SLOW, fast=FAST)
    pipe, occ = finding("pipeline.async-copies", "fast"), finding("resources.shared", "fast")
    out = join([pipe, occ], nc, a, b)
    assert [r["shown"] for r in out] == [False, False]
    assert out[0]["text"] == (
        "predicted higher stall long scoreboard in `fast` not shown by the counters: stall long scoreboard share "
        "25% of stall cycles in `fast` vs 75% of stall cycles in `slow`"
    )
    assert out[1]["text"] == (
        "predicted lower achieved occupancy in `fast` not shown by the counters: achieved occupancy 50.0% in `fast` "
        "vs 25.0% in `slow`"
    )
    assert out[1]["values"] == {"fast": 50.0, "slow": 25.0} and out[1]["predicted"] == "lower"
    assert pipe.evidence[0].variant == "fast" and "not shown" in pipe.evidence[0].text


def test_ten_percent_of_the_larger_value_is_the_threshold() -> None:
    def shown(x: float, y: float, fid: str = "index.arith") -> bool:
        (r,) = join([finding(fid, "a")], record(a={"instructions": x}, b={"instructions": y}), "a", "b")
        return bool(r["shown"])

    assert shown(100.0, 90.0)  # exactly 10 % of the larger value
    assert not shown(100.0, 91.0)
    assert not shown(110.0, 100.0)  # 10 of 110: 9.1 %, although 10 % of the smaller value
    assert not shown(90.0, 100.0)  # the wrong direction
    assert not shown(0.0, 0.0)  # nothing measured: no division by zero, not shown

    def lower(x: float, y: float) -> bool:
        nc = record(a={"achieved_occupancy": x}, b={"achieved_occupancy": y})
        (r,) = join([finding("resources.registers", "a")], nc, "a", "b")
        return bool(r["shown"])

    assert lower(90.0, 100.0) and not lower(91.0, 100.0) and not lower(100.0, 110.0) and not lower(100.0, 90.0)


def test_which_findings_are_joined() -> None:
    nc = record(a=SLOW, b=FAST)
    skipped = [
        finding("ptx.memory-ops-extra", "a"),  # not a prefix entry: nothing
        finding("pipeline.load-not-pipelined", None),  # predicts neither
        finding("pipeline.load-not-pipelined", "c"),  # a third variant
        finding("time.slower", "a"),  # timing itself
        finding("source.statement", "a"),  # no counters predicted
    ]
    fs = [
        skipped[1],
        finding("coalesce.vector-width", "a"),  # a prefix entry
        skipped[0],
        finding("ptx.memory-ops", "a"),  # an exact entry
        *skipped[2:],
    ]
    out = join(fs, nc, "a", "b")
    assert [(r["finding"], r["metric"]) for r in out] == [
        ("coalesce.vector-width", "global_load_requests"),
        ("coalesce.vector-width", "load_sectors_per_request"),
        ("ptx.memory-ops", "global_load_requests"),
        ("ptx.memory-ops", "instructions"),
    ]
    # equal requests: not shown; 32 vs 16 sectors per request: shown
    assert [r["shown"] for r in out] == [False, True, False, True]
    assert (
        out[1]["text"]
        == "counters confirm: load sectors per request 32.0 sectors/request in `a` vs 16.0 sectors/request in `b`"
    )
    assert out[0]["text"].endswith("global load requests 1e+06 requests in `a` vs 1e+06 requests in `b`")
    assert (
        out[3]["text"]
        == "counters confirm: instructions 2.5e+08 warp instructions in `a` vs 6e+07 warp instructions in `b`"
    )
    assert all(f.evidence == [] for f in skipped)


def test_formats_and_missing_values() -> None:
    # a stall without the per-kind shares (no other stall measured is still a share: 100 %); a raw stall value
    # quoted when the record has no share
    nc = record(a={"stall_math_pipe": 12.5}, b={"stall_math_pipe": 2.0})
    (r,) = join([finding("mma.wgmma", "a")], nc, "a", "b")
    assert r["metric"] == "stall_math_pipe_share" and r["shown"] is False  # both 100 % of their stalls
    nc["variants"]["a"]["metrics"].pop("stall_math_pipe_share")
    (r,) = join([finding("mma.wgmma", "a")], nc, "a", "b")
    assert r["metric"] == "stall_math_pipe" and r["shown"] is True
    assert r["text"] == "counters confirm: stall math pipe 12.5 cycles/inst in `a` vs 2 cycles/inst in `b`"
    # a metric without a unit, and a small one
    nc = record(a={"instructions": 500.0}, b={"instructions": 100.0})
    nc["metrics"] = {}
    (r,) = join([finding("sass.instructions", "a")], nc, "a", "b")
    assert r["text"] == "counters confirm: instructions 500 in `a` vs 100 in `b`"
    # large values of a metric without a unit: no trailing space
    nc = record(a={"instructions": 5e7}, b={"instructions": 1e7})
    nc["metrics"] = {}
    (r,) = join([finding("sass.instructions", "a")], nc, "a", "b")
    assert r["text"] == "counters confirm: instructions 5e+07 in `a` vs 1e+07 in `b`"
    # values below 1 compare relative to the larger one (0.08 of 0.5 is 16 %)
    nc = record(a={"instructions": 0.5}, b={"instructions": 0.42})
    assert [r["shown"] for r in join([finding("sass.instructions", "a")], nc, "a", "b")] == [True]
    # a metric one variant lacks is skipped, the finding's next metric still joined; a variant without metrics:
    # nothing at all
    nc = record(a={"instructions": 5.0, "sm_throughput": 1.0}, b={"instructions": 2.0, "dram_throughput": 3.0})
    assert [(r["metric"], r["shown"]) for r in join([finding("lower.mask", "a")], nc, "a", "b")] == [
        ("instructions", True)
    ]
    nc = record(a={"instructions": 5.0}, b={"sm_throughput": 3.0})
    assert join([finding("resources.spills", "a")], nc, "a", "b") == []
    assert join([finding("resources.spills", "a")], record(a={"instructions": 5.0}), "a", "b") == []
    assert join([finding("resources.spills", "a")], record(b={"instructions": 5.0}), "a", "b") == []
    assert join([finding("resources.spills", "a")], {}, "a", "b") == []
    bad = {"variants": {"a": {"error": "ncu failed"}, "b": {"metrics": {"instructions": 1.0}}}}
    assert join([finding("resources.spills", "a")], bad, "a", "b") == []
