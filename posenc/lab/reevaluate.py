"""Re-evaluate the test-time extension rows of the shipped results, leaving every other entry byte-identical.

``python -m posenc.lab --reevaluate-extensions`` (``--ship`` to write the package's data/): the extension whose
computation changed (``positions.PER_POSITION``: dynamic NTK, now position by position) is evaluated again on the
RoPE models of the shipped run.  The JSON's numbers come from the float64 run, and lab_weights.npz holds seed 0 only,
in float32; so each seed of the extensible scheme is trained again from its seed (training is deterministic), and
before anything is written the retrained model is checked against what shipped: seed 0's weights against
lab_weights.npz (float32 precision), and every seed's plain gaps at L .. 8L and every other extension's gaps against
lab_results.json (``TOLERANCE``).  Only the re-evaluated extension entries change; json.dumps(indent=1) writes every
other number as it was read, so the rest of the file is byte-identical (a test).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from posenc.lab.evaluate import eval_sequences, position_losses
from posenc.lab.experiment import EXTENSION_MULTIPLES, LabConfig, _curve, _mean
from posenc.lab.positions import PER_POSITION
from posenc.lab.results import RESULTS_FILE, WEIGHTS_FILE, _read_weights, extended_scheme
from posenc.lab.train import train

TOLERANCE = 1e-9  # retrained vs shipped gaps (the audit reproduced them to 3e-13)
WEIGHT_TOLERANCE = 1e-6  # retrained float64 weights vs the shipped float32 copy (relative to the array's scale)


def dumps(results: dict) -> str:
    """The results file's text, as results.save writes it."""
    return json.dumps(results, indent=1) + "\n"


def reevaluate_extensions(results: dict, *, weights: dict | None = None, extensions=PER_POSITION, seeds=None,
                          progress: Callable[[str], None] = lambda msg: None) -> dict:
    """A copy of ``results`` with the extension entries ``extensions`` of the extensible scheme evaluated again
    (at the training seeds ``seeds``; None: every seed of the run).

    Raises ValueError if a retrained model does not reproduce the shipped one (weights or any other number)."""
    out = json.loads(json.dumps(results))
    scheme = extended_scheme(results)
    if scheme is None:
        raise ValueError("these results have no extension rows")
    cfg = LabConfig.from_dict(results["config"])
    source, model, L = cfg.source(), cfg.model(), cfg.train_len
    seqs = eval_sequences(source, cfg.n_eval, max(cfg.lengths))
    for seed, run in results["runs"][scheme].items():
        if seeds is not None and int(seed) not in seeds:
            continue
        params, _ = train(scheme, source, model, cfg.training(), train_len=L, seed=int(seed), randomize=cfg.random)
        if weights is not None and int(seed) == cfg.seeds[0]:
            for k, v in weights[scheme].items():
                if np.max(np.abs(params[k] - v)) > WEIGHT_TOLERANCE * max(1.0, np.max(np.abs(v))):
                    raise ValueError(f"{scheme} seed {seed}: retrained weight {k} differs from lab_weights.npz")
        for n in cfg.lengths:
            got = position_losses(params, scheme, source, model, seqs[:, :n], train_len=L, randomize=cfg.random)["gap"].mean()
            _same(got, run["mean"][str(n)]["gap"], f"{scheme} seed {seed} at {n}")
        for ext, by_length in run["extensions"].items():
            for m in EXTENSION_MULTIPLES:
                n = m * L
                r = position_losses(params, scheme, source, model, seqs[:, :n], train_len=L, extension=ext)
                if ext in extensions:
                    out["runs"][scheme][seed]["extensions"][ext][str(n)] = {**_mean(r), "gap_by_position": _curve(r["gap"])}
                    progress(f"{scheme} seed {seed} + {ext} at {n}: gap {by_length[str(n)]['gap']:.4f} -> {r['gap'].mean():.4f}")
                else:
                    _same(r["gap"].mean(), by_length[str(n)]["gap"], f"{scheme} seed {seed} + {ext} at {n}")
    return out


def _same(got: float, shipped: float, what: str) -> None:
    if not math.isclose(got, shipped, rel_tol=0.0, abs_tol=TOLERANCE):
        raise ValueError(f"{what}: retrained gap {got!r} does not reproduce the shipped {shipped!r}")


def run(out_dir: Path | None, *, progress: Callable[[str], None] = print) -> dict:
    """Re-evaluate the shipped file's extension rows; write lab_results.json to ``out_dir`` (None: return only)."""
    results = json.loads(RESULTS_FILE.read_text(encoding="utf-8"))
    new = reevaluate_extensions(results, weights=_read_weights(WEIGHTS_FILE), progress=progress)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / RESULTS_FILE.name).write_text(dumps(new), encoding="utf-8")
    return new
