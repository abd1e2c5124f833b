"""A least-recently-used memo bounded by the bytes its values hold, not by their number.

`functools.lru_cache` bounds a cache by entries. The candidate sets of the search (docs/model.md
§9.2) range from a few kB to about a MB, so an entry bound is either a loose memory bound or
a small cache: 512 entries held one whole-grid H100 series (about 500 entries of 150 kB), and a
sweep whose GPUs vary inside its network axes (HBM bandwidth inside latency, say) cycled
through more than that, so that every lookup missed. `ByteBoundedMemo` keeps as many entries
as fit in a byte budget, evicting the least recently used first.
"""

from __future__ import annotations

import operator
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, ParamSpec, TypeVar

import numpy as np

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")

ENTRY_OVERHEAD_BYTES = 1024
"""Bytes counted for every entry on top of its value's own (the key and the Python objects), so
that a budget bounds the count of even empty values."""


@dataclass(frozen=True, slots=True)
class MemoInfo:
    """What a memo has done: as `functools.lru_cache`'s cache_info, with bytes."""

    hits: int
    misses: int
    currsize: int
    nbytes: int
    max_bytes: int


class ByteBoundedMemo(Generic[P, R]):
    """`fn` memoized on its positional arguments (hashable), at most `max_bytes` of values as
    `nbytes` counts them (plus `ENTRY_OVERHEAD_BYTES` each); a value larger than the budget is
    returned, not kept. The values are shared: callers must not modify them. Safe across
    threads (`execution.backend=threading`); two threads missing the same key both compute it."""

    def __init__(self, fn: Callable[P, R], max_bytes: int, nbytes: Callable[[R], int]) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1, got {max_bytes}")
        self._fn = fn
        self._nbytes = nbytes
        self.max_bytes = max_bytes
        self.default_max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, tuple[R, int]] = OrderedDict()
        self._bytes = 0
        self._hits = 0
        self._misses = 0
        self._lock = threading.Lock()

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if kwargs:
            raise TypeError("ByteBoundedMemo memoizes positional arguments only")
        key: Hashable = args
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                self._hits += 1
                return entry[0]
            self._misses += 1
        value = self._fn(*args, **kwargs)
        self.keep(args, value)
        return value

    def holds(self, *args: P.args, **kwargs: P.kwargs) -> bool:
        """Whether a call with these arguments would return a kept value (no count changes)."""
        if kwargs:
            raise TypeError("ByteBoundedMemo memoizes positional arguments only")
        with self._lock:
            return args in self._entries

    def keep(self, args: tuple[object, ...], value: R) -> None:
        """Keep `value` as the call's on the positional `args`, as a miss keeps what `fn`
        returns: the caller computed it by other means (several at once, say), and it must
        equal `fn(*args)`. Kept values are not replaced."""
        size = self._nbytes(value) + ENTRY_OVERHEAD_BYTES
        if size > self.max_bytes:
            return
        with self._lock:
            if args not in self._entries:  # another thread may have kept it meanwhile
                self._entries[args] = (value, size)
                self._bytes += size
            while self._bytes > self.max_bytes:
                _, (_, evicted) = self._entries.popitem(last=False)
                self._bytes -= evicted

    def cache_info(self) -> MemoInfo:
        with self._lock:
            return MemoInfo(
                self._hits, self._misses, len(self._entries), self._bytes, self.max_bytes
            )

    def scale_budget(self, share: float) -> None:
        """Forget every entry and keep at most `share` of the default budget from now on (at
        least one byte): a worker process's smaller budget (`caches.scale_byte_budgets`)."""
        self.cache_clear()
        self.max_bytes = max(1, int(self.default_max_bytes * share))

    def cache_clear(self) -> None:
        """Forget every entry and reset the counts, as `functools.lru_cache` does."""
        with self._lock:
            self._entries.clear()
            self._bytes = self._hits = self._misses = 0


def field_arrays(value: object) -> list[np.ndarray]:
    """The numpy arrays among the fields of a slots dataclass `value` (its `__slots__`); none
    for any other value."""
    cls = type(value)
    getter = _SLOT_GETTERS.get(cls)
    if getter is None:
        getter = _SLOT_GETTERS[cls] = _slot_getter(getattr(cls, "__slots__", ()))
    return [a for a in getter(value) if isinstance(a, np.ndarray)]


def _slot_getter(names: tuple[str, ...]) -> Callable[[object], tuple[object, ...]]:
    """The values of the attributes `names` of an object as a tuple, read in one call."""
    if len(names) < 2:
        return lambda value: tuple(getattr(value, n) for n in names)
    return operator.attrgetter(*names)


_SLOT_GETTERS: dict[type, Callable[[object], tuple[object, ...]]] = {}
"""`_slot_getter` of each class `field_arrays` has read (a few dataclasses)."""


def arrays_nbytes(value: object) -> int:
    """Bytes of the numpy arrays among `value`'s fields (`field_arrays`): a memo's `nbytes`."""
    return sum(a.nbytes for a in field_arrays(value))


def read_only(value: T) -> T:
    """`value` with the numpy arrays among its fields (`field_arrays`) made read only: a memo's
    values are shared, so no caller may change them."""
    for a in field_arrays(value):
        a.setflags(write=False)
    return value
