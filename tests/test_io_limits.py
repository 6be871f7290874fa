"""posenc.io._limits: the one definition of a valid table, and the export cap (sizes stated in the module)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc.io import _limits as lim


def test_stated_limits():
    assert lim.MAX_UPLOAD_BYTES == 50_000_000  # server.maxUploadSize = 50, in the uploader's MB of 10^6 bytes
    assert lim.EXPORT_MAX_BYTES == 32 * 2**20
    assert (lim.MIN_TABLE_ROWS, lim.MAX_TABLE_ROWS, lim.MIN_TABLE_COLUMNS, lim.MAX_TABLE_COLUMNS) == (8, 2**20, 1, 8192)
    assert lim.MAX_TABLE_ELEMENTS == 2**24 and lim.mb(50_000_000) == "50.0 MB"


@pytest.mark.parametrize("shape", [(8, 1), (8, 8192), (2**20, 16), (4096, 4096), (2050, 7168)])
def test_valid_shapes(shape):
    assert lim.check_table_shape(shape, "t") == shape


@pytest.mark.parametrize("shape, fragment", [
    ((1, 12_000_000), "has 1 row(s)"), ((2**20 + 1, 1), "1,048,577 row(s)"), ((7, 4), "has 7 row(s)"), ((8, 0), "0 column(s)"),
    ((8, 8193), "8,193 column(s)"), ((4097, 4096), "16,781,312 elements"), ((4,), "1-D array"),
])
def test_invalid_shapes_name_the_limit(shape, fragment):
    with pytest.raises(ValueError) as exc:
        lim.check_table_shape(shape, "t")
    assert fragment in str(exc.value)


@pytest.mark.parametrize("shape, dtype", [((100, 100), np.float64), ((5000, 1000), np.float64), ((4096, 4096), np.float64),
                                          ((8192, 8192), np.float64), ((3, 2**23), np.float32), ((1, 2**23 + 5), np.int64), ((2**26,), np.float32),
                                          ((2**12, 2**12), np.complex128)])
def test_an_export_fits_the_cap_with_the_smallest_change(shape, dtype):
    a = np.zeros(shape, dtype)
    out, note = lim.fit_export(a)
    assert out.nbytes <= lim.EXPORT_MAX_BYTES
    if a.nbytes <= lim.EXPORT_MAX_BYTES:
        assert out is a and note == ""
        return
    small = {"f": np.float32, "c": np.complex64}.get(a.dtype.kind, a.dtype)
    assert out.dtype == np.dtype(small) and note
    if out.shape == a.shape:
        assert note.startswith("as ")
        return
    k = int(note.split()[1][:-2])  # "every 2nd entry ..."
    assert out.shape == tuple(-(-s // k) if s > 1 else s for s in shape)
    assert np.array_equal(out, a[tuple(slice(None, None, k) if s > 1 else slice(None) for s in shape)].astype(small))
    prev = math.prod(-(-s // (k - 1)) if s > 1 else s for s in shape) * np.dtype(small).itemsize
    assert k == 2 and out.dtype.itemsize < a.dtype.itemsize or prev > lim.EXPORT_MAX_BYTES  # k is the smallest stride that fits


def test_plan_matches_the_export_without_building_it():
    assert lim.export_plan((4096, 4096), np.float64) == (np.dtype(np.float32), 2, lim.fit_export(np.zeros((4096, 4096)))[1])
    assert lim.export_plan((10, 10), np.float64) == (np.dtype(np.float64), 1, "")
