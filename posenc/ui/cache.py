"""One cache for every posenc call a page makes, keyed on scalar arguments.

``cached(fn, *args, **kwargs)`` calls a posenc function through ``st.cache_data``.  The key is the
function's qualified name plus its arguments, which must be scalars, strings or tuples of them
(never arrays: Streamlit hashes large arrays from a sample, so array keys could collide).
Results are pickled copies, so a page cannot corrupt the cache by mutating what it gets.
Exceptions are not cached; ``safe`` turns a ValueError into a visible message.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import streamlit as st

MAX_ENTRIES = 512
MAX_BYTES = "64MB"  # pickled results kept, least-recently-used first; views return only what is drawn
_SCALARS = (int, float, str, bool, type(None))


def _check_key(value: Any, where: str) -> None:
    if isinstance(value, _SCALARS):
        return
    if isinstance(value, tuple):
        for v in value:
            _check_key(v, where)
        return
    raise TypeError(f"cached() arguments must be scalars or tuples of scalars; {where} is {type(value).__name__}")


def _resolve(qualname: str) -> Callable:
    module, _, name = qualname.partition(":")
    if not module.startswith("posenc"):
        raise ValueError(f"only posenc functions can be cached, got {qualname}")
    obj: Any = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


@st.cache_data(max_entries=MAX_ENTRIES, max_size=MAX_BYTES, show_spinner=False)
def _call(qualname: str, args: tuple, kwargs: tuple) -> Any:
    return _resolve(qualname)(*args, **dict(kwargs))


def cached(fn: Callable, *args, **kwargs) -> Any:
    """``fn(*args, **kwargs)`` through the shared scalar-keyed cache (``fn`` lives in posenc)."""
    for i, a in enumerate(args):
        _check_key(a, f"argument {i}")
    for k, v in kwargs.items():
        _check_key(v, f"argument {k!r}")
    qualname = f"{fn.__module__}:{fn.__qualname__}"
    return _call(qualname, tuple(args), tuple(sorted(kwargs.items())))


def safe(fn: Callable, *args, **kwargs) -> Any | None:
    """``cached(...)``, but a ValueError becomes an on-page error and the result is None."""
    try:
        return cached(fn, *args, **kwargs)
    except ValueError as exc:
        st.error(str(exc), icon=":material/error:")
        return None
