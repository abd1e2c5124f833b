"""Divisors, level sizes and per-level splits against the worked examples of docs/model.md §9.1."""

from __future__ import annotations

import pytest

from pipeline.model.network.levels import (
    adjusted_level_sizes,
    divisors,
    hierarchy_is_consistent,
    ordered_factorizations,
    split_table,
)


def test_divisors_ascending() -> None:
    """divisors(12) lists every divisor once, ascending; a power of two and 1 work too."""
    assert divisors(12) == (1, 2, 3, 4, 6, 12)
    assert divisors(1) == (1,)
    assert divisors(2**20) == tuple(2**k for k in range(21))


@pytest.mark.parametrize(
    ("sizes", "n_gpu", "expected"),
    [
        ((8,), 4, (4,)),
        ((8, 32), 64, (8, 8)),
        ((8, 32), 4, (4, 1)),
        ((8, 32), 2048, (8, 32)),
    ],
)
def test_adjusted_level_sizes_shrink_for_small_clusters(
    sizes: tuple[int, ...], n_gpu: int, expected: tuple[int, ...]
) -> None:
    """Non-top levels shrink to fit a small cluster and stay as they are for a large one."""
    assert adjusted_level_sizes(sizes, n_gpu) == expected


@pytest.mark.parametrize(
    ("sizes", "n_gpu", "consistent"),
    [((72,), 128, False), ((72,), 64, True), ((8,), 4, True), ((8, 32), 512, True)],
)
def test_hierarchy_consistency(sizes: tuple[int, ...], n_gpu: int, consistent: bool) -> None:
    """A cluster above a prefix product must be a multiple of it (72-GPU domains and 128 GPUs fail)."""
    assert hierarchy_is_consistent(sizes, n_gpu) is consistent


def test_ordered_factorizations_of_small_sizes() -> None:
    """Two has 5 ordered 5-tuples, lexicographic; four has 15 (two factors of 2 on five degrees)."""
    two = ordered_factorizations(2)
    assert len(two) == 5
    assert two[0] == (1, 1, 1, 1, 2)
    assert two[-1] == (2, 1, 1, 1, 1)
    assert len(ordered_factorizations(4)) == 15


def test_split_table_varies_level_zero_slowest() -> None:
    """Two non-top levels of size 2 give 25 splits; the first 5 share level 0's first tuple."""
    table = split_table((2, 2))
    assert table.shape == (25, 2, 5)
    assert (table[:5, 0] == (1, 1, 1, 1, 2)).all()
    assert [tuple(r) for r in table[:5, 1]] == list(ordered_factorizations(2))
    assert (table.prod(axis=2) == 2).all()
