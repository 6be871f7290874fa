"""One experiment: every scheme x every seed trained at L on one task, evaluated at L, 2L, 4L, 8L.

Every (task, scheme, seed) run is an independent job, ``run_job(cfg, scheme, seed)``: a pure function of its arguments
(the source comes from the task and ``source_seed``, each model from its training seed (train.py), the evaluation
sequences from evaluate.EVAL_SEED), so it may run in this process, in a local worker process or on a Dask worker
(parallel.py) and give the same numbers bit for bit.  ``run_experiment(LabConfig(...))`` runs the jobs and assembles a
JSON-ready dict (the shipped file's format) and the first seed's trained weights per scheme.  Wall-clock seconds are
recorded under "seconds" and are the only entries that differ between two runs.

The RoPE model also gets rows for context extensions (``EXTENSION_ROWS``, each with the paper whose claim it tests):
five applied at test time without retraining (positions.EXTENSIONS) and two fine-tunes of ``FINETUNE`` steps at
``FINETUNE_MULTIPLE`` x L from the trained model: "pi_ft", PI at factor 4 then fine-tuned (Chen et al. 2023's
method), and "ft", plain RoPE fine-tuned at 4L with no interpolation (their direct-extrapolation baseline).  The
fine-tune settings were fixed before any was run: Adam at a constant lr 1e-3 (the main run's final learning rate,
0.1 x 1e-2), batch 32, no warm-up, its own batch stream ``FINETUNE_STREAM`` = 5 (default_rng([seed, 5])).  Both are
evaluated at 4L and at 8L; at 8L "pi_ft" interpolates by 8L / L = 8, as the test-time PI row does there (it was
fine-tuned at factor 4).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace

import numpy as np

from posenc._validate import check_choice, check_int
from posenc.lab.evaluate import eval_sequences, position_losses
from posenc.lab.model import THREADS, ModelConfig
from posenc.lab.positions import DEFAULT_SCHEMES, EXTENSIBLE, EXTENSIONS, LAB_SCHEMES, MAX_RANGE, NAMES, PER_POSITION, random_range
from posenc.lab.results import learned_check
from posenc.lab.task import TASK_DEFAULTS, TASK_PARAMS, TASKS, source_for
from posenc.lab.train import TrainConfig, train

MULTIPLES = (1, 2, 4, 8)  # evaluation lengths, in units of the training length L
EXTENSION_MULTIPLES = (4, 8)  # where RoPE's context extensions are evaluated
FORMAT = 3  # version of the results dict (2: config carries randomize; 3: config carries task and task_params,
#             extension rows pi_ft and ft, "finetune" settings)
LONGER = 4  # a scheme that did not learn the task at a budget is trained again with LONGER x the steps
FINETUNE_STEPS = 200  # LabConfig.finetune_steps' default (Chen et al. fine-tune PI for 1000 steps at 2048-32768 tokens)
FINETUNE = TrainConfig(steps=FINETUNE_STEPS, batch=32, lr=1e-3, warmup=0, final_lr_ratio=1.0)  # constant lr 1e-3 = 0.1 x 1e-2
FINETUNE_MULTIPLE = 4  # the fine-tunes train at 4L
FINETUNE_STREAM = 5  # their batches: default_rng([seed, 5]), never the main run's stream 2
FINETUNES = {"pi_ft": "pi", "ft": None}  # fine-tune row -> the extension it trains and is evaluated with
# every extension row of the RoPE model, with the paper whose claim it tests
EXTENSION_ROWS = {
    "pi": "PI (linear position interpolation) at test time: Chen et al. 2023, arXiv:2306.15595",
    "ntk": "NTK-aware scaling at test time: bloc97 2023; Peng et al. 2023, arXiv:2309.00071",
    "dynamic": "dynamic NTK at test time, s = max(1, t / L) position by position: Peng et al. 2023, arXiv:2309.00071",
    "yarn": "YaRN at test time: Peng et al. 2023, arXiv:2309.00071",
    "llama3": "Llama 3 frequency scaling at test time: Meta's Llama 3.1 rope_scaling",
    "pi_ft": f"PI at factor {FINETUNE_MULTIPLE}, then fine-tuned at {FINETUNE_MULTIPLE}L: Chen et al. 2023, "
             "arXiv:2306.15595",
    "ft": f"plain RoPE fine-tuned at {FINETUNE_MULTIPLE}L (direct extrapolation, Chen et al. 2023's baseline, "
          "arXiv:2306.15595)",
}


@dataclass(frozen=True)
class LabConfig:
    """Every setting of one experiment; ``key()`` is its scalar cache key.  ``for_task(task)`` gives a task's defaults
    (task.TASK_DEFAULTS); ``task_params`` are the task's own parameters as sorted (name, value) pairs."""

    task: str = "markov"
    task_params: tuple[tuple[str, float], ...] = ()
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
    finetune_steps: int = FINETUNE_STEPS  # the RoPE model's fine-tune rows (pi_ft, ft): steps at FINETUNE_MULTIPLE x L
    randomize: int = 0  # N > 0: every scheme reads randomized positions from [0, N) (0: each scheme's own, positions.LAB)

    def __post_init__(self):
        check_choice("task", self.task, TASKS)
        object.__setattr__(self, "task_params", tuple(sorted((str(k), v) for k, v in dict(self.task_params).items())))
        check_int("n_seeds", self.n_seeds, lo=1, hi=10)
        check_int("steps", self.steps, lo=1, hi=100_000)
        check_int("order", self.order, lo=1, hi=6)
        check_int("finetune_steps", self.finetune_steps, lo=25, hi=10_000)
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
        self.source()  # validates the task's settings

    def model(self) -> ModelConfig:
        return ModelConfig(self.vocab, self.d_model, self.n_heads, self.n_layers, self.d_mlp)

    def training(self) -> TrainConfig:
        return TrainConfig(steps=self.steps, batch=self.batch, lr=self.lr)

    def source(self):
        """The task's source (task.source_for): a MarkovSource, or another task's source with the same interface."""
        return source_for(self.task, vocab=self.vocab, order=self.order, seed=self.source_seed,
                          concentration=self.concentration, **dict(self.task_params))

    @staticmethod
    def for_task(task: str, **settings) -> LabConfig:
        """The lab's defaults with ``task``'s own (task.TASK_DEFAULTS), then ``settings``; a task parameter (e.g.
        induction's rho) may be given by name."""
        check_choice("task", task, TASKS)
        own = {**TASK_DEFAULTS[task], **settings}
        params = {k: own.pop(k) for k in list(own) if k in TASK_PARAMS[task]}
        return LabConfig(task=task, task_params=tuple(params.items()), **own)

    def as_dict(self) -> dict:
        """The results file's "config": every field, schemes as a list and task_params as a dict."""
        return {**asdict(self), "schemes": list(self.schemes), "task_params": dict(self.task_params)}

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
        d["task_params"] = tuple(dict(d.get("task_params") or {}).items())
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


