"""Page 7 (learned tables): MiniLM vs the sinusoid vs noise, row 512, uploads, links, payload."""

import hashlib
import io
import math

import numpy as np
import pytest
from apphelpers import (
    assert_clean,
    chart_frame,
    charts,
    metrics,
    open_page,
    payload_bytes,
    tables,
    text_of,
)

import posenc
from posenc.schemes.learned import minilm_table, random_table

PAGE = "pages/learned.py"
# Vaswani et al. 2017, arXiv:1706.03762 §3.5: ||PE(p)|| = sqrt(d/2); d = 384
SINUSOID_NORM = f"{math.sqrt(192):.4f}"
# the keys of the charts drawn at position 512 (one past MiniLM's last row: "learned_row", the table's row, is not drawn)
CHARTS = ("learned_table", "learned_similarity", "learned_norms", "learned_spectrum", "learned_sinusoid_at")


def _cos(T):
    U = T / np.linalg.norm(T, axis=1, keepdims=True)
    return U @ U.T


def _reveal(at, key):
    at.toggle(key=f"ex_{key}_reveal").set_value(True).run()
    return "\n".join(m.value for m in at.markdown if "Answer:" in m.value)


def test_defaults_show_minilm_and_row_512():
    at = open_page(PAGE)
    assert_clean(at)
    T = minilm_table()
    m = metrics(at)
    assert m["rows × channels"] == "512 × 384"
    # the metadata's median row norm (float32 checkpoint) is 0.478485376906587
    assert m["median ‖row‖"] == f"{np.median(np.linalg.norm(T, axis=1)):.4f}" == "0.4785"
    assert m["mean cos(row p, row p+1)"] == f"{np.mean(np.diagonal(_cos(T), 1)):.3f}"
    assert m["‖sinusoid at 512‖ = √(d/2)"] == SINUSOID_NORM
    # median wavelength, recomputed with numpy's FFT: channel means removed, power averaged over channels
    X = np.fft.rfft(T - T.mean(axis=0), axis=0)[1:]
    power = (np.abs(X) ** 2).mean(axis=1)
    k = np.searchsorted(np.cumsum(power) / power.sum(), 0.5)
    assert m["median wavelength (positions)"] == f"{512 / (k + 1):.1f}" == "46.5"
    # the page answers row 512 with the library's own message, not a crash
    with pytest.raises(ValueError) as exc:
        posenc.learned_lookup(T, [512])
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1 and str(exc.value) in warnings[0] and "max_len = 512" in warnings[0]
    # provenance: model, tensor, licence, stored dtype (posenc/data/README.md)
    text = text_of(at)
    for fact in ("sentence-transformers/all-MiniLM-L6-v2", "embeddings.position_embeddings.weight", "Apache-2.0", "float16"):
        assert fact in text
    drawn = charts(at)
    assert set(CHARTS) <= set(drawn) and "learned_row" not in drawn
    heat, sim, norms, spec, sine = (chart_frame(at, key) for key in CHARTS)
    assert set(heat.columns) == {"position", "channel", "value"} and len(heat) <= 16_384
    S = posenc.position_scores("learned_minilm", 512, d=384, metric="cosine")
    grid = sim.pivot(index="i", columns="j", values="cosine").to_numpy()
    assert np.allclose(grid, S[::4, ::4], atol=1e-6)
    assert set(norms["table"]) == {"MiniLM (trained)", "sinusoid", "untrained random"} and len(norms) == 3 * 512
    assert set(spec.columns) >= {"frequency", "share", "table"} and len(spec) == 3 * 256
    assert np.allclose(sine["value"], posenc.sinusoidal([512], 384)[0], atol=1e-6)
    # the exercise: first p > 1 with cos(row 1, row p) < 0.5
    first = next(p for p in range(2, 512) if S[1, p] < 0.5)
    assert f"**Answer: {first}.**" in _reveal(at, "first_below")


def test_switching_tables_and_position_changes_the_numbers():
    at = open_page(PAGE)
    at.segmented_control(key="table").set_value("sinusoid").run()
    assert_clean(at)
    assert metrics(at)["median ‖row‖"] == SINUSOID_NORM
    assert not at.warning  # the sinusoid is defined at 512
    w = posenc.sinusoid_frequencies(384)
    k = next(k for k in range(1, 600) if np.cos(k * w).sum() / 192 < 0.5)  # cos(P1, P1+k) = mean cos(k w_i)
    assert f"**Answer: {1 + k}.**" in _reveal(at, "first_below")

    at.segmented_control(key="table").set_value("random").run()
    at.slider(key="seed").set_value(3).run()
    assert_clean(at)
    R = random_table(512, 384, seed=3)
    assert metrics(at)["median ‖row‖"] == f"{np.median(np.linalg.norm(R, axis=1)):.4f}"
    off = ~np.eye(512, dtype=bool)
    assert f"Mean |cos| off the diagonal: {np.abs(_cos(R)[off]).mean():.3f}" in text_of(at)

    at.segmented_control(key="table").set_value("minilm").run()
    at.slider(key="position").set_value(511).run()
    assert_clean(at)
    assert not at.warning
    assert metrics(at)["‖row 511‖ of the table"] == f"{np.linalg.norm(minilm_table()[511]):.4f}"
    assert {*CHARTS, "learned_row"} <= set(charts(at))  # the table's row 511 is drawn next to the sinusoid's


