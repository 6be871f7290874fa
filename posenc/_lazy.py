"""Third-party modules that only some functions need, imported when a function first asks, one thread at a time.

Before a plain ``streamlit run`` paints its first page, it imports every module the page's files name in an import
statement, the lazy ones inside functions included (``deploy.warm.warm_for``: concurrent first runs must not
race each other's imports).  SciPy's fft, linalg and spatial cost ~0.35 CPU s there (~0.6 s on a busy host), and
the landing page needs none of them.  A function names them through ``load`` instead of an import statement: the
import happens at its first call, under this module's lock, and a deploy worker still imports them with everything
else before it turns healthy (``deploy.warm.warm``)."""

from __future__ import annotations

import importlib
import threading
from types import ModuleType

LAZY = ("scipy.fft", "scipy.linalg", "scipy.spatial")
_LOCK = threading.Lock()


def load(name: str) -> ModuleType:
    """The module ``name`` (one of ``LAZY``), imported on the first call in the process."""
    if name not in LAZY:
        raise ValueError(f"name must be one of {', '.join(LAZY)}; got {name!r}")
    with _LOCK:  # one importing thread at a time; later calls find it in sys.modules
        return importlib.import_module(name)
