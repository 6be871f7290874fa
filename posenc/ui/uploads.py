"""Bring your own learned position table: upload once, use it on every page of this session.

The bytes are parsed by posenc.io (never unpickled, size-capped, every malformed file answered
with a clear message).  The parsed table is kept in a process-wide store keyed by the SHA-256 of
its bytes (read-only, least-recently-used, capped in bytes), while *which* tables a browser
session may list lives in that session's own state, so one session never sees another's uploads.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import streamlit as st

from posenc.io import uploads as pio
from posenc.registry import SCHEMES
from posenc.ui.cache import _resolve

PREFIX = "upload:"
STORE_MAX_BYTES = 512 * 1024 * 1024
_SESSION = "posenc_uploads"
_LOCK = threading.Lock()


@dataclass(frozen=True)
class TableMeta:
    label: str
    sha256: str
    shape: tuple[int, int]
    source: str
    tensor: str | None
    dtype: str


@st.cache_resource(show_spinner=False)
def _store() -> OrderedDict[str, np.ndarray]:
    return OrderedDict()


def _put(sha: str, table: np.ndarray) -> None:
    store = _store()
    table = np.array(table, dtype=np.float64)  # own copy
    table.setflags(write=False)
    with _LOCK:
        store[sha] = table
        store.move_to_end(sha)
        while sum(a.nbytes for a in store.values()) > STORE_MAX_BYTES and len(store) > 1:
            store.popitem(last=False)


def _get(sha: str) -> np.ndarray:
    store = _store()
    with _LOCK:
        table = store.get(sha)
        if table is not None:
            store.move_to_end(sha)
    if table is None:
        raise ValueError("this uploaded table is no longer in the server's memory (it restarted or evicted it); upload it again")
    return table


def session_tables() -> dict[str, TableMeta]:
    """This browser session's uploaded tables: label -> TableMeta."""
    return dict(st.session_state.get(_SESSION, {}))


def upload_options() -> list[str]:
    """"upload:<label>" for each of this session's uploads."""
    return [PREFIX + label for label in session_tables()]


def scheme_options() -> list[str]:
    """Registry keys plus "upload:<label>" for each of this session's uploads."""
    return list(SCHEMES) + upload_options()


def is_upload(option: str) -> bool:
    return isinstance(option, str) and option.startswith(PREFIX)


def upload_label(option: str) -> str:
    return option[len(PREFIX):]


def table_call(fn: Callable, label: str, *args, **kwargs):
    """fn(table, *args, **kwargs) for this session's upload ``label``, cached on its SHA-256."""
    meta = session_tables().get(label)
    if meta is None:
        raise ValueError(f"no uploaded table named {label!r} in this session; upload it on the Learned tables page")
    return _table_call(f"{fn.__module__}:{fn.__qualname__}", meta.sha256, tuple(args), tuple(sorted(kwargs.items())))


@st.cache_data(max_entries=64, show_spinner=False)
def _table_call(qualname: str, sha: str, args: tuple, kwargs: tuple):
    return _resolve(qualname)(_get(sha), *args, **dict(kwargs))


def safe_table_call(fn: Callable, label: str, *args, **kwargs):
    """table_call, but a ValueError becomes an on-page error and the result is None."""
    try:
        return table_call(fn, label, *args, **kwargs)
    except ValueError as exc:
        st.error(str(exc), icon=":material/error:")
        return None


def upload_widget(*, key: str = "upload", container=None) -> None:
    """File uploader for a learned position table (.npy / .safetensors) with a tensor picker."""
    c = container or st
    box = c.container(border=True)
    box.markdown(":material/upload_file: **Bring your own table** — a learned position table as `.npy` "
                 f"or `.safetensors` (at most {pio.MAX_UPLOAD_BYTES // 2**20} MB; never unpickled).")
    # type=None: any file reaches our loader, which names what is wrong (a .pt checkpoint gets
    # "pickle checkpoints are refused") instead of Streamlit's bare type error
    up = box.file_uploader("Upload a position table", type=None, key=key, label_visibility="collapsed")
    if up is not None:
        _ingest(up, key, box)
    tables = session_tables()
    if tables:
        listed = "; ".join(f"`{PREFIX}{t.label}` {t.shape[0]}×{t.shape[1]}" for t in tables.values())
        box.caption(f"In this session: {listed}. They appear on the Learned, Similarity and Compare pages.")
        if box.button("Forget my uploads", key=f"{key}_forget", icon=":material/delete:"):
            st.session_state[_SESSION] = {}
            st.rerun()


def _ingest(up, key: str, box) -> None:
    data = up.getvalue()
    tensor = None
    if up.name.lower().endswith(".safetensors"):
        try:
            names = pio.safetensors_tensor_names(data, tables_only=True)
        except ValueError as exc:
            box.error(f"{up.name!r}: {exc}", icon=":material/error:")
            return
        if not names:
            box.error(f"{up.name!r} holds no 2-D float tensor; a position table has shape (max_len, d_model).", icon=":material/error:")
            return
        suggested = [n for n in names if n.endswith(("wpe.weight", "position_embeddings.weight"))]
        default = names.index(suggested[0]) if suggested else 0
        tensor = box.selectbox("Tensor", names, index=default, key=f"{key}_tensor",
                               help="Suggested names: " + ", ".join(pio.SUGGESTED_TENSOR_NAMES[:4]))
    try:
        table, info = pio.load_position_table(data, up.name, tensor)
    except ValueError as exc:
        box.error(str(exc), icon=":material/error:")
        return
    sha = hashlib.sha256(data + b"\0" + (tensor or "").encode()).hexdigest()
    label = up.name if tensor is None else f"{up.name}:{tensor}"
    _put(sha, table)
    uploads = dict(st.session_state.get(_SESSION, {}))
    uploads[label] = TableMeta(label, sha, (info["max_len"], info["d_model"]), up.name, tensor, info["dtype"])
    st.session_state[_SESSION] = uploads
    box.success(f"Loaded `{label}`: {info['max_len']} positions × {info['d_model']} dims ({info['dtype']}).",
                icon=":material/check_circle:")
