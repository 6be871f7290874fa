"""RoPE: rotate queries and keys; the score depends only on the offset."""

from functools import partial

import streamlit as st

from posenc.charts.base import style
from posenc.charts.compare import offset_profiles, score_matrices, score_panels
from posenc.charts.rope import decay_chart, layout_chart, rotation_chart, rounding_chart
from posenc.registry import get_scheme
from posenc.schemes.rotary import apply_rope, pair_permutation, rope_decay_bound, rope_offset_scores
from posenc.schemes.scaling import default_inv_freq
from posenc.ui import controls, motion
from posenc.ui.cache import safe
from posenc.ui.frame import chart, chart_grid, exercise, header, quiz_value, show_code, table, when_open, wrap_up
from posenc.ui.quiz import quiz_drop, quiz_figure
from posenc.ui.section import section
from posenc.views import motion as moving
from posenc.views.reference import check_rope, rope_reference
from posenc.views.rope import decay_view, hello_rope, layout_view, rotation_view, shift_rounding_view, xpos_view
from posenc.views.similarity import side_by_side
from posenc.views.takeaways import rope_takeaway

PATH = "pages/rope.py"
DIMS = list(range(4, 513, 2))  # even only: RoPE rotates channel pairs
DISTANCES = [256, 1000, 2000, 5000, 10_000, 20_000, 50_000]
XPOS_N = 1024  # positions for the xPos comparison: offsets -1023 .. 1023

header(
    PATH,
    "RoPE adds nothing to the token. It **rotates** every pair of query and key channels by an angle "
    "proportional to the position, so a query at m and a key at n meet at a relative rotation n − m: the "
    "score depends only on the offset. **Look at** the two scores in section 1: shifting both tokens changes neither.",
)
st.latex(r"\begin{gathered}" + get_scheme("rope").formula + r" \\ \langle R_m q,\, R_n k\rangle = q^\top R_{n-m}\, k\end{gathered}")  # 390 px


@section(PATH)
def hello_section() -> None:
    """The bridge from the sinusoid: the article's Hello World at d = 4, rotated instead of added."""
    st.subheader("0 · Hello World, rotated instead of added", anchor=False)
    st.markdown("The sinusoid page ended with M_k: PE(p + k) = M_k·PE(p). RoPE uses the same block rotations on the query "
                "and the key instead of adding PE. The article's “Hello World” at d = 4 (word embeddings [0.1, 0.2, 0.3, 0.4] "
                "and [0.5, 0.6, 0.7, 0.8]; pair 0 turns 1 radian per position, pair 1 0.01): World at 1 is the query, Hello "
                "at 0 the key. **Look at the two scores**: move both words and the rotated score stays, the added one moves.")
    s = controls.number("move both words by", "hshift", default=100, lo=1, hi=10_000_000, container=st.columns(4)[0])
    if (hw := safe(hello_rope, s)) is None:
        return
    table(hw["frame"], key="rope_hello_words")
    table(hw["scores"], key="rope_hello_scores", formats={"rotated": ".6f", "added": ".6f"},
          labels={"pair": "positions", "rotated": "score q·k, rotated (RoPE)", "added": "score with PE added"})
    st.markdown(f"Rotated: the two scores differ by **{hw['same']:.1e}** (float64 rounding). Added: they differ by "
                f"**{hw['moved']:.4f}**: the added vectors carry absolute positions into the score.")
    icon = ":material/check_circle:" if hw["check"]["ok"] else ":material/error:"
    st.caption(f"{icon} Checked live at {hw['check']['settings']}: {hw['check']['what']}, largest difference "
               f"{hw['check']['max_diff']:.1e} (the reference is in “The code behind this page” below).")


hello_section()

c = st.columns(4)
d = controls.select_slider("head_dim d", "d", DIMS, default=128, container=c[0])
base = controls.number("base b", "base", default=10000.0, lo=2.0, hi=1e9, step=1000.0, container=c[1])
probe = controls.choice("probe q, k", "probe", ["random", "ones"], default="random", container=c[2],
                        help="random: seeded standard-normal q (seed) and k (seed + 1); ones: q = k = all ones")
seed = controls.number("seed", "seed", default=0, lo=0, hi=10_000, container=c[3])

