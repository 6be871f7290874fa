"""Page 11: position-score matrices side by side, and how relative each one is."""

from functools import partial

import streamlit as st

from posenc.analysis.scores import dense_scores, offset_profile, position_scores, translation_invariance
from posenc.charts.base import HEATMAP_CELLS, style
from posenc.charts.compare import offset_profiles, score_matrices, score_panels
from posenc.registry import SCHEMES, bias
from posenc.ui import controls, md, uploads
from posenc.ui.cache import safe
from posenc.ui.frame import chart, chart_grid, exercise, header, quiz_value, show_code, wrap_up
from posenc.views.similarity import (
    COMMON_ROTARY,
    HEADS,
    common_params,
    full_scores,
    relative_count,
    scheme_similarity,
    similarity_panel,
    table_similarity,
)
from posenc.views.takeaways import similarity_takeaway

PATH = "pages/similarity.py"
DEFAULT = ["sinusoidal", "learned_minilm", "rope", "alibi"]

header(
    PATH,
    "How much does position *i* match position *j*? Each matrix below is computed for every pair of "
    "positions. **Look along the diagonals**: where every diagonal holds one colour the score depends only "
    "on the offset j − i (the scheme is relative), and its *deviation from translation invariance* is 0.",
)
for line in (r"S_{ij} = \cos\angle\big(PE_i, PE_j\big)\ \text{or}\ PE_i\!\cdot\!PE_j",  # one formula a line: readable at 390 px
             r"S_{ij} = \langle R_i q, R_j q\rangle,\qquad S_{ij} = b_h(j - i)"):
    st.latex(line)
st.latex(
    r"\text{deviation}(S) = \frac{\lVert S - T(S) \rVert_F}{\lVert S - \bar S \rVert_F}"
)

with st.expander("Bring your own table: compare an uploaded learned position table", icon=":material/upload_file:"):
    uploads.upload_widget(key="upload")
options = uploads.scheme_options()
label = lambda k: SCHEMES[k].name if k in SCHEMES else f"Uploaded: {uploads.upload_label(k)}"
keys = controls.multi("schemes (2 to 4)", "schemes", options, default=DEFAULT, format_func=label, max_selections=4,
                      help="Each scheme at the default parameters its own page starts from. The URL holds the display names.")
c1, c2, c3, c4 = st.columns(4)
n = controls.slider("sequence length n", "n", default=128, lo=8, hi=4096, container=c1)
d = controls.slider("d (d_model, or head_dim for RoPE)", "d", default=64, lo=4, hi=512, step=2, container=c2,
                    help="The learned MiniLM table is always 384 wide.")
metric = controls.choice("score of additive schemes", "metric", ["cosine", "dot"], default="cosine", container=c3,
                         help="RoPE always shows the q·k score of an all-ones probe; bias schemes the bias itself.")
head = controls.slider(f"bias head (of {HEADS})", "head", default=1, lo=1, hi=HEADS, container=c4,
                       help="ALiBi's slope depends on the head; T5 and NoPE are the same in every head.")

common = controls.choice("RoPE extensions at", "ext", ["common", "registry"], default="common",
                         format_func={"common": f"common settings (base {COMMON_ROTARY['base']:g}, s {COMMON_ROTARY['factor']:g}, "
                                                f"L {COMMON_ROTARY['original_max_position_embeddings']:,})",
                                      "registry": "each scheme's registry defaults"}.get) == "common"

if len(keys) < 2:
    st.info("Choose at least two schemes to compare them side by side.", icon=":material/info:")
def compute(k):
    if uploads.is_upload(k):
        return uploads.safe_table_call(table_similarity, uploads.upload_label(k), n, metric, name=label(k))
    return safe(scheme_similarity, k, n, d, metric, head - 1, params=common_params(k, common))


shown = [(k, r) for k in keys if (r := compute(k)) is not None]  # a scheme that cannot be measured here says why, above
results = [r for _, r in shown]

if results:
    for col, r in zip(st.columns(len(results)), results):
        ti = r["translation_invariance"]
        col.metric(f"{md.escape(r['name'])}: deviation from translation invariance",  # their count below 10⁻⁶ is the exercise
                   "—" if ti is None else quiz_value("similarity_relative", f"{ti:.3g}"),
                   help="‖S − T(S)‖ / ‖S − mean‖, T(S) = each diagonal's mean; 0 = depends on j − i only. " + r["ti_method"])
        if r["ti_note"]:
            col.caption(f"Not measured at this length: {r['ti_note']}")
    view = similarity_panel(results)
    steps = sorted({max(p["step"]) for p in view["panels"]})
    shown_cells = (f"Strided to at most {HEATMAP_CELLS:,} cells per matrix: one position in {' or '.join(map(str, steps))} "
                   "is shown, each cell an exact value." if steps != [1] else "Every cell is shown.")
    chart_grid(
        [style(p) for p in score_panels(view["frame"], view["panels"])],
        whole=lambda: style(score_matrices(view["frame"], view["panels"])),
        export_title=("Position scores S(i, j)", view["drawn_at"], shown_cells),
        key="similarity_matrices",
        data=view["frame"],
        arrays={f"scores_{k}": partial(full_scores, k, n, d, metric, head - 1, common_params(k, common))
                for k, _ in shown if not uploads.is_upload(k)},  # only the matrices drawn: each export can be built
        caption=(
            f"{md.escape(view['drawn_at'], limit=None)} One colour scale per unit ({', '.join(view['units'])}). "
            "Grey cells are masked (−inf): the causal mask hides keys after the query. T5's value is its bucket id, which names the learned scalar "
            f"a pair uses (posenc ships no trained T5 table). {shown_cells}"
        ),
    )
    methods = {md.escape(name): r["offset_method"] for name, r in zip(view["names"], results)}  # an upload's name is outside text
    chart(
        style(offset_profiles(view["offsets"], view["names"])),
        key="similarity_offsets",
        data=view["offsets"],
        export_title=("Score against the offset j − i", view["drawn_at"]),
        caption=(
            "Score against the offset j − i. "
            + "; ".join(f"{k}: {m}" for k, m in methods.items())
            + " (a relative scheme's diagonals are constant, so the two agree)."
            + (f" One offset in {results[0]['offset_step']} is drawn." if results[0]["offset_step"] > 1 else "")
        ),
    )
    rel = relative_count(results)
    exercise(
        "similarity_relative",
        "Predict from the diagonals of the matrices: of the schemes shown, how many have a deviation from translation "
        "invariance below 10⁻⁶, i.e. a score that depends only on the offset j − i? (The deviations at the top wait for the reveal.)",
        answer=rel["count"],
        explanation=f"Relative: {', '.join(map(md.escape, rel['relative'])) or 'none'}. Not relative: "
        + (", ".join(f"{md.escape(name)} ({ti:.3g})" for name, ti in rel["absolute"]) or "none")
        + (f". Not measured at this length: {', '.join(map(md.escape, rel['unmeasured']))}" if rel["unmeasured"] else "")
        + ". Along a diagonal an absolute scheme's score changes; a relative one's cannot.",
    )

show_code(scheme_similarity, position_scores, dense_scores, bias, offset_profile, translation_invariance)
wrap_up(PATH, similarity_takeaway(results, n, d, quote=md.escape))
