"""The clock at the article's setting: the hands are the sinusoid's own channel pairs, and the wavelengths said in
words are the ones the article quotes (~6, a few hundred, tens of thousands at d = 512)."""

import math

import numpy as np
import pytest

from posenc.charts.sinusoid import clock_chart
from posenc.schemes.sinusoidal import sinusoidal
from posenc.views.clock import clock_view


def test_the_hands_are_the_channels_and_the_words_are_computed():
    v = clock_view(1234)
    pe = sinusoidal([1234], 512)[0]
    for _, r in v["frame"].iterrows():
        i = int(r["pair"])
        assert (r["sin"], r["cos"]) == pytest.approx((pe[2 * i], pe[2 * i + 1]), abs=1e-12)
        assert math.hypot(r["x"], r["y"]) == pytest.approx(r["length"])
    w = v["wavelengths"]
    assert 6 <= w["early"] < 7 and 100 <= w["middle"] < 1000 and 10_000 <= w["last"] < 100_000
    assert f"{w['last']:,.0f}" in v["words"] and f"{w['early']:.2f}" in v["words"]
    assert v["frame"]["turns"].iloc[0] == pytest.approx(1234 / (2 * np.pi))
    clock_chart(v["frame"], v["dial"]).to_dict()


def test_bad_settings_are_refused():
    with pytest.raises(ValueError):
        clock_view(-1)
    with pytest.raises(ValueError):
        clock_view(5, d=7)
