"""Model results flattened into `points` and `thresholds` rows."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime

import pyarrow as pa
import pytest

import pipeline
from pipeline.identity import point_config_hash
from pipeline.io.columns import (
    COST_FIELDS,
    LAYOUT_FIELDS,
    POINTS_SCHEMA,
    RUN_FIELDS,
    SCHEMA_VERSION,
    THRESHOLDS_SCHEMA,
)
from pipeline.io.rows import Provenance, table_from_rows
from pipeline.model.records.results import InfeasibleReason, PointResult, SeriesLimits
from pipeline.model.runs.run_point import run_point
from pipeline.schema import compose_config, load_scenario
from tests.io.helpers import point_rows, threshold_row


def test_point_rows_months_follow_the_scenario_year(
    feasible_point, make_series, provenance
) -> None:
    """training_time_months divides by the series' own year_s / 12, not a fixed year."""
    series = replace(make_series(), year_s=3.6e7)
    row = point_rows([feasible_point(12288)], series, provenance).to_pylist()[0]
    assert row["training_time_months"] == pytest.approx(5.0e6 * 12 / 3.6e7, rel=1e-15)


def test_point_rows_feasible_values(feasible_point, make_series, provenance) -> None:
    """A feasible point gives totals, level strings, months and enum strings."""
    series = make_series()
    row = point_rows([feasible_point(12288)], series, provenance).to_pylist()[0]
    assert row["dp"] == 64
    assert row["dp_levels"] == "1x64"
    assert row["tp_model"] == 2
    assert row["tp_ff"] == 4
    assert row["pp"] == 16
    assert row["ep"] == 1
    assert row["training_time_months"] == pytest.approx(5.0e6 / (3.154e7 / 12))
    assert row["bottleneck"] == "compute"
    assert row["matmul_bound"] == "flop"
    assert row["feasible"] is True
    assert row["infeasible_reason"] is None
    assert row["config_hash"] == point_config_hash(series.series_id, 12288)
    assert row["n_steps"] == pytest.approx(row["n_tokens"] / row["batch_tokens"])


def test_point_rows_infeasible_layout_and_cost_null(
    infeasible_point, make_series, provenance
) -> None:
    """An infeasible point has its reason and nulls in every layout and cost column."""
    table = point_rows([infeasible_point(24576)], make_series(), provenance)
    row = table.to_pylist()[0]
    assert row["feasible"] is False
    assert row["infeasible_reason"] == "no_cluster_within_duration"
    for f in LAYOUT_FIELDS + COST_FIELDS:
        assert row[f.name] is None, f.name
    assert row["training_flop"] > 0


def test_point_rows_infeasible_keeps_computed_cost(feasible_point, make_series, provenance) -> None:
    """An infeasible point that carries a layout and cost (a fixed layout over budget) keeps them."""
    over = replace(
        feasible_point(12288),
        feasible=False,
        infeasible_reason=InfeasibleReason.EXCEEDS_DURATION,
    )
    row = point_rows([over], make_series(), provenance).to_pylist()[0]
    assert row["feasible"] is False
    assert row["infeasible_reason"] == "training_time_exceeds_duration"
    assert row["training_time_s"] == 5.0e6
    assert row["dp_levels"] == "1x64"


def test_point_rows_sorted_and_typed(
    feasible_point, infeasible_point, make_series, provenance
) -> None:
    """Rows come out sorted by d_model with exactly the declared schema."""
    points = [infeasible_point(36864), feasible_point(12288), feasible_point(24576)]
    table = point_rows(points, make_series(), provenance)
    assert table.schema.equals(POINTS_SCHEMA)
    assert table.column("d_model").to_pylist() == [12288, 24576, 36864]


def test_point_rows_nan_stored_as_null(feasible_point, make_series, provenance) -> None:
    """A NaN from the model is stored as null, never as NaN."""
    table = point_rows([feasible_point(12288, bubble_fraction=math.nan)], make_series(), provenance)
    assert table.column("bubble_fraction").null_count == 1


