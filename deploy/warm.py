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

Issue 42 (cold start): importing everything costs ~2.5 CPU s (11.8 s wall on a loaded host) that a plain
``streamlit run`` put before its first page.  There the server's ``lifespan`` starts ``warm_for`` for app.py and the
landing page in a background thread, and app.py calls ``warm_for`` on every run: under the same lock it imports
only the *closure* of the files it names -- every module they name in an import statement, at any depth, and for each
``posenc`` module among them (and its parent packages) that module's own imports, transitively -- so a page's run,
lazy imports included, finds every ``posenc`` module it can reach already in ``sys.modules`` and cannot race another
run's imports (R2 holds: every posenc import a run can make happens under the lock, once).  Deploy workers still call
``warm()`` before Streamlit listens, after which ``warm_for`` finds everything imported and returns at once.

The third-party modules posenc needs only inside some functions (SciPy's fft, linalg and spatial: ``posenc._lazy.LAZY``)
are not named in import statements: they are imported at a function's first call, under ``posenc._lazy``'s own lock,
so a plain run's first page does not pay for them (0.35 CPU s); ``warm()`` imports them too.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LANDING = "pages/home.py"  # the page a bare address opens (posenc.ui.pages.HOME; a test checks they agree)
_LOCK = threading.Lock()
_DONE: dict = {}  # "seconds", "modules", "failed" ({module: error}) once warm() has run


_SKIP = ("pages", "deploy", "bench", "tests", "tools")


def _statements(body: list):
    """Every statement in ``body`` and, at any depth, in the statement blocks under it (function and class bodies,
    branches, handlers, cases): where an import statement can be.  Expressions are not walked (ast.walk's cost)."""
    todo = list(body)
    while todo:
        node = todo.pop()
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                todo.extend(block)


def _imports(path: Path, root: Path) -> set[str]:
    """Every absolute module name an import statement in ``path`` names (at any depth), "from a import b" as both
    ``a`` and, for posenc, ``a.b`` (b may be a module or a name)."""
    names: set[str] = set()
    if not path.exists() or path.name == "__main__.py":
        return names
    parts = list(path.relative_to(root).with_suffix("").parts)
    package = ".".join(parts if parts[-1] == "__init__" else parts[:-1]).removesuffix(".__init__")
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError):  # a file being edited: the page itself will say so
        return names
    for node in _statements(tree.body):
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
    return {n for n in names if n and not n.startswith(_SKIP)}


def module_names(root: Path = ROOT) -> list[str]:
    """Every absolute module name an import statement under ``pages/``, ``posenc/`` or app.py names, sorted."""
    names: set[str] = set()
    files = [root / "app.py", *sorted((root / "pages").glob("*.py")), *sorted((root / "posenc").rglob("*.py"))]
    for path in files:
        names |= _imports(path, root)
    return sorted(names)


_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(?P<src>\.*[\w.]*)[ \t]+import[ \t]+(?P<names>[^\n]*)"
                     r"|import[ \t]+(?P<mods>[^\n]*))", re.M)
_NAME = re.compile(r"[A-Za-z_][\w.]*\Z")


def _fast_imports(path: Path, root: Path) -> set[str]:
    """What ``_imports`` finds in ``path``, read with a regular expression instead of a parse (~50x faster: a plain
    ``streamlit run`` computes a page's ``closure`` before its first paint).  A line of a string that reads like an
    import adds a name (imported if it is a module: harmless); tests/test_deploy_warmup.py checks that it finds every
    name ``_imports`` finds in every file of the app."""
    names: set[str] = set()
    if not path.exists() or path.name == "__main__.py":
        return names
    try:
        text = path.read_text(encoding="utf-8").replace("\\\n", " ")
    except OSError:
        return names
    parts = list(path.relative_to(root).with_suffix("").parts)
    package = ".".join(parts if parts[-1] == "__init__" else parts[:-1]).removesuffix(".__init__")

    def listed(text: str) -> list[str]:
        out = []
        for line in text.strip("()").splitlines():
            for item in line.split("#", 1)[0].split(","):
                word = item.split(" as ")[0].strip()
                if _NAME.match(word):
                    out.append(word)
        return out

    def until_paren(start: int) -> str:  # "from a import (" ... the line whose code (comments left out) closes it
        lines = []
        for line in text[start:].splitlines():
            code = line.split("#", 1)[0]
            lines.append(code)
            if ")" in code:
                break
        return "\n".join(lines)

    for m in _IMPORT.finditer(text):
        if m.group("mods") is not None:
            names.update(listed(m.group("mods")))
            continue
        src, dots = m.group("src").lstrip("."), len(m.group("src")) - len(m.group("src").lstrip("."))
        if dots:
            base = package.split(".")[: len(package.split(".")) - (dots - 1)]
            source = ".".join(base + ([src] if src else []))
        else:
            source = src
        if source and source != "__future__":
            names.add(source)
            if source.startswith("posenc"):
                listing = m.group("names")
                if listing.lstrip().startswith("("):
                    listing = until_paren(m.start("names"))
                names.update(f"{source}.{a}" for a in listed(listing.replace("(", " ").replace(")", " ")) if a != "*")
    return {n for n in names if n and not n.startswith(_SKIP)}


