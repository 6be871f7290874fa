"""Page 11 (similarity matrices): matrices and translation-invariance figures against posenc,
controls, seeded and bad links, uploads, payload budgets."""

import hashlib
import math

import numpy as np
import pytest
from apphelpers import (
    APP,
    assert_clean,
    chart_frame,
    charts,
    drawn_cells,
    export_keys,
    exported,
    open_page,
    payload_bytes,
    reveal,
    text_of,
)
from apphelpers import metrics as shown_metrics
from streamlit.testing.v1 import AppTest

import posenc

PAGE = "pages/similarity.py"
TI = ": deviation from translation invariance"
SIN, ROPE = "Sinusoidal (d 64, base 10000)", "RoPE (d 64, base 10000)"  # the metrics carry the settings
# the charts name a scheme alone, and the caption and export titles say the settings: a new d only swaps data
SIN_T, ROPE_T = "Sinusoidal", "RoPE"


def matrices(at) -> dict:
    """{panel title: DataFrame(i, j, score)} of the score-matrix panels (one chart each, under one Export menu):
    every cell, from the menu's CSV, after checking that the values drawn (rect cells, or an image's hover grid)
    are those cells."""
    frame = exported(at, "similarity_matrices")[1]
    out = {}
    served = export_keys(at)
    for key, c in charts(at).items():
        if served[key] != "similarity_matrices":
            continue
        title = c["spec"]["layer"][0]["title"]["text"]
        cells = frame[frame["scheme"] == title][["i", "j", "score"]].reset_index(drop=True)
        drawn = drawn_cells(c, c["spec"])
        merged = drawn[["i", "j", "score"]].merge(cells, on=["i", "j"], how="left", suffixes=("_drawn", ""))
        assert len(merged) == len(drawn) and len(drawn) <= len(cells)
        assert np.allclose(merged["score_drawn"], merged["score"], equal_nan=True), title
        out[title] = cells
    return out


def panels(at) -> list[str]:
    """The keys of the charts the score matrices' Export menu serves (the panels of one chart_grid), in page order."""
    return [key for key, menu in export_keys(at).items() if menu == "similarity_matrices"]


def offsets_of(at):
    """The offset profiles, from the chart's CSV (which adds each scheme's unit, method and settings), after checking
    that the chart draws its (scheme, offset, score) rows."""
    assert export_keys(at)["similarity_offsets"] == "similarity_offsets"
    drawn = chart_frame(at, "similarity_offsets")
    frame = exported(at, "similarity_offsets")[1]
    assert set(drawn.columns) == {"scheme", "offset", "score"} and len(drawn) == len(frame)  # no more is sent
    key = ["scheme", "offset"]
    both = drawn.merge(frame, on=key, suffixes=("_drawn", ""))
    assert len(both) == len(frame) and np.allclose(both["score_drawn"], both["score"], equal_nan=True)
    return frame


def metrics(at) -> dict:
    """The page's metrics once its exercise is revealed: before that every deviation shows "?" (the exercise counts
    those below 10⁻⁶; test_the_deviations_wait_for_the_reveal)."""
    if any(t.key == "ex_similarity_relative_reveal" for t in at.toggle):
        reveal(at, "similarity_relative")
    return shown_metrics(at)


def test_the_deviations_wait_for_the_reveal():
    """The issue: the four metrics at the top answered "how many below 10⁻⁶"."""
    at = open_page(PAGE)
    before = shown_metrics(at)
    assert len(before) == 4 and set(before.values()) == {"?"}, before
    after = metrics(at)
    assert sum(float(v) < 1e-6 for v in after.values()) == 3  # sinusoid (cosine), RoPE and ALiBi: relative; MiniLM not
    assert "**Answer: 3.**" in text_of(at)
    at.slider(key="n").set_value(64).run()  # a control turns the reveal off: "?" again
    assert set(shown_metrics(at).values()) == {"?"}


def ti_value(at, name: str) -> float:
    return float(metrics(at)[name + TI])


def cosine(G):
    nrm = np.sqrt(np.diag(G))
    return G / np.outer(nrm, nrm)


