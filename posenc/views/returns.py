"""When does a periodic signal come back?  The "first return" the story pages' exercises ask for.

axes: m positions 0 .. m-1.
"""

from __future__ import annotations

import numpy as np

RETURN_LIMIT = 100_000  # how far the "first return" exercises look


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
