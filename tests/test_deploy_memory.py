"""Issue 41, S1 on a live worker: memory through Streamlit's own upload endpoint, and a worker past its memory size.

* One session PUTs twelve 45 MB files to ``/_stcore/upload_file/<session>/<any id>``, straight at its worker (so
  nothing but the worker's own guard, ``posenc.ui.compat`` behaviour 7, stands in the way): Streamlit's upload
  manager keeps at most one session's budget (before: all 540 MB, for as long as the session lived) and the worker's
  RSS stays within it; through nginx the same client is refused past its upload rate (429) and a body over the cap
  never reaches a worker (413).
* A worker whose memory passes ``max_worker_mb`` is recycled by the launcher once another worker can take its
  sessions; a session on it reconnects (same URL, same cookie) and gets its page back with the link's values.

Workers on 127.0.0.4:8638-8639, nginx on 127.0.0.1:8638.
"""

from __future__ import annotations

import asyncio
import secrets
import time

import pytest

import deploy.cluster as cluster_module
from deploy.cluster import Cluster, exclusive, nginx_path, rss_mb
from posenc.ui import compat

MB = 2**20




@pytest.fixture
def cluster():
    if nginx_path() is None:
        pytest.skip("nginx is not installed (apt-get install nginx); .ci/run installs it")
    with exclusive("8638-8639"), Cluster(workers=2, port=8638, worker_host="127.0.0.4", first_worker_port=8638,
                                         start_timeout=180) as c:
        yield c


def test_twelve_raw_puts_of_45_mb_leave_the_worker_within_its_budget(cluster):
    from bench.security import raw_put, upload_manager_bytes
    from bench.stclient import StSession

    w = cluster.nodes[0]

    async def attack():
        s = StSession(w.url, "learned", timeout=240)
        await s.open()
        try:
            before = rss_mb(w.pid)
            statuses = [await asyncio.to_thread(raw_put, w.url, s.session_id, s.cookies, 45 * 10**6) for _ in range(12)]
            return before, statuses, upload_manager_bytes(w.url), rss_mb(w.pid)
        finally:
            await s.close()

    before, statuses, held, after = cluster_module.run_coroutine(attack())
    assert statuses == [204] * 12  # Streamlit takes every one (each is under its 50 MB cap) ...
    assert held <= compat.RAW_SESSION_BYTES  # ... but keeps only one session's budget (before: 12 x 45 MB)
    assert after - before < (compat.RAW_SESSION_BYTES + 120 * MB) / MB, (before, after)


def test_nginx_limits_a_clients_uploads(cluster):
    from bench.security import raw_put
    from bench.stclient import StSession

    async def attack():
        s = StSession(cluster.url, "learned", timeout=240)
        await s.open()
        try:
            statuses = [await asyncio.to_thread(raw_put, cluster.url, s.session_id, s.cookies, 10**6) for _ in range(8)]
            over = await asyncio.to_thread(raw_put, cluster.url, s.session_id, s.cookies, 52 * MB + 1)
            return statuses, over
        finally:
            await s.close()

    statuses, over = cluster_module.run_coroutine(attack())
    assert statuses[:5] == [204] * 5 and statuses[5:] == [429] * 3, statuses
    assert over in (413, 429)  # over the size cap (or already past the rate): never at a worker


def test_a_worker_past_its_memory_size_is_recycled_and_its_sessions_move(cluster, monkeypatch):
    from bench.stclient import StSession

    victim = cluster.nodes[1]
    token = next(t for t in (secrets.token_hex(16) for _ in range(64)) if cluster.route(t) == victim.addr)
    query = {"context": "2,048", "d": 57}

    async def scenario():
        s = StSession(cluster.url, "raw_index", query, timeout=240, cookies={"posenc_worker": token})
        seen = dict((await s.open()).metrics)
        assert cluster.worker_of(token) == victim.addr
        old_pid, recycles = victim.pid, victim.recycles
        monkeypatch.setattr(cluster_module, "rss_mb", lambda pid: 10**6 if pid == old_pid else rss_mb(pid))
        deadline = time.monotonic() + 120
        while victim.recycles == recycles and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
        assert victim.recycles == recycles + 1 and victim.pid != old_pid  # recycled by the supervisor, ~3 s over
        try:
            await s.move("d", 58)  # the old socket is gone ...
            moved = False
        except Exception:  # noqa: BLE001 - ProtocolError: what the browser sees before it reconnects
            moved = True
        await s.close()
        again = StSession(cluster.url, "raw_index", query, timeout=240, cookies=s.cookies)  # ... the browser reconnects
        run = await again.open()
        await again.close()
        return seen, moved, dict(run.metrics), run.exceptions

    seen, moved, metrics, exceptions = cluster_module.run_coroutine(scenario())
    assert moved and not exceptions
    assert metrics == seen  # the page came back from its link, with the same values
