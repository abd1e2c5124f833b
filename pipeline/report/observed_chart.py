"""The observed frontier: training runs over time, the fitted trajectory and band, the limits.

Drawn when a dataset holds the `observed_runs` table (a run that read a frontier-runs source).
Every usable run is a grey dot, the runs that define the frontier (of the fit the drawn fitted
line rests on, `forecasts.fit_hash`) are blue; the fitted
trajectory (the `forecasts` row `fitted`) is a solid line with the 5th-95th percentile band of
its parameters, the bootstrap lines refitted here from the frontier runs with the same seeded
bootstrap (`pipeline.trends.fit`) and drawn around the line (the forecasts' intervals add the
scatter of the largest run below it, docs/sources.md); hand-set trajectories are dotted. Each
shown series' linear-scaling end and latency wall are horizontal lines: where a trajectory
crosses one is that limit's forecast year. The series drawn are a spread of the walls (the
earliest, the median and the latest), so the lines show the range the dataset spans.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from pipeline.forecast.paths import FITTED
from pipeline.forecast.trajectory import frontier_flop
from pipeline.nightly.tables import runs_of_fit
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
"""Series whose thresholds are drawn (a spread of their walls, `wall_spread`), to keep the
chart readable."""
THRESHOLD_COLORS = ("tab:red", "tab:orange", "tab:purple")


def wall_spread(
    thresholds: pl.DataFrame, labels: Mapping[str, str]
) -> list[tuple[str, dict[str, Any], int]]:
    """The series whose limits the chart draws, chosen by their limits, not their names:
    (role, thresholds row, series sharing that limit) for the earliest, the median and the
    latest distinct wall; with fewer distinct walls (series with the same latency share one),
    the earliest and latest linear-scaling ends of the other series fill the three. Of series
    sharing a limit, the first by label stands for them all."""
    rows = sorted(thresholds.iter_rows(named=True), key=lambda r: labels.get(r["series_id"], ""))
    by_wall: dict[float, list[dict[str, Any]]] = {}
    for row in rows:
        if (wall := wall_of(row)) is not None:
            by_wall.setdefault(wall, []).append(row)
    walls = sorted(by_wall)
    middle = walls[(len(walls) - 1) // 2] if walls else math.nan
    picked = dict.fromkeys([*walls[:1], middle, *walls[-1:]]) if walls else {}
    roles = {walls[0]: "earliest wall" if len(walls) > 1 else "wall"} if walls else {}
    roles |= {middle: "median wall"} if len(walls) > 2 else {}
    roles |= {walls[-1]: "latest wall"} if len(walls) > 1 else {}
    chosen = [(roles.get(w, "wall"), by_wall[w][0], len(by_wall[w])) for w in picked]
    taken = {row["series_id"] for _, row, _ in chosen}
    by_end: dict[float, list[dict[str, Any]]] = {}
    for row in rows:
        if row["series_id"] not in taken and row["linear_end_flop"] is not None:
            by_end.setdefault(row["linear_end_flop"], []).append(row)
    ends = sorted(by_end)
    for end, role in ((ends[:1], "earliest linear end"), (ends[-1:], "latest linear end")):
        if end and len(chosen) < SERIES_SHOWN and by_end[end[0]][0]["series_id"] not in taken:
            chosen.append((role, by_end[end[0]][0], len(by_end[end[0]])))
            taken.add(by_end[end[0]][0]["series_id"])
    return chosen[:SERIES_SHOWN]


def shared_words(labels: list[str]) -> tuple[str, list[str]]:
    """The words every label shares, and each label without them (a lone label keeps all):
    a sweep's labels repeat its fixed values, which say nothing about a line."""
    words = [label.replace(" | ", " ").replace(" / ", " ").split() for label in labels]
    common = set.intersection(*(set(w) for w in words)) if len(words) > 1 else set()
    if not common:
        return "", labels
    shared = " ".join(x for x in words[0] if x in common)
    return shared, [" ".join(x for x in w if x not in common) or " ".join(w) for w in words]


