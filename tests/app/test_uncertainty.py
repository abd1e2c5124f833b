"""The uncertainty design with a trend input: each point's moving-hardware years are written."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from pipeline.nightly.run import run_nightly
from tests.nightly.runs import nightly_config

DESIGN = (
    "++forecast.uncertainty={samples: 8, seed: 1, inputs: {"
    "hardware.u_eff: {distribution: uniform, low: 0.6, high: 0.8}, "
    "trends.growth_per_year.dense_16bit_flop_per_s: {distribution: trend}}}"
)


def test_uncertainty_trend_input_gives_moving_years(tmp_path: Path) -> None:
    """A design with a trend rate writes moving-hardware rows for both limits (on the test's
    short model-size grid no point reaches them), the trend input beside the config input."""
    cfg = nightly_config(
        tmp_path, "2025-02-01", "forecast.moving_frontier_years=[2024,2028,2032,2036,2040]", DESIGN
    )
    assert run_nightly(cfg, progress=False) == 0
    rows = pl.read_parquet(next(tmp_path.rglob("uncertainty/*.parquet")))
    moving = rows.filter(pl.col("limit") == "moving_linear_end_year")
    assert moving["input"].to_list() == [
        "hardware.u_eff",
        "trends.growth_per_year.dense_16bit_flop_per_s",
        "trajectory",
    ]
    assert moving["n_samples"].to_list() == [8, 8, 8]
    assert moving["distribution"][1].startswith("trend ")
    assert set(rows["limit"]) == {
        "linear_end_year",
        "wall_year",
        "moving_linear_end_year",
        "moving_wall_year",
    }


def test_uncertainty_moving_probes_report_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The design's moving-hardware probes get their own progress lines, before the run's own
    series: the nightly is never silent while it probes the years."""
    cfg = nightly_config(
        tmp_path, "2025-02-01", "forecast.moving_frontier_years=[2024,2028,2032,2036,2040]", DESIGN
    )
    assert run_nightly(cfg, progress=True) == 0
    err = capsys.readouterr().err.splitlines()
    probes = [i for i, line in enumerate(err) if "uncertainty design, moving hardware:" in line]
    assert probes, err
    assert max(probes) < err.index("[dmlimits] 1 series to evaluate")
