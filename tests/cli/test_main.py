"""The `dmlimits` command end to end: default run, multirun dataset, experiments, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipeline.io.columns import POINTS_SCHEMA, THRESHOLDS_SCHEMA
from pipeline.io.dataset import read_points, read_thresholds
from pipeline.model.limits import series_limits
from pipeline.model.records.scaling import ScalingLaws, paper_d_model_grid
from pipeline.model.search.search import sweep_series
from pipeline.schema import CONF_DIR
from tests.command import dmlimits
from tests.presets import preset

pytestmark = pytest.mark.slow
"""Each test runs the `dmlimits` command in a subprocess."""

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
CONFIGURATION = REPO / "docs" / "configuration.md"
TINY_GRID = "scaling.grid.max_d_model=16384"
"""Three paper-grid sizes: enough to exercise a series in well under a second."""


def test_default_run_summary_matches_model(tmp_path: Path) -> None:
    """With no arguments the run writes the H100 dense series and prints the model's own thresholds."""
    result = dmlimits(tmp_path)
    assert result.returncode == 0, result.stderr
    hw = preset("h100_sxm")
    limits = series_limits(
        sweep_series(hw, ScalingLaws(), paper_d_model_grid(), 0.25 * 3.154e7), hw.u_eff
    )
    row = next(line for line in result.stdout.splitlines() if line.startswith("h100_sxm"))
    assert f"{limits.linear_end_flop:.2e}" in row
    assert f"{limits.last_feasible_flop:.2e}" in row
    assert f"{limits.first_infeasible_flop:.2e}" in row
    thresholds = read_thresholds(tmp_path / "outputs" / "dataset")
    assert thresholds["linear_end_flop"].to_list() == [limits.linear_end_flop]


