"""Streamlit workers and nginx in front of them, started and stopped together.

``Cluster`` is what ``python -m deploy`` runs in the foreground; the benchmarks (``bench/load.py``, ...) and the
deploy tests use it as a context manager.  Every wait is bounded.

* Local workers (``workers``) run ``python -m deploy.worker`` (``deploy/worker.py``): each imports everything a
  page imports before it listens, so its health check turns green only when no first run can race an import.
* Workers elsewhere (``upstreams``, "HOST:PORT"; another machine runs ``python -m deploy --no-proxy``) are
  waited for at start and then left to their own machine's launcher.
* A local worker that exits is started again on its own port; one whose memory passes ``max_worker_mb`` is
  recycled (SIGTERM, started again) once another worker can take its sessions: their browsers reconnect to the
  same URL, nginx sends them to a live worker, and Streamlit reruns each page there from its link.
* nginx serves Streamlit's static files itself (a copy of the installed package's, gzipped once) and routes
  every other request by a cookie token hashed behind a per-deploy secret (``deploy/nginx.conf.template``).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from deploy.proxy import Limits, nginx_path, prepare_static, render_config, streamlit_static

THREADS_ENV = "POSENC_THREADS"  # posenc._threads.ENV (this module imports no posenc: a worker imports it, warmed)

__all__ = ["Cluster", "Limits", "Worker", "health", "nginx_path", "parse_upstream", "render_config", "rss_mb"]

ROOT = Path(__file__).resolve().parents[1]
def health(url: str, timeout: float = 2.0) -> bool:
    """True when ``url``/_stcore/health answers "ok" (any unknown path answers 200 with index.html)."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout) as resp:
            return resp.read().decode().strip() == "ok"
    except (OSError, ValueError):
        return False


def rss_mb(pid: int | None) -> float | None:
    """Resident memory of process ``pid`` in MiB (Linux /proc), or None."""
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


