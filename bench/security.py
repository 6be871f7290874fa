"""Section ``security``: issue 41's attacks replayed against ``deploy --workers 2``, and its tests run.

* raw uploads (S1): one session PUTs ``puts`` files of ``mb`` MB to Streamlit's own upload endpoint
  (``/_stcore/upload_file/<session>/<any id>``), straight at its worker and then through nginx; reported: the
  worker's RSS before, at peak and after, the raw bytes Streamlit's upload manager holds (its ``/_stcore/metrics``),
  and what nginx answered (413 for a body over the cap, 429 past a client's upload rate);
* headers (S4): every response header of a page, a health check, a static file and a websocket upgrade, searched
  for a worker's address or port;
* tests: the issue's attacks replayed as tests (``TESTS``), run with pytest; reported per file.

Loopback only; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

from bench.load import PORT, RssSampler, cluster_procs
from bench.stclient import StSession
from deploy.cluster import Cluster

ROOT = Path(__file__).resolve().parents[1]
MB = 2**20
TESTS = ("tests/app/test_compat.py", "tests/app/test_hostile_uploads.py", "tests/app/test_hostile_training.py",
         "tests/app/test_lab_train_queue.py", "tests/app/test_model_queue.py",
         "tests/app/test_injection.py", "tests/test_deploy_proxy.py", "tests/test_deploy_warmup.py",
         "tests/test_deploy_upstreams.py", "tests/test_deploy_memory.py")


def raw_put(base: str, session_id: str, cookies: dict, nbytes: int, *, file_id: str | None = None,
            token: str | None = None, timeout: float = 120.0) -> int:
    """One PUT of an ``nbytes`` file to Streamlit's upload endpoint for ``session_id``, as the browser sends it
    (multipart, the XSRF cookie echoed in X-Xsrftoken); the HTTP status."""
    host, _, port = base.split("//", 1)[1].partition(":")
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"attack.npy\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode() + bytes(nbytes) + f"\r\n--{boundary}--\r\n".encode()
    jar = dict(cookies)
    if token:
        jar["posenc_worker"] = token
    if "_streamlit_xsrf" not in jar:
        jar.update(xsrf_cookie(base, jar))
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", "Content-Length": str(len(body)),
               "Cookie": "; ".join(f"{k}={v}" for k, v in jar.items()), "X-Xsrftoken": jar.get("_streamlit_xsrf", "")}
    c = http.client.HTTPConnection(host, int(port.rstrip("/")), timeout=timeout)
    try:
        c.request("PUT", f"/_stcore/upload_file/{session_id}/{file_id or uuid.uuid4()}", body=body, headers=headers)
        r = c.getresponse()
        r.read()
        return r.status
    except OSError:  # nginx closes a connection whose body is over the cap before it has all of it
        return 413
    finally:
        c.close()


def xsrf_cookie(base: str, cookies: dict) -> dict:
    """Streamlit's XSRF cookie, as the frontend gets it: from the health check it calls first."""
    import urllib.request
    from http.cookies import SimpleCookie

    req = urllib.request.Request(f"{base}/_stcore/health",
                                 headers={"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())})
    with urllib.request.urlopen(req, timeout=30) as resp:
        jar = SimpleCookie()
        for header in resp.headers.get_all("Set-Cookie") or []:
            jar.load(header)
    return {k: m.value for k, m in jar.items() if k == "_streamlit_xsrf"}


def upload_manager_bytes(worker_url: str) -> int:
    """Raw upload bytes Streamlit's upload manager holds in one worker (``/_stcore/metrics``)."""
    import urllib.request

    with urllib.request.urlopen(f"{worker_url}/_stcore/metrics", timeout=10) as resp:
        text = resp.read().decode()
    found = re.findall(r'cache_memory_bytes\{[^}]*UploadedFileManager[^}]*\}\s+([0-9.eE+]+)', text)
    return int(sum(float(x) for x in found))


async def _session(base: str) -> StSession:
    s = StSession(base, "learned", timeout=240)
    await s.open()
    return s


def raw_uploads(puts: int = 12, mb: int = 45, say=print) -> dict:
    out: dict = {"puts": puts, "mb": mb}
    with Cluster(workers=2, port=PORT) as c, RssSampler(cluster_procs(c)) as rss:
        w = c.nodes[0]

        async def attack(base: str, token: str | None) -> tuple[list[int], str]:
            s = await _session(base)
            try:
                statuses = [await asyncio.to_thread(raw_put, base, s.session_id, s.cookies, mb * 10**6, token=token)
                            for _ in range(puts)]
            finally:
                await s.close()
            return statuses, s.session_id

        start = rss.sample()[f"worker{w.index}"]
        t0 = time.perf_counter()
        statuses, _ = asyncio.run(attack(w.url, None))  # straight at the worker: nothing but the worker's guard
        out["direct"] = {"statuses": statuses, "seconds": round(time.perf_counter() - t0, 1),
                         "manager_mb_after": round(upload_manager_bytes(w.url) / MB, 1),
                         "rss_start_mb": round(start / MB), "rss_peak_mb": round(rss.peak[f"worker{w.index}"] / MB),
                         "rss_after_mb": round(rss.sample()[f"worker{w.index}"] / MB)}
        say(f"  security: {puts} raw PUTs of {mb} MB at a worker: held {out['direct']['manager_mb_after']} MB, "
            f"RSS {out['direct']['rss_start_mb']} -> peak {out['direct']['rss_peak_mb']} -> {out['direct']['rss_after_mb']} MB")
        statuses, _ = asyncio.run(attack(c.url, None))
        out["through_nginx"] = {"statuses": statuses, "refused_429": statuses.count(429),
                                "manager_mb_after": [round(upload_manager_bytes(n.url) / MB, 1) for n in c.nodes]}
        out["over_cap"] = asyncio.run(_over_cap(c.url))
        out["rss_peak_mb"] = {k: round(v / MB) for k, v in rss.peak.items()}
    return out


async def _over_cap(base: str) -> int:
    s = await _session(base)
    try:
        return await asyncio.to_thread(raw_put, base, s.session_id, s.cookies, 52 * MB + 1)
    finally:
        await s.close()


def headers() -> dict:
    """Every response header of the requests a browser makes, searched for a worker's address or port."""
    import urllib.request

    with Cluster(workers=2, port=PORT) as c:
        named: list = []
        workers = [w.addr for w in c.nodes] + [str(w.port) for w in c.nodes]
        with urllib.request.urlopen(f"{c.url}/raw_index", timeout=30) as r:
            html = r.read().decode()
            seen = [("GET /raw_index", dict(r.headers))]
        js = re.findall(r'src="\.?/?(static/js/[^"]+)"', html)[:1]
        for path in ["/_stcore/health", "/_stcore/host-config", *[f"/{p}" for p in js]]:
            with urllib.request.urlopen(f"{c.url}{path}", timeout=30) as r:
                seen.append((f"GET {path}", dict(r.headers)))
        async def upgrade() -> dict:
            s = StSession(c.url, "raw_index", timeout=120)
            try:
                await s.open()
                return dict(s.ws.response.headers)
            finally:
                await s.close()

        seen.append(("websocket upgrade", asyncio.run(upgrade())))
        for what, hdrs in seen:
            named += [(what, k, v) for k, v in hdrs.items() if any(x in v for x in workers) or k.lower() == "x-posenc-worker"]
    return {"requests": [w for w, _ in seen], "headers_naming_a_worker": named}


def tests(files=TESTS) -> dict:
    """The issue's attacks replayed as tests: pytest on each file (2 processes); passed / failed / xfailed."""
    out = {}
    for f in files:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", f],
                              cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False)
        tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-200:]
        counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|xfailed|skipped|error)", tail)}
        out[f] = {**counts, "seconds": round(time.perf_counter() - t0, 1)}
    return out


def security(puts: int = 12, say=print, run_tests: bool = True) -> dict:
    out = {"raw_uploads": raw_uploads(puts=puts, say=say), "headers": headers()}
    say(f"  security: headers naming a worker: {out['headers']['headers_naming_a_worker'] or 'none'}")
    if run_tests:
        out["tests"] = tests()
        say(f"  security: tests {json.dumps(out['tests'])}")
    return out
