"""Epoch AI's CSV files -> observed training runs and accelerators, and the rows refused.

Columns are found by Epoch's own names (`RUN_COLUMNS`, `HARDWARE_COLUMNS`); the files hold many
more, in any order. A required column that is missing is a one-line `SourceError` naming the
source and the column (and the closest name present, when one is close: a renamed column).
Rows that cannot be used are never dropped silently: each becomes a `Reject` with its line and
reason, written to the `source_rejects` table.

Values are Epoch's: dates YYYY-MM-DD, numbers as Python floats (`4.64e+26`), empty cells for
unknown, `Frontier model` `True` or empty.
"""

from __future__ import annotations

import csv
import datetime as dt
import difflib
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from pipeline.sources.acquire import SourceError
from pipeline.sources.body import text_of
from pipeline.sources.bounds import (
    MetricSpan,
    compute_problem,
    date_problem,
    how_trained_problem,
    metric_problem,
)

MODEL = "Model"
ORGANIZATION = "Organization"
PUBLICATION_DATE = "Publication date"
TRAINING_COMPUTE = "Training compute (FLOP)"
CONFIDENCE = "Confidence"
FRONTIER_FLAG = "Frontier model"
DOMAIN = "Domain"
PARAMETERS = "Parameters"
TRAINING_HARDWARE = "Training hardware"
HARDWARE_QUANTITY = "Hardware quantity"
TRAINING_TIME = "Training time (hours)"
HARDWARE_UTILIZATION = "Hardware utilization"
BATCH_SIZE = "Batch size"
RUN_COLUMNS = (MODEL, PUBLICATION_DATE, TRAINING_COMPUTE)
"""Required in a frontier-runs source; every other column is optional (the `epoch_flag`
frontier rule needs Frontier model, `pipeline.forecast.observed`)."""
HOW_TRAINED_COLUMNS = (
    DOMAIN,
    PARAMETERS,
    TRAINING_HARDWARE,
    HARDWARE_QUANTITY,
    TRAINING_TIME,
    HARDWARE_UTILIZATION,
    BATCH_SIZE,
)
"""How each run was trained, read when present (docs/sources.md, "How each run was trained");
a source without them (an older export) gives None for each."""
SECONDS_PER_HOUR = 3600.0
MAX_ROWS = 10_000
"""ASSUMPTION: a source of more rows is refused: ten times Epoch AI's largest models export
(about 1,000 notable, a few thousand in all); the fit's bootstrap holds a resample of every
row, so the bound also bounds its memory (docs/sources.md, Plausibility bounds)."""

HARDWARE_NAME = "Hardware name"
MANUFACTURER = "Manufacturer"
HARDWARE_TYPE = "Type"
RELEASE_DATE = "Release date"
HARDWARE_METRICS: Mapping[str, tuple[str, float]] = {
    "Tensor-FP16/BF16 performance (FLOP/s)": ("dense_16bit_flop_per_s", 1.0),
    "Memory (bytes)": ("hbm_bytes", 1.0),
    "Memory bandwidth (byte/s)": ("hbm_bandwidth_bytes_per_s", 1.0),
    "Intranode bandwidth (byte/s)": ("intra_node_bandwidth_bytes_per_s", 1.0),
    "Internode bandwidth (bit/s)": ("inter_node_bandwidth_bytes_per_s", 1.0 / 8.0),
    "TDP (W)": ("tdp_w", 1.0),
}
"""Epoch's hardware column -> (the catalog metric, `pipeline.catalog.METRICS`, and the factor
to its SI unit). Bits per second are divided by 8. L2 size, the NVLink domain and per-hop
latency have no Epoch column (docs/sources.md says what the trends then assume)."""
HARDWARE_COLUMNS = (HARDWARE_NAME, RELEASE_DATE, *HARDWARE_METRICS)


@dataclass(frozen=True, slots=True)
class Reject:
    """A source row that cannot be used, and why."""

    line: int
    """Line of the CSV record (the header is line 1; a quoted newline counts as one record)."""
    name: str | None
    """The model or hardware name, when the row has one."""
    reason: str
    row: str
    """The row's used cells as JSON, as read."""


