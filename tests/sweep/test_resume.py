"""Resumption: a killed sweep, run again, evaluates only what is missing and ends as if whole."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.io.columns import TABLES
from pipeline.io.read import part_files
from pipeline.schema import compose_config
from pipeline.sweep import done_series_ids, expand_sweep, pending
from tests.command import command_env, dmlimits, dmlimits_argv, stable_table

pytestmark = pytest.mark.slow
"""Sweeps killed and resumed in subprocesses."""

SMOKE = ["sweep=smoke", "execution.n_jobs=1"]
"""Twelve series, one after another in-process, so a kill lands between two series."""


def touch_part(root: Path, table: str, series_id: str) -> None:
    """An empty stand-in for a written part (resumption only looks at names)."""
    directory = root / table / "hardware=h" / "scaling=s" / "batch_law=b"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"part-{series_id}.parquet").touch()


def test_pending_skips_series_with_thresholds_and_series_parts(tmp_path: Path) -> None:
    """A series is done when its thresholds and series parts exist; points alone are not enough."""
    overrides = ["sweep=smoke"]
    series = expand_sweep(compose_config(overrides), overrides=overrides)
    first, second, third = (s.series_id for s in series[:3])
    for table in ("series", "points", "thresholds"):
        touch_part(tmp_path, table, first)
    touch_part(tmp_path, "points", second)  # killed before its thresholds
    touch_part(tmp_path, "thresholds", third)  # written before the series table existed
    assert done_series_ids(tmp_path) == {first}
    left = pending(series, tmp_path)
    assert [s.series_id for s in left] == [s.series_id for s in series if s.series_id != first]


def visible_parts_open(root: Path) -> int:
    """Every file a reader's `**/*.parquet` glob sees is a whole Parquet file; their count."""
    files = list(root.glob("**/*.parquet"))
    for path in files:
        assert not path.name.startswith("."), path
        pq.read_metadata(path)  # raises on a partial file
    return len(files)


def kill_after_first_series(cwd: Path, root: Path) -> None:
    """Start the smoke sweep and SIGKILL it as soon as one series is complete."""
    process = subprocess.Popen(
        dmlimits_argv(*SMOKE, f"output.root={root}"),
        cwd=cwd,
        env=command_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not part_files(root, "thresholds"):
            assert process.poll() is None, "the sweep ended before it could be killed"
            assert time.monotonic() < deadline
            if root.is_dir():
                visible_parts_open(root)
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_killed_sweep_resumes_to_the_uninterrupted_dataset(tmp_path: Path) -> None:
    """A sweep killed after its first series and run again ends with the uninterrupted rows."""
    interrupted, whole = tmp_path / "interrupted", tmp_path / "whole"
    kill_after_first_series(tmp_path, interrupted)
    visible_parts_open(interrupted)
    done_at_kill = {
        path.name: pq.read_table(path).column("run_id")[0].as_py()
        for path in part_files(interrupted, "thresholds")
    }
    assert 1 <= len(done_at_kill) < 12

    resumed = dmlimits(tmp_path, *SMOKE, f"output.root={interrupted}")
    assert resumed.returncode == 0, resumed.stderr
    assert f"({len(done_at_kill)} already done)" in resumed.stderr
    reference = dmlimits(tmp_path, *SMOKE, f"output.root={whole}")
    assert reference.returncode == 0, reference.stderr

    assert (
        visible_parts_open(interrupted) == visible_parts_open(whole) == 12 * len(TABLES)
    )  # a part per table
    for path in part_files(interrupted, "thresholds"):
        if path.name in done_at_kill:  # not evaluated again: still the first run's row
            assert pq.read_table(path).column("run_id")[0].as_py() == done_at_kill[path.name]
    for table in TABLES:
        mine, reference_rows = stable_table(interrupted, table), stable_table(whole, table)
        if table == "series":  # the overrides name each run's own output.root
            renamed = mine["overrides"].str.replace(str(interrupted), str(whole), literal=True)
            assert renamed.equals(reference_rows["overrides"])
            mine, reference_rows = mine.drop("overrides"), reference_rows.drop("overrides")
        assert mine.equals(reference_rows), table
    points = [json.loads(p) for p in stable_table(whole, "series")["sweep_point"]]
    assert {p["batch"] for p in points} == {"critical", "constant"}


def test_resume_false_recomputes_every_series(tmp_path: Path) -> None:
    """With output.resume=false a second run evaluates and replaces every series."""
    root = tmp_path / "data"
    args = [*SMOKE, "scaling.grid.max_d_model=12288", f"output.root={root}"]
    assert dmlimits(tmp_path, *args).returncode == 0
    first = set(stable_table(root, "thresholds").columns)
    again = dmlimits(tmp_path, *args, "output.resume=false")
    assert again.returncode == 0, again.stderr
    assert "already done" not in again.stderr
    run_ids = {pq.read_table(p).column("run_id")[0].as_py() for p in part_files(root, "thresholds")}
    assert len(run_ids) == 1  # all from the second run
    assert set(stable_table(root, "thresholds").columns) == first
