"""Charts of hardware trends and the moving frontier (drawn when a dataset holds them).

- `trends_figure`: each catalog metric against release year, log scale, with its fitted line
  and, where Gholami et al. (arXiv:2403.14123) give one, their growth rate through the same
  reference point for comparison;
- `frontier_figure`: per series with a moving frontier, the frontier compute C(y) of each growth
  scenario against the linear-scaling end and the latency wall of each year's projected hardware.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from pipeline.forecast.trajectory import frontier_flop
from pipeline.report.catalog_points import Points
from pipeline.report.charts import (
    DPI,
    FIGSIZE_IN,
    growth_text,
    label_panels,
    panel_titles,
    series_styles,
    wall_of,
    year_ticks,
)
from pipeline.report.selection import Selection
from pipeline.schema.projected import shipped_catalog

FRONTIER_PANELS = 12
"""Series drawn in the frontier chart in a panel each; more share one panel."""
GPU_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*")
"""Markers of the catalog's GPUs in the trends chart, with a colour each."""
TRAJECTORY_DASHES: tuple[str | tuple[int, tuple[int, ...]], ...] = (
    ":",
    "-.",
    (0, (6, 2)),
    (0, (1, 1, 4, 1)),
)
"""Line styles of the compute trajectories where they are drawn in black over coloured series
(the overlay of many series), in turn: the default three (fitted, 4x, 5x) and a fourth each
their own, so that growths of 4x and 4.6x stay apart; more trajectories repeat them."""
TRAJECTORY_COLORS = ("tab:green", "tab:purple", "tab:brown", "tab:olive")
"""Compute trajectories, one per growth factor (blue and red draw the limits)."""


def trends_figure(trends: pl.DataFrame, points: Points) -> Figure:
    """One panel per metric: the catalog's points (`points`, of the catalog the newest fits were
    made on: `catalog_points.catalog_points`), the fit (solid) and Gholami et al.'s rate
    (dashed). The shipped catalog's GPUs have a colour and marker each, named once in a legend
    beside the panels (names at the points covered each other where releases crowd);
    accelerators a source added are grey dots, unnamed. Without points, a note under the panels
    says why none are drawn."""
    latest = trends.filter(pl.col("catalog_hash") == trends["catalog_hash"][-1])
    shipped = [entry.gpu for entry in shipped_catalog().entries]
    gpu_styles = {
        gpu: (colormaps["tab20"](i % 20), GPU_MARKERS[i % len(GPU_MARKERS)])
        for i, gpu in enumerate(shipped)
    }
    fig = Figure(figsize=FIGSIZE_IN, dpi=DPI, layout="constrained")
    cols = 3
    rows_n = -(-latest.height // cols)
    axes = fig.subplots(rows_n, cols, squeeze=False).ravel()
    for ax, row in zip(axes, latest.iter_rows(named=True), strict=False):
        metric_points = points.get(row["metric"], [])
        added = [(year, value) for gpu, year, value in metric_points if gpu not in shipped]
        if added:
            ax.plot(
                *zip(*added, strict=True), "o", ms=3, color="0.65", label=f"source ({len(added)})"
            )
        for gpu, year, value in metric_points:
            if gpu in shipped:
                color, marker = gpu_styles[gpu]
                ax.plot(year, value, marker, ms=5, color=color, ls="")
        title = row["metric"]
        if row["growth_per_year"] is not None:
            years = np.linspace(row["first_release_year"], row["last_release_year"] + 5.0, 20)
            g, ref = row["growth_per_year"], row["reference_year"]
            fitted = row["value_at_reference"] * g ** (years - ref)
            ax.plot(years, fitted, "-", color="tab:blue", label=f"fit {growth_text(g)}")
            title += f"\n{g:.2f}x/yr [{row['growth_per_year_low']:.2f}, {row['growth_per_year_high']:.2f}]"
            if row["gholami_growth_per_two_years"] is not None:
                gg = math.sqrt(row["gholami_growth_per_two_years"])
                ax.plot(
                    years,
                    row["value_at_reference"] * gg ** (years - ref),
                    "--",
                    color="tab:orange",
                    label=f"Gholami {growth_text(gg)}",
                )
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=5, loc="upper left")
        ax.set_yscale("log")
        ax.set_title(f"{title} ({row['unit']})", fontsize=7)
        ax.tick_params(which="both", labelsize=6)
        ax.grid(True, which="major", alpha=0.3)
    for ax in axes[latest.height :]:
        ax.set_visible(False)
    drawn = {gpu for pts in points.values() for gpu, _, _ in pts}
    handles = [
        Line2D([], [], color=color, marker=marker, ls="", label=gpu)
        for gpu, (color, marker) in gpu_styles.items()
        if gpu in drawn
    ]
    if handles:  # the GPUs once, beside every panel: names on the points would cover each other
        fig.legend(handles=handles, loc="outside right upper", fontsize="small", title="GPU")
    if not points:
        fig.supxlabel(
            f"accelerators not drawn: catalog {latest['catalog_hash'][0]} (a catalog of your own, "
            "or an accelerator source copy no longer stored) cannot be rebuilt here",
            fontsize="small",
        )
    return fig


