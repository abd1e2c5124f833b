"""Nothing is lost on faults: killed runs, concurrent runs, failed multirun jobs, dying writes.

Every fault is real: a `dmlimits` process killed with SIGKILL, two processes writing one root at
once, a multirun job that fails at run time (a combination preflight does not try, or an output
root that turns into a file after preflight), a write interrupted inside pyarrow.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from pipeline.cli.gather import DONE_MARKER, failed_jobs, gather_sweep, mark_done
from pipeline.execute.series import evaluate_series
from pipeline.io.dataset import gather, read_points, read_thresholds
from pipeline.io.rows import Provenance, SeriesKey
from pipeline.model.records.results import PointResult
from pipeline.schema import compose_config, load_scenario
from tests.io.helpers import part_files, point_rows, write_part
from tests.robustness.conftest import TINY_GRID, cli_command, cli_env, run_cli

pytestmark = pytest.mark.slow
"""Runs killed and resumed in subprocesses."""

POLL_S = 0.01
WAIT_S = 120.0
PROVENANCE_COLUMNS = ("run_id", "created_at")


def start_cli(cwd: Path, args: list[str]) -> subprocess.Popen[str]:
    """Start `dmlimits ARGS` in its own process group (so a kill reaches its workers too)."""
    return subprocess.Popen(
        cli_command(*args),
        cwd=cwd,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Poll ``condition()`` every 10 ms until true; fail after two minutes."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(POLL_S)


def kill_group(process: subprocess.Popen[str]) -> None:
    """SIGKILL the process group this test started, and reap the process."""
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=WAIT_S)


def assert_every_part_readable(root: Path) -> None:
    """gather opens every visible part with the right schema (leftover temporaries allowed)."""
    report = gather(root)
    assert report.bad_parts == ()


def test_sigkill_mid_run_keeps_earlier_results(tmp_path: Path) -> None:
    """SIGKILL during a 12-series run leaves the earlier run's rows intact and every part readable."""
    root = tmp_path / "data"
    first = run_cli(tmp_path, ["hardware=a100_sxm", *TINY_GRID, f"output.root={root}"])
    assert first.returncode == 0, first.stderr
    before = read_points(root)
    parts_before = set(part_files(root, "points"))

    run = start_cli(
        tmp_path,
        [
            "sweep=smoke",
            "execution.n_jobs=1",
            "output.whole_grid=true",
            "output.series_per_part=2",  # a batch every two series: the kill lands mid-run
            f"output.root={root}",
        ],
    )
    wait_for(lambda: len(part_files(root, "points")) > len(parts_before), "a new part")
    kill_group(run)
    assert run.returncode == -signal.SIGKILL

    after = read_points(root)
    kept = after.filter(pl.col("series_id").is_in(before["series_id"].to_list()))
    assert kept.equals(before)
    assert after.height > before.height  # the killed run had written some series
    assert_every_part_readable(root)
    for table in ("points", "thresholds"):
        for path in part_files(root, table):
            assert path.stat().st_size > 0


def test_concurrent_runs_on_one_root_both_succeed_without_mixing(tmp_path: Path) -> None:
    """Three runs at once on one root (two of them of the same series, batched differently) all
    succeed; each part is whole and each series is in one part per table."""
    root = tmp_path / "data"
    args = ["sweep=smoke", "execution.n_jobs=1", f"output.root={root}"]
    runs = [
        start_cli(tmp_path, [*args, "hardware=a100_sxm"]),
        start_cli(tmp_path, [*args, "hardware=a100_sxm", "output.series_per_part=5"]),
        start_cli(tmp_path, [*args, "hardware=h100_sxm"]),
    ]
    for run in runs:
        _, err = run.communicate(timeout=WAIT_S)
        assert run.returncode == 0, err

    points, thresholds = read_points(root), read_thresholds(root)
    assert thresholds.height == 24  # 12 series per preset, the identical runs share theirs
    assert points.select("series_id", "d_model").is_duplicated().sum() == 0
    per_part = points.group_by("series_id").agg(pl.col("run_id").n_unique().alias("runs"))
    assert per_part["runs"].max() == 1  # a part holds the rows of one run, never a mix
    n_points = dict(zip(thresholds["series_id"], thresholds["n_points"], strict=True))
    counts = points.group_by("series_id").len()
    assert {s: n for s, n in counts.iter_rows()} == n_points
    assert gather(root).ok


