"""Context extension of RoPE: PI, NTK-aware, dynamic NTK, YaRN, Llama 3 and LongRoPE, measured like for like."""

import streamlit as st

from posenc.analysis.extension import long_range, pair_bands, short_range_fidelity
from posenc.charts.base import style
from posenc.charts.extension import fidelity_chart, percentile_chart, ratio_chart
from posenc.io._limits import MAX_UPLOAD_MB
from posenc.io.gguf import GGUF_HELP
from posenc.io.modelconfig import EXAMPLE_CONFIGS, MAX_CONFIG_BYTES
from posenc.io.ropeconfig import rope_from_config
from posenc.ui import controls, md
from posenc.ui.cache import cached, safe
from posenc.ui.frame import chart, exercise, header, quiz_table, quiz_value, show_code, table, wrap_up
from posenc.ui.section import section
from posenc.ui.uploads import config_source
from posenc.views.extension import extension_detail, model_view, positional_scheme
from posenc.views.measure import bands_view, entries, fidelity_view, logit_scale_cells, long_range_view, methods_at, summary_table
from posenc.views.takeaways import YARN_QUIZ, curve_spread, extension_takeaway

PATH = "pages/context_extension.py"
DIMS = list(range(4, 513, 2))  # even only; NTK-aware needs d >= 4

header(
    PATH,
    "A model trained on L tokens never saw its slow pairs turn past L·θ. Each extension changes θ so a longer context "
    "stays in familiar territory, and each is computed here with the Hugging Face formulas, beside your own model at its own "
    "settings. **Look at** which pairs each method keeps (θ′/θ = 1 left of L), what it does to short-range scores, and how "
    "attention spreads out at the target length.",
)
for line in (r"\text{PI: } \theta'_k = \tfrac{\theta_k}{s} \qquad \text{NTK: } b' = b\, s^{d/(d-2)}",  # one short formula a line:
             r"\text{dynamic: } b' = b\,\big(s\tfrac{n}{L} - (s - 1)\big)^{d/(d-2)}",     # readable at 390 px
             r"\text{YaRN: } \theta'_k = \gamma_k \tfrac{\theta_k}{s} + (1-\gamma_k)\,\theta_k,\quad \sqrt{t} = 0.1 \ln s + 1",
             r"\text{LongRoPE: } \theta'_k = \theta_k / \lambda_k"):
    st.latex(line)

c = st.columns(4)
d = controls.select_slider("head_dim d", "d", DIMS, default=128, container=c[0])
base = controls.number("base (rope_theta)", "base", default=500000.0, lo=2.0, hi=1e9, step=1000.0, container=c[1])
train = controls.number("trained length L", "train", default=8192, lo=16, hi=1_048_576, step=16, container=c[2])
s = controls.number("factor s = target / L", "s", default=4.0, lo=1.0, hi=64.0, step=0.5, container=c[3])

with st.container(border=True):
    st.markdown("**Your model.** Pick an example, paste a `config.json` (or its rope lines), or upload one or a GGUF file's "
                "first megabytes: it is drawn at its own head size, base and served length.")
    left, right = st.columns([1, 2])
    example = controls.choice("example config", "model", ["none", *EXAMPLE_CONFIGS], default="none", style="select", container=left)
    upload = left.file_uploader("config.json or GGUF file", type=["json", "gguf"], key="cfg_file", max_upload_size=MAX_UPLOAD_MB,
                                help=GGUF_HELP)
    pasted = right.text_area("config.json text", key="cfg_text", height=150, max_chars=MAX_CONFIG_BYTES + 1,
                             placeholder='{"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000.0, "rope_scaling": {...}}')
    st.caption("The link carries the example choice and the controls, not pasted or uploaded text (a config runs to kilobytes).")
    text = config_source(pasted, EXAMPLE_CONFIGS.get(example, ""), upload, limit=MAX_CONFIG_BYTES)
    mv = safe(model_view, text, ()) if text else None
    other = cached(positional_scheme, text) if text and mv is None else None
    if other is not None:
        st.page_link(other["page"], label="This model's positions: open their page", icon=":material/arrow_forward:")
    if mv is not None:
        t1, t2 = st.columns([3, 2])
        t1.table(mv["table"].assign(value=mv["table"]["value"].map(lambda v: md.escape(v, limit=200))).set_index("field"))
        for note in mv["model"].notes:
            t2.info(md.escape(note, limit=600), icon=":material/info:")
