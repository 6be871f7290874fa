"""Bring your own learned position table: upload once, use it on every page, reopen it from a link.

The bytes are parsed by posenc.io (never unpickled, size-capped, every malformed file answered with a
clear message) and checked once against the one definition of a valid table
(``posenc.io.uploads.position_table``), so every page can analyse every table it lists.  The parsed
table is kept, in its stored float dtype and read-only, in a process-wide store keyed by the SHA-256
of its bytes; *which* tables a browser session lists lives in that session's own state, so one
session never sees another's uploads -- unless it is sent a link that names one: a table's label
ends in the first 12 hex digits of its hash (``walk.npy · 3f2a9c1b0d4e``), and a link carrying such a
label (a reload, a shared link) lists that table again while this server process still holds it.

Memory: the store holds at most ``STORE_MAX_BYTES`` in total (least recently used evicted first) and
a session lists at most ``SESSION_MAX_BYTES`` (its oldest upload forgotten first); either way the
user is told, and a link to a table that is gone says so plainly.  The raw file leaves Streamlit's
uploader as soon as it is no longer needed (``posenc.ui.compat.release_upload``): at once when it is
refused (the uploader is then emptied and the message kept), and once a ``.npy`` table is parsed; a
``.safetensors`` file stays while its tensor picker is shown.  Whatever arrives at Streamlit's upload
endpoint is bounded per session and per worker besides (``compat.guard_uploads``).  An upload is parsed
once, not on every rerun; a ``.safetensors`` header is read once per content (``_tensor_names``) and its
picker lists at most ``MAX_TENSOR_OPTIONS`` tensors.  A table whose values could overflow when squared
(|x| > ``MAX_ABS_VALUE``) is refused at upload, with the limit named.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import streamlit as st

from posenc.io import uploads as pio
from posenc.io.gguf import config_text
from posenc.registry import SCHEMES, UPLOAD_PREFIX, upload_key
from posenc.registry import upload_label as _label_of
from posenc.ui import compat, md
from posenc.ui.cache import _resolve, compute_slot

PREFIX = UPLOAD_PREFIX  # an upload's option beside the registry keys: posenc.registry.upload_key
STORE_MAX_BYTES = 256 * 2**20  # every session's tables together
SESSION_MAX_BYTES = 128 * 2**20  # one session's tables (a 50 MB bfloat16 file is 100 MB as float32)
HASH_SHOWN = 12  # hex digits of the SHA-256 in a label: 48 bits, unguessable from a link
_SESSION = "posenc_uploads"  # session state: {label: TableMeta}
_ID = "_posenc_session_id"
_DONE = "_posenc_upload_done"  # session state: {uploader key: (file id, tensor)} already parsed
_SAID = "_posenc_upload_said"  # session state: messages to show once, next to the uploader
_GONE = "_posenc_upload_gone_labels"  # session state: {label: sha256} of this session's tables the store let go
_GEN = "_posenc_upload_gen"  # session state: {uploader key: generation}, bumped to empty an uploader after a refusal
_NAMES_OF = "_posenc_upload_names"  # session state: {file id: SHA-256 of its bytes}, hashed once per upload
MAX_TENSOR_OPTIONS = 1_000  # tensors a .safetensors picker lists (the suggested names first)
MAX_ABS_VALUE = 1e150  # |x| of any value: every square is below 1e300, and a sum of 2**24 of them stays finite
_NAMES: OrderedDict[str, tuple[list[str], int]] = OrderedDict()  # SHA-256 -> (listed names, how many in all)
_NAMES_KEPT = 32
_LOCK = threading.Lock()
_LABEL_HASH = re.compile(rf"· ([0-9a-f]{{{HASH_SHOWN}}})$")


@dataclass(frozen=True)
class TableMeta:
    label: str
    sha256: str
    shape: tuple[int, int]
    source: str
    tensor: str | None
    dtype: str
    nbytes: int = 0
    added: float = field(default_factory=time.monotonic)


@dataclass
class _Entry:
    table: np.ndarray  # (max_len, d_model), stored float dtype, read-only
    meta: TableMeta
    holders: set = field(default_factory=set)  # ids of the sessions that list it


@st.cache_resource(show_spinner=False)
def _store() -> OrderedDict[str, _Entry]:
    return OrderedDict()


def _session_id() -> str:
    if _ID not in st.session_state:
        st.session_state[_ID] = uuid.uuid4().hex
    return st.session_state[_ID]


def store_bytes() -> int:
    """Bytes of every table the server holds for all sessions (at most STORE_MAX_BYTES)."""
    with _LOCK:
        return sum(e.table.nbytes for e in _store().values())


def _put(sha: str, table: np.ndarray, meta: TableMeta | None = None, *, own: bool = False) -> list[TableMeta]:
    """Keep ``table`` under ``sha`` (read-only; copied unless ``own``); return the entries evicted to stay in budget."""
    store = _store()
    table = np.ascontiguousarray(table) if own else np.array(table, copy=True, order="C")
    table.setflags(write=False)
    meta = meta or TableMeta(sha[:HASH_SHOWN], sha, tuple(table.shape), "", None, str(table.dtype), table.nbytes)
    evicted = []
    with _LOCK:
        entry = store.get(sha) or _Entry(table, meta)
        store[sha] = entry
        store.move_to_end(sha)
        while sum(e.table.nbytes for e in store.values()) > STORE_MAX_BYTES and len(store) > 1:
            evicted.append(store.popitem(last=False)[1].meta)
    return evicted


def _get(sha: str) -> np.ndarray:
    store = _store()
    with _LOCK:
        entry = store.get(sha)
        if entry is not None:
            store.move_to_end(sha)
    if entry is None:
        raise ValueError(_gone_text(None, sha))
    return entry.table


def _gone_text(label: str | None, sha: str) -> str:
    """Plain text (escape it for Markdown): which table is gone, why it may be, and what to do."""
    what = f"The uploaded table “{label}”" if label else f"The uploaded table with SHA-256 {sha[:HASH_SHOWN]}..."
    return (f"{what} is no longer on this server: it restarted, or it let the table go to stay within the "
            f"{STORE_MAX_BYTES / 2**20:.0f} MiB it keeps for everyone's uploads (least recently used first). "
            "Upload the file again to see it.")


def _adopt_from_link() -> None:
    """List the tables a link names by label (``… · <12 hex>``) while the store holds them; say which are gone."""
    try:
        values = [v for k in st.query_params.keys() for v in st.query_params.get_all(k)]
    except Exception:  # pragma: no cover - no query string outside a session
        return
    tables = dict(st.session_state.get(_SESSION, {}))
    known = {m.sha256[:HASH_SHOWN] for m in tables.values()}
    said = st.session_state.setdefault("_posenc_upload_gone", set())
    changed = False
    for value in values:
        m = _LABEL_HASH.search(value)
        if m is None or m.group(1) in known:
            continue
        with _LOCK:
            found = [e for sha, e in _store().items() if sha.startswith(m.group(1))]
        if len(found) == 1:
            entry = found[0]
            with _LOCK:
                entry.holders.add(_session_id())
            tables[entry.meta.label] = entry.meta
            known.add(m.group(1))
            changed = True
        elif m.group(1) not in said:
            said.add(m.group(1))
            name = value.split(": ", 1)[-1] if value.startswith("Uploaded: ") else value
            st.warning(md.escape(_gone_text(name, m.group(1)), limit=600), icon=":material/cloud_off:")
    if changed:
        st.session_state[_SESSION] = tables


def session_tables() -> dict[str, TableMeta]:
    """This browser session's uploaded tables (and those its link names): label -> TableMeta."""
    _adopt_from_link()
    return dict(st.session_state.get(_SESSION, {}))