@dataclass
class Worker:
    index: int
    port: int
    host: str = "127.0.0.1"
    remote: bool = False  # a worker elsewhere: waited for, never started or stopped here
    proc: subprocess.Popen | None = None
    restarts: int = 0
    recycles: int = 0  # restarts because its memory passed the limit
    log: Path | None = None
    over: int = 0  # consecutive memory samples above the limit

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def addr(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None


def parse_upstream(text: str) -> tuple[str, int]:
    """"HOST:PORT" -> (host, port); ValueError for anything else."""
    m = re.fullmatch(r"([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\]):(\d{1,5})", text.strip())
    if m is None or not 0 < int(m.group(2)) < 65536:
        raise ValueError(f"--upstream takes HOST:PORT, got {text!r}")
    return m.group(1), int(m.group(2))


@dataclass
class Cluster:
    """``workers`` local Streamlit processes on ``first_worker_port``, ``+1``, ..., the ``upstreams`` elsewhere, and
    nginx on ``port`` in front of all of them (no nginx when ``proxy`` is False: a worker machine)."""

    workers: int = 2
    port: int = 8080
    first_worker_port: int | None = None  # default: port + 1
    host: str = "127.0.0.1"  # where nginx listens
    worker_host: str = "127.0.0.1"  # where local workers listen (0.0.0.0 on a worker machine)
    upstreams: tuple[str, ...] = ()  # "HOST:PORT" of workers on other machines
    proxy: bool = True
    app: Path = ROOT / "app.py"
    streamlit_args: tuple[str, ...] = ()
    supervise: bool = True  # start a worker again when it exits
    max_worker_mb: float = 2048.0  # recycle a local worker above this RSS (0: never)
    serve_static: bool = True
    limits: Limits = field(default_factory=Limits)
    quiet: bool = True
    start_timeout: float = 120.0
    nodes: list[Worker] = field(default_factory=list)
    run_dir: Path | None = None
    nginx: subprocess.Popen | None = None
    secret: str = field(default_factory=lambda: secrets.token_hex(16), repr=False)
    static_root: Path | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _watch: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.port}"

    @property
    def local(self) -> list[Worker]:
        return [w for w in self.nodes if not w.remote]

    def _base(self) -> str:
        args = list(self.streamlit_args)
        for i, a in enumerate(args):
            value = a.split("=", 1)[1] if a.startswith("--server.baseUrlPath=") else (
                args[i + 1] if a == "--server.baseUrlPath" and i + 1 < len(args) else None)
            if value is not None:
                return "/" + value.strip("/") if value.strip("/") else ""
        return ""

    # -- workers ---------------------------------------------------------------------------------------
    def _worker_cmd(self, w: Worker) -> list[str]:
        return [
            sys.executable, "-m", "deploy.worker", str(self.app),
            "--server.port", str(w.port), "--server.address", w.host, "--server.headless", "true",
            "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *self.streamlit_args,
        ]

    def worker_env(self) -> dict[str, str]:
        """A local worker's environment: this one, with the threads of its step pool (posenc._threads) set to its share
        of the cores, so that N workers on N cores run one each, unless POSENC_THREADS is set already."""
        share = max(1, (os.cpu_count() or 1) // max(1, len(self.local)))
        return {**os.environ, THREADS_ENV: os.environ.get(THREADS_ENV) or str(min(2, share))}

    def _spawn(self, w: Worker) -> None:
        assert self.run_dir is not None and not w.remote
        w.log = self.run_dir / f"worker{w.index}.log"
        w.over = 0
        with open(w.log, "ab") as out:
            w.proc = subprocess.Popen(self._worker_cmd(w), cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out,
                                      stderr=subprocess.STDOUT, start_new_session=True, env=self.worker_env())

    def _health_url(self, w: Worker) -> str:
        host = "127.0.0.1" if w.host in ("0.0.0.0", "") else w.host
        return f"http://{host}:{w.port}{self._base()}"

    def _wait_healthy(self, w: Worker, timeout: float) -> float:
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < timeout:
            if self._stop.is_set() and (self.nginx is not None or not self.proxy):
                raise RuntimeError(f"stopping: worker {w.index} not waited for")
            if w.proc is not None and w.proc.poll() is not None:
                tail = w.log.read_text(errors="replace")[-2000:] if w.log else ""
                raise RuntimeError(f"worker {w.index} ({w.addr}) exited with code {w.proc.returncode}: {tail}")
            if health(self._health_url(w), timeout=1.0):
                return time.perf_counter() - t0
            time.sleep(0.2)
        raise RuntimeError(f"worker {w.index} did not become healthy on {w.url} within {timeout:.0f} s")

    def restart_worker(self, index: int, *, kill: bool = False, timeout: float | None = None) -> float:
        """Stop local worker ``index`` (SIGKILL if ``kill``, else SIGTERM), start it again; seconds until healthy."""
        w = self.nodes[index]
        with self._lock:
            _stop_proc(w.proc, kill=kill)
            self._spawn(w)
            w.restarts += 1
        return self._wait_healthy(w, timeout or self.start_timeout)

    def kill_worker(self, index: int) -> None:
        """SIGKILL local worker ``index`` and leave it to the supervisor (or to ``restart_worker``)."""
        w = self.nodes[index]
        if w.proc is not None and w.proc.poll() is None:
            os.killpg(w.proc.pid, signal.SIGKILL)
            w.proc.wait(timeout=10)

    def worker_rss_mb(self) -> dict[int, float | None]:
        return {w.index: rss_mb(w.pid) for w in self.local}

    def _others_up(self, w: Worker) -> bool:
        """Whether the sessions of ``w`` have somewhere to go (or ``w`` is the only worker)."""
        others = [o for o in self.nodes if o is not w]
        return not others or any(health(self._health_url(o), timeout=1.0) for o in others)

    def _recycle_now(self, w: Worker) -> None:
        self._say(f"worker {w.index} ({w.addr}) at {rss_mb(w.pid) or 0:.0f} MiB, above {self.max_worker_mb:.0f} MiB: "
                  "recycled (its browsers reconnect through nginx to a live worker, which reruns each page from its link)")
        with self._lock:
            _stop_proc(w.proc, kill=False)
            self._spawn(w)
            w.restarts += 1
            w.recycles += 1

    def recycle(self, index: int) -> float:
        """Restart local worker ``index`` gracefully (SIGTERM: its websockets close, and its browsers reconnect
        through nginx to a live worker with the same link); seconds until it is healthy again."""
        w = self.nodes[index]
        self._recycle_now(w)
        return self._wait_healthy(w, self.start_timeout)

    def _supervise(self) -> None:
        tick = 0
        while not self._stop.wait(0.5):
            tick += 1
            for w in self.local:
                if self._stop.is_set():
                    return
                with self._lock:
                    dead = w.proc is not None and w.proc.poll() is not None
                    if dead:
                        self._say(f"worker {w.index} ({w.addr}) exited with code {w.proc.returncode}; starting it again")
                        self._spawn(w)
                        w.restarts += 1
                if not dead and self.max_worker_mb and tick % 2 == 0:  # memory: once a second
                    rss = rss_mb(w.pid)
                    w.over = w.over + 1 if rss is not None and rss > self.max_worker_mb else 0
                    if w.over >= 3 and self._others_up(w):  # 3 s above the limit, and its sessions can move
                        dead = True
                        self._recycle_now(w)
                if dead:
                    try:
                        self._wait_healthy(w, self.start_timeout)
                        self._say(f"worker {w.index} healthy again on {w.url}")
                    except RuntimeError as exc:
                        self._say(str(exc))
            if self.nginx is not None and self.nginx.poll() is not None and not self._stop.is_set():
                self._say(f"nginx exited with code {self.nginx.returncode}; see {self.run_dir}/error.log")
                return

    # -- routing, as the operator sees it (no response names a worker) ---------------------------------
    def worker_of(self, token: str) -> str | None:
        """"host:port" of the worker that answered the latest finished request carrying ``token`` (access log)."""
        if self.run_dir is None or not re.fullmatch(r"[0-9a-f]{32}", token or ""):
            return None
        try:
            text = (self.run_dir / "access.log").read_text(errors="replace")
        except OSError:
            return None
        found = re.findall(rf"up=(\S+(?:, \S+)*) tok={token}\b", text)
        return found[-1].split(", ")[-1] if found else None

    def route(self, token: str, timeout: float = 10.0) -> str | None:
        """The worker nginx sends ``token`` to: one health request with that cookie, then the access log."""
        req = urllib.request.Request(f"{self.url}{self._base()}/_stcore/health",
                                     headers={"Cookie": f"posenc_worker={token}"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            resp.read()
        deadline = time.perf_counter() + 2.0
        while time.perf_counter() < deadline:
            found = self.worker_of(token)
            if found:
                return found
            time.sleep(0.05)
        return None

    # -- the whole thing --------------------------------------------------------------------------------
    def start(self) -> Cluster:
        nginx = nginx_path()
        if self.proxy and nginx is None:
            raise RuntimeError("nginx not found (apt-get install nginx)")
        if self.workers < 0 or (self.workers == 0 and not self.upstreams):
            raise ValueError(f"workers must be at least 1 (or give --upstream), got {self.workers}")
        first = self.first_worker_port or self.port + 1
        ports = [first + i for i in range(self.workers)]
        shared = self.host == self.worker_host or "0.0.0.0" in (self.host, self.worker_host)
        if self.proxy and shared and self.port in ports:
            raise ValueError(f"proxy port {self.port} collides with worker ports {ports}")
        remote = [parse_upstream(u) for u in self.upstreams]
        self.run_dir = Path(tempfile.mkdtemp(prefix="posenc-deploy-"))
        # When started as root, nginx's worker process runs as "nobody" and must reach its temp paths.
        os.chmod(self.run_dir, 0o755)
        self.nodes = [Worker(i, p, self.worker_host) for i, p in enumerate(ports)]
        self.nodes += [Worker(len(ports) + i, p, h, remote=True) for i, (h, p) in enumerate(remote)]
        try:
            for w in self.local:
                self._spawn(w)
            for w in self.nodes:
                secs = self._wait_healthy(w, self.start_timeout)
                self._say(f"worker {w.index}: {w.url} healthy after {secs:.1f} s" + ("" if w.remote else f" (pid {w.pid})"))
            if self.proxy:
                self._start_nginx(nginx)
        except BaseException:
            self.stop()
            raise
        if self.supervise:
            self._watch = threading.Thread(target=self._supervise, name="posenc-supervisor", daemon=True)
            self._watch.start()
        return self

    def _static_matches(self) -> bool:
        """Whether every worker elsewhere serves the same frontend as this machine's Streamlit (its index.html)."""
        local = (streamlit_static() / "index.html").read_bytes()
        for w in self.nodes:
            if not w.remote:
                continue
            try:
                with urllib.request.urlopen(f"{self._health_url(w)}/", timeout=5) as resp:
                    if resp.read() != local:
                        self._say(f"worker {w.index} ({w.addr}) serves another Streamlit frontend: static files are "
                                  "proxied to the workers (install the same requirements everywhere to serve them here)")
                        return False
            except OSError:
                return False
        return True

    def _start_nginx(self, nginx: str) -> None:
        assert self.run_dir is not None
        if self.serve_static and self._static_matches():
            self.static_root = prepare_static(self.run_dir)
        conf = self.run_dir / "nginx.conf"
        conf.write_text(render_config(self.run_dir, f"{self.host}:{self.port}", [w.addr for w in self.nodes],
                                      secret=self.secret, static_root=self.static_root, base=self._base(),
                                      limits=self.limits))
        test = subprocess.run([nginx, "-t", "-q", "-p", str(self.run_dir), "-e", str(self.run_dir / "error.log"),
                               "-c", str(conf)], check=False, capture_output=True, text=True, timeout=30)
        if test.returncode != 0:
            raise RuntimeError(f"nginx rejected {conf}: {test.stderr.strip()}")
        self.nginx = subprocess.Popen([nginx, "-p", str(self.run_dir), "-e", str(self.run_dir / "error.log"),
                                       "-c", str(conf)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.perf_counter() + 30
        while not health(self.url + self._base(), timeout=1.0):
            if self.nginx.poll() is not None:
                raise RuntimeError(f"nginx exited: {self.nginx.stderr.read().decode(errors='replace')}")
            if time.perf_counter() > deadline:
                raise RuntimeError(f"nginx did not answer on {self.url} within 30 s")
            time.sleep(0.1)
        self._say(f"nginx: {self.url} -> {len(self.nodes)} worker(s), sticky by cookie"
                  + (", static files served by nginx" if self.static_root else "") + f" (run dir {self.run_dir})")

    def stop(self) -> None:
        self._stop.set()
        if self._watch is not None:
            self._watch.join(timeout=self.start_timeout + 5)
        with self._lock:
            _stop_proc(self.nginx, kill=False, graceful=signal.SIGQUIT)
            for w in self.local:
                _stop_proc(w.proc, kill=False)
        if self.run_dir is not None and self.run_dir.exists() and not os.environ.get("POSENC_KEEP_RUN_DIR"):
            shutil.rmtree(self.run_dir, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _say(self, text: str) -> None:
        if not self.quiet:
            print(f"[deploy] {text}", flush=True)


def _stop_proc(proc: subprocess.Popen | None, *, kill: bool, graceful: int = signal.SIGTERM, timeout: float = 10) -> None:
    """Stop a process started with start_new_session=True, and its group; bounded."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL if kill else graceful)
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=timeout)
    except ProcessLookupError:
        pass


def run_coroutine(coro):
    """``asyncio.run(coro)`` in a thread of its own, so that it works where the calling thread already runs an event
    loop (Playwright's sync API does, in a test process that also drives Chromium)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@contextlib.contextmanager
def exclusive(ports: str):
    """Hold the machine-wide lock of ``ports``: one user of those ports at a time on this machine (the deploy tests
    across pytest-xdist workers, a benchmark)."""
    import fcntl

    with open(Path(tempfile.gettempdir()) / f"posenc-test-ports-{ports}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
