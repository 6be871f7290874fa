"""Data for the story pages (1-6): attention needs order, the naive attempts, the sinusoid."""

from __future__ import annotations

import numpy as np
import pandas as pd

from posenc._validate import check_int
from posenc.geometry import growth, token_embedding_norm
from posenc.learned import minilm_metadata

GROWTH_POINTS = 121  # log-spaced positions from 1 to 10^6 (plus the chosen context)


def raw_index_growth(context: int, d_model: int) -> dict:
    """Norm of the raw-index encoding against position (1 .. 10^6), next to embedding scales.

    Returns {"frame": DataFrame(position, norm, series) for the chart, "context": int,
    "pe_norm": ||PE(context - 1)||, "pe_max": max |PE(context - 1)|, "token_norm": 0.02 sqrt(d),
    "minilm_token_norm": median token-row norm of a trained MiniLM (d = 384), "ratio":
    pe_norm / token_norm, "sinusoid_norm": sqrt(d / 2) (for even d)}.
    """
    L = check_int("context", context, lo=2, hi=10**6)
    d = check_int("d_model", d_model, lo=1, hi=1024)
    pos = np.unique(np.concatenate([np.round(np.geomspace(1, 10**6, GROWTH_POINTS)), [L - 1]]))
    g = growth("raw_index", pos, d)
    s = growth("sinusoidal", pos, d)
    token = token_embedding_norm(d)
    trained = float(minilm_metadata()["reference_scalars"]["median_token_embedding_l2_norm"])
    frame = pd.concat(
        [
            pd.DataFrame({"position": pos, "norm": g["norm"], "series": "raw index ‖PE(t)‖ = t·√d"}),
            pd.DataFrame({"position": pos, "norm": s["norm"], "series": "sinusoid ‖PE(t)‖ (for contrast)"}),
            pd.DataFrame({"position": pos, "norm": np.full(pos.size, token), "series": "token embedding at init, 0.02·√d"}),
        ],
        ignore_index=True,
    )
    at = int(np.flatnonzero(pos == L - 1)[0])
    return {
        "frame": frame,
        "context": L,
        "pe_norm": float(g["norm"][at]),
        "pe_max": float(g["max_abs"][at]),
        "token_norm": token,
        "minilm_token_norm": trained,
        "ratio": float(g["norm"][at] / token),
        "sinusoid_norm": float(s["norm"][at]),
    }
