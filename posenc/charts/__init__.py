"""Chart builders: DataFrame in, Altair chart out (no Streamlit).

base:    shared blocks (downsampling, tidy frames, styled heatmaps and lines, palettes)
story:   pages 1-6 (attention, naive attempts, the sinusoid)
schemes: pages 7-10 (learned, T5/ALiBi, RoPE, context extension)
compare: pages 11-12 (similarity matrices, comparison table)
"""

from altair.utils.schemapi import disable_debug_mode

# Altair validates every schema object against Vega-Lite's JSON schema as it is built (its "debug mode", on by
# default): a Scale, a TitleParams, the Config that charts.base.style makes, each time, on every chart a rerun builds.
# posenc's charts are validated whole instead -- by every PNG/SVG export (posenc.io.export.chart_spec) and by the tests,
# which export every chart of every page (tests/app/test_slide_exports.py) -- so building skips it: 15 % of the server's
# time on a Similarity n step, 3-5 % on RoPE's d and the sinusoid's base (AppTest, 8 steps each, alternating).
disable_debug_mode()

# Altair turns each encoding given as a shorthand string ("x:Q"), a list of them (a tooltip) or a dict (alt.value,
# alt.condition) into its channel object through ``from_dict``, which resolves the class by matching the dict against
# the schema's alternatives: ~4 ms per channel here (altair 6.3), so 20-60 ms per chart and 0.1-0.3 s of a rerun that
# rebuilds a page's charts, against 0.06 ms for the channel class built directly (alt.X("x:Q")).  ``_direct`` builds
# the same object directly -- the class ``from_dict`` would pick for a string or a dict (the value class for a dict
# with a "value", else the field class) called with the shorthand or the dict's keys -- and leaves anything else
# (and any failure) to Altair.  The spec is the same: tests/test_charts_encode.py compares ``to_dict`` both ways.
from altair.utils import core as _core  # noqa: E402

_SLOW_WRAP = getattr(getattr(_core, "_ChannelCache", None), "_wrap_in_channel", None)


def _direct(self, obj, encoding: str, /):
    channel = self.name_to_channel.get(encoding)
    if channel is not None and type(obj) is str:
        return channel["field"](obj)
    if channel is not None and type(obj) is dict and "shorthand" not in obj:
        kind = "value" if "value" in obj else "field"
        if kind in channel:
            try:
                return channel[kind](**obj)
            except (TypeError, ValueError):
                pass
    if isinstance(obj, list | tuple):
        return [_direct(self, el, encoding) for el in obj]
    return _SLOW_WRAP(self, obj, encoding)


if _SLOW_WRAP is not None:
    _core._ChannelCache._wrap_in_channel = _direct

# Altair rebuilds every object it copies, and copies a chart whenever it derives one; posenc.charts.copies copies
# without rebuilding (the lab's first step to another task: 0.82 -> 0.26 s of chart building).
from posenc.charts import copies as _copies  # noqa: E402

_copies.install()
