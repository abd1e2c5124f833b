"""Nightly runs write dated partitions; a re-run replaces its date whole; a failed one changes nothing."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipeline.nightly import partition
from pipeline.nightly.partition import run_dates
from pipeline.nightly.run import EXIT_WRITE_FAILED, run_nightly
from tests.nightly.runs import nightly_config, nightly_overrides, run_ids

pytestmark = pytest.mark.slow
"""Nightly runs, some killed, in subprocesses."""

D1, D2 = "2025-01-01", "2025-01-02"


@pytest.fixture
def two_dates(tmp_path: Path) -> Path:
    """A nightly root with runs on D1 and D2."""
    root = tmp_path / "nightly"
    assert run_nightly(nightly_config(root, D1), progress=False) == 0
    assert run_nightly(nightly_config(root, D2), progress=False) == 0
    return root


def test_nightly_two_dates_leave_two_partitions(two_dates: Path) -> None:
    """Two dates give two run_date partitions with one run each, and nothing else visible."""
    assert run_dates(two_dates) == [dt.date(2025, 1, 1), dt.date(2025, 1, 2)]
    assert len(run_ids(two_dates, D1)) == len(run_ids(two_dates, D2)) == 1
    assert run_ids(two_dates, D1) != run_ids(two_dates, D2)
    for table in ("points", "thresholds", "forecasts"):
        assert (two_dates / f"run_date={D1}" / table).is_dir(), table
    assert not list((two_dates / partition.STAGING_DIR).iterdir())
    assert not list((two_dates / f"run_date={D1}").glob(".*"))  # no lock file published


def test_nightly_rerun_replaces_only_its_date(two_dates: Path) -> None:
    """A third run on D1 with another grid replaces D1 whole and leaves D2 untouched."""
    before_d1, before_d2 = run_ids(two_dates, D1), run_ids(two_dates, D2)
    d2_files = sorted(p for p in (two_dates / f"run_date={D2}").rglob("*") if p.is_file())
    d2_stamps = [(p, p.stat().st_mtime_ns) for p in d2_files]
    cfg = nightly_config(two_dates, D1, "scaling.grid.max_d_model=14336")
    assert run_nightly(cfg, progress=False) == 0
    after_d1 = run_ids(two_dates, D1)
    assert len(after_d1) == 1
    assert after_d1 != before_d1
    points = list((two_dates / f"run_date={D1}" / "points").rglob("*.parquet"))
    assert len(points) == 1, "the old run's series part must be gone, not merged"
    assert run_ids(two_dates, D2) == before_d2
    assert [(p, p.stat().st_mtime_ns) for p in d2_files] == d2_stamps


def test_nightly_failed_publish_keeps_previous_partition(
    two_dates: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An error inside the swap leaves the date's previous run in place and no staging dir,
    and the run exits with the write-failure status and one line naming the error."""
    before = run_ids(two_dates, D1)

    def broken(a: Path, b: Path) -> bool:
        raise OSError("disk on fire")

    monkeypatch.setattr(partition, "exchange_dirs", broken)
    config = nightly_config(two_dates, D1, "scaling.grid.max_d_model=14336")
    assert run_nightly(config, progress=False) == EXIT_WRITE_FAILED
    error = capsys.readouterr().err
    assert "disk on fire" in error
    assert "not published" in error
    assert run_ids(two_dates, D1) == before
    assert not list((two_dates / partition.STAGING_DIR).iterdir())


