"""Data for page 11, Similarity matrices: each scheme's position scores side by side.

axes: n positions, i query/row, j key/column, k = j - i offset, d encoding width, H heads.

``scheme_similarity`` / ``table_similarity`` per scheme, ``similarity_panel`` to lay them side by
side: the position-score matrix of each scheme (posenc.position_scores), strided to at most
``HEATMAP_CELLS`` cells, its translation-invariance figure measured on a matrix built densely
from the vectors (never on the Toeplitz view, which is relative by construction), and its score
against the offset j - i.
"""

from __future__ import annotations

import copy
import math
from typing import TypedDict

import numpy as np
import pandas as pd

from posenc._kept import Kept
from posenc.analysis.compare import RELATIVE_TOL
from posenc.analysis.scores import (
    cosine_from_gram,
    dense_scores,
    finite_range,
    offset_profile,
    position_scores,
    translation_invariance,
)
from posenc.analysis.tables import table_scores
from posenc.charts.base import HEATMAP_CELLS, downsample, matrix_frame
from posenc.registry import N_HEADS_DEFAULT, SCHEMES, get_scheme, upload_key
from posenc.schemes.kinds import additive_unit

# ----------------------------------------------------------------------------- result types
# One TypedDict per view: the keys a page reads, with their types.

class SchemeSimilarityView(TypedDict):
    """What ``scheme_similarity`` and ``table_similarity`` return."""

    key: str
    name: str  # with its settings: "Sinusoidal (d 64, base 10000)"
    label: str  # without: "Sinusoidal"
    settings: str  # "d 64, base 10000", or "" for a scheme without settings
    kind: str
    unit: str
    n: int
    d: int
    frame: pd.DataFrame
    step: tuple
    min: float
    max: float
    masked_fraction: float
    translation_invariance: float
    ti_note: str
    offset_only: bool
    ti_method: str  # which matrix the figure was measured on
    offsets: pd.DataFrame
    offset_method: str
    offset_step: int


class SimilarityPanelView(TypedDict):
    """What ``similarity_panel`` returns."""

    frame: pd.DataFrame
    panels: list
    offsets: pd.DataFrame
    units: list
    names: list
    settings: list
    drawn_at: str


class RelativeCountView(TypedDict):
    """What ``relative_count`` returns."""

    count: int
    relative: list
    absolute: list
    unmeasured: list


HEADS = N_HEADS_DEFAULT  # bias schemes are evaluated with 8 heads
# Common settings of the RoPE extensions on the similarity page (the registry default of most of them), so
# "RoPE + Llama 3" is not compared at base 5e5, s 8, L 8192 against the others at 1e4, s 4, L 2048.
COMMON_ROTARY = {"base": 10000.0, "factor": 4.0, "original_max_position_embeddings": 2048}


def common_params(key: str, common: bool) -> tuple:
    """((name, value), ...) overriding a rotary scheme's registry defaults with COMMON_ROTARY (empty otherwise)."""
    scheme = get_scheme(key)
    if not common or not scheme.rotates:
        return ()
    return tuple(scheme.accepted(COMMON_ROTARY).items())


def settings_text(key: str, d: int, params: tuple = ()) -> str:
    """The settings scheme ``key`` is drawn at ("d 64, base 10000"), or "" for a scheme without any."""
    scheme = get_scheme(key)
    if not scheme.scores_use_width or not scheme.params:
        return ""
    p = scheme.validate_params(dict(params))  # the defaults filled in
    bits = [f"d {scheme.width(d)}"] + [sp.briefly(p[sp.name]) for sp in scheme.params if sp.brief]
    return ", ".join(bits)


def settings_label(key: str, d: int, params: tuple = ()) -> str:
    """The scheme's name with the settings it is drawn at ("Sinusoidal (d 64, base 10000)"), for metrics and exports."""
    name, settings = get_scheme(key).name, settings_text(key, d, params)
    return f"{name} ({settings})" if settings else name


MAX_OFFSETS = 1024  # offsets drawn per scheme on the score-against-offset chart
# scheme_similarity's results kept per process (~150 KB each): RoPE's xPos and p-RoPE sections both ask for RoPE at
# 1,024 positions and the page's d, and computed it twice on every new d
KEPT_VIEWS = 16
_VIEWS = Kept(KEPT_VIEWS)


def unit_of(key: str, metric: str) -> str:
    """What the score of scheme ``key`` means; schemes sharing a unit share one colour scale."""
    return get_scheme(key).unit(metric)