def test_defaults_match_posenc():
    at = open_page(PAGE)
    assert_clean(at)
    n = 128
    m = metrics(at)
    assert set(m) == {f"{s}{TI}" for s in (SIN, "Learned (MiniLM, trained)", ROPE, "ALiBi")}
    # translation invariance measured on matrices built from vectors (dense), not on the Toeplitz view
    E = posenc.encode("sinusoidal", np.arange(n), 64)
    assert ti_value(at, SIN) == pytest.approx(posenc.translation_invariance(cosine(E @ E.T)), abs=1e-13)
    assert ti_value(at, SIN) < 1e-12
    minilm = posenc.translation_invariance(posenc.position_scores("learned_minilm", n, d=384, metric="cosine"))
    assert m["Learned (MiniLM, trained)" + TI] == f"{minilm:.3g}"
    assert ti_value(at, ROPE) == pytest.approx(posenc.translation_invariance(posenc.dense_scores("rope", n, d=64)), abs=1e-13)
    assert m["ALiBi" + TI] == f"{posenc.translation_invariance(posenc.bias('alibi', n, 8)[0]):.3g}" == "0"

    assert panels(at) == [f"similarity_matrices_{i}" for i in range(4)]  # a chart per panel, one menu
    assert export_keys(at)["similarity_offsets"] == "similarity_offsets"
    mats = matrices(at)
    assert list(mats) == [SIN_T, "Learned (MiniLM, trained)", ROPE_T, "ALiBi"]
    assert "Drawn at n = 128; Sinusoidal: d 64, base 10000; RoPE: d 64, base 10000." in text_of(at)
    frame = exported(at, "similarity_matrices")[1]  # the CSV says each row's settings
    assert dict(frame.groupby("scheme")["settings"].first().fillna("")) == {
        SIN_T: "d 64, base 10000", "Learned (MiniLM, trained)": "", ROPE_T: "d 64, base 10000", "ALiBi": ""}
    for name, key, kw in [(SIN_T, "sinusoidal", dict(d=64, metric="cosine")),
                          ("Learned (MiniLM, trained)", "learned_minilm", dict(d=384, metric="cosine")),
                          (ROPE_T, "rope", dict(d=64)), ("ALiBi", "alibi", dict(n_heads=8, head=0))]:
        df = mats[name]
        assert len(df) == n * n and list(df.columns) == ["i", "j", "score"]
        S = posenc.position_scores(key, n, **kw)
        got = np.full((n, n), np.nan)
        got[df["i"].to_numpy(), df["j"].to_numpy()] = df["score"].to_numpy()
        want = np.where(np.isfinite(S), S, np.nan)  # -inf (masked) travels as NaN
        assert np.allclose(got, want, atol=2e-5 * max(1.0, np.nanmax(np.abs(want))), equal_nan=True), name
    offsets = offsets_of(at)
    assert set(offsets.columns) >= {"offset", "score", "scheme", "unit", "method"}
    alibi = offsets[offsets["scheme"] == "ALiBi"].set_index("offset")["score"]
    assert alibi[-10] == pytest.approx(-5.0)  # ALiBi get_slopes (arXiv:2108.12409): 8 heads, head 1 slope 2^-1
    assert math.isnan(alibi[10])  # masked future key
    rope = offsets[offsets["scheme"] == ROPE_T].set_index("offset")["score"]
    assert rope[0] == pytest.approx(64.0)  # all-ones probe: q.q = d
    assert set(offsets.loc[offsets["scheme"] == "Learned (MiniLM, trained)", "method"]) == {"mean over each diagonal"}
    assert "T5's value is its bucket id" in text_of(at)


def test_controls_change_the_numbers():
    at = open_page(PAGE)
    at.slider(key="n").set_value(256).run()
    assert_clean(at)
    minilm = posenc.translation_invariance(posenc.position_scores("learned_minilm", 256, d=384, metric="cosine"))
    assert metrics(at)["Learned (MiniLM, trained)" + TI] == f"{minilm:.3g}"
    mats = matrices(at)
    assert all(len(df) == 128 * 128 for df in mats.values())  # strided: one position in 2
    assert sorted(mats[ROPE_T]["i"].unique())[:3] == [0, 2, 4]
    assert "one position in 2" in text_of(at)
    at.slider(key="head").set_value(8).run()
    alibi = offsets_of(at).query("scheme == 'ALiBi'").set_index("offset")["score"]
    assert alibi[-100] == pytest.approx(-100 / 256)  # head 8 of 8: slope 2^-8
    at.segmented_control(key="metric").set_value("dot").run()
    assert_clean(at)
    sin = matrices(at)[SIN_T]
    assert sin["score"].max() == pytest.approx(32.0)  # dot at offset 0 = ||PE||^2 = d/2 (Vaswani et al. 2017, arXiv:1706.03762 §3.5)
    at.multiselect(key="schemes").set_value(["learned_random", "nope"]).run()
    assert_clean(at)
    RAND = "Learned (untrained, random) (d 64)"
    assert set(metrics(at)) == {RAND + TI, "NoPE (causal mask only)" + TI}
    rand = posenc.translation_invariance(posenc.position_scores("learned_random", 256, d=64, metric="dot"))
    assert metrics(at)[RAND + TI] == f"{rand:.3g}"
    assert list(matrices(at)) == ["Learned (untrained, random)", "NoPE (causal mask only)"]
    assert "Drawn at n = 256; Learned (untrained, random): d 64." in text_of(at)


def test_seeded_link_with_repeated_scheme_keys():
    # the URL holds the option labels (format_func output): display names
    at = open_page(PAGE, {"schemes": ["RoPE + YaRN", "T5 relative buckets", "Raw index"], "n": "64", "d": "32", "metric": "dot"})
    assert_clean(at)
    assert not at.warning
    assert at.multiselect(key="schemes").value == ["rope_yarn", "t5", "raw_index"]
    # extensions at the common settings by default (base 1e4, s 4, L 2048: the registry default of most)
    yarn = "RoPE + YaRN (d 32, base 10000, s 4, L 2,048)"
    assert ti_value(at, yarn) == pytest.approx(posenc.translation_invariance(posenc.dense_scores("rope_yarn", 64, d=32)), abs=1e-13)
    raw = posenc.translation_invariance(posenc.position_scores("raw_index", 64, d=32, metric="dot"))
    assert metrics(at)["Raw index" + TI] == f"{raw:.3g}"
    t5 = offsets_of(at).query("scheme == 'T5 relative buckets'").set_index("offset")["score"]
    assert (t5[-1], t5[1], t5[7], t5[20]) == (1, 17, 23, 26)  # HF T5 bucket function, run, bidirectional 32/128


