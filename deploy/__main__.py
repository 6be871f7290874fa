"""`python -m deploy --workers 2 --port 8080`: start N Streamlit workers and nginx in front, in the foreground.

Ctrl-C or SIGTERM stops nginx and every worker.  Workers listen on 127.0.0.1 (ports PORT+1 ... PORT+N unless
--first-worker-port says otherwise); nginx listens on --host:--port.  A worker that dies is started again.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from deploy.cluster import Cluster


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m deploy", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2, help="Streamlit processes (default: one per core)")
    ap.add_argument("--port", type=int, default=8080, help="nginx listens here (default 8080)")
    ap.add_argument("--host", default="127.0.0.1", help="nginx listen address (0.0.0.0 to serve a room; default loopback)")
    ap.add_argument("--first-worker-port", type=int, default=None, help="first worker port (default PORT+1)")
    args, extra = ap.parse_known_args(argv)
    stop = threading.Event()

    def _handler(signum, _frame):
        stop.set()

    signal.signal(signal.SIGINT, _handler)
    signal.signal(signal.SIGTERM, _handler)
    cluster = Cluster(workers=args.workers, port=args.port, host=args.host, first_worker_port=args.first_worker_port,
                      streamlit_args=tuple(extra), quiet=False)
    try:
        cluster.start()
    except (RuntimeError, ValueError) as exc:
        print(f"[deploy] {exc}", file=sys.stderr)
        return 1
    print(f"[deploy] serving on {cluster.url} (Ctrl-C to stop)", flush=True)
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