def full_scores(key: str, n: int, d: int = 64, metric: str = "cosine", head: int = 0, params: tuple = ()) -> np.ndarray:
    """The whole (n, n) score matrix ``scheme_similarity`` samples, as a plain array (for .npy)."""
    scheme = get_scheme(key)
    metric = scheme.score_metric(metric)
    return np.array(position_scores(key, n, d=scheme.width(d), metric=metric, n_heads=HEADS, head=head, **dict(params)))


def diagonal_means(S: np.ndarray) -> np.ndarray:
    """Mean of the finite entries of each diagonal k = j - i, k = -(n-1) .. n-1: shape (2n - 1,)."""
    S = np.asarray(S, dtype=np.float64)
    n = S.shape[0]
    out = np.full(2 * n - 1, np.nan)
    for k in range(-(n - 1), n):
        diag = np.diagonal(S, k)
        diag = diag[np.isfinite(diag)]
        if diag.size:
            out[k + n - 1] = diag.mean()
    return out


def offset_grid(n: int, max_points: int = MAX_OFFSETS) -> tuple[np.ndarray, int]:
    """Offsets -(n-1) .. n-1 with a stride that keeps at most ~max_points, always holding 0."""
    step = max(1, math.ceil((2 * n - 1) / max_points))
    half = np.arange(0, n, step)  # (m,)
    return np.concatenate([-half[:0:-1], half]).astype(np.float64), step


def _matrix_view(S: np.ndarray, n: int, max_cells: int) -> tuple[pd.DataFrame, tuple[int, int], dict]:
    """Strided tidy frame (i, j int16; score float32, NaN where masked) plus the score range
    of the full matrix."""
    rows, cols, sub, steps = downsample(S, max_cells)
    frame = matrix_frame(sub, rows, cols, row="i", col="j", value="score")  # -inf (masked) -> NaN
    frame = frame.astype({"i": np.int16, "j": np.int16})  # n <= 4096: half the bytes of int32
    lo, hi = finite_range(S)
    rng = {"min": lo, "max": hi, "masked_fraction": float(np.mean(np.isneginf(S)))}
    return frame, steps, rng


def scheme_similarity(key: str, n: int, d: int = 64, metric: str = "cosine", head: int = 0, max_cells: int = HEATMAP_CELLS,
                      params: tuple = ()) -> SchemeSimilarityView:
    """One registered scheme at its registry defaults (``params``: ((name, value), ...) overrides), positions 0 .. n-1.

    Score: additive -> ``metric`` (dot or cosine) of PE(i), PE(j); rotary -> <R_i q, R_j q> for
    the all-ones probe (dot); bias -> the bias of head ``head`` of 8 (T5: its bucket id).
    Returns {"key", "name", "kind", "unit", "n", "d" (width used; MiniLM is 384),
    "frame": DataFrame(i int16, j int16, score float32; NaN = masked -inf) with at most
    ``max_cells`` rows,
    "step": (row stride, col stride), "min"/"max" (finite scores of the full matrix),
    "masked_fraction", "translation_invariance" (float or None), "ti_note" (why None, else ""),
    "offset_only" (bool), "ti_method" (the matrix the figure is measured on, a sentence),
    "offsets": DataFrame(offset, score) -- the exact offset profile for
    offset-only schemes, else the mean over each diagonal -- "offset_method", "offset_step"}.
    """
    try:
        key_of = tuple((type(a), a) for a in (key, n, d, metric, head, max_cells, params))  # 1024 and 1024.0 apart
        hash(key_of)
    except TypeError:  # an argument that cannot key a result (a list): computed, and checked, as given
        return _scheme_similarity(key, n, d, metric, head, max_cells, params)
    kept = _VIEWS.get(key_of)
    if kept is None:
        kept = _scheme_similarity(key, n, d, metric, head, max_cells, params)
        _VIEWS.put(key_of, kept)
    return copy.deepcopy(kept)  # each caller its own frames


