"""conf/hardware/projected.yaml -> HardwareSpec: a catalog GPU projected to another year.

The node names a base preset, a year, an optional catalog file and per-metric growth
overrides; the trends come from the catalog's fits (`pipeline.trends`). Every rejection is a
one-line ConfigError, as for any hardware node.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from pathlib import Path

from pipeline.catalog.load import Catalog, CatalogError, catalog_text, parse_catalog, preset_names
from pipeline.model.records.hardware import HardwareSpec, peak_flop_per_s
from pipeline.schema import bounds
from pipeline.schema.compose import compose_group_options
from pipeline.schema.errors import MISSING, ConfigError, InputError
from pipeline.schema.gpu import gpu_from_config
from pipeline.schema.section import Section
from pipeline.schema.yaml_bounds import read_utf8
from pipeline.trends.catalog_fits import CatalogTrends, catalog_trends
from pipeline.trends.project import PROJECTED_METRICS, project_hardware

PROJECTED_KEYS = frozenset({"name", "base", "year", "catalog", "growth_per_year"})
"""The keys of a projected hardware node; `growth_per_year` holds one key per projected metric."""
GROWTH_KEYS = frozenset(PROJECTED_METRICS)


_PRESETS: dict[str, HardwareSpec] = {}
"""The GPU presets composed so far in this process, by name (`preset_specs`)."""


def preset_specs(names: Sequence[str]) -> dict[str, HardwareSpec]:
    """The GPU presets `names` (conf/hardware/<name>.yaml), each composed alone with its
    defaults list (`compose.compose_group_options`, the node a run's root config holds; those
    not composed yet in one composition) and validated as a run would (cached per process)."""
    missing = [name for name in dict.fromkeys(names) if name not in _PRESETS]
    if missing:
        nodes = compose_group_options("hardware", missing)
        _PRESETS.update({name: gpu_from_config(nodes[name]) for name in missing})
    return {name: _PRESETS[name] for name in names}


def preset_spec(name: str) -> HardwareSpec:
    """The GPU preset `name` (`preset_specs`)."""
    return preset_specs([name])[name]


def catalog_from_text(text: str) -> Catalog:
    """A catalog CSV text with the presets it names loaded from conf/hardware/."""
    return parse_catalog(text, preset_specs(preset_names(text)))


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

    def project(at: float) -> HardwareSpec | None:
        try:
            return project_hardware(
                preset_spec(base), entry.release_year, at, growth, projected_name(name, base, at)
            )
        except (OverflowError, ZeroDivisionError):  # float ** overflows rather than giving inf
            return None

    spec = project(year)
    past = "a metric overflows float range" if spec is None else past_bounds(spec)
    if spec is None or past is not None:
        latest = latest_year_in_bounds(project, first, year)
        nearest = "" if latest is None else f"; the projection stays in bounds up to {latest}"
        raise ConfigError(
            hw.key("year"),
            year,
            f"projects the hardware past the schema's bounds ({past}, "
            f"pipeline/schema/bounds.py){nearest}; or give growth factors nearer 1",
        )
    return spec


def past_bounds(spec: HardwareSpec) -> str | None:
    """The first projected quantity past its bound in `pipeline.schema.bounds` (or not
    positive and finite), in words; None when all are within them, as a preset's must be.
    The clock and the L2 bandwidth carry the FLOP/s trend (`project_hardware`), so the peak
    FLOP/s bounds them."""
    checks = [
        ("peak FLOP/s", peak_flop_per_s(spec), bounds.MAX_FLOP_PER_S),
        ("HBM bandwidth (B/s)", spec.hbm_bandwidth_bytes_per_s, bounds.MAX_BANDWIDTH_BYTES_PER_S),
        ("HBM (bytes)", spec.hbm_bytes, bounds.MAX_MEMORY_BYTES),
        ("L2 (bytes)", spec.l2_bytes, bounds.MAX_MEMORY_BYTES),
        *(
            ("network bandwidth (B/s)", b, bounds.MAX_BANDWIDTH_BYTES_PER_S)
            for b in spec.net_bandwidth_bytes_per_s
            if b != math.inf  # an infinite network level is allowed, as in a preset
        ),
        *(("network latency (s)", t, bounds.MAX_LATENCY_S) for t in spec.net_latency_s),
    ]
    for what, value, bound in checks:
        if not 0.0 < value <= bound:
            return f"{what} {value:.3g}, bound {bound:.3g}"
    return None


def latest_year_in_bounds(
    project: Callable[[float], HardwareSpec | None], first: float, year: float
) -> int | None:
    """The latest whole year from `first` to `year` whose projection is within the bounds
    (each metric grows or shrinks monotonically with the year), or None if none is."""

    def fits(at: float) -> bool:
        spec = project(at)
        return spec is not None and past_bounds(spec) is None

    low, high = math.floor(first), math.floor(year)
    if not fits(low):
        return None
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low
