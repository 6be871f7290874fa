"""How many threads the BLAS library (numpy's OpenBLAS) may use while a forward runs.

One, by default.  The app already runs at most two computations at once (``posenc.ui.cache.compute_slot``) on a
2-core host, and OpenBLAS's worker threads spin while they wait: measured here with other jobs on the cores, a
128-token forward took 3.8-10 s with OpenBLAS's default two threads and 1.0 s with one (``python -m bench``'s model part
measures both).  The limit is process-wide (``threadpoolctl``), so it is held from the first forward that starts to the
last that ends, and then put back.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from posenc.blas import THREADS

BLAS_THREADS: int | None = THREADS  # the count the app's process is held to (posenc.blas); None: leave the library as it is
_lock = threading.Lock()
_state = {"active": 0, "limit": None, "controller": None}


@contextmanager
def limited() -> Iterator[None]:
    """Run the body with the BLAS library limited to BLAS_THREADS threads (nested and concurrent uses share one limit)."""
    if BLAS_THREADS is None:
        yield
        return
    with _lock:
        if _state["active"] == 0:
            if _state["controller"] is None:
                from threadpoolctl import ThreadpoolController

                _state["controller"] = ThreadpoolController()
            _state["limit"] = _state["controller"].limit(limits=BLAS_THREADS, user_api="blas")
        _state["active"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["active"] -= 1
            if _state["active"] == 0 and _state["limit"] is not None:
                _state["limit"].restore_original_limits()
                _state["limit"] = None
