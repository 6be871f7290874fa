"""The scheme registry: one frozen metadata record per positional-encoding scheme.

``SCHEMES`` is written out by hand (no decorator magic), in story order.  Pages build their
controls from ``Scheme.params`` and show ``Scheme.formula``; analyses dispatch on ``Scheme.kind``:

- "additive": a vector added to the token embedding, evaluated as (n, d_model);
- "rotary":   a rotation of queries and keys, evaluated as (inv_freq, attention_factor);
- "bias":     a term added to the attention logits, evaluated as (H, n, n).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

from posenc._validate import check_bool, check_choice, check_float, check_int

Kind = Literal["additive", "rotary", "bias"]
KINDS: tuple[str, ...] = ("additive", "rotary", "bias")
ENTERS = ("input embedding", "queries and keys", "attention logits")


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
    """Metadata of one scheme; ``params`` drive both validation and the dashboard's controls."""

    key: str
    name: str
    kind: Kind
    learned: bool
    enters: str
    paper: str
    year: int | None
    models: tuple[str, ...]
    formula: str  # one LaTeX line, shown on the pages
    summary: str
    params: tuple[ParamSpec, ...] = field(default_factory=tuple)

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def validate_params(self, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Fill defaults and validate; unknown names raise ValueError listing the valid ones."""
        params = dict(params or {})
        known = {p.name: p for p in self.params}
        unknown = sorted(set(params) - set(known))
        if unknown:
            valid = ", ".join(known) or "(none)"
            raise ValueError(f"unknown parameter(s) {unknown} for scheme {self.key!r}; valid: {valid}")
        return {name: spec.validate(params.get(name, spec.default)) for name, spec in known.items()}


# ----------------------------------------------------------------------------- shared controls
# Dimensions and lengths are chosen per page, not per scheme; their ranges live here once.
D_MODEL = ParamSpec("d_model", "d_model", 64, "int", 1, 1024, 1, help="width of the encoding vector")
HEAD_DIM = ParamSpec("head_dim", "head_dim", 64, "int", 2, 512, 2, help="RoPE head dimension (even)")
LENGTH = ParamSpec("n", "sequence length", 128, "int", 1, 4096, 1, help="number of positions")
N_HEADS = ParamSpec("n_heads", "heads", 8, "int", 1, 128, 1, help="attention heads")

_BASE = ParamSpec("base", "base", 10000.0, "float", 1.0, 1e9, 1.0, lo_open=True, help="the wavelength base (10000 in the paper)")
_OMEGA = ParamSpec("omega", "frequency ω", 1.0, "float", 0.0, 100.0, 0.01, lo_open=True, help="radians per position")
_ROPE_LAYOUT = ParamSpec("layout", "pairing", "half_split", "choice", choices=("half_split", "interleaved"), help="which channels form a rotation pair")
_FACTOR = ParamSpec("factor", "scale factor s", 4.0, "float", 1.0, 128.0, 0.5, help="target length / trained length")
_ORIG = ParamSpec("original_max_position_embeddings", "trained length", 2048, "int", 16, 1_048_576, 16, help="the context the model was trained on")


SCHEMES: dict[str, Scheme] = {
    "raw_index": Scheme(
        key="raw_index", name="Raw index", kind="additive", learned=False, enters="input embedding",
        paper="naive attempt 1 (the story)", year=None, models=(),
        formula=r"e'_t = e_t + t\,\mathbf{1}",
        summary="Add the position itself: unique but unbounded (10^6 at position 10^6).",
    ),
    "index_over_length": Scheme(
        key="index_over_length", name="Index / length", kind="additive", learned=False, enters="input embedding",
        paper="naive attempt 2 (the story)", year=None, models=(),
        formula=r"e'_t = e_t + \frac{t}{L}\,\mathbf{1}\quad(t = 1 \ldots L)",
        summary="Normalise by the prompt length: bounded, but the same position changes with L.",
        params=(ParamSpec("length", "prompt length L", 4, "int", 1, 100_000, 1, help="tokens in the prompt"),),
    ),
    "single_sine": Scheme(
        key="single_sine", name="Single sine", kind="additive", learned=False, enters="input embedding",
        paper="naive attempt 3 (the story)", year=None, models=(),
        formula=r"e'_t = e_t + \sin(\omega t)\,\mathbf{1}",
        summary="Bounded and smooth, but periodic: sin(t) = sin(t + 2πk) collides.",
        params=(_OMEGA,),
    ),
    "sincos_pair": Scheme(
        key="sincos_pair", name="One sin+cos pair", kind="additive", learned=False, enters="input embedding",
        paper="naive attempt 4 (the story)", year=None, models=(),
        formula=r"e'_t = e_t + [\sin(\omega t), \cos(\omega t), \ldots]",
        summary="A point on the unit circle: unique within one turn, colliding across turns.",
        params=(_OMEGA,),
    ),
    "sinusoidal": Scheme(
        key="sinusoidal", name="Sinusoidal", kind="additive", learned=False, enters="input embedding",
        paper="Vaswani et al., Attention Is All You Need (arXiv:1706.03762)", year=2017,
        models=("Transformer (base/big)", "fairseq transformer", "Marian", "Whisper (encoder)"),
        formula=r"PE_{(p,2i)} = \sin\!\big(p / b^{2i/d}\big),\; PE_{(p,2i+1)} = \cos\!\big(p / b^{2i/d}\big)",
        summary="Many frequencies in geometric progression: bounded, unique, and relative by rotation.",
        params=(_BASE, ParamSpec("layout", "layout", "interleaved", "choice", choices=("interleaved", "concatenated"), help="sin/cos interleaved (paper) or [sin | cos]")),
    ),
    "learned_minilm": Scheme(
        key="learned_minilm", name="Learned (MiniLM, trained)", kind="additive", learned=True, enters="input embedding",
        paper="Devlin et al., BERT (arXiv:1810.04805); table from all-MiniLM-L6-v2", year=2018,
        models=("BERT", "RoBERTa", "GPT-2", "OPT", "all-MiniLM-L6-v2"),
        formula=r"e'_t = e_t + P[t],\quad P \in \mathbb{R}^{512 \times 384}",
        summary="A trained lookup table: whatever the data taught it, and nothing past row 511.",
    ),
    "learned_random": Scheme(
        key="learned_random", name="Learned (untrained, random)", kind="additive", learned=True, enters="input embedding",
        paper="init as in GPT-2 / BERT: normal(0, 0.02)", year=None,
        models=("any learned table before training",),
        formula=r"P[t] \sim \mathcal{N}(0,\, 0.02^2\, I)",
        summary="The same lookup before training: noise, with no notion of distance.",
        params=(ParamSpec("seed", "seed", 0, "int", 0, 10_000, 1, help="random seed of the table"),),
    ),
    "t5": Scheme(
        key="t5", name="T5 relative buckets", kind="bias", learned=True, enters="attention logits",
        paper="Raffel et al., T5 (arXiv:1910.10683)", year=2019, models=("T5", "mT5", "Flan-T5", "LongT5"),
        formula=r"A_{ij} = q_i^\top k_j + W_h[\mathrm{bucket}(j - i)]",
        summary="A learned scalar per head for each distance bucket: exact up close, log-spaced far away.",
        params=(
            ParamSpec("bidirectional", "bidirectional", True, "bool", help="encoder (both sides) or decoder (past only)"),
            ParamSpec("num_buckets", "buckets", 32, "int", 4, 256, 1),
            ParamSpec("max_distance", "max distance", 128, "int", 4, 100_000, 1),
        ),
    ),
    "alibi": Scheme(
        key="alibi", name="ALiBi", kind="bias", learned=False, enters="attention logits",
        paper="Press, Smith, Lewis, Train Short, Test Long (arXiv:2108.12409)", year=2021,
        models=("BLOOM", "MPT", "Baichuan-13B", "Falcon (some)"),
        formula=r"A_{ij} = q_i^\top k_j - m_h\,(i - j),\quad m_h = 2^{-8h/H}",
        summary="A fixed linear penalty on distance, one slope per head; no position vectors at all.",
        params=(ParamSpec("causal", "causal", True, "bool", help="causal (paper) or symmetric |i - j|"),),
    ),
    "rope": Scheme(
        key="rope", name="RoPE", kind="rotary", learned=False, enters="queries and keys",
        paper="Su et al., RoFormer (arXiv:2104.09864)", year=2021,
        models=("Llama 1-3", "Mistral", "Qwen", "GPT-NeoX", "GPT-J", "PaLM", "Gemma"),
        formula=r"f(x, p) = R_{\Theta, p}\, x,\quad \theta_k = b^{-2k/d}",
        summary="Rotate each query/key pair by p·θ_k: the score depends only on the offset.",
        params=(_BASE, _ROPE_LAYOUT),
    ),
    "rope_linear": Scheme(
        key="rope_linear", name="RoPE + position interpolation", kind="rotary", learned=False, enters="queries and keys",
        paper="Chen et al., Position Interpolation (arXiv:2306.15595)", year=2023,
        models=("LongChat", "Vicuna-16k", "CodeLlama (with base change)"),
        formula=r"\theta'_k = \theta_k / s",
        summary="Squeeze positions by s: every frequency divided by the factor.",
        params=(_BASE, _ROPE_LAYOUT, _FACTOR, _ORIG),
    ),
    "rope_ntk": Scheme(
        key="rope_ntk", name="RoPE + NTK-aware", kind="rotary", learned=False, enters="queries and keys",
        paper="bloc97, NTK-aware scaled RoPE (r/LocalLLaMA)", year=2023, models=("Code Llama (base 1e6)", "many community fine-tunes"),
        formula=r"b' = b \cdot s^{d/(d-2)}",
        summary="Raise the base: high frequencies untouched, the lowest divided by exactly s.",
        params=(_BASE, _ROPE_LAYOUT, _FACTOR, _ORIG),
    ),
    "rope_dynamic": Scheme(
        key="rope_dynamic", name="RoPE + dynamic NTK", kind="rotary", learned=False, enters="queries and keys",
        paper="emozilla, Dynamically Scaled RoPE (r/LocalLLaMA)", year=2023, models=("Qwen-7B (logn + dynamic)", "HF rope_type='dynamic'"),
        formula=r"b' = b\,\big(s L / L_0 - (s - 1)\big)^{d/(d-2)},\ L > L_0",
        summary="NTK base change that grows with the current length; identical to RoPE up to L_0.",
        params=(_BASE, _ROPE_LAYOUT, _FACTOR, _ORIG),
    ),
    "rope_yarn": Scheme(
        key="rope_yarn", name="RoPE + YaRN", kind="rotary", learned=False, enters="queries and keys",
        paper="Peng et al., YaRN (arXiv:2309.00071)", year=2023, models=("Qwen2.5 (long)", "DeepSeek-V2/V3", "Mistral YaRN", "gpt-oss"),
        formula=r"\theta'_k = (1 - \gamma_k)\,\theta_k / s + \gamma_k\,\theta_k,\ \ \sqrt{t} = 0.1\ln s + 1",
        summary="Keep fast pairs, interpolate slow ones, ramp in between, and sharpen attention.",
        params=(
            _BASE, _ROPE_LAYOUT, _FACTOR, _ORIG,
            ParamSpec("beta_fast", "β fast", 32.0, "float", 0.0, 1024.0, 1.0, lo_open=True),
            ParamSpec("beta_slow", "β slow", 1.0, "float", 0.0, 1024.0, 0.5, lo_open=True),
        ),
    ),
    "rope_llama3": Scheme(
        key="rope_llama3", name="RoPE + Llama 3 scaling", kind="rotary", learned=False, enters="queries and keys",
        paper="Meta, The Llama 3 Herd of Models (arXiv:2407.21783)", year=2024, models=("Llama 3.1", "Llama 3.2", "Llama 3.3"),
        formula=r"\theta'_k = \theta_k \text{ (fast)},\ \theta_k/s \text{ (slow)},\ \text{smooth blend between}",
        summary="Three bands by wavelength: keep, blend, divide by s.",
        params=(
            ParamSpec("base", "base", 500000.0, "float", 1.0, 1e9, 1.0, lo_open=True),
            _ROPE_LAYOUT,
            ParamSpec("factor", "scale factor s", 8.0, "float", 1.0, 128.0, 0.5),
            ParamSpec("original_max_position_embeddings", "trained length", 8192, "int", 16, 1_048_576, 16),
            ParamSpec("low_freq_factor", "low-frequency factor", 1.0, "float", 0.0, 64.0, 0.5, lo_open=True),
            ParamSpec("high_freq_factor", "high-frequency factor", 4.0, "float", 0.0, 64.0, 0.5, lo_open=True),
        ),
    ),
    "nope": Scheme(
        key="nope", name="NoPE (causal mask only)", kind="bias", learned=False, enters="attention logits",
        paper="Haviv et al. (arXiv:2203.16634); Kazemnejad et al. (arXiv:2305.19466)", year=2022,
        models=("control: decoder-only models trained without PE",),
        formula=r"A_{ij} = q_i^\top k_j + \begin{cases}0 & j \le i\\ -\infty & j > i\end{cases}",
        summary="No positional signal: order comes only from what the causal mask hides.",
    ),
}
# keep in sync: posenc.schemes dispatches on these keys, posenc/ui/pages.py links each to a page.

ROPE_TYPE_OF_SCHEME = {
    "rope": "default",
    "rope_linear": "linear",
    "rope_ntk": "ntk",
    "rope_dynamic": "dynamic",
    "rope_yarn": "yarn",
    "rope_llama3": "llama3",
}


def get_scheme(key: str) -> Scheme:
    """The registered scheme ``key``; an unknown key raises ValueError listing the valid ones."""
    if not isinstance(key, str) or key not in SCHEMES:
        raise ValueError(f"unknown scheme {key!r}; valid keys: {', '.join(SCHEMES)}")
    return SCHEMES[key]


def schemes_of_kind(kind: str) -> tuple[str, ...]:
    """Keys of every scheme of one kind, in registry order."""
    check_choice("kind", kind, KINDS)
    return tuple(k for k, s in SCHEMES.items() if s.kind == kind)
