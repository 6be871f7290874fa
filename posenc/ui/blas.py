"""One BLAS thread for the dashboard's server process.

The pages' numpy work (score and Gram matrices, Compare's measurements of every scheme) runs in the server process.
On a 2-core host that process shares its cores with the browser and with other sessions' runs, and OpenBLAS starts a
thread per core whose waiting threads spin.  Measured 2026-12-05 in Chromium on this project's 2-core host (two servers
alternating, one with OpenBLAS's default and one held to a single thread; four new values each, two rounds; median
step): Compare's n 0.448 → 0.343 s (its first step, to n = 1,024, 1.16 and 1.23 → 0.94 and 0.85 s), Similarity's n
0.526 → 0.441 s, the sinusoid's base 0.584 → 0.595 s (no change).  The model's forwards already ran on one thread
(``posenc.model.threads``); now everything does.

A thread count set in the environment (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS or MKL_NUM_THREADS) is left as it is.
"""

from __future__ import annotations

import os
import threading

ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
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
        if not any(os.environ.get(v) for v in ENV):
            from threadpoolctl import threadpool_limits

            threadpool_limits(limits=THREADS, user_api="blas")
            _done["held"] = True
            return True
        _done["held"] = True
        return False
