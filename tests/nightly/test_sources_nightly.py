"""Nightly runs on observed data: two snapshots, a stale source, a source with no copy."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from importlib import resources
from pathlib import Path

import polars as pl
import pytest

from pipeline.forecast.observed import FrontierSettings, fit_frontier
from pipeline.nightly.partition import date_dir
from pipeline.nightly.run import run_nightly
from pipeline.nightly.tables import read_table
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


@pytest.mark.slow
def test_nightly_two_snapshots_name_new_runs_and_moved_years(tmp_path: Path) -> None:
    """An older snapshot, then the newer one: the report names the new runs, the refit and every
    fitted forecast year that moved, with its interval."""
    older = tmp_path / "older.csv"
    older.write_bytes(cut_after(shipped_runs(), CUT))
    root = tmp_path / "nightly"
    cfg = nightly_config(root, D1, f"sources.frontier_runs.location={older}")
    assert run_nightly(cfg, progress=False) == 0
    assert run_nightly(nightly_config(root, D2), progress=False) == 0
    report = _report(root, D2)
    causes = report["causes"]
    assert isinstance(causes, list)
    kinds = {c["kind"] for c in causes}
    assert {"source_changed", "run_added", "fit_changed"} <= kinds
    added = [c["detail"] for c in causes if c["kind"] == "run_added"]
    assert any(d.startswith("new: Grok-3") and "2025-02" in d for d in added), added
    moved = [m for m in report["forecasts"] if m["trajectory"] == "fitted"]  # type: ignore[attr-defined]
    assert moved, "the refit moves the fitted years"
    assert all(m["current_interval"] is not None for m in moved)
    markdown = (root / "reports" / f"changes-{D2}.md").read_text(encoding="utf-8")
    assert "fitted frontier growth" in markdown
    runs = read_table(date_dir(root, dt.date.fromisoformat(D2)), "observed_runs")
    assert runs is not None
    assert runs.filter(pl.col("publication_date").cast(pl.String) > CUT).height > 0


@pytest.mark.slow
def test_nightly_stale_source_publishes_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fetch that fails after a good one publishes on the last good copy, marked stale in the
    sources table, on stderr and in the change report."""
    root = tmp_path / "nightly"
    body = shipped_runs()
    with Loopback([Answer(200, body, {"ETag": '"v1"'}), Answer(500, b"down")]) as server:
        location = f"sources.frontier_runs.location={server.url}"
        assert run_nightly(nightly_config(root, D1, location, *FAST_FETCH), progress=False) == 0
        assert run_nightly(nightly_config(root, D2, location, *FAST_FETCH), progress=False) == 0
    assert server.requests[1]["If-None-Match"] == '"v1"'
    err = capsys.readouterr().err
    assert "source frontier_runs is STALE" in err
    assert "Traceback" not in err
    sources = read_table(date_dir(root, dt.date.fromisoformat(D2)), "sources")
    assert sources is not None
    row = sources.filter(pl.col("source") == "frontier_runs").row(0, named=True)
    assert row["stale"] is True
    assert "HTTP 500" in row["stale_reason"]
    kinds = [c["kind"] for c in _report(root, D2)["causes"]]  # type: ignore[union-attr]
    assert "source_stale" in kinds


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
