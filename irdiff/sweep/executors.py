"""Where sweep jobs run: a local process pool (default) or a Ray cluster. Both call the same job functions
(:mod:`irdiff.sweep.jobs`) and yield ``(item, result)`` as jobs finish; a job that raises yields the exception
(one failing job never stops the others).

* :class:`LocalExecutor` — :class:`concurrent.futures.ProcessPoolExecutor` with ``N`` worker processes (spawned,
  so no Triton state is inherited). Each compile job additionally runs Triton in its own child process, as
  :func:`irdiff.compile.compile_bundle` always does.
* :class:`RayExecutor` — each job is a Ray task (``num_cpus=1``) on the cluster at ``address`` (``auto``: the one
  ``ray start`` made on this machine; ``ray://host:10001``: Ray Client); None starts a new private local Ray. Workers
  get the driver's ``PYTHONPATH``, ``IRDIFF_CACHE_DIR``, ``IRDIFF_TRITON_ENVS`` and ``TRITON_*`` settings through
  the task's runtime environment. The compile cache directory must be one all nodes see (one machine, or a shared
  file system): results are entered there and the driver's diagnosis jobs read them back.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Protocol, TypeVar

__all__ = ["Executor", "LocalExecutor", "RayExecutor", "make_executor", "worker_env"]

T = TypeVar("T")

# What a worker must see to compute the same results as the driver.
_ENV_NAMES = ("PYTHONPATH", "IRDIFF_CACHE_DIR", "IRDIFF_TRITON_ENVS", "IRDIFF_NO_GPU_PROBE")


def worker_env() -> dict[str, str]:
    """The driver's environment that workers need: :data:`_ENV_NAMES` plus every ``TRITON_*`` variable (compile
    knobs and tool paths are part of a compile's cache key)."""
    return {k: v for k, v in os.environ.items() if k in _ENV_NAMES or k.startswith("TRITON_")}


class Executor(Protocol):
    name: str
    workers: int

    def map_unordered(self, fn: Callable[..., Any], items: Iterable[T], *args: Any) -> Iterator[tuple[T, Any]]:
        """``fn(item, *args)`` for each item, yielding ``(item, result or exception)`` as each finishes."""
        ...

    def close(self) -> None: ...


class LocalExecutor:
    """A pool of ``workers`` local processes (default: the number of cores)."""

    name = "local"

    def __init__(self, workers: int = 0):
        self.workers = workers if workers > 0 else (os.cpu_count() or 1)
        self._pool: ProcessPoolExecutor | None = None

    def _get(self) -> ProcessPoolExecutor:
        if self._pool is None:
            import multiprocessing

            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))
        return self._pool

    def map_unordered(self, fn: Callable[..., Any], items: Iterable[T], *args: Any) -> Iterator[tuple[T, Any]]:
        pool = self._get()
        pending: dict[Future[Any], T] = {pool.submit(fn, item, *args): item for item in items}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    item = pending.pop(f)
                    exc = f.exception()
                    yield item, (exc if exc is not None else f.result())
        finally:
            for f in pending:
                f.cancel()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _ray_call(fn: Callable[..., Any], item: Any, *args: Any) -> Any:
    """The body of every Ray task: the job function itself."""
    return fn(item, *args)


class RayExecutor:
    """Jobs as Ray tasks on the cluster at ``address`` (see the module docstring).

    :raises ValueError: Ray is not installed (``pip install 'irdiff[sweep]'``) or the cluster cannot be reached.
    """

    name = "ray"

    def __init__(self, address: str | None = "auto", max_in_flight: int = 0):
        try:
            import ray
        except ImportError:
            raise ValueError("--executor ray needs Ray: pip install 'irdiff[sweep]' (or ray)") from None
        self._ray = ray
        self._own = False
        if not ray.is_initialized():
            try:
                kwargs: dict[str, Any] = {"include_dashboard": False} if not address else {}
                ray.init(
                    address=address or "local",  # None: a new private local Ray, never a running cluster
                    runtime_env={"env_vars": worker_env()},
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                    **kwargs,
                )
            except Exception as e:  # noqa: BLE001 - connection errors come in many types
                first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                raise ValueError(f"cannot connect to the Ray cluster at {address or '(local)'}: {first}") from None
            self._own = True
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.max_in_flight = max_in_flight or 4 * self.workers
        self._task = ray.remote(num_cpus=1, max_retries=1)(_ray_call)

    def map_unordered(self, fn: Callable[..., Any], items: Iterable[T], *args: Any) -> Iterator[tuple[T, Any]]:
        ray = self._ray
        todo = list(items)
        todo.reverse()
        pending: dict[Any, T] = {}
        shared_args = [ray.put(a) for a in args]
        fn_ref = ray.put(fn)
        try:
            while todo or pending:
                while todo and len(pending) < self.max_in_flight:
                    item = todo.pop()
                    pending[self._task.remote(fn_ref, item, *shared_args)] = item
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    item = pending.pop(ref)
                    try:
                        yield item, ray.get(ref)
                    except Exception as e:  # noqa: BLE001 - a task that died is that job's failure
                        yield item, e
        finally:
            for ref in pending:
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001, S110 - best effort on the way out
                    pass

    def close(self) -> None:
        if self._own:
            self._ray.shutdown()
            self._own = False


def make_executor(kind: str, jobs: int = 0, ray_address: str | None = None) -> Executor:
    """``local`` (``jobs`` processes, 0 = cores) or ``ray`` (cluster at ``ray_address``, default ``auto``).

    :raises ValueError: an unknown kind, or Ray unavailable.
    """
    if kind == "local":
        return LocalExecutor(jobs)
    if kind == "ray":
        return RayExecutor(ray_address or "auto")
    raise ValueError(f"--executor {kind!r}: choose local or ray")
