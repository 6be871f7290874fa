"""Issue 41, R2: on a fresh worker, concurrent first runs imported posenc in parallel script threads and deadlocked
(``_DeadlockError: deadlock detected by _ModuleLock('posenc.analysis.compare')``) -- on exactly the recovery path, a
worker restarted under traffic.  deploy/warm.py imports everything a page can import, once, under a lock: app.py
calls it before it imports posenc, and ``python -m deploy``'s workers call it before Streamlit listens, so their
health check turns green only after the imports."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from deploy.cluster import Cluster, exclusive, nginx_path, run_coroutine
from deploy.warm import LANDING, ROOT, _fast_imports, _imports, closure, module_names

PAGES = sorted(p.stem for p in (ROOT / "pages").glob("*.py"))




def _python(code: str, timeout: float = 300) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                         timeout=timeout, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_warm_imports_every_module_a_page_imports_and_installs_the_workarounds():
    names = module_names()
    assert "posenc.analysis.compare" in names and "posenc.ui.frame" in names
    out = _python("""
        import ast, sys
        from pathlib import Path
        from deploy.warm import warm
        info = warm()
        assert warm() is info  # once per process
        missing = []
        for page in sorted(Path("pages").glob("*.py")):
            for node in ast.walk(ast.parse(page.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("posenc"):
                    if node.module not in sys.modules:
                        missing.append((page.name, node.module))
        from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
        from streamlit.runtime.pages_manager import PagesManager
        from streamlit.runtime.state import query_params
        from posenc._lazy import LAZY
        print(missing, info["failed"], MemoryUploadedFileManager.add_file._posenc_guard,
              query_params.sanitize_query_string._posenc_guard, PagesManager.uses_pages_directory,
              all(name in sys.modules for name in LAZY))  # what posenc imports on first use, too
    """)
    assert out.split() == ["[]", "{}", "True", "True", "False", "True"], out


def test_concurrent_first_runs_in_threads_never_deadlock():
    """Each thread does what a script thread does on a fresh worker: app.py's first lines, then its page's imports."""
    code = """
        import ast, threading
        from pathlib import Path
        pages = sorted(Path("pages").glob("*.py"))
        def imports(page):
            tree = ast.parse(page.read_text())
            body = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
            return compile(ast.Module(body=body, type_ignores=[]), str(page), "exec")
        codes = [imports(p) for p in pages]
        barrier, errors = threading.Barrier(len(codes)), []
        def first_run(code):
            barrier.wait()
            try:
                from deploy.warm import warm
                warm()
                exec(code, {"__name__": "__page__"})
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
        threads = [threading.Thread(target=first_run, args=(c,)) for c in codes]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print(len(errors), errors[:3])
    """
    for _ in range(3):  # three fresh processes (without warm(), most of them deadlock somewhere)
        assert _python(code).startswith("0 []")


def test_the_fast_reading_finds_every_import_the_parse_finds():
    """A plain ``streamlit run`` reads a page's closure with a regular expression (issue 42): it must miss nothing."""
    files = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "posenc").rglob("*.py"))]
    missed = {f.name: _imports(f, ROOT) - _fast_imports(f, ROOT) for f in files}
    assert not {k: v for k, v in missed.items() if v}


def test_a_page_closure_holds_its_imports_and_leaves_other_pages_out():
    app, home = set(closure(["app.py"])), set(closure(["pages/home.py"]))
    assert {"posenc.ui.frame", "posenc.ui.compat", "streamlit"} <= app
    assert "posenc.views.home" in home and "posenc.views.lab" not in app | home  # the lab is not the first page's
    # every posenc module a posenc module in the closure imports is in it too (lazy imports inside functions included)
    for name in [n for n in home if n.startswith("posenc")]:
        src = ROOT.joinpath(*name.split(".")).with_suffix(".py")
        if src.exists():
            assert _imports(src, ROOT) <= home | app, name


