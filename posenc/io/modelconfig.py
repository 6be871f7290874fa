"""Read a model's RoPE settings from its Hugging Face ``config.json`` text.

``parse_model_config(text) -> ModelRope`` maps the fields transformers reads onto posenc's
``rope_frequencies(head_dim, base=, scaling=, seq_len=)``:

- base:      ``rope_theta`` (top level in v4, inside ``rope_parameters`` in v5; GPT-NeoX
             ``rotary_emb_base``).  Missing -> 10000 with a note.
- head_dim:  ``head_dim``, else ``hidden_size // num_attention_heads`` (GPT-style ``n_embd`` /
             ``n_head`` too).  Rotated channels: ``int(head_dim * partial_rotary_factor)``
             (NeoX ``rotary_pct``; GPT-J ``rotary_dim``), as HF does.
- scaling:   ``rope_parameters`` (v5) or ``rope_scaling`` (v4, ``"type"`` or ``"rope_type"``).
- trained length (the context the model saw in training):
    dynamic            -> ``max_position_embeddings`` (HF ignores any original_max_position_embeddings
                          in a dynamic block; see tests/data/hf_oracle.json "notes")
    yarn/llama3/longrope -> ``original_max_position_embeddings`` (block, then top level, then
                          ``max_position_embeddings`` as v5 ``standardize_rope_params`` fills it)
    default            -> ``max_position_embeddings``
    linear / ntk       -> ``original_max_position_embeddings`` if given, else
                          ``max_position_embeddings / factor`` (an estimate, noted)

Every problem is a ``ValueError`` that says which field was wrong and what was expected; anything
approximated or filled in is listed in ``ModelRope.notes``.  Pure: json, numpy and posenc.rope; no I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from posenc._validate import check_float, check_int
from posenc.schemes.scaling import MAX_CONTEXT, MAX_HEAD_DIM, rope_frequencies

MAX_CONFIG_BYTES = 1024 * 1024  # 1 MiB: a config.json is a few kB (DeepSeek-V3's is ~1.7 kB)
DEFAULT_THETA = 10000.0  # RoFormer; LlamaConfig / MistralConfig default
SUPPORTED_TYPES = ("default", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope")
ALIASES = {"su": "longrope", "mrope": "default"}  # Phi-3's early name; Qwen2-VL (HF maps it to default)
_COMMON_KEYS = {"rope_type", "type", "rope_theta", "factor", "original_max_position_embeddings", "partial_rotary_factor"}
_EXTRA_KEYS = {
    "yarn": {"beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor", "truncate"},
    "llama3": {"low_freq_factor", "high_freq_factor"},
    "longrope": {"short_factor", "long_factor", "attention_factor"},
    "default": {"mrope_section", "mrope_interleaved"},
}


@dataclass(frozen=True)
class ModelRope:
    """A model's RoPE settings in posenc's form.

    ``scaling`` is None (plain RoPE) or the dict ``posenc.rope.rope_frequencies`` takes; frequencies
    are for the ``rotary_dim`` rotated channels (``rotary_dim == head_dim`` unless partial rotary).
    ``trained_length`` is the context the model was trained on (None if the config does not say),
    ``target_length`` = factor x trained_length.
    """

    name: str
    model_type: str | None
    head_dim: int
    rotary_dim: int
    base: float
    rope_type: str
    scaling: dict | None
    factor: float
    trained_length: int | None
    max_position_embeddings: int | None
    source: str
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def target_length(self) -> int | None:
        if self.trained_length is None:
            return None
        return int(round(self.trained_length * self.factor))

    def frequencies(self, seq_len: int | None = None) -> tuple[np.ndarray, float]:
        """(inv_freq (rotary_dim // 2,), attention_factor) at the current length ``seq_len``."""
        return rope_frequencies(self.rotary_dim, base=self.base, scaling=self.scaling, seq_len=seq_len)


# ----------------------------------------------------------------------------- text -> object

def decode_config_bytes(data) -> str:
    """An uploaded config.json as text: at most MAX_CONFIG_BYTES, UTF-8 (a BOM is dropped)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ValueError(f"expected the file contents as bytes, got {type(data).__name__}")
    if len(data) > MAX_CONFIG_BYTES:
        raise ValueError(
            f"the file is {len(data) / 2**20:.1f} MiB; a config.json is a few kB, and the limit here is "
            f"{MAX_CONFIG_BYTES // 2**20} MiB. Upload the model's config.json, not its weights"
        )
    try:
        return bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"the file is not UTF-8 text (undecodable byte at offset {exc.start}); upload the model's config.json"
        ) from None


def _load_json(text) -> tuple[Any, bool]:
    """json.loads with size/shape guards; a bare list of fields ``"a": 1, "b": 2`` is wrapped in {}."""
    if not isinstance(text, str):
        raise ValueError(f"the config must be text (a str), got {type(text).__name__}")
    if len(text) > MAX_CONFIG_BYTES or len(text.encode("utf-8")) > MAX_CONFIG_BYTES:
        raise ValueError(
            f"the config text is over {MAX_CONFIG_BYTES // 2**20} MiB; a config.json is a few kB -- paste only the model's config.json"
        )
    body = text.strip().lstrip("\ufeff")
    if not body:
        raise ValueError("the config is empty: paste a config.json (a JSON object such as {\"rope_theta\": 500000, ...})")
    try:
        return json.loads(body), False
    except RecursionError:
        raise ValueError("the config is nested too deeply to be a config.json") from None
    except ValueError as exc:
        first = exc
    if not body.startswith(("{", "[")):  # lines copied out of a config.json, without the braces
        try:
            return json.loads("{" + body.rstrip(",") + "}"), True
        except (ValueError, RecursionError):
            pass
    msg = first.msg if isinstance(first, json.JSONDecodeError) else str(first)
    where = f" at line {first.lineno}, column {first.colno}" if isinstance(first, json.JSONDecodeError) else ""
    raise ValueError(f"the config is not valid JSON{where}: {msg}")


def _number(name: str, value, *, integer: bool = False, lo=None, hi=None, lo_open: bool = False):
    """A config number, checked; the error names the config field."""
    if integer:
        return check_int(name, value, lo=lo, hi=hi)
    return check_float(name, value, lo=lo, hi=hi, lo_open=lo_open)


def _get(cfg: Mapping, *keys):
    """(key, value) of the first key present with a non-null value, else (None, None)."""
    for k in keys:
        if cfg.get(k) is not None:
            return k, cfg[k]
    return None, None


# ----------------------------------------------------------------------------- pieces

def _text_config(obj: Mapping, notes: list[str]) -> Mapping:
    """Multimodal configs nest the language model under text_config; use it when the top lacks it."""
    tc = obj.get("text_config")
    has_dims = any(obj.get(k) is not None for k in ("head_dim", "hidden_size", "n_embd"))
    if isinstance(tc, Mapping) and not has_dims:
        notes.append("read the language model's settings from `text_config` (a multimodal config)")
        return tc
    return obj


def _rope_block(cfg: Mapping, notes: list[str]) -> tuple[dict, str]:
    rp, rs = cfg.get("rope_parameters"), cfg.get("rope_scaling")
    if rp is not None:
        if not isinstance(rp, Mapping):
            raise ValueError(f"rope_parameters must be a JSON object, got {rp!r:.60}")
        if rp and all(isinstance(v, Mapping) for v in rp.values()):  # one block per layer type (Gemma 3)
            if "full_attention" not in rp:
                raise ValueError(
                    f"rope_parameters holds one block per layer type ({', '.join(map(str, rp))}); "
                    "paste the block you want as rope_parameters"
                )
            notes.append("rope_parameters has one block per layer type; using `full_attention`")
            rp = rp["full_attention"]
        if isinstance(rs, Mapping) and rs:
            notes.append("both rope_parameters (v5) and rope_scaling (v4) are present; using rope_parameters")
        return dict(rp), "rope_parameters (transformers v5)"
    if rs is not None:
        if not isinstance(rs, Mapping):
            raise ValueError(f"rope_scaling must be a JSON object or null, got {rs!r:.60}")
        return dict(rs), "rope_scaling (transformers v4)"
    return {}, "no rope_scaling / rope_parameters (plain RoPE)"


def _base(cfg: Mapping, block: Mapping, notes: list[str]) -> float:
    top_key, top = _get(cfg, "rope_theta", "rotary_emb_base")
    if block.get("rope_theta") is not None:
        base = _number("rope_parameters['rope_theta']", block["rope_theta"], lo=1.0, hi=1e12, lo_open=True)
        if top is not None and not (isinstance(top, (int, float)) and math.isclose(float(top), base)):
            notes.append(f"rope_theta differs at the top level ({top!r:.20}) and in rope_parameters ({base:g}); using rope_parameters")
        return base
    if top is not None:
        return _number(top_key, top, lo=1.0, hi=1e12, lo_open=True)
    notes.append(f"rope_theta is not given; using {DEFAULT_THETA:g} (RoFormer, and the LlamaConfig default) -- check the model's config class")
    return DEFAULT_THETA


def _head_dim(cfg: Mapping, notes: list[str]) -> int:
    if cfg.get("head_dim") is not None:
        return _number("head_dim", cfg["head_dim"], integer=True, lo=2, hi=MAX_HEAD_DIM)
    hk, hidden = _get(cfg, "hidden_size", "n_embd", "d_model")
    nk, heads = _get(cfg, "num_attention_heads", "n_head", "num_heads")
    if hidden is None or heads is None:
        raise ValueError(
            "the config gives neither head_dim nor hidden_size and num_attention_heads; "
            "RoPE's frequencies depend on the head dimension"
        )
    hidden = _number(hk, hidden, integer=True, lo=2, hi=10**6)
    heads = _number(nk, heads, integer=True, lo=1, hi=10**4)
    if hidden % heads:
        raise ValueError(f"{hk} ({hidden}) is not divisible by {nk} ({heads}); give head_dim explicitly")
    d = hidden // heads
    notes.append(f"head_dim = {hk} / {nk} = {hidden} / {heads} = {d}")
    return _number("head_dim", d, integer=True, lo=2, hi=MAX_HEAD_DIM)


def _rotary_dim(cfg: Mapping, block: Mapping, head_dim: int, notes: list[str]) -> int:
    if cfg.get("rotary_dim") is not None:  # GPT-J: an explicit channel count
        r = _number("rotary_dim", cfg["rotary_dim"], integer=True, lo=2, hi=head_dim)
        how = f"rotary_dim = {r}"
    else:
        key, p = _get(block, "partial_rotary_factor")
        if p is None:
            key, p = _get(cfg, "partial_rotary_factor", "rotary_pct")
        if p is None:
            return head_dim
        p = _number(key, p, lo=0.0, hi=1.0, lo_open=True)
        r = int(head_dim * p)  # HF: dim = int(head_dim * partial_rotary_factor)
        how = f"{key} = {p:g}: int({head_dim} x {p:g}) = {r}"
    if r < 2 or r % 2:
        raise ValueError(f"{how} channels, but RoPE needs an even rotary dimension of at least 2")
    if r < head_dim:
        notes.append(
            f"partial rotary: {how} of {head_dim} channels rotate, with theta_k = base^(-2k/{r}) as in HF; "
            f"the other {head_dim - r} channels pass through unrotated and add a position-independent term "
            "to every score, which the score curve leaves out"
        )
    return r


def _rope_type(block: Mapping, notes: list[str]) -> str:
    rt, old = block.get("rope_type"), block.get("type")
    if rt is not None and old is not None and rt != old:
        notes.append(f"the block has rope_type {rt!r} and type {old!r}; using rope_type")
    rt = rt if rt is not None else old
    if rt is None:
        extra = set(block) - {"rope_theta", "partial_rotary_factor"}
        if extra:
            raise ValueError(
                f"the rope block has no 'rope_type' (v5) or 'type' (v4) key but sets {', '.join(sorted(extra))}; "
                f"add one of: {', '.join(SUPPORTED_TYPES)}"
            )
        return "default"
    if not isinstance(rt, str):
        raise ValueError(f"rope_type must be a string, got {rt!r:.40}")
    if rt in ALIASES:
        notes.append(f"rope_type {rt!r} is read as {ALIASES[rt]!r}" + (" (multimodal sections are not modelled)" if rt == "mrope" else ""))
        rt = ALIASES[rt]
    if rt == "ntk":
        notes.append("rope_type 'ntk' (static NTK-aware, base x s^(d/(d-2))) is not a transformers v5 key; computed as posenc's NTK-aware")
    if rt not in SUPPORTED_TYPES:
        raise ValueError(f"unknown rope_type {rt!r:.40}; posenc computes: {', '.join(SUPPORTED_TYPES)}")
    return rt


def _orig(cfg: Mapping, block: Mapping, max_pos: int | None, rope_type: str, notes: list[str]) -> int:
    if block.get("original_max_position_embeddings") is not None:
        return _number("original_max_position_embeddings", block["original_max_position_embeddings"], integer=True, lo=1, hi=MAX_CONTEXT)
    if cfg.get("original_max_position_embeddings") is not None:
        notes.append("original_max_position_embeddings read from the top level of the config (Phi-3 style)")
        return _number("original_max_position_embeddings", cfg["original_max_position_embeddings"], integer=True, lo=1, hi=MAX_CONTEXT)
    if max_pos is not None:
        notes.append(f"original_max_position_embeddings is missing; using max_position_embeddings ({max_pos:,}) as transformers v5 does")
        return max_pos
    raise ValueError(f"rope_type {rope_type!r} needs original_max_position_embeddings (the trained length) or max_position_embeddings")


def _scaling(cfg: Mapping, block: Mapping, rope_type: str, max_pos: int | None, notes: list[str]):
    """(scaling dict or None, factor, trained length or None)."""
    if rope_type == "default":
        return None, 1.0, max_pos
    extras = _EXTRA_KEYS.get(rope_type, set())
    ignored = sorted(set(block) - _COMMON_KEYS - extras)
    if ignored:
        notes.append(f"ignored keys in the rope block: {', '.join(map(str, ignored))}")
    factor = None
    if block.get("factor") is not None:
        factor = _number("factor", block["factor"], lo=1.0, hi=1e6)
    out: dict[str, Any] = {"rope_type": rope_type}
    if rope_type in ("linear", "ntk", "dynamic", "llama3") and factor is None:
        raise ValueError(f"rope_type {rope_type!r} needs a 'factor' (a number >= 1)")
    if rope_type in ("linear", "ntk"):
        out["factor"] = factor
        if block.get("original_max_position_embeddings") is not None:
            trained = _orig(cfg, block, max_pos, rope_type, notes)
        elif max_pos is not None:
            trained = max(1, int(round(max_pos / factor)))
            notes.append(f"trained length estimated as max_position_embeddings / factor = {max_pos:,} / {factor:g} = {trained:,}")
        else:
            trained = None
        if trained is not None:
            out["original_max_position_embeddings"] = trained  # not read by the core for these two types
        return out, factor, trained
    if rope_type == "dynamic":
        if max_pos is None:
            raise ValueError("rope_type 'dynamic' needs max_position_embeddings: transformers uses it as the trained length")
        given = block.get("original_max_position_embeddings")
        if given is not None and given != max_pos:
            notes.append(
                f"transformers ignores original_max_position_embeddings ({given!r:.20}) for 'dynamic' and uses "
                f"max_position_embeddings ({max_pos:,}) as the trained length; so does this page"
            )
        out.update(factor=factor, original_max_position_embeddings=max_pos)
        return out, factor, max_pos
    orig = _orig(cfg, block, max_pos, rope_type, notes)
    if factor is None:
        if max_pos is None:
            raise ValueError(f"rope_type {rope_type!r} needs a 'factor' (or max_position_embeddings to derive it)")
        factor = _number("factor", max_pos / orig, lo=1.0, hi=1e6)
        notes.append(f"factor is missing; using max_position_embeddings / original = {max_pos:,} / {orig:,} = {factor:g} as transformers v5 does")
    elif rope_type == "yarn" and max_pos is not None and not any(math.isclose(max_pos / orig, v) for v in (1.0, factor)):
        notes.append(f"factor {factor:g} differs from max_position_embeddings / original = {max_pos / orig:g}; "
                     "transformers v5 warns and uses the factor")
    out.update(factor=factor, original_max_position_embeddings=orig)
    if rope_type != "yarn" and max_pos is not None and max_pos != int(round(orig * factor)):
        notes.append(f"max_position_embeddings is {max_pos:,}, while factor x trained length = {factor:g} x {orig:,} = {int(round(orig * factor)):,}")
    for k in sorted(extras):
        if block.get(k) is None:
            continue
        if k in ("beta_fast", "beta_slow") and block[k] == 0:
            notes.append(f"{k} = 0 is read as the default, as transformers does (`or`)")
            continue
        out[k] = block[k]
    if rope_type == "llama3" and not {"low_freq_factor", "high_freq_factor"} <= set(out):
        raise ValueError("rope_type 'llama3' needs low_freq_factor and high_freq_factor (Llama 3.1 uses 1 and 4)")
    return out, factor, orig


def _name(obj: Mapping, cfg: Mapping) -> tuple[str, str | None]:
    mt = cfg.get("model_type") if isinstance(cfg.get("model_type"), str) else None
    arch = obj.get("architectures")
    for cand in (obj.get("_name_or_path"), arch[0] if isinstance(arch, list) and arch else None, mt):
        if isinstance(cand, str) and cand.strip():
            return cand.strip()[:80], (mt[:40] if mt else None)
    return "pasted config", None


# ----------------------------------------------------------------------------- entry point

def parse_model_config(text: str) -> ModelRope:
    """Parse a config.json (or the lines of one) into a ModelRope; ValueError says what is wrong."""
    obj, wrapped = _load_json(text)
    if not isinstance(obj, dict):
        raise ValueError(f"the config must be a JSON object {{...}}, got a JSON {type(obj).__name__}")
    notes: list[str] = ["read as the body of a JSON object (the braces were missing)"] if wrapped else []
    cfg = _text_config(obj, notes)
    block, source = _rope_block(cfg, notes)
    base = _base(cfg, block, notes)
    head_dim = _head_dim(cfg, notes)
    rotary_dim = _rotary_dim(cfg, block, head_dim, notes)
    rope_type = _rope_type(block, notes)
    mk, max_pos = _get(cfg, "max_position_embeddings", "n_positions")
    if max_pos is not None:
        max_pos = _number(mk, max_pos, integer=True, lo=1, hi=MAX_CONTEXT)
    scaling, factor, trained = _scaling(cfg, block, rope_type, max_pos, notes)
    try:  # the core checks every value's range (factor, beta_*, factor lists, ...)
        rope_frequencies(rotary_dim, base=base, scaling=scaling)
        if trained is not None:
            rope_frequencies(rotary_dim, base=base, scaling=scaling, seq_len=min(MAX_CONTEXT, int(trained * factor) + 1))
    except ValueError as exc:
        raise ValueError(f"the config's RoPE settings are out of range: {exc}") from None
    name, model_type = _name(obj, cfg)
    return ModelRope(
        name=name, model_type=model_type, head_dim=head_dim, rotary_dim=rotary_dim, base=base,
        rope_type=rope_type, scaling=scaling, factor=float(factor), trained_length=trained,
        max_position_embeddings=max_pos, source=source, notes=tuple(notes),
    )


# ----------------------------------------------------------------------------- examples
# Real config.json files (only the fields that matter here are kept, values unchanged).
EXAMPLE_CONFIGS: dict[str, str] = {
    # meta-llama/Llama-3.1-8B config.json
    "Llama 3.1 8B": json.dumps({
        "_name_or_path": "meta-llama/Llama-3.1-8B", "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072,
        "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"},
        "rope_theta": 500000.0,
    }, indent=2),
    # Qwen/Qwen2.5-7B-Instruct config.json plus the rope_scaling block its model card gives for 128k
    "Qwen2.5 7B + YaRN": json.dumps({
        "_name_or_path": "Qwen/Qwen2.5-7B-Instruct", "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
        "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 32768,
        "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"},
        "rope_theta": 1000000.0,
    }, indent=2),
    # mistralai/Mistral-7B-Instruct-v0.3 config.json (plain RoPE, rope_theta 1e6)
    "Mistral 7B v0.3": json.dumps({
        "_name_or_path": "mistralai/Mistral-7B-Instruct-v0.3", "architectures": ["MistralForCausalLM"], "model_type": "mistral",
        "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 32768,
        "rope_theta": 1000000.0, "sliding_window": None,
    }, indent=2),
}
