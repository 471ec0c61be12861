"""Statistics of timing samples: median, interquartile range, and a verdict per pair by bootstrap.

Everything here works on plain lists of times in milliseconds and needs only NumPy (no torch, no GPU), so it is
tested on synthetic samples with known answers.

Verdict method: the ratio of medians ``median(a) / median(b)``; a 95 % percentile-bootstrap interval of that ratio
from ``n_boot`` independent resamples (with replacement) of each sample; ``a`` is *faster* when the whole interval
lies below ``1 / (1 + min_effect)``, *slower* when it lies above ``1 + min_effect``, and otherwise there is *no
significant difference*. ``min_effect`` (default 1 %) keeps differences smaller than GPU timing reproducibility
from being called significant however many samples there are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "FASTER",
    "NO_DIFFERENCE",
    "SLOWER",
    "Summary",
    "Verdict",
    "bootstrap_ratio",
    "median_interval",
    "summarize",
    "verdict",
]

FASTER = "faster"
SLOWER = "slower"
NO_DIFFERENCE = "no significant difference"


@dataclass
class Summary:
    """Summary of one sample of launch times (all in ms).

    :ivar median_ms: median time of one launch.
    :ivar iqr_ms: interquartile range (75th minus 25th percentile, linear interpolation).
    :ivar n: number of timed launches.
    """

    median_ms: float
    iqr_ms: float
    n: int
    q1_ms: float
    q3_ms: float
    min_ms: float
    max_ms: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def summarize(samples_ms: Sequence[float]) -> Summary:
    """Median, IQR, quartiles, extremes and count of ``samples_ms``.

    :raises ValueError: empty sample.
    """
    import numpy as np

    if len(samples_ms) == 0:
        raise ValueError("no timing samples to summarize")
    x = np.asarray(samples_ms, dtype=np.float64)
    q1, med, q3 = np.percentile(x, [25.0, 50.0, 75.0])
    return Summary(
        median_ms=float(med),
        iqr_ms=float(q3 - q1),
        n=int(x.size),
        q1_ms=float(q1),
        q3_ms=float(q3),
        min_ms=float(x.min()),
        max_ms=float(x.max()),
    )


def median_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """Distribution-free interval of the median from order statistics (the sign test's interval).

    For ``n`` values sorted ``x(1) ≤ … ≤ x(n)``, ``[x(k), x(n+1-k)]`` holds the population median with
    probability ``1 - 2·P(Binomial(n, 1/2) < k)``; ``k`` is the largest with that probability ≥ ``confidence``.
    Fed the block medians of one variant, it covers block-to-block variation (drift, clock, power) without assuming
    a distribution: six blocks give ``[min, max]`` at 96.9 %. With too few values for ``confidence`` (≤ 5 for 95 %),
    ``[min, max]`` and the lower probability it has.

    :returns: ``(low, high, achieved)``; ``achieved`` is the coverage probability of that interval.
    :raises ValueError: no values.

    >>> median_interval([1.0, 1.2, 0.9, 1.1, 1.05, 0.95])
    (0.9, 1.2, 0.96875)
    """
    from math import comb

    if len(values) == 0:
        raise ValueError("no values for a median interval")
    xs = sorted(float(v) for v in values)
    n = len(xs)
    cdf = [sum(comb(n, j) for j in range(i + 1)) / 2**n for i in range(n + 1)]  # P(B <= i)
    k = 1
    for cand in range(1, n // 2 + 1):
        if 1.0 - 2.0 * (cdf[cand - 1]) >= confidence:
            k = cand
        else:
            break
    return xs[k - 1], xs[n - k], 1.0 - 2.0 * cdf[k - 1]


def bootstrap_ratio(
    a_ms: Sequence[float], b_ms: Sequence[float], n_boot: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """``median(a) / median(b)`` and its percentile-bootstrap interval.

    :returns: ``(ratio, low, high)``; ``low``/``high`` bound the central ``confidence`` part of the bootstrap
        distribution of the ratio (``a`` and ``b`` resampled independently, ``n_boot`` times, seeded).
    :raises ValueError: an empty sample or a non-positive median.
    """
    import numpy as np

    a = np.sort(np.asarray(a_ms, dtype=np.float64))
    b = np.sort(np.asarray(b_ms, dtype=np.float64))
    if a.size == 0 or b.size == 0:
        raise ValueError("bootstrap needs two non-empty samples")
    if float(np.median(b)) <= 0.0:
        raise ValueError("median of the second sample must be positive")
    if float(np.median(a)) <= 0.0:
        raise ValueError("median of the first sample must be positive")
    # Resample in a canonical order of the two samples so that swapping them inverts the interval exactly
    # (identical samples: the ratios and their inverses together, a distribution symmetric under 1/x).
    key_a, key_b = (a.size, tuple(a)), (b.size, tuple(b))
    swap = key_b < key_a
    x, y = (b, a) if swap else (a, b)
    rng = np.random.default_rng(seed)
    mx = np.median(x[rng.integers(0, x.size, size=(n_boot, x.size))], axis=1)
    my = np.median(y[rng.integers(0, y.size, size=(n_boot, y.size))], axis=1)
    ratios = mx / my
    if key_a == key_b:
        ratios = np.concatenate([ratios, 1.0 / ratios])
    tail = (1.0 - confidence) / 2.0 * 100.0
    low = float(np.percentile(ratios, tail, method="lower"))
    high = float(np.percentile(ratios, 100.0 - tail, method="higher"))
    if swap:
        low, high = 1.0 / high, 1.0 / low
    return float(np.median(a) / np.median(b)), low, high


@dataclass
class Verdict:
    """Is ``a`` faster than ``b``? ``ratio`` is ``median(a) / median(b)`` (below 1: ``a`` takes less time).

    :ivar verdict: ``"faster"``, ``"slower"`` or ``"no significant difference"`` (for ``a`` against ``b``).
    :ivar ci: the bootstrap interval of ``ratio`` (``confidence`` level).
    :ivar method: the method in words, as written into the bundle.
    """

    a: str
    b: str
    ratio: float
    ci: tuple[float, float]
    verdict: str
    confidence: float
    min_effect: float
    method: str
    shape: dict[str, int] | None = None

    def sentence(self) -> str:
        """e.g. ``annotated is 19.8x slower than unannotated (time ratio 19.8, 95% CI 19.5–20.1)``."""
        lo, hi = self.ci
        pct = f"{self.confidence * 100:.0f}%"
        if self.verdict == NO_DIFFERENCE:
            head = f"{self.a} vs {self.b}: no significant difference"
        elif self.verdict == FASTER:
            head = f"{self.a} is {_times(1.0 / self.ratio)} faster than {self.b}"
        else:
            head = f"{self.a} is {_times(self.ratio)} slower than {self.b}"
        return f"{head} (time ratio {_num(self.ratio)}, {pct} CI {_num(lo)}–{_num(hi)})"

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["ci"] = list(self.ci)
        d["sentence"] = self.sentence()
        return d


def _num(x: float) -> str:
    return f"{x:.3f}" if abs(x) < 10 else f"{x:.1f}"


def _times(x: float) -> str:
    return f"{x:.2f}x" if x < 10 else f"{x:.1f}x"


def verdict(
    a_name: str,
    a_ms: Sequence[float],
    b_name: str,
    b_ms: Sequence[float],
    min_effect: float = 0.01,
    n_boot: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Verdict:
    """Compare two samples of launch times (ms) by the bootstrap interval of their median ratio.

    :param min_effect: relative difference below which no verdict other than "no significant difference" is given.
    """
    ratio, low, high = bootstrap_ratio(a_ms, b_ms, n_boot=n_boot, confidence=confidence, seed=seed)
    if high < 1.0 / (1.0 + min_effect):
        word = FASTER
    elif low > 1.0 + min_effect:
        word = SLOWER
    else:
        word = NO_DIFFERENCE
    method = (
        f"ratio of median launch times; {confidence * 100:.0f}% percentile-bootstrap interval "
        f"({n_boot} resamples of each sample); significant when the interval lies outside "
        f"[1/{1 + min_effect:g}, {1 + min_effect:g}]"
    )
    return Verdict(a_name, b_name, ratio, (low, high), word, confidence, min_effect, method)
