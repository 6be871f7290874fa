"""A directory of finished lab jobs, so that a long sweep that stopped (Ctrl-C, a lost machine, a session's end)
resumes where it stopped instead of starting again: ``python -m posenc.lab --ship --cache DIR``.

One finished job (experiment.run_job's result) is two files named by a hash of its ``experiment.job_key`` (the
config but for its schemes and number of seeds, the scheme and its seed) and of ``FORMAT``: ``<name>.json`` (every
number; Python writes a float's shortest repr, which reads back to the same float) and, for a run's first seed,
``<name>.npz`` (its trained weights).  A job is written when it finishes, JSON last and by an atomic rename, so a
half-written job is never read.  ``run_many`` reads a job back instead of running it; the results are therefore the
same bit for bit as a run without the cache (a test).

The key holds the settings, not the code: after a change to the engine, start with an empty directory.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

FORMAT = 1  # of a cached job; part of every name


def name(key: tuple) -> str:
    """The file stem of a job: the first 32 hex digits of SHA-256 over repr((FORMAT, key))."""
    return hashlib.sha256(repr((FORMAT, key)).encode()).hexdigest()[:32]


def load(directory: Path, key: tuple) -> dict | None:
    """The cached result of the job ``key``, or None if it has not finished there."""
    stem = Path(directory) / name(key)
    path = stem.with_suffix(".json")
    if not path.exists():
        return None
    record = json.loads(path.read_text(encoding="utf-8"))
    if record.get("key") != repr(key):  # a hash collision, or a file copied under another name
        return None
    result = record["result"]
    if record["weights"]:
        with np.load(stem.with_suffix(".npz")) as z:
            result["weights"] = {k: z[k] for k in record["weights"]}
    else:
        result["weights"] = None
    return result


def save(directory: Path, key: tuple, result: dict) -> None:
    """Write one finished job (weights first, then its JSON by an atomic rename)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    stem = directory / name(key)
    weights = result.get("weights")
    if weights is not None:
        tmp = stem.with_suffix(".tmp.npz")
        np.savez(tmp, **weights)
        os.replace(tmp, stem.with_suffix(".npz"))
    body = {k: v for k, v in result.items() if k != "weights"}
    record = {"key": repr(key), "weights": sorted(weights) if weights is not None else [], "result": body}
    tmp = stem.with_suffix(".tmp.json")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, stem.with_suffix(".json"))
