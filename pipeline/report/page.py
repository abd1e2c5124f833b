"""The report's index.html: the charts, then the thresholds and forecasts tables.

Self-contained: inline CSS, no script, no external resource. Images are referenced by file name
beside the page, or embedded as data: URIs (`embed=True`) for a single file to send around.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

import polars as pl

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
    ("growth_per_year", "growth per year"),
    ("linear_end_year", "linear-scaling end"),
    ("last_feasible_year", "last feasible"),
    ("wall_year", "wall"),
    ("t_crit_year", "T_crit"),
    ("t_limit_year", "T_limit"),
    ("moving_linear_end_year", "linear-scaling end, moving"),
    ("moving_wall_year", "wall, moving"),
)
ENDED_BY = {
    "wall": "an infeasible size",
    "utilization_collapse": "utilization < 0.001",
    "end_of_grid": "the grid's end",
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


def _cell(column: str, value: object, row: dict[str, object]) -> str:
    if value is None:
        return "–"
    if column == "end_reason":
        text = ENDED_BY.get(str(value), str(value))
        if row.get("wall_reason") == "exceeds_power_budget":
            text = "the power budget"
        return html.escape(text)
    if isinstance(value, float):
        if column == "growth_per_year":
            return f"{value:g}×"
        if column.endswith("_flop"):
            return f"{value:.2e}"
        if column.endswith("_year"):
            base = row.get("base_year")
            if isinstance(base, float) and value < base:  # the threshold lies below base_flop
                return f"passed ({value:.1f})"
            return f"{value:.1f}"
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
) -> str:
    """The whole page: a heading, each (PNG, caption), the thresholds and forecasts tables."""
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
            "peak utilization; the wall is the first infeasible size, or the size where "
            "utilization collapsed; – where not reached.",
        ),
    ]
    if forecasts is not None:
        parts += [
            "<h2>Forecasts</h2>",
            _html_table(
                forecasts.sort("hardware", "scaling", "batch_law", "growth_per_year"),
                labels,
                FORECAST_COLUMNS,
                f"Year frontier training compute reaches each limit, from "
                f"{forecasts['base_flop'][0]:.1e} FLOP in {forecasts['base_year'][0]:g}; "
                "passed: the limit lies below that base (the year is the trajectory run "
                "backwards); moving: on each year's projected hardware.",
            ),
        ]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
