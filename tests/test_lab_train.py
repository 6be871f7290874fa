"""Training is deterministic, reports progress and can be cancelled without a result."""

from __future__ import annotations

import numpy as np
import pytest

from posenc.lab.experiment import FINETUNES, LabConfig, run_experiment
from posenc.lab.model import ModelConfig
from posenc.lab.task import MarkovSource
from posenc.lab.train import Cancelled, TrainConfig, train

SRC = MarkovSource.random(4, 2, seed=0)
CFG = ModelConfig(vocab=4, d_model=16, n_heads=2, n_layers=1, d_mlp=16)
TC = TrainConfig(steps=40, batch=8, warmup=5)


@pytest.mark.parametrize("scheme", ["t5", "rope", "learned"])
def test_same_seed_gives_bit_identical_models(scheme):
    a, la = train(scheme, SRC, CFG, TC, train_len=16, seed=3)
    b, lb = train(scheme, SRC, CFG, TC, train_len=16, seed=3)
    assert np.array_equal(la, lb)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    _, lc = train(scheme, SRC, CFG, TC, train_len=16, seed=4)
    assert not np.array_equal(la, lc)


def test_every_scheme_starts_from_the_same_shared_weights():
    from posenc.lab.model import init_params

    a, b = init_params(CFG, "rope", 16, 0), init_params(CFG, "t5", 16, 0)
    assert all(np.array_equal(a[k], b[k]) for k in a) and set(b) - set(a) == {"buckets"}  # T5's own name for its table
    fire = init_params(CFG, "fire", 16, 0)
    assert set(fire) - set(a) == {"w1", "b1", "w2", "b2", "c", "L_multiplier"}


def test_randomized_positions_train_deterministically_and_rope_randomized_is_rope_with_the_option():
    a, la = train("rope_randomized", SRC, CFG, TC, train_len=16, seed=3)
    b, lb = train("rope", SRC, CFG, TC, train_len=16, seed=3, randomize=2048)  # the registry entry stands for the option
    assert np.array_equal(la, lb) and all(np.array_equal(a[k], b[k]) for k in a)
    _, plain = train("rope", SRC, CFG, TC, train_len=16, seed=3)
    assert not np.array_equal(la, plain)
    learned, _ = train("learned", SRC, CFG, TC, train_len=16, seed=3, randomize=64)
    assert learned["pos"].shape == (64, 16)  # a row for every position of the range


def test_kerple_stays_clamped_and_its_scalars_move():
    from posenc.lab.model import init_params

    p, _ = train("kerple", SRC, CFG, TC, train_len=16, seed=0)
    start = init_params(CFG, "kerple", 16, 0)
    assert np.all(p["r1"] >= 0.01) and np.all(p["r2"] >= 0.01)
    assert not np.array_equal(p["r1"], start["r1"])


def test_progress_and_cancel():
    seen = []
    train("nope", SRC, CFG, TC, train_len=16, seed=0, progress=lambda s, n, loss: seen.append((s, n)), every=10)
    assert seen == [(10, 40), (20, 40), (30, 40), (40, 40)]
    with pytest.raises(Cancelled, match="stopped at step 20"):
        train("nope", SRC, CFG, TC, train_len=16, seed=0, should_stop=lambda: len(seen) > 5,
              progress=lambda s, n, loss: seen.append(s), every=10)


def test_training_lowers_the_loss():
    _, losses = train("t5", SRC, CFG, TrainConfig(steps=150, batch=16, warmup=10), train_len=16, seed=0)
    assert losses[-20:].mean() < losses[:20].mean() - 0.05