def test_multirun_dataset_reads_in_duckdb_with_documented_columns(tmp_path: Path) -> None:
    """A real 2×2 multirun leaves one dataset that DuckDB reads with every documented column."""
    root = tmp_path / "data"
    result = dmlimits(
        tmp_path,
        "-m",
        "hardware=a100_sxm,h100_sxm",
        "scaling=dense,sparse",
        TINY_GRID,
        f"output.root={root}",
    )
    assert result.returncode == 0, result.stderr
    con = duckdb.connect()
    points = con.sql(
        f"select * from read_parquet('{root}/points/**/*.parquet', hive_partitioning = true)"
    )
    assert set(points.columns) == set(POINTS_SCHEMA.names)
    series = con.sql(
        f"select count(distinct series_id) from read_parquet('{root}/points/**/*.parquet', hive_partitioning = true)"
    ).fetchall()
    assert series == [(4,)]
    thresholds = con.sql(
        f"select * from read_parquet('{root}/thresholds/**/*.parquet', hive_partitioning = true)"
    )
    assert set(thresholds.columns) == set(THRESHOLDS_SCHEMA.names)
    assert len(read_points(root)) == 12  # 4 series × 3 sizes, all feasible
    made = con.sql(
        f"select overrides from read_parquet('{root}/series/**/*.parquet', hive_partitioning = true)"
    ).fetchall()
    jobs = sorted(json.loads(text) for (text,) in made)
    documented = re.search(
        r"```sql\n-- duckdb\n(.*?)```", CONFIGURATION.read_text(encoding="utf-8"), re.S
    )
    assert documented is not None
    rows = con.sql(documented.group(1).replace("outputs/dataset", str(root))).fetchall()
    assert len(rows) == 12
    assert len({(series_id, overrides) for series_id, overrides, *_ in rows}) == 4
    readme = re.search(r"```sql\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert readme is not None
    assert len(con.sql(readme.group(1).replace("outputs/dataset", str(root))).fetchall()) == 12
    assert [job[:2] for job in jobs] == [
        [f"hardware={hw}", f"scaling={sc}"]
        for hw in ("a100_sxm", "h100_sxm")
        for sc in ("dense", "sparse")
    ]


EXPERIMENTS = sorted(
    p.stem for p in (CONF_DIR / "experiment").glob("*.yaml") if p.stem != "nightly"
)


def _runs_only(experiment: str) -> bool:
    """Whether every job of the experiment is a concrete run (`run:` among its sweeper's
    params), which has no grid to shrink: a grid override beside a run is refused."""
    text = (CONF_DIR / "experiment" / f"{experiment}.yaml").read_text(encoding="utf-8")
    return re.search(r"^\s+run: ", text, re.M) is not None


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_experiment_runs_on_tiny_grid(tmp_path: Path, experiment: str) -> None:
    """Every experiment file launches its jobs (on a tiny grid, or runs as they are) and writes
    one series per job."""
    root = tmp_path / "data"
    grid = () if _runs_only(experiment) else (TINY_GRID,)
    result = dmlimits(tmp_path, "-m", f"+experiment={experiment}", *grid, f"output.root={root}")
    assert result.returncode == 0, result.stderr
    jobs = result.stdout.count("dmlimits: 1 series")
    assert jobs >= 2
    assert read_thresholds(root).height == jobs


def test_bad_preset_exits_nonzero_without_output(tmp_path: Path) -> None:
    """An invalid value stops the run before any output is written, with a one-line error."""
    result = dmlimits(tmp_path, "hardware.hbm_bandwidth_gb_per_s=-1")
    assert result.returncode != 0
    assert "hardware.hbm_bandwidth_gb_per_s" in result.stderr
    assert not (tmp_path / "outputs" / "dataset").exists()


def table_lines(stdout: str) -> list[str]:
    """The printed summary without its header line (which holds the run time)."""
    return stdout.splitlines()[1:]


def test_single_run_twice_prints_the_same_table(tmp_path: Path) -> None:
    """A single run recomputes (no resume), so running it twice prints the same table twice."""
    first = dmlimits(tmp_path, TINY_GRID)
    again = dmlimits(tmp_path, TINY_GRID)
    assert first.returncode == again.returncode == 0, first.stderr + again.stderr
    assert table_lines(again.stdout) == table_lines(first.stdout)
    assert any(line.startswith("h100_sxm") for line in table_lines(again.stdout))
    assert "already in the dataset" not in again.stdout


def test_experiment_after_a_single_run_prints_every_series(tmp_path: Path) -> None:
    """After a run wrote the H100 series, each job of base_comparison still prints its row."""
    root = tmp_path / "data"
    assert dmlimits(tmp_path, TINY_GRID, f"output.root={root}").returncode == 0
    result = dmlimits(
        tmp_path, "-m", "+experiment=base_comparison", TINY_GRID, f"output.root={root}"
    )
    assert result.returncode == 0, result.stderr
    gpus = ("a100_sxm", "h100_sxm", "v100_sxm")
    rows = [line.split()[0] for line in result.stdout.splitlines() if line.startswith(gpus)]
    assert sorted(rows) == list(gpus)


def test_fixed_layout_runs_whole_grid_with_reasons(tmp_path: Path) -> None:
    """`dmlimits parallelism=fixed` completes: misfits and over-budget sizes are rows with reasons.

    The shipped layout (spec §16.3) has N_PP = 64, which does not divide the 224 layers of the
    second grid size; over-budget sizes keep their cost so the overshoot is visible.
    """
    result = dmlimits(tmp_path, "parallelism=fixed")
    assert result.returncode == 0, result.stderr
    points = read_points(tmp_path / "outputs" / "dataset").sort("d_model")
    assert points.height == len(paper_d_model_grid())
    first, second = points.row(0, named=True), points.row(1, named=True)
    assert first["feasible"]
    assert first["n_gpu"] == 2048
    assert not second["feasible"]
    assert second["infeasible_reason"] == "layout_does_not_divide"
    assert second["training_time_s"] is None
    over = points.filter(pl.col("infeasible_reason") == "training_time_exceeds_duration")
    assert over.height > 0
    assert (over["training_time_s"] >= over["duration_s"]).all()
    assert over["utilization"].is_not_null().all()
