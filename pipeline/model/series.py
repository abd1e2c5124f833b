"""One series through the model: which evaluation its points go through, its limits and its
closed forms, by the physics.

The dispatch (`series_points`: a concrete run, the smallest-cluster search over the grid, or a
fixed layout per size, each with the power budget), the thresholds (spec §11) and Model B
(spec §12, computed in `limits.py`, with the scenario's anchors, `closed_forms`) live here, in
the model, so that the model's fingerprint (`pipeline.identity.model_fingerprint`) covers every rule
that changes a row: under realistic physics the linear-scaling end is measured from the
series' peak (docs/model.md R.7), and closed forms that diverge (α near 1/2) are infinite.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.model.limits import (
    Anchors,
    closed_form_latency_s,
    model_b_batch_tokens,
    series_alpha,
    series_limits,
    t_crit_flop,
    t_limit_flop,
)
from pipeline.model.power import series_with_power, with_power
from pipeline.model.records.closed_form import ClosedFormSettings
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.options import Quirks, SearchOptions
from pipeline.model.records.power import PowerSpec
from pipeline.model.records.results import Layout, PointResult, SeriesLimits
from pipeline.model.records.run import RunSpec
from pipeline.model.records.scaling import ScalingLaws
from pipeline.model.records.switches import Physics
from pipeline.model.runs.run_point import run_point
from pipeline.model.search.counts import series_shape
from pipeline.model.search.fixed import fixed_point
from pipeline.model.search.search import sweep_series
from pipeline.model.step.evaluate import with_q1_latency


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
class SeriesSpec:
    """What a series' rows depend on, in the model's records (a scenario less its names)."""

    hardware: HardwareSpec
    laws: ScalingLaws
    d_models: tuple[int, ...]
    duration_s: float
    options: SearchOptions
    physics: Physics
    power: PowerSpec
    closed_form: ClosedFormSettings
    run: RunSpec | None = None
    """One concrete training run instead of the grid."""
    fixed_layout: Layout | None = None
    """One layout for every size instead of the search."""


def series_points(spec: SeriesSpec, whole_grid: bool = False) -> list[PointResult]:
    """The series' points (`evaluated_points`), each with the latency per step quirk Q1 hides
    from its layout (`step.evaluate.with_q1_latency`, docs/model.md §12)."""
    points = evaluated_points(spec, whole_grid)
    return [with_q1_latency(p, spec.hardware, spec.options) for p in points]


def evaluated_points(spec: SeriesSpec, whole_grid: bool = False) -> list[PointResult]:
    """The series' points: one concrete run (its layout, or the best one with
    run.layout_search), the smallest-cluster search over the grid (stopping at its wall, the
    power budget's included, unless `whole_grid`), or a fixed layout per size; every point
    with its power and energy (`power.with_power`)."""
    hw = spec.hardware
    if spec.run is not None:
        point = run_point(
            hw,
            spec.physics,
            spec.run,
            search=spec.run.layout_search,
            tokens_per_param=spec.laws.tokens_per_param,
            duration_s=spec.duration_s,
        )
        return series_with_power([point], hw, spec.power, stop_at_infeasible=False)
    if spec.fixed_layout is None:
        return sweep_series(
            hw,
            spec.laws,
            spec.d_models,
            spec.duration_s,
            spec.options,
            stop_at_infeasible=not whole_grid,
            physics=spec.physics,
            finish=lambda point: with_power(point, hw, spec.power),
        )
    quirks = spec.options.quirks
    points = [
        fixed_point(
            hw,
            series_shape(d, spec.laws, quirks, spec.physics),
            spec.fixed_layout,
            spec.options,
            spec.duration_s,
            spec.physics,
        )
        for d in spec.d_models
    ]
    return series_with_power(points, hw, spec.power, stop_at_infeasible=False)


def closed_forms(spec: SeriesSpec) -> ClosedForms:
    """T_crit and T_limit at the series' α and latency (spec §12), with the configured anchors
    moved to the series: its duration (`closed_form.duration_s`, resolved by the schema on
    Model B's year, quirk Q5), its batch law's batch at T0 and its tokens per parameter
    (docs/model.md §10)."""
    cf = spec.closed_form
    quirks = spec.options.quirks
    anchors = Anchors(
        cf.duration_s,
        model_b_batch_tokens(cf.b0_tokens, cf.t0_flop, spec.laws),
        cf.l0_layers,
        cf.t0_flop,
        quirks.model_b_flop_anchor,
        spec.laws.tokens_per_param,
    )
    return ClosedForms(
        *closed_form_limits(spec.hardware, spec.laws, quirks, cf.t_lat_s, anchors),
        anchors.duration_s,
        anchors.b0_tokens,
        anchors.tokens_per_param,
    )


def series_limits_under(
    points: Sequence[PointResult],
    u_eff: float,
    physics: Physics,
    max_doublings: int,
    run: bool = False,
) -> SeriesLimits:
    """The series' limits (spec §11); under realistic physics the linear-scaling end is the
    first size past the series' peak utilization from which it stays at or below 0.8 of it
    (`linear_end_after_peak_flop`),
    as under paper physics for a series that starts below 0.8 · u_eff (`series_limits`); a
    series its search's cluster cap of `max_doublings` ended has no wall, nor has a concrete
    `run`, one point."""
    return series_limits(
        points, u_eff, paper_rule=physics.is_paper, max_doublings=max_doublings, run=run
    )


def closed_form_limits(
    hw: HardwareSpec,
    laws: ScalingLaws,
    quirks: Quirks,
    t_lat_s: float | None,
    anchors: Anchors,
) -> tuple[float, float, float, float]:
    """(α, t_lat, T_crit, T_limit) of a series (spec §12): α of its scaling laws, the given
    latency or the hardware's closed-form one (`closed_form_latency_s`); both limits infinite
    where the closed forms diverge (α near 1/2)."""
    alpha = series_alpha(laws, quirks)
    t_lat = t_lat_s if t_lat_s is not None else closed_form_latency_s(hw)
    try:
        limit = t_limit_flop(alpha, t_lat, anchors)
        crit = t_crit_flop(hw, alpha, anchors)
    except OverflowError:
        limit = crit = math.inf
    return alpha, t_lat, crit, limit
