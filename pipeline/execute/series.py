"""The unit of work: one series (a scenario over its model-size grid) through the model.

Pure computation on a `Scenario`, no I/O: workers run it, the parent writes its rows.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from pipeline.execute.fingerprint import model_fingerprint
from pipeline.io.rows import config_hash
from pipeline.model.limits import Anchors, model_b_batch_tokens
from pipeline.model.power import series_with_power, with_power
from pipeline.model.records.results import PointResult, SeriesLimits
from pipeline.model.records.scaling import model_shape
from pipeline.model.runs.run_point import run_point
from pipeline.model.search.fixed import fixed_point
from pipeline.model.search.search import sweep_series
from pipeline.model.series import closed_form_limits, series_limits_under
from pipeline.model.step.evaluate import with_q1_latency
from pipeline.schema import Scenario


@dataclass(frozen=True, slots=True)
class ClosedForms:
    """Model B for a series: the inputs it used (exponent, latency, budget, batch anchor,
    tokens per parameter) and the two limits (FLOP)."""

    alpha: float
    t_lat_s: float
    t_crit_flop: float
    t_limit_flop: float
    duration_s: float | None = None
    """τ_B: the scenario's budget (months on Model B's 365.25-day year), or
    `closed_form.duration_days`; None when read from a dataset that did not record it."""
    b0_tokens: float | None = None
    """b0 after the scenario's batch law (`limits.model_b_batch_tokens`); None as above."""
    tokens_per_param: float | None = None
    """k of D = k·N; None as above."""


@dataclass(frozen=True, slots=True)
class SeriesOutcome:
    """Everything one series yields: its points, limits and closed forms."""

    scenario: Scenario
    series_id: str
    points: list[PointResult]
    limits: SeriesLimits
    closed_forms: ClosedForms


def _jsonable(value: Any) -> Any:
    """Scenario fields as JSON-safe values: infinities as strings, enums as their values."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def series_id(scenario: Scenario, whole_grid: bool, model: str | None = None) -> str:
    """A stable hash of everything that determines a series' rows.

    That is the scenario, whether the whole grid runs, and the model's version `model`
    (default: `model_fingerprint()`, the hash of the model's source and the package version),
    so rows of an older model are never taken for this one's.
    """
    return config_hash(
        {
            "scenario": _jsonable(dataclasses.asdict(scenario)),
            "whole_grid": whole_grid,
            "model": model_fingerprint() if model is None else model,
        }
    )


def closed_forms(scenario: Scenario) -> ClosedForms:
    """T_crit and T_limit at the series' α and latency (spec §12), with the configured anchors
    moved to the scenario: its duration (`closed_form.duration_s`, resolved by the schema on
    Model B's year, quirk Q5), its batch law's batch at T0 and its tokens per parameter
    (docs/model.md §10)."""
    cf = scenario.closed_form
    anchors = Anchors(
        cf.duration_s,
        model_b_batch_tokens(cf.b0_tokens, cf.t0_flop, scenario.laws),
        cf.l0_layers,
        cf.t0_flop,
        scenario.options.quirks.model_b_flop_anchor,
        scenario.laws.tokens_per_param,
    )
    quirks = scenario.options.quirks
    return ClosedForms(
        *closed_form_limits(scenario.hardware, scenario.laws, quirks, cf.t_lat_s, anchors),
        anchors.duration_s,
        anchors.b0_tokens,
        anchors.tokens_per_param,
    )


def limits_of(scenario: Scenario, points: list[PointResult]) -> SeriesLimits:
    """The series' limits (§11), by its physics (`model.series.series_limits_under`)."""
    return series_limits_under(points, scenario.hardware.u_eff, scenario.physics)


def evaluate_series(scenario: Scenario, whole_grid: bool = False) -> SeriesOutcome:
    """Run one series: one concrete run (its layout, or the best one with run.layout_search),
    the smallest-cluster search over the grid, or a fixed layout per size."""
    if scenario.run is not None:
        points = [
            run_point(
                scenario.hardware,
                scenario.physics,
                scenario.run,
                search=scenario.run.layout_search,
                tokens_per_param=scenario.laws.tokens_per_param,
                duration_s=scenario.duration_s,
            )
        ]
    elif scenario.fixed_layout is None:  # stops at its wall, the power budget's included
        points = sweep_series(
            scenario.hardware,
            scenario.laws,
            scenario.d_models,
            scenario.duration_s,
            scenario.options,
            stop_at_infeasible=not whole_grid,
            physics=scenario.physics,
            finish=lambda point: with_power(point, scenario.hardware, scenario.power),
        )
        return _outcome(scenario, whole_grid, points)
    else:
        quirks = scenario.options.quirks
        points = [
            fixed_point(
                scenario.hardware,
                model_shape(d, scenario.laws, quirks),
                scenario.fixed_layout,
                scenario.options,
                scenario.duration_s,
                scenario.physics,
            )
            for d in scenario.d_models
        ]
    points = series_with_power(points, scenario.hardware, scenario.power, stop_at_infeasible=False)
    return _outcome(scenario, whole_grid, points)


def _outcome(scenario: Scenario, whole_grid: bool, points: list[PointResult]) -> SeriesOutcome:
    points = [with_q1_latency(p, scenario.hardware, scenario.options) for p in points]
    return SeriesOutcome(
        scenario=scenario,
        series_id=series_id(scenario, whole_grid),
        points=points,
        limits=limits_of(scenario, points),
        closed_forms=closed_forms(scenario),
    )
