"""T5 at two bucket settings and the out-of-distribution diagnostic per lab scheme (issue 37), against hand counts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc.lab.positions import (
    DEFAULT_SCHEMES,
    KIND,
    LAB,
    LAB_SCHEMES,
    NAMES,
    REGISTRY_KEY,
    own_weights,
    positions,
    scheme_params,
    t5_at_length,
    unseen,
    unseen_share,
)
from posenc.registry import get_scheme
from posenc.schemes.relative import t5_bucket

L, D, H = 32, 32, 4  # the lab's defaults: head dim 8


def _reached(nb: int, md: int, n: int) -> set[int]:
    """Buckets of the decoder's offsets 0 .. n-1, from the registry's bucket function (j - i <= 0)."""
    return set(t5_bucket(-np.arange(n), bidirectional=False, num_buckets=nb, max_distance=md).tolist())


# ---------------------------------------------------------------------- T5 at two settings
def test_both_t5_settings_are_default_lab_schemes_of_one_registry_entry():
    assert {"t5", "t5_scaled"} <= set(DEFAULT_SCHEMES)
    assert REGISTRY_KEY["t5_scaled"] == REGISTRY_KEY["t5"] == "t5" and KIND["t5_scaled"] == KIND["t5"] == "trained bias"
    assert NAMES["t5_scaled"] != NAMES["t5"]
    assert scheme_params("t5", L) == {"bidirectional": False}  # the registry's (Hugging Face's) 32 buckets, 128
    spec = {p.name: p.default for p in get_scheme("t5").params}
    assert (spec["num_buckets"], spec["max_distance"]) == (32, 128)
    assert scheme_params("t5_scaled", L) == {"bidirectional": False, "num_buckets": 8, "max_distance": 8}


def test_scaled_t5_reaches_every_bucket_within_l_and_the_default_does_not():
    # the default at L = 32: offsets 0..15 exact, 16..31 in buckets 16..21 (21 = 16 + floor(16 log(31/16) / log 8));
    # buckets 22..31 are never trained (the audit's finding)
    assert _reached(32, 128, L) == set(range(22))
    assert 16 + math.floor(16 * math.log(31 / 16) / math.log(8)) == 21
    for train_len in (4, 8, 16, 32, 64, 100, 128, 256, 512):
        p = scheme_params("t5_scaled", train_len)
        nb, md = p["num_buckets"], p["max_distance"]
        assert md == max(train_len // 4, 4)  # 4: the registry's least max_distance  # T5: 128 = 512 / 4
        assert _reached(nb, md, train_len) == set(range(nb)), train_len  # every bucket reached by an offset < L
        assert nb == 32 or _reached(nb + 1, md, train_len) != set(range(nb + 1)) or nb + 1 > 2 * md - 1
    assert t5_at_length(get_scheme("t5"), 512) == {"num_buckets": 32, "max_distance": 128}  # T5's own setting
    assert _reached(9, 8, L) == set(range(9)) - {7}  # one more bucket at L = 32 would leave bucket 7 untrained


def test_scaled_t5_trains_its_own_bucket_table_and_reads_its_buckets():
    w = own_weights("t5_scaled", np.random.default_rng(0), d_model=D, n_heads=H, train_len=L)
    assert {k: v.shape for k, v in w.items()} == {"buckets": (8, H)}
    p = positions("t5_scaled", 2 * L, d_model=D, n_heads=H, train_len=L)
    assert p.settings == {"bidirectional": False, "num_buckets": 8, "max_distance": 8}
    bias = p.trainable.forward(w, p.at, p.at, **p.settings)  # (H, 2L, 2L)
    # the bias of offset 40 is bucket 7's weight (every offset >= 7 shares it)
    np.testing.assert_array_equal(bias[:, 45, 5], w["buckets"][7])


# ---------------------------------------------------------------------- the OOD diagnostic
def _far(n, m):  # causal pairs with offset >= m, counted one offset at a time
    return sum(n - d for d in range(m, n))


@pytest.mark.parametrize("n", [32, 64, 128, 256])
def test_unseen_share_by_hand(n):
    pairs = n * (n + 1) / 2
    far = _far(n, L) / pairs
    expect = {
        "raw_index": (n - L) / n, "sinusoidal": (n - L) / n, "learned": (n - L) / n,  # positions >= L
        "alibi": far, "kerple": far, "fire": far,  # offsets >= L
        # head dim 8, base 1e4: theta = 1, 0.1, 0.01, 0.001; (L-1) theta = 31 >= 2 pi for the first only
        "rope": far * 3 / 4, "xpos": far * 3 / 4,
        "p_rope": far * 2 / 4,  # p = 0.75 drops the slowest pair (theta = 0: it never rotates)
        "rope_randomized": 0.0,  # positions from [0, 2048): every offset below 2048 occurs in training
        "nope": 0.0,
        "t5_scaled": 0.0,  # every bucket trained
        # HF default at L = 32: bucket 22 starts at offset 35 = ceil(16 * 8 ** (6 / 16)), never trained
        "t5": _far(n, 35) / pairs,
    }
    assert math.ceil(16 * 8 ** (6 / 16)) == 35
    for scheme, value in expect.items():
        assert unseen_share(scheme, n, train_len=L, d_model=D, n_heads=H) == pytest.approx(value, rel=1e-12, abs=1e-15), scheme


def test_unseen_share_literals_at_2l():
    # 528 / 2080 causal pairs at n = 64 have offset >= 32; 435 / 2080 have an untrained T5 bucket
    assert unseen_share("alibi", 64, train_len=L, d_model=D, n_heads=H) == pytest.approx(528 / 2080, rel=1e-14)
    assert unseen_share("t5", 64, train_len=L, d_model=D, n_heads=H) == pytest.approx(435 / 2080, rel=1e-14)
    assert unseen_share("rope", 64, train_len=L, d_model=D, n_heads=H) == pytest.approx(0.75 * 528 / 2080, rel=1e-14)


def test_unseen_share_relations():
    for scheme in LAB_SCHEMES:
        shares = [unseen_share(scheme, n, train_len=L, d_model=D, n_heads=H) for n in (8, 32, 33, 64, 256)]
        assert shares[0] == shares[1] == 0.0, scheme  # nothing unseen within the training length
        assert all(0.0 <= a <= b <= 1.0 for a, b in zip(shares, shares[1:])), scheme  # grows with n
    # randomized positions: the trained range is N, for any scheme that reads positions
    assert unseen_share("rope", 256, train_len=L, d_model=D, n_heads=H, randomize=256) == 0.0
    assert unseen_share("alibi", 300, train_len=L, d_model=D, n_heads=H, randomize=256) == pytest.approx(
        _far(300, 256) / (300 * 301 / 2), rel=1e-14)
    # a wider head has slower rotations: RoPE at head dim 16 (theta_k = 1e4^(-k/8)) covers a turn where theta >= 2 pi / 31
    theta = 1e4 ** (-np.arange(8) / 8)
    partial = float(((31 * theta) < 2 * np.pi).mean())
    assert partial == 6 / 8  # theta = 1 and 10^-0.5 (31 x 0.316 = 9.8 > 2 pi) cover a turn
    assert unseen_share("rope", 64, train_len=L, d_model=32, n_heads=2) == pytest.approx(528 / 2080 * 6 / 8, rel=1e-14)
    assert unseen("nope", 64, train_len=L, d_model=D, n_heads=H)["unit"].startswith("no positional input")
    assert LAB["t5_scaled"].per_length and not LAB["t5"].per_length


@pytest.mark.parametrize("kwargs,match", [
    ({"scheme": "t6"}, "scheme must be one of"),
    ({"n": 0}, "n must be an integer"),
    ({"train_len": 0}, "train_len must be an integer"),
    ({"d_model": 30, "n_heads": 4}, "d_model / n_heads must be an even integer"),
    ({"scheme": "nope", "randomize": 64}, "reads no positions"),
])
def test_bad_arguments_name_themselves(kwargs, match):
    args = {"scheme": "rope", "n": 64, "train_len": L, "d_model": D, "n_heads": H, **kwargs}
    with pytest.raises(ValueError, match=match):
        unseen_share(args.pop("scheme"), args.pop("n"), **args)
