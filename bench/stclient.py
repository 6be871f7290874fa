"""A minimal Streamlit client that speaks the browser's own websocket protocol (streamlit 1.67).

What the frontend does, and so what this does (learned by recording a Chromium session's frames):

1. ``GET /<page>?<query>``: the HTML response carries the cookies (``_streamlit_xsrf``; behind the
   deploy proxy also ``posenc_worker``, the sticky-session token).
2. Open ``ws://host/_stcore/stream`` with those cookies, ``Origin`` = the page's origin and the
   subprotocols ``streamlit, <xsrf token>``.
3. Send ``BackMsg.rerun_script`` with ``ClientState(query_string, page_name, context_info)``.  The
   server answers ``new_session``, deltas and ``script_finished``; app.py's ``st.navigation`` first
   finishes early for a rerun, then runs the page and finishes ``FINISHED_SUCCESSFULLY``.
4. Moving a control sends another ``rerun_script`` with the widget's new ``WidgetState`` (sliders send
   ``double_array_value``, select sliders the option label as ``string_array_value``, number inputs
   ``int_value`` / ``double_value``), the page's ``page_script_hash`` and the updated query string.
   The run is repainted when its ``script_finished`` arrives: every element of the rerun came before it.

No ``cached_message_hashes`` are sent, so the server sends every element in full (never a reference),
which is what a browser opening the page for the first time receives.  Loopback only.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import time
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import urlencode, urlsplit

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

FINISHED = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_SUCCESSFULLY")
EARLY = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_EARLY_FOR_RERUN")


class ProtocolError(RuntimeError):
    """The server answered something a browser would show as broken (or nothing at all)."""


@dataclass
class Run:
    """What one script run sent: the page's metrics, its bound widgets, errors and sizes."""

    seconds: float = 0.0
    first_delta_s: float | None = None
    metrics: list[tuple[str, str]] = field(default_factory=list)
    widgets: dict[str, tuple[str, object]] = field(default_factory=dict)  # query key -> (kind, proto)
    exceptions: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # st.error bodies
    charts: int = 0
    downloads: dict[str, str] = field(default_factory=dict)  # button label -> deferred file id (built on click)
    bytes: int = 0
    messages: int = 0
    page_ok: bool = True  # st.navigation ran the page this session asked for


def _get(base: str, path_query: str, cookie: str, timeout: float) -> tuple[int, dict[str, str], str]:
    """One HTTP GET; returns (status, cookies set, X-Posenc-Worker header)."""
    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.request("GET", path_query, headers={"Cookie": cookie} if cookie else {})
        resp = conn.getresponse()
        resp.read()
        jar: dict[str, str] = {}
        for value in resp.headers.get_all("Set-Cookie") or []:
            c = SimpleCookie()
            c.load(value)
            for k, morsel in c.items():
                jar[k] = morsel.value
        return resp.status, jar, resp.headers.get("X-Posenc-Worker", "")
    finally:
        conn.close()


def _fetch(base: str, url: str, cookie: str, timeout: float) -> int:
    u = urlsplit(base)
    path = url if url.startswith("/") else "/" + url.split("/", 3)[-1] if "://" in url else "/" + url
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Cookie": cookie} if cookie else {})
        resp = conn.getresponse()
        n = 0
        while chunk := resp.read(1 << 20):
            n += len(chunk)
        if resp.status != 200:
            raise ProtocolError(f"GET {path} answered {resp.status}")
        return n
    finally:
        conn.close()