def test_nightly_fallback_swap_rolls_back(
    two_dates: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without an atomic exchange, a failed second rename moves the old partition back, and the
    run exits with the write-failure status and one line naming the error."""
    before = run_ids(two_dates, D1)
    real_rename = os.rename

    def rename(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if partition.STAGING_DIR in Path(src).parts:
            raise OSError("rename failed")
        real_rename(src, dst)

    monkeypatch.setattr(partition, "exchange_dirs", lambda a, b: False)
    monkeypatch.setattr(partition.os, "rename", rename)
    config = nightly_config(two_dates, D1, "scaling.grid.max_d_model=14336")
    assert run_nightly(config, progress=False) == EXIT_WRITE_FAILED
    error = capsys.readouterr().err
    assert "rename failed" in error
    assert "not published" in error
    monkeypatch.undo()
    assert run_ids(two_dates, D1) == before
    assert not list((two_dates / partition.REPLACED_DIR).iterdir())


def _killed_run(root: Path, run_date: str, patch: str) -> subprocess.CompletedProcess[bytes]:
    """A nightly run in a child process that `patch` makes SIGKILL itself."""
    script = "\n".join(
        [
            "import os, signal",
            "from pipeline.nightly import partition, run",
            "from pipeline.schema import compose_config",
            "def die(*args, **kwargs):",
            "    os.kill(os.getpid(), signal.SIGKILL)",
            patch,
            f"run.run_nightly(compose_config({nightly_overrides(root, run_date)!r}), progress=False)",
        ]
    )
    return subprocess.run(
        [sys.executable, "-c", script], cwd=root.parent, capture_output=True, check=False
    )


def test_nightly_killed_run_leaves_previous_partition(two_dates: Path) -> None:
    """A run SIGKILLed before publishing leaves D1 as it was; the next run deletes its staging."""
    before = run_ids(two_dates, D1)
    killed = _killed_run(two_dates, D1, "run.publish = die")
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    assert run_ids(two_dates, D1) == before
    assert list((two_dates / partition.STAGING_DIR).iterdir()), "the killed run's staging dir"
    assert run_nightly(nightly_config(two_dates, "2025-01-03"), progress=False) == 0
    assert not list((two_dates / partition.STAGING_DIR).iterdir())


def test_nightly_kill_between_renames_restored_by_next_run(two_dates: Path) -> None:
    """Killed between the fallback swap's two renames, D1's old run comes back on the next run."""
    before = run_ids(two_dates, D1)
    patch = "\n".join(
        [
            "partition.exchange_dirs = lambda a, b: False",
            "real_rename = os.rename",
            "def rename(src, dst):",
            "    real_rename(src, dst)",
            f"    if {partition.REPLACED_DIR!r} in str(dst): die()",
            "os.rename = rename",
        ]
    )
    killed = _killed_run(two_dates, D1, patch)
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    assert dt.date(2025, 1, 1) not in run_dates(two_dates)
    assert run_nightly(nightly_config(two_dates, "2025-01-03"), progress=False) == 0
    assert run_ids(two_dates, D1) == before


def test_nightly_readers_see_every_date(two_dates: Path) -> None:
    """polars and DuckDB read all dates with a run_date column; staging leftovers stay hidden."""
    leftover = two_dates / partition.STAGING_DIR / "2025-01-05-deadbeef"
    leftover.mkdir()
    (leftover / "points").symlink_to(two_dates / f"run_date={D1}" / "points")
    pattern = str(two_dates / "run_date=*" / "points" / "**" / "*.parquet")
    frame = pl.scan_parquet(pattern, hive_partitioning=True).collect()
    sql = f"SELECT run_date, count(*) FROM read_parquet('{pattern}', hive_partitioning = true) GROUP BY ALL"
    counts = dict(duckdb.sql(sql).fetchall())
    assert sorted(frame["run_date"].unique().to_list()) == [
        dt.date(2025, 1, 1),
        dt.date(2025, 1, 2),
    ]
    assert counts == dict(frame.group_by("run_date").len().iter_rows())


def test_nightly_bad_run_date_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An impossible date is bad input: exit status 2, one error line, nothing written."""
    root = tmp_path / "nightly"
    assert run_nightly(nightly_config(root, "2025-13-01"), progress=False) == 2
    assert "output.run_date = '2025-13-01'" in capsys.readouterr().err
    assert run_dates(root) == []
