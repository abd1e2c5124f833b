"""The `trends` table: one row per catalog metric, written and read (`columns.TRENDS_SCHEMA`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.catalog import METRICS
from pipeline.io.columns import TRENDS_SCHEMA
from pipeline.io.parquet import PART_NAME, write_unpartitioned_part
from pipeline.io.rows import Provenance, config_hash, table_from_rows
from pipeline.trends.catalog_fits import GHOLAMI_PER_TWO_YEARS, CatalogTrends
from pipeline.trends.fit import CONFIDENCE

if TYPE_CHECKING:
    import polars as pl

TABLE = "trends"
UNITS = {
    "dense_16bit_flop_per_s": "FLOP/s",
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
    return write_unpartitioned_part(
        root, TABLE, trend_rows(trends, provenance), trends.catalog_hash
    )


def _is_trends_part(path: Path) -> bool:
    """Whether a file opens as Parquet with exactly the trends columns and types."""
    try:
        stored = pq.read_schema(path)
    except (OSError, ValueError):
        return False
    return bool(stored.remove_metadata().equals(TRENDS_SCHEMA, check_metadata=False)) or [
        (f.name, f.type) for f in stored
    ] == [(f.name, f.type) for f in TRENDS_SCHEMA]


def read_trends(root: Path | str) -> pl.DataFrame | None:
    """The trends table under ROOT (every part, sorted by metric), or None when it has none."""
    folder = Path(root) / TABLE
    files = [
        path
        for path in (sorted(folder.iterdir()) if folder.is_dir() else [])
        if PART_NAME.fullmatch(path.name) and _is_trends_part(path)
    ]  # a literal listing: no glob, no copied or foreign file
    if not files:
        return None
    import polars as pl  # deferred: a run that only writes does not pay its import

    return pl.read_parquet([str(f) for f in files]).sort("catalog_hash", "metric")
