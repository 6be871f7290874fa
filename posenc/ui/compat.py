"""The Streamlit (and Python) behaviours the dashboard works around, and one private function it reuses, in one place.

Tested with streamlit 1.67 (``TESTED``); ``tests/app/test_compat.py`` reproduces each behaviour
against the installed Streamlit and fails loudly when it changes, so a fixed upstream bug shows
up as a test to delete rather than a silent workaround.

1. **Deep links on a fresh server.**  A ``pages/`` folder next to the entrypoint puts a fresh
   Streamlit process in its legacy multipage mode until some run calls ``st.navigation``; the
   first session that opens a page URL directly therefore runs that page file alone, without
   app.py's router (no sections, no wide layout).  Upstream: streamlit/streamlit#9624.  Fix: app.py
   marks the runs it routes; a page that finds no mark calls ``st.navigation`` itself (which ends
   the legacy mode) and reruns, so app.py routes from then on.  ``install`` ends the legacy mode for the
   whole process as ``st.navigation`` does (``PagesManager.uses_pages_directory = False``): ``python -m deploy``
   calls it in each worker before Streamlit listens, and a plain ``streamlit run`` sets the flag in its server's
   lifespan (``deploy.warm.lifespan``) before any request, so no first run runs a page file alone (and each first run
   goes through app.py's import warm-up, ``deploy/warm.py``).
2. **A non-finite link value for a bound number widget** (``?d=inf``, ``?d=1e400``) makes
   Streamlit's URL seeding raise ``OverflowError`` (``int(float("inf"))``) instead of falling back
   to the default, because the seeding catches only ValueError, TypeError and IndexError (binding
   arrived in streamlit/streamlit#13979).  Fix: the control reads the raw value first; when it is
   not a finite number, it builds the widget unbound for this run and deletes the parameter from
   the URL (``del st.query_params[key]``), so the next run binds as usual.
3. **Converting a chart on every rerun.**  ``st.altair_chart`` turns the Altair chart into the Vega-Lite spec it sends
   (``to_dict`` with schema validation, the data as Arrow bytes) on every run, under a process-wide lock, even when the
   chart is the one it sent last time.  ``chart_spec`` converts as Streamlit's converter does
   (``streamlit.elements.vega_charts._convert_altair_to_vega_lite_spec``, private: its Arrow transformer, its theme and
   its lock), remembers the spec for charts ``posenc.charts.memo`` made, by identity, and for a chart a templated builder
   made (``posenc.charts.template``) converts the template once and swaps the new rows' Arrow bytes in (``_swapped``:
   context extension's new d, 0.47 -> 0.33 s of script).  The page sends it with the public ``st.vega_lite_chart``, as
   ``st.altair_chart`` does next.  Left out: the schema validation, ~10 of the ~16 ms of a layered chart's conversion.
   The tests validate instead: ``tests/app/test_slide_exports.py`` exports every chart of every page through
   ``posenc.io.export.chart_spec``, which validates; ``tests/app/test_compat.py`` checks that the spec sent is the one
   ``st.altair_chart`` sends; tests/test_charts_template.py, that a swapped spec is the one converted whole.
4. **A full garbage collection after every run.**  Streamlit's hidden option ``runner.postScriptGC``
   (default on) calls ``gc.collect(2)`` when a script run ends, on the script thread, holding the
   interpreter lock; the run's last messages reach the browser only after it.  In a dashboard
   process (about 150,000 tracked objects once a few pages have run) one collection took
   106-181 ms of every step (2026-12-02, AMD EPYC: the sinusoid's offset k 0.27 -> 0.16 s, its
   median step 0.50 -> 0.38 s).  Fix: ``.streamlit/config.toml`` sets it off; Python's own
   generational collector still runs (``POST_SCRIPT_GC``; the bench's floor app runs with the same
   ``[runner]`` settings, ``runner_flags``).
5. **A chart's data renames it.**  Streamlit names each dataset of a chart by a hash of its bytes and
   writes that name into the spec it sends; the frontend builds a new Vega view whenever the spec text
   changes and only swaps the data of the view it has when the spec is the same.  So every chart whose
   data changed was rebuilt from scratch (Vega-Lite compiled, the view parsed, its DOM made again).
   Fix: ``chart_spec`` names the datasets by their place in the chart (``posenc_data_0``, ``posenc_data_1``, ...), so
   a step that changes only the data goes through the frontend's data swap.  Measured in one browser
   session, alternating the two every six steps (2026-12-03, AMD EPYC, median of 16-20 steps each):
   RoPE's head_dim 0.490 -> 0.442 s, the sinusoid's n 0.297 -> 0.283 s; six 4-layer charts on a
   bare page, data-only 0.10-0.13 s a step vs rebuilt 0.20 s.
6. **A full collection walks every long-lived object.**  With the garbage collection after every run off
   (behaviour 4), Python's own full collections still come, each walking every object the process
   tracks -- the imported modules of Streamlit, pandas, Altair, numpy and posenc, ~140,000-190,000
   objects: 99-135 ms each, four in 2.5 minutes of the benchmark over seven pages, landing on whatever
   step or first paint was running.  Fix: ``freeze_long_lived``, called by app.py after every run,
   moves what the process holds into the collector's permanent generation (``gc.freeze``) whenever the
   run imported a module; later collections walk only what was made since (same seven pages: two full
   collections, 71 ms before the first freeze and 11 ms after).  A frozen object is still freed when
   nothing refers to it; only a reference cycle that existed at a freeze and dies later is kept, and
   freezes happen only when a run imports a module (a few times in a process's life).
7. **Raw upload bytes are kept per session without bound.**  Streamlit stores every file PUT to
   ``/_stcore/upload_file/<session>/<any id>`` in its ``MemoryUploadedFileManager`` until the session ends: a
   session can PUT any number of 50 MB files (12 PUTs took one worker from 613 to 1,132 MB, issue 41), and a
   file the page refused stays too.  Only the size of one file is capped (``server.maxUploadSize``).  Fix:
   ``guard_uploads`` wraps the manager's ``add_file``: a session keeps at most ``RAW_SESSION_BYTES`` (its newest
   files; older ones are dropped as a new one arrives) and the worker at most ``RAW_WORKER_BYTES`` (the oldest
   file of any session dropped first); ``release_upload`` drops one file at once (a refused file, or one whose
   table is already parsed).  A dropped file only makes its uploader return None on the next run: posenc keeps
   what it parsed (``posenc.ui.uploads``), so nothing a page shows is lost.
8. **A link with more than 1,000 parameters (or 512 Ki characters) is dropped whole, silently.**  Streamlit's
   ``sanitize_query_string`` returns "" for it and logs a warning: the page opens at its defaults with no note.
   Fix: ``guard_dropped_links`` wraps it so that such a link becomes one parameter, ``LINK_DROPPED``
   (``"<parameters>,<characters>"``), and ``ensure_routed`` (every page's header) turns it into the same visible
   note as any other bad link, then removes it from the URL.
9. **The first element of a process walks the whole stack.**  Before it sends its first element, Streamlit checks once
   per process whether it runs in a REPL (``delta_generator._maybe_print_use_warning`` -> ``env_util.is_repl`` ->
   ``inspect.stack()``), which looks up the module of every frame and, the first time, indexes the file of every
   module loaded: 0.10-0.14 s of the cold start's first paint, once Streamlit, pandas, Altair and posenc are in.
   The check only serves a warning for a script run without ``streamlit run``.  Fix: ``install`` marks it done
   (``skip_repl_check``); a script run bare (``python app.py``) still gets Streamlit's "missing ScriptRunContext"
   warnings.
"""

