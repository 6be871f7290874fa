"""nginx in front of the workers: its config (rendered from ``nginx.conf.template``) and Streamlit's static files.

``render_config`` fills the template: one ``server`` line per worker, the per-deploy routing secret, the limits
per client (``Limits``) and, when this machine has the same Streamlit as the workers, a location that serves
Streamlit's static files from a copy made by ``prepare_static`` (gzipped once, so a burst of browsers costs
nginx no compression and the workers nothing).
"""

from __future__ import annotations

import gzip
import importlib.util
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

TEMPLATE = Path(__file__).with_name("nginx.conf.template")
NGINX_CANDIDATES = ("/usr/sbin/nginx", "/usr/bin/nginx")
MIME = {"text/html": "html", "text/css": "css", "application/javascript": "js mjs", "application/json": "json map",
        "image/svg+xml": "svg", "image/png": "png", "image/x-icon": "ico", "font/woff2": "woff2", "font/woff": "woff",
        "font/ttf": "ttf", "application/wasm": "wasm", "text/plain": "txt"}


@dataclass(frozen=True)
class Limits:
    """What nginx allows one client (docs/serving.md, "Limits per client")."""

    max_body: str = "51m"  # one upload: Streamlit's 50 MiB plus the multipart envelope
    upload_rate_token: str = "6r/m"  # uploads per browser (cookie token) ...
    upload_burst_token: int = 4  # ... after a first burst of this many
    upload_rate_addr: str = "60r/m"  # uploads per address (a room behind one NAT shares one)
    upload_burst_addr: int = 40
    ws_per_token: int = 16  # open websockets (tabs) per browser
    conn_per_addr: int = 2048  # open connections per address
    connect_timeout: str = "3s"


def nginx_path() -> str | None:
    """Path of an nginx binary (Debian's package: apt-get install nginx), or None."""
    for p in NGINX_CANDIDATES:
        if os.path.exists(p) and os.access(p, os.X_OK):
            return p
    return shutil.which("nginx")


def streamlit_static() -> Path:
    """The installed Streamlit's frontend (index.html, static/js, static/css, static/media), not imported."""
    spec = importlib.util.find_spec("streamlit")
    if spec is None or spec.origin is None:  # pragma: no cover - streamlit is a requirement
        raise RuntimeError("streamlit is not installed")
    return Path(spec.origin).parent / "static"


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def prepare_static(run_dir: Path, src: Path | None = None) -> Path:
    """Streamlit's static dir under ``run_dir`` (hard links, else copies: nginx's worker process may run as
    "nobody", who cannot enter /root), with a .gz beside every script and style sheet (``gzip_static``)."""
    dst = run_dir / "streamlit-static"
    shutil.copytree(src or streamlit_static(), dst, copy_function=_link_or_copy)
    for path in dst.rglob("*"):
        if path.suffix in (".js", ".css", ".json", ".svg") and path.is_file() and path.stat().st_size > 1024:
            Path(f"{path}.gz").write_bytes(gzip.compress(path.read_bytes(), 6, mtime=0))
    for d in (dst, *[p for p in dst.rglob("*") if p.is_dir()]):
        os.chmod(d, 0o755)
    return dst


def render_config(run_dir: Path, listen: str, servers: list[str], *, secret: str, static_root: Path | None = None,
                  base: str = "", limits: Limits = Limits()) -> str:
    """nginx.conf for ``servers`` ("host:port" each); ``static_root``: serve Streamlit's static files from there."""
    if not re.fullmatch(r"[0-9a-f]{16,64}", secret):
        raise ValueError("the routing secret must be 16-64 hex digits")
    lines = "\n".join(f"        server {s} max_fails=3 fail_timeout=5s;" for s in servers)
    static = ""
    if static_root is not None:
        static = (f"        location ^~ {base}/static/ {{\n"
                  f"            alias {static_root}/static/;\n"
                  "            gzip_static on;\n"
                  "            access_log off;\n"
                  "            add_header Cache-Control \"public, immutable, max-age=31536000\";\n"
                  "            error_page 404 = @posenc_worker;\n"
                  "        }")
    types = "    types {\n" + "".join(f"        {t} {e};\n" for t, e in MIME.items()) + "    }\n" \
            "    default_type application/octet-stream;"
    values = {"RUN_DIR": str(run_dir), "LISTEN": listen, "SERVERS": lines, "SECRET": secret, "STATIC": static,
              "BASE": base, "TYPES": types, "MAX_BODY": limits.max_body, "UPLOAD_RATE_TOKEN": limits.upload_rate_token,
              "UPLOAD_BURST_TOKEN": str(limits.upload_burst_token), "UPLOAD_RATE_ADDR": limits.upload_rate_addr,
              "UPLOAD_BURST_ADDR": str(limits.upload_burst_addr), "WS_PER_TOKEN": str(limits.ws_per_token),
              "CONN_PER_ADDR": str(limits.conn_per_addr), "CONNECT_TIMEOUT": limits.connect_timeout}
    text = TEMPLATE.read_text()
    for k, v in values.items():
        text = text.replace("{{" + k + "}}", v)
    left = re.findall(r"\{\{[A-Z_]+\}\}", text)
    if left:  # pragma: no cover - the template and this function disagree
        raise RuntimeError(f"unfilled placeholders in the nginx template: {left}")
    return text
