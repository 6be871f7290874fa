"""Hostile pasted configs: bounded input, answered with a short message naming the key and the allowed range.

Beside the URL and file cases (test_hostile_urls.py, test_hostile_files.py): huge integers, NaN,
Infinity, -0, strings where numbers belong, lists of the wrong length or of 100,000 entries,
deep nesting and text over the size cap, through the library and through the page's text box.
"""

from __future__ import annotations

import json

import pytest
from apphelpers import charts, open_page
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import posenc
from posenc.io.configjson import MAX_CONFIG_BYTES, MAX_MESSAGE
from posenc.io.modelconfig import parse_model_config

PAGE = "pages/context_extension.py"
BIG = "1" + "0" * 400
BASE = '{"head_dim": 64, "max_position_embeddings": 4096, '
LONGROPE = BASE + '"rope_scaling": {"type": "longrope", "original_max_position_embeddings": 1024, "short_factor": %s, "long_factor": %s}}'

CASES = [  # (config text, what the message must name)
    (BASE + f'"rope_theta": {BIG}}}', "rope_theta"),
    (BASE + f'"rope_scaling": {{"type": "linear", "factor": {BIG}}}}}', "factor"),
    (BASE + f'"rope_scaling": {{"type": "yarn", "factor": 4, "beta_fast": {BIG}}}}}', "beta_fast"),
    (BASE + f'"partial_rotary_factor": {BIG}}}', "partial_rotary_factor"),
    (BASE + f'"rope_scaling": {{"type": "linear", "factor": -{BIG}}}}}', "factor"),
    (BASE + '"rope_theta": NaN}', "rope_theta"),
    (BASE + '"rope_theta": Infinity}', "rope_theta"),
    (BASE + '"rope_scaling": {"type": "linear", "factor": -Infinity}}', "factor"),
    (BASE + '"rope_theta": 1e400}', "rope_theta"),
    (BASE + '"rope_theta": -0}', "rope_theta"),
    ('{"head_dim": -0, "rope_theta": 10000}', "head_dim"),
    (BASE + '"rope_theta": "10000"}', "rope_theta"),
    (BASE + '"rope_scaling": {"type": "linear", "factor": "four"}}', "factor"),
    ('{"head_dim": "64"}', "head_dim"),
    (LONGROPE % (json.dumps([1.0] * 32), json.dumps([1.0] * 31)), "long_factor"),
    (LONGROPE % (json.dumps([1.0] * 32), json.dumps([1.0] * 100_000)), "long_factor"),
    (LONGROPE % (json.dumps(["x"] * 32), json.dumps([1.0] * 32)), "short_factor"),
    ('{"a": ' * 10_000 + "1" + "}" * 10_000, "nested"),
    ('{"a": ' * 20 + "1" + "}" * 20, "nested"),
    ("9" * 5000, "4,300 digits"),
]


@pytest.mark.parametrize("text, key", CASES)
def test_library_answers_with_a_short_message_naming_the_key(text, key):
    with pytest.raises(ValueError) as info:
        posenc.rope_from_config(text)
    msg = str(info.value)
    assert key in msg and len(msg) <= MAX_MESSAGE, msg


def test_size_cap_is_a_message_not_a_cut():
    with pytest.raises(ValueError, match="over 1 MiB"):
        parse_model_config('{"pad": "' + "x" * (MAX_CONFIG_BYTES + 10) + '"}')


@pytest.mark.parametrize("text, key", [CASES[0], CASES[1], CASES[5], CASES[15], CASES[17]])
def test_the_page_answers_and_keeps_working(text, key):
    at = open_page(PAGE)
    at.text_area(key="cfg_text").input(text).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert any(key in e for e in errors) and all(len(e) <= MAX_MESSAGE for e in errors), errors
    assert {"ext_ratio", "ext_fidelity", "ext_logits", "ext_entropy"} <= set(charts(at))  # the classic methods are still drawn


def test_the_page_names_a_paste_at_the_box_limit():
    at = open_page(PAGE)
    at.text_area(key="cfg_text").input("x" * (MAX_CONFIG_BYTES + 1)).run()
    assert not at.exception
    assert any("box's limit" in e.value for e in at.error)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**500, 10**500) | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)
FIELDS = ["head_dim", "hidden_size", "num_attention_heads", "rope_theta", "max_position_embeddings", "partial_rotary_factor",
          "rotary_dim", "qk_rope_head_dim", "rope_ratio", "kv_channels", "rope_scaling", "rope_parameters", "text_config",
          "original_max_position_embeddings", "rope_local_base_freq"]
SCALING = ["type", "rope_type", "factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "low_freq_factor",
           "high_freq_factor", "short_factor", "long_factor", "short_mscale", "attention_factor", "partial_rotary_factor"]


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=6),
       st.dictionaries(st.sampled_from(SCALING), json_values | st.sampled_from(["linear", "yarn", "longrope", "llama3", "dynamic"]),
                       max_size=6))
def test_any_config_is_parsed_or_answered_with_a_short_value_error(top, block):
    cfg = dict(top)
    if block:
        cfg["rope_scaling"] = block
    try:
        text = json.dumps(cfg)
    except ValueError:  # an integer Python will not print
        return
    for config in (text, cfg):
        try:
            r = posenc.rope_from_config(config)
        except ValueError as exc:
            assert len(str(exc)) <= MAX_MESSAGE
        else:
            assert r.inv_freq.size == r.rotary_dim // 2 or r.rope_type == "proportional"
