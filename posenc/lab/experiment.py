"""One experiment: every scheme x every seed trained at L, evaluated at L, 2L, 4L, 8L.

``run_experiment(LabConfig(...))`` returns a JSON-ready dict (the shipped file's format) and the
first seed's trained weights per scheme.  Numbers depend only on the configuration: the Markov
source comes from ``source_seed``, each model from its training seed (train.py), the evaluation
sequences from evaluate.EVAL_SEED.  Wall-clock seconds are recorded under "seconds" and are the
only entries that differ between two runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace

import numpy as np

from posenc._validate import check_choice, check_int
from posenc.lab.evaluate import eval_sequences, position_losses
from posenc.lab.model import ModelConfig
from posenc.lab.positions import DEFAULT_SCHEMES, EXTENSIBLE, EXTENSIONS, LAB_SCHEMES, MAX_RANGE, NAMES, random_range
from posenc.lab.results import learned_check
from posenc.lab.task import MarkovSource
from posenc.lab.train import TrainConfig, train

MULTIPLES = (1, 2, 4, 8)  # evaluation lengths, in units of the training length L
EXTENSION_MULTIPLES = (4, 8)  # where RoPE's test-time extensions are evaluated
FORMAT = 2  # version of the results dict (2: config carries randomize)
LONGER = 4  # a scheme that did not learn the task at a budget is trained again with LONGER x the steps


@dataclass(frozen=True)
class LabConfig:
    """Every setting of one experiment; ``key()`` is its scalar cache key."""

    vocab: int = 8
    order: int = 2
    train_len: int = 32
    n_seeds: int = 3  # training seeds 0 .. n_seeds - 1
    schemes: tuple[str, ...] = DEFAULT_SCHEMES
    source_seed: int = 0
    concentration: float = 0.5
    d_model: int = 32
    n_heads: int = 4
    n_layers: int = 2
    d_mlp: int = 64
    steps: int = 1000
    batch: int = 32
    lr: float = 1e-2
    n_eval: int = 64
    randomize: int = 0  # N > 0: every scheme reads randomized positions from [0, N) (0: each scheme's own, positions.LAB)

    def __post_init__(self):
        check_int("n_seeds", self.n_seeds, lo=1, hi=10)
        check_int("train_len", self.train_len, lo=4, hi=256)
        check_int("n_eval", self.n_eval, lo=1, hi=1024)
        if not self.schemes:
            raise ValueError("schemes must name at least one of " + ", ".join(LAB_SCHEMES))
        for s in self.schemes:
            check_choice("scheme", s, LAB_SCHEMES)
        check_int("randomize", self.randomize, lo=0, hi=MAX_RANGE)
        if 0 < self.randomize < self.train_len:
            raise ValueError(f"randomized positions need a range N of at least the training length {self.train_len}, "
                             f"got {self.randomize}")
        for s in self.schemes:
            random_range(s, self.random)  # a scheme that reads no positions refuses randomized ones
        self.model()  # validates the shapes
        self.training()

    def model(self) -> ModelConfig:
        return ModelConfig(self.vocab, self.d_model, self.n_heads, self.n_layers, self.d_mlp)

    def training(self) -> TrainConfig:
        return TrainConfig(steps=self.steps, batch=self.batch, lr=self.lr)

    def source(self) -> MarkovSource:
        return MarkovSource.random(self.vocab, self.order, seed=self.source_seed, concentration=self.concentration)

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(range(self.n_seeds))

    @property
    def random(self) -> int | None:
        """The ``randomize`` argument of train and evaluate: this run's range, or None (each scheme's own)."""
        return self.randomize or None

    @property
    def lengths(self) -> tuple[int, ...]:
        return tuple(m * self.train_len for m in MULTIPLES)

    def key(self) -> tuple:
        return tuple(getattr(self, f.name) for f in fields(self))

    @staticmethod
    def from_dict(d: dict) -> LabConfig:
        d = dict(d)
        d["schemes"] = tuple(d["schemes"])
        return LabConfig(**d)


def longer_config(cfg: LabConfig, results: dict) -> LabConfig | None:
    """The follow-up experiment: the schemes of ``results`` (run at ``cfg``) that did not learn the task at
    some seed, trained again with ``LONGER`` x the steps and every other setting equal; None if all learned.

    Which schemes get it is read off the results (results.learned_check), never chosen by hand.
    """
    failed = {r["scheme"] for r in learned_check(results) if not r["learned"]}
    if not failed:
        return None
    return replace(cfg, schemes=tuple(s for s in cfg.schemes if s in failed), steps=LONGER * cfg.steps)


def _mean(r: dict) -> dict:
    return {"loss": float(r["loss"].mean()), "bayes": float(r["bayes"].mean()), "gap": float(r["gap"].mean())}


def _curve(a: np.ndarray) -> list[float]:
    return [round(float(v), 10) for v in a]


def run_experiment(
    cfg: LabConfig,
    *,
    progress: Callable[[dict], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[dict, dict[str, dict[str, np.ndarray]]]:
    """Train and evaluate every (scheme, seed); returns (results, {scheme: first-seed weights}).

    ``progress(info)`` gets {"scheme", "name", "seed", "run", "runs", "step", "steps", "loss"} every
    25 training steps; ``should_stop()`` may cancel (train.Cancelled propagates: no partial result).
    """
    source = cfg.source()
    model, tc = cfg.model(), cfg.training()
    L = cfg.train_len
    seqs = eval_sequences(source, cfg.n_eval, max(cfg.lengths))
    out = {
        "format": FORMAT, "config": {**asdict(cfg), "schemes": list(cfg.schemes)},
        "floor": source.entropy, "uniform": source.uniform, "prefix_floor": list(source.prefix_floor),
        "lengths": list(cfg.lengths), "extension_lengths": [m * L for m in EXTENSION_MULTIPLES],
        "bayes_by_position": None, "runs": {}, "undefined": {}, "seconds": {},
    }
    weights: dict[str, dict[str, np.ndarray]] = {}
    runs = len(cfg.schemes) * cfg.n_seeds
    done = 0
    for scheme in cfg.schemes:
        out["runs"][scheme] = {}
        for seed in cfg.seeds:
            def report(step, steps, loss, _s=scheme, _seed=seed, _done=done):
                if progress is not None:
                    progress({"scheme": _s, "name": NAMES[_s], "seed": _seed, "run": _done, "runs": runs,
                              "step": step, "steps": steps, "loss": loss})
            t0 = time.perf_counter()
            params, losses = train(scheme, source, model, tc, train_len=L, seed=seed, progress=report, should_stop=should_stop,
                                   randomize=cfg.random)
            t1 = time.perf_counter()
            run = {"train_loss": _curve(losses.reshape(-1, 25).mean(axis=1)) if tc.steps % 25 == 0 else _curve(losses),
                   "mean": {}, "gap_by_position": None, "extensions": {}}
            for n in cfg.lengths:
                try:
                    r = position_losses(params, scheme, source, model, seqs[:, :n], train_len=L, randomize=cfg.random)
                except ValueError as exc:  # the learned table past its last row, randomized positions past their range
                    run["mean"][str(n)] = None
                    out["undefined"].setdefault(scheme, str(exc))
                    continue
                run["mean"][str(n)] = _mean(r)
                run["gap_by_position"] = _curve(r["gap"])  # at the longest defined length
                if out["bayes_by_position"] is None or len(out["bayes_by_position"]) < n:
                    out["bayes_by_position"] = _curve(r["bayes"])
            if scheme in EXTENSIBLE and not random_range(scheme, cfg.random):
                for ext in EXTENSIONS:
                    run["extensions"][ext] = {}
                    for m in EXTENSION_MULTIPLES:
                        r = position_losses(params, scheme, source, model, seqs[:, : m * L], train_len=L, extension=ext)
                        run["extensions"][ext][str(m * L)] = {**_mean(r), "gap_by_position": _curve(r["gap"])}
            out["runs"][scheme][str(seed)] = run
            out["seconds"][f"{scheme}/{seed}"] = {"train": t1 - t0, "evaluate": time.perf_counter() - t1}
            if seed == cfg.seeds[0]:
                weights[scheme] = params
            done += 1
    return out, weights
