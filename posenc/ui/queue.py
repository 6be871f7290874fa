"""One queue per worker for long jobs: a training in the Extrapolation lab, a real model's forward pass.

The queue has one lane per kind of job (``KINDS``), each with ``SLOTS`` places: a training and a model run may run at
once, two trainings or two model runs may not.  A forward pass takes 0.5-2.2 s (bench/results.json, "model": 128 and
512 tokens); in one lane with the trainings it would wait minutes behind a training, so it waits only behind other
model runs.  A page asks for a model run through ``posenc.ui.cache.safe_long``, which answers a repeated request from
its results without queueing.

A click can ask for minutes of a core (issue 41: at the lab's defaults a Train click is 24 runs, ~290
core-seconds; at the largest settings the page offers, over 30 core-minutes).  So every long job of a worker
process goes through ``LONG_JOBS``: at most ``SLOTS`` of each kind run at once, the others wait in order of arrival
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
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

SLOTS = 1  # long jobs of one kind running at once in one worker process
KINDS = {"training": "trainings", "model": "model runs"}  # the lanes of LONG_JOBS: kind -> what the notice calls them
RECENT = 8  # finished jobs per lane whose durations estimate a job that came without one
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
    kind: str = "training"
    id: int = field(default_factory=lambda: next(_IDS))
    joined: float = field(default_factory=time.monotonic)
    started: float | None = None


class JobQueue:
    """At most ``slots`` jobs of each kind at once; the others wait, first come first served within their kind."""

    def __init__(self, name: str, slots: int = SLOTS, kinds: tuple[str, ...] = ("training",)):
        if slots < 1:
            raise ValueError(f"slots must be at least 1, got {slots}")
        if not kinds or any(k not in KINDS for k in kinds):
            raise ValueError(f"kinds must be among {tuple(KINDS)}, got {kinds!r}")
        self.name = name
        self.slots = slots
        self.kinds = tuple(kinds)
        self._cond = threading.Condition()
        self._waiting: list[Ticket] = []
        self._running: list[Ticket] = []
        self._recent: dict[str, deque] = {k: deque(maxlen=RECENT) for k in self.kinds}
        self.peak_running = 0  # the most jobs of one kind ever running at once (tests and the bench read it)

    def join(self, label: str, seconds: float | None = None, kind: str = "training") -> Ticket:
        if kind not in self.kinds:
            raise ValueError(f"kind must be one of {self.kinds}, got {kind!r}")
        ticket = Ticket(label, seconds, kind)
        with self._cond:
            self._waiting.append(ticket)
        return ticket

    def _lane(self, tickets: list[Ticket], kind: str) -> list[Ticket]:
        return [t for t in tickets if t.kind == kind]

    def _may_start(self, ticket: Ticket) -> bool:
        waiting = self._lane(self._waiting, ticket.kind)
        return len(self._lane(self._running, ticket.kind)) < self.slots and bool(waiting) and waiting[0] is ticket

    def wait(self, ticket: Ticket, timeout: float) -> bool:
        """Wait up to ``timeout`` s for ``ticket``'s turn; True once it runs (it then holds a slot)."""
        with self._cond:
            if ticket in self._running:
                return True
            if not self._cond.wait_for(lambda: self._may_start(ticket) or ticket not in self._waiting, timeout):
                return False
            if ticket not in self._waiting:
                raise RuntimeError(f"{ticket.label!r} left the queue while waiting")
            self._waiting.remove(ticket)
            ticket.started = time.monotonic()
            self._running.append(ticket)
            self.peak_running = max(self.peak_running, len(self._lane(self._running, ticket.kind)))
            self._cond.notify_all()
            return True

    def leave(self, ticket: Ticket, finished: bool = False) -> None:
        """Take ``ticket`` out, running or waiting (idempotent); the next in line may start.  A ``finished`` job's
        duration is kept to estimate the jobs of its kind that come without an estimate."""
        with self._cond:
            if ticket in self._waiting:
                self._waiting.remove(ticket)
            if ticket in self._running:
                self._running.remove(ticket)
                if finished and ticket.started is not None:
                    self._recent[ticket.kind].append(time.monotonic() - ticket.started)
            self._cond.notify_all()

    def typical(self, kind: str) -> float | None:
        """The mean duration of the last ``RECENT`` finished jobs of ``kind`` (None before the first)."""
        with self._cond:
            recent = self._recent[kind]
            return sum(recent) / len(recent) if recent else None

    def place(self, ticket: Ticket) -> tuple[int, float | None]:
        """(position, seconds until it starts) in its kind's lane: 0 while it runs, 1 when it is next; None when some
        job ahead has no estimate (its own, or the typical duration of its kind)."""
        with self._cond:
            if ticket in self._running:
                return 0, 0.0
            if ticket not in self._waiting:
                raise ValueError(f"{ticket.label!r} is not in the queue")
            waiting = self._lane(self._waiting, ticket.kind)
            ahead = waiting[: waiting.index(ticket)]
            usual = self.typical(ticket.kind)  # the condition's lock is re-entrant
            now = time.monotonic()
            jobs = [(t.seconds if t.seconds is not None else usual, now - (t.started or now))
                    for t in self._lane(self._running, ticket.kind)]
            jobs += [(t.seconds if t.seconds is not None else usual, 0.0) for t in ahead]
            if any(s is None for s, _ in jobs):
                return len(ahead) + 1, None
            left = sorted(max(s - done, 0.0) for s, done in jobs)
            # slots free up as jobs end: the k-th to start waits for the (k - free)-th end, roughly total / slots
            return len(ahead) + 1, sum(left) / self.slots

    def status(self, kind: str | None = None) -> dict:
        """{"running": [(label, seconds so far, estimate)], "waiting": count}, of one kind or of all."""
        with self._cond:
            now = time.monotonic()
            running = self._running if kind is None else self._lane(self._running, kind)
            waiting = self._waiting if kind is None else self._lane(self._waiting, kind)
            return {"running": [(t.label, now - (t.started or now), t.seconds) for t in running],
                    "waiting": len(waiting)}


