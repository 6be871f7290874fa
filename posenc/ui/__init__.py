"""The Streamlit-aware layer of posenc: URL-bound controls, caching, page frame, exports.

Only this sub-package imports streamlit; ``import posenc`` never loads it.
"""
