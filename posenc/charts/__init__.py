"""Chart builders: DataFrame in, Altair chart out (no Streamlit).

base:    shared blocks (downsampling, tidy frames, styled heatmaps and lines, palettes)
story:   pages 1-6 (attention, naive attempts, the sinusoid)
schemes: pages 7-10 (learned, T5/ALiBi, RoPE, context extension)
compare: pages 11-12 (similarity matrices, comparison table)
"""
