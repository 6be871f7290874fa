"""Where the lab's jobs run: in this process, in a local process pool, or on a Dask distributed cluster.

A job is one call ``fn(*args)`` of a pure function (experiment.run_job: one task x scheme x seed), so the numbers
cannot depend on where it ran.  ``Runner(jobs=1)`` runs the calls here, one after another; ``Runner(jobs=N)`` in N
local worker processes (spawned, each with one BLAS thread: OPENBLAS_NUM_THREADS=1 and its kin are set before the
worker imports numpy); ``Runner(cluster="tcp://host:8786")`` submits them to an existing Dask scheduler through
``distributed.Client`` (optional: ``pip install distributed``; a Dask nanny starts its workers with one BLAS thread
too, its ``distributed.nanny.pre-spawn-environ`` default).  Whatever the executor, ``run`` returns the results in job
order, writes a progress line per finished job (done/total, elapsed, ETA) and cancels everything on Ctrl-C or when
``should_stop()`` says True (raising train.Cancelled: no partial result).

A real cluster: start a scheduler (``dask scheduler``, port 8786) and on each machine ``MALLOC_MMAP_THRESHOLD_=33554432
dask worker tcp://SCHEDULER:8786 --nworkers N --nthreads 1`` (``WORKER_ENV``: without it a job ran 1.9x slower) in
an environment with this package and its pinned requirements
(the same numpy and OpenBLAS build: bit-identical numbers hold between machines of one build, as between runs on one
machine), then ``python -m posenc.lab ... --cluster tcp://SCHEDULER:8786``.  Results come back to this process, which
writes every file; the workers write nothing.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import TextIO

from posenc._validate import check_int
from posenc.blas import ONE_THREAD
from posenc.lab.train import Cancelled  # one exception for a stopped run, wherever it stopped

__all__ = ["Cancelled", "MAX_JOBS", "Runner", "WORKER_ENV", "dask_client", "progress_line", "slow_allocation"]

MAX_JOBS = 64  # local worker processes
POLL = 0.2  # seconds between two looks at the running jobs (and at should_stop)
# A Dask nanny starts its workers with MALLOC_TRIM_THRESHOLD_=65536 (its distributed.nanny.pre-spawn-environ default).
# Setting it also fixes glibc's mmap threshold at 128 kB, so every larger array is mapped and unmapped afresh: one
# default lab job (ALiBi, seed 0) took 52 s on such a worker against 28 s in a plain process (docs/lab.md).  This
# variable, set as well, keeps Dask's trimming and gave back the plain process's 28 s.
WORKER_ENV = {"MALLOC_MMAP_THRESHOLD_": "33554432"}
_ALLOCATOR = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_")



def progress_line(done: int, total: int, elapsed: float, what: str = "") -> str:
    """'lab: 3/24 jobs done (rope seed 2), 41 s elapsed, ETA 287 s': the ETA assumes the remaining jobs take as long
    as the finished ones did on average."""
    eta = elapsed / done * (total - done) if done else float("nan")
    tail = f", ETA {eta:.0f} s" if done else ""
    return f"lab: {done}/{total} jobs done{f' ({what})' if what else ''}, {elapsed:.0f} s elapsed{tail}"


@contextmanager
def _environ(values: dict[str, str]):
    """``values`` in os.environ for the duration (spawned children inherit it), the old values back after."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _one_thread():  # a pool worker's initializer (the environment was set before it started: this keeps it so)
    os.environ.update(ONE_THREAD)


def dask_client(address: str):
    """A ``distributed.Client`` connected to the scheduler at ``address``; a clear error without the package."""
    try:
        from distributed import Client
    except ImportError as exc:  # optional at run time: only --cluster needs it
        raise ImportError("--cluster needs Dask's distributed scheduler client: pip install distributed") from exc
    return Client(address)


def _allocator_env() -> dict:  # runs on each Dask worker
    return {k: os.environ.get(k) for k in _ALLOCATOR}


def slow_allocation(env_by_worker: dict[str, dict]) -> str:
    """A warning naming the workers whose environment sets MALLOC_TRIM_THRESHOLD_ but not MALLOC_MMAP_THRESHOLD_
    (``env_by_worker``: worker address -> those two variables), or "" when there is none."""
    slow = sorted(w for w, env in env_by_worker.items() if env.get(_ALLOCATOR[0]) is not None and env.get(_ALLOCATOR[1]) is None)
    if not slow:
        return ""
    return (f"lab: {len(slow)} of {len(env_by_worker)} Dask workers ({', '.join(slow)}) set MALLOC_TRIM_THRESHOLD_ without "
            "MALLOC_MMAP_THRESHOLD_, which made a lab job take about twice as long (52 s against 28 s); start them with "
            f"{' '.join(f'{k}={v}' for k, v in WORKER_ENV.items())} (docs/lab.md)")


