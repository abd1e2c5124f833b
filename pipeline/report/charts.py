"""The report's charts, one matplotlib Figure each, drawn from the dataset's tables.

Figures are built with `matplotlib.figure.Figure` (no pyplot, no global state), laid out by
matplotlib's constrained layout (no title or label over another) and rendered by the Agg canvas
when saved. A chart's title is its caption on the page, not drawn in the image. Each draws the
series of a `Selection`: up to `selection.MAX_DISTINCT` in a colour and legend entry each, more
as thin lines coloured by the scenario key that groups them. Every chart builder is also given
the dataset's `series` table (`pipeline.report.main.Builder`); those here do not read it (the
step-time chart, `step_chart`, does).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal

import polars as pl
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator, StrMethodFormatter

from pipeline.io.labels import scenario_labels
from pipeline.report.selection import Selection

FIGSIZE_IN = (12.0, 7.0)
DPI = 100
"""Saved PNGs are 1200 pixels wide (700 high, more for charts with a row per series)."""
ROW_IN = 0.32
"""Height of one series' row in the thresholds chart, when each row is labelled."""
NO_LIMIT_TEXT = "no series has a linear-scaling end, a feasible size or a wall to draw"
"""The thresholds chart's text where no series has a limit on the compute axis."""

DEGREES = (
    ("dp", "data-parallel degree N_DP"),
    ("cp", "context-parallel degree N_CP"),
    ("tp", "tensor-parallel degree N_TPm · N_TPff"),
    ("pp", "pipeline stages N_PP"),
    ("ep", "expert-parallel degree N_EP"),
)


def growth_text(growth_per_year: float) -> str:
    """A growth factor per year to three significant digits: 4.62x/yr, 4x/yr, 1.08x/yr."""
    return f"{growth_per_year:.3g}x/yr"


def series_labels(thresholds: pl.DataFrame) -> dict[str, str]:
    """series_id -> its scenario label from the thresholds alone (`io.labels.scenario_labels`
    without the sweep values, which live in the `series` table)."""
    return scenario_labels(thresholds, None)


def _feasible(points: pl.DataFrame, series_id: str) -> pl.DataFrame:
    return points.filter(pl.col("series_id") == series_id, pl.col("feasible")).sort("training_flop")


def _colors(n: int) -> Iterator[tuple[float, float, float, float]]:
    cmap = colormaps["tab10"]
    for i in range(n):
        yield cmap(i % 10)


Color = tuple[float, float, float, float] | str
"""A matplotlib colour: RGBA from a colour map, or a name."""


def series_styles(sel: Selection) -> dict[str, tuple[Color, str | None]]:
    """series_id -> (colour, legend label or None): a colour per series, or per group of a
    `many` selection, whose first series of each group carries the group's legend entry."""
    if not sel.many:
        return {
            sid: (color, sel.labels[sid])
            for sid, color in zip(sel.ids, _colors(len(sel.ids)), strict=True)
        }
    values = sorted(set(sel.groups.values()))
    color_of = dict(zip(values, _colors(len(values)), strict=True))
    counts = {v: sum(1 for g in sel.groups.values() if g == v) for v in values}
    styles: dict[str, tuple[Color, str | None]] = {}
    seen: set[str] = set()
    for sid in sel.ids:
        value = sel.groups.get(sid, "")
        label = None if value in seen else f"{sel.group_key}={value} ({counts.get(value, 0)})"
        seen.add(value)
        styles[sid] = (color_of.get(value, "grey"), label)
    return styles


def _line_style(sel: Selection) -> dict[str, Any]:
    return {"lw": 0.7, "alpha": 0.45} if sel.many else {"marker": "o", "ms": 3}


def wall_of(row: dict[str, object]) -> float | None:
    """The wall of a `thresholds` or `frontier` row: `wall_flop` (an infeasible size, or the
    size where utilization collapsed), or `first_infeasible_flop` on rows of an older schema."""
    wall = row.get("wall_flop")
    if wall is None and row.get("end_reason") is None:
        wall = row.get("first_infeasible_flop")
    return wall if isinstance(wall, float) else None


