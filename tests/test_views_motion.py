"""posenc.views.motion: the frames the moving figures play in the browser."""

from __future__ import annotations

import numpy as np
import pytest

from posenc.views import motion
from posenc.views.sinusoid import heatmap_view


def test_the_sweep_sends_the_heatmap_rows_and_at_most_max_values():
    hm = heatmap_view(128, 128, 10000.0, "interleaved")
    fig = motion.sweep(hm["shown"], hm["rows"], hm["cols"])
    assert fig["kind"] == "sweep" and fig["rows"] == list(range(128)) and fig["cols"] == list(range(128))
    assert np.allclose(fig["values"], np.round(hm["shown"], 3))  # every row, 3 decimals
    big = heatmap_view(128, 512, 10000.0, "interleaved")  # 128 x 512 drawn: 65,536 values
    fig = motion.sweep(big["shown"], big["rows"], big["cols"])
    values = np.asarray(fig["values"])
    assert values.size <= motion.MAX_SWEEP_VALUES and values.shape == (32, 512)  # every 4th row, every column
    assert fig["rows"] == list(range(0, 128, 4)) and np.allclose(values, np.round(big["shown"][::4], 3))
    with pytest.raises(ValueError, match="shown must be"):
        motion.sweep(np.zeros((2, 3)), [0, 1], [0, 1])
    with pytest.raises(ValueError, match="max_values"):
        motion.sweep(np.zeros((2, 2)), [0, 1], [0, 1], max_values=0)
