"""Page 6 (the sinusoid): its numbers against posenc and the seeds, controls, links, and payload."""

import math

import numpy as np
import pytest
from apphelpers import (
    assert_clean,
    chart_frame,
    charts,
    metrics,
    open_page,
    payload_bytes,
    reveal,
    tables,
    text_of,
)

from posenc.analysis.geometry import collisions, shift_operator
from posenc.charts.raster import legend_range

PAGE = "pages/sinusoid.py"
MB = 1_000_000
# the keys of the page's charts: heatmap, wavelengths, M_k fitted, M_k closed form, PE.PE(k) by base, wavelengths by base
CHARTS = ("sinusoid_heatmap", "sinusoid_spectrum", "sinusoid_shift_fit", "sinusoid_shift_closed", "sinusoid_dots", "sinusoid_bases")


def vec(s: str) -> list[float]:
    return [float(x) for x in s.strip("[]").split(",")]


def worked(at):
    """The worked-example table (the first dataframe on the page)."""
    return tables(at)["sinusoid_word_position"]


def test_defaults_show_the_seed_numbers():
    at = open_page(PAGE)
    assert_clean(at)
    cs = charts(at)
    assert set(CHARTS) <= set(cs)
    heat = chart_frame(at, "sinusoid_heatmap")
    assert {"position", "depth", "value"} <= set(heat.columns) and len(heat) == 128 * 128
    assert heat["value"].between(-1, 1).all()
    # drawn as one image; its legend on a layer of its own, its range in the data
    hm = cs["sinusoid_heatmap"]
    assert hm["spec"]["layer"][0]["mark"]["type"] == "image" and legend_range(hm["spec"], hm["data"]) == (-1.0, 1.0)
    spec = chart_frame(at, "sinusoid_spectrum")
    assert spec["wavelength"].notna().sum() >= 64
    assert len(chart_frame(at, "sinusoid_shift_fit")) == len(chart_frame(at, "sinusoid_shift_closed")) == 8 * 8  # M_k fitted and closed form at d = 8
    bases = {"10", "100", "1,000", "10,000", "100,000", "10⁶", "10⁷", "10⁸"}
    lines = chart_frame(at, "sinusoid_bases")
    assert set(lines["base"].dropna()) == bases and "your base" in set(lines["series"].dropna())

    m = metrics(at)
    # longest wavelength 2*pi*base^((d-2)/d) at d = 128, computed here independently: the exercise's answer,
    # hidden in the metric until revealed; the "why 10000" table (outside the exercise's section, which a reveal reruns
    # alone) points to the exercise in the chosen base's row, before and after
    longest = f"{2 * math.pi * 10000 ** (126 / 128):,.2f}"
    assert m["longest wavelength"] == "?" and longest not in text_of(at)
    assert longest not in tables(at)["sinusoid_bases"].to_string()
    assert tables(at)["sinusoid_bases"].set_index("base").loc["10,000 (chosen)", "longest wavelength"] == "the exercise above"
    reveal(at, "longest")
    assert metrics(at)["longest wavelength"] == longest and longest not in tables(at)["sinusoid_bases"].to_string()
    assert tables(at)["sinusoid_bases"].set_index("base").loc["10,000 (chosen)", "longest wavelength"] == "the exercise above"
    assert m["2π·base (the limit)"] == "62,831.85"
    assert m["‖PE(p)‖ at every position"] == "8.0000"  # sqrt(d/2), Vaswani et al. 2017, arXiv:1706.03762 §3.5
    # PE(p+k) = M_k PE(p): residual < 1e-10 (Vaswani et al. 2017, arXiv:1706.03762 §3.5), and the same as posenc's own fit
    assert float(m["residual max |PE(p+k) − M_k PE(p)|"]) < 1e-10
    assert m["residual max |PE(p+k) − M_k PE(p)|"] == f"{shift_operator('sinusoidal', 7, 8)['residual']:.1e}"
    c = collisions("sinusoidal", 128, 128)
    assert m["closest-pair distance among 128 positions"] == f"{c['distance']:.6f}"
    assert m["closest pair"] == f"{c['i']} and {c['j']}"

    # the article "What are Positional Embeddings?", "Hello World" to the Rescue: position vectors and sums at 3 decimals
    w = worked(at)
    assert w["word"].tolist() == ["Hello", "World"]
    assert vec(w["+ position vector PE(pos)"][0]) == [0.0, 1.0, 0.0, 1.0]
    assert vec(w["+ position vector PE(pos)"][1]) == [0.841, 0.540, 0.010, 1.000]
    assert vec(w["= sum"][0]) == [0.1, 1.2, 0.3, 1.4]
    assert vec(w["= sum"][1]) == [1.341, 1.140, 0.710, 1.800]
    full = tables(at)["sinusoid_full_precision"]
    assert full["PE"].iloc[6] == pytest.approx(math.sin(0.01), abs=5e-13) != 0.01  # to 12 decimals, not the rounded 0.010
    assert not at.warning
    assert payload_bytes(at) <= 1 * MB
    assert "Show the code" in [e.label for e in at.expander]


