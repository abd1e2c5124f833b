"""The limits a user reads at the edges of the grid and of the hardware, run as `dmlimits` runs
them (`pipeline.run`): how a series ended, its linear-scaling end, the closed forms' inputs,
power and a site's budget (docs/model.md §9.5, §10, §10.1)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import duckdb
import polars as pl
import pytest

import pipeline
from pipeline.app.api import Result
from pipeline.bi.views import main as bi_main

pytestmark = pytest.mark.slow
"""Whole paper-grid series, seconds each."""


@lru_cache(maxsize=8)
def run(*overrides: str) -> Result:
    """One default series with `overrides`, not written."""
    return pipeline.run(list(overrides))


def test_collapsed_series_has_a_wall_and_a_wall_year() -> None:
    """Six months on H100 stop on the utilization floor: the wall is that size, never "none"."""
    result = run("scaling.duration_months=6")
    row = result.thresholds.row(0, named=True)
    assert (row["end_reason"], row["first_infeasible_flop"]) == ("utilization_collapse", None)
    assert row["wall_flop"] == row["last_feasible_flop"]
    assert result.forecasts["wall_year"].null_count() == 0
    line = result.summary().splitlines()[2]
    assert "collapse" in line
    assert "none" not in line


def test_default_series_ends_at_a_wall_with_its_reason() -> None:
    """The paper's H100 series ends at an infeasible size, its wall where the paper puts it."""
    row = run().thresholds.row(0, named=True)
    assert (row["end_reason"], row["wall_reason"]) == ("wall", "no_cluster_within_duration")
    assert row["wall_flop"] == row["first_infeasible_flop"]
    assert row["linear_end_basis"] == "u_eff"


def test_a_run_has_no_wall_and_no_wall_year() -> None:
    """A concrete run is one point, not a grid: a run over its duration (GPT 1T on its own 3,072
    A100s trains for years) is no wall of the frontier, and no forecast says one was passed."""
    result = run("run=gpt_1t", "hardware=a100_sxm_80gb", "physics=realistic")
    row = result.thresholds.row(0, named=True)
    assert (row["end_reason"], row["wall_flop"], row["wall_reason"]) == ("run", None, None)
    assert row["first_infeasible_flop"] == result.points.row(0, named=True)["training_flop"]
    assert result.forecasts["wall_year"].null_count() == result.forecasts.height
    assert "wall_year" not in ",".join(result.forecasts["already_passed"])


@pytest.mark.parametrize(
    "overrides",
    [
        ("run=llama3_405b_8k_16384", "physics=realistic"),
        ("run=gpt_1t", "hardware=a100_sxm_80gb", "physics=realistic"),
    ],
    ids=["feasible", "over_its_duration"],
)
def test_a_run_has_no_linear_end_to_reach_or_outlast(overrides: tuple[str, ...]) -> None:
    """A concrete run is one point, not a grid: its linear-end columns are null, none of them
    saying "not reached" or "beyond the grid", whether it trains within its duration or not."""
    row = run(*overrides).thresholds.row(0, named=True)
    assert row["end_reason"] == "run"
    assert (row["linear_end_flop"], row["linear_end_beyond_grid"], row["linear_end_basis"]) == (
        None,
        None,
        None,
    )


def test_a_runs_series_row_describes_the_run() -> None:
    """A run's `series` row holds its own sequence length, K/V heads and width, not those of the
    scaling group it was composed with, and no value for the laws it does not read (schema
    version 7): Llama 3 405B trains 8,192-token sequences of width 16,384 on 8 K/V heads and
    gives its tokens."""
    row = run("run=llama3_405b_8k_8192", "physics=realistic").series.row(0, named=True)
    assert (row["seq_len"], row["kv_heads"], row["sparse"]) == (8192, 8, False)
    gpt = run("run=gpt_1t", "hardware=a100_sxm_80gb").series.row(0, named=True)
    assert (gpt["kv_heads"], gpt["seq_len"], gpt["d_models"]) == (160, 2048, "25600")
    assert (row["dropout"], gpt["dropout"]) == (False, True)  # each run's own (version 15)
    assert (row["n_d_models"], row["d_model_min"], row["d_models"]) == (1, 16384, "16384")
    unused = ("ff_ratio", "depth_coefficient", "batch_kind", "batch_exponent", "tokens_per_param")
    assert all(row[c] is None for c in unused)
    grid = run().series.row(0, named=True)
    assert (grid["seq_len"], grid["batch_kind"], grid["tokens_per_param"]) == (
        2048,
        "critical",
        20.0,
    )
    assert grid["dropout"] is False  # the scaling presets' grid trains without dropout


