"""URL-bound controls: every widget has a key and lives in the page's query string.

Each helper creates one Streamlit widget with ``bind="query-params"``, so a copied link opens the
same view.  Streamlit silently drops a URL value it cannot use (wrong type, out of range, too
long) and falls back to the default; these helpers notice that -- the raw value is still in
``st.query_params`` before the widget runs -- and show a visible note instead of staying silent.

Every bound key is recorded for the current run, so the page can offer "link to this view" and
report unknown URL parameters (see ``posenc.ui.frame``), together with the range or options the
control offered (``control_specs``: what the boundary test sets every control to).

Outside text never reaches Markdown as Markdown: labels and option labels (which Streamlit renders as
Markdown) go through ``md.escape``, and link values in notes through ``md.code`` (``posenc.ui.md``).
A control whose range another control sets (the head shown, of H heads) collapses to its one value,
shown disabled with a note, when that range leaves a single value: Streamlit refuses a slider whose
minimum equals its maximum.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from posenc.charts.base import url_param
from posenc.registry import ParamSpec, get_scheme
from posenc.ui import compat, md

_RUN = "_posenc_run"  # session-state slot holding this run's bound keys and notes


_LAST = "_posenc_last_page"  # (page path, {key: value} it bound) of the previous run


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
        st.session_state.pop("_posenc_exports", None)  # the previous page's chart data, kept for its export buttons
    st.session_state[_RUN] = {"bound": {}, "notes": [], "specs": {}, "page": page}


def end_run() -> None:
    """Remember which page ran and the values it bound (for the next begin_run, and ``previous_values``)."""
    st.session_state[_LAST] = (_run().get("page"), {k: v[0] for k, v in _run()["bound"].items()})


def previous_values() -> dict:
    """{key: value} the previous full run bound, if it ran this page ({} otherwise)."""
    last = st.session_state.get(_LAST)
    return dict(last[1]) if last is not None and last[0] == _run().get("page") else {}


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


def control_specs() -> dict[str, dict]:
    """{key: spec} of every bound control created in this run: what a link may set it to.

    spec["kind"] is "range" (lo, hi: the smallest and largest values on the step grid, lo_url and hi_url
    as a link writes them; fixed: True when the range left one value), "options" (options: the URL
    strings, in order; ordered: a select slider), "multi" (options, max_selections, default) or "text"
    (max_chars, default).
    """
    return dict(_run().get("specs", {}))


def step_values(key: str) -> tuple[list, list]:
    """The values one step of control ``key`` reaches in this run, (above, below), nearest first; ([], []): it has no steps."""
    got = _run().get("steps", {}).get(key)
    if got is None:
        return [], []
    if got[0] == "options":
        options, i = got[1], got[2]
        return list(options[i + 1:i + 2]), list(options[max(i - 1, 0):i][::-1])
    _, lo, hi, grid, value = got
    up, down = (value + grid, value - grid) if isinstance(value, int) else (round(value + grid, 12), round(value - grid, 12))
    return ([up] if up <= hi else []), ([down] if down >= lo else [])


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
    _note(container, f"The link set **{_label(label)}** ({md.code(key)}) to {_shown(raw)}, which is not allowed here "
                     f"({md.escape(allowed, limit=300)}); showing {md.code(_fmt(value))} instead.")


def _note(container, msg: str) -> None:
    _run()["notes"].append(msg)
    container.warning(msg, icon=":material/link_off:")


def _shown(raw: list[str], limit: int = 3) -> str:
    """The link's values as inert code spans (at most ``limit`` of them, each cut to 40 characters)."""
    more = f" and {len(raw) - limit} more" if len(raw) > limit else ""
    return ", ".join(md.code(r, 40) for r in raw[:limit]) + more


def _label(label: str) -> str:
    """A widget label as Markdown that shows its text: pages build labels from link values (a typed word)."""
    return md.escape(label, limit=200)


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
    if isinstance(v, float):  # exact: a link reopens the same value (":g" wrote 1000001 as 1e+06)
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)
    return str(v)


