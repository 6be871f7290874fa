"""Data for the learned-table page: a real BERT-family table against the sinusoid and noise.

axes: n positions (rows of a table), d channels, f frequencies.

Every table function takes the table array first and scalars after, so the same function serves
the bundled tables (``learned_view``, cached on scalars) and uploads
(``posenc.ui.uploads.table_call(table_view, label, ...)``, cached on the upload's sha256).
"""

from __future__ import annotations

import math
from typing import TypedDict

import numpy as np
import pandas as pd

from posenc._validate import check_choice, check_int
from posenc.analysis.spectrum import low_frequency_share, median_frequency, position_spectrum
from posenc.analysis.tables import table_scores, table_signature
from posenc.charts.base import HEATMAP_CELLS, downsample, matrix_frame, stride_for
from posenc.io._limits import MAX_TABLE_COLUMNS
from posenc.registry import get_scheme
from posenc.schemes.learned import MINILM_D_MODEL, MINILM_MAX_LEN, minilm_metadata
from posenc.schemes.sinusoidal import sinusoidal

# ----------------------------------------------------------------------------- result types
# One TypedDict per view: the keys a page reads, with their types.

class ProvenanceView(TypedDict):
    """What ``provenance`` returns."""

    model: str
    url: str
    family: str
    tensor: str
    shape: tuple
    licence: str
    checkpoint_dtype: str
    stored_dtype: str
    max_abs_rounding: float


class TableSeriesView(TypedDict):
    """What ``table_series`` returns."""

    neighbour_cosine: float
    first_below: int
    cos_01: float
    norms: pd.DataFrame
    norm_step: int
    median_norm: float
    norm_row0: float
    norm_last: float
    spectrum: pd.DataFrame
    spectrum_points: int
    spectrum_thinned: bool
    median_wavelength: float
    low_share: float


class TableView(TableSeriesView):
    """What ``table_view`` and ``learned_view`` return: the series, and the heatmap and similarity matrix."""

    shape: tuple
    name: str
    heatmap: pd.DataFrame
    heat_step: tuple
    clip: float
    max_abs: float
    max_abs_at: tuple
    similarity: pd.DataFrame
    sim_step: int
    n_requested: int
    n_shown: int
    mean_abs_offdiag: float
    random_abs_cosine: float


class RowAtView(TypedDict):
    """What ``row_at`` and ``learned_row_at`` return."""

    position: int
    defined: bool
    message: str | None
    norm: float
    frame: pd.DataFrame | None


class SinusoidAtView(TypedDict):
    """What ``sinusoid_at`` returns."""

    position: int
    frame: pd.DataFrame
    norm: float
    max_abs: float


class ContrastView(TypedDict):
    """What ``contrast_view`` returns."""

    norms: pd.DataFrame
    spectrum: pd.DataFrame
    summary: pd.DataFrame


SOURCES = {"minilm": "MiniLM (trained)", "sinusoid": "sinusoid", "random": "untrained random"}
SOURCE_SCHEMES = {"minilm": "learned_minilm", "sinusoid": "sinusoidal", "random": "learned_random"}  # the registry entry of each
SIMILARITY_SIDE = 128  # the similarity heatmap shows at most 128 x 128 cells
COLOUR_PERCENTILE = 99.5  # the heatmap's colour scale saturates at this percentile of |value|
LOW_FREQUENCY = 1 / 32  # "slow" = wavelength of at least 32 positions
REFERENCE_POSITION = 1  # the exercise's reference row (row 0 of BERT is [CLS]'s, an outlier)
THRESHOLD = 0.5
MAX_SERIES_POINTS = 4096  # line charts (norms, spectrum, one row) carry at most this many points per table


def builtin_table(source: str, seed: int = 0) -> np.ndarray:
    """One of the three bundled 512 x 384 tables: float64 (512, 384).

    "minilm": the trained all-MiniLM-L6-v2 table; "sinusoid": Vaswani's interleaved sinusoid at
    positions 0..511 with d = 384; "random": an untrained table, Normal(0, 0.02), ``seed``.
    """
    scheme = _source_scheme(source)
    table = scheme.table(MINILM_D_MODEL, **scheme.accepted({"seed": seed}))
    return table if table is not None else scheme.encode(np.arange(MINILM_MAX_LEN), MINILM_D_MODEL)  # a function: its first rows


