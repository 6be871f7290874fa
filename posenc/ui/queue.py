"""One queue per worker for long jobs: a training in the Extrapolation lab.

A real model's forward pass does not wait here: it takes 0.5-2.2 s (bench/results.json, "model": 128 and 512 tokens),
and behind a training in a one-slot queue it would wait minutes.  It runs under ``posenc.ui.cache.compute_slot``,
which bounds it with every other computation of the worker (two at once).

A click can ask for minutes of a core (issue 41: at the lab's defaults a Train click is 24 runs, ~290
core-seconds; at the largest settings the page offers, over 30 core-minutes).  So every long job of a worker
process goes through ``LONG_JOBS``: at most ``SLOTS`` of them run at once, the others wait in order of arrival
and are told their place and an estimate ("Waiting: position 2 in this server's queue ... about 4 min until
yours starts").  Before the button, ``price`` says what a click costs (runs × steps × length, and the time it
should take) and refuses one above ``MAX_UNITS``.

In a page::

    from posenc.ui import queue as jobs

    cost = jobs.price(runs=len(cfg.schemes) * cfg.n_seeds, steps=cfg.steps, length=cfg.train_len,
                      seconds_per_unit=per_run / (DEFAULT.steps * DEFAULT.train_len))
    st.caption(cost.text)                                       # shown before Train, every run
    st.button("Train", ..., disabled=cost.refused)
    if pressed and not cost.refused:
        notice = st.empty()
        with jobs.turn(f"training {cfg.key()}", seconds=cost.seconds, notice=notice):
            run_experiment(cfg, progress=...)                   # one at a time per worker

``turn`` writes to ``notice`` (a Streamlit placeholder) while it waits, which is also where Streamlit stops a
run that a Cancel, a rerun or a closed tab ended: the job then leaves the queue (``finally``), and so does a job
that raised.  No Streamlit import: the queue itself is plain threading, tested on its own.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

SLOTS = 1  # long jobs running at once in one worker process
MAX_UNITS = 1_600_000  # runs × steps × length of one click: about twice the lab's default click (24 × 1,000 × 32)
_IDS = itertools.count(1)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "an unknown time"
    if seconds < 90:
        return f"{max(seconds, 1):.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


@dataclass(frozen=True)
class Price:
    """What one click of a long job costs: ``units`` = runs × steps × length, ``seconds`` of one core (estimated)."""

    runs: int
    steps: int
    length: int
    seconds: float | None
    cap: int = MAX_UNITS

    @property
    def units(self) -> int:
        return self.runs * self.steps * self.length

    @property
    def refused(self) -> bool:
        return self.units > self.cap

    @property
    def text(self) -> str:
        """One sentence for the page (plain words and numbers, no outside text)."""
        what = (f"{self.runs:,} run{'s' * (self.runs != 1)} × {self.steps:,} steps × length {self.length:,} = "
                f"{self.units:,} units")
        if self.refused:
            return (f"{what}: more than this server runs for one click ({self.cap:,} units, about "
                    f"{_duration(self.seconds * self.cap / self.units if self.seconds else None)}). Choose fewer schemes, "
                    "seeds or steps, or a shorter length.")
        return (f"{what}, about {_duration(self.seconds)} of one core. Long jobs run one at a time on this server; "
                "others wait their turn.")


def price(runs: int, steps: int, length: int, *, seconds_per_unit: float | None = None, cap: int = MAX_UNITS) -> Price:
    """The cost of a click: ``runs`` trainings (schemes × seeds) of ``steps`` steps at ``length`` positions."""
    for name, v in (("runs", runs), ("steps", steps), ("length", length)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    seconds = None if seconds_per_unit is None else float(seconds_per_unit) * runs * steps * length
    return Price(runs, steps, length, seconds, cap)


@dataclass(eq=False)
class Ticket:
    """One job's place: its label (the dashboard's own words), estimated seconds, and when it started running."""

    label: str
    seconds: float | None = None
    id: int = field(default_factory=lambda: next(_IDS))
    joined: float = field(default_factory=time.monotonic)
    started: float | None = None


class JobQueue:
    """At most ``slots`` jobs at once; the others wait, first come first served."""

    def __init__(self, name: str, slots: int = SLOTS):
        if slots < 1:
            raise ValueError(f"slots must be at least 1, got {slots}")
        self.name = name
        self.slots = slots
        self._cond = threading.Condition()
        self._waiting: list[Ticket] = []
        self._running: list[Ticket] = []
        self.peak_running = 0  # the most jobs ever running at once (tests and the bench read it)

    def join(self, label: str, seconds: float | None = None) -> Ticket:
        ticket = Ticket(label, seconds)
        with self._cond:
            self._waiting.append(ticket)
        return ticket

    def _may_start(self, ticket: Ticket) -> bool:
        return len(self._running) < self.slots and bool(self._waiting) and self._waiting[0] is ticket

    def wait(self, ticket: Ticket, timeout: float) -> bool:
        """Wait up to ``timeout`` s for ``ticket``'s turn; True once it runs (it then holds a slot)."""
        with self._cond:
            if ticket in self._running:
                return True
            if not self._cond.wait_for(lambda: self._may_start(ticket) or ticket not in self._waiting, timeout):
                return False
            if ticket not in self._waiting:
                raise RuntimeError(f"{ticket.label!r} left the queue while waiting")
            self._waiting.pop(0)
            ticket.started = time.monotonic()
            self._running.append(ticket)
            self.peak_running = max(self.peak_running, len(self._running))
            self._cond.notify_all()
            return True

    def leave(self, ticket: Ticket) -> None:
        """Take ``ticket`` out, running or waiting (idempotent); the next in line may start."""
        with self._cond:
            if ticket in self._waiting:
                self._waiting.remove(ticket)
            if ticket in self._running:
                self._running.remove(ticket)
            self._cond.notify_all()

    def place(self, ticket: Ticket) -> tuple[int, float | None]:
        """(position, seconds until it starts): 0 while it runs, 1 when it is next; None when some job ahead has
        no estimate."""
        with self._cond:
            if ticket in self._running:
                return 0, 0.0
            if ticket not in self._waiting:
                raise ValueError(f"{ticket.label!r} is not in the queue")
            ahead = self._waiting[: self._waiting.index(ticket)]
            now = time.monotonic()
            jobs = [(t.seconds, now - (t.started or now)) for t in self._running] + [(t.seconds, 0.0) for t in ahead]
            if any(s is None for s, _ in jobs):
                return len(ahead) + 1, None
            left = sorted(max(s - done, 0.0) for s, done in jobs)
            # slots free up as jobs end: the k-th to start waits for the (k - free)-th end, roughly total / slots
            return len(ahead) + 1, sum(left) / self.slots

    def status(self) -> dict:
        """{"running": [(label, seconds so far, estimate)], "waiting": count}."""
        with self._cond:
            now = time.monotonic()
            return {"running": [(t.label, now - (t.started or now), t.seconds) for t in self._running],
                    "waiting": len(self._waiting)}


