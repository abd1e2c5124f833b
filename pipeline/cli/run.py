"""The main job: expand a composed config into series, evaluate them, write the dataset."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from pipeline.execute.progress import RunProgress
from pipeline.execute.runner import run_series
from pipeline.execute.series import SeriesOutcome
from pipeline.execute.settings import ExecutionSettings, execution_from_config
from pipeline.io.parquet import check_writable, write_series
from pipeline.io.rows import Provenance, SeriesKey, new_run_id, point_rows, threshold_row
from pipeline.schema import Scenario
from pipeline.schema.errors import ConfigError
from pipeline.sweep import expand_scenarios


@dataclass(frozen=True, slots=True)
class RunPlan:
    """A validated run: its scenarios, where they go, and how they are executed."""

    scenarios: list[Scenario]
    root: Path
    whole_grid: bool
    execution: ExecutionSettings


@dataclass(frozen=True, slots=True)
class RunReport:
    """What a finished run did."""

    outcomes: list[SeriesOutcome]
    points: int
    seconds: float
    run_id: str
    root: Path


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
    execution = (
        OmegaConf.to_container(cfg.get("execution"), resolve=True) if "execution" in cfg else {}
    )
    settings = execution_from_config(
        {str(k): v for k, v in execution.items()} if isinstance(execution, dict) else {}
    )
    scenarios = expand_scenarios(cfg)
    root = check_writable(output["root"])
    return RunPlan(scenarios, root, whole_grid, settings)


def write_outcome(root: Path, outcome: SeriesOutcome, provenance: Provenance) -> None:
    """Write one series' points and thresholds parts, atomically."""
    s = outcome.scenario
    key = SeriesKey(
        s.hardware_name, s.scaling_name, s.batch_law_name, s.duration_s, outcome.series_id
    )
    cf = outcome.closed_forms
    write_series(
        root,
        point_rows(outcome.points, key, provenance),
        threshold_row(
            key,
            outcome.limits,
            n_points=len(outcome.points),
            alpha=cf.alpha,
            t_lat_s=cf.t_lat_s,
            t_crit_flop=cf.t_crit_flop,
            t_limit_flop=cf.t_limit_flop,
            provenance=provenance,
        ),
        key.partition,
        outcome.series_id,
    )


def execute_plan(
    plan: RunPlan, progress: bool = True, scenarios: Sequence[Scenario] | None = None
) -> RunReport:
    """Evaluate the plan's series and write each as it finishes."""
    todo = plan.scenarios if scenarios is None else list(scenarios)
    provenance = Provenance(run_id=new_run_id())
    start = time.monotonic()
    outcomes: list[SeriesOutcome] = []
    with RunProgress(len(todo), enabled=progress) as bar:
        for outcome in run_series(todo, plan.execution, plan.whole_grid):
            write_outcome(plan.root, outcome, provenance)
            outcomes.append(outcome)
            bar.advance(len(outcome.points))
    points = sum(len(o.points) for o in outcomes)
    return RunReport(outcomes, points, time.monotonic() - start, provenance.run_id, plan.root)
