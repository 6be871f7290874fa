"""Learned absolute position tables: a real BERT-family table, its structure, and what is past row 511."""

from functools import partial

import streamlit as st

from posenc.analysis.spectrum import position_spectrum
from posenc.analysis.tables import table_scores
from posenc.charts.base import OKABE_ITO, style
from posenc.charts.learned import norms_chart, similarity_chart, spectrum_chart, table_heatmap_chart, vector_chart
from posenc.schemes.learned import learned_lookup, minilm_table, random_table
from posenc.ui import controls, md, uploads
from posenc.ui.cache import safe
from posenc.ui.frame import chart, exercise, header, show_code, table, wrap_up
from posenc.ui.section import section
from posenc.views.learned import (
    SOURCES,
    builtin_table,
    contrast_view,
    learned_row_at,
    learned_view,
    provenance,
    row_at,
    sinusoid_at,
    summary_row,
    table_series,
    table_view,
    with_upload,
)
from posenc.views.takeaways import learned_takeaway

PATH = "pages/learned.py"
header(
    PATH,
    "BERT and GPT-2 do not compute positions: they **look them up** in a trained table, one row per position. "
    "Here is a real one (512 rows × 384 channels) next to the sinusoid of the same size and an untrained random "
    "table. **Look at** the dark-blue band along the diagonal of the cosine-similarity matrix (right): the smoothness "
    "training left behind, and at what happens when you ask for row 512.",
)
st.latex(r"\begin{gathered}x_p = e_{t_p} + P[p] \\ P \in \mathbb{R}^{512 \times 384},\qquad p \in \{0, \dots, 511\}\end{gathered}")  # 390 px
prov = safe(provenance)
if prov is not None:
    st.caption(
        f":material/inventory_2: Bundled table: [{prov['model']}]({prov['url']}) ({prov['family']} family), tensor "
        f"`{prov['tensor']}`, {prov['shape'][0]} × {prov['shape'][1]}, licence {prov['licence']}; stored as "
        f"{prov['stored_dtype']} (checkpoint {prov['checkpoint_dtype']}, largest rounding error {prov['max_abs_rounding']:.2g})."
    )
with st.expander("Bring your own table (.npy / .safetensors)", icon=":material/upload_file:"):
    uploads.upload_widget(key="upload")

options = list(SOURCES) + uploads.upload_options()
c1, c2, c3 = st.columns([3, 1, 2])
source = controls.choice("table", "table", options, default="minilm", container=c1, style="select" if len(options) > 3 else "segmented",
                         format_func=lambda o: SOURCES.get(o, uploads.upload_label(o)))  # upload labels are long: a list
seed = controls.slider("seed (random table)", "seed", default=0, lo=0, hi=10_000, container=c2)
n = controls.select_slider("positions in the similarity matrix", "n", [64, 128, 256, 512, 1024, 2048], default=512, container=c3)

label = uploads.upload_label(source) if uploads.is_upload(source) else None
if label is not None:
    view = uploads.safe_table_call(table_view, label, n, name=label)
else:
    view = safe(learned_view, source, seed, n)
if view is not None:
    rows, d = view["shape"]
    m = st.columns(4)
    m[0].metric("rows × channels", f"{rows:,} × {d:,}")
    m[1].metric("median ‖row‖", f"{view['median_norm']:.4f}", help=f"row 0 has norm {view['norm_row0']:.4f}")
    m[2].metric("mean cos(row p, row p+1)", f"{view['neighbour_cosine']:.3f}")
    m[3].metric("median wavelength (positions)", f"{view['median_wavelength']:.1f}",
                help="half of the table's variation along positions has a longer wavelength than this (posenc.spectrum)")
    left, right = st.columns(2)
    with left:
        sr, sc = view["heat_step"]
        chart(style(table_heatmap_chart(view["heatmap"], step=view["heat_step"], clip=view["clip"])), key="learned_table",
              data=view["heatmap"], arrays=None if label else {"table": partial(builtin_table, source, seed)}, caption=(
                  f"One position in {sr} and one channel in {sc} are drawn (≤ 16,384 cells). Colours saturate at ±{view['clip']:.3g}, "
                  f"the 99.5th percentile of |value|; the largest, {view['max_abs']:.3g}, is at position "
                  f"{view['max_abs_at'][0]}, channel {view['max_abs_at'][1]}."))
    with right:
        chart(style(similarity_chart(view["similarity"], step=view["sim_step"])), key="learned_similarity",
              data=view["similarity"], caption=(
                  f"Cosine similarity of rows 0–{view['n_shown'] - 1}"
                  + (f" (the table has only {rows} rows)" if view["n_shown"] < view["n_requested"] else "")
                  + (f", one row and column in {view['sim_step']} drawn" if view["sim_step"] > 1 else "")
                  + f". Mean |cos| off the diagonal: {view['mean_abs_offdiag']:.3f}; two random directions in "
                  f"{d} dimensions give {view['random_abs_cosine']:.3f} on average (noise)."))

