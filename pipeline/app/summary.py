"""The short text summary a run prints: thresholds of each series beside the closed forms."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.app.run_summary import run_lines
from pipeline.app.tally import MAX_SERIES_SHOWN, RunTally, SeriesSummary
from pipeline.forecast.null_years import YearNull
from pipeline.forecast.text import NULL_TEXT, null_threshold_text
from pipeline.model.limits import LinearEndBasis, SeriesEnd
from pipeline.model.records.results import InfeasibleReason, SeriesLimits
from pipeline.model.search.search import UTILIZATION_FLOOR
from pipeline.model.step.evaluate import Q1_TOLERANCE


def _flop(x: float | None) -> str:
    return "-" if x is None else f"{x:.2e}"


def summary_lines(
    outcomes: Sequence[SeriesSummary] | RunTally,
    root: str,
    seconds: float,
    points: int,
    skipped: int = 0,
    ahead: int = 0,
) -> list[str]:
    """One header, one line per series (first few), and where the tables are; a concrete
    run's lines instead say what a planner reads (`pipeline.app.run_summary`).

    `outcomes` are every series of the run, those it skipped (resume) included: their values
    come from the dataset; or their `RunTally` (`RunReport.tally`), which gives the same lines.
    `points` counts the points evaluated for this run, `ahead` of its series by the command's
    workers before it started (`pipeline.execute.ahead`), so `seconds` does not include them.
    """
    tally = outcomes if isinstance(outcomes, RunTally) else RunTally.of(outcomes)
    resumed = f" ({skipped} already in the dataset, not recomputed)" if skipped else ""
    early = f" ({ahead} series evaluated ahead)" if ahead else ""
    lines = [
        f"dmlimits: {tally.series} series{resumed}, {points} points in {seconds:.1f} s{early} "
        f"-> {root}",
    ]
    for o in tally.runs:
        lines += run_lines(o.scenario, o.run_point, o.sweep_point)
    if tally.n_runs > MAX_SERIES_SHOWN:
        lines.append(f"... and {tally.n_runs - MAX_SERIES_SHOWN} more runs: see {root}/points/")
    if not tally.n_grid:
        return lines
    shown = tally.shown_grid
    cells = [(_linear_end(o.limits), _last_feasible(o.limits), _wall(o.limits)) for o in shown]
    w_end, w_last, w_wall = (
        max(least, *(len(c[i]) for c in cells)) for i, least in enumerate((11, 10, 10))
    )
    lines += [
        f"{'hardware':<34} {'scaling':<7} {'batch':<10} {'linear end':>{w_end}} "
        f"{'last feas.':>{w_last}} {'wall':>{w_wall}} {'ended by':<9} {'T_crit':>10} "
        f"{'T_limit':>10}  (FLOP)",
    ]
    for o, (linear_end, last, wall) in zip(shown, cells, strict=True):
        s, lim, cf = o.scenario, o.limits, o.closed_forms
        lines.append(
            f"{s.hardware_name:<34} {s.scaling_name:<7} {s.batch_law_name:<10} "
            f"{linear_end:>{w_end}} {last:>{w_last}} {wall:>{w_wall}} "
            f"{_ended_by(lim):<9} "
            f"{_flop(cf.t_crit_flop):>10} {_flop(cf.t_limit_flop):>10}"
            + (f"  {o.sweep_point}" if o.sweep_point != "{}" else "")
        )
    if tally.n_grid > MAX_SERIES_SHOWN:
        lines.append(
            f"... and {tally.n_grid - MAX_SERIES_SHOWN} more series: see {root}/thresholds/"
        )
    lines += footer_lines(shown)
    notes = paper_lines(tally) + precision_lines(tally) + misfit_lines(tally)
    return lines + quirk_lines(tally) + notes


def misfit_lines(tally: RunTally) -> list[str]:
    """A note per fixed-layout series (`parallelism=fixed`, first few) with a size its layout
    does not fit: the first such size and the rule it breaks, which its row gives only as
    `layout_does_not_divide` (`search.fixed.physics_misfit`)."""
    lines = [
        f"note: the fixed layout does not fit series {series_id[:8]} at {why}"
        for series_id, why in tally.misfits.items()
    ]
    if tally.n_misfits > len(tally.misfits):
        more = tally.n_misfits - len(tally.misfits)
        lines.append(f"... and {more} more fixed-layout series with sizes it does not fit")
    return lines


def paper_lines(tally: RunTally) -> list[str]:
    """A note where grid series turned an extension on beside `physics=paper`: they ran Part
    II's model, whose limits differ from the paper's by more than that switch (docs/model.md
    Part II; docs/results.md compares each extension with the others off)."""
    if not tally.paper_extended:
        return []
    names = ", ".join(f"physics.{name}" for name in sorted(tally.paper_extended))
    return [
        f"note: physics=paper with {names} is not the paper's model: any extension times the "
        "grid by Part II's (docs/model.md), so compare it with the same physics without the "
        "switch, not with physics=paper's limits"
    ]


def precision_lines(tally: RunTally) -> list[str]:
    """A note naming the hardware whose grid series asked for FP8 GEMMs without an FP8 peak:
    accepted beside other extensions, the switch changed nothing there (docs/model.md R.11),
    which neither their rows nor their thresholds show."""
    if not tally.fp8_without_peak:
        return []
    names = ", ".join(sorted(tally.fp8_without_peak))
    return [
        f"note: physics.precision=fp8 on {names}, without an FP8 peak: those series ran "
        "16-bit GEMMs (docs/model.md R.11)"
    ]


def quirk_lines(tally: RunTally) -> list[str]:
    """A warning when quirk Q1 decides rows of the grid series: zero-bubble layouts whose step
    drops more than `Q1_TOLERANCE` of it in latency (docs/model.md §11), with the switch that
    charges it."""
    if not tally.q1_series:
        return []
    return [
        f"warning: quirk Q1 decides {tally.q1_rows} rows of {tally.q1_series} series: their "
        f"zero-bubble layouts drop up to {tally.q1_max_hidden_s:.3g} s of tensor- and pipeline-parallel latency per step "
        f"(over {Q1_TOLERANCE:.0%} of the step; points.q1_latency_hidden_s, docs/model.md §11); "
        "parallelism.quirks.zb_hides_latency_correctly=true charges it"
    ]


END_WORDS = {
    str(SeriesEnd.WALL): "wall",
    str(SeriesEnd.UTILIZATION_COLLAPSE): "collapse",
    str(SeriesEnd.END_OF_GRID): "grid end",
    str(SeriesEnd.CLUSTER_CAP): "cap",
    str(SeriesEnd.RUN): "run",
}
"""How a series ended (`thresholds.end_reason`) in the summary's words."""


