"""Section "lab": the extrapolation lab's training budget, autograd vs hand-written gradients,
and how far a 1e-15 nudge of the initial weights moves the final numbers.

- steps: ms per training step of RoPE at the defaults with 1 and 2 threads (model.loss_and_grad), wall and CPU;
- time: every default scheme x seed 0 at the default configuration, training (2 threads) and the evaluation at
  L .. 8L, wall and CPU seconds (goal: training + evaluation <= 5 s wall); RoPE's five test-time extensions at 4L
  and 8L timed one by one (dynamic NTK: its per-position evaluation);
- full: an estimate of the whole shipped experiment (2 tasks x every default scheme x 10 seeds, on 2 processes of one
  thread each) from the measured CPU seconds: sum over schemes of (training + evaluation + extensions) x 10 x 2 / 2
  (goal <= 30 min; dynamic NTK counted at 8L only, the experiment slices 4L from it; the induction task's V = 16
  output costs about the same as Markov's; not included: a retraining of a scheme at experiment.LONGER x the steps,
  and RoPE's fine-tune rows);
- batches: ms per sequence of one forward + backward at B = 8, 32, 128, 320 (one thread): whether training several
  seeds in one batched pass (a leading model axis) could be cheaper than one pass per seed;
- shipped: the shipped experiment's recorded CPU seconds, summed over its jobs, on 2 processes (goal <= 30 min);
- autograd: the same model's loss written with autograd.numpy (bench only; autograd is not a
  dependency of posenc), one forward + backward step timed against model.loss_and_grad, the
  gradients compared, and the installed size of each option;
- sensitivity: a full default training run with every initial weight moved by 1e-15 * N(0, 1),
  against the unmoved run: the largest change of any mean loss at L .. 8L.
"""

from __future__ import annotations

import importlib.metadata
import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench.timing import median_time
from posenc.lab import model as M
from posenc.lab.evaluate import eval_sequences, position_losses
from posenc.lab.experiment import EXTENSION_MULTIPLES, LabConfig
from posenc.lab.positions import DEFAULT_SCHEMES, EXTENSIBLE, EXTENSIONS, LAB, PER_POSITION, TABLE_PARAM, positions
from posenc.lab.train import train
from posenc.registry import get_scheme

ROOT = Path(__file__).resolve().parents[1]


def _evaluate(params, scheme, cfg: LabConfig, source, seqs) -> list[float]:
    out = []
    for n in cfg.lengths:
        try:
            out.append(float(position_losses(params, scheme, source, cfg.model(), seqs[:, :n], train_len=cfg.train_len)["loss"].mean()))
        except ValueError:
            out.append(float("nan"))
    return out


GOAL_ONE_S = 5.0  # one scheme x one seed at the defaults, training + evaluation, wall seconds
GOAL_FULL_MIN = 30.0  # the whole shipped experiment, minutes
TASKS, SEEDS, PROCESSES = 2, 10, 2


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def steps(scheme: str = "rope", n: int = 100) -> list[dict]:
    """ms per training step at the defaults (n steps after a 5-step warm-up), with 1 and 2 threads."""
    cfg = LabConfig()
    source, model = cfg.source(), cfg.model()
    rows = []
    for threads in (1, 2):
        train(scheme, source, model, replace(cfg, steps=5).training(), train_len=cfg.train_len, seed=0, threads=threads)
        (w0, c0) = _clock()
        train(scheme, source, model, replace(cfg, steps=n).training(), train_len=cfg.train_len, seed=0, threads=threads)
        (w1, c1) = _clock()
        rows.append({"scheme": scheme, "threads": threads, "steps": n, "ms_per_step_wall": 1000 * (w1 - w0) / n,
                     "ms_per_step_cpu": 1000 * (c1 - c0) / n})
    return rows


