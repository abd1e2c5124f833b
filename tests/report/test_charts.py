"""What the report's charts draw: the catalog behind the trends, growth labels, layouts at many
series (`pipeline.report.charts`, `trend_charts`, `observed_chart`, `catalog_points`)."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure

from pipeline.io.read import read_table
from pipeline.io.rows import Provenance
from pipeline.io.trends import trend_rows
from pipeline.report.catalog_points import catalog_points
from pipeline.report.charts import growth_text, thresholds_figure
from pipeline.report.main import read_tables
from pipeline.report.observed_chart import observed_frontier_figure
from pipeline.report.selection import select_series
from pipeline.report.trend_charts import frontier_figure, trends_figure
from pipeline.schema.projected import shipped_catalog
from pipeline.trends.catalog_fits import catalog_trends
from tests.nightly.runs import plain_run
from tests.report.test_selection import sweep

GROWTH_LABEL = re.compile(r"\d+(\.\d{1,2})?x/yr")
"""A growth factor as a reader wants it: 4x/yr, 4.62x/yr (not 4.61997x/yr)."""


@pytest.mark.parametrize(
    ("growth", "text"), [(4.619970, "4.62x/yr"), (4.0, "4x/yr"), (1.0834, "1.08x/yr")]
)
def test_growth_text_has_three_significant_digits(growth: float, text: str) -> None:
    """A growth factor prints to three significant digits, whole factors without decimals."""
    assert growth_text(growth) == text


def test_thresholds_many_series_draw_shares_per_group_not_rows() -> None:
    """Past MAX_DISTINCT series the thresholds chart draws, per limit, each group's share of
    series reaching it by C (a step line per group), not hundreds of overlapping markers."""
    thresholds, series = sweep(40, ("critical", "constant", "deepseek"))
    thresholds = thresholds.with_columns(
        linear_end_flop=pl.col("wall_flop") / 100,
        last_feasible_flop=pl.col("wall_flop") / 2,
        end_reason=pl.lit("wall"),
    )
    sel = select_series(thresholds, series)
    assert sel.many
    fig = thresholds_figure(pl.DataFrame(), thresholds, sel)
    axes = fig.get_axes()
    assert len(axes) == 3
    for ax in axes:
        assert not [c for c in ax.collections if isinstance(c, PathCollection)]
        assert len(ax.get_lines()) == 3  # one per batch law
        assert max(max(line.get_ydata()) for line in ax.get_lines()) == pytest.approx(1.0)


@pytest.mark.slow
def test_report_trends_and_frontier_show_the_catalog_and_short_growth_labels(
    tmp_path: Path,
) -> None:
    """A run whose moving frontier merged the accelerator source into the catalog: the trends'
    catalog is rebuilt for its points (source accelerators included), the frontier chart's
    growth labels are short, and the observed chart has no title over its axes."""
    root = tmp_path / "dataset"
    plain_run(root, "forecast.moving_frontier_years=[2024,2030]")
    tables = read_tables(root)
    trends, forecasts = tables["trends"], tables["forecasts"]
    assert trends is not None
    assert forecasts is not None
    points = catalog_points(root, tables["sources"], str(trends["catalog_hash"][-1]))
    gpus = {gpu for metric in points.values() for gpu, _, _ in metric}
    shipped = {entry.gpu for entry in shipped_catalog().entries}
    assert shipped <= gpus
    assert gpus - shipped, "the source's accelerators are drawn too"
    frontier = read_table(root, "frontier").frame
    assert frontier is not None
    thresholds = tables["thresholds"]
    assert thresholds is not None
    sel = select_series(thresholds, tables["series"])
    figure = frontier_figure(frontier, forecasts, thresholds, sel)
    legends = [legend for ax in figure.axes if (legend := ax.get_legend()) is not None]
    labels = [text.get_text() for legend in legends for text in legend.texts]
    growth = [label.split()[-1] for label in labels if label.endswith("x/yr")]
    assert growth
    assert all(GROWTH_LABEL.fullmatch(g) for g in growth), growth
    observed = tables["observed_runs"]
    assert observed is not None
    figure = observed_frontier_figure(observed, forecasts, thresholds)
    assert figure.get_suptitle() == ""
    assert figure.get_layout_engine() is not None


def _limit_texts(figure: Figure) -> list[str]:
    """The texts of the observed chart's legend of limits (under the axes)."""
    return [t.get_text() for legend in figure.legends for t in legend.texts]


def _observed() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "publication_year": [2020.0, 2021.0, 2022.0],
            "training_flop": [1e23, 1e24, 1e25],
            "frontier": [True, True, True],
        }
    )