def _row(r: dict, n: int | None = None) -> dict:
    """An extension row's entry: the means and the gap by position, of the first n positions (None: all)."""
    cut = {k: v[:n] for k, v in r.items()} if n is not None else r
    return {**_mean(cut), "gap_by_position": _curve(cut["gap"])}


def _extensions(params, scheme: str, source, cfg: LabConfig, seqs: np.ndarray, seed: int, threads: int) -> tuple[dict, dict]:
    """The RoPE model's extension rows {row: {str(n): entry}} at EXTENSION_MULTIPLES x L, and the fine-tunes' training
    losses {row: curve}.

    Dynamic NTK (positions.PER_POSITION) is evaluated once, at the longest length, and the shorter rows are its
    prefixes: query t reads a pass over its own t + 1 tokens only, and the shorter evaluation sequences are prefixes of
    the longer ones, so the prefix is the shorter evaluation bit for bit (a test)."""
    L, model = cfg.train_len, cfg.model()
    longest = max(EXTENSION_MULTIPLES) * L
    rows: dict[str, dict] = {}
    for ext in EXTENSIONS:
        if ext in PER_POSITION:
            r = position_losses(params, scheme, source, model, seqs[:, :longest], train_len=L, extension=ext)
            rows[ext] = {str(m * L): _row(r, m * L) for m in EXTENSION_MULTIPLES}
        else:
            rows[ext] = {str(m * L): _row(position_losses(params, scheme, source, model, seqs[:, : m * L], train_len=L,
                                                          extension=ext)) for m in EXTENSION_MULTIPLES}
    losses = {}
    tc = replace(FINETUNE, steps=cfg.finetune_steps)
    for row, ext in FINETUNES.items():
        tuned, loss = train(scheme, source, model, tc, train_len=FINETUNE_MULTIPLE * L, base_len=L, extension=ext,
                            initial=params, seed=seed, stream=FINETUNE_STREAM, threads=threads)
        losses[row] = _curve(loss.reshape(-1, 25).mean(axis=1)) if tc.steps % 25 == 0 else _curve(loss)
        rows[row] = {str(m * L): _row(position_losses(tuned, scheme, source, model, seqs[:, : m * L], train_len=L,
                                                      extension=ext)) for m in EXTENSION_MULTIPLES}
    return rows, losses


