"""The lab's jobs run anywhere with the same numbers: in this process, in local worker processes (--jobs N) and on a
Dask distributed cluster (--cluster ADDRESS), here a local one (``distributed.LocalCluster``, one single-threaded
worker process).  Also: the progress line, the refusals, cancelling, and the shipped file reproduced through a cluster."""

from __future__ import annotations

import json
import operator
import os
import sys
from contextlib import contextmanager

import numpy as np
import pytest

from posenc.lab import parallel
from posenc.lab.experiment import FORMAT, LabConfig, job_key, jobs_of, run_experiment, run_many
from posenc.lab.parallel import Cancelled, Runner, progress_line, slow_allocation
from posenc.lab.results import RESULTS_FILE

TINY = LabConfig(schemes=("rope", "alibi"), n_seeds=2, steps=25, train_len=8, n_eval=8, finetune_steps=25)


@contextmanager
def _local_cluster(mmap_threshold: str | None):
    """A LocalCluster of one single-threaded worker process, its nanny's MALLOC_MMAP_THRESHOLD_ set or (None) left as Dask leaves it."""
    distributed = pytest.importorskip("distributed")  # requirements-dev.txt installs it; optional at run time
    import dask

    before = dict(os.environ)
    for k in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_"):  # a cluster still up in this process left its own there,
        os.environ.pop(k, None)  # and a nanny's workers inherit this process's environment under its pre-spawn-environ
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_MMAP_THRESHOLD_": mmap_threshold}), \
                distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as lc:
            yield lc.scheduler_address
    finally:  # a nanny writes its workers' variables into this process's environment and leaves them there: every
        # process this test worker started afterwards (the e2e tests' servers) would have had MALLOC_TRIM_THRESHOLD_
        os.environ.clear()
        os.environ.update(before)


@pytest.fixture(scope="module")
def cluster():
    # the worker as docs/lab.md says to start one: Dask's MALLOC_TRIM_THRESHOLD_ kept, and MALLOC_MMAP_THRESHOLD_ set
    # (without it one default lab job took 52 s on a worker against 28 s in a plain process)
    with _local_cluster(parallel.WORKER_ENV["MALLOC_MMAP_THRESHOLD_"]) as address:
        yield address


def _numbers(res: dict) -> str:
    """Every number of a results dict but the wall-clock seconds, as text (bit-exact: json writes floats' repr)."""
    return json.dumps({k: v for k, v in res.items() if k != "seconds"}, sort_keys=True)


def test_progress_line():
    # ETA = elapsed / done x remaining = 41 / 3 x 21 = 287
    assert progress_line(3, 24, 41.0, "rope seed 2") == "lab: 3/24 jobs done (rope seed 2), 41 s elapsed, ETA 287 s"
    assert progress_line(0, 5, 0.0) == "lab: 0/5 jobs done, 0 s elapsed"


def test_runner_refusals(monkeypatch):
    with pytest.raises(ValueError, match=r"jobs must be an integer in \[1, 64\]"):
        Runner(jobs=0)
    with pytest.raises(ValueError, match="jobs must be 1 with a cluster"):
        Runner(jobs=2, cluster="tcp://127.0.0.1:8786")
    with pytest.raises(ValueError, match="cluster must be a Dask scheduler address"):
        Runner(cluster=" ")
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    with pytest.raises(ImportError, match="pip install distributed"):
        parallel.dask_client("tcp://127.0.0.1:8786")


def test_results_come_back_in_job_order_and_the_line_counts_them(capsys):
    calls = [(2, i) for i in range(7)]
    with Runner(jobs=2) as r:
        assert r.run(operator.pow, calls) == [2**i for i in range(7)]
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 7 and lines[-1].startswith("lab: 7/7 jobs done")


def test_should_stop_cancels_everywhere(cluster):
    with pytest.raises(Cancelled, match="stopped"):
        Runner().run(operator.add, [(1, 2)], should_stop=lambda: True, stream=None)
    with Runner(jobs=2) as r, pytest.raises(Cancelled, match="unfinished"):
        r.run(operator.add, [(1, 2), (3, 4)], should_stop=lambda: True, stream=None)
    with Runner(cluster=cluster) as r, pytest.raises(Cancelled, match="unfinished"):
        r.run(operator.add, [(1, 2)], should_stop=lambda: True, stream=None)
    with pytest.raises(Cancelled, match="stopped"):  # in this process the hook reaches train itself
        run_experiment(TINY, should_stop=lambda: True)


