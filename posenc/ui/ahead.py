"""The values a hand is about to reach, computed while the process has nothing else to do (issue 42).

A hand on a slider moves it one step at a time, and mostly on in the direction it was going.  A page names, for a heavy
call, which argument each control sets: ``safe(comparison, n, d, ..., ahead={"n": 0, "d": 1})``.  After the run, that
call is queued again at the values one step of those controls reaches (``controls.step_values``): first the control
the hand last moved, onward and then back, then every other one onward, then back (a page's calls in its order at each
rank), at most ``PER_RUN`` calls.  One thread per process computes them through the shared cache (``posenc.ui.cache``),
so a step onto such a value finds its result there, as a repeat does.

It takes only what is idle, so that it never slows a step it is meant to speed up:
- it starts a call only when no page run is drawing, none ended in the last ``GRACE_S`` (its page is still being sent
  and painted), and no computation holds a slot (``cache.compute_slot``);
- ``posenc._threads.pmap`` runs inline in its thread, so its calls never take the pool's threads; a call of many items
  (Compare measures some twenty schemes) waits between two of them while a run draws, so a step overlaps at most one
  item of it, unless that run waits for this very call (``wanted``);
- its thread keeps the process's CPU priority.  At nice 19 it held Python's interpreter lock whenever the OS took the
  CPU from it, and the server's own threads waited for it: Compare's repeated first paints took 1.25 s against 1.09 s
  without values ahead, and 1.37 against 1.37 s at nice 0 (2026-12-07, 12 repeated paints each way, docs/performance.md);
- it keeps at most ``MAX_PENDING`` calls, the newest first: a queue that other sessions' runs fill drops the oldest.

A call that raises is dropped (the step that reaches its value shows the message, as without this).  It holds no
computation slot of its own: at most one computation beyond ``cache.MAX_CONCURRENT`` at a time.  ``POSENC_AHEAD=0``
turns it off.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import streamlit as st

from posenc import _threads
from posenc.ui import controls

ENV = "POSENC_AHEAD"
PER_RUN = 8  # calls queued by one run
MAX_PENDING = 12  # calls waiting in the process, newest first
THREAD = "posenc-ahead"  # posenc._threads.pmap runs inline in a thread of this name
_IDLE_POLL_S = 0.05
GRACE_S = 0.3  # after a page run ends, while its page is sent and painted, no call ahead starts
_PLAN = "_posenc_ahead_plan"  # session state: this run's calls, queued at its end (``release``)
_MOVED = "_posenc_ahead_moved"  # session state: (the control last moved, +1 / -1 its direction)

_pending: deque = deque()
_cond = threading.Condition()
_runs = [0]  # page runs drawing now (``drawing``)
_last_end = [0.0]  # time.monotonic() when the last page run ended
_done: list[tuple] = []  # calls computed, newest last (at most MAX_PENDING kept: ``done``)
_worker: list[threading.Thread] = []
_current: list = [None]  # the call being computed now
_wanted: dict[tuple, int] = {}  # calls runs are asking the cache for now, and how many runs (``wanted``)


def enabled() -> bool:
    """Whether values ahead are computed (``POSENC_AHEAD`` is not "0")."""
    return os.environ.get(ENV, "1").strip() != "0"


def plan(call: tuple, slides: dict) -> None:
    """Queue, for the end of this run, the cache key ``call`` ((qualified name, args, kwargs), see ``cache._key``) at the
    values one step of each control in ``slides`` ({control key: the position of the argument it sets, or a keyword's
    name}) reaches."""
    if not enabled() or not slides:
        return
    name, args, kwargs = call
    moved, direction = _motion()
    onward, back = [], []
    for key in slides:
        up, down = controls.step_values(key)
        ahead_, behind = (down, up) if key == moved and direction < 0 else (up, down)
        onward += [(key, v) for v in ahead_]
        back += [(key, v) for v in behind]
    # rank: the moved control onward (0), then back (1), every other one onward (2), then back (3)
    ranked = [(0 if k == moved else 2, k, v) for k, v in onward] + [(1 if k == moved else 3, k, v) for k, v in back]
    for rank, key, value in ranked:
        where = slides[key]
        if isinstance(where, int):
            if not 0 <= where < len(args):
                raise TypeError(f"ahead: argument {where} of {name} for control {key!r} does not exist")
            new = (name, (*args[:where], value, *args[where + 1:]), kwargs)
        else:
            new = (name, args, tuple(sorted({**dict(kwargs), where: value}.items())))
        st.session_state.setdefault(_PLAN, []).append((rank, new))


def _motion() -> tuple[str | None, int]:
    """(the control the hand last moved, +1 if it went up, -1 if down): one bound so far in this run whose value differs
    from the previous run's (``controls.previous_values``), else the one ``note_values`` kept; (None, +1) before any."""
    moved, direction = st.session_state.get(_MOVED, (None, 1))
    before = controls.previous_values()
    for key, (value, *_) in controls.bound_values().items():
        old = before.get(key)
        if old is None or old == value:
            continue
        numbers = all(isinstance(x, int | float) and not isinstance(x, bool) for x in (old, value))
        moved, direction = key, (1 if not numbers or value > old else -1)
    return moved, direction