def test_point_rows_n_params_beyond_int64(feasible_point, make_series, provenance) -> None:
    """The largest sparse model's parameter count (past 2^63) is stored as float64."""
    point = feasible_point(12288 * 128)
    big = replace(point, shape=replace(point.shape, n_layers=2048, sparsity=1024))
    assert big.shape.n_params > 2**63
    row = point_rows([big], make_series(), provenance).to_pylist()[0]
    assert row["n_params"] == pytest.approx(float(big.shape.n_params))


def test_point_rows_keep_n_gpu_beyond_int64_exact(feasible_point, make_series, provenance) -> None:
    """A cluster of S · 2^i GPUs past int64 (extreme MoE sizes) is stored exactly as float64."""
    n_gpu = 1024 * 2**59
    row = point_rows([feasible_point(12288, n_gpu=n_gpu)], make_series(), provenance).to_pylist()[0]
    assert int(row["n_gpu"]) == n_gpu


def test_point_rows_rejects_feasible_without_layout(
    infeasible_point, make_series, provenance
) -> None:
    """A point marked feasible must carry a layout and a cost."""
    broken = PointResult(infeasible_point(12288).shape, True, None, None, None)
    with pytest.raises(ValueError, match="lacks a layout"):
        point_rows([broken], make_series(), provenance)


def test_point_rows_rejects_repeated_d_model(feasible_point, make_series, provenance) -> None:
    """Two points of one series cannot share a width."""
    with pytest.raises(ValueError, match="repeated d_model"):
        point_rows([feasible_point(12288), feasible_point(12288)], make_series(), provenance)


def test_threshold_row_not_reached_limits_null(make_series, provenance) -> None:
    """Limits the series does not reach are null, and the linear end is flagged beyond the grid."""
    limits = SeriesLimits(
        linear_end_flop=None,
        last_feasible_flop=3e26,
        first_infeasible_flop=None,
        max_utilization=0.7,
    )
    table = threshold_row(
        make_series(),
        limits,
        n_points=7,
        alpha=0.0,
        t_lat_s=9e-6,
        t_crit_flop=1e28,
        t_limit_flop=math.inf,
        provenance=provenance,
    )
    assert table.schema.equals(THRESHOLDS_SCHEMA)
    row = table.to_pylist()[0]
    assert row["linear_end_flop"] is None
    assert row["linear_end_beyond_grid"] is True
    assert row["first_infeasible_flop"] is None
    assert row["t_limit_flop"] is None
    assert row["config_hash"] == row["series_id"]
    assert row["n_points"] == 7
    assert row["schema_version"] == SCHEMA_VERSION


def test_threshold_row_no_feasible_point_not_beyond_grid(make_series, provenance) -> None:
    """A series with no feasible point (e.g. one concrete run over its budget) does not claim
    that linear scaling lasts past the grid: its linear end is null and not beyond the grid."""
    limits = SeriesLimits(
        linear_end_flop=None,
        last_feasible_flop=None,
        first_infeasible_flop=4e25,
        max_utilization=None,
    )
    row = threshold_row(
        make_series(),
        limits,
        n_points=1,
        alpha=0.0,
        t_lat_s=9e-6,
        t_crit_flop=1e28,
        t_limit_flop=1e31,
        provenance=provenance,
    ).to_pylist()[0]
    assert row["linear_end_flop"] is None
    assert row["linear_end_beyond_grid"] is False


def test_provenance_rejects_naive_time() -> None:
    """A created_at without a timezone is refused (it would be stored as a wrong UTC time)."""
    with pytest.raises(ValueError, match="timezone-aware"):
        Provenance(run_id="x", created_at=datetime(2025, 1, 1))


