"""`pipeline.run`: one run from Python, its tables as polars frames (docs/api.md).

The frames are built from the same Arrow tables the writer writes, so there is one per table of
the registry (`pipeline.io.tables.TABLES`), each with the columns of docs/schema.md in schema
order, sorted like the dataset (the table's sort keys).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import polars as pl
import pyarrow as pa
from omegaconf import OmegaConf

from pipeline.app.execute import RunReport, execute_plan
from pipeline.app.plan import compose_run_config, plan_run
from pipeline.app.summary import summary_lines
from pipeline.io.parquet import OutputError
from pipeline.io.tables import TABLES, TableSpec
from pipeline.schema.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Result:
    """A finished run: one frame per table it writes, and what the run did.

    Each table of the registry is an attribute under its name (`result.points`; docs/api.md
    lists them) and an entry of `tables`; a table the run has no rows of (the moving
    frontier's, when the run has none) is an empty frame with the table's columns.
    """

    tables: Mapping[str, pl.DataFrame]
    """Table name -> its rows, for every table of `pipeline.io.tables.TABLES`, in write order."""
    report: RunReport
    """Run id, timing, the dataset root (None when nothing was written), series skipped."""

    def __getattr__(self, name: str) -> pl.DataFrame:
        """The frame of the table `name` (`tables[name]`)."""
        if name.startswith("_") or name in ("tables", "report"):
            raise AttributeError(name)  # not yet set (copy, unpickling): no lookup loop
        try:
            return self.tables[name]
        except KeyError:
            raise AttributeError(
                f"Result has no table {name!r}; tables: {', '.join(self.tables)}"
            ) from None

    def __dir__(self) -> list[str]:
        """Attributes and table names, for completion in a notebook."""
        return sorted({*object.__dir__(self), *self.tables})

    def summary(self) -> str:
        """The text table `dmlimits` prints for this run."""
        report = self.report
        root = "(not written)" if report.root is None else str(report.root)
        return "\n".join(
            summary_lines(report.summaries, root, report.seconds, report.points, report.skipped)
        )


def _frame(spec: TableSpec, tables: Sequence[pa.Table]) -> pl.DataFrame:
    """The rows of one table over the whole run, in the dataset's column order and sort order."""
    arrow = pa.concat_tables(tables) if tables else spec.schema.empty_table()
    frame = cast(pl.DataFrame, pl.from_arrow(arrow))
    return frame.sort(list(spec.sort_keys))


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
    frames = {
        spec.name: _frame(spec, [t[spec.name] for t in report.tables if spec.name in t])
        for spec in TABLES
    }
    report = dataclasses.replace(report, tables=[])  # the frames hold the rows now
    return Result(frames, report)
