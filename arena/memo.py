"""The one small least-recently-used memo, shared by every layer that keeps the last few answers of a
pure, costly computation (a season's fit, a revealed match's public events, a record's elfern/1
form). It sits at the bottom of the package beside the engine because it is plain code that every
layer may use; it imports nothing of the arena. Keys must name every input of the computation, so
that a hit is always what a fresh computation would give. Values are shared: callers only read them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Memo(Generic[K, V]):
    """At most `size` answers by key; the least recently used goes first. Thread-safe: the web's
    handlers run on a thread pool. Two threads missing the same key both compute it (no lock is held
    while computing), and the second answer replaces the first, which is equal."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K, make: Callable[[], V]) -> V:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()  # may raise: then nothing is remembered
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
