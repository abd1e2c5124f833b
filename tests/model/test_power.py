"""A point's power and energy, and a site's power budget (docs/model.md §10.1)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pipeline.model.power import (
    PowerSpec,
    cluster_power_w,
    series_with_power,
    training_energy_j,
    with_power,
)
from pipeline.model.records.results import InfeasibleReason
from tests.model.series_points import LAYOUT, point
from tests.presets import preset

H100 = preset("h100_sxm")


def test_cluster_power_is_gpus_times_tdp_times_overheads() -> None:
    """2^20 H100s at 700 W with the default overheads (1.82 x 1.1) draw about 1.47 GW."""
    p = cluster_power_w(2**20, 700.0)
    assert p == pytest.approx(2**20 * 700.0 * (10.2e3 / 5.6e3) * 1.1, rel=1e-12)
    assert 1.4e9 < p < 1.5e9
    assert cluster_power_w(2**20, 700.0, PowerSpec(1.0, 1.0)) == 2**20 * 700.0


def test_training_energy_is_power_times_time() -> None:
    """A 1 GW cluster over 3 months (7.885e6 s) uses 7.885e15 J (about 2.2 TWh)."""
    assert training_energy_j(1e9, 7.885e6) == 7.885e15


def test_with_power_fills_power_and_energy() -> None:
    """A feasible point gets its cluster's power and its run's energy and stays feasible."""
    p = with_power(point(1024, 0.5), H100, PowerSpec())
    assert p.feasible
    assert p.power_w == cluster_power_w(LAYOUT.n_gpu, 700.0)
    assert p.cost is not None
    assert p.energy_j == p.power_w * p.cost.training_time_s


def test_with_power_over_budget_is_infeasible_with_reason() -> None:
    """A cluster over the site's budget is infeasible (exceeds_power_budget), cost kept."""
    budget = PowerSpec(max_power_w=1000.0)  # 8 H100s draw 11.2 kW
    p = with_power(point(1024, 0.5), H100, budget)
    assert (p.feasible, p.infeasible_reason) == (False, InfeasibleReason.EXCEEDS_POWER)
    assert p.cost is not None
    assert p.layout is not None


def test_with_power_unknown_tdp_leaves_the_point() -> None:
    """Hardware without a TDP gives no power and never trips the budget."""
    p = with_power(point(1024, 0.5), replace(H100, tdp_w=None), PowerSpec(max_power_w=1.0))
    assert (p.feasible, p.power_w, p.energy_j) == (True, None, None)


def test_series_with_power_stops_at_the_first_point_over_budget() -> None:
    """The sweep's rule: a series ends at its first infeasible point, the power wall included."""
    big = replace(LAYOUT, n_gpu=2**20)
    points = [point(1024, 0.6), replace(point(2048, 0.5), layout=big), point(4096, 0.4)]
    budget = PowerSpec(max_power_w=1e9)
    assert len(series_with_power(points, H100, budget, stop_at_infeasible=True)) == 2
    whole = series_with_power(points, H100, budget, stop_at_infeasible=False)
    assert [p.feasible for p in whole] == [True, False, True]