def upload_options() -> list[str]:
    """"upload:<label>" for each of this session's uploads."""
    return [upload_key(label) for label in session_tables()]


def scheme_options() -> list[str]:
    """Registry keys plus "upload:<label>" for each of this session's uploads."""
    return list(SCHEMES) + upload_options()


def is_upload(option: str) -> bool:
    return _label_of(option) is not None


def upload_label(option: str) -> str:
    """The label of an upload option ("" for anything else)."""
    return _label_of(option) or ""


def table_call(fn: Callable, label: str, *args, **kwargs):
    """fn(table, *args, **kwargs) for this session's upload ``label``, cached on its SHA-256."""
    meta = st.session_state.get(_SESSION, {}).get(label)
    gone = st.session_state.setdefault(_GONE, {})
    if meta is None and label in gone:
        raise ValueError(_gone_text(label, gone[label]))
    if meta is None:
        raise ValueError(f"no uploaded table named “{label}” in this session; upload it on the Learned tables page")
    try:
        return _table_call(f"{fn.__module__}:{fn.__qualname__}", meta.sha256, tuple(args), tuple(sorted(kwargs.items())))
    except _Gone:
        _forget([label])
        gone[label] = meta.sha256
        raise ValueError(_gone_text(label, meta.sha256)) from None


class _Gone(Exception):
    """The store no longer holds a table (not a ValueError: Streamlit must not cache it as a result)."""


@st.cache_data(max_entries=64, max_size="64MB", show_spinner=False)
def _table_call(qualname: str, sha: str, args: tuple, kwargs: tuple):
    try:
        table = _get(sha)
    except ValueError:
        raise _Gone(sha) from None
    with compute_slot():
        return _resolve(qualname)(table, *args, **dict(kwargs))


