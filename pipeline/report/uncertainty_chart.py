"""The uncertainty budget: which input moves each limit year most (the `uncertainty` table).

Drawn when a dataset holds the `uncertainty` table (a run with `forecast.uncertainty`). One
panel per limit year: a horizontal bar per input, its variance share (docs/sources.md §10), the
largest on top, and in the panel's title the year's median and 5th-95th percentile over the
design and the share the linear fit explains.
"""

from __future__ import annotations

import polars as pl
from matplotlib.figure import Figure

from pipeline.report.charts import DPI, FIGSIZE_IN

LIMIT_NAMES = {
    "linear_end_year": "linear-scaling end",
    "wall_year": "latency wall",
    "moving_linear_end_year": "linear-scaling end, moving hw",
    "moving_wall_year": "latency wall, moving hw",
}


def _title(row: dict[str, object]) -> str:
    """E.g. "linear-scaling end: 2029.5 (2027.1-2031.4), 93% explained"."""
    name = LIMIT_NAMES.get(str(row["limit"]), str(row["limit"]))
    median, low, high = row["year_median"], row["year_low"], row["year_high"]
    if not isinstance(median, float) or not isinstance(low, float) or not isinstance(high, float):
        return f"{name}: not reached by any design point"
    explained = row["explained"]
    share = f", {explained:.0%} explained" if isinstance(explained, float) else ""
    return f"{name}: {median:.1f} ({low:.1f}-{high:.1f}){share}"


def uncertainty_figure(uncertainty: pl.DataFrame) -> Figure:
    """The variance share of each input, one panel per limit year."""
    limits = uncertainty["limit"].unique(maintain_order=True).to_list()
    fig = Figure(figsize=FIGSIZE_IN, dpi=DPI, layout="constrained")
    axes = fig.subplots(1, max(len(limits), 1), squeeze=False)[0]
    for ax, limit in zip(axes, limits, strict=False):
        rows = uncertainty.filter(pl.col("limit") == limit).sort(
            pl.col("variance_share").fill_null(0.0)
        )
        shares = rows["variance_share"].fill_null(0.0).to_list()
        ax.barh(rows["input"].to_list(), shares, color="tab:blue")
        ax.set_xlim(0.0, 1.0)
        ax.set_xlabel("share of the year's variance (SRC²)")
        ax.set_title(_title(rows.row(0, named=True)), fontsize="medium")
        ax.grid(True, axis="x", alpha=0.3)
        ax.tick_params(axis="y", labelsize="small")
    return fig
