"""Context extension of RoPE: PI, NTK-aware, dynamic NTK, YaRN and Llama 3 from the HF formulas."""

import streamlit as st

from posenc.charts.base import style
from posenc.charts.rope import bands_chart, ramp_chart, scale_chart, score_chart, wavelength_chart
from posenc.io.modelconfig import EXAMPLE_CONFIGS, MAX_CONFIG_BYTES, decode_config_bytes, parse_model_config
from posenc.schemes.rotary import rope_offset_scores
from posenc.schemes.scaling import llama3_bands, rope_frequencies, yarn_ramp
from posenc.ui import controls
from posenc.ui.cache import safe
from posenc.ui.frame import chart, exercise, header, quiz_table, quiz_value, show_code
from posenc.views.extension import extension_detail, extension_frequencies, extension_scores, model_view

PATH = "pages/context_extension.py"
DIMS = list(range(4, 513, 2))  # even only; NTK-aware needs d >= 4
LIMITS = (("d", 4, 512, 2), ("base", 2.0, 1e9, 0), ("train", 16, 1_048_576, 16), ("s", 1.0, 64.0, 0))  # (key, lo, hi, grid step)

header(
    PATH,
    "A model trained on L tokens has never seen the slow pairs turn past L·θ. Every extension changes the "
    "frequencies θ so that a longer context s·L stays in familiar territory; each is computed here with the "
    "Hugging Face formulas. **Look at** which pairs each method leaves alone (θ′/θ = 1) and which it divides by s.",
)
st.latex(r"\text{PI: } \theta'_k = \tfrac{\theta_k}{s} \quad \text{NTK: } b' = b\, s^{d/(d-2)} \quad "
         r"\text{YaRN: } \theta'_k = \gamma_k \tfrac{\theta_k}{s} + (1-\gamma_k)\,\theta_k,\ \ \sqrt{t} = 0.1 \ln s + 1")

c = st.columns(4)
d = controls.select_slider("head_dim d", "d", DIMS, default=128, container=c[0])
base = controls.number("base (rope_theta)", "base", default=500000.0, lo=2.0, hi=1e9, step=1000.0, container=c[1])
train = controls.number("trained length L", "train", default=8192, lo=16, hi=1_048_576, step=16, container=c[2])
s = controls.number("factor s = target / L", "s", default=8.0, lo=1.0, hi=64.0, step=0.5, container=c[3])


def _use_model(values: dict) -> None:  # button callback: put the model's settings into the controls above
    for key, value in values.items():
        st.session_state[key] = value


with st.container(border=True):
    st.markdown("**Compare with a model.** Pick an example, paste a `config.json` (or its rope lines), or upload one.")
    left, right = st.columns([1, 2])
    example = controls.choice("example config", "model", ["none", *EXAMPLE_CONFIGS], default="none", style="select", container=left)
    upload = left.file_uploader("config.json file", type=["json"], key="cfg_file", max_upload_size=1)
    pasted = right.text_area("config.json text", key="cfg_text", height=150, max_chars=MAX_CONFIG_BYTES,
                             placeholder='{"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000.0, "rope_scaling": {...}}')
    st.caption("The link to this view carries the example choice and the four controls, but not pasted or uploaded text "
               "(a config runs to kilobytes, three times that URL-encoded, and links that long break in chat and on "
               "slides): press *Use the model's settings* to put a pasted model into the link.")
    text = EXAMPLE_CONFIGS.get(example, "")
    if pasted.strip():
        text = pasted
    if upload is not None:
        try:
            text = decode_config_bytes(upload.getvalue())
        except ValueError as exc:
            st.error(str(exc), icon=":material/error:")
            text = ""
    mv = safe(model_view, text, LIMITS) if text else None
    if mv is not None:
        t1, t2 = st.columns([3, 2])
        t1.dataframe(mv["table"], hide_index=True, height=423, column_config={
            "field": st.column_config.TextColumn("field", width="medium"), "value": st.column_config.TextColumn("value", width="large")})
        for note in mv["model"].notes:
            t2.info(note, icon=":material/info:")
        t2.button("Use the model's settings", key="use_model", icon=":material/tune:", on_click=_use_model,
                  args=(mv["controls"],), disabled=not mv["fits"], help="; ".join(mv["problems"]) or "set d, base, L and s to the model's")
config = text if mv is not None else ""

