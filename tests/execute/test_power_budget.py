"""A power budget ends a series like the latency wall: no size past it is searched."""

from __future__ import annotations

import pytest

from pipeline.app.plan import plan_run
from pipeline.execute.series import evaluate_series
from pipeline.model.records.results import InfeasibleReason, PointResult
from pipeline.model.search import search
from pipeline.schema.compose import compose_config


def test_power_budget_stops_the_search_at_its_wall(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a 1 GW budget the smallest-cluster search runs for no size past the first one over
    the budget: one search per row, the last row over the budget, and it is the series' wall."""
    searched: list[int] = []
    search_one = search.smallest_cluster

    def counted(*args: object, **kwargs: object) -> PointResult:
        point = search_one(*args, **kwargs)  # type: ignore[arg-type]
        searched.append(point.shape.d_model)
        return point

    monkeypatch.setattr(search, "smallest_cluster", counted)
    plan = plan_run(compose_config(["constraints.max_power_mw=1000"]))
    outcome = evaluate_series(plan.series[0].scenario)
    last = outcome.points[-1]
    assert searched == [p.shape.d_model for p in outcome.points]
    assert len(searched) < len(plan.series[0].scenario.d_models)
    assert last.infeasible_reason is InfeasibleReason.EXCEEDS_POWER
    assert all(p.feasible for p in outcome.points[:-1])
    assert outcome.limits.wall_flop == last.shape.training_flop
    assert outcome.limits.end_reason == "wall"
    assert outcome.limits.wall_reason == str(InfeasibleReason.EXCEEDS_POWER)
