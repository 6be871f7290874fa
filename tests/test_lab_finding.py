"""The lab's finding, computed from the shipped results: who stays near the floor past L, who ends worse than a uniform
guess (docs/lab.md states both; this test fails when the shipped numbers stop saying so)."""

from __future__ import annotations

import pytest

from posenc.lab.results import gaps, load_shipped, spread
from posenc.views.lab import finding, uniform_gap, worse_than_uniform

RUN = load_shipped()


def test_uniform_gap_is_log_v_minus_floor():
    assert uniform_gap(RUN["results"]) == pytest.approx(0.5233, abs=1e-4)


def test_past_2l_these_schemes_are_worse_than_a_uniform_guess():
    w = worse_than_uniform(RUN)
    assert w["by_length"][32] == [] and w["by_length"][64] == []
    assert w["by_length"][128] == ["sinusoidal", "rope", "xpos", "p_rope"]
    assert w["by_length"][256] == ["raw_index", "sinusoidal", "rope", "xpos", "p_rope", "nope"]
    rope = spread(gaps(RUN["results"], "rope", 256))["mean"] / w["uniform_gap"]
    assert 1.6 < rope < 1.8  # RoPE at 8L: 1.7 x the uniform guess's gap


def test_the_finding_sentence():
    f = finding(RUN)
    assert f["within"] == ["alibi", "kerple"]
    assert f["worse"] == {"raw_index": 256, "sinusoidal": 128, "rope": 128, "xpos": 128, "p_rope": 128, "nope": 256}
    assert set(f["between"]) == {"t5", "fire", "rope_randomized"}
    assert f["sentence"].startswith("Trained at L = 32: past L only ALiBi and Kerple (log) stay within 10% of a uniform "
                                    "guess's gap (0.523 nats) out to 8L;")
    assert "Sinusoidal, RoPE, xPos and p-RoPE end worse than a uniform guess from 4L" in f["sentence"]
    assert "2-layer models of d = 32" in f["caveat"] and "L = 32" in f["caveat"]
