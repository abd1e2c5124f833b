"""Section readings remembered by node identity: a sweep reads each distinct config node once.

A sweep of 100,000 series builds 100,000 scenarios from a handful of config nodes: the axes
change a few fields of one section, and every other section is the same object in every
series (`pipeline.sweep.expand` shares untouched nodes and makes each distinct swept node
once). `SectionMemo.read(reader, *nodes)` returns what `reader(*nodes)` returned for the same
node objects before, so a node is checked and converted once, not once per series.

Nodes are keyed by identity, not content, so reading one costs no hashing of its content; the
memo keeps the nodes it keyed on alive, so an id is never reused by another object while its
entry stands. The readers are pure (a reading of the same node is the same value), and nodes
are never changed after they are read (a sweep copies before it sets a value). A reader that
raises is not remembered. The memo holds at most `MAX_ENTRIES` readings, least recently used
first out, so its memory is bounded however long the sweep.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

SWEPT_NODES = 1 << 13
"""Distinct swept nodes whose readings a sweep's expansion keeps (`pipeline.sweep.expand`):
more than one choice combination's nodes (7,200 hardware nodes a GPU on
conf/sweep/million_realistic.yaml), so the next combination, which sweeps the same nodes, reads
none of them again; and not twice that, so that once the sweep moves on to other nodes (the
next GPU) the old ones go first and the caches stay at their size (about 3.5 KB a node in all:
the node, its readings and its id text, under 30 MB), not growing until the next bound."""
UNSWEPT_READINGS = 256
"""Readings of the sections no axis sets that a memo keeps beside the swept ones: about ten
a choice combination (scaling, batch law, options, physics, their checks)."""
MAX_ENTRIES = 2 * SWEPT_NODES + UNSWEPT_READINGS
"""Readings a memo keeps: two per swept node (its section, and the check of it with the
physics, `SWEPT_NODES`), and `UNSWEPT_READINGS`."""


class SectionMemo:
    """Readers' results by the identity of the nodes they read (see the module docstring)."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[int, ...], tuple[tuple[object, ...], Any]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def read(self, reader: Callable[..., T], *nodes: object) -> T:
        """`reader(*nodes)`, remembered for these node objects (and this reader, by identity
        too: a module-level function, not a bound method made anew at each call)."""
        key = (id(reader), *map(id, nodes))
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            return entry[1]  # type: ignore[no-any-return]
        value = reader(*nodes)
        self._entries[key] = ((reader, *nodes), value)
        if len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return value


def read_now(reader: Callable[..., T], *nodes: object) -> T:
    """`reader(*nodes)`: the reading without a memo."""
    return reader(*nodes)