def test_observed_chart_names_series_by_scenario_not_hash() -> None:
    """In a sweep whose series share hardware, scaling and batch law, the observed chart's
    limit lines are named by the selection's labels (sweep values), never by an id's hash."""
    thresholds, series = sweep(3, ("critical",))
    thresholds = thresholds.with_columns(
        linear_end_flop=pl.col("wall_flop") / 100, end_reason=pl.lit("wall")
    )
    sel = select_series(thresholds, series)
    figure = observed_frontier_figure(_observed(), None, thresholds, sel.labels)
    walls = [t for t in _limit_texts(figure) if "wall:" in t]
    assert len(walls) == 3
    assert not [t for t in walls if re.search(r"\([0-9a-f]{6}\)", t)], walls
    assert all("latency_us" in t for t in walls), walls


def _walls_drawn(figure: Figure) -> set[float]:
    """The heights of the dashed (wall) lines of the observed chart."""
    return {
        float(line.get_ydata()[0])  # type: ignore[index]
        for line in figure.axes[0].get_lines()
        if line.get_linestyle() == "--"
    }


def test_observed_chart_draws_a_spread_of_walls_not_the_first_names() -> None:
    """Of five series, the chart draws the earliest, the median and the latest wall, though the
    first three by name hold the three earliest walls."""
    walls = [1e28, 2e28, 3e28, 1e31, 1e34]
    thresholds = pl.DataFrame(
        {
            "series_id": [f"{i:016d}" for i in range(5)],
            "hardware": ["a100", "b100", "c100", "d100", "e100"],
            "scaling": ["dense"] * 5,
            "batch_law": ["critical"] * 5,
            "wall_flop": walls,
            "linear_end_flop": [w / 100 for w in walls],
            "end_reason": ["wall"] * 5,
        }
    )
    figure = observed_frontier_figure(_observed(), None, thresholds)
    assert _walls_drawn(figure) == {1e28, 3e28, 1e34}


def test_observed_chart_coinciding_walls_spread_the_linear_ends() -> None:
    """Series that share one wall are drawn once ("and 2 more"), and the earliest and latest
    linear-scaling ends of the others fill the chart."""
    thresholds = pl.DataFrame(
        {
            "series_id": [f"{i:016d}" for i in range(3)],
            "hardware": ["a100", "b100", "c100"],
            "scaling": ["dense"] * 3,
            "batch_law": ["critical"] * 3,
            "wall_flop": [5e31] * 3,
            "linear_end_flop": [2e28, 1e27, 3e29],
            "end_reason": ["wall"] * 3,
        }
    )
    figure = observed_frontier_figure(_observed(), None, thresholds)
    assert _walls_drawn(figure) == {5e31}
    texts = _limit_texts(figure)
    assert any("and 2 more" in t for t in texts), texts
    assert any(t.startswith("earliest linear end: b100") for t in texts), texts
    assert any(t.startswith("latest linear end: c100") for t in texts), texts


def test_observed_chart_years_are_whole() -> None:
    """The observed chart's year axis reads whole calendar years (2018, 2020), never 2017.5."""
    thresholds, _ = sweep(1, ("critical",))
    thresholds = thresholds.with_columns(
        linear_end_flop=pl.col("wall_flop") / 100, end_reason=pl.lit("wall")
    )
    observed = pl.DataFrame(
        {
            "publication_year": [2016.4, 2026.0, 2035.9],
            "training_flop": [1e17, 1e22, 1e26],
            "frontier": [True, True, True],
        }
    )
    figure = observed_frontier_figure(observed, None, thresholds)
    figure.canvas.draw()
    labels = [t.get_text() for t in figure.axes[0].get_xticklabels() if t.get_text()]
    assert labels
    assert all(re.fullmatch(r"\d{4}", label) for label in labels), labels


def test_trends_chart_names_each_gpu_once_in_a_legend_not_at_its_points() -> None:
    """The trends chart writes no GPU name beside a point (crowded releases covered each
    other); each shipped GPU has a marker named once in the figure's legend."""
    trends = catalog_trends(shipped_catalog(), n_resamples=20)
    table = pl.DataFrame(pl.from_arrow(trend_rows(trends, Provenance(run_id="t"))))
    points = {m: [(p.gpu, p.year, p.value) for p in pts] for m, pts in trends.points.items()}
    figure = trends_figure(table, points)
    assert [t.get_text() for ax in figure.axes for t in ax.texts] == []
    named = [t.get_text() for legend in figure.legends for t in legend.texts]
    shipped = [entry.gpu for entry in shipped_catalog().entries]
    assert sorted(named) == sorted(shipped)