LONG_JOBS = JobQueue("long jobs", SLOTS, kinds=tuple(KINDS))
_LEAVING = {"training": "Cancel leaves the queue", "model": "changing a control or leaving the page leaves the queue"}


def waiting_text(position: int, eta: float | None, queue: JobQueue = LONG_JOBS, kind: str = "training") -> str:
    """What a waiting session is told (Markdown; only numbers and the dashboard's own words)."""
    running = len(queue.status(kind)["running"])
    when = "no estimate yet" if eta is None else f"about {_duration(eta)} until yours starts"
    return (f"**Waiting: position {position}** in this server's queue for {KINDS[kind]} ({running} running, "
            f"{position - 1} ahead of yours); {when}. Trainings go one at a time, and so do model runs, so that every "
            f"page stays quick for everyone; {_LEAVING[kind]}.")


@contextmanager
def turn(label: str, *, seconds: float | None = None, kind: str = "training", notice=None,
         queue: JobQueue | None = None, poll: float = 0.5,
         on_wait: Callable[[int, float | None], None] | None = None) -> Iterator[Ticket]:
    """Hold a slot of ``kind``'s lane of ``queue`` (``LONG_JOBS``) for the body; wait for it first, saying so on
    ``notice`` (a Streamlit placeholder: ``notice.info(...)`` every ``poll`` s, which is also where Streamlit stops a
    cancelled run) and to ``on_wait(position, eta)``.  The job leaves the queue however the body ends."""
    q = queue or LONG_JOBS
    ticket = q.join(label, seconds, kind)
    finished = False
    try:
        waited = False
        while not q.wait(ticket, poll):
            waited = True
            position, eta = q.place(ticket)
            if on_wait is not None:
                on_wait(position, eta)
            if notice is not None:
                notice.info(waiting_text(position, eta, q, kind), icon=":material/hourglass_top:")
        if waited and notice is not None:
            notice.empty()
        yield ticket
        finished = True
    finally:
        q.leave(ticket, finished)


def run(fn: Callable, *args, label: str, seconds: float | None = None, kind: str = "training", notice=None, **kwargs):
    """``fn(*args, **kwargs)`` in its turn of ``kind``'s lane of ``LONG_JOBS``."""
    with turn(label, seconds=seconds, kind=kind, notice=notice):
        return fn(*args, **kwargs)
