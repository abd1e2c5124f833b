"""The nightly says what it is doing from the start: planning, each stage's series, the run's."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.nightly.run import run_nightly
from tests.nightly.runs import nightly_config

DESIGN = (
    "++forecast.uncertainty={samples: 8, seed: 1, inputs: "
    "{hardware.u_eff: {distribution: uniform, low: 0.6, high: 0.8}}}"
)


def test_nightly_progress_names_every_stage_in_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Reading the sources, the moving frontier's series, the run's tables, the design's series,
    the run's own and publishing each get a line before they start, in the order they run."""
    cfg = nightly_config(
        tmp_path, "2025-02-01", "forecast.moving_frontier_years=[2024,2030]", DESIGN
    )
    assert run_nightly(cfg, progress=True) == 0
    err = capsys.readouterr().err.splitlines()
    expected = [
        "[dmlimits] 1 series; reading the observed-data sources, fitting the frontier",
        "[dmlimits] uncertainty design: 8 series of the run's config",
        "[dmlimits] moving frontier: 2 series to evaluate",
        "[dmlimits] the run's tables: trends, observed runs, the reality check",
        "[dmlimits] uncertainty design: 8 series to evaluate",
        "[dmlimits] 1 series to evaluate",
        "[dmlimits] publishing run_date=2025-02-01, the change report",
    ]
    positions = [err.index(line) for line in expected]
    assert positions == sorted(positions)
