"""The observed frontier: training runs over time, the fitted trajectory and band, the limits.

Drawn when a dataset holds the `observed_runs` table (a run that read a frontier-runs source).
Every usable run is a grey dot, the runs that define the frontier are blue; the fitted
trajectory (the `forecasts` row `fitted`) is a solid line with its 5th-95th percentile band,
refitted here from the frontier runs with the same seeded bootstrap (`pipeline.trends.fit`), so
the band is the one the forecasts' intervals come from; hand-set trajectories are dotted. Each
shown series' linear-scaling end and latency wall are horizontal lines: where a trajectory
crosses one is that limit's forecast year.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from pipeline.forecast.paths import FITTED
from pipeline.forecast.trajectory import frontier_flop
from pipeline.report.charts import (
    DPI,
    FIGSIZE_IN,
    growth_text,
    series_labels,
    wall_of,
    year_ticks,
)
from pipeline.trends.fit import CONFIDENCE, bootstrap_lines

SERIES_SHOWN = 3
"""Series whose thresholds are drawn (the first by name), to keep the chart readable."""
THRESHOLD_COLORS = ("tab:red", "tab:orange", "tab:purple")


def _years_until(forecasts: pl.DataFrame, start: float) -> np.ndarray:
    """Calendar years from `start` to a year after the latest forecast year (at most 2045)."""
    columns = [c for c in ("linear_end_year", "wall_year") if c in forecasts.columns]
    latest = max((forecasts[c].max() or start for c in columns), default=start)
    end = min(max(float(latest) + 1.0, start + 8.0), 2045.0)  # type: ignore[arg-type]
    return np.linspace(start, end, 200)


def _band(frontier: pl.DataFrame, years: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The 5th-95th percentile of the bootstrap lines over `years` (None with < 3 runs)."""
    if frontier.height < 3:
        return None
    x = frontier["publication_year"].to_numpy()
    y = np.log(frontier["training_flop"].to_numpy())
    slopes, at_mean = bootstrap_lines(x, y)
    logs = at_mean[:, None] + slopes[:, None] * (years[None, :] - float(x.mean()))
    tail = (1.0 - CONFIDENCE) / 2.0
    low, high = np.quantile(logs, [tail, 1.0 - tail], axis=0)
    return np.exp(low), np.exp(high)


def observed_frontier_figure(
    observed: pl.DataFrame,
    forecasts: pl.DataFrame | None,
    thresholds: pl.DataFrame,
    labels: Mapping[str, str] | None = None,
) -> Figure:
    """Observed runs, the fitted trajectory with its band, hand-set lines, thresholds.

    `labels` names each series (the selection's scenario labels, sweep values included); by
    default the labels the thresholds alone give."""
    fig = Figure(figsize=FIGSIZE_IN, dpi=DPI, layout="constrained")
    ax = fig.subplots()
    frontier = observed.filter(pl.col("frontier"))
    start = float(frontier["publication_year"].min() or observed["publication_year"].min())  # type: ignore[arg-type]
    shown_runs = observed.filter(pl.col("publication_year") >= start - 2.0)
    ax.scatter(
        shown_runs["publication_year"], shown_runs["training_flop"], s=6, color="0.7",
        label="observed runs",
    )  # fmt: skip
    ax.scatter(
        frontier["publication_year"], frontier["training_flop"], s=14, color="tab:blue",
        label=f"frontier runs ({frontier.height})",
    )  # fmt: skip
    if forecasts is not None and forecasts.height:
        years = _years_until(forecasts, start)
        band = _band(frontier, years)
        rows = forecasts.unique("trajectory", keep="first").sort("growth_per_year")
        hand_set_styles = iter([(":", "0.25"), ("-.", "0.45"), ("--", "0.6")] * 4)
        for row in rows.iter_rows(named=True):
            line = [
                frontier_flop(y, row["base_flop"], row["base_year"], row["growth_per_year"])
                for y in years
            ]
            if row["trajectory"] == FITTED:
                label = (
                    f"fitted {row['growth_per_year']:.2f}x/yr "
                    f"({row['growth_per_year_low']:.2f}-{row['growth_per_year_high']:.2f})"
                )
                ax.plot(years, line, "-", color="tab:blue", label=label)
                if band is not None:
                    ax.fill_between(
                        years, *band, color="tab:blue", alpha=0.15, label="5th-95th pct"
                    )
            else:
                style, grey = next(hand_set_styles)
                label = f"hand-set {growth_text(row['growth_per_year'])}"
                ax.plot(years, line, style, color=grey, label=label)
    labels = labels if labels is not None else series_labels(thresholds)
    shown = sorted(thresholds.iter_rows(named=True), key=lambda r: labels.get(r["series_id"], ""))
    for row, color in zip(shown[:SERIES_SHOWN], THRESHOLD_COLORS, strict=False):
        name = labels.get(row["series_id"], row["series_id"])
        if row["linear_end_flop"] is not None:
            ax.axhline(row["linear_end_flop"], color=color, lw=1.0, label=f"linear end: {name}")
        if (wall := wall_of(row)) is not None:
            ax.axhline(wall, color=color, lw=1.0, ls="--", label=f"wall: {name}")
    ax.set_yscale("log")
    ax.set_xlabel("publication year")
    year_ticks(ax)
    ax.set_ylabel("training compute (FLOP)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="x-small", loc="upper left")
    return fig
