"""Issue 41, done when "four sessions pressing Train run one training at a time, with the others told their place",
on the page itself: four AppTest sessions of pages/lab.py in four threads of one process (one worker, so one
``LONG_JOBS`` queue), each at its own untrained configuration, press Train at once.  The training
(``run_experiment``, replaced by a stand-in that returns the shipped run) records how many ran at once and whether
each ran inside the queue; the first holds its turn until the three others wait, so each of them is told its place.
A page that trains outside the queue fails here: trainings overlap, none holds a turn, nobody is told a place."""

from __future__ import annotations

import threading
import time

from apphelpers import assert_clean, metrics, one_parse_at_a_time, open_page, text_of

import posenc.lab.experiment as experiment
import posenc.ui.lab_train as lab_train
from posenc.lab.results import load_shipped
from posenc.ui import queue as jobs

PAGE = "pages/lab.py"
SMALL = {"schemes": ["NoPE", "T5 buckets"], "seeds": "1", "steps": "250", "L": "8"}  # a cheap click, each V its own


def test_four_sessions_pressing_train_train_one_at_a_time_and_the_others_are_told_their_place(monkeypatch):
    shipped = load_shipped()
    lock = threading.Lock()
    running: list = []
    trained: list = []
    outside: list = []
    peak = [0]

    def stand_in(cfg, progress=None, **_):
        with lock:
            if not jobs.LONG_JOBS.status()["running"]:
                outside.append(cfg.key())  # no session holds the worker's turn: trained outside the queue
            running.append(cfg.key())
            peak[0] = max(peak[0], len(running))
            first = not trained
        if first:  # hold the turn until the three other clicks wait, so each is told its place at least once
            deadline = time.monotonic() + 60
            while jobs.LONG_JOBS.status()["waiting"] < 3 and time.monotonic() < deadline:
                time.sleep(0.02)
        time.sleep(1.2)  # longer than the queue's 0.5 s poll: every waiting session hears where it is
        if progress is not None:
            progress({"run": 0, "step": 1, "steps": 1, "runs": 1, "name": "stand-in", "seed": 0})
        with lock:
            running.remove(cfg.key())
            trained.append(cfg.key())
        return shipped["results"], shipped["weights"]

    monkeypatch.setattr(experiment, "run_experiment", stand_in)  # what the page imports, if it trained by itself
    monkeypatch.setattr(lab_train, "run_experiment", stand_in)
    told: dict[int, list] = {}
    said = jobs.waiting_text

    def spy(position, eta, queue=jobs.LONG_JOBS, kind="training"):
        told.setdefault(threading.get_ident(), []).append((position, eta))
        return said(position, eta, queue, kind)

    monkeypatch.setattr(jobs, "waiting_text", spy)

    one_parse_at_a_time(monkeypatch)  # four AppTests run the page in four threads at once
    pages = [open_page(PAGE, {**SMALL, "V": str(v)}, timeout=180) for v in (3, 4, 5, 6)]
    for at in pages:
        assert_clean(at)
        assert metrics(at)["results"] == "shipped" and "has not been trained on this server yet" in text_of(at)
        assert not at.button(key="lab_train").disabled
    failures: list = []
    start = threading.Barrier(len(pages))

    def press(at):
        try:
            start.wait(timeout=60)
            at.button(key="lab_train").click().run(timeout=180)
        except Exception as exc:  # noqa: BLE001 - reported below, with the thread's page
            failures.append(repr(exc))

    threads = [threading.Thread(target=press, args=(at,)) for at in pages]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not failures, failures
    assert not outside, f"trained outside the worker's queue: {outside}"
    assert peak[0] == 1, f"{peak[0]} trainings at once in one worker"
    assert len(set(trained)) == 4  # every click trained its own configuration, one after another
    waiting = sorted(told.values(), key=lambda said: said[0][0])
    assert [said[0][0] for said in waiting] == [1, 2, 3]  # three sessions waited, each told its place
    for said in waiting:
        assert all(eta is not None and eta > 0 for _, eta in said)  # with an estimate (the click's price)
        assert [k for k, _ in said] == sorted((k for k, _ in said), reverse=True)  # moving up, never back
    for at in pages:
        assert_clean(at)
        assert metrics(at)["results"] == "custom"  # each session got its run once its turn came
        assert not any("Waiting: position" in i.value for i in at.info)  # the note went when the turn came
    assert jobs.LONG_JOBS.status() == {"running": [], "waiting": 0}


def test_a_clicks_price_is_shown_before_train_and_a_click_over_the_cap_is_refused():
    at = open_page(PAGE, timeout=180)
    assert_clean(at)
    prices = [c.value for c in at.caption if " units" in c.value]
    assert len(prices) == 1 and "of one core" in prices[0] and "one at a time" in prices[0]
    assert not at.button(key="lab_train").disabled
    most = open_page(PAGE, {"steps": "4000", "L": "64", "seeds": "3"}, timeout=180)  # the largest the page offers
    assert_clean(most)
    refused = [c.value for c in most.caption if " units" in c.value]
    assert len(refused) == 1 and f"{jobs.MAX_UNITS:,} units" in refused[0] and "fewer schemes" in refused[0]
    assert most.button(key="lab_train").disabled


def test_a_configuration_another_session_trained_is_not_trained_again(monkeypatch):
    shipped = load_shipped()
    calls: list = []

    def stand_in(cfg, progress=None, **_):
        calls.append(cfg.key())
        return shipped["results"], shipped["weights"]

    monkeypatch.setattr(experiment, "run_experiment", stand_in)
    monkeypatch.setattr(lab_train, "run_experiment", stand_in)
    query = {**SMALL, "V": "7"}
    a, b = open_page(PAGE, query, timeout=180), open_page(PAGE, query, timeout=180)
    a.button(key="lab_train").click().run(timeout=180)
    b.button(key="lab_train").click().run(timeout=180)  # opened before a trained: finds a's run in its turn
    assert len(calls) == 1 and metrics(b)["results"] == "custom"