def _source(name: str, root: Path) -> Path | None:
    """The file of posenc module ``name`` under ``root`` (None: not a module there, e.g. "posenc.ui.frame.chart")."""
    base = root.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


def closure(files, root: Path = ROOT) -> list[str]:
    """The modules a run of ``files`` can import: their import statements' names and, for every posenc module among
    them and each of its parent packages, that module's own import statements' names, transitively; sorted."""
    names: set[str] = set()
    todo = [Path(f) if Path(f).is_absolute() else root / f for f in files]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in _fast_imports(path, root) - names:
            names.add(name)
            if name.startswith("posenc"):
                parts = name.split(".")
                for i in range(1, len(parts) + 1):  # posenc, posenc.ui, posenc.ui.frame: each __init__ runs
                    src = _source(".".join(parts[:i]), root)
                    if src is not None and src not in seen:
                        todo.append(src)
    return sorted(names)


def _import_all(names, failed: dict) -> int:
    """Import each of ``names`` not yet imported (the lock held); errors into ``failed``.  Returns how many."""
    count = 0
    for name in names:
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
    return count


_INSTALLED: list = []  # [True] once posenc.ui.compat.install() has run in this process
_FILES: dict = {}  # file -> what warm_for did for it ("seconds", "modules", "failed"), once per process


def _install(failed: dict) -> None:
    """``posenc.ui.compat``'s process-wide workarounds, once per process (the lock held)."""
    if _INSTALLED:
        return
    _INSTALLED.append(True)
    try:
        importlib.import_module("posenc.ui.compat").install()
    except Exception as exc:  # noqa: BLE001
        failed["posenc.ui.compat.install"] = f"{type(exc).__name__}: {exc}"[:200]


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
        count = _import_all(module_names(root), failed)
        count += _import_all(importlib.import_module("posenc._lazy").LAZY, failed)  # what posenc imports on first use
        _install(failed)
        _DONE.update(seconds=time.perf_counter() - t0, modules=count, failed=failed)
    return _DONE


def warm_for(*files, root: Path = ROOT) -> dict:
    """Import the ``closure`` of ``files`` (paths under ``root``: app.py, then the page a run opens) under the lock
    ``warm`` takes, once per file and process, and install ``posenc.ui.compat``'s workarounds (once).  A process that
    ran ``warm()`` (a deploy worker) returns at once.  Returns what it did for the last file: seconds, modules
    imported, failed."""
    out: dict = _DONE
    for f in files:
        key = str(f)
        if _DONE or key in _FILES:
            out = _DONE or _FILES[key]
            continue
        with _LOCK:
            if key in _FILES:
                out = _FILES[key]
                continue
            t0 = time.perf_counter()
            if str(root) not in sys.path:
                sys.path.insert(0, str(root))
            failed: dict[str, str] = {}
            count = _import_all(closure([f], root), failed)
            _install(failed)
            out = _FILES[key] = {"seconds": time.perf_counter() - t0, "modules": count, "failed": failed}
    return out


def _is_attribute(name: str) -> bool:
    """True when ``name`` is "package.attribute" of an imported module (a function or class, not a module)."""
    parent, _, attr = name.rpartition(".")
    mod = sys.modules.get(parent)
    return mod is not None and hasattr(mod, attr)


@asynccontextmanager
async def lifespan(_app):
    """The server's lifespan under ``streamlit run app.py`` (app.py's ``st.App``): as the server starts, a background
    thread runs ``warm_for("app.py", LANDING)`` -- what the first session's run would import -- and the server listens
    at once.  The imports then overlap the browser loading Streamlit's page and opening its WebSocket, instead of
    following them; a first run that arrives before they are done waits on the lock as it always did (issue 42: the
    cold start, 3.74 -> 3.05 s median of six alternating starts here; docs/performance.md, "2026-12-06, night")."""
    from streamlit.runtime.pages_manager import PagesManager

    # posenc.ui.compat's behaviour 1, at once (``compat.install`` sets it too, but the thread reaches it only after the
    # imports): no first run runs a page file alone, importing posenc outside the lock next to the thread's imports.
    PagesManager.uses_pages_directory = False
    threading.Thread(target=warm_for, args=("app.py", LANDING), name="posenc-warm", daemon=True).start()
    yield
