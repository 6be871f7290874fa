"""The lab's Markov source: its exact entropy against hand-computable cases and brute force."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from posenc.lab.task import MarkovSource


def test_deterministic_cycle_has_entropy_zero():
    # 0 -> 1 -> 2 -> 0: the next token is certain; only the first token (uniform on the cycle) is not
    table = np.eye(3)[[1, 2, 0]]
    src = MarkovSource.from_table(table, 3, 1)
    assert src.entropy == 0.0
    np.testing.assert_allclose(src.pi, 1 / 3, rtol=1e-12)
    np.testing.assert_allclose(src.floor(5), [math.log(3), 0, 0, 0, 0], atol=1e-12)


def test_iid_uniform_source_has_entropy_log_v():
    src = MarkovSource.from_table(np.full((16, 4), 0.25), 4, 2)
    assert src.entropy == pytest.approx(math.log(4), rel=1e-14)
    np.testing.assert_allclose(src.floor(6), math.log(4), rtol=1e-12)  # prefix positions too
    assert src.uniform == pytest.approx(math.log(4))


def _brute_force(src: MarkovSource, m: int):
    """Joint probability of every length-m sequence under the stationary start, by enumeration."""
    V, k = src.vocab, src.order
    # stationary vector independently: the dense context transition matrix's eigenvector for 1
    C = V**k
    P = np.zeros((C, C))
    for c in range(C):
        for y in range(V):
            P[c, (c * V + y) % C] += src.table[c, y]
    w, vecs = np.linalg.eig(P.T)
    pi = np.real(vecs[:, np.argmin(np.abs(w - 1))])
    pi = pi / pi.sum()
    probs = {}
    for seq in itertools.product(range(V), repeat=m):
        c = 0
        for i in range(k):
            c = c * V + seq[i]
        p = pi[c]
        for t in range(k, m):
            p *= src.table[c, seq[t]]
            c = (c * V + seq[t]) % C
        probs[seq] = p
    return pi, probs


def _entropy_of_prefix(probs: dict, t: int) -> float:
    marg: dict = {}
    for seq, p in probs.items():
        marg[seq[:t]] = marg.get(seq[:t], 0.0) + p
    return -sum(p * math.log(p) for p in marg.values() if p > 0)


@pytest.mark.parametrize("vocab,order", [(3, 2), (2, 3), (4, 1)])
def test_entropy_matches_brute_force_enumeration(vocab, order):
    src = MarkovSource.random(vocab, order, seed=7, concentration=0.7)
    m = order + 3
    pi, probs = _brute_force(src, m)
    np.testing.assert_allclose(src.pi, pi, rtol=1e-10, atol=1e-13)
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-12)
    # H(X_t | X_<t) = H(X_0..X_t) - H(X_0..X_{t-1}), for every position including the prefix ones
    cond = [_entropy_of_prefix(probs, t + 1) - _entropy_of_prefix(probs, t) for t in range(m)]
    np.testing.assert_allclose(src.floor(m), cond, rtol=1e-10, atol=1e-12)
    assert cond[-1] == pytest.approx(src.entropy, rel=1e-10)


def test_next_distributions_are_the_brute_force_conditionals():
    src = MarkovSource.random(3, 2, seed=3)
    m = 4
    _, probs = _brute_force(src, m)
    seqs = np.array(list(itertools.product(range(3), repeat=m)))
    P = src.next_distributions(seqs)  # (S, m, V)
    for s, seq in enumerate(map(tuple, seqs)):
        for t in range(m):
            pre = {y: sum(p for q, p in probs.items() if q[: t] == seq[:t] and q[t] == y) for y in range(3)}
            tot = sum(pre.values())
            np.testing.assert_allclose(P[s, t], [pre[y] / tot for y in range(3)], rtol=1e-9, atol=1e-12)


def test_samples_are_stationary_and_seeded():
    src = MarkovSource.random(4, 2, seed=1)
    a = src.sample(np.random.default_rng(5), 4000, 12)
    b = src.sample(np.random.default_rng(5), 4000, 12)
    assert np.array_equal(a, b) and a.dtype == np.int64 and a.shape == (4000, 12)
    # the context at every window position follows pi (within 5 standard errors, fixed seed)
    for t in (0, 5, 10):
        c = a[:, t] * 4 + a[:, t + 1]
        freq = np.bincount(c, minlength=16) / len(c)
        se = np.sqrt(src.pi * (1 - src.pi) / len(c))
        assert np.all(np.abs(freq - src.pi) < 5 * se + 1e-9)
    # the mean surprisal of sampled tokens estimates the floor
    P = src.next_distributions(a)
    lp = -np.log(np.take_along_axis(P, a[..., None], axis=-1)[..., 0])
    assert lp[:, 2:].mean() == pytest.approx(src.entropy, abs=0.02)


def test_random_source_is_seeded_and_rows_are_distributions():
    a, b = MarkovSource.random(8, 2, seed=0), MarkovSource.random(8, 2, seed=0)
    assert np.array_equal(a.table, b.table) and a.entropy == b.entropy
    assert not np.array_equal(a.table, MarkovSource.random(8, 2, seed=1).table)
    np.testing.assert_allclose(a.table.sum(axis=1), 1.0, rtol=1e-12)
    assert 0 < a.entropy < a.uniform


@pytest.mark.parametrize("kwargs,match", [
    ({"vocab": 16, "order": 4}, "at most 4096 contexts"),
    ({"vocab": 1, "order": 2}, "vocab must be an integer"),
    ({"vocab": 4, "order": 0}, "order must be an integer"),
    ({"vocab": 4, "order": 2, "concentration": 0.0}, "concentration"),
])
def test_bad_arguments_name_themselves(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MarkovSource.random(**kwargs)
