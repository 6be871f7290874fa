"""Page 10 (context extension): numbers against posenc and Hugging Face's code, the model input, links, budgets."""

import json
import math

import numpy as np
from apphelpers import chart_frame, charts, metrics, open_page, payload_bytes, reveal, text_of

from posenc.io.modelconfig import EXAMPLE_CONFIGS
from posenc.registry import rope_for, rope_scaling
from posenc.schemes.scaling import yarn_ramp

PAGE = "pages/context_extension.py"
CLASSICS = ["RoPE (no scaling)", "PI (linear)", "NTK-aware", "dynamic NTK", "YaRN", "Llama 3"]


def clean(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_defaults_llama31_settings():
    at = open_page(PAGE)
    clean(at)
    assert metrics(at)["Llama 3 bands"] == "?"  # the exercise asks how many pairs Llama 3 keeps
    m = metrics(reveal(reveal(at, "ext_llama3_kept"), "ext_yarn_af"))
    assert m["target length s·L"] == "65,536"
    # Meta llama-models apply_scaling == HF _compute_llama3_parameters, run: Llama 3 at d = 128, base 5e5, orig 8192 keeps 29, smooths 6, divides 29
    assert m["Llama 3 bands"] == "29 / 6 / 29"
    ramp = yarn_ramp(128, 500000.0, rope_scaling("rope_yarn", base=500000.0, factor=8.0, original_max_position_embeddings=8192))
    assert m["YaRN correction range"] == f"{ramp['low']} – {ramp['high']}" == "18 – 35"
    assert m["YaRN attention factor"] == f"{0.1 * math.log(8) + 1:.6f}"
    ch = charts(at)
    assert len(ch) == 5
    scale = chart_frame(at, 0)
    assert list(scale["method"].unique()) == CLASSICS and len(scale) == 6 * 64
    np.testing.assert_allclose(scale[scale.method == "PI (linear)"]["scale"], 1 / 8, rtol=1e-12)
    inv, _ = rope_for("rope_llama3", 128, base=500000.0, factor=8.0, original_max_position_embeddings=8192)
    np.testing.assert_allclose(scale[scale.method == "Llama 3"]["theta"], inv, rtol=1e-12)
    wl = chart_frame(at, 1)
    assert {8192.0, 65536.0} <= set(wl["at"].dropna())  # the trained and target lengths marked
    assert {"pair", "ramp"} <= set(chart_frame(at, 2).columns)
    assert chart_frame(at, 3)["band"].value_counts().to_dict() == {"kept (θ)": 29, "smoothed": 6, "divided by s": 29}
    sc = chart_frame(at, 4)
    assert sc["distance"].max() == 65536 and sc["method"].nunique() == 6 and len(sc) <= 65_536
    summary = at.dataframe[0].value.set_index("method")
    assert summary.loc["PI (linear)", "unseen"] == 0 and summary.loc["RoPE (no scaling)", "unseen"] == 29


def test_controls_reproduce_the_reference_yarn():
    at = open_page(PAGE)
    at.select_slider(key="d").set_value(16).run()
    at.number_input(key="base").set_value(10000.0).run()
    at.number_input(key="train").set_value(2048).run()
    at.number_input(key="s").set_value(4.0).run()
    clean(at)
    m = metrics(reveal(at, "ext_yarn_af"))
    # HF transformers modeling_rope_utils, _compute_yarn_parameters, run: d = 16, s = 4, orig = 2048 -> low 2, high 6, attention factor 1.1386294361
    assert m["YaRN correction range"] == "2 – 6"
    assert m["YaRN attention factor"] == "1.138629"
    assert m["target length s·L"] == "8,192"
    yarn = chart_frame(at, 0)
    np.testing.assert_allclose(yarn[yarn.method == "YaRN"]["theta"],
                               [1, 0.31622776, 0.1, 0.025693506, 0.00625, 0.0013834966, 2.5e-4, 7.90569e-5], rtol=1e-6)
    at.toggle(key="ex_ext_yarn_af_reveal").set_value(True).run()
    assert "Answer: 1.1386." in text_of(at)


def test_example_model_via_link_and_use_its_settings():
    at = open_page(PAGE, {"model": "Qwen2.5 7B + YaRN"})
    clean(at)
    assert not at.warning
    assert "model: Qwen/Qwen2.5-7B-Instruct" in set(chart_frame(at, 0)["method"])
    fields = dict(zip(at.dataframe[0].value["field"], at.dataframe[0].value["value"]))
    assert fields["rope_type"] == "yarn" and fields["trained length"] == "32,768"
    at.button(key="use_model").click().run()
    clean(at)
    m = metrics(reveal(at, "ext_yarn_af"))
    assert m["target length s·L"] == "131,072" and m["YaRN attention factor"] == "1.138629"
    f = chart_frame(at, 0)
    model = f[f.method == "model: Qwen/Qwen2.5-7B-Instruct"]["theta"].to_numpy()
    np.testing.assert_array_equal(model, f[f.method == "YaRN"]["theta"].to_numpy())  # same settings, same numbers


def test_pasted_and_uploaded_configs():
    at = open_page(PAGE)
    at.text_area(key="cfg_text").input(EXAMPLE_CONFIGS["Llama 3.1 8B"]).run()
    clean(at)
    f = chart_frame(at, 0)
    np.testing.assert_array_equal(f[f.method == "model: meta-llama/Llama-3.1-8B"]["theta"].to_numpy(),
                                  f[f.method == "Llama 3"]["theta"].to_numpy())
    assert any("4096 / 32 = 128" in i.value for i in at.info)
    at.text_area(key="cfg_text").input("").run()
    cfg = {"head_dim": 64, "rope_theta": 10000.0, "max_position_embeddings": 4096,
           "rope_scaling": {"type": "dynamic", "factor": 2.0}}
    at.file_uploader(key="cfg_file").set_value(("config.json", json.dumps(cfg).encode(), "application/json")).run()
    clean(at)
    assert "model: pasted config" in set(chart_frame(at, 0)["method"])
    assert dict(zip(at.dataframe[0].value["field"], at.dataframe[0].value["value"]))["trained length"] == "4,096"


def test_bad_configs_show_an_error_and_keep_the_classics():
    at = open_page(PAGE)
    for text, msg in [("{not json", "not valid JSON"), ('{"head_dim": 128, "rope_scaling": {"type": "banana", "factor": 2}}', "unknown rope_type"),
                      ("[1, 2]", "JSON object"), ('{"rope_theta": 1e4}', "neither head_dim"),
                      ('{"head_dim": 128, "rope_theta": -1}', "rope_theta")]:
        at.text_area(key="cfg_text").input(text).run()
        assert not at.exception
        assert any(msg in e.value for e in at.error), (msg, [e.value for e in at.error])
        assert len(charts(at)) == 5 and list(chart_frame(at, 0)["method"].unique()) == CLASSICS
    at.text_area(key="cfg_text").input("").run()
    at.file_uploader(key="cfg_file").set_value(("config.json", b"\xff\xfe\x00garbage", "application/json")).run()
    assert not at.exception and any("not UTF-8" in e.value for e in at.error)
    assert len(charts(at)) == 5


def test_a_link_at_a_models_settings_is_taken_as_is():
    # what "Use the model's settings" puts into the link for Qwen2.5 + YaRN
    at = open_page(PAGE, {"model": "Qwen2.5 7B + YaRN", "base": "1e+06", "train": "32768", "s": "4"})
    clean(at)
    assert not at.warning
    ramp = yarn_ramp(128, 1e6, rope_scaling("rope_yarn", base=1e6, factor=4.0, original_max_position_embeddings=32768))
    assert metrics(at)["target length s·L"] == "131,072"
    assert metrics(at)["YaRN correction range"] == f"{ramp['low']} – {ramp['high']}"
    off_grid = open_page(PAGE, {"train": "4095"})
    assert any("`train`" in w.value and "4096" in w.value for w in off_grid.warning)  # snapped to the 16-grid
    assert metrics(off_grid)["target length s·L"] == f"{4096 * 8:,}"


def test_bad_link_values_are_noted():
    at = open_page(PAGE, {"d": "7", "s": "1000", "train": "abc", "model": "GPT-9", "probe": "x"})
    clean(at)
    notes = " ".join(w.value for w in at.warning)
    for key in ("`d`", "`s`", "`train`", "`model`", "`probe`"):
        assert key in notes, (key, notes)
    assert metrics(at)["target length s·L"] == "65,536"  # the defaults


def test_exercise_llama3_kept_pairs():
    at = open_page(PAGE)
    at.toggle(key="ex_ext_llama3_kept_reveal").set_value(True).run()
    assert "Answer: 29." in text_of(at)


def test_payload_budgets():
    at = open_page(PAGE)
    assert payload_bytes(at) <= 1_000_000
    big = open_page(PAGE, {"d": "512", "base": "1e9", "train": "1048576", "s": "64", "model": "Llama 3.1 8B", "probe": "random"})
    assert not big.exception and not big.error
    # a method the core cannot compute here would be left out with a visible note, never an error
    assert all("is left out at these settings" in w.value for w in big.warning)
    assert payload_bytes(big) <= 2_000_000
    assert len(charts(big)) == 5 and all(c["rows"] <= 65_536 for c in charts(big))
    assert metrics(big)["target length s·L"] == "67,108,864"
