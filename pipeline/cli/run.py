"""The main job: expand a composed config into series, evaluate them, write the dataset.

Memory stays flat however large the sweep: each series is written as soon as it finishes and
the report keeps its limits, not its points. With `output.resume` (the default) the series
already complete under the root are skipped (`pipeline.sweep.resume`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from omegaconf import DictConfig, OmegaConf

from pipeline.execute.progress import RunProgress
from pipeline.execute.runner import run_series
from pipeline.execute.series import ClosedForms, SeriesOutcome
from pipeline.execute.settings import ExecutionSettings, execution_from_config
from pipeline.forecast import ForecastSettings, forecast_from_config, forecast_rows
from pipeline.io.parquet import check_writable, write_part, write_series
from pipeline.io.rows import (
    Provenance,
    SeriesKey,
    new_run_id,
    point_rows,
    series_row,
    threshold_row,
)
from pipeline.model.results import SeriesLimits
from pipeline.schema import Scenario
from pipeline.schema.errors import ConfigError
from pipeline.sweep import SweepSeries, expand_sweep, pending


@dataclass(frozen=True, slots=True)
class RunPlan:
    """A validated run: its series, where they go, and how they are executed."""

    series: list[SweepSeries]
    root: Path
    whole_grid: bool
    execution: ExecutionSettings
    forecast: ForecastSettings
    resume: bool = True
    """Skip the series already complete under `root` (`pipeline.sweep.resume`)."""

    @property
    def scenarios(self) -> list[Scenario]:
        """The scenarios of the series, in expansion order."""
        return [s.scenario for s in self.series]


@dataclass(frozen=True, slots=True)
class SeriesSummary:
    """A written series without its points: what the summary and the report keep."""

    scenario: Scenario
    series_id: str
    n_points: int
    limits: SeriesLimits
    closed_forms: ClosedForms
    sweep_point: str = "{}"
    """JSON of the sweep choices and axis values that made the series ("{}" without a sweep)."""

    @classmethod
    def of(cls, outcome: SeriesOutcome, sweep_point: str = "{}") -> SeriesSummary:
        """The summary of a finished series (its points can then be dropped)."""
        return cls(
            outcome.scenario,
            outcome.series_id,
            len(outcome.points),
            outcome.limits,
            outcome.closed_forms,
            sweep_point,
        )


@dataclass(frozen=True, slots=True)
class RunReport:
    """What a finished run did."""

    outcomes: list[SeriesSummary]
    """The series this run evaluated, in the order they finished."""
    points: int
    seconds: float
    run_id: str
    root: Path
    skipped: int = 0
    """Series of the plan already complete under the root, not evaluated again (resume)."""


def plan_run(cfg: DictConfig) -> RunPlan:
    """Validate everything before any work: configs, sweep axes, execution, the output root."""
    output = OmegaConf.to_container(cfg.get("output"), resolve=True) if "output" in cfg else {}
    if (
        not isinstance(output, dict)
        or not isinstance(output.get("root"), str)
        or not output["root"]
    ):
        raise ConfigError(
            "output.root",
            output.get("root") if isinstance(output, dict) else output,
            "a directory path",
        )
    whole_grid = output.get("whole_grid", False)
    if not isinstance(whole_grid, bool):
        raise ConfigError("output.whole_grid", whole_grid, "true or false")
    resume = output.get("resume", True)
    if not isinstance(resume, bool):
        raise ConfigError("output.resume", resume, "true or false")
    execution = (
        OmegaConf.to_container(cfg.get("execution"), resolve=True) if "execution" in cfg else {}
    )
    settings = execution_from_config(
        {str(k): v for k, v in execution.items()} if isinstance(execution, dict) else {}
    )
    forecast = forecast_from_config(cfg.get("forecast"))
    series = expand_sweep(cfg, whole_grid=whole_grid)
    root = check_writable(output["root"])
    return RunPlan(series, root, whole_grid, settings, forecast, resume)


def series_key(outcome: SeriesOutcome) -> SeriesKey:
    """The identity columns and partition of a series' rows."""
    s = outcome.scenario
    return SeriesKey(
        s.hardware_name, s.scaling_name, s.batch_law_name, s.duration_s, outcome.series_id
    )


def outcome_tables(
    outcome: SeriesOutcome, key: SeriesKey, provenance: Provenance
) -> tuple[pa.Table, pa.Table]:
    """The `points` rows and the `thresholds` row of one evaluated series."""
    cf = outcome.closed_forms
    thresholds = threshold_row(
        key,
        outcome.limits,
        n_points=len(outcome.points),
        alpha=cf.alpha,
        t_lat_s=cf.t_lat_s,
        t_crit_flop=cf.t_crit_flop,
        t_limit_flop=cf.t_limit_flop,
        provenance=provenance,
    )
    return point_rows(outcome.points, key, provenance), thresholds


def write_outcome(
    root: Path,
    outcome: SeriesOutcome,
    provenance: Provenance,
    forecast: ForecastSettings,
    *,
    sweep_point: str = "{}",
    whole_grid: bool = False,
) -> None:
    """Write one series' series, forecasts, points and thresholds parts, each atomically.

    Thresholds last: resumption counts a series as done once its thresholds part exists.
    """
    s = outcome.scenario
    key = series_key(outcome)
    cf = outcome.closed_forms
    forecasts = forecast_rows(
        key, outcome.limits, cf.t_crit_flop, cf.t_limit_flop, forecast, provenance
    )
    write_part(root, "forecasts", forecasts, key.partition, outcome.series_id)  # before thresholds
    points, thresholds = outcome_tables(outcome, key, provenance)
    write_series(
        root,
        points,
        thresholds,
        key.partition,
        outcome.series_id,
        series=series_row(
            s, key, whole_grid=whole_grid, sweep_point=sweep_point, provenance=provenance
        ),
    )


def execute_plan(
    plan: RunPlan, progress: bool = True, series: Sequence[SweepSeries] | None = None
) -> RunReport:
    """Evaluate the plan's series (or `series`) not yet done, and write each as it finishes."""
    todo = plan.series if series is None else list(series)
    skipped = 0
    if plan.resume:
        missing = pending(todo, plan.root)
        skipped, todo = len(todo) - len(missing), missing
    sweep_points = {s.series_id: s.sweep_point for s in todo}
    provenance = Provenance(run_id=new_run_id())
    start = time.monotonic()
    summaries: list[SeriesSummary] = []
    points = 0
    with RunProgress(len(todo), enabled=progress, skipped=skipped) as bar:
        for outcome in run_series((s.scenario for s in todo), plan.execution, plan.whole_grid):
            write_outcome(
                plan.root,
                outcome,
                provenance,
                plan.forecast,
                sweep_point=sweep_points[outcome.series_id],
                whole_grid=plan.whole_grid,
            )
            summaries.append(SeriesSummary.of(outcome, sweep_points[outcome.series_id]))
            points += len(outcome.points)
            bar.advance(len(outcome.points))
    seconds = time.monotonic() - start
    return RunReport(summaries, points, seconds, provenance.run_id, plan.root, skipped)
