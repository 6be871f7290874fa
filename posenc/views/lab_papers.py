"""The lab page's "Against the papers" list: ``posenc.lab.papers.rows`` of the shipped results, one item per claim (an
item per claim, not a five-column table: at 390 px such a table is a column of single words)."""

from __future__ import annotations

from posenc.lab import papers

CAPTION = ("Each reading is computed from the shipped runs by a rule in `posenc.lab.papers` (e.g. Press et al.: ALiBi "
           "holds and the sinusoid, RoPE and T5 end above it, on every task). A paper's measurement that could not be "
           "read is marked so and its reading is *not compared*. The lab is 2-layer models of width 32 at L = 32: an "
           "agreement is a direction that survives at this scale, never a reproduction.")


def papers_markdown() -> str:
    """The rows as a Markdown list: the paper and its claim, then what it measured, the lab's numbers and the reading.
    Every string is the dashboard's own (posenc.lab.papers), none from outside; none holds a "$" (Streamlit's math)."""
    items = [f"- **{r['paper']}**: {r['claim']}. **Reading: {r['reading']}.**  \n"
             f"  *Measured there:* {r['measured']}.  \n  *The lab:* {r['lab']}." for r in papers.rows()]
    return "\n".join(items)
