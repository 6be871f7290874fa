"""Hostile uploads on the Learned tables page: every malformed file gets a clear message, nothing
is unpickled, the page (and the next, valid upload) keeps working; a valid table then appears
on the similarity and compare pages of the same session, and a link to it reopens it in another.
A file or tensor name made of Markdown (a "Log in" link, an image) shows as text on every page;
the upload store keeps to its byte budgets and says what it let go."""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
from pathlib import Path

import numpy as np
import pytest
from apphelpers import assert_clean, charts, metrics, open_page
from mdcheck import live_links
from numpy.lib import format as npy_format

from posenc.io import MAX_UPLOAD_BYTES

PAGE = "pages/learned.py"


class _Bomb:
    """Unpickling this would create a marker file: proof that nothing is ever unpickled."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def _npy(arr, *, allow_pickle=False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=allow_pickle)
    return buf.getvalue()


def _npy_header_only(shape, dtype="<f8") -> bytes:
    buf = io.BytesIO()
    npy_format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buf.getvalue() + b"\0" * 64


def _safetensors(header: dict, data: bytes, *, declared_len: int | None = None) -> bytes:
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    n = len(raw) if declared_len is None else declared_len
    return struct.pack("<Q", n) + raw + data


GOOD = np.random.default_rng(0).normal(0, 0.02, size=(64, 16))


def _npy_padded_header() -> bytes:
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (64, 16), }"
    h = (header + " " * 1_000_000 + "\n").encode("latin1")
    return b"\x93NUMPY\x02\x00" + struct.pack("<I", len(h)) + h + GOOD.tobytes()


def label_of(name: str, data: bytes, tensor: str = "") -> str:
    """The label posenc.ui.uploads gives an upload: its name and 12 hex digits of SHA-256(bytes, 0, tensor)."""
    digest = hashlib.sha256(data + bytes(1) + tensor.encode()).hexdigest()
    return f"{name}:{tensor} · {digest[:12]}" if tensor else f"{name} · {digest[:12]}"


def hostile_files(marker: str) -> list[tuple[str, str, bytes, str]]:
    """(case id, filename, bytes, a fragment the error message must contain)."""
    good_st = _safetensors({"wpe.weight": {"dtype": "F32", "shape": [64, 16], "data_offsets": [0, 64 * 16 * 4]}},
                           GOOD.astype("<f4").tobytes())
    nan = GOOD.copy()
    nan[3, 2] = np.nan
    inf = GOOD.copy()
    inf[7, 0] = np.inf
    return [
        ("pickled-object-array", "bomb.npy", _npy(np.array([_Bomb(marker)], dtype=object), allow_pickle=True), "object"),
        ("truncated-npy", "cut.npy", _npy(GOOD)[:-100], "truncated"),
        ("huge-declared-shape", "huge.npy", _npy_header_only((10**9, 10**6)), "elements"),
        ("complex-dtype", "complex.npy", _npy(GOOD.astype(np.complex128)), "complex"),
        ("int-dtype", "ints.npy", _npy(np.arange(64 * 16).reshape(64, 16)), "int"),
        ("one-dimensional", "flat.npy", _npy(GOOD.ravel()), "2-D"),
        ("three-dimensional", "cube.npy", _npy(GOOD.reshape(4, 16, 16)), "2-D"),
        ("nan", "nan.npy", _npy(nan), "NaN"),
        ("inf", "inf.npy", _npy(inf), "inf"),
        ("empty", "empty.npy", b"", "empty"),
        ("over-the-cap", "big.npy", b"\x93NUMPY" + b"\0" * (MAX_UPLOAD_BYTES + 1), "limit"),
        ("padded-npy-header", "pad.npy", _npy_padded_header(), "header is"),
        ("one-row", "row.npy", _npy(np.ones((1, 12_000), np.float32)), "row(s)"),
        ("too-wide", "wide.npy", _npy(np.ones((8, 8193), np.float16)), "column(s)"),
        ("safetensors-overlapping-offsets", "twin.safetensors",
         _safetensors({"wpe.weight": {"dtype": "F32", "shape": [64, 16], "data_offsets": [0, 4096]},
                       "alias.weight": {"dtype": "F32", "shape": [64, 16], "data_offsets": [0, 4096]}}, GOOD.astype("<f4").tobytes()),
         "overlap"),
        ("safetensors-bad-header-length", "bad.safetensors", _safetensors({}, b"", declared_len=10**12), "header"),
        ("safetensors-offsets-out-of-range", "off.safetensors",
         _safetensors({"wpe.weight": {"dtype": "F32", "shape": [64, 16], "data_offsets": [0, 10**9]}}, b"\0" * 16), "offset"),
        ("safetensors-garbage", "junk.safetensors", b"not a safetensors file at all", "safetensors"),
        ("pickle-checkpoint", "model.pt", b"PK\x03\x04", "refused"),
        ("valid-control", "good.safetensors", good_st, ""),
    ]


@pytest.mark.parametrize("case", [c[0] for c in hostile_files("/dev/null")])
def test_hostile_upload_is_answered_clearly(case, tmp_path):
    marker = str(tmp_path / "unpickled")
    _, name, data, fragment = next(c for c in hostile_files(marker) if c[0] == case)
    at = open_page(PAGE)
    before = set(charts(at))
    at.get("file_uploader")[0].upload(name, data).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = " ".join(e.value for e in at.error)
    if fragment:
        assert fragment.lower() in errors.lower(), (case, errors)
        assert name in errors  # the message names the file
    else:
        assert not errors, errors
        assert any("Loaded" in s.value for s in at.success)
    assert not os.path.exists(marker), "the upload was unpickled"
    # the page keeps working, and a valid upload afterwards is taken
    assert before <= set(charts(at))  # every chart drawn before the upload is still drawn
    at.get("file_uploader")[0].upload("ok.npy", _npy(GOOD)).run()
    assert not at.exception and any(f"Loaded `{label_of('ok.npy', _npy(GOOD))}`" in s.value for s in at.success)


def test_an_upload_becomes_a_scheme_on_the_other_pages():
    at = open_page(PAGE)
    at.get("file_uploader")[0].upload("mine.npy", _npy(GOOD)).run()
    assert any(f"Loaded `{label_of('mine.npy', _npy(GOOD))}`" in s.value for s in at.success)
    at.switch_page("pages/similarity.py").run()
    assert not at.exception
    options = [o for m in at.multiselect for o in m.options]
    assert any("mine.npy" in o for o in options), options
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    table = at.dataframe[0].value
    assert table.astype(str).apply(lambda col: col.str.contains("mine.npy")).any().any()


EVIL = "[Log in](http://evil.example/a) ![p](http://evil.example/p.png) www.evil.example"


def test_markdown_in_file_and_tensor_names_shows_as_text_on_every_page():
    npy_name = f"{EVIL}.npy"
    st_data = _safetensors({f"x` {EVIL} `": {"dtype": "F32", "shape": [64, 16], "data_offsets": [0, 4096]}}, GOOD.astype("<f4").tobytes())
    at = open_page(PAGE)
    at.get("file_uploader")[0].upload("junk " + npy_name, b"not numpy").run()  # an error quoting the name
    assert at.error and not live_links(at), live_links(at)
    at.get("file_uploader")[0].upload(npy_name, _npy(GOOD)).run()
    assert_clean(at)
    at.get("file_uploader")[0].upload("t.safetensors", st_data).run()
    assert_clean(at)
    labels = [o for o in at.selectbox(key="table").options if "evil" in o]
    assert len(labels) == 2, at.selectbox(key="table").options
    assert not live_links(at), live_links(at)
    for label in list(at.session_state["posenc_uploads"]):
        at.selectbox(key="table").set_value(f"upload:{label}").run()
        assert_clean(at)
        assert metrics(at)["rows × channels"] == "64 × 16"
        assert not live_links(at), live_links(at)
    at.switch_page("pages/similarity.py").run()
    at.slider(key="n").set_value(64).run()  # the tables have 64 rows
    at.multiselect(key="schemes").set_value(["sinusoidal", *[f"upload:{label}" for label in at.session_state["posenc_uploads"]]]).run()
    assert_clean(at)
    assert len(at.metric) == 3 and not live_links(at), live_links(at)
    at.switch_page("pages/compare.py").run()
    assert_clean(at)
    assert not live_links(at), live_links(at)


def test_a_link_reopens_an_upload_in_another_session_while_the_server_holds_it():
    data = _npy(GOOD)
    label = label_of("mine.npy", data)
    at = open_page(PAGE)
    at.get("file_uploader")[0].upload("mine.npy", data).run()
    assert_clean(at)
    # a reload, or the link sent to a colleague: a new session with only the URL
    other = open_page(PAGE, {"table": label})
    assert_clean(other)
    assert metrics(other)["rows × channels"] == "64 × 16" and not any("`table`" in w.value for w in other.warning)
    sim = open_page("pages/similarity.py", {"schemes": ["Sinusoidal", f"Uploaded: {label}"], "n": "64"})
    assert_clean(sim)
    assert f"Uploaded: {label}: deviation from translation invariance" in metrics(sim)
    # the server restarted (or let the table go): the link names it plainly
    import streamlit as st

    st.cache_resource.clear()
    gone = open_page(PAGE, {"table": label})
    assert not gone.exception and metrics(gone)["rows × channels"] == "512 × 384"
    notes = "\n".join(w.value for w in gone.warning)
    assert f"The uploaded table “{label}” is no longer on this server" in notes and "Upload the file again" in notes


def test_the_store_keeps_to_its_budgets_and_says_what_it_let_go(monkeypatch):
    from posenc.io import uploads as pio
    from posenc.ui import uploads

    table_bytes = GOOD.nbytes  # 64 x 16 float64 = 8192 bytes
    monkeypatch.setattr(uploads, "SESSION_MAX_BYTES", 2 * table_bytes)
    calls = []
    read = pio.read_position_table
    monkeypatch.setattr(pio, "read_position_table", lambda *a, **k: calls.append(a[1]) or read(*a, **k))
    at = open_page(PAGE)
    files = [(f"t{i}.npy", _npy(GOOD + i)) for i in range(3)]
    for name, data in files:
        at.get("file_uploader")[0].upload(name, data).run()
        assert_clean(at)
    infos = "\n".join(i.value for i in at.info)  # said once, on the run that let it go
    assert f"so it let the oldest go: `{label_of(*files[0])}`" in infos, infos
    at.run()
    at.run()
    assert calls == ["t0.npy", "t1.npy", "t2.npy"]  # each file parsed once, not on every rerun
    kept = [o for o in at.selectbox(key="table").options if o.startswith("t")]
    assert kept == [label_of(n, d) for n, d in files[1:]]
    assert uploads.store_bytes() == 2 * table_bytes  # t0 was this session's alone: it left the store too
    # the total budget: another session's upload pushes out the least recently used table
    monkeypatch.setattr(uploads, "STORE_MAX_BYTES", 2 * table_bytes)
    other = open_page(PAGE)
    other.get("file_uploader")[0].upload("t3.npy", _npy(GOOD + 3)).run()
    assert_clean(other)
    assert uploads.store_bytes() <= 2 * table_bytes
    at.selectbox(key="table").set_value(f"upload:{label_of(*files[1])}").run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert errors.count("is no longer on this server") == 1 and f"“{label_of(*files[1])}”" in errors, errors