config = text if mv is not None else ""
at = controls.choice("compare the methods at", "at", ["controls", "model"], default="controls",
                     format_func={"controls": "the controls above", "model": "the model's settings"}.get,
                     help="the model's rotated width, base, trained length and factor, out to its served length")
note = st.empty()  # always drawn: a caption that came and went moved every element below it, and the browser redrew them all
where = cached(methods_at, config, at)  # the views below are keyed on where they measure, not on what was asked
if where != at:
    note.caption("No model is loaded, so the methods use the controls above." if not config else
                 "This model states no trained length, so the methods use the controls above.")

bands = safe(bands_view, d, base, train, s, config, where)
det = safe(extension_detail, d, base, train, s)
if bands is not None:
    for why in bands["skipped"].values():
        st.warning(why, icon=":material/block:")
    dyn = bands["dynamic"]
    m = st.columns(4)
    m[0].metric("target length of the methods", f"{bands['target']:,}")
    m[1].metric("dynamic NTK scale at the target", f"{bands['dynamic_at_target']:g}",
                help="HF's factor is a slope: scale = s·n/L − (s − 1), so at n = s·L it is s² − s + 1, not s")
    if det is not None:
        m[2].metric("YaRN correction range", f"{det['yarn_low']} – {det['yarn_high']}")
        m[3].metric("YaRN attention factor", quiz_value(YARN_QUIZ, f"{det['yarn_attention']:.6f}"),
                    help="the score is multiplied by its square")
    st.caption("Dynamic NTK's effective scale at each length n (its base is b·scale^(d/(d−2))): "
               + ", ".join(f"{n:,} → {v:g}" for n, v in zip(dyn["length"], dyn["effective_scale"])) + ".")
    chart(style(ratio_chart(bands["frame"], bands["names"], trained=bands["trained"])), key="ext_ratio", data=bands["frame"],
          export_title=("θ′/θ per pair", *bands["settings"]),
          caption=f"{md.escape(bands['drawn'], limit=None)} Each point is a pair. Left of L the pair turned fully in training: "
                  "a method that keeps short-range attention "
                  "leaves it at 1. Right of L the pair never completed a turn: interpolating it (θ/s) keeps its angles seen. "
                  "LongRoPE uses Phi-3-mini-128k's searched factors (made for s = 32 from L = 4,096), resampled to d/2 pairs; "
                  "s sets only its attention factor.")

def _spread(sp: dict) -> str:
    """One sentence on lines a legend cannot tell apart: how close the curves run (posenc.views.takeaways.curve_spread)."""
    if sp["low"] is None:
        return ""
    return (f" The {sp['count']} median curves run within {sp['max_gap']:.2g} nats of one another, so they nearly coincide; at "
            f"n = {sp['end_at']:,} the lowest is {md.escape(sp['low'])} and the highest {md.escape(sp['high'])} (hover a line for its name).")


