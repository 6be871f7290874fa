"""`python -m deploy`'s cluster: 2 workers behind nginx, two Chromium sessions on different workers.

Each session sees its own values; one session keeps working while the other's worker is killed and
started again, and the other session comes back with the values of its link.  A hostile config pasted in the
room renders no link or image and makes the browser fetch nothing (issue 41, S2).  No response names a worker:
which worker a token reaches is read from the proxy's access log (``Cluster.route``).  nginx on 127.0.0.1:8639,
workers on 127.0.0.5:8631-8632 (loopback only, bounded).
"""

from __future__ import annotations

import json
import secrets

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from deploy.cluster import Cluster, exclusive, nginx_path
from tools.liveserver import wait_for_app

pytestmark = pytest.mark.e2e
LABEL = "‖PE‖ there"




def _expect(page, d: int, timeout_ms: float = 90_000) -> None:
    """The page the server rendered for this session: its metrics drawn and the d_model slider at d (the metric
    "‖PE‖ there", 2047·√d, which this used to read, now waits for the raw index exercise's reveal)."""
    page.wait_for_function(
        "([label, d]) => [...document.querySelectorAll(\"[data-testid='stMetric']\")].some(m => m.innerText.includes(label))"
        " && [...document.querySelectorAll(\"[data-testid='stSlider'] input[type='range']\")].some(t => t.value === d)",
        arg=[LABEL, str(d)], timeout=timeout_ms,
    )


def _press(page, key: str = "ArrowRight") -> None:
    thumb = page.locator("[data-testid='stSlider'] input[type='range']").nth(1)  # d_model
    thumb.focus()
    thumb.press(key)


def _press_until(page, d: int, tries: int = 3) -> None:
    """Press until the page shows d: a reconnected session reruns its page from the link, and a press made while that
    rerun is still on its way is overwritten by it (the slider back at the link's value; seen once in a fresh-clone CI
    run, 2026-12-06, never alone): each try waits 20 s for d, then presses again."""
    for _ in range(tries - 1):
        _press(page)
        try:
            _expect(page, d, timeout_ms=20_000)
            return
        except PlaywrightTimeout:
            continue
    _press(page)
    _expect(page, d)


@pytest.fixture(scope="module")
def cluster():
    if nginx_path() is None:
        pytest.skip("nginx is not installed (apt-get install nginx); .ci/run installs it")
    with exclusive("8639"), Cluster(workers=2, port=8639, worker_host="127.0.0.5", first_worker_port=8631,
                                    start_timeout=180) as c:
        yield c


def test_two_sessions_on_two_workers_survive_a_restart(cluster, browser):
    # Two sticky tokens that nginx sends to different workers (a browser gets a random one on its first visit).
    tokens: dict[str, str] = {}
    for _ in range(64):
        t = secrets.token_hex(16)
        tokens.setdefault(cluster.route(t), t)
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
        index_b = next(w.index for w in cluster.nodes if w.addr == worker_b)
        cluster.kill_worker(index_b)
        _press(a)
        _expect(a, 72, timeout_ms=30_000)
        # the supervisor starts b's worker again; b's browser reconnects, gets a new session and reruns
        # its page from the link (d = 91, the value the URL holds), then works as before
        _expect(b, 91, timeout_ms=120_000)
        wait_for_app(b, timeout_ms=120_000)
        _press_until(b, 92)
        assert cluster.nodes[index_b].restarts == 1
        for page in pages:
            assert page.locator("[data-testid='stException']").count() == 0
        _press(a, "ArrowLeft")
        _expect(a, 71)
    finally:
        for ctx in contexts:
            ctx.close()


COLLECTOR = "127.0.0.1:9/"
HOSTILE = {"_name_or_path": "![](http://127.0.0.1:9/i.png) [x](http://127.0.0.1:9/)", "architectures": [
    "<img src=http://127.0.0.1:9/a.png> <a href='http://127.0.0.1:9/a'>a</a>"], "model_type": "[m](http://127.0.0.1:9/m)",
    "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072, "rope_theta": 500000.0}


@pytest.mark.parametrize(("page", "box"), [("precision", "or paste a config.json"), ("context_extension", "config.json text")])
def test_a_pasted_hostile_config_fetches_nothing_and_renders_no_link(cluster, browser, page, box):
    fetched: list[str] = []

    def route(r):
        if COLLECTOR in r.request.url:
            fetched.append(r.request.url)
        r.continue_() if r.request.url.startswith(cluster.url) else r.abort()

    ctx = browser.new_context(viewport={"width": 1300, "height": 1000})
    try:
        ctx.route("**/*", route)
        pg = ctx.new_page()
        pg.goto(f"{cluster.url}/{page}", wait_until="commit")
        wait_for_app(pg, timeout_ms=120_000)
        area = pg.get_by_label(box)
        area.fill(json.dumps(HOSTILE))
        area.press("Control+Enter")
        pg.wait_for_function("() => document.body.innerText.includes('_name_or_path') || "
                             "document.body.innerText.includes('[x](http')", timeout=90_000)
        pg.wait_for_timeout(500)
        wait_for_app(pg, timeout_ms=120_000)
        pg.wait_for_timeout(1500)  # an image would be fetched by now
        live = pg.evaluate("""c => [...document.querySelectorAll('a[href], img[src]')]
                                  .map(e => e.href || e.src).filter(u => u.includes(c))""", COLLECTOR)
        assert live == [] and fetched == [], (live, fetched)
        assert "127.0.0.1:9" in pg.inner_text("body").replace("\u2060", "")  # shown, as text (md.escape joins words)
        assert pg.locator("[data-testid='stException']").count() == 0
    finally:
        ctx.close()
