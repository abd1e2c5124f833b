"""dmlimits-report writes PNG charts of the expected size and an HTML page that shows them."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image

from pipeline.nightly.run import run_nightly
from pipeline.report.charts import DPI, FIGSIZE_IN
from pipeline.report.main import CHARTS, main
from tests.io.helpers import split_part
from tests.nightly.runs import nightly_config, plain_run

pytestmark = pytest.mark.slow
"""Runs and matplotlib rendering."""

WIDTH_PX = round(FIGSIZE_IN[0] * DPI)
"""Every saved chart is 1200 pixels wide; charts with a row per series grow in height."""
MIN_HEIGHT_PX = 250


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two series: the critical batch law on a tiny grid, and the constant law up to its wall."""
    root = tmp_path_factory.mktemp("report") / "dataset"
    plain_run(root)
    plain_run(root, "batch=constant", "scaling.grid.max_d_model=1572864")
    return root


@pytest.fixture(scope="module")
def report(dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of `dataset`, written by the console entry point."""
    out = tmp_path_factory.mktemp("out")
    assert main([str(dataset), "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("name", [name for name, _, _ in CHARTS])
def test_report_png_is_nonempty_image_of_expected_size(report: Path, name: str) -> None:
    """Each chart reads back as a 1200-pixel-wide RGBA image that is not a blank canvas."""
    pixels = image.imread(report / name)
    assert pixels.shape[1:] == (WIDTH_PX, 4)
    assert pixels.shape[0] >= MIN_HEIGHT_PX
    assert float(np.std(pixels[..., :3])) > 0.05


def test_report_page_references_every_chart_and_table(report: Path) -> None:
    """index.html shows each PNG by file name, and the thresholds and forecasts tables."""
    page = (report / "index.html").read_text(encoding="utf-8")
    for name, _, _ in CHARTS:
        assert f'src="{name}"' in page
    assert "<h2>Thresholds</h2>" in page
    assert "<h2>Forecasts</h2>" in page
    assert "h100_sxm / dense / constant" in page
    assert "http" not in page, "self-contained: no external resource"


def test_report_embed_makes_one_file(dataset: Path, tmp_path: Path) -> None:
    """With --embed the page carries every PNG (the charts and observed.png) as a data: URI
    instead of a file name."""
    assert main([str(dataset), "--out", str(tmp_path), "--embed"]) == 0
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert page.count('src="data:image/png;base64,') == len(pngs) == len(CHARTS) + 1
    assert 'src="observed.png"' not in page


def test_report_without_dataset_exits_2(tmp_path: Path) -> None:
    """A directory with no dataset is an error, exit status 2."""
    assert main([str(tmp_path / "missing"), "--out", str(tmp_path / "out")]) == 2


def test_report_draws_trends_and_moving_frontier(tmp_path: Path) -> None:
    """A dataset with a moving frontier gets trends.png and frontier.png of the standard size."""
    root = tmp_path / "dataset"
    plain_run(root, "forecast.moving_frontier_years=[2024,2030]")
    out = tmp_path / "out"
    assert main([str(root), "--out", str(out)]) == 0
    for name in ("trends.png", "frontier.png"):
        assert image.imread(out / name).shape[1:] == (WIDTH_PX, 4)
        assert name in (out / "index.html").read_text(encoding="utf-8")


def test_report_where_chooses_the_series_drawn(dataset: Path, tmp_path: Path) -> None:
    """--where keeps the series its SQL condition holds for; the page lists only those."""
    assert main([str(dataset), "--out", str(tmp_path), "--where", "batch_law = 'constant'"]) == 0
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "h100_sxm / dense / constant" in page
    assert "h100_sxm / dense / critical" not in page
    assert "(1 of 2 series)" in page


def test_report_bad_where_exits_2(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A --where that is no valid condition, or chooses nothing, is one line and exit 2."""
    assert main([str(dataset), "--out", str(tmp_path), "--where", "no_such_column = 1"]) == 2
    assert main([str(dataset), "--out", str(tmp_path), "--series", "zzz"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("dmlimits-report: error: no series matches")


def test_report_draws_observed_frontier_and_forecast_intervals(report: Path) -> None:
    """A run that read the frontier-runs source gets observed.png, and the forecasts table shows
    the fitted trajectory with its intervals."""
    assert image.imread(report / "observed.png").shape[1:] == (WIDTH_PX, 4)
    page = (report / "index.html").read_text(encoding="utf-8")
    assert 'src="observed.png"' in page
    assert "fitted " in page
    assert "5th-95th percentile" in page


def test_report_page_shows_the_latest_change_report(tmp_path: Path) -> None:
    """A nightly root's page ends with its newest date's change report."""
    root = tmp_path / "nightly"
    for day in ("2025-01-01", "2025-01-02"):
        assert run_nightly(nightly_config(root, day), progress=False) == 0
    out = tmp_path / "out"
    assert main([str(root), "--out", str(out)]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<h2>Latest change report</h2>" in page
    assert "<h3>Changes on 2025-01-02 since 2025-01-01</h3>" in page


def test_report_refuses_a_series_in_two_parts(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A merged root (a series in two parts of one table, which dmlimits-gather reports NOT
    OK) draws nothing: its rows would count twice. One error line, exit 2, no --out written."""
    root = tmp_path / "merged"
    shutil.copytree(dataset, root)
    split_part(root, "thresholds")
    out = tmp_path / "out"
    assert main([str(root), "--out", str(out)]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(errors) == 1
    assert "1 series has rows in two parts of the thresholds table" in errors[0]
    assert "dmlimits-gather" in errors[0]
    assert not out.exists()


def test_report_draws_a_dataset_without_a_feasible_size(tmp_path: Path) -> None:
    """A concrete run that does not train (the 1T run on its preset) has no linear end, feasible size or
    wall on the compute axis and no layout: the charts say so instead of failing to
    log-scale."""
    import polars as pl

    root = tmp_path / "dataset"
    plain_run(root, "run=gpt_1t")
    limits = pl.read_parquet(root / "thresholds" / "**" / "*.parquet")
    assert limits["end_reason"].to_list() == ["run"]
    for column in ("linear_end_flop", "last_feasible_flop", "wall_flop"):
        assert limits[column].to_list() == [None], column
    out = tmp_path / "out"
    assert main([str(root), "--out", str(out)]) == 0
    for name, _, _ in CHARTS:
        assert image.imread(out / name).shape[1] == WIDTH_PX, name
    assert "thresholds.png" in (out / "index.html").read_text(encoding="utf-8")