def _register(key: str, value, default, labels: Callable[[Any], str] | None = None, spec: dict | None = None) -> None:
    to_s = labels or _url_str
    url = [to_s(v) for v in value] if isinstance(value, list) else [to_s(value)]
    run = _run()
    run["bound"][key] = (value, default, url)
    run.setdefault("specs", {})[key] = spec or {"kind": "unknown"}


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
    _note(container, f"The link set **{_label(label)}** ({md.code(key)}) to {md.code(_fmt(value))}, which is not a step of "
                     f"{md.escape(_fmt(step))} from {md.escape(_fmt(lo))}; using {md.code(_fmt(snapped))} instead.")
    return snapped


def _parse_bool(s: str) -> bool:
    low = s.strip().lower()
    if low in ("true", "1", "yes", "on"):
        return True
    if low in ("false", "0", "no", "off"):
        return False
    raise ValueError(s)


def _grid_top(lo, hi, step):
    """The largest value lo + k * step that is <= hi (hi itself without a step)."""
    if not step:
        return hi
    top = lo + math.floor((hi - lo) / step + 1e-9) * step
    return type(lo)(top) if isinstance(lo, int) else float(top)


def _fixed(label: str, key: str, value, default, raw: list[str], parse, why: str | None, c, to_s=None):
    """The one value a control can take here: shown disabled, with a note, and registered as bound."""
    shown = to_s(value) if to_s else _fmt(value)
    reason = why or "no other value fits the other settings"
    c.text_input(_label(label), value=shown, disabled=True, key=f"_fixed_{key}", help=md.escape(reason, limit=300))
    c.caption(f":material/lock: Fixed at {md.code(shown)}: {md.escape(reason, limit=300)}.")
    _note_if_rejected(key, label, raw, value, parse, f"only {shown} with the current settings", c)
    url = (to_s or _url_str)(value)
    _register(key, value, default, to_s, spec={"kind": "range", "lo": value, "hi": value, "lo_url": url, "hi_url": url, "fixed": True})
    return value


def _numeric(widget, label: str, key: str, *, default, lo, hi, step, help, fmt, container, why):
    c = container or st
    raw = _raw(key)
    is_int = isinstance(default, int) and not isinstance(default, bool)
    cast = int if is_int else float
    lo, hi = cast(lo), cast(hi)
    step = None if step is None else cast(step)
    parse = (lambda s: int(s)) if is_int else (lambda s: float(s))
    top = _grid_top(lo, hi, step) if is_int else hi
    if top <= lo:  # another control left this one a single value (or none: then its lowest)
        return _fixed(label, key, lo, cast(default), raw, parse, why, c)
    default = min(max(cast(default), lo), hi)  # a range set by another control may exclude the page's default
    value = widget(_label(label), lo, hi, default, step=step, key=key, help=help, format=fmt, bind=compat.number_binding(key, raw))
    _note_if_rejected(key, label, raw, value, parse, f"{_fmt(lo)} to {_fmt(hi)}", c)
    if raw and step is not None and is_int:
        value = _snap(key, label, value, lo, hi, step, c)
    _register(key, value, default, spec={"kind": "range", "lo": lo, "hi": top, "lo_url": _url_str(lo), "hi_url": _url_str(top),
                                         "step": step, "fixed": False})
    _run().setdefault("steps", {})[key] = ("range", lo, top, step if step is not None else (1 if is_int else 0.01), value)  # Streamlit's step
    return value


def slider(label: str, key: str, *, default, lo, hi, step=None, help: str | None = None, fmt: str | None = None, container=None,
           why: str | None = None):
    """An int or float slider (the type follows ``default``), bound to the URL as ``key``.

    ``lo``/``hi`` may come from another control; when they leave one value the control is shown fixed,
    with ``why`` (e.g. "with one head there is only head 1") as its note.
    """
    c = container or st
    return _numeric(c.slider, label, key, default=default, lo=lo, hi=hi, step=step, help=help, fmt=fmt, container=c, why=why)


def number(label: str, key: str, *, default, lo, hi, step=None, help: str | None = None, fmt: str | None = None, container=None,
           why: str | None = None):
    """A number input (int or float after ``default``), bound to the URL as ``key``; ``why`` as for ``slider``."""
    c = container or st
    return _numeric(c.number_input, label, key, default=default, lo=lo, hi=hi, step=step, help=help, fmt=fmt, container=c, why=why)


