"""Attempt 3: add sin(omega t).  Bounded and smooth, but periodic: positions collide."""

from functools import partial

import streamlit as st

from posenc.analysis.geometry import closest_pair, collisions, count_close_pairs
from posenc.charts.base import style
from posenc.charts.story import sine_chart
from posenc.schemes.naive import single_sine
from posenc.ui import controls, motion
from posenc.ui.cache import safe
from posenc.ui.frame import chart, header, quiz, quiz_value, show_code, table, wrap_up
from posenc.ui.quiz import quiz_holds
from posenc.views import motion as moving
from posenc.views.reference import check_single_sine, single_sine_reference
from posenc.views.returns import return_after_leaving
from posenc.views.story import sine_shown, single_sine_view

PATH = "pages/single_sine.py"
EPS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1]

header(
    PATH,
    "Sine is bounded and smooth: every position lands in [−1, 1]. But it is periodic, so positions one "
    "period apart get the same number, and the model cannot tell them apart. **Look at the vermillion "
    "stems**: each one has another position within ε of it, a collision.",
)
st.latex(r"e'_t = e_t + \sin(\omega t)")
st.latex(r"\sin(\omega t) = \sin\!\big(\omega (t + 2\pi k/\omega)\big)\ \text{ for every integer } k")

c1, c2, c3 = st.columns(3)
omega = controls.slider("frequency ω (radians per position)", "omega", default=1.0, lo=0.05, hi=10.0, step=0.01, container=c1)
n = controls.slider("positions 0 … n−1", "n", default=64, lo=8, hi=512, container=c2)
eps = controls.select_slider("collision threshold ε", "eps", EPS, default=0.01, container=c3,
                             help="two positions collide when their values differ by at most ε")

view = safe(single_sine_view, omega, n, eps)
if view is not None:
    ident, close, q = view["identity"], view["closest"], view["quiz"]
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(f"sin(ω·{ident['t0']:g})", f"{ident['v0']:.8f}")
    m2.metric("sin(ω·(5 + 2π/ω))", f"{ident['v1']:.8f}",
              help=f"position {ident['t1']:.8g}; |difference| = {ident['diff']:.2g}: floating-point rounding of 2π, nothing more")
    m3.metric(f"pairs within ε = {view['eps']:g}", f"{view['n_pairs']:,}", help="every pair of positions, counted once")
    pair = f"{close['i']} and {close['j']}"
    m4.metric("closest pair", quiz_value(q["key"], pair) if q["gives_away"] else pair, delta=f"|difference| = {close['distance']:.3g}",
              delta_color="off", delta_arrow="off")
    fig = sine_shown(view, quiz_holds(q["key"]))  # until the reveal, no pair that returns to position 0 is named
    shown, ring = fig["pairs"], fig["ring"]
    chart(style(sine_chart(view["points"], view["curve"], shown, closest=ring or ())), key="single_sine",
          data=view["points"],
          caption=f"Stems: sin(ω t) at the integer positions; grey: the same sine between them (period 2π/ω = "
                  f"{view['period']:.4g} positions). {fig['sentence']}")
    st.markdown(
        f"Position {ident['t0']:g} and position {ident['t0']:g} + 2π/ω = {ident['t1']:.6g} get the same value, "
        f"{ident['v0']:.8f}: the same reading. **A single sine is the second hand of a clock**: after one turn the "
        "hand is back where it started, so you cannot tell whether one minute passed or two.")
    motion.play(moving.clock(omega, n), label="a clock hand turning at ω; its height is sin(ωt)",
                caption="Drag the slider or press play: the hand turns by ω per position, and the sine only reports its "
                        "height. Every reading repeats, once per turn and also on the way down.")
    if len(shown):  # none within ε, or none until the reveal: the caption says which
        with st.expander(f"The {len(shown)} closest colliding pair{'s' if len(shown) > 1 else ''}", icon=":material/table:"):
            table(shown, key="single_sine_pairs",
                  labels={"i": "position i", "j": "position j", "value_i": "sin(ω i)", "value_j": "sin(ω j)", "distance": "|difference|"},
                  formats={"value_i": ".6f", "value_j": ".6f", "distance": ".6f"})
    quiz(q)

show_code(single_sine_view, single_sine, return_after_leaving, collisions, closest_pair, count_close_pairs,
          reference=single_sine_reference, check=partial(safe, check_single_sine, omega, n, eps))
if view is not None:
    wrap_up(PATH, view["takeaway"])