def _legend(
    ax: Axes,
    extra: Sequence[Line2D] = (),
    loc: Literal["best", "lower left", "lower right"] = "best",
) -> None:
    handles, _ = ax.get_legend_handles_labels()
    if handles or extra:
        ax.legend(handles=[*handles, *extra], fontsize="small", loc=loc)


def utilization_figure(
    points: pl.DataFrame,
    thresholds: pl.DataFrame,
    sel: Selection,
    series: pl.DataFrame | None = None,
) -> Figure:
    """Utilization against training compute per series (log x), with its two limits marked.

    Dashed: the end of linear scaling; dotted: the wall (first infeasible size, or the size
    where utilization collapsed). The paper's headline figure. Limits are marked for a few
    series only: a many-series chart shows where the lines end.
    """
    limits = {row["series_id"]: row for row in thresholds.iter_rows(named=True)}
    fig = Figure(figsize=FIGSIZE_IN, dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    for sid, (color, label) in series_styles(sel).items():
        rows = _feasible(points, sid)
        ax.plot(
            rows["training_flop"], rows["utilization"], color=color, label=label, **_line_style(sel)
        )
        if sel.many:
            continue
        if (flop := limits[sid]["linear_end_flop"]) is not None:
            ax.axvline(flop, color=color, ls="--", lw=1)
        if (flop := wall_of(limits[sid])) is not None:
            ax.axvline(flop, color=color, ls=":", lw=1.5)
    ax.set_xscale("log")
    ax.set_ylim(bottom=0.0)
    ax.set_xlabel("training compute C (FLOP)")
    ax.set_ylabel("utilization (model FLOP/s ÷ peak FLOP/s)")
    ax.grid(True, which="major", alpha=0.3)
    markers = (
        []
        if sel.many
        else [
            Line2D([], [], color="grey", ls="--", lw=1, label="linear-scaling end"),
            Line2D([], [], color="grey", ls=":", lw=1.5, label="wall"),
        ]
    )
    _legend(ax, markers, loc="lower left")
    return fig


def parallelism_figure(
    points: pl.DataFrame,
    thresholds: pl.DataFrame,
    sel: Selection,
    series: pl.DataFrame | None = None,
) -> Figure:
    """The parallel degrees of the chosen layout (dp, cp, tp, pp, ep) against compute, log-log,
    a panel each; a degree that is 1 at every drawn point (N_EP of dense series, N_CP of the
    paper's) gets no panel, a note under the panels says so instead (not for a degree null
    there: N_CP of parts before schema version 5)."""
    rows = {
        sid: _feasible(points, sid).with_columns(tp=pl.col("tp_model") * pl.col("tp_ff"))
        for sid in sel.ids
    }
    if all(r.height == 0 for r in rows.values()):  # e.g. a concrete run that does not train
        fig = Figure(figsize=FIGSIZE_IN, dpi=DPI, layout="constrained")
        fig.text(0.5, 0.5, "no feasible point: no layout to draw", ha="center")
        return fig
    drawn = [(c, name) for c, name in DEGREES if any((r[c] != 1).any() for r in rows.values())]
    drawn = drawn or list(DEGREES[:1])  # every degree 1 (one GPU): its data-parallel panel
    fig = Figure(figsize=FIGSIZE_IN, dpi=DPI, layout="constrained")
    cols = 2 if len(drawn) == 4 else len(drawn)
    axes = fig.subplots(-(-len(drawn) // cols), cols, sharex=True, squeeze=False).ravel()
    for sid, (color, label) in series_styles(sel).items():
        for ax, (column, _) in zip(axes, drawn, strict=True):
            ax.plot(
                rows[sid]["training_flop"],
                rows[sid][column],
                color=color,
                label=label,
                **_line_style(sel),
            )
    for ax, (_, name) in zip(axes, drawn, strict=True):
        ax.set_xscale("log")
        ax.set_yscale("log", base=2)
        ax.set_ylabel(name)
        ax.grid(True, alpha=0.3)
    for ax in axes[len(axes) - cols :]:
        ax.set_xlabel("training compute C (FLOP)")
    constant = [
        name.rsplit(" ", 1)[-1]
        for c, name in DEGREES
        if (c, name) not in drawn and not any(r[c].null_count() for r in rows.values())
    ]
    if constant:
        fig.supxlabel(f"{', '.join(constant)} = 1 at every point drawn: no panel", fontsize="small")
    _legend(axes[0])
    return fig


def panel_titles(fig: Figure, labels: Sequence[str]) -> list[str]:
    """Short panel titles: each label without the words every panel shares, which head the
    figure once, two words a line; a lone panel keeps its whole label."""
    words = [label.replace(" | ", " ").replace(" / ", " ").split() for label in labels]
    common = set.intersection(*(set(w) for w in words)) if len(words) > 1 else set()
    if common:
        shared = [x for x in words[0] if x in common]
        fig.suptitle("all panels: " + " ".join(shared), fontsize="small")
    titles = []
    for w in words:
        kept = [x for x in w if x not in common] or w
        titles.append("\n".join(" ".join(kept[i : i + 2]) for i in range(0, len(kept), 2)))
    return titles


def label_panels(axes: Any, used: int, cols: int, xlabel: str, ylabel: str) -> None:
    """A grid of panels sharing x (`axes`: the flat array of `Figure.subplots`): the unused ones
    hidden, the x label under the lowest panel of each column (with its tick labels), the y
    label left of each row."""
    for ax in axes[used:]:
        ax.set_visible(False)
    for ax in axes[max(0, used - cols) : used]:
        ax.xaxis.set_tick_params(labelbottom=True)
        ax.set_xlabel(xlabel)
    for ax in axes[:used:cols]:
        ax.set_ylabel(ylabel)


THRESHOLD_PANELS = (
    ("linear_end_flop", "linear-scaling end"),
    ("last_feasible_flop", "last feasible size"),
    ("wall", "wall"),
)
"""The thresholds a many-series chart draws, one panel each (`wall` via `wall_of`)."""


def _threshold(row: dict[str, object], column: str) -> float | None:
    value = wall_of(row) if column == "wall" else row.get(column)
    return value if isinstance(value, float) else None


def thresholds_figure(
    points: pl.DataFrame,
    thresholds: pl.DataFrame,
    sel: Selection,
    series: pl.DataFrame | None = None,
) -> Figure:
    """Each series' limits against compute: a row per series (`_thresholds_rows`) up to
    `MAX_DISTINCT` series; beyond, where rows and markers cannot be told apart, the share of
    each group's series that reached each limit by C (`_thresholds_shares`)."""
    if sel.many:
        return _thresholds_shares(thresholds, sel)
    return _thresholds_rows(thresholds, sel)


def _thresholds_shares(thresholds: pl.DataFrame, sel: Selection) -> Figure:
    """One panel per limit (linear-scaling end, last feasible size, wall), sharing x: for each
    group of the selection, the share of its series whose limit lies at or below C, a step
    line; a group's line stops below 1 by its series that never reach the limit in the grid
    (no wall: every size ran), counted in the legend with the walls that were collapses."""
    rows = {r["series_id"]: r for r in thresholds.iter_rows(named=True)}
    fig = Figure(figsize=FIGSIZE_IN, dpi=DPI, layout="constrained")
    axes = fig.subplots(len(THRESHOLD_PANELS), 1, sharex=True, sharey=True)
    values = sorted(set(sel.groups.values()))
    members = {v: [s for s in sel.ids if sel.groups.get(s, "") == v] for v in values}
    for (column, name), ax in zip(THRESHOLD_PANELS, axes, strict=True):
        for value, color in zip(values, _colors(len(values)), strict=True):
            ids = members[value]
            found = sorted(f for s in ids if (f := _threshold(rows[s], column)) is not None)
            label = f"{sel.group_key}={value} ({len(ids)} series"
            if column == "wall":
                collapsed = sum(rows[s].get("end_reason") == "utilization_collapse" for s in ids)
                label += f"; {collapsed} collapse, {len(ids) - len(found)} no wall"
            shares = [i / len(ids) for i in range(1, len(found) + 1)]
            ax.step([found[0], *found] if found else [], [0.0, *shares] if found else [],
                    where="post", color=color, label=label + ")")  # fmt: skip
        ax.set_xscale("log")
        ax.set_ylim(0.0, 1.02)
        ax.set_ylabel(f"share at or\nbelow C:\n{name}", fontsize="small")
        ax.grid(True, alpha=0.3)
        if column != "last_feasible_flop":  # the groups once, then with the walls' counts
            _legend(ax, loc="lower right")
    axes[-1].set_xlabel(f"training compute C (FLOP), {len(sel.ids)} series")
    return fig


def _thresholds_rows(thresholds: pl.DataFrame, sel: Selection) -> Figure:
    """One row per series, sorted by its wall: the linear-scaling end (square), the last
    feasible size (circle) and the wall (triangle, or × where utilization collapsed), against
    compute; series that reach the grid's end show no wall."""
    rows = {r["series_id"]: r for r in thresholds.iter_rows(named=True)}
    order = sorted(sel.ids, key=lambda s: (wall_of(rows[s]) or float("inf"), sel.labels[s]))
    height = max(2.5, 1.2 + ROW_IN * len(order))
    fig = Figure(figsize=(FIGSIZE_IN[0], height), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    styles = series_styles(sel)
    size = 40
    for y, sid in enumerate(order):
        row, (color, _) = rows[sid], styles[sid]
        if (flop := row["linear_end_flop"]) is not None:
            ax.scatter(flop, y, marker="s", s=size, color=color)
        if (flop := row["last_feasible_flop"]) is not None:
            ax.scatter(flop, y, marker="o", s=size, facecolors="none", edgecolors=color)
        if (flop := wall_of(row)) is not None:
            collapsed = row.get("end_reason") == "utilization_collapse"
            ax.scatter(flop, y, marker="x" if collapsed else "^", s=size, color=color)
    if ax.collections:  # a marker drawn: something on the compute axis
        ax.set_xscale("log")
    else:  # e.g. a concrete run that does not train, or a series its cluster cap ended at once
        ax.text(0.5, 0.5, NO_LIMIT_TEXT, transform=ax.transAxes, ha="center", va="center")
        ax.set_xticks([])
    ax.set_xlabel("training compute C (FLOP)")
    ax.set_yticks(range(len(order)), [sel.labels[s] for s in order], fontsize="small")
    ax.set_ylim(-0.7, len(order) - 0.3)
    ax.grid(True, axis="x", alpha=0.3)
    markers = [
        Line2D([], [], color="grey", marker="s", ls="", label="linear-scaling end"),
        Line2D([], [], color="grey", marker="o", mfc="none", ls="", label="last feasible"),
        Line2D([], [], color="grey", marker="^", ls="", label="wall"),
        Line2D([], [], color="grey", marker="x", ls="", label="wall (utilization collapse)"),
    ]
    # beside the axes: inside, it would cover the markers of the rows it stands on
    ax.legend(handles=markers, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def year_ticks(ax: Axes) -> None:
    """Whole calendar years on the x axis (2025, 2030, not 2027.5), a few of them."""
    ax.xaxis.set_major_locator(MaxNLocator(nbins=6, integer=True))
    ax.xaxis.set_major_formatter(StrMethodFormatter("{x:.0f}"))