st.subheader("1 · The rotation: shift both, the score stays", anchor=False)
c = st.columns([1, 1, 1, 1, 1.4])
pair = controls.slider("pair index i", "pair", default=0, lo=0, hi=d // 2 - 1, container=c[0])
m = controls.number("query position m", "m", default=5, lo=0, hi=10_000_000, container=c[1])
n = controls.number("key position n", "n", default=2, lo=0, hi=10_000_000, container=c[2])
shift = controls.number("shift s", "shift", default=100, lo=0, hi=10_000_000, container=c[3])
layout = controls.choice("pairing", "layout", ["half_split", "interleaved"], default="half_split", container=c[4])

rot = safe(rotation_view, d, base, layout, probe, seed, pair, m, n, shift)
if rot is not None:
    left, right = st.columns([1, 1])
    with left:
        chart(style(rotation_chart(rot["arrows"], rot["orbits"], radius=rot["radius"], size=280)), key="rope_rotation",
              data=rot["arrows"], width="content",
              caption=f"Pair {pair} = channels {' and '.join(map(str, rot['channels']))}; it turns θ = {rot['theta']:.6g} rad per position "
                      f"(wavelength {rot['wavelength']:,.5g}). Faint circles: one full turn of q and of k.")
    with right:
        st.metric("score at (m, n)", f"{rot['score']:.12g}", help="⟨R_m q, R_n k⟩ over all d channels (apply_rope, then the dot product)")
        st.metric("score at (m + s, n + s)", f"{rot['score_shifted']:.12g}")
        st.metric("|difference|", f"{rot['difference']:.2g}", help="float64 rounding: the rotation itself is exact")
        st.metric("angle q → k in this pair", f"{rot['angle']:.10f} rad", help=f"after the shift: {rot['angle_shifted']:.10f} rad")
        st.caption(f"Both tokens moved by {shift:,} positions, yet the score is the same to {rot['difference']:.1e}: the "
                   f"pair's contribution {rot['pair_score']:.6g} and the angle between the arrows (solid → dashed) are "
                   "unchanged, because only n − m enters.")
    if (spin := safe(moving.rope_spin, d, base, layout, probe, seed, pair, m, n)) is not None:  # moving: s = 0 .. one turn, in the browser
        motion.play(spin, label="the query and key arrows of one RoPE pair turning together",
                    caption=f"Drag the slider or press play: q at m + s and k at n + s for s over one turn of pair {pair}. "
                            "Both arrows turn, the angle between them stays, and so does the full score in the readout.")

@section(PATH)
def rounding_section(d: int, base: float, layout: str, probe: str, seed: int, m: int, n: int) -> None:
    """The rounding left in the shifted score, as the shift grows: asked, then drawn (a reveal reruns only this)."""
    if (rnd := safe(shift_rounding_view, d, base, layout, probe, seed, m, n)) is None:
        return
    grows, stays = "It grows: over 100× larger at s = 10⁷", "It stays within 100× of the change at s = 1"
    exercise("rope_rounding", f"The rotation is exact; only float64 rounding changes the shifted score. Shift both tokens (from m = {m:,}, "
             f"n = {n:,}) by s = 1 and by s = 10⁷: does that rounding change grow with the shift?", options=[grows, stays],
             answer=grows if rnd["grows"] else stays, explanation=f"Computed (RMS over 16 shifts each): {rnd['first']:.2g} at s = 1 and "
             f"{rnd['last']:.2g} at s = 10⁷, {rnd['ratio']:,.3g}×. The angle (m + s)·θ is rounded to 2⁻⁵³ of itself, so its error grows with "
             "the position; with m = n both angles round alike and cancel, and a large m or n starts large. In float32, as models compute "
             "it, the error is about 2²⁹ (5·10⁸) times larger: see Precision.")
    if quiz_figure("rope_rounding", "rope_rounding", "rms"):
        chart(style(rounding_chart(rnd["frame"])), key="rope_rounding", data=rnd["frame"],
              caption=f"d = {d}, base {base:g}, {probe} q and k, m = {m:,}, n = {n:,}: the RMS |score change| over the "
                      "shifts s .. s + 15 in each decade. Zeros (an exact match) are not drawn on the log axis.")
    else:
        st.caption(":material/visibility_off: The chart of the change against the shift appears when you reveal the exercise above.")


rounding_section(d, base, layout, probe, seed, m, n)
st.subheader("2 · Score against distance, and RoFormer's decay bound", anchor=False)
@section(PATH)
def decay_section(d: int, base: float, probe: str, seed: int) -> None:
    """The largest distance reruns only this section (and its exercise)."""
    maxd = controls.select_slider("largest distance", "maxdist", DISTANCES, default=5000)  # plain integers: links say maxdist=20000
    if (dec := safe(decay_view, d, base, probe, seed, maxd)) is None:
        return
    k1, k2, k3 = st.columns(3)
    k1.metric("bound at distance 0", quiz_value("rope_bound0", f"{dec['bound0']:.6g}"), help="mean(1 .. d/2): every phase is 1 at distance 0")
    k2.metric("probe score at 0, |q|²", f"{dec['score0']:.6g}")
    k3.metric("first distance where the bound rises", "never" if dec["first_rise"] is None else f"{dec['first_rise']:,}")
    sampled = "every distance" if dec["step"] == 1 else f"every {dec['step']}th distance ({dec['n_points']:,} points)"
    rises = "; ".join(f"{b1:.4g} at {d1:,} → {b2:.4g} at {d2:,}" for d1, b1, d2, b2 in dec["rises"]) or "none in the table"
    bound0 = quiz_value("rope_bound0", f"{dec['bound0']:.4g}")  # the exercise below asks for it
    frame = dec["frame"] if quiz_figure("rope_bound0", "rope_decay", "value") else dec["asked_frame"]  # raw values: after the reveal
    chart(style(decay_chart(frame)), key="rope_decay", data=frame,
          caption=f"Each curve is divided by its value at distance 0 (the bound by {bound0}, the score by "
                  f"|q|² = {dec['score0']:.4g}) so both fit one axis; drawn at {sampled}. The bound limits "
                  r"$|\sum_i h_i e^{\mathrm{i}(n-m)\theta_i}|$ for any q, k up to a factor $\max_i |h_{i+1} - h_i|$; it is not this probe's score. "
                  f"It decays with oscillation and is not monotone — rises in the table: {rises}.")
    table(quiz_drop("rope_bound0", dec["table"], "bound"), key="rope_decay", height=250,
          labels={"bound_rel": "bound / bound(0)", "score_rel": "probe score / |q|²"},
          formats={"distance": ",", "bound": ".4f", "bound_rel": ".4f", "score_rel": ".4f"})
    exercise("rope_bound0", f"What is RoFormer's relative decay bound at distance 0 for d = {d}?",
             answer=round(dec["bound0"], 4), tolerance=0.01,
             explanation="At distance 0 every phase is 1, so |S_j| = j and the bound is mean(1 .. d/2) = (d/2 + 1)/2.")


decay_section(d, base, probe, seed)

st.subheader("3 · Two pairings, one map", anchor=False)
if (lay := safe(layout_view, d, base, probe, seed, m)) is not None:
    k1, k2, k3 = st.columns(3)
    k1.metric("max |interleaved(q) − half-split(q[P])[P⁻¹]|", f"{lay['rotate_maxdiff']:.2g}", help=f"at position m = {lay['position']:,}")
    k2.metric("max |score difference|, channels permuted", f"{lay['score_maxdiff']:.2g}")
    k3.metric("…same channels, not permuted", f"{lay['unpermuted_maxdiff']:.4g}")
    chart(style(layout_chart(lay["frame"])), key="rope_layouts", data=lay["frame"],
          caption="Half-split pairs channel i with i + d/2 (GPT-NeoX, HF Llama); interleaved pairs 2i with 2i + 1 (RoFormer, GPT-J, "
                  "Meta Llama). With q and k re-ordered by P = pair_permutation(d) the dashed curve lies exactly on the blue one; without "
                  "it the scores differ — which is why converting Meta's Llama weights to HF permutes the rows of W_q and W_k.")
    if (pairs := when_open("Every pair: its channels in both layouts, θ and wavelength", key="rope_pairs", icon=":material/table:")) is not None:
        with pairs:
            table(lay["pairs"], key="rope_pairs", height=220, formats={"theta": ".6g", "wavelength": ".5g"},
                  labels={"theta": "θ (rad/position)", "half_split": "half-split channels", "interleaved": "interleaved channels"})

st.subheader("4 · xPos: the same rotation, plus a decay", anchor=False)
st.latex(get_scheme("xpos").formula)
@section(PATH, box=("Measured: the score against the offset, RoPE beside xPos", "rope_xpos_box"))
def xpos_section(d: int) -> None:  # sections 4-6 are drawn only while their boxes are open: a first paint and a new d skip them
    if (xp := safe(xpos_view, d, XPOS_N)) is not None:
        chart(style(offset_profiles(xp["offsets"], xp["names"])), key="rope_xpos", data=xp["offsets"],
              caption=f"q·k of an all-ones probe against the offset j − i, both at base 10000 and d = {d}. xPos scales the query by "
                      "ζ^(n/512) and the key by ζ^(−m/512), so every pair's term is multiplied by ζ_i^(−(j−i)/512): past keys (j < i) fade, "
                      f"the fast pairs fastest; the score still depends on j − i (deviation from translation invariance "
                      f"{xp['translation_invariance']:.1g}).")

xpos_section(d)

st.subheader("5 · p-RoPE: let the slowest pairs stand still", anchor=False)
st.latex(get_scheme("p_rope").formula)
@section(PATH, box=("Measured: p, the pairs that turn, and the score against the offset", "rope_p_box"), opens_with=("p_rope_p",))
def p_rope_section(d: int) -> None:
    """p reruns only this section."""
    p = controls.param({s.name: s for s in get_scheme("p_rope").params}["p"], key="p_rope_p")
    if (view := safe(side_by_side, ("rope", "p_rope"), XPOS_N, d, "dot", 0, params=(("p_rope", (("p", p),)),))) is not None:
        turn = view["facts"][1]["rotating_pairs"]
        m = st.columns(2)
        m[0].metric("pairs that rotate", f"{turn[0]} of {turn[1]}")
        m[1].metric("score at the farthest offset: RoPE → p-RoPE", f"{view['facts'][0]['far']:.4g} → {view['facts'][1]['far']:.4g}")
        chart(style(offset_profiles(view["offsets"], view["names"])), key="rope_p_rope", data=view["offsets"],
              caption=f"q·k of an all-ones probe against the offset, base 10000, d = {d}. p-RoPE (Barbero et al. 2024) keeps the fastest "
              f"p = {p:g} of the pairs and sets θ = 0 on the rest: Hugging Face's rope_type 'proportional' (Gemma 4) is the same rotation. "
              "**Look at** the gap between the curves: each still pair adds exactly 2 at every offset, where RoPE's slowest pairs drift "
              "slowly (within a thousand positions they barely turn, so the gap is small here and grows with distance). Barbero et al. "
              "find trained models using those pairs as semantic channels; p-RoPE makes them exact, and the score stays a function of j − i.")

p_rope_section(d)

st.subheader("6 · Randomized positions: train on the positions a long sequence will use", anchor=False)
st.latex(get_scheme("rope_randomized").formula)
@section(PATH, box=("Measured: the range N, a seed, and the score matrices beside RoPE's", "rope_rand_box"), opens_with=("rand_N", "rand_seed"))
def randomized_section(d: int) -> None:
    """The range N and its seed rerun only this section."""
    c = st.columns(2)
    N = controls.select_slider("range N", "rand_N", [128, 512, 2048, 8192], default=2048, container=c[0])
    seed = controls.number("seed", "rand_seed", default=0, lo=0, hi=10_000, container=c[1])
    view = safe(side_by_side, ("rope", "rope_randomized"), 128, d, "dot", 0, params=(("rope_randomized", (("max_len", N), ("seed", seed))),))
    if view is not None:
        m = st.columns(2)
        for col, f in zip(m, view["facts"]):
            col.metric(f"{f['name']}: deviation from translation invariance", f"{f['translation_invariance']:.3g}")
        chart_grid([style(q) for q in score_panels(view["frame"], view["panels"])],
                   whole=lambda: style(score_matrices(view["frame"], view["panels"])), key="rope_randomized", data=view["frame"],
                   caption=f"q·k of an all-ones probe for 128 tokens, d = {d}. Ruoss et al. (2023) give each sequence a sorted random "
                   f"subset of [0, N) as its positions (here N = {N:,}, seed {seed}), in training and in evaluation alike, so a model "
                   "trained on short sequences has seen the large positions a long one needs. **Look at** the diagonals: the gaps vary, "
                   "so the score is no longer a function of j − i (at N = 128 every position is drawn and the matrices agree).")

randomized_section(d)

show_code(hello_rope, rotation_view, decay_view, layout_view, apply_rope, rope_offset_scores, rope_decay_bound, pair_permutation, default_inv_freq,
          reference=rope_reference, check=partial(safe, check_rope, d, base, layout, probe, seed, (m, n, m + shift, n + shift)))
wrap_up(PATH, rope_takeaway(rot, d, base))
