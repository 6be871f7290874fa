"""Read a model's RoPE settings from its Hugging Face ``config.json``, as transformers (or the model's
own code) reads them.

``parse_model_config(config) -> ModelRope`` (text or dict; checked by ``posenc.io.configjson``):

- block:     ``rope_parameters`` (v5; flat, or one block per layer type) or ``rope_scaling`` (v4,
             ``"type"`` or ``"rope_type"``); multimodal configs nest it all under ``text_config``.
- base:      ``rope_theta`` (block, then top level; GPT-NeoX ``rotary_emb_base``; ChatGLM 10000 x
             ``rope_ratio``).  Missing -> the config class's default, with a note.
- head_dim / rotated channels: ``head_dim`` or hidden / heads; DeepSeek MLA rotates
  ``qk_rope_head_dim`` of ``qk_nope_head_dim + qk_rope_head_dim``; partial rotary ``int(head_dim x
  partial_rotary_factor)`` (NeoX ``rotary_pct``, GPT-J ``rotary_dim``); ChatGLM rotates half its
  ``kv_channels``; "proportional" (Gemma 4) keeps every pair and zeroes the unrotated ones.
- lengths:   served = ``max_position_embeddings`` (``n_positions``, ChatGLM ``seq_length``);
  trained as transformers reads it per rope_type (dynamic: max_position_embeddings; yarn / llama3 /
  longrope: ``original_max_position_embeddings`` of the block, then the top level (Phi-3), then
  max_position_embeddings; linear: max_position_embeddings / factor, an estimate, noted).
- layers:    Gemma 3's sliding-window layers (``rope_local_base_freq``, or the ``sliding_attention``
  block) are returned in ``ModelRope.local``.
- softmax:   DeepSeek multiplies its softmax scale by mscale(factor, mscale_all_dim)^2 (``logit_extra``).

Every problem is a short ``ValueError`` naming the field and the allowed range; anything the
returned numbers do not model exactly is a line in ``ModelRope.notes``.  Pure: json, numpy, posenc.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from posenc._validate import check_float, check_int
from posenc.io.configblocks import is_gemma3, local_layers, scaling_block
from posenc.io.configjson import MAX_CONFIG_BYTES, bounded, decode_config_bytes, load_config
from posenc.io.configlayers import NotRoPE, check_file, check_rope, layer_plan, layout_of, meta_params, query_factor, query_scale, softmax_scale
from posenc.io.examples import EXAMPLE_TEXTS
from posenc.schemes.scaling import MAX_CONTEXT, MAX_HEAD_DIM, ROPE_TRAITS, ROPE_TYPES, rope_frequencies, shown, yarn_get_mscale

__all__ = ["EXAMPLE_CONFIGS", "MAX_CONFIG_BYTES", "ModelRope", "decode_config_bytes", "parse_model_config"]
EXAMPLE_CONFIGS = EXAMPLE_TEXTS
DEFAULT_THETA = 10000.0  # RoFormer; LlamaConfig / MistralConfig default
SUPPORTED_TYPES = ROPE_TYPES
ALIASES = {"su": "longrope", "mrope": "default"}  # Phi-3's early name; Qwen2-VL (HF maps it to default)
ALIAS_NOTES = {"mrope": "M-RoPE (Qwen2-VL): the pairs are split into temporal / height / width sections {sections}; for text "
                        "tokens all three position ids are equal, so it is plain RoPE, which is what is drawn"}


@dataclass(frozen=True)
class ModelRope:
    """A model's RoPE settings in posenc's form.

    ``scaling`` is None (plain RoPE) or the dict ``rope_frequencies`` takes; frequencies are for the
    ``rotary_dim`` rotated channels.  ``trained_length`` is the context the model was trained on
    (None if the config does not say), ``max_position_embeddings`` the length it serves.
    ``logit_extra`` multiplies every logit on top of attention_factor^2 (DeepSeek's softmax mscale^2).
    ``local`` describes sliding-window layers with their own RoPE: {"base", "scaling", "window", "layers"}.
    ``layers``: each kind of layer the model runs ({"name", "attention", "rope", "window", "count", "local",
    "query_scale"}, posenc.io.configlayers.layer_plan).  ``softmax_ratio``: the model's softmax scale over
    1/sqrt(head_dim).  ``query_scale``: position-dependent query scaling (``query_factor(p)``), or None.
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
    layout: str = "half_split"
    logit_extra: float = 1.0
    local: dict | None = None
    layers: tuple = ()
    softmax_ratio: float = 1.0
    query_scale: dict | None = None

    @property
    def target_length(self) -> int | None:
        """factor x trained length (what the scaling was designed for)."""
        if self.trained_length is None:
            return None
        return int(round(self.trained_length * self.factor))

    @property
    def served_length(self) -> int | None:
        """The length the model serves: max_position_embeddings, else factor x trained length."""
        return self.max_position_embeddings or self.target_length

    def query_factor(self, p: int) -> float:
        """The factor on a query at position p (Llama 4's NoPE layers, Ministral 3's every layer); 1 without."""
        return query_factor(self.query_scale, p)

    def frequencies(self, seq_len: int | None = None) -> tuple[np.ndarray, float]:
        """(inv_freq (rotary_dim // 2,), attention_factor) at the current length ``seq_len``."""
        return rope_frequencies(self.rotary_dim, base=self.base, scaling=self.scaling, seq_len=seq_len)


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
        notes.append("read the language model's settings from text_config (a multimodal config)")
        return tc
    return obj


def _rope_block(cfg: Mapping, notes: list[str]) -> tuple[dict, dict | None, str]:
    """(the block of the full-attention layers, the sliding-window layers' block or None, source)."""
    rp, rs = cfg.get("rope_parameters"), cfg.get("rope_scaling")
    if rp is not None:
        if not isinstance(rp, Mapping):
            raise ValueError(f"rope_parameters must be a JSON object, got {shown(rp)}")
        local = None
        if rp and all(isinstance(v, Mapping) or v is None for v in rp.values()):  # one block per layer type
            if not isinstance(rp.get("full_attention"), Mapping):
                raise ValueError(f"rope_parameters holds one block per layer type ({shown(', '.join(map(str, rp)))}) but no "
                                 "'full_attention' block; paste the block you want as rope_parameters")
            local = dict(rp["sliding_attention"]) if isinstance(rp.get("sliding_attention"), Mapping) else None
            rest = sorted(set(rp) - {"full_attention", "sliding_attention"})
            if rest:
                notes.append(f"rope_parameters also has blocks for {shown(', '.join(rest))}; only full_attention "
                             "(and sliding_attention) are read")
            rp = rp["full_attention"]
        if isinstance(rs, Mapping) and rs:
            notes.append("both rope_parameters (v5) and rope_scaling (v4) are present; using rope_parameters")
        return dict(rp), local, "rope_parameters (transformers v5)"
    if rs is not None:
        if not isinstance(rs, Mapping):
            raise ValueError(f"rope_scaling must be a JSON object or null, got {shown(rs)}")
        return dict(rs), None, "rope_scaling (transformers v4)"
    return {}, None, "no rope_scaling / rope_parameters (plain RoPE)"


def _base(cfg: Mapping, block: Mapping, notes: list[str]) -> float:
    top_key, top = _get(cfg, "rope_theta", "rotary_emb_base")
    if cfg.get("model_type") == "chatglm" or cfg.get("rope_ratio") is not None:
        ratio = _number("rope_ratio", cfg.get("rope_ratio", 1), lo=0.0, hi=1e8, lo_open=True)
        base = _number("10000 x rope_ratio", 10000.0 * ratio, lo=1.0, hi=1e12, lo_open=True)
        notes.append(f"ChatGLM: base = 10000 x rope_ratio = 10000 x {ratio:g} = {base:g} (THUDM modeling_chatglm.py)")
        return base
    if block.get("rope_theta") is not None:
        base = _number("rope_parameters.rope_theta", block["rope_theta"], lo=1.0, hi=1e12, lo_open=True)
        if top is not None and not (isinstance(top, (int, float)) and math.isclose(float(top), base)):
            notes.append(f"rope_theta differs at the top level ({shown(top, 20)}) and in rope_parameters ({base:g}); using rope_parameters")
        return base
    if top is not None:
        return _number(top_key, top, lo=1.0, hi=1e12, lo_open=True)
    default = 1e6 if is_gemma3(cfg) else DEFAULT_THETA
    notes.append(f"rope_theta is not given; using {default:g}, the config class's default")
    return default


def _head_dim(cfg: Mapping, notes: list[str]) -> int:
    if cfg.get("qk_rope_head_dim") is not None:  # DeepSeek MLA: the score's width is nope + rope
        nope = _number("qk_nope_head_dim", cfg.get("qk_nope_head_dim", 0), integer=True, lo=0, hi=MAX_HEAD_DIM)
        rope = _number("qk_rope_head_dim", cfg["qk_rope_head_dim"], integer=True, lo=2, hi=MAX_HEAD_DIM)
        return _number("qk_nope_head_dim + qk_rope_head_dim", nope + rope, integer=True, lo=2, hi=MAX_HEAD_DIM)
    if cfg.get("kv_channels") is not None:  # ChatGLM
        return _number("kv_channels", cfg["kv_channels"], integer=True, lo=2, hi=MAX_HEAD_DIM)
    if cfg.get("head_dim") is not None:
        return _number("head_dim", cfg["head_dim"], integer=True, lo=2, hi=MAX_HEAD_DIM)
    hk, hidden = _get(cfg, "hidden_size", "n_embd", "d_model")
    nk, heads = _get(cfg, "num_attention_heads", "n_head", "num_heads")
    if hidden is None or heads is None:
        raise ValueError("the config gives neither head_dim nor hidden_size and num_attention_heads; "
                         "RoPE's frequencies depend on the head dimension")
    hidden = _number(hk, hidden, integer=True, lo=2, hi=10**6)
    heads = _number(nk, heads, integer=True, lo=1, hi=10**4)
    if hidden % heads:
        raise ValueError(f"{hk} ({hidden}) is not divisible by {nk} ({heads}); give head_dim explicitly")
    d = hidden // heads
    notes.append(f"head_dim = {hk} / {nk} = {hidden} / {heads} = {d}")
    return _number("head_dim", d, integer=True, lo=2, hi=MAX_HEAD_DIM)


def _rotary_dim(cfg: Mapping, block: Mapping, head_dim: int, rope_type: str, notes: list[str]) -> int:
    if cfg.get("qk_rope_head_dim") is not None:
        r = int(cfg["qk_rope_head_dim"])
        notes.append(f"DeepSeek MLA: RoPE rotates qk_rope_head_dim = {r} channels of the {head_dim}-wide query/key "
                     f"(qk_nope_head_dim {head_dim - r} carry no position); the frequencies use {r}, as HF's head_dim = qk_rope_head_dim")
        return r
    if cfg.get("model_type") == "chatglm" or cfg.get("kv_channels") is not None and cfg.get("rope_ratio") is not None:
        r = head_dim // 2
        how = f"ChatGLM: RotaryEmbedding(kv_channels // 2) rotates {r}"
    elif cfg.get("rotary_dim") is not None:  # GPT-J: an explicit channel count
        r = _number("rotary_dim", cfg["rotary_dim"], integer=True, lo=2, hi=head_dim)
        how = f"rotary_dim = {r}"
    else:
        key, p = _get(block, "partial_rotary_factor")
        if p is None:
            key, p = _get(cfg, "partial_rotary_factor", "rotary_pct")
        if p is None:
            return head_dim
        p = _number(key, p, lo=0.0, hi=1.0, lo_open=True)
        if ROPE_TRAITS[rope_type].zero_pairs:
            notes.append(f"proportional RoPE: {int(p * head_dim // 2)} of {head_dim // 2} pairs rotate with theta_k = "
                         f"base^(-2k/{head_dim}); the other pairs have theta = 0 (they do not rotate)")
            return head_dim
        r = int(head_dim * p)  # HF: dim = int(head_dim * partial_rotary_factor)
        how = f"{key} = {p:g}: int({head_dim} x {p:g}) = {r}"
    if r < 2 or r % 2:
        raise ValueError(f"{how} channels, but RoPE needs an even rotary dimension of at least 2")
    if r < head_dim:
        notes.append(f"partial rotary: {how} of {head_dim} channels rotate, with theta_k = base^(-2k/{r}) as the model "
                     f"computes; the other {head_dim - r} channels pass through unrotated and add a position-independent "
                     "term to every score, which the score curves leave out")
    return r


def _rope_type(block: Mapping, notes: list[str]) -> str:
    rt, old = block.get("rope_type"), block.get("type")
    if rt is not None and old is not None and rt != old:
        notes.append(f"the block has rope_type {shown(rt, 30)} and type {shown(old, 30)}; using rope_type")
    rt = rt if rt is not None else old
    if rt is None:
        extra = set(block) - {"rope_theta", "partial_rotary_factor"}
        if extra:
            raise ValueError(f"the rope block has no 'rope_type' (v5) or 'type' (v4) key but sets {shown(', '.join(sorted(extra)), 80)}; "
                             f"add one of: {', '.join(SUPPORTED_TYPES)}")
        return "default"
    if not isinstance(rt, str):
        raise ValueError(f"rope_type must be a string, got {shown(rt, 40)}")
    if rt in ALIASES:
        note = ALIAS_NOTES.get(rt, "rope_type {alias!r} is read as {target!r}")
        notes.append(note.format(alias=rt, target=ALIASES[rt], sections=shown(block.get("mrope_section"), 40)))
        rt = ALIASES[rt]
    if rt not in SUPPORTED_TYPES:
        raise ValueError(f"unknown rope_type {shown(rt, 40)}; posenc computes: {', '.join(SUPPORTED_TYPES)}")
    if not ROPE_TRAITS[rt].scaled and block.get("mrope_section") is not None:
        notes.append("M-RoPE sections are set; for text tokens (equal position ids) this is plain RoPE, which is what is drawn")
    if ROPE_TRAITS[rt].config_note:
        notes.append(ROPE_TRAITS[rt].config_note)
    return rt


def _layout(cfg: Mapping, obj: Mapping, notes: list[str]) -> str:
    """The pairing layout: a GGUF file's own (its "gguf" block), else the family's (configlayers.FAMILY_LAYOUT)."""
    gguf = obj.get("gguf")
    if isinstance(gguf, Mapping) and gguf.get("layout") in ("interleaved", "half_split"):
        said = gguf.get("notes")
        notes.extend(bounded(str(n)) for n in (said[:20] if isinstance(said, list) else []))
        layout = layout_of(cfg, obj, [])
        if gguf["layout"] == "interleaved" and layout == "half_split":
            notes.append("llama.cpp's converter permuted the rows of q and k so that this file rotates interleaved pairs "
                         "(2i, 2i+1); transformers' GGUF loader undoes the permutation (half-split): the same scores")
        return gguf["layout"]
    return layout_of(cfg, obj, notes)


def _query_note(q: dict | None, served: int | None, notes: list[str]) -> None:
    if not q:
        return
    where = "every layer multiplies" if q["layers"] == "all" else "the NoPE layers (no RoPE) multiply"
    at = [p for p in (q["period"], served) if p]
    said = ", ".join(f"x {query_factor(q, p - 1 if p == served else p):.4f} at p = {p - 1 if p == served else p:,}" for p in at)
    notes.append(f"{q['kind']}: {where} the query at position p by {q['formula']} ({said}); every logit of that "
                 "query grows by it, which the curves (drawn at one scale) leave out")


def _name(obj: Mapping, cfg: Mapping) -> tuple[str, str | None]:
    mt = cfg.get("model_type") if isinstance(cfg.get("model_type"), str) else None
    arch = obj.get("architectures")
    for cand in (obj.get("_name_or_path"), arch[0] if isinstance(arch, list) and arch else None, mt):
        if isinstance(cand, str) and cand.strip():
            return cand.strip()[:80], (mt[:40] if mt else None)
    return "pasted config", None


# ----------------------------------------------------------------------------- entry point

def parse_model_config(config) -> ModelRope:
    """Parse a config.json (text, the lines of one, or a dict) into a ModelRope; ValueError says what is wrong."""
    try:
        return _parse(config)
    except NotRoPE:
        raise
    except ValueError as exc:
        raise ValueError(bounded(str(exc))) from None


def _parse(config) -> ModelRope:
    obj, wrapped = load_config(config)
    check_file(obj)
    notes: list[str] = ["read as the body of a JSON object (the braces were missing)"] if wrapped else []
    obj = meta_params(obj, notes)
    cfg = _text_config(obj, notes)
    check_rope(cfg, obj)
    block, local_block, source = _rope_block(cfg, notes)
    rope_type = _rope_type(block, notes)
    if isinstance(obj.get("gguf"), Mapping):
        source = "GGUF header: " + ("its rope.scaling keys" if block else "no rope.scaling keys (plain RoPE)")
    base = _base(cfg, block, notes)
    head_dim = _head_dim(cfg, notes)
    rotary_dim = _rotary_dim(cfg, block, head_dim, rope_type, notes)
    mk, max_pos = _get(cfg, "max_position_embeddings", "n_positions", "seq_length")
    if max_pos is not None:
        max_pos = _number(mk, max_pos, integer=True, lo=1, hi=MAX_CONTEXT)
    scaling, factor, trained = scaling_block(cfg, block, rope_type, max_pos, notes)
    layout, extra = _layout(cfg, obj, notes), 1.0
    if is_gemma3(cfg) and block.get("rope_type") is None and block.get("type") not in (None, "default"):
        notes.append(f"this Gemma 3 block spells its type as 'type' ({shown(block['type'], 20)}): transformers 5.24's Gemma3TextConfig "
                     "seeds full_attention with rope_type 'default' and only fills in defaults, so it runs this checkpoint "
                     f"unscaled; posenc applies the {rope_type} scaling the block names, as the checkpoint's authors wrote it")
    if cfg.get("qk_rope_head_dim") is not None and ROPE_TRAITS[rope_type].scaled and scaling and scaling.get("mscale_all_dim"):
        m = yarn_get_mscale(factor, float(scaling["mscale_all_dim"]))
        extra = m * m
        notes.append(f"DeepSeek multiplies its softmax scale 1/sqrt({head_dim}) by mscale(s, mscale_all_dim)^2 = "
                     f"(0.1 x {float(scaling['mscale_all_dim']):g} x ln {factor:g} + 1)^2 = {extra:.6f}: every logit grows by that factor")
    local = local_layers(cfg, local_block, head_dim, notes, _rope_type)
    served = max_pos or (int(round(trained * factor)) if trained else None)
    plan = layer_plan(cfg, obj, served, local, notes)
    q = query_scale(cfg, str(cfg.get("model_type") or obj.get("model_type") or ""))
    _query_note(q, served, notes)
    ratio = softmax_scale(cfg, head_dim, notes)
    try:  # the core checks every value's range (factor, beta_*, factor lists, ...)
        rope_frequencies(rotary_dim, base=base, scaling=scaling)
        if trained is not None:
            rope_frequencies(rotary_dim, base=base, scaling=scaling, seq_len=min(MAX_CONTEXT, int(trained * factor) + 1))
    except ValueError as exc:
        raise ValueError(f"the config's RoPE settings are out of range: {exc}") from None
    name, model_type = _name(obj, cfg)
    return ModelRope(name=name, model_type=model_type, head_dim=head_dim, rotary_dim=rotary_dim, base=base, rope_type=rope_type,
                     scaling=scaling, factor=float(factor), trained_length=trained, max_position_embeddings=max_pos, source=source,
                     notes=tuple(notes), layout=layout, logit_extra=float(extra), local=local, layers=plan,
                     softmax_ratio=float(ratio), query_scale=q)