@functools.lru_cache(maxsize=4096)
def _escaped_label(text: str) -> str:
    return md.escape(text, limit=None)


def _shown_labels(format_func) -> Callable[[Any], str]:
    """Option labels as Streamlit's Markdown-rendering option widgets (segmented, radio, select slider) need them.
    Escaping is remembered per label: a run asks for each of a select slider's options (512 on the sinusoid's d)
    three times, and every run asks again."""
    return lambda o: _escaped_label(str(format_func(o)))


def select_slider(label: str, key: str, options: Sequence, *, default, help: str | None = None, format_func=str, container=None,
                  why: str | None = None):
    """A slider over a fixed list of values (e.g. powers of two), bound to the URL as ``key``."""
    c = container or st
    raw = _raw(key)
    options = list(options)
    shown = _shown_labels(format_func)
    if default not in options:  # the options may depend on another control
        default = options[0]
    if len(options) == 1:
        return _fixed(label, key, options[0], default, raw, _label_parser(options, shown), why, c, to_s=shown)
    value = c.select_slider(_label(label), options=options, value=default, key=key, help=help, format_func=shown, bind="query-params")
    _note_if_rejected(key, label, raw, value, _label_parser(options, shown),
                      "one of " + ", ".join(str(format_func(o)) for o in options[:8]) + (" ..." if len(options) > 8 else ""), c)
    _register(key, value, default, shown, spec={"kind": "options", "options": [shown(o) for o in options], "ordered": True})
    _run().setdefault("steps", {})[key] = ("options", tuple(options), options.index(value))
    return value


def choice(label: str, key: str, options: Sequence[str], *, default: str, format_func=str, style: str = "segmented",
           help: str | None = None, container=None) -> str:
    """One option out of a few, as a segmented control (default), radio or select box."""
    c = container or st
    raw = _raw(key)
    options = list(options)
    shown = _shown_labels(format_func) if style in ("segmented", "radio") else (lambda o: str(format_func(o)))
    lab = _label(label)
    if style == "segmented":
        value = c.segmented_control(lab, options, default=default, format_func=shown, key=key, help=help, required=True, bind="query-params")
    elif style == "radio":
        value = c.radio(lab, options, index=options.index(default), format_func=shown, key=key, help=help,
                        horizontal=True, bind="query-params")
    else:
        value = c.selectbox(lab, options, index=options.index(default), format_func=shown, key=key, help=help, bind="query-params")
    if value is None:  # defensive: a deselected segmented control
        value = default
    _note_if_rejected(key, label, raw, value, _label_parser(options, shown),
                      "one of " + ", ".join(str(format_func(o)) for o in options), c)
    _register(key, value, default, shown, spec={"kind": "options", "options": [shown(o) for o in options], "ordered": False})
    return value


def multi(label: str, key: str, options: Sequence[str], *, default: Sequence[str], format_func=str,
          max_selections: int | None = None, help: str | None = None, container=None) -> list[str]:
    """Several options (a multiselect), bound to the URL as repeated ``key`` parameters."""
    c = container or st
    raw = _raw(key)
    value = c.multiselect(_label(label), list(options), default=list(default), format_func=format_func, key=key, help=help,
                          max_selections=max_selections, bind="query-params")
    labels = [str(format_func(v)) for v in value]
    if raw and sorted(raw) != sorted(labels):
        _note(c, f"The link set **{_label(label)}** ({md.code(key)}) to {_shown(raw, 5)}, which is not allowed here "
                 f"({md.escape('choose from ' + ', '.join(str(format_func(o)) for o in options), limit=300)}); "
                 f"showing {md.code(_fmt(labels)) if labels else 'nothing'} instead.")
    _register(key, list(value), list(default), lambda v: str(format_func(v)),
              spec={"kind": "multi", "options": [str(format_func(o)) for o in options], "max_selections": max_selections,
                    "default": [str(format_func(o)) for o in default]})
    return list(value)


