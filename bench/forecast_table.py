"""The forecast tables of docs/sources.md §9 and docs/trends.md §4, regenerated from the data.

Run: `.venv/bin/python bench/forecast_table.py` (a few minutes: the moving frontier evaluates
each series on H100 projected to every year 2024-2040). Prints Markdown: a line naming the
sources and their snapshot dates, the fitted trajectory, then the forecast years (median and
5th-95th percentile) of the fitted and the hand-set 4x and 5x trajectories, on frozen and on
moving hardware. Default: H100 SXM, dense, every batch law (docs/sources.md §9);
`--trends`: H100 SXM, dense and sparse, critical batch (docs/trends.md §4, whose table
`tests/test_docs_trends.py` compares with `trends_table()`). Other arguments are dmlimits
overrides (e.g. `sources=live`, `forecast.fitted.rule=top_n`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import pipeline
from pipeline.forecast.text import forecast_markdown

MOVING_YEARS = (
    "forecast.moving_frontier_years=[2024,2025,2026,2027,2028,2029,2030,2031,2032,2033,2034,"
    "2035,2036,2037,2038,2039,2040]"
)
OVERRIDES = (
    "hardware=h100_sxm",
    "scaling=dense",
    "+sweep.choices.batch=[critical,constant,deepseek,zhang2024]",
    MOVING_YEARS,
)
"""docs/sources.md §9: H100 SXM, dense, every batch law."""
TRENDS_OVERRIDES = (
    "hardware=h100_sxm",
    "batch=critical",
    "+sweep.choices.scaling=[dense,sparse]",
    MOVING_YEARS,
)
"""docs/trends.md §4: H100 SXM, dense and sparse, critical batch."""


def table_lines(overrides: Sequence[str]) -> list[str]:
    """The sources line, the fitted trajectory line and the forecast table of a run."""
    result = pipeline.run(list(overrides))
    sources = getattr(result, "sources", None)  # the `sources` table, where the API returns it
    forecasts = result.forecasts
    lines = []
    if sources is not None:
        dated = ", ".join(
            f"{row['source']} {row['location']} (snapshot {row['snapshot_date']}, newest "
            f"{row['newest_date']}{', STALE' if row['stale'] else ''})"
            for row in sources.iter_rows(named=True)
        )
        lines += [f"Sources: {dated}.", ""]
    as_of = forecasts["data_as_of"].drop_nulls()
    fitted = forecasts.filter(forecasts["trajectory"] == "fitted").head(1)
    if len(fitted):
        row = fitted.row(0, named=True)
        lines += [
            f"Fitted frontier (the envelope of the largest runs): "
            f"{row['growth_per_year']:.2f}x per year "
            f"({row['growth_per_year_low']:.2f}-{row['growth_per_year_high']:.2f}, 90%), "
            f"data as of {as_of[0] if len(as_of) else '-'}.",
            "",
        ]
    rows = [{**r, "passed_by_run_date": None} for r in forecasts.to_dicts()]  # dated by its data
    return lines + forecast_markdown(rows, moving_frontier=True).splitlines()


def trends_table() -> list[str]:
    """docs/trends.md §4's table, on the shipped snapshots."""
    return table_lines(TRENDS_OVERRIDES)


def main(argv: list[str]) -> None:
    if argv[:1] == ["--trends"]:
        print("\n".join(table_lines([*TRENDS_OVERRIDES, *argv[1:]])))
        return
    print("\n".join(table_lines([*OVERRIDES, *argv])))


if __name__ == "__main__":
    main(sys.argv[1:])
