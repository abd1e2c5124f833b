"""A resumed sweep never returns forecasts of other forecast settings than its own
(pipeline/app/resumed.py, `forecast_mismatch`): a series' id does not hash them, so a resume
whose trajectories or moving frontier differ from those the series were written with is
refused, naming it (docs/configuration.md, "Sweeps, resume and scale-out")."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import pipeline
from pipeline.app import plan as plan_module
from pipeline.app.execute import execute_plan
from pipeline.app.plan import plan_run
from pipeline.schema import ConfigError, compose_config

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


def test_resume_on_another_day_keeps_the_fitted_line(tmp_path: Path) -> None:
    """A fitted trajectory's base is its line at the run date, so a sweep written on another day
    has another base on the same line: it resumes (the trajectory compared as a line)."""
    args = [*SWEEP, f"output.root={tmp_path}", "output.run_date=2026-01-05"]
    execute_plan(plan_run(compose_config(args), overrides=args), progress=False)
    again = pipeline.run(SWEEP, write=True, root=tmp_path)
    assert again.report.skipped == 2
    fitted = again.forecasts.filter(again.forecasts["trajectory"] == "fitted")
    assert fitted["base_year"].max() < 2026.1  # the rows written on 2026-01-05, read back


def test_streamed_resume_refuses_before_evaluating_more_series(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sweep too large to list (streamed) checks the first series it skips before it
    evaluates any more: with other trajectories nothing of the run is written, and from
    Python a streamed resume is checked as a listed one is."""
    monkeypatch.setattr(plan_module, "CHECKED_SERIES", 1)  # the sweeps below stream
    pipeline.run(SWEEP, write=True, root=tmp_path)
    wider = [SWEEP[0], "+sweep.axes.hardware.hbm_bandwidth_gb_per_s=[2000,3352,4000]"]
    changed = ["forecast.growth_per_year=[2.0]", "forecast.base_flop=1e26"]
    with pytest.raises(ConfigError, match="other forecasts"):
        pipeline.run([*wider, *changed], write=True, root=tmp_path)
    written = pl.read_parquet(f"{tmp_path}/thresholds/**/*.parquet")
    assert written.height == 2  # the third series was not evaluated
    with pytest.raises(ConfigError, match="other forecasts"):
        pipeline.run([*SWEEP, *changed], write=True, root=tmp_path)


def test_resume_refuses_a_hand_set_line_with_another_base(tmp_path: Path) -> None:
    """A hand-set base is the user's: the same line from another base year is another
    forecast (its rows state their base, and read passed years from it), so it is refused."""
    hand = ["forecast.fitted=null", "forecast.growth_per_year=[4]"]
    pipeline.run([*SWEEP, *hand], write=True, root=tmp_path)
    moved = ["forecast.base_year=2030", "forecast.base_flop=2.048e29"]  # 5e25 x 4^6
    with pytest.raises(ConfigError, match="other forecasts"):
        pipeline.run([*SWEEP, *hand, *moved], write=True, root=tmp_path)


def test_streamed_resume_checks_every_series_it_skips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A streamed resume from Python whose first skipped series matches and a later one does
    not is refused when it reads them back, not only on its first skip."""
    monkeypatch.setattr(plan_module, "CHECKED_SERIES", 0)  # every sweep below streams
    first, second = (f"+sweep.axes.hardware.hbm_bandwidth_gb_per_s=[{b}]" for b in (2000, 3352))
    pipeline.run([SWEEP[0], first], write=True, root=tmp_path)
    changed = ["forecast.growth_per_year=[2.0]", "forecast.base_flop=1e26"]
    pipeline.run([SWEEP[0], second, *changed], write=True, root=tmp_path)
    with pytest.raises(ConfigError, match="other forecasts"):
        pipeline.run(SWEEP, write=True, root=tmp_path)