def test_extensions_compared_at_common_settings_by_default():
    at = open_page(PAGE, {"schemes": ["RoPE + Llama 3 scaling", "RoPE + YaRN"], "n": "64"})
    assert_clean(at)
    assert set(matrices(at)) == {"RoPE + Llama 3 scaling", "RoPE + YaRN"}
    assert ("Drawn at n = 64; RoPE + Llama 3 scaling: d 64, base 10000, s 4, L 2,048; RoPE + YaRN: d 64, base 10000, s 4, "
            "L 2,048.") in text_of(at)
    llama = posenc.position_scores("rope_llama3", 64, d=64, base=1e4, factor=4.0, original_max_position_embeddings=2048)
    m = matrices(at)["RoPE + Llama 3 scaling"]
    assert float(m["score"].max()) == pytest.approx(float(np.max(llama)), rel=1e-6)
    at.segmented_control(key="ext").set_value("registry").run()
    assert "RoPE + Llama 3 scaling (d 64, base 500000, s 8, L 8,192)" + TI in metrics(at)
    assert "RoPE + Llama 3 scaling: d 64, base 500000, s 8, L 8,192" in text_of(at)  # the caption says the settings
    offsets = offsets_of(at)
    assert set(offsets.loc[offsets["scheme"] == "RoPE + Llama 3 scaling", "settings"]) == {"d 64, base 500000, s 8, L 8,192"}


def test_bad_link_values_are_noted():
    bad = open_page(PAGE, {"schemes": ["Bogus scheme"], "n": "99999", "metric": "cosinus", "head": "0", "d": "abc"})
    assert_clean(bad)
    notes = "\n".join(w.value for w in bad.warning)
    for key in ("`schemes`", "`n`", "`metric`", "`head`", "`d`"):
        assert key in notes, (key, notes)
    assert len(metrics(bad)) == 4  # defaults shown instead


def test_learned_table_past_its_rows_is_an_error_and_the_rest_still_works():
    at = open_page(PAGE, {"n": "600"})
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "max_len = 512" in errors[0]
    assert not at.exception
    assert set(metrics(at)) == {f"{s}{TI}" for s in (SIN, ROPE, "ALiBi")}
    assert panels(at) == [f"similarity_matrices_{i}" for i in range(3)]
    assert export_keys(at)["similarity_offsets"] == "similarity_offsets"


def test_one_scheme_asks_for_two():
    at = open_page(PAGE, {"schemes": ["RoPE"]})
    assert_clean(at)
    assert any("at least two" in i.value for i in at.info)


def test_uploaded_table_is_an_option_for_this_session():
    from posenc.ui import uploads

    table = posenc.minilm_table()
    sha = hashlib.sha256(b"test-minilm").hexdigest()
    uploads._put(sha, table)
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(PAGE)
    at.session_state["posenc_uploads"] = {"minilm.npy": uploads.TableMeta("minilm.npy", sha, (512, 384), "minilm.npy", None, "float16")}
    at.query_params["schemes"] = ["Uploaded: minilm.npy", "Learned (MiniLM, trained)"]
    at.run()
    assert_clean(at)
    assert not at.warning
    # the same table through posenc.tables and through the registry: the same figure
    m = metrics(at)
    assert m["Uploaded: minilm.npy" + TI] == m["Learned (MiniLM, trained)" + TI]
    # another session has no such upload: the link's value is noted, not used
    other = open_page(PAGE, {"schemes": ["Uploaded: minilm.npy", "RoPE"]})
    assert_clean(other)
    assert any("`schemes`" in w.value for w in other.warning)


def test_payload_budgets():
    at = open_page(PAGE)
    assert payload_bytes(at) <= 1_000_000
    big = open_page(PAGE, {"schemes": ["Sinusoidal", "Raw index", "RoPE", "ALiBi"], "n": "4096", "d": "512"}, timeout=180)
    assert_clean(big)
    assert payload_bytes(big) <= 2_000_000
    assert all(c["rows"] <= 65_536 for c in charts(big).values())
    assert metrics(big)["ALiBi" + TI] == "0"  # one head built densely from (i, j): exactly relative
    assert "memory cap" not in text_of(big)


def test_exports_offered_only_for_matrices_drawn():
    at = open_page(PAGE, {"n": "4096"})  # MiniLM has 512 rows: it says so and is not drawn
    assert any("past the last row" in e.value for e in at.error)
    arrays = exported(at, "similarity_matrices")[2]
    assert set(arrays) == {"scores_sinusoidal", "scores_rope", "scores_alibi"}
    assert arrays["scores_alibi"]().shape == (4096, 4096)  # every offered export builds
