"""`python -m deploy`'s cluster: 2 workers behind nginx, two Chromium sessions on different workers.

Each session sees its own values; one session keeps working while the other's worker is killed and
started again, and the other session comes back with the values of its link.  Loopback only, bounded.
"""

from __future__ import annotations

import contextlib
import math
import secrets
import socket
import urllib.request

import pytest

from deploy.cluster import Cluster, nginx_path
from tools.liveserver import wait_for_app

pytestmark = pytest.mark.e2e
LABEL = "‖PE‖ there"


def _free_block(lo: int = 8770, hi: int = 8799, size: int = 3) -> int:
    """First port p in [lo, hi] with p .. p+size-1 all free on 127.0.0.1."""
    for p in range(lo, hi - size + 2):
        ok = True
        for q in range(p, p + size):
            with contextlib.closing(socket.socket()) as s:
                try:
                    s.bind(("127.0.0.1", q))
                except OSError:
                    ok = False
                    break
        if ok:
            return p
    pytest.skip(f"no {size} free consecutive ports in {lo}-{hi}")


def _worker_of(url: str, token: str) -> str:
    req = urllib.request.Request(f"{url}/_stcore/health", headers={"Cookie": f"posenc_worker={token}"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.headers["X-Posenc-Worker"]


def _expect(page, d: int, timeout_ms: float = 90_000) -> None:
    value = f"{2047 * math.sqrt(d):,.4g}"
    page.wait_for_function(
        "([label, value]) => [...document.querySelectorAll(\"[data-testid='stMetric']\")]"
        ".some(m => m.innerText.includes(label) && m.innerText.includes(value))",
        arg=[LABEL, value], timeout=timeout_ms,
    )


def _press(page, key: str = "ArrowRight") -> None:
    thumb = page.locator("[data-testid='stSlider'] input[type='range']").nth(1)  # d_model
    thumb.focus()
    thumb.press(key)


@pytest.fixture(scope="module")
def cluster():
    if nginx_path() is None:
        pytest.skip("nginx is not installed (apt-get install nginx); .ci/run installs it")
    port = _free_block()
    with Cluster(workers=2, port=port, start_timeout=90) as c:
        yield c


def test_two_sessions_on_two_workers_survive_a_restart(cluster, browser):
    # Two sticky tokens that nginx sends to different workers (a browser gets a random one on its first visit).
    tokens: dict[str, str] = {}
    for _ in range(64):
        t = secrets.token_hex(16)
        tokens.setdefault(_worker_of(cluster.url, t), t)
        if len(tokens) == 2:
            break
    assert len(tokens) == 2, f"64 random tokens all reached {list(tokens)}: the hash does not spread sessions"
    (_, token_a), (worker_b, token_b) = sorted(tokens.items())
    contexts, pages = [], []
    try:
        for token, d in ((token_a, 70), (token_b, 90)):
            ctx = browser.new_context(viewport={"width": 1200, "height": 900})
            ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith(cluster.url) else r.abort())
            ctx.add_cookies([{"name": "posenc_worker", "value": token, "url": cluster.url}])
            page = ctx.new_page()
            page.goto(f"{cluster.url}/raw_index?context=2%2C048&d={d}", wait_until="commit")
            contexts.append(ctx)
            pages.append(page)
        a, b = pages
        for page, d in ((a, 70), (b, 90)):
            wait_for_app(page, timeout_ms=120_000)
            _expect(page, d)
        # each moves its own slider: each sees only its own value
        _press(a)
        _press(b)
        _expect(a, 71)
        _expect(b, 91)

        # kill b's worker; a (on the other worker) keeps working while it restarts
        index_b = next(w.index for w in cluster.nodes if w.url.endswith(worker_b.split(":")[1]))
        cluster.kill_worker(index_b)
        _press(a)
        _expect(a, 72, timeout_ms=30_000)
        # the supervisor starts b's worker again; b's browser reconnects, gets a new session and reruns
        # its page from the link (d = 91, the value the URL holds), then works as before
        _expect(b, 91, timeout_ms=120_000)
        wait_for_app(b, timeout_ms=120_000)
        _press(b)
        _expect(b, 92)
        assert cluster.nodes[index_b].restarts == 1
        for page in pages:
            assert page.locator("[data-testid='stException']").count() == 0
        _press(a, "ArrowLeft")
        _expect(a, 71)
    finally:
        for ctx in contexts:
            ctx.close()
