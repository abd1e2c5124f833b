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
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import OmegaConf

from pipeline.app.execute import RunReport, execute_plan
from pipeline.app.plan import compose_run_config, plan_run
from pipeline.app.summary import summary_lines
from pipeline.io.parquet import OutputError
from pipeline.io.tables import TABLES, TableSpec
from pipeline.schema.compose import check_user_dirs, user_config_sources
from pipeline.schema.errors import ConfigError, InputError
from pipeline.schema.keys import check_known_keys
from pipeline.schema.run import override_key
from pipeline.schema.scenario import GROUPS


@dataclass(frozen=True, slots=True, repr=False)
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

    def __repr__(self) -> str:
        """One line: the run id, the rows of each table that has any, and where it was written
        (a notebook cell that ends in a Result shows this, not every frame)."""
        rows = ", ".join(f"{name} {len(f):,}" for name, f in self.tables.items() if len(f))
        where = "not written" if self.report.root is None else f"written to {self.report.root}"
        return f"<Result {self.report.run_id}: rows {rows or 'none'}; {where}>"

    def __dir__(self) -> list[str]:
        """Attributes and table names, for completion in a notebook."""
        return sorted({*object.__dir__(self), *self.tables})

    def summary(self) -> str:
        """The text table `dmlimits` prints for this run."""
        report = self.report
        root = "(not written)" if report.root is None else str(report.root)
        return "\n".join(
            summary_lines(report.tally, root, report.seconds, report.points, report.skipped)
        )


def _frame(spec: TableSpec, tables: Sequence[pa.Table]) -> pl.DataFrame:
    """The rows of one table over the whole run, in the dataset's column order and sort order."""
    arrow = pa.concat_tables(tables) if tables else spec.schema.empty_table()
    frame = cast(pl.DataFrame, pl.from_arrow(arrow))
    return frame.sort(list(spec.sort_keys))


def checked_overrides(overrides: object) -> list[str]:
    """The overrides as strings, each read by Hydra's override parser; a ConfigError names an
    override that is not a string (an int, bytes), not Hydra's syntax, or a multirun value
    (``a,b``: `pipeline.run` runs one config; ``+sweep.choices.<group>=[a,b]`` or
    ``+sweep.axes.<key>=[a,b]`` sweep it in one run)."""
    if isinstance(overrides, str | bytes) or not isinstance(overrides, Sequence):
        shown = overrides if isinstance(overrides, str) else repr(overrides)
        raise ConfigError("overrides", shown, "must be a list of key=value strings")
    parser = OverridesParser.create()
    for i, text in enumerate(overrides):
        if not isinstance(text, str):
            raise ConfigError(
                f"overrides[{i}]",
                repr(text),
                f"must be a key=value string, not {type(text).__name__}",
            )
        try:
            (override,) = parser.parse_overrides([text])
        except HydraException as err:
            reason = next((line for line in str(err).splitlines() if line.strip()), "")
            raise ConfigError(f"overrides[{i}]", text, f"is not an override ({reason})") from None
        if override.is_sweep_override():
            key = override.get_key_element()
            where = "choices" if key.lstrip("+") in GROUPS else "axes"
            raise ConfigError(
                f"overrides[{i}]",
                text,
                f"is a multirun value: pipeline.run runs one config; "
                f"'+sweep.{where}.{key.lstrip('+')}=[...]' sweeps the values in one run",
            )
    return list(overrides)


def experiment_sweep(given: list[str]) -> list[str]:
    """The overrides, with an experiment's multirun (``hydra.mode: MULTIRUN``, its sweeper's
    params) run as a sweep: each swept config group becomes ``+sweep.choices.<group>``, so
    ``+experiment=base_comparison`` returns its three series; a swept key that is not a group
    is a ConfigError naming it (run it with ``dmlimits -m``)."""
    if not any(o.lstrip("+").startswith("experiment=") for o in given):
        return given
    cfg = compose_run_config(given, return_hydra_config=True)
    if OmegaConf.select(cfg, "hydra.mode") != RunMode.MULTIRUN:
        return given
    params = OmegaConf.select(cfg, "hydra.sweeper.params") or {}
    swept = OmegaConf.select(cfg, "sweep.choices") or {}
    chosen = _groups_set(given) | {str(group) for group in swept}  # a sweep preset's too
    extra = []
    for key, value in params.items():
        if key in chosen:
            continue  # the user's choice wins, as on the command line
        if key not in GROUPS:
            raise ConfigError(
                "overrides",
                given,
                f"the experiment sweeps {key}={value} in a multirun, which pipeline.run does not "
                "run as one config: run it with dmlimits -m, or sweep it with sweep.axes",
            )
        values = ",".join(v.strip() for v in str(value).split(","))
        extra.append(f"+sweep.choices.{key}=[{values}]")
    return [*given, *extra]


def _groups_set(given: Sequence[str]) -> set[str]:
    """The config groups the overrides choose themselves: ``group=x`` (with any ``+``/``++``
    prefix) or ``sweep.choices.group=[...]``. An experiment's multirun leaves those to them, as
    Hydra's sweeper does for a command-line override of a swept key."""
    keys = (override_key(text).removeprefix("sweep.choices.") for text in given)
    return {key for key in keys if key in GROUPS}


def run(
    overrides: Sequence[str] = (),
    *,
    write: bool = False,
    root: str | Path | None = None,
    progress: bool = False,
    config_dir: str | Path | None = None,
) -> Result:
    """Compose the config with `overrides`, evaluate every series, return the tables.

    `overrides` are `dmlimits` command-line overrides, e.g. ``["hardware=a100_sxm",
    "scaling.grid.max_d_model=16384"]``; a sweep (``sweep=smoke``) runs all its series, but
    ``a,b`` multirun values are not expanded. With `write=True` the dataset is also written
    under `root` (default: the config's ``output.root``), resuming sweeps as `dmlimits` does.
    `config_dir` is a directory of your own presets (``hardware/my_gpu.yaml``), as the
    command's ``--config-dir``: its presets are choices of the groups and of sweeps.
    Raises `ConfigError` (a ValueError) with the one-line message `dmlimits` prints.
    """
    sources: list[str] = []
    if config_dir is not None:
        folder = Path(config_dir).expanduser()
        if not folder.is_dir():
            raise ConfigError("config_dir", str(config_dir), "must be a directory of presets")
        sources = [f"file://{folder.resolve()}"]
        try:
            check_user_dirs(sources)  # a file shadowing a built-in preset, as the command checks
        except InputError as err:
            raise ConfigError("config_dir", str(config_dir), str(err)) from None
    with user_config_sources(sources):
        return _run(overrides, write, root, progress)


def _run(overrides: Sequence[str], write: bool, root: str | Path | None, progress: bool) -> Result:
    """`run` within its config sources."""
    given = experiment_sweep(checked_overrides(overrides))
    cfg = compose_run_config(given)
    check_known_keys(cfg)  # a misspelt root key is an error, as on the command line
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
