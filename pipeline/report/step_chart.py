"""The step-time chart: what a step is made of, exposed time apart from time hidden by overlap.

Each panel stacks a series' step, against training compute, as the shares of the parts it adds
up from (`step_parts.step_parts`: compute, the exposed TP and PP/EP time, DP, paid latency, the
pipeline bubble, other), so the stack is the whole step; the communication that ran hidden
behind the matmuls (overlapped TP and PP/EP time) is a dashed line beside it, never added to
the step. Series of one point each (concrete runs) are stacked bars in seconds instead, one per
run. Series without a feasible point have nothing to break down and get no panel.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from pipeline.report.charts import DPI, FIGSIZE_IN, label_panels, panel_titles
from pipeline.report.selection import Selection
from pipeline.report.step_parts import EXPOSED_PARTS, Overlap, StepParts, overlaps, step_parts

STEP_PANELS = 9
"""Series drawn in the step-time breakdown, one panel each."""
HIDDEN_LABEL = "communication hidden behind compute (not in the step)"
PART_COLORS = {key: colormaps["tab10"](i) for i, (key, _) in enumerate(EXPOSED_PARTS)}
"""One colour per part, the same in every panel."""


def _feasible(points: pl.DataFrame, series_id: str) -> pl.DataFrame:
    return points.filter(pl.col("series_id") == series_id, pl.col("feasible")).sort("training_flop")


def breakdown_ids(points: pl.DataFrame, sel: Selection) -> list[str]:
    """The series the chart breaks down: the first `STEP_PANELS` of the selection that have a
    feasible point."""
    with_points = set(points.filter(pl.col("feasible"))["series_id"].to_list())
    return [sid for sid in sel.ids if sid in with_points][:STEP_PANELS]


def _drawn_parts(parts: list[StepParts]) -> list[tuple[str, str]]:
    """The parts some row of some series has (a part zero everywhere gets no legend entry)."""
    return [(k, name) for k, name in EXPOSED_PARTS if any(p.exposed[k].any() for p in parts)]


def step_time_figure(
    points: pl.DataFrame,
    thresholds: pl.DataFrame,
    sel: Selection,
    series: pl.DataFrame | None = None,
) -> Figure:
    """The step of each series as the stacked shares of its exposed parts, with the time hidden
    by overlap apart (module docstring); the overlap flags come from the `series` table
    (the published policy without one)."""
    flags = overlaps(series)
    ids = breakdown_ids(points, sel)
    rows = {sid: _feasible(points, sid) for sid in ids}
    parts = {sid: step_parts(rows[sid], flags.get(sid, Overlap())) for sid in ids}
    if not ids:
        fig = Figure(figsize=FIGSIZE_IN, dpi=DPI, layout="constrained")
        fig.text(0.5, 0.5, "no feasible point: no step to break down", ha="center")
        return fig
    if all(rows[sid].height == 1 for sid in ids):
        return _step_bars(ids, parts, sel)
    drawn = _drawn_parts(list(parts.values()))
    cols = min(3, len(ids))
    rows_n = -(-len(ids) // cols)
    height = max(FIGSIZE_IN[1], 2.6 * rows_n + 1.0)
    fig = Figure(figsize=(FIGSIZE_IN[0], height), dpi=DPI, layout="constrained")
    axes = fig.subplots(rows_n, cols, sharex=True, sharey=True, squeeze=False).ravel()
    titles = panel_titles(fig, [sel.labels[sid] for sid in ids])
    for ax, sid, title in zip(axes, ids, titles, strict=False):
        flop, p = rows[sid]["training_flop"].to_numpy(), parts[sid]
        shares = [p.exposed[k] / p.step_s for k, _ in drawn]
        ax.stackplot(flop, shares, colors=[PART_COLORS[k] for k, _ in drawn], alpha=0.85)
        if p.hidden.any():
            ax.plot(flop, p.hidden / p.step_s, "--", color="black", lw=1.2)
        ax.set_xscale("log")
        ax.set_ylim(0.0, 1.0)
        ax.set_title(title, fontsize="small")
        ax.grid(True, alpha=0.3)
    label_panels(axes, len(ids), cols, "training compute C (FLOP)", "share of step time")
    _parts_legend(fig, drawn, any(p.hidden.any() for p in parts.values()))
    return fig


def _parts_legend(fig: Figure, drawn: list[tuple[str, str]], hidden: bool) -> None:
    """One legend for every panel, under them."""
    handles: list[Patch | Line2D] = [Patch(color=PART_COLORS[k], label=n) for k, n in drawn]
    if hidden:
        handles.append(Line2D([], [], ls="--", color="black", label=HIDDEN_LABEL))
    fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize="small")


def _step_bars(ids: list[str], parts: dict[str, StepParts], sel: Selection) -> Figure:
    """One horizontal bar per series of one point (a concrete run): its step in seconds,
    stacked by exposed part; the hidden time, if any, an outlined bar beneath."""
    height = max(3.0, 1.6 + 0.7 * len(ids))
    fig = Figure(figsize=(FIGSIZE_IN[0], height), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    drawn = _drawn_parts(list(parts.values()))
    y = np.arange(len(ids), dtype=float)
    left = np.zeros(len(ids))
    for key, _ in drawn:
        widths = np.array([float(parts[sid].exposed[key][0]) for sid in ids])
        ax.barh(y, widths, left=left, color=PART_COLORS[key], height=0.5)
        left += widths
    hidden = np.array([float(parts[sid].hidden[0]) for sid in ids])
    if hidden.any():
        ax.barh(y + 0.35, hidden, height=0.15, color="none", edgecolor="black", ls="--")
    ax.set_yticks(y, [sel.labels[sid] for sid in ids], fontsize="small")
    ax.invert_yaxis()
    ax.set_xlabel("step time (s)")
    ax.grid(True, axis="x", alpha=0.3)
    _parts_legend(fig, drawn, bool(hidden.any()))
    return fig
