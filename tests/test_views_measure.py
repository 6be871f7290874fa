"""The engineer's measurements (posenc.views.measure, posenc.analysis.extension) and precision, as plain functions.

Relations and literal values: PI divides every pair by s; plain RoPE against itself changes nothing;
YaRN's attention factor alone moves the D = 0 score by af^2 - 1; dynamic NTK's scale at s·L is
s^2 - s + 1; float16 / bfloat16 hold integers exactly to 2^11 / 2^8; transformers' float32 RoPE
(tests/data/hf_oracle.json, transformers 5.24) is matched by the float32 emulation.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import altair as alt
import numpy as np
import pytest

from posenc.analysis import extension as X
from posenc.analysis import precision as P
from posenc.charts import extension as charts
from posenc.io.examples import EXAMPLE_TEXTS
from posenc.registry import rope_for
from posenc.schemes.scaling import default_inv_freq, dynamic_scale
from posenc.views import measure as M
from posenc.views.precision import precision_view

ORACLE = json.loads((Path(__file__).parent / "data" / "hf_oracle.json").read_text())


def test_plain_rope_against_itself_is_zero_and_yarn_moves_d0_by_its_factor():
    th = default_inv_freq(64, 1e4)
    same = X.short_range_fidelity(th, th, window=16)
    assert same["max_all"] == 0.0
    inv, af = rope_for("rope_yarn", 64, base=1e4, factor=4.0, original_max_position_embeddings=2048)
    f = X.short_range_fidelity(th, inv, window=0, logit_scale=af**2, n_samples=64)
    q, k = X.random_qk(64, 64, 0)
    expect = np.abs(af**2 - 1) * np.abs(np.sum(q * k, axis=1)) / (np.linalg.norm(q, axis=1) * np.linalg.norm(k, axis=1))
    assert f["max"][0] == pytest.approx(expect.max(), rel=1e-12)


def test_offset_scores_match_apply_rope():
    from posenc.schemes.rotary import apply_rope
    inv = default_inv_freq(16, 1e4)
    q, k = X.random_qk(16, 3, 1)
    D = np.array([0.0, 5.0, 300.0])
    s = X.offset_scores(inv, q, k, D)
    for j, dd in enumerate(D):
        Rq = apply_rope(q[:, None, :], [0.0], inv)[:, 0]
        Rk = apply_rope(k[:, None, :], [dd], inv)[:, 0]
        np.testing.assert_allclose(s[:, j], np.sum(Rq * Rk, axis=1), rtol=1e-10, atol=1e-10)


def test_pair_bands():
    th = default_inv_freq(128, 5e5)
    b = X.pair_bands(th, th / 4, 8192)
    np.testing.assert_allclose(b["ratio"], 0.25)
    assert b["fast"].sum() == int(np.sum(2 * np.pi / th <= 8192)) and b["kept_max_change"] == pytest.approx(0.75)


def test_entropy_is_ln_n_for_independent_keys_at_zero_logit_scale_limit():
    # rho = 0 and a tiny logit scale: every logit ~ 0, so the attention is uniform: entropy = ln n
    r = X.long_range(default_inv_freq(32, 1e4), target=4096, logit_scale=1e-6, rho=0.0, n_samples=4)
    np.testing.assert_allclose(r["entropy"][50], r["uniform"], atol=1e-3)


def test_sampled_entropy_agrees_with_every_key(monkeypatch):
    inv = default_inv_freq(32, 1e4)
    sampled = X.long_range(inv, target=20000, rho=0.9, n_samples=24)
    monkeypatch.setattr(X, "BLOCK_KEYS", 10**9)
    full = X.long_range(inv, target=20000, rho=0.9, n_samples=24)
    assert np.max(np.abs(sampled["entropy"][50] - full["entropy"][50])) < 0.2
    assert not np.array_equal(sampled["entropy"][50], full["entropy"][50])  # the draws' cache keys on BLOCK_KEYS


def test_long_range_draws_are_shared_by_methods_and_change_nothing():
    """The random draws are cached by (head size, target, samples, seed, ...): a second method reuses them, and a result
    is the same bit for bit with the cache cleared (the draws are those of one generator, in one order)."""
    inv = default_inv_freq(64, 1e4)
    X._draws.cache_clear()
    X._KEPT.clear()
    first = X.long_range(inv, target=8192, rho=0.7, n_samples=32, seed=5)
    other = X.long_range(inv / 4, target=8192, logit_scale=1.2, rho=0.7, n_samples=32, seed=5)  # another method: a hit
    assert X._draws.cache_info().hits == 1
    X._draws.cache_clear()
    X._KEPT.clear()
    again = X.long_range(inv, target=8192, rho=0.7, n_samples=32, seed=5)
    for p in (5, 50, 95):
        assert np.array_equal(first["entropy"][p], again["entropy"][p]) and np.array_equal(first["logit"][p], again["logit"][p])
    assert not np.array_equal(first["entropy"][50], other["entropy"][50])
    q = X._draws(64, 8192, 32, 160, 5, X.BLOCK_KEYS, X.ENTROPY_SAMPLES, X.ENTROPY_MAX_LEN)[0]
    with pytest.raises(ValueError):
        q[0, 0] = 1.0  # read-only: a caller cannot change what the next method draws


def test_long_range_results_are_kept_per_method_and_each_call_gets_its_own_arrays(monkeypatch):
    """A method computed before (same frequencies, target, scale, rho, samples, seed) is not computed again: a page that
    adds a pasted config's curve recomputes only that one.  The kept result equals a fresh computation bit for bit."""
    inv = default_inv_freq(32, 1e4)
    X._KEPT.clear()
    first = X.long_range(inv, target=4096, rho=0.5, n_samples=16, seed=2)
    calls = []
    real = X._long_range
    monkeypatch.setattr(X, "_long_range", lambda *a: calls.append(a[1]) or real(*a))
    again = X.long_range(inv.copy(), target=4096, rho=0.5, n_samples=16, seed=2)  # equal frequencies, another array
    assert not calls
    for part in ("logit", "entropy"):
        for p in (5, 50, 95):
            assert np.array_equal(first[part][p], again[part][p])
    first["logit"][50][:] = 0.0  # a caller that writes into its arrays changes nothing kept
    assert np.array_equal(X.long_range(inv, target=4096, rho=0.5, n_samples=16, seed=2)["logit"][50], again["logit"][50])
    X.long_range(inv, target=4096, rho=0.5, n_samples=16, seed=2, logit_scale=1.1)  # another scale: computed
    X.long_range(inv * (1 + 1e-15), target=4096, rho=0.5, n_samples=16, seed=2)  # other frequencies, by one ulp: computed
    assert calls == [4096, 4096]
    X._KEPT.clear()
    fresh = X.long_range(inv, target=4096, rho=0.5, n_samples=16, seed=2)
    assert all(np.array_equal(fresh["entropy"][p], again["entropy"][p]) for p in (5, 50, 95))
    with pytest.raises(ValueError, match="stopped after"):
        X.long_range(inv, target=100_000, rho=0.5, n_samples=16, seed=3, deadline=0.0)
    assert len(X._KEPT) == 1  # a run that ran out of time keeps nothing
    monkeypatch.setattr(X, "LONG_RANGE_KEPT", 2)
    for s in (4, 5, 6):
        X.long_range(inv, target=64, n_samples=4, seed=s)
    assert len(X._KEPT) == 2


