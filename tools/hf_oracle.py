"""Generate reference test vectors for posenc by running Hugging Face transformers' own code.

This script is run by hand, never by CI (CI has neither torch nor transformers). Its output,
``tests/data/hf_oracle.json``, is committed and read by the numpy test-suite.

How to run (no internet needed except the package registry)::

    python3 -m venv /tmp/hfvenv
    /tmp/hfvenv/bin/pip install /path/to/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl   # any CPU torch
    /tmp/hfvenv/bin/pip install "transformers==5.*" numpy
    /tmp/hfvenv/bin/python tools/hf_oracle.py            # writes tests/data/hf_oracle.json
    /tmp/hfvenv/bin/python tools/hf_oracle.py OUT.json   # or to another path

Last run with: transformers 5.24.0, torch 2.13.0+cpu, numpy 2.4.6, CPython 3.11.7 (x86_64 Linux).
The exact versions used are also stored at the top of the JSON (``transformers_version``,
``torch_version``, ``numpy_version``).

What is recorded (every float is ``float(x)`` of a float32 torch value, i.e. exact float32 -> float64):

* ``rope_init``   -- ``ROPE_INIT_FUNCTIONS[rope_type](config, device=None, seq_len=...)`` (and
  ``LlamaRotaryEmbedding.compute_default_rope_parameters(config)`` for "default"), with a ``LlamaConfig``
  built as ``LlamaConfig(head_dim=..., max_position_embeddings=..., rope_parameters=<dict>)``.
  Each case stores the dict exactly as passed and the dict after HF's ``standardize_rope_params``.
* ``apply_rope``  -- Llama ``apply_rotary_pos_emb`` (rotate_half layout) with cos/sin from
  ``LlamaRotaryEmbedding.forward`` and GPT-J ``apply_rotary_pos_emb`` (interleaved layout) with
  ``create_sinusoidal_positions``.
* ``t5_bucket``   -- ``T5Attention._relative_position_bucket``.
* ``alibi``       -- BLOOM ``_get_alibi_slopes`` (cross-checked with ``build_alibi_tensor`` and, to float32
  rounding, MPT ``build_mpt_alibi_tensor``).
* ``sinusoidal``  -- DistilBERT ``_create_sinusoidal_embeddings`` (interleaved sin/cos, float32).
"""

from __future__ import annotations

import copy
import json
import logging
import os
import platform
import sys

import numpy as np
import torch
import transformers
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.bloom.modeling_bloom import _get_alibi_slopes, build_alibi_tensor
from transformers.models.distilbert.modeling_distilbert import _create_sinusoidal_embeddings
from transformers.models.gptj import modeling_gptj
from transformers.models.llama import modeling_llama
from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor
from transformers.models.t5.modeling_t5 import T5Attention

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.normpath(os.path.join(HERE, "..", "tests", "data", "hf_oracle.json"))


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
class _Capture(logging.Handler):
    """Collects transformers' logger warnings so each case can record what HF complained about."""

    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.records: list[str] = []

    def emit(self, record):
        self.records.append(record.getMessage())


_CAPTURE = _Capture()
logging.getLogger("transformers").addHandler(_CAPTURE)


def _take_warnings() -> list[str]:
    out = list(_CAPTURE.records)
    _CAPTURE.records.clear()
    return out


def flist(t) -> list[float]:
    a = t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    assert a.dtype == np.float32, a.dtype
    return [float(v) for v in a.reshape(-1)]


def nested(t) -> list:
    a = t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    assert a.dtype == np.float32, a.dtype
    return a.astype(np.float64).tolist()  # float32 -> float64 is exact


def make_config(head_dim: int, max_pos: int, rope_parameters: dict) -> LlamaConfig:
    return LlamaConfig(
        hidden_size=head_dim * 2,
        num_attention_heads=2,
        head_dim=head_dim,
        max_position_embeddings=max_pos,
        rope_parameters=copy.deepcopy(rope_parameters),
        num_hidden_layers=1,
        intermediate_size=8,
        vocab_size=8,
    )


