"""Learned absolute position embeddings (GPT-2 ``wpe``, BERT ``position_embeddings``).

axes: n positions looked up, d model dim (d_model), max_len rows in the table.

    x_p = E_tok[t_p] + P[p]        P: trainable table of shape (max_len, d_model)

There is no formula for P, and no extrapolation: a position p >= max_len has no row, so the
encoding is undefined there (``learned_lookup`` raises instead of wrapping or clipping).

Bundled example: the position table of sentence-transformers/all-MiniLM-L6-v2 (a 6-layer BERT,
max_position_embeddings 512, hidden 384), tensor ``embeddings.position_embeddings.weight``,
stored as float16 in ``posenc/data/minilm_position_embeddings.npy`` (licence Apache-2.0; see
posenc/data/README.md, regenerate with tools/extract_minilm.py).  Row p is the vector added at
position p, 0-based with no offset ([CLS] sits at position 0).

``minilm_metadata()`` returns the provenance JSON.  Keys the dashboard uses:
``metadata["reference_scalars"]["median_token_embedding_l2_norm"]`` (a typical token
embedding, from ``embeddings.word_embeddings.weight``) and
``metadata["reference_scalars"]["median_position_embedding_l2_norm"]``.
"""

from __future__ import annotations

import functools
import importlib.resources
import io
import json

import numpy as np

from posenc._validate import check_float, check_int, check_memory, check_positions
from posenc.schemes.kinds import Additive, never

MINILM_MAX_LEN = 512
MINILM_D_MODEL = 384
_DATA_PACKAGE = "posenc"
_NPY_NAME = "data/minilm_position_embeddings.npy"
_JSON_NAME = "data/minilm_position_embeddings.json"
MAX_RANDOM_LEN = 1 << 16
MAX_RANDOM_D = 8192


@functools.lru_cache(maxsize=1)
def minilm_table() -> np.ndarray:
    """The all-MiniLM-L6-v2 position table, float64 of shape (512, 384), read-only.

    Stored as float16 (max abs rounding error vs the float32 checkpoint is in the metadata
    under ``stored.max_abs_diff_vs_float32``); widened to float64 here.
    """
    raw = importlib.resources.files(_DATA_PACKAGE).joinpath(_NPY_NAME).read_bytes()
    stored = np.load(io.BytesIO(raw), allow_pickle=False)  # (512, 384) float16
    if stored.shape != (MINILM_MAX_LEN, MINILM_D_MODEL):  # a corrupted checkout, not user input
        raise RuntimeError(f"bundled MiniLM table has shape {stored.shape}, expected (512, 384)")
    table = stored.astype(np.float64)  # (max_len, d_model)
    table.setflags(write=False)
    return table


@functools.lru_cache(maxsize=1)
def _metadata_text() -> str:
    return importlib.resources.files(_DATA_PACKAGE).joinpath(_JSON_NAME).read_text("utf-8")


def minilm_metadata() -> dict:
    """Provenance of the bundled table (a fresh dict each call; safe to modify)."""
    return json.loads(_metadata_text())


def random_table(
    max_len: int = MINILM_MAX_LEN,
    d_model: int = MINILM_D_MODEL,
    *,
    std: float = 0.02,
    seed: int = 0,
) -> np.ndarray:
    """An untrained learned table, float64 of shape (max_len, d_model).

    Drawn like a freshly initialised Hugging Face model: ``nn.Embedding`` weights
    ~ Normal(0, initializer_range = 0.02), plain (not truncated), via
    ``numpy.random.default_rng(seed)``.
    """
    # NOTE: Google's BERT used a *truncated* normal(0.02) and OpenAI's GPT-2 used std 0.01 for
    # wpe; HF re-initialises both with plain normal(0, 0.02), which is what we mimic.
    max_len = check_int("max_len", max_len, lo=1, hi=MAX_RANDOM_LEN)
    d_model = check_int("d_model", d_model, lo=1, hi=MAX_RANDOM_D)
    std = check_float("std", std, lo=0.0, hi=100.0)
    seed = check_int("seed", seed, lo=0, hi=2**63 - 1)
    check_memory("random learned table", (max_len, d_model))
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, std, size=(max_len, d_model))  # (max_len, d_model)


def learned_lookup(table, positions) -> np.ndarray:
    """Rows ``table[positions]``: float64 of shape (n, d_model) for n positions.

    ``table``: array of shape (max_len, d_model).  ``positions``: an integer or 1-D sequence of
    integers in 0 .. max_len - 1 (integral floats such as 3.0 are accepted).  A position outside
    the table raises ValueError: a learned absolute table has no row beyond max_len - 1.
    """
    tab = np.asarray(table)
    if tab.ndim != 2 or tab.dtype.kind not in "fiu" or tab.shape[0] < 1:
        raise ValueError(
            f"table must be a 2-D numeric array of shape (max_len, d_model), got shape "
            f"{tab.shape} and dtype {tab.dtype}"
        )
    max_len = tab.shape[0]
    if np.asarray(positions).dtype.kind == "b":
        raise ValueError("positions must be integers (0, 1, 2, ...), got booleans")
    pos = check_positions(positions, integer=True)  # (n,) float64, finite, whole numbers
    if pos.size:
        lo, hi = pos.min(), pos.max()
        if lo < 0:
            raise ValueError(
                f"positions: {int(lo)} is negative; positions start at 0 (max_len = {max_len}, "
                f"valid positions 0..{max_len - 1})"
            )
        if hi >= max_len:
            raise ValueError(
                f"positions: {int(hi)} is past the last row of this learned table "
                f"(max_len = {max_len}, valid positions 0..{max_len - 1}); a learned absolute "
                "table has no row for it"
            )
    check_memory("learned lookup", (pos.size, tab.shape[1]))
    idx = pos.astype(np.int64)  # (n,)
    return np.asarray(tab[idx], dtype=np.float64)  # (n, d_model), a copy


# ----------------------------------------------------------------------------- behaviours
# One signature per kind (posenc.schemes.kinds): encode(positions, d, *, seq_len, **params).

def _minilm(d) -> np.ndarray:
    if check_int("d_model", d, lo=1) != MINILM_D_MODEL:
        raise ValueError(f"d_model must be {MINILM_D_MODEL} for the MiniLM table, got {d}")
    return minilm_table()


def _random(d, *, seed) -> np.ndarray:
    return random_table(MINILM_MAX_LEN, d, seed=seed)


def _minilm_encode(positions, d, *, seq_len):
    return learned_lookup(_minilm(d), positions)


def _random_encode(positions, d, *, seq_len, seed):
    return learned_lookup(_random(d, seed=seed), positions)


def _minilm_parameters(d, n_heads):
    return MINILM_MAX_LEN * MINILM_D_MODEL


def _random_parameters(d, n_heads, *, seed):
    return MINILM_MAX_LEN * d


# A lookup has no structure to declare: PE(i) . PE(j) and the row distances are whatever training left.
LEARNED_MINILM = Additive(encode=_minilm_encode, table=_minilm, max_len=MINILM_MAX_LEN, width=MINILM_D_MODEL,
                          offset_only=never, isometric=never, parameters=_minilm_parameters)
LEARNED_RANDOM = Additive(encode=_random_encode, table=_random, max_len=MINILM_MAX_LEN,
                          offset_only=never, isometric=never, parameters=_random_parameters)
