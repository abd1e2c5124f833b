"""The unit of work: one series (a scenario over its model-size grid) through the model.

Pure computation on a `Scenario`, no I/O: workers run it, the parent writes its rows. Which
evaluation a series goes through and its closed forms are the model's (`model.series`), so the
model fingerprint covers them; this module gives the series its id.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.identity import SeriesIds, series_id
from pipeline.model.records.results import PointResult, SeriesLimits
from pipeline.model.series import ClosedForms, SeriesSpec, series_limits_under, series_points
from pipeline.model.series import closed_forms as series_closed_forms
from pipeline.schema import Scenario


@dataclass(frozen=True, slots=True)
class SeriesOutcome:
    """Everything one series yields: its points, limits and closed forms."""

    scenario: Scenario
    series_id: str
    points: list[PointResult]
    limits: SeriesLimits
    closed_forms: ClosedForms


def series_spec(scenario: Scenario) -> SeriesSpec:
    """The scenario in the model's records: what its rows depend on, less its names."""
    return SeriesSpec(
        hardware=scenario.hardware,
        laws=scenario.laws,
        d_models=scenario.d_models,
        duration_s=scenario.duration_s,
        options=scenario.options,
        physics=scenario.physics,
        power=scenario.power,
        closed_form=scenario.closed_form,
        run=scenario.run,
        fixed_layout=scenario.fixed_layout,
    )


def closed_forms(scenario: Scenario) -> ClosedForms:
    """Model B of the scenario's series (`model.series.closed_forms`)."""
    return series_closed_forms(series_spec(scenario))


def evaluate_series(
    scenario: Scenario, whole_grid: bool = False, ids: SeriesIds | None = None
) -> SeriesOutcome:
    """Run one series through the model (`model.series`): its points, limits and closed forms,
    with its id (`ids`, given: the same id, its scenario's shared parts encoded once for the
    series it is given)."""
    spec = series_spec(scenario)
    points = series_points(spec, whole_grid)
    return SeriesOutcome(
        scenario=scenario,
        series_id=series_id(scenario, whole_grid) if ids is None else ids(scenario),
        points=points,
        limits=series_limits_under(
            points,
            scenario.hardware.u_eff,
            scenario.physics,
            scenario.options.max_cluster_doublings,
            run=scenario.run is not None,
        ),
        closed_forms=series_closed_forms(spec),
    )
