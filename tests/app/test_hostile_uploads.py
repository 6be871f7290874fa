"""Issue 41 on the upload widget (posenc/ui/uploads.py): S1, a refused file leaves Streamlit's uploader at once and a
parsed table's raw bytes go; S5, a .safetensors header with very many tensors is parsed once and its picker is
capped; R4, a table whose squares overflow is refused at upload with the limit named."""

from __future__ import annotations

import io
import json
import struct

import numpy as np
import pytest
from apphelpers import assert_clean, metrics, open_page

from posenc.ui import compat, uploads

PAGE = "pages/learned.py"
GOOD = np.random.default_rng(0).normal(0, 0.02, size=(64, 16))


def _npy(arr) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def _safetensors(count: int, rows: int = 8, cols: int = 2) -> bytes:
    """``count`` 2-D float32 tensors (rows × cols each) named t00000 ..., one of them a position table."""
    size = rows * cols * 4
    header = {f"t{i:05d}": {"dtype": "F32", "shape": [rows, cols], "data_offsets": [i * size, (i + 1) * size]}
              for i in range(count)}
    header["wpe.weight"] = header.pop(f"t{count - 1:05d}")
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    data = np.random.default_rng(1).normal(0, 0.02, size=count * rows * cols).astype("<f4").tobytes()
    return struct.pack("<Q", len(raw)) + raw + data


@pytest.fixture
def released(monkeypatch):
    """The files posenc asked Streamlit's uploader to drop (compat.release_upload), by name."""
    names: list[str] = []
    real = compat.release_upload
    monkeypatch.setattr(compat, "release_upload", lambda f: (names.append(f.name), real(f)))
    return names


def test_a_refused_file_leaves_the_uploader_at_once(released):
    at = open_page(PAGE)
    at.file_uploader(key="upload").set_value(("junk.npy", b"not a numpy file", "application/octet-stream")).run()
    assert not at.exception
    assert released == ["junk.npy"]  # its bytes left Streamlit's upload manager in the run that refused it
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "junk.npy" in errors[0]  # the message stays, beside an emptied uploader
    [uploader] = at.get("file_uploader")
    assert uploader.key != "upload" and uploader.value is None
    uploader.set_value(("ok.npy", _npy(GOOD), "application/octet-stream")).run()  # the emptied uploader takes the next
    assert_clean(at)
    assert released == ["junk.npy", "ok.npy"]  # a parsed .npy table: its raw bytes are not needed again
    assert any(label.startswith("ok.npy") for label in at.session_state["posenc_uploads"])
    at.run()
    assert_clean(at)
    assert metrics(at)["rows × channels"] == "512 × 384"  # the shipped table stays selected; the upload is listed


def test_a_safetensors_header_is_parsed_once_and_its_picker_capped(monkeypatch):
    from posenc.io import uploads as pio

    monkeypatch.setattr(uploads, "MAX_TENSOR_OPTIONS", 50)
    uploads._NAMES.clear()
    calls = []
    names = pio.safetensors_tensor_names
    monkeypatch.setattr(pio, "safetensors_tensor_names", lambda *a, **k: calls.append(1) or names(*a, **k))
    data = _safetensors(400)
    at = open_page(PAGE)
    at.file_uploader(key="upload").set_value(("many.safetensors", data, "application/octet-stream")).run()
    assert_clean(at)
    for _ in range(3):
        at.run()
    assert len(calls) == 1, f"the header was parsed {len(calls)} times"
    picker = at.selectbox(key="upload_tensor")
    assert len(picker.options) == 50 and picker.options[0] == "wpe.weight" and picker.value == "wpe.weight"
    assert any("holds 400 2-D float tensors; the picker lists 50" in c.value for c in at.caption)
    other = open_page(PAGE)  # the same bytes in another session: parsed once per content, not per session
    other.file_uploader(key="upload").set_value(("same.safetensors", data, "application/octet-stream")).run()
    assert_clean(other)
    assert len(calls) == 1


@pytest.mark.parametrize(("peak", "taken"), [(1e150, True), (1.7e308, False), (-1e200, False)])
def test_a_table_whose_squares_overflow_is_refused_at_upload(peak, taken):
    table = GOOD.copy()
    table[5, 3] = peak
    at = open_page(PAGE)
    at.file_uploader(key="upload").set_value(("big.npy", _npy(table), "application/octet-stream")).run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    if taken:
        assert not errors, errors
        label = next(iter(at.session_state["posenc_uploads"]))
        at.selectbox(key="table").set_value(f"upload:{label}").run()  # a select once an upload is listed
        assert_clean(at)
        shown = " ".join(metrics(at).values())
        assert not any(word in shown.lower() for word in ("inf", "nan")), metrics(at)
    else:
        assert "big.npy" in errors and "1e+150" in errors and "squares" in errors, errors
        assert "posenc_uploads" not in at.session_state or not at.session_state["posenc_uploads"]
