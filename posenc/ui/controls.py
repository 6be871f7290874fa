"""URL-bound controls: every widget has a key and lives in the page's query string.

Each helper creates one Streamlit widget with ``bind="query-params"``, so a copied link opens the
same view.  Streamlit silently drops a URL value it cannot use (wrong type, out of range, too
long) and falls back to the default; these helpers notice that -- the raw value is still in
``st.query_params`` before the widget runs -- and show a visible note instead of staying silent.

Every bound key is recorded for the current run, so the page can offer "link to this view" and
report unknown URL parameters (see ``posenc.ui.frame``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from posenc.registry import ParamSpec, get_scheme
from posenc.ui import compat

_RUN = "_posenc_run"  # session-state slot holding this run's bound keys and notes


_LAST = "_posenc_last_page"  # (page path, keys it bound) of the previous run


def begin_run(page: str | None = None) -> None:
    """Reset the per-run registry; app.py calls this before running ``page``.

    Controls on different pages may share a key ("n", "d") with different meanings and ranges.
    Streamlit keeps a keyed widget's value across a page switch, so on entering a new page we
    drop the values the previous page bound: every page opens at its own defaults or its link.
    """
    last = st.session_state.get(_LAST)
    if page is not None and last is not None and last[0] != page:
        for key in last[1]:
            st.session_state.pop(key, None)
    st.session_state[_RUN] = {"bound": {}, "notes": [], "page": page}


def end_run() -> None:
    """Remember which page ran and which keys it bound (for the next begin_run)."""
    run = _run()
    st.session_state[_LAST] = (run.get("page"), tuple(run["bound"]))


def _run() -> dict:
    if _RUN not in st.session_state:
        begin_run()
    return st.session_state[_RUN]


def bound_values() -> dict[str, tuple[Any, Any, list[str]]]:
    """{key: (value, default, url strings)} of every bound control created in this run.

    The URL strings are what Streamlit writes into the query string for the current value
    (option widgets store the *label*, i.e. format_func(value)).
    """
    return dict(_run()["bound"])


def _raw(key: str) -> list[str]:
    try:
        return list(st.query_params.get_all(key))
    except Exception:  # pragma: no cover - defensive: a malformed query string never raises here
        return []


def _note_if_rejected(key: str, label: str, raw: list[str], value, parse: Callable[[str], Any], allowed: str, container) -> None:
    """Show a visible note when the URL carried a value for ``key`` that the widget did not take."""
    if not raw:
        return
    accepted = False
    if len(raw) == 1:
        try:
            accepted = _same(parse(raw[0]), value)
        except (ValueError, TypeError, OverflowError, KeyError):
            accepted = False
    if accepted:
        return
    shown = ", ".join(r if len(r) <= 40 else r[:37] + "..." for r in raw[:3])
    msg = (
        f"The link set **{label}** (`{key}`) to `{shown}`, which is not allowed here ({allowed}); "
        f"showing `{_fmt(value)}` instead."
    )
    _run()["notes"].append(msg)
    container.warning(msg, icon=":material/link_off:")


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
        except (TypeError, ValueError):
            return False
    return a == b


def _fmt(value, limit: int = 40) -> str:
    if isinstance(value, float):
        text = f"{value:g}"
    elif isinstance(value, (list, tuple)):
        text = ", ".join(map(str, value))
    else:
        text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _url_str(v) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return f"{v:g}" if abs(v) < 1e15 else repr(v)
    return str(v)


def _register(key: str, value, default, labels: Callable[[Any], str] | None = None) -> None:
    to_s = labels or _url_str
    url = [to_s(v) for v in value] if isinstance(value, list) else [to_s(value)]
    _run()["bound"][key] = (value, default, url)


def _label_parser(options: Sequence, format_func) -> Callable[[str], Any]:
    table = {str(format_func(o)): o for o in options}
    return lambda s: table[s]


def _snap(key: str, label: str, value, lo, hi, step, container):
    """Return ``value`` on the step grid from ``lo``; a link can carry an off-grid number (e.g.
    an odd head_dim for a step-2 control) that the widget accepts, so the page gets the nearest
    grid value and a visible note instead."""
    if step is None or not step:
        return value
    k = round((value - lo) / step)
    snapped = min(max(lo + k * step, lo), hi)
    snapped = type(value)(snapped) if isinstance(value, int) else float(snapped)
    if math.isclose(float(snapped), float(value), rel_tol=0, abs_tol=1e-9 * max(1.0, abs(step))):
        return value
    msg = (f"The link set **{label}** (`{key}`) to `{_fmt(value)}`, which is not a step of {_fmt(step)} from "
           f"{_fmt(lo)}; using `{_fmt(snapped)}` instead.")
    _run()["notes"].append(msg)
    container.warning(msg, icon=":material/link_off:")
    return snapped


def _parse_bool(s: str) -> bool:
    low = s.strip().lower()
    if low in ("true", "1", "yes", "on"):
        return True
    if low in ("false", "0", "no", "off"):
        return False
    raise ValueError(s)


def slider(label: str, key: str, *, default, lo, hi, step=None, help: str | None = None, fmt: str | None = None, container=None):
    """An int or float slider (the type follows ``default``), bound to the URL as ``key``."""
    c = container or st
    raw = _raw(key)
    is_int = isinstance(default, int) and not isinstance(default, bool)
    cast = int if is_int else float
    value = c.slider(label, cast(lo), cast(hi), cast(default), step=None if step is None else cast(step),
                     key=key, help=help, format=fmt, bind=compat.number_binding(key, raw))
    _note_if_rejected(key, label, raw, value, lambda s: cast(float(s)) if not is_int else int(s), f"{_fmt(lo)} to {_fmt(hi)}", c)
    if raw and step is not None and is_int:
        value = _snap(key, label, value, cast(lo), cast(hi), cast(step), c)
    _register(key, value, default)
    return value


def number(label: str, key: str, *, default, lo, hi, step=None, help: str | None = None, fmt: str | None = None, container=None):
    """A number input (int or float after ``default``), bound to the URL as ``key``."""
    c = container or st
    raw = _raw(key)
    is_int = isinstance(default, int) and not isinstance(default, bool)
    cast = int if is_int else float
    value = c.number_input(label, cast(lo), cast(hi), cast(default), step=None if step is None else cast(step),
                           key=key, help=help, format=fmt, bind=compat.number_binding(key, raw))
    _note_if_rejected(key, label, raw, value, lambda s: int(s) if is_int else float(s), f"{_fmt(lo)} to {_fmt(hi)}", c)
    if raw and step is not None and is_int:
        value = _snap(key, label, value, cast(lo), cast(hi), cast(step), c)
    _register(key, value, default)
    return value


def select_slider(label: str, key: str, options: Sequence, *, default, help: str | None = None, format_func=str, container=None):
    """A slider over a fixed list of values (e.g. powers of two), bound to the URL as ``key``."""
    c = container or st
    raw = _raw(key)
    options = list(options)
    value = c.select_slider(label, options=options, value=default, key=key, help=help, format_func=format_func, bind="query-params")
    _note_if_rejected(key, label, raw, value, _label_parser(options, format_func),
                      "one of " + ", ".join(str(format_func(o)) for o in options[:8]) + (" ..." if len(options) > 8 else ""), c)
    _register(key, value, default, lambda v: str(format_func(v)))
    return value


def choice(label: str, key: str, options: Sequence[str], *, default: str, format_func=str, style: str = "segmented",
           help: str | None = None, container=None) -> str:
    """One option out of a few, as a segmented control (default), radio or select box."""
    c = container or st
    raw = _raw(key)
    options = list(options)
    if style == "segmented":
        value = c.segmented_control(label, options, default=default, format_func=format_func, key=key, help=help, required=True, bind="query-params")
    elif style == "radio":
        value = c.radio(label, options, index=options.index(default), format_func=format_func, key=key, help=help,
                        horizontal=True, bind="query-params")
    else:
        value = c.selectbox(label, options, index=options.index(default), format_func=format_func, key=key, help=help, bind="query-params")
    if value is None:  # defensive: a deselected segmented control
        value = default
    _note_if_rejected(key, label, raw, value, _label_parser(options, format_func),
                      "one of " + ", ".join(str(format_func(o)) for o in options), c)
    _register(key, value, default, lambda v: str(format_func(v)))
    return value


def multi(label: str, key: str, options: Sequence[str], *, default: Sequence[str], format_func=str,
          max_selections: int | None = None, help: str | None = None, container=None) -> list[str]:
    """Several options (a multiselect), bound to the URL as repeated ``key`` parameters."""
    c = container or st
    raw = _raw(key)
    value = c.multiselect(label, list(options), default=list(default), format_func=format_func, key=key, help=help,
                          max_selections=max_selections, bind="query-params")
    labels = [str(format_func(v)) for v in value]
    if raw and sorted(raw) != sorted(labels):
        msg = (f"The link set **{label}** (`{key}`) to `{', '.join(r[:40] for r in raw[:5])}`, which is not allowed here "
               f"(choose from {', '.join(str(format_func(o)) for o in options)}); showing `{_fmt(labels)}` instead.")
        _run()["notes"].append(msg)
        c.warning(msg, icon=":material/link_off:")
    _register(key, list(value), list(default), lambda v: str(format_func(v)))
    return list(value)


def toggle(label: str, key: str, *, default: bool, help: str | None = None, container=None) -> bool:
    """An on/off toggle, bound to the URL as ``key`` (true/false)."""
    c = container or st
    raw = _raw(key)
    value = c.toggle(label, value=default, key=key, help=help, bind="query-params")
    _note_if_rejected(key, label, raw, value, _parse_bool, "true or false", c)
    _register(key, value, default)
    return value


def text(label: str, key: str, *, default: str, max_chars: int = 200, help: str | None = None, container=None) -> str:
    """A one-line text input of at most ``max_chars`` characters, bound to the URL as ``key``."""
    c = container or st
    raw = _raw(key)
    value = c.text_input(label, value=default, max_chars=max_chars, key=key, help=help, bind="query-params")
    _note_if_rejected(key, label, raw, value, str, f"at most {max_chars} characters", c)
    _register(key, value, default)
    return value


def param(spec: ParamSpec, *, key: str | None = None, container=None, label: str | None = None):
    """The widget a registry ParamSpec asks for, bound to the URL as ``key`` (default: its name)."""
    key = key or spec.name
    label = label or spec.label
    if spec.type == "bool":
        return toggle(label, key, default=bool(spec.default), help=spec.help or None, container=container)
    if spec.type == "choice":
        return choice(label, key, spec.choices, default=spec.default, help=spec.help or None, container=container)
    lo = spec.lo if not spec.lo_open else spec.lo + (spec.step or 1e-6)
    if spec.type == "int":
        return number(label, key, default=int(spec.default), lo=int(lo), hi=int(spec.hi), step=int(spec.step or 1),
                      help=spec.help or None, container=container)
    return number(label, key, default=float(spec.default), lo=float(lo), hi=float(spec.hi), step=float(spec.step or 0.1),
                  help=spec.help or None, container=container)


def scheme_params(scheme_key: str, *, prefix: str = "", exclude: Sequence[str] = (), container=None, columns: int = 0) -> dict:
    """Controls for every parameter of a registered scheme; returns {name: value}.

    Keys are ``prefix + name`` so two schemes on one page do not share a URL parameter.
    """
    specs = [p for p in get_scheme(scheme_key).params if p.name not in exclude]
    out = {}
    cols = (container or st).columns(columns) if columns and specs else None
    for i, spec in enumerate(specs):
        box = cols[i % columns] if cols else container
        out[spec.name] = param(spec, key=prefix + spec.name, container=box)
    return out
