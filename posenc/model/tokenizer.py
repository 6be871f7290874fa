"""The tokenizer a GGUF file describes, built with Hugging Face's ``tokenizers`` (Rust: byte-level BPE, regex
pre-tokenization and special-token splitting as transformers runs them), from the file's own vocabulary and merges.

A GGUF holds no tokenizer.json: it stores the vocabulary (``tokenizer.ggml.tokens``), the merges, each token's type
and the names of the tokenizer model (``gpt2`` = byte-level BPE) and of its pre-tokenizer.  transformers' GGUF loader
(``transformers.integrations.gguf.gguf_tokenizer_mapping``, 5.x) builds a GPT-2 tokenizer from them: BPE on GPT-2's
byte alphabet, GPT-2's split regex (``ByteLevel(add_prefix_space=False)``) unless the file names a pre-tokenizer it
knows a regex for, control tokens (type 3) as special tokens matched whole, user-defined tokens (type 4) as added
tokens.  This module builds the same pipeline, so ``encode`` gives transformers' ids
(``tokenizer(text, add_special_tokens=False)``; ``tests/test_model_oracle.py`` checks them on stored prompts).

NOTE: for SmolLM2 (pre-tokenizer "smollm") this is GPT-2's regex, which keeps a run of digits together; the model's
original tokenizer.json splits digits one by one.  We reproduce transformers on the GGUF, as the tests require.
"""

from __future__ import annotations

from functools import lru_cache

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

_CONTROL, _USER_DEFINED = 3, 4
# The split regexes transformers knows for a GGUF pre-tokenizer name (the Llama 3 family); any other name keeps GPT-2's.
_LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
                 r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPLITS = {name: _LLAMA3_SPLIT for name in ("llama3", "llama-v3", "llama-bpe", "falcon3", "smaug-bpe", "dbrx")}


@lru_cache(maxsize=1)
def byte_alphabet() -> dict[int, str]:
    """GPT-2's map from the 256 bytes to printable characters (OpenAI's ``bytes_to_unicode``)."""
    bs = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    cs = bs[:]
    extra = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + extra)
            extra += 1
    return dict(zip(bs, map(chr, cs)))


def build(vocab: dict) -> Tokenizer:
    """A ``tokenizers.Tokenizer`` from ``weights.read_vocab``'s dict (byte-level BPE files only)."""
    if vocab.get("model") != "gpt2":
        raise ValueError(f"the GGUF tokenizer must be byte-level BPE (tokenizer.ggml.model 'gpt2'), got {vocab.get('model')!r}")
    spelling = byte_alphabet()
    alphabet = set(spelling.values())
    tokens = vocab["tokens"]
    # A token written outside the byte alphabet is respelled byte by byte, as transformers does.
    ids = {(t if set(t) <= alphabet else "".join(spelling[b] for b in t.encode("utf-8"))): i for i, t in enumerate(tokens)}
    merges = [tuple(m.split(" ")) for m in vocab["merges"]]
    tok = Tokenizer(models.BPE(vocab=ids, merges=merges, dropout=None, continuing_subword_prefix="",
                               end_of_word_suffix="", fuse_unk=False))
    split = SPLITS.get(vocab.get("pre") or "")
    if split is None:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)  # GPT-2's regex
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(split), behavior="isolated"),
                                                     pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    types = vocab.get("token_type") or []
    control = [AddedToken(t, normalized=False, special=True) for t, k in zip(tokens, types) if k == _CONTROL and set(t) <= alphabet]
    if control:
        tok.add_special_tokens(control)
    user = [AddedToken(t, normalized=False, special=False) for t, k in zip(tokens, types) if k == _USER_DEFINED and t in ids]
    if user:
        tok.add_tokens(user)
    return tok
