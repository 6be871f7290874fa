"""When does a periodic signal come back?  The "first return" the story pages' exercises ask for.

axes: m positions 0 .. m-1.
"""

from __future__ import annotations

import numpy as np

RETURN_LIMIT = 100_000  # how far the "first return" exercises look
# what a figure says while it holds back the pairs ``returns_to_start`` names
HELD_NOTE = "Pairs that return to position 0 are named once the exercise below is revealed: the first of them answers it."


def return_after_leaving(distance: np.ndarray, eps: float) -> dict | None:
    """The first position that comes back within ``eps`` of position 0 *after having left it*.

    ``distance``: (m,) distance of positions 0 .. m-1 from position 0 (distance[0] = 0).  A slow
    signal keeps its neighbours within eps at first (position 1 may already be "close"), which
    says nothing about repeating; the question is when it returns.  Returns {"position",
    "left_at": first position farther than eps, "distance"} or None if it never leaves or never
    comes back within the m positions.
    """
    dist = np.asarray(distance, dtype=np.float64)
    away = np.flatnonzero(dist > eps)
    if away.size == 0:
        return None
    s = int(away[0])
    back = np.flatnonzero(dist[s:] <= eps)
    if back.size == 0:
        return None
    t = s + int(back[0])
    return {"position": t, "left_at": s, "distance": float(dist[t])}


def returns_to_start(i, j, first_return: dict | None):
    """Whether the pair (i, j) (numbers or arrays) names position 0's first return or a later position: i = 0 and j at
    or past ``first_return["position"]``.  (0, the first return) is the exercise's answer, and a later pair with 0 within
    ε bounds it, so a page names such a pair only after the reveal.  False without a first return."""
    if first_return is None:
        return np.zeros(np.shape(i), dtype=bool) if np.ndim(i) else False
    return (np.asarray(i) == 0) & (np.asarray(j) >= first_return["position"])
