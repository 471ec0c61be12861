"""One variant's launch at one shape, through the installed Triton's JIT with real torch tensors.

The constexprs and options are resolved exactly as the compile driver does (``irdiff/compile/worker.py``:
``{**suite.constexprs, **suite.options, **select_config(...), **variant.constexprs, **variant.options}``, then
:func:`irdiff.suite.resolve_values` for the target), so the binary launched is the one the bundle holds when the
local GPU is the bundle's target. The launch is ``kernel[grid](**args, **meta)``: the JIT specializes the real
arguments (pointer alignment, unit strides …) as it would in the user's program.

A ``triton.autotune`` wrapper around a variant's kernel is peeled off for fixed-config launches (its configs still
feed ``--autotune``); ``triton.heuristics`` wrappers stay, since they compute constexprs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from irdiff.compile.worker import config_kwargs, select_config
from irdiff.run.inputs import Inputs
from irdiff.suite import Suite, SuiteError, resolve_values

__all__ = ["LAUNCH_OPTIONS", "Launch", "config_of", "make_launch", "resolve_meta", "unwrap_autotuner"]

# Keyword options the JIT's launch accepts besides constexprs (triton/runtime/jit.py, backend options).
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def unwrap_autotuner(kernel: Any) -> Any:
    """The kernel under any ``triton.autotune`` wrappers (a ``JITFunction`` or ``Heuristics``)."""
    from triton.runtime.autotuner import Autotuner

    while isinstance(kernel, Autotuner):
        kernel = kernel.fn
    return kernel


def resolve_meta(suite: Suite, variant: str, selector: Any, shape: Mapping[str, int], target: str) -> dict[str, Any]:
    """Constexprs and launch options of ``variant`` for ``--config`` ``selector`` (None, index or dict), with
    :class:`~irdiff.suite.Derived` values resolved for ``target`` (``"sm90"``).

    :raises ValueError: config index out of range. :raises SuiteError: a derived value cannot be computed.
    """
    v = suite.variant(variant)
    cfg = select_config(suite, v.kernel, selector)
    meta: dict[str, Any] = {**suite.constexprs, **suite.options, **cfg, **v.constexprs, **v.options}
    return resolve_values(meta, dict(shape), target)


@dataclass
class Launch:
    """A ready launch: ``kernel[grid](**inputs.args, **meta)``.

    :ivar meta: constexprs plus options (``num_warps`` …) passed as keywords.
    :ivar config: the constexpr/option values that came from the autotune config (empty for suites without configs).
    :ivar compiled: the ``CompiledKernel`` the JIT returned at the first launch (registers, shared memory).
    """

    variant: str
    kernel: Any
    inputs: Inputs
    meta: dict[str, Any]
    grid: tuple[int, ...]
    config: dict[str, Any] = field(default_factory=dict)
    compiled: Any = None

    def __call__(self) -> None:
        k = self.kernel[self.grid](**self.inputs.args, **self.meta)
        if self.compiled is None and k is not None:
            self.compiled = k

    def resources(self) -> dict[str, Any]:
        """Registers, spills and shared memory of the launched binary (from ``CompiledKernel``; empty under the
        interpreter)."""
        k = self.compiled
        if k is None:
            return {}
        out: dict[str, Any] = {}
        for attr, key in (("n_regs", "registers"), ("n_spills", "spills")):
            val = getattr(k, attr, None)
            if isinstance(val, int):
                out[key] = val
        md = getattr(k, "metadata", None)
        shared = getattr(md, "shared", None)
        if isinstance(shared, int):
            out["shared_bytes"] = shared
        return out


def make_launch(
    suite: Suite,
    variant: str,
    inputs: Inputs,
    shape: Mapping[str, int],
    target: str,
    selector: Any = None,
    meta: Mapping[str, Any] | None = None,
) -> Launch:
    """Build the launch of ``variant`` on ``inputs`` at ``shape``.

    :param selector: ``--config`` selector (None = the suite's default config, an index, or a dict of values).
    :param meta: use these constexprs/options instead of resolving ``selector``.
    :raises SuiteError: the suite has no grid, or the grid function failed.
    """
    v = suite.variant(variant)
    kernel = unwrap_autotuner(v.kernel)
    full = dict(meta) if meta is not None else resolve_meta(suite, variant, selector, shape, target)
    if suite.grid is None:
        raise SuiteError(f"suite {suite.name!r} has no grid: the runner cannot launch it")
    try:
        grid = tuple(int(g) for g in suite.grid(dict(shape), full))
    except Exception as e:  # noqa: BLE001 - user code
        raise SuiteError(f"suite {suite.name!r}: grid function failed: {type(e).__name__}: {e}") from None
    cfg_keys = set(select_config(suite, v.kernel, selector)) if meta is None else set()
    config = {k: full[k] for k in full if k in cfg_keys}
    return Launch(variant=variant, kernel=kernel, inputs=inputs, meta=full, grid=grid, config=config)


def config_of(c: Any) -> dict[str, Any]:
    """Flat dict of a ``triton.Config`` or config dict (constexprs plus options); see ``config_kwargs``."""
    return config_kwargs(c)