def rope_case(name, head_dim, max_pos, rope_parameters, seq_len=None, extra=None):
    """Call HF's init function for rope_parameters['rope_type'] and record inputs/outputs."""
    _take_warnings()
    passed = copy.deepcopy(rope_parameters)
    config = make_config(head_dim, max_pos, rope_parameters)
    rope_type = config.rope_parameters["rope_type"]
    if rope_type == "default":
        fn_name = "LlamaRotaryEmbedding.compute_default_rope_parameters"
        inv_freq, attention_factor = modeling_llama.LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    else:
        fn = ROPE_INIT_FUNCTIONS[rope_type]
        fn_name = f"ROPE_INIT_FUNCTIONS[{rope_type!r}] = {fn.__name__}"
        inv_freq, attention_factor = fn(config, None, seq_len=seq_len)
    case = {
        "name": name,
        "rope_type": rope_type,
        "function": fn_name,
        "head_dim": head_dim,
        "base": passed.get("rope_theta"),
        "rope_parameters": passed,
        "rope_parameters_standardized": copy.deepcopy(config.rope_parameters),
        "seq_len": seq_len,
        "max_position_embeddings": max_pos,
        "inv_freq": flist(inv_freq),
        "attention_factor": float(attention_factor),
    }
    if extra:
        case.update(extra)
    case["hf_warnings"] = _take_warnings()
    return case


