"""Precision at long context: RoPE's angle and rotation in float32, float16 and bfloat16 against float64."""

import streamlit as st

from posenc.analysis.precision import cos_error_profile, first_error_above, first_identical_position, rope_cos_sin, score_error
from posenc.charts.base import style
from posenc.charts.extension import precision_chart
from posenc.io._limits import MAX_UPLOAD_MB
from posenc.io.gguf import GGUF_HELP
from posenc.io.modelconfig import EXAMPLE_CONFIGS, MAX_CONFIG_BYTES
from posenc.ui import controls, md
from posenc.ui.cache import safe
from posenc.ui.frame import chart, header, show_code, table, wrap_up
from posenc.ui.uploads import config_source
from posenc.views.precision import precision_view
from posenc.views.takeaways import precision_takeaway

PATH = "pages/precision.py"
header(
    PATH,
    "The angle p·θ grows with the position, and a float keeps a fixed number of significant bits: at p = 131,072 one float32 "
    "ulp of the angle is 2⁻⁶ rad. Here RoPE is computed in float32 (as transformers does), float32 rounded to bfloat16, float16 "
    "and bfloat16, against float64, out to 10⁶. **Look at** where each error curve crosses 10⁻³.",
)
st.latex(r"\begin{gathered}\hat\phi = \mathrm{fl}\big(\mathrm{fl}(p)\,\mathrm{fl}(\theta_k)\big) \\ |\cos\hat\phi - \cos p\theta_k| \le "
         r"|\hat\phi - p\theta_k| \approx p\,\theta_k\,2^{-t} \\ (t = 24,\ 11,\ 8)\end{gathered}")  # 3 lines: 390 px

c = st.columns(3)
d = controls.select_slider("head_dim d", "d", list(range(4, 513, 2)), default=128, container=c[0])
base = controls.number("base (rope_theta)", "base", default=500000.0, lo=2.0, hi=1e9, step=1000.0, container=c[1])
example = controls.choice("or a model", "model", ["none", *EXAMPLE_CONFIGS], default="none", style="select", container=c[2])
left, right = st.columns([2, 1])
pasted = left.text_area("or paste a config.json", key="prec_cfg", height=90, max_chars=MAX_CONFIG_BYTES + 1,
                        placeholder="its RoPE at the served length is used (LongRoPE: the long factors)")
upload = right.file_uploader("or upload a config.json or GGUF header", type=["json", "gguf"], key="prec_file",
                             max_upload_size=MAX_UPLOAD_MB, help=GGUF_HELP)
text = config_source(pasted, EXAMPLE_CONFIGS.get(example, ""), upload, limit=MAX_CONFIG_BYTES)

v = (safe(precision_view, d, base, text, ahead={"d": 0, "base": 1}) if not text  # the next d and base computed ahead
     else safe(precision_view, config_text=text))  # a model sets its own d and base: a step of those sliders recomputes nothing
if v is not None:
    st.markdown(f"**Computed for:** {md.escape(v['label'], limit=200)}")
    rows = {r["mode"]: r for r in v["table"].to_dict("records")}
    m = st.columns(4)
    for col, (mode, r) in zip(m, rows.items()):
        above = r["first_above"]
        col.metric(f"{mode}: > 10⁻³ from", "never (≤ 10⁶)" if above is None or above != above else f"p = {int(above):,}",
                   help=f"cos/sin error near 131,072: {v['at_128k'][mode]:.2g}")
    table(v["table"], key="precision_modes", labels={"mode": "computed in", "first_identical": "first p with rotation(p) = rotation(p + 1)",
                              "first_above": "first p with a cos/sin error > 10⁻³"},
          formats={"first_identical": ",.0f", "first_above": ",.0f"}, missing="—")
    st.caption("—: it does not happen up to 10⁶. Both columns scan every position and every pair, in order. "
               "float16 cannot hold positions above 65,504 at all (its curve ends at 2, the largest possible error).")
    chart(style(precision_chart(v["cos"], x="position", x_title="position p (log)", y_title="worst |cos| or |sin| error (log)", tol=1e-3)),
          key="prec_cos", data=v["cos"],
          caption="At each position: the worst error over every pair and the next 64 positions. The float32 curve is transformers' "
                  "own computation; its error near 128k is "
                  f"{v['at_128k']['float32']:.2g}. A float64 evaluation off by more than 1e-12 would falsify the reference.")
    chart(style(precision_chart(v["score"], x="distance", x_title="distance D = query position (log)",
                                y_title="max |Δscore| / (|q||k|) (log)")), key="prec_score", data=v["score"],
          caption="max |Δscore| / (|q||k|): the largest change of the score q·k that rounding causes, as a fraction of |q||k|, "
                  "the largest a score can be (10⁻³ = 0.1 % of the largest score). Score of a query rotated at position D with a key "
                  "at 0, 32 seeded q, k; products rounded to the type of "
                  "cos/sin and summed in float32, as a half-precision matmul does.")
    for note in v["notes"]:
        st.info(md.escape(note, limit=600), icon=":material/info:")

show_code(precision_view, rope_cos_sin, cos_error_profile, first_identical_position, first_error_above, score_error)
wrap_up(PATH, precision_takeaway(v, quote=md.escape))