from __future__ import annotations

import contextlib
import gc
import json
import math
import sys
import threading
import tomllib
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from posenc._kept import Kept
from posenc.charts import memo, template

TESTED = (1, 67)
POST_SCRIPT_GC = ("runner", "postScriptGC")  # behaviour 4: where .streamlit/config.toml turns it off
CONFIG = Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml"
_ROUTED = "_posenc_routed"


def runner_flags(config: Path = CONFIG) -> tuple[str, ...]:
    """The dashboard's ``[runner]`` settings as ``streamlit run`` flags, for an app started from another folder
    (the bench's floor app) so that it runs as the dashboard does (behaviour 4)."""
    with open(config, "rb") as fh:
        runner = tomllib.load(fh).get("runner", {})
    return tuple(f"--runner.{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in runner.items())


def streamlit_version() -> tuple[int, int]:
    major, minor, *_ = st.__version__.split(".")
    return int(major), int(minor)


def mark_routed(routed: bool) -> None:
    """app.py: True before it runs the chosen page, False after."""
    if routed:
        st.session_state[_ROUTED] = True
    else:
        st.session_state.pop(_ROUTED, None)


def ensure_routed(navigation: Callable[[], dict]) -> None:
    """In a page: if app.py did not route this run, end the legacy mode and rerun (behaviour 1)."""
    if st.session_state.get(_ROUTED):
        note_dropped_link()
        return
    st.navigation(navigation(), position="hidden")  # public API; it switches the legacy mode off
    st.rerun()


def finite_number(raw: list[str]) -> bool:
    """True when a link carried one value that parses as a finite number (or nothing at all)."""
    if not raw:
        return True
    try:
        return len(raw) == 1 and math.isfinite(float(raw[0]))
    except (TypeError, ValueError, OverflowError):
        return False


def number_binding(key: str, raw: list[str]) -> str | None:
    """The ``bind`` argument for a number widget whose link value is ``raw`` (behaviour 2)."""
    if finite_number(raw):
        return "query-params"
    try:
        del st.query_params[key]
    except (KeyError, st.errors.StreamlitAPIException):  # already bound in this session: the URL keeps it
        pass
    return None


MAX_SPEC_BYTES = 64 * 2**20  # Arrow bytes of the remembered specs, every session together
_SPECS: OrderedDict = OrderedDict()  # id(chart) -> (chart, spec, bytes), most recent last
_SPECS_LOCK = threading.Lock()


def _spec_bytes(spec: dict) -> int:
    return sum(len(v) for v in (spec.get("datasets") or {}).values() if isinstance(v, bytes))


def positional_names(spec: dict) -> dict:
    """``spec`` with its datasets named by their order in it (``posenc_data_0``, ``posenc_data_1``, ...) instead of by a hash of
    their bytes, in ``datasets`` and wherever the spec refers to them (behaviour 5): two charts that differ only
    in their data then have the same spec text."""
    datasets = spec.get("datasets") or {}
    if not datasets:
        return spec
    names = {old: f"posenc_data_{i}" for i, old in enumerate(datasets)}
    body = json.dumps({k: v for k, v in spec.items() if k != "datasets"})
    for old, new in names.items():
        body = body.replace(json.dumps(str(old)), json.dumps(new))
    out = json.loads(body)
    out["datasets"] = {names[k]: v for k, v in datasets.items()}
    return out


_FROZEN_MODULES = [0]  # len(sys.modules) at the last freeze


def freeze_long_lived() -> bool:
    """Behaviour 6: if a module was imported since the last call, move every object the collector tracks into its
    permanent generation (``gc.freeze``), so later full collections do not walk the imported modules again.
    Returns whether it froze.  app.py calls it after every run; it costs one ``len(sys.modules)`` otherwise."""
    count = len(sys.modules)
    if count == _FROZEN_MODULES[0]:
        return False
    _FROZEN_MODULES[0] = count
    gc.freeze()
    return True


def _convert(chart) -> dict:
    """Streamlit's Altair conversion (``vega_charts._convert_altair_to_vega_lite_spec``, streamlit 1.67) with
    ``to_dict(validate=False)``: the same Arrow datasets, the same theme, under the same lock (behaviour 3)."""
    import altair as alt
    from streamlit.elements import vega_charts

    datasets: dict = {}
    alt.data_transformers.register("to_arrow_dataset", vega_charts._to_arrow_dataset)
    with vega_charts._altair_globals_lock:
        theme = alt.theme.enable("none") if alt.theme.active == "default" else contextlib.nullcontext()
        with theme, alt.data_transformers.enable("to_arrow_dataset", datasets=datasets):
            spec = chart.to_dict(validate=False)
    existing = spec.get("datasets")
    spec["datasets"] = {**existing, **datasets} if isinstance(existing, dict) else datasets
    return spec


def chart_spec(chart) -> dict:
    """The Vega-Lite spec ``st.altair_chart`` would send for ``chart`` (datasets as Arrow bytes), converted as
    Streamlit converts it but unvalidated (``_convert``), with the datasets named by place (``positional_names``,
    behaviour 5); remembered by identity for a chart ``posenc.charts.memo`` made (behaviour 3).
    Treat it as read-only: it is shared by every rerun that draws the same chart."""
    keep = memo.made(chart)
    if keep:
        with _SPECS_LOCK:
            entry = _SPECS.get(id(chart))
            if entry is not None and entry[0] is chart:
                _SPECS.move_to_end(id(chart))
                return entry[1]
    spec = _swapped(chart)
    if spec is None:
        spec = positional_names(_convert(chart))
    if keep:
        with _SPECS_LOCK:
            _SPECS[id(chart)] = (chart, spec, _spec_bytes(spec))
            total = sum(e[2] for e in _SPECS.values())
            while total > MAX_SPEC_BYTES and len(_SPECS) > 1:
                total -= _SPECS.popitem(last=False)[1][2]
    return spec


_BASES = Kept(most=128)  # id(base) -> (base, its spec, [dataset name of each frame])


def _swapped(chart) -> dict | None:
    """A templated chart's spec (``posenc.charts.template.origin``): its base converted once, each empty frame made distinct
    (an index name of its own), with the call's frames' Arrow bytes in their places -- ``_convert``'s spec without walking
    the chart on every new value.  None to convert whole: another chart, or two datasets' bytes equal (merged there)."""
    from streamlit.dataframe_util import convert_anything_to_arrow_bytes as arrow
    from streamlit.util import calc_hash

    if (found := template.origin(chart)) is None:
        return None
    base, pairs = found
    entry = _BASES.get(id(base))
    if entry is None or entry[0] is not base:
        marked = [f.rename_axis([f"posenc_slot_{k}_{j}" for j in range(f.index.nlevels)]) for k, (f, _) in enumerate(pairs)]
        raw = _convert(template.rebind(base, {id(f): m for (f, _), m in zip(pairs, marked)}))
        order = {name: f"posenc_data_{k}" for k, name in enumerate(raw.get("datasets") or {})}
        entry = (base, positional_names(raw), [order.get(calc_hash(arrow(m))) for m in marked])
        _BASES.put(id(base), entry)
    if None in entry[2]:  # a frame the chart does not draw
        return None
    datasets = {**entry[1]["datasets"], **{name: arrow(frame) for name, (_, frame) in zip(entry[2], pairs)}}
    return {**entry[1], "datasets": datasets} if len(set(datasets.values())) == len(datasets) else None


# -- behaviour 7: raw upload bytes, bounded per session and per worker ---------------------------------------------
RAW_SESSION_BYTES = 64 * 2**20  # one session's raw files: one 50 MB table plus a config.json
RAW_WORKER_BYTES = 192 * 2**20  # every session's raw files in one worker
_ARRIVED = "_posenc_arrived"  # on the manager: OrderedDict {(session id, file id): bytes}, oldest first


def _drop_locked(mgr, session_id: str, file_id: str) -> int:
    """Remove one file (the manager's lock held); its bytes, 0 if it was gone."""
    files = mgr.file_storage.get(session_id)
    rec = files.pop(file_id, None) if files is not None else None
    getattr(mgr, _ARRIVED).pop((session_id, file_id), None)
    if rec is None:
        return 0
    mgr._total_bytes -= len(rec.data)
    mgr._file_count -= 1
    if not files:
        mgr.file_storage.pop(session_id, None)
    return len(rec.data)


def _make_room_locked(mgr, session_id: str, file_id: str, size: int) -> None:
    """Drop files until ``size`` new bytes fit both budgets: this session's oldest first, then the worker's oldest."""
    arrived = getattr(mgr, _ARRIVED)
    for key in [k for k in arrived if k[0] not in mgr.file_storage or k[1] not in mgr.file_storage[k[0]]]:
        arrived.pop(key, None)  # removed by Streamlit itself (a DELETE, a session that ended)
    _drop_locked(mgr, session_id, file_id)  # the same id uploaded again replaces it
    mine = mgr.file_storage.get(session_id, {})
    while mine and sum(len(r.data) for r in mine.values()) + size > RAW_SESSION_BYTES:
        _drop_locked(mgr, session_id, next(iter(mine)))
        mine = mgr.file_storage.get(session_id, {})
    while arrived and mgr._total_bytes + size > RAW_WORKER_BYTES:
        _drop_locked(mgr, *next(iter(arrived)))


def guard_uploads() -> bool:
    """Behaviour 7: bound the raw bytes Streamlit's upload endpoint keeps (every manager of this process).
    Idempotent; returns whether it installed the guard now."""
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager as Manager

    if getattr(Manager.add_file, "_posenc_guard", False):
        return False
    original = Manager.add_file

    def add_file(self, session_id: str, file) -> None:
        with self._lock:
            if not hasattr(self, _ARRIVED):
                setattr(self, _ARRIVED, OrderedDict())
            _make_room_locked(self, session_id, file.file_id, len(file.data))
        original(self, session_id, file)
        with self._lock:
            getattr(self, _ARRIVED)[(session_id, file.file_id)] = len(file.data)

    add_file._posenc_guard = True
    add_file._posenc_original = original  # Streamlit's own (tests/app/test_compat.py reproduces behaviour 7 with it)
    Manager.add_file = add_file
    return True


def raw_upload_bytes(session_id: str | None = None) -> int:
    """Raw bytes Streamlit's upload manager holds for ``session_id`` (this run's session when None)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None:
        return 0
    mgr = ctx.uploaded_file_mgr
    with mgr._lock:
        return sum(len(r.data) for r in mgr.file_storage.get(session_id or ctx.session_id, {}).values())


def release_upload(file) -> None:
    """Drop an uploaded file's raw bytes now (``file`` as a file uploader returns it); its uploader returns None
    from the next run on.  For a file the page refused, or one whose content it has already parsed."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or file is None:
        return
    ctx.uploaded_file_mgr.remove_file(ctx.session_id, file.file_id)


# -- behaviour 8: a link Streamlit drops whole gets a note ------------------------------------------------------------
LINK_DROPPED = "posenc_link_dropped"


def guard_dropped_links() -> bool:
    """Behaviour 8: a query string Streamlit would drop whole becomes ``LINK_DROPPED=<parameters>,<characters>``.
    Idempotent; returns whether it installed the guard now."""
    from urllib.parse import urlencode

    from streamlit.runtime import app_session
    from streamlit.runtime.state import query_params as qp

    if getattr(qp.sanitize_query_string, "_posenc_guard", False):
        return False
    original = qp.sanitize_query_string

    def sanitize_query_string(query_string: str) -> str:
        out = original(query_string)
        if query_string and not out:
            return urlencode({LINK_DROPPED: f"{query_string.count('&') + 1},{len(query_string)}"})
        return out

    sanitize_query_string._posenc_guard = True
    sanitize_query_string._posenc_original = original
    qp.sanitize_query_string = sanitize_query_string
    app_session.sanitize_query_string = sanitize_query_string
    return True


def dropped_link_note(value: str) -> str:
    """The note for a link Streamlit dropped (``value`` = "<parameters>,<characters>" from ``LINK_DROPPED``)."""
    from streamlit.runtime.state.query_params import CLIENT_STATE_QUERY_STRING_MAX_FIELDS, CLIENT_STATE_QUERY_STRING_MAX_LENGTH

    try:
        fields, chars = (int(x) for x in value.split(","))
    except ValueError:
        fields, chars = 0, 0
    return (f"The link carried {fields:,} parameters ({chars:,} characters); a link may carry at most "
            f"{CLIENT_STATE_QUERY_STRING_MAX_FIELDS:,} parameters and {CLIENT_STATE_QUERY_STRING_MAX_LENGTH:,} characters, "
            "so none of its values was read: this page opened at its defaults.")


def note_dropped_link() -> None:
    """In a page's header: show the note for a link Streamlit dropped, once, and take the marker out of the URL."""
    try:
        value = st.query_params.get(LINK_DROPPED)
    except Exception:  # pragma: no cover - no query string outside a session
        return
    if value is None:
        return
    st.warning(dropped_link_note(value), icon=":material/link_off:")
    with contextlib.suppress(KeyError, st.errors.StreamlitAPIException):
        del st.query_params[LINK_DROPPED]


def install() -> None:
    """Every process-wide workaround that must be in place before a session's first request (behaviours 1, 7, 8, 9)."""
    from streamlit.runtime.pages_manager import PagesManager

    PagesManager.uses_pages_directory = False  # what st.navigation sets (behaviour 1): app.py routes every run
    guard_uploads()
    guard_dropped_links()
    skip_repl_check()


def skip_repl_check() -> None:
    """Mark Streamlit's once-per-process REPL check done, so the first element sent skips its stack walk (behaviour 9)."""
    from streamlit import delta_generator

    delta_generator._use_warning_has_been_displayed = True