def toggle(label: str, key: str, *, default: bool, help: str | None = None, container=None) -> bool:
    """An on/off toggle, bound to the URL as ``key`` (true/false)."""
    c = container or st
    raw = _raw(key)
    value = c.toggle(_label(label), value=default, key=key, help=help, bind="query-params")
    _note_if_rejected(key, label, raw, value, _parse_bool, "true or false", c)
    _register(key, value, default, spec={"kind": "options", "options": ["false", "true"], "ordered": False})
    return value


def text(label: str, key: str, *, default: str, max_chars: int = 200, help: str | None = None, container=None) -> str:
    """A one-line text input of at most ``max_chars`` characters, bound to the URL as ``key``."""
    c = container or st
    raw = _raw(key)
    value = c.text_input(_label(label), value=default, max_chars=max_chars, key=key, help=help, bind="query-params")
    _note_if_rejected(key, label, raw, value, str, f"at most {max_chars} characters", c)
    _register(key, value, default, spec={"kind": "text", "max_chars": max_chars, "default": default})
    return value


def in_chart(label: str, key: str, options: Sequence[int], *, default: int, container=None):
    """A control drawn inside charts, bound to the URL as ``key``: the chart parameter
    (``posenc.charts.base.url_param``: radio buttons under a chart that pick among data it already holds)
    to add to every chart that shows it.

    Choosing in the browser repaints at once; the browser writes the choice into the address bar and tells
    the server once the hand stops (``posenc.ui.assets.CLIENT_PARAMS``), so the parameter starts at the
    value the link (or that last word) carries: checked like any bound control, with a note when the
    link's value is not one of ``options``.  Its value is ``param.param.value``.
    """
    c = container or st
    raw = _raw(key)
    options = [int(o) for o in options]
    default = int(default) if int(default) in options else options[0]
    parse = _label_parser(options, str)
    value = parse(raw[0]) if len(raw) == 1 and raw[0] in map(str, options) else default
    _note_if_rejected(key, label, raw, value, parse, "one of " + ", ".join(map(str, options)), c)
    _register(key, value, default, spec={"kind": "options", "options": [str(o) for o in options], "ordered": True})
    return url_param(key, label, options, value)


def param(spec: ParamSpec, *, key: str | None = None, container=None, label: str | None = None,
          bounds: tuple[float, float] | None = None, why: str | None = None):
    """The widget a registry ParamSpec asks for, bound to the URL as ``key`` (default: its name).

    ``bounds`` narrows a numeric range (``Scheme.param_range``: the bounds other parameters set).
    """
    key = key or spec.name
    label = label or spec.label
    if spec.type == "bool":
        return toggle(label, key, default=bool(spec.default), help=spec.help or None, container=container)
    if spec.type == "choice":
        return choice(label, key, spec.choices, default=spec.default, help=spec.help or None, container=container)
    lo = spec.lo if not spec.lo_open else spec.lo + (spec.step or 1e-6)
    hi = spec.hi
    if bounds is not None:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    if spec.type == "int":
        return number(label, key, default=int(spec.default), lo=math.ceil(lo), hi=math.floor(hi), step=int(spec.step or 1),
                      help=spec.help or None, container=container, why=why)
    return number(label, key, default=float(spec.default), lo=float(lo), hi=float(hi), step=float(spec.step or 0.1),
                  help=spec.help or None, container=container, why=why)


def scheme_params(scheme_key: str, *, prefix: str = "", exclude: Sequence[str] = (), container=None, columns: int = 0) -> dict:
    """Controls for every parameter of a registered scheme; returns {name: value}.

    Keys are ``prefix + name`` so two schemes on one page do not share a URL parameter.  A parameter
    whose range another one bounds (``ParamSpec.lo_from``/``hi_from``) offers only the values that fit
    the ones chosen before it (the rest at their defaults), so every combination offered is valid.
    """
    scheme = get_scheme(scheme_key)
    specs = [p for p in scheme.params if p.name not in exclude]
    out: dict = {}
    cols = (container or st).columns(columns) if columns and specs else None
    for i, spec in enumerate(specs):
        box = cols[i % columns] if cols else container
        bounds = None
        if spec.type in ("int", "float") and (spec.lo_from or spec.hi_from):
            bounds = scheme.param_range(spec.name, {**{q.name: q.default for q in scheme.params}, **out})
        out[spec.name] = param(spec, key=prefix + spec.name, container=box, bounds=bounds)
    return out
