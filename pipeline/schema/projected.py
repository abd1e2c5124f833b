"""conf/hardware/projected.yaml -> HardwareSpec: a catalog GPU projected to another year.

The node names a base preset, a year, an optional catalog file and per-metric growth
overrides; the trends come from the catalog's fits (`pipeline.trends`). Every rejection is a
one-line ConfigError, as for any hardware node.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

from pipeline.catalog.load import Catalog, CatalogError, catalog_text, parse_catalog, preset_names
from pipeline.model.records.hardware import HardwareSpec
from pipeline.schema import bounds
from pipeline.schema.compose import compose_config
from pipeline.schema.errors import MISSING, ConfigError, InputError
from pipeline.schema.gpu import gpu_from_config
from pipeline.schema.section import Section
from pipeline.schema.yaml_bounds import read_utf8
from pipeline.trends.catalog_fits import CatalogTrends, catalog_trends
from pipeline.trends.project import PROJECTED_METRICS, project_hardware

PROJECTED_KEYS = frozenset({"name", "base", "year", "catalog", "growth_per_year"})
"""The keys of a projected hardware node; `growth_per_year` holds one key per projected metric."""
GROWTH_KEYS = frozenset(PROJECTED_METRICS)


@functools.cache
def preset_spec(name: str) -> HardwareSpec:
    """The GPU preset `name` (conf/hardware/<name>.yaml), composed and validated as a run would
    (cached per process)."""
    return gpu_from_config(compose_config([f"hardware={name}"]).hardware)


def catalog_from_text(text: str) -> Catalog:
    """A catalog CSV text with the presets it names loaded from conf/hardware/."""
    return parse_catalog(text, {name: preset_spec(name) for name in preset_names(text)})


@functools.cache
def shipped_catalog() -> Catalog:
    """The catalog shipped with the package (pipeline/catalog/accelerators.csv), cached."""
    return catalog_from_text(catalog_text())


def read_catalog(path: Path) -> Catalog:
    """A catalog CSV at `path` (a user's own), its presets from conf/hardware/: UTF-8, with or
    without a byte-order mark; another encoding is a one-line CatalogError (`read_utf8`)."""
    try:
        text = read_utf8(path)
    except InputError as err:
        raise CatalogError(str(err)) from None
    return catalog_from_text(text)


@functools.cache
def catalog_and_trends(path: str | None) -> tuple[Catalog, CatalogTrends]:
    """The catalog (shipped, or the CSV at `path`) and its fits, cached per process."""
    catalog = shipped_catalog() if path is None else read_catalog(Path(path))
    return catalog, catalog_trends(catalog)


def projected_name(name: str, base: str, year: float) -> str:
    """projected_<base>_<year>, e.g. projected_h100_sxm_2030 (the series' hardware name)."""
    return f"{name}_{base}_{year:g}"


def projected_from_config(data: object, path: str) -> HardwareSpec:
    """The HardwareSpec of a projected hardware node (see conf/hardware/projected.yaml)."""
    hw = Section(data, path, PROJECTED_KEYS)
    name = hw.string("name")
    base = hw.string("base")
    year = hw.number("year", "calendar year", minimum=None, maximum=bounds.MAX_YEAR)
    catalog_path = hw.raw("catalog", "null or a path to an accelerators.csv")
    if catalog_path is not None and not isinstance(catalog_path, str):
        raise ConfigError(hw.key("catalog"), catalog_path, "must be null or a path to a CSV file")
    try:
        catalog, trends = catalog_and_trends(catalog_path)
    except (CatalogError, OSError) as err:
        raise ConfigError(hw.key("catalog"), catalog_path, f"cannot be read: {err}") from err
    presets = [e.preset for e in catalog.entries if e.preset is not None]
    entry = catalog.by_preset(base)
    if entry is None:
        raise ConfigError(
            hw.key("base"), base, f"must be a catalog GPU's preset: {', '.join(presets)}"
        )
    first = math.floor(catalog.first_year)
    if year < first:
        raise ConfigError(hw.key("year"), year, f"must be >= {first}, the catalog's first release")
    growth_node = hw.section("growth_per_year", GROWTH_KEYS)
    growth: dict[str, float] = {}
    for metric in PROJECTED_METRICS:
        override = (
            growth_node.optional_number(metric, "factor per year; 1 = flat")
            if growth_node.has(metric)
            else None
        )
        if override is not None:
            growth[metric] = override
        elif metric in trends.fits:
            growth[metric] = trends.fits[metric].growth_per_year
        else:
            raise ConfigError(
                growth_node.key(metric),
                MISSING,
                "the catalog has no trend for this metric (fewer than two releases hold it); "
                "give a growth factor per year",
            )
    projected = ("max_clock_hz", "hbm_bytes", "hbm_bandwidth_bytes_per_s", "l2_bytes")
    try:
        spec = project_hardware(
            preset_spec(base), entry.release_year, year, growth, projected_name(name, base, year)
        )
        in_range = all(0.0 < getattr(spec, field) < math.inf for field in projected)
    except (OverflowError, ZeroDivisionError):  # float ** overflows rather than giving inf
        in_range = False
    if not in_range:
        raise ConfigError(
            hw.key("year"),
            year,
            "projects the hardware out of float range (a metric's growth to that year "
            "overflows); a nearer year or growth factors nearer 1 stay in range",
        )
    return spec