# --------------------------------------------------------------------------------------------
# 1. rope_init
# --------------------------------------------------------------------------------------------
def gen_rope_init() -> list[dict]:
    cases = []

    # default
    for hd, base in [(8, 1e4), (16, 1e4), (64, 1e4), (128, 1e4), (128, 5e5)]:
        cases.append(rope_case(f"default_d{hd}_b{base:g}", hd, 2048, {"rope_type": "default", "rope_theta": base}))

    # linear (position interpolation)
    for hd in (16, 128):
        for s in (2.0, 4.0, 8.0):
            rp = {"rope_type": "linear", "rope_theta": 1e4, "factor": s}
            cases.append(rope_case(f"linear_d{hd}_s{s:g}", hd, 2048, rp))

    # dynamic NTK: trained length is config.max_position_embeddings; seq_len clamped up to it.
    for hd in (16, 128):
        for s in (2.0, 4.0):
            for L in (512, 2048, 2049, 4096, 8192, 32768):
                rp = {"rope_type": "dynamic", "rope_theta": 1e4, "factor": s}
                # Same call with seq_len as a 0-d int64 tensor, as LlamaRotaryEmbedding.forward does
                # (seq_len = max(position_ids) + 1); then the base update runs in float32 torch math.
                cfg = make_config(hd, 2048, rp)
                inv_t, _ = ROPE_INIT_FUNCTIONS["dynamic"](cfg, None, seq_len=torch.tensor(L))
                c = rope_case(f"dynamic_d{hd}_s{s:g}_L{L}", hd, 2048, rp, seq_len=L)
                c["inv_freq_seq_len_as_tensor"] = flist(inv_t)
                cases.append(c)
    # seq_len None -> uses max_position_embeddings (i.e. plain RoPE)
    cases.append(
        rope_case("dynamic_d16_s2_Lnone", 16, 2048, {"rope_type": "dynamic", "rope_theta": 1e4, "factor": 2.0})
    )
    # original_max_position_embeddings inside rope_parameters is IGNORED by dynamic (only warned about)
    cases.append(
        rope_case(
            "dynamic_d16_s2_L4096_orig_key_ignored",
            16,
            2048,
            {"rope_type": "dynamic", "rope_theta": 1e4, "factor": 2.0, "original_max_position_embeddings": 1024},
            seq_len=4096,
            extra={"note": "same inv_freq as dynamic_d16_s2_L4096: trained length is max_position_embeddings"},
        )
    )

    # yarn
    def yarn(name, hd, s, orig, max_pos=None, **kw):
        rp = {"rope_type": "yarn", "rope_theta": kw.pop("base", 1e4), "factor": s,
              "original_max_position_embeddings": orig}
        rp.update(kw)
        if max_pos is None:
            max_pos = int((s if s is not None else 1) * orig)
        cases.append(rope_case(name, hd, max_pos, rp))

    yarn("yarn_d16_s4_o2048", 16, 4.0, 2048)
    yarn("yarn_d16_s4_o2048_notrunc", 16, 4.0, 2048, truncate=False)
    for hd in (64, 128):
        for s in (2.0, 4.0, 8.0, 16.0, 32.0):
            for orig in (2048, 4096, 8192):
                yarn(f"yarn_d{hd}_s{s:g}_o{orig}", hd, s, orig)
    yarn("yarn_d64_s4_o2048_notrunc", 64, 4.0, 2048, truncate=False)
    yarn("yarn_d128_s16_o4096_notrunc", 128, 16.0, 4096, truncate=False)
    yarn("yarn_d64_s4_o2048_beta16_2", 64, 4.0, 2048, beta_fast=16, beta_slow=2)
    yarn("yarn_d64_s4_o2048_beta64_1", 64, 4.0, 2048, beta_fast=64, beta_slow=1)
    yarn("yarn_d128_s8_o4096_beta16_2_notrunc", 128, 8.0, 4096, beta_fast=16, beta_slow=2, truncate=False)
    yarn("yarn_d64_s4_o2048_attn1", 64, 4.0, 2048, attention_factor=1.0)
    yarn("yarn_d64_s4_o2048_attn0.5", 64, 4.0, 2048, attention_factor=0.5)
    yarn("yarn_d64_s4_o2048_mscale1_all1", 64, 4.0, 2048, mscale=1.0, mscale_all_dim=1.0)
    yarn("yarn_d64_s4_o2048_mscale0.707_all1", 64, 4.0, 2048, mscale=0.707, mscale_all_dim=1.0)
    yarn("yarn_d64_s4_o2048_mscale1_all0.707", 64, 4.0, 2048, mscale=1.0, mscale_all_dim=0.707)
    yarn("yarn_d64_s4_o2048_mscale0.707_only", 64, 4.0, 2048, mscale=0.707)
    yarn("yarn_d64_s4_o2048_mscale1_all0", 64, 4.0, 2048, mscale=1.0, mscale_all_dim=0.0)
    # DeepSeek-V3-like (qk_rope_head_dim 64)
    yarn("yarn_deepseekv3_d64_s40_o4096", 64, 40.0, 4096, beta_fast=32, beta_slow=1, mscale=1.0,
         mscale_all_dim=1.0)
    # max_position_embeddings does not matter when factor is given (here implicit factor 1 -> no warning)
    yarn("yarn_d64_s4_o2048_maxpos2048", 64, 4.0, 2048, max_pos=2048)
    # factor None -> factor = max_position_embeddings / original_max_position_embeddings (DeepSeek note)
    yarn("yarn_d64_factorNone_o2048_maxpos8192", 64, None, 2048, max_pos=8192)
    yarn("yarn_d64_s4_o2048_base5e5", 64, 4.0, 2048, base=5e5)

    # llama3
    def llama3(name, hd, base, s, lo, hi, orig, max_pos=None):
        rp = {"rope_type": "llama3", "rope_theta": base, "factor": s, "low_freq_factor": lo,
              "high_freq_factor": hi, "original_max_position_embeddings": orig}
        cases.append(rope_case(name, hd, max_pos or int(s * orig), rp))

    llama3("llama3_1_d128", 128, 5e5, 8.0, 1.0, 4.0, 8192, max_pos=131072)
    llama3("llama3_2_d64", 64, 5e5, 32.0, 1.0, 4.0, 8192, max_pos=131072)
    llama3("llama3_d16_s4_o256_band", 16, 1e4, 4.0, 1.0, 4.0, 256)
    llama3("llama3_d16_s4_o1024_lo1_hi8_band", 16, 1e4, 4.0, 1.0, 8.0, 1024)
    llama3("llama3_d64_s8_o2048_lo2_hi16_band", 64, 1e4, 8.0, 2.0, 16.0, 2048)

    # longrope
    lr = {"rope_type": "longrope", "rope_theta": 1e4, "original_max_position_embeddings": 4096,
          "short_factor": [1.0, 1.0, 1.0, 1.0], "long_factor": [1.0, 2.0, 4.0, 8.0]}
    for L in (None, 4096, 4097, 8192):
        cases.append(rope_case(f"longrope_d8_L{L}", 8, 131072, lr, seq_len=L))
    lr_f = dict(lr, factor=8.0)
    cases.append(rope_case("longrope_d8_factor8_L8192", 8, 131072, lr_f, seq_len=8192))
    lr_a = dict(lr, attention_factor=1.25)
    cases.append(rope_case("longrope_d8_attn1.25_L8192", 8, 131072, lr_a, seq_len=8192))
    return cases