def note_values() -> None:
    """Remember which control this run moved, and which way (``_motion`` of the next runs, until another moves)."""
    st.session_state[_MOVED] = _motion()


def planned() -> list[tuple]:
    """This run's calls ahead so far, in the order they will be computed (by rank, then as planned), each once."""
    ranked = sorted(st.session_state.get(_PLAN, []), key=lambda rc: rc[0])  # stable: a page's calls in its order
    return list(dict.fromkeys(c for _, c in ranked))


def release() -> None:
    """Hand this run's planned calls (at most PER_RUN) to the worker, ahead of older ones."""
    calls = planned()
    st.session_state.pop(_PLAN, None)
    if calls and enabled():
        enqueue(calls[:PER_RUN])


def enqueue(calls: list[tuple]) -> None:
    """Put ``calls`` (cache keys) first in the process's queue, in their order, dropping the oldest beyond MAX_PENDING."""
    with _cond:
        for c in reversed(calls):
            if c in _pending:
                _pending.remove(c)
            _pending.appendleft(c)
        while len(_pending) > MAX_PENDING:
            _pending.pop()
        _start()
        _cond.notify_all()


def done() -> list[tuple]:
    """The calls computed (or dropped for an error) lately, oldest first (at most MAX_PENDING)."""
    with _cond:
        return list(_done)


@contextmanager
def drawing() -> Iterator[None]:
    """Around a page run (app.py) or a section's own rerun: no call ahead starts while one draws.  The run's plan starts
    empty (a run that ``st.rerun`` cut short planned calls for values it no longer shows)."""
    st.session_state.pop(_PLAN, None)
    with _cond:
        _runs[0] += 1
    try:
        yield
    finally:
        with _cond:
            _runs[0] -= 1
            _last_end[0] = time.monotonic()
            _cond.notify_all()


def _idle() -> bool:
    return _runs[0] == 0 and time.monotonic() - _last_end[0] >= GRACE_S and _hooks["slots_in_use"]() == 0


def _wait_idle() -> None:
    """Wait until nothing else runs (``_idle``): between two items of a call in progress; not while a run waits for
    that call (Streamlit's cache lets one thread compute a key, the others wait for it)."""
    with _cond:
        while not (_idle() or _current[0] in _wanted):
            _cond.wait(_IDLE_POLL_S)


@contextmanager
def wanted(call: tuple) -> Iterator[None]:
    """Around a run's own cache call (``cache.cached``): should the worker be computing ``call``, it no longer pauses."""
    with _cond:
        _wanted[call] = _wanted.get(call, 0) + 1
        _cond.notify_all()
    try:
        yield
    finally:
        with _cond:
            _wanted[call] -= 1
            if not _wanted[call]:
                del _wanted[call]


def _start() -> None:
    if _worker and _worker[0].is_alive():
        return
    t = threading.Thread(target=_loop, name=THREAD, daemon=True)
    _worker[:] = [t]
    t.start()


class _QuietThread(logging.Filter):
    """Streamlit warns of a "missing ScriptRunContext" whenever a thread outside a session reads the cache: this one does
    by design."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.threadName != THREAD


_hooks: dict[str, Callable] = {}  # what the shared cache lends the worker (``bind``)


def bind(*, compute: Callable[[tuple], object], slots_in_use: Callable[[], int], hold_no_slot: Callable[[], None]) -> None:
    """posenc.ui.cache, as it loads, gives the worker its ways in: ``compute(call)`` fills the cache for a call,
    ``slots_in_use()`` counts the computations running, ``hold_no_slot()`` lets the calling thread compute without one.
    (This module plans the calls the cache's callers name, so it cannot import the cache.)"""
    _hooks.update(compute=compute, slots_in_use=slots_in_use, hold_no_slot=hold_no_slot)


def _loop() -> None:
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(_QuietThread())
    _hooks["hold_no_slot"]()  # its calls wait for no slot, and hold none
    _threads.pause_between_items(_wait_idle)  # and a call of many items (Compare's schemes) waits between two of them
    while True:
        with _cond:
            while not (_pending and enabled() and _idle()):  # turned off: what is queued waits
                _cond.wait(_IDLE_POLL_S)
            call = _current[0] = _pending.popleft()
        try:
            _hooks["compute"](call)
        except Exception:  # noqa: BLE001 -- a value ahead that fails is the step's to report, when a hand reaches it
            logging.getLogger(__name__).debug("ahead: %s failed", call[0], exc_info=True)
        with _cond:
            _current[0] = None
            _done.append(call)
            del _done[:-MAX_PENDING]
