"""Page 6: the sinusoid -- many frequencies, the wavelengths, Hello World, PE(p+k) = M_k PE(p), why 10000."""

from functools import partial

import streamlit as st

from posenc.analysis.geometry import collisions, frequency_spectrum, shift_operator
from posenc.analysis.scores import offset_profile
from posenc.charts.base import style
from posenc.charts.sinusoid import bases_chart, clock_chart, dot_chart, pe_heatmap, shift_chart, spectrum_chart
from posenc.registry import get_scheme
from posenc.schemes.sinusoidal import sinusoid_shift_matrix, sinusoid_wavelengths, sinusoidal
from posenc.ui import controls, motion
from posenc.ui.cache import safe
from posenc.ui.frame import asked_above, chart, header, quiz, quiz_value, show_code, table, wrap_up
from posenc.ui.quiz import quiz_figure
from posenc.ui.section import section
from posenc.views import clock as cv
from posenc.views import motion as moving
from posenc.views import sinusoid as v
from posenc.views import why_base as wbv
from posenc.views.reference import check_sinusoid, sinusoid_reference

PATH = "pages/sinusoid.py"
SCHEME = get_scheme("sinusoidal")

header(
    PATH,
    "One wave repeats; many waves at geometrically spaced speeds almost never line up twice. Each pair of "
    "columns is a sine and a cosine of the same frequency, from one turn every 2π positions down to one "
    "every ~2π·base. **Look at the left edge of the heatmap** (fast columns flicker) against the right (slow ones barely move).",
)
for line in SCHEME.formula.split(r",\;"):  # the registry's formula, one equation per line
    st.latex(line.strip())
st.latex(r"i = 0, \dots, \tfrac{d}{2} - 1")
c1, c2, c3, c4 = st.columns([1, 1, 1, 1.3])
d = controls.select_slider("d_model", "d", v.EVEN_D, default=128, container=c1, help="even: columns come in sin/cos pairs")
n = controls.slider("sequence length n", "n", default=128, lo=2, hi=v.MAX_N, container=c2)
spec = {s.name: s for s in SCHEME.params}
base = controls.param(spec["base"], container=c3)
layout = controls.param(spec["layout"], container=c4)

st.subheader("The heatmap: position × depth")
st.markdown("Red is −1, blue is +1. Moving down one row advances every column's angle by its own ω_i.")
hm = safe(v.heatmap_view, n, d, base, layout)
if hm is not None:
    m1, m2, m3 = st.columns(3)
    m1.metric("values drawn in the heatmap", f"{hm['cells']:,} of {hm['total']:,}",
              help="One value per position and channel, n × d in all. Above the drawing budget only every k-th row and column "
                   "is drawn (the caption says which); each drawn value is exact, none is averaged.")
    m2.metric("max |PE| over all n × d", f"{hm['max_abs']:.4f}")
    m3.metric("‖PE(p)‖ at every position", f"{hm['norm_max']:.4f}",
              help=f"min {hm['norm_min']:.12f}, max {hm['norm_max']:.12f}; √(d/2) = {hm['sqrt_half_d']:.12f}")
    chart(style(pe_heatmap(hm["frame"])), key="sinusoid_heatmap", data=hm["frame"], caption=hm["caption"],
          arrays={"pe_shown": hm["shown"], "pe": partial(v.full_encoding, n, d, base, layout)})
    motion.play(moving.sweep(hm["shown"], hm["rows"], hm["cols"]), label="the heatmap with one row highlighted, and that row as bars",
                caption="Sweep down the rows: each position's row is its fingerprint. The fast columns on the left change at "
                        "every step; the slow ones on the right hardly move, yet no two rows are the same.")

st.subheader("The wavelengths")
st.latex(r"\lambda_i = \frac{2\pi}{\omega_i} = 2\pi\, b^{2i/d}")
st.latex(r"\lambda_0 = 2\pi,\qquad \lambda_{\max} = 2\pi\, b^{(d-2)/d} < 2\pi b")
st.markdown("Each dot is one sin/cos pair; vermillion dots complete a full turn inside the chosen length, so on "
            "their own they repeat within it; the blue ones do not.")
