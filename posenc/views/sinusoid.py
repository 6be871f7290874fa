"""Data for page 6, "The sinusoid": the heatmap, the wavelengths, Hello World, M_k, uniqueness.

axes: n positions, d = d_model, h = d // 2 frequency pairs, w words.

Every function takes scalars (so the page can cache it) and returns tidy DataFrames and plain
numbers; every number comes from the posenc core (posenc.sinusoidal, posenc.geometry,
posenc.scores).  d_model is even on this page (the controls offer even values only), as in
every published sinusoidal model; odd d raises a ValueError naming the argument.
"""

from __future__ import annotations

import math
import re
from typing import TypedDict

import numpy as np
import pandas as pd

from posenc._validate import check_choice, check_float, check_int
from posenc.analysis.geometry import frequency_spectrum, shift_operator
from posenc.charts.base import matrix_frame
from posenc.schemes.sinusoidal import LAYOUTS, sinusoid_shift_matrix, sinusoid_wavelengths, sinusoidal

# ----------------------------------------------------------------------------- result types
# One TypedDict per view: the keys a page reads, with their types.

class HeatmapView(TypedDict):
    """What ``heatmap_view`` returns."""

    frame: pd.DataFrame
    shown: np.ndarray
    rows: np.ndarray
    cols: np.ndarray
    row_step: int
    pair_step: int
    cells: int
    n: int
    d: int
    max_abs: float
    norm_min: float
    norm_max: float
    sqrt_half_d: float
    aliased_pairs: int
    total: int
    caption: str


class SpectrumView(TypedDict):
    """What ``spectrum_view`` returns."""

    caption: str
    frame: pd.DataFrame
    asked_frame: pd.DataFrame
    asked_note: str
    marks: pd.DataFrame
    shortest: float
    longest: float
    limit: float
    full_turns: int
    pairs: int
    n: int
    quiz: dict


class WorkedExampleView(TypedDict):
    """What ``worked_example`` returns."""

    frame: pd.DataFrame
    full: pd.DataFrame
    pe: np.ndarray
    emb: np.ndarray
    sum: np.ndarray
    words: tuple
    zero_words: int
    caption: str
    pe_1_2: float
    quiz: dict


class ShiftView(TypedDict):
    """What ``shift_view`` returns."""

    caption: str
    frame: pd.DataFrame
    M: np.ndarray
    closed: np.ndarray
    residual: float
    orthogonality: float
    off_block: float
    max_diff: float
    fit_span: float
    angle_eps: float


MAX_N = 4096
MAX_D = 1024
MAX_SHIFT_D = 64
EVEN_D = tuple(range(2, MAX_D + 1, 2))  # the page's d_model choices (even only)
SHIFT_D = tuple(range(4, MAX_SHIFT_D + 1, 2))  # the page's d choices for M_k
# The heatmap is drawn as one image (posenc.charts.raster): only its hover grid (posenc.charts.raster.HOVER_CELLS) goes to the browser as data,
# so it keeps every column up to d = 512 -- a step of d then changes the image, not the chart's axis (striding pairs
# draws the kept columns side by side under labels naming them, another spec, which the browser builds anew) --
# and rows get the rest of HEATMAP_IMAGE_CELLS: all 128 positions of the default n even at d = 512.
HEATMAP_MAX_COLS = 512
HEATMAP_IMAGE_CELLS = 65_536

WORKED_D = 4  # the d_model of "What are Positional Embeddings?" ("Hello World" to the Rescue)
WORKED_BASE = 10000.0
MAX_WORDS = 12
# The article's hypothetical word embeddings for the first two words (the article "What are Positional Embeddings?", Step 3).
SEED_EMBEDDINGS = ("0.1, 0.2, 0.3, 0.4", "0.5, 0.6, 0.7, 0.8")
MAX_ABS_EMBEDDING = 1e6
QUIZ_POSITION = 50  # the worked example's exercise asks about a position no table on the page shows (at most 12 words)


def full_encoding(n: int, d_model: int, base: float, layout: str) -> np.ndarray:
    """Every value the heatmap samples: posenc.sinusoidal(arange(n), d_model), shape (n, d_model)."""
    return sinusoidal(np.arange(check_int("n", n, lo=1, hi=MAX_N)), d_model, base=base, layout=layout)


