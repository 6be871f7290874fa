"""Contract of the whole registry: every scheme, through its per-kind evaluator and signature().

For every key in posenc.SCHEMES: float64, finite (except the documented -inf masks of causal
biases), deterministic, n = 1 works, the documented shapes, and every out-of-range parameter of
the scheme's ParamSpec raises ValueError naming the parameter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc
from posenc.registry import KINDS, ROPE_TYPE_OF_SCHEME

KEYS = list(posenc.SCHEMES)
N = 6
D = 16  # even, so rotary schemes (NTK/dynamic need head_dim >= 4) accept it
H = 4


def width(key: str) -> int:
    """The encoding width a scheme is evaluated at (the MiniLM table fixes 384)."""
    return posenc.learned.MINILM_D_MODEL if key == "learned_minilm" else D


def evaluate(key: str, n: int, **params):
    """The per-kind evaluator of ``key`` at positions 0..n-1: one ndarray (rotary: apply_rope)."""
    scheme = posenc.get_scheme(key)
    pos = np.arange(n, dtype=np.float64)
    if scheme.kind == "additive":
        return posenc.encode(key, pos, width(key), **params)
    if scheme.kind == "rotary":
        inv, af = posenc.rope_for(key, D, **params)
        layout = scheme.validate_params(params)["layout"]
        x = np.random.default_rng(1).standard_normal((2, n, D))
        return posenc.apply_rope(x, pos, inv, layout=layout, attention_factor=af)
    return posenc.bias(key, n, H, **params)


def expected_shape(key: str, n: int) -> tuple[int, ...]:
    kind = posenc.get_scheme(key).kind
    return {"additive": (n, width(key)), "rotary": (2, n, D), "bias": (H, n, n)}[kind]


def signature_width(key: str) -> int:
    kind = posenc.get_scheme(key).kind
    if kind == "bias":
        return 8 if key == "alibi" else 1  # alibi: one column per head (n_heads=8); T5 bucket id; NoPE 0
    return width(key)


# ----------------------------------------------------------------------------- registry itself

def test_registry_covers_every_kind_and_rope_type():
    kinds = {s.kind for s in posenc.SCHEMES.values()}
    assert kinds == set(KINDS)
    rotary = [k for k, s in posenc.SCHEMES.items() if s.kind == "rotary"]
    assert sorted(rotary) == sorted(ROPE_TYPE_OF_SCHEME)
    assert len(KEYS) == 16
    for key, scheme in posenc.SCHEMES.items():
        assert scheme.key == key
        assert posenc.get_scheme(key) is scheme
        assert scheme.enters == {"additive": "input embedding", "rotary": "queries and keys", "bias": "attention logits"}[scheme.kind]
        names = [p.name for p in scheme.params]
        assert len(names) == len(set(names))
        for spec in scheme.params:  # every default is itself valid
            assert spec.validate(spec.default) == spec.default


def test_get_scheme_unknown_lists_every_valid_key():
    with pytest.raises(ValueError) as info:
        posenc.get_scheme("nope!")
    msg = str(info.value)
    assert "'nope!'" in msg
    for key in KEYS:
        assert key in msg
    for bad in (None, 3, ["rope"]):
        with pytest.raises(ValueError, match="valid keys"):
            posenc.get_scheme(bad)


# ----------------------------------------------------------------------------- outputs

@pytest.mark.parametrize("key", KEYS)
def test_evaluator_shape_dtype_finite_deterministic(key):
    out = evaluate(key, N)
    assert out.shape == expected_shape(key, N)
    assert out.dtype == np.float64
    again = evaluate(key, N)
    assert np.array_equal(out, again)  # deterministic (NaN-free, so array_equal is exact)
    if key in ("alibi", "nope"):  # causal by default: -inf exactly above the diagonal, finite elsewhere
        upper = np.triu(np.ones((N, N), dtype=bool), k=1)
        assert np.all(np.isneginf(out[:, upper]))
        assert np.all(np.isfinite(out[:, ~upper]))
        assert np.all(out[:, ~upper] <= 0.0)
    else:
        assert np.all(np.isfinite(out))
    # something non-trivial came out (NoPE's finite part is all zeros by definition)
    if key != "nope":
        assert np.max(np.abs(out[np.isfinite(out)])) > 0


@pytest.mark.parametrize("key", KEYS)
def test_evaluator_n_equals_one(key):
    out = evaluate(key, 1)
    assert out.shape == expected_shape(key, 1)
    assert out.dtype == np.float64
    assert np.all(np.isfinite(out))  # a single position has no future to mask
    # and it is the first row of the longer evaluation (nothing depends on n except index/length)
    if posenc.get_scheme(key).kind == "additive" and key != "index_over_length":
        assert np.array_equal(out[0], evaluate(key, N)[0])


@pytest.mark.parametrize("key", [k for k in KEYS if posenc.get_scheme(k).kind == "rotary"])
def test_rope_for_returns_inv_freq_and_float(key):
    inv, af = posenc.rope_for(key, D)
    assert isinstance(inv, np.ndarray) and inv.shape == (D // 2,) and inv.dtype == np.float64
    assert isinstance(af, float) and math.isfinite(af) and af > 0
    assert np.all(np.isfinite(inv)) and np.all(inv > 0)
    # theta_0 = base^0 = 1: kept by NTK/dynamic (base change), YaRN (ramp 0) and Llama 3 (fast
    # band); only position interpolation divides it, by the default factor 4
    assert inv[0] == (0.25 if key == "rope_linear" else 1.0)
    inv2, af2 = posenc.rope_for(key, D)
    assert np.array_equal(inv, inv2) and af == af2


@pytest.mark.parametrize("key", KEYS)
def test_signature_shape_dtype_finite(key):
    sig = posenc.signature(key, np.arange(N), width(key))
    assert sig.shape == (N, signature_width(key))
    assert sig.dtype == np.float64
    assert np.all(np.isfinite(sig))  # positions >= 0: the key at 0 is never in the future
    assert np.array_equal(sig, posenc.signature(key, np.arange(N), width(key)))
    one = posenc.signature(key, [0], width(key))
    assert one.shape == (1, signature_width(key))
    if key == "nope":
        assert np.all(sig == 0.0)


# ----------------------------------------------------------------------------- parameter validation

def bad_values(spec):
    """Every out-of-range value of one ParamSpec: (value, why)."""
    out = [(math.nan, "NaN"), (math.inf, "inf"), (object(), "wrong type")]
    if spec.type in ("int", "float"):
        step = spec.step or 1
        lo_bad = spec.lo if spec.lo_open else spec.lo - step
        out += [(lo_bad, "lo - step"), (spec.hi + step, "hi + step"), ("3", "string"), (-math.inf, "-inf")]
        if spec.type == "int":
            out.append((spec.lo + 0.5, "non-integer"))
    elif spec.type == "bool":
        out += [("yes", "string"), (1, "int is not a bool"), (None, "None")]
    else:
        out += [("not-a-choice!", "unknown choice"), (None, "None"), (0, "int")]
    return out


CASES = [(key, spec, value, why) for key, s in posenc.SCHEMES.items() for spec in s.params for value, why in bad_values(spec)]


def test_every_scheme_with_params_is_covered():
    with_params = {k for k, s in posenc.SCHEMES.items() if s.params}
    assert {c[0] for c in CASES} == with_params
    assert len(CASES) > 100


@pytest.mark.parametrize(("key", "spec", "value", "why"), CASES, ids=[f"{c[0]}-{c[1].name}-{c[3]}" for c in CASES])
def test_out_of_range_param_raises_naming_it(key, spec, value, why):
    with pytest.raises(ValueError) as info:
        evaluate(key, N, **{spec.name: value})
    assert spec.name in str(info.value)
    with pytest.raises(ValueError) as info:
        posenc.signature(key, np.arange(N), width(key), **{spec.name: value})
    assert spec.name in str(info.value)


@pytest.mark.parametrize("key", KEYS)
def test_unknown_param_name_raises_naming_it(key):
    with pytest.raises(ValueError) as info:
        evaluate(key, N, bogus_param=1)
    assert "bogus_param" in str(info.value)
    for p in posenc.get_scheme(key).params:
        assert p.name in str(info.value)  # and lists the valid ones
    # signature() too -- NoPE has no parameters but must not swallow unknown ones
    with pytest.raises(ValueError, match="bogus_param"):
        posenc.signature(key, np.arange(N), width(key), bogus_param=1)


@pytest.mark.parametrize("key", KEYS)
def test_wrong_kind_evaluator_raises_value_error(key):
    kind = posenc.get_scheme(key).kind
    calls = {
        "additive": lambda: posenc.encode(key, [0, 1], width(key)),
        "rotary": lambda: posenc.rope_for(key, D),
        "bias": lambda: posenc.bias(key, 3, H),
    }
    for other, call in calls.items():
        if other == kind:
            call()
            continue
        with pytest.raises(ValueError, match=f"not {other}"):
            call()  # e.g. rope_for("raw_index") once raised KeyError('base')