def test_point_rows_requires_infeasible_reason(make_series, provenance, infeasible_point) -> None:
    """An infeasible point without a reason is refused."""
    point = infeasible_point(12288, InfeasibleReason.NO_LAYOUT)
    broken = PointResult(point.shape, False, None, None, None)
    with pytest.raises(ValueError, match="infeasible_reason"):
        point_rows([broken], make_series(), provenance)


def test_point_rows_grid_choices_fill_the_run_columns(
    feasible_point, make_series, provenance
) -> None:
    """A realistic grid row writes the search's MFU, HFU, rates, memory per GPU and
    recomputation mode; a paper grid row leaves them null."""
    from pipeline.model.records.results import GridCost

    used = GridCost(0.4, 0.5, 4e14, 5e14, 6e10, True)
    real = replace(feasible_point(12288), recompute="selective", grid_cost=used, physics="real")
    rows = point_rows([real], make_series(), provenance).to_pylist()[0]
    assert rows["mfu"] == 0.4
    assert rows["hfu"] == 0.5
    assert rows["model_tflops_per_gpu"] == 400.0
    assert rows["hardware_tflops_per_gpu"] == 500.0
    assert rows["memory_per_gpu_bytes"] == 6e10
    assert rows["fits_memory"] is True
    assert rows["recompute"] == "selective"
    assert rows["run_name"] is None
    paper = point_rows([feasible_point(12288)], make_series(), provenance).to_pylist()[0]
    names = ("mfu", "hfu", "memory_per_gpu_bytes", "recompute", "fits_memory", "t_norm_s")
    assert all(paper[n] is None for n in names)


def test_table_from_rows_refuses_a_key_the_schema_does_not_name() -> None:
    """A row key that is no column of the schema (a renamed or misspelt one) is refused by name,
    not dropped."""
    schema = pa.schema([pa.field("t_attention_s", pa.float64())])
    assert table_from_rows([{"t_attention_s": 1.0}], schema).num_rows == 1
    with pytest.raises(ValueError, match="t_attn_s"):
        table_from_rows([{"t_attention_s": 1.0}, {"t_attn_s": 1.0}], schema)


def test_point_rows_of_a_run_fill_every_run_column(make_series, provenance) -> None:
    """A concrete run's points row gives every run column (MFU to the time of each operator
    class) a value: none is left null by a key the row spells differently."""
    scenario = load_scenario(
        compose_config(["run=gpt_1p7b", "hardware=a100_sxm_80gb", "physics=realistic"])
    )
    assert scenario.run is not None
    point = run_point(
        scenario.hardware, scenario.physics, scenario.run, False, 20.0, scenario.duration_s
    )
    row = point_rows([point], make_series(), provenance).to_pylist()[0]
    assert {f.name for f in RUN_FIELDS if row[f.name] is None} == set()


@pytest.mark.parametrize(
    ("overrides", "ratio", "capacity"),
    [
        ([], 1.06901, 80e9),  # the paper reads the datasheet: spec §3.2's 8.0e10 B
        (["physics=realistic"], 1.06901, 81_559 * 2**20),  # the driver's 81,559 MiB
        (["physics=realistic", "hardware=v100_sxm"], None, 32e9),  # no driver count given
    ],
    ids=["paper", "realistic", "realistic-without-count"],
)
def test_series_row_says_which_memory_capacity_it_checked(
    overrides: list[str], ratio: float | None, capacity: float
) -> None:
    """`series.hbm_device_ratio` is the preset's (null where it gives none) and
    `series.memory_capacity_bytes` the capacity the checks read: the datasheet's under the
    paper, its driver count under realistic physics (docs/model.md R.12)."""
    result = pipeline.run([*overrides, "scaling.grid.max_d_model=12288"])
    (row,) = result.series.select("hbm_device_ratio", "memory_capacity_bytes").to_dicts()
    assert row["hbm_device_ratio"] == ratio
    assert row["memory_capacity_bytes"] == pytest.approx(capacity, rel=1e-6)
