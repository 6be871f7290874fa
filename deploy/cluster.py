"""N Streamlit workers on loopback ports and nginx in front of them, started and stopped together.

``Cluster`` is what ``python -m deploy`` runs in the foreground; the load benchmark (``bench/load.py``) and
the end-to-end test (``tests/e2e/test_deploy.py``) use it as a context manager.  Every wait is bounded.
A worker that exits is started again on its own port (its browser sessions reconnect and Streamlit gives
them a new session; the other workers' sessions are untouched).
"""

from __future__ import annotations

import os
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

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).with_name("nginx.conf.template")
NGINX_CANDIDATES = ("/usr/sbin/nginx", "/usr/bin/nginx")


def nginx_path() -> str | None:
    """Path of an nginx binary (Debian's package: apt-get install nginx), or None."""
    for p in NGINX_CANDIDATES:
        if os.path.exists(p) and os.access(p, os.X_OK):
            return p
    return shutil.which("nginx")


def health(url: str, timeout: float = 2.0) -> bool:
    """True when ``url``/_stcore/health answers "ok" (any unknown path answers 200 with index.html)."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout) as resp:
            return resp.read().decode().strip() == "ok"
    except (OSError, ValueError):
        return False


def render_config(run_dir: Path, listen: str, worker_ports: list[int], host: str = "127.0.0.1") -> str:
    servers = "\n".join(f"        server {host}:{p} max_fails=1 fail_timeout=3s;" for p in worker_ports)
    text = TEMPLATE.read_text()
    for k, v in {"RUN_DIR": str(run_dir), "LISTEN": listen, "SERVERS": servers}.items():
        text = text.replace("{{" + k + "}}", v)
    return text


@dataclass
class Worker:
    index: int
    port: int
    proc: subprocess.Popen | None = None
    restarts: int = 0
    log: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None


@dataclass
class Cluster:
    """``workers`` Streamlit processes on ``first_worker_port``, ``+1``, ... and nginx on ``port``."""

    workers: int = 2
    port: int = 8080
    first_worker_port: int | None = None  # default: port + 1
    host: str = "127.0.0.1"  # where nginx listens; workers always listen on 127.0.0.1
    app: Path = ROOT / "app.py"
    streamlit_args: tuple[str, ...] = ()
    supervise: bool = True  # start a worker again when it exits
    quiet: bool = True
    start_timeout: float = 120.0
    nodes: list[Worker] = field(default_factory=list)
    run_dir: Path | None = None
    nginx: subprocess.Popen | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _watch: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.port}"

    # -- workers ---------------------------------------------------------------------------------------
    def _worker_cmd(self, port: int) -> list[str]:
        return [
            sys.executable, "-m", "streamlit", "run", str(self.app),
            "--server.port", str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
            "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *self.streamlit_args,
        ]

    def _spawn(self, w: Worker) -> None:
        assert self.run_dir is not None
        w.log = self.run_dir / f"worker{w.index}.log"
        with open(w.log, "ab") as out:
            w.proc = subprocess.Popen(self._worker_cmd(w.port), cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out,
                                      stderr=subprocess.STDOUT, start_new_session=True)

    def _wait_healthy(self, w: Worker, timeout: float) -> float:
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < timeout:
            if self._stop.is_set() and self.nginx is not None:
                raise RuntimeError(f"stopping: worker {w.index} not waited for")
            if w.proc is not None and w.proc.poll() is not None:
                tail = w.log.read_text(errors="replace")[-2000:] if w.log else ""
                raise RuntimeError(f"worker {w.index} (port {w.port}) exited with code {w.proc.returncode}: {tail}")
            if health(w.url, timeout=1.0):
                return time.perf_counter() - t0
            time.sleep(0.2)
        raise RuntimeError(f"worker {w.index} did not become healthy on {w.url} within {timeout:.0f} s")

    def restart_worker(self, index: int, *, kill: bool = False, timeout: float | None = None) -> float:
        """Stop worker ``index`` (SIGKILL if ``kill``, else SIGTERM), start it again; seconds until healthy."""
        w = self.nodes[index]
        with self._lock:
            _stop_proc(w.proc, kill=kill)
            self._spawn(w)
            w.restarts += 1
        return self._wait_healthy(w, timeout or self.start_timeout)

    def kill_worker(self, index: int) -> None:
        """SIGKILL worker ``index`` and leave it to the supervisor (or to ``restart_worker``)."""
        w = self.nodes[index]
        if w.proc is not None and w.proc.poll() is None:
            os.killpg(w.proc.pid, signal.SIGKILL)
            w.proc.wait(timeout=10)

    def _supervise(self) -> None:
        while not self._stop.wait(0.5):
            for w in self.nodes:
                if self._stop.is_set():
                    return
                with self._lock:
                    dead = w.proc is not None and w.proc.poll() is not None
                    if dead:
                        self._say(f"worker {w.index} (port {w.port}) exited with code {w.proc.returncode}; starting it again")
                        self._spawn(w)
                        w.restarts += 1
                if dead:
                    try:
                        self._wait_healthy(w, self.start_timeout)
                        self._say(f"worker {w.index} healthy again on {w.url}")
                    except RuntimeError as exc:
                        self._say(str(exc))
            if self.nginx is not None and self.nginx.poll() is not None and not self._stop.is_set():
                self._say(f"nginx exited with code {self.nginx.returncode}; see {self.run_dir}/error.log")
                return

    # -- the whole thing --------------------------------------------------------------------------------
    def start(self) -> Cluster:
        nginx = nginx_path()
        if nginx is None:
            raise RuntimeError("nginx not found (apt-get install nginx)")
        if self.workers < 1:
            raise ValueError(f"workers must be at least 1, got {self.workers}")
        first = self.first_worker_port or self.port + 1
        ports = [first + i for i in range(self.workers)]
        if self.port in ports:
            raise ValueError(f"proxy port {self.port} collides with worker ports {ports}")
        self.run_dir = Path(tempfile.mkdtemp(prefix="posenc-deploy-"))
        # When started as root, nginx's worker process runs as "nobody" and must reach its temp paths.
        os.chmod(self.run_dir, 0o755)
        self.nodes = [Worker(i, p) for i, p in enumerate(ports)]
        try:
            for w in self.nodes:
                self._spawn(w)
            for w in self.nodes:
                secs = self._wait_healthy(w, self.start_timeout)
                self._say(f"worker {w.index}: {w.url} healthy after {secs:.1f} s (pid {w.pid})")
            conf = self.run_dir / "nginx.conf"
            conf.write_text(render_config(self.run_dir, f"{self.host}:{self.port}", ports))
            test = subprocess.run([nginx, "-t", "-q", "-p", str(self.run_dir), "-e", str(self.run_dir / "error.log"),
                                   "-c", str(conf)], check=False, capture_output=True, text=True, timeout=30)
            if test.returncode != 0:
                raise RuntimeError(f"nginx rejected {conf}: {test.stderr.strip()}")
            self.nginx = subprocess.Popen([nginx, "-p", str(self.run_dir), "-e", str(self.run_dir / "error.log"),
                                           "-c", str(conf)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.PIPE, start_new_session=True)
            deadline = time.perf_counter() + 30
            while not health(self.url, timeout=1.0):
                if self.nginx.poll() is not None:
                    raise RuntimeError(f"nginx exited: {self.nginx.stderr.read().decode(errors='replace')}")
                if time.perf_counter() > deadline:
                    raise RuntimeError(f"nginx did not answer on {self.url} within 30 s")
                time.sleep(0.1)
            self._say(f"nginx: {self.url} -> {len(ports)} worker(s), sticky by cookie (run dir {self.run_dir})")
        except BaseException:
            self.stop()
            raise
        if self.supervise:
            self._watch = threading.Thread(target=self._supervise, name="posenc-supervisor", daemon=True)
            self._watch.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._watch is not None:
            self._watch.join(timeout=self.start_timeout + 5)
        with self._lock:
            _stop_proc(self.nginx, kill=False, graceful=signal.SIGQUIT)
            for w in self.nodes:
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
