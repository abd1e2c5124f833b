"""Nightly runs on observed data: two snapshots, a stale source, a source with no copy."""

from __future__ import annotations

import csv
import io
import json
from importlib import resources
from pathlib import Path

import pytest

from pipeline.forecast.observed import FrontierSettings, fit_frontier
from pipeline.nightly.run import run_nightly
from pipeline.sources.epoch import parse_runs
from tests.nightly.runs import nightly_config
from tests.sources.server import Answer, Loopback

D1, D2 = "2025-06-01", "2025-06-02"
CUT = "2024-12-31"
"""The older snapshot keeps the runs published up to this date (Grok 3 and others come after)."""
FAST_FETCH = ("sources.fetch.retries=0", "sources.fetch.timeout_s=2", "sources.fetch.backoff_s=0")


def shipped_runs() -> bytes:
    """The shipped Notable AI Models snapshot."""
    return resources.files("pipeline.sources.data").joinpath("notable_ai_models.csv").read_bytes()


def cut_after(body: bytes, last_date: str) -> bytes:
    """The same CSV without the rows published after `last_date` (an older snapshot)."""
    rows = list(csv.reader(io.StringIO(body.decode("utf-8"), newline="")))
    column = rows[0].index("Publication date")
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(rows[0])
    writer.writerows(r for r in rows[1:] if r and r[column] <= last_date)
    return out.getvalue().encode("utf-8")


def _report(root: Path, day: str) -> dict[str, object]:
    data = json.loads((root / "reports" / f"changes-{day}.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_nightly_source_without_any_copy_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A first fetch answered with an HTML page: exit 2, one line naming the source, nothing
    published."""
    root = tmp_path / "nightly"
    page = b"<!DOCTYPE html><html><body>maintenance</body></html>\n"
    with Loopback([Answer(200, page, {"Content-Type": "text/html"})]) as server:
        cfg = nightly_config(root, D1, f"sources.frontier_runs.location={server.url}", *FAST_FETCH)
        assert run_nightly(cfg, progress=False) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("dmlimits: error: source frontier_runs:")
    assert "HTML" in err[0]
    assert not list(root.glob("run_date=*"))


def test_nightly_summary_prints_forecast_years(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The nightly run's summary lists the fitted and hand-set forecast years with the data's
    date, as the fit of the shipped snapshot gives them."""
    assert run_nightly(nightly_config(tmp_path / "nightly", D1), progress=False) == 0
    out = capsys.readouterr().out
    runs, _ = parse_runs(shipped_runs(), "frontier_runs")
    fit, _ = fit_frontier(runs, FrontierSettings())
    shown = f"fitted {fit.growth_per_year:.2f}x/yr ({fit.growth_per_year_low:.2f}-"
    assert shown in out
    as_of = max(r.publication_date for r in runs)
    assert f"forecast years: median (5th-95th percentile), data as of {as_of}" in out
    assert "hand-set 4x/yr" in out
