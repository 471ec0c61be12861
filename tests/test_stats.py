"""Timing statistics (irdiff/run/stats.py) against answers computed independently here: quartiles by hand, the
bootstrap interval re-derived with NumPy's generator, both sides of the minimum effect, and the verdict's sentence in
each direction. No torch, no GPU: cheap enough for CI and for mutation testing (benchmarks/mutation.py)."""

from __future__ import annotations

import functools
import itertools
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irdiff.run.stats import (
    FASTER,
    NO_DIFFERENCE,
    SLOWER,
    Summary,
    Verdict,
    bootstrap_ratio,
    median_interval,
    summarize,
    verdict,
)


def _noisy(center: float, n: int, seed: int, spread: float = 0.001) -> list[float]:
    r = random.Random(seed)
    return [center * math.exp(r.gauss(0.0, spread)) for _ in range(n)]


def test_summary_quartiles_interpolate_between_samples() -> None:
    s = summarize([4.0, 1.0, 3.0, 2.0])
    # Linear interpolation: q1 at position 0.75 (1 + 0.75), median 2.5, q3 at position 2.25 (3 + 0.25).
    assert (s.q1_ms, s.median_ms, s.q3_ms) == (1.75, 2.5, 3.25)
    assert s.iqr_ms == 1.5 and (s.min_ms, s.max_ms, s.n) == (1.0, 4.0, 4)
    assert s.to_json() == {
        "median_ms": 2.5,
        "iqr_ms": 1.5,
        "n": 4,
        "q1_ms": 1.75,
        "q3_ms": 3.25,
        "min_ms": 1.0,
        "max_ms": 4.0,
    }
    one = summarize([7.0])
    assert (one.median_ms, one.iqr_ms, one.n) == (7.0, 0.0, 1)
    with pytest.raises(ValueError, match="^no timing samples to summarize$"):
        summarize([])
    assert isinstance(s, Summary)


def _reference_interval(
    a: list[float], b: list[float], n_boot: int, confidence: float, seed: int
) -> tuple[float, float]:
    """The documented method written out again: resample each sample (canonical order: the smaller (size, values)
    first), ratio of medians, central ``confidence`` part by the lower/higher order statistic."""
    x, y = np.sort(np.asarray(a)), np.sort(np.asarray(b))
    swap = (y.size, tuple(y)) < (x.size, tuple(x))
    if swap:
        x, y = y, x
    rng = np.random.default_rng(seed)
    mx = np.median(x[rng.integers(0, x.size, size=(n_boot, x.size))], axis=1)
    my = np.median(y[rng.integers(0, y.size, size=(n_boot, y.size))], axis=1)
    ratios = np.sort(mx / my)
    k_low = math.floor((1 - confidence) / 2 * (n_boot - 1))
    k_high = math.ceil((1 - (1 - confidence) / 2) * (n_boot - 1))
    low, high = float(ratios[k_low]), float(ratios[k_high])
    return (1.0 / high, 1.0 / low) if swap else (low, high)


@pytest.mark.parametrize("order", ["a_first", "b_first"])
def test_bootstrap_interval_matches_the_method_written_out(order: str) -> None:
    a, b = _noisy(1.0, 31, 1, 0.05), _noisy(1.2, 23, 2, 0.05)
    if order == "b_first":
        a, b = b, a
    ratio, low, high = bootstrap_ratio(a, b, n_boot=400, confidence=0.9, seed=3)
    assert ratio == pytest.approx(float(np.median(a) / np.median(b)), rel=1e-12)
    assert (low, high) == pytest.approx(_reference_interval(a, b, 400, 0.9, 3), rel=1e-12)
    # The defaults are 2000 resamples, 95 %, seed 0.
    assert bootstrap_ratio(a, b) == bootstrap_ratio(a, b, n_boot=2000, confidence=0.95, seed=0)
    assert bootstrap_ratio(a, b)[1:] == pytest.approx(_reference_interval(a, b, 2000, 0.95, 0), rel=1e-12)
    # A wider confidence gives a wider interval; another seed another (close) interval.
    _, lo50, hi50 = bootstrap_ratio(a, b, confidence=0.5)
    _, lo95, hi95 = bootstrap_ratio(a, b)
    assert lo95 < lo50 < ratio < hi50 < hi95 or lo95 < lo50 <= hi50 < hi95
    assert bootstrap_ratio(a, b, seed=1) != bootstrap_ratio(a, b, seed=0)


