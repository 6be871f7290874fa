"""posenc._threads.pmap: a step's independent computations over a small shared pool, with the numbers of one thread."""

from __future__ import annotations

import threading

import pandas as pd
import pytest

from deploy.cluster import THREADS_ENV, Cluster
from posenc import _threads
from posenc._threads import pmap


def test_pmap_keeps_the_order_and_raises_an_items_error(monkeypatch):
    monkeypatch.setenv(_threads.ENV, "2")
    names = pmap(lambda x: (x * x, threading.current_thread().name), range(12))
    assert [v for v, _ in names] == [x * x for x in range(12)]
    assert any(n.startswith("posenc-pmap") for _, n in names)  # run in the pool, not in this thread
    monkeypatch.setenv(_threads.ENV, "3")  # a new size is the size of the pool the next call runs on
    assert len({n for _, n in pmap(lambda x: (x, threading.current_thread().name), range(40)) if n.startswith("posenc")}) <= 3
    assert _threads._pools[3]._max_workers == 3 and _threads._pools[2]._max_workers == 2

    def fails_at_3(x):
        if x == 3:
            raise ValueError(f"item {x}")
        return x

    with pytest.raises(ValueError, match="item 3"):
        pmap(fails_at_3, range(6))


def test_a_call_from_inside_the_pool_runs_inline(monkeypatch):
    monkeypatch.setenv(_threads.ENV, "2")
    inner = pmap(lambda x: pmap(lambda y: threading.current_thread().name, range(3)), range(2))
    for names in inner:  # the nested items ran in the thread that asked for them: no task waits on a queued one
        assert len(set(names)) == 1 and names[0].startswith("posenc-pmap")


def test_threads_reads_its_variable(monkeypatch):
    monkeypatch.delenv(_threads.ENV, raising=False)
    assert 1 <= _threads.threads() <= 2
    monkeypatch.setenv(_threads.ENV, "1")
    assert _threads.threads() == 1 and pmap(lambda _: threading.current_thread().name, range(3)) == [threading.current_thread().name] * 3
    for bad in ("0", "9", "two"):
        monkeypatch.setenv(_threads.ENV, bad)
        with pytest.raises(ValueError, match=r"POSENC_THREADS must be an integer in \[1, 8\]"):
            _threads.threads()


def test_deploy_workers_share_the_cores_and_name_the_same_variable(monkeypatch):
    assert THREADS_ENV == _threads.ENV
    monkeypatch.delenv(THREADS_ENV, raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    cluster = Cluster(workers=2)
    monkeypatch.setattr(Cluster, "local", property(lambda self: [object(), object()]))
    assert cluster.worker_env()[THREADS_ENV] == "1"  # two workers on two cores: one thread each
    monkeypatch.setattr(Cluster, "local", property(lambda self: [object()]))
    assert cluster.worker_env()[THREADS_ENV] == "2"
    monkeypatch.setenv(THREADS_ENV, "3")
    assert cluster.worker_env()[THREADS_ENV] == "3"  # an operator's choice stands


def test_compare_and_the_long_range_are_the_same_in_one_thread_and_two(monkeypatch):
    from posenc.analysis import compare, extension
    from posenc.views.compare import comparison
    from posenc.views.measure import long_range_view

    monkeypatch.setenv(_threads.ENV, "1")
    compare._measured.cache_clear(), compare._at_length.cache_clear(), extension._KEPT.clear()
    one = comparison(128, 16, 2, 64)["frame"], long_range_view(16, 10000.0, 64, 4.0)["entropy"]
    monkeypatch.setenv(_threads.ENV, "2")
    compare._measured.cache_clear(), compare._at_length.cache_clear(), extension._KEPT.clear()
    two = comparison(128, 16, 2, 64)["frame"], long_range_view(16, 10000.0, 64, 4.0)["entropy"]
    for a, b in zip(one, two):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
