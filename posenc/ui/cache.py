"""One cache for every posenc call a page makes, keyed on scalar arguments.

``cached(fn, *args, **kwargs)`` calls a posenc function through ``st.cache_data``.  The key is the
function's qualified name plus its arguments, which must be scalars, strings or tuples of them
(never arrays: Streamlit hashes large arrays from a sample, so array keys could collide).
Results are pickled copies, so a page cannot corrupt the cache by mutating what it gets.
Exceptions are not cached; ``safe`` turns a ValueError into a visible message.

Memory.  The cache keeps at most MAX_BYTES of pickled results (least recently used evicted first), so
links that bust it (every one a new setting) cannot grow it; what a process needs beyond that is the
working memory of the computations themselves, so at most MAX_CONCURRENT of them run at once
(``compute_slot``): twenty sessions opening twenty heavy links queue for a slot instead of each holding
a few hundred MB of intermediates at the same moment.  A repeated link is a cache hit: nothing is kept.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import pickle
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import streamlit as st

from posenc._kept import Kept
from posenc.ui import md
from posenc.ui import queue as jobs
from posenc.ui.ahead import bind as _bind_ahead
from posenc.ui.ahead import plan as _plan_ahead
from posenc.ui.ahead import wanted as _wanted

MAX_ENTRIES = 512
MAX_BYTES = "64MB"  # pickled results kept, least-recently-used first; views return only what is drawn
MAX_CONCURRENT = 2  # posenc computations at once in one process (cache misses, upload analyses, exports)
LONG_BYTES = 16 << 20  # pickled results of long jobs kept per process (a real-model view's result is 10-200 kB)
_SCALARS = (int, float, str, bool, type(None))
_SLOTS = threading.BoundedSemaphore(MAX_CONCURRENT)
_HELD = threading.local()  # a thread that holds a slot does not wait for a second one (no deadlock when nested)
_TRIM_EVERY = 1.0  # seconds between two returns of freed heap memory to the OS
_last_trim = [0.0]


def _libc_trim() -> Callable[[int], int] | None:
    try:  # glibc only: elsewhere memory is returned as the allocator sees fit
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return None


_TRIM = _libc_trim()


def release_memory() -> None:
    """Give the heap pages a finished computation freed back to the OS (glibc's malloc_trim), at most once a second.

    numpy's intermediates below glibc's mmap threshold come from the heap, and glibc keeps freed heap
    pages mapped: without this, a process's RSS stays at the peak of its heaviest page long after.
    """
    now = time.monotonic()
    if _TRIM is None or now - _last_trim[0] < _TRIM_EVERY:
        return
    _last_trim[0] = now
    _TRIM(0)


@contextmanager
def compute_slot() -> Iterator[None]:
    """Hold one of the MAX_CONCURRENT computation slots of this process (waits for a free one)."""
    if getattr(_HELD, "depth", 0):
        _HELD.depth += 1
        try:
            yield
        finally:
            _HELD.depth -= 1
        return
    with _SLOTS:
        _HELD.depth = 1
        try:
            yield
        finally:
            _HELD.depth = 0
            release_memory()


def _check_key(value: Any, where: str) -> None:
    if isinstance(value, _SCALARS):
        return
    if isinstance(value, tuple):
        for v in value:
            _check_key(v, where)
        return
    raise TypeError(f"cached() arguments must be scalars or tuples of scalars; {where} is {type(value).__name__}")


def _key(fn: Callable, args: tuple, kwargs: dict) -> tuple[str, tuple, tuple]:
    """(qualified name, args, sorted kwargs): what ``cached`` and ``long_job`` key a result on, once every argument is
    checked to be a scalar or a tuple of them."""
    for i, a in enumerate(args):
        _check_key(a, f"argument {i}")
    for k, v in kwargs.items():
        _check_key(v, f"argument {k!r}")
    return f"{fn.__module__}:{fn.__qualname__}", tuple(args), tuple(sorted(kwargs.items()))


def _resolve(qualname: str) -> Callable:
    module, _, name = qualname.partition(":")
    if not module.startswith("posenc"):
        raise ValueError(f"only posenc functions can be cached, got {qualname}")
    obj: Any = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


@st.cache_data(max_entries=MAX_ENTRIES, max_size=MAX_BYTES, show_spinner=False)
def _call(qualname: str, args: tuple, kwargs: tuple) -> Any:
    with compute_slot():
        return _resolve(qualname)(*args, **dict(kwargs))


def slots_in_use() -> int:
    """Computation slots held now, by any thread of this process."""
    return MAX_CONCURRENT - _SLOTS._value  # BoundedSemaphore keeps its count here (CPython)


def hold_no_slot() -> None:
    """The calling thread's computations take no slot (``posenc.ui.ahead``'s worker: it starts one only when none is held)."""
    _HELD.depth = 1


def cached(fn: Callable, *args, ahead: dict | None = None, **kwargs) -> Any:
    """``fn(*args, **kwargs)`` through the shared scalar-keyed cache (``fn`` lives in posenc).

    ``ahead``: {control key: the position of the argument it sets, or a keyword's name}: once the run ends, the same call
    at the values one step of those controls reaches is computed in the background (``posenc.ui.ahead``)."""
    key = _key(fn, args, kwargs)
    if ahead:
        _plan_ahead(key, ahead)
    with _wanted(key):  # should the thread that computes ahead be computing it, it stops pausing for this run
        return _call(*key)


def safe(fn: Callable, *args, ahead: dict | None = None, **kwargs) -> Any | None:
    """``cached(...)``, but a ValueError becomes an on-page error and the result is None."""
    try:
        return cached(fn, *args, ahead=ahead, **kwargs)
    except ValueError as exc:  # the message may quote a pasted config or a link value: shown as text
        st.error(md.escape(str(exc), limit=600), icon=":material/error:")
        return None


KEPT = Kept(max_bytes=LONG_BYTES)  # pickled results (bytes), bounded by their total size


def long_job(fn: Callable, *args, kind: str = "model", notice=None, **kwargs) -> Any:
    """``fn(*args, **kwargs)`` (a posenc function, scalar arguments) as a long job of this worker.

    A result computed before in this process comes back at once, with no wait.  A new one waits for its turn in
    ``kind``'s lane of the worker's long-job queue (``posenc.ui.queue.LONG_JOBS``: one model run at a time, beside at
    most one training), saying where it waits on ``notice``; it then runs in a computation slot, unless another
    session computed the same result meanwhile.  Results are pickled copies, as in ``cached``.
    """
    key = _key(fn, args, kwargs)
    blob = KEPT.get(key)
    if blob is None:
        with jobs.turn(f"{fn.__name__} ({jobs.KINDS[kind]})", kind=kind, notice=notice):
            blob = KEPT.get(key)  # computed by another session while this one waited
            if blob is None:
                with compute_slot():
                    blob = pickle.dumps(fn(*args, **kwargs), protocol=pickle.HIGHEST_PROTOCOL)
                KEPT.put(key, blob)
    return pickle.loads(blob)


def safe_long(fn: Callable, *args, **kwargs) -> Any | None:
    """``long_job(...)`` with a placeholder for its waiting note here on the page; a ValueError becomes an on-page
    error and the result is None (as in ``safe``)."""
    notice = st.empty()
    try:
        return long_job(fn, *args, notice=notice, **kwargs)
    except ValueError as exc:
        st.error(md.escape(str(exc), limit=600), icon=":material/error:")
        return None


_bind_ahead(compute=lambda call: _call(*call), slots_in_use=slots_in_use, hold_no_slot=hold_no_slot)  # the worker computes through this cache