def budget() -> tuple[list[dict], list[dict]]:
    """(a row per default scheme: training and evaluation seconds; a row per RoPE extension and length)."""
    cfg = LabConfig()
    source, model = cfg.source(), cfg.model()
    seqs = eval_sequences(source, cfg.n_eval, max(cfg.lengths))
    rows, ext_rows = [], []
    for scheme in DEFAULT_SCHEMES:  # what the experiment trains (positions.DEFAULT_SCHEMES, from the registry)
        (w0, c0) = _clock()
        params, _ = train(scheme, source, model, cfg.training(), train_len=cfg.train_len, seed=0)
        (w1, c1) = _clock()
        _evaluate(params, scheme, cfg, source, seqs)
        (w2, c2) = _clock()
        ext_cpu = 0.0
        if scheme in EXTENSIBLE:  # what the experiment evaluates at test time, as posenc.lab.experiment does
            for ext in EXTENSIONS:
                for m in EXTENSION_MULTIPLES:
                    (a, b) = _clock()
                    position_losses(params, scheme, source, model, seqs[:, : m * cfg.train_len], train_len=cfg.train_len, extension=ext)
                    (a2, b2) = _clock()
                    if ext not in PER_POSITION or m == max(EXTENSION_MULTIPLES):  # the experiment slices the shorter
                        ext_cpu += b2 - b  # per-position rows from the longest (experiment._extensions)
                    ext_rows.append({"extension": ext, "length": m * cfg.train_len, "wall_s": a2 - a, "cpu_s": b2 - b})
        rows.append({"scheme": scheme, "steps": cfg.steps, "train_wall_s": w1 - w0, "train_cpu_s": c1 - c0,
                     "ms_per_step_wall": 1000 * (w1 - w0) / cfg.steps, "eval_wall_s": w2 - w1, "eval_cpu_s": c2 - c1,
                     "extensions_cpu_s": ext_cpu, "train_eval_wall_s": w2 - w0,
                     "goal_met": bool(w2 - w0 <= GOAL_ONE_S)})
    return rows, ext_rows


def full_run(rows: list[dict]) -> dict:
    """The whole shipped experiment's minutes on PROCESSES single-thread processes, from the budget's CPU seconds."""
    per_seed = sum(r["train_cpu_s"] + r["eval_cpu_s"] + r["extensions_cpu_s"] for r in rows)
    minutes = per_seed * SEEDS * TASKS / PROCESSES / 60
    return {"schemes": len(rows), "tasks": TASKS, "seeds": SEEDS, "processes": PROCESSES, "cpu_s_per_seed_all_schemes": per_seed,
            "estimate_min": minutes, "goal_min": GOAL_FULL_MIN, "goal_met": bool(minutes <= GOAL_FULL_MIN)}


BATCHES = (8, 32, 128, 320)  # sequences per loss_and_grad call: 320 = the default batch x 10 seeds


def batch_scaling(scheme: str = "alibi", repeats: int = 20) -> list[dict]:
    """ms per forward + backward at B sequences of length L, one thread (model.loss_and_grad, BLAS held to one
    thread): if the engine were bound by per-operation overhead, ms per sequence would fall as B grows, and training
    S seeds in one batched pass (a leading model axis) would cost less than S passes.  Best of 5 medians."""
    from threadpoolctl import threadpool_limits

    cfg = LabConfig()
    model = cfg.model()
    p = M.init_params(model, scheme, cfg.train_len, 0)
    pos = positions(scheme, cfg.train_len, d_model=cfg.d_model, n_heads=cfg.n_heads, train_len=cfg.train_len)
    rng = np.random.default_rng(0)
    rows = []
    with threadpool_limits(1):
        for B in BATCHES:
            x = rng.integers(0, cfg.vocab + 1, (B, cfg.train_len))
            y = rng.integers(0, cfg.vocab, (B, cfg.train_len))
            t = min(median_time(lambda x=x, y=y: M.loss_and_grad(p, x, y, pos, model), repeats=repeats, warmup=2)
                    for _ in range(5))
            rows.append({"scheme": scheme, "batch": B, "ms_per_call": 1000 * t, "ms_per_sequence": 1000 * t / B})
    base = next(r for r in rows if r["batch"] == cfg.batch)["ms_per_sequence"]
    for r in rows:
        r["vs_batch_32"] = r["ms_per_sequence"] / base
    return rows


SHIPPED_FILES = ("lab_results.json", "lab_longer.json", "lab_induction.json", "lab_induction_longer.json")


