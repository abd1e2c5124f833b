"""Frozen records that compute their hash once, and the first of equal records.

The search memoizes on the hardware, the physics, the options and the model (docs/model.md
§9.2): a realistic point asks its memos a few dozen times per cluster size, and a frozen
dataclass's generated `__hash__` builds and hashes the tuple of its fields (nested records
included) at every ask, about 0.4 µs for a GPU and 0.6 µs for a physics. `keeps_hash` keeps
the generated hash in a slot the first time it is asked.

The slot is not a field: equality, `repr`, `dataclasses.replace` and `fields` never see it,
and a frozen slots dataclass pickles its fields only (`__getstate__`), so a record sent to
another process computes its hash there again (string hashes differ between processes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pipeline.model.caches import cached

T = TypeVar("T", bound="KeepsHash")

FIRST_EQUAL_CACHE_SIZE = 256
"""Records `first_equal` keeps: the few GPUs, networks, physics and options of a sweep's
blocks."""


class KeepsHash:
    """Base of a frozen slots dataclass whose hash `keeps_hash` keeps (in `_hash`)."""

    __slots__ = ("_hash",)


def keeps_hash(cls: type[T]) -> type[T]:
    """`cls` (a frozen slots dataclass deriving from `KeepsHash`) with its generated
    `__hash__` computed once per instance, then read from the instance."""
    computed: Callable[[T], int] = cls.__hash__

    def kept(self: T) -> int:
        try:
            value: int = self._hash  # type: ignore[attr-defined]
        except AttributeError:
            value = computed(self)
            object.__setattr__(self, "_hash", value)  # the record is frozen
        return value

    cls.__hash__ = kept  # type: ignore[assignment,method-assign]
    return cls


@cached(maxsize=FIRST_EQUAL_CACHE_SIZE)
def first_equal(record: T) -> T:
    """The first record met that equals `record` (itself, the first time). Each series of a
    sweep loads its own physics and options, and GPUs that differ only in what a memo does not
    read (`records.hardware.gpu_only`, `search.floors.floor_hardware`) are made apart: passed
    through here, the memos keyed by them find their keys by identity instead of comparing
    them field by field."""
    return record