def _scheme_similarity(key: str, n: int, d: int, metric: str, head: int, max_cells: int, params: tuple) -> SchemeSimilarityView:
    scheme = get_scheme(key)
    kind = scheme.kind
    d_used = scheme.width(d)
    m = scheme.score_metric(metric)
    kw = {"n_heads": HEADS, "head": head, **dict(params)}
    S = position_scores(key, n, d=d_used, metric=m, **kw)  # (n, n); offset-only: read-only Toeplitz view
    frame, steps, rng = _matrix_view(S, n, max_cells)

    only = scheme.offset_only(d_used, n, **dict(params))
    ti, note = None, ""
    if only:  # dense from the defining function, so the figure is measured, not true by construction
        try:
            G = dense_scores(key, n, d=d_used, **kw)  # (n, n): PE(i) . PE(j), q'(i) . k'(j) or the bias
            ti = translation_invariance(cosine_from_gram(G) if m == "cosine" else G)
        except ValueError as exc:
            note = str(exc)
    else:  # position_scores already built this one densely from the vectors
        ti = translation_invariance(S)

    offsets, ostep = offset_grid(n)
    if only:
        prof = offset_profile(key, offsets, d=d_used, metric=m, seq_len=n, **kw)  # (m,)
        method = "exact offset profile"
    else:
        prof = diagonal_means(S)[offsets.astype(np.int64) + n - 1]
        method = "mean over each diagonal"
    prof = np.where(np.isfinite(prof), prof, np.nan)
    return {
        "key": key, "name": settings_label(key, d, params), "label": scheme.name, "settings": settings_text(key, d, params),
        "kind": kind, "unit": unit_of(key, metric), "n": int(n), "d": d_used,
        "frame": frame, "step": steps, **rng,
        "translation_invariance": ti, "ti_note": note, "offset_only": bool(only),
        "ti_method": ("Measured on the matrix built densely from the vectors, not on the offset view."
                      if only and scheme.scores_use_width else "Measured on the full matrix."),
        "offsets": pd.DataFrame({"offset": offsets.astype(np.int32), "score": prof}),
        "offset_method": method, "offset_step": ostep,
    }


def table_similarity(table: np.ndarray, n: int, metric: str = "cosine", *, name: str, max_cells: int = HEATMAP_CELLS) -> SchemeSimilarityView:
    """The same dict as ``scheme_similarity`` for an uploaded learned table (rows 0 .. n-1).

    ``table``: (max_len, d_model).  n past max_len raises ValueError naming the table: a learned
    table has no row there.  Its score is ``metric`` of the rows (posenc.tables.table_scores).
    """
    T = np.asarray(table)
    if T.ndim == 2 and n > T.shape[0]:
        raise ValueError(f"{name} has {T.shape[0]} rows (positions 0..{T.shape[0] - 1}); n = {n} asks for "
                         "positions it has no row for")
    S = table_scores(T, n, metric=metric)  # (n, n), dense from the rows
    frame, steps, rng = _matrix_view(S, n, max_cells)
    offsets, ostep = offset_grid(n)
    prof = diagonal_means(S)[offsets.astype(np.int64) + n - 1]
    return {
        "key": upload_key(name), "name": name, "label": name, "settings": "", "kind": "additive", "unit": additive_unit(metric),
        "n": int(n), "d": int(T.shape[1]),
        "frame": frame, "step": steps, **rng,
        "translation_invariance": translation_invariance(S), "ti_note": "", "offset_only": False,
        "ti_method": "Measured on the full matrix.",
        "offsets": pd.DataFrame({"offset": offsets.astype(np.int32), "score": prof}),
        "offset_method": "mean over each diagonal", "offset_step": ostep,
    }


# What a bias scheme's score means (its declared score_unit: a bias on the logit, a T5 bucket id) has no
# natural zero in the middle: drawn on a sequential scale over its own [min, max].
SEQUENTIAL_UNITS = frozenset(s.score_unit for s in SCHEMES.values() if not s.centered_scores)


def unit_domain(unit: str, lo: float, hi: float) -> tuple[tuple[float, float], str]:
    """(colour domain, palette) for one unit: cosine [-1, 1] and scores symmetric about 0
    (diverging); the bias schemes' units (SEQUENTIAL_UNITS) their own [min, max] (sequential), unless the values
    drawn take both signs (FIRE's MLP is signed: Scheme.centered_scores), which are then drawn about 0 (diverging)."""
    if unit == additive_unit("cosine"):
        return (-1.0, 1.0), "diverging"
    if unit in SEQUENTIAL_UNITS and not (lo < 0 < hi):
        if not (math.isfinite(lo) and math.isfinite(hi)):
            lo = hi = 0.0
        return ((lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)), "sequential"
    top = max(abs(lo), abs(hi)) if math.isfinite(lo) and math.isfinite(hi) else 0.0
    top = top if top > 0 else 1.0
    return (-top, top), "diverging"


