"""The comparison table, measured: every column is computed from the schemes, none typed in.

For one scheme at sequence length n (encoding width d, H heads) and a training length L:

- bounded      max |value| of the signature at positions up to 10^6, and whether it stops
               growing: max over [10^5, 10^6] <= 1.5 x max over [0, 1000];
- continuous   one smooth function of the position: the signature exists between integer
               positions, its local slope |f(p + δ) - f(p)| / δ agrees for δ = 1e-3 and 1e-6,
               and that slope (at positions 1 and 7) is the same in a prompt of 16 tokens and of
               min(n, L) tokens.  Index / length fails the last part: its slope is 1/L, a
               count of tokens divided by the prompt length ("a discrete step dressed up as a
               float"), not a property of the position;
- unique       the closest pair of distinct positions among 0 .. n-1 (0 = a collision), and
               the mark: that distance is at least a tenth of the median distance between
               neighbouring positions (posenc.analysis.tables.uniqueness).  One sin+cos pair
               fails it: across turns two positions come back almost onto the same point;
- length_change the largest change of position 1's signature when the sequence length
               varies over {2, n/2, n, 2L, 4L} (0 = length-invariant);
- relative     translation_invariance of the dense score matrix (0 = depends on j - i only)
               and whether that score varies at all (a constant score carries no position);
- extrapolates defined at 4L;
- learned parameters, where position enters, models, paper: from the registry and shapes.

The wishlist marks (bounded, continuous, relative, unique) are these booleans.
"""

from __future__ import annotations

import functools

import numpy as np

from posenc._threads import pmap
from posenc._validate import check_int
from posenc.analysis.geometry import collisions, growth, length_dependence
from posenc.analysis.scores import finite_range, translation_invariance
from posenc.analysis.tables import measure_table, uniqueness
from posenc.registry import SCHEMES, get_scheme
from posenc.schemes.scheme import MAX_HEADS

FAR = np.unique(np.round(np.geomspace(1e5, 1e6, 64)))
NEAR = np.arange(0, 1001, dtype=np.float64)
BOUND_RATIO = 1.5
RELATIVE_TOL = 1e-6
SHORT_PROMPT = 16  # the short prompt of the continuity rule's length check
SLOPE_TOL = 1e-9  # relative: the same slope in a short and a long prompt
MEASURED_ROWS = 512  # rows remembered by measure_scheme (a row is a few hundred bytes)


def comparison_params(key: str, train_len: int, factor: float = 4.0) -> dict:
    """Parameters that put every RoPE extension on the same footing: trained at L, factor 4."""
    return get_scheme(key).accepted({"original_max_position_embeddings": train_len, "factor": factor})


def measure_scheme(key: str, *, n: int = 512, d: int = 64, n_heads: int = 8, train_len: int = 512, params: dict | None = None) -> dict:
    """Every measured column for scheme ``key`` (see the module docstring); a flat dict.

    Measurements at a registry scheme's comparison parameters (``params`` None) are remembered per
    (key, n, d, n_heads, train_len) in this process, so every view that shows them (the landing
    page's wishlist, the comparison table) shares one computation; each call gets its own copy."""
    if params is None and all(isinstance(v, str | int | float) for v in (key, n, d, n_heads, train_len)):
        scheme = get_scheme(key)
        d_key, heads_key = _measured_args(scheme, d, n_heads)
        row = dict(_measured(scheme.key, n, d_key, heads_key, train_len))
        if d_key != d and not _fixed_width(scheme):  # a bias measured at MEASURE_D says the d asked for
            row["d"] = d  # (a bundled table's row keeps its own width)
        return row
    return _measure(key, n=n, d=d, n_heads=n_heads, train_len=train_len, params=params)


def measure_schemes(keys, *, n: int = 512, d: int = 64, n_heads: int = 8, train_len: int = 512, strict: bool = False) -> dict:
    """{key: ``measure_scheme(key, ...)``, or the ValueError it raised (``strict``: raised here)} for registry schemes
    ``keys``, measured side by side (``posenc._threads.pmap``: each scheme whole in one thread, so the rows are those
    of one call at a time)."""

    def one(key):
        try:
            return measure_scheme(key, n=n, d=d, n_heads=n_heads, train_len=train_len)
        except ValueError as exc:
            return exc

    keys = list(keys)
    out = dict(zip(keys, pmap(one, keys)))
    if strict and (failed := [r for r in out.values() if isinstance(r, ValueError)]):
        raise failed[0]
    return out