def shipped_full_run() -> dict:
    """The shipped experiment's own cost: the CPU seconds every job of the shipped files recorded (training and
    evaluation, in its worker process), summed, and that sum on PROCESSES processes, against the 30-minute goal."""
    import json

    from posenc.lab.provenance import ORDERS_FILE

    data = ROOT / "posenc" / "lab" / "data"
    cpu, jobs = 0.0, 0
    docs = [json.loads((data / f).read_text(encoding="utf-8")) for f in SHIPPED_FILES if (data / f).exists()]
    orders = json.loads((data / ORDERS_FILE).read_text(encoding="utf-8"))["orders"]
    docs += [r for k, r in orders.items() if k != "2"]  # order 2 is the main run's seed 0 (the same job)
    for doc in docs:
        for t in doc["seconds"].values():
            cpu += t["cpu"]
            jobs += 1
    minutes = cpu / PROCESSES / 60
    return {"jobs": jobs, "cpu_s": cpu, "processes": PROCESSES, "minutes_if_evenly_shared": minutes,
            "goal_min": GOAL_FULL_MIN, "goal_met": bool(minutes <= GOAL_FULL_MIN)}


def _autograd_loss(anp):
    """The lab model's loss in autograd.numpy: the same forward as posenc.lab.model, no cache."""

    def rms(x, g):
        return x / anp.sqrt(anp.mean(x * x, axis=-1, keepdims=True) + M.EPS) * g

    def trained_bias(params, pos):
        """A learned-per-bucket bias (T5), the trained bias autograd can follow: a gather from the scheme's own table."""
        (name,) = pos.weights
        ids = get_scheme(LAB[pos.scheme].model).behaviour.buckets(pos.at, pos.at, **pos.settings)
        return anp.transpose(params[name][ids], (2, 0, 1))

    def loss(params, inputs, targets, pos, cfg):
        B, n = inputs.shape
        H, e, d = cfg.n_heads, cfg.head_dim, cfg.d_model
        x = params["tok"][inputs]
        if pos.add is not None:
            x = x + pos.add[None]
        if pos.rows is not None:
            x = x + params[TABLE_PARAM][pos.rows][None]
        bias = pos.bias if pos.trainable is None else pos.bias + trained_bias(params, pos)
        for layer in range(cfg.n_layers):
            h = rms(x, params[f"g1_{layer}"])
            qkv = anp.dot(h, params[f"wqkv{layer}"])
            heads = [anp.transpose(anp.reshape(qkv[..., i * d : (i + 1) * d], (B, n, H, e)), (0, 2, 1, 3)) for i in range(3)]
            q, k, v = heads
            if pos.mq is not None:
                q = anp.einsum("pij,bhpj->bhpi", pos.mq, q)
                k = anp.einsum("pij,bhpj->bhpi", pos.mk, k)
            s = anp.matmul(q, anp.transpose(k, (0, 1, 3, 2))) / np.sqrt(e) + bias
            s = s - anp.max(s, axis=-1, keepdims=True)
            a = anp.exp(s)
            a = a / anp.sum(a, axis=-1, keepdims=True)
            o = anp.reshape(anp.transpose(anp.matmul(a, v), (0, 2, 1, 3)), (B, n, d))
            x = x + anp.dot(o, params[f"wo{layer}"])
            u = anp.dot(rms(x, params[f"g2_{layer}"]), params[f"w1{layer}"])
            x = x + anp.dot(anp.maximum(u, 0.0), params[f"w2{layer}"])
        logits = anp.dot(rms(x, params["gf"]), params["wu"])
        z = logits - anp.max(logits, axis=-1, keepdims=True)
        logp = z - anp.log(anp.sum(anp.exp(z), axis=-1, keepdims=True))
        picked = logp[np.arange(B)[:, None], np.arange(n)[None, :], targets]
        return -anp.mean(picked)

    return loss


def _installed_kib(dist: str) -> float:
    files = importlib.metadata.distribution(dist).files or []
    return sum((f.locate().stat().st_size for f in files if f.locate().exists()), 0) / 1024


