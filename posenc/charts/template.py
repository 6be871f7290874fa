"""Charts built once per setting and column layout, with each call's rows swapped in.

A control that changes a chart's numbers but not its settings (the method names, a marked length, the axis titles)
used to rebuild the chart whole: Altair's construction, its copies of every layer and its schema checks cost
0.05-0.13 CPU s a chart (cProfile, the context-extension page: four charts, a third of a new value's script time),
while only the rows differ.  ``templated("frame", ...)`` wraps a builder whose chart depends on the named DataFrame
arguments only through their columns and dtypes (their rows are what it draws; no row count, value or derived frame
shapes the chart): the builder is run once per setting on empty frames with those columns (``template``), and each
call returns a copy of that chart in which every empty frame is replaced by the call's own frame -- only the objects
on the way from the top to each frame are copied (``rebind``), so the template is never changed and is shared by
every session.  The chart is the one the builder would have built: tests/test_charts_template.py compares the two
specs, datasets included, for every templated builder.  Checks on the rows (``_check``) stay with the caller.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import altair as alt
import pandas as pd

from posenc.charts.memo import Unhashable, fingerprint

MAX_TEMPLATES = 128
_TEMPLATES: OrderedDict = OrderedDict()  # key -> (chart on empty frames, {id(empty frame): argument name}, frames, derived)
_LOCK = threading.Lock()
_NESTED = ("layer", "hconcat", "vconcat", "concat", "spec")  # where a chart holds charts
ENABLED = [True]  # False: every templated builder builds directly (tests compare the two)
MAX_MADE = 256
_MADE: OrderedDict = OrderedDict()  # id(chart returned) -> (that chart, its template entry, the swap that made it)
F = TypeVar("F", bound=Callable[..., Any])


def _empty(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.iloc[:0].copy()


def rebind(chart, swap: dict[int, pd.DataFrame]):
    """``chart`` with each DataFrame whose id is in ``swap`` replaced by ``swap[id]`` (as its ``data``, at any depth of
    layers and concatenations); the charts on the way are shallow copies, nothing of ``chart`` is changed."""
    if not isinstance(chart, alt.SchemaBase):
        return chart
    changes = {}
    for name, value in chart._kwds.items():
        if isinstance(value, pd.DataFrame) and id(value) in swap:
            changes[name] = swap[id(value)]
        elif name in _NESTED and isinstance(value, list):
            new = [rebind(v, swap) for v in value]
            if any(a is not b for a, b in zip(new, value)):
                changes[name] = new
        elif name in _NESTED and isinstance(value, alt.SchemaBase):
            new = rebind(value, swap)
            if new is not value:
                changes[name] = new
    if not changes:
        return chart
    out = object.__new__(type(chart))
    for k, v in chart.__dict__.items():
        object.__setattr__(out, k, v)
    object.__setattr__(out, "_kwds", {**chart._kwds, **changes})
    return out


def templated(*frames: str) -> Callable[[F], F]:
    """Build ``fn``'s chart once per setting on empty frames for the arguments named ``frames``, and swap each
    call's frames in (see the module's docstring).  An argument that cannot be fingerprinted builds directly."""

    def wrap(fn: F) -> F:
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            if not ENABLED[0]:
                return fn(*args, **kwargs)
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            real = {n: bound.arguments[n] for n in frames if isinstance(bound.arguments[n], pd.DataFrame)}  # None: none
            empty = {n: _empty(f) for n, f in real.items()}
            try:
                key = (fn.__module__, fn.__qualname__, fingerprint({**bound.arguments, **empty}))
            except Unhashable:
                return fn(*args, **kwargs)
            with _LOCK:
                entry = _TEMPLATES.get(key)
                if entry is not None:
                    _TEMPLATES.move_to_end(key)
            if entry is None:
                bound.arguments.update(empty)
                chart = fn(*bound.args, **bound.kwargs)
                # the empty frames kept (their ids stay theirs), and what ``derived`` made of the template
                entry = (chart, {id(f): n for n, f in empty.items()}, empty, {})
                with _LOCK:
                    _TEMPLATES[key] = entry
                    while len(_TEMPLATES) > MAX_TEMPLATES:
                        _TEMPLATES.popitem(last=False)
            chart, names = entry[0], entry[1]
            swap = {i: real[n] for i, n in names.items()}
            return _made(rebind(chart, swap), entry, swap, chart)

        wrapped.__wrapped__ = fn
        return wrapped  # type: ignore[return-value]

    return wrap


def derived(chart, fn: Callable, name: str):
    """``fn(chart)`` for a chart ``templated`` returned: ``fn`` applied once to its template (kept with it under
    ``name``) with the call's rows swapped into the result, so that a step to a new value does not redo it (``style``:
    a copy of the whole chart).  None for any other chart.  ``fn`` must keep the template's frames as they are."""
    with _LOCK:
        made = _MADE.get(id(chart))
    if made is None or made[0] is not chart:
        return None
    _, entry, swap, _ = made
    done = entry[3]
    if name not in done:
        done[name] = fn(entry[0])
    return _made(rebind(done[name], swap), entry, swap, done[name])


def _made(out, entry, swap: dict, base):
    """Note that ``out`` is ``base`` (a chart on the template's empty frames) with ``swap``'s frames in their places."""
    with _LOCK:
        _MADE[id(out)] = (out, entry, swap, base)
        while len(_MADE) > MAX_MADE:
            _MADE.popitem(last=False)
    return out


def origin(chart) -> tuple[Any, list[tuple[pd.DataFrame, pd.DataFrame]]] | None:
    """(the chart on the template's empty frames, [(empty frame, the call's frame in its place), ...]) for a chart that
    ``templated`` or ``derived`` returned, else None.  posenc.ui.compat.chart_spec converts the base once and swaps the
    frames' Arrow bytes into its spec."""
    with _LOCK:
        made = _MADE.get(id(chart))
    if made is None or made[0] is not chart:
        return None
    _, entry, swap, base = made
    return base, [(f, swap[id(f)]) for f in entry[2].values()]


def clear() -> None:
    with _LOCK:
        _TEMPLATES.clear()
        _MADE.clear()