@section(PATH)
def spectrum_section(d: int, base: float, n: int, layout: str) -> None:
    """The wavelengths and their exercise: revealing the answer reruns only this section."""
    sp = safe(v.spectrum_view, d, base, n, layout)
    if sp is None:
        return
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("shortest wavelength", f"{sp['shortest']:,.4f}", help="2π, pair 0")
    m2.metric("longest wavelength", quiz_value("longest", v.fmt_length(sp["longest"])), help="2π·base^((d−2)/d), the last pair")
    m3.metric("2π·base (the limit)", v.fmt_length(sp["limit"]), help="never reached at finite d")
    m4.metric(f"pairs turning fully within n = {sp['n']:,}", f"{sp['full_turns']} of {sp['pairs']}")
    whole = quiz_figure("longest", "sinusoid_spectrum", "wavelength")  # the slowest pair's wavelength is the answer
    frame = sp["frame"] if whole else sp["asked_frame"]
    chart(style(spectrum_chart(frame, sp["marks"], last=sp["pairs"] - 1)), key="sinusoid_spectrum", data=frame,
          caption=sp["caption"] + ("" if whole else sp["asked_note"]))
    quiz(sp["quiz"])


spectrum_section(d, base, n, layout)


@section(PATH)
def clock_section() -> None:
    """The article's wavelengths (d = 512) in words, and the clock whose hands are three channel pairs."""
    st.markdown("**At the article's setting, d = 512 and base 10000: a mixed-radix clock.** Fast pairs are the seconds "
                "hand, middle ones the minutes, the slowest the hours.")
    p = controls.slider("clock: position p", "clock", default=100, lo=0, hi=cv.MAX_POSITION)
    ck = safe(cv.clock_view, p)
    if ck is None:
        return
    st.markdown(ck["words"])
    chart(style(clock_chart(ck["frame"], ck["dial"])), key="sinusoid_clock", data=ck["frame"], caption=ck["caption"],
          width="content")


clock_section()

st.subheader("Worked example: “Hello World” at d_model = 4")
st.latex(r"x_{pos} = e_{pos} + PE_{pos}")
st.markdown("Type words; each gets the position vector of its place (0, 1, 2, …) added to its word embedding. "
            "Compare the columns: dimensions 0–1 jump between neighbours, dimensions 2–3 barely move.")
words = controls.text("words", "words", default="Hello World", max_chars=120)
ws = safe(v.split_words, words)
if ws is not None:
    boxes = st.columns(4)
    embs = tuple(controls.text(f"embedding of “{w}” (position {i})", f"e{i}", default=v.default_embedding(i), max_chars=80,
                               container=boxes[i % 4], help="4 numbers separated by commas; blank = zero embedding")
                 for i, w in enumerate(ws))
    we = safe(v.worked_example, words, embs)
    if we is not None:
        table(we["frame"], key="sinusoid_word_position")
        st.caption(we["caption"])
        with st.expander("Full precision", icon=":material/pin:"):
            table(we["full"], key="sinusoid_full_precision", formats={"embedding": ".12f", "PE": ".12f", "sum": ".12f"})
        quiz(we["quiz"])

st.subheader("Relative by rotation: PE(p + k) = M_k · PE(p)")
st.markdown("The paper: *“for any fixed offset k, PE_{pos+k} can be represented as a linear function of PE_pos.”* "
            "Here the linear map is fitted from the encodings alone and set beside its closed form; "
            "look for 2 × 2 rotation blocks on the diagonal and nothing elsewhere.")
