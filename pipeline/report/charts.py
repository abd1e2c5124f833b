"""The report's charts, one matplotlib Figure each, drawn from the dataset's tables.

Figures are built with `matplotlib.figure.Figure` (no pyplot, no global state) and rendered by
the Agg canvas when saved. Every figure has the same size, FIGSIZE_IN at DPI.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

FIGSIZE_IN = (12.0, 7.0)
DPI = 100
"""Saved PNGs are 1200 × 700 pixels."""
MAX_SERIES = 10
"""Series drawn per chart; a larger dataset shows its first ten (by label) and says so."""
STEP_PANELS = 6
"""Series drawn in the step-time breakdown, one panel each."""

DEGREES = (
    ("dp", "data-parallel degree N_DP"),
    ("tp", "tensor-parallel degree N_TPm · N_TPff"),
    ("pp", "pipeline stages N_PP"),
    ("ep", "expert-parallel degree N_EP"),
)
STEP_SHARES = (
    ("t_compute_s", "compute"),
    ("t_tp_comm_s", "TP"),
    ("t_pp_ep_comm_s", "PP/EP"),
    ("t_dp_comm_s", "DP"),
    ("t_latency_paid_s", "latency"),
)


def series_labels(thresholds: pl.DataFrame) -> dict[str, str]:
    """series_id -> "hardware / scaling / batch_law", with the id's start where names repeat."""
    names = {
        row["series_id"]: f"{row['hardware']} / {row['scaling']} / {row['batch_law']}"
        for row in thresholds.iter_rows(named=True)
    }
    counts: dict[str, int] = {}
    for name in names.values():
        counts[name] = counts.get(name, 0) + 1
    return {
        sid: name if counts[name] == 1 else f"{name} ({sid[:6]})" for sid, name in names.items()
    }


def _shown(labels: dict[str, str], limit: int) -> list[tuple[str, str]]:
    return sorted(labels.items(), key=lambda kv: kv[1])[:limit]


def _feasible(points: pl.DataFrame, series_id: str) -> pl.DataFrame:
    return points.filter(pl.col("series_id") == series_id, pl.col("feasible")).sort("training_flop")


def _colors(n: int) -> Iterator[tuple[float, float, float, float]]:
    cmap = colormaps["tab10"]
    for i in range(n):
        yield cmap(i % 10)


def _title(fig: Figure, text: str, total: int, shown: int) -> None:
    more = f" (first {shown} of {total} series)" if total > shown else ""
    fig.suptitle(text + more)


def utilization_figure(points: pl.DataFrame, thresholds: pl.DataFrame) -> Figure:
    """Utilization against training compute per series (log x), with its two walls marked.

    Dashed: the end of linear scaling (first utilization ≤ 0.8 · u_eff); dotted: the latency
    wall (first compute no cluster trains within the duration). The paper's headline figure.
    """
    labels = series_labels(thresholds)
    shown = _shown(labels, MAX_SERIES)
    limits = {row["series_id"]: row for row in thresholds.iter_rows(named=True)}
    fig = Figure(figsize=FIGSIZE_IN, dpi=DPI)
    ax = fig.add_subplot()
    for (sid, label), color in zip(shown, _colors(len(shown)), strict=True):
        rows = _feasible(points, sid)
        ax.plot(rows["training_flop"], rows["utilization"], "o-", ms=3, color=color, label=label)
        if (flop := limits[sid]["linear_end_flop"]) is not None:
            ax.axvline(flop, color=color, ls="--", lw=1)
        if (flop := limits[sid]["first_infeasible_flop"]) is not None:
            ax.axvline(flop, color=color, ls=":", lw=1.5)
    ax.set_xscale("log")
    ax.set_ylim(bottom=0.0)
    ax.set_xlabel("training compute C (FLOP)")
    ax.set_ylabel("utilization (model FLOP/s ÷ peak FLOP/s)")
    ax.grid(True, which="major", alpha=0.3)
    markers = [
        Line2D([], [], color="grey", ls="--", lw=1, label="linear-scaling end"),
        Line2D([], [], color="grey", ls=":", lw=1.5, label="latency wall"),
    ]
    handles, _ = ax.get_legend_handles_labels()
    ax.legend(handles=handles + markers, fontsize="small", loc="lower left")
    _title(fig, "Utilization against training compute", len(labels), len(shown))
    return fig


def parallelism_figure(points: pl.DataFrame, thresholds: pl.DataFrame) -> Figure:
    """The parallel degrees of the chosen layout (dp, tp, pp, ep) against compute, log-log."""
    labels = series_labels(thresholds)
    shown = _shown(labels, MAX_SERIES)
    fig = Figure(figsize=FIGSIZE_IN, dpi=DPI)
    axes = fig.subplots(2, 2, sharex=True).ravel()
    for (sid, label), color in zip(shown, _colors(len(shown)), strict=True):
        rows = _feasible(points, sid).with_columns(tp=pl.col("tp_model") * pl.col("tp_ff"))
        for ax, (column, _) in zip(axes, DEGREES, strict=True):
            ax.plot(rows["training_flop"], rows[column], "o-", ms=3, color=color, label=label)
    for ax, (_, title) in zip(axes, DEGREES, strict=True):
        ax.set_xscale("log")
        ax.set_yscale("log", base=2)
        ax.set_title(title, fontsize="medium")
        ax.grid(True, alpha=0.3)
    for ax in axes[2:]:
        ax.set_xlabel("training compute C (FLOP)")
    axes[0].legend(fontsize="small")
    _title(fig, "Parallelism mix of the smallest sufficient cluster", len(labels), len(shown))
    return fig


def step_time_figure(points: pl.DataFrame, thresholds: pl.DataFrame) -> Figure:
    """Each step-time term as a share of the step, against compute; one panel per series.

    TP and PP/EP bandwidth time overlap compute, so shares need not sum to 1; bubble is the
    pipeline bubble fraction f.
    """
    labels = series_labels(thresholds)
    shown = _shown(labels, STEP_PANELS)
    fig = Figure(figsize=FIGSIZE_IN, dpi=DPI)
    cols = min(3, len(shown))
    rows_n = -(-len(shown) // cols)
    axes = fig.subplots(rows_n, cols, sharex=True, sharey=True, squeeze=False).ravel()
    colors = dict(zip([*(c for c, _ in STEP_SHARES), "bubble"], _colors(6), strict=True))
    for ax, (sid, label) in zip(axes, shown, strict=False):
        rows = _feasible(points, sid)
        flop = rows["training_flop"]
        for column, name in STEP_SHARES:
            share = rows[column] / rows["step_time_s"]
            ax.plot(flop, share, "-", color=colors[column], label=name)
        ax.plot(flop, rows["bubble_fraction"], "-", color=colors["bubble"], label="bubble")
        ax.set_xscale("log")
        ax.set_title(label, fontsize="small")
        ax.grid(True, alpha=0.3)
    for ax in axes[len(shown) :]:
        ax.set_visible(False)
    for ax in axes[max(0, len(shown) - cols) : len(shown)]:  # the lowest panel of each column
        ax.xaxis.set_tick_params(labelbottom=True)
        ax.set_xlabel("training compute C (FLOP)")
    axes[0].set_ylabel("share of step time")
    axes[0].legend(fontsize="small")
    _title(fig, "Step-time breakdown", len(labels), len(shown))
    return fig
