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
