"""Import everything a page can import, once per process, before any page runs (issue 41, R2).

Streamlit runs each session's script in its own thread.  On a fresh worker, concurrent first runs import
``posenc`` in parallel, and a package whose ``__init__`` imports its own submodules (``posenc/__init__.py``)
lets two threads take module locks in opposite orders: ``_DeadlockError: deadlock detected by
_ModuleLock('posenc.analysis.compare')``, an exception box on exactly the recovery path (every worker
restarted under traffic).  ``warm()`` imports every module any page or posenc module names in an import
statement (at any depth: a lazy import inside a function counts) under one process-wide lock, so the first run
imports them all while every other run waits, and later runs find them in ``sys.modules``.

Stdlib only: app.py imports this module *before* it imports posenc (``python -m deploy`` also calls ``warm()``
in each worker before Streamlit listens, so a worker's health check turns green only after the imports).
Then it installs the process-wide workarounds of ``posenc.ui.compat`` (``install``: raw upload bytes bounded per
session and per worker, behaviour 7; a link Streamlit drops whole noted, behaviour 8), which must be in place
before any session's first request.
"""

from __future__ import annotations

import ast
import importlib
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_LOCK = threading.Lock()
_DONE: dict = {}  # "seconds", "modules", "failed" ({module: error}) once warm() has run


def module_names(root: Path = ROOT) -> list[str]:
    """Every absolute module name an import statement under ``pages/``, ``posenc/`` or app.py names, sorted."""
    names: set[str] = set()
    files = [root / "app.py", *sorted((root / "pages").glob("*.py")), *sorted((root / "posenc").rglob("*.py"))]
    for path in files:
        if not path.exists() or path.name == "__main__.py":
            continue
        parts = list(path.relative_to(root).with_suffix("").parts)
        package = ".".join(parts if parts[-1] == "__init__" else parts[:-1]).removesuffix(".__init__")
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (OSError, SyntaxError):  # a file being edited: the page itself will say so
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                if source and source != "__future__":
                    names.add(source)
                    # "from posenc.ui import frame": frame may be a module (imported) or a name (skipped)
                    names.update(f"{source}.{alias.name}" for alias in node.names
                                 if source.startswith("posenc") and alias.name != "*")
    return sorted(n for n in names if n and not n.startswith(("pages", "deploy", "bench", "tests", "tools")))


def warm(root: Path = ROOT) -> dict:
    """Import every module ``module_names`` lists (once per process; concurrent callers wait), then install
    ``posenc.ui.compat``'s process-wide workarounds.  Returns what it did: seconds, modules imported, and modules that failed (with their error)."""
    if _DONE:
        return _DONE
    with _LOCK:
        if _DONE:
            return _DONE
        t0 = time.perf_counter()
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        failed: dict[str, str] = {}
        count = 0
        for name in module_names(root):
            if name in sys.modules:
                continue
            try:
                importlib.import_module(name)
                count += 1
            except ImportError as exc:  # "from x import name" where name is not a module, or an optional dependency
                if not _is_attribute(name):
                    failed[name] = f"{type(exc).__name__}: {exc}"[:200]
            except Exception as exc:  # noqa: BLE001 - a module that fails here fails again, visibly, on its page
                failed[name] = f"{type(exc).__name__}: {exc}"[:200]
        try:
            importlib.import_module("posenc.ui.compat").install()
        except Exception as exc:  # noqa: BLE001
            failed["posenc.ui.compat.install"] = f"{type(exc).__name__}: {exc}"[:200]
        _DONE.update(seconds=time.perf_counter() - t0, modules=count, failed=failed)
    return _DONE


def _is_attribute(name: str) -> bool:
    """True when ``name`` is "package.attribute" of an imported module (a function or class, not a module)."""
    parent, _, attr = name.rpartition(".")
    mod = sys.modules.get(parent)
    return mod is not None and hasattr(mod, attr)
