"""Altair's copies of a chart without rebuilding it (installed by ``posenc.charts``).

Altair copies a chart whenever it derives one: ``copy(deep=False)`` in ``properties``, ``resolve_scale``, ``configure``
and ``to_dict``, and a deep ``copy()`` of every layer twice in each ``alt.layer`` (``_remove_duplicate_params``,
``_combine_subchart_params``).  Both rebuild each object through its class, and a schema class fills in every property
it has (``Undefined`` for those not set: a MarkDef or an Axis has ~90): a deep copy walks them all.  And rebuilding a
LayerChart runs its ``__init__`` again, which deep-copies its layers again, so a shallow copy of a layered chart is a
deep copy of it.  On the extrapolation lab's first step to another task (seven charts, AppTest, cProfile) this was
0.74 of the 0.82 s spent building charts: 152,000 calls of ``_deep_copy``, 130,000 of them on ``Undefined``.

Here a copy of an object whose class only stores its arguments -- the generated schema classes
(``altair.vegalite.v6.schema``) and ``alt.Chart`` -- is a new object of that class holding the same ``_args`` and a
new ``_kwds``, made without calling the class (deep: each value copied the same way; strings, numbers and
``Undefined`` are shared, as Altair shares them).  A LayerChart or a concatenation is still built again from its
copied parts, as Altair builds it: its ``__init__`` lifts the parameters of its parts to the top, and Altair's
``add_params`` relies on that copy to do it.  Its parts' copies are the cheap ones.  A class with its own
``__deepcopy__`` keeps Altair's copy.  On that step, building charts went 0.82 -> 0.26 s (copying 0.74 -> 0.10 s).
The specs are the same: tests/test_charts_copies.py compares Altair's copies with these, and
tests/app/test_chart_copies.py every chart of five pages built both ways.
"""

from __future__ import annotations

from altair.utils import schemapi as _schemapi
from altair.vegalite.v6 import api as _api

_SCHEMA_MODULES = "altair.vegalite.v6.schema."
_SHARED = frozenset({type(_schemapi.Undefined), str, int, float, bool, type(None)})  # immutable: never copied
_PLAIN: dict[type, bool] = {}

ALTAIR_DEEP_COPY = _schemapi._deep_copy
ALTAIR_COPY = _schemapi.SchemaBase.copy


def _plain(cls: type) -> bool:
    """``cls``'s ``__init__`` only stores its arguments (see the module's docstring)."""
    known = _PLAIN.get(cls)
    if known is None:
        known = _PLAIN[cls] = (cls is _api.Chart or cls.__module__.startswith(_SCHEMA_MODULES)) and not hasattr(cls, "__deepcopy__")
    return known


def _deep(obj, by_ref: set):
    """Altair's ``_deep_copy(obj, by_ref)``: the same copy, a plain class's objects made without calling it."""
    cls = type(obj)
    if cls in _SHARED:
        return obj
    if cls is list:
        return [v if type(v) in _SHARED else _deep(v, by_ref) for v in obj]
    if cls is dict:
        return {k: (v if k in by_ref or type(v) in _SHARED else _deep(v, by_ref)) for k, v in obj.items()}
    if not isinstance(obj, _schemapi.SchemaBase):
        return obj
    if hasattr(cls, "__deepcopy__"):
        return ALTAIR_DEEP_COPY(obj, by_ref)
    args = tuple(_deep(a, by_ref) for a in obj._args)
    kwds = {k: (v if k in by_ref or type(v) in _SHARED else _deep(v, by_ref)) for k, v in obj._kwds.items()}
    if _plain(cls):
        new = object.__new__(cls)
        object.__setattr__(new, "_args", args)
        object.__setattr__(new, "_kwds", kwds)
        return new
    with _schemapi.debug_mode(False):  # a layered or concatenated chart: built again from its copied parts, as Altair does
        return cls(*args, **kwds)


def copy(self, deep=True, ignore=None):
    """``SchemaBase.copy``: the same arguments and the same result, without calling a plain class."""
    cls = type(self)
    if not _plain(cls):
        return ALTAIR_COPY(self, deep, ignore)
    if deep is True:
        return _deep(self, set(ignore) if ignore else set())
    new = object.__new__(cls)
    object.__setattr__(new, "_args", self._args)
    object.__setattr__(new, "_kwds", dict(self._kwds))
    if _schemapi._is_iterable(deep):
        for attr in deep:
            new[attr] = _schemapi._shallow_copy(new._get(attr))
    return new


def install(on: bool = True) -> None:
    """Altair copies this way (``on``) or its own way (tests compare the two)."""
    _schemapi._deep_copy = _deep if on else ALTAIR_DEEP_COPY
    _schemapi.SchemaBase.copy = copy if on else ALTAIR_COPY


def installed() -> bool:
    return _schemapi.SchemaBase.copy is copy
