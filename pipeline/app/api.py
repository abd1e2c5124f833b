"""`pipeline.run`: one run from Python, its tables as polars frames (docs/api.md).

The frames are built from the same Arrow tables the writer writes, so their columns are those
of docs/schema.md, in schema order, sorted like the dataset (`pipeline.io.columns.SORT_KEYS`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import polars as pl
import pyarrow as pa
from omegaconf import OmegaConf

from pipeline.app.execute import RunReport, execute_plan
from pipeline.app.plan import compose_run_config, plan_run
from pipeline.app.summary import summary_lines
from pipeline.io.columns import SORT_KEYS, TABLES
from pipeline.io.parquet import OutputError
from pipeline.schema.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Result:
    """A finished run: its four tables (one row set per series) and what the run did."""

    points: pl.DataFrame
    """One row per evaluated model size of each series, feasible or not."""
    thresholds: pl.DataFrame
    """One row per series: its limits and closed forms."""
    forecasts: pl.DataFrame
    """One row per series and compute-growth scenario: the years the limits are reached."""
    series: pl.DataFrame
    """One row per series: its scenario in SI units, sweep point and overrides."""
    report: RunReport
    """Run id, timing, the dataset root (None when nothing was written), series skipped."""

    def summary(self) -> str:
        """The text table `dmlimits` prints for this run."""
        report = self.report
        root = "(not written)" if report.root is None else str(report.root)
        return "\n".join(
            summary_lines(report.summaries, root, report.seconds, report.points, report.skipped)
        )


def _frame(table_name: str, tables: Sequence[pa.Table]) -> pl.DataFrame:
    """The rows of one table over every series, in the dataset's column order and sort order."""
    schema = TABLES[table_name]
    arrow = pa.concat_tables(tables) if tables else schema.empty_table()
    frame = cast(pl.DataFrame, pl.from_arrow(arrow))
    return frame.sort(list(SORT_KEYS[table_name]))


def run(
    overrides: Sequence[str] = (),
    *,
    write: bool = False,
    root: str | Path | None = None,
    progress: bool = False,
) -> Result:
    """Compose the config with `overrides`, evaluate every series, return the tables.

    `overrides` are `dmlimits` command-line overrides, e.g. ``["hardware=a100_sxm",
    "scaling.grid.max_d_model=16384"]``; a sweep (``sweep=smoke``) runs all its series, but
    ``a,b`` multirun values are not expanded. With `write=True` the dataset is also written
    under `root` (default: the config's ``output.root``), resuming sweeps as `dmlimits` does.
    Raises `ConfigError` (a ValueError) with the one-line message `dmlimits` prints.
    """
    if isinstance(overrides, str):
        raise ConfigError("overrides", overrides, "must be a list of key=value strings")
    given = [str(o) for o in overrides]
    cfg = compose_run_config(given)
    if root is not None:
        if not write:
            raise ConfigError("root", str(root), "is where write=True writes; pass write=True")
        OmegaConf.update(cfg, "output.root", str(root), merge=False)
    if cfg.get("output", {}).get("run_date") is not None:
        raise ConfigError(
            "output.run_date",
            cfg.output.run_date,
            "a nightly run is a command: dmlimits +experiment=nightly",
        )
    try:
        plan = plan_run(cfg, overrides=given, write=write)
    except OutputError as err:
        raise ConfigError(
            "output.root", cfg.output.root, f"must be a directory that can be written ({err})"
        ) from None
    report = execute_plan(plan, progress=progress, keep_tables=True)
    frames = {name: _frame(name, [getattr(t, name) for t in report.tables]) for name in TABLES}
    report = dataclasses.replace(report, tables=[])  # the frames hold the rows now
    return Result(
        frames["points"], frames["thresholds"], frames["forecasts"], frames["series"], report
    )