def test_dynamic_effective_scale():
    assert dynamic_scale(8.0, 8 * 8192, 8192) == 57.0 and dynamic_scale(8.0, 4096, 8192) == 1.0


def test_views_carry_settings_and_model():
    b = M.bands_view(128, 5e5, 8192, 4.0, EXAMPLE_TEXTS["DeepSeek-V3"])
    assert b["labels"][0] == "RoPE · d 128, base 500000, L 8,192" and b["labels"][-1].startswith("model: deepseek-ai/DeepSeek-V3 · d 64")
    assert b["target"] == 32768 and list(b["dynamic"]["effective_scale"])[-1] == dynamic_scale(4.0, 163840, 8192)
    # the charts draw the model by its own layers, found by the prefix of its name (charts.extension.MODEL_PREFIX)
    assert charts.methods_only(b["names"]) == b["names"][:-1] and b["names"][-1].startswith(charts.MODEL_PREFIX)
    model_rows = b["frame"][b["frame"]["name"].str.startswith(charts.MODEL_PREFIX)]
    assert len(model_rows) == 32 and set(model_rows["name"]) == {b["names"][-1]}  # DeepSeek-V3 rotates 64 dims: 32 pairs
    f = M.fidelity_view(64, 1e4, 2048, 4.0, window=8, n_samples=16)
    assert set(f["table"]["method"]) == set(f["labels"]) and len(f["frame"]) == len(f["labels"]) * 9
    lr = M.long_range_view(64, 1e4, 2048, 4.0)
    table = M.summary_table(f, lr, M.bands_view(64, 1e4, 2048, 4.0))
    assert set(table["Extrapolation lab"]) == {"/lab"} and table.iloc[0]["short-range max |Δ|"] == 0.0