@dataclass(frozen=True, slots=True)
class ObservedRun:
    """One training run with a date and a compute estimate."""

    model: str
    organization: str | None
    publication_date: dt.date
    training_flop: float
    confidence: str | None
    epoch_frontier: bool | None
    """Epoch's Frontier model flag; None when the source has no such column."""
    line: int
    domain: str | None = None
    """Epoch's Domain (comma-separated when several: "Multimodal,Language")."""
    parameters: float | None = None
    """Epoch's Parameters (count)."""
    training_hardware: tuple[str, ...] = ()
    """Epoch's Training hardware: accelerator names as in `Hardware name` of Epoch's hardware
    file, one per kind the run used (Epoch comma-separates several); () when not stated."""
    hardware_quantity: int | None = None
    """Epoch's Hardware quantity: the number of accelerators."""
    training_time_s: float | None = None
    """Epoch's Training time (hours), wall clock, in seconds."""
    hardware_utilization: float | None = None
    """Epoch's Hardware utilization: the fraction its authors reported (MFU or HFU), in (0, 1]."""
    batch_size: float | None = None
    """Epoch's Batch size as Epoch records it: tokens for most language models, sequences or
    images for some others."""


@dataclass(frozen=True, slots=True)
class ObservedAccelerator:
    """One accelerator with a release date and the catalog metrics Epoch gives for it (SI)."""

    name: str
    manufacturer: str | None
    kind: str | None
    release_date: dt.date
    values: Mapping[str, float] = field(default_factory=dict)
    line: int = 0


def _records(
    text: str, source: str, used: Sequence[str]
) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """The header and each record with its line (1-based, header = 1) as column -> cell, for the
    `used` columns only (a source may hold many more); more than `MAX_ROWS` records is a
    one-line SourceError, so a huge file stops early."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise SourceError(f"source {source}: empty file") from None
    except csv.Error as err:
        raise SourceError(f"source {source}: not CSV ({err})") from None
    kept = [(i, h) for i, h in enumerate(header) if h in used]
    records: list[tuple[int, dict[str, str]]] = []
    try:
        for index, cells in enumerate(reader, start=2):
            if not cells:
                continue
            if len(records) >= MAX_ROWS:
                raise SourceError(
                    f"source {source}: more than {MAX_ROWS:,} rows; the bound is {MAX_ROWS:,} "
                    "(docs/sources.md, Plausibility bounds)"
                )
            row = {h: cells[i] for i, h in kept if i < len(cells)}
            if len(cells) != len(header):
                row["__fields__"] = str(len(cells))
            records.append((index, row))
    except csv.Error as err:
        raise SourceError(f"source {source}: not CSV ({err})") from None
    return header, records


def require_columns(header: Sequence[str], required: Sequence[str], source: str) -> None:
    """A one-line SourceError for the first required column missing from `header`."""
    for column in required:
        if column not in header:
            close = difflib.get_close_matches(column, header, n=1, cutoff=0.6)
            hint = f" (renamed to {close[0]!r}?)" if close else ""
            raise SourceError(f"source {source}: column {column!r} is missing{hint}")


def check_columns(body: bytes, required: Sequence[str], source: str) -> None:
    """The body's header has every required column (`require_columns`)."""
    first = text_of(body).split("\n", 1)[0]
    header = next(csv.reader([first]), [])
    require_columns([h.strip() for h in header], required, source)


def _date(text: str, column: str) -> tuple[dt.date | None, str | None]:
    if not text.strip():
        return None, f"no {column}"
    try:
        return dt.date.fromisoformat(text.strip()), None
    except ValueError:
        return None, f"{column} {text.strip()!r} is not a date YYYY-MM-DD"


def _number(text: str, column: str) -> tuple[float | None, str | None]:
    """(value, None), (None, None) for an empty cell, or (None, reason)."""
    if not text.strip():
        return None, None
    try:
        value = float(text)
    except ValueError:
        return None, f"{column} {text.strip()!r} is not a number"
    if not math.isfinite(value) or value <= 0.0:
        return None, f"{column} {text.strip()} is not a positive finite number"
    return value, None


def _cell(row: Mapping[str, str], column: str) -> str | None:
    value = row.get(column, "").strip()
    return value or None


def _shown(row: Mapping[str, str], columns: Sequence[str]) -> str:
    return json.dumps({c: row[c] for c in columns if c in row}, ensure_ascii=False)