def similarity_panel(results: list[dict]) -> SimilarityPanelView:
    """Lay several scheme results side by side with ONE colour scale per unit.

    The charts name each scheme by its label alone ("Sinusoidal"; its full name where two labels coincide) and the
    settings are said beside them, so a control that changes only a setting (d) changes the data, not the charts'
    specs.  Returns {"frame": DataFrame(scheme, i, j, score) of every matrix (NaN score = masked), "panels": list of
    {"scheme", "unit", "domain", "palette", "step", "n", "settings"} in the given order, "offsets":
    DataFrame(scheme, settings, unit, method, offset, score), "units": units in first-seen order, "names": the charts'
    name of each result, "settings": ["Sinusoidal: d 64, base 10000", ...] for the results that have settings,
    "drawn_at": one sentence of n and those settings}.  Both frames carry each row's settings (for the CSV).
    """
    units: dict[str, list[dict]] = {}
    for r in results:
        units.setdefault(r["unit"], []).append(r)
    domains = {}
    for unit, rs in units.items():
        lo = min((r["min"] for r in rs if math.isfinite(r["min"])), default=float("nan"))
        hi = max((r["max"] for r in rs if math.isfinite(r["max"])), default=float("nan"))
        domains[unit] = unit_domain(unit, lo, hi)
    labels = [r.get("label", r["name"]) for r in results]
    names = labels if len(set(labels)) == len(labels) else [r["name"] for r in results]
    panels = [{"scheme": name, "unit": r["unit"], "domain": domains[r["unit"]][0], "palette": domains[r["unit"]][1],
               "step": r["step"], "n": r["n"], "settings": r.get("settings", "")} for name, r in zip(names, results)]
    frame = pd.concat([r["frame"].assign(scheme=name, settings=r.get("settings", "")) for name, r in zip(names, results)],
                      ignore_index=True) if results else pd.DataFrame(columns=["i", "j", "score", "scheme", "settings"])
    offsets = pd.concat([r["offsets"].assign(scheme=name, settings=r.get("settings", ""), unit=r["unit"], method=r["offset_method"])
                         for name, r in zip(names, results)],
                        ignore_index=True) if results else pd.DataFrame(columns=["offset", "score", "scheme", "settings", "unit", "method"])
    settings = [f"{name}: {r['settings']}" for name, r in zip(names, results) if r.get("settings") and name != r["name"]]
    n = f"n = {results[0]['n']:,}" if results else ""
    return {"frame": frame, "panels": panels, "offsets": offsets, "units": list(units), "names": names, "settings": settings,
            "drawn_at": f"Drawn at {'; '.join([n, *settings])}." if results else ""}


def relative_count(results: list[dict]) -> RelativeCountView:
    """Which results are translation invariant (figure <= RELATIVE_TOL): {"count", "relative":
    [names], "absolute": [(name, figure)], "unmeasured": [names]}."""
    rel, absolute, unmeasured = [], [], []
    for r in results:
        ti = r["translation_invariance"]
        if ti is None:
            unmeasured.append(r["name"])
        elif ti <= RELATIVE_TOL:
            rel.append(r["name"])
        else:
            absolute.append((r["name"], ti))
    return {"count": len(rel), "relative": rel, "absolute": absolute, "unmeasured": unmeasured}


class SideBySideView(SimilarityPanelView):
    facts: list[dict]


def side_by_side(keys: tuple, n: int, d: int = 64, metric: str = "dot", head: int = 0, params: tuple = ()) -> SideBySideView:
    """Registry schemes side by side at positions 0 .. n-1: what a page section shows a new scheme with, beside the one
    it grew from (Kerple beside ALiBi, p-RoPE beside RoPE), with no view of its own.

    ``params``: ((key, ((name, value), ...)), ...) overrides per scheme.  Returns ``similarity_panel`` of their
    ``scheme_similarity`` results (score matrices and offset profiles, one colour scale per unit), plus "facts": per
    scheme {"name", "translation_invariance" (None if not measured), "offset_only" (declared at n), "rotating_pairs"
    ((pairs that turn, all pairs) for a scheme built of rotations or sinusoids, else None), "far" (its score at the
    offset -(n - 1): the key n - 1 positions before the query)}.
    """
    given = dict(params)
    results = [scheme_similarity(k, n, d, metric, head, params=tuple(given.get(k, ()))) for k in keys]
    facts = []
    for k, r in zip(keys, results):
        scheme = get_scheme(k)
        p = dict(given.get(k, ()))
        try:
            omega = np.asarray(scheme.spectrum(r["d"], seq_len=n, **p)[0])
            turning = (int(np.count_nonzero(omega)), int(omega.size))
        except ValueError:  # a bias has no frequencies
            turning = None
        far = r["offsets"].loc[r["offsets"]["offset"] == r["offsets"]["offset"].min(), "score"]
        facts.append({"name": r["label"], "translation_invariance": r["translation_invariance"], "offset_only": r["offset_only"],
                      "rotating_pairs": turning, "far": float(far.iloc[0]) if len(far) else float("nan")})
    return {**similarity_panel(results), "facts": facts}
