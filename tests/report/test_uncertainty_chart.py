"""The uncertainty chart: one panel per limit year, a bar per input, drawn in the report."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from matplotlib import image

from pipeline.report.charts import DPI, FIGSIZE_IN
from pipeline.report.main import main
from pipeline.report.uncertainty_chart import uncertainty_figure
from tests.nightly.runs import plain_run

DESIGN = (
    "+forecast.uncertainty={samples: 8, seed: 1, inputs: "
    "{hardware.u_eff: {distribution: uniform, low: 0.6, high: 0.8}}}"
)


def _budget() -> pl.DataFrame:
    """Two limits, two inputs each; the wall reached by no point."""
    return pl.DataFrame(
        {
            "limit": ["linear_end_year"] * 2 + ["wall_year"] * 2,
            "input": ["hardware.u_eff", "trajectory"] * 2,
            "variance_share": [0.2, 0.7, None, None],
            "explained": [0.9, 0.9, None, None],
            "year_median": [2029.0, 2029.0, None, None],
            "year_low": [2028.0, 2028.0, None, None],
            "year_high": [2030.5, 2030.5, None, None],
        }
    )


def test_uncertainty_figure_has_a_panel_per_limit_largest_share_on_top() -> None:
    """Each limit is a panel titled with its year and interval (or none reached); its bars are
    the inputs, the largest share on top."""
    fig = uncertainty_figure(_budget())
    first, second = fig.axes
    assert first.get_title() == "linear-scaling end: 2029.0 (2028.0-2030.5), 90% explained"
    assert second.get_title() == "latency wall: not reached by any design point"
    labels = [t.get_text() for t in first.get_yticklabels()]
    assert labels == ["hardware.u_eff", "trajectory"]  # barh draws bottom-up: largest last


@pytest.mark.slow
def test_report_draws_the_uncertainty_budget(tmp_path: Path) -> None:
    """A dataset of a run with a design gets uncertainty.png of the standard width."""
    root = tmp_path / "dataset"
    plain_run(root, DESIGN)
    out = tmp_path / "out"
    assert main([str(root), "--out", str(out)]) == 0
    assert image.imread(out / "uncertainty.png").shape[1:] == (round(FIGSIZE_IN[0] * DPI), 4)
    assert "uncertainty.png" in (out / "index.html").read_text(encoding="utf-8")