def test_precision_facts_and_the_transformers_float32_path():
    inv = default_inv_freq(64, 1e4)
    assert P.first_identical_position(inv, "float16") == 2048 and P.first_identical_position(inv, "bfloat16") == 256
    assert P.first_identical_position(inv, "float32") is None  # 2^24 > 10^6
    case = next(c for c in ORACLE["apply_rope"]["cases"] if c["name"] == "llama_default_d8")
    c, s = P.rope_cos_sin(np.asarray(ORACLE["apply_rope"]["positions"], dtype=np.float64), np.asarray(case["inv_freq_used"]), "float32")
    np.testing.assert_allclose(c, np.asarray(case["cos"])[:, :4], atol=1e-7)  # HF LlamaRotaryEmbedding.forward, float32
    np.testing.assert_allclose(s, np.asarray(case["sin"])[:, :4], atol=1e-7)
    v = precision_view(32, 1e4)
    assert list(v["table"]["mode"]) == list(P.MODES) and v["at_128k"]["float32"] < v["at_128k"]["bfloat16"]


def test_charts_build():
    with alt.data_transformers.disable_max_rows():
        b = M.bands_view(64, 1e4, 2048, 4.0)
        d = charts.ratio_chart(b["frame"], b["labels"], trained=2048).to_dict()
        assert "legend" not in d["layer"][0]["encoding"]["color"] or d["layer"][0]["encoding"]["color"]["legend"] is None
        names = d["layer"][-1]["layer"][-1]  # the last layer names each method at its line's end, instead of a legend
        assert names["mark"]["type"] == "text" and names["encoding"]["text"]["field"] == "name"
        v = precision_view(16, 1e4)
        charts.precision_chart(v["cos"], x="position", x_title="p", y_title="e", tol=1e-3).to_dict()
        assert math.isfinite(v["cos"]["error"].max())


@pytest.mark.parametrize("mode", P.MODES)
def test_precision_scans_find_the_first_position_a_brute_force_scan_finds(mode):
    """first_error_above (doubling blocks) and first_identical_position (its one-pair scan remembered by the pair's
    frequency) against every position checked one by one, for two head sizes that share the fastest pair."""
    limit = 70_000  # past float16's largest finite number (65,504): that type's positions run out inside it
    for inv in (default_inv_freq(8, 1e4), default_inv_freq(16, 5e5), default_inv_freq(8, 1e4) * 0.37):
        pos = np.arange(limit + 2, dtype=np.float64)
        c, s = P.rope_cos_sin(pos, inv, mode)
        c0, s0 = np.cos(np.multiply.outer(pos, inv)), np.sin(np.multiply.outer(pos, inv))
        err = np.max(np.where(np.isfinite(c), np.maximum(np.abs(c - c0), np.abs(s - s0)), 2.0), axis=1)[: limit + 1]
        for tol in (1e-3, 1e-6):
            want = next((int(p) for p in np.flatnonzero(err > tol)), None)
            assert P.first_error_above(inv, mode, tol=tol, limit=limit) == want
        same = np.all(c[1:] == c[:-1], axis=1) & np.all(s[1:] == s[:-1], axis=1) | ~np.all(np.isfinite(c[1:]), axis=1)
        want = next((int(p) for p in np.flatnonzero(same[: limit + 1])), None)
        assert P.first_identical_position(inv, mode, limit=limit) == want


