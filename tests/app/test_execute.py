"""`execute_plan`: skipped series still report their thresholds; the series table keeps overrides."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from pipeline.app.execute import RunReport, execute_plan
from pipeline.app.plan import plan_run
from pipeline.app.summary import summary_lines
from pipeline.io.tables import SERIES_TABLES, table_spec
from pipeline.schema import compose_config

SWEEP = [
    "scaling.grid.max_d_model=16384",
    "execution.n_jobs=1",
    "+sweep.axes.hardware.hbm_bandwidth_gb_per_s=[2000,3352]",
]
"""Two series of three sizes each, evaluated in-process."""


def sweep_run(root: Path, keep_tables: bool = False) -> RunReport:
    """The two-series sweep into `root` (resumed, as every sweep by default)."""
    args = [f"output.root={root}", *SWEEP]
    return execute_plan(
        plan_run(compose_config(args), overrides=args), progress=False, keep_tables=keep_tables
    )


def table_rows(report: RunReport) -> list[str]:
    """The printed lines of a report without its header (which holds the timing)."""
    return summary_lines(report.summaries, "ROOT", report.seconds, report.points)[1:]


def test_skipped_series_print_their_thresholds(tmp_path: Path) -> None:
    """A resumed sweep evaluates nothing yet prints the same table, read from the dataset."""
    first = sweep_run(tmp_path)
    again = sweep_run(tmp_path)
    assert (first.skipped, len(first.outcomes)) == (0, 2)
    assert (again.skipped, len(again.outcomes), again.points) == (2, 0, 0)
    assert all(s.resumed for s in again.resumed)
    assert table_rows(again) == table_rows(first)
    before = {s.series_id: (s.limits, s.n_points) for s in first.outcomes}
    assert {s.series_id: (s.limits, s.n_points) for s in again.resumed} == before


def sorted_table(report: RunReport, name: str) -> pa.Table:
    """One table over every batch of a report, sorted as the dataset is."""
    table = pa.concat_tables([t[name] for t in report.tables if name in t])
    return table.sort_by([(key, "ascending") for key in table_spec(name).sort_keys])


def test_resumed_tables_equal_the_evaluated_ones(tmp_path: Path) -> None:
    """Rows read back for skipped series equal, column for column, the rows first written."""
    first = sweep_run(tmp_path, keep_tables=True)
    again = sweep_run(tmp_path, keep_tables=True)
    assert (first.skipped, again.skipped) == (0, 2)
    for name in SERIES_TABLES:
        assert sorted_table(again, name).equals(sorted_table(first, name)), name


def test_series_table_records_overrides_and_sweep_point(tmp_path: Path) -> None:
    """series.overrides is the run's overrides followed by the series' sweep point entries."""
    report = sweep_run(tmp_path, keep_tables=True)
    found = sorted(json.loads(o) for o in sorted_table(report, "series")["overrides"].to_pylist())
    base = [f"output.root={tmp_path}", *SWEEP]
    assert found == [
        [*base, "hardware.hbm_bandwidth_gb_per_s=2000"],
        [*base, "hardware.hbm_bandwidth_gb_per_s=3352"],
    ]
