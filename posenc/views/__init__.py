"""Page data: one pure function per figure, returning the tidy DataFrames and numbers a page shows.

Pages call these through posenc.ui.cache.cached (scalar arguments only), so every number on a
page is computed here, tested here, and cached on the scalars that determine it.

story:   pages 1-6     schemes: pages 7-10     compare: pages 11-12
"""