def safe_table_call(fn: Callable, label: str, *args, **kwargs):
    """table_call, but a ValueError becomes an on-page error (each message once a run) and the result is None."""
    try:
        return table_call(fn, label, *args, **kwargs)
    except ValueError as exc:
        run = st.session_state.get("_posenc_run")
        said = run.setdefault("upload_errors", set()) if isinstance(run, dict) else set()
        if str(exc) not in said:
            said.add(str(exc))
            st.error(md.escape(str(exc), limit=600), icon=":material/error:")
        return None


def _forget(labels) -> None:
    """Drop ``labels`` from this session; a table no other session lists leaves the store too."""
    tables = dict(st.session_state.get(_SESSION, {}))
    me = _session_id()
    store = _store()
    for label in labels:
        meta = tables.pop(label, None)
        if meta is None:
            continue
        with _LOCK:
            entry = store.get(meta.sha256)
            if entry is not None:
                entry.holders.discard(me)
                if not entry.holders:
                    del store[meta.sha256]
    st.session_state[_SESSION] = tables


def _say(kind: str, text: str) -> None:
    st.session_state.setdefault(_SAID, []).append((kind, text))


def upload_widget(*, key: str = "upload", container=None) -> None:
    """File uploader for a learned position table (.npy / .safetensors) with a tensor picker."""
    c = container or st
    box = c.container(border=True)
    box.markdown(":material/upload_file: **Bring your own table** — a learned position table as `.npy` or `.safetensors` "
                 f"(at most {pio.MAX_UPLOAD_MB} MB; {pio.table_limits()}; never unpickled).")
    # type=None: any file reaches our loader, which names what is wrong (a .pt checkpoint gets
    # "pickle checkpoints are refused") instead of Streamlit's bare type error
    gen = st.session_state.setdefault(_GEN, {}).get(key, 0)
    up = box.file_uploader("Upload a position table", type=None, key=key if gen == 0 else f"{key}_{gen}",
                           label_visibility="collapsed")
    if up is not None:
        _ingest(up, key, box)
    icons = {"success": ":material/check_circle:", "error": ":material/error:"}
    for kind, text in st.session_state.pop(_SAID, []):
        getattr(box, kind)(text, icon=icons.get(kind, ":material/info:"))
    tables = session_tables()
    if tables:
        listed = "; ".join(f"{md.code(upload_key(t.label))} {t.shape[0]}×{t.shape[1]}" for t in tables.values())
        box.caption(f"In this session: {listed}. They appear on the Learned, Similarity and Compare pages, and a link "
                    "to a view that shows one reopens it while this server holds it.")
        if box.button("Forget my uploads", key=f"{key}_forget", icon=":material/delete:"):
            _forget(list(tables))
            st.rerun()


def _refuse(up, key: str, text: str) -> None:
    """A refused upload: its raw bytes leave Streamlit's uploader now, the uploader is emptied (a new key), and the
    message (Markdown, already escaped) shows beside the empty uploader on the rerun this starts."""
    compat.release_upload(up)
    gens = st.session_state.setdefault(_GEN, {})
    gens[key] = gens.get(key, 0) + 1
    st.session_state.get(_NAMES_OF, {}).pop(up.file_id, None)
    _say("error", text)
    st.rerun()


def _tensor_names(up, data: bytes) -> tuple[list[str], int]:
    """(the 2-D float tensors a picker lists, how many the file holds): the header is parsed once per content
    (SHA-256, hashed once per upload), at most MAX_TENSOR_OPTIONS listed with the suggested names first."""
    shas = st.session_state.setdefault(_NAMES_OF, {})
    sha = shas.get(up.file_id)
    if sha is None:
        sha = shas[up.file_id] = hashlib.sha256(data).hexdigest()
    with _LOCK:
        hit = _NAMES.get(sha)
        if hit is not None:
            _NAMES.move_to_end(sha)
            return hit
    with compute_slot():
        names = pio.safetensors_tensor_names(data, tables_only=True)
    suggested = [n for n in names if n.endswith(("wpe.weight", "position_embeddings.weight"))]
    listed = list(dict.fromkeys(suggested + names))[:MAX_TENSOR_OPTIONS]
    with _LOCK:
        _NAMES[sha] = (listed, len(names))
        while len(_NAMES) > _NAMES_KEPT:
            _NAMES.popitem(last=False)
    return listed, len(names)