def run_job(cfg: LabConfig, scheme: str, seed: int, *, progress: Callable[[int, int, float], None] | None = None,
            should_stop: Callable[[], bool] | None = None, threads: int = THREADS) -> dict:
    """One (task, scheme, seed) run: train ``scheme`` at ``seed`` on ``cfg``'s task, evaluate it (and, on the RoPE model,
    its extension rows).  Depends only on (cfg, scheme, seed); ``progress``, ``should_stop`` and ``threads`` (per
    training step: 1 in a worker process, which has one core's share) are passed to train and change no number.

    Returns {"scheme", "seed", "run": the results file's run entry, "undefined": why a length has no row (or None),
    "bayes_by_position": the Bayes loss by position at the longest defined length, "seconds": {"train", "evaluate": wall,
    "cpu": this process's CPU seconds for both},
    "final_loss", "weights": the trained parameters for the first seed of the run (else None)}."""
    check_choice("scheme", scheme, cfg.schemes)
    check_int("seed", seed, lo=0, hi=cfg.n_seeds - 1)
    source, model, tc, L = cfg.source(), cfg.model(), cfg.training(), cfg.train_len
    seqs = eval_sequences(source, cfg.n_eval, max(cfg.lengths))
    t0, c0 = time.perf_counter(), time.process_time()
    params, losses = train(scheme, source, model, tc, train_len=L, seed=seed, progress=progress, should_stop=should_stop,
                           randomize=cfg.random, threads=threads)
    t1 = time.perf_counter()
    run = {"train_loss": _curve(losses.reshape(-1, 25).mean(axis=1)) if tc.steps % 25 == 0 else _curve(losses),
           "mean": {}, "gap_by_position": None, "extensions": {}}
    undefined, bayes = None, None
    for n in cfg.lengths:
        try:
            r = position_losses(params, scheme, source, model, seqs[:, :n], train_len=L, randomize=cfg.random)
        except ValueError as exc:  # the learned table past its last row, randomized positions past their range
            run["mean"][str(n)] = None
            undefined = undefined or str(exc)
            continue
        run["mean"][str(n)] = _mean(r)
        run["gap_by_position"] = _curve(r["gap"])  # at the longest defined length
        bayes = _curve(r["bayes"])
    if scheme in EXTENSIBLE and not random_range(scheme, cfg.random):
        run["extensions"], run["finetune_loss"] = _extensions(params, scheme, source, cfg, seqs, seed, threads)
    return {"scheme": scheme, "seed": seed, "run": run, "undefined": undefined, "bayes_by_position": bayes,
            "seconds": {"train": t1 - t0, "evaluate": time.perf_counter() - t1, "cpu": time.process_time() - c0}, "final_loss": float(losses[-1]),
            "weights": params if seed == cfg.seeds[0] else None}


def jobs_of(cfg: LabConfig) -> list[tuple[LabConfig, str, int]]:
    """The run_job arguments of ``cfg``, in the results file's order (scheme by scheme, seeds in order)."""
    return [(cfg, scheme, seed) for scheme in cfg.schemes for seed in cfg.seeds]


def job_key(cfg: LabConfig, scheme: str, seed: int) -> tuple:
    """What a job's result depends on: the config but for its schemes and number of seeds, the scheme and its seed
    (two experiments that share a key share the job; seed 0's weights are returned whatever n_seeds is)."""
    return (replace(cfg, schemes=(scheme,), n_seeds=1).key(), scheme, seed)


def assemble(cfg: LabConfig, jobs: list[dict]) -> tuple[dict, dict[str, dict[str, np.ndarray]]]:
    """The results dict and {scheme: first-seed weights} of ``cfg`` from its jobs' results (in jobs_of order)."""
    source = cfg.source()
    L = cfg.train_len
    out = {
        "format": FORMAT, "config": cfg.as_dict(),
        "floor": source.entropy, "uniform": source.uniform, "prefix_floor": list(source.prefix_floor),
        "lengths": list(cfg.lengths), "extension_lengths": [m * L for m in EXTENSION_MULTIPLES],
        "bayes_by_position": None, "runs": {}, "undefined": {}, "seconds": {},
    }
    weights: dict[str, dict[str, np.ndarray]] = {}
    for (_, scheme, seed), job in zip(jobs_of(cfg), jobs, strict=True):
        if (job["scheme"], job["seed"]) != (scheme, seed):
            raise ValueError(f"jobs out of order: got {job['scheme']} seed {job['seed']} for {scheme} seed {seed}")
        out["runs"].setdefault(scheme, {})[str(seed)] = job["run"]
        if job["undefined"] is not None:
            out["undefined"].setdefault(scheme, job["undefined"])
        b = job["bayes_by_position"]
        if b is not None and (out["bayes_by_position"] is None or len(out["bayes_by_position"]) < len(b)):
            out["bayes_by_position"] = b
        out["seconds"][f"{scheme}/{seed}"] = job["seconds"]
        if seed == cfg.seeds[0]:
            weights[scheme] = job["weights"]
    if any(r["extensions"] for runs in out["runs"].values() for r in runs.values()):
        out["finetune"] = {"rows": {k: v for k, v in EXTENSION_ROWS.items()}, "steps": cfg.finetune_steps,
                           "lr": FINETUNE.lr, "batch": FINETUNE.batch, "warmup": FINETUNE.warmup,
                           "length": FINETUNE_MULTIPLE * L, "stream": FINETUNE_STREAM}
    return out, weights


