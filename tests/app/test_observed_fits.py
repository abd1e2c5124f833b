"""Runs of other `forecast.fitted` settings into one root keep their own `observed_runs` part:
each fit's frontier flags stay readable, and each run's forecasts join their own runs on
`fit_hash` (docs/schema.md, `observed_runs`). The part was keyed by the source copy alone, so a
back-test written after the default run rewrote the default run's frontier flags."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from pipeline.io.read import read_table
from pipeline.nightly.tables import runs_of_fit
from tests.nightly.runs import plain_run

BACK_TEST = ("hardware=a100_sxm", "forecast.fitted.window_end=2023-01-01")
"""The audit's second run: another series, fitted on the runs published by 2023."""
LATER_FRONTIER = ("GPT-4", "PaLM 2", "Claude 2")
"""Frontier runs of 2023, after the back-test's window: frontier in the default fit only."""


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default run (h100_sxm), then the back-test (a100_sxm), into one root."""
    path = tmp_path_factory.mktemp("fits") / "root"
    plain_run(path)
    plain_run(path, *BACK_TEST)
    return path


def _table(root: Path, name: str) -> pl.DataFrame:
    frame = read_table(root, name).frame
    assert frame is not None
    return frame


def _fit_of(forecasts: pl.DataFrame, hardware: str) -> str:
    """The one fit every forecasts row of `hardware` rests on."""
    fits = set(forecasts.filter(pl.col("hardware") == hardware)["fit_hash"].to_list())
    assert len(fits) == 1
    (fit,) = fits
    assert isinstance(fit, str)
    return fit


def test_each_fit_keeps_its_own_observed_runs_part(root: Path) -> None:
    """Two parts, one per fit, each every run of the one copy once: the default fit's frontier
    holds GPT-4, PaLM 2 and Claude 2, the back-test's no run after its window's end."""
    observed = _table(root, "observed_runs")
    assert len(list((root / "observed_runs").glob("part-*.parquet"))) == 2
    assert observed["content_hash"].n_unique() == 1
    assert observed["fit_hash"].n_unique() == 2
    sizes = observed.group_by("fit_hash").len()["len"].to_list()
    assert sizes[0] == sizes[1] == observed.height // 2
    forecasts = _table(root, "forecasts")
    default, back_test = _fit_of(forecasts, "h100_sxm"), _fit_of(forecasts, "a100_sxm")
    assert default != back_test
    for fit, frontier in ((default, True), (back_test, False)):
        runs = observed.filter(pl.col("fit_hash") == fit)
        later = runs.filter(pl.col("model").is_in(LATER_FRONTIER))
        assert later.height == len(LATER_FRONTIER)
        assert later["frontier"].to_list() == [frontier] * len(LATER_FRONTIER)
    back_frontier = observed.filter((pl.col("fit_hash") == back_test) & pl.col("frontier"))
    assert back_frontier["publication_date"].max() <= dt.date(2023, 1, 1)  # type: ignore[operator]


def test_a_forecast_joins_the_runs_of_its_own_fit(root: Path) -> None:
    """Joined on fit_hash, every forecasts row finds its run's observed runs, once each, and
    its data_as_of is the newest of them the fit could see (the back-test's: 2022-12-28)."""
    forecasts = _table(root, "forecasts")
    observed = _table(root, "observed_runs")
    assert forecasts["fit_hash"].null_count() == 0  # hand-set rows rest on the fit's record too
    joined = forecasts.join(observed, on="fit_hash", suffix="_observed")
    n_runs = observed.height // 2
    counts = joined.group_by("series_id", "trajectory").len()["len"].to_list()
    assert counts == [n_runs] * forecasts.height
    for row in forecasts.iter_rows(named=True):
        runs = observed.filter(pl.col("fit_hash") == row["fit_hash"])
        window_end = dt.date(2023, 1, 1) if row["hardware"] == "a100_sxm" else dt.date.max
        seen = runs.filter(pl.col("publication_date") <= window_end)
        assert row["data_as_of"] == seen["publication_date"].max()


def test_a_run_of_the_same_fit_replaces_its_part(root: Path, tmp_path: Path) -> None:
    """The default run again, into a copy of the root, rewrites its own part, not another's;
    the fitted line (`line`) is no flag setting, so a typical-line run shares the part."""
    copy = tmp_path / "root"
    copy.mkdir()
    for table in ("observed_runs",):
        (copy / table).mkdir()
        for part in (root / table).iterdir():
            (copy / table / part.name).write_bytes(part.read_bytes())
    before = sorted(p.name for p in (copy / "observed_runs").iterdir())
    plain_run(copy, "forecast.fitted.line=typical")
    assert sorted(p.name for p in (copy / "observed_runs").iterdir()) == before


def test_the_chart_and_change_report_read_the_fitted_rows_fit(root: Path) -> None:
    """`runs_of_fit` keeps the runs of the fit the first fitted row rests on."""
    forecasts = _table(root, "forecasts")
    observed = _table(root, "observed_runs")
    for hardware in ("h100_sxm", "a100_sxm"):
        own = forecasts.filter(pl.col("hardware") == hardware)
        runs = runs_of_fit(observed, own)
        assert set(runs["fit_hash"].to_list()) == {_fit_of(forecasts, hardware)}
        assert runs.height == observed.height // 2
    assert runs_of_fit(observed, None).height == observed.height
