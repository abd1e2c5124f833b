"""dmlimits-report --run-date: a partition of a nightly root, and the errors that name why none
is drawn."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from pipeline.report.main import dataset_directory


def test_run_date_picks_a_nightly_partition(tmp_path: Path) -> None:
    """A nightly root's dated folder is the directory drawn."""
    (tmp_path / "run_date=2026-12-05").mkdir()
    day = tmp_path / "run_date=2026-12-07"
    day.mkdir()
    assert dataset_directory(tmp_path, dt.date(2026, 12, 7)) == day
    assert dataset_directory(tmp_path, None) == day  # the newest


def test_missing_run_date_lists_the_root_s_dates(tmp_path: Path) -> None:
    """A date the nightly root has no partition for is named beside the dates it has."""
    (tmp_path / "run_date=2026-12-05").mkdir()
    (tmp_path / "run_date=2026-12-07").mkdir()
    named = r"no partition for 2026-12-06 \(its dates: 2026-12-05, 2026-12-07\)"
    with pytest.raises(FileNotFoundError, match=named):
        dataset_directory(tmp_path, dt.date(2026, 12, 6))


def test_run_date_on_a_dataset_root_says_to_drop_it(tmp_path: Path) -> None:
    """A plain dataset root has no dated partitions: the error says --run-date does not apply,
    not that a nightly root lacks that date."""
    (tmp_path / "points").mkdir()
    named = r"has no run_date=YYYY-MM-DD partitions \(a dataset root\): drop --run-date"
    with pytest.raises(FileNotFoundError, match=named):
        dataset_directory(tmp_path, dt.date(2026, 12, 7))