def test_a_series_its_cluster_cap_ended_has_no_wall() -> None:
    """With clusters capped at 2^20 GPUs the H100 series stops after a size that needed the
    cap: no wall, and the summary says the cap ended it (docs/model.md §9.5)."""
    result = run("parallelism.max_cluster_doublings=20")
    row = result.thresholds.row(0, named=True)
    assert (row["end_reason"], row["wall_flop"]) == ("cluster_cap", None)
    feasible = result.points.filter(result.points["feasible"])
    assert feasible["n_gpu"].max() > 2**19
    assert " cap " in result.summary().splitlines()[2]


def test_a_first_size_beyond_the_cluster_cap_is_the_cap_not_a_wall() -> None:
    """With clusters capped at 2^10 GPUs H100's first size (6.45e24 FLOP) needs at least
    1,182 GPUs at the peak matmul rate: `exceeds_cluster_cap`, and the cap, not a wall, ends
    the series (docs/model.md §9.5); with the default cap it trains."""
    result = run("parallelism.max_cluster_doublings=10")
    first = result.points.row(0, named=True)
    assert (first["feasible"], first["infeasible_reason"]) == (False, "exceeds_cluster_cap")
    row = result.thresholds.row(0, named=True)
    assert (row["end_reason"], row["wall_flop"]) == ("cluster_cap", None)
    assert row["first_infeasible_flop"] == first["training_flop"]
    assert run().points.row(0, named=True)["feasible"]


def test_gpu_below_the_regime_gets_a_linear_end_from_its_peak() -> None:
    """B200 under physics=paper never reaches 0.8 · u_eff: its linear end is measured from its
    own peak, not its first grid size, and no forecast year falls before the trajectory's base."""
    result = run("hardware=b200")
    row = result.thresholds.row(0, named=True)
    first = result.points["training_flop"].min()
    assert row["linear_end_basis"] == "peak"
    assert row["linear_end_flop"] > first
    for f in result.forecasts.iter_rows(named=True):
        assert f["linear_end_year"] > f["base_year"]
    assert "*" in result.summary().splitlines()[2]


@pytest.mark.parametrize(
    "override",
    ["scaling.duration_months=6", "batch.reference_tokens=8388608", "scaling.tokens_per_param=200"],
)
def test_closed_forms_follow_the_override(override: str) -> None:
    """Each of these overrides moves T_crit and T_limit and the inputs the table records."""
    base, moved = run().thresholds.row(0, named=True), run(override).thresholds.row(0, named=True)
    assert moved["t_crit_flop"] != base["t_crit_flop"]
    assert moved["t_limit_flop"] != base["t_limit_flop"]
    inputs = ("model_b_duration_s", "model_b_b0_tokens", "model_b_tokens_per_param")
    assert [moved[c] for c in inputs] != [base[c] for c in inputs]


def test_summary_shows_the_closed_forms_inputs() -> None:
    """The footer names the budget, batch anchor and tokens per parameter Model B used, and
    that u_eff does not enter it."""
    footer = run("hardware.u_eff=0.5").summary().splitlines()[-1]
    assert "tau_B = 7.889e+06 s" in footer
    assert "b0 = 4e+06 tokens" in footer
    assert "20 tokens/param" in footer
    assert "u_eff does not enter" in footer


def test_points_carry_power_and_energy() -> None:
    """Every point with a layout has its cluster's power and its run's energy."""
    points = run().points.filter(pl.col("n_gpu").is_not_null())
    assert points["power_w"].null_count() == 0
    assert (points["energy_j"] == points["power_w"] * points["training_time_s"]).all()


def test_power_budget_sets_the_wall() -> None:
    """Under a 1 GW site the wall is a power wall, below the 5 GW one, below no budget's."""
    walls = {}
    for mw in (1000, 5000):
        row = run(f"constraints.max_power_mw={mw}").thresholds.row(0, named=True)
        assert (row["end_reason"], row["wall_reason"]) == ("wall", "exceeds_power_budget")
        walls[mw] = row["wall_flop"]
    unbounded = run().thresholds.row(0, named=True)["wall_flop"]
    assert walls[1000] < walls[5000] < unbounded
    over = run("constraints.max_power_mw=1000").points.filter(~pl.col("feasible"))
    assert over["power_w"][0] > 1e9
    assert "power" in run("constraints.max_power_mw=1000").summary().splitlines()[2]


def test_bi_views_query_the_wall_of_a_collapsed_series(tmp_path: Path) -> None:
    """In the BI file a "wall below X" query counts a collapsed series, with how it ended."""
    root = tmp_path / "dataset"
    pipeline.run(["scaling.duration_months=6"], write=True, root=root)
    db = tmp_path / "dmlimits.duckdb"
    assert bi_main([str(root), "--db", str(db)]) == 0
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT end_reason, wall_flop < 1e33, first_infeasible_flop FROM thresholds"
        ).fetchall()
    assert rows == [("utilization_collapse", True, None)]
