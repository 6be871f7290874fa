"""A few independent computations of one step spread over a small pool of threads (no Streamlit import).

Compare's n measures some twenty schemes one after another, and the Context extension page's long range runs one
analysis per method: each is numpy on arrays of 10^5-10^6 entries, which releases the GIL.  On an idle 2-core host,
``pmap`` over two threads measured every scheme at n = 1,024 in 0.42-0.52 s against 0.67-0.97 s in one.  In Chromium on
that host the gain is smaller, as the browser may be drawing on the second core: Compare's n 1.26 -> 1.11 s and its d
0.98 -> 0.81 s (2026-12-07; earlier tries read 12 % and nothing: docs/performance.md, section 8).

One pool per process (per size, should POSENC_THREADS change), shared by every session (``threads()`` threads:
``POSENC_THREADS``, else two, or one on a single core), so concurrent runs do not multiply the threads: their tasks
queue.  A call from inside the pool runs its items in its own thread (no task waits for a task behind it), and so does one
from the thread that computes values ahead (``posenc.ui.ahead``: background work must not take the pool's threads from
the steps that need them), which may also wait between two items (``pause_between_items``).  The
numbers never depend on the threads: each item is computed whole in one thread, and the results come back in the
items' order.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

ENV = "POSENC_THREADS"
MAX_THREADS = 8
_PREFIX = "posenc-pmap"
_INLINE = (_PREFIX, "posenc-ahead")  # threads whose calls run their items themselves: the pool's, and posenc.ui.ahead's
_pools: dict[int, ThreadPoolExecutor] = {}  # by size: the pool is always the size ``threads()`` reads now
_lock = threading.Lock()


def threads() -> int:
    """The pool's size: ``POSENC_THREADS`` if set (1-8), else min(2, the cores)."""
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return max(1, min(2, os.cpu_count() or 1))
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_THREADS:
        raise ValueError(f"{ENV} must be an integer in [1, {MAX_THREADS}], got {raw!r}")
    return n


_local = threading.local()


def pause_between_items(wait: Callable[[], None] | None) -> None:
    """In the calling thread, call ``wait()`` before each item ``pmap`` runs inline (None: no more): a thread that computes
    in the background waits there while a step runs (``posenc.ui.ahead``)."""
    _local.wait = wait


def pmap(fn: Callable, items: Iterable) -> list:
    """``[fn(x) for x in items]``, the calls spread over the pool; the first exception of an item is raised here."""
    items = list(items)
    n = threads()
    if n == 1 or len(items) < 2 or threading.current_thread().name.startswith(_INLINE):
        wait = getattr(_local, "wait", None)
        out = []
        for x in items:
            if wait is not None:
                wait()
            out.append(fn(x))
        return out
    with _lock:
        pool = _pools.get(n) or _pools.setdefault(n, ThreadPoolExecutor(max_workers=n, thread_name_prefix=_PREFIX))
    return list(pool.map(fn, items))
