"""A scheme: its metadata, its tunable parameters, and the behaviour of its kind.

``ParamSpec`` describes one parameter (default, range, widget step, and bounds other parameters
set); ``Scheme`` validates its parameters once and hands them to its behaviour (an ``Additive``,
``Rotary`` or ``Bias`` object from ``posenc.schemes.kinds``), so every analysis asks the scheme
the same questions whatever its kind.  The registry of every scheme is ``posenc.registry``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from posenc._validate import MAX_ABS_POSITION, check_bool, check_choice, check_float, check_int, check_positions
from posenc.schemes.kinds import KINDS, PROBES

Kind = Literal["additive", "rotary", "bias"]
MAX_HEADS = 1024


@dataclass(frozen=True)
class ParamSpec:
    """One tunable parameter: its default, allowed range and widget step."""

    name: str
    label: str
    default: Any
    type: Literal["int", "float", "choice", "bool"]
    lo: float | None = None
    hi: float | None = None
    step: float | None = None
    choices: tuple[str, ...] = ()
    lo_open: bool = False
    help: str = ""
    # bounds that depend on the scheme's other parameters: (name of the other parameter(s), rule);
    # the rule maps the other values to this parameter's bound (inclusive)
    lo_from: tuple[tuple[str, ...], Callable[..., float]] | None = None
    hi_from: tuple[tuple[str, ...], Callable[..., float]] | None = None
    # how the setting reads in a one-line summary of what a chart was drawn at ("base {:g}" -> "base 10000");
    # empty: a setting such a line leaves out (a channel layout, a decay rate the chart does not show)
    brief: str = ""

    def briefly(self, value) -> str:
        """``value`` as the summary line shows it ("s 4", "L 8,192"); "" for a parameter without ``brief``."""
        return self.brief.format(value) if self.brief else ""

    def validate(self, value):
        """Return ``value`` cleaned, or raise ValueError naming the parameter and its range."""
        if self.type == "int":
            return check_int(self.name, value, lo=self.lo, hi=self.hi)
        if self.type == "float":
            return check_float(self.name, value, lo=self.lo, hi=self.hi, lo_open=self.lo_open)
        if self.type == "bool":
            return check_bool(self.name, value)
        return check_choice(self.name, value, self.choices)


@dataclass(frozen=True)
class Scheme:
    """One positional-encoding scheme: metadata, parameters, and the behaviour of its kind."""

    key: str
    name: str
    kind: Kind
    learned: bool
    paper: str
    year: int | None
    models: tuple[str, ...]
    formula: str  # one LaTeX line, shown on the pages
    summary: str
    behaviour: Any  # an instance of posenc.schemes.kinds.KINDS[kind]
    page: str  # the dashboard page that explains it (a file under pages/)
    params: tuple[ParamSpec, ...] = field(default_factory=tuple)
    short_name: str = ""  # its name in a legend beside its siblings ("PI (linear)", "YaRN"); empty: the name itself
    fine_tuning: str = ""  # a context extension: whether its paper fine-tunes the extended model, with the source
    color: str = ""  # its colour in every chart that draws schemes side by side (charts.base.SCHEME_COLORS reads it)

    def __post_init__(self):
        where = f"scheme {self.key!r}"
        if self.kind not in KINDS:
            raise ValueError(f"{where}: unknown kind {self.kind!r}; valid: {', '.join(KINDS)}")
        expected = KINDS[self.kind]
        if not isinstance(self.behaviour, expected):
            raise ValueError(f"{where}: kind {self.kind!r} needs a {expected.__name__} behaviour, "
                             f"got {type(self.behaviour).__name__}")
        problems = self.behaviour.problems()
        if problems:
            raise ValueError(f"{where}: incomplete behaviour: {'; '.join(problems)}")
        if not self.short_name:
            object.__setattr__(self, "short_name", self.name)
        names = [p.name for p in self.params]
        if len(names) != len(set(names)):
            raise ValueError(f"{where}: parameter names repeat: {names}")

    # -- metadata derived from the behaviour --------------------------------------------------
    @property
    def enters(self) -> str:
        """Where position enters the model: "input embedding", "queries and keys" or "attention logits"."""
        return self.behaviour.enters

    @property
    def max_len(self) -> int | None:
        """Rows of a lookup table (positions >= max_len are undefined), else None."""
        return self.behaviour.max_len

    def defined_below(self, **params) -> int | None:
        """Positions at or past this are undefined (a table's last row + 1, randomized positions' range), else None."""
        limit = getattr(self.behaviour, "position_limit", None)
        return self.max_len if limit is None else int(limit(**self.validate_params(params)))

    @property
    def score_unit(self) -> str:
        return self.behaviour.score_unit

    def width(self, d: int) -> int:
        """The encoding width this scheme runs at when asked for ``d`` (a bundled table fixes its own)."""
        return self.behaviour.width or int(d)

    def unit(self, metric: str) -> str:
        """What a position score of this scheme means when ``metric`` is asked for (``score_metric``); schemes sharing a
        unit share a colour scale."""
        return self.behaviour.unit(metric)

    @property
    def centered_scores(self) -> bool:
        """Its position scores are symmetric about 0 (a diverging scale) rather than running from their own minimum."""
        return self.behaviour.centered_scores

    @property
    def scores_use_width(self) -> bool:
        """Its position scores change with the width d (False for a bias on the logit; checked by the contract test)."""
        return self.behaviour.scores_use_width

    @property
    def rotates(self) -> bool:
        """Queries and keys are rotated by position, at frequencies from a base (True for the rotary kind; checked by
        the contract test): the settings a page shares between RoPE variants apply to it."""
        return self.behaviour.rotates

    @property
    def mask_only(self) -> bool:
        """It adds no position signal: a layer gets only the causal mask, so order shows only through what the mask
        hides (NoPE, the control; checked by the contract test)."""
        return self.behaviour.mask_only

    @property
    def uses_heads(self) -> bool:
        """Its position signal changes with the number of heads (True for a bias per head; checked by the contract
        test): where False, every measurement of it is the same whatever n_heads."""
        return self.behaviour.uses_heads

    def score_metric(self, metric: str) -> str:
        """The metric this scheme's position scores are taken with when ``metric`` is asked for: an additive
        scheme's vectors are compared by ``metric`` ("dot" or "cosine"); a rotary scheme's score is q'·k' and a bias
        scheme's is its bias, both "dot" (checked by the contract test against ``position_scores``)."""
        return self.behaviour.score_metric(metric)

    def offset_only(self, d: int, n: int | None = None, **params) -> bool:
        """Declared: the score of (i, j) depends only on j - i at width d, for positions 0 .. n-1 (n None: at every
        length) and these parameters (defaults filled in); checked by the contract test at the values its ParamSpecs
        generate.  FIRE's holds only up to its threshold, so a length matters."""
        n = None if n is None else check_int("n", n, lo=1)
        return bool(self.behaviour.offset_only(check_int("d", d, lo=1), n, **self.validate_params(params)))

    def isometric(self, d: int, n: int | None = None, **params) -> bool:
        """Declared: |sig(p + k) - sig(p)| depends only on k for positions 0 .. n-1 (None: every length) at these
        parameters (contract-tested)."""
        n = None if n is None else check_int("n", n, lo=1)
        return bool(self.behaviour.isometric(check_int("d", d, lo=1), n, **self.validate_params(params)))

    # -- parameters ------------------------------------------------------------------------
    def accepted(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The entries of ``values`` this scheme has a parameter for (shared settings, e.g. a factor and a trained
        length, given to schemes of which only some take them); not validated."""
        names = {p.name for p in self.params}
        return {k: v for k, v in values.items() if k in names}

    def validate_params(self, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Fill defaults and validate; every error names this scheme and the parameter."""
        params = dict(params or {})
        known = {p.name: p for p in self.params}
        unknown = sorted(set(params) - set(known))
        if unknown:
            valid = ", ".join(known) or "(none)"
            raise ValueError(f"{self.key}: unknown parameter(s) {unknown}; valid: {valid}")
        out = {}
        for name, spec in known.items():
            try:
                out[name] = spec.validate(params.get(name, spec.default))
            except ValueError as exc:
                raise ValueError(f"{self.key}: {exc}") from None
        for name, spec in known.items():  # bounds set by other parameters
            if not (spec.lo_from or spec.hi_from):
                continue
            lo, hi = _dependent_bounds(spec, out)
            if not lo <= out[name] <= hi:
                others = sorted({*(spec.lo_from or ((),))[0], *(spec.hi_from or ((),))[0]})
                given = ", ".join(f"{o} = {out[o]}" for o in others)
                raise ValueError(f"{self.key}: {name} must be in [{lo:g}, {hi:g}] when {given}, got {out[name]:g}")
        return out

    def param_range(self, name: str, params: Mapping[str, Any]) -> tuple[float, float]:
        """The closed [lo, hi] a widget for numeric parameter ``name`` may offer, given the other values.

        The static range (an open end moved in by one widget step) intersected with the bounds the
        other parameters set; lo > hi means no value fits (the caller fixes the others first).
        """
        spec = {p.name: p for p in self.params}[name]
        lo = spec.lo + (spec.step or 0) if spec.lo_open else spec.lo
        dlo, dhi = _dependent_bounds(spec, params)
        return (max(lo, dlo), min(spec.hi, dhi))

    def need(self, kind: str, what: str) -> None:
        """Raise ValueError unless this scheme is of ``kind`` ("additive", "rotary", "bias"); ``what`` says why."""
        if self.kind != kind:
            raise ValueError(f"scheme {self.key!r} is {self.kind}, not {kind}; {what}")

    # -- the defining functions --------------------------------------------------------------
    def encode(self, positions, d: int, *, seq_len: int | None = None, **params) -> np.ndarray:
        """The added vector at each position, (n, d) float64 (additive schemes)."""
        self.need("additive", "use signature() or position_scores()")
        p = self.validate_params(params)
        pos = check_positions(positions)
        return self.behaviour.encode(pos, d, seq_len=_seq_len(pos, seq_len), **p)

    def qk(self, q, k, positions, *, seq_len: int | None = None, **params) -> tuple:
        """(q', k'): queries and keys (..., n, d) transformed at ``positions`` (rotary schemes)."""
        self.need("rotary", "only rotary schemes transform queries and keys")
        p = self.validate_params(params)
        pos = check_positions(positions)
        return self.behaviour.qk(q, k, pos, seq_len=_seq_len(pos, seq_len), **p)

    def frequencies(self, d: int, *, seq_len: int | None = None, **params):
        """Rotary: (inv_freq (d/2,), attention_factor).  Sinusoids: angular frequency per column pair."""
        out = self.behaviour.pair_frequencies(d, seq_len, self.validate_params(params))
        if out is not None:
            return out
        raise ValueError(f"scheme {self.key!r} has no frequencies (it is not built from sinusoids or rotations)")

    def spectrum(self, d: int, *, seq_len: int | None = None, **params) -> tuple[np.ndarray, float, np.ndarray]:
        """(angular frequency per pair (h,), attention factor, scale (h,): the frequency over plain RoPE's at the same
        base, 1 for sinusoids), answered by its kind; ValueError for a scheme not built from sinusoids or rotations."""
        out = self.behaviour.spectrum(d, seq_len, self.validate_params(params))
        if out is None:
            raise ValueError(f"scheme {self.key!r} has no frequencies (it is not built from sinusoids or rotations)")
        return out

    def layer_inputs(self, positions, d: int, *, seq_len: int | None = None, **params) -> dict:
        """What an attention layer takes from this scheme at ``positions``, by kind: {"pe": added vectors (n, d)},
        {"qk": a map of queries and keys} or {"bias": head 0's logit bias (n, n)}."""
        pos = check_positions(positions)
        return self.behaviour.layer_inputs(pos, d, _seq_len(pos, seq_len), self.validate_params(params))

    def bias(self, qpos, kpos, n_heads: int = 8, *, head: int | None = None, **params) -> np.ndarray:
        """The logit bias of every (query, key) pair, (H, n_q, n_k); -inf where masked (bias schemes).  With ``head``:
        that head alone, (n_q, n_k), computed without the others where the scheme can."""
        self.need("bias", "only bias schemes add to the logits")
        p = self.validate_params(params)
        if head is None:
            return self.behaviour.bias(qpos, kpos, n_heads, **p)
        H = _heads(n_heads)
        return self.behaviour.one_head(qpos, kpos, H, check_int("head", head, lo=0, hi=H - 1), **p)

    # -- what the analyses ask -------------------------------------------------------------
    def signature(self, positions, d: int, *, seq_len: int | None = None, n_heads: int = 8,
                  probe: str = "ones", **params) -> np.ndarray:
        """What each position looks like to the model, (n, k) float64.

        additive: the encoding (k = d); rotary: the probe query transformed at p (k = d); bias:
        the bias of a query at p on a key at 0, in every head (k = H).
        """
        p = self.validate_params(params)
        pos = check_positions(positions)
        check_choice("probe", probe, PROBES)
        return self.behaviour.signature(pos, d, seq_len=_seq_len(pos, seq_len), params=p,
                                        n_heads=_heads(n_heads), probe=probe)

    def dense_scores(self, n: int, d: int, *, n_heads: int = 8, head: int = 0, probe: str = "ones",
                     **params) -> np.ndarray:
        """The (n, n) score matrix of positions 0 .. n-1 built from the defining function.

        additive: PE(i) . PE(j); rotary: q'(i) . k'(j) for the probe pair; bias: head ``head``.
        """
        p = self.validate_params(params)
        H = _heads(n_heads)
        return self.behaviour.dense_scores(check_int("n", n, lo=1), d, params=p, n_heads=H,
                                           head=check_int("head", head, lo=0, hi=H - 1), probe=probe)

    def offset_profile(self, offsets, d: int, *, seq_len: int | None = None, n_heads: int = 8, head: int = 0,
                       probe: str = "ones", **params) -> np.ndarray:
        """The score as a function of the offset j - i in closed form, (m,); offset-only schemes only."""
        p = self.validate_params(params)
        off = check_positions(offsets, name="offsets")
        H = _heads(n_heads)
        L = seq_len if seq_len is not None else int(np.max(np.abs(off), initial=0)) + 1
        if not self.offset_only(d, L, **p):
            raise ValueError(f"the score of scheme {self.key!r} at d = {d} and length {L:,} depends on absolute positions, "
                             "not only on j - i")
        return self.behaviour.offset_profile(off, d, seq_len=L, params=p, n_heads=H,
                                             head=check_int("head", head, lo=0, hi=H - 1), probe=probe)

    def table(self, d: int, **params) -> np.ndarray | None:
        """The lookup table (max_len, d) of a learned scheme, else None."""
        fn = self.behaviour.table
        return None if fn is None else fn(d, **self.validate_params(params))

    def learned_parameters(self, d: int, n_heads: int = 8, **params) -> int:
        """How many numbers training sets (0 for a fixed scheme)."""
        return int(self.behaviour.parameters(d, _heads(n_heads), **self.validate_params(params)))

    def scaling_block(self, **params) -> dict | None:
        """The Hugging Face rope_scaling block a rotary scheme stands for (None: plain RoPE)."""
        fn = self.behaviour.scaling_block  # None for a scheme of another kind, and for a rotary one that is no rope_type
        if fn is None:
            raise ValueError(f"scheme {self.key!r} is not a Hugging Face rope_type")
        return fn(**self.validate_params(params))


def _dependent_bounds(spec: ParamSpec, params: Mapping[str, Any]) -> tuple[float, float]:
    lo = spec.lo_from[1](*(params[n] for n in spec.lo_from[0])) if spec.lo_from else -np.inf
    hi = spec.hi_from[1](*(params[n] for n in spec.hi_from[0])) if spec.hi_from else np.inf
    return lo, hi


def _seq_len(positions: np.ndarray, seq_len) -> int:
    """The sequence length (index / length and dynamic NTK read it): given, or max(position) + 1."""
    if seq_len is not None:
        return check_int("seq_len", seq_len, lo=1, hi=int(MAX_ABS_POSITION) + 1)
    # max(..., 1): positions may all be negative (RoPE and the sinusoid accept them)
    return max(int(np.max(positions)) + 1, 1) if positions.size else 1


def _heads(n_heads) -> int:
    return check_int("n_heads", n_heads, lo=1, hi=MAX_HEADS)