def test_the_float32_scan_skips_only_pairs_that_cannot_exceed_tol():
    """first_error_above in float32 computes only the pairs whose rounding bound allows an error above tol before the
    block's end.  The bound's two parts, measured: numpy's float32 cos and sin stay within _COS32_SLACK of the exact
    value at their (float32) argument, and the scan with pruning finds what a scan of every pair at every position
    finds, at the page's default head (d = 128, base 500,000: p = 20,121) and others."""
    rng = np.random.default_rng(0)
    for hi in (1.0, 1e3, 1e6, 1e12):  # RoPE's angles reach 10^6 rad (p ≤ 10^6, θ ≤ 1); inv_freq is allowed up to 10^6
        a = rng.uniform(-hi, hi, 200_000).astype(np.float32)
        worst = max(np.abs(np.cos(a).astype(np.float64) - np.cos(a.astype(np.float64))).max(),
                    np.abs(np.sin(a).astype(np.float64) - np.sin(a.astype(np.float64))).max())
        assert worst <= P._COS32_SLACK / 4, (hi, worst)
    limit = 40_000
    pos = np.arange(limit + 1, dtype=np.float64)
    for inv in (default_inv_freq(128, 5e5), default_inv_freq(64, 1e4), default_inv_freq(96, 1e6) * -3.0):
        c, s = P.rope_cos_sin(pos, inv, "float32")
        c0, s0 = np.cos(np.multiply.outer(pos, inv)), np.sin(np.multiply.outer(pos, inv))
        err = np.maximum(np.abs(c - c0), np.abs(s - s0))  # (positions, pairs)
        for tol in (1e-3, 1e-4, 3e-6):
            want = next((int(p) for p in np.flatnonzero(err.max(axis=1) > tol)), None)
            assert P.first_error_above(inv, "float32", tol=tol, limit=limit) == want
            kept = P._pairs_that_may_exceed(inv, "float32", tol, limit + 1)
            assert not (err[:, ~kept] > tol).any()  # a skipped pair is within tol everywhere below the end
    assert P._pairs_that_may_exceed(inv, "float16", 1e-3, 10).all() and P._pairs_that_may_exceed(inv, "float32", 1e-7, 10).all()


def test_a_method_the_core_rejects_is_left_out_with_its_message(monkeypatch):
    # e.g. an NTK-style base the core refuses: that method alone is dropped, with the core's message
    from posenc.views import extension

    real = extension.rope_for

    def fake(key, *args, **kwargs):
        if key == "rope_dynamic":
            raise ValueError("dynamic NTK at seq_len 65536 gives a scaled base of inf; reduce the factor")
        return real(key, *args, **kwargs)

    monkeypatch.setattr(extension, "rope_for", fake)
    e = M.entries(128, 500000.0, 8192, 8.0, EXAMPLE_TEXTS["DeepSeek-V3"])
    assert e["skipped"] == {"dynamic NTK": "dynamic NTK is left out at these settings: dynamic NTK at seq_len 65536 "
                                          "gives a scaled base of inf; reduce the factor"}
    names = [x["name"] for x in e["methods"]]
    assert "dynamic NTK" not in names and names[-1].startswith("model:") and len(names) == 7  # RoPE, 5 methods, the model


def test_every_extension_the_registry_names_has_its_own_colour_and_fine_tuning():
    """The Context extension page draws every registry scheme whose entry names it; each needs its own colour (by key,
    charts.base.METHOD_KEY_COLORS) and its paper's fine-tuning (Scheme.fine_tuning) for the summary table."""
    from posenc.charts.base import METHOD_KEY_COLORS, NAME_COLORS

    keys = [k for k, _ in M.CLASSICS]
    assert keys and set(keys) | {"rope"} <= set(METHOD_KEY_COLORS)
    assert len(set(METHOD_KEY_COLORS.values())) == len(METHOD_KEY_COLORS) == len(NAME_COLORS)
    assert all(M.FINE_TUNING[name] for _, name in M.CLASSICS)


