"""A run's plan: everything validated before any work (configs, sweep, execution, output root)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from pipeline.execute.settings import Backend, ExecutionSettings, execution_from_config
from pipeline.forecast import ForecastSettings, forecast_from_config
from pipeline.forecast.inputs import moving_hardware, observe_for_run
from pipeline.forecast.uncertainty import with_trends
from pipeline.io.parquet import check_writable
from pipeline.schema import Scenario, compose_config
from pipeline.schema.compose import (
    RUN_PRESET_NEEDED,
    one_line,
    refused_unknown_key,
    run_key_without_run,
)
from pipeline.schema.errors import ConfigError
from pipeline.schema.keys import check_known_keys
from pipeline.schema.run import check_run_overrides, override_key, override_value
from pipeline.schema.section import check_integer, check_number
from pipeline.sweep import Sweep, SweepSeries, sweep_from_config
from pipeline.sweep.design import design_series, inputs_read
from pipeline.sweep.expand import known_overrides
from pipeline.sweep.stream import SeriesStream

NO_SWEEP_POINT = "{}"
"""The sweep point of a series of a run without a sweep."""
SERIES_PER_PART = 256
"""Default `output.series_per_part` (conf/config.yaml): series written into one part per table."""
CHECKED_SERIES = 10_000
"""A sweep of at most this many series is made whole when it is planned, so every value of
every series is checked before any work; a larger one is a `SeriesStream`: the run starts at
once, and a series the schema refuses stops the run when it is reached (the series before it
are written, and a resumed run skips them)."""
FLUSH_S = 30.0
"""Default `output.flush_s`: the longest a finished series waits in memory before it is written."""


@dataclass(frozen=True, slots=True)
class RunPlan:
    """A validated run: its series, where they go, and how they are executed."""

    series: Sequence[SweepSeries]
    """The series: a list, or for a sweep of more than `CHECKED_SERIES` a `SeriesStream` that
    makes them as they are iterated."""
    root: Path | None
    """The dataset root; None for a run that writes nothing (`pipeline.run(write=False)`)."""
    whole_grid: bool
    execution: ExecutionSettings
    forecast: ForecastSettings
    resume: bool = False
    """Skip the series already complete under `root` (`pipeline.sweep.resume`)."""
    overrides: tuple[str, ...] | None = None
    """The overrides the config was composed with (the `series` table's `overrides`); None if
    unknown."""
    series_per_part: int = SERIES_PER_PART
    """`output.series_per_part`: a partition's finished series are written as one part per
    table once this many wait (`pipeline.app.batch`)."""
    flush_s: float = FLUSH_S
    """`output.flush_s`: ... or once the oldest has waited this long (seconds)."""
    design: tuple[SweepSeries, tuple[SweepSeries, ...]] | None = None
    """The uncertainty design (`forecast.uncertainty`): the series it varies and one series
    per design point (`pipeline.sweep.design`); None without one."""
    series_block: int = 1
    """How many consecutive series of `series` differ only in the GPU's memory
    (`pipeline.sweep.Sweep.memory_block`): their chunks are whole blocks
    (`ExecutionSettings.in_blocks`)."""

    @property
    def scenarios(self) -> list[Scenario]:
        """The scenarios of the series, in expansion order."""
        return [s.scenario for s in self.series]


def resolve_resume(value: object, series: Sequence[SweepSeries]) -> bool:
    """`output.resume`: true or false as given; null resumes exactly when the run is a sweep.

    A run is a sweep when its series have sweep points (`sweep` other than `none`, or sweep
    axes or choices on the command line). A single run recomputes, so running it twice prints
    the same table twice and a changed model is never hidden behind old rows.
    """
    if value is None:
        return any(s.sweep_point != NO_SWEEP_POINT for s in series)
    if not isinstance(value, bool):
        raise ConfigError("output.resume", value, "true, false or null (null: resume sweeps only)")
    return value


CHOICE_LINE_GAP_S = 1.0
"""While a listed sweep composes its choices, a choice's line only when the last line is
this old: the nightly's eight choices take about 0.1 s each."""


class _Spaced:
    """`say`, passing every line until `start(gap_s)`, then only lines at least `gap_s`
    after the last one passed (or after `start`)."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self.gap_s = 0.0
        self.last = -float("inf")

    def start(self, gap_s: float) -> None:
        self.gap_s, self.last = gap_s, time.monotonic()

    def __call__(self, text: str) -> None:
        now = time.monotonic()
        if now - self.last >= self.gap_s:
            self.last = now
            self.say(text)


def _quiet(text: str) -> None:
    """Says nothing (a plan made without progress)."""


def _check_dask_workers(settings: ExecutionSettings, overrides: tuple[str, ...]) -> None:
    """ConfigError when the command line sets `execution.dask_workers` for another backend: it
    sizes the local dask cluster only (`execution.dask_address` is refused alike by the
    settings; the key's default in conf/config.yaml cannot tell a setting from the default)."""
    if settings.backend is Backend.DASK:
        return
    for override in overrides:
        if override_key(override) == "execution.dask_workers":
            raise ConfigError(
                "execution.dask_workers",
                override_value(override),
                f"is used only with execution.backend=dask (the backend is "
                f"{settings.backend.value}): drop it, or set the backend",
            )


def _chosen_runs(cfg: DictConfig, sweep: Sweep) -> tuple[str, ...]:
    """The concrete runs the config's series evaluate: its `run`, or the runs its sweep chooses
    (`sweep.choices.run`, as `pipeline.run` turns a run experiment into; every choice a
    conf/run/ file, `sweep_from_config`); empty for a scaling-law grid."""
    run = cfg.get("run")
    if run is not None:
        return (str(run.get("name")),)
    return dict(sweep.choices).get("run", ())


def plan_run(
    cfg: DictConfig,
    *,
    overrides: Sequence[str] | None = None,
    write: bool = True,
    observe: bool = True,
    say: Callable[[str], None] | None = None,
    series: Sequence[SweepSeries] | None = None,
) -> RunPlan:
    """Validate everything before any work: configs, sweep axes, execution, the output root.

    `overrides` are those `cfg` was composed with (default: the running Hydra job's). With
    `write=False` the root is not touched and nothing is resumed. With `observe=False` (a check
    of the command line) the sources are checked but not read, so a check fetches and stores
    nothing. `say`, given, is told each step as it starts (progress:
    `pipeline.execute.progress.stage`). `series`, given, are this config's series as an
    earlier plan of it listed them (the command's check, `pipeline.cli.main`): taken as they
    are instead of expanding the sweep again, when there are as many as the sweep makes.
    """
    say = say or _quiet
    output = section_node(cfg, "output")
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
    output["root"] = str(Path(output["root"]).expanduser())  # a quoted '~/x' is a home path
    whole_grid = output.get("whole_grid", False)
    if not isinstance(whole_grid, bool):
        raise ConfigError("output.whole_grid", whole_grid, "true or false")
    per_part = check_integer(
        output.get("series_per_part", SERIES_PER_PART), "output.series_per_part"
    )
    flush_s = check_number(
        output.get("flush_s", FLUSH_S), "output.flush_s", "seconds", exclusive=False
    )
    settings = execution_of(cfg)
    forecast = forecast_from_config(cfg.get("forecast"))
    given = known_overrides(overrides)
    sweep = sweep_from_config(cfg)
    if given:
        runs = _chosen_runs(cfg, sweep)
        if runs:
            check_run_overrides(",".join(runs), given)
        _check_dask_workers(settings, given)
    spaced = _Spaced(say)
    stream = SeriesStream(cfg, sweep, whole_grid=whole_grid, overrides=given, say=spaced)
    if series is not None and len(series) == len(stream) <= CHECKED_SERIES:
        say(f"the sweep: {len(series):,} series, as the check expanded them")
    elif len(stream) <= CHECKED_SERIES:
        say(f"expanding the sweep: {len(stream):,} series")
        spaced.start(CHOICE_LINE_GAP_S)  # a listed sweep composes its choices back to back
        series = list(stream)
    else:
        say(f"{len(stream):,} series, each made and checked as it runs")
        series = stream
    resume = resolve_resume(output.get("resume"), series)
    root = check_writable(output["root"]) if write else None
    if observe and cfg.get("sources") is not None:
        say(f"{len(series)} series; reading the observed-data sources, fitting the frontier")
    forecast = observe_for_run(forecast, cfg.get("sources"), output, write, observe=observe)
    design = None
    uncertainty = forecast.uncertainty
    if uncertainty is not None:
        if any(i.trend_metric is not None for i in uncertainty.inputs):
            say("uncertainty design: fitting the hardware trends its rates centre on")
            trends = moving_hardware(forecast)[1]  # the moving frontier's: rates centred on them
            uncertainty = with_trends(uncertainty, trends)
            forecast = replace(forecast, uncertainty=uncertainty)
        say(f"uncertainty design: {uncertainty.samples} series of the run's config")
        base, points = design_series(cfg, uncertainty)
        uncertainty = inputs_read(uncertainty, base.scenario.physics)  # as the design keyed them
        forecast = replace(forecast, uncertainty=uncertainty)
        design = (base, tuple(points))
    return RunPlan(
        series,
        root,
        whole_grid,
        settings,
        forecast,
        resume and write,
        given,
        per_part,
        flush_s,
        design,
        sweep.memory_block,
    )


def compose_run_config(
    overrides: Sequence[str], *, return_hydra_config: bool = False
) -> DictConfig:
    """The root config composed with `overrides`; Hydra's own error as a one-line ConfigError,
    and a misspelt key (Hydra's "Could not override") as the command names it, with the keys
    allowed there (`schema.compose.refused_unknown_key`)."""
    try:
        return compose_config(overrides, return_hydra_config=return_hydra_config)
    except (HydraException, OmegaConfBaseException) as err:
        keyed = run_key_without_run(overrides, compose_config)
        if keyed is not None:
            raise ConfigError("overrides", keyed, RUN_PRESET_NEEDED) from None
        unknown = refused_unknown_key(err, overrides, compose_config, _checked)
        if unknown is not None:
            raise ConfigError(unknown.key, unknown.value, unknown.allowed) from None
        raise ConfigError("overrides", list(overrides), one_line(err)) from None


def _checked(cfg: DictConfig) -> None:
    """A composed config's keys and values checked as a run checks them before any work
    (`plan_run`, observing nothing, writing nothing): what names a misspelt key."""
    check_known_keys(cfg)
    plan_run(cfg, overrides=[], write=False, observe=False)


def execution_of(cfg: DictConfig) -> ExecutionSettings:
    """The settings of a composed config's `execution` node (the defaults without one);
    ConfigError names a bad key or value."""
    node = section_node(cfg, "execution")
    return execution_from_config({str(k): v for k, v in node.items()})


def section_node(cfg: DictConfig, name: str) -> dict[Any, Any]:
    """The plain mapping of a composed config's top-level `name` node ({} without one);
    ConfigError when the command line made it a plain value (`output=/data/x` for
    `output.root=/data/x`), as a preset's section is refused (`schema.section.Section`)."""
    if name not in cfg:
        return {}
    node = cfg.get(name)
    if not isinstance(node, DictConfig):
        raise ConfigError(name, node, "must be a mapping of keys to values")
    out = OmegaConf.to_container(node, resolve=True)
    assert isinstance(out, dict)  # a DictConfig's container
    return dict(out)
