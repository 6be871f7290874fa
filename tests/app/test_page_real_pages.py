"""The "Inside a real model" pages: computed numbers at their defaults and on a typed text, exercises that ask before
they show, and, without the model package, a page that says what to install while the rest of the dashboard works."""

from __future__ import annotations

import importlib.metadata

import pytest
from apphelpers import assert_clean, chart_frame, charts, metrics, open_page, payload_bytes, reveal, text_of

import posenc.model as pm

REAL = ("pages/real_order.py", "pages/real_heads.py", "pages/real_relative.py", "pages/real_extension.py")
needs_model = pytest.mark.skipif(not pm.available(), reason=f"the bundled model is not installed: {pm.INSTALL}")
SLOW = 300  # a cold page loads the model (a few seconds) and runs batched forwards


@needs_model
def test_order_defaults_and_the_reveal():
    at = open_page("pages/real_order.py", timeout=SLOW)
    assert_clean(at)
    m = metrics(at)
    assert m["after A, top next token (RoPE)"] == "' dog' 0.932" and m["after B, top next token (RoPE)"].startswith("' man'")
    assert m["KL(A‖B), no positions"] == "?" and "real_order_nope" not in charts(at)
    assert set(chart_frame(at, "real_order_loss")["positions"]) == {"RoPE"}
    at = reveal(at, "nope_order")
    assert "real_order_nope" in charts(at) and metrics(at)["KL(A‖B), no positions"].endswith("nats")
    assert payload_bytes(at) <= 1_000_000


@needs_model
def test_order_on_a_typed_text():
    at = open_page("pages/real_order.py", {"a": "The capital of France is", "b": "France is the capital of", "passage": "alice", "n": "64"},
                   timeout=SLOW)
    assert_clean(at)
    assert metrics(at)["after A, top next token (RoPE)"].startswith("' Paris' 0.77")
    assert metrics(at)["perplexity, RoPE (64 tokens)"]


@needs_model
def test_heads_defaults_and_a_typed_text():
    at = open_page("pages/real_heads.py", timeout=SLOW)
    assert_clean(at)
    kinds = chart_frame(at, "real_heads_kinds")
    assert len(kinds) == 270 and {"first token (sink)", "previous token"} <= set(kinds["kind"])
    assert {"real_heads_maps", "real_heads_energy", "real_heads_layers"} <= set(charts(at))
    at = reveal(at, "prope25")
    assert "real_heads_prope" in charts(at)
    at = open_page("pages/real_heads.py", {"text": "one two three four one two three four", "layer": "0", "head": "4"}, timeout=SLOW)
    assert_clean(at)


@needs_model
def test_relative_puts_the_float64_shift_on_the_page():
    at = open_page("pages/real_relative.py", timeout=SLOW)
    assert_clean(at)
    assert float(metrics(at)["max |Δlogit| at Δ = 10⁵, float64"]) < 1e-3
    assert set(chart_frame(at, "real_relative_kl")["precision"]) >= {"float64", "float32"}
    at = open_page("pages/real_relative.py", {"text": "A quiet river runs past the old mill."}, timeout=SLOW)
    assert_clean(at)
    assert float(metrics(at)["max |Δlogit| at Δ = 10⁵, float64"]) < 1e-3


@needs_model
def test_the_passage_box_starts_with_text():
    at = open_page("pages/real_extension.py", {"passage": "yours"}, timeout=SLOW)
    assert_clean(at)
    assert any(label.startswith("perplexity with plain RoPE") for label in metrics(at))


@needs_model
def test_extension_at_its_defaults():
    at = open_page("pages/real_extension.py", timeout=SLOW)
    assert_clean(at)
    bars = chart_frame(at, "real_extension_bars")
    assert set(bars["method"].dropna()) == {"PI (linear)", "NTK-aware", "YaRN", "Llama 3"}
    assert "plain RoPE" in text_of(at)


@needs_model
def test_a_too_long_text_is_a_message_not_a_crash():
    at = open_page("pages/real_relative.py", {"text": "word " * 39}, timeout=SLOW)
    assert not at.exception and any("at most 24 tokens" in e.value for e in at.error)


@pytest.fixture
def no_model(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "files", missing)
    assert not pm.available()


@pytest.mark.parametrize("path", REAL)
def test_without_the_package_each_page_says_what_to_install(no_model, path):
    at = open_page(path)
    assert not at.exception and not at.error
    assert any(pm.INSTALL in i.value for i in at.info)
    assert not charts(at)


@pytest.mark.parametrize("path", ["pages/home.py", "pages/rope.py", "pages/precision.py"])
def test_without_the_package_the_other_pages_work(no_model, path):
    assert_clean(open_page(path))