class StSession:
    """One browser session: cookies, a websocket, the current page and its widgets."""

    def __init__(self, base: str, page: str, query: dict | None = None, *, timeout: float = 180.0,
                 cookies: dict[str, str] | None = None):
        self.base = base.rstrip("/")
        self.page = page  # url path of the page, e.g. "raw_index"
        self.query = dict(query or {})
        self.timeout = timeout
        self.cookies: dict[str, str] = dict(cookies or {})
        self.worker = ""  # X-Posenc-Worker of the page load (behind the deploy proxy)
        self.ws_worker = ""
        self.ws = None
        self.page_script_hash = ""
        self.session_id = ""
        self.last: Run | None = None

    # -- connection ------------------------------------------------------------------------------------
    def _cookie_header(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    def _query_string(self) -> str:
        return urlencode([(k, str(v)) for k, v in self.query.items()])

    async def open(self) -> Run:
        """Load the page (HTTP), connect the websocket, run the page; the first render."""
        t0 = time.perf_counter()
        qs = self._query_string()
        status, jar, worker = await asyncio.to_thread(_get, self.base, f"/{self.page}" + (f"?{qs}" if qs else ""),
                                                      self._cookie_header(), min(self.timeout, 60.0))
        if status != 200:
            raise ProtocolError(f"GET /{self.page} answered {status}")
        self.cookies.update(jar)
        self.worker = worker
        u = urlsplit(self.base)
        ws_url = f"ws://{u.hostname}:{u.port}/_stcore/stream"
        protocols = ["streamlit"] + ([self.cookies["_streamlit_xsrf"]] if "_streamlit_xsrf" in self.cookies else [])
        self.ws = await asyncio.wait_for(websockets.connect(
            ws_url, subprotocols=protocols, origin=f"http://{u.hostname}:{u.port}",
            additional_headers={"Cookie": self._cookie_header()}, max_size=None, compression=None,
            open_timeout=min(self.timeout, 60.0), ping_interval=20, ping_timeout=self.timeout,
        ), timeout=self.timeout)
        self.ws_worker = self.ws.response.headers.get("X-Posenc-Worker", "")
        run = await self._rerun(widget_states=None)
        run.seconds = time.perf_counter() - t0
        return run

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(OSError, TimeoutError, websockets.WebSocketException):
                await asyncio.wait_for(self.ws.close(), timeout=5)
            self.ws = None

    # -- runs ------------------------------------------------------------------------------------------
    def _client_state(self, msg: BackMsg) -> None:
        cs = msg.rerun_script
        cs.query_string = self._query_string()
        cs.page_name = self.page
        if self.page_script_hash:
            cs.page_script_hash = self.page_script_hash
        ci = cs.context_info
        ci.timezone = "UTC"
        ci.timezone_offset = 0
        ci.locale = "en-US"
        ci.url = f"{self.base}/{self.page}"
        ci.is_embedded = False
        ci.color_scheme = "light"

    async def _rerun(self, widget_states: list[WidgetState] | None) -> Run:
        msg = BackMsg()
        self._client_state(msg)
        msg.rerun_script.widget_states.SetInParent()
        for w in widget_states or []:
            msg.rerun_script.widget_states.widgets.add().CopyFrom(w)
        t0 = time.perf_counter()
        try:
            await self.ws.send(msg.SerializeToString())
        except websockets.ConnectionClosed as exc:
            raise ProtocolError(f"websocket closed: {exc}") from exc
        run = await asyncio.wait_for(self._read_until_finished(t0), timeout=self.timeout)
        run.seconds = time.perf_counter() - t0
        self.last = run
        return run

    async def _read_until_finished(self, t0: float) -> Run:
        run = Run()
        while True:
            try:
                data = await self.ws.recv()
            except websockets.ConnectionClosed as exc:
                raise ProtocolError(f"websocket closed: {exc}") from exc
            if isinstance(data, str):
                raise ProtocolError("text frame from the server")
            run.bytes += len(data)
            run.messages += 1
            fm = ForwardMsg()
            fm.ParseFromString(data)
            kind = fm.WhichOneof("type")
            if kind == "new_session":
                # a new run starts: forget what an early-finished run (st.navigation's first pass) sent
                run = Run(bytes=run.bytes, messages=run.messages)
                if fm.new_session.HasField("initialize"):
                    self.session_id = fm.new_session.initialize.session_id
            elif kind == "navigation":
                # the page st.navigation resolved (new_session.page_script_hash can name another page)
                nav = fm.navigation
                self.page_script_hash = nav.page_script_hash or self.page_script_hash
                run.page_ok = not any(a.url_pathname == self.page and a.page_script_hash != nav.page_script_hash
                                      for a in nav.app_pages)
            elif kind == "delta":
                if run.first_delta_s is None:
                    run.first_delta_s = time.perf_counter() - t0
                d = fm.delta
                if d.WhichOneof("type") == "new_element":
                    self._element(d.new_element, run)
            elif kind == "script_finished":
                if fm.script_finished == FINISHED:
                    if not run.page_ok:
                        raise ProtocolError(f"asked for /{self.page}, the server ran another page")
                    return run
                if fm.script_finished != EARLY:
                    raise ProtocolError(f"script finished with status {fm.script_finished}")
            elif kind == "page_not_found":
                raise ProtocolError(f"page not found: {self.page}")

    @staticmethod
    def _element(el, run: Run) -> None:
        kind = el.WhichOneof("type")
        if kind == "metric":
            run.metrics.append((el.metric.label, el.metric.body))
        elif kind == "exception":
            run.exceptions.append(f"{el.exception.type}: {el.exception.message}")
        elif kind == "alert" and el.alert.format == el.alert.ERROR:
            run.errors.append(el.alert.body)
        elif kind in ("vega_lite_chart", "arrow_vega_lite_chart"):
            run.charts += 1
        elif kind == "download_button" and el.download_button.deferred_file_id:
            run.downloads[el.download_button.label] = el.download_button.deferred_file_id
        elif kind in ("slider", "number_input"):
            proto = getattr(el, kind)
            if proto.query_param_key:
                run.widgets[proto.query_param_key] = (kind, proto)

    async def navigate(self, page: str, query: dict | None = None) -> Run:
        """Switch this session to another page (the sidebar link: same session, same websocket)."""
        self.page, self.query, self.page_script_hash = page, dict(query or {}), ""
        return await self._rerun(None)

    async def download(self, file_id: str) -> int:
        """Click a download button whose data is a callable: ask for the file, fetch its URL; bytes received."""
        msg = BackMsg()
        req = msg.backend_operation_request
        req.request_id = f"bench-{file_id}"
        req.session_id = self.session_id
        req.deferred_file.file_id = file_id
        await self.ws.send(msg.SerializeToString())

        async def answer() -> str:
            while True:
                fm = ForwardMsg()
                fm.ParseFromString(await self.ws.recv())
                if fm.WhichOneof("type") == "backend_operation_response" and fm.backend_operation_response.request_id == req.request_id:
                    resp = fm.backend_operation_response
                    if resp.error_msg:
                        raise ProtocolError(f"download failed: {resp.error_msg}")
                    return resp.deferred_file.url

        url = await asyncio.wait_for(answer(), timeout=self.timeout)
        return await asyncio.to_thread(_fetch, self.base, url, self._cookie_header(), self.timeout)

    async def move(self, key: str, value) -> Run:
        """Set the control bound to URL key ``key`` to ``value`` (as the browser would) and wait for the rerun."""
        if self.last is None or key not in self.last.widgets:
            raise ProtocolError(f"no control bound to {key!r} on /{self.page}")
        kind, proto = self.last.widgets[key]
        ws = WidgetState(id=proto.id)
        if kind == "slider" and proto.options:
            label = str(value)
            if label not in proto.options:
                raise ProtocolError(f"{value!r} is not an option of {key!r}: {list(proto.options)[:8]}")
            ws.string_array_value.data.append(label)
        elif kind == "slider":
            ws.double_array_value.data.append(float(value))
        elif proto.data_type == proto.INT:
            ws.int_value = int(value)
        else:
            ws.double_value = float(value)
        self.query[key] = value
        return await self._rerun([ws])
