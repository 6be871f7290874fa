"""Chart builders remembered by what they draw: the same data and settings give the same chart object.

A page reruns on every control change, and most of its charts do not change with it; rebuilding one
costs Altair's construction and schema validation (most of a warm rerun's script time, measured with
cProfile on the lab page).  ``memo`` wraps a builder: its arguments are fingerprinted -- scalars as
they are, DataFrames / Series / arrays by a digest of their content, Altair parameters and small
schema objects by their JSON, and a chart that ``memo`` itself made by the fingerprint it was built for (never by
its address: a freed chart's address goes to the next object, so a chart built on it would be handed to a new one) -- and the chart
built for that fingerprint is returned again (the 256 most recent, built from at most 96 MiB of data
together, shared by every session: Altair's methods copy, never change, a chart in place).  An argument it cannot fingerprint (a function, an
unknown object) makes the call go through unremembered.  ``made(chart)`` says whether a chart came
from here, so a consumer may remember its own work on it by identity (``posenc.ui.compat.chart_spec``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import altair as alt
import numpy as np
import pandas as pd

MAX_CHARTS = 256
MAX_BYTES = 96 * 2**20  # the data the remembered charts were built from (frames and arrays), all together
_CHARTS: OrderedDict = OrderedDict()  # fingerprint -> (chart, bytes of its arguments' data), most recent last
_MADE: dict[int, tuple] = {}  # id(chart) -> (chart, the fingerprint it was built for), for every chart held in _CHARTS
_LOCK = threading.Lock()
F = TypeVar("F", bound=Callable[..., Any])


class Unhashable(TypeError):
    """An argument ``fingerprint`` cannot reduce to a value."""


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def fingerprint(x) -> Any:
    """A hashable value equal for two arguments that draw the same chart (raises Unhashable)."""
    if x is None or isinstance(x, (bool, int, str, bytes)):
        return x
    if isinstance(x, float):
        return ("f", repr(x))  # nan == nan here
    if isinstance(x, (np.integer, np.floating, np.bool_)):
        return ("np", x.dtype.str, repr(x.item()))
    if isinstance(x, (tuple, list)):
        return (type(x).__name__, tuple(fingerprint(v) for v in x))
    if isinstance(x, dict):
        return ("dict", tuple(sorted((str(k), fingerprint(v)) for k, v in x.items())))
    if isinstance(x, range):
        return ("range", x.start, x.stop, x.step)
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            raise Unhashable("object array")
        return ("nd", x.shape, x.dtype.str, _digest(np.ascontiguousarray(x).tobytes()))
    if isinstance(x, pd.DataFrame):
        kinds = tuple((str(c), str(t), tuple(t.categories) if isinstance(t, pd.CategoricalDtype) else None)
                      for c, t in x.dtypes.items())
        return ("df", x.shape, kinds, _digest(pd.util.hash_pandas_object(x, index=True).to_numpy().tobytes()))
    if isinstance(x, pd.Series):
        return ("s", str(x.name), str(x.dtype), _digest(pd.util.hash_pandas_object(x, index=True).to_numpy().tobytes()))
    if isinstance(x, alt.Parameter):
        return ("param", json.dumps(x.param.to_dict(), sort_keys=True, default=str))
    if isinstance(x, alt.TopLevelMixin):
        entry = _MADE.get(id(x))
        if entry is not None and entry[0] is x:
            return ("made", entry[1])
        raise Unhashable("a chart memo did not make")
    if isinstance(x, alt.SchemaBase):  # Title, Legend, Axis, Tooltip, Scale, expressions ...
        return ("alt", type(x).__name__, json.dumps(x.to_dict(validate=False), sort_keys=True, default=str))
    raise Unhashable(type(x).__name__)


def weight(x) -> int:
    """Bytes of the frames and arrays in an argument (what a chart built from it holds, about)."""
    if isinstance(x, pd.DataFrame):
        return int(x.memory_usage(index=True, deep=False).sum())
    if isinstance(x, (pd.Series, np.ndarray)):
        return int(x.nbytes)
    if isinstance(x, (tuple, list)):
        return sum(weight(v) for v in x)
    if isinstance(x, dict):
        return sum(weight(v) for v in x.values())
    return 0


def memo(fn: F) -> F:
    """Remember ``fn``'s chart by the fingerprint of its arguments (see the module's docstring)."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        try:
            key = (fn.__module__, fn.__qualname__, fingerprint(args), fingerprint(kwargs))
        except Unhashable:
            return fn(*args, **kwargs)
        with _LOCK:
            if key in _CHARTS:
                _CHARTS.move_to_end(key)
                return _CHARTS[key][0]
        out = fn(*args, **kwargs)
        size = weight(args) + weight(kwargs)
        with _LOCK:
            _CHARTS[key] = (out, size)
            _MADE[id(out)] = (out, key)
            total = sum(w for _, w in _CHARTS.values())
            while len(_CHARTS) > 1 and (len(_CHARTS) > MAX_CHARTS or total > MAX_BYTES):
                _, (old, w) = _CHARTS.popitem(last=False)
                total -= w
                if not any(c is old for c, _ in _CHARTS.values()):
                    _MADE.pop(id(old), None)
        return out

    wrapped.__wrapped__ = fn
    return wrapped  # type: ignore[return-value]


def made(chart) -> bool:
    """True when ``chart`` is a chart ``memo`` holds (so its identity names its content)."""
    entry = _MADE.get(id(chart))
    return entry is not None and entry[0] is chart


def clear() -> None:
    with _LOCK:
        _CHARTS.clear()
        _MADE.clear()