def _source_scheme(source: str):
    """The registry scheme behind a bundled table (the scheme knows whether it is a table or a function)."""
    return get_scheme(SOURCE_SCHEMES[check_choice("source", source, tuple(SOURCES))])


def provenance() -> ProvenanceView:
    """Where the bundled table comes from: {"model", "url", "family", "tensor", "shape", "licence",
    "checkpoint_dtype", "stored_dtype", "max_abs_rounding"} (from posenc.learned.minilm_metadata)."""
    m = minilm_metadata()
    return {
        "model": m["upstream_model"]["id"],
        "url": m["upstream_model"]["url"],
        "family": m["upstream_model"]["family"],
        "tensor": m["tensor"]["name"],
        "shape": tuple(m["tensor"]["shape"]),
        "licence": m["upstream_model"]["licence"],
        "checkpoint_dtype": m["tensor"]["original_dtype"],
        "stored_dtype": m["stored"]["dtype"],
        "max_abs_rounding": float(m["stored"]["max_abs_diff_vs_float32"]),
    }


def _first_below(cos_row: np.ndarray, start: int, threshold: float) -> int | None:
    hits = np.flatnonzero(cos_row[start + 1 :] < threshold)
    return int(start + 1 + hits[0]) if hits.size else None


def _row_cosines(T: np.ndarray, ref: int) -> np.ndarray:
    """cos(P[ref], P[p]) for every row p: (n,); a zero row has cosine 0."""
    norms = np.linalg.norm(T, axis=1)  # (n,)
    dots = T @ T[ref]  # (n,)
    denom = norms * norms[ref]
    return np.where(denom > 0, dots / np.where(denom > 0, denom, 1.0), 0.0)


def table_view(table, n: int, *, name: str = "table") -> TableView:
    """Everything the page draws for one table ``table`` (rows, d).

    Returns a dict:
      "shape": (rows, d); "name": str;
      "heatmap": DataFrame(position, channel, value) strided to <= HEATMAP_CELLS cells;
        "heat_step": (position step, channel step); "clip": the COLOUR_PERCENTILE of |value|
        (colour domain +-clip); "max_abs": max |value|; "max_abs_at": (position, channel);
      "similarity": DataFrame(i, j, cosine) of rows 0..n_shown-1 (table_scores, cosine) strided to
        <= SIMILARITY_SIDE per side; "sim_step": int; "n_requested", "n_shown" (= min(n, rows));
        "mean_abs_offdiag": mean |cos| over i != j of the shown rows; "random_abs_cosine": the same
        for random directions in d dimensions (``expected_random_abs_cosine``);
      every key of ``table_series`` (norms, spectrum and their summary numbers).
    """
    T = np.asarray(table, dtype=np.float64)
    n = check_int("n", n, lo=2, hi=1 << 16)
    rows, d = T.shape if T.ndim == 2 else (0, 0)
    if rows < 2 or d < 1:
        raise ValueError(f"table must be a 2-D array with at least 2 rows, got shape {T.shape}")
    out: dict = {"shape": (rows, d), "name": name}

    pos_lab, ch_lab, sub, step = downsample(T, HEATMAP_CELLS)
    out["heatmap"] = matrix_frame(sub, pos_lab, ch_lab, row="position", col="channel", value="value")
    out["heat_step"] = step
    absT = np.abs(T)  # (rows, d), our own: the percentile may reorder it in place (no second copy of a big upload)
    at = int(np.argmax(absT))
    out["max_abs"] = float(absT.flat[at])
    out["max_abs_at"] = tuple(int(v) for v in np.unravel_index(at, T.shape))
    out["clip"] = float(np.percentile(absT, COLOUR_PERCENTILE, overwrite_input=True))
    del absT

    m = min(n, rows)
    S = table_scores(T, m, metric="cosine")  # (m, m)
    s_r = stride_for(m, SIMILARITY_SIDE)  # the same stride both ways keeps the matrix square
    idx = np.arange(0, m, s_r)
    out["similarity"] = matrix_frame(S[::s_r, ::s_r], idx, idx, row="i", col="j", value="cosine")
    out.update(sim_step=s_r, n_requested=n, n_shown=m)
    off = ~np.eye(m, dtype=bool)
    out["mean_abs_offdiag"] = float(np.abs(S[off]).mean()) if m > 1 else float("nan")
    out["random_abs_cosine"] = expected_random_abs_cosine(d)

    out.update(table_series(T, name))
    return out


