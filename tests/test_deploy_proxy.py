"""deploy's nginx (deploy/nginx.conf.template, deploy/proxy.py) against stand-in workers, issue 41:

* S4: no response names the worker that answered, and which worker a token reaches depends on a per-deploy secret
  (a client cannot compute or choose it);
* R1: a connection reset on a request does not take a worker out (before: max_fails=1 fail_timeout=3s, so one
  reset on each of two workers answered every request with 502 for 3 s); Streamlit's static files are served by
  nginx itself; upstream connections are kept alive for less time than the workers keep them;
* S1: upload size and rate limited per client before a byte reaches a worker.

The workers are tiny HTTP servers on loopback (no Streamlit), so each case is exact.  Ports 8631-8633.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import secrets
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from deploy.cluster import exclusive
from deploy.proxy import nginx_path, prepare_static, render_config, streamlit_static

PROXY, A, B = 8631, 8632, 8633




class StandIn:
    """A loopback HTTP/1.1 server that names itself in X-Stand-In, counts requests by path, and resets (RST) the
    connections whose number (1-based, per server) is in ``reset``."""

    def __init__(self, port: int, name: str, reset: set[int] | None = None):
        self.port, self.name, self.reset = port, name, set(reset or ())
        self.paths: list[str] = []
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", port), reuse_port=False)
        self.sock.settimeout(0.2)
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._serve, daemon=True)
        self._t.start()

    def _serve(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            threading.Thread(target=self._handle, args=(conn, self.connections), daemon=True).start()

    def _handle(self, conn: socket.socket, number: int):
        conn.settimeout(5)
        buf = b""
        with contextlib.suppress(OSError):
            while True:
                while b"\r\n\r\n" not in buf:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buf += chunk
                head, _, buf = buf.partition(b"\r\n\r\n")
                lines = head.decode("latin1").split("\r\n")
                length = int(next((ln.split(":", 1)[1] for ln in lines if ln.lower().startswith("content-length:")), "0"))
                while len(buf) < length:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buf += chunk
                buf = buf[length:]
                if number in self.reset:
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    conn.close()  # RST: "connection reset by peer" at nginx
                    return
                self.paths.append(lines[0].split(" ")[1])
                body = b"ok"
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nServer: uvicorn\r\n"
                             + f"X-Stand-In: {self.name}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
            conn.close()

    def close(self):
        self._stop.set()
        self.sock.close()
        self._t.join(timeout=5)


@contextlib.contextmanager
def proxy(*, secret: str | None = None, static: bool = False):
    nginx = nginx_path()
    if nginx is None:
        pytest.skip("nginx is not installed (apt-get install nginx); .ci/run installs it")
    run = Path(tempfile.mkdtemp(prefix="posenc-test-proxy-"))  # not tmp_path: nginx's worker may run as "nobody"
    os.chmod(run, 0o755)
    root = prepare_static(run) if static else None
    conf = run / "nginx.conf"
    conf.write_text(render_config(run, f"127.0.0.1:{PROXY}", [f"127.0.0.1:{A}", f"127.0.0.1:{B}"],
                                  secret=secret or secrets.token_hex(16), static_root=root))
    proc = subprocess.Popen([nginx, "-p", str(run), "-e", str(run / "error.log"), "-c", str(conf)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 15
        while True:
            with contextlib.suppress(OSError):
                if get("/_posenc/proxy-health")[0] == 200:
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nginx did not start: {proc.stderr.read().decode(errors='replace')}")
            time.sleep(0.05)
        yield run
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(run, ignore_errors=True)


def get(path: str, token: str | None = None, method: str = "GET", body: bytes | None = None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", PROXY, timeout=10)
    try:
        h = dict(headers or {})
        if token:
            h["Cookie"] = f"posenc_worker={token}"
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        c.close()


@pytest.fixture
def stand_ins():
    with exclusive("8631-8633"):
        yield from _stand_ins()


def _stand_ins():
    made = []

    def make(reset_a=(), reset_b=()):
        made.extend([StandIn(A, "a", set(reset_a)), StandIn(B, "b", set(reset_b))])
        return made[-2], made[-1]

    yield make
    for s in made:
        s.close()


def test_the_config_keeps_what_issue_41_asks():
    text = render_config(Path("/tmp/x"), "127.0.0.1:1", ["127.0.0.1:2", "10.0.0.3:8501"], secret="ab" * 16,
                         static_root=Path("/tmp/x/s"))
    assert "X-Posenc-Worker" not in text and "$upstream_addr always" not in text
    assert re.search(r'hash "abab\S*\$posenc_token" consistent;', text)
    assert all(int(m) >= 3 for m in re.findall(r"max_fails=(\d+)", text)) and "max_fails=1 " not in text
    keep = re.search(r"keepalive_timeout (\d+)s;", text)
    assert keep and int(keep.group(1)) < 5  # uvicorn closes an idle connection after 5 s
    assert "location ^~ /static/" in text and "alias /tmp/x/s/static/;" in text
    assert re.search(r"location \^~ /_stcore/upload_file/ \{[^}]*client_max_body_size 51m;[^}]*limit_req zone=", text)
    assert "client_max_body_size 1m;" in text and "server_tokens off;" in text
    assert "proxy_next_upstream error timeout" in text and "non_idempotent" not in text
    with pytest.raises(ValueError):
        render_config(Path("/tmp/x"), "127.0.0.1:1", ["127.0.0.1:2"], secret="not hex")


def test_no_response_names_the_worker(stand_ins):
    stand_ins()
    with proxy():
        for path in ("/", "/_stcore/health", "/raw_index?d=8"):
            status, headers, _ = get(path)
            assert status == 200
            assert "X-Posenc-Worker" not in headers
            named = {k: v for k, v in headers.items() if k != "X-Stand-In" and re.search(r"863[23]|127\.0\.0\.1|uvicorn", v)}
            assert not named, named
            assert headers.get("Server") == "nginx"  # no version either


def test_which_worker_a_token_reaches_depends_on_the_deploys_secret(stand_ins):
    stand_ins()
    tokens = [secrets.token_hex(16) for _ in range(40)]
    routes = []
    for secret in (secrets.token_hex(16), secrets.token_hex(16)):
        with proxy(secret=secret):
            seen = [get("/_stcore/health", t)[1]["X-Stand-In"] for t in tokens]
            assert seen == [get("/_stcore/health", t)[1]["X-Stand-In"] for t in tokens]  # sticky
            assert set(seen) == {"a", "b"}  # spread
            routes.append(seen)
    assert routes[0] != routes[1], "the route of a token is the same under two secrets: a client could compute it"


def test_one_reset_on_each_worker_does_not_take_the_proxy_down(stand_ins):
    """Issue 41's burst: a reset on each of the two workers within fail_timeout made every request a 502."""
    a, b = stand_ins(reset_a={1}, reset_b={1})
    with proxy():
        statuses = [get("/_stcore/health", secrets.token_hex(16))[0] for _ in range(30)]
    assert statuses.count(200) >= 29, statuses  # the one request whose both tries were reset may fail; no others
    assert statuses[-20:] == [200] * 20
    assert a.paths and b.paths  # both workers still answer


