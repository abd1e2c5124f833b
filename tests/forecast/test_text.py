"""Forecast years as text: medians with intervals, already passed, not reached."""

from __future__ import annotations

from pipeline.forecast.text import budget_lines, forecast_lines, forecast_markdown, year_text

FITTED_ROW = {
    "hardware": "h100_sxm", "scaling": "dense", "batch_law": "critical",
    "trajectory": "fitted", "growth_per_year": 4.62, "growth_per_year_low": 4.23,
    "growth_per_year_high": 5.08, "linear_end_year": 2028.9, "linear_end_year_low": 2028.5,
    "linear_end_year_high": 2029.3, "wall_year": 2034.0, "wall_year_low": 2033.3,
    "wall_year_high": None, "moving_linear_end_year": None, "moving_wall_year": None,
    "t_crit_year": 2023.5, "already_passed": "t_crit_year", "data_as_of": "2025-04-10",
}  # fmt: skip
HAND_SET_ROW = {
    **FITTED_ROW, "trajectory": "hand_set_4x", "growth_per_year": 4.0,
    "linear_end_year": 2028.3, "linear_end_year_low": 2028.3, "linear_end_year_high": 2028.3,
    "already_passed": "",
}  # fmt: skip


def test_year_text_shows_the_interval_and_an_open_end() -> None:
    """A fitted year prints its 5th-95th percentile; a missing upper end reads 'later'."""
    assert year_text(FITTED_ROW, "linear_end_year") == "2028.9 (2028.5-2029.3)"
    assert year_text(FITTED_ROW, "wall_year") == "2034.0 (2033.3-later)"


def test_year_text_says_passed_before_the_data_not_a_past_year() -> None:
    """A year listed in already_passed (before the data's date) is never printed as a year."""
    assert year_text(FITTED_ROW, "t_crit_year") == "passed before the data"


def test_year_text_says_passed_before_the_run_date() -> None:
    """A year after the data's date but before the run's is printed as passed, with its
    interval, and the summary names the run date."""
    row = {**FITTED_ROW, "passed_by_run_date": "linear_end_year", "forecast_date": "2029-06-01"}
    assert year_text(row, "linear_end_year") == "passed 2028.9 (2028.5-2029.3)"
    assert year_text(row, "wall_year") == "2034.0 (2033.3-later)"
    assert "run date 2029-06-01" in forecast_lines([row])[0]


def test_year_text_tells_not_reached_from_no_threshold() -> None:
    """A row before schema version 14 (no `moving_projected`): a null moving year is 'not
    reached' when the run had a moving frontier, and 'not projected' when it had none."""
    assert year_text(FITTED_ROW, "moving_wall_year", moving_frontier=True) == "not reached"
    assert year_text(FITTED_ROW, "moving_wall_year") == "not projected"
    assert year_text(FITTED_ROW, "wall_year_high") == "-"  # not a moving year


def test_year_text_says_not_projected_for_a_series_without_a_moving_frontier() -> None:
    """`moving_projected` decides, whether or not the run had a moving frontier: a series left
    out of it (overridden hardware) is 'not projected', never 'not reached' or '-'; a projected
    series' null moving year is 'not reached', or '-' for want of a threshold."""
    left_out = {**FITTED_ROW, "moving_projected": False, "moving_without_threshold": None}
    projected = {**FITTED_ROW, "moving_projected": True, "moving_without_threshold": ""}
    no_wall = {**projected, "moving_without_threshold": "moving_wall_year"}
    for column in ("moving_linear_end_year", "moving_wall_year"):
        for frontier in (True, False):
            assert year_text(left_out, column, moving_frontier=frontier) == "not projected"
            assert year_text(projected, column, moving_frontier=frontier) == "not reached"
    assert year_text(no_wall, "moving_wall_year") == "-"
    assert year_text(no_wall, "moving_linear_end_year") == "not reached"
    assert year_text(left_out, "wall_year") == "2034.0 (2033.3-later)"


