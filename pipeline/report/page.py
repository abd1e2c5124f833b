"""The report's index.html: the charts, the thresholds and forecasts tables, the latest changes.

Self-contained: inline CSS, no script, no external resource. Images are referenced by file name
beside the page, or embedded as data: URIs (`embed=True`) for a single file to send around.
"""

from __future__ import annotations

import base64
import dataclasses
import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from pipeline.forecast.text import null_threshold_text, trajectory_text, year_text
from pipeline.model.records.results import SeriesLimits
from pipeline.report.markdown import markdown_html
from pipeline.report.reality_table import reality_section

THRESHOLD_COLUMNS = (
    ("linear_end_flop", "linear-scaling end (FLOP)"),
    ("linear_end_basis", "measured against"),
    ("last_feasible_flop", "last feasible (FLOP)"),
    ("wall_flop", "wall (FLOP)"),
    ("end_reason", "ended by"),
    ("max_utilization", "max utilization"),
    ("t_crit_flop", "T_crit (FLOP)"),
    ("t_limit_flop", "T_limit (FLOP)"),
)
FORECAST_COLUMNS = (
    ("linear_end_year", "linear-scaling end"),
    ("moving_linear_end_year", "linear-scaling end, moving hardware"),
    ("wall_year", "wall"),
    ("moving_wall_year", "wall, moving hardware"),
    ("t_crit_year", "T_crit"),
    ("t_limit_year", "T_limit"),
)
"""Forecast years shown: median (5th-95th percentile), frozen and moving hardware."""
ENDED_BY = {
    "wall": "an infeasible size",
    "utilization_collapse": "utilization < 0.001",
    "end_of_grid": "the grid's end",
    "cluster_cap": "the search's cluster cap",
    "run": "a concrete run (no grid)",
}
"""`thresholds.end_reason` in the page's words."""
STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1240px; color: #222; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0 1.5em; }
table { border-collapse: collapse; margin: 0.5em 0 2em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
caption { text-align: left; font-style: italic; padding-bottom: 0.3em; }
"""


WHY_NULL = ("linear_end_flop", "last_feasible_flop", "wall_flop")
"""Thresholds whose null cell says why, as the forecasts do (`null_threshold_text`)."""


def _cell(column: str, value: object, row: dict[str, object]) -> str:
    if value is None:
        if column not in WHY_NULL or row.get("end_reason") is None:
            return "–"
        given: dict[str, Any] = {f.name: row.get(f.name) for f in dataclasses.fields(SeriesLimits)}
        limits = SeriesLimits(**given)
        text = null_threshold_text(column, limits)
        return "–" if text is None else html.escape(text)
    if column == "end_reason":
        text = ENDED_BY.get(str(value), str(value))
        if row.get("wall_reason") == "exceeds_power_budget":
            text = "the power budget"
        return html.escape(text)
    if isinstance(value, float):
        if column.endswith("_flop"):
            return f"{value:.2e}"
        if column.endswith("_year"):
            return f"{value:.1f}"
        if column == "growth_per_year":
            return f"{value:.3g}×"
        return f"{value:.3f}"
    return html.escape(str(value))


def _html_table(
    frame: pl.DataFrame, labels: dict[str, str], columns: Sequence[tuple[str, str]], caption: str
) -> str:
    head = "".join(f"<th>{html.escape(title)}</th>" for _, title in columns)
    body = "\n".join(
        f"<tr><td>{html.escape(labels.get(row['series_id'], row['series_id']))}</td>"
        + "".join(f"<td>{_cell(c, row.get(c), row)}</td>" for c, _ in columns)
        + "</tr>"
        for row in frame.iter_rows(named=True)
    )
    return (
        f"<table><caption>{html.escape(caption)}</caption>\n"
        f"<tr><th>series</th>{head}</tr>\n{body}\n</table>"
    )


def _forecast_table(forecasts: pl.DataFrame, labels: dict[str, str], moving_frontier: bool) -> str:
    """Forecast years per series and trajectory, with intervals and "already passed"."""
    head = "".join(f"<th>{html.escape(title)}</th>" for _, title in FORECAST_COLUMNS)
    ordered = forecasts.sort("hardware", "scaling", "batch_law", "growth_per_year")
    body = "\n".join(
        f"<tr><td>{html.escape(labels.get(row['series_id'], row['series_id']))}</td>"
        f"<td>{html.escape(trajectory_text(row))}</td>"
        + "".join(
            f"<td>{html.escape(year_text(row, c, moving_frontier))}</td>"
            for c, _ in FORECAST_COLUMNS
        )
        + "</tr>"
        for row in ordered.iter_rows(named=True)
    )
    as_of = forecasts["data_as_of"].drop_nulls() if "data_as_of" in forecasts.columns else None
    data = f", data as of {as_of[0]}" if as_of is not None and len(as_of) else ""
    on = forecasts["forecast_date"].drop_nulls() if "forecast_date" in forecasts.columns else None
    run = f", run date {on[0]} (a year before it: passed)" if on is not None and len(on) else ""
    caption = (
        "Year frontier training compute reaches each limit: median (5th-95th percentile: a "
        "prediction interval over the fit's bootstrap lines, the largest run's scatter below "
        f"each included){data}{run}; a hand-set trajectory has no interval."
    )
    return (
        f"<table><caption>{html.escape(caption)}</caption>\n"
        f"<tr><th>series</th><th>trajectory</th>{head}</tr>\n{body}\n</table>"
    )


def _image(path: Path, alt: str, embed: bool) -> str:
    if embed:
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        src = f"data:image/png;base64,{data}"
    else:
        src = html.escape(path.name)
    return f'<img src="{src}" alt="{html.escape(alt)}">'


def render_page(
    title: str,
    images: Sequence[tuple[Path, str]],
    thresholds: pl.DataFrame,
    forecasts: pl.DataFrame | None,
    labels: dict[str, str],
    embed: bool = False,
    *,
    moving_frontier: bool = False,
    changes: str | None = None,
    reality: pl.DataFrame | None = None,
) -> str:
    """The whole page: a heading, each (PNG, caption), the thresholds and forecasts tables,
    the reality check's contradictions (`reality_table`) and the latest change report (its
    Markdown rendered, `markdown.markdown_html`) when there are."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    for path, caption in images:
        parts += [f"<h2>{html.escape(caption)}</h2>", _image(path, caption, embed)]
    parts += [
        "<h2>Thresholds</h2>",
        _html_table(
            thresholds.sort("hardware", "scaling", "batch_law"),
            labels,
            THRESHOLD_COLUMNS,
            "Per series: simulated limits (spec §11) and Model B closed forms (spec §12); "
            "the linear-scaling end is measured against u_eff (the paper) or the series' own "
            "peak utilization (from which it stays below); the wall is the first infeasible "
            "size, or the size where utilization collapsed (none where every size ran or the "
            "search's cluster cap ended the series, as the forecasts say it); – where not reached.",
        ),
    ]
    if forecasts is not None:
        parts += ["<h2>Forecasts</h2>", _forecast_table(forecasts, labels, moving_frontier)]
    if reality is not None:
        parts += reality_section(reality)
    if changes is not None:
        parts += ["<h2>Latest change report</h2>", markdown_html(changes)]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