# --------------------------------------------------------------------------------------------
# 2. apply_rope
# --------------------------------------------------------------------------------------------
POSITIONS = [0, 1, 2, 3, 100, 1000, 4095]


def gen_apply_rope() -> dict:
    rng = np.random.default_rng(0)
    xs = {hd: rng.standard_normal((2, len(POSITIONS), hd)).astype(np.float32) for hd in (8, 64)}
    pos = torch.tensor(POSITIONS, dtype=torch.long)[None, :]  # (batch=1, seq)
    cases = []

    def llama(name, hd, max_pos, rp):
        _take_warnings()
        cfg = make_config(hd, max_pos, rp)
        emb = modeling_llama.LlamaRotaryEmbedding(cfg)
        x = torch.from_numpy(xs[hd])[None]  # (batch=1, heads=2, seq=7, hd)
        cos, sin = emb(x, pos)  # (1, 7, hd), already multiplied by attention_scaling
        q, _ = modeling_llama.apply_rotary_pos_emb(x, x, cos, sin)
        cases.append({
            "name": name,
            "layout": "half_split (llama rotate_half)",
            "head_dim": hd,
            "rope_parameters": copy.deepcopy(rp),
            "max_position_embeddings": max_pos,
            "positions": POSITIONS,
            "x": f"x{hd}",
            "inv_freq_used": flist(emb.inv_freq),
            "attention_scaling": float(emb.attention_scaling),
            "out": nested(q[0]),
            "hf_warnings": _take_warnings(),
        })
        if hd <= 8:  # cos/sin tables only for the small case (size budget); they follow from inv_freq_used
            cases[-1]["cos"] = nested(cos[0])
            cases[-1]["sin"] = nested(sin[0])

    def gptj(name, hd):
        table = modeling_gptj.create_sinusoidal_positions(4096, hd)  # (4096, hd): [sin | cos]
        sincos = table[pos]  # (1, 7, hd)
        sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
        x = torch.from_numpy(xs[hd]).permute(1, 0, 2)[None]  # GPT-J layout (batch, seq, heads, hd)
        out = modeling_gptj.apply_rotary_pos_emb(x, sin, cos)[0].permute(1, 0, 2)  # back to (heads, seq, hd)
        cases.append({
            "name": name,
            "layout": "interleaved (gptj rotate_every_two)",
            "head_dim": hd,
            "base": 10000.0,
            "positions": POSITIONS,
            "x": f"x{hd}",
            "out": nested(out),
        })
        if hd <= 8:
            cases[-1]["sin_half"] = nested(sin[0])  # (7, hd/2), one value per pair
            cases[-1]["cos_half"] = nested(cos[0])

    for hd in (8, 64):
        llama(f"llama_default_d{hd}", hd, 8192, {"rope_type": "default", "rope_theta": 1e4})
        gptj(f"gptj_d{hd}", hd)
    llama("llama_yarn_d64_s4_o2048", 64, 8192,
          {"rope_type": "yarn", "rope_theta": 1e4, "factor": 4.0, "original_max_position_embeddings": 2048})
    # dynamic via the real forward path: seq_len = max(position_ids)+1 = 4096 > max_position_embeddings 2048
    llama("llama_dynamic_d64_s2_maxpos2048", 64, 2048, {"rope_type": "dynamic", "rope_theta": 1e4, "factor": 2.0})
    cases[-1]["note"] = ("forward recomputes inv_freq with seq_len = max(position_ids)+1 = 4096 "
                         "(0-d int64 tensor) because it exceeds max_position_embeddings=2048")
    return {
        "positions": POSITIONS,
        "x8": nested(torch.from_numpy(xs[8])),
        "x64": nested(torch.from_numpy(xs[64])),
        "x_recipe": "np.random.default_rng(0); x8 = rng.standard_normal((2,7,8)).astype(float32); then "
                    "x64 = rng.standard_normal((2,7,64)).astype(float32); x shape = (heads, positions, head_dim). "
                    "Each case's 'x' names the key (x8/x64) holding its input; 'out' has the same shape.",
        "cases": cases,
    }


