"""The integer layout tables' row order (docs/model.md §9.1)."""

from __future__ import annotations

import numpy as np

from pipeline.model.search.enumeration import ScheduleRows


def test_schedule_rows_interleave_each_block_once_per_tp_ff_choice() -> None:
    """Blocks of 2 and 1 rows with two N_TPff choices: each block twice in turn, block-major."""
    rows = np.arange(15, dtype=np.int64).reshape(3, 5)
    order, which = ScheduleRows(rows, np.array([2, 1], dtype=np.int64)).interleaved(2)
    assert order.tolist() == [0, 1, 0, 1, 2, 2]
    assert which.tolist() == [0, 0, 1, 1, 0, 1]


def test_schedule_rows_with_one_tp_ff_choice_keep_their_order() -> None:
    """One N_TPff choice leaves the rows in order, every one with choice 0."""
    rows = np.zeros((6, 5), dtype=np.int64)
    order, which = ScheduleRows(rows, np.array([1, 3, 2], dtype=np.int64)).interleaved(1)
    assert order.tolist() == list(range(6))
    assert which.tolist() == [0] * 6
