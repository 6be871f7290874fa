"""The extrapolation lab (placeholder docstring)."""
