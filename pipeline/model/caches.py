"""Every cache of the model, registered where it is made: one place lists them and clears them.

The search memoizes what does not depend on the network (candidate layouts, layout tables,
divisors, splits) and network-time tables, per process (docs/model.md §9.2, "Caches"). Each
cache registers itself here under its function's dotted name when its module is imported:
`cached` for an entry-bounded `functools.lru_cache`, `register` for any other (the search's
byte-bounded memos: candidate and row sets, layout tables, floors, kept rows; docs/model.md
§9.6). `clear_caches` empties every one of them, counts included, so that what follows runs as
in a fresh process.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast, runtime_checkable

F = TypeVar("F", bound=Callable[..., Any])


class CacheCounts(Protocol):
    """What a cache reports: `functools.lru_cache`'s `cache_info()` fields the registry reads."""

    @property
    def hits(self) -> int: ...
    @property
    def misses(self) -> int: ...
    @property
    def currsize(self) -> int: ...


class Cache(Protocol):
    """A cache the registry can read and clear."""

    def cache_info(self) -> CacheCounts: ...
    def cache_clear(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Registered:
    """One registered cache and its bound."""

    cache: Cache
    bound: str
    """How it is bounded: "N entries" or "N bytes"."""


_REGISTRY: dict[str, Registered] = {}


def register(name: str, cache: Cache, bound: str) -> None:
    """Register `cache` under `name` (a module's dotted name and the cached function's)."""
    if name in _REGISTRY and _REGISTRY[name].cache is not cache:
        raise ValueError(f"a cache named {name} is registered already")
    _REGISTRY[name] = Registered(cache, bound)


def cached(maxsize: int) -> Callable[[F], F]:
    """`functools.lru_cache(maxsize)`, registered under the function's dotted name."""

    def decorate(fn: F) -> F:
        wrapper = functools.lru_cache(maxsize=maxsize)(fn)
        register(f"{fn.__module__}.{fn.__qualname__}", wrapper, f"{maxsize} entries")
        return cast(F, wrapper)

    return decorate


def registered() -> dict[str, str]:
    """Every registered cache's name and bound, by name."""
    return {name: _REGISTRY[name].bound for name in sorted(_REGISTRY)}


def cache_counts() -> dict[str, tuple[int, int, int]]:
    """(hits, misses, entries) of every registered cache, by name."""
    out = {}
    for name in sorted(_REGISTRY):
        info = _REGISTRY[name].cache.cache_info()
        out[name] = (info.hits, info.misses, info.currsize)
    return out


@runtime_checkable
class ByteBudgeted(Protocol):
    """A cache bounded by the bytes of its values (`search.memo.ByteBoundedMemo`)."""

    def scale_budget(self, share: float) -> None: ...


def scale_byte_budgets(share: float) -> None:
    """Empty every cache bounded by bytes and keep at most `share` of its default budget from
    now on (`share` = 1: the defaults): a worker process's smaller memory (the entry-bounded
    caches keep their bounds)."""
    for entry in _REGISTRY.values():
        if isinstance(entry.cache, ByteBudgeted):
            entry.cache.scale_budget(share)


def clear_caches() -> None:
    """Empty every registered cache and reset its counts, as in a fresh process."""
    for entry in _REGISTRY.values():
        entry.cache.cache_clear()
