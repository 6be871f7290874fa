"""RoPE's test-time context extensions in the lab: dynamic NTK is dynamic NTK (Peng et al. 2023, sec. 3.3: the scale is
s = max(1, l'/L) at the current length l', position by position, as transformers computes it without a cache), and
YaRN and Llama 3 give the lab's head size the same frequencies."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from posenc.lab import model as M
from posenc.lab.evaluate import attention_layers, per_position_log_probs, position_losses
from posenc.lab.positions import ROPE_BASE, _rotary_maps, positions, rope_extension
from posenc.lab.task import MarkovSource
from posenc.registry import get_scheme
from posenc.schemes.scaling import rope_frequencies

CFG = M.ModelConfig(vocab=3, d_model=16, n_heads=2, n_layers=2, d_mlp=8)  # head_dim 8, as the lab's model
L = 4


def _params():
    p = M.init_params(CFG, "rope", L, 0)
    rng = np.random.default_rng(5)
    return {k: v + rng.normal(0, 0.3, size=v.shape) for k, v in p.items()}  # off the init, so positions matter


def _pos(n, extension):
    return positions("rope", n, d_model=CFG.d_model, n_heads=CFG.n_heads, train_len=L, extension=extension)


def test_dynamic_ntk_is_position_by_position_ntk():
    """Query t of the dynamic row = the last query of a pass over its t + 1 tokens with NTK at s = max(1, (t+1)/L)."""
    params, n = _params(), 4 * L
    inputs = np.random.default_rng(6).integers(0, CFG.vocab + 1, size=(3, n))
    got = per_position_log_probs(params, "rope", inputs, CFG, train_len=L, extension="dynamic")
    for t in range(n):
        # positions() gives static NTK the factor max(1, (t + 1) / L) at length t + 1: exactly Peng et al.'s s there
        want = M.log_probs(params, inputs[:, : t + 1], _pos(t + 1, "ntk"), CFG)[:, -1]
        np.testing.assert_allclose(got[:, t], want, rtol=0, atol=1e-12)
    # the old row: one pass at length n with HF's factor n / L, i.e. static NTK at s^2 - s + 1 (13 at 4L), differs
    s = n / L
    old = M.log_probs(params, inputs, _static_ntk(n, s * s - s + 1), CFG)
    assert np.max(np.abs(old[:, L:] - got[:, L:])) > 1e-3
    same_start = M.log_probs(params, inputs[:, :L], _pos(L, None), CFG)  # up to L the scale is 1: plain RoPE
    np.testing.assert_allclose(got[:, :L], same_start, rtol=0, atol=1e-12)


def _static_ntk(n, factor):
    pos = _pos(n, "ntk")
    key, params = rope_extension("ntk", factor, L)
    mq, mk = _rotary_maps(get_scheme(key), pos.at, CFG.head_dim, params, n)
    return replace(pos, mq=mq, mk=mk)


def test_dynamic_frequencies_at_the_current_length():
    """The dynamic record at length n has the frequencies of NTK at s = n / L, not s^2 - s + 1."""
    for n in (2 * L, 4 * L, 8 * L):
        s = n / L
        dyn = rope_frequencies(8, base=ROPE_BASE, scaling={"rope_type": "dynamic", "factor": rope_extension("dynamic", s, L)[1]["factor"],
                                                          "original_max_position_embeddings": L},
                               seq_len=n, max_position_embeddings=L)[0]
        ntk = rope_frequencies(8, base=ROPE_BASE, scaling={"rope_type": "ntk", "factor": s})[0]
        old = rope_frequencies(8, base=ROPE_BASE, scaling={"rope_type": "ntk", "factor": s * s - s + 1})[0]
        np.testing.assert_allclose(dyn, ntk, rtol=1e-12)
        assert not np.allclose(dyn, old, rtol=1e-3)


def test_dynamic_losses_and_no_single_attention_map():
    source = MarkovSource.random(CFG.vocab, 1, seed=0)
    seqs = source.sample(np.random.default_rng(0), 2, 2 * L)
    r = position_losses(_params(), "rope", source, CFG, seqs, train_len=L, extension="dynamic")
    assert r["gap"].shape == (2 * L,) and np.all(r["gap"] > -1e-12)
    with pytest.raises(ValueError, match="own length"):
        attention_layers(_params(), "rope", source, CFG, seqs, train_len=L, extension="dynamic")


def test_yarn_and_llama3_frequencies_identical_at_head_dim_8():
    """At the lab's head_dim 8 (base 1e4, L = 32) YaRN's and Llama 3's ramps put every pair in the same band, so their
    frequencies are identical and their rows differ only by YaRN's attention temperature (0.1 ln s + 1)."""
    from posenc.views.lab import yarn_llama3_identity

    ident = yarn_llama3_identity()
    assert ident["identical"] and ident["max_difference"] == 0.0
    assert ident["temperature"][4] == pytest.approx(0.1 * np.log(4) + 1)


