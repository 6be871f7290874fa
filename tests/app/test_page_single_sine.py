"""Page 4 (attempt 3, a single sine): sin(5) = sin(5 + 2 pi), the collisions, the first return at 22, URLs, payload."""

import itertools
import math

from apphelpers import (
    assert_clean,
    chart,
    chart_frame,
    charts,
    metrics,
    open_page,
    payload_bytes,
    tables,
    text_of,
)

import posenc

PAGE = "pages/single_sine.py"


def pairs_within(omega: float, n: int, eps: float) -> int:
    """Oracle: unordered pairs of positions 0..n-1 whose sines differ by at most eps (math.sin, brute force)."""
    return sum(1 for i, j in itertools.combinations(range(n), 2) if abs(math.sin(omega * i) - math.sin(omega * j)) <= eps)


def test_defaults_show_the_seed_identity_and_the_collisions():
    at = open_page(PAGE)
    assert_clean(at)
    m = metrics(at)
    # the article "Positional Embeddings: Why Attention Needs Order": "if position 5 gets the value sin(5), then position 5 + 2 pi gets exactly
    # the same number"; sin(5) = -0.95892427 to 8 decimals (math.sin(5) = -0.9589242746631385)
    assert m["sin(ω·5)"] == "-0.95892427" == f"{math.sin(5):.8f}"
    assert m["sin(ω·(5 + 2π/ω))"] == "-0.95892427"
    col = posenc.collisions("single_sine", 64, 1, eps=0.01, omega=1.0)
    assert m["pairs within ε = 0.01"] == f"{col['pairs_within_eps']:,}" == f"{pairs_within(1.0, 64, 0.01):,}" == "29"
    assert m["closest pair"] == f"{col['i']} and {col['j']}" == "11 and 55"
    assert "single_sine" in charts(at)
    pts = next(d for d in chart(at, "single_sine")["data"].values() if "partners" in d.columns and len(d) == 64)
    assert all(abs(v - math.sin(t)) < 1e-15 for t, v in zip(pts["t"], pts["value"]))
    colliding = set(pts[pts["status"] == "within ε of another position"]["t"])
    oracle = {t for i, j in itertools.combinations(range(64), 2) if abs(math.sin(i) - math.sin(j)) <= 0.01 for t in (i, j)}
    assert colliding == oracle and {0, 22, 11, 55} <= colliding
    table = tables(at)["single_sine_pairs"]
    assert (table["position i"].iloc[0], table["position j"].iloc[0]) == (11, 55) and len(table) == 20
    # the exercise answer (the issue): omega = 1 first comes within 0.01 of position 0 at 22, sin 22 = -0.00885
    fr = posenc.first_return("single_sine", 1, eps=0.01)
    assert fr["position"] == 22 and round(math.sin(22), 5) == -0.00885
    at.toggle(key="ex_first_return_reveal").set_value(True).run()
    assert "Answer: 22." in text_of(at) and "-0.0088513" in text_of(at)
    assert "second hand" in text_of(at)
    assert payload_bytes(at) <= 1_000_000


def test_controls_change_the_numbers():
    at = open_page(PAGE)
    at.select_slider(key="eps").set_value(0.05).run()
    assert_clean(at)
    assert metrics(at)["pairs within ε = 0.05"] == f"{pairs_within(1.0, 64, 0.05):,}"
    at.slider(key="omega").set_value(0.5).run()
    assert_clean(at)
    m = metrics(at)
    assert m["sin(ω·5)"] == f"{math.sin(2.5):.8f}" == m["sin(ω·(5 + 2π/ω))"]
    assert m["pairs within ε = 0.05"] == f"{pairs_within(0.5, 64, 0.05):,}"
    at.slider(key="n").set_value(200).run()
    assert metrics(at)["pairs within ε = 0.05"] == f"{pairs_within(0.5, 200, 0.05):,}"
    assert len(chart_frame(at, "single_sine")) > 200


def test_link_values_are_taken_and_bad_ones_noted():
    at = open_page(PAGE, {"omega": "2.0", "n": "100", "eps": "0.02"})
    assert_clean(at)
    assert not at.warning
    assert metrics(at)["pairs within ε = 0.02"] == f"{pairs_within(2.0, 100, 0.02):,}"
    assert metrics(at)["sin(ω·5)"] == f"{math.sin(10):.8f}"
    bad = open_page(PAGE, {"omega": "0", "n": "abc", "eps": "0.3"})
    assert not bad.exception and not bad.error
    notes = [w.value for w in bad.warning]
    assert any("`omega`" in n and "0.05 to 10" in n for n in notes), notes
    assert any("`n`" in n for n in notes) and any("`eps`" in n for n in notes), notes
    assert metrics(bad)["pairs within ε = 0.01"] == "29"  # the defaults


def test_payload_at_the_largest_settings():
    at = open_page(PAGE, {"omega": "0.05", "n": "512", "eps": "0.1"})
    assert_clean(at)
    assert not at.warning  # every value of the link was taken
    assert metrics(at)["pairs within ε = 0.1"] == f"{pairs_within(0.05, 512, 0.1):,}"
    assert all(c["rows"] <= 65_536 for c in charts(at).values())
    assert payload_bytes(at) <= 2_000_000


def test_the_only_pair_within_eps_is_the_answer_and_waits_for_the_reveal():
    """At ω = 8.31, n = 32, ε = 0.01 the one pair within ε is (0, 31), the exercise's answer: before the reveal no list
    (an expander of 0 pairs read "The 0 closest colliding pairs"), no link, no ring; after it, all three."""
    at = open_page(PAGE, {"omega": "8.31", "n": "32", "eps": "0.01"})
    assert_clean(at)
    assert "single_sine_pairs" not in tables(at) and not any("colliding" in e.label for e in at.expander)
    assert "No dashed link yet" in text_of(at) and "(0, 31)" not in text_of(at)
    at.toggle(key="ex_first_return_reveal").set_value(True).run()
    table = tables(at)["single_sine_pairs"]
    assert list(table[["position i", "position j"]].itertuples(index=False, name=None)) == [(0, 31)]
    assert any(e.label == "The 1 closest colliding pair" for e in at.expander) and "the ringed pair (0, 31)" in text_of(at)