def run_many(cfgs: list[LabConfig], *, jobs: int = 1, cluster: str | None = None,
             progress: Callable[[dict], None] | None = None, should_stop: Callable[[], bool] | None = None,
             stream=None, cache=None) -> list[tuple[dict, dict]]:
    """run_experiment for several configs through one executor, each distinct job (job_key) run once.  ``cache``: a
    directory of finished jobs (jobcache.py): a job found there is read instead of run, and every job run is written
    there as it finishes, so an interrupted sweep resumes."""
    from posenc.lab import jobcache
    from posenc.lab.parallel import Runner

    calls, index, labels, cached = [], {}, [], {}
    for cfg in cfgs:
        for job in jobs_of(cfg):
            k = job_key(*job)
            if k in index or k in cached:
                continue
            if cache is not None and (hit := jobcache.load(cache, k)) is not None:
                cached[k] = hit
                continue
            index[k] = len(calls)
            calls.append(job)
            labels.append(f"{job[0].task} {job[1]} seed {job[2]}")
    if cached and stream is not None:
        print(f"lab: {len(cached)} jobs read from {cache}, {len(calls)} to run", file=stream, flush=True)
    total = len(calls)
    t0 = time.perf_counter()

    def info(i: int, step: int, steps: int, loss: float, done: int) -> dict:
        cfg, scheme, seed = calls[i]
        elapsed = time.perf_counter() - t0
        return {"task": cfg.task, "scheme": scheme, "name": NAMES[scheme], "seed": seed, "run": done, "runs": total,
                "step": step, "steps": steps, "loss": loss, "elapsed": elapsed}

    def hooks(i: int) -> dict:  # in this process: step-level progress and the cancel hook, as train takes them
        def report(step, steps, loss, _i=i):
            if progress is not None:
                progress(info(_i, step, steps, loss, _i))
        return {"progress": report, "should_stop": should_stop}

    def on_done(i: int, result: dict, done: int, elapsed: float) -> None:
        if cache is not None:
            jobcache.save(cache, job_key(*calls[i]), result)
        if progress is not None:
            steps = calls[i][0].steps
            progress({**info(i, steps, steps, result["final_loss"], done - 1), "done": done,
                      "eta": elapsed / done * (total - done)})

    with Runner(jobs=jobs, cluster=cluster) as runner:
        results = runner.run(run_job, calls, labels=labels, hooks=hooks, remote={"threads": 1}, on_done=on_done, should_stop=should_stop,
                             stream=stream)

    def result(job):
        k = job_key(*job)
        return cached[k] if k in cached else results[index[k]]

    return [assemble(cfg, [result(job) for job in jobs_of(cfg)]) for cfg in cfgs]


def run_experiment(
    cfg: LabConfig,
    *,
    jobs: int = 1,
    cluster: str | None = None,
    progress: Callable[[dict], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    stream=None,
    cache=None,
) -> tuple[dict, dict[str, dict[str, np.ndarray]]]:
    """Train and evaluate every (scheme, seed) of ``cfg``; returns (results, {scheme: first-seed weights}).

    ``jobs`` > 1 runs the jobs in that many local processes, ``cluster`` on the Dask scheduler at that address
    (parallel.Runner); the numbers are the same bit for bit.  ``progress(info)`` gets {"task", "scheme", "name", "seed",
    "run", "runs", "step", "steps", "loss", "elapsed"} every 25 training steps in this process, and once per finished
    job with "done" and "eta" too; ``should_stop()`` may cancel (train.Cancelled propagates: no partial
    result).  ``stream`` (e.g. sys.stderr) gets a progress line per finished job; ``cache``: run_many's job directory."""
    return run_many([cfg], jobs=jobs, cluster=cluster, progress=progress, should_stop=should_stop, stream=stream,
                    cache=cache)[0]
