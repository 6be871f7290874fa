"""The lab page's "Against the papers" table: ``posenc.lab.papers.rows`` of the shipped results, one row per claim."""

from __future__ import annotations

import pandas as pd

from posenc.lab import papers

COLUMNS = {"paper": "paper", "claim": "claim", "measured": "what the paper measured (as read)", "lab": "the lab (shipped runs)",
           "reading": "reading"}
CAPTION = ("Each reading is computed from the shipped runs by a rule in `posenc.lab.papers` (e.g. Press et al.: ALiBi "
           "holds and the sinusoid, RoPE and T5 end above it, on every task). A paper's measurement that could not be "
           "read is marked so and its reading is *not compared*. The lab is 2-layer models of width 32 at L = 32: an "
           "agreement is a direction that survives at this scale, never a reproduction.")


def papers_frame() -> pd.DataFrame:
    """The table of the page: one row per claim, the columns of COLUMNS."""
    return pd.DataFrame(papers.rows())[list(COLUMNS)].rename(columns=COLUMNS)
