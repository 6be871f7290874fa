"""``python -m deploy --upstream HOST:PORT`` (issue 41): one nginx in front of workers on other machines.

127.0.0.2 and 127.0.0.3 stand in for two machines: each runs ``python -m deploy --no-proxy`` (a Cluster that starts
and supervises its workers only, listening on that address), and the front runs ``--workers 0 --upstream ...``.
Ports 8636-8637 (the same port on each stand-in address)."""

from __future__ import annotations

import secrets

import pytest

from deploy.__main__ import main
from deploy.cluster import Cluster, exclusive, nginx_path, parse_upstream, run_coroutine

MACHINES = ("127.0.0.2", "127.0.0.3")
FRONT, WORKER = 8636, 8637




def test_upstreams_are_host_port():
    assert parse_upstream("gpu-box.lan:8501") == ("gpu-box.lan", 8501)
    assert parse_upstream("[::1]:8081") == ("[::1]", 8081)
    for bad in ("nohost", "a:b", "a:70000", "a b:1", "http://a:1"):
        with pytest.raises(ValueError):
            parse_upstream(bad)
    with pytest.raises(SystemExit):
        main(["--upstream", "nohost"])


def test_a_room_served_from_two_machines():
    if nginx_path() is None:
        pytest.skip("nginx is not installed (apt-get install nginx); .ci/run installs it")
    from bench.stclient import StSession

    with exclusive("8636-8637"):
        _two_machines(StSession)


def _two_machines(StSession):
    machines = [Cluster(workers=1, proxy=False, worker_host=h, port=FRONT, first_worker_port=WORKER, start_timeout=180)
                for h in MACHINES]
    try:
        for m in machines:
            m.start()
        upstreams = tuple(f"{h}:{WORKER}" for h in MACHINES)
        with Cluster(workers=0, upstreams=upstreams, port=FRONT, start_timeout=60) as front:
            assert front.nginx is not None and front.local == [] and [w.addr for w in front.nodes] == list(upstreams)
            assert front.static_root is not None  # the same Streamlit everywhere: nginx serves its static files
            reached = {front.route(secrets.token_hex(16)) for _ in range(24)}
            assert reached == set(upstreams), reached

            async def sessions():
                out = []
                # each session its own context length: the metric "max |value| at position n - 1" shows its own n - 1
                # (the d-dependent "‖PE‖ there" this read before waits for the raw index exercise's reveal)
                for d in (128, 512, 2048, 8192):
                    s = StSession(front.url, "raw_index", {"context": f"{d:,}", "d": 40}, timeout=240)
                    try:
                        run = await s.open()
                        out.append((d, front.worker_of(s.cookies["posenc_worker"]), dict(run.metrics), run.exceptions))
                    finally:
                        await s.close()
                return out

            for d, where, metrics, exceptions in run_coroutine(sessions()):
                assert where in upstreams and not exceptions
                assert metrics[f"max |value| at position {d - 1:,}"] == f"{d - 1:,}"  # its own value, whichever machine
        for m in machines:  # the front stopped; each machine's launcher still runs its worker
            assert all(w.proc is not None and w.proc.poll() is None for w in m.local)
    finally:
        for m in machines:
            m.stop()