freq = safe(extension_frequencies, d, base, train, s, config)
det = safe(extension_detail, d, base, train, s)
if freq is not None and det is not None:
    for why in freq["skipped"].values():
        st.warning(why, icon=":material/block:")
    m = st.columns(5)
    m[0].metric("target length s·L", f"{freq['target']:,}")
    m[1].metric("YaRN correction range", f"{det['yarn_low']} – {det['yarn_high']}",
                help=f"pairs below low keep θ, above high use θ/s (unrounded {det['yarn_low_exact']:.4f} – {det['yarn_high_exact']:.4f})")
    m[2].metric("YaRN attention factor", quiz_value("ext_yarn_af", f"{det['yarn_attention']:.6f}"),
                help=f"HF: {det['yarn_attention']:.10f}; 0.1·ln s + 1 = {det['yarn_mscale']:.10f}")
    m[3].metric("Llama 3 bands", quiz_value("ext_llama3_kept", " / ".join(map(str, det["band_counts"]))),
                help="pairs kept / smoothed / divided by s")
    m[4].metric("unseen-angle pairs, RoPE", f"{freq['unseen']['RoPE (no scaling)']:.0f}", help="see the table: the same count for every method")
    yarn_rows = [(i, "attention_factor") for i, name in enumerate(freq["summary"]["method"]) if str(name).startswith("YaRN")]
    st.dataframe(quiz_table("ext_yarn_af", freq["summary"], yarn_rows), hide_index=True, column_config={
        "method": st.column_config.TextColumn("method", width="medium"),
        "attention_factor": st.column_config.NumberColumn("attention factor", format="%.6f"),
        "slowest_scale": st.column_config.NumberColumn("slowest pair θ′/θ", format="%.6g"),
        "longest_wavelength": st.column_config.NumberColumn("longest wavelength", format="localized"),
        "unseen": st.column_config.NumberColumn("pairs at unseen angles at the target", format="%.0f")})
    st.caption(f"A pair is at an unseen angle when target·θ′ exceeds the largest angle it reached in training, L·θ, "
               f"and that angle was under one turn (2π). Dynamic NTK is evaluated at the current length = "
               f"{freq['target']:,}; below L it equals plain RoPE.")
    chart(style(scale_chart(freq["frame"], freq["methods"])), key="ext_scale", data=freq["frame"],
          caption="1 = the pair is left alone, 1/s = fully interpolated. PI divides every pair; NTK-aware and dynamic "
                  "NTK bend smoothly; YaRN and Llama 3 keep the fast pairs and divide the slow ones.")
    chart(style(wavelength_chart(freq["frame"], freq["methods"], trained=freq["trained"], target=freq["target"])),
          key="ext_wavelength", data=freq["frame"],
          caption="Pairs whose wavelength is above the trained length never completed a turn in training.")
    c1, c2 = st.columns(2)
    with c1:
        chart(style(ramp_chart(det["ramp"], low=det["yarn_low"], high=det["yarn_high"])), key="ext_yarn_ramp", data=det["ramp"],
              caption=f"YaRN (β_fast 32, β_slow 1): pairs ≤ {det['yarn_low']} keep θ, pairs ≥ {det['yarn_high']} use θ/s, "
                      f"a linear ramp between; cos and sin are scaled by {quiz_value('ext_yarn_af', format(det['yarn_attention'], '.6f'))}.")
    with c2:
        lo_wl, hi_wl = det["band_limits"]
        chart(style(bands_chart(det["bands"])), key="ext_llama3_bands", data=det["bands"],
              caption=f"Llama 3 (low 1, high 4): wavelength < {lo_wl:,.0f} kept, > {hi_wl:,.0f} divided by s, smoothed "
                      "between (both ends inclusive).")

probe = controls.choice("probe", "probe", ["ones", "random"], default="ones",
                        help="ones: the classic curve 2·Σ cos(D θ′ₖ); random: a seeded standard-normal q, scored with itself")
sc = safe(extension_scores, d, base, train, s, probe, config)
if sc is not None:
    chart(style(score_chart(sc["frame"], sc["methods"], trained=sc["trained"], target=sc["target"])), key="ext_scores",
          data=sc["frame"],
          caption=f"q·k of the probe with itself, attention factor included (YaRN starts at "
                  f"{sc['score0']['YaRN']:.5g}, the rest at {sc['score0']['RoPE (no scaling)']:.5g}). Drawn at "
                  f"{sc['n_points']:,} distances: every one up to 1,024, then log-spaced to {sc['target']:,} — exact values "
                  "there; the fast pairs oscillate between samples.")

if det is not None:
    exercise("ext_yarn_af", f"With YaRN at s = {s:g}, what is the attention factor that multiplies cos and sin?",
             answer=round(det["yarn_attention"], 4), tolerance=5e-4,
             explanation=f"HF computes 0.1·ln({s:g}) + 1 = {det['yarn_attention']:.10f}; the score is multiplied by its square.")
    exercise("ext_llama3_kept", f"How many of the {d // 2} pairs does Llama 3 keep unchanged at d = {d}, base {base:g}, L = {train:,}?",
             answer=det["band_counts"][0], tolerance=0,
             explanation=f"Pairs with wavelength 2π/θ < L / high_freq_factor = {det['band_limits'][0]:,.0f} keep θ: "
                         f"{det['band_counts'][0]} kept, {det['band_counts'][1]} smoothed, {det['band_counts'][2]} divided by s.")

show_code(extension_frequencies, extension_detail, extension_scores, parse_model_config, rope_frequencies, yarn_ramp,
          llama3_bands, rope_offset_scores)
