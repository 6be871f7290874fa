"""Context extension page: numbers against posenc and Hugging Face's code, the model input, like for like, links, budgets."""

import json
import math

import numpy as np
from apphelpers import chart_frame, charts, export_keys, exported, metrics, open_page, payload_bytes, reveal, tables, text_of

from posenc.analysis.extension import short_range_fidelity
from posenc.io.modelconfig import EXAMPLE_CONFIGS
from posenc.registry import rope_for, rope_scaling
from posenc.schemes.scaling import default_inv_freq, yarn_ramp

PAGE = "pages/context_extension.py"
NAMES = ["RoPE", "PI (linear)", "NTK-aware", "dynamic NTK", "YaRN", "Llama 3", "LongRoPE (Phi-3 factors)"]
TAG = "d 128, base 500000, L 8,192, s 4"
LABELS = ["RoPE · d 128, base 500000, L 8,192"] + [f"{n} · {TAG}" for n in NAMES[1:]]
CHARTS = ("ext_ratio", "ext_fidelity", "ext_logits", "ext_entropy")  # the keys of the page's charts


def curves(at, key):
    """The data of chart ``key`` without its reference-line rows."""
    f = chart_frame(at, key)
    return f.dropna(subset=["method"]) if "method" in f else f


def clean(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_defaults_8k_to_32k():
    at = open_page(PAGE)
    clean(at)
    assert metrics(at)["YaRN attention factor"] == "?"  # the exercise asks for it
    # its square, the logit scale, waits for the reveal too: in the summary table and in the wrap-up's finding
    yarn_row = next(line for line in tables(at, source=True)["extension_summary"].splitlines() if line.startswith("| YaRN"))
    assert yarn_row.split(" | ")[3] == "?"  # method, short range, fast pairs, logit scale
    assert "multiply every score by" not in text_of(at) and "reveal it first" in text_of(at)
    m = metrics(reveal(at, "ext_yarn_af"))
    assert tables(at)["extension_summary"].set_index("method").loc[LABELS[4], "logit scale"] == round((0.1 * math.log(4) + 1) ** 2, 4)
    assert "YaRN and LongRoPE (Phi-3 factors) also multiply every score by 1.296 and 1.154" in text_of(at)
    assert m["target length of the methods"] == "32,768"
    assert m["dynamic NTK scale at the target"] == "13"  # s^2 - s + 1 at s = 4
    ramp = yarn_ramp(128, 500000.0, rope_scaling("rope_yarn", base=500000.0, factor=4.0, original_max_position_embeddings=8192))
    assert m["YaRN correction range"] == f"{ramp['low']} – {ramp['high']}"
    assert m["YaRN attention factor"] == f"{0.1 * math.log(4) + 1:.6f}"
    assert set(CHARTS) <= set(charts(at))
    ratio = curves(at, "ext_ratio")
    assert list(dict.fromkeys(ratio["method"])) == LABELS  # the legend names every curve's settings
    pi = ratio[ratio.method == LABELS[1]]
    np.testing.assert_allclose(pi["ratio"], 1 / 4, rtol=1e-12)
    np.testing.assert_allclose(pi["wavelength"], 2 * np.pi / default_inv_freq(128, 500000.0), rtol=1e-12)
    inv, _ = rope_for("rope_llama3", 128, base=500000.0, factor=4.0, original_max_position_embeddings=8192)
    np.testing.assert_allclose(ratio[ratio.method == LABELS[5]]["ratio"], inv / default_inv_freq(128, 500000.0), rtol=1e-12)
    assert (ratio["band"] == "turns within L").sum() == 7 * int(np.sum(2 * np.pi / default_inv_freq(128, 500000.0) <= 8192))
    fid = curves(at, "ext_fidelity")
    ref = short_range_fidelity(default_inv_freq(128, 500000.0), inv, window=64)
    np.testing.assert_allclose(fid[fid.method == LABELS[5]]["max"], ref["max"], rtol=1e-9)
    logits, entropy = curves(at, "ext_logits"), curves(at, "ext_entropy")
    assert logits.groupby("method")["distance"].max().eq(32768).all()
    assert entropy.groupby("method")["length"].max().eq(32768).all()
    table = tables(at)["extension_summary"].set_index("method")
    assert list(table.index) == LABELS and set(table["Extrapolation lab"]) == {"measured there"}
    assert tables(at, source=True)["extension_summary"].count("[measured there](/lab)") == len(LABELS)  # a link to the lab
    assert table.loc[LABELS[5], "short-range max |Δ|"] < 0.01 < table.loc[LABELS[1], "short-range max |Δ|"]
    assert "s² − s + 1" in "".join(str(x.proto.help) for x in at.metric)


def test_controls_reproduce_the_reference_yarn():
    at = open_page(PAGE)
    at.select_slider(key="d").set_value(16).run()
    at.number_input(key="base").set_value(10000.0).run()
    at.number_input(key="train").set_value(2048).run()
    clean(at)
    m = metrics(reveal(at, "ext_yarn_af"))
    # HF transformers modeling_rope_utils, _compute_yarn_parameters, run: d = 16, s = 4, orig = 2048 -> low 2, high 6, attention factor 1.1386294361
    assert m["YaRN correction range"] == "2 – 6"
    assert m["YaRN attention factor"] == "1.138629"
    assert m["target length of the methods"] == "8,192"
    r = curves(at, "ext_ratio")
    yarn = r[r.method == "YaRN · d 16, base 10000, L 2,048, s 4"]
    np.testing.assert_allclose(yarn["ratio"] * default_inv_freq(16, 10000.0),
                               [1, 0.31622776, 0.1, 0.025693506, 0.00625, 0.0013834966, 2.5e-4, 7.90569e-5], rtol=1e-6)
    at.toggle(key="ex_ext_yarn_af_reveal").set_value(True).run()
    assert "Answer: 1.1386." in text_of(at)


def test_example_model_drawn_at_its_own_settings_from_the_start():
    at = open_page(PAGE, {"model": "Llama 3.1 8B"})
    clean(at)
    ratio = curves(at, "ext_ratio")
    label = "model: meta-llama/Llama-3.1-8B · d 128, base 500000, L 8,192 → 131,072"
    assert label in set(ratio["method"])
    assert curves(at, "ext_logits").query("method == @label")["distance"].max() == 131072  # its served length
    fields = model_fields(at)
    assert fields["served length"] == "131,072"
    # one control re-runs every classic at the model's settings, out to its served length
    at.segmented_control(key="at").set_value("model").run()
    clean(at)
    assert metrics(at)["target length of the methods"] == "131,072"
    assert metrics(at)["dynamic NTK scale at the target"] == "121"  # 8 * 16 - 7
    r = curves(at, "ext_ratio")
    m = r[r.method == label]["ratio"].to_numpy()
    np.testing.assert_array_equal(m, r[r.method == "Llama 3 · d 128, base 500000, L 8,192, s 8"]["ratio"].to_numpy())


def model_fields(at) -> dict:
    """The loaded model's field/value table (a static st.table: 13 rows, no grid needed)."""
    table = at.table[0].value
    return dict(zip(table.index, table["value"]))


def test_deepseek_is_drawn_at_its_rope_width_with_its_logit_scale():
    at = open_page(PAGE, {"model": "DeepSeek-V3"})
    clean(at)
    fields = model_fields(at)
    assert fields["head_dim (rotated channels)"] == "192 (64)"
    assert fields["logit scale"].startswith("1.87385")
    assert any("mscale" in i.value for i in at.info)
    r = curves(at, "ext_ratio")
    assert (r["method"].str.startswith("model:")).sum() == 32  # 64 / 2 pairs, not 56 / 2


def test_pasted_and_uploaded_configs():
    at = open_page(PAGE)
    at.text_area(key="cfg_text").input(EXAMPLE_CONFIGS["Phi-3-mini-128k"]).run()
    clean(at)
    assert any(m.startswith("model: microsoft/Phi-3-mini-128k-instruct") for m in curves(at, "ext_ratio")["method"])
    fields = model_fields(at)
    assert fields["attention factor"].startswith("1.19023807")
    at.text_area(key="cfg_text").input("").run()
    cfg = {"head_dim": 64, "rope_theta": 10000.0, "max_position_embeddings": 4096, "rope_scaling": {"type": "dynamic", "factor": 2.0}}
    at.file_uploader(key="cfg_file").set_value(("config.json", json.dumps(cfg).encode(), "application/json")).run()
    clean(at)
    assert any(m.startswith("model: pasted config") for m in curves(at, "ext_ratio")["method"])


def test_bad_configs_show_an_error_and_keep_the_classics():
    at = open_page(PAGE)
    for text, msg in [("{not json", "not valid JSON"), ('{"head_dim": 128, "rope_scaling": {"type": "banana", "factor": 2}}', "unknown rope_type"),
                      ("[1, 2]", "JSON object"), ('{"rope_theta": 1e4}', "neither head_dim"),
                      ('{"head_dim": 128, "rope_theta": -1}', "rope_theta")]:
        at.text_area(key="cfg_text").input(text).run()
        assert not at.exception
        assert any(msg in e.value for e in at.error), (msg, [e.value for e in at.error])
        assert set(CHARTS) <= set(charts(at)) and list(dict.fromkeys(curves(at, "ext_ratio")["method"])) == LABELS
    at.text_area(key="cfg_text").input("").run()
    at.file_uploader(key="cfg_file").set_value(("config.json", b"\xff\xfe\x00garbage", "application/json")).run()
    assert not at.exception and any("not UTF-8" in e.value for e in at.error)
    assert set(CHARTS) <= set(charts(at))


def test_bad_link_values_are_noted():
    at = open_page(PAGE, {"d": "7", "s": "1000", "train": "abc", "model": "GPT-9", "at": "x"})
    clean(at)
    notes = " ".join(w.value for w in at.warning)
    for key in ("`d`", "`s`", "`train`", "`model`", "`at`"):
        assert key in notes, (key, notes)
    assert metrics(at)["target length of the methods"] == "32,768"  # the defaults


def test_exercise_llama3_kept_pairs():
    at = open_page(PAGE)
    at.toggle(key="ex_ext_llama3_kept_reveal").set_value(True).run()
    assert "Answer: 29." in text_of(at)


def test_payload_budgets():
    at = open_page(PAGE)
    assert payload_bytes(at) <= 1_000_000
    big = open_page(PAGE, {"d": "512", "base": "1e9", "train": "1048576", "s": "64", "model": "Llama 4 Scout", "w": "1024"})
    assert not big.exception and not big.error
    assert all("is left out at these settings" in w.value for w in big.warning)
    assert payload_bytes(big) <= 2_000_000
    assert set(CHARTS) <= set(charts(big)) and all(c["rows"] <= 65_536 for c in charts(big).values())
    assert metrics(big)["target length of the methods"] == "67,108,864"


def test_the_settings_title_the_exports_and_stay_out_of_the_drawn_charts():
    """The legends name the methods only (so a setting swaps data); the settings go under each chart and into the
    title of its PNG and SVG: one subtitle line for the methods, one for a loaded model."""
    at = open_page(PAGE, {"model": "Llama 3.1 8B"})
    assert "Drawn with the methods at d 128, base 500000, L 8,192, s 4 → 32,768; the model (meta-llama/Llama-3.1-8B)" in text_of(at)
    served, drawn = export_keys(at), charts(at)
    assert all(served[key] == key for key in CHARTS)  # each chart's own Export menu
    for key, c in ((key, drawn[key]) for key in CHARTS):
        title = exported(at, key)[0]().to_dict()["title"]
        assert title["subtitle"] == ["the methods at d 128, base 500000, L 8,192, s 4 → 32,768",
                                     "the model (meta-llama/Llama-3.1-8B) at its own d 128, base 500000, L 8,192 → 131,072"]
        assert "title" not in c["spec"] and "d 128" not in str(c["spec"])  # the drawn spec carries no setting


def _gguf_header(cfg: dict, arch: str = "llama") -> bytes:
    """What llama.cpp's converter writes for ``cfg`` (RoPE keys; tests/test_gguf.py checks the converter's rules)."""
    import tempfile
    from pathlib import Path

    import pytest

    gguf = pytest.importorskip("gguf", reason="the gguf package (requirements-dev.txt) writes the reference header")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.gguf"
        w = gguf.GGUFWriter(str(path), arch)
        w.add_name(cfg["_name_or_path"])
        w.add_block_count(cfg["num_hidden_layers"])
        w.add_context_length(cfg["max_position_embeddings"])
        w.add_embedding_length(cfg["hidden_size"])
        w.add_head_count(cfg["num_attention_heads"])
        w.add_head_count_kv(cfg["num_key_value_heads"])
        w.add_rope_freq_base(cfg["rope_theta"])
        w.add_rope_dimension_count(cfg["hidden_size"] // cfg["num_attention_heads"])
        w.add_token_list([f"t{i}" for i in range(3000)])  # the tokenizer follows the RoPE keys, as in a real file
        for f in (w.write_header_to_file, w.write_kv_data_to_file, w.write_tensors_to_file, w.close):
            f()
        return path.read_bytes()


def test_a_gguf_header_gives_the_page_its_config_json_gives():
    # SmolLM2-135M's config.json (HuggingFaceTB/SmolLM2-135M-Instruct) and the header llama.cpp writes for it
    cfg = {"_name_or_path": "SmolLM2-135M-Instruct", "model_type": "llama", "hidden_size": 576, "num_attention_heads": 9,
           "num_key_value_heads": 3, "num_hidden_layers": 30, "max_position_embeddings": 8192, "rope_theta": 100000.0}
    header = _gguf_header(cfg)
    pasted = open_page(PAGE)
    pasted.text_area(key="cfg_text").input(json.dumps(cfg)).run()
    uploaded = open_page(PAGE)
    uploaded.file_uploader(key="cfg_file").set_value(("smollm2-header.gguf", header[: len(header) // 2], "application/octet-stream")).run()
    clean(pasted)
    clean(uploaded)
    for key in CHARTS:
        a, b = curves(pasted, key), curves(uploaded, key)
        assert a.columns.tolist() == b.columns.tolist() and len(a) == len(b), key
        for c in a.columns:
            if a[c].dtype.kind == "f":
                np.testing.assert_allclose(a[c].to_numpy(), b[c].to_numpy(), rtol=1e-9, err_msg=f"{key} {c}")
            else:
                assert a[c].tolist() == b[c].tolist(), (key, c)
    fa, fb = model_fields(pasted), model_fields(uploaded)
    assert fb["pairing layout"] == "interleaved" and fa["pairing layout"] == "half_split"  # the file's own pairing
    assert fb["read from"].startswith("GGUF header")
    own = ("pairing layout", "read from")  # the file's own pairing and where it was read: the rest is the config's
    assert {k: v for k, v in fa.items() if k not in own} == {k: v for k, v in fb.items() if k not in own}
    assert any("GGUF header" in i.value for i in uploaded.info) and any("permuted" in i.value for i in uploaded.info)


def test_ministral3_query_scaling_and_softmax_scales_are_on_the_page():
    at = open_page(PAGE)
    at.text_area(key="cfg_text").input(EXAMPLE_CONFIGS["Ministral 3 8B"]).run()
    clean(at)
    f = model_fields(at)
    assert f["logit scale at p = 262,143"] == f"{1 + 0.1 * math.log(16):.6g}"  # Ministral3Attention's get_llama_4_attn_scale
    assert "× 1.0693 at 16,384" in f["query scale (every layer)"]
    assert any("llama_4_scaling_beta" in i.value for i in at.info)
    gemma = open_page(PAGE, {"model": "Gemma 2 27B"})
    clean(gemma)
    g = model_fields(gemma)
    assert g["softmax scale ÷ (1/√d)"] == f"{math.sqrt(128 / 144):.6g}" and g["logit scale"].startswith("0.94280904")
    assert "23 × full attention, RoPE; 23 × sliding attention (window 4,096), RoPE" == g["layers"]


def test_the_wrong_file_and_a_model_without_rope_are_named():
    at = open_page(PAGE)
    at.text_area(key="cfg_text").input('{"tokenizer_class": "LlamaTokenizerFast", "model_max_length": 131072}').run()
    assert not at.exception and any("tokenizer\\_config.json" in e.value or "tokenizer_config.json" in e.value for e in at.error)
    assert set(CHARTS) <= set(charts(at))
    falcon = {"_name_or_path": "tiiuae/falcon-rw-1b", "model_type": "falcon", "alibi": True, "hidden_size": 2048,
              "num_attention_heads": 32, "num_hidden_layers": 24}
    at.text_area(key="cfg_text").input(json.dumps(falcon)).run()
    assert not at.exception and any("ALiBi" in e.value for e in at.error)
    links = [e for e in at.get("page_link")]
    assert links and "relative_bias" in str(links[0].proto)


def test_the_models_settings_without_a_model_are_the_controls_measured_once(monkeypatch):
    """"Compare the methods at: the model's settings" with no model loaded says so and measures at the controls: each
    view is asked for the controls' measurements (cached by the default run), not for the same ones again under "model"."""
    import posenc.ui.cache as cache

    asked, key = [], cache._key
    views = {f"posenc.views.measure:{name}" for name in ("bands_view", "fidelity_view", "long_range_view")}
    monkeypatch.setattr(cache, "_key", lambda fn, args, kwargs: (k := key(fn, args, kwargs), asked.append(k))[0])
    default = open_page(PAGE)
    at = open_page(PAGE)
    at.segmented_control(key="at").set_value("model").run()
    clean(at)
    assert "No model is loaded, so the methods use the controls above." in text_of(at)
    wheres = [args[5] for name, args, _ in asked if name in views]
    assert len(wheres) == 9 and set(wheres) == {"controls"}, wheres  # three views, three runs
    for chart_key in CHARTS:
        assert curves(at, chart_key).equals(curves(default, chart_key)), chart_key


def _x_scales(spec: dict) -> list[dict]:
    """Every x scale a chart's layers declare (layers nest)."""
    found = [spec["encoding"]["x"].get("scale", {})] if "x" in spec.get("encoding", {}) else []
    return found + [s for layer in spec.get("layer", []) for s in _x_scales(layer)]


def test_the_log_axes_span_the_data_not_the_decades_around_it():
    """The entropy chart's lengths start at 64: a log axis rounded to decades ran from 10, an empty sixth of the plot."""
    drawn = charts(open_page(PAGE))
    for key in ("ext_logits", "ext_entropy"):
        logs = [s for s in _x_scales(drawn[key]["spec"]) if s.get("type") == "log"]
        assert logs and all(s.get("nice") is False for s in logs), (key, logs)
