"""The `trends` table: one row per catalog metric, written and read (`columns.TRENDS_SCHEMA`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from pipeline.catalog import METRICS
from pipeline.identity import config_hash
from pipeline.io.columns import TRENDS_SCHEMA
from pipeline.io.parquet import write_run_part
from pipeline.io.read import read_table
from pipeline.io.rows import Provenance, table_from_rows
from pipeline.trends.catalog_fits import GHOLAMI_PER_TWO_YEARS, CatalogTrends
from pipeline.trends.fit import CONFIDENCE

if TYPE_CHECKING:
    import polars as pl

TABLE = "trends"
UNITS = {
    "dense_16bit_flop_per_s": "FLOP/s",
    "dense_fp8_flop_per_s": "FLOP/s",
    "hbm_bandwidth_bytes_per_s": "B/s",
    "hbm_bytes": "B",
    "l2_bytes": "B",
    "intra_node_bandwidth_bytes_per_s": "B/s",
    "intra_node_gpus": "GPUs",
    "inter_node_bandwidth_bytes_per_s": "B/s",
    "network_latency_s": "s",
    "tdp_w": "W",
}
"""The SI unit of each metric's values, as written in `trends.unit`."""


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def trend_rows(trends: CatalogTrends, provenance: Provenance) -> pa.Table:
    """One row per metric of `pipeline.catalog.METRICS`, in that order."""
    rows: list[dict[str, Any]] = []
    for metric in METRICS:
        points = trends.points[metric.name]
        fit = trends.fits.get(metric.name)
        row: dict[str, Any] = {
            "metric": metric.name,
            "unit": UNITS[metric.name],
            "n_points": len(points),
            "gpus": ",".join(p.gpu for p in points),
            "first_release_year": min((p.year for p in points), default=None),
            "last_release_year": max((p.year for p in points), default=None),
            "gholami_growth_per_two_years": GHOLAMI_PER_TWO_YEARS.get(metric.name),
            "confidence": CONFIDENCE,
            "bootstrap_resamples": trends.n_resamples,
            "bootstrap_seed": trends.seed,
            "catalog_hash": trends.catalog_hash,
            "run_id": provenance.run_id,
            "config_hash": config_hash(
                {"catalog_hash": trends.catalog_hash, "metric": metric.name}
            ),
            "schema_version": int(provenance.schema_version),
            "dmlimits_version": provenance.dmlimits_version,
            "created_at": provenance.created_at,
        }
        if fit is not None:
            row |= {
                "growth_per_year": fit.growth_per_year,
                "growth_per_year_low": fit.growth_per_year_low,
                "growth_per_year_high": fit.growth_per_year_high,
                "growth_per_two_years": fit.growth_per_two_years,
                "doubling_time_years": _finite(fit.doubling_time_years),
                "reference_year": fit.reference_year,
                "value_at_reference": math.exp(fit.log_value_at_reference),
            }
        rows.append(row)
    return table_from_rows(rows, TRENDS_SCHEMA)


def write_trends(root: Path | str, trends: CatalogTrends, provenance: Provenance) -> Path:
    """Write the trends of one catalog as ROOT/trends/part-<catalog_hash>.parquet (atomic)."""
    return write_run_part(root, TABLE, trend_rows(trends, provenance))


def read_trends(root: Path | str) -> pl.DataFrame | None:
    """The trends table under ROOT (every readable part, sorted by catalog and metric), or None
    when it has none (`pipeline.io.read.read_table`)."""
    return read_table(Path(root), TABLE).frame
