"""The lab's noisy-induction task: its exact floor against brute-force enumeration, its conditionals against a
direct loop, its sampler against the process it defines, and the task registry."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from posenc.lab.task import (
    TASK_DEFAULTS,
    TASK_NAMES,
    TASK_PARAMS,
    TASKS,
    InductionSource,
    MarkovSource,
    copy_entropy,
    source_for,
)


def _step(seq: tuple, V: int, rho: float) -> list[float]:
    """P(x_t = . | seq) written out from the process's definition (an independent loop, no shared helper)."""
    t = len(seq)
    if t == 0:
        return [1 / V] * V
    cur = seq[-1]
    earlier = [j for j in range(t - 1) if seq[j] == cur]
    if not earlier:
        return [1 / V] * V
    nxt = seq[max(earlier) + 1]
    return [(1 - rho) / V + (rho if y == nxt else 0.0) for y in range(V)]


def _joint(V: int, rho: float, m: int) -> dict:
    out = {}
    for seq in itertools.product(range(V), repeat=m):
        p = 1.0
        for t in range(m):
            p *= _step(seq[:t], V, rho)[seq[t]]
        out[seq] = p
    return out


def _entropy(p) -> float:
    return -sum(q * math.log(q) for q in p if q > 0)


@pytest.mark.parametrize("V,rho,m", [(2, 0.7, 7), (3, 0.6, 6), (4, 0.9, 5), (3, 1.0, 6), (3, 0.0, 5)])
def test_floor_matches_brute_force_enumeration(V, rho, m):
    probs = _joint(V, rho, m)
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-12)
    # E over prefixes of H(X_t | prefix), prefix conditionals from the joint by marginalisation
    brute = []
    for t in range(m):
        marg: dict = {}
        for seq, p in probs.items():
            row = marg.setdefault(seq[:t], [0.0] * V)
            row[seq[t]] += p
        brute.append(sum(sum(row) * _entropy([q / sum(row) for q in row]) for row in marg.values() if sum(row) > 0))
    src = InductionSource(V, rho)
    np.testing.assert_allclose(src.floor(m), brute, rtol=1e-10, atol=1e-12)
    # P(A_t): the joint mass of prefixes whose last token occurred before
    share = [sum(p for seq, p in probs.items() if t >= 1 and seq[t - 1] in seq[: t - 1]) for t in range(m)]
    np.testing.assert_allclose(src.copy_probability(m), share, rtol=1e-10, atol=1e-12)


def test_copy_entropy_closed_form_and_limits():
    # V = 16, rho = 0.8: hit = 0.8125, miss = 0.0125 (hand-computed)
    h = -0.8125 * math.log(0.8125) - 15 * 0.0125 * math.log(0.0125)
    assert copy_entropy(16, 0.8) == pytest.approx(h, rel=1e-14)
    assert copy_entropy(16, 0.8) == pytest.approx(0.99033698, abs=1e-8)
    assert copy_entropy(5, 0.0) == pytest.approx(math.log(5), rel=1e-14)  # no copying: uniform
    assert copy_entropy(5, 1.0) == 0.0  # always copies: certain
    src = InductionSource(16, 0.8)
    assert src.entropy == copy_entropy(16, 0.8) and src.prefix_floor == ()
    f = src.floor(3000)
    assert f[0] == f[1] == pytest.approx(math.log(16), rel=1e-14)  # no earlier occurrence possible yet
    assert np.all(np.diff(f[1:]) <= 1e-15)  # the chance of a copy context only grows
    assert f[-1] == pytest.approx(src.entropy, abs=1e-12)  # the limit, every token seen


def test_next_distributions_are_the_brute_force_conditionals_and_sum_to_one():
    V, rho, m = 3, 0.6, 5
    probs = _joint(V, rho, m)
    src = InductionSource(V, rho)
    seqs = np.array(list(itertools.product(range(V), repeat=m)))
    P = src.next_distributions(seqs)  # (S, m, V)
    np.testing.assert_allclose(P.sum(axis=-1), 1.0, rtol=0, atol=1e-14)
    for s, seq in enumerate(map(tuple, seqs)):
        for t in range(m):
            row = [sum(p for q, p in probs.items() if q[:t] == seq[:t] and q[t] == y) for y in range(V)]
            np.testing.assert_allclose(P[s, t], np.array(row) / sum(row), rtol=1e-9, atol=1e-12)


def test_next_distributions_match_the_direct_loop_on_long_samples():
    src = InductionSource(16, 0.8)
    x = src.sample(np.random.default_rng(1), 6, 300)
    P = src.next_distributions(x)
    for b in range(6):
        for t in range(300):
            np.testing.assert_allclose(P[b, t], _step(tuple(x[b, :t]), 16, 0.8), rtol=0, atol=1e-15)


def test_copy_distances_by_hand():
    # x = 0 1 0 2 0 1: position 2 reads x_1 = 1 (new: -1); 3 reads x_2 = 0, last at 0 -> 3-1-0 = 2; 4 reads 2 (new);
    # 5 reads x_4 = 0, last at 2 -> 5-1-2 = 2
    src = InductionSource(3, 0.5)
    np.testing.assert_array_equal(src.copy_distances(np.array([[0, 1, 0, 2, 0, 1]])), [[-1, -1, -1, 2, -1, 2]])


