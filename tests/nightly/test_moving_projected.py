"""A nightly series whose hardware a sweep axis changed has no moving frontier: its moving years
read "not projected", in the run's summary and in dmlimits-report's page, never "not reached"
(docs/trends.md §4), and the summary labels each sweep point as the report does."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import re
from pathlib import Path

import pytest

from pipeline.nightly.partition import date_dir
from pipeline.nightly.run import run_nightly
from pipeline.nightly.tables import read_table
from pipeline.report.main import main as report_main
from pipeline.schema.projected import preset_spec
from tests.nightly.runs import nightly_config

pytestmark = pytest.mark.slow
"""A nightly run with a moving frontier, and a report."""

D1 = "2025-03-01"
SHIPPED = round(preset_spec("h100_sxm").hbm_bandwidth_bytes_per_s / 1e9)
"""The H100's HBM bandwidth as shipped (GB/s): the sweep point projected along the trends."""
CHANGED = SHIPPED + 648
"""Another: the H100 with changed hardware, not a catalog preset as shipped, not projected."""
AXIS = f"+sweep.axes.hardware.hbm_bandwidth_gb_per_s=[{SHIPPED},{CHANGED}]"


@pytest.fixture(scope="module")
def nightly(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A small nightly over the two sweep points, with a moving frontier of two years: the
    published partition and the summary's forecast lines."""
    root = tmp_path_factory.mktemp("moving") / "nightly"
    cfg = nightly_config(root, D1, AXIS, "forecast.moving_frontier_years=[2024,2030]")
    out = io.StringIO()  # a module fixture has no capsys
    with contextlib.redirect_stdout(out):
        assert run_nightly(cfg, progress=False) == 0
    lines = out.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("forecast years"))
    return date_dir(root, dt.date.fromisoformat(D1)), lines[start:]


def _label(gb_per_s: int) -> str:
    return f"h100_sxm / dense / critical | hbm_bandwidth_gb_per_s={gb_per_s}"


def test_forecasts_say_which_series_was_projected(nightly: tuple[Path, list[str]]) -> None:
    """The shipped sweep point's rows have `moving_projected` true, and it has `frontier` rows;
    the changed one's false, with the moving years and `moving_without_threshold` null."""
    partition, _ = nightly
    forecasts = read_table(partition, "forecasts")
    series = read_table(partition, "series")
    assert forecasts is not None
    assert series is not None
    changed = {
        row["series_id"]
        for row in series.iter_rows(named=True)
        if str(CHANGED) in str(row["sweep_point"])
    }
    assert len(changed) == 1
    frontier = read_table(partition, "frontier", ("series_id",))
    assert frontier is not None
    assert set(frontier["series_id"]) == set(series["series_id"]) - changed
    for row in forecasts.iter_rows(named=True):
        projected = row["series_id"] not in changed
        assert row["moving_projected"] is projected
        if not projected:
            assert row["moving_linear_end_year"] is None
            assert row["moving_without_threshold"] is None


def test_nightly_summary_says_not_projected_and_labels_the_sweep_points(
    nightly: tuple[Path, list[str]],
) -> None:
    """Each sweep point has its own label (the report's); the changed one's moving columns
    read "not projected" beside its frozen years, the shipped one's are years."""
    _, lines = nightly
    rows = [line for line in lines if line.startswith("h100_sxm")]
    shipped = [line for line in rows if line.startswith(_label(SHIPPED) + " ")]
    changed = [line for line in rows if line.startswith(_label(CHANGED) + " ")]
    assert len(shipped) == len(changed) == len(rows) // 2 > 0
    for line in changed:
        assert line.count("not projected") == 2
        assert "not reached" not in line
    for line in shipped:
        assert "not projected" not in line


def test_report_page_says_not_projected(nightly: tuple[Path, list[str]], tmp_path: Path) -> None:
    """dmlimits-report's forecasts table prints the changed sweep point's moving years "not
    projected", never "not reached"."""
    partition, _ = nightly
    assert report_main([str(partition.parent), "--out", str(tmp_path)]) == 0
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    table = page[page.index("<h2>Forecasts</h2>") :]
    table = table[: table.index("</table>")]
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]
    changed = [r for r in rows if _label(CHANGED) in r]
    assert changed
    assert len(changed) == len(rows) // 2
    for row in changed:
        assert row.count("<td>not projected</td>") == 2
        assert "not reached" not in row
    for row in rows:
        if row not in changed:
            assert "not projected" not in row