def test_the_methods_are_compared_at_the_model_only_with_a_trained_length():
    """methods_at names what entries computes: the model's settings need a model that states its trained length."""
    from posenc.io.modelconfig import EXAMPLE_CONFIGS
    from posenc.views.measure import entries, methods_at

    llama, bare = EXAMPLE_CONFIGS["Llama 3.1 8B"], '{"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000.0}'
    assert methods_at(llama, "model") == "model" and methods_at(llama, "controls") == "controls"
    assert methods_at("", "model") == methods_at(bare, "model") == "controls"
    for config in ("", bare):  # the model's settings asked for without one: exactly the controls' measurements
        asked, controls = entries(128, 500000.0, 8192, 4.0, config, "model"), entries(128, 500000.0, 8192, 4.0, config, "controls")
        assert [m["label"] for m in asked["methods"]] == [m["label"] for m in controls["methods"]]
        assert all(np.array_equal(a["inv"], b["inv"]) for a, b in zip(asked["methods"], controls["methods"]))
    assert entries(128, 500000.0, 8192, 4.0, llama, "model")["trained"] == 8192


def test_the_logit_scale_cells_hold_yarns_square_of_its_attention_factor():
    """The summary's cells the exercise hides (YaRN's logit scale): its row, and HF's factor 0.1·ln s + 1 squared there."""
    f = M.fidelity_view(64, 1e4, 2048, 4.0, window=8, n_samples=16)
    lr = M.long_range_view(64, 1e4, 2048, 4.0)
    table = M.summary_table(f, lr, M.bands_view(64, 1e4, 2048, 4.0))
    (cell,) = M.logit_scale_cells(lr, "YaRN")
    assert table.iloc[cell[0]]["method"].startswith("YaRN ·") and cell[1] == "logit scale"
    assert table.iloc[cell[0]][cell[1]] == pytest.approx((0.1 * math.log(4.0) + 1) ** 2, rel=1e-12)
    assert M.logit_scale_cells(lr, "no such method") == []


def test_the_extension_wrap_up_names_the_methods_that_scale_every_score():
    """Its finding on logit scales: YaRN's (0.1·ln s + 1)² and LongRoPE's 1 + ln s / ln L (Phi-3's factor sqrt(1 + ln s /
    ln L), squared), tied to the exercise that asks for YaRN's factor; at s = 1 no method scales, and the claim is plain."""
    from posenc.views.takeaways import YARN_QUIZ, extension_takeaway

    text, quiz = extension_takeaway(M.bands_view(128, 5e5, 8192, 4.0), 4.0, 8192)["shows"][1]
    yarn, longrope = (0.1 * math.log(4) + 1) ** 2, 1 + math.log(4) / math.log(8192)
    assert quiz == YARN_QUIZ and f"YaRN and LongRoPE (Phi-3 factors) also multiply every score by {yarn:.4g} and {longrope:.4g}" in text
    assert extension_takeaway(M.bands_view(128, 5e5, 8192, 1.0), 1.0, 8192)["shows"][1] == "No method scales the scores at s = 1: only θ changes."


def test_llama3_reads_high_in_fast_pairs_changed_by_though_it_keeps_every_pair_faster_than_a_quarter_of_l():
    """Context extension's table caption: "fast pairs changed by" is the largest |θ′/θ − 1| over every pair that turns
    within L, so Llama 3 (factors 1 and 4) reads high from the pairs between L/4 and L while those under L/4 stay put."""
    L = 2048
    b = M.bands_view(64, 1e4, L, 4.0)
    rows = b["frame"][b["frame"]["name"] == "Llama 3"]
    change = (rows["ratio"] - 1).abs()
    fast = rows["band"] == "turns within L"
    assert (fast == (rows["wavelength"] <= L)).all()
    assert change[rows["wavelength"] < L / 4].max() == 0.0
    kept = float(b["summary"].set_index("method")["kept_max_change"][b["labels"][b["names"].index("Llama 3")]])
    assert kept == change[fast].max() > 0.5 and change[fast & (rows["wavelength"] >= L / 4)].max() == kept