def test_a_run_with_randomized_positions_refuses_nope_and_marks_lengths_past_its_range():
    with pytest.raises(ValueError, match="NoPE reads no positions"):
        LabConfig(schemes=("rope", "nope"), randomize=64)
    with pytest.raises(ValueError, match="at least the training length"):
        LabConfig(train_len=32, randomize=16)
    cfg = LabConfig(vocab=4, order=2, train_len=8, n_seeds=1, schemes=("alibi",), steps=25, n_eval=8, randomize=20)
    res, _ = run_experiment(cfg)
    assert res["config"]["randomize"] == 20 and LabConfig.from_dict(res["config"]) == cfg
    means = res["runs"]["alibi"]["0"]["mean"]
    assert means["8"] is not None and means["16"] is not None and means["32"] is None and means["64"] is None
    assert "does not fit" in res["undefined"]["alibi"]


def test_experiment_is_deterministic_and_marks_the_learned_table_undefined():
    cfg = LabConfig(vocab=4, order=2, train_len=8, n_seeds=2, schemes=("learned", "rope"), steps=25, n_eval=8, finetune_steps=25)
    a, wa = run_experiment(cfg)
    b, _ = run_experiment(cfg)
    a.pop("seconds"), b.pop("seconds")
    assert a == b
    assert a["runs"]["learned"]["0"]["mean"]["16"] is None
    assert "no row for position 8" in a["undefined"]["learned"]
    assert set(a["runs"]["rope"]["1"]["extensions"]) == {"pi", "ntk", "dynamic", "yarn", "llama3"} | set(FINETUNES)
    assert set(wa) == {"learned", "rope"} and wa["learned"]["pos"].shape == (8, 32)


def test_the_defaults_are_batch_stream_2_and_no_extension():
    from posenc.lab.train import batches

    a, la = train("rope", SRC, CFG, TC, train_len=16, seed=3)
    b, lb = train("rope", SRC, CFG, TC, train_len=16, seed=3, stream=2, base_len=16, extension=None)
    assert np.array_equal(la, lb) and all(np.array_equal(a[k], b[k]) for k in a)
    inputs, targets = batches(SRC, TC, 16, 3, stream=5)
    seqs = SRC.sample(np.random.default_rng([3, 5]), TC.steps * TC.batch, 16).reshape(TC.steps, TC.batch, 16)
    assert np.array_equal(targets, seqs) and np.array_equal(inputs[:, :, 1:], seqs[:, :, :-1])
    assert np.all(inputs[:, :, 0] == SRC.vocab)


def test_a_pi_fine_tune_at_4l_moves_the_weights_and_differs_from_plain_rope():
    start, _ = train("rope", SRC, CFG, TC, train_len=8, seed=1)
    tune = TrainConfig(steps=10, batch=4, lr=1e-3, warmup=0, final_lr_ratio=1.0)
    assert tune.lr_at(0) == 1e-3 and tune.lr_at(9) == 1e-3  # no warm-up: the constant rate from the first step
    pi, lpi = train("rope", SRC, CFG, tune, train_len=32, base_len=8, extension="pi", initial=start, seed=1, stream=5)
    plain, lplain = train("rope", SRC, CFG, tune, train_len=32, initial=start, seed=1, stream=5)
    assert all(p.shape == start[k].shape for k, p in pi.items())
    assert not np.array_equal(pi["wqkv0"], start["wqkv0"])  # the fine-tune trained
    assert not np.array_equal(lpi, lplain)  # PI's rotation at factor 4 is not plain RoPE's
    again, _ = train("rope", SRC, CFG, tune, train_len=32, base_len=8, extension="pi", initial=start, seed=1, stream=5)
    assert all(np.array_equal(pi[k], again[k]) for k in pi)
    _, lother = train("rope", SRC, CFG, tune, train_len=32, base_len=8, extension="pi", initial=start, seed=1, stream=6)
    assert not np.array_equal(lpi, lother)  # another stream, other batches
    with pytest.raises(ValueError, match="context extensions apply"):
        train("alibi", SRC, CFG, tune, train_len=32, base_len=8, extension="pi", seed=1)
    with pytest.raises(ValueError, match="warmup"):
        TrainConfig(warmup=-1)