class Runner:
    """One executor for any number of ``run`` calls; use as a context manager (``close`` ends the workers)."""

    def __init__(self, *, jobs: int = 1, cluster: str | None = None):
        self.jobs = check_int("jobs", jobs, lo=1, hi=MAX_JOBS)
        if cluster is not None and jobs != 1:
            raise ValueError("jobs must be 1 with a cluster (the cluster's workers are its processes)")
        if cluster is not None and (not isinstance(cluster, str) or not cluster.strip()):
            raise ValueError(f"cluster must be a Dask scheduler address such as tcp://127.0.0.1:8786, got {cluster!r}")
        self.cluster = cluster
        self._pool = None
        self._client = None

    @property
    def where(self) -> str:
        if self.cluster is not None:
            return f"the Dask cluster at {self.cluster}"
        return "this process" if self.jobs == 1 else f"{self.jobs} local processes (one BLAS thread each)"

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None
        if self._client is not None:
            self._client.close()
            self._client = None

    def run(self, fn: Callable, calls: Sequence[tuple], *, labels: Sequence[str] | None = None,
            hooks: Callable[[int], dict] | None = None, remote: dict | None = None, on_done: Callable[[int, object, int, float], None] | None = None,
            should_stop: Callable[[], bool] | None = None, stream: TextIO | None | str = "stderr") -> list:
        """``[fn(*c) for c in calls]``, run where this Runner runs them, in job order.

        ``hooks(i)`` gives keyword arguments for call i in this process only (progress and cancel callbacks that do
        not change a number), ``remote`` those of every call run in a worker (e.g. threads=1: the worker's share of
        the cores); ``on_done(i, result, done, elapsed)`` is called here as each job finishes; ``stream``
        gets the progress line ("stderr": sys.stderr at the time of the call; None: silent)."""
        stream = sys.stderr if stream == "stderr" else stream
        calls = list(calls)
        labels = list(labels) if labels is not None else [""] * len(calls)
        t0 = time.perf_counter()
        results: list = [None] * len(calls)
        done = 0

        def finished(i, result):
            nonlocal done
            results[i] = result
            done += 1
            elapsed = time.perf_counter() - t0
            if stream is not None:
                print(progress_line(done, len(calls), elapsed, labels[i]), file=stream, flush=True)
            if on_done is not None:
                on_done(i, result, done, elapsed)

        if not calls:
            return results
        if self.cluster is None and self.jobs == 1:
            for i, c in enumerate(calls):
                if should_stop is not None and should_stop():
                    raise Cancelled(f"stopped after {done} of {len(calls)} jobs")
                finished(i, fn(*c, **(hooks(i) if hooks else {})))
            return results
        if self.cluster is not None:
            self._run_dask(fn, calls, finished, should_stop, remote or {}, stream)
        else:
            self._run_pool(fn, calls, finished, should_stop, remote or {})
        return results

    def _run_pool(self, fn, calls, finished, should_stop, remote: dict) -> None:
        if self._pool is None:
            with _environ(ONE_THREAD):  # spawned workers start with it, before they import numpy
                self._pool = multiprocessing.get_context("spawn").Pool(self.jobs, initializer=_one_thread)
        pending = {i: self._pool.apply_async(fn, c, remote) for i, c in enumerate(calls)}
        try:
            while pending:
                if should_stop is not None and should_stop():
                    raise Cancelled(f"stopped with {len(pending)} of {len(calls)} jobs unfinished")
                ready = [i for i, r in pending.items() if r.ready()]
                for i in sorted(ready):
                    finished(i, pending.pop(i).get())  # re-raises a job's exception here
                if not ready:
                    next(iter(pending.values())).wait(POLL)
        except BaseException:  # Ctrl-C, a cancel, a failed job: stop the workers, nothing half-done survives
            self._pool.terminate()
            self._pool.join()
            self._pool = None
            raise

    def _run_dask(self, fn, calls, finished, should_stop, remote: dict, stream: TextIO | None) -> None:
        if self._client is None:
            self._client = dask_client(self.cluster)
            warning = slow_allocation(self._client.run(_allocator_env))
            if warning and stream is not None:
                print(warning, file=stream, flush=True)
        futures = [self._client.submit(fn, *c, pure=False, **remote) for c in calls]
        index = {f.key: i for i, f in enumerate(futures)}
        pending = set(futures)
        try:
            while pending:
                if should_stop is not None and should_stop():
                    raise Cancelled(f"stopped with {len(pending)} of {len(calls)} jobs unfinished")
                ready = sorted((f for f in pending if f.done()), key=lambda f: index[f.key])
                for f in ready:
                    pending.discard(f)
                    finished(index[f.key], f.result())  # re-raises a job's exception here
                if not ready:
                    time.sleep(POLL)
        except BaseException:
            self._client.cancel(list(pending))
            raise
