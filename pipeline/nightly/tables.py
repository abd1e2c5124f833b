"""The tables of one dated partition, through the one dataset reader (`pipeline.io.read`), and
the rows of them the change report and dmlimits-report compare and draw: the first fitted
`forecasts` row (`fitted_row`) and the `observed_runs` rows of its fit (`runs_of_fit`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from pipeline.forecast.paths import FITTED
from pipeline.io import read

FIT_HASH = "fit_hash"
"""The column naming the fit of an `observed_runs` row and of a `forecasts` row (version 16)."""


def read_table(
    directory: Path, table_name: str, columns: Sequence[str] | None = None
) -> pl.DataFrame | None:
    """One table of a dataset directory, sorted, or None when it has no readable part.

    Parts the reader refuses are left out (a nightly partition holds only what its run wrote).
    """
    return read.read_table(directory, table_name, columns).frame


def fitted_row(forecasts: pl.DataFrame | None) -> dict[str, Any] | None:
    """The first `forecasts` row of the fitted trajectory, or None (no fit, or version 2 rows)."""
    if forecasts is None or "trajectory" not in forecasts.columns:
        return None
    rows = forecasts.filter(pl.col("trajectory") == FITTED).head(1).to_dicts()
    return rows[0] if rows else None


def runs_of_fit(observed: pl.DataFrame, forecasts: pl.DataFrame | None) -> pl.DataFrame:
    """The `observed_runs` rows the fitted trajectory of `forecasts` (`fitted_row`) was fitted
    to: those of its `fit_hash`. A root holds one part per fit (runs into it with other
    `forecast.fitted` settings keep theirs), so its runs repeat and `frontier` differs between
    fits. Every row when the fitted row names no fit (no fit drawn, rows before version 16) or
    no row has its fit."""
    row = fitted_row(forecasts)
    fit = None if row is None else row.get(FIT_HASH)
    if fit is None or FIT_HASH not in observed.columns:
        return observed
    own = observed.filter(pl.col(FIT_HASH) == fit)
    return own if own.height else observed
