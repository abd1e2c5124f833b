"""The README's forecast table, regenerated from the data: H100 SXM, dense, every batch law.

Run: `.venv/bin/python bench/forecast_table.py` (a few minutes: the moving frontier evaluates
each series on H100 projected to every year 2024-2040). Prints Markdown: a line naming the
sources and their snapshot dates, then per batch law the fitted trajectory's years (median and
5th-95th percentile) and the hand-set 4x and 5x years, on frozen and on moving hardware.
Extra arguments are dmlimits overrides (e.g. `sources=live`, `forecast.fitted.rule=top_n`).
"""

from __future__ import annotations

import sys

import pipeline
from pipeline.forecast.text import forecast_markdown

OVERRIDES = (
    "hardware=h100_sxm",
    "scaling=dense",
    "+sweep.choices.batch=[critical,constant,deepseek,zhang2024]",
    "forecast.moving_frontier_years=[2024,2025,2026,2027,2028,2029,2030,2031,2032,2033,2034,2035,2036,2037,2038,2039,2040]",
)


def main(argv: list[str]) -> None:
    result = pipeline.run([*OVERRIDES, *argv])
    sources = getattr(result, "sources", None)  # the `sources` table, where the API returns it
    forecasts = result.forecasts
    if sources is not None:
        dated = ", ".join(
            f"{row['source']} {row['location']} (snapshot {row['snapshot_date']}, newest "
            f"{row['newest_date']}{', STALE' if row['stale'] else ''})"
            for row in sources.iter_rows(named=True)
        )
        print(f"Sources: {dated}.\n")
    as_of = forecasts["data_as_of"].drop_nulls()
    fitted = forecasts.filter(forecasts["trajectory"] == "fitted").head(1)
    if len(fitted):
        row = fitted.row(0, named=True)
        print(
            f"Fitted frontier (the envelope of the largest runs): "
            f"{row['growth_per_year']:.2f}x per year "
            f"({row['growth_per_year_low']:.2f}-{row['growth_per_year_high']:.2f}, 90%), "
            f"data as of {as_of[0] if len(as_of) else '-'}.\n"
        )
    rows = [{**r, "passed_by_run_date": None} for r in forecasts.to_dicts()]  # dated by its data
    print(forecast_markdown(rows, moving_frontier=True), end="")


if __name__ == "__main__":
    main(sys.argv[1:])