contrast = safe(contrast_view, seed)
if contrast is not None:
    up = uploads.safe_table_call(table_series, label, label) if label is not None else None
    norms = with_upload(contrast["norms"], None if up is None else up["norms"])
    spectrum = with_upload(contrast["spectrum"], None if up is None else up["spectrum"])
    summary = with_upload(contrast["summary"], None if up is None else summary_row(up, label))
    left, right = st.columns(2)
    with left:
        chart(style(norms_chart(norms)), key="learned_norms", data=norms,
              caption="Norm of the row added at each position. The sinusoid is √(d/2) everywhere; trained rows vary."
              + (f" Your table: one position in {up['norm_step']} drawn." if up is not None and up["norm_step"] > 1 else ""))
    with right:
        chart(style(spectrum_chart(spectrum)), key="learned_spectrum", data=spectrum,
              caption="**Share of variation**: how much of the change from row to row happens at each wavelength — the "
                      "power spectrum along positions as a fraction of its total (channel means removed; scipy.fft, averaged "
                      "over channels). Trained rows are smooth: their share sits at long wavelengths; noise is flat."
                      + (f" Your table: {up['spectrum_points']:,} log-spaced frequencies drawn."
                         if up is not None and up["spectrum_thinned"] else ""))
    table(summary, key="learned_summary", labels={"median_norm": "median ‖row‖", "median_wavelength": "median wavelength",
                           "low_share": "share at wavelength ≥ 32", "neighbour_cosine": "mean cos(p, p+1)"},
          formats={"median_norm": ".4f", "median_wavelength": ".1f", "low_share": ".3f", "neighbour_cosine": ".3f"})

st.subheader("Past its last row", anchor=False)
@section(PATH)
def row_section(label, source: str, seed: int, width: int) -> None:
    """The position slider reruns only this section: one row of the table beside the sinusoid there."""
    position = controls.slider("position", "position", default=512, lo=0, hi=4096)
    row = uploads.safe_table_call(row_at, label, position) if label is not None else safe(learned_row_at, source, seed, position)
    sine = safe(sinusoid_at, position, width)
    left, right = st.columns(2)
    with left:
        if row is not None and not row["defined"]:
            st.warning(f"**No row {position}.** {md.escape(row['message'], limit=300)}. The table was trained with positions "
                       "0 … max_len − 1 only; there is nothing to add, so a model must refuse or crash here.",
                       icon=":material/block:")
        elif row is not None:
            st.metric(f"‖row {position}‖ of the table", f"{row['norm']:.4f}")
            chart(style(vector_chart(row["frame"], title="the table's row at this position")), key="learned_row", data=row["frame"],
                  export_title=(f"table row {position}",))
    with right:
        if sine is not None:
            st.metric(f"‖sinusoid at {position}‖ = √(d/2)", f"{sine['norm']:.4f}")
            chart(style(vector_chart(sine["frame"], title="the sinusoid here (defined everywhere)", color=OKABE_ITO[1])),
                  key="learned_sinusoid_at", data=sine["frame"], export_title=(f"sinusoid at position {position}",))


row_section(label, source, seed, view["shape"][1] if view is not None else 384)

if view is not None and view["first_below"] is not None:
    exercise(
        "first_below",
        f"In this table ({md.escape(SOURCES.get(source, label))}), row 1 is compared with rows 2, 3, 4, … At which position does "
        "the cosine similarity to row 1 first drop below 0.5?",
        answer=view["first_below"],
        explanation=f"Computed from the same rows as the similarity matrix. Row 0 is an outlier in BERT tables "
        f"(it is [CLS]'s row): here cos(row 0, row 1) = {view['cos_01']:.3f}. Trained rows drift slowly, "
        "the sinusoid drifts slower still, random rows are unrelated from the start.",
    )
show_code(learned_view, table_view, table_series, row_at, position_spectrum, table_scores, learned_lookup, random_table, minilm_table)
wrap_up(PATH, learned_takeaway(view))
