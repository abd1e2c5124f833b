"""accelerators.csv -> Catalog: every accelerator generation's metrics in SI units, with sources.

The CSV is tidy: one row per (gpu, metric, value, source). Two metrics are not numbers:
`release_date` (YYYY-MM-DD) and `preset`, the conf/hardware/ file that holds that GPU's
numbers. A GPU with a preset takes every metric a preset holds (`Metric.from_preset`) from the
preset, loaded by the caller through the schema like any run
(`pipeline.schema.projected.shipped_catalog`); the CSV then gives only what presets do not hold
(release date, TDP). A CSV row repeating a preset-held metric is an error: one source of truth
per number (docs/trends.md).

Every row's source is a document (title, and URL where one is known) or starts with
"ASSUMPTION:" and gives the reasoning; an empty source is an error.
"""

from __future__ import annotations

import csv
import datetime as dt
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources

from pipeline.catalog.metrics import BY_CSV_NAME, EPOCH_NAME, METRICS, PRESET, RELEASE_DATE
from pipeline.model.records.hardware import HardwareSpec

CATALOG_FILE = "accelerators.csv"
PODS_FILE = "pods.csv"
"""Accelerators kept out of the trend fits (TPU pods, whose ICI domain of thousands of chips is
not an NVLink domain), in the same format; read by the reality check (docs/sources.md)."""
COLUMNS = ("gpu", "metric", "value", "source")
ASSUMPTION = "ASSUMPTION:"


class CatalogError(ValueError):
    """The catalog file is malformed (one line: which row and what is wrong)."""


@dataclass(frozen=True, slots=True)
class Value:
    """One metric of one GPU in SI units, and where it comes from."""

    value: float
    source: str
    """A document title and URL, "ASSUMPTION: <reasoning>", or the preset file it was read from."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One accelerator generation."""

    gpu: str
    release_date: dt.date
    release_source: str
    preset: str | None
    """The conf/hardware/ preset holding its numbers, or None."""
    values: Mapping[str, Value] = field(default_factory=dict)
    """Metric name (`pipeline.catalog.metrics.METRICS`) -> value; absent where not known."""
    epoch_name: str | None = None
    """Its `Hardware name` in Epoch AI's hardware data, or None."""

    @property
    def release_year(self) -> float:
        """The release date as a fractional calendar year (2022-09-20 -> 2022.718)."""
        return fractional_year(self.release_date)


@dataclass(frozen=True, slots=True)
class Catalog:
    """Every entry, in file order."""

    entries: tuple[Entry, ...]

    def entry(self, gpu: str) -> Entry:
        """The entry named `gpu`; KeyError if absent."""
        for e in self.entries:
            if e.gpu == gpu:
                return e
        raise KeyError(gpu)

    def by_preset(self, preset: str) -> Entry | None:
        """The entry whose numbers the hardware preset `preset` holds, if any."""
        return next((e for e in self.entries if e.preset == preset), None)

    @property
    def first_year(self) -> float:
        """The earliest release, as a fractional year."""
        return min(e.release_year for e in self.entries)


def fractional_year(date: dt.date) -> float:
    """year + (day of year − 1) / days in that year: 2016-01-01 -> 2016.0."""
    days = (dt.date(date.year + 1, 1, 1) - dt.date(date.year, 1, 1)).days
    return date.year + (date.timetuple().tm_yday - 1) / days


def catalog_text() -> str:
    """The shipped accelerators.csv (package data of pipeline.catalog)."""
    return resources.files("pipeline.catalog").joinpath(CATALOG_FILE).read_text("utf-8")


def pods_text() -> str:
    """The shipped pods.csv (package data of pipeline.catalog)."""
    return resources.files("pipeline.catalog").joinpath(PODS_FILE).read_text("utf-8")


def _rows(text: str) -> list[dict[str, str]]:
    reader = csv.DictReader(text.splitlines())
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise CatalogError(f"columns must be {', '.join(COLUMNS)}; got {reader.fieldnames}")
    rows = []
    for line, row in enumerate(reader, start=2):
        if any(row.get(c) in (None, "") for c in COLUMNS):
            raise CatalogError(f"line {line}: every row needs gpu, metric, value and source")
        source = row["source"].strip()
        if source.upper().startswith("ASSUMPTION") and not source.startswith(ASSUMPTION):
            raise CatalogError(f"line {line}: write assumptions as '{ASSUMPTION} <reasoning>'")
        if source == ASSUMPTION:
            raise CatalogError(f"line {line}: an ASSUMPTION needs its reasoning")
        rows.append({**row, "line": str(line)})
    return rows


