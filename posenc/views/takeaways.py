"""The spine of the pages that measure schemes: a headline and a wrap-up computed from what the page already drew.

Each function takes the view dicts its page computed at the current settings (pure: no Streamlit) and returns
``{"headline": one sentence, "shows": [...], "wrong": [...]}`` for ``posenc.ui.frame.wrap_up``.  A claim that states
an exercise's answer is given as (text, quiz key) and waits for that exercise's reveal.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from posenc.views.relative import alibi_slopes_view, t5_view

Takeaway = dict
Quote = Callable[[str], str]
YARN_QUIZ = "ext_yarn_af"  # Context extension's exercise: YaRN's attention factor


def _names(items) -> str:
    items = list(items)
    return ", ".join(items[:-1]) + (" and " if len(items) > 1 else "") + items[-1] if items else "none"


def home_takeaway(view: dict) -> Takeaway:
    """The landing page: which schemes tick every box of the wishlist, measured."""
    every = view["all"]
    return {
        "headline": f"Of the measured schemes, {len(every)} tick all four wishes (bounded, continuous, relative, unique): "
                    f"{_names(every)}." if every else "No measured scheme ticks all four wishes.",
        "shows": [f"Ticking all four, measured at the settings Compare schemes uses: {_names(every)}.",
                  f"Ticking none: {_names(view['none'])}." if view["none"] else "Every scheme ticks at least one wish."],
        "wrong": ["The wishlist says nothing yet about *why* attention needs positions at all, or what happens past the "
                  "length a model was trained at: the next page starts with the first question."],
    }


def learned_takeaway(view: dict | None, rows_past: int | None = None) -> Takeaway:
    """Learned tables: smooth trained rows (the cosine matrix's bands), and nothing past the last row."""
    if view is None:
        return {"shows": ["A learned table is a lookup: one trained row per position."],
                "wrong": ["It has no row past its last one."]}
    rows, d = view["shape"]
    smooth = view["neighbour_cosine"]
    return {
        "headline": f"Neighbouring rows of this {rows:,} × {d:,} table point the same way (mean cos(p, p+1) = {smooth:.3f}, "
                    f"against {view['random_abs_cosine']:.3f} for two random directions): training made the table smooth.",
        "shows": [f"Mean |cos| between two different rows: {view['mean_abs_offdiag']:.3f}; the dark-blue band along the cosine "
                  "matrix's diagonal is that smoothness (the table heatmap itself looks like noise channel by channel).",
                  f"Half of the table's variation along positions has a wavelength above {view['median_wavelength']:.1f} "
                  "positions: the rows drift slowly, as the sinusoid's slow pairs do."],
        "wrong": [f"There is no row {rows:,}: a position past the last trained one has nothing to add, so the model cannot read it.",
                  "The score between two positions depends on both, not on their offset alone: nothing here is relative."],
    }


def relative_takeaway(t5: tuple = (True, 32, 128), heads: int = 12) -> Takeaway:
    """Relative biases at the page's default settings (its sections hold their own controls): T5's last bucket, ALiBi's
    slopes."""
    t = t5_view(*t5, 64)
    a = alibi_slopes_view(heads)
    first = float(a["frame"]["slope"].iloc[0])  # head 1 (the exercise asks about another head)
    where = f"T5 with {t5[1]} {'bidirectional' if t5[0] else 'causal'} buckets, max_distance {t5[2]}; ALiBi with {heads} heads"
    return {
        "headline": f"A bias depends only on j − i: T5 lumps every distance from {t['last_start']} on into one bucket, while "
                    f"ALiBi's penalty keeps growing, {100 * first:.3g} logits 100 tokens back in head 1 ({where}).",
        "shows": [f"T5 gives each distance below {t['max_exact']} its own bucket and log-spaced buckets beyond: far keys all "
                  "look alike.",
                  f"ALiBi's {heads} heads each have their own slope ({a['power']} on a geometric sequence"
                  + (f", {a['extra']} more between them" if a["extra"] else "") + "): each head attends over a different range.",
                  "Kerple bends ALiBi's line into a logarithm; FIRE learns the whole curve of a normalised distance."],
        "wrong": ["T5's scalars and FIRE's MLP are learned: untrained, as here, they show the shape, not what a model uses.",
                  "A bias touches only the scores: the vectors themselves carry no position. Whether the penalty helps past the "
                  "training length is measured in the Extrapolation lab."],
    }


def rope_takeaway(rot: dict | None, d: int, base: float) -> Takeaway:
    """RoPE: the score depends only on the offset; the pairs' wavelengths at (d, base).  (How the float64 rounding of a
    shifted score grows is section 1's exercise, answered in its own section: a claim here would wait for its reveal,
    and the reveal would then rerun the whole page, 0.8-1.1 s in Chromium on 2026-12-05, not the section.)"""
    fast, slow = 2 * math.pi, 2 * math.pi * base ** ((d - 2) / d)  # wavelength of pair 0 and of pair d/2 - 1
    shows = [f"At d = {d} and base {base:g}, the {d // 2} pairs turn once every {fast:.3g} to {slow:,.4g} positions."]
    if rot is not None:
        shows.append(f"Shifting both tokens changes the score by {rot['difference']:.1e} (float64 rounding): only the offset enters.")
    return {
        "headline": f"RoPE rotates q and k pair by pair, each pair at its own speed (d = {d}, base {base:g}: one turn every "
                    f"{fast:.3g} to {slow:,.4g} positions), so their score depends only on how far apart they are.",
        "shows": shows,
        "wrong": ["Past the trained length the slow pairs reach angles never seen in training: extending the context needs "
                  "a change of θ (next page).",
                  "RoFormer's decay is an upper bound, not the score: a given q and k can score high far away."],
    }


def extension_takeaway(bands: dict | None, s: float, train: int, quote: Quote = str) -> Takeaway:
    """Context extension: what each method does to the fast pairs and the slow ones (``quote``: how a name from outside
    -- a loaded model's -- is written into Markdown, posenc.ui.md.escape on a page)."""
    if bands is None:
        return {"shows": ["Each method changes θ per pair."], "wrong": ["A setting above could not be measured."]}
    frame = bands["frame"]
    first = frame[frame["pair"] == 0].drop_duplicates("name")  # the fastest pair of each method
    kept = [quote(nm) for nm, r in zip(first["name"], first["ratio"]) if abs(r - 1) < 1e-3 and nm != bands["names"][0]]
    moved = [f"{quote(nm)} (×{r:.3g})" for nm, r in zip(first["name"], first["ratio"]) if abs(r - 1) >= 1e-3]
    summary = bands["summary"].iloc[1:]  # row 0 is plain RoPE
    scaled = [(nm, x) for nm, x in zip(bands["names"][1:], summary["logit_scale"]) if abs(x - 1) >= 1e-6]
    scales = (f"{_names([quote(nm) for nm, _ in scaled])} also multiply every score by "
              + " and ".join(f"{x:.4g}" for _, x in scaled) + " (the square of the attention factor on cos and sin), so their "
              "scores change even at distance 0, where no angle turns." if scaled else
              f"No method scales the scores at s = {s:g}: only θ changes.")
    if any(nm == "YaRN" for nm, _ in scaled):  # YaRN's scale is the square of the exercise's answer: it waits for the reveal
        scales = (scales, YARN_QUIZ)
    return {
        "headline": f"Stretching RoPE {s:g}× past L = {train:,}: {_names(kept)} leave the fastest pair as it was; "
                    f"{_names(moved) if moved else 'none'} change it too. Every method slows the slowest pairs "
                    f"(θ′/θ from ×{summary['slow_min'].min():.3g} to ×{summary['slow_max'].max():.3g}).",
        "shows": [f"Target length {bands['target']:,}; the slow pairs are slowed so that their angles at the target stay "
                  "within those seen in training.",
                  scales],
        "wrong": ["Every method here is measured on random q and k: what a trained model loses is on *What an extension costs*.",
                  "The angles themselves are rounded: the next page asks how far float16 and bfloat16 can count."],
    }


def precision_takeaway(v: dict | None, quote: Quote = str) -> Takeaway:
    """Precision at long context: where each float type's cos/sin error first passes the tolerance (``quote``: how the
    label, which names a pasted model, is written into Markdown)."""
    if v is None:
        return {"shows": ["RoPE's angles are rounded."], "wrong": ["The settings above could not be measured."]}
    rows = v["table"].to_dict("records")
    said = [f"{r['mode']}: " + ("never up to 10⁶" if r["first_above"] is None or r["first_above"] != r["first_above"]
                                else f"from p = {int(r['first_above']):,}") for r in rows]
    return {
        "headline": f"For {quote(v['label'])}, the cos/sin error first passes 10⁻³ — " + "; ".join(said) + ".",
        "shows": ["A float keeps a fixed number of significant bits, so the angle p·θ loses absolute precision as p grows.",
                  f"Near position 131,072, float32's worst cos/sin error is {v['at_128k']['float32']:.2g}."],
        "wrong": ["This is the rounding of the rotation alone; a trained model's sensitivity to it is measured on "
                  "*Relative, for real*.", "The next page puts every scheme's position scores side by side."],
    }


def similarity_takeaway(results: list, n: int, d: int, quote: Quote = str) -> Takeaway:
    """Similarity matrices: the deviation from translation invariance of each scheme shown (``quote``: how a name from
    outside -- an uploaded table's -- is written into Markdown)."""
    measured = [(quote(r["name"]), r["translation_invariance"]) for r in results if r["translation_invariance"] is not None]
    if not measured:
        return {"shows": ["The matrices are drawn above."], "wrong": ["No deviation could be measured at this length."]}
    worst = max(measured, key=lambda x: x[1])
    return {
        "headline": f"At n = {n:,}, d = {d}: the scheme furthest from depending on j − i alone is {worst[0]} (its deviation "
                    "from translation invariance, 0 when every diagonal is one colour, waits with the exercise's answer).",
        "shows": [(f"Relative (deviation below 10⁻⁶): {_names([k for k, x in measured if x < 1e-6])}.", "similarity_relative"),
                  "Absolute schemes' diagonals change colour: the deviation measures by how much, as a share of the "
                  "matrix's own spread."],
        "wrong": ["A matrix is one probe (an all-ones q for RoPE, one head for a bias): a trained model's q and k differ.",
                  "Which of these extrapolates is a different question: Compare schemes and the Extrapolation lab measure it."],
    }


def compare_takeaway(view: dict | None, n: int, train_len: int) -> Takeaway:
    """Compare schemes: how many are measured, which extrapolate in the lab, which tick the wishlist (the exercise)."""
    if view is None:
        return {"shows": ["Every registered scheme is measured with the same rules."], "wrong": ["The settings could not be measured."]}
    frame = view["frame"]
    ext = frame.loc[frame["extrapolates"].map(lambda x: x is True), "scheme"].tolist()
    trained = int(frame["extrapolates"].map(lambda x: x is not None and x == x).sum())
    return {
        "headline": f"{len(frame)} schemes measured with one set of rules (n = {n:,}); of the {trained} the lab trained, "
                    f"{len(ext)} hold past the lab's training length on its Markov task (their gap over [L, 8L) within 10 % "
                    "of a uniform guess's; the verdict column has every task).",
        "shows": [f"Holding past L in the lab's Markov task: {_names(ext)}." if ext else "No trained scheme holds past L in the lab.",
                  (f"Ticking all four wishes: {_names(view['wishlist_names'])}.", "wishlist_count")],
        "wrong": ["The article's verdicts (\"extrapolates: yes, in principle\") are claims about a property; the lab's are one "
                  "tiny task at one length: both are shown, and they can disagree.",
                  "*The articles' claims*, next, gives each claim of the three articles a verdict; the *Extrapolation lab* "
                  "after it trains the schemes and shows the measurements behind the 'extrapolates' column."],
    }


def lab_takeaway(ov: dict) -> Takeaway:
    """Extrapolation lab, from ``posenc.views.lab.overview``: each scheme's gap (loss − floor) at 4L in the main run."""
    frame = ov["frame"]
    main = frame[frame["budget"] == frame["budget"].iloc[0]]
    at4 = main[main["multiple"] == 4].groupby("scheme", observed=True)["gap"].mean().dropna().sort_values()
    L = ov["train_len"]
    if at4.empty:
        return {"shows": ["Tiny transformers trained at L, measured to 8L."], "wrong": ["No run is measured at 4L here."]}
    return {
        "headline": f"Trained at L = {L} and read at 4L = {4 * L}, {at4.index[0]} stays closest to the floor (gap "
                    f"{at4.iloc[0]:.3g} nats) and {at4.index[-1]} furthest ({at4.iloc[-1]:.3g} nats).",
        "shows": [f"{len(at4)} schemes trained on one task ({ov['seeds']} seeds, {ov['steps']} steps) and read out to 8L "
                  f"against an exact floor; {ov['n_learned']} of {ov['n_models']} models learned the task at L."],
        "wrong": ["One tiny model on one synthetic task: a scheme that fails here may work with scaling tricks at scale, "
                  "which the next pages test on a real model."],
    }


def curve_spread(frame, x: str, y: str, by: str = "name") -> dict:
    """How far apart the curves of ``frame`` (one per ``by``) are: {"count", "max_gap": the largest distance between two
    curves at one ``x``, "at": that x, "end_gap": their spread at the largest x all share, "low", "high": the curves lowest
    and highest there}.  A caption says from it whether the lines coincide (a legend cannot tell 7 overlapping lines apart)."""
    wide = frame.pivot_table(index=x, columns=by, values=y, observed=True).dropna()
    if wide.empty:
        return {"count": int(frame[by].nunique()), "max_gap": float("nan"), "at": None, "end_gap": float("nan"),
                "low": None, "high": None}
    gap = wide.max(axis=1) - wide.min(axis=1)
    last = wide.iloc[-1]
    return {"count": wide.shape[1], "max_gap": float(gap.max()), "at": gap.idxmax(), "end_gap": float(gap.iloc[-1]),
            "low": str(last.idxmin()), "high": str(last.idxmax()), "end_at": wide.index[-1]}


def missing_model_takeaway() -> Takeaway:
    """A real-model page without its model installed: the spine still says what the page would show, and leads on."""
    return {
        "headline": "This page measures a real language model (SmolLM2-135M), which is not installed here: the box below says "
                    "how to install it.",
        "shows": ["Nothing measured yet: every other page works without the model."],
        "wrong": ["Install the model (one command, above) to see this page's measurements."],
    }