def table_series(table, name: str = "table") -> TableSeriesView:
    """Per-position series and summary numbers of ``table`` (rows, d).

    {"norms": DataFrame(position, norm, table), "median_norm", "norm_row0", "norm_last",
    "neighbour_cosine": mean cos(P[p], P[p+1]), "first_below": first p > 1 with
    cos(P[1], P[p]) < 0.5 (None if never), "cos_01": cos(P[0], P[1]),
    "spectrum": DataFrame(frequency, wavelength, share, table) (posenc.spectrum.position_spectrum),
    "median_wavelength": 1 / median frequency, "low_share": share at wavelength >= 32 positions,
    "norm_step": the norms frame keeps one position in norm_step, "spectrum_points": frequencies kept,
    "spectrum_thinned": fewer than all n // 2 frequencies kept}.
    Numbers use every row; only the frames are thinned, to <= MAX_SERIES_POINTS points (norms by a
    stride, the spectrum at log-spaced frequencies, since it is drawn on a log axis).
    """
    T = np.asarray(table, dtype=np.float64)  # (rows, d)
    rows = T.shape[0]
    out: dict = {}
    norms = np.linalg.norm(T, axis=1)  # (rows,)
    safe_norms = np.where(norms > 0, norms, 1.0)  # a zero row has cosine 0 with everything
    dots = np.einsum("ij,ij->i", T[:-1], T[1:])  # (rows - 1,) P[p] . P[p+1], without a (rows, d) temporary
    out["neighbour_cosine"] = float(np.mean(dots / (safe_norms[:-1] * safe_norms[1:])))
    out["first_below"] = _first_below(_row_cosines(T, REFERENCE_POSITION), REFERENCE_POSITION, THRESHOLD)
    out["cos_01"] = float(_row_cosines(T, 0)[1])
    step = stride_for(rows, MAX_SERIES_POINTS)
    out["norms"] = pd.DataFrame({"position": np.arange(0, rows, step, dtype=np.int64), "norm": norms[::step], "table": name})
    out["norm_step"] = step
    out.update(median_norm=float(np.median(norms)), norm_row0=float(norms[0]), norm_last=float(norms[-1]))
    spec = position_spectrum(T)
    nf = spec["frequency"].size
    keep = np.arange(nf)  # (f,) indices of the frequencies drawn
    if nf > MAX_SERIES_POINTS:
        keep = np.unique(np.round(np.geomspace(1, nf, MAX_SERIES_POINTS)).astype(np.int64)) - 1
    out["spectrum"] = pd.DataFrame({"frequency": spec["frequency"][keep], "wavelength": 1.0 / spec["frequency"][keep],
                                    "share": spec["share"][keep], "table": name})
    out["spectrum_points"] = int(keep.size)
    out["spectrum_thinned"] = bool(keep.size < nf)
    f_med = median_frequency(spec["frequency"], spec["share"])
    out["median_wavelength"] = 1.0 / f_med if f_med > 0 else float("nan")
    out["low_share"] = low_frequency_share(spec["frequency"], spec["share"], max_frequency=LOW_FREQUENCY)
    return out


def _vector(v: np.ndarray) -> pd.DataFrame:
    """DataFrame(channel, value) of a vector, one channel in stride_for(d, MAX_SERIES_POINTS) kept."""
    step = stride_for(v.size, MAX_SERIES_POINTS)
    return pd.DataFrame({"channel": np.arange(0, v.size, step, dtype=np.int64), "value": v[::step]})


