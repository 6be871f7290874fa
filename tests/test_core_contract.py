"""The behaviour contract, over every scheme in the registry.

For each scheme, ``check_scheme`` computes the score matrix and the signature *independently*, from
the scheme's raw defining function (its encoding, its q/k transform on seeded random q and k, or its
bias of every (i, j)), and checks that

- the analyses' entry points agree with it within 1e-9: ``position_scores`` (which takes the O(n)
  closed-form offset profile when the scheme declares itself offset-only), ``offset_profile``,
  ``dense_scores`` and ``signature``;
- the declared properties hold numerically: ``offset_only(d)`` (the score depends only on j - i)
  and ``isometric(d)`` (|sig(p + k) - sig(p)| depends only on k) -- a wrong declaration, either way,
  fails with a message naming the scheme;
- outputs are float64, finite except the -inf masks of causal biases, and deterministic.

Its parameter specs generate valid values (accepted) and invalid ones (rejected with a message
naming the scheme and the argument).  The last tests break schemes on purpose -- a wrong kind, a
wrong declaration, a q/k transform applied to q only -- and check that the contract catches each.
Counts come from the registry, never literals.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import posenc
from posenc.registry import SCHEMES, Scheme
from posenc.schemes import kinds
from posenc.schemes.rotary import apply_rope

KEYS = list(SCHEMES)
N = 12  # positions 0 .. N-1
H = 3  # heads (not a power of two: ALiBi's slope rule for other head counts)
TOL = 1e-9  # agreement, relative to the largest |value|
CLEAR = 1e-6  # a property "fails" only by more than this (relative), so the verdict is never borderline


def widths(scheme: Scheme) -> list[int]:
    """The widths a scheme is checked at: an even and an odd one where the declarations depend on d.

    The odd width is 1: a lone sine column of frequency 1, so "not offset-only, not isometric" shows
    clearly within N positions (at d = 7 the lone column turns at 10000^(-6/7) per position and is
    linear to 1e-11 over 12 positions: true, but not decidable there).
    """
    if scheme.behaviour.width:
        return [scheme.behaviour.width]
    if scheme.kind == "rotary":
        return [8, 16]  # even only: RoPE rotates channel pairs
    return [8, 1]


def _scale(*arrays) -> float:
    vals = np.concatenate([np.abs(a[np.isfinite(a)]).ravel() for a in arrays])
    return max(1.0, float(vals.max())) if vals.size else 1.0


def assert_close(actual, expected, what: str, key: str) -> None:
    a, e = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, f"{key}: {what} has shape {a.shape}, the dense computation {e.shape}"
    same_mask = np.array_equal(np.isneginf(a), np.isneginf(e)) and np.array_equal(np.isposinf(a), np.isposinf(e))
    assert same_mask, f"{key}: {what} masks (-inf) other entries than the dense computation"
    ok = np.isfinite(e)
    err = float(np.max(np.abs(a[ok] - e[ok]), initial=0.0))
    assert err <= TOL * _scale(e), f"{key}: {what} differs from the dense computation by {err:.3g}"


def raw_scores(scheme: Scheme, d: int, params: dict) -> np.ndarray:
    """The (N, N) score matrix straight from the defining function (never through the analyses)."""
    b = scheme.behaviour
    pos = np.arange(N, dtype=np.float64)
    if scheme.kind == "additive":
        E = b.encode(pos, d, seq_len=N, **params)  # (N, d)
        return E @ E.T
    if scheme.kind == "rotary":
        q, k = posenc.probe_vector(d, "random", seed=0), posenc.probe_vector(d, "random", seed=1)
        Q, K = b.qk(np.broadcast_to(q, (N, d)), np.broadcast_to(k, (N, d)), pos, seq_len=N, **params)
        return Q @ K.T  # (N, N) q'(i) . k'(j)
    return b.bias(pos, pos, H, **params)  # (H, N, N)


def raw_signature(scheme: Scheme, d: int, params: dict) -> np.ndarray:
    b = scheme.behaviour
    pos = np.arange(N, dtype=np.float64)
    if scheme.kind == "additive":
        return b.encode(pos, d, seq_len=N, **params)
    if scheme.kind == "rotary":  # the probe query, transformed as a query (k given too: k=None must not matter)
        q = np.broadcast_to(posenc.probe_vector(d, "ones"), (N, d))
        return b.qk(q, q, pos, seq_len=N, **params)[0]
    return b.bias(pos, np.zeros(1), H, **params)[:, :, 0].T  # (N, H): query at p, key at 0


def depends_on_offset_only(S: np.ndarray) -> tuple[bool, float]:
    """(verdict, worst relative deviation of any entry from its diagonal's first entry)."""
    worst = 0.0
    scale = _scale(S)
    for k in range(-(N - 1), N):
        diag = np.diagonal(S, k)
        if not (np.all(np.isneginf(diag)) or np.all(np.isfinite(diag))):
            return False, math.inf  # a mask that moves along a diagonal
        fin = diag[np.isfinite(diag)]
        if fin.size:
            worst = max(worst, float(np.max(np.abs(fin - fin[0]))) / scale)
    return worst <= TOL, worst


def is_isometric(sig: np.ndarray) -> tuple[bool, float]:
    """(verdict, worst relative deviation of |sig(p + k) - sig(p)| from |sig(k) - sig(0)|)."""
    D = np.linalg.norm(sig[:, None, :] - sig[None, :, :], axis=2)  # (N, N)
    worst = 0.0
    scale = max(1.0, float(D.max()))
    for k in range(1, N):
        diag = np.diagonal(D, k)
        worst = max(worst, float(np.max(np.abs(diag - diag[0]))) / scale)
    return worst <= TOL, worst


def verdict(declared: bool, measured: tuple[bool, float], what: str, key: str, d: int) -> None:
    ok, worst = measured
    if declared:
        assert ok, f"{key}: declares {what} at d = {d}, but it deviates by {worst:.3g} (relative)"
    else:
        assert worst > CLEAR, f"{key}: declares not {what} at d = {d}, but it holds (deviation {worst:.3g})"


def check_scheme(scheme: Scheme, params: dict | None = None) -> None:
    """Every contract check of one scheme at its defaults (or ``params``); AssertionError names it."""
    key = scheme.key
    p = scheme.validate_params(params)
    for d in widths(scheme):
        S = raw_scores(scheme, d, p)
        assert S.dtype == np.float64, f"{key}: scores are {S.dtype}, not float64"
        assert not np.any(np.isnan(S)) and not np.any(np.isposinf(S)), f"{key}: scores hold NaN or +inf"
        heads = S if S.ndim == 3 else S[None]
        probe = "random" if scheme.kind == "rotary" else "ones"
        for h, Sh in enumerate(heads):
            kw = {"n_heads": H, "head": h}
            offset_only = scheme.offset_only(d, N, **p)
            verdict(offset_only, depends_on_offset_only(Sh), "an offset-only score", key, d)
            got = posenc.position_scores(scheme, N, d=d, probe=probe, **kw, **p)
            assert_close(got, Sh, "position_scores" + (" (offset profile)" if offset_only else ""), key)
            assert_close(posenc.dense_scores(scheme, N, d=d, probe=probe, **kw, **p), Sh, "dense_scores", key)
            if offset_only:
                offsets = np.arange(-(N - 1), N, dtype=np.float64)
                prof = posenc.offset_profile(scheme, offsets, d=d, probe=probe, seq_len=N, **kw, **p)
                i, j = np.indices((N, N))
                assert_close(prof[j - i + N - 1], Sh, "offset_profile", key)
        sig = raw_signature(scheme, d, p)
        got = posenc.signature(scheme, np.arange(N), d, n_heads=H, **p)
        assert_close(got, sig, "signature", key)
        assert np.all(np.isfinite(got)), f"{key}: the signature at positions 0 .. {N - 1} is not finite"
        verdict(scheme.isometric(d, N, **p), is_isometric(sig), "an isometric signature", key, d)
        assert np.array_equal(got, posenc.signature(scheme, np.arange(N), d, n_heads=H, **p)), f"{key}: not deterministic"


# ----------------------------------------------------------------------------- every scheme

@pytest.mark.parametrize("key", KEYS)
def test_behaviour_contract(key):
    check_scheme(SCHEMES[key])


def valid_values(scheme: Scheme, spec) -> list:
    """Values a ParamSpec allows beside the other defaults: the default, both ends of its range
    (inside an open end, and within the bounds other parameters set), and the middle."""
    if spec.type == "bool":
        return [True, False]
    if spec.type == "choice":
        return list(spec.choices)
    lo, hi = scheme.param_range(spec.name, scheme.validate_params())
    mid = (lo + hi) / 2
    return [spec.default, lo, hi, int(round(mid)) if spec.type == "int" else mid]


VALID = [(key, spec, v) for key, s in SCHEMES.items() for spec in s.params for v in valid_values(s, spec)]


@pytest.mark.parametrize(("key", "spec", "value"), VALID, ids=[f"{k}-{s.name}-{v}" for k, s, v in VALID])
def test_declarations_hold_at_every_value_the_specs_generate(key, spec, value):
    """offset_only, isometric and the rest of the contract at each value a ParamSpec generates (the others at their
    defaults): a declaration may depend on the scheme's settings (FIRE is offset-only only up to its threshold),
    and no per-key table in this test says where."""
    check_scheme(SCHEMES[key], {spec.name: value})


@pytest.mark.parametrize(("key", "spec", "value"), VALID, ids=[f"{k}-{s.name}-{v}" for k, s, v in VALID])
def test_valid_parameter_values_are_accepted(key, spec, value):
    scheme = SCHEMES[key]
    d = widths(scheme)[0]
    sig = posenc.signature(key, np.arange(N), d, n_heads=H, **{spec.name: value})
    assert sig.shape[0] == N and np.all(np.isfinite(sig))


def invalid_values(spec) -> list[tuple[object, str]]:
    """Every kind of value a ParamSpec must refuse: (value, why)."""
    out = [(math.nan, "NaN"), (math.inf, "inf"), (object(), "wrong type")]
    if spec.type in ("int", "float"):
        step = spec.step or 1
        out += [(spec.lo if spec.lo_open else spec.lo - step, "below"), (spec.hi + step, "above"),
                ("3", "string"), (-math.inf, "-inf")]
        if spec.type == "int":
            out.append((spec.lo + 0.5, "non-integer"))
    elif spec.type == "bool":
        out += [("yes", "string"), (1, "int is not a bool"), (None, "None")]
    else:
        out += [("not-a-choice!", "unknown choice"), (None, "None"), (0, "int")]
    return out


def dependent_invalid_values(scheme: Scheme, spec) -> list[tuple[object, str]]:
    """Values inside the static range but outside the bounds the other (default) parameters set."""
    if spec.type not in ("int", "float") or not (spec.lo_from or spec.hi_from):
        return []
    lo, hi = scheme.param_range(spec.name, scheme.validate_params())
    step = spec.step or 1
    out = []
    if spec.lo_from and lo - step >= spec.lo:
        out.append((type(spec.default)(lo - step), "below the bound another parameter sets"))
    if spec.hi_from and hi + step <= spec.hi:
        out.append((type(spec.default)(hi + step), "above the bound another parameter sets"))
    assert out, f"{scheme.key}.{spec.name}: a dependent bound that no default makes binding"
    return out


INVALID = [(key, spec, v, why) for key, s in SCHEMES.items() for spec in s.params
           for v, why in invalid_values(spec) + dependent_invalid_values(s, spec)]


def test_parameter_cases_come_from_every_scheme_with_parameters():
    with_params = {k for k, s in SCHEMES.items() if s.params}
    assert {c[0] for c in INVALID} == with_params == {c[0] for c in VALID}
    assert len(INVALID) == sum(len(invalid_values(p)) + len(dependent_invalid_values(s, p))
                               for s in SCHEMES.values() for p in s.params)
    assert any(why.startswith(("below the bound", "above the bound")) for *_, why in INVALID)


@pytest.mark.parametrize(("key", "spec", "value", "why"), INVALID, ids=[f"{c[0]}-{c[1].name}-{c[3]}" for c in INVALID])
def test_invalid_parameter_value_is_refused_naming_scheme_and_argument(key, spec, value, why):
    scheme = SCHEMES[key]
    d = widths(scheme)[0]
    calls = [lambda: posenc.signature(key, np.arange(N), d, **{spec.name: value}),
             lambda: posenc.position_scores(key, N, d=d, **{spec.name: value})]
    for call in calls:
        with pytest.raises(ValueError) as info:
            call()
        assert key in str(info.value) and spec.name in str(info.value), str(info.value)


@pytest.mark.parametrize("key", KEYS)
def test_accepted_keeps_the_settings_a_scheme_takes(key):
    """Scheme.accepted (shared settings given to schemes of which only some take them) keeps exactly the entries
    named by the scheme's parameters, and what it keeps validates."""
    scheme = SCHEMES[key]
    shared = {"bogus_param": 1, **{p.name: p.default for p in scheme.params}}
    kept = scheme.accepted(shared)
    assert list(kept) == [p.name for p in scheme.params] and scheme.validate_params(kept) == kept


BRIEF_VALID = [(key, spec, v) for key, spec, v in VALID if spec.brief]


@pytest.mark.parametrize(("key", "spec", "value"), BRIEF_VALID, ids=[f"{k}-{s.name}-{v}" for k, s, v in BRIEF_VALID])
def test_a_brief_parameter_reads_its_value_in_the_summary_line(key, spec, value):
    """ParamSpec.briefly puts every valid value in a short label that carries the number (a setting whose summary reads
    the same at two values would hide which one a chart was drawn at)."""
    text = spec.briefly(value)
    assert text and "\n" not in text and len(text) <= 24
    assert float(text.split()[-1].replace(",", "")) == pytest.approx(value, rel=1e-5)


def test_brief_covers_the_settings_a_summary_names_and_no_others():
    briefs = {(spec.name, spec.brief) for s in SCHEMES.values() for spec in s.params if spec.brief}
    assert briefs == {("base", "base {:g}"), ("omega", "ω {:g}"), ("factor", "s {:g}"),
                      ("original_max_position_embeddings", "L {:,}"), ("r1", "r₁ {:g}"), ("r2", "r₂ {:g}"),
                      ("c", "c {:g}"), ("threshold", "L {:g}"), ("p", "p {:g}"), ("max_len", "N {:,}")}
    assert all(spec.briefly(spec.default) == "" for s in SCHEMES.values() for spec in s.params if not spec.brief)


@pytest.mark.parametrize("key", KEYS)
def test_unknown_parameter_is_refused_listing_the_valid_ones(key):
    with pytest.raises(ValueError) as info:
        posenc.signature(key, np.arange(N), widths(SCHEMES[key])[0], bogus_param=1)
    msg = str(info.value)
    assert key in msg and "bogus_param" in msg
    assert all(p.name in msg for p in SCHEMES[key].params)


@pytest.mark.parametrize("key", KEYS)
def test_the_defining_function_of_another_kind_is_refused(key):
    scheme = SCHEMES[key]
    d = widths(scheme)[0]
    x = np.ones((N, 8))
    calls = {
        "additive": lambda: scheme.encode(np.arange(N), d),
        "rotary": lambda: scheme.qk(x, x, np.arange(N)),
        "bias": lambda: scheme.bias(np.arange(N), np.arange(N), H),
    }
    for kind, call in calls.items():
        if kind == scheme.kind:
            call()
        else:
            with pytest.raises(ValueError, match=f"{key}.*not {kind}"):
                call()


def test_registry_entries():
    assert {s.kind for s in SCHEMES.values()} == set(kinds.KINDS)
    for key, scheme in SCHEMES.items():
        assert scheme.key == key and posenc.get_scheme(key) is scheme
        assert scheme.enters == kinds.KINDS[scheme.kind].enters
        for spec in scheme.params:
            assert spec.validate(spec.default) == spec.default
    shorts = [s.short_name for s in SCHEMES.values()]
    assert all(shorts) and len(set(shorts)) == len(shorts)  # a legend of any schemes names each once
    from posenc.views.measure import CLASSICS, REFERENCE  # the Context extension page's table says each one's fine-tuning

    assert all(posenc.get_scheme(k).fine_tuning for k, _ in CLASSICS) and REFERENCE.fine_tuning
    with pytest.raises(ValueError) as info:
        posenc.get_scheme("no such scheme")
    assert all(k in str(info.value) for k in KEYS)


def test_an_upload_key_never_names_a_registry_scheme():
    """An uploaded table stands beside the registry keys as registry.upload_key(label); upload_label reads it back and
    is None for every registry key (none holds the prefix), so a page tells the two apart without testing strings."""
    from posenc.registry import upload_key, upload_label

    assert all(upload_label(k) is None for k in SCHEMES)
    for label in ("gpt2.wpe", "a: b", "", "rope"):
        key = upload_key(label)
        assert key not in SCHEMES and upload_label(key) == label
    assert upload_label(None) is None and upload_label(3) is None


# ----------------------------------------------------------------------------- the contract catches mistakes

def broken(key: str, **behaviour_changes) -> Scheme:
    scheme = SCHEMES[key]
    return dataclasses.replace(scheme, behaviour=dataclasses.replace(scheme.behaviour, **behaviour_changes))


def rotate_q_only(q, k, positions, *, seq_len=None, base, layout, **scaling):
    """RoPE's transform with the rotation applied to q only (k passes through)."""
    inv = posenc.default_inv_freq(np.shape(q)[-1], base)
    return apply_rope(q, positions, inv, layout=layout), k


def xpos_same_scale_on_k(q, k, positions, *, seq_len=None, base, layout, gamma, scale_base):
    """xPos with the query's growing scale also on the key (instead of its inverse)."""
    qq, _ = posenc.get_scheme("xpos").behaviour.qk(q, None, positions, base=base, layout=layout, gamma=gamma,
                                                      scale_base=scale_base)
    kk, _ = posenc.get_scheme("xpos").behaviour.qk(k, None, positions, base=base, layout=layout, gamma=gamma,
                                                      scale_base=scale_base)
    return qq, kk


MISTAKES = {  # name: (the scheme it breaks, how)
    "wrong kind": ("sinusoidal", lambda: dataclasses.replace(SCHEMES["sinusoidal"], kind="bias")),
    "missing behaviour": ("alibi", lambda: dataclasses.replace(SCHEMES["alibi"], behaviour=None)),
    "offset-only declared where it fails": ("raw_index", lambda: broken(
        "raw_index", offset_only=kinds.always, dot_profile=lambda offsets, d: np.zeros(np.size(offsets)))),
    "offset-only not declared where it holds": ("sinusoidal", lambda: broken("sinusoidal", offset_only=kinds.never)),
    "isometric declared where it fails (xPos)": ("xpos", lambda: broken("xpos", isometric=kinds.always)),
    "isometric declared where it fails (T5)": ("t5", lambda: broken("t5", isometric=kinds.always)),
    "isometric not declared where it holds": ("rope", lambda: broken("rope", isometric=kinds.never)),
    "q/k transform applied to q only": ("rope", lambda: broken("rope", qk=rotate_q_only)),
    "xPos scale not inverted on k": ("xpos", lambda: broken("xpos", qk=xpos_same_scale_on_k)),
}


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_the_contract_catches_a_deliberate_mistake(mistake):
    key, build = MISTAKES[mistake]
    with pytest.raises((AssertionError, ValueError)) as info:
        check_scheme(build())
    assert key in str(info.value), f"the failure does not name the scheme {key!r}: {info.value}"


@pytest.mark.parametrize("key", KEYS)
def test_score_metric_is_the_metric_position_scores_takes(key):
    """Scheme.score_metric: cosine where the scheme's scores compare vectors (position_scores takes it), dot where
    they are q'·k' or a bias (position_scores refuses cosine); dot is always dot."""
    from posenc.analysis.scores import position_scores

    scheme = SCHEMES[key]
    d = scheme.width(8)
    assert scheme.score_metric("dot") == "dot"
    asked = scheme.score_metric("cosine")
    S = np.asarray(position_scores(key, 6, d=d, metric=asked))
    assert S.shape == (6, 6)
    if asked == "dot":
        with pytest.raises(ValueError, match="cosine"):
            position_scores(key, 6, d=d, metric="cosine")
    else:
        diag = np.diag(S)  # a vector has cosine 1 with itself; a zero vector (raw index 0, sin 0) is scored 0
        assert asked == "cosine" and np.all(np.isclose(diag, 1.0) | np.isclose(diag, 0.0)) and np.isclose(diag, 1.0).any()
    # the unit names what was measured: it follows the metric exactly when the metric reaches the scores
    assert (scheme.unit("cosine") != scheme.unit("dot")) == (asked == "cosine")
    if asked == "cosine":
        assert scheme.unit("cosine") == "cosine similarity"


@pytest.mark.parametrize("key", sorted(SCHEMES))
def test_a_scheme_whose_scores_are_not_centred_keeps_them_on_one_side_of_zero(key):
    """Scheme.centered_scores is False for the bias schemes (a logit bias, a bucket id): their scores never change
    sign, so a sequential colour scale over [min, max] fits them; the others' scale is symmetric about 0."""
    from posenc.analysis.scores import position_scores

    scheme = SCHEMES[key]
    S = np.asarray(position_scores(key, 40, d=scheme.width(16), metric="dot"))
    finite = S[np.isfinite(S)]
    if not scheme.centered_scores:
        assert np.all(finite <= 0) or np.all(finite >= 0)


@pytest.mark.parametrize("key", sorted(SCHEMES))
def test_scores_use_width_as_declared(key):
    """Scheme.scores_use_width: where it is False the scores are the same at two widths (a legend then leaves d out);
    where it is True they differ between widths 8 and 16 (a bundled table, fixed at its own width, is not asked)."""
    from posenc.analysis.scores import position_scores

    scheme = SCHEMES[key]
    a, b = (np.asarray(position_scores(key, 24, d=scheme.width(d), metric="dot")) for d in (8, 16))
    same = a.shape == b.shape and np.allclose(a, b, equal_nan=True)
    if not scheme.scores_use_width:
        assert same
    elif scheme.width(8) != scheme.width(16):  # a bundled table runs at its own width whatever is asked
        assert not same


@pytest.mark.parametrize("key", sorted(SCHEMES))
def test_layer_inputs_are_what_the_scheme_defines(key):
    """Scheme.layer_inputs hands an attention layer exactly the scheme's own defining output at those positions: the
    added vectors (encode), the query/key map (qk), or head 0 of the logit bias."""
    scheme = SCHEMES[key]
    d, pos = scheme.width(8), np.arange(6, dtype=np.float64)
    got = scheme.layer_inputs(pos, d, seq_len=6)
    assert len(got) == 1
    if "pe" in got:
        np.testing.assert_array_equal(got["pe"], scheme.encode(pos, d, seq_len=6))
    elif "qk" in got:
        Q, K = np.random.default_rng(0).standard_normal((2, 6, d))
        for a, b in zip(got["qk"](Q, K), scheme.qk(Q, K, pos, seq_len=6)):
            np.testing.assert_array_equal(a, b)
    else:
        bias = got["bias"]
        assert bias.shape == (6, 6)
        want = scheme.behaviour.logits(pos, pos, 8, **scheme.validate_params({}))[0]
        np.testing.assert_array_equal(bias, want)
        if scheme.behaviour.attention_bias is None:  # where the layer adds the declared bias itself
            np.testing.assert_array_equal(bias, scheme.bias(pos, pos, 8)[0])


def _same_rows(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        (isinstance(a[k], float) and isinstance(b[k], float) and np.isnan(a[k]) and np.isnan(b[k])) or a[k] == b[k] for k in a)


@pytest.mark.parametrize("key", sorted(SCHEMES))
def test_rotates_as_declared(key):
    """Scheme.rotates (views.compare.common_params gives such a scheme the settings shared by the RoPE variants): where
    True, an attention layer gets a query/key map, which at position 0 only scales both by the attention factor, and
    the scheme has d/2 rotation frequencies; where False, no query/key map.  Scheme.scaling_block answers only for a rotary scheme."""
    scheme = SCHEMES[key]
    d = scheme.width(8)
    assert ("qk" in scheme.layer_inputs(np.arange(4.0), d, seq_len=4)) == scheme.rotates
    if not scheme.rotates:
        with pytest.raises(ValueError, match="not a Hugging Face rope_type"):
            scheme.scaling_block()
        return
    inv_freq, factor = scheme.frequencies(d)
    assert np.asarray(inv_freq).shape == (d // 2,)
    Q, K = np.random.default_rng(0).standard_normal((2, 4, d))
    q, k = scheme.qk(Q, K, np.arange(4.0), seq_len=4)  # a query and a key at one position: a relative turn of 0
    # only the attention factor (YaRN, LongRoPE) scales their product, wherever the position sits (randomized
    # positions put token 0 at a sampled position, xPos scales q and k by inverse factors)
    np.testing.assert_allclose(np.sum(q * k, axis=1), factor**2 * np.sum(Q * K, axis=1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("key", sorted(SCHEMES))
def test_mask_only_as_declared(key):
    """Scheme.mask_only (the Attention-order page calls such a scheme the control): where True, the layer gets a bias
    that is 0 on and below the diagonal and -inf above it, in every head, and nothing else; where False, the
    scheme gives a layer some position signal: a non-zero added vector, a query/key map, or a non-zero bias."""
    scheme = SCHEMES[key]
    d, n = scheme.width(8), 6
    pos = np.arange(float(n))
    inputs = scheme.layer_inputs(pos, d, seq_len=n)
    if scheme.mask_only:
        assert set(inputs) == {"bias"}
        B = scheme.bias(pos, pos, 4)  # (4, n, n)
        below = np.tril(np.ones((n, n), dtype=bool))
        assert np.all(B[:, below] == 0.0) and np.all(np.isneginf(B[:, ~below]))
        return
    signal = [np.any(np.isfinite(v) & (v != 0)) for k, v in inputs.items() if k in ("pe", "bias")]
    assert "qk" in inputs or any(signal)


@pytest.mark.parametrize("key", sorted(SCHEMES))
def test_uses_heads_as_declared(key):
    """Scheme.uses_heads: where it is False the signature and the dense scores are the same with 1 head and with 4, and
    so is every column of the comparison table (measure_scheme remembers such a row once for every head count); where
    it is True the signature has one column per head."""
    from posenc.analysis.compare import _measure

    scheme = SCHEMES[key]
    d, pos = scheme.width(8), np.arange(12, dtype=np.float64)
    sig = [scheme.signature(pos, d, n_heads=h) for h in (1, 4)]
    if scheme.uses_heads:
        assert sig[0].shape[1] == 1 and sig[1].shape[1] == 4
        return
    np.testing.assert_array_equal(*sig)
    np.testing.assert_array_equal(scheme.dense_scores(12, d, n_heads=1), scheme.dense_scores(12, d, n_heads=4))
    rows = [_measure(key, n=24, d=8, n_heads=h, train_len=16, params=None) for h in (1, 4)]
    assert _same_rows(*rows)


@pytest.mark.parametrize("key", sorted(SCHEMES))
def test_a_row_remembered_at_another_width_is_the_row_at_this_one(key):
    """measure_scheme remembers the row of a scheme whose measurements do not change with d (a bias on the logit, a
    bundled table) at one width: measured afresh at two widths those rows are the same but for the d they say."""
    from posenc.analysis.compare import _measure, _measured_args, measure_scheme

    scheme = SCHEMES[key]
    if _measured_args(scheme, 8, 2) == _measured_args(scheme, 16, 2):
        fresh = [_measure(key, n=24, d=d, n_heads=2, train_len=16, params=None) for d in (8, 16)]
        for r in fresh:
            r.pop("d", None)
        assert _same_rows(*fresh)
    for d in (8, 16):  # the shared row, as measure_scheme hands it out, is the fresh one
        got = measure_scheme(key, n=24, d=d, n_heads=2, train_len=16)
        assert _same_rows(got, _measure(key, n=24, d=d, n_heads=2, train_len=16, params=None))


@pytest.mark.parametrize("key", sorted(SCHEMES))
def test_spectrum_is_the_schemes_own_frequencies(key):
    """Scheme.spectrum, answered by each kind: a rotary scheme's inv_freq and attention factor, scaled against plain
    RoPE at its base; a sinusoid's frequencies with factor 1 and scale 1; no spectrum (ValueError) for the rest."""
    from posenc.schemes.scaling import default_inv_freq

    scheme = SCHEMES[key]
    d = scheme.width(16)
    try:
        freqs = scheme.frequencies(d)
    except ValueError:
        with pytest.raises(ValueError, match="has no frequencies"):
            scheme.spectrum(d)
        return
    omega, af, scale = scheme.spectrum(d)
    if scheme.kind == "rotary":
        np.testing.assert_array_equal(omega, freqs[0])
        assert af == freqs[1]
        base = scheme.validate_params({}).get("base")
        np.testing.assert_array_equal(scale, omega / default_inv_freq(d, base) if base is not None else np.ones_like(omega))
    else:
        np.testing.assert_array_equal(omega, freqs)
        assert af == 1.0 and np.all(scale == 1.0)


def test_every_scheme_has_its_colour_in_the_one_table():
    """Colours come from one table for every chart (charts.base.SCHEME_COLORS, read from each entry's Scheme.color):
    every registry scheme has a hex colour there, and the RoPE methods drawn side by side never share one."""
    import re

    from posenc.charts.base import METHOD_KEY_COLORS, SCHEME_COLORS

    assert set(SCHEME_COLORS) == set(SCHEMES)
    assert all(re.fullmatch(r"#[0-9A-Fa-f]{6}", c) for c in SCHEME_COLORS.values()), SCHEME_COLORS
    assert len(set(METHOD_KEY_COLORS.values())) == len(METHOD_KEY_COLORS)
    # the schemes a lab run or a comparison draws side by side (all but the context extensions, drawn among themselves)
    side = {k: c for k, c in SCHEME_COLORS.items() if SCHEMES[k].page != "pages/context_extension.py"}
    assert len(set(side.values())) == len(side), side


TRAINABLE = [k for k, s in SCHEMES.items() if getattr(s.behaviour, "trainable", None) is not None]


@pytest.mark.parametrize("key", TRAINABLE)
def test_a_trainable_bias_gradient_is_the_finite_difference(key):
    """TrainableBias.backward is d(sum(G * forward))/d(weight) for a random G, checked by central differences on every
    weight entry; the mask's -inf entries carry no gradient; init draws the shapes it declares."""
    scheme = SCHEMES[key]
    lab = {"bidirectional": False} if "bidirectional" in scheme.accepted({"bidirectional": 0}) else {}
    p = scheme.validate_params(lab)
    tb = scheme.behaviour.trainable
    w = tb.init(np.random.default_rng(1), 3, **p)
    w = {k: np.asarray(v, dtype=np.float64) + 0.3 * np.random.default_rng(2).standard_normal(np.shape(v)) for k, v in w.items()}
    if tb.project is not None:
        w = tb.project(w, **p)
    pos = np.arange(7.0)
    G = np.random.default_rng(3).standard_normal((3, 7, 7))
    grads = tb.backward(w, pos, pos, G, **p)
    assert set(grads) == set(w) and {k: np.shape(v) for k, v in grads.items()} == {k: np.shape(v) for k, v in w.items()}
    assert tb.shapes(3, **p) == {k: np.shape(v) for k, v in tb.init(np.random.default_rng(0), 3, **p).items()}
    eps = 1e-6
    for name, value in w.items():
        flat = np.asarray(value, dtype=np.float64).reshape(-1)
        for i in range(flat.size):
            up, down = flat.copy(), flat.copy()
            up[i] += eps
            down[i] -= eps
            f = [np.sum(G * tb.forward({**w, name: v.reshape(np.shape(value))}, pos, pos, **p)) for v in (up, down)]
            assert (f[0] - f[1]) / (2 * eps) == pytest.approx(np.reshape(grads[name], -1)[i], rel=1e-5, abs=1e-7), (key, name, i)


BIAS_HEADS = sorted(k for k, s in SCHEMES.items() if getattr(s.behaviour, "head_bias", None) is not None)


@pytest.mark.parametrize("key", BIAS_HEADS)
def test_a_declared_head_bias_is_that_head_of_the_bias(key):
    """Bias.head_bias computes one head alone (the dense score matrices use it: T5 at n = 1,024 no longer builds eight
    copies of its bucket ids); it must equal that head of the full bias, -inf cells included, for any head count and
    at every parameter value the specs generate."""
    scheme = SCHEMES[key]
    qpos, kpos = np.arange(0, 40, 3, dtype=np.float64), np.arange(37, dtype=np.float64)
    for p in (scheme.validate_params(), *({**scheme.validate_params(), spec.name: v} for spec in scheme.params
                                          for v in valid_values(scheme, spec))):
        for H in (1, 3, 8):
            full = scheme.behaviour.bias(qpos, kpos, H, **p)  # (H, n_q, n_k)
            for h in range(H):
                one = scheme.behaviour.head_bias(qpos, kpos, H, h, **p)
                # equal up to the rounding of a matrix product over fewer columns (FIRE's MLP: 4e-17); -inf where it is
                np.testing.assert_allclose(one, full[h], rtol=1e-12, atol=1e-15, err_msg=f"{key} {p} H={H} h={h}")
                assert np.array_equal(np.isneginf(one), np.isneginf(full[h])), f"{key} {p} H={H} h={h}: the mask differs"


def test_the_bias_schemes_the_comparison_table_measures_compute_one_head_alone():
    assert {"t5", "alibi", "nope", "kerple", "fire"} <= set(BIAS_HEADS)