LONG_JOBS = JobQueue("long jobs", SLOTS)


def waiting_text(position: int, eta: float | None, queue: JobQueue = LONG_JOBS) -> str:
    """What a waiting session is told (Markdown; only numbers and the dashboard's own words)."""
    running = len(queue.status()["running"])
    when = "no estimate yet" if eta is None else f"about {_duration(eta)} until yours starts"
    return (f"**Waiting: position {position}** in this server's queue for long jobs ({running} running, "
            f"{position - 1} ahead of yours); {when}. Trainings and model runs go one at a time so that every "
            "page stays quick for everyone; Cancel leaves the queue.")


@contextmanager
def turn(label: str, *, seconds: float | None = None, notice=None, queue: JobQueue | None = None, poll: float = 0.5,
         on_wait: Callable[[int, float | None], None] | None = None) -> Iterator[Ticket]:
    """Hold ``queue``'s (``LONG_JOBS``) slot for the body; wait for it first, saying so on ``notice`` (a Streamlit
    placeholder: ``notice.info(...)`` every ``poll`` s, which is also where Streamlit stops a cancelled run) and to
    ``on_wait(position, eta)``.  The job leaves the queue however the body ends."""
    q = queue or LONG_JOBS
    ticket = q.join(label, seconds)
    try:
        waited = False
        while not q.wait(ticket, poll):
            waited = True
            position, eta = q.place(ticket)
            if on_wait is not None:
                on_wait(position, eta)
            if notice is not None:
                notice.info(waiting_text(position, eta, q), icon=":material/hourglass_top:")
        if waited and notice is not None:
            notice.empty()
        yield ticket
    finally:
        q.leave(ticket)


def run(fn: Callable, *args, label: str, seconds: float | None = None, notice=None, **kwargs):
    """``fn(*args, **kwargs)`` in its turn of ``LONG_JOBS`` (a real model's forward pass, any other long job)."""
    with turn(label, seconds=seconds, notice=notice):
        return fn(*args, **kwargs)
