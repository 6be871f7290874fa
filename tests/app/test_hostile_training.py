"""Issue 41, S3: CPU through the lab.  Training ran in each session's script thread with no per-worker limit (four
sessions trained at once in one worker).  posenc.ui.queue: at most one long job at a time per worker, the others
told "waiting, position k" with an estimate, and a click's cost shown before Train and capped."""

from __future__ import annotations

import threading
import time

import pytest

from posenc.lab.experiment import LabConfig
from posenc.ui import queue as jobs


class Notice:
    """A stand-in for a Streamlit placeholder (st.empty()): records what it was told."""

    def __init__(self):
        self.said: list[str] = []
        self.emptied = 0

    def info(self, text, icon=None):
        self.said.append(text)

    def empty(self):
        self.emptied += 1


def test_four_sessions_pressing_train_run_one_at_a_time_and_are_told_their_place():
    q = jobs.JobQueue("test", slots=1)
    running, order, places = [], [], {}
    lock = threading.Lock()
    notices = {i: Notice() for i in range(4)}
    start = threading.Barrier(4)

    def session(i):
        start.wait()
        time.sleep(0.05 * i)  # four clicks, in this order
        with jobs.turn(f"training {i}", seconds=0.4, notice=notices[i], queue=q, poll=0.02,
                       on_wait=lambda k, eta: places.setdefault(i, []).append((k, eta))):
            with lock:
                running.append(i)
                assert len(running) == 1, f"{running} train at once"
                order.append(i)
            time.sleep(0.4)
            with lock:
                running.remove(i)

    threads = [threading.Thread(target=session, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert order == [0, 1, 2, 3] and q.peak_running == 1
    assert 0 not in places  # the first click runs at once
    for i in (1, 2, 3):
        first_place, first_eta = places[i][0]
        assert first_place == i  # told its place in the queue
        assert first_eta is not None and 0.4 * (i - 1) <= first_eta <= 0.4 * i + 0.05  # and an estimate
        assert [k for k, _ in places[i]] == sorted((k for k, _ in places[i]), reverse=True)  # moving up, never back
        assert f"Waiting: position {i}" in notices[i].said[0] and "until yours starts" in notices[i].said[0]
        assert notices[i].emptied == 1  # the note goes when its turn comes
    assert q.status() == {"running": [], "waiting": 0}


def test_a_cancelled_or_failed_job_leaves_the_queue():
    q = jobs.JobQueue("test", slots=1)

    class Stop(Exception):  # what Streamlit raises in the script thread when a run is cancelled
        pass

    holder = q.join("held", seconds=60)
    assert q.wait(holder, 1)

    def cancel(_k, _eta):
        raise Stop

    with pytest.raises(Stop), jobs.turn("waiting", queue=q, poll=0.01, on_wait=cancel):
        pass
    assert q.status()["waiting"] == 0  # the cancelled click left its place
    q.leave(holder)
    with pytest.raises(ZeroDivisionError), jobs.turn("failing", queue=q):
        raise ZeroDivisionError("a training that failed")
    assert q.status() == {"running": [], "waiting": 0}  # a job that raised gave its slot back
    with jobs.turn("next", queue=q, poll=0.01) as ticket:
        assert q.place(ticket) == (0, 0.0)


def test_an_estimate_needs_every_job_ahead_to_have_one():
    q = jobs.JobQueue("test", slots=1)
    a, b, c = q.join("a", 100.0), q.join("b", None), q.join("c", 10.0)
    assert q.wait(a, 1)
    assert q.place(b)[0] == 1 and q.place(b)[1] == pytest.approx(100, abs=1)
    assert q.place(c) == (2, None)  # b has no estimate
    assert "no estimate yet" in jobs.waiting_text(2, None, q)


def test_a_clicks_cost_is_shown_and_capped():
    """The lab's own settings: its defaults fit the cap; the largest the page offers do not."""
    default = LabConfig()
    per_unit = 12.0 / (default.steps * default.train_len)  # ~12 s per scheme and seed at the defaults
    runs = len(default.schemes) * default.n_seeds
    cost = jobs.price(runs=runs, steps=default.steps, length=default.train_len, seconds_per_unit=per_unit)
    assert not cost.refused and cost.units == runs * default.steps * default.train_len
    assert f"{cost.units:,} units" in cost.text and "min of one core" in cost.text
    most = jobs.price(runs=runs, steps=4000, length=64, seconds_per_unit=per_unit)  # ?steps=4000&L=64&seeds=3
    assert most.refused and f"{jobs.MAX_UNITS:,} units" in most.text and "fewer schemes" in most.text
    with pytest.raises(ValueError, match="steps"):
        jobs.price(runs=1, steps=0, length=8)


def test_the_long_job_queue_is_one_per_process_with_a_lane_for_trainings_and_one_for_model_runs():
    assert jobs.LONG_JOBS.slots == 1 and jobs.LONG_JOBS.kinds == ("training", "model")
    from posenc.ui import queue as again

    assert again.LONG_JOBS is jobs.LONG_JOBS
    assert jobs.run(lambda x: x + 1, 1, label="a forward pass", seconds=0.1, kind="model") == 2
    with pytest.raises(ValueError, match="kind"):
        jobs.LONG_JOBS.join("a job of no known kind", kind="export")
    with pytest.raises(ValueError, match="kinds"):
        jobs.JobQueue("test", kinds=("training", "download"))


def test_a_model_run_waits_behind_model_runs_only_never_behind_a_training():
    """The same queue serves the real-model pages' forward passes: one at a time, each told its place among the model
    runs, while a training of minutes holds the other lane."""
    q = jobs.JobQueue("test", slots=1, kinds=("training", "model"))
    training = q.join("a training of minutes", 600.0)
    assert q.wait(training, 1)
    first = q.join("forward 1", None, "model")
    assert q.wait(first, 1)  # runs at once beside the training
    second, third = q.join("forward 2", None, "model"), q.join("forward 3", None, "model")
    late_training = q.join("a second training", 600.0)
    assert not q.wait(second, 0.05) and not q.wait(late_training, 0.05)  # one of each kind at a time
    assert q.place(second) == (1, None) and q.place(third) == (2, None)  # no estimate before a model run ended
    assert q.place(late_training) == (1, pytest.approx(600, abs=2))  # trainings count only trainings
    time.sleep(0.2)
    q.leave(first, finished=True)
    usual = q.typical("model")  # forward 1 ran from its start to its end: ≥ 0.3 s (two waits of 0.05 s and 0.2 s)
    assert usual is not None and 0.25 <= usual <= 5
    assert q.wait(second, 1) and q.place(third) == (1, pytest.approx(usual, abs=0.2))  # the lane's typical run
    assert q.status("model") == {"running": [("forward 2", pytest.approx(0, abs=0.5), None)], "waiting": 1}
    assert "position 1** in this server's queue for model runs" in jobs.waiting_text(1, 0.2, q, "model")
    q.leave(second)  # not finished (a rerun stopped it): its time says nothing of a model run's
    assert len(q._recent["model"]) == 1 and q.peak_running == 1
    for t in (third, late_training, training):
        q.leave(t)
    assert q.status() == {"running": [], "waiting": 0}
