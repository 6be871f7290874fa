"""Attempt 4: one sin+cos pair.  A point on the unit circle: unique within a turn, not across turns."""

from functools import partial

import streamlit as st

from posenc.analysis.geometry import closest_pair, collisions, count_close_pairs
from posenc.charts.base import style
from posenc.charts.story import circle_chart, closest_curve_chart
from posenc.schemes.naive import unit_circle_points
from posenc.ui import controls, motion
from posenc.ui.cache import safe
from posenc.ui.frame import chart, header, quiz, quiz_value, show_code, wrap_up
from posenc.ui.quiz import quiz_holds
from posenc.views import motion as moving
from posenc.views.circle import circle_shown, circle_view
from posenc.views.reference import check_sincos, sincos_reference
from posenc.views.returns import return_after_leaving

PATH = "pages/sincos_pair.py"
EPS = [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2]
N_MAX = [100, 1_000, 10_000, 100_000]

header(
    PATH,
    "Add a small vector instead of one number: [sin ωt, cos ωt] is a point on the unit circle that turns as t "
    "grows. Sine alone gave only the height; the pair also gives the horizontal place, the full angle, so "
    "**within one turn every position is a different point**. After a full turn (2π) the point comes back, "
    "and across many turns positions crowd together.",
)
st.latex(r"PE(t) = \big[\sin(\omega t),\ \cos(\omega t)\big]")
st.latex(r"\lVert PE(t) - PE(s) \rVert = 2\,\big|\sin\!\big(\tfrac{\omega (t - s)}{2}\big)\big|")

c1, c2, c3, c4 = st.columns(4)
omega = controls.slider("frequency ω (radians per position)", "omega", default=1.0, lo=0.05, hi=10.0, step=0.01, container=c1)
n = controls.slider("positions on the circle, 0 … n−1", "n", default=40, lo=2, hi=2048, container=c2,
                    help="the default stops short of the exercise's answer; drag past it to check")
n_max = controls.select_slider("longest context for the curve", "nmax", N_MAX, default=10_000,
                               format_func=lambda v: f"{v:,}", container=c3)
eps = controls.select_slider("collision threshold ε", "eps", EPS, default=0.1, container=c4)

view = safe(circle_view, omega, n, n_max, eps)
if view is not None:
    close, turn, q = view["closest"], view["turn_closest"], view["quiz"]
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("positions per turn ⌈2π/ω⌉", f"{view['per_turn']:,}")
    m2.metric("closest pair within the first turn",
              f"{turn['distance']:.4f}" if turn else "—", help="one position per turn: nothing to compare" if not turn else
              f"positions {turn['i']} and {turn['j']}: distinct points, never closer than this")
    where = f"positions {close['i']} and {close['j']}"
    m3.metric("closest pair among positions 0 … n−1", f"{close['distance']:.4g}",
              delta=quiz_value(q["key"], where) if q["gives_away"] else where, delta_color="off", delta_arrow="off")
    m4.metric("pairs within ε", f"{close['pairs_within_eps']:,}", delta=f"one sine alone: {view['sine_pairs']:,}",
              delta_color="off", delta_arrow="off", help="the same positions as points on the circle, and as sin(ωt) alone")
    left, right = st.columns([1, 1])
    fig = circle_shown(view, quiz_holds(q["key"]))  # until the reveal, no figure names a return to position 0
    with left:
        labels = ", ".join(str(p) for p in fig["labelled"])
        chart(style(circle_chart(fig["points"], view["outline"], size=280)), key="unit_circle", data=fig["points"], width="content",
              caption=f"Labelled: positions {labels} (the first turn, at most 16 of it, and the closest pair{fig['label_note']}); "
                      "hover any point for its position. Colour = which turn the point is on.")
    with right:
        chart(style(closest_curve_chart(fig["curve"], n=view["n"])), key="closest_curve", data=fig["curve"],
              caption=f"Closest distance between any two of positions 0 … n−1, evaluated at {len(view['curve'])} "
                      f"log-spaced lengths up to {n_max:,} (exact at each). The dashed line is the n of the circle.{fig['curve_note']}")
    motion.play(moving.circle(omega, n), label="a point turning round the unit circle, one dot per position",
                caption="Drag the slider or press play: the point turns by ω per position and leaves a dot at every integer "
                        "position. Within a turn the dots never meet; every new turn drops its dots between the old ones.")
    st.markdown(
        "Inside the first turn the points are spread out; every later turn drops its points between the "
        "earlier ones, so the closest pair only gets closer as the context grows. One frequency cannot keep "
        "a long context apart: real embeddings have hundreds of dimensions, room for **many frequencies**.")
    quiz(q)

show_code(circle_view, unit_circle_points, return_after_leaving, collisions, closest_pair, count_close_pairs,
          reference=sincos_reference, check=partial(safe, check_sincos, omega, n))
if view is not None:
    wrap_up(PATH, view["takeaway"])
