"""The shipped results: reproduced by re-running one scheme and seed, and every model learned the task."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from posenc.lab.experiment import LONGER, LabConfig, longer_config, run_experiment
from posenc.lab.positions import DEFAULT_SCHEMES, LAB
from posenc.lab.results import (
    BOOTSTRAP_RESAMPLES,
    DEGRADES,
    HOLDS,
    band_gaps,
    band_label,
    bands,
    beyond_fraction,
    bootstrap_interval,
    compare_rows,
    extension_fraction,
    extrapolation_ratios,
    learned_check,
    load_shipped,
    ratio,
    task_files,
    task_of,
    task_verdicts,
    uniform_band_gaps,
    verdict_rows,
    verdict_word,
)

SHIPPED = load_shipped()["results"]
LONGER_RUN = load_shipped()["longer"]


def _numbers(run: dict) -> dict:
    """Every number of one (scheme, seed) run, flattened: {path: float}."""
    out = {f"train_loss/{i}": v for i, v in enumerate(run["train_loss"])}
    for n, m in run["mean"].items():
        if m is not None:
            out.update({f"mean/{n}/{k}": v for k, v in m.items()})
    out.update({f"gap/{i}": v for i, v in enumerate(run["gap_by_position"])})
    for ext, by_n in run["extensions"].items():
        for n, m in by_n.items():
            out.update({f"{ext}/{n}/{k}": v for k, v in m.items() if k != "gap_by_position"})
    return out


def test_shipped_file_is_the_default_configuration():
    from posenc.lab.__main__ import ship_configs

    cfg = LabConfig.from_dict(SHIPPED["config"])
    assert cfg == ship_configs()["lab_results.json"]  # what `python -m posenc.lab --ship` writes
    assert list(SHIPPED["runs"]) == list(DEFAULT_SCHEMES)
    assert all(set(r) == {str(i) for i in range(cfg.n_seeds)} for r in SHIPPED["runs"].values())


def test_reproduction_one_scheme_one_seed_matches_to_1e6():
    cfg = LabConfig(schemes=("t5",), n_seeds=1)
    res, _ = run_experiment(cfg)
    new, old = _numbers(res["runs"]["t5"]["0"]), _numbers(SHIPPED["runs"]["t5"]["0"])
    assert new.keys() == old.keys() and len(new) > 100
    worst = max(abs(new[k] - old[k]) for k in new)
    assert worst <= 1e-6, worst
    assert res["floor"] == SHIPPED["floor"]


def test_the_models_that_did_not_learn_are_exactly_the_ones_trained_longer():
    """Gap at L within 10 % of the gap between a uniform guess and the floor, per scheme and seed; the follow-up run
    trains exactly the schemes that missed it at some seed (docs/lab.md names them and says why; at the run of
    2026-12-04: the raw index at every seed, RoPE + randomized at seed 1)."""
    rows = learned_check(SHIPPED)
    assert len(rows) == len(SHIPPED["runs"]) * SHIPPED["config"]["n_seeds"]
    failed = {r["scheme"] for r in rows if not r["learned"]}
    assert failed == (set(LONGER_RUN["runs"]) if LONGER_RUN is not None else set())


def test_extrapolation_ratio_for_the_compare_table():
    ratios = extrapolation_ratios()
    assert set(ratios) == set(SHIPPED["runs"])
    learned = ratios["learned"]
    assert math.isnan(learned["ratio"]) and "no row for position 32" in learned["reason"]
    for s in set(SHIPPED["runs"]) - {"learned"}:
        r = ratios[s]
        assert r["reason"] is None and len(r["per_seed"]) == SHIPPED["config"]["n_seeds"]
        assert r["min"] <= r["ratio"] <= r["max"]
        L = SHIPPED["config"]["train_len"]
        first = SHIPPED["runs"][s]["0"]["mean"]
        assert r["per_seed"][0] == pytest.approx(first[str(4 * L)]["gap"] / first[str(L)]["gap"], rel=1e-12)


def test_gap_is_loss_minus_bayes_and_nonnegative():
    for runs in SHIPPED["runs"].values():
        for run in runs.values():
            for m in run["mean"].values():
                if m is not None:
                    assert m["gap"] == pytest.approx(m["loss"] - m["bayes"], abs=1e-12) and m["gap"] > 0
    # the Bayes loss on the evaluation contexts is close to the exact floor past the first k positions
    k = SHIPPED["config"]["order"]
    assert np.mean(SHIPPED["bayes_by_position"][k:]) == pytest.approx(SHIPPED["floor"], abs=0.02)


def test_the_follow_up_trains_exactly_the_unlearned_schemes_longer_with_every_other_setting_equal():
    cfg = LabConfig.from_dict(LONGER_RUN["config"])
    shipped = LabConfig.from_dict(SHIPPED["config"])
    assert cfg == longer_config(shipped, SHIPPED) == replace(shipped, schemes=("raw_index", "rope_randomized"),
                                                             steps=LONGER * 1000)
    assert LONGER_RUN["floor"] == SHIPPED["floor"] and LONGER_RUN["lengths"] == SHIPPED["lengths"]
    assert all(set(r) == {str(s) for s in range(shipped.n_seeds)} for r in LONGER_RUN["runs"].values())


def test_trained_longer_every_model_learns_the_task_but_the_raw_index_at_seed_6():
    """Measured, not assumed (10 seeds, 2026-12-05): if a regenerated follow-up moves a seed across the 10 % line, this
    fails.  The raw index at seed 6 stays over it at 4,000 steps (gap 0.057 nats at L)."""
    rows = learned_check(LONGER_RUN)
    n = SHIPPED["config"]["n_seeds"]
    assert [r["scheme"] for r in rows] == ["raw_index"] * n + ["rope_randomized"] * n
    assert [(r["scheme"], r["seed"]) for r in rows if not r["learned"]] == [("raw_index", 6)], rows


def test_longer_config_is_none_when_every_model_learned():
    failed = {r["scheme"] for r in learned_check(SHIPPED) if not r["learned"]}
    learned_only = {**SHIPPED, "runs": {s: r for s, r in SHIPPED["runs"].items() if s not in failed}}
    cfg = replace(LabConfig(), schemes=tuple(s for s in DEFAULT_SCHEMES if s not in failed))
    assert longer_config(cfg, learned_only) is None


def test_the_compare_row_of_an_unlearned_scheme_comes_from_the_follow_up():
    rows = compare_rows()
    raw = rows["raw_index"]  # not learned at 1,000 steps, and at 4,000 still not at seed 6: no verdict, and why
    assert raw["extrapolates"] is None and "did not learn the task" in raw["reason"] and raw["measured_as"] == "Raw index"
    assert rows["rope"]["measured_as"] == "RoPE"
    randomized = rows["rope_randomized"]  # the registry's entry, measured as RoPE trained with randomized positions
    assert randomized["ratio"] == pytest.approx(ratio(LONGER_RUN, "rope_randomized")["ratio"], rel=1e-12)
    assert "RoPE + randomized trained 4,000 steps" in randomized["measured_as"]
    # every scheme the default run trains has its row, under the registry key it stands for
    assert {LAB[s].key for s in DEFAULT_SCHEMES} <= set(rows) and {"kerple", "fire", "p_rope"} <= set(rows)
    assert rows["kerple"]["extrapolates"] is True and rows["fire"]["extrapolates"] is False
    # without the follow-up the row says why it has no verdict
    bare = compare_rows(SHIPPED)["raw_index"]
    assert bare["extrapolates"] is None and "did not learn the task" in bare["reason"]


def test_the_provenance_file_carries_the_follow_up(tmp_path):
    from posenc.lab.__main__ import _table, provenance
    from posenc.lab.results import DATA, LONGER_FILE, save

    shipped = (DATA / "README.md").read_text(encoding="utf-8")
    assert _table(SHIPPED) in shipped and _table(LONGER_RUN) in shipped and "Learned the task there: 19 of 20 models" in shipped
    text = provenance(SHIPPED, "python -m posenc.lab", 1.0, None)
    assert "there is no follow-up run" in text
    # save writes the follow-up file, and removes a stale one when there is none
    save(SHIPPED, {}, tmp_path, longer=LONGER_RUN)
    assert (tmp_path / LONGER_FILE.name).exists()
    save(SHIPPED, {}, tmp_path, longer=None)
    assert not (tmp_path / LONGER_FILE.name).exists() and (tmp_path / "lab_results.json").exists()


@pytest.mark.parametrize("scheme", list(SHIPPED["runs"]))
def test_shipped_weights_have_the_names_and_shapes_the_model_reads(scheme):
    """The attention views run ``forward`` on the shipped weights: each scheme's file entry must hold exactly the
    parameters ``init_params`` makes (a renamed table in the engine would otherwise fail only on the page)."""
    from posenc.lab.model import init_params

    cfg = LabConfig.from_dict(SHIPPED["config"])
    want = {k: v.shape for k, v in init_params(cfg.model(), scheme, cfg.train_len, 0).items()}
    got = {k: v.shape for k, v in load_shipped()["weights"][scheme].items()}
    assert got == want


# ----------------------------------------------------------------------------- issue 37: bands, bootstrap, verdict
def _hand(L: int = 2, curves: dict | None = None, bayes=None, uniform: float = 1.0, ext: dict | None = None) -> dict:
    """A hand-made results dict: L, per scheme a list of per-seed gap_by_position curves, the Bayes loss per position."""
    curves = curves or {"alibi": [[0.0] * 8, [0.0] * 8]}
    bayes = [0.5] * 8 if bayes is None else bayes
    runs = {}
    for s, per in curves.items():
        runs[s] = {str(i): {"gap_by_position": c, "extensions": {},
                            "mean": {str(n): {"gap": float(np.mean(c[:n]))} if len(c) >= n else None for n in (L, 2 * L, 4 * L)}}
                   for i, c in enumerate(per)}
    if ext:
        for i, r in enumerate(runs["rope"].values()):
            r["extensions"] = {e: {str(n): {"gap": g[i]} for n, g in by_n.items()} for e, by_n in ext.items()}
    return {"config": {"train_len": L, "vocab": 2}, "uniform": uniform, "floor": 0.5, "bayes_by_position": bayes, "runs": runs,
            "undefined": {"learned": "no row past L"} if "learned" in curves else {}}


def test_bootstrap_interval_by_hand():
    assert bootstrap_interval([0.3]) == (0.3, 0.3)  # one seed: every resample is that seed
    assert all(math.isnan(x) for x in bootstrap_interval([None, math.nan]))
    lo, hi = bootstrap_interval([0.0, 1.0])  # means of 2 draws: 0, 0.5, 1 with chances 1/4, 1/2, 1/4
    assert (lo, hi) == (0.0, 1.0)
    lo, hi = bootstrap_interval([0.0, 1.0], level=0.4)  # 30th and 70th percentiles both fall on 0.5
    assert (lo, hi) == (0.5, 0.5)
    vals = [0.1, 0.4, 0.2, 0.9, 0.3]
    lo, hi = bootstrap_interval(vals)
    assert min(vals) < lo < np.mean(vals) < hi < max(vals)
    assert bootstrap_interval(vals) == (lo, hi)  # a fixed generator
    # its draws are kept per (seed, resamples, size): the interval is the one drawn afresh from default_rng(0)
    means = np.asarray(vals)[np.random.default_rng(0).integers(0, 5, size=(BOOTSTRAP_RESAMPLES, 5))].mean(axis=1)
    assert (lo, hi) == tuple(np.quantile(means, [0.025, 0.975]))
    assert bootstrap_interval(vals, seed=np.random.default_rng(0)) == (lo, hi)  # a Generator as the seed: drawn from it
    assert BOOTSTRAP_RESAMPLES == 10_000
    for bad in ({"resamples": 0}, {"level": 1.0}, {"resamples": 2.5}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            bootstrap_interval(vals, **bad)


def test_bands_and_labels():
    assert bands(32, 256) == [(0, 32), (32, 64), (64, 128), (128, 256)]
    assert bands(32, 32) == [(0, 32)] and bands(32, 100) == [(0, 32), (32, 64)]
    assert [band_label(b, 32) for b in bands(32, 256)] == ["[0, L)", "[L, 2L)", "[2L, 4L)", "[4L, 8L)"]
    with pytest.raises(ValueError, match="length"):
        bands(32, 16)
    with pytest.raises(ValueError, match="train_len"):
        bands(0, 16)


def test_band_gaps_and_the_uniform_guess_by_hand():
    res = _hand(curves={"alibi": [[0, 2, 1, 1, 1, 3, 2, 2], [0, 0, 0, 0, 0, 0, 0, 0]]},
                bayes=[1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25], uniform=1.0)
    assert band_gaps(res, "alibi") == {(0, 2): [1.0, 0.0], (2, 4): [1.0, 0.0], (4, 8): [2.0, 0.0]}
    assert uniform_band_gaps(res) == {(0, 2): 0.25, (2, 4): 0.5, (4, 8): 0.75}
    with pytest.raises(ValueError, match="scheme"):
        band_gaps(res, "rope")


def test_beyond_fraction_is_the_mean_gap_past_l_over_the_uniform_guess():
    # positions [L, 4L) = 2..7: uniform gap 1 - 0.5 = 0.5 everywhere; seed 0's gap there 0.05, seed 1's 1.0
    res = _hand(curves={"alibi": [[9, 9] + [0.05] * 6, [9, 9] + [1.0] * 6], "learned": [[0.0, 0.0], [0.0, 0.0]]})
    f = beyond_fraction(res, "alibi")
    assert f["per_seed"] == pytest.approx([0.1, 2.0]) and f["fraction"] == pytest.approx(1.05)
    assert f["span"] == "[L, 4L)" and f["verdict"] == "worse than a uniform guess" and f["seeds"] == 2
    assert f["lo"] == pytest.approx(0.1) and f["hi"] == pytest.approx(2.0)
    t = beyond_fraction(res, "learned")
    assert math.isnan(t["fraction"]) and t["verdict"] is None and t["reason"] == "no row past L"


def test_verdict_words_at_the_thresholds():
    assert (HOLDS, DEGRADES) == (0.10, 1.0)
    assert [verdict_word(x) for x in (0.0, 0.10, 0.1000001, 1.0, 1.01)] == [
        "holds", "holds", "degrades", "degrades", "worse than a uniform guess"]
    assert verdict_word(math.nan) is None and verdict_word(None) is None


def test_extension_fraction_uses_the_whole_longest_sequence():
    res = _hand(curves={"rope": [[0.0] * 8, [0.0] * 8]}, ext={"pi": {4: [0.2, 0.4], 8: [0.25, 0.75]}})
    f = extension_fraction(res, "pi")  # uniform gap over [0, 4L) = 0.5
    assert f["per_seed"] == pytest.approx([0.5, 1.5]) and f["span"] == "[0, 4L) (whole sequence)"
    with pytest.raises(ValueError, match="extension"):
        extension_fraction(res, "yarn")


def test_verdict_rows_map_registry_keys_and_tasks():
    res = _hand(curves={"alibi": [[0, 0] + [0.01] * 6] * 2, "rope": [[0, 0] + [0.6] * 6] * 2, "learned": [[0, 0]] * 2},
                ext={"yarn": {8: [0.1, 0.1]}})
    res["config"]["task"] = "induction"
    rows = verdict_rows(res)
    assert rows["alibi"]["verdict"] == "holds" and rows["alibi"]["task"] == "induction"
    assert rows["rope"]["verdict"] == "worse than a uniform guess"
    assert rows["rope_yarn"]["fraction"] == pytest.approx(0.2) and rows["rope_yarn"]["measured_as"].endswith("at test time")
    assert rows["learned_minilm"]["reason"] == rows["learned_random"]["reason"] == "no row past L"
    assert task_of(res) == "induction" and task_of({"config": {}}) == "markov"
    assert list(task_verdicts({"induction": res})) == ["induction"]


def test_verdict_rows_take_t5_scaled_to_l_and_say_the_default_beside_it():
    # two lab schemes of the registry's T5: HF's buckets ("t5") and T5's relation to L ("t5_scaled"); either order
    for order in (("t5", "t5_scaled"), ("t5_scaled", "t5")):
        curves = {"t5": [[0, 0] + [0.5] * 6] * 2, "t5_scaled": [[0, 0] + [0.02] * 6] * 2}
        res = _hand(curves={k: curves[k] for k in order})
        row = verdict_rows(res)["t5"]
        assert row["fraction"] == pytest.approx(0.04) and row["verdict"] == "holds"  # the scaled one's 0.02 / 0.5
        assert row["measured_as"] == "T5 buckets scaled to L (as T5 buckets: 100% of a uniform guess's gap)"  # not "buckets's"


def test_task_files_skip_the_follow_up_and_the_order_sweep(tmp_path):
    import json
    for name, cfg in (("lab_results.json", {}), ("lab_induction.json", {"task": "induction"}), ("lab_longer.json", {}),
                      ("lab_induction_longer.json", {"task": "induction"}), ("lab_orders.json", {"task": "markov"})):
        (tmp_path / name).write_text(json.dumps({"config": cfg}))
    assert task_files(tmp_path) == {"markov": tmp_path / "lab_results.json", "induction": tmp_path / "lab_induction.json"}


def test_shipped_verdicts_follow_the_rule():
    rows = task_verdicts()["markov"]
    for key, r in rows.items():
        assert (r["verdict"] is None) == (r["reason"] is not None), key
        if r["verdict"] is not None:
            assert r["verdict"] == verdict_word(r["fraction"]) and r["lo"] <= r["fraction"] <= r["hi"]
    # the complaint: T5 ends far below NoPE beyond L, whatever the old ratio said
    assert rows["t5"]["fraction"] < rows["nope"]["fraction"]


def test_shipped_verdicts_are_computed_once_per_set_of_files_and_each_caller_gets_a_copy(monkeypatch):
    import posenc.lab.results as results

    fresh = {t: verdict_rows(r, longer=results.load_task(t)["longer"]) for t, r in results.load_tasks().items()}
    first = task_verdicts()
    assert first == fresh  # the kept verdicts are the ones computed from the files
    first["markov"]["t5"]["fraction"] = 99.0  # a caller that edits its copy changes nothing kept
    assert task_verdicts() == fresh
    calls = []
    monkeypatch.setattr(results, "verdict_rows", lambda r, longer=None: calls.append(1) or {})
    task_verdicts()
    assert not calls  # the same files: nothing recomputed
    results.load_tasks.cache_clear()  # other files (a test's data directory, a retrained lab): computed again
    try:
        assert set(task_verdicts()) == set(fresh) and len(calls) == len(fresh)
    finally:
        results.load_tasks.cache_clear()
        monkeypatch.undo()
        results._SHIPPED_VERDICTS.clear()
