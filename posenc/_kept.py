"""Kept: a bounded, thread-safe map of computed results, least recently used dropped first (no Streamlit import).

One mechanism for the per-process results the dashboard keeps beside Streamlit's cache: a long job's pickled result
(``posenc.ui.cache.long_job``), a method's long-range curves (``posenc.analysis.extension.long_range``), a passage's
per-token losses (``posenc.views.real_model.passage_losses``), a scheme's score matrix view
(``posenc.views.similarity.scheme_similarity``), a chart template's converted spec (``posenc.ui.compat._swapped``)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any


class Kept:
    """At most ``most`` entries (None: any number) and, with ``max_bytes``, at most that many bytes of ``size(value)``
    (one entry always stays); ``get`` marks an entry as used."""

    def __init__(self, most: int | None = None, max_bytes: int | None = None, size: Callable[[Any], int] = len):
        self.most, self.max_bytes, self.size = most, max_bytes, size
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
            return self._items.get(key)

    def put(self, key: Hashable, value: Any, most: int | None = None) -> None:
        """Keep ``value``; ``most`` overrides the entry limit (a module constant read at the call)."""
        limit = self.most if most is None else most
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while (limit is not None and len(self._items) > max(limit, 1)) or (
                    self.max_bytes is not None and len(self._items) > 1
                    and sum(map(self.size, self._items.values())) > self.max_bytes):
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, key: Hashable) -> Any:
        return self._items[key]
