"""The series ids a sweep has made, about 8 bytes each, so a repeat is refused (`expand.unique`).

A series id is 16 hex digits (`pipeline.identity.config_hash`): one 64-bit number. A Python
set of the id strings costs about 100 bytes an id (the string and its slot): 11 MB for the
115,200 series of conf/sweep/million_realistic.yaml, 100 MB for a million. `SeenIds` holds
the newest ids as numbers in a set of at most `FRESH_IDS`, the rest as sorted uint64 arrays
(8 bytes an id), merged as they double, so an id is looked up in the set, then by bisection in
a few arrays (at most log2(n / FRESH_IDS) + 1).
"""

from __future__ import annotations

import re

import numpy as np
import numpy.typing as npt

FRESH_IDS = 1 << 16
"""Ids kept in a set before they become a sorted array (about 5 MB of Python ints at most)."""

HEX_ID = re.compile(r"[0-9a-f]{16}")
"""A series id as `config_hash` writes it; any other text is kept as it is."""


class SeenIds:
    """A growing set of series ids, 8 bytes an id once past `FRESH_IDS` (module docstring)."""

    def __init__(self, fresh_ids: int = FRESH_IDS) -> None:
        self.fresh_ids = fresh_ids
        self._fresh: set[int] = set()
        self._runs: list[npt.NDArray[np.uint64]] = []
        """Sorted, disjoint arrays of ids, each at least as long as the next."""
        self._other: set[str] = set()
        """Ids that are not 16 hex digits."""

    def __contains__(self, series_id: str) -> bool:
        if not HEX_ID.fullmatch(series_id):
            return series_id in self._other
        key = int(series_id, 16)
        if key in self._fresh:
            return True
        wanted = np.uint64(key)
        for run in self._runs:
            i = int(np.searchsorted(run, wanted))
            if i < len(run) and run[i] == wanted:
                return True
        return False

    def add(self, series_id: str) -> None:
        """Remember one id."""
        if not HEX_ID.fullmatch(series_id):
            self._other.add(series_id)
            return
        self._fresh.add(int(series_id, 16))
        if len(self._fresh) < self.fresh_ids:
            return
        run = np.sort(np.fromiter(self._fresh, np.uint64, len(self._fresh)))
        self._fresh.clear()
        while self._runs and len(self._runs[-1]) <= len(run):  # merge runs of about one size
            run = np.sort(np.concatenate([self._runs.pop(), run]))
        self._runs.append(run)
