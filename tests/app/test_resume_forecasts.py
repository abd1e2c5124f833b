"""A resumed sweep never returns forecasts of other forecast settings than its own
(pipeline/app/resumed.py, `forecast_mismatch`): a series' id does not hash them, so a resume
whose trajectories or moving frontier differ from those the series were written with is
refused, naming it (docs/configuration.md, "Sweeps, resume and scale-out")."""

from __future__ import annotations

from pathlib import Path

import pytest

import pipeline
from pipeline.schema import ConfigError

SWEEP = [
    "scaling.grid.max_d_model=16384",
    "+sweep.axes.hardware.hbm_bandwidth_gb_per_s=[2000,3352]",
]


def test_resume_with_the_same_forecast_settings_reads_the_series_back(tmp_path: Path) -> None:
    """The same sweep written again resumes: both series skipped, their forecasts returned."""
    first = pipeline.run(SWEEP, write=True, root=tmp_path)
    again = pipeline.run(SWEEP, write=True, root=tmp_path)
    assert again.report.skipped == 2
    assert sorted(again.forecasts["config_hash"].to_list()) == sorted(
        first.forecasts["config_hash"].to_list()
    )


@pytest.mark.parametrize(
    ("changed", "fragment"),
    [
        pytest.param(
            ["forecast.growth_per_year=[2.0]", "forecast.base_flop=1e26"],
            "other forecasts",
            id="trajectories",
        ),
        pytest.param(
            ["forecast.moving_frontier_years=[2024,2030]"], "another moving frontier", id="moving"
        ),
    ],
)
def test_resume_with_other_forecast_settings_is_refused(
    tmp_path: Path, changed: list[str], fragment: str
) -> None:
    """Resuming with other trajectories, or a moving frontier the series were written
    without, is one line naming the root and the way out, not the old forecasts."""
    pipeline.run(SWEEP, write=True, root=tmp_path)
    with pytest.raises(ConfigError) as info:
        pipeline.run([*SWEEP, *changed], write=True, root=tmp_path)
    assert info.value.key == "output.root"
    assert fragment in str(info.value)
    assert "output.resume=false" in str(info.value)
    assert "\n" not in str(info.value)


def test_resume_off_evaluates_again_with_the_new_settings(tmp_path: Path) -> None:
    """With output.resume=false the series are evaluated again under the new trajectories."""
    pipeline.run(SWEEP, write=True, root=tmp_path)
    changed = ["forecast.growth_per_year=[2.0]", "forecast.base_flop=1e26", "output.resume=false"]
    again = pipeline.run([*SWEEP, *changed], write=True, root=tmp_path)
    assert again.report.skipped == 0
    assert set(again.forecasts["trajectory"].to_list()) == {"fitted", "hand_set_2x"}
