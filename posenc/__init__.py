"""posenc: positional encodings, computed and compared in pure numpy.

The stable public API (documented in README.md):

    sinusoidal(positions, d_model, *, base=10000.0, layout="interleaved") -> (n, d_model)
    rope_frequencies(head_dim, *, base=10000.0, scaling=None, seq_len=None) -> (inv_freq, attention_factor)
    apply_rope(x, positions, inv_freq, *, layout="half_split", attention_factor=1.0) -> like x
    t5_bucket(relative_position, *, bidirectional=True, num_buckets=32, max_distance=128) -> int array
    alibi_slopes(n_heads) -> (n_heads,)
    alibi_bias(n, n_heads, *, causal=True) -> (n_heads, n, n)
    rope_decay_bound(distances, head_dim, *, base=10000.0) -> (m,)
    rope_from_config(config, *, seq_len=None) -> RopeFromConfig (inv_freq, attention_factor, logit_scale, ...)
    rope_from_gguf(path_or_bytes, *, seq_len=None) -> RopeFromConfig, from a GGUF file's header (never its tensors)

plus the registry (SCHEMES, get_scheme), per-kind evaluation (encode, rope_for, bias,
signature) and the analyses (position_scores, growth, collisions, shift_operator, ...).
``import posenc`` never imports streamlit (posenc.ui is the only Streamlit-aware part).
"""

from posenc._validate import MEMORY_CAP_BYTES
from posenc.analysis.attention import permutation_equivariance, tokenize
from posenc.analysis.compare import comparison_table, measure_scheme
from posenc.analysis.geometry import (
    closest_pair,
    collisions,
    count_close_pairs,
    first_return,
    frequency_spectrum,
    growth,
    length_dependence,
    shift_operator,
    token_embedding_norm,
)
from posenc.analysis.scores import dense_scores, offset_profile, position_scores, translation_invariance
from posenc.io.ropeconfig import RopeFromConfig, rope_from_config, rope_from_gguf
from posenc.registry import SCHEMES, ParamSpec, Scheme, bias, encode, get_scheme, rope_for, signature
from posenc.schemes.kinds import probe_vector
from posenc.schemes.learned import learned_lookup, minilm_metadata, minilm_table, random_table
from posenc.schemes.naive import index_over_length, raw_index, sincos_pair, single_sine
from posenc.schemes.relative import (
    alibi_bias,
    alibi_slopes,
    causal_mask,
    nope_bias,
    t5_bias,
    t5_bucket,
    t5_bucket_matrix,
)
from posenc.schemes.rotary import apply_rope, rope_decay_bound, rope_offset_scores
from posenc.schemes.scaling import default_inv_freq, rope_frequencies
from posenc.schemes.sinusoidal import sinusoid_frequencies, sinusoid_shift_matrix, sinusoid_wavelengths, sinusoidal
from posenc.schemes.xpos import xpos_scale, xpos_zeta

__version__ = "0.2.0"

__all__ = [
    "MEMORY_CAP_BYTES", "SCHEMES", "ParamSpec", "Scheme", "get_scheme",
    "sinusoidal", "sinusoid_frequencies", "sinusoid_wavelengths",
    "raw_index", "index_over_length", "single_sine", "sincos_pair",
    "learned_lookup", "minilm_table", "minilm_metadata", "random_table",
    "t5_bucket", "t5_bucket_matrix", "t5_bias", "alibi_slopes", "alibi_bias", "causal_mask", "nope_bias",
    "rope_frequencies", "rope_from_config", "rope_from_gguf", "RopeFromConfig",
    "apply_rope", "rope_decay_bound", "rope_offset_scores", "default_inv_freq",
    "xpos_zeta", "xpos_scale",
    "encode", "rope_for", "bias", "signature", "probe_vector",
    "position_scores", "offset_profile", "dense_scores", "translation_invariance",
    "growth", "length_dependence", "closest_pair", "count_close_pairs", "collisions", "first_return",
    "shift_operator", "sinusoid_shift_matrix", "frequency_spectrum", "token_embedding_norm",
    "permutation_equivariance", "tokenize", "comparison_table", "measure_scheme",
]
