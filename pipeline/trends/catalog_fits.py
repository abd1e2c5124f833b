"""The trend of every catalog metric, and the published trends it is compared with.

`catalog_trends` fits each metric of `pipeline.catalog.METRICS` that has at least two points in
different years (`fit.fit_trend`); a metric with fewer has no fit, and projecting it needs an
explicit growth factor.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pipeline.catalog import METRICS, Catalog
from pipeline.identity import catalog_hash
from pipeline.trends.fit import N_BOOTSTRAP, SEED, TrendFit, fit_trend

GHOLAMI_PER_TWO_YEARS: Mapping[str, float] = {
    "dense_16bit_flop_per_s": 3.0,
    "hbm_bandwidth_bytes_per_s": 1.6,
    "intra_node_bandwidth_bytes_per_s": 1.4,
    "inter_node_bandwidth_bytes_per_s": 1.4,
}
"""Gholami et al., *AI and Memory Wall* (arXiv:2403.14123, 2024), Fig. 1: peak FLOP/s 3.0x,
DRAM bandwidth 1.6x and interconnect bandwidth 1.4x per two years over about twenty years.
Their interconnect series is compared with both our network levels."""


@dataclass(frozen=True, slots=True)
class TrendPoint:
    """One catalog value on a trend."""

    gpu: str
    year: float
    value: float


@dataclass(frozen=True, slots=True)
class CatalogTrends:
    """The fits of one catalog, and the points they were fitted on."""

    points: Mapping[str, tuple[TrendPoint, ...]]
    """Metric -> its catalog points, in catalog order (every metric, possibly empty)."""
    fits: Mapping[str, TrendFit]
    """Metric -> fit, for the metrics with at least two points in different years."""
    first_year: float
    """The catalog's earliest release (fractional year)."""
    catalog_hash: str
    """sha256 of every (gpu, metric, year, value): changes when an entry or a value does."""
    seed: int = SEED
    n_resamples: int = N_BOOTSTRAP


def _values(
    points: Mapping[str, tuple[TrendPoint, ...]],
) -> dict[str, list[tuple[str, float, float]]]:
    """(gpu, release year, value) of every point, by metric: what the catalog's hash covers."""
    return {m: [(p.gpu, p.year, p.value) for p in pts] for m, pts in points.items()}


def catalog_trends(
    catalog: Catalog, seed: int = SEED, n_resamples: int = N_BOOTSTRAP
) -> CatalogTrends:
    """Fit every metric of the catalog."""
    points = {
        m.name: tuple(
            TrendPoint(e.gpu, e.release_year, e.values[m.name].value)
            for e in catalog.entries
            if m.name in e.values
        )
        for m in METRICS
    }
    fits = {}
    for name, pts in points.items():
        if len({p.year for p in pts}) >= 2:
            fits[name] = fit_trend(
                [p.year for p in pts], [p.value for p in pts], n_resamples=n_resamples, seed=seed
            )
    return CatalogTrends(
        points, fits, catalog.first_year, catalog_hash(_values(points)), seed, n_resamples
    )