def test_exercise_reveals_the_computed_answer():
    at = open_page(PAGE, {"d": "512"})
    at.number_input(key="ex_longest_guess").set_value(62831.85)
    at.toggle(key="ex_longest_reveal").set_value(True).run()
    assert_clean(at)
    body = text_of(at)
    assert "Answer: 60611.5." in body and "Not quite" in body  # 2*pi*base is only the limit
    # the worked example asks about position 50, which no table can show (at most 12 words)
    assert f"{math.sin(0.5):.3f}" not in text_of(at) + tables(at)["sinusoid_word_position"].to_string()
    assert f"Answer: {round(math.sin(0.5), 6):g}." in text_of(reveal(at, "pe_slow"))


def test_layout_changes_the_heatmap_but_not_the_closest_pair():
    at = open_page(PAGE)
    before = chart_frame(at, "sinusoid_heatmap").sort_values(["position", "depth"])["value"].to_numpy()
    dist = metrics(at)["closest-pair distance among 128 positions"]
    at.segmented_control(key="layout").set_value("concatenated").run()
    assert_clean(at)
    after = chart_frame(at, "sinusoid_heatmap").sort_values(["position", "depth"])["value"].to_numpy()
    assert not np.allclose(before, after)
    assert np.allclose(np.sort(before.reshape(128, 128), axis=1), np.sort(after.reshape(128, 128), axis=1))
    assert metrics(at)["closest-pair distance among 128 positions"] == dist


def test_base_and_length_change_the_spectrum():
    at = open_page(PAGE)
    at.number_input(key="base").set_value(1000.0).run()
    assert_clean(at)
    m = metrics(at)
    assert metrics(reveal(at, "longest"))["longest wavelength"] == f"{2 * math.pi * 1000 ** (126 / 128):,.2f}"
    assert m["2π·base (the limit)"] == "6,283.19"
    wl = 2 * math.pi * 1000 ** (2 * np.arange(64) / 128)
    assert m["pairs turning fully within n = 128"] == f"{int(np.sum(wl <= 128))} of 64"
    lines = chart_frame(at, "sinusoid_bases")
    assert set(lines[lines["series"] == "your base"]["base"]) == {"1,000"}
    at.slider(key="n").set_value(512).run()
    assert metrics(at)["pairs turning fully within n = 512"] == f"{int(np.sum(wl <= 512))} of 64"
    c = collisions("sinusoidal", 512, 128, base=1000.0)
    assert metrics(at)["closest-pair distance among 512 positions"] == f"{c['distance']:.6f}"


def test_more_words_and_edited_embeddings():
    at = open_page(PAGE)
    at.text_input(key="words").set_value("the cat sat").run()
    at.text_input(key="e0").set_value("1, 1, 1, 1").run()
    assert_clean(at)
    w = worked(at)
    assert w["position"].tolist() == [0, 1, 2]
    assert vec(w["= sum"][0]) == [1.0, 2.0, 1.0, 2.0]
    assert vec(w["= sum"][2]) == [round(math.sin(2), 3), round(math.cos(2), 3), 0.02, 1.0]  # blank = zero
    assert w["embedding from"].tolist() == ["typed", "typed", "blank → zero"]


def test_link_values_are_taken_and_bad_ones_noted():
    at = open_page(PAGE, {"d": "512", "n": "1000", "layout": "concatenated", "k": "3", "sd": "16"})
    assert_clean(at)
    assert not at.warning
    m = metrics(reveal(at, "longest"))
    assert m["longest wavelength"] == "60,611.48"  # Vaswani et al. 2017, arXiv:1706.03762 §3.5 literal, d = 512
    c = collisions("sinusoidal", 1000, 512, layout="concatenated")
    assert m["closest-pair distance among 1,000 positions"] == f"{c['distance']:.6f}"
    assert len(chart_frame(at, "sinusoid_shift_fit")) == 16 * 16

    bad = open_page(PAGE, {"d": "7", "layout": "diagonal", "n": "99999", "base": "0.5"})
    assert_clean(bad)
    notes = [x.value for x in bad.warning]
    for key in ("`d`", "`layout`", "`n`", "`base`"):
        assert any(key in note for note in notes), (key, notes)
    assert metrics(bad)["‖PE(p)‖ at every position"] == "8.0000"  # default d = 128
    assert set(CHARTS) <= set(charts(bad))


def test_malformed_embedding_in_a_link_is_a_clear_message():
    at = open_page(PAGE, {"e1": "0.5, zero, 0.7, 0.8"})
    assert not at.exception
    assert [e.value for e in at.error] == [
        "embedding of “World” (position 1): “zero” is not a number; type 4 numbers like 0.1, 0.2, 0.3, 0.4"]
    assert set(CHARTS) <= set(charts(at))  # the rest of the page still works


def test_largest_settings_stay_within_budget():
    words = " ".join(f"w{i}" for i in range(12))
    at = open_page(PAGE, {"d": "1024", "n": "4096", "base": "1000000000", "layout": "concatenated",
                          "k": "4096", "sd": "64", "words": words})
    assert not at.exception
    assert_clean(at)
    heat = chart_frame(at, "sinusoid_heatmap")  # an image heatmap's values: its export (the browser gets the image and a hover grid)
    assert len(heat) <= 65_536
    assert "Downsampled to 65,536 of 4,194,304 cells" in text_of(at)
    assert len(worked(at)) == 12
    m = metrics(reveal(at, "longest"))
    assert m["longest wavelength"] == f"{2 * math.pi * 1e9 ** (1022 / 1024):.4e}"  # compact above 10^7
    assert m["2π·base (the limit)"] == "6.2832e+09"
    assert payload_bytes(at) <= 2 * MB
    for c in charts(at).values():
        assert c["rows"] <= 65_536