def test_the_shipped_dynamic_row_is_the_position_by_position_computation():
    """The first L + 6 positions of the shipped dynamic row at 4L (seed 0) from the shipped weights, recomputed position by
    position (float32 weights: within 1e-4; the row written before 2026-12-05 differs there by far more)."""
    from posenc.lab.evaluate import eval_sequences
    from posenc.lab.experiment import LabConfig
    from posenc.lab.results import load_shipped

    shipped = load_shipped()
    res, cfg = shipped["results"], LabConfig.from_dict(shipped["results"]["config"])
    Ls, n = cfg.train_len, cfg.train_len + 6
    source = cfg.source()
    seqs = eval_sequences(source, cfg.n_eval, max(cfg.lengths))[:, :n]
    got = position_losses(shipped["weights"]["rope"], "rope", source, cfg.model(), seqs, train_len=Ls, extension="dynamic")["gap"]
    row = np.array(res["runs"]["rope"]["0"]["extensions"]["dynamic"][str(4 * Ls)]["gap_by_position"][:n])
    np.testing.assert_allclose(got, row, rtol=0, atol=1e-4)
    plain = np.array(res["runs"]["rope"]["0"]["gap_by_position"][:Ls])  # up to L the scale is 1: plain RoPE's curve
    np.testing.assert_allclose(row[:Ls], plain, rtol=0, atol=1e-9)


def test_dynamic_at_4L_is_the_prefix_of_dynamic_at_8L():
    """experiment evaluates dynamic NTK once at 8L and slices 4L: query t reads a pass over its own t + 1 tokens, so the
    first 4L positions of the 8L evaluation are the 4L evaluation bit for bit."""
    source = MarkovSource.random(CFG.vocab, 1, seed=0)
    seqs = source.sample(np.random.default_rng(1), 3, 8 * L)
    long = position_losses(_params(), "rope", source, CFG, seqs, train_len=L, extension="dynamic")
    short = position_losses(_params(), "rope", source, CFG, seqs[:, : 4 * L], train_len=L, extension="dynamic")
    for k in ("loss", "bayes", "gap"):
        assert np.array_equal(long[k][: 4 * L], short[k])


def test_the_extension_rows_name_their_papers_and_the_fine_tune_is_fixed():
    from posenc.lab.experiment import EXTENSION_ROWS, FINETUNE, FINETUNE_STEPS, FINETUNE_STREAM, FINETUNES
    from posenc.lab.positions import EXTENSIONS
    from posenc.lab.train import TrainConfig

    assert list(EXTENSION_ROWS) == [*EXTENSIONS, *FINETUNES] and FINETUNES == {"pi_ft": "pi", "ft": None}
    for row in ("pi", "pi_ft", "ft"):
        assert "Chen et al. 2023" in EXTENSION_ROWS[row] and "arXiv:2306.15595" in EXTENSION_ROWS[row]
    for row in ("ntk", "dynamic", "yarn"):
        assert "Peng et al. 2023, arXiv:2309.00071" in EXTENSION_ROWS[row]
    assert "bloc97" in EXTENSION_ROWS["ntk"] and "Llama 3.1" in EXTENSION_ROWS["llama3"]
    main = TrainConfig()
    assert FINETUNE_STEPS == 200 and FINETUNE.batch == main.batch == 32 and FINETUNE_STREAM == 5
    # a constant lr equal to the main run's final one: lr x final_lr_ratio = 1e-2 x 0.1
    assert FINETUNE.lr == pytest.approx(main.lr * main.final_lr_ratio) and FINETUNE.lr == 1e-3
    assert {FINETUNE.lr_at(s) for s in range(FINETUNE.steps)} == {FINETUNE.lr}


def test_the_fine_tune_rows_are_the_fine_tuned_models():
    """pi_ft = the trained model fine-tuned with PI (factor 4) at 4L on stream 5, evaluated with PI; ft = the same
    without PI; both differ from their test-time rows (the fine-tune moved the weights)."""
    from posenc.lab.evaluate import eval_sequences
    from posenc.lab.experiment import FINETUNE, LabConfig, run_job
    from posenc.lab.train import train

    cfg = LabConfig(schemes=("rope",), n_seeds=1, steps=25, train_len=8, n_eval=8, finetune_steps=25)
    job = run_job(cfg, "rope", 0)
    rows = job["run"]["extensions"]
    source, model = cfg.source(), cfg.model()
    seqs = eval_sequences(source, cfg.n_eval, 64)
    for row, ext in (("pi_ft", "pi"), ("ft", None)):
        tuned, _ = train("rope", source, model, replace(FINETUNE, steps=25), train_len=32, base_len=8, extension=ext,
                         initial=job["weights"], seed=0, stream=5)
        for n in (32, 64):
            want = position_losses(tuned, "rope", source, model, seqs[:, :n], train_len=8, extension=ext)["gap"]
            assert rows[row][str(n)]["gap"] == float(want.mean())
    assert rows["pi_ft"]["32"]["gap"] != rows["pi"]["32"]["gap"]
    assert rows["ft"]["32"]["gap"] != job["run"]["mean"]["32"]["gap"]
    assert len(job["run"]["finetune_loss"]["pi_ft"]) == 1  # 25 steps: one mean of 25
