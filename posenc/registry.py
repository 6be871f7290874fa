"""The scheme registry: the one place where a scheme's key maps to its metadata and its behaviour.

``SCHEMES`` is written out by hand, in the order the dashboard tells the story.  Each entry is a
frozen ``Scheme``: who proposed it, who uses it, the formula the pages show, its tunable parameters
(``ParamSpec``: default, range, widget step) and its behaviour -- an ``Additive``, ``Rotary`` or
``Bias`` object from its family module under ``posenc.schemes`` (see ``posenc.schemes.kinds`` for
what each kind answers).  Analyses ask the scheme (``scheme.signature``, ``scheme.offset_only(d)``,
...) and never test a key.  A scheme whose kind and behaviour disagree, or whose behaviour is
incomplete, raises when this module is imported.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from posenc._validate import check_int
from posenc.schemes import fire, learned, naive, relative, rotary, sinusoidal, xpos
from posenc.schemes.scheme import ParamSpec, Scheme

# ----------------------------------------------------------------------------- shared parameters
N_HEADS_DEFAULT = 8
_BASE = ParamSpec("base", "base", 10000.0, "float", 1.0, 1e9, 1.0, lo_open=True, help="the wavelength base (10000 in the paper)",
                  brief="base {:g}")
_OMEGA = ParamSpec("omega", "frequency ω", 1.0, "float", 0.0, 100.0, 0.01, lo_open=True, help="radians per position", brief="ω {:g}")
_ROPE_LAYOUT = ParamSpec("layout", "pairing", "half_split", "choice", choices=rotary.LAYOUTS, help="which channels form a rotation pair")
_FACTOR = ParamSpec("factor", "scale factor s", 4.0, "float", 1.0, 128.0, 0.5, help="target length / trained length", brief="s {:g}")
_ORIG = ParamSpec("original_max_position_embeddings", "trained length", 2048, "int", 1, 1_048_576, 1, help="the context the model was trained on",
                  brief="L {:,}")
_NO_PAPER = "none: a naive first attempt, not a published scheme"


SCHEMES: dict[str, Scheme] = {
    "raw_index": Scheme(
        key="raw_index", color="#0072B2", name="Raw index", kind="additive", learned=False, paper=_NO_PAPER, year=None, models=(),
        formula=r"e'_t = e_t + t\,\mathbf{1}",
        summary="Add the position itself: unique but unbounded (10^6 at position 10^6).",
        page="pages/raw_index.py", behaviour=naive.RAW_INDEX,
    ),
    "index_over_length": Scheme(
        key="index_over_length", color="#CC6677", name="Index / length", kind="additive", learned=False, paper=_NO_PAPER, year=None, models=(),
        formula=r"e'_t = e_t + \frac{t + 1}{L}\,\mathbf{1}\quad(t = 0 \ldots L - 1)",
        summary="Normalise by the prompt length: bounded, but the same position changes with L.",
        page="pages/index_length.py", behaviour=naive.INDEX_OVER_LENGTH,
    ),
    "single_sine": Scheme(
        key="single_sine", color="#999933", name="Single sine", kind="additive", learned=False, paper=_NO_PAPER, year=None, models=(),
        formula=r"e'_t = e_t + \sin(\omega t)\,\mathbf{1}",
        summary="Bounded and smooth, but periodic: sin(t) = sin(t + 2πk) collides.",
        page="pages/single_sine.py", behaviour=naive.SINGLE_SINE, params=(_OMEGA,),
    ),
    "sincos_pair": Scheme(
        key="sincos_pair", color="#88CCEE", name="One sin+cos pair", kind="additive", learned=False, paper=_NO_PAPER, year=None, models=(),
        formula=r"e'_t = e_t + [\sin(\omega t), \cos(\omega t), \ldots]",
        summary="A point on the unit circle: unique within one turn, colliding across turns.",
        page="pages/sincos_pair.py", behaviour=naive.SINCOS_PAIR, params=(_OMEGA,),
    ),
    "sinusoidal": Scheme(
        key="sinusoidal", color="#E69F00", name="Sinusoidal", kind="additive", learned=False,
        paper="Vaswani et al., Attention Is All You Need (arXiv:1706.03762)", year=2017,
        models=("Transformer (base/big)", "fairseq transformer", "Marian", "Whisper (encoder)"),
        formula=r"PE_{(p,2i)} = \sin\!\big(p / b^{2i/d}\big),\; PE_{(p,2i+1)} = \cos\!\big(p / b^{2i/d}\big)",
        summary="Many frequencies in geometric progression: bounded, unique, and relative by rotation.",
        page="pages/sinusoid.py", behaviour=sinusoidal.SINUSOIDAL,
        params=(_BASE, ParamSpec("layout", "layout", "interleaved", "choice", choices=sinusoidal.LAYOUTS,
                                 help="sin/cos interleaved (paper) or [sin | cos]")),
    ),
    "learned_minilm": Scheme(
        key="learned_minilm", color="#6699CC", name="Learned (MiniLM, trained)", kind="additive", learned=True,
        paper="Devlin et al., BERT (arXiv:1810.04805); table from all-MiniLM-L6-v2", year=2018,
        models=("BERT", "RoBERTa", "GPT-2", "OPT", "all-MiniLM-L6-v2"),
        formula=r"e'_t = e_t + P[t],\quad P \in \mathbb{R}^{512 \times 384}",
        summary="A trained lookup table: whatever the data taught it, and nothing past row 511.",
        page="pages/learned.py", behaviour=learned.LEARNED_MINILM,
    ),
    "learned_random": Scheme(
        key="learned_random", color="#009E73", name="Learned (untrained, random)", kind="additive", learned=True,
        paper="init as in GPT-2 / BERT: normal(0, 0.02)", year=None, models=("any learned table before training",),
        formula=r"P[t] \sim \mathcal{N}(0,\, 0.02^2\, I)",
        summary="The same lookup before training: noise, with no notion of distance.",
        page="pages/learned.py", behaviour=learned.LEARNED_RANDOM,
        params=(ParamSpec("seed", "seed", 0, "int", 0, 10_000, 1, help="random seed of the table"),),
    ),
    "t5": Scheme(
        key="t5", color="#D55E00", name="T5 relative buckets", kind="bias", learned=True,
        paper="Raffel et al., T5 (arXiv:1910.10683)", year=2019, models=("T5", "mT5", "Flan-T5", "LongT5"),
        formula=r"A_{ij} = q_i^\top k_j + W_h[\mathrm{bucket}(j - i)]",
        summary="A learned scalar per head for each distance bucket: exact up close, log-spaced far away.",
        page="pages/relative_bias.py", behaviour=relative.T5,
        params=(
            ParamSpec("bidirectional", "bidirectional", True, "bool", help="encoder (both sides) or decoder (past only)"),
            ParamSpec("num_buckets", "buckets", 32, "int", 4, 256, 1),
            ParamSpec("max_distance", "max distance", 128, "int", 4, 100_000, 1,
                      help="must exceed the distances mapped one-to-one (num_buckets / 4, or / 2 causal)",
                      lo_from=(("num_buckets", "bidirectional"), lambda nb, bi: relative.t5_max_exact(nb, bi) + 1)),
        ),
    ),
    "alibi": Scheme(
        key="alibi", color="#CC79A7", name="ALiBi", kind="bias", learned=False,
        paper="Press, Smith, Lewis, Train Short, Test Long (arXiv:2108.12409)", year=2021,
        models=("BLOOM", "MPT", "Baichuan-13B", "Falcon (some)"),
        formula=r"A_{ij} = q_i^\top k_j - m_h\,(i - j),\quad m_h = 2^{-8h/H}",
        summary="A fixed linear penalty on distance, one slope per head; no position vectors at all.",
        page="pages/relative_bias.py", behaviour=relative.ALIBI,
        params=(ParamSpec("causal", "causal", True, "bool", help="causal (paper) or symmetric |i - j|"),),
    ),
    "kerple": Scheme(
        key="kerple", color="#AA4499", name="Kerple (log)", kind="bias", learned=True,
        paper="Chi et al., KERPLE: Kernelized Relative Positional Embedding for Length Extrapolation (arXiv:2205.09921)",
        year=2022, models=("KERPLE GPT-NeoX (paper)",),
        formula=r"A_{ij} = q_i^\top k_j - r_1 \log(1 + r_2\,|i - j|),\quad r_1, r_2 > 0",
        summary="A logarithmic kernel of distance with two learned scalars per head: ALiBi's penalty, bent to flatten far away.",
        page="pages/relative_bias.py", behaviour=relative.KERPLE,
        params=(
            ParamSpec("r1", "r₁ (scale)", 1.0, "float", 0.01, 100.0, 0.01,
                      help="the kernel's height; trained per head (init U(0, 2) in the authors' code), clamped at 0.01",
                      brief="r₁ {:g}"),
            ParamSpec("r2", "r₂ (rate)", 0.5, "float", 0.01, 100.0, 0.01,
                      help="how fast the penalty bends; trained per head (init U(0, 1)), clamped at 0.01", brief="r₂ {:g}"),
        ),
    ),
    "fire": Scheme(
        key="fire", color="#117733", name="FIRE (untrained)", kind="bias", learned=True,
        paper="Li et al., Functional Interpolation for Relative Positions Improves Long Context Transformers (arXiv:2310.04418)",
        year=2023, models=("FIRE (paper: T5-style models, 2023)",),
        formula=r"A_{ij} = q_i^\top k_j + f_\theta\!\left(\frac{\psi(i - j)}{\psi(\max(i, L))}\right),\ \ "
                r"\psi(x) = \log(c|x| + 1)",
        summary="A small MLP of the log distance, normalised by the query's position past a threshold L: learned per head.",
        page="pages/relative_bias.py", behaviour=fire.FIRE,
        params=(
            ParamSpec("c", "c (log scale)", 0.1, "float", 0.0, 100.0, 0.01, lo_open=True,
                      help="ψ(x) = log(c|x| + 1); learned, 0.1 at init in the authors' code", brief="c {:g}"),
            ParamSpec("threshold", "threshold L", 512.0, "float", 1.0, 1e7, 1.0,
                      help="below it the normaliser is ψ(L) and the bias depends on |i − j| only; 512 at init", brief="L {:g}"),
            ParamSpec("mlp_width", "MLP width", 32, "int", 1, 256, 1, help="hidden units of f_θ (32 in the paper)"),
            ParamSpec("seed", "seed", 0, "int", 0, 10_000, 1, help="random seed of the MLP's initial weights"),
        ),
    ),
    "rope": Scheme(
        key="rope", color="#999999", name="RoPE", kind="rotary", learned=False,
        fine_tuning="—",  # what the extensions extend: nothing to fine-tune for
        paper="Su et al., RoFormer (arXiv:2104.09864)", year=2021,
        models=("Llama 1-3", "Mistral", "Qwen", "GPT-NeoX", "GPT-J", "PaLM", "Gemma"),
        formula=r"f(x, p) = R_{\Theta, p}\, x,\quad \theta_k = b^{-2k/d}",
        summary="Rotate each query/key pair by p·θ_k: the score depends only on the offset.",
        page="pages/rope.py", behaviour=rotary.rope_scheme("default"), params=(_BASE, _ROPE_LAYOUT),
    ),
    "rope_linear": Scheme(
        key="rope_linear", color="#0072B2", name="RoPE + position interpolation", kind="rotary", learned=False,
        short_name="PI (linear)", fine_tuning="yes: about 1,000 steps (arXiv:2306.15595)",
        paper="Chen et al., Position Interpolation (arXiv:2306.15595)", year=2023,
        models=("LongChat", "Vicuna-16k", "CodeLlama (with base change)"),
        formula=r"\theta'_k = \theta_k / s",
        summary="Squeeze positions by s: every frequency divided by the factor.",
        page="pages/context_extension.py", behaviour=rotary.rope_scheme("linear"), params=(_BASE, _ROPE_LAYOUT, _FACTOR, _ORIG),
    ),
    "rope_ntk": Scheme(
        key="rope_ntk", color="#E69F00", name="RoPE + NTK-aware", kind="rotary", learned=False,
        short_name="NTK-aware", fine_tuning="no: proposed for use without fine-tuning (bloc97, r/LocalLLaMA 2023)",
        paper="bloc97, NTK-aware scaled RoPE (r/LocalLLaMA)", year=2023, models=("Code Llama (base 1e6)", "many community fine-tunes"),
        formula=r"b' = b \cdot s^{d/(d-2)}",
        summary="Raise the base: high frequencies untouched, the lowest divided by exactly s.",
        page="pages/context_extension.py", behaviour=rotary.rope_scheme("ntk"), params=(_BASE, _ROPE_LAYOUT, _FACTOR, _ORIG),
    ),
    "rope_dynamic": Scheme(
        key="rope_dynamic", color="#009E73", name="RoPE + dynamic NTK", kind="rotary", learned=False,
        short_name="dynamic NTK", fine_tuning="no: applied at inference only (emozilla, r/LocalLLaMA 2023)",
        paper="emozilla, Dynamically Scaled RoPE (r/LocalLLaMA)", year=2023,
        models=("Qwen-7B (logn + dynamic)", "HF rope_type='dynamic'"),
        formula=r"b' = b\,\big(s L / L_0 - (s - 1)\big)^{d/(d-2)},\ L > L_0",
        summary="NTK base change that grows with the current length; identical to RoPE up to L_0.",
        page="pages/context_extension.py", behaviour=rotary.rope_scheme("dynamic"), params=(_BASE, _ROPE_LAYOUT, _FACTOR, _ORIG),
    ),
    "rope_yarn": Scheme(
        key="rope_yarn", color="#D55E00", name="RoPE + YaRN", kind="rotary", learned=False,
        short_name="YaRN", fine_tuning="yes: about 400 steps; also used without (arXiv:2309.00071)",
        paper="Peng et al., YaRN (arXiv:2309.00071)", year=2023,
        models=("Qwen2.5 (long)", "DeepSeek-V2/V3", "Mistral YaRN", "gpt-oss"),
        formula=r"\theta'_k = (1 - \gamma_k)\,\theta_k / s + \gamma_k\,\theta_k,\ \ \sqrt{t} = 0.1\ln s + 1",
        summary="Keep fast pairs, interpolate slow ones, ramp in between, and sharpen attention.",
        page="pages/context_extension.py", behaviour=rotary.rope_scheme("yarn"),
        params=(
            _BASE, _ROPE_LAYOUT, _FACTOR, _ORIG,
            ParamSpec("beta_fast", "β fast", 32.0, "float", 0.0, 1024.0, 1.0, lo_open=True),
            ParamSpec("beta_slow", "β slow", 1.0, "float", 0.0, 1024.0, 0.5, lo_open=True),
        ),
    ),
    "rope_llama3": Scheme(
        key="rope_llama3", color="#CC79A7", name="RoPE + Llama 3 scaling", kind="rotary", learned=False,
        short_name="Llama 3", fine_tuning="yes: long-context continued pre-training (arXiv:2407.21783)",
        paper="Meta, The Llama 3 Herd of Models (arXiv:2407.21783)", year=2024, models=("Llama 3.1", "Llama 3.2", "Llama 3.3"),
        formula=r"\theta'_k = \theta_k \text{ (fast)},\ \theta_k/s \text{ (slow)},\ \text{smooth blend between}",
        summary="Three bands by wavelength: keep, blend, divide by s.",
        page="pages/context_extension.py", behaviour=rotary.rope_scheme("llama3"),
        params=(
            replace(_BASE, default=500000.0, help="the wavelength base (500000 in Llama 3)"),
            _ROPE_LAYOUT,
            replace(_FACTOR, default=8.0),
            replace(_ORIG, default=8192),
            ParamSpec("low_freq_factor", "low-frequency factor", 1.0, "float", 0.0, 64.0, 0.5, lo_open=True,
                      hi_from=(("high_freq_factor",), float), help="at most the high-frequency factor (equal: Llama 4)"),
            ParamSpec("high_freq_factor", "high-frequency factor", 4.0, "float", 0.0, 64.0, 0.5, lo_open=True,
                      lo_from=(("low_freq_factor",), float), help="at least the low-frequency factor"),
        ),
    ),
    "rope_longrope": Scheme(
        key="rope_longrope", color="#8C564B", name="RoPE + LongRoPE (Phi-3 factors)", kind="rotary", learned=False,
        short_name="LongRoPE (Phi-3 factors)", fine_tuning="searched factors, then fine-tuning past 8x (arXiv:2402.13753)",
        paper="Ding et al., LongRoPE (arXiv:2402.13753)", year=2024,
        models=("Phi-3-mini-128k", "Phi-3.5-mini", "Phi-3.5-MoE", "Phi-4-mini"),
        formula=r"\theta'_k = \theta_k / \lambda_k,\ \ \lambda = \text{short (} L \le L_0\text{) or long factors},\ \ "
                r"\text{af} = \sqrt{1 + \ln s / \ln L_0}",
        summary="A searched rescale factor per pair (one list up to the trained length, one past it) and a fixed attention factor.",
        page="pages/context_extension.py", behaviour=rotary.rope_scheme("longrope", {"factor_set": "phi3-mini-128k"}),
        params=(
            _BASE, _ROPE_LAYOUT,
            replace(_FACTOR, default=32.0,
                    help="sets the attention factor sqrt(1 + ln s / ln L); Phi-3-mini-128k: 131072 / 4096 = 32"),
            replace(_ORIG, default=4096, lo=16, step=16,
                    help="the long factors apply past it; Phi-3: 4096"),
        ),
    ),
    "xpos": Scheme(
        key="xpos", color="#882255", name="xPos", kind="rotary", learned=False,
        paper="Sun et al., A Length-Extrapolatable Transformer (arXiv:2212.10554)", year=2022,
        models=("TorchScale LEX", "lucidrains rotary-embedding-torch (use_xpos)"),
        formula=r"\tilde q_n = \zeta^{n/B} R_n q,\ \tilde k_m = \zeta^{-m/B} R_m k,\ \ "
                r"\zeta_i = \frac{2i/d + \gamma}{1 + \gamma}",
        summary="RoPE whose pairs also decay with distance, fast pairs fastest: q and k are scaled oppositely.",
        page="pages/rope.py", behaviour=xpos.XPOS,
        params=(
            _BASE,
            ParamSpec("layout", "pairing", "interleaved", "choice", choices=rotary.LAYOUTS,
                      help="which channels form a rotation pair (torchscale rotates interleaved pairs)"),
            ParamSpec("gamma", "γ", 0.4, "float", 0.0, 10.0, 0.05, lo_open=True, help="ζ_i = (2i/d + γ)/(1 + γ); 0.4 in the paper"),
            ParamSpec("scale_base", "scale base B", 512.0, "float", 1.0, 1e6, 1.0, help="decay length; 512 in the paper"),
        ),
    ),
    "p_rope": Scheme(
        key="p_rope", color="#44AA99", name="p-RoPE", kind="rotary", learned=False, short_name="p-RoPE",
        paper="Barbero et al., Round and Round We Go! What makes Rotary Positional Encodings useful? (arXiv:2410.06205)",
        year=2024, models=("Gemma 4 global layers (HF rope_type 'proportional', the same rotation)",),
        formula=r"\theta_k = b^{-2k/d}\ \ (k < \lfloor p\,d/2 \rfloor),\qquad \theta_k = 0\ \ \text{otherwise}",
        summary="RoPE with its lowest frequencies removed: the slowest (1 − p) of the pairs never rotate, free for meaning.",
        page="pages/rope.py", behaviour=rotary.rope_scheme("proportional", rename={"p": "partial_rotary_factor"}),
        params=(_BASE, _ROPE_LAYOUT,
                ParamSpec("p", "p (share of pairs that rotate)", 0.75, "float", 0.0, 1.0, 0.05,
                          help="the fastest p of the pairs rotate, the lowest 1 − p do not (0.75 in the paper)",
                          brief="p {:g}")),
    ),
    "rope_randomized": Scheme(
        key="rope_randomized", color="#997700", name="RoPE + randomized positions", kind="rotary", learned=False,
        short_name="randomized", fine_tuning="a training-time method: the model is trained with it (arXiv:2305.16843)",
        paper="Ruoss et al., Randomized Positional Encodings Boost Length Generalization of Transformers (arXiv:2305.16843)",
        year=2023, models=("the paper's algorithmic-task Transformers (noisy RoPE, sin/cos, ALiBi, learned)",),
        formula=r"p_t = s_{(t)},\quad \{s_{(0)} < \ldots < s_{(n-1)}\} \sim \text{a random } n\text{-subset of } [0, N)",
        summary="Each sequence's positions are a sorted random subset of a longer range: the long positions are seen in training.",
        page="pages/rope.py", behaviour=rotary.ROPE_RANDOMIZED,
        params=(_BASE, _ROPE_LAYOUT,
                ParamSpec("max_len", "range N", 8192, "int", 64, 1_000_000, 1,
                          help="positions are drawn from [0, N); must be at least the sequence length", brief="N {:,}"),
                ParamSpec("seed", "seed", 0, "int", 0, 10_000, 1, help="random seed of the sampled positions")),
    ),
    "nope": Scheme(
        key="nope", color="#56B4E9", name="NoPE (causal mask only)", kind="bias", learned=False,
        paper="Haviv et al. (arXiv:2203.16634); Kazemnejad et al. (arXiv:2305.19466)", year=2022,
        models=("control: decoder-only models trained without PE",),
        formula=r"A_{ij} = q_i^\top k_j + \begin{cases}0 & j \le i\\ -\infty & j > i\end{cases}",
        summary="No positional signal: order comes only from what the causal mask hides.",
        page="pages/attention_order.py", behaviour=relative.NOPE,
    ),
}


def get_scheme(key: str | Scheme) -> Scheme:
    """The registered scheme ``key``; an unknown key raises ValueError listing the valid ones.

    A ``Scheme`` itself is returned as it is, so every analysis also runs on a scheme that is not
    (yet) registered -- the contract test checks deliberately broken copies this way.
    """
    if isinstance(key, Scheme):
        return key
    if not isinstance(key, str) or key not in SCHEMES:
        raise ValueError(f"unknown scheme {key!r}; valid keys: {', '.join(SCHEMES)}")
    return SCHEMES[key]


# An uploaded position table is not a registry scheme; where a list of schemes takes one too, its key is
# "upload:<label>" (no registry key holds a colon).  These two functions are the only place that spelling lives.
UPLOAD_PREFIX = "upload:"


def upload_key(label: str) -> str:
    """The key that stands for the uploaded table ``label`` beside the registry keys."""
    return UPLOAD_PREFIX + str(label)


def upload_label(key) -> str | None:
    """The label of an upload key (``upload_key``), None for a registry key or anything else."""
    return key[len(UPLOAD_PREFIX):] if isinstance(key, str) and key.startswith(UPLOAD_PREFIX) else None


# ----------------------------------------------------------------------------- by key
# The per-kind evaluators of the public API, by scheme key.

def encode(key: str, positions, d_model: int, *, seq_len: int | None = None, **params) -> np.ndarray:
    """Additive scheme ``key`` at ``positions``: ndarray (n, d_model), float64."""
    return get_scheme(key).encode(positions, d_model, seq_len=seq_len, **params)


def rope_for(key: str, head_dim: int, *, seq_len: int | None = None, **params) -> tuple[np.ndarray, float]:
    """(inv_freq (head_dim // 2,), attention_factor) of rotary scheme ``key``."""
    scheme = get_scheme(key)
    scheme.need("rotary", "only rotary schemes have inv_freq")
    return scheme.frequencies(head_dim, seq_len=seq_len, **params)


def rope_scaling(key: str, **params) -> dict | None:
    """The Hugging Face rope_scaling block that rotary scheme ``key`` stands for (None = plain RoPE)."""
    return get_scheme(key).scaling_block(**params)


def bias(key: str, n: int, n_heads: int = 8, **params) -> np.ndarray:
    """Bias scheme ``key`` for positions 0 .. n-1: (H, n, n); T5 reports its bucket ids."""
    n = check_int("n", n, lo=1, hi=relative.MAX_N)
    pos = np.arange(n, dtype=np.float64)
    return get_scheme(key).bias(pos, pos, n_heads, **params)


def signature(key: str, positions, d: int, *, seq_len: int | None = None, n_heads: int = 8, probe: str = "ones",
              **params) -> np.ndarray:
    """What each position looks like to the model, (n, k) float64 (see ``Scheme.signature``)."""
    return get_scheme(key).signature(positions, d, seq_len=seq_len, n_heads=n_heads, probe=probe, **params)
