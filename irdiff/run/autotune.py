"""``--autotune``: Triton's own autotuner picks each variant's best config at each shape.

For every variant the kernel (without any ``triton.autotune`` wrapper of its own) is wrapped afresh with
``triton.autotune(configs=<the suite's configs>, key=<the shape's parameters>)`` and launched once on the real
inputs; the autotuner benchmarks every config with ``triton.testing.do_bench`` (its default) and keeps the
fastest as ``best_config`` (``triton/runtime/autotuner.py``). The winner is recorded per variant and shape, as the
seed-000 report did by hand; the runner then times each variant at its own winner and both at the common config,
so a user can tell an effect of the compiled code from an effect of tuning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from irdiff.run.inputs import Inputs
from irdiff.run.launch import LAUNCH_OPTIONS, config_of, resolve_meta, unwrap_autotuner
from irdiff.suite import Suite, SuiteError

__all__ = ["Winner", "suite_configs", "tune_variant"]


@dataclass
class Winner:
    """The autotuner's choice for one variant at one shape.

    :ivar config: the winning config's constexprs and options (``BLOCK_SIZE_M`` …, ``num_warps``, ``num_stages``).
    :ivar bench_ms: the autotuner's own median time of the winner (``do_bench``), ms.
    :ivar timings_ms: every config's median (ms; ``inf`` where it failed to compile or ran out of resources), in the
        suite's config order.
    """

    variant: str
    config: dict[str, Any]
    bench_ms: float | None
    tried: int
    timings_ms: list[float] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "config": self.config,
            "bench_ms": self.bench_ms,
            "tried": self.tried,
            "timings_ms": [t if t == t and t != float("inf") else None for t in self.timings_ms],
        }


def suite_configs(suite: Suite, variant: str) -> list[Any]:
    """The suite's configs (or the variant kernel's own ``triton.autotune`` configs) as ``triton.Config`` objects.

    :raises SuiteError: neither has any.
    """
    import triton

    raw = list(suite.configs) or list(getattr(suite.variant(variant).kernel, "configs", []) or [])
    if not raw:
        raise SuiteError(f"suite {suite.name!r} has no autotune configs: --autotune needs some")
    out = []
    for c in raw:
        if isinstance(c, triton.Config):
            out.append(c)
            continue
        kw = config_of(c)
        opts = {k: kw.pop(k) for k in list(kw) if k in LAUNCH_OPTIONS}
        out.append(triton.Config(kw, **opts))
    return out


def tune_variant(
    suite: Suite, variant: str, inputs: Inputs, shape: Mapping[str, int], target: str, configs: list[Any] | None = None
) -> Winner:
    """Run Triton's autotuner for ``variant`` on ``inputs`` and return its winner.

    :param configs: ``triton.Config`` list to search (default: :func:`suite_configs`).
    """
    import triton

    cfgs = configs if configs is not None else suite_configs(suite, variant)
    kernel = unwrap_autotuner(suite.variant(variant).kernel)
    fixed = resolve_meta(suite, variant, None, shape, target)
    tuned_keys: set[str] = set()
    for c in cfgs:
        tuned_keys |= set(c.all_kwargs())
    fixed = {k: v for k, v in fixed.items() if k not in tuned_keys}
    key = [k for k, v in inputs.args.items() if isinstance(v, int) and not isinstance(v, bool) and k in shape]
    tuner = triton.autotune(configs=cfgs, key=key)(kernel)
    grid_fn = suite.grid
    if grid_fn is None:
        raise SuiteError(f"suite {suite.name!r} has no grid: the runner cannot launch it")

    def grid(meta: dict[str, Any]) -> tuple[int, ...]:
        return tuple(grid_fn(dict(shape), {**fixed, **meta}))

    tuner[grid](**inputs.args, **fixed)
    best = tuner.best_config
    timings = dict(getattr(tuner, "configs_timings", {}) or {})

    def first(t: Any) -> float:
        return float(t[0] if isinstance(t, (list, tuple)) else t)

    bench = first(timings[best]) if best in timings else None
    return Winner(
        variant=variant,
        config=config_of(best),
        bench_ms=bench,
        tried=len(cfgs),
        timings_ms=[first(timings[c]) if c in timings else float("inf") for c in cfgs],
    )