def _field_count(row: Mapping[str, str], header: Sequence[str]) -> str | None:
    fields = row.get("__fields__")
    return None if fields is None else f"{fields} fields where the header has {len(header)}"


class _HowTrained(NamedTuple):
    domain: str | None = None
    parameters: float | None = None
    training_hardware: tuple[str, ...] = ()
    hardware_quantity: int | None = None
    training_time_s: float | None = None
    hardware_utilization: float | None = None
    batch_size: float | None = None


def _how_trained(row: Mapping[str, str]) -> tuple[_HowTrained, str | None]:
    """The run's how-trained fields (`ObservedRun`) from the cells present, or the first
    reason a cell cannot be used: a quantity that is not a whole number, a utilization above 1."""
    values: dict[str, float | None] = {}
    for column in (PARAMETERS, HARDWARE_QUANTITY, TRAINING_TIME, HARDWARE_UTILIZATION, BATCH_SIZE):
        values[column], problem = _number(row.get(column, ""), column)
        if problem is not None:
            return _HowTrained(), problem
    quantity = values[HARDWARE_QUANTITY]
    if quantity is not None and quantity != math.floor(quantity):
        return (
            _HowTrained(),
            f"{HARDWARE_QUANTITY} {quantity:g} is not a whole number of accelerators",
        )
    utilization = values[HARDWARE_UTILIZATION]
    if utilization is not None and utilization > 1.0:
        return (
            _HowTrained(),
            f"{HARDWARE_UTILIZATION} {utilization:g} is above 1 (a fraction is expected)",
        )
    hours = values[TRAINING_TIME]
    names = tuple(n.strip() for n in (_cell(row, TRAINING_HARDWARE) or "").split(",") if n.strip())
    return _HowTrained(
        _cell(row, DOMAIN),
        values[PARAMETERS],
        names,
        None if quantity is None else int(quantity),
        None if hours is None else hours * SECONDS_PER_HOUR,
        utilization,
        values[BATCH_SIZE],
    ), None


def _implausible_runs(runs: Sequence[ObservedRun]) -> dict[int, str]:
    """Line -> why, for each run whose compute is implausible (`bounds.compute_problem`): judged
    in date order against the largest run kept on an earlier date."""
    found: dict[int, str] = {}
    largest: tuple[float, dt.date, str] | None = None
    pending: tuple[float, dt.date, str] | None = None  # the largest kept on the current date
    day: dt.date | None = None
    for run in sorted(runs, key=lambda r: (r.publication_date, r.line)):
        if run.publication_date != day:
            day = run.publication_date
            if pending is not None and (largest is None or pending[0] > largest[0]):
                largest = pending
            pending = None
        problem = compute_problem(run.training_flop, run.publication_date, largest)
        if problem is not None:
            found[run.line] = problem
        elif pending is None or run.training_flop > pending[0]:
            pending = (run.training_flop, run.publication_date, run.model)
    return found