st.latex(r"M_k = \operatorname{diag}_i \begin{pmatrix} \cos k\omega_i & \sin k\omega_i \\ -\sin k\omega_i & \cos k\omega_i \end{pmatrix}")
@section(PATH)
def shift_section(base: float) -> None:
    """The fitted M_k beside its closed form: k and the small d rerun only this section."""
    c1, c2 = st.columns(2)
    k = controls.slider("offset k", "k", default=7, lo=0, hi=v.MAX_N, container=c1)
    sd = controls.select_slider("d for M_k (small, to read it)", "sd", v.SHIFT_D, default=8, container=c2)
    sh = safe(v.shift_view, k, sd, base)
    if sh is None:
        return
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("residual max |PE(p+k) − M_k PE(p)|", f"{sh['residual']:.1e}")
    m2.metric("orthogonality max |M Mᵀ − I|", f"{sh['orthogonality']:.1e}")
    m3.metric("largest entry off the 2×2 blocks", f"{sh['off_block']:.1e}")
    m4.metric("max |fitted − closed form|", f"{sh['max_diff']:.1e}")
    arrays = {"M_fitted": sh["M"], "M_closed": sh["closed"]}
    for col, (name, part) in zip(st.columns(2), sh["frame"].groupby("matrix", sort=False)):
        with col:
            chart(style(shift_chart(part)), key=f"sinusoid_shift_{'fit' if 'fitted' in name else 'closed'}", data=part, arrays=arrays,
                  width="content")
    st.caption(sh["caption"])


shift_section(base)
st.markdown("**The next step: rotate q and k by M instead of adding PE.** M_k turns PE(p) into PE(p + k) with no "
            "reference to p. Rotary embeddings (RoPE) apply the same block rotations to the query and the key themselves, "
            "q at position m by M_m and k at position n by M_n, so their dot product sees only M_{n−m}:")
st.latex(r"(M_m q)^\top (M_n k) = q^\top M_m^\top M_n k = q^\top M_{n-m}\, k")
st.page_link("pages/rope.py", label="RoPE: this rotation on q and k (d = 4)", icon=":material/rotate_right:")

st.subheader("Uniqueness, and why 10000")
st.markdown("The same measurement for every base from 10 to 10⁸ at the chosen n and d: how fast the pairs turn, "
            "how far apart neighbours are, whether two distant positions come closer than neighbours, and how the "
            "dot product PE(p)·PE(p+k) falls with the distance k.")
st.latex(r"\lVert PE(p+k) - PE(p) \rVert^2 = d - 2\sum_i \cos k\omega_i")
wb = safe(wbv.why_base_view, n, d, base, layout)
if wb is not None:
    cp = wb["closest"]
    m1, m2, m3 = st.columns(3)
    m1.metric(f"closest-pair distance among {n:,} positions", f"{cp['distance']:.6f}")
    m2.metric("closest pair", f"{cp['i']:,} and {cp['j']:,}")
    m3.metric("their offset j − i", f"{cp['offset']:,}")
    st.info(wb["conclusion"], icon=":material/lightbulb:")
    table(asked_above(wb["table"], [(wb["chosen_row"], wbv.LONGEST)], "the exercise above"), key="sinusoid_bases")
    left, right = st.columns(2)
    with left:
        chart(style(dot_chart(wb["dots"], order=wb["dot_series"])), key="sinusoid_dots", data=wb["dots"],
              export_title=("PE(p)·PE(p+k) / (d/2) for each base", wb["settings"]),
              caption=f"PE(p)·PE(p+k) against the distance k, divided by its value d/2 at k = 0; your base "
                      f"({wb['your_base']}) is the thick line, the dashed line is one half.")
    with right:
        quiz_figure("longest", "sinusoid_bases", "wavelength")  # drawn without the answer, revealed or not (wbv.why_base_view)
        chart(style(bases_chart(wb["lines"], n=n, order=wb["line_series"])), key="sinusoid_bases", data=wb["lines"],
              export_title=("The wavelengths of every pair, for each base", wb["settings"]),
              caption=f"The wavelengths of all d/2 pairs for each base, your base ({wb['your_base']}) thick. Below the dashed "
                      "line (n) a pair turns fully inside the sequence. No point sits at your base's slowest wavelength, the exercise above.")
    st.caption(wb["caption"])

show_code(v.heatmap_view, sinusoidal, v.spectrum_view, cv.clock_view, frequency_spectrum, sinusoid_wavelengths, v.worked_example, v.shift_view,
          shift_operator, sinusoid_shift_matrix, wbv.why_base_view, wbv.measure_base, collisions, offset_profile,
          reference=sinusoid_reference, check=partial(safe, check_sinusoid, n, d, base, layout))
story = safe(wbv.sinusoid_story, n, d, base, layout)
if story is not None:
    wrap_up(PATH, story)