def test_slow_allocation_names_the_workers_that_map_every_array():
    trim, both = {"MALLOC_TRIM_THRESHOLD_": "65536", "MALLOC_MMAP_THRESHOLD_": None}, {"MALLOC_TRIM_THRESHOLD_": "65536", **parallel.WORKER_ENV}
    plain = {"MALLOC_TRIM_THRESHOLD_": None, "MALLOC_MMAP_THRESHOLD_": None}
    assert slow_allocation({"tcp://a:1": both, "tcp://b:2": plain}) == ""
    said = slow_allocation({"tcp://b:2": trim, "tcp://a:1": both, "tcp://c:3": trim})
    assert said.startswith("lab: 2 of 3 Dask workers (tcp://b:2, tcp://c:3) set MALLOC_TRIM_THRESHOLD_") and "MALLOC_MMAP_THRESHOLD_=33554432" in said


def test_a_worker_started_as_dask_starts_it_is_warned_about(capsys):
    with _local_cluster(None) as address, Runner(cluster=address) as r:
        assert r.run(operator.add, [(1, 2)]) == [3]
    assert "1 of 1 Dask workers" in capsys.readouterr().err


def test_in_process_jobs_and_cluster_are_bit_identical(cluster, capsys):
    here, w_here = run_experiment(TINY)
    pool, w_pool = run_experiment(TINY, jobs=2)
    dask, w_dask = run_experiment(TINY, cluster=cluster)
    assert "MALLOC" not in capsys.readouterr().err  # the fixture's worker is started as docs/lab.md says
    assert _numbers(here) == _numbers(pool) == _numbers(dask)
    assert set(here["runs"]["rope"]["1"]["extensions"]) == {"pi", "ntk", "dynamic", "yarn", "llama3", "pi_ft", "ft"}
    for w in (w_pool, w_dask):
        assert set(w) == set(w_here)
        for s in w_here:
            assert all(np.array_equal(w_here[s][k], w[s][k]) for k in w_here[s])


def test_a_job_shared_by_two_experiments_runs_once(capsys):
    """The order sweep's k = 2 is the main run's first seeds: job_key ignores schemes and n_seeds, so run_many runs
    each distinct job once and both results carry the same numbers."""
    a = LabConfig(schemes=("alibi",), n_seeds=2, steps=25, train_len=8, n_eval=8)
    b = LabConfig(schemes=("alibi", "nope"), n_seeds=1, steps=25, train_len=8, n_eval=8)
    assert job_key(*jobs_of(a)[0]) == job_key(*jobs_of(b)[0]) and job_key(*jobs_of(a)[1]) != job_key(*jobs_of(b)[0])
    (ra, _), (rb, _) = run_many([a, b], stream=sys.stderr)
    assert capsys.readouterr().err.count("jobs done") == 3  # alibi 0, alibi 1, nope 0
    assert ra["runs"]["alibi"]["0"] == rb["runs"]["alibi"]["0"]


SHIPPED_FORMAT = json.loads(RESULTS_FILE.read_text(encoding="utf-8"))["format"]


@pytest.mark.xfail(SHIPPED_FORMAT < FORMAT, strict=True, raises=AssertionError,
                   reason=f"the shipped lab_results.json (format {SHIPPED_FORMAT}) predates this code's format {FORMAT}: "
                          "it reproduces once `python -m posenc.lab --ship --jobs 2` regenerates the shipped files")
def test_one_scheme_and_seed_through_a_cluster_reproduce_the_shipped_file(cluster):
    """Issue 37's done-when: one scheme and seed (ALiBi seed 0 at the defaults: one default run, no extension rows)
    run through --cluster on a local Dask cluster reproduce the shipped numbers within --check's tolerance."""
    from posenc.lab.__main__ import check_against, shipped_for

    cfg = LabConfig.for_task("markov", schemes=("alibi",), n_seeds=1)
    res, _ = run_experiment(cfg, cluster=cluster)
    assert check_against(json.loads(json.dumps(res)), shipped_for(cfg)) == []


def test_a_local_cluster_leaves_this_process_environment_as_it_found_it():
    before = dict(os.environ)
    with _local_cluster(None):
        pass
    assert dict(os.environ) == before