def test_multirun_job_failing_at_run_time_keeps_the_rest(tmp_path: Path) -> None:
    """A job whose combination is invalid fails with one line; the others run and gather says which."""
    root, sweep = tmp_path / "data", tmp_path / "sweep"
    result = run_cli(
        tmp_path,
        [
            "-m",
            "hardware=h100_sxm,h100_superpod",
            "parallelism=search,fixed",
            "scaling.grid.kind=list",
            "scaling.grid.d_models=[12288]",
            f"output.root={root}",
            f"hydra.sweep.dir={sweep}",
        ],
    )
    assert result.returncode != 0
    assert "dmlimits: error: parallelism.layout.dp = [1, 1]: must list 3 factors" in result.stderr
    assert "dmlimits: job 3 failed" in result.stderr

    report = gather_sweep(root, sweep)
    assert report.failed_jobs == (3,)
    assert report.n_jobs == 4
    assert report.dataset.n_series == 3
    assert report.dataset.bad_parts == ()
    assert read_thresholds(root)["hardware"].sort().to_list() == [
        "h100_superpod",
        "h100_sxm",
        "h100_sxm",
    ]

    check = subprocess.run(
        [sys.executable, "-m", "pipeline.cli.gather", str(root), "--multirun", str(sweep)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 1
    assert f"failed (no {DONE_MARKER}): 3" in check.stdout


def test_multirun_job_with_root_blocked_after_preflight_fails_alone(tmp_path: Path) -> None:
    """A job whose output root becomes a file after preflight fails with one line; the rest finish.

    The root of job 2 is made unwritable once the sweep has started (preflight passed), while
    jobs 0 and 1 run; job 3 runs after the failure.
    """
    blocked = tmp_path / "b" / "sub" / "data"
    roots = [tmp_path / "a", tmp_path / "c", blocked, tmp_path / "d"]
    sweep = tmp_path / "sweep"
    run = start_cli(
        tmp_path,
        [
            "-m",
            f"output.root={','.join(map(str, roots))}",
            *TINY_GRID,
            f"hydra.sweep.dir={sweep}",
        ],
    )
    wait_for(lambda: (sweep / "multirun.yaml").exists(), "the sweep to start after preflight")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "sub").write_text("now a file\n")
    _, err = run.communicate(timeout=WAIT_S)
    assert run.returncode != 0
    assert f"dmlimits: error: output root {blocked} is not writable" in err
    assert "dmlimits: job 2 failed" in err

    assert failed_jobs(sweep) == ([2], 4)
    for done in (roots[0], roots[1], roots[3]):
        assert read_thresholds(done).height == 1
        assert gather(done).ok


def test_multirun_killed_after_first_job_keeps_it(tmp_path: Path) -> None:
    """SIGKILL of a multirun once job 0 is done keeps its rows; gather reports job 1 as failed."""
    root, sweep = tmp_path / "data", tmp_path / "sweep"
    run = start_cli(
        tmp_path,
        ["-m", "hardware=a100_sxm,h100_sxm,v100_sxm", "output.whole_grid=true", "execution.n_jobs=1",
         f"output.root={root}", f"hydra.sweep.dir={sweep}"],
    )  # fmt: skip
    wait_for(lambda: (sweep / "1").is_dir(), "job 1 to start")
    kill_group(run)

    report = gather_sweep(root, sweep)
    assert report.dataset.bad_parts == ()
    assert 1 in report.failed_jobs
    assert 0 not in report.failed_jobs
    assert not report.ok
    assert "a100_sxm" in read_thresholds(root)["hardware"].to_list()


@pytest.fixture(scope="module")
def outcome_rows() -> tuple[SeriesKey, list[PointResult]]:
    """A real two-point series to write (H100 SXM, dense, d_model 12288 and 16384)."""
    scenario = load_scenario(compose_config(list(TINY_GRID)))
    outcome = evaluate_series(scenario)
    key = SeriesKey(
        "h100_sxm", "dense", "critical", scenario.duration_s, outcome.series_id, scenario.year_s
    )
    return key, outcome.points


def test_write_interrupted_inside_pyarrow_keeps_old_part(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    outcome_rows: tuple[SeriesKey, list[PointResult]],
) -> None:
    """A writer interrupted half way through the Parquet file leaves the old part and no temporary."""
    key, points = outcome_rows
    old = point_rows(points[:1], key, Provenance("old"))
    final = write_part(tmp_path, "points", old, key.partition, key.series_id)
    before = final.read_bytes()
    real_write = pq.write_table

    def half_write(table: object, where: str | os.PathLike[str], **kwargs: object) -> None:
        real_write(table, where, **kwargs)
        Path(where).write_bytes(Path(where).read_bytes()[:100])  # torn: only the first bytes
        raise KeyboardInterrupt

    monkeypatch.setattr(pq, "write_table", half_write)  # as pipeline.io.parquet calls it
    with pytest.raises(KeyboardInterrupt):
        write_part(
            tmp_path,
            "points",
            point_rows(points, key, Provenance("new")),
            key.partition,
            key.series_id,
        )
    monkeypatch.undo()
    assert final.read_bytes() == before
    assert sorted(p.name for p in final.parent.iterdir()) == [final.name]
    assert read_points(tmp_path)["run_id"].to_list() == ["old"]


def test_done_marker_interrupted_before_rename_is_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job that dies while marking itself done is still reported failed (no half marker)."""

    def crash(src: object, dst: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        mark_done(tmp_path)
    monkeypatch.undo()
    assert not (tmp_path / DONE_MARKER).exists()
