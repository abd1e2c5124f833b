"""How a series ended and where its linear-scaling end lies (spec §11, docs/model.md §9.5)."""

from __future__ import annotations

from dataclasses import replace

from pipeline.model.limits import LinearEndBasis, SeriesEnd, series_end, series_limits
from pipeline.model.records.results import InfeasibleReason
from pipeline.model.search.search import UTILIZATION_FLOOR
from tests.model.series_points import flop, point

U_EFF = 0.7


def test_series_end_wall_is_the_first_infeasible_size() -> None:
    """A series that stops at an infeasible size ends at a wall of that size's compute."""
    points = [point(1024, 0.6), point(2048, 0.3), point(4096, None)]
    assert series_end(points) == (SeriesEnd.WALL, len(points) - 1)
    limits = series_limits(points, U_EFF)
    assert (limits.end_reason, limits.wall_flop) == ("wall", flop(4096))
    assert limits.wall_reason == "no_cluster_within_duration"


def test_series_end_skips_sizes_a_fixed_layout_does_not_fit() -> None:
    """A size a fixed layout does not divide is no wall: a larger size it fits runs, so the
    wall is the first size infeasible for another reason, and its reason is that size's."""
    misfit = replace(point(2048, None), infeasible_reason=InfeasibleReason.LAYOUT_DOES_NOT_DIVIDE)
    slow = replace(point(8192, None), infeasible_reason=InfeasibleReason.EXCEEDS_DURATION)
    points = [point(1024, 0.6), misfit, point(4096, 0.5), slow]
    limits = series_limits(points, U_EFF)
    assert limits.first_infeasible_flop == flop(2048)
    assert limits.last_feasible_flop == flop(4096)
    assert (limits.end_reason, limits.wall_flop) == ("wall", flop(8192))
    assert limits.wall_reason == "training_time_exceeds_duration"
    only_misfits = series_limits(points[:3], U_EFF)
    assert (only_misfits.end_reason, only_misfits.wall_flop) == ("end_of_grid", None)


def test_series_end_collapse_is_a_wall_not_a_null() -> None:
    """A series stopped by the utilization floor has its wall at the collapsed size."""
    points = [point(1024, 0.6), point(2048, UTILIZATION_FLOOR / 2)]
    limits = series_limits(points, U_EFF)
    assert limits.first_infeasible_flop is None
    assert (limits.end_reason, limits.wall_flop) == ("utilization_collapse", flop(2048))
    assert limits.wall_reason is None


def test_series_end_grid_end_has_no_wall() -> None:
    """A series feasible at every size above the floor ends with the grid and no wall."""
    limits = series_limits([point(1024, 0.6), point(2048, 0.5)], U_EFF)
    assert (limits.end_reason, limits.wall_flop) == ("end_of_grid", None)


def test_linear_end_paper_rule_when_the_series_starts_in_the_regime() -> None:
    """A series starting above 0.8 · u_eff ends its linear regime at its first point at or below it."""
    points = [point(1024, 0.69), point(2048, 0.57), point(4096, 0.55), point(8192, 0.3)]
    limits = series_limits(points, U_EFF)
    assert (limits.linear_end_flop, limits.linear_end_basis) == (flop(4096), "u_eff")


def test_linear_end_below_regime_from_the_start_uses_the_series_peak() -> None:
    """A series whose first point is already below 0.8 · u_eff (B200 under physics=paper) is
    measured from its own peak, not given its first grid size."""
    points = [point(1024, 0.40), point(2048, 0.42), point(4096, 0.35), point(8192, 0.30)]
    limits = series_limits(points, U_EFF)
    assert limits.linear_end_basis == str(LinearEndBasis.PEAK)
    assert limits.linear_end_flop == flop(8192)  # first after the 0.42 peak at or below 0.336