def test_bootstrap_of_identical_samples_is_symmetric_around_one() -> None:
    a = _noisy(1.0, 20, 7, 0.05)
    ratio, low, high = bootstrap_ratio(a, list(a), n_boot=300)
    assert ratio == 1.0
    assert low < 1.0 < high and low * high == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([], [1.0], "^bootstrap needs two non-empty samples$"),
        ([1.0], [], "^bootstrap needs two non-empty samples$"),
        ([1.0], [0.0], "^median of the second sample must be positive$"),
        ([1.0], [-1.0, -2.0, 3.0], "^median of the second sample must be positive$"),
        ([0.0], [1.0], "^median of the first sample must be positive$"),
        ([-1.0, -2.0, 3.0], [1.0], "^median of the first sample must be positive$"),
    ],
)
def test_bootstrap_refuses_empty_or_non_positive_samples(a: list[float], b: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bootstrap_ratio(a, b)


def test_minimum_effect_applies_on_both_sides() -> None:
    """A real 0.5 % difference is significant by the interval but below the default 1 % minimum effect, whichever
    side is slower; with no minimum effect it is called, in the right direction."""
    fast, slow = _noisy(1.0, 300, 5), _noisy(1.005, 300, 6)
    for a, b, word in ((fast, slow, FASTER), (slow, fast, SLOWER)):
        v = verdict("a", a, "b", b, n_boot=300)
        assert v.verdict == NO_DIFFERENCE and v.min_effect == 0.01
        assert (v.ci[1] < 1.0) if word == FASTER else (v.ci[0] > 1.0)
        assert verdict("a", a, "b", b, min_effect=0.0, n_boot=300).verdict == word
    # A 3 % difference passes the 1 % minimum effect but not a 5 % one, on both sides.
    fast, slow = _noisy(1.0, 100, 7), _noisy(1.03, 100, 8)
    assert verdict("a", fast, "b", slow, n_boot=300).verdict == FASTER
    assert verdict("a", slow, "b", fast, n_boot=300).verdict == SLOWER
    assert verdict("a", fast, "b", slow, min_effect=0.05, n_boot=300).verdict == NO_DIFFERENCE
    assert verdict("a", slow, "b", fast, min_effect=0.05, n_boot=300).verdict == NO_DIFFERENCE


def test_verdict_records_its_method_and_inputs() -> None:
    a, b = _noisy(1.0, 50, 9, 0.02), _noisy(2.0, 50, 10, 0.02)
    v = verdict("annotated", a, "unannotated", b)
    assert (v.a, v.b, v.confidence, v.min_effect, v.shape) == ("annotated", "unannotated", 0.95, 0.01, None)
    assert v.method == (
        "ratio of median launch times; 95% percentile-bootstrap interval (2000 resamples of each sample); "
        "significant when the interval lies outside [1/1.01, 1.01]"
    )
    assert (v.ratio, *v.ci) == bootstrap_ratio(a, b)
    w = verdict("x", a, "y", b, min_effect=0.05, n_boot=500, confidence=0.9, seed=4)
    assert (w.ratio, *w.ci) == bootstrap_ratio(a, b, n_boot=500, confidence=0.9, seed=4)
    assert w.method == (
        "ratio of median launch times; 90% percentile-bootstrap interval (500 resamples of each sample); "
        "significant when the interval lies outside [1/1.05, 1.05]"
    )
    d = w.to_json()
    assert d["ci"] == [w.ci[0], w.ci[1]] and d["sentence"] == w.sentence() and d["verdict"] == FASTER
    assert d["a"] == "x" and d["min_effect"] == 0.05 and d["shape"] is None


def test_sentence_in_each_direction_and_magnitude() -> None:
    def v(ratio: float, ci: tuple[float, float], word: str, confidence: float = 0.95) -> str:
        return Verdict("A", "B", ratio, ci, word, confidence, 0.01, "m").sentence()

    assert v(0.5, (0.45, 0.55), FASTER) == "A is 2.00x faster than B (time ratio 0.500, 95% CI 0.450–0.550)"
    assert v(19.8, (19.5, 20.1), SLOWER) == "A is 19.8x slower than B (time ratio 19.8, 95% CI 19.5–20.1)"
    assert v(1.5, (1.25, 9.9996), SLOWER, 0.9) == "A is 1.50x slower than B (time ratio 1.500, 90% CI 1.250–10.000)"
    assert v(0.05, (0.04, 0.06), FASTER) == "A is 20.0x faster than B (time ratio 0.050, 95% CI 0.040–0.060)"
    assert v(1.0, (0.99, 1.01), NO_DIFFERENCE) == (
        "A vs B: no significant difference (time ratio 1.000, 95% CI 0.990–1.010)"
    )
    # Exactly 10: the wide formats take over.
    assert v(10.0, (10.0, 10.0), SLOWER) == "A is 10.0x slower than B (time ratio 10.0, 95% CI 10.0–10.0)"
    assert v(-10.0, (-10.0, 9.0), NO_DIFFERENCE).endswith("(time ratio -10.0, 95% CI -10.0–9.000)")


def test_an_interval_exactly_at_the_minimum_effect_is_not_significant() -> None:
    """Constant samples give a one-point interval: exactly 1/(1 + min_effect) or 1 + min_effect is not beyond it."""
    assert verdict("a", [0.8] * 5, "b", [1.0] * 5, min_effect=0.25, n_boot=50).verdict == NO_DIFFERENCE
    assert verdict("a", [1.25] * 5, "b", [1.0] * 5, min_effect=0.25, n_boot=50).verdict == NO_DIFFERENCE
    assert verdict("a", [0.79] * 5, "b", [1.0] * 5, min_effect=0.25, n_boot=50).verdict == FASTER
    assert verdict("a", [1.26] * 5, "b", [1.0] * 5, min_effect=0.25, n_boot=50).verdict == SLOWER
    same = verdict("a", [1.0] * 5, "b", [1.0] * 5, min_effect=0.0, n_boot=50)
    assert (same.ratio, same.ci, same.verdict) == (1.0, (1.0, 1.0), NO_DIFFERENCE)


@pytest.mark.parametrize(("na", "nb", "center_b"), [(42, 38, 1.1), (40, 40, 1.3)])
def test_float32_samples_are_computed_in_float64(na: int, nb: int, center_b: float) -> None:
    """Samples handed over as a float32 array (a tensor's ``.numpy()``) give the same interval as Python floats
    (even sizes: a float32 median of two middle values would round differently)."""
    a32 = np.asarray(_noisy(1.0, na, 11, 0.05), dtype=np.float32)
    b32 = np.asarray(_noisy(center_b, nb, 12, 0.05), dtype=np.float32)
    fa, fb = [float(x) for x in a32], [float(x) for x in b32]
    for x, y in ((a32, b32), (b32, a32)):
        want = bootstrap_ratio([float(v) for v in x], [float(v) for v in y], n_boot=200)
        assert bootstrap_ratio(x, y, n_boot=200) == want
    assert (
        bootstrap_ratio(a32, fb, n_boot=200)
        == bootstrap_ratio(fa, b32, n_boot=200)
        == bootstrap_ratio(fa, fb, n_boot=200)
    )


def test_summary_of_float32_samples_is_computed_in_float64() -> None:
    x = np.asarray([2.7, 0.41, 0.17, 8.13, 9.13, 6.07, 7.29], dtype=np.float32)
    as_floats = summarize([float(v) for v in x])
    # q1 lies between 0.41 and 2.7: float32 interpolation would give 1.5550000667572021.
    assert summarize(x) == as_floats and as_floats.q1_ms == pytest.approx(1.5550000220537186, abs=1e-15)


def test_identical_samples_interval_is_read_without_reordering() -> None:
    """Identical samples: the resampled ratios and their inverses together, read directly (no swap and inversion,
    which would round differently in the last bits)."""
    a = _noisy(1.0, 24, 4, 0.05)  # a sample where 1 / (1 / r) != r for the interval's ends
    _, low, high = bootstrap_ratio(a, list(a), n_boot=300, seed=2)
    x = np.sort(np.asarray(a))
    rng = np.random.default_rng(2)
    mx = np.median(x[rng.integers(0, x.size, size=(300, x.size))], axis=1)
    my = np.median(x[rng.integers(0, x.size, size=(300, x.size))], axis=1)
    ratios = np.concatenate([mx / my, 1.0 / (mx / my)])
    assert (low, high) == (
        float(np.percentile(ratios, 2.5, method="lower")),
        float(np.percentile(ratios, 97.5, method="higher")),
    )


@functools.cache
def _coverage_by_enumeration(n: int, k: int) -> float:
    """Probability that ``[x(k), x(n+1-k)]`` of ``n`` values holds the population median, by brute force: each value
    lies below the median with probability 1/2 independently, so count the 2**n below/above patterns whose number of
    values below is in ``[k, n-k]`` (then x(k) is below the median and x(n+1-k) above it)."""
    hits = sum(1 for below in itertools.product((0, 1), repeat=n) if k <= sum(below) <= n - k)
    return hits / 2**n


def _reference_k(n: int, confidence: float) -> int:
    """The documented choice: the largest ``k`` (at most ``n // 2``, so the ends are two different order statistics)
    whose coverage is >= ``confidence``; 1 (``[min, max]``) when even that falls short."""
    ok = [k for k in range(1, n // 2 + 1) if _coverage_by_enumeration(n, k) >= confidence]
    return max(ok) if ok else 1


def test_median_interval_docstring_example_and_default_confidence() -> None:
    assert median_interval([1.0, 1.2, 0.9, 1.1, 1.05, 0.95]) == (0.9, 1.2, 0.96875)
    # Nine values: k = 2 covers 1 - 2 * 10/512 = 96.1 % >= 95 % (k = 3 only 82 %): [x(2), x(8)], not [min, max].
    nine = [float(v) for v in (5, 1, 9, 3, 7, 2, 8, 4, 6)]
    assert median_interval(nine) == (2.0, 8.0, 1.0 - 2.0 * 10 / 512)
    assert median_interval(nine) == median_interval(nine, 0.95) != median_interval(nine, 0.99)
    assert median_interval(nine, 0.99) == (1.0, 9.0, 1.0 - 2.0 / 512)


@pytest.mark.parametrize("n", range(1, 13))
def test_median_interval_matches_brute_force_coverage(n: int) -> None:
    """n = 1..12 values given in shuffled order; every confidence that is exactly some k's coverage (the boundary:
    >= takes that k), just above and just below it, and the edges 0, 0.5, 0.95, 0.99 and 1."""
    values = [10.0 + 3.0 * i for i in range(n)]
    shuffled = list(values)
    random.Random(n).shuffle(shuffled)
    exact = [_coverage_by_enumeration(n, k) for k in range(1, n // 2 + 1)]
    confidences = [0.0, 0.5, 0.95, 0.99, 1.0]
    for c in exact:
        confidences += [c, math.nextafter(c, 2.0), math.nextafter(c, -1.0)]
    for conf in confidences:
        k = _reference_k(n, conf)
        low, high, achieved = median_interval(shuffled, conf)
        assert (low, high) == (values[k - 1], values[n - k]), (n, conf)
        assert achieved == pytest.approx(_coverage_by_enumeration(n, k), abs=1e-15), (n, conf)
        assert achieved >= conf or k == 1, (n, conf)  # short of the confidence only at [min, max]
    # Confidence 1 is never reached: [min, max] with its coverage 1 - 2/2**n (0 for a single value).
    assert median_interval(shuffled, 1.0) == (values[0], values[-1], 1.0 - 2.0 / 2**n)


def test_median_interval_known_values() -> None:
    # Five values cannot reach 95 %: [min, max] at 1 - 2/32 = 93.75 %.
    assert median_interval([3.0, 1.0, 5.0, 2.0, 4.0]) == (1.0, 5.0, 0.9375)
    # Eight values at exactly k = 2's coverage 1 - 2 * 9/256: k = 2 ([x(2), x(7)]); a hair above: k = 1.
    eight = [8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]
    assert median_interval(eight, 238 / 256) == (2.0, 7.0, 238 / 256)
    assert median_interval(eight, math.nextafter(238 / 256, 1.0)) == (1.0, 8.0, 254 / 256)
    # Confidence 0: the narrowest interval of two order statistics, never the single middle value of odd n
    # (whose coverage is 0): seven values give [x(3), x(5)] at 1 - 2 * 29/128.
    assert median_interval([7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0], 0.0) == (3.0, 5.0, 1.0 - 2.0 * 29 / 128)
    # Twelve values, confidence 0: k = 6, the two middle values.
    assert median_interval([float(v) for v in range(12)], 0.0)[:2] == (5.0, 6.0)
    # One value: the interval is that value, with coverage 0; two: [min, max] at 50 %.
    assert median_interval([4.5]) == (4.5, 4.5, 0.0)
    assert median_interval([2.0, 1.0], 0.0) == (1.0, 2.0, 0.5)
    # Any sequence of numbers (ints, a tuple) is read as floats.
    assert median_interval((3, 1, 2)) == (1.0, 3.0, 0.75)


def test_median_interval_refuses_no_values() -> None:
    with pytest.raises(ValueError, match="^no values for a median interval$"):
        median_interval([])
    with pytest.raises(ValueError, match="^no values for a median interval$"):
        median_interval(())


@settings(max_examples=150, deadline=None)
@given(
    values=st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=1, max_size=40),
    confidence=st.floats(min_value=0.0, max_value=1.0),
)
def test_median_interval_holds_the_sample_median(values: list[float], confidence: float) -> None:
    low, high, achieved = median_interval(values, confidence)
    assert low <= float(np.median(values)) <= high
    assert low in values and high in values
    n = len(values)
    # Coverage is a probability below 1, positive from two values on (the ends are different order statistics).
    assert (0.0 < achieved < 1.0) if n >= 2 else achieved == 0.0
    assert achieved >= confidence or (low, high) == (min(values), max(values))
    # A higher confidence never gives a narrower interval.
    lo2, hi2, ach2 = median_interval(values, min(1.0, confidence + 0.1))
    assert lo2 <= low and high <= hi2 and ach2 >= achieved
