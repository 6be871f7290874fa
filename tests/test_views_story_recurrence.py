"""The recurrence contrast: with no positions, an RNN tells the two orders apart; attention does not."""

import pytest

from posenc.charts.story import recurrence_chart
from posenc.views.story import recurrence_view


def test_the_recurrence_tells_the_orders_apart_and_attention_does_not():
    v = recurrence_view("The dog bit the man.", "The man bit the dog.", 16)
    assert v["attention"] == 0.0 and v["final"] > 0.1
    assert v["frame"]["gap"].iloc[0] == 0.0  # both read "the" first: the same state
    assert (v["frame"]["gap"].iloc[1:] > 0).all()
    recurrence_chart(v["frame"]).to_dict()


def test_the_same_sequence_gives_the_same_state():
    v = recurrence_view("a b c", "a b c", 8)
    assert v["final"] == 0.0 and v["same_sequence"]
    with pytest.raises(ValueError):
        recurrence_view("", "a", 8)
