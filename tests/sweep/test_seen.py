"""`SeenIds`: a set of series ids at about 8 bytes an id."""

from __future__ import annotations

import random
import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from pipeline.sweep.seen import SeenIds

HEX_IDS = st.integers(0, 2**64 - 1).map(lambda n: f"{n:016x}")
"""Series ids as `config_hash` writes them: 16 lowercase hex digits."""


@given(
    st.lists(HEX_IDS | st.text(max_size=18), max_size=60),
    st.lists(HEX_IDS | st.text(max_size=18), max_size=20),
    st.integers(1, 8),
)
def test_seen_ids_answers_as_a_set(added: list[str], asked: list[str], fresh: int) -> None:
    """Every id added is in it and no other, whatever the ids (hex or not) and run sizes."""
    seen, plain = SeenIds(fresh_ids=fresh), set()
    for series_id in added:
        assert (series_id in seen) == (series_id in plain)
        seen.add(series_id)
        plain.add(series_id)
    for series_id in [*added, *asked]:
        assert (series_id in seen) == (series_id in plain)


def test_seen_ids_costs_a_tenth_of_a_set_of_strings() -> None:
    """Past its fresh set, 100,000 ids made one by one (as a sweep makes them) cost about 8
    bytes each, against about 100 in a set of the strings."""
    n, base = 100_000, random.Random(1).getrandbits(64)
    sizes = []
    for held in (SeenIds(fresh_ids=1024), set()):
        tracemalloc.start()
        for i in range(n):
            held.add(f"{base ^ i:016x}")
        sizes.append(tracemalloc.get_traced_memory()[0] / n)
        tracemalloc.stop()
    assert sizes[0] < 12 < 80 < sizes[1], sizes