def fmt_length(x: float) -> str:
    """A length in positions for a metric: 54,410.14 up to 10^7, else 6.0340e+09 (fits a metric tile)."""
    return f"{x:,.2f}" if abs(x) < 1e7 else f"{x:.4e}"


def _even_d(name: str, d, hi: int) -> int:
    d = check_int(name, d, lo=2, hi=hi)
    if d % 2:
        raise ValueError(f"{name} must be even on this page (sin/cos pairs), got {d}")
    return d


def _pair_columns(pair: np.ndarray, d: int, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """Column indices of the sin and cos of each frequency pair in ``layout``."""
    h = d // 2
    if layout == "interleaved":
        return 2 * pair, 2 * pair + 1
    return pair, h + pair


def heatmap_view(n: int, d_model: int, base: float, layout: str) -> HeatmapView:
    """The position x depth heatmap of PE, strided to at most HEATMAP_IMAGE_CELLS cells.

    Columns are kept by whole frequency pairs (every ``pair_step``-th pair, both its sin and its
    cos column), so a stride never shows sines without their cosines; rows every ``row_step``.
    Returns {"frame": DataFrame(position int32, depth int32, value float32, column category),
    "shown": (r, c) the drawn values, "rows": (r,), "cols": (c,), "row_step", "pair_step",
    "cells": r * c, "total": n * d, "n", "d", "max_abs": max |PE| over all n x d, "norm_min"/"norm_max": min and
    max of ||PE(p)|| over p, "sqrt_half_d": sqrt(d / 2), "aliased_pairs": pairs whose wavelength
    is under 2 * row_step (their stripes alias at the drawn stride), "caption": what was drawn}.
    """
    n = check_int("n", n, lo=2, hi=MAX_N)
    d = _even_d("d_model", d_model, MAX_D)
    layout = check_choice("layout", layout, LAYOUTS)
    pe = sinusoidal(np.arange(n), d, base=base, layout=layout)  # (n, d)
    h = d // 2
    pair_step = math.ceil(h / (HEATMAP_MAX_COLS // 2))
    pairs = np.arange(0, h, pair_step)  # (h',)
    sin_c, cos_c = _pair_columns(pairs, d, layout)
    cols = np.sort(np.concatenate([sin_c, cos_c]))  # (c,) in depth order
    row_step = math.ceil(n / max(HEATMAP_IMAGE_CELLS // cols.size, 1))
    rows = np.arange(0, n, row_step)  # (r,)
    shown = pe[np.ix_(rows, cols)]  # (r, c)
    frame = matrix_frame(shown, rows, cols, row="position", col="depth", value="value")
    wl = sinusoid_wavelengths(d, base=base)  # (h,)
    pair_of = cols // 2 if layout == "interleaved" else cols % h
    is_sin = (cols % 2 == 0) if layout == "interleaved" else (cols < h)
    labels = [f"{'sin' if s else 'cos'}, pair {i} (wavelength {wl[i]:,.1f})" for s, i in zip(is_sin, pair_of)]
    frame["column"] = pd.Categorical(np.tile(np.asarray(labels, dtype=object), rows.size))
    norms = np.linalg.norm(pe, axis=1)  # (n,)
    aliased = int(np.count_nonzero(wl < 2 * row_step)) if row_step > 1 else 0
    if row_step == 1 and pair_step == 1:
        caption = f"All {n:,} × {d:,} values, exact ({layout} layout)."
    else:
        caption = (f"Downsampled to {shown.size:,} of {n * d:,} cells: one position in every {row_step} and one frequency "
                   f"pair in every {pair_step} (both its sin and its cos column); drawn values are exact, not averaged.")
        if aliased:
            caption += (f" Pairs 0–{aliased - 1} have wavelengths under {2 * row_step} positions (two rows of this stride), so "
                        "their stripes are aliased here; shorten n to see them.")
    return {
        "frame": frame,
        "shown": shown,
        "rows": rows,
        "cols": cols,
        "row_step": int(row_step),
        "pair_step": int(pair_step),
        "cells": int(shown.size),
        "n": n,
        "d": d,
        "max_abs": float(np.abs(pe).max()),
        "norm_min": float(norms.min()),
        "norm_max": float(norms.max()),
        "sqrt_half_d": math.sqrt(d / 2),
        "aliased_pairs": aliased,
        "total": n * d,
        "caption": caption,
    }


def without_answer(frame: pd.DataFrame, longest: float) -> pd.DataFrame:
    """``frame``'s rows whose "wavelength" is not the wavelength exercise's answer ``longest`` (to 1e-9 relative): what a
    figure may draw before the reveal.  At bases that are powers of 10 the value recurs on other bases' lines
    (10^6 at pair 42 = 10^4 at pair 63, d = 128), which ``why_base.why_base_view`` draws too."""
    return frame[~np.isclose(frame["wavelength"], longest, rtol=1e-9, atol=0.0)].reset_index(drop=True)


def spectrum_view(d_model: int, base: float, n: int, layout: str = "interleaved") -> SpectrumView:
    """Wavelength of every frequency pair, and which pairs complete a full turn within n.

    Returns {"frame": DataFrame(pair, columns str, omega, wavelength, full_turn "yes"/"no"),
    "marks": DataFrame(label, wavelength, side) for 2 pi, the limit 2 pi base and n, "shortest",
    "longest" (2 pi base^((d-2)/d)), "limit" (2 pi base, never reached), "full_turns" (count),
    "pairs" (h), "n", "caption", "quiz"}.  "asked_frame" is "frame" without the rows that give the exercise's answer
    away (its wavelength or its ω, in a tooltip or the export): the slowest pair, when d > 2; "asked_note" says so.
    """
    d = _even_d("d_model", d_model, MAX_D)
    n = check_int("n", n, lo=2, hi=MAX_N)
    layout = check_choice("layout", layout, LAYOUTS)
    base = check_float("base", base, lo=1.0, hi=1e12, lo_open=True)
    spec = frequency_spectrum("sinusoidal", d, context=n, base=base)
    pair = spec["pair"]
    s, c = _pair_columns(pair, d, layout)
    frame = pd.DataFrame({
        "pair": pair.astype(np.int32),
        "columns": [f"{a}, {b}" for a, b in zip(s, c)],
        "omega": spec["omega"],
        "wavelength": spec["wavelength"],
        "full_turn": np.where(spec["full_turn"], "yes", "no"),
    })
    limit = 2 * math.pi * base
    marks = pd.DataFrame({
        "label": ["2π (pair 0)", f"limit 2π·base = {limit:,.2f} (never reached)", f"chosen length n = {n:,}"],
        "wavelength": [2 * math.pi, limit, float(n)],
        "side": ["right", "left", "right"],  # where the label sits: away from the dots
    })
    full = int(np.count_nonzero(spec["full_turn"]))
    longest = float(spec["wavelength"].max())
    caption = (f"Wavelengths run geometrically from 2π = {spec['wavelength'].min():.4f} positions (pair 0) to the slowest "
               f"pair's, just under the limit 2π·base = {limit:,.2f}. "
               f"{full} of {pair.size} pairs turn fully within n = {n:,}; the other {pair.size - full} have not "
               "come round once by the end of the sequence.")
    if d > 2:
        quiz = {"key": "longest", "answer": round(longest, 2), "tolerance": 0.005 * longest,
                "question": f"At d_model = {d} and base {base:g}, how many positions does the slowest pair need for one turn "
                            "(its wavelength, to within 0.5%)?",
                "explanation": f"2π·base^((d−2)/d) = {longest:,.2f}. The often-quoted 2π·base = {limit:,.2f} is only the limit "
                               "as d grows; the last pair has i = d/2 − 1, not d/2."}
    else:  # one pair: its wavelength is 2π whatever the base (shown above), so ask what a second pair would bring
        two = float(sinusoid_wavelengths(4, base=base)[-1])
        quiz = {"key": "longest", "answer": round(two, 2), "tolerance": 0.005 * two,
                "question": f"At d_model = 2 the only pair has wavelength 2π whatever the base. At d_model = 4 and base "
                            f"{base:g}, how many positions would the second, slower pair need for one turn (to within 0.5%)?",
                "explanation": f"2π·base^(2/4) = 2π·√{base:g} = {two:,.2f}: each new pair turns base^(2/d) times slower."}
    return {
        "caption": caption,
        "frame": frame,
        "marks": marks,
        "shortest": float(spec["wavelength"].min()),
        "longest": longest,
        "asked_frame": without_answer(frame, longest) if d > 2 else frame,
        "asked_note": f" The slowest pair ({pair.size - 1}) is drawn once the exercise below is revealed: it is the answer." if d > 2 else "",
        "limit": limit,
        "full_turns": int(np.count_nonzero(spec["full_turn"])),
        "pairs": int(pair.size),
        "n": n,
        "quiz": quiz,
    }


def default_embedding(position: int) -> str:
    """The text box default for word ``position``: the article's values for 0 and 1, else blank."""
    return SEED_EMBEDDINGS[position] if 0 <= position < len(SEED_EMBEDDINGS) else ""


def split_words(text: str) -> tuple[str, ...]:
    """The words of ``text`` (split on whitespace, case kept), 1 to MAX_WORDS of them."""
    if not isinstance(text, str):
        raise ValueError(f"words must be text, got {type(text).__name__}")
    words = tuple(text.split())
    if not words:
        raise ValueError("words: type at least one word, e.g. Hello World")
    if len(words) > MAX_WORDS:
        raise ValueError(f"words: at most {MAX_WORDS} words, got {len(words)}")
    return words


def parse_embedding(raw: str, word: str, position: int) -> np.ndarray | None:
    """WORKED_D numbers (commas and/or spaces) -> (WORKED_D,) array; blank -> None (zero embedding)."""
    if raw is None or not str(raw).strip():
        return None
    where = f"embedding of “{word}” (position {position})"
    parts = [p for p in re.split(r"[,\s]+", str(raw).strip().strip("[]").strip()) if p]
    if len(parts) != WORKED_D:
        raise ValueError(f"{where} needs {WORKED_D} comma-separated numbers, got {len(parts)}: “{raw}”")
    out = np.empty(WORKED_D)
    for k, p in enumerate(parts):
        try:
            out[k] = float(p)
        except ValueError:
            raise ValueError(f"{where}: “{p}” is not a number; type {WORKED_D} numbers like {SEED_EMBEDDINGS[0]}") from None
        if not math.isfinite(out[k]) or abs(out[k]) > MAX_ABS_EMBEDDING:
            raise ValueError(f"{where}: “{p}” must be a finite number in [-1e6, 1e6]")
    return out


def _vec3(v: np.ndarray) -> str:
    """A vector at 3 decimals, as the article prints it: [0.841, 0.540, 0.010, 1.000]."""
    return "[" + ", ".join(f"{x:.3f}" if round(x, 3) != 0 else "0.000" for x in v) + "]"


def worked_example(text: str, embeddings: tuple[str, ...]) -> WorkedExampleView:
    """Word embedding + PE(position) at d_model = 4, base 10000, the paper's interleaved layout.

    ``embeddings[i]`` is the text typed for word i (blank or missing: a zero embedding).
    Returns {"frame": DataFrame(position, word, embedding, PE, sum as 3-decimal strings, source),
    "full": long DataFrame(position, word, dim, embedding, PE, sum) in float64, "pe": (w, 4),
    "emb": (w, 4), "sum": (w, 4), "words": tuple, "zero_words": count of zero embeddings,
    "pe_1_2": PE(1)[2] (the exercise's answer), "caption"}.
    """
    words = split_words(text)
    w = len(words)
    typed = tuple(embeddings) + ("",) * max(0, w - len(embeddings))
    rows = [parse_embedding(typed[i], words[i], i) for i in range(w)]
    emb = np.vstack([np.zeros(WORKED_D) if r is None else r for r in rows])  # (w, 4)
    pe = sinusoidal(np.arange(w), WORKED_D, base=WORKED_BASE, layout="interleaved")  # (w, 4)
    total = emb + pe  # (w, 4): x_pos = e_pos + PE_pos
    frame = pd.DataFrame({
        "position": np.arange(w),
        "word": words,
        "word embedding": [_vec3(v) for v in emb],
        "+ position vector PE(pos)": [_vec3(v) for v in pe],
        "= sum": [_vec3(v) for v in total],
        "embedding from": ["typed" if r is not None else "blank → zero" for r in rows],
    })
    full = pd.DataFrame({
        "position": np.repeat(np.arange(w), WORKED_D),
        "word": np.repeat(np.asarray(words, dtype=object), WORKED_D),
        "dim": np.tile(np.arange(WORKED_D), w),
        "embedding": emb.ravel(),
        "PE": pe.ravel(),
        "sum": total.ravel(),
    })
    zero = sum(r is None for r in rows)
    caption = (f"d_model = {WORKED_D}, base {WORKED_BASE:g}, the paper's interleaved layout, positions from 0, as in the "
               "article \"What are Positional Embeddings?\". The first two boxes start at the article's hypothetical "
               "embeddings; a word whose box is blank gets a zero embedding, so its sum is its position vector itself. "
               "Values at 3 decimals; full precision below.")
    pe1 = sinusoidal([1], WORKED_D, base=WORKED_BASE)[0]  # (4,)
    far = float(sinusoidal([QUIZ_POSITION], WORKED_D, base=WORKED_BASE)[0, 2])  # PE(50)[2], never in the table (<= 12 words)
    quiz = {"key": "pe_slow", "answer": round(far, 6), "tolerance": 5e-4,
            "question": f"At d = {WORKED_D} and base {WORKED_BASE:g}, the slow pair (dimensions 2–3) turns 1/100 of a radian per "
                        f"position. What is PE({QUIZ_POSITION})[2], its sine at position {QUIZ_POSITION} (3 decimals)?",
            "explanation": f"sin({QUIZ_POSITION} / 10000^(2/4)) = sin({QUIZ_POSITION / 100:g}) = {far:.6f}: after {QUIZ_POSITION} "
                           f"positions the slow pair has turned as far as the fast pair turns in {QUIZ_POSITION / 100:g} of a position."}
    return {
        "frame": frame,
        "full": full,
        "pe": pe,
        "emb": emb,
        "sum": total,
        "words": words,
        "zero_words": zero,
        "caption": caption,
        "pe_1_2": float(pe1[2]),
        "quiz": quiz,
    }


def shift_view(k: int, d: int, base: float) -> ShiftView:
    """M_k fitted by least squares (PE(p + k) = M_k PE(p)) next to its closed form.

    Interleaved layout (the closed form's).  Returns {"frame": DataFrame(row, col, value,
    matrix "fitted by least squares" / "closed form"), "M": (d, d) fitted, "closed": (d, d),
    "residual", "orthogonality", "off_block" (from posenc.geometry.shift_operator), "max_diff":
    max |M_fit - M_closed|, "fit_span": largest |p| + k evaluated, "angle_eps": fit_span * 2^-52 (the
    float64 precision of the largest angle, which bounds what the fit can reach), "caption"}.
    """
    d = _even_d("d", d, MAX_SHIFT_D)
    k = check_int("k", k, lo=0, hi=100_000)
    fit = shift_operator("sinusoidal", k, d, base=base, layout="interleaved")
    closed = sinusoid_shift_matrix(k, d, base=base)  # (d, d)
    idx = np.arange(d)
    frame = pd.concat([
        matrix_frame(fit["M"], idx, idx).assign(matrix="M_k fitted by least squares"),
        matrix_frame(closed, idx, idx).assign(matrix="M_k closed form (block rotations)"),
    ], ignore_index=True)
    pos = fit["positions"]  # (n_fit,)
    span = float(np.max(np.abs(pos))) + k  # largest |position| the fit evaluates
    caption = (f"M_k for k = {k} at d = {d} (the paper's interleaved layout, the closed form's), fitted by least squares "
               f"on {pos.size} positions between {pos.min():,.0f} and {pos.max():,.0f}. ")
    if fit["residual"] < 1e-10:
        caption += f"The residual {fit['residual']:.1e} is below 1e-10: the fitted matrix maps every PE(p) onto PE(p+k)."
    else:
        caption += (f"The residual {fit['residual']:.1e} is above 1e-10 because the fit reaches position {span:,.0f}, "
                    f"where float64 rounds the angle itself to about {span * 2.0**-52:.0e}; a smaller base keeps it small.")
    return {
        "caption": caption,
        "frame": frame,
        "M": fit["M"],
        "closed": closed,
        "residual": fit["residual"],
        "orthogonality": fit["orthogonality"],
        "off_block": fit["off_block"],
        "max_diff": float(np.max(np.abs(fit["M"] - closed))),
        "fit_span": span,
        "angle_eps": span * 2.0**-52,
    }
