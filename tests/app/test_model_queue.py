"""Issue 41: "the same queue serves any other long job, including the real-model forward passes".  The real-model pages
ask for a forward pass through ``posenc.ui.cache.long_job`` (``safe_long`` on the page): a result computed before comes
back at once; a new one waits for its turn in the model lane of the worker's ``LONG_JOBS`` queue (one model run at a
time, told its place), beside a training, never behind it."""

from __future__ import annotations

import threading
import time

import pytest
from apphelpers import assert_clean, metrics, one_parse_at_a_time, open_page

import posenc.model as pm
from posenc.ui import cache
from posenc.ui import queue as jobs

CALLS: list[tuple] = []


def stand_in(text: str, n: int = 1) -> dict:
    """A long job of the test's own (module-level, so its key is a qualified name)."""
    CALLS.append((text, n))
    if n < 0:
        raise ValueError(f"n must be at least 0, got {n}")
    time.sleep(0.05)
    return {"text": text, "n": n, "rows": [n] * 3}


class Notice:
    def __init__(self):
        self.said: list[str] = []

    def info(self, text, icon=None):
        self.said.append(text)

    def empty(self):
        pass


@pytest.fixture(autouse=True)
def _fresh():
    CALLS.clear()
    cache.KEPT.clear()
    yield
    cache.KEPT.clear()


def test_a_repeated_request_comes_back_at_once_and_a_new_one_runs_in_the_model_lane(monkeypatch):
    joined: list[str] = []
    join = jobs.LONG_JOBS.join

    def spy(label, seconds=None, kind="training"):
        joined.append(kind)
        return join(label, seconds, kind)

    monkeypatch.setattr(jobs.LONG_JOBS, "join", spy)
    first = cache.long_job(stand_in, "a", n=2)
    assert first == {"text": "a", "n": 2, "rows": [2, 2, 2]} and joined == ["model"] and len(CALLS) == 1
    first["rows"].append(99)  # a page that mutates what it got changes nothing kept
    again = cache.long_job(stand_in, "a", n=2)
    assert again["rows"] == [2, 2, 2] and joined == ["model"] and len(CALLS) == 1  # no queue, no forward
    with pytest.raises(ValueError, match="n must be"):
        cache.long_job(stand_in, "a", n=-1)
    with pytest.raises(ValueError, match="n must be"):
        cache.long_job(stand_in, "a", n=-1)
    assert len(CALLS) == 3  # an error is not kept
    with pytest.raises(TypeError, match="scalars"):
        cache.long_job(stand_in, ["a list"])
    assert jobs.LONG_JOBS.status() == {"running": [], "waiting": 0}


def test_sessions_wait_their_turn_behind_a_model_run_and_a_result_another_computed_is_not_computed_again():
    # a forward pass finished earlier in the process: the lane's typical duration, which estimates the waiting runs
    # ahead of positions 2 and 3 (without it this test passed only after another test of this file on its worker)
    done = jobs.LONG_JOBS.join("an earlier forward pass", None, "model")
    assert jobs.LONG_JOBS.wait(done, 1)
    jobs.LONG_JOBS.leave(done, finished=True)
    holder = jobs.LONG_JOBS.join("another session's forward pass", 0.6, "model")
    training = jobs.LONG_JOBS.join("a training of minutes", 600.0, "training")
    assert jobs.LONG_JOBS.wait(holder, 1) and jobs.LONG_JOBS.wait(training, 1)
    notices = [Notice() for _ in range(3)]
    got: list = []

    def session(i):
        got.append(cache.long_job(stand_in, "same text" if i < 2 else "other", notice=notices[i]))

    threads = [threading.Thread(target=session, args=(i,)) for i in range(3)]
    try:
        for i, t in enumerate(threads):
            t.start()
            time.sleep(0.1 * (i + 1))
        time.sleep(0.7)
        waiting = sorted(n.said[0] for n in notices)
        assert all("queue for model runs" in w for w in waiting)
        assert [w.split("**")[1] for w in waiting] == ["Waiting: position 1", "Waiting: position 2", "Waiting: position 3"]
        assert all("until yours starts" in w for w in waiting)  # the forward pass ahead came with an estimate
        assert not CALLS  # nothing ran while another model run held the lane, though a training runs too
    finally:
        jobs.LONG_JOBS.leave(holder)
    for t in threads:
        t.join(timeout=30)
    jobs.LONG_JOBS.leave(training)
    assert sorted(CALLS) == [("other", 1), ("same text", 1)]  # the second "same text" took the first's result
    assert len(got) == 3 and jobs.LONG_JOBS.status() == {"running": [], "waiting": 0}


needs_model = pytest.mark.skipif(not pm.available(), reason=f"the bundled model is not installed: {pm.INSTALL}")


@needs_model
def test_four_sessions_of_a_real_model_page_run_one_forward_at_a_time_beside_a_training(monkeypatch):
    """Four AppTest sessions of the order page, each with its own sentence A, open at once while a training holds the
    other lane.  Every forward pass (``Model.logits_many``) runs inside the model lane, one at a time; the first holds
    its turn until the three others wait, so each is told its place; none waits for the training."""
    lock = threading.Lock()
    running, outside, waited = [], [], []
    peak = [0]
    real = pm.Model.logits_many

    def counted(self, *a, **k):
        with lock:
            if not jobs.LONG_JOBS.status("model")["running"]:
                outside.append(a[0].shape)
            running.append(1)
            peak[0] = max(peak[0], len(running))
        try:
            if not waited:  # the first forward holds its turn until the three other sessions wait
                deadline = time.monotonic() + 60
                while jobs.LONG_JOBS.status("model")["waiting"] < 3 and time.monotonic() < deadline:
                    time.sleep(0.02)
                waited.append(jobs.LONG_JOBS.status("model")["waiting"])
            return real(self, *a, **k)
        finally:
            with lock:
                running.pop()

    told: list[str] = []
    said = jobs.waiting_text

    def spy(position, eta, queue=jobs.LONG_JOBS, kind="training"):
        told.append(f"{kind} {position}")
        return said(position, eta, queue, kind)

    pm.load()  # loaded once per process, before the sessions (a page's model_facts would load it)
    monkeypatch.setattr(pm.Model, "logits_many", counted)
    monkeypatch.setattr(jobs, "waiting_text", spy)
    one_parse_at_a_time(monkeypatch)
    training = jobs.LONG_JOBS.join("a training of minutes", 600.0, "training")
    assert jobs.LONG_JOBS.wait(training, 1)
    pages, failures = [], []
    start = threading.Barrier(4)

    def session(i):
        try:
            start.wait(timeout=60)
            pages.append(open_page("pages/real_order.py", {"a": f"The dog bit the man {i}", "n": "32"}, timeout=300))
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(repr(exc))

    threads = [threading.Thread(target=session, args=(i,)) for i in range(4)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=400)
    finally:
        jobs.LONG_JOBS.leave(training)
    assert not failures, failures
    assert waited == [3] and not outside and peak[0] == 1  # one forward at a time, each in its turn
    assert {"model 1", "model 2", "model 3"} <= set(told) and not any(t.startswith("training") for t in told)
    for at in pages:
        assert_clean(at)
        assert metrics(at)["after A, top next token (RoPE)"] and metrics(at)["perplexity, RoPE (32 tokens)"]
        assert not any("Waiting: position" in i.value for i in at.info)  # the note went when the turn came
    assert jobs.LONG_JOBS.status() == {"running": [], "waiting": 0}