@section(PATH)
def fidelity_section(d: int, base: float, train: int, s: float, config: str, at: str, bands) -> None:
    """w and ρ rerun only the short- and long-range measurements and the summary they feed."""
    c5, c6 = st.columns(2)
    w = controls.select_slider("short range: distances up to w", "w", [8, 16, 32, 64, 128, 256, 512, 1024], default=64, container=c5)
    rho = controls.select_slider("query–key correlation ρ (long range)", "rho", [0.25, 0.5, 0.75, 0.9], default=0.5, container=c6)
    fid = safe(fidelity_view, d, base, train, s, config, at, w)
    if fid is not None:
        chart(style(fidelity_chart(fid["frame"], fid["names"])), key="ext_fidelity", data=fid["frame"],
              export_title=("Short-range fidelity", *fid["settings"]),
              caption=f"{md.escape(fid['drawn'], limit=None)} Short-range fidelity: the largest |Δscore|/(|q||k|) "
                      "against plain RoPE — the change of the score q·k as a fraction of |q||k|, the largest a score can be — "
                      "at the same d, base and softmax scale, over "
                      f"{fid['n_samples']} seeded random q ≠ k (seed 0), attention factors included. A method that kept short-range "
                      "attention intact stays near 0; a different seed moving a curve by more than its spread would falsify it.")
    lr = safe(long_range_view, d, base, train, s, config, at, rho)
    if lr is not None:
        chart(style(percentile_chart(lr["logits"], lr["names"], x="distance", x_title="distance D (positions, log)",
                                     y_title="logit (median; band 5–95 %)")), key="ext_logits", data=lr["logits"],
              export_title=("Logit against distance", *lr["settings"]),
              caption=f"{md.escape(lr['drawn'], limit=None)} Logit of a key at distance D, k = ρq + √(1−ρ²)ε with ρ = {lr['rho']:g}, "
                      f"over {lr['n_samples']} seeded q "
                      "(logit scale and 1/√d included), out to each curve's target.")
        chart(style(percentile_chart(lr["entropy"], lr["names"], x="length", x_title="context length n (log)", baseline="uniform",
                                     y_title="softmax entropy (nats)")), key="ext_entropy", data=lr["entropy"],
              export_title=("Softmax entropy against length", *lr["settings"]),
              caption=f"{md.escape(lr['drawn'], limit=None)} Entropy of one query's attention over n keys ({lr['n_entropy']} queries; "
                      "keys past 64 sampled 256 per "
                      "length bin and weighted, so the sums are unbiased); the dotted line is ln n, uniform attention."
                      + _spread(curve_spread(lr["entropy"], "length", "p50")))
    if fid is not None and lr is not None and bands is not None:
        summary = quiz_table(YARN_QUIZ, summary_table(fid, lr, bands), logit_scale_cells(lr, "YaRN"))  # YaRN's: the answer squared
        table(summary, key="extension_summary", links={"Extrapolation lab": "measured there"},
              formats={"short-range max |Δ|": ".4f", "logit scale": ".4f", "fast pairs changed by": ".4f",
                       "entropy at target − at L (nats)": ".3f"})
        st.caption(f"Short range: max over distances ≤ {w} (the table's first number). Fast pairs changed by: the largest "
                   "|θ′/θ − 1| among all pairs that turn within L, so a method that keeps the very fastest pairs but moves slower "
                   "ones still reads high (Llama 3, at its default factors 1 and 4, blends the pairs whose wavelengths lie between "
                   "L/4 and L). Long range: how much the median entropy grows from L to the target. Fine-tuning: what each method's "
                   "paper did; the Extrapolation lab measures trained models.")


fidelity_section(d, base, train, s, config, where, bands)

if det is not None:
    exercise(YARN_QUIZ, f"With YaRN at s = {s:g}, what is the attention factor that multiplies cos and sin?",
             answer=round(det["yarn_attention"], 4), tolerance=5e-4,
             explanation=f"HF computes 0.1·ln({s:g}) + 1 = {det['yarn_attention']:.10f}; the score is multiplied by its square.")
    exercise("ext_llama3_kept", f"How many of the {d // 2} pairs does Llama 3 keep unchanged at d = {d}, base {base:g}, L = {train:,}?",
             answer=det["band_counts"][0], tolerance=0,
             explanation=f"Pairs with wavelength 2π/θ < L / high_freq_factor = {det['band_limits'][0]:,.0f} keep θ: "
                         f"{det['band_counts'][0]} kept, {det['band_counts'][1]} smoothed, {det['band_counts'][2]} divided by s.")

show_code(entries, bands_view, pair_bands, fidelity_view, short_range_fidelity, long_range_view, long_range, rope_from_config)
wrap_up(PATH, extension_takeaway(bands, s, train, quote=md.escape))