def row_at(table, position: int) -> RowAtView:
    """The row a table adds at ``position``, or why there is none.

    {"position", "defined": bool, "message": None or the ValueError text of
    posenc.tables.table_signature (which names max_len), "norm": float (nan if undefined),
    "frame": DataFrame(channel, value) (<= MAX_SERIES_POINTS channels, strided) or None}.
    """
    position = check_int("position", position, lo=0, hi=10**6)
    try:
        row = table_signature(table, [position])[0]  # (d,)
    except ValueError as exc:  # the table ends: nothing is invented past its last row
        return {"position": position, "defined": False, "message": str(exc), "norm": float("nan"), "frame": None}
    return {"position": position, "defined": True, "message": None, "norm": float(np.linalg.norm(row)), "frame": _vector(row)}


def learned_view(source: str, seed: int, n: int) -> TableView:
    """``table_view`` of a bundled table (see ``builtin_table``), named by SOURCES."""
    return table_view(builtin_table(source, seed), n, name=SOURCES[source])


def learned_row_at(source: str, seed: int, position: int) -> RowAtView:
    """``row_at`` of a bundled table.  The sinusoid is a function, not a table: for it this is
    ``sinusoid_at(position, 384)``, defined at every position (not a lookup into 512 rows)."""
    if _source_scheme(source).max_len is None:  # defined at every position: no table to run out of
        s = sinusoid_at(position, MINILM_D_MODEL)
        return {"position": s["position"], "defined": True, "message": None, "norm": s["norm"], "frame": s["frame"]}
    return row_at(builtin_table(source, seed), position)


def sinusoid_at(position: int, d: int) -> SinusoidAtView:
    """The sinusoid (interleaved, base 10^4) at ``position`` with width ``d``: defined everywhere.

    {"position", "frame": DataFrame(channel, value), "norm": ||PE(position)|| (= sqrt(d/2), even d),
    "max_abs": max |value| (<= 1)}.
    """
    position = check_int("position", position, lo=0, hi=10**6)
    d = check_int("d", d, lo=1, hi=MAX_TABLE_COLUMNS)
    v = sinusoidal([position], d)[0]  # (d,)
    return {"position": position, "frame": _vector(v), "norm": float(np.linalg.norm(v)), "max_abs": float(np.abs(v).max())}


def contrast_view(seed: int) -> ContrastView:
    """Norm per position and spectrum of all three bundled tables, for the contrast lines.

    {"norms": DataFrame(position, norm, table), "spectrum": DataFrame(frequency, wavelength,
    share, table), "summary": DataFrame(table, median_norm, median_wavelength, low_share)}.
    """
    series = [table_series(builtin_table(source, seed), label) for source, label in SOURCES.items()]
    return {"norms": pd.concat([v["norms"] for v in series], ignore_index=True),
            "spectrum": pd.concat([v["spectrum"] for v in series], ignore_index=True),
            "summary": pd.concat([summary_row(v, label) for v, label in zip(series, SOURCES.values())], ignore_index=True)}


def summary_row(series: dict, name: str) -> pd.DataFrame:
    """One row (table, median_norm, median_wavelength, low_share, neighbour_cosine) of ``table_series`` output."""
    return pd.DataFrame([{"table": name, **{k: series[k] for k in ("median_norm", "median_wavelength", "low_share", "neighbour_cosine")}}])


def with_upload(frame: pd.DataFrame, extra: pd.DataFrame | None) -> pd.DataFrame:
    """``frame`` plus the rows of ``extra`` (an uploaded table's series), if any."""
    return frame if extra is None else pd.concat([frame, extra], ignore_index=True)


def expected_random_abs_cosine(d: int) -> float:
    """E|cos| of two independent isotropic Gaussian vectors in d dimensions, ~ sqrt(2 / (pi d)).

    Exact: Gamma(d/2) / (sqrt(pi) Gamma((d+1)/2)); the page quotes it next to the noise table.
    d = 1 gives 1 (two numbers on a line are parallel or opposite), d = 2 gives 2/pi.
    """
    d = check_int("d", d, lo=1, hi=1 << 20)
    return math.exp(math.lgamma(d / 2) - math.lgamma((d + 1) / 2)) / math.sqrt(math.pi)
