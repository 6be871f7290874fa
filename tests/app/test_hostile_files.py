"""Hostile uploads on the Learned tables page: every malformed file gets a clear message, nothing
is unpickled, the page (and the next, valid upload) keeps working; a valid table then appears
on the similarity and compare pages of the same session."""

from __future__ import annotations

import io
import json
import os
import struct
from pathlib import Path

import numpy as np
import pytest
from apphelpers import charts, open_page
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
    n_charts = len(charts(at))
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
    assert len(charts(at)) >= n_charts
    at.get("file_uploader")[0].upload("ok.npy", _npy(GOOD)).run()
    assert not at.exception and any("Loaded `ok.npy`" in s.value for s in at.success)


def test_an_upload_becomes_a_scheme_on_the_other_pages():
    at = open_page(PAGE)
    at.get("file_uploader")[0].upload("mine.npy", _npy(GOOD)).run()
    assert any("Loaded `mine.npy`" in s.value for s in at.success)
    at.switch_page("pages/similarity.py").run()
    assert not at.exception
    options = [o for m in at.multiselect for o in m.options]
    assert any("mine.npy" in o for o in options), options
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    table = at.dataframe[0].value
    assert table.astype(str).apply(lambda col: col.str.contains("mine.npy")).any().any()