# --------------------------------------------------------------------------------------------
# 3. t5_bucket
# --------------------------------------------------------------------------------------------
def gen_t5() -> list[dict]:
    rel = list(range(-300, 301)) + [-20000, -5000, -1000, 1000, 5000, 20000]
    rel_t = torch.tensor(rel, dtype=torch.long)
    cases = []
    for bidir in (True, False):
        for nb, md in [(32, 128), (8, 20), (16, 64), (64, 256), (2, 8), (4, 4)]:
            case = {"bidirectional": bidir, "num_buckets": nb, "max_distance": md, "relative_position": rel}
            try:
                b = T5Attention._relative_position_bucket(rel_t, bidirectional=bidir, num_buckets=nb,
                                                          max_distance=md)
                case["bucket"] = [int(v) for v in b.tolist()]
            except Exception as e:  # noqa: BLE001 -- record HF's failure as the reference behaviour
                # e.g. bidirectional, num_buckets=2: half = 1, max_exact = 1 // 2 = 0 -> math.log(md / 0)
                case["bucket"] = None
                case["error"] = f"{type(e).__name__}: {e}"
            cases.append(case)
    return cases


# --------------------------------------------------------------------------------------------
# 4. alibi
# --------------------------------------------------------------------------------------------
HEADS = list(range(1, 41)) + [48, 64, 96, 112, 128]


def gen_alibi() -> list[dict]:
    bloom = []
    worst = 0.0
    for n in HEADS:
        s = _get_alibi_slopes(n, torch.device("cpu"))
        # slopes as they appear inside build_alibi_tensor: position 1 of a 2-token mask
        t = build_alibi_tensor(torch.ones(1, 2, dtype=torch.long), n, torch.float32)  # (n, 1, 2)
        assert torch.equal(t[:, 0, 1], s), n
        bloom.append({"n_heads": n, "slopes": flist(s)})
        # MPT builds the same slopes in the same head order (alibi_bias_max=8), differing only by float32 rounding
        m = -build_mpt_alibi_tensor(n, 2)[:, 0, 0]  # (n, 1, 2) = slopes * [-1, 0]
        worst = max(worst, float(torch.max(torch.abs(m / s - 1))))
    assert worst < 2e-6, worst
    NOTES["alibi"] = ("BLOOM _get_alibi_slopes, float32. MPT build_mpt_alibi_tensor (alibi_bias_max=8) gives the "
                      f"same slopes in the same head order for every n here, max rel diff {worst:.3g} (float32 "
                      "rounding: pow(base,k) vs 1/2**(k*8/n)); not stored separately.")
    return bloom


# --------------------------------------------------------------------------------------------
# 5. sinusoidal
# --------------------------------------------------------------------------------------------
def gen_sinusoidal() -> list[dict]:
    cases = []
    for n, d in [(6, 8), (3, 5), (50, 64)]:
        out = torch.empty(n, d, dtype=torch.float32)
        _create_sinusoidal_embeddings(n_pos=n, dim=d, out=out)
        cases.append({"n_pos": n, "dim": d, "dtype": "float32",
                      "layout": "interleaved: col 2j = sin(p/10000^(2j/d)), col 2j+1 = cos(p/10000^(2j/d))",
                      "table": nested(out)})
    return cases


