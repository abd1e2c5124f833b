"""The paper's headline results (Erdil & Schneider-Joseph 2024, abstract, §1 and Figure 1).

On H100s with 3 months of training, utilization falls beyond about 2e28 FLOP (the end
of linear scaling) and runs beyond about 2e31 FLOP are infeasible (the latency wall);
faster batch-size scaling pushes both out by orders of magnitude.
"""

from __future__ import annotations

from functools import lru_cache

import pytest

from pipeline.model.limits import series_alpha, series_limits, t_limit_flop
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.results import SeriesLimits
from pipeline.model.records.scaling import BatchLaw, BatchLawKind, ScalingLaws, paper_d_model_grid
from pipeline.model.search.search import sweep_series
from tests.presets import preset

pytestmark = pytest.mark.slow
"""Full paper-grid sweeps, seconds each."""

DURATION_S = 0.25 * 3.154e7
LAWS = {
    "critical": BatchLaw(),
    "constant": BatchLaw(BatchLawKind.CONSTANT, exponent=0.0),
    "zhang2024": BatchLaw(BatchLawKind.ZHANG2024, coefficient=17.75, exponent=0.47),
}


@lru_cache(maxsize=8)
def limits(name: str, law: str) -> SeriesLimits:
    hw = preset(name)
    points = sweep_series(
        hw, ScalingLaws(batch=LAWS[law]), paper_d_model_grid(), DURATION_S, SearchOptions()
    )
    return series_limits(points, hw.u_eff)


def test_h100_linear_scaling_ends_near_2e28() -> None:
    """H100 dense, default batch: utilization first drops to 0.8 · u_eff near 2e28 FLOP."""
    end = limits("h100_sxm", "critical").linear_end_flop
    assert end is not None
    assert 1e28 <= end <= 4e28


def test_h100_latency_wall_near_2e31() -> None:
    """H100 dense, default batch: the last feasible run is near 2e31 FLOP, the next infeasible."""
    lim = limits("h100_sxm", "critical")
    assert lim.last_feasible_flop is not None
    assert lim.first_infeasible_flop is not None
    assert 1e31 <= lim.last_feasible_flop < lim.first_infeasible_flop <= 1e32


def test_closed_form_wall_agrees_with_simulator() -> None:
    """Model B's T_limit at the series' α lies within the simulator's wall's decade."""
    lim = limits("h100_sxm", "critical")
    assert lim.first_infeasible_flop is not None
    closed = t_limit_flop(series_alpha(ScalingLaws()), 9e-6)
    assert closed / 10 <= lim.first_infeasible_flop <= closed * 10


def test_faster_batch_scaling_pushes_wall_out_by_orders_of_magnitude() -> None:
    """B = 17.75 · D^0.47 keeps runs feasible 100× beyond the default law's last feasible compute."""
    default = limits("h100_sxm", "critical").last_feasible_flop
    zhang = limits("h100_sxm", "zhang2024").last_feasible_flop
    assert default is not None
    assert zhang is not None
    assert zhang >= 100 * default


def test_constant_batch_hits_the_wall_earlier() -> None:
    """A constant 4 Mi-token batch meets the latency wall before the growing default batch."""
    const = limits("h100_sxm", "constant").first_infeasible_flop
    default = limits("h100_sxm", "critical").first_infeasible_flop
    assert const is not None
    assert default is not None
    assert const < default


@pytest.mark.parametrize("name", ["h100_sxm", "a100_sxm", "v100_sxm"])
def test_base_presets_reach_their_u_eff(name: str) -> None:
    """Small models run at (almost) the preset's effective utilization."""
    lim = limits(name, "critical")
    assert lim.max_utilization is not None
    assert 0.95 * preset(name).u_eff <= lim.max_utilization <= preset(name).u_eff
