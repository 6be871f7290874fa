"""Page 5 (attempt 4, one sin+cos pair): the unit circle, the closest pair as the context grows, URLs, payload."""

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
    text_of,
)

import posenc

PAGE = "pages/sincos_pair.py"


def chord(omega: float, t: int, s: int) -> float:
    """Oracle: distance between the unit-circle points at angles omega t and omega s, 2 |sin(omega (t - s) / 2)|."""
    return 2 * abs(math.sin(omega * (t - s) / 2))


def closest(omega: float, n: int) -> float:
    return min(chord(omega, t, s) for t, s in itertools.combinations(range(n), 2))


def test_defaults_show_the_circle_and_its_collisions():
    at = open_page(PAGE)
    assert_clean(at)
    m = metrics(at)
    assert m["positions per turn ⌈2π/ω⌉"] == "7"  # 0..6 < 2 pi
    # the article "Positional Embeddings: Why Attention Needs Order": "Inside one full turn, every position gets a unique pair."
    assert m["closest pair within the first turn"] == f"{closest(1.0, 7):.4f}" == "0.2822"
    # 40 positions (about 6 turns): no two within 0.1 yet; the closest are 0 and 25
    assert m["closest pair among positions 0 … n−1"] == f"{closest(1.0, 40):.4g}" == "0.1326"
    within = sum(1 for t, s in itertools.combinations(range(40), 2) if chord(1.0, t, s) <= 0.1)
    assert m["pairs within ε"] == f"{within:,}" == "0"
    sine = sum(1 for t, s in itertools.combinations(range(40), 2) if abs(math.sin(t) - math.sin(s)) <= 0.1)
    assert sine > 0 and f"one sine alone: {sine:,}" in [x.proto.delta for x in at.metric]  # sine alone collides
    assert {"unit_circle", "closest_curve"} <= set(charts(at))
    pts = next(d for d in chart(at, "unit_circle")["data"].values() if "turn" in d.columns and len(d) == 40)
    assert all(abs(x - math.cos(t)) < 1e-15 and abs(y - math.sin(t)) < 1e-15 for t, x, y in zip(pts["t"], pts["x"], pts["y"]))
    assert set(pts[pts["label"] != ""]["t"]) >= set(range(7))
    curve = next(d for d in chart(at, "closest_curve")["data"].values() if "distance" in d.columns)
    assert curve["n"].iloc[-1] == 10_000 and curve["distance"].is_monotonic_decreasing
    for n, dist in zip(curve["n"][:10], curve["distance"][:10]):
        assert abs(dist - posenc.collisions("sincos_pair", int(n), 2, omega=1.0)["distance"]) < 1e-12
        assert abs(dist - closest(1.0, int(n))) < 1e-12
    # exercise: first return within 0.1 of position 0 at omega = 1 is position 44 (oracle: the chord formula)
    assert next(p for p in range(1, 100) if chord(1.0, p, 0) <= 0.1) == 44
    at.toggle(key="ex_first_return_reveal").set_value(True).run()
    assert "Answer: 44." in text_of(at)
    assert payload_bytes(at) <= 1_000_000


def test_controls_change_the_numbers():
    at = open_page(PAGE)
    at.slider(key="omega").set_value(0.5).run()
    assert_clean(at)
    m = metrics(at)
    assert m["positions per turn ⌈2π/ω⌉"] == "13"  # 12 * 0.5 = 6 < 2 pi <= 13 * 0.5
    assert m["closest pair within the first turn"] == f"{closest(0.5, 13):.4f}"
    assert m["closest pair among positions 0 … n−1"] == f"{closest(0.5, 40):.4g}"
    at.slider(key="n").set_value(300).run()
    assert metrics(at)["closest pair among positions 0 … n−1"] == f"{posenc.collisions('sincos_pair', 300, 2, omega=0.5)['distance']:.4g}"
    at.select_slider(key="nmax").set_value(100).run()
    curve = next(d for d in chart(at, "closest_curve")["data"].values() if "distance" in d.columns)
    assert curve["n"].max() == 100 and curve["distance"].iloc[-1] == closest(0.5, 100)
    assert chart_frame(at, "closest_curve")["n"].max() == 300  # the dashed rule marks the circle's n = 300


def test_link_values_are_taken_and_bad_ones_noted():
    at = open_page(PAGE, {"omega": "2.5", "n": "40", "eps": "0.05", "nmax": "1,000"})
    assert_clean(at)
    assert not at.warning
    m = metrics(at)
    assert m["positions per turn ⌈2π/ω⌉"] == "3"
    assert m["closest pair among positions 0 … n−1"] == f"{closest(2.5, 40):.4g}"
    within = sum(1 for t, s in itertools.combinations(range(40), 2) if chord(2.5, t, s) <= 0.05)
    assert m["pairs within ε"] == f"{within:,}"
    bad = open_page(PAGE, {"omega": "-1", "n": "1", "nmax": "7", "eps": "x"})
    assert not bad.exception and not bad.error
    notes = " ".join(w.value for w in bad.warning)
    for key in ("`omega`", "`n`", "`nmax`", "`eps`"):
        assert key in notes, notes
    assert metrics(bad)["positions per turn ⌈2π/ω⌉"] == "7"


def test_payload_at_the_largest_settings():
    at = open_page(PAGE, {"omega": "0.05", "n": "2048", "nmax": "100,000", "eps": "0.2"})
    assert_clean(at)
    assert not at.warning  # every value of the link was taken
    curve = next(d for d in chart(at, "closest_curve")["data"].values() if "distance" in d.columns)
    assert curve["n"].max() == 100_000 and curve["distance"].is_monotonic_decreasing
    assert metrics(at)["positions per turn ⌈2π/ω⌉"] == "126"
    assert all(c["rows"] <= 65_536 for c in charts(at).values())
    assert payload_bytes(at) <= 2_000_000