def test_a_plain_run_imports_only_what_its_first_page_needs_and_concurrent_first_runs_never_deadlock():
    """app.py's ``warm_for``: the first page's closure only, and concurrent first runs of every page (each thread does
    what a script thread does: app.py's warm_for, its imports, the page's warm_for, then the page's imports) never
    deadlock."""
    out = _python("""
        import sys
        from deploy.warm import warm_for
        info = warm_for("app.py", "pages/home.py")
        print(info["failed"], "posenc.views.lab" in sys.modules, "posenc.ui.frame" in sys.modules,
              any(name.startswith("scipy") for name in sys.modules))  # SciPy comes with the first call that needs it
        from posenc.analysis.geometry import count_close_pairs
        print(count_close_pairs([[float(i), 0.0] for i in range(3000)], 1.0), "scipy.spatial" in sys.modules)
    """)
    assert out.split() == ["{}", "False", "True", "False", "2999", "True"], out
    code = """
        import ast, threading
        from pathlib import Path
        pages = sorted(Path("pages").glob("*.py"))
        def imports(page):
            tree = ast.parse(page.read_text())
            body = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
            return compile(ast.Module(body=body, type_ignores=[]), str(page), "exec")
        codes = [(str(p), imports(p)) for p in pages]
        barrier, errors = threading.Barrier(len(codes)), []
        def first_run(path, code):
            barrier.wait()
            try:
                from deploy.warm import warm_for
                warm_for("app.py")
                from posenc.ui import compat, controls, frame
                warm_for(path)
                exec(code, {"__name__": "__page__"})
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
        threads = [threading.Thread(target=first_run, args=c) for c in codes]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print(len(errors), errors[:3])
    """
    for _ in range(3):
        assert _python(code).startswith("0 []")


def test_a_fresh_worker_serves_concurrent_first_runs_of_every_page():
    """Fourteen sessions open fourteen pages at once on a worker that has just started."""
    if nginx_path() is None:
        pytest.skip("nginx is not installed (apt-get install nginx); .ci/run installs it")
    from bench.stclient import StSession

    async def first_runs(url):
        async def one(page):
            s = StSession(url, page, timeout=240)
            try:
                return page, (await s.open()).exceptions
            except Exception as exc:  # noqa: BLE001 - reported below
                return page, [f"{type(exc).__name__}: {exc}"]
            finally:
                await s.close()
        return await asyncio.gather(*(one(p) for p in PAGES if p != "home"))

    with exclusive("8634-8635"), Cluster(workers=1, port=8634, start_timeout=180) as c:
        results = run_coroutine(first_runs(c.url))
        log = Path(c.nodes[0].log).read_text(errors="replace")
    broken = [(p, e) for p, e in results if e]
    assert not broken, broken
    assert "DeadlockError" not in log
    assert "[worker] warm:" in log and "failed: none" in log


def test_streamlit_run_serves_app_py_as_an_app_whose_lifespan_warms_the_landing_page_without_waiting():
    """Issue 42, the cold start: ``streamlit run app.py`` finds app.py's ``st.App`` (Streamlit's own discovery) and
    serves it; its lifespan starts the landing page's imports in a thread and lets the server listen at once (here the
    thread is held until the lifespan has yielded, so a lifespan that waited for it could not yield), with Streamlit's
    legacy pages mode already ended, so no first run imports a page outside the lock meanwhile."""
    from streamlit.web.server.app_discovery import discover_asgi_app

    from posenc.ui.pages import HOME

    found = discover_asgi_app(ROOT / "app.py")
    assert found.is_asgi_app and found.import_string == "app:app", found
    assert LANDING == HOME  # the page a bare address opens
    out = _python("""
        import asyncio, sys, threading
        import deploy.warm as w
        held, calls, real = threading.Event(), [], w.warm_for
        def warm_for(*files):
            held.wait(60)
            calls.append(files)
            return real(*files)
        w.warm_for = warm_for
        from streamlit.runtime.pages_manager import PagesManager
        async def serve():
            async with w.lifespan(None):
                yielded_first = not calls  # the server listens while the thread is still held
                routed = PagesManager.uses_pages_directory is False  # every first run goes through app.py's lock
            return yielded_first and routed
        yielded_first = asyncio.run(serve())
        held.set()
        [t.join(300) for t in threading.enumerate() if t.name == "posenc-warm"]
        print(yielded_first, calls, sorted(w._FILES), "posenc.ui.frame" in sys.modules, "posenc.views.home" in sys.modules,
              "posenc.views.lab" in sys.modules)
    """)
    assert out.split() == ["True", "[('app.py',", "'pages/home.py')]", "['app.py',", "'pages/home.py']", "True", "True",
                           "False"], out