def test_sampling_is_seeded_and_follows_the_process():
    src = InductionSource(8, 0.7)
    a = src.sample(np.random.default_rng(5), 3000, 40)
    b = src.sample(np.random.default_rng(5), 3000, 40)
    assert np.array_equal(a, b) and a.dtype == np.int64 and a.shape == (3000, 40)
    assert not np.array_equal(a, src.sample(np.random.default_rng(6), 3000, 40))
    d = src.copy_distances(a)
    copy = d >= 0
    # the empirical copy rate: x_t == x_{j+1} at copy contexts happens w.p. rho + (1 - rho)/V = 0.7375
    rows, cols = np.nonzero(copy)
    succ = a[rows, cols - 1 - d[rows, cols] + 1]
    hit = (a[rows, cols] == succ).mean()
    p = 0.7 + 0.3 / 8
    assert abs(hit - p) < 5 * math.sqrt(p * (1 - p) / rows.size)
    # the share of copy contexts at each position estimates P(A_t) (5 standard errors)
    pa = src.copy_probability(40)
    se = np.sqrt(pa * (1 - pa) / 3000) + 1e-12
    assert np.all(np.abs(copy.mean(axis=0) - pa) <= 5 * se)
    # the first token and non-copy tokens are uniform
    freq = np.bincount(a[:, 0], minlength=8) / 3000
    assert np.all(np.abs(freq - 1 / 8) < 5 * math.sqrt(1 / 8 * 7 / 8 / 3000))
    # mean surprisal of the sampled tokens estimates the exact floor
    P = src.next_distributions(a)
    lp = -np.log(np.take_along_axis(P, a[..., None], axis=-1)[..., 0])  # (S, n)
    assert lp.mean() == pytest.approx(src.floor(40).mean(), abs=0.02)


def test_registry_shares_its_keys_and_builds_each_task():
    assert set(TASKS) == set(TASK_NAMES) == set(TASK_DEFAULTS) == set(TASK_PARAMS) == {"markov", "induction"}
    m = source_for("markov", vocab=8, order=2, seed=0, concentration=0.5)
    assert isinstance(m, MarkovSource) and m.entropy == MarkovSource.random(8, 2, seed=0).entropy
    i = source_for("induction", vocab=16)
    assert isinstance(i, InductionSource) and i.rho == TASK_DEFAULTS["induction"]["rho"] == 0.8
    assert source_for("induction", vocab=16, rho=0.5).rho == 0.5
    assert source_for("induction", vocab=16, seed=3) == i  # no table: the seed does not change it
    assert source_for("induction", vocab=64, order=3).vocab == 64  # nor the order (Markov's 64^3 would be refused)
    for src in (m, i):  # the engine's duck type
        assert {"vocab", "entropy", "uniform", "prefix_floor"} <= {n for n in dir(src) if not n.startswith("_")}
        x = src.sample(np.random.default_rng(0), 2, 9)
        assert src.next_distributions(x).shape == (2, 9, src.vocab)


@pytest.mark.parametrize("task,kwargs,match", [
    ("copy", {"vocab": 8}, "task must be one of"),
    ("induction", {"vocab": 1}, "vocab must be an integer"),
    ("induction", {"vocab": 65}, "vocab must be an integer"),
    ("induction", {"vocab": 16, "rho": 1.5}, r"rho must be a finite number in \[0, 1\]"),
    ("induction", {"vocab": 16, "order": 0}, "order must be an integer"),
    ("induction", {"vocab": 16, "depth": 3}, r"takes the parameters \['rho'\]"),
    ("markov", {"vocab": 8, "rho": 0.5}, "takes the parameters none"),
])
def test_bad_arguments_name_themselves(task, kwargs, match):
    with pytest.raises(ValueError, match=match):
        source_for(task, **kwargs)


def test_copy_distance_distribution_the_docstring_reports():
    # task.py's docstring: 2000 sequences from default_rng(0) at the defaults, all positions < n, L = 32
    src = source_for("induction", **TASK_DEFAULTS["induction"])
    d = src.copy_distances(src.sample(np.random.default_rng(0), 2000, 256))  # (2000, 256)
    far = [round(100 * float((d[:, :n] >= 32).mean()), 2) for n in (32, 64, 128, 256)]
    assert far == [0.0, 1.99, 5.29, 8.18]
    copy = [round(100 * float((d[:, :n] >= 0).mean()), 1) for n in (32, 64, 128, 256)]
    assert copy == [67.0, 79.3, 87.9, 93.5]
    q99 = [float(np.percentile(d[:, :n][d[:, :n] >= 0], 99)) for n in (32, 64, 128, 256)]
    assert q99 == [23.0, 41.0, 71.0, 108.0]
    assert src.copy_probability(32)[31] == pytest.approx(0.87693649, abs=1e-8)
    assert src.uniform - src.entropy == pytest.approx(1.78225174, abs=1e-8)


def test_the_lab_engine_takes_the_induction_source_unchanged():
    # two training steps of a tiny model and an evaluation: the duck type is enough for train and evaluate
    from posenc.lab.evaluate import eval_sequences, position_losses
    from posenc.lab.model import ModelConfig
    from posenc.lab.train import TrainConfig, train

    src = source_for("induction", vocab=6, rho=0.8)
    cfg = ModelConfig(6, 8, 2, 1, 8)
    params, losses = train("rope", src, cfg, TrainConfig(steps=2, batch=2, warmup=1), train_len=8, seed=0)
    assert losses.shape == (2,) and np.all(np.isfinite(losses))
    seqs = eval_sequences(src, 4, 16)  # (4, 16)
    r = position_losses(params, "rope", src, cfg, seqs, train_len=8)
    P = src.next_distributions(seqs)
    bayes = -(P * np.log(P)).sum(axis=-1).mean(axis=0)  # (16,) the exact per-context Bayes loss, averaged
    np.testing.assert_allclose(r["bayes"], bayes, rtol=1e-12)
    assert np.all(r["gap"] >= -1e-12)  # a KL
