"""The uncertainty budget: which input moves each limit year most (the `uncertainty` table).

Drawn when a dataset holds the `uncertainty` table (a run with `forecast.uncertainty`). One
panel per limit year, two a row: a horizontal bar per input, its variance share
(docs/sources.md §10), the inputs in one order on every panel (the largest share any limit
gives them on top) and named once per row, and in the panel's title the year's median and
5th-95th percentile over the design and the share the linear fit explains.
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
    """The variance share of each input, one panel per limit year, two panels a row; the inputs
    in one order on every panel (the largest share any limit gives, on top), named once per row."""
    limits = uncertainty["limit"].unique(maintain_order=True).to_list()
    largest = (
        uncertainty.group_by("input")
        .agg(pl.col("variance_share").fill_null(0.0).max().alias("top"))
        .sort(["top", "input"], descending=[False, True])
    )
    order = largest["input"].to_list()
    cols = min(2, max(len(limits), 1))
    rows_n = -(-max(len(limits), 1) // cols)
    height = max(FIGSIZE_IN[1], 0.25 * len(order) * rows_n + 1.0)
    fig = Figure(figsize=(FIGSIZE_IN[0], height), dpi=DPI, layout="constrained")
    axes = fig.subplots(rows_n, cols, squeeze=False, sharey=True).ravel()
    for ax, limit in zip(axes, limits, strict=False):
        rows = uncertainty.filter(pl.col("limit") == limit)
        share = dict(zip(rows["input"], rows["variance_share"].fill_null(0.0), strict=True))
        ax.barh(order, [share.get(name, 0.0) for name in order], color="tab:blue")
        ax.set_xlim(0.0, 1.0)
        ax.set_title(_title(rows.row(0, named=True)), fontsize="small")
        ax.grid(True, axis="x", alpha=0.3)
        ax.tick_params(axis="y", labelsize="x-small")
    for ax in axes[len(limits) :]:
        ax.set_visible(False)
    fig.supxlabel("share of the year's variance (SRC²)", fontsize="small")
    return fig