def _check_magnitude(table: np.ndarray, filename: str) -> None:
    """Refuse values whose squares could overflow (the Learned page would show inf, nan and blank heatmaps)."""
    peak = float(np.max(np.abs(table))) if table.size else 0.0
    if peak > MAX_ABS_VALUE:
        raise ValueError(f"{filename!r}: its largest |value| is {peak:.3g}; a position table here holds values of at most "
                         f"{MAX_ABS_VALUE:.0e} in magnitude, so that sums of their squares stay finite")


def _ingest(up, key: str, box) -> None:
    name = md.one_line(up.name, 60)  # shown, and part of the label; escaped wherever it reaches Markdown
    data = up.getvalue()
    tensor = None
    if up.name.lower().endswith(".safetensors"):
        try:
            names, total = _tensor_names(up, data)
        except ValueError as exc:
            _refuse(up, key, md.escape(f"{up.name!r}: {exc}", limit=600))
        if not names:
            _refuse(up, key, f"{md.code(name)} holds no 2-D float tensor; a position table has shape (max\\_len, d\\_model).")
        tensor = box.selectbox("Tensor", names, index=0, key=f"{key}_tensor",  # the suggested names come first
                               help="Suggested names: " + ", ".join(pio.SUGGESTED_TENSOR_NAMES[:4]))
        if total > len(names):
            box.caption(f"{md.code(name)} holds {total:,} 2-D float tensors; the picker lists {len(names):,} of them "
                        "(the suggested names first).")
    done = st.session_state.setdefault(_DONE, {})
    if done.get(key) == (up.file_id, tensor):
        return  # parsed on an earlier run: the table is in the store (or its absence is reported where it is used)
    done[key] = (up.file_id, tensor)
    try:
        with compute_slot():
            table, info = pio.read_position_table(data, up.name, tensor)
            _check_magnitude(table, up.name)
    except ValueError as exc:
        done.pop(key, None)
        _refuse(up, key, md.escape(str(exc), limit=600))
    if tensor is None:
        compat.release_upload(up)  # a .npy table is parsed: its raw bytes are not needed again
    h = hashlib.sha256(data)
    h.update(b"\0" + (tensor or "").encode())
    sha = h.hexdigest()
    shown = name if tensor is None else f"{name}:{md.one_line(tensor, 60)}"
    label = f"{shown} · {sha[:HASH_SHOWN]}"
    meta = TableMeta(label, sha, (info["max_len"], info["d_model"]), up.name, tensor, info["dtype"], int(table.nbytes))
    if meta.nbytes > SESSION_MAX_BYTES:  # pragma: no cover - the upload cap keeps every table below it
        box.error(f"{md.code(label)} needs {meta.nbytes / 2**20:.0f} MiB, more than a session may keep.", icon=":material/error:")
        return
    listed = st.session_state.get(_SESSION, {})
    oldest = sorted((m for m in listed.values() if m.label != label), key=lambda m: m.added)
    dropped: list[str] = []
    while oldest and sum(m.nbytes for m in oldest) + meta.nbytes > SESSION_MAX_BYTES:
        dropped.append(oldest.pop(0).label)
    _forget(dropped)  # this session's oldest first; a table no other session lists leaves the store
    evicted = _put(sha, table, meta, own=True)
    with _LOCK:
        _store()[sha].holders.add(_session_id())
    tables = dict(st.session_state.get(_SESSION, {}))
    tables[label] = meta
    st.session_state[_SESSION] = tables
    _say("success", f"Loaded {md.code(label)}: {info['max_len']:,} positions × {info['d_model']:,} dims ({info['dtype']}).")
    if dropped:
        _say("info", f"This session keeps at most {SESSION_MAX_BYTES // 2**20} MiB of uploaded tables, so it let the oldest "
                     f"go: {', '.join(md.code(d) for d in dropped)}.")
    mine = [m.label for m in evicted if m.label in tables]
    if mine:
        _say("info", f"The server keeps at most {STORE_MAX_BYTES // 2**20} MiB of uploads for everyone, so it let the least "
                     f"recently used go, among them yours: {', '.join(md.code(d) for d in mine)}.")
        _forget(mine)


def config_source(pasted: str, example_text: str, upload, *, limit: int) -> str:
    """The config text a page runs on (Precision, Context extension): an uploaded config.json or GGUF header first,
    else the pasted text, else the chosen example's; "" after a refusal, which is said on the page (escaped)."""
    text = pasted if pasted.strip() else example_text
    if len(pasted) > limit:
        st.error(f"The pasted text reached the box's limit of {limit // 2**20} MiB and was cut; a config.json is a few kB: "
                 "paste only the model's config.json.", icon=":material/error:")
        text = ""
    if upload is not None:
        try:
            text, _ = config_text(upload.getvalue())
        except ValueError as exc:
            st.error(md.escape(str(exc), limit=600), icon=":material/error:")
            text = ""
    return text