def _walls(rows: pl.DataFrame) -> list[float]:
    """The wall of each `frontier` row (`charts.wall_of`), NaN (not drawn) at the grid's end."""
    return [w if (w := wall_of(r)) is not None else math.nan for r in rows.iter_rows(named=True)]


def frontier_figure(
    frontier: pl.DataFrame, forecasts: pl.DataFrame, thresholds: pl.DataFrame, sel: Selection
) -> Figure:
    """Per series of the selection with a moving frontier: the frontier compute of each growth
    scenario against the linear-scaling end and the wall on each year's projected hardware,
    one panel each (up to `FRONTIER_PANELS`); more series share one panel, coloured by group."""
    ids = [s for s in sel.ids if s in set(frontier["series_id"].to_list())]
    if len(ids) > FRONTIER_PANELS:
        return _frontier_overlay(frontier, forecasts, sel, ids)
    cols = min(3, len(ids))
    rows_n = -(-len(ids) // cols)
    height = max(FIGSIZE_IN[1], 3.0 * rows_n)
    fig = Figure(figsize=(FIGSIZE_IN[0], height), dpi=DPI, layout="constrained")
    axes = fig.subplots(rows_n, cols, squeeze=False, sharex=True).ravel()
    titles = panel_titles(fig, [sel.labels[sid] for sid in ids])
    for ax, sid, title in zip(axes, ids, titles, strict=False):
        rows = frontier.filter(pl.col("series_id") == sid).sort("year")
        years = rows["year"].to_numpy()
        ax.plot(years, rows["linear_end_flop"], "s-", color="tab:blue", label="linear-scaling end")
        ax.plot(years, _walls(rows), "^-", color="tab:red", label="wall")
        fc = forecasts.filter(pl.col("series_id") == sid).sort("growth_per_year")
        for row, color in zip(fc.iter_rows(named=True), itertools.cycle(TRAJECTORY_COLORS)):
            g = row["growth_per_year"]
            c = [frontier_flop(y, row["base_flop"], row["base_year"], g) for y in years]
            ax.plot(years, c, ":", color=color, label=f"frontier {growth_text(g)}")
            for column in ("moving_linear_end_year", "moving_wall_year"):
                if row[column] is not None:
                    ax.axvline(row[column], color=color, lw=0.8, ls="--")
        ax.set_yscale("log")
        ax.set_title(title, fontsize="small")
        ax.grid(True, alpha=0.3)
    year_ticks(axes[0])  # shared by every panel
    label_panels(axes, len(ids), cols, "year (projected hardware)", "training compute (FLOP)")
    axes[0].legend(fontsize="x-small")
    return fig


def _frontier_overlay(
    frontier: pl.DataFrame, forecasts: pl.DataFrame, sel: Selection, ids: list[str]
) -> Figure:
    """Many series' moving walls (solid) and linear-scaling ends (dashed) in one panel,
    coloured by the selection's group, under the compute trajectories (dotted, black)."""
    fig = Figure(figsize=FIGSIZE_IN, dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    styles = series_styles(sel)
    years = sorted(set(frontier["year"].to_list()))
    for sid in ids:
        rows = frontier.filter(pl.col("series_id") == sid).sort("year")
        color, label = styles[sid]
        ax.plot(rows["year"], _walls(rows), "-", color=color, lw=0.8, label=label)
        ax.plot(rows["year"], rows["linear_end_flop"], "--", color=color, lw=0.6, alpha=0.6)
    fc = forecasts.filter(pl.col("series_id") == ids[0]).sort("growth_per_year")
    for row, dashes in zip(fc.iter_rows(named=True), itertools.cycle(TRAJECTORY_DASHES)):
        g = row["growth_per_year"]
        c = [frontier_flop(y, row["base_flop"], row["base_year"], g) for y in years]
        ax.plot(years, c, color="black", lw=1.2, ls=dashes, label=f"frontier {growth_text(g)}")
    ax.set_yscale("log")
    year_ticks(ax)
    ax.set_xlabel("year (projected hardware)")
    ax.set_ylabel("training compute (FLOP): wall solid, linear-scaling end dashed")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="x-small")
    return fig
