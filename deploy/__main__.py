"""`python -m deploy --workers 2 --port 8080`: start N Streamlit workers and nginx in front, in the foreground.

Ctrl-C or SIGTERM stops nginx and every worker.  Workers listen on 127.0.0.1 (ports PORT+1 ... PORT+N unless
--first-worker-port says otherwise); nginx listens on --host:--port.  A worker that dies is started again, and
one whose memory passes --max-worker-mb is recycled once its sessions can move to another worker.

Several machines (docs/serving.md, "A room served from several machines"): on each worker machine
`python -m deploy --no-proxy --workers 2 --worker-host 0.0.0.0 --port 8080` (workers on 8081, 8082); on the
front machine `python -m deploy --workers 0 --upstream hostA:8081 --upstream hostA:8082 --upstream hostB:8081 ...`.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from deploy.cluster import Cluster, parse_upstream


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m deploy", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=None,
                    help="local Streamlit processes (default: one per core; 0 with --upstream)")
    ap.add_argument("--port", type=int, default=8080, help="nginx listens here (default 8080)")
    ap.add_argument("--host", default="127.0.0.1", help="nginx listen address (0.0.0.0 to serve a room; default loopback)")
    ap.add_argument("--first-worker-port", type=int, default=None, help="first worker port (default PORT+1)")
    ap.add_argument("--worker-host", default="127.0.0.1",
                    help="address the local workers listen on (0.0.0.0 on a worker machine; default loopback)")
    ap.add_argument("--upstream", action="append", default=[], metavar="HOST:PORT",
                    help="a worker on another machine (repeatable); nginx routes to it like to a local one")
    ap.add_argument("--no-proxy", action="store_true", help="start and supervise the workers only (a worker machine)")
    ap.add_argument("--max-worker-mb", type=float, default=2048.0,
                    help="recycle a local worker whose memory passes this many MiB (default 2048; 0: never)")
    ap.add_argument("--no-static", action="store_true", help="let the workers serve Streamlit's static files")
    args, extra = ap.parse_known_args(argv)
    try:
        for u in args.upstream:
            parse_upstream(u)
    except ValueError as exc:
        ap.error(str(exc))
    workers = args.workers if args.workers is not None else (0 if args.upstream else os.cpu_count() or 2)
    stop = threading.Event()

    def _handler(signum, _frame):
        stop.set()

    signal.signal(signal.SIGINT, _handler)
    signal.signal(signal.SIGTERM, _handler)
    cluster = Cluster(workers=workers, port=args.port, host=args.host, first_worker_port=args.first_worker_port,
                      worker_host=args.worker_host, upstreams=tuple(args.upstream), proxy=not args.no_proxy,
                      max_worker_mb=args.max_worker_mb, serve_static=not args.no_static,
                      streamlit_args=tuple(extra), quiet=False)
    try:
        cluster.start()
    except (RuntimeError, ValueError) as exc:
        print(f"[deploy] {exc}", file=sys.stderr)
        return 1
    where = cluster.url if cluster.proxy else ", ".join(w.url for w in cluster.local)
    print(f"[deploy] serving on {where} (Ctrl-C to stop)", flush=True)
    try:
        while not stop.wait(1.0):
            if cluster.nginx is not None and cluster.nginx.poll() is not None:
                print(f"[deploy] nginx exited with code {cluster.nginx.returncode}", file=sys.stderr)
                return 1
    finally:
        print("[deploy] stopping nginx and the workers", flush=True)
        cluster.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
