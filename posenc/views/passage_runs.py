"""The bundled passages' per-token losses, run ahead of time and shipped in ``posenc/data/passage_losses.npz``.

The pages on a real model show perplexities over a passage: 2 to 13 forwards of up to 192 tokens of SmolLM2-135M in
numpy, 1-5 s on 2 cores for a passage not run before in the process (``posenc.views.real_model.passage_losses``).  For
the texts a visitor picks rather than types -- the two bundled passages and the default "your passage" text -- the
same computation was run once, over MAX_PASSAGE_TOKENS tokens (``posenc.views.real_model.ship_passage_runs``), by

    python -m posenc.views.real_model

which writes the losses with what they were computed from: the model file (its distribution, version, size and
sha256), every token id, each variant set, the default text, numpy's version and the date.  ``shipped`` answers from
the file only when the installed model file has the recorded distribution, version and size, the variants are the
ones asked for, and the passage's token ids are the recorded ones; anything else (another text, another model file)
runs the model.  tests/test_model.py recomputes every shipped run on a prefix and compares (PREFIX_TOL nats).
"""

from __future__ import annotations

import datetime
import hashlib
import importlib.metadata
import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from posenc.model.locate import DISTRIBUTION, FILE, bundled_path

PATH = Path(__file__).resolve().parents[1] / "data" / "passage_losses.npz"


@lru_cache(maxsize=1)
def model_identity() -> dict | None:
    """What a shipped run must have been computed from: the installed model file's distribution, version, name and size
    (None when the model is not installed); read once per process (the installed package does not change under it)."""
    path = bundled_path()
    if path is None:
        return None
    return {"distribution": DISTRIBUTION, "version": importlib.metadata.version(DISTRIBUTION), "file": FILE,
            "bytes": path.stat().st_size}


def run_name(what: str, passage: str) -> str:
    return f"{what}/{passage}"


@lru_cache(maxsize=1)
def _shipped_file() -> tuple[dict, dict] | None:
    """(meta, arrays) of the shipped file, read once per process; None if it is missing or unreadable."""
    try:
        with np.load(PATH, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(str(arrays.pop("meta")))
    except (OSError, ValueError, KeyError):
        return None
    for a in arrays.values():
        a.flags.writeable = False
    return meta, arrays


def in_use() -> bool:
    """The shipped file is there and was computed from the installed model file."""
    found = _shipped_file()
    return found is not None and found[0]["model"] == model_identity()


def _plain(variants: list[dict]) -> list:
    return json.loads(json.dumps(variants))  # as the file records them (tuples as lists, floats as written)


def shipped(what: str, variants: list[dict], passage: str, yours: str, ids: np.ndarray) -> np.ndarray | None:
    """The shipped losses (len(variants), MAX_PASSAGE_TOKENS - 1) of variant set ``what`` on ``passage`` (for "your
    passage": only its default text), if they were computed from this model, these variants and these tokens; else
    None."""
    found = _shipped_file()
    if found is None:
        return None
    meta, arrays = found
    run = meta["runs"].get(run_name(what, passage))
    if run is None or meta["model"] != model_identity() or run["variants"] != _plain(variants):
        return None
    if run.get("text") is not None and yours != run["text"]:
        return None
    full = arrays[run_name(what, passage) + "/ids"]
    if ids.size > full.size or not np.array_equal(full[: ids.size], ids):
        return None
    return arrays[run_name(what, passage) + "/losses"]


def write(runs: dict[str, dict], path: Path = PATH) -> dict:
    """Write ``runs`` ({name: {"variants", "text" or None, "ids", "losses"}}) with their provenance; returns the meta."""
    model = bundled_path()
    meta = {"model": model_identity(), "model_sha256": hashlib.sha256(model.read_bytes()).hexdigest(),
            "numpy": np.__version__, "written": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "command": "python -m posenc.views.real_model",
            "runs": {name: {"variants": _plain(r["variants"]), "text": r["text"], "tokens": int(r["ids"].size)}
                     for name, r in runs.items()}}
    arrays = {}
    for name, r in runs.items():
        arrays[f"{name}/ids"] = np.asarray(r["ids"], dtype=np.int64)
        arrays[f"{name}/losses"] = np.asarray(r["losses"], dtype=np.float64)
    np.savez_compressed(path, meta=np.array(json.dumps(meta, indent=1)), **arrays)
    _shipped_file.cache_clear()
    return meta
