"""The catalog of accelerator generations: accelerators.csv and its loader.

- metrics: the metrics, their CSV names (human units) and SI names, and which presets hold
- load: the CSV -> Catalog (SI units, a source per value), given the presets it names
"""

from pipeline.catalog.load import Catalog, CatalogError, Entry, Value, parse_catalog
from pipeline.catalog.metrics import METRICS, Metric

__all__ = ["METRICS", "Catalog", "CatalogError", "Entry", "Metric", "Value", "parse_catalog"]
