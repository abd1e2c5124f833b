"""The byte-bounded memo of the search's candidate sets: least recently used out first, by bytes."""

from __future__ import annotations

import pytest

from pipeline.model.search.memo import ENTRY_OVERHEAD_BYTES, ByteBoundedMemo

KB = 1000


def memo(max_bytes: int) -> tuple[ByteBoundedMemo[[int], int], list[int]]:
    """A memo of x -> x whose values count x kB; the list records every computation."""
    computed: list[int] = []

    def value(x: int) -> int:
        computed.append(x)
        return x

    return ByteBoundedMemo(value, max_bytes, lambda x: x * KB), computed


def test_a_value_is_computed_once_while_it_fits() -> None:
    m, computed = memo(100 * KB)
    assert [m(3), m(3), m(4), m(3)] == [3, 3, 4, 3]
    assert computed == [3, 4]
    info = m.cache_info()
    assert (info.hits, info.misses, info.currsize) == (2, 2, 2)
    assert info.nbytes == 7 * KB + 2 * ENTRY_OVERHEAD_BYTES


def test_the_least_recently_used_values_leave_first_until_the_bytes_fit() -> None:
    m, computed = memo(30 * KB + 3 * ENTRY_OVERHEAD_BYTES)  # 10 + 10 + 10 kB fit
    for x in (10, 10, 10):
        m(x)
    m(11)  # 10, 11: one entry of 10 kB and one of 11
    assert m.cache_info().currsize == 2
    m(12)  # 11 + 12 = 23 kB (+2 overheads) fit with nothing else: 10 leaves
    assert m.cache_info().nbytes == 23 * KB + 2 * ENTRY_OVERHEAD_BYTES
    computed.clear()
    m(11)  # used last but one: kept
    m(10)  # evicted: computed again, and 12 (now least recent) leaves to make room
    assert computed == [10]
    m(11)
    assert computed == [10]
    assert m.cache_info().nbytes <= m.max_bytes


def test_a_value_larger_than_the_budget_is_returned_not_kept() -> None:
    m, computed = memo(5 * KB)
    assert m(9) == 9
    assert m(9) == 9
    assert computed == [9, 9]
    assert m.cache_info().currsize == 0


def test_clearing_forgets_values_and_counts() -> None:
    m, computed = memo(100 * KB)
    m(1)
    m(1)
    m.cache_clear()
    assert m.cache_info() == type(m.cache_info())(0, 0, 0, 0, 100 * KB)
    m(1)
    assert computed == [1, 1]


def test_only_positional_arguments_are_memoized() -> None:
    m, _ = memo(100 * KB)
    with pytest.raises(TypeError):
        m(x=1)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="max_bytes"):
        ByteBoundedMemo(abs, 0, lambda _: 0)


def test_a_value_kept_by_its_caller_is_returned_without_computing_it() -> None:
    """`keep` stores a value as a miss would, counting neither; `holds` says whether a call
    would return a kept value; a kept value is never replaced, and one over the budget is not
    kept."""
    m, computed = memo(20 * KB)
    assert not m.holds(3)
    m.keep((3,), 3)
    assert m.holds(3)
    assert m.cache_info().nbytes == 3 * KB + ENTRY_OVERHEAD_BYTES
    assert m(3) == 3
    assert computed == []
    m.keep((3,), 4)  # another value for the same call: the first stays
    assert m(3) == 3
    m.keep((30,), 30)  # 30 kB: over the budget
    assert not m.holds(30)
    info = m.cache_info()
    assert (info.hits, info.misses, info.currsize) == (2, 0, 1)