def test_forecast_lines_label_each_sweep_point() -> None:
    """Two series of one name are told apart by the labels given (the report's), each line
    starting with its own; without labels they share the name."""
    rows = [
        {**FITTED_ROW, "series_id": "a" * 16, "moving_projected": True},
        {**FITTED_ROW, "series_id": "b" * 16, "moving_projected": False},
    ]
    labels = {
        "a" * 16: "h100_sxm / dense / critical | x=1",
        "b" * 16: "h100_sxm / dense / critical | x=2",
    }
    lines = forecast_lines(rows, moving_frontier=True, labels=labels)
    assert lines[2].startswith(labels["a" * 16] + " ")
    assert lines[3].startswith(labels["b" * 16] + " ")
    assert "not reached" in lines[2]
    assert "not projected" not in lines[2]
    assert lines[3].count("not projected") == 2
    assert "not reached" not in lines[3]
    header = lines[1]
    assert header.index("trajectory") == lines[2].index("fitted")  # the columns stay aligned
    plain = forecast_lines(rows, moving_frontier=True)
    assert plain[2].split("  ")[0] == plain[3].split("  ")[0] == "h100_sxm / dense / critical"


def test_year_text_hand_set_year_has_no_interval() -> None:
    """A hand-set line's degenerate interval is not printed."""
    assert year_text(HAND_SET_ROW, "linear_end_year") == "2028.3"


def test_forecast_lines_list_the_fitted_trajectory_first() -> None:
    """The summary names the data's date, and per series the fitted row comes first."""
    lines = forecast_lines([HAND_SET_ROW, FITTED_ROW])
    assert "data as of 2025-04-10" in lines[0]
    assert "fitted 4.62x/yr (4.23-5.08)" in lines[2]
    assert "hand-set 4x/yr" in lines[3]
    assert forecast_markdown([FITTED_ROW]).count("\n") == 3


def _budget_row(limit: str, input_: str, share: float, year: float | None) -> dict[str, object]:
    return {
        "hardware": "h100_sxm",
        "scaling": "dense",
        "batch_law": "critical",
        "trajectory": "fitted",
        "limit": limit,
        "input": input_,
        "variance_share": share,
        "year_median": year,
        "year_low": None if year is None else year - 0.7,
        "year_high": None if year is None else year + 1.2,
        "n_samples": 32,
        "n_reached": 32 if year is not None else 0,
    }


def test_budget_lines_give_each_limit_its_whole_interval_and_the_trajectory_share() -> None:
    """The budget's years follow the forecast table: per limit its median and 5th-95th
    percentile with every input varied, and the trajectory's share of that variance; a limit
    no design point reaches says so; no budget, no lines."""
    rows = [
        _budget_row("linear_end_year", "hardware.u_eff", 0.3, 2025.5),
        _budget_row("linear_end_year", "trajectory", 0.6, 2025.5),
        _budget_row("wall_year", "trajectory", 0.9, None),
    ]
    head, linear, wall = budget_lines(rows)
    assert head.startswith("uncertainty budget of h100_sxm / dense / critical (fitted trajectory")
    assert "32 design points" in head
    assert linear == "  linear end 2025.5 (2024.8-2026.7), 60% of its variance from the trajectory"
    assert wall == "  wall: not reached by any design point"
    assert budget_lines([]) == []
    some = [{**row, "n_reached": 20} for row in rows[:2]]
    assert budget_lines(some)[1].endswith("(over the 20 of 32 points that reach it)")


def test_year_text_says_overdue_for_a_year_before_the_data_not_reached() -> None:
    """A year before data_as_of whose threshold no observed run reached (not in
    already_passed) is printed as overdue, never as a plain or a passed year."""
    row = {**FITTED_ROW, "linear_end_year": 2025.1, "linear_end_year_low": 2024.8}
    assert year_text(row, "linear_end_year") == "overdue 2025.1 (2024.8-2029.3)"
    assert year_text({**row, "data_as_of": None}, "linear_end_year") == "2025.1 (2024.8-2029.3)"
