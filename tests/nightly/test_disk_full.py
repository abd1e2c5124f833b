"""A disk that fills during a nightly run (or an ordinary one) loses nothing and says so in one
line (fault injection: the Parquet writer, then the change report's writer, raise ENOSPC)."""

from __future__ import annotations

import datetime as dt
import errno
import os
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.cli import main as cli_main
from pipeline.io import text as text_module
from pipeline.io.read import read_or_empty
from pipeline.io.tables import TABLES
from pipeline.nightly.partition import date_dir
from pipeline.nightly.run import EXIT_WRITE_FAILED, run_nightly
from tests.nightly.runs import nightly_config, run_ids
from tests.robustness.test_user_config import hydra_in_process  # noqa: F401 (a fixture)

D1 = "2025-01-01"


def disk_full(*args: object, **kwargs: object) -> None:
    """A writer on a full disk."""
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "part.parquet")


def test_nightly_disk_full_while_staging_keeps_the_published_partition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ENOSPC while the run is staged: exit 1, one line saying the disk is full and nothing was
    published, and the date's earlier partition still holds the earlier run."""
    assert run_nightly(nightly_config(tmp_path, D1), progress=False) == 0
    before = run_ids(tmp_path, D1)
    capsys.readouterr()
    monkeypatch.setattr(pq, "write_table", disk_full)  # as pipeline.io.parquet calls it
    code = run_nightly(nightly_config(tmp_path, D1), progress=False)
    err = capsys.readouterr().err.splitlines()
    assert code == EXIT_WRITE_FAILED
    assert len(err) == 1, err
    assert err[0].startswith("dmlimits: error: the disk is full")
    assert "not published" in err[0]
    assert run_ids(tmp_path, D1) == before
    assert not any((tmp_path / ".staging").iterdir())


def test_nightly_disk_full_writing_the_report_says_the_run_is_published(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ENOSPC while the change report is written: the run is published and the one line names
    its partition and the missing report."""
    monkeypatch.setattr(text_module, "write_bytes_atomic", disk_full)
    code = run_nightly(nightly_config(tmp_path, D1), progress=False)
    err = capsys.readouterr().err.splitlines()
    assert code == EXIT_WRITE_FAILED
    assert len(err) == 1, err
    assert f"published as {date_dir(tmp_path.resolve(), dt.date.fromisoformat(D1))}" in err[0]
    assert "change report could not be written" in err[0]
    assert run_ids(tmp_path, D1)


@pytest.mark.usefixtures("hydra_in_process")
def test_plain_run_disk_full_is_one_line_and_keeps_earlier_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An ordinary run whose second batch meets a full disk exits 1 with one line, and the
    first batch's series stay readable under the root."""
    real_write = pq.write_table
    calls: list[int] = []

    def fills_up(*args: object, **kwargs: object) -> None:
        calls.append(1)
        if len(calls) > len(TABLES) - 1:  # the first batch's parts are written, then the disk fills
            disk_full()
        real_write(*args, **kwargs)  # type: ignore[arg-type]

    root = tmp_path / "d"
    argv = ["dmlimits", "sweep=smoke", "output.series_per_part=2", "execution.n_jobs=1",
            "execution.ahead=false", f"output.root={root}"]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(pq, "write_table", fills_up)
    with pytest.raises(SystemExit) as stopped:
        cli_main.main()
    err = capsys.readouterr().err.splitlines()
    assert stopped.value.code == 1
    assert [line for line in err if line.startswith("dmlimits: error:")] == err[-1:]
    assert err[-1].startswith("dmlimits: error: the disk is full")
    assert f"kept under {root}" in err[-1]
    monkeypatch.undo()
    assert read_or_empty(root, "thresholds").height > 0
