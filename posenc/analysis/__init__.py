"""Analyses: each asks a registered scheme (``posenc.registry``) and never tests its key.

- ``scores``     position-score matrices, offset profiles, translation invariance
- ``geometry``   growth, length dependence, closest pairs and collisions, first return, the shift operator,
                 the frequency spectrum
- ``tables``     analyses of any learned table (bundled or uploaded); ``spectrum`` its frequency content
- ``attention``  a tiny seeded self-attention: permutation equivariance, exactly
- ``compare``    the comparison table, every column measured
"""