def test_link_values_are_taken_and_bad_ones_noted():
    at = open_page(PAGE, {"table": "untrained random", "seed": "7", "position": "100", "n": "128"})
    assert_clean(at)
    assert not at.warning
    R = random_table(512, 384, seed=7)
    assert metrics(at)["‖row 100‖ of the table"] == f"{np.linalg.norm(R[100]):.4f}"
    assert len(chart_frame(at, "learned_similarity")) == 128 * 128
    bad = open_page(PAGE, {"table": "upload:someone-elses.npy", "position": "99999", "n": "3", "seed": "inf"})
    assert not bad.exception and not bad.error
    notes = "\n".join(w.value for w in bad.warning)
    for key in ("`table`", "`position`", "`n`", "`seed`"):
        assert key in notes, notes
    assert metrics(bad)["rows × channels"] == "512 × 384"  # defaults: MiniLM, position 512
    assert "max_len = 512" in notes


def _npy(arr) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def _label(name: str, data: bytes) -> str:
    """An upload's label: its name and the first 12 hex digits of the SHA-256 of its bytes (posenc.ui.uploads)."""
    digest = hashlib.sha256(data + bytes(1)).hexdigest()
    return f"{name} · {digest[:12]}"


def _upload(at, name: str, data: bytes):
    at.file_uploader(key="upload").set_value((name, data, "application/octet-stream")).run()
    at.selectbox(key="table").set_value("upload:" + _label(name, data)).run()
    return _label(name, data)


def test_uploaded_table_joins_every_view():
    table = np.cumsum(np.random.default_rng(0).normal(size=(300, 32)), axis=0).astype(np.float32)  # smooth-ish
    at = open_page(PAGE)
    walk = _upload(at, "walk.npy", _npy(table))
    assert_clean(at)
    T = table.astype(np.float64)
    m = metrics(at)
    assert m["rows × channels"] == "300 × 32"
    assert m["median ‖row‖"] == f"{np.median(np.linalg.norm(T, axis=1)):.4f}"
    assert m["‖sinusoid at 512‖ = √(d/2)"] == f"{math.sqrt(16):.4f}"  # the sinusoid of the upload's width
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1 and "max_len = 300" in warnings[0]
    sim = chart_frame(at, "learned_similarity")
    grid = sim.pivot(index="i", columns="j", values="cosine").to_numpy()
    assert grid.shape == (100, 100)  # 300 rows, one in 3 drawn
    assert np.allclose(grid, posenc.analysis.tables.table_scores(T, 300)[::3, ::3], atol=1e-5)
    assert walk in set(chart_frame(at, "learned_norms")["table"]) and walk in set(chart_frame(at, "learned_spectrum")["table"])
    summary = tables(at)["learned_summary"].set_index("table")
    assert list(summary.index) == ["MiniLM (trained)", "sinusoid", "untrained random", walk]
    assert summary.loc[walk, "median ‖row‖"] == pytest.approx(np.median(np.linalg.norm(T, axis=1)), abs=5e-5)  # to 4 decimals
    at.slider(key="position").set_value(299).run()
    assert not at.warning
    assert metrics(at)["‖row 299‖ of the table"] == f"{np.linalg.norm(T[299]):.4f}"


def test_odd_shaped_uploads_never_crash():
    at = open_page(PAGE)
    tall = np.random.default_rng(0).normal(size=(100_000, 2)).astype(np.float32)
    _upload(at, "tall.npy", _npy(tall))
    assert_clean(at)
    assert metrics(at)["rows × channels"] == "100,000 × 2"
    assert "one position in 25 drawn" in text_of(at)  # 100,000 rows thinned to <= 4,096 points
    assert payload_bytes(at) <= 2_000_000
    # the widest table every page can analyse (the sinusoid of its width is drawn beside it), and the narrowest,
    # both as short as any page allows (the Similarity page compares at least 8 positions)
    for shape in ((8, 8192), (8, 1)):
        at = open_page(PAGE)
        _upload(at, "edge.npy", _npy(np.random.default_rng(1).normal(size=shape).astype(np.float32)))
        assert_clean(at)
        drawn = charts(at)
        assert metrics(at)["rows × channels"] == f"{shape[0]} × {shape[1]:,}"
        assert set(CHARTS) <= set(drawn) and "learned_row" not in drawn  # no row 512
    # one column wider is refused at upload, with the limit named: nothing on any page has to fail later
    at = open_page(PAGE)
    at.file_uploader(key="upload").set_value(("wide.npy", _npy(np.zeros((8, 8193), np.float32)), "application/octet-stream")).run()
    assert not at.exception and [e.value for e in at.error] == [
        "'wide.npy': has 8,193 column(s); a position table here has 1 to 8,192 columns (d_model)"]
    assert "upload:" not in str(at.segmented_control(key="table").options)


def test_a_broken_upload_is_a_message_not_a_crash():
    at = open_page(PAGE)
    at.file_uploader(key="upload").set_value(("junk.npy", b"not a numpy file", "application/octet-stream")).run()
    assert not at.exception
    assert at.error and metrics(at)["rows × channels"] == "512 × 384"


def test_payload_budgets():
    at = open_page(PAGE)
    assert payload_bytes(at) <= 1_000_000
    big = open_page(PAGE, {"n": "2048", "position": "4096", "table": "untrained random", "seed": "10000"})
    assert_clean(big)
    assert payload_bytes(big) <= 2_000_000
    # the largest upload shape the loader allows is 2^25 values; a long one is the worst for the line charts
    long = np.random.default_rng(0).normal(size=(16_384, 8)).astype(np.float32)
    _upload(big, "long.npy", _npy(long))
    assert_clean(big)
    assert payload_bytes(big) <= 2_000_000, payload_bytes(big)