def _ended_by(lim: SeriesLimits) -> str:
    """How the series ended in a word; a wall set by the power budget is "power"."""
    if lim.wall_reason == str(InfeasibleReason.EXCEEDS_POWER):
        return "power"
    return END_WORDS.get(lim.end_reason or "", "-")


def _linear_end(lim: SeriesLimits) -> str:
    """The linear-scaling end; marked * when measured from the series' own peak utilization.
    Without one, why, as the forecasts and the report page say it (`null_threshold_text`)."""
    if lim.linear_end_flop is None:
        return _why_null("linear_end_flop", lim)
    mark = "*" if lim.linear_end_basis == str(LinearEndBasis.PEAK) else ""
    return _flop(lim.linear_end_flop) + mark


def _last_feasible(lim: SeriesLimits) -> str:
    """The last feasible size, or why the series has none."""
    if lim.last_feasible_flop is None:
        return _why_null("last_feasible_flop", lim)
    return _flop(lim.last_feasible_flop)


def _wall(lim: SeriesLimits) -> str:
    """The wall (first infeasible size, or the size where utilization collapsed); without one,
    why: every grid size ran, or the cluster cap ended the series. Rows of an older schema have
    no `wall_flop`: their first infeasible size."""
    if lim.end_reason is None:
        return _flop(lim.first_infeasible_flop) if lim.first_infeasible_flop is not None else "-"
    if lim.wall_flop is None:
        return _why_null("wall_flop", lim)
    return _flop(lim.wall_flop)


def _why_null(column: str, lim: SeriesLimits) -> str:
    text = null_threshold_text(column, lim) if lim.end_reason is not None else None
    return "-" if text is None else text


def footer_lines(outcomes: Sequence[SeriesSummary]) -> list[str]:
    """What the columns mean, and the inputs of the closed forms (one line when every series
    shown (`outcomes`, the first `MAX_SERIES_SHOWN`) shares them, else a pointer to the
    thresholds table)."""
    lines = [
        "linear end: first compute with utilization <= 0.8 x u_eff; * = from which every "
        "larger size runs at <= 0.8 x the series' peak utilization (realistic physics, or a "
        "series that starts below 0.8 x u_eff); "
        f"{NULL_TEXT[YearNull.BEYOND_GRID]}: no feasible size fell that low; "
        f"{NULL_TEXT[YearNull.NO_FEASIBLE_SIZE]}: none trains within the duration",
        f"wall: first grid size that is infeasible (ended by wall, or power: over "
        f"constraints.max_power_mw) or runs below utilization {UTILIZATION_FLOOR:g} (collapse); "
        f"{NULL_TEXT[YearNull.END_OF_GRID]}: no wall on the grid (grid end); "
        f"{NULL_TEXT[YearNull.CLUSTER_CAP]}: the search's cluster cap ended the series (cap: "
        "parallelism.max_cluster_doublings)",
    ]
    inputs = {
        (cf.duration_s, cf.b0_tokens, cf.tokens_per_param, cf.t_lat_s, cf.alpha)
        for cf in (o.closed_forms for o in outcomes[:MAX_SERIES_SHOWN])
    }
    if len(inputs) == 1 and None not in (known := inputs.pop()):
        tau, b0, k, t_lat, alpha = known
        lines.append(
            f"T_crit, T_limit: closed forms (Model B) at tau_B = {tau:.4g} s, b0 = {b0:.4g} "
            f"tokens, {k:g} tokens/param, t_lat = {t_lat * 1e6:.4g} us, alpha = {alpha:.4f}; "
            "peak FLOP/s (u_eff does not enter)"
        )
    else:
        lines.append(
            "T_crit, T_limit: closed forms (Model B); their inputs differ by series: "
            "thresholds/ columns model_b_*, alpha, t_lat_s"
        )
    return lines