def _number(row: Mapping[str, str]) -> float:
    try:
        value = float(row["value"])
    except ValueError:
        raise CatalogError(
            f"line {row['line']}: {row['metric']} = {row['value']!r} is not a number"
        ) from None
    if not (math.isfinite(value) and value > 0):
        raise CatalogError(
            f"line {row['line']}: {row['metric']} = {value} must be positive and finite"
        )
    return value


def _entry(gpu: str, rows: list[dict[str, str]], presets: Mapping[str, HardwareSpec]) -> Entry:
    by_metric: dict[str, dict[str, str]] = {}
    for row in rows:
        if row["metric"] in by_metric:
            raise CatalogError(f"line {row['line']}: {gpu} has {row['metric']} twice")
        if row["metric"] not in (*BY_CSV_NAME, RELEASE_DATE, PRESET, EPOCH_NAME):
            allowed = ", ".join([RELEASE_DATE, PRESET, EPOCH_NAME, *BY_CSV_NAME])
            raise CatalogError(
                f"line {row['line']}: unknown metric {row['metric']!r}; allowed: {allowed}"
            )
        by_metric[row["metric"]] = row
    if RELEASE_DATE not in by_metric:
        raise CatalogError(f"{gpu}: no {RELEASE_DATE} row")
    date_row = by_metric[RELEASE_DATE]
    try:
        release = dt.date.fromisoformat(date_row["value"])
    except ValueError:
        raise CatalogError(f"line {date_row['line']}: release_date must be YYYY-MM-DD") from None
    preset = by_metric[PRESET]["value"] if PRESET in by_metric else None
    values: dict[str, Value] = {}
    if preset is not None:
        if preset not in presets:
            raise CatalogError(f"line {by_metric[PRESET]['line']}: no hardware preset {preset!r}")
        spec = presets[preset]
        for metric in METRICS:
            if metric.from_preset is None:
                continue
            if metric.csv_name in by_metric:
                line = by_metric[metric.csv_name]["line"]
                raise CatalogError(
                    f"line {line}: {gpu} takes {metric.csv_name} from preset {preset}; "
                    "a number has one source (remove the row or the preset)"
                )
            held = metric.from_preset(spec)
            if held is not None:
                values[metric.name] = Value(held, f"conf/hardware/{preset}.yaml")
    for metric in METRICS:
        if metric.csv_name in by_metric:
            row = by_metric[metric.csv_name]
            values[metric.name] = Value(metric.to_si(_number(row)), row["source"])
    epoch_name = by_metric[EPOCH_NAME]["value"] if EPOCH_NAME in by_metric else None
    return Entry(gpu, release, date_row["source"], preset, values, epoch_name)


def parse_catalog(text: str, presets: Mapping[str, HardwareSpec]) -> Catalog:
    """The Catalog of a CSV text; `presets` maps preset names to their loaded HardwareSpec."""
    grouped: dict[str, list[dict[str, str]]] = {}
    for row in _rows(text):
        grouped.setdefault(row["gpu"], []).append(row)
    entries = tuple(_entry(gpu, rows, presets) for gpu, rows in grouped.items())
    if not entries:
        raise CatalogError("the catalog has no entries")
    check_distinct(entries)
    return Catalog(entries)


def check_distinct(entries: tuple[Entry, ...]) -> None:
    """CatalogError when two entries name one accelerator: the same name but for case and
    spaces, the same hardware preset, or the same Epoch AI name (each would count one GPU
    twice in the trend fits, and `Catalog.by_preset` would see only the first)."""
    seen: dict[tuple[str, str], str] = {}
    for entry in entries:
        keys = [("name", entry.gpu.strip().lower().replace(" ", "_"))]
        keys += [("preset", entry.preset)] if entry.preset is not None else []
        keys += [("Epoch AI name", entry.epoch_name)] if entry.epoch_name is not None else []
        for kind, value in keys:
            other = seen.setdefault((kind, value), entry.gpu)
            if other != entry.gpu:
                raise CatalogError(
                    f"{entry.gpu} and {other} name the same accelerator ({kind} {value!r}); "
                    "keep one entry"
                )


def preset_names(text: str) -> list[str]:
    """The hardware presets a catalog text refers to, in order."""
    return [row["value"] for row in _rows(text) if row["metric"] == PRESET]
