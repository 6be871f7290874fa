"""The dashboard's process holds numpy's BLAS to one thread (posenc/blas.py), unless the environment chose."""

from __future__ import annotations

import subprocess
import sys

import pytest

from posenc import blas

PROBE = """
import os, sys
for v in {env!r}:
    os.environ.pop(v, None)
os.environ.update({set!r})
import numpy  # loaded first, as Streamlit loads it before app.py runs
from threadpoolctl import threadpool_info, threadpool_limits
threadpool_limits(limits=2, user_api="blas")  # as on a 2-core host: OpenBLAS's default, a thread per core
from posenc import blas
first, again = blas.hold(), blas.hold()
print(first, again, [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"])
"""


def _probe(env: dict) -> str:
    code = PROBE.format(env=tuple(blas.ONE_THREAD), set=env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout.strip()


def test_the_process_is_held_to_one_thread_once():
    pytest.importorskip("threadpoolctl")
    assert _probe({}) == "True False [1]"


def test_a_count_set_in_the_environment_is_left_alone():
    pytest.importorskip("threadpoolctl")
    assert _probe({"OPENBLAS_NUM_THREADS": "2"}) == "False False [2]"