def autograd_vs_handwritten() -> list[dict]:
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return [{"scheme": "-", "note": "autograd is not installed (pip install autograd to measure)"}]
    cfg = LabConfig()
    model = cfg.model()
    rng = np.random.default_rng(0)
    inputs = rng.integers(0, cfg.vocab + 1, size=(cfg.batch, cfg.train_len))
    targets = rng.integers(0, cfg.vocab, size=(cfg.batch, cfg.train_len))
    ag = autograd.value_and_grad(_autograd_loss(anp))
    hand_kib = (ROOT / "posenc" / "lab" / "model.py").stat().st_size / 1024
    ag_kib = _installed_kib("autograd")
    rows = []
    for scheme in ("sinusoidal", "t5", "rope"):
        p = M.init_params(model, scheme, cfg.train_len, 0)
        pos = positions(scheme, cfg.train_len, d_model=cfg.d_model, n_heads=cfg.n_heads, train_len=cfg.train_len)
        lh, gh = M.loss_and_grad(p, inputs, targets, pos, model)
        la, ga = ag(p, inputs, targets, pos, model)
        diff = max(float(np.abs(gh[k] - ga[k]).max() / (np.abs(ga[k]).max() + 1e-300)) for k in gh)
        t_hand = median_time(lambda p=p, pos=pos: M.loss_and_grad(p, inputs, targets, pos, model), repeats=15, warmup=3)
        t_ag = median_time(lambda p=p, pos=pos: ag(p, inputs, targets, pos, model), repeats=15, warmup=3)
        rows.append({"scheme": scheme, "handwritten_ms": 1000 * t_hand, "autograd_ms": 1000 * t_ag,
                     "autograd_slower": t_ag / t_hand, "loss_diff": abs(lh - float(la)), "max_rel_grad_diff": diff,
                     "handwritten_kib": hand_kib, "autograd_installed_kib": ag_kib, "autograd_version": autograd.__version__
                     if hasattr(autograd, "__version__") else importlib.metadata.version("autograd")})
    return rows


def sensitivity(schemes=("rope", "t5"), steps: int | None = None) -> list[dict]:
    """How far a 1e-15 nudge of the initial weights moves the evaluated mean losses (and the weights) after
    training: the margin of the 1e-6 reproduction on another machine, whose BLAS may round differently.
    ``steps`` trains longer or shorter than the default (e.g. ``sensitivity(("raw_index",), steps=2000)``)."""
    cfg = LabConfig() if steps is None else replace(LabConfig(), steps=steps)
    source, model = cfg.source(), cfg.model()
    seqs = eval_sequences(source, cfg.n_eval, max(cfg.lengths))
    rows = []
    for scheme in schemes:
        base, _ = train(scheme, source, model, cfg.training(), train_len=cfg.train_len, seed=0)
        init = M.init_params(model, scheme, cfg.train_len, 0)
        rng = np.random.default_rng(123)
        nudged = {k: v + 1e-15 * rng.standard_normal(v.shape) for k, v in init.items()}
        moved, _ = train(scheme, source, model, cfg.training(), train_len=cfg.train_len, seed=0, initial=nudged)
        a, b = _evaluate(base, scheme, cfg, source, seqs), _evaluate(moved, scheme, cfg, source, seqs)
        change = max(abs(x - y) for x, y in zip(a, b) if np.isfinite(x))
        weights = max(float(np.abs(base[k] - moved[k]).max()) for k in base)
        rows.append({"scheme": scheme, "steps": cfg.steps, "perturbation": 1e-15, "max_mean_loss_change": change, "max_weight_change": weights,
                     "margin_vs_1e-6": 1e-6 / max(change, 1e-300)})
    return rows


def lab() -> dict:
    load = os.getloadavg()
    rows, ext_rows = budget()
    return {"steps": steps(), "budget": rows, "extensions": ext_rows, "full": full_run(rows), "batches": batch_scaling(),
            "shipped": shipped_full_run(),
            "autograd": autograd_vs_handwritten(), "sensitivity": sensitivity(),
            "load_average": {"start": [round(x, 2) for x in load], "end": [round(x, 2) for x in os.getloadavg()]}}