def test_streamlits_static_files_are_served_by_nginx(stand_ins):
    a, b = stand_ins()
    js = sorted((streamlit_static() / "static" / "js").glob("index.*.js"))[0].name
    with proxy(static=True):
        status, headers, body = get(f"/static/js/{js}", headers={"Accept-Encoding": "gzip"})
        assert status == 200 and headers.get("Content-Encoding") == "gzip"
        assert "immutable" in headers.get("Cache-Control", "")
        status, headers, _ = get(f"/static/js/{js}")
        assert status == 200 and int(headers["Content-Length"]) == (streamlit_static() / "static" / "js" / js).stat().st_size
        assert get("/static/js/not-here.js")[0] == 200  # a file this machine lacks is asked of a worker
    assert [p for p in a.paths + b.paths if js in p] == []  # no worker saw a request for a static file
    assert "/static/js/not-here.js" in a.paths + b.paths


def test_uploads_are_limited_in_size_and_rate_per_client(stand_ins):
    a, b = stand_ins()
    with proxy():
        token = secrets.token_hex(16)
        big = get("/_stcore/upload_file/s/f", token, "PUT", body=b"\0" * (52 * 2**20), headers={"Content-Type": "x"})
        assert big[0] == 413
        statuses = [get(f"/_stcore/upload_file/s/f{i}", token, "PUT", body=b"\0" * 1000)[0] for i in range(8)]
        assert statuses[:5] == [200] * 5 and statuses[5:] == [429] * 3, statuses  # a burst of 4 after the first
        other = get("/_stcore/upload_file/s/g", secrets.token_hex(16), "PUT", body=b"\0" * 1000)
        assert other[0] == 200  # another browser is not held back by the first
        assert get("/_stcore/health", token)[0] == 200  # nor is anything else
    assert sum(p.startswith("/_stcore/upload_file/") for p in a.paths + b.paths) == 6
