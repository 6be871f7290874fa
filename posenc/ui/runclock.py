"""The server's own time of each script run, for the benchmark's split of a step (``python -m bench --only interact``).

Off unless the environment variable ``POSENC_RUN_LOG`` names a file.  Then every full run of a page (``app.py``) and
every rerun of a section or an exercise on its own (a fragment: ``own_rerun``) appends one line to it::

    <kind> <what> <wall seconds> <CPU seconds of the run's thread>

so that a step timed in the browser can be split into the server's run and the browser's work around it
(``bench.interact.server_seconds``); ``read_runs`` reads the lines back.  A run that ends in ``st.rerun`` or ``st.stop`` is logged as far as it went.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from posenc.ui.state import full_run_frame

ENV = "POSENC_RUN_LOG"


@contextmanager
def timed(kind: str, what: str) -> Iterator[None]:
    """Time the block as one run of ``kind`` ("run", "section", "exercise") for ``what`` (a page or section name)."""
    target = os.environ.get(ENV)
    if not target:
        yield
        return
    t0, c0 = time.perf_counter(), time.thread_time()
    try:
        yield
    finally:
        line = f"{kind} {what.replace(' ', '_') or '-'} {time.perf_counter() - t0:.4f} {time.thread_time() - c0:.4f}\n"
        with open(target, "a", encoding="utf-8") as f:  # one short write per run: lines of concurrent runs stay whole
            f.write(line)


def own_rerun(kind: str, what: str):
    """``timed(kind, what)`` for a fragment (a section, an exercise) when it reruns on its own; nothing during the page's
    full run, which app.py times whole."""
    return nullcontext() if full_run_frame() is not None else timed(kind, what)


def read_runs(log: str | Path, offset: int = 0) -> tuple[list[tuple[str, str, float, float]], int]:
    """The runs ``log`` holds after byte ``offset``, as (kind, what, wall seconds, CPU seconds), and the byte offset after
    the last whole line (a line still being written is read next time).  No file yet: no runs."""
    try:
        with open(log, "rb") as f:
            f.seek(offset)
            chunk = f.read()
    except FileNotFoundError:
        return [], offset
    end = chunk.rfind(b"\n") + 1
    runs = [(kind, what, float(wall), float(cpu)) for kind, what, wall, cpu in
            (parts for parts in (line.split() for line in chunk[:end].decode("utf-8").splitlines()) if len(parts) == 4)]
    return runs, offset + end