MEASURE_D, MEASURE_HEADS = 64, 8  # the settings a measurement that does not depend on them is remembered at


def _measured_args(scheme, d, n_heads) -> tuple:
    """(d, n_heads) as ``_measured`` remembers them for ``scheme``: a scheme whose every measurement is the same at any
    width (a bias on the logit, a bundled table of its own width) is measured at MEASURE_D, and one with a single
    position signal for all heads at MEASURE_HEADS, so that moving d or the heads recomputes only the schemes it
    changes.  Both are checked first as any measurement would check them (the contract test compares the rows)."""
    d = check_int("d", d, lo=1)
    n_heads = check_int("n_heads", n_heads, lo=1, hi=MAX_HEADS)
    same_at_any_width = not scheme.scores_use_width or _fixed_width(scheme)
    return (MEASURE_D if same_at_any_width else d), (n_heads if scheme.uses_heads else MEASURE_HEADS)


def _fixed_width(scheme) -> bool:
    """Its encoding has a width of its own whatever d is asked for (a bundled table)."""
    return scheme.width(8) == scheme.width(16)


@functools.lru_cache(maxsize=MEASURED_ROWS)
def _measured(key: str, n, d, n_heads, train_len) -> dict:
    return _measure(key, n=n, d=d, n_heads=n_heads, train_len=train_len, params=None)


