"""A pasted or uploaded ``config.json`` as bounded input: every limit is checked before any analysis.

``load_config(text_or_dict) -> dict`` parses with these caps, each answered with a short
ValueError naming the key and the allowed range (messages never exceed ``MAX_MESSAGE`` characters):

- size: at most ``MAX_CONFIG_BYTES`` (1 MiB) of text -- a config.json is a few kB (DeepSeek-V3's ~1.7 kB);
- nesting: at most ``MAX_DEPTH`` levels of objects and lists;
- numbers: NaN, Infinity and floats that overflow to infinity are refused where they stand, and
  integers beyond 2**53 (which no config field holds, and which float() cannot always take) too;
- lists: at most ``MAX_LIST`` entries (a LongRoPE factor list has head_dim / 2 <= 2048), and at
  most ``MAX_NODES`` values in all.

A dict is checked the same way (it may come from Python code rather than text).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

MAX_CONFIG_BYTES = 1024 * 1024
MAX_DEPTH = 16
MAX_LIST = 4096
MAX_NODES = 200_000
MAX_INT = 2**53
MAX_MESSAGE = 400


class _NonFinite:
    """A NaN / Infinity / overflowing float token, kept so the walk can name its key."""

    def __init__(self, text: str):
        self.text = text[:20]


def bounded(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message`` cut to ``limit`` characters (an error quoting user input stays short)."""
    return message if len(message) <= limit else message[: limit - 20] + " ... (message cut)"


def _float(text: str):
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


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
        raise ValueError(f"the file is not UTF-8 text (undecodable byte at offset {exc.start}); upload the model's config.json") from None


def _parse(body: str):
    return json.loads(body, parse_constant=_NonFinite, parse_float=_float)


def _loads(text: str) -> tuple[Any, bool]:
    """json.loads with the caps; a bare list of fields ``"a": 1, "b": 2`` is wrapped in {}."""
    if len(text) > MAX_CONFIG_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_CONFIG_BYTES:
        raise ValueError(f"the config text is over {MAX_CONFIG_BYTES // 2**20} MiB (the limit here); a config.json is a few kB -- "
                         "paste only the model's config.json")
    body = text.strip().lstrip("\ufeff")
    if not body:
        raise ValueError('the config is empty: paste a config.json (a JSON object such as {"rope_theta": 500000, ...})')
    try:
        return _parse(body), False
    except RecursionError:
        raise ValueError(f"the config is nested too deeply to be a config.json (the limit is {MAX_DEPTH} levels)") from None
    except ValueError as exc:
        first = exc
    if not body.startswith(("{", "[")):  # lines copied out of a config.json, without the braces
        try:
            return _parse("{" + body.rstrip(",") + "}"), True
        except (ValueError, RecursionError):
            pass
    if isinstance(first, json.JSONDecodeError):
        raise ValueError(f"the config is not valid JSON at line {first.lineno}, column {first.colno}: {first.msg}")
    if "digits" in str(first):  # Python refuses int() of more than 4300 digits
        raise ValueError(f"the config holds an integer of over 4,300 digits; config numbers are at most {MAX_INT:,}")
    raise ValueError(bounded(f"the config is not valid JSON: {first}"))


def _where(path: str) -> str:
    return path or "the config"


def _walk(value, path: str, depth: int, count: list[int]) -> None:
    count[0] += 1
    if count[0] > MAX_NODES:
        raise ValueError(f"the config holds over {MAX_NODES:,} values; a config.json holds a few hundred")
    if depth > MAX_DEPTH:
        raise ValueError(f"{_where(path)[:120]} is nested {depth} levels deep; the limit is {MAX_DEPTH}")
    if isinstance(value, _NonFinite):
        raise ValueError(f"{_where(path)[:120]} is {value.text}; config numbers must be finite")
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, int):
        if abs(value) > MAX_INT:
            raise ValueError(f"{_where(path)[:120]} is an integer of {len(str(abs(value)))} digits; config integers lie in "
                             f"[-{MAX_INT:,}, {MAX_INT:,}]")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{_where(path)[:120]} is {value!r}; config numbers must be finite")
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError(f"{_where(path)[:120]} has a key that is not a string ({type(k).__name__})")
            _walk(v, f"{path}.{k[:40]}" if path else k[:40], depth + 1, count)
        return
    if isinstance(value, (list, tuple)):
        if len(value) > MAX_LIST:
            raise ValueError(f"{_where(path)[:120]} is a list of {len(value):,} entries; the limit is {MAX_LIST:,} "
                             "(a LongRoPE factor list has head_dim / 2 entries)")
        for i, v in enumerate(value):
            _walk(v, f"{path}[{i}]", depth + 1, count)
        return
    raise ValueError(f"{_where(path)[:120]} is a {type(value).__name__}, which a config.json cannot hold")


def load_config(config) -> tuple[dict, bool]:
    """(the config as a dict, whether braces were added) after every cap above; ValueError otherwise."""
    if isinstance(config, Mapping):
        obj, wrapped = config, False
    elif isinstance(config, str):
        obj, wrapped = _loads(config)
    else:
        raise ValueError(f"the config must be config.json text (a str) or a dict, got {type(config).__name__}")
    if not isinstance(obj, Mapping):
        raise ValueError(f"the config must be a JSON object {{...}}, got a JSON {type(obj).__name__}")
    _walk(obj, "", 0, [0])
    return dict(obj), wrapped