# --------------------------------------------------------------------------------------------
NOTES = {
    "precision": "HF computes everything in float32 torch; every float here is an exact float32 value. "
                 "inv_freq/slopes/tables match float64 formulas to rel 1e-6. apply_rope 'out' at position 4095 "
                 "differs from a float64 evaluation by up to ~3.4e-4 absolute (float32 angle pos*inv_freq); "
                 "use atol ~5e-4 there, or emulate float32 angles (then ~5e-7, GPT-J ~1.2e-4 from pow rounding).",
    "config": "LlamaConfig(head_dim=D, hidden_size=2*D, num_attention_heads=2, max_position_embeddings=M, "
              "rope_parameters=<dict>); rope_theta lives inside rope_parameters (v5).",
    "default": "inv_freq = 1/base**(arange(0,D,2)/D); attention_factor 1.0",
    "linear": "inv_freq = default / factor; attention_factor 1.0",
    "dynamic": "Trained length = config.max_position_embeddings (NOT original_max_position_embeddings, which is "
               "ignored). seq_len=None -> max_position_embeddings; otherwise seq_len = max(seq_len, "
               "max_position_embeddings). base' = base * (factor*seq_len/max_pos - (factor-1)) ** (D/(D-2)). "
               "In LlamaRotaryEmbedding.forward, seq_len = max(position_ids)+1 (a tensor, float32 math -> "
               "'inv_freq_seq_len_as_tensor'), recomputed only when it exceeds the cached length.",
    "yarn": "factor = rope_parameters['factor'] (if None: max_position_embeddings/original_max_position_embeddings). "
            "Correction range uses original_max_position_embeddings only; max_position_embeddings otherwise unused "
            "(only a warning if max_pos/orig != factor and != 1). low/high = find_correction_dim(beta_fast / beta_slow), "
            "floor/ceil unless truncate False, clamped to [0, D-1]; ramp = clip((arange(D/2)-low)/(high-low),0,1) "
            "(high+=0.001 if equal); inv_freq = interp*ramp + extrap*(1-ramp). beta_fast/slow default 32/1 (`or`, so 0 -> "
            "default). attention_factor: explicit value if given; else if mscale and mscale_all_dim both truthy: "
            "get_mscale(s,mscale)/get_mscale(s,mscale_all_dim); else 0.1*ln(s)+1 (1.0 if s<=1).",
    "llama3": "wavelen = 2*pi/inv_freq; wavelen < orig/high -> unchanged; wavelen > orig/low -> /factor; otherwise "
              "(both ends inclusive) smooth = (orig/wavelen - low)/(high - low), "
              "(1-smooth)*inv/factor + smooth*inv. attention_factor 1.0",
    "longrope": "ext = long_factor if seq_len and seq_len > original_max_position_embeddings else short_factor "
                "(seq_len None or == orig -> short); inv_freq = 1/(ext * base**(arange(0,D,2)/D)). "
                "factor default = max_position_embeddings/original_max_position_embeddings; attention_factor default "
                "= sqrt(1 + ln(factor)/ln(orig)) (1.0 if factor <= 1).",
    "ntk_aware_static": "No HF key in v5 nor in v4.44 (ROPE_INIT_FUNCTIONS 4.44: default, linear, dynamic, yarn, "
                        "longrope, llama3). Not recorded.",
    "v4_44_differences": "transformers 4.44.2 yarn used config.max_position_embeddings (not "
                         "original_max_position_embeddings) for the correction range, always truncated, had no "
                         "mscale/mscale_all_dim, and attention_factor default 0.1*ln(s)+1. Not recorded.",
    "t5_bucket": "T5Attention._relative_position_bucket(relative_position=memory-query, bidirectional, num_buckets, "
                 "max_distance) on int64 tensors.",
}


def main(out_path: str) -> None:
    torch.manual_seed(0)
    bloom = gen_alibi()
    data = {
        "generator": "tools/hf_oracle.py",
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "numpy_version": np.__version__,
        "python_version": platform.python_version(),
        "notes": NOTES,
        "rope_init": gen_rope_init(),
        "apply_rope": gen_apply_rope(),
        "t5_bucket": gen_t5(),
        "alibi": bloom,
        "sinusoidal": gen_sinusoidal(),
    }
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w") as f:
        f.write(text)
        f.write("\n")
    print(f"wrote {out_path}: {len(text) / 1024:.1f} KiB")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUT)
