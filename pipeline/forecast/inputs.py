"""A run's observed inputs: the sources read, the frontier fitted, the trajectories forecast.

`observe_frontier` is called once per run, before any series (`pipeline.app.plan.plan_run`):
it reads the configured sources (`pipeline.sources.observe`), fits the frontier when
`forecast.fitted` is set, and returns the settings with `observed` filled in. `trajectories`
lists what each series' forecasts rows follow: the fitted frontier first, then the hand-set
scenarios by growth factor.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pipeline.catalog.load import Catalog, fractional_year
from pipeline.forecast.observed import ObservedFrontier, fit_frontier
from pipeline.forecast.paths import Trajectory, fitted, hand_set
from pipeline.forecast.settings import ForecastSettings
from pipeline.io.read import SOURCE_STORE
from pipeline.schema.errors import MISSING, ConfigError
from pipeline.schema.projected import catalog_and_trends, shipped_catalog
from pipeline.sources import SourcesSettings, observe, sources_from_config
from pipeline.sources.hardware import merge_accelerators
from pipeline.sources.observe import ACCELERATORS, record_good_copies
from pipeline.sources.store import SnapshotStore
from pipeline.trends.catalog_fits import CatalogTrends, catalog_trends

STORE_DIR = SOURCE_STORE
"""The store's folder under a dataset root or a nightly root (`pipeline.sources.store`)."""


def run_date_of(value: object, today: dt.date) -> dt.date:
    """The date the fitted trajectory's base is taken at: `output.run_date` when it holds a
    date (a nightly run; already checked by `pipeline.nightly.settings`), else today."""
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if isinstance(value, str) and len(value) == len("YYYY-MM-DD"):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            return today
    return today


def observe_frontier(
    settings: ForecastSettings,
    sources: SourcesSettings,
    store: Path | None,
    run_date: dt.date,
    now: dt.datetime | None = None,
) -> ForecastSettings:
    """`settings` with the sources read and, when `fitted` is set, the frontier fitted; with a
    moving frontier, also the catalog merged with the accelerator source and its trends.

    Raises SourceError (one line) when a source has no usable copy or the fit is impossible.
    """
    snapshots = None if store is None else SnapshotStore(store)
    observations = observe(sources, snapshots, now, record=False)
    fit, flags = None, [False] * len(observations.runs)
    if settings.fitted is not None:
        fit, flags = fit_frontier(observations.runs, settings.fitted)
    hardware, trends = None, None
    read = observations.read(ACCELERATORS)
    if read is not None and settings.moving_frontier_years:  # only the moving frontier uses them
        hardware = merge_accelerators(
            shipped_catalog(), observations.accelerators, read.snapshot.content_hash
        )
        trends = catalog_trends(hardware.catalog)
    record_good_copies(observations, snapshots)  # only copies the fit could use
    observed = ObservedFrontier(
        observations, fit, tuple(flags), fractional_year(run_date), hardware, trends
    )
    return replace(settings, observed=observed)


def moving_hardware(settings: ForecastSettings) -> tuple[Catalog, CatalogTrends]:
    """The catalog and trends the moving frontier projects along: the catalog merged with the
    accelerator source when the run read one, else the shipped catalog alone."""
    observed = settings.observed
    if observed is not None and observed.hardware is not None and observed.trends is not None:
        return observed.hardware.catalog, observed.trends
    return catalog_and_trends(None)


def observe_for_run(
    settings: ForecastSettings,
    sources_node: object,
    output: Mapping[Any, object],
    write: bool,
    *,
    observe: bool = True,
) -> ForecastSettings:
    """`observe_frontier` for a composed run: the `sources` node, the store (`sources.store`,
    else `<output.root>/snapshots` when the run writes, else none) and the run date (set on the
    settings in every case: the forecasts' passed years are judged against it).

    Without a `sources` node the settings are returned as they are; a fit then is a ConfigError.
    With `observe=False` the sources' settings are checked and nothing is read.
    """
    run_date = run_date_of(output.get("run_date"), dt.datetime.now(dt.UTC).date())
    settings = replace(settings, run_date=run_date)
    if sources_node is None:
        if settings.fitted is not None:
            raise ConfigError(
                "sources", MISSING, "forecast.fitted needs observed runs (conf/sources/)"
            )
        return settings
    sources = sources_from_config(sources_node)
    if not observe:
        return settings
    store = sources.store
    root = output.get("root")
    if store is None and write and isinstance(root, str) and root:
        store = Path(root) / STORE_DIR
    return observe_frontier(settings, sources, store, run_date)


def trajectories(settings: ForecastSettings) -> tuple[Trajectory, ...]:
    """The fitted trajectory (when the run fitted one), then each hand-set growth, ascending:
    the same objects for the same settings object as the last call's, so that the series of a
    run share the intervals each keeps (`paths.Trajectory.year_intervals`)."""
    last = _last_trajectories
    if last and last[0][0] is settings:
        return last[0][1]
    observed = settings.observed
    found = []
    if observed is not None and observed.fit is not None:
        found.append(fitted(observed.fit, observed.run_year))
    found += [
        hand_set(settings.base_flop, settings.base_year, g)
        for g in sorted(settings.growth_per_year)
    ]
    made = tuple(found)
    last[:] = [(settings, made)]
    return made


_last_trajectories: list[tuple[ForecastSettings, tuple[Trajectory, ...]]] = []
"""The last settings `trajectories` was given, by identity, and its trajectories."""
