"""The "Inside a real model" pages: computed numbers at their defaults and on a typed text, exercises that ask before
they show, and, without the model package, a page that says what to install while the rest of the dashboard works."""

from __future__ import annotations

import importlib.metadata

import pytest
from apphelpers import assert_clean, chart_frame, charts, exported, metrics, open_page, payload_bytes, reveal, tables, text_of

import posenc.model as pm
from posenc.views.real_model import YOUR_DEFAULT

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
    # before the reveal the 25 % row and the rows on either side are blank: 12.5 % (+0.01 %) and 50 % (+0.81 %) on the
    # default passage both lie in the band "less than 1 %", so they gave the answer away
    hidden = tables(at)["real_heads_prope"].set_index("dropped %")
    assert hidden.loc[[12.5, 25.0, 50.0], "change %"].isna().all() and hidden.loc[[0.0, 75.0, 100.0], "change %"].notna().all()
    at = reveal(at, "prope25")
    assert "real_heads_prope" in charts(at)
    shown = tables(at)["real_heads_prope"].set_index("dropped %")
    assert shown["change %"].notna().all() and abs(shown.loc[12.5, "change %"]) < 1 and abs(shown.loc[50.0, "change %"]) < 1
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
    at = open_page("pages/real_extension.py", {"passage": "your text"}, timeout=SLOW)  # the link carries the label
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]  # the link's value was taken, not replaced by the default
    assert [t.value for t in at.text_input] == [YOUR_DEFAULT]
    n = len(pm.load().encode(YOUR_DEFAULT))
    assert any(label == f"perplexity with plain RoPE ({n} tokens)" for label in metrics(at)), list(metrics(at))


@needs_model
def test_every_forward_of_a_page_runs_in_a_compute_slot(monkeypatch):
    """Issue 38, item 5: at most the app's compute slots (posenc.ui.cache.MAX_CONCURRENT) run forwards at once --
    every forward a page starts holds one; a text no other test uses, so each forward is a cache miss."""
    from posenc.ui import cache

    module = importlib.import_module("posenc.model.forward")  # every forward, single or batched, runs through it
    seen, forward = [], module.forward

    def watched(*args, **kwargs):
        seen.append(getattr(cache._HELD, "depth", 0))
        return forward(*args, **kwargs)

    monkeypatch.setattr(module, "forward", watched)
    at = open_page("pages/real_relative.py", {"text": "Slots hold every forward of this page."}, timeout=SLOW)
    assert_clean(at)
    assert seen and all(depth >= 1 for depth in seen), seen


@needs_model
def test_extension_at_its_defaults():
    at = open_page("pages/real_extension.py", timeout=SLOW)
    assert_clean(at)
    bars = chart_frame(at, "real_extension_bars")
    assert set(bars["method"].dropna()) == {"PI (linear)", "NTK-aware", "YaRN", "Llama 3"}
    assert "plain RoPE" in text_of(at)
    # the exercise asks which method costs most at factor 8: its perplexities wait for the reveal, headline included
    before = text_of(at)
    at = reveal(at, "ext_worst")
    bars = chart_frame(at, "real_extension_bars")
    eight = bars[bars["factor"] == 8].dropna(subset=["perplexity"])  # drawn once revealed
    said = [f"{r.method} {r.perplexity:.2f}" for r in eight.itertuples()]
    assert len(said) == 4 and all(x in text_of(at) for x in said)
    assert not any(x in before for x in said)


@needs_model
def test_the_heads_wrap_up_keeps_the_prope_answer_until_the_reveal():
    at = open_page("pages/real_heads.py", timeout=SLOW)
    assert_clean(at)
    assert "Dropping the slowest 25 %" not in text_of(at)
    assert "Dropping the slowest 25 %" in text_of(reveal(at, "prope25"))


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


