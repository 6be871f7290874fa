"""One BLAS thread: the environment that asks for it (``ONE_THREAD``), and the dashboard's server process held to it.

The pages' numpy work (score and Gram matrices, Compare's measurements of every scheme) runs in the server process.
On a 2-core host that process shares its cores with the browser and with other sessions' runs, and OpenBLAS starts a
thread per core whose waiting threads spin.  Measured 2026-12-05 in Chromium on this project's 2-core host (two servers
alternating, one with OpenBLAS's default and one held to a single thread; four new values each, two rounds; median
step): Compare's n 0.448 → 0.343 s (its first step, to n = 1,024, 1.16 and 1.23 → 0.94 and 0.85 s), Similarity's n
0.526 → 0.441 s, the sinusoid's base 0.584 → 0.595 s (no change).  The model's forwards already ran on one thread
(``posenc.model.threads``); now everything does.

A thread count set in the environment (any variable of ``ONE_THREAD``) is left as it is.  The lab's worker processes
start with ``ONE_THREAD`` (``posenc.lab.parallel``), and so do the test suite's processes (tests/conftest.py).
"""

from __future__ import annotations

import os
import threading

ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "VECLIB_MAXIMUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1"}  # read when a process loads its BLAS library
THREADS = 1
_done = {"held": False}
_lock = threading.Lock()


def hold() -> bool:
    """Hold this process's BLAS library to THREADS threads, once per process.  app.py calls it at the top of every run,
    so no run computes before the limit is in place: OpenBLAS's thread count is not changed while another thread of
    the process may be inside a BLAS call (concurrent first runs wait here for the one that sets it, ~40 ms once).

    Returns whether this call set the limit (False: already held, or the environment chose a count)."""
    with _lock:
        if _done["held"]:
            return False
        _done["held"] = True
        if any(os.environ.get(v) for v in ONE_THREAD):
            return False
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=THREADS, user_api="blas")
        return True
