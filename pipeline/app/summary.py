"""The short text summary a run prints: thresholds of each series beside the closed forms."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.app.execute import SeriesSummary

MAX_SERIES_SHOWN = 12


def _flop(x: float | None) -> str:
    return "-" if x is None else f"{x:.2e}"


def summary_lines(
    outcomes: Sequence[SeriesSummary],
    root: str,
    seconds: float,
    points: int,
    skipped: int = 0,
    ahead: int = 0,
) -> list[str]:
    """One header, one line per series (first few), and where the tables are.

    `outcomes` are every series of the run, those it skipped (resume) included: their values
    come from the dataset. `points` counts the points evaluated for this run, `ahead` of its
    series by the command's workers before it started (`pipeline.execute.ahead`), so
    `seconds` does not include them.
    """
    resumed = f" ({skipped} already in the dataset, not recomputed)" if skipped else ""
    early = f" ({ahead} series evaluated ahead)" if ahead else ""
    lines = [
        f"dmlimits: {len(outcomes)} series{resumed}, {points} points in {seconds:.1f} s{early} "
        f"-> {root}",
        f"{'hardware':<34} {'scaling':<7} {'batch':<10} {'linear end':>10} {'last feas.':>10} "
        f"{'wall':>10} {'T_crit':>10} {'T_limit':>10}  (FLOP)",
    ]
    ordered = sorted(
        outcomes,
        key=lambda o: (
            o.scenario.hardware_name,
            o.scenario.scaling_name,
            o.scenario.batch_law_name,
            o.sweep_point,
            o.series_id,
        ),
    )
    for o in ordered[:MAX_SERIES_SHOWN]:
        s, lim, cf = o.scenario, o.limits, o.closed_forms
        linear = _flop(lim.linear_end_flop) if lim.linear_end_flop is not None else "> grid"
        wall = _flop(lim.first_infeasible_flop) if lim.first_infeasible_flop is not None else "none"
        lines.append(
            f"{s.hardware_name:<34} {s.scaling_name:<7} {s.batch_law_name:<10} {linear:>10} "
            f"{_flop(lim.last_feasible_flop):>10} {wall:>10} {_flop(cf.t_crit_flop):>10} {_flop(cf.t_limit_flop):>10}"
            + (f"  {o.sweep_point}" if o.sweep_point != "{}" else "")
        )
    if len(ordered) > MAX_SERIES_SHOWN:
        lines.append(
            f"... and {len(ordered) - MAX_SERIES_SHOWN} more series: see {root}/thresholds/"
        )
    lines.append(
        "linear end: first compute with utilization <= 0.8 x max; wall: first infeasible grid size; "
        "T_crit, T_limit: closed forms (Model B)"
    )
    return lines