def test_linear_end_from_the_peak_is_where_utilization_stays_low() -> None:
    """Measured from the peak, a size that dips to 0.8 · u_max or below and that later sizes
    climb back above ends no regime (a realistic series' best layouts scatter from size to
    size, docs/model.md R.7): the end is the first of the sizes that all stay below, and none
    where the series ends above it."""
    points = [
        point(1024, 0.40),
        point(2048, 0.30),  # a dip: 0.30 <= 0.32
        point(4096, 0.38),  # back above
        point(8192, 0.31),
        point(16384, 0.25),
    ]
    limits = series_limits(points, U_EFF, paper_rule=False)
    assert (limits.linear_end_flop, limits.linear_end_basis) == (flop(8192), "peak")
    recovered = [*points[:4], point(16384, 0.33), point(32768, None)]
    limits = series_limits(recovered, U_EFF, paper_rule=False)
    assert (limits.linear_end_flop, limits.linear_end_basis) == (None, "peak")
    assert limits.wall_flop == flop(32768)  # the wall is what ends it


def test_linear_end_without_feasible_points_has_no_basis() -> None:
    """A series with no feasible point has neither a linear-scaling end nor a basis for one."""
    limits = series_limits([point(1024, None)], U_EFF)
    assert (limits.linear_end_flop, limits.linear_end_basis) == (None, None)


def test_linear_end_realistic_rule_is_always_the_peak() -> None:
    """With the paper's rule off (realistic physics) the end is measured from the peak."""
    points = [point(1024, 0.69), point(2048, 0.57), point(4096, 0.5)]
    limits = series_limits(points, U_EFF, paper_rule=False)
    assert (limits.linear_end_flop, limits.linear_end_basis) == (flop(4096), "peak")


def test_series_ended_by_the_cluster_cap_has_no_wall() -> None:
    """An infeasible size after one that needed more than half the largest cluster the search
    allows (S · 2^max_doublings) is the cap's end, not a wall (docs/model.md §9.5): LAYOUT's 8
    GPUs are above half a cap of 2^3 = 8 GPUs, so a cap of 3 doublings ends the series at the
    infeasible size and a cap of 4 (16 GPUs) does not."""
    points = [point(1024, 0.6), point(2048, None)]
    capped = series_limits(points, U_EFF, max_doublings=3)
    assert (capped.end_reason, capped.wall_flop, capped.wall_reason) == ("cluster_cap", None, None)
    assert capped.first_infeasible_flop == flop(2048)
    assert capped.last_feasible_flop == flop(1024)
    wide = series_limits(points, U_EFF, max_doublings=4)
    assert (wide.end_reason, wide.wall_flop) == ("wall", flop(2048))


def test_an_infeasible_first_size_the_physics_blocks_is_a_wall_whatever_the_cap() -> None:
    """Without a feasible size before it and with a compute floor within the cap
    (`no_cluster_within_duration`), nothing shows the cap bound: a wall."""
    limits = series_limits([point(1024, None)], U_EFF, max_doublings=3)
    assert (limits.end_reason, limits.wall_flop) == ("wall", flop(1024))


def test_a_size_whose_compute_floor_exceeds_the_cap_ends_the_series_at_the_cap() -> None:
    """A size that needs more GPUs than the cap at the peak matmul rate (`exceeds_cluster_cap`)
    ends the series at the cap, first size or not, and whether or not the cap is given."""
    blocked = replace(point(1024, None), infeasible_reason=InfeasibleReason.EXCEEDS_CLUSTER_CAP)
    for max_doublings in (3, None):
        limits = series_limits([blocked], U_EFF, max_doublings=max_doublings)
        assert (limits.end_reason, limits.wall_flop) == ("cluster_cap", None)
        assert limits.first_infeasible_flop == flop(1024)


def test_limits_of_a_whole_grid_are_those_up_to_its_wall() -> None:
    """A whole-grid series (`output.whole_grid`) evaluates sizes past its wall, where a larger
    size may train again (memory bound, then a layout that fits): its limits are those of the
    series that stopped at the wall, so an output switch moves no threshold."""
    stopped = [point(1024, 0.6), point(2048, 0.5), point(4096, None)]
    whole = [*stopped, point(8192, 0.05), point(16384, 0.04), point(32768, None)]
    assert series_limits(whole, U_EFF) == series_limits(stopped, U_EFF)
    assert series_limits(whole, U_EFF).last_feasible_flop == flop(2048)
    collapsed = [point(1024, 0.6), point(2048, UTILIZATION_FLOOR / 2), point(4096, 0.3)]
    assert series_limits(collapsed, U_EFF) == series_limits(collapsed[:2], U_EFF)