def _measure(key, *, n, d, n_heads, train_len, params) -> dict:
    scheme = get_scheme(key)
    n = check_int("n", n, lo=4, hi=4096)
    L = check_int("train_len", train_len, lo=4, hi=4096)
    params = {**comparison_params(key, L), **(params or {})}
    params = scheme.validate_params(params)
    table = scheme.table(scheme.width(d), **params)
    if table is not None:
        return _learned_row(scheme, table, n=n, train_len=L)
    sig_kw = {"n_heads": n_heads}
    row: dict = {"key": key, "name": scheme.name, "kind": scheme.kind, "d": d, "n_measured": n}

    # bounded: growth of max |value| out to 10^6 (_bounds: remembered on the parameters, as it does not depend on n)
    row.update(_remembered(_bounds, key, d, n_heads, params))

    # continuous: defined at fractional positions with a stable local slope, the same whatever
    # the prompt length (up to the training length)
    probe_pos = np.array([1.0, 7.0, 100.0, min(n - 2, 300.0)])

    def slope(pos: np.ndarray, delta: float, seq_len: int) -> np.ndarray:  # (len(pos), k)
        f0 = scheme.signature(pos, d, seq_len=seq_len, **sig_kw, **params)
        return (scheme.signature(pos + delta, d, seq_len=seq_len, **sig_kw, **params) - f0) / delta

    try:
        slopes = [float(np.max(np.abs(slope(probe_pos, delta, n)))) for delta in (1e-3, 1e-6)]
        row["max_slope"] = slopes[1]
        short, long = (slope(probe_pos[:2], 1e-6, m) for m in (SHORT_PROMPT, min(n, L)))  # (2, k) each
        row["slope_length_change"] = float(np.max(np.abs(short - long)))
        smooth = bool(np.isfinite(slopes[1]) and slopes[1] <= 2 * slopes[0] + 1e-9)
        same = row["slope_length_change"] <= SLOPE_TOL * max(1.0, float(np.max(np.abs(long))))
        row["continuous"] = smooth and same
    except ValueError:
        row["max_slope"] = row["slope_length_change"] = float("nan")
        row["continuous"] = False  # only defined at integer positions (a lookup or a bucket)

    # unique (closest pair of distinct positions at length n) and relative (the dense score matrix): measured on the
    # positions 0 .. n-1 and the parameters alone, so remembered on them (_at_length)
    unique, relative = _remembered(_at_length, key, n, d, n_heads, params)
    row.update(unique)

    # length-invariant: position 1 under several sequence lengths
    lengths = sorted({2, max(2, n // 2), n, 2 * L, 4 * L})
    row["length_change"] = length_dependence(key, 1, lengths, d, **sig_kw, **params)["max_change"]

    row.update(relative)

    # extrapolates: defined at 4L (how well a model carries its task there is measured by the lab)
    row["defined_at_4L"] = scheme.max_len is None or 4 * L <= scheme.max_len

    row["learned_parameters"] = scheme.learned_parameters(d, n_heads, **params)
    row.update(enters=scheme.enters, models=", ".join(scheme.models), paper=scheme.paper, year=scheme.year)
    return row


def _remembered(fn, *args):
    """``fn(*args[:-1], sorted items of args[-1])`` through its cache; a parameter that cannot be a key (none of the
    registry's) is measured without it."""
    *head, params = args
    try:
        return fn(*head, tuple(sorted(params.items())))
    except TypeError:
        return fn.__wrapped__(*head, tuple(sorted(params.items())))


@functools.lru_cache(maxsize=MEASURED_ROWS)
def _bounds(key: str, d: int, n_heads: int, params: tuple) -> dict:
    """The bounded columns of scheme ``key`` with ``params`` (sorted items): max |value| near 0 and out to 10^6.

    Neither n nor L enters them except through the parameters: a new n re-measures none of them, and a new L only the
    schemes whose parameters name L (the RoPE extensions, ``comparison_params``)."""
    kw = {"n_heads": n_heads, **dict(params)}
    g_near, g_far = growth(key, NEAR, d, **kw), growth(key, FAR, d, **kw)
    near_max = float(np.nanmax(g_near["max_abs"]))
    far_defined = bool(g_far["defined"].all())
    far_max = float(np.nanmax(g_far["max_abs"])) if g_far["defined"].any() else float("nan")
    bounded = (far_defined and far_max <= BOUND_RATIO * max(near_max, 1e-12)) or (not far_defined and np.isfinite(near_max))
    return {"max_abs_at_1e6": far_max if far_defined else float("nan"), "max_abs_near": near_max, "bounded": bool(bounded)}


@functools.lru_cache(maxsize=MEASURED_ROWS)
def _at_length(key: str, n: int, d: int, n_heads: int, params: tuple) -> tuple[dict, dict]:
    """(unique columns, relative columns) of scheme ``key`` with ``params`` (sorted items) at positions 0 .. n-1.

    Neither depends on the training length L except through the parameters: a new L re-measures them only for the
    schemes whose parameters name L (the six RoPE extensions, ``comparison_params``), not for the fourteen others
    measured this way (the two learned tables are measured by ``_learned_row``)."""
    scheme, kw, sig_kw = get_scheme(key), dict(params), {"n_heads": n_heads}
    best = collisions(key, n, d, **sig_kw, **kw)  # exact; O(n d) for isometric schemes
    unique = {"closest_distance": best["distance"], "closest_i": best["i"], "closest_j": best["j"],
              **uniqueness(scheme.signature(np.arange(n), d, seq_len=n, **sig_kw, **kw), best["distance"])}
    # relative: translation invariance of the dense score matrix, and whether it varies
    S = scheme.dense_scores(n, d, n_heads=n_heads, **kw)  # (n, n) from the defining function
    relative = {"translation_invariance": translation_invariance(S), "score_spread": _finite_spread(S)}
    relative["relative"] = bool(relative["translation_invariance"] <= RELATIVE_TOL and relative["score_spread"] > 1e-9)
    return unique, relative


def _finite_spread(S: np.ndarray) -> float:
    """max - min over the finite entries of S (``finite_range``), 0 when none is."""
    lo, hi = finite_range(S)
    return hi - lo if np.isfinite(lo) else 0.0


def _learned_row(scheme, table: np.ndarray, *, n: int, train_len: int) -> dict:
    """A learned table's row: posenc.analysis.tables.measure_table on its rows, registry metadata on top.

    The table has max_len rows whatever n is, so uniqueness and relativity are measured on
    min(n, max_len) rows (``n_measured``)."""
    row = measure_table(table, name=scheme.name, n=n, train_len=train_len)
    row.update(key=scheme.key, name=scheme.name, enters=scheme.enters, models=", ".join(scheme.models),
               paper=scheme.paper, year=scheme.year)
    row["n_measured"] = min(n, table.shape[0])
    return row


def comparison_table(keys=None, *, n: int = 512, d: int = 64, n_heads: int = 8, train_len: int = 512) -> list[dict]:
    """``measure_scheme`` for every scheme in ``keys`` (default: the whole registry), in order."""
    if isinstance(keys, str):
        keys = [keys]
    try:
        keys = list(SCHEMES) if keys is None else [get_scheme(k).key for k in keys]
    except TypeError as exc:  # not iterable
        raise ValueError(f"keys must be None or a list of scheme keys, got {keys!r}") from exc
    return [measure_scheme(k, n=n, d=d, n_heads=n_heads, train_len=train_len) for k in keys]