def _years_until(forecasts: pl.DataFrame, start: float) -> np.ndarray:
    """Calendar years from `start` to a year after the latest forecast year (at most 2045)."""
    columns = [c for c in ("linear_end_year", "wall_year") if c in forecasts.columns]
    latest = max((forecasts[c].max() or start for c in columns), default=start)
    end = min(max(float(latest) + 1.0, start + 8.0), 2045.0)  # type: ignore[arg-type]
    return np.linspace(start, end, 200)


def _band(
    frontier: pl.DataFrame, years: np.ndarray, line: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """The 5th-95th percentile of the bootstrap lines over `years`, as factors around their
    central least-squares line, drawn around `line` (the trajectory the forecasts used: the
    envelope of the largest runs by default, whose bootstrap lines share these slopes and
    differ from the least-squares ones by an offset, docs/sources.md); None with < 3 runs."""
    if frontier.height < 3:
        return None
    x = frontier["publication_year"].to_numpy()
    y = np.log(frontier["training_flop"].to_numpy())
    slopes, at_mean = bootstrap_lines(x, y)
    mean_x = float(x.mean())
    logs = at_mean[:, None] + slopes[:, None] * (years[None, :] - mean_x)
    slope, intercept = np.polyfit(x - mean_x, y, 1)
    centre = intercept + slope * (years - mean_x)
    tail = (1.0 - CONFIDENCE) / 2.0
    low, high = np.quantile(logs - centre[None, :], [tail, 1.0 - tail], axis=0)
    return line * np.exp(low), line * np.exp(high)


def observed_frontier_figure(
    observed: pl.DataFrame,
    forecasts: pl.DataFrame | None,
    thresholds: pl.DataFrame,
    labels: Mapping[str, str] | None = None,
) -> Figure:
    """Observed runs, the fitted trajectory with its band, hand-set lines, thresholds.

    `labels` names each series (the selection's scenario labels, sweep values included); by
    default the labels the thresholds alone give. The runs drawn are those of the fit the drawn
    fitted line rests on (`runs_of_fit`: a root holds one `observed_runs` part per fit)."""
    fig = Figure(figsize=FIGSIZE_IN, dpi=DPI, layout="constrained")
    ax = fig.subplots()
    observed = runs_of_fit(observed, forecasts)
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
                band = _band(frontier, years, np.asarray(line, dtype=np.float64))
                if band is not None:
                    ax.fill_between(
                        years, *band, color="tab:blue", alpha=0.15, label="5th-95th pct"
                    )
            else:
                style, grey = next(hand_set_styles)
                label = f"hand-set {growth_text(row['growth_per_year'])}"
                ax.plot(years, line, style, color=grey, label=label)
    labels = labels if labels is not None else series_labels(thresholds)
    spread = wall_spread(thresholds, labels)
    common, names = shared_words([labels.get(r["series_id"], r["series_id"]) for _, r, _ in spread])
    for (role, row, sharing), name, color in zip(spread, names, THRESHOLD_COLORS, strict=False):
        name += f" and {sharing - 1} more" if sharing > 1 else ""
        if role.endswith("linear end"):
            ax.axhline(row["linear_end_flop"], color=color, lw=1.0, label=f"{role}: {name}")
            continue
        if (wall := wall_of(row)) is not None:
            ax.axhline(wall, color=color, lw=1.0, ls="--", label=f"{role}: {name}")
        if row["linear_end_flop"] is not None:
            label = f"linear end of the {role} series"
            ax.axhline(row["linear_end_flop"], color=color, lw=1.0, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("publication year")
    year_ticks(ax)
    ax.set_ylabel("training compute (FLOP)")
    ax.grid(True, alpha=0.3)
    handles, names = ax.get_legend_handles_labels()
    trajectories = [i for i, n in enumerate(names) if "wall" not in n and "linear end" not in n]
    limits = [i for i in range(len(names)) if i not in trajectories]
    ax.legend([handles[i] for i in trajectories], [names[i] for i in trajectories],
              fontsize="x-small", loc="upper left")  # fmt: skip
    if limits:  # under the axes: series labels are long, and would cover the runs
        title = f"every series drawn: {common}" if common else None
        fig.legend([handles[i] for i in limits], [names[i] for i in limits], title=title,
                   loc="outside lower center", fontsize="x-small", title_fontsize="x-small",
                   ncols=2 if max(map(len, names)) < 60 else 1)  # fmt: skip
    return fig