def test_each_extension_stands_on_plain_ropes_line():
    """On a log axis a bar needs a floor, and its length then means nothing: each method is a dot on a stem from plain
    RoPE's perplexity, so a stem's length is the log of the ratio.  The axis labels reach the top of the data (Vega's
    own log ticks stopped at 100 on a 50-200 axis)."""
    import pandas as pd

    from posenc.charts import real_model as real_charts

    frame = pd.DataFrame({"method": ["PI (linear)", "YaRN"], "key": ["rope_linear", "rope_yarn"], "factor": [2, 2],
                          "perplexity": [183.1, 55.6], "change %": [240.2, 3.3]})
    spec = real_charts.extension_bars(frame, base=53.8, factors=(2,)).to_dict()
    kinds = {layer["mark"]["type"]: layer for layer in spec["layer"] if isinstance(layer["mark"], dict)}
    assert "bar" not in kinds and {"rule", "point"} <= set(kinds)
    stems = next(layer for layer in spec["layer"] if "y2" in layer["encoding"])
    assert stems["encoding"]["y2"]["field"] == "plain"
    rows = [r for data in spec["datasets"].values() for r in data if "method" in r]
    assert len(rows) == 2 and all(r["plain"] == 53.8 for r in rows)
    y = kinds["point"]["encoding"]["y"]
    lo, hi = y["scale"]["domain"]
    assert y["scale"]["type"] == "log" and lo < 53.8 and hi > 183.1
    labels = y["axis"]["values"]
    assert min(labels) <= 60 and max(labels) >= 150 and all(lo <= v <= hi for v in labels)


def test_the_next_token_axis_shows_every_tenth_at_slide_width_and_on_a_phone():
    """The probability axis labels 0.0, 0.2, ..., 1.0, each visible, in a 1,600 px slide export and at a phone's 330 px
    (left to Vega, the slide drew 0.05 steps with "0.00" pushed into "0.05", which was hidden, and "1.00" hidden)."""
    import pandas as pd

    from posenc.charts import real_model as real_charts
    from posenc.io.export import chart_svg
    from tests.scenegraph import shown_texts

    frame = pd.DataFrame({"positions": "RoPE", "sentence": ["A", "B"] * 3, "token": ["' dog'"] * 2 + ["' man'"] * 2 + ["' cat'"] * 2,
                          "p": [0.93, 0.002, 0.02, 0.89, 0.01, 0.006]})
    chart = real_charts.next_token_bars(frame, positions="RoPE", title="with the model's RoPE")
    for width in (1600, 330):
        svg = chart_svg(chart.properties(width=width)).decode()
        assert shown_texts(svg, "role-axis-label") == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"], width


@needs_model
def test_every_export_of_a_real_model_page_says_which_model_and_which_text():
    """A real-model page's PNG and SVG carry a title and a line under it with the model and the passage or text (cut to 48
    characters), and the drawn chart carries neither; a typed text's line quotes it."""
    model = "SmolLM2-135M-Instruct (Q4_1 GGUF) · "
    long = "The dog bit the man and then ran all the way home across the park"  # 65 characters: cut at 48
    lighthouse = model + "The lighthouse (written here), 128 tokens"
    for path, query, lines in (
        ("pages/real_order.py", {}, {"real_order_rope": model + "A “The dog bit the man. The man bit the”, B “The man bit the dog. The dog bit the”",
                                     "real_order_loss": lighthouse}),
        ("pages/real_relative.py", {"text": long}, dict.fromkeys(("real_relative_max", "real_relative_kl"),
                                                                 model + "“The dog bit the man and then ran all the way…” (")),
        ("pages/real_extension.py", {"passage": "Alice (Carroll, 1865)", "n": "64"},
         {"real_extension_bars": model + "Alice (Carroll, 1865), 64 tokens"}),
        ("pages/real_heads.py", {}, dict.fromkeys(("real_heads_maps", "real_heads_kinds", "real_heads_energy", "real_heads_layers"),
                                                  model + "“")),
    ):
        at = open_page(path, query, timeout=SLOW)
        assert_clean(at)
        assert set(lines) <= set(charts(at)), (path, sorted(charts(at)))
        for key, c in charts(at).items():
            title = exported(at, key)[0]().to_dict()["title"]
            assert title["text"] and title["subtitle"][0].startswith(lines[key]), (path, key, title)
            assert "SmolLM2" not in str(c["spec"].get("title", "")), (path, key)
            if key == "real_heads_maps":  # the drawn chart's own title names the head: the export's says it too
                assert title["text"].startswith("Layer 3, head 0"), title