def parse_runs(
    body: bytes, source: str, as_of: dt.date | None = None
) -> tuple[list[ObservedRun], list[Reject]]:
    """The usable training runs of an Epoch models file, and every row refused with its reason.

    Refused: a wrong number of fields, no model name, no or a bad publication date, a date
    before 1940 or after the copy's date `as_of`, no training compute, a compute that is not a
    positive finite number or is implausible (`bounds.compute_problem`), a how-trained cell that
    cannot be used (`_how_trained`, `bounds.how_trained_problem`), a repeat of an earlier row's
    model and date (the first is kept). More than `MAX_ROWS` rows is a SourceError.
    """
    used = (*RUN_COLUMNS, ORGANIZATION, CONFIDENCE, FRONTIER_FLAG, *HOW_TRAINED_COLUMNS)
    header, records = _records(text_of(body), source, used)
    require_columns(header, RUN_COLUMNS, source)
    has_flag = FRONTIER_FLAG in header
    shown = [c for c in (*RUN_COLUMNS, FRONTIER_FLAG, *HOW_TRAINED_COLUMNS) if c in header]
    runs: list[ObservedRun] = []
    rejects: list[Reject] = []
    seen: dict[tuple[str, dt.date], int] = {}
    for line, row in records:
        name = _cell(row, MODEL)
        day, bad_date = _date(row.get(PUBLICATION_DATE, ""), PUBLICATION_DATE)
        flop, bad_flop = _number(row.get(TRAINING_COMPUTE, ""), TRAINING_COMPUTE)
        how, bad_how = _how_trained(row)
        reason = (
            _field_count(row, header)
            or (None if name else f"no {MODEL}")
            or bad_date
            or (None if day is None else date_problem(day, as_of, PUBLICATION_DATE))
            or bad_flop
            or (None if flop is not None else f"no {TRAINING_COMPUTE}")
            or bad_how
            or how_trained_problem(how.hardware_quantity, how.training_time_s)
        )
        if reason is None and name is not None and day is not None:
            first = seen.get((name, day))
            if first is not None:
                reason = f"repeats line {first} (same {MODEL} and {PUBLICATION_DATE})"
            else:
                seen[(name, day)] = line
        if reason is not None or name is None or day is None or flop is None:
            rejects.append(Reject(line, name, reason or "unusable", _shown(row, shown)))
            continue
        flag = _cell(row, FRONTIER_FLAG)
        runs.append(
            ObservedRun(
                name,
                _cell(row, ORGANIZATION),
                day,
                flop,
                _cell(row, CONFIDENCE),
                (flag == "True") if has_flag else None,
                line,
                domain=how.domain,
                parameters=how.parameters,
                training_hardware=how.training_hardware,
                hardware_quantity=how.hardware_quantity,
                training_time_s=how.training_time_s,
                hardware_utilization=how.hardware_utilization,
                batch_size=how.batch_size,
            )
        )
    implausible = _implausible_runs(runs)
    shown_of = {line: _shown(row, shown) for line, row in records if line in implausible}
    rejects += [
        Reject(r.line, r.model, implausible[r.line], shown_of[r.line])
        for r in runs
        if r.line in implausible
    ]
    runs = [r for r in runs if r.line not in implausible]
    return runs, sorted(rejects, key=lambda r: r.line)


def parse_accelerators(
    body: bytes,
    source: str,
    as_of: dt.date | None = None,
    spans: Mapping[str, MetricSpan] | None = None,
) -> tuple[list[ObservedAccelerator], list[Reject]]:
    """The usable accelerators of Epoch's hardware file, and every row refused with its reason.

    Refused: a wrong number of fields, no name, no or a bad release date, a date before 1940 or
    after the copy's date `as_of`, a metric cell that is not a positive finite number or lies
    outside the catalog's widened span (`spans`, `bounds.metric_problem`), no metric at all, a
    repeated name (the first is kept). More than `MAX_ROWS` rows is a SourceError.
    """
    used = (HARDWARE_NAME, MANUFACTURER, HARDWARE_TYPE, RELEASE_DATE, *HARDWARE_METRICS)
    header, records = _records(text_of(body), source, used)
    require_columns(header, HARDWARE_COLUMNS, source)
    shown = [c for c in (HARDWARE_NAME, RELEASE_DATE, *HARDWARE_METRICS) if c in header]
    found: list[ObservedAccelerator] = []
    rejects: list[Reject] = []
    seen: dict[str, int] = {}
    for line, row in records:
        name = _cell(row, HARDWARE_NAME)
        day, bad_date = _date(row.get(RELEASE_DATE, ""), RELEASE_DATE)
        values: dict[str, float] = {}
        bad_value = None
        for column, (metric, factor) in HARDWARE_METRICS.items():
            value, problem = _number(row.get(column, ""), column)
            bad_value = bad_value or problem
            if value is not None:
                values[metric] = value * factor
                if day is not None and spans is not None:
                    problem = metric_problem(spans, metric, value * factor, day, column)
                    bad_value = bad_value or problem
        reason = (
            _field_count(row, header)
            or (None if name else f"no {HARDWARE_NAME}")
            or bad_date
            or (None if day is None else date_problem(day, as_of, RELEASE_DATE))
            or bad_value
            or (None if values else "no metric the catalog uses")
        )
        if reason is None and name is not None:
            if name in seen:
                reason = f"repeats line {seen[name]} (same {HARDWARE_NAME})"
            else:
                seen[name] = line
        if reason is not None or name is None or day is None:
            rejects.append(Reject(line, name, reason or "unusable", _shown(row, shown)))
            continue
        found.append(
            ObservedAccelerator(
                name, _cell(row, MANUFACTURER), _cell(row, HARDWARE_TYPE), day, values, line
            )
        )
    return found, rejects
