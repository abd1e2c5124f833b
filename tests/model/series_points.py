"""Hand-built points of a series for the limits and power tests (no search involved)."""

from __future__ import annotations

from dataclasses import replace

from pipeline.model.records.results import (
    Bottleneck,
    InfeasibleReason,
    Layout,
    MatmulBound,
    PointResult,
    StepCost,
)
from pipeline.model.records.scaling import ModelShape

LAYOUT = Layout(8, (1, 1), (8, 1), (1, 1), (1, 1), (1, 1), 1, False, 1, 2048, (1, 1))
COST = StepCost(
    1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 5e6, 0.5, Bottleneck.COMPUTE, MatmulBound.FLOP
)


def point(d_model: int, utilization: float | None) -> PointResult:
    """A point of width d_model: feasible at `utilization`, or infeasible when None."""
    shape = ModelShape(d_model, 4 * d_model, 96, 1, 2048, 2048)
    if utilization is None:
        return PointResult(shape, False, InfeasibleReason.NO_CLUSTER, None, None)
    return PointResult(shape, True, None, LAYOUT, replace(COST, utilization=utilization))


def flop(d_model: int) -> float:
    """The training compute of the point of width d_model."""
    return point(d_model, 0.5).shape.training_flop
