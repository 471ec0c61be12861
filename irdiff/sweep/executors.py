"""Where sweep jobs run: a local process pool (default) or a Ray cluster. Both call the same job functions
(:mod:`irdiff.sweep.jobs`) and yield ``(item, result)`` as jobs finish; a job that raises yields the exception
(one failing job never stops the others). Underneath, both offer ``submit`` (start one job, get a handle) and
``wait_done`` (the handles that finished, with their results): :func:`irdiff.sweep.run_sweep` uses them to start a
pair's diagnosis as soon as its two compiles are done, instead of after every compile of the sweep.

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
from collections.abc import Callable, Collection, Iterable, Iterator
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
    #: how many jobs to keep submitted at once (queued in the executor or running): enough to keep every worker busy
    max_in_flight: int

    def submit(self, fn: Callable[..., Any], item: Any, *args: Any) -> Any:
        """Start ``fn(item, *args)``; returns a handle for :meth:`wait_done`."""
        ...

    def wait_done(self, handles: Collection[Any]) -> list[tuple[Any, Any]]:
        """Block until at least one of ``handles`` has finished; ``(handle, result or exception)`` for each finished
        one (each handle is reported once: pass only those not reported yet)."""
        ...

    def cancel(self, handles: Collection[Any]) -> None:
        """Drop jobs not reported yet (best effort: one already running may finish)."""
        ...

    def map_unordered(self, fn: Callable[..., Any], items: Iterable[T], *args: Any) -> Iterator[tuple[T, Any]]:
        """``fn(item, *args)`` for each item, yielding ``(item, result or exception)`` as each finishes."""
        ...

    def close(self) -> None: ...


def _map_unordered(ex: Executor, fn: Callable[..., Any], items: Iterable[T], *args: Any) -> Iterator[tuple[T, Any]]:
    """``map_unordered`` on top of ``submit``/``wait_done``, at most ``ex.max_in_flight`` jobs submitted at once; the
    jobs not yet started are dropped when the caller stops early."""
    todo = list(items)
    todo.reverse()
    pending: dict[Any, T] = {}
    try:
        while todo or pending:
            while todo and len(pending) < ex.max_in_flight:
                item = todo.pop()
                pending[ex.submit(fn, item, *args)] = item
            for handle, res in ex.wait_done(list(pending)):
                yield pending.pop(handle), res
    finally:
        if pending:
            ex.cancel(list(pending))


class LocalExecutor:
    """A pool of ``workers`` local processes (default: the number of cores). The processes live as long as the
    executor: each imports irdiff (and, through the suites, Triton) once for all its jobs."""

    name = "local"

    def __init__(self, workers: int = 0):
        self.workers = workers if workers > 0 else (os.cpu_count() or 1)
        # One job queued beyond the running ones (the pool's own call queue holds workers + 1): a worker that
        # finishes takes it at once, and every other start is decided by the driver when a worker frees, so a job
        # that became ready late (a diagnosis) or ranks first (longest predicted) is not stuck behind a queue.
        self.max_in_flight = self.workers + 1
        self._pool: ProcessPoolExecutor | None = None

    def _get(self) -> ProcessPoolExecutor:
        if self._pool is None:
            import multiprocessing

            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))
        return self._pool

    def submit(self, fn: Callable[..., Any], item: Any, *args: Any) -> Future[Any]:
        return self._get().submit(fn, item, *args)

    def wait_done(self, handles: Collection[Any]) -> list[tuple[Any, Any]]:
        done, _ = wait(handles, return_when=FIRST_COMPLETED)
        out = []
        for f in done:
            exc = f.exception()
            out.append((f, exc if exc is not None else f.result()))
        return out

    def cancel(self, handles: Collection[Any]) -> None:
        for f in handles:
            f.cancel()

    def map_unordered(self, fn: Callable[..., Any], items: Iterable[T], *args: Any) -> Iterator[tuple[T, Any]]:
        return _map_unordered(self, fn, items, *args)

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
        self._refs: dict[int, Any] = {}

    def submit(self, fn: Callable[..., Any], item: Any, *args: Any) -> Any:
        ray = self._ray
        fn_ref = self._refs.get(id(fn))
        if fn_ref is None:  # the function is shipped to the object store once, not with every task
            fn_ref = self._refs[id(fn)] = ray.put(fn)
        return self._task.remote(fn_ref, item, *args)

    def wait_done(self, handles: Collection[Any]) -> list[tuple[Any, Any]]:
        ray = self._ray
        done, rest = ray.wait(list(handles), num_returns=1)
        more = ray.wait(rest, num_returns=len(rest), timeout=0)[0] if rest else []  # and any others done by now
        out: list[tuple[Any, Any]] = []
        for ref in [*done, *more]:
            try:
                out.append((ref, ray.get(ref)))
            except Exception as e:  # noqa: BLE001 - a task that died is that job's failure
                out.append((ref, e))
        return out

    def cancel(self, handles: Collection[Any]) -> None:
        for ref in handles:
            try:
                self._ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001, S110 - best effort on the way out
                pass

    def map_unordered(self, fn: Callable[..., Any], items: Iterable[T], *args: Any) -> Iterator[tuple[T, Any]]:
        ray = self._ray
        shared = [ray.put(a) for a in args]  # each argument stored once, not copied into every task
        return _map_unordered(self, fn, items, *shared)

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
