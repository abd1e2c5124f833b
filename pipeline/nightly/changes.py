"""What moved since the previous nightly run: thresholds and forecast years, per series.

Series are matched across dates by what they are, not by `series_id` (a hash of the full config,
which any config change alters): hardware, scaling and batch law, plus the series' sweep point
when the `series` table records one, and its concrete run (name and keys) when it is one. A
forecast row is matched by its series and growth factor. A key that names several series on either side is listed as ambiguous and not compared.

`compare_dates` builds a `ChangeReport`; `write_change_report` writes it as
ROOT/reports/changes-<date>.md and .json.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl
import pyarrow as pa

from pipeline.forecast.null_years import null_reason
from pipeline.forecast.paths import hand_set_name
from pipeline.forecast.text import BEFORE_DATA, OPEN_END, STATUS_TEXT, YearStatus, year_status
from pipeline.io.columns import CLOSED_FORM_FIELDS, FORECAST_YEARS, LIMIT_FIELDS, SCHEMA_VERSION
from pipeline.io.tables import columns_of
from pipeline.io.text import write_text_atomic
from pipeline.nightly.causes import Cause, find_causes
from pipeline.nightly.partition import REPORTS_DIR, date_dir, run_dates
from pipeline.nightly.reality import (
    Contradiction,
    contradiction_json,
    contradiction_lines,
    contradictions,
    marked_new,
)
from pipeline.nightly.tables import read_table

SWEEP_POINT_COLUMN = "sweep_point"
"""The `series` table column naming a series' sweep point: JSON of its choices and axis values."""
RUN_COLUMN = "run_json"
"""The `series` table column holding a series' concrete run (null on a scaling-law grid)."""
NO_SWEEP = "{}"
"""The sweep point of a run without a sweep."""
THRESHOLD_COLUMNS = tuple(
    f.name for f in LIMIT_FIELDS + CLOSED_FORM_FIELDS if pa.types.is_floating(f.type)
)
"""The compared `thresholds` values: limits (spec §11) and closed forms (spec §12)."""
YEAR_COLUMNS = FORECAST_YEARS
"""The compared `forecasts` values: the years each limit is reached (median over the lines)."""
REL_TOL = 1e-9
"""Values closer than this (relative) are equal: rounding, not a change."""


class SeriesMatch(NamedTuple):
    """What a series is, the same across dates whatever its config hash."""

    hardware: str
    scaling: str
    batch_law: str
    sweep_point: str | None = None
    run: str | None = None
    """The concrete training run (the `series` table's `run_json`: its name and every key), or
    None on a scaling-law grid: `run=gpt_1p7b` one date and `run=gpt_7p5b` the next are two
    series."""

    @property
    def label(self) -> str:
        """hardware / scaling / batch_law [sweep point] [run name]."""
        head = f"{self.hardware} / {self.scaling} / {self.batch_law}"
        if self.sweep_point not in (None, NO_SWEEP):
            head = f"{head} {self.sweep_point}"
        if self.run is not None:
            head = f"{head} run {json.loads(self.run).get('name', '?')}"
        return head


@dataclass(frozen=True, slots=True)
class Move:
    """One value that differs between the previous and the current run."""

    series: SeriesMatch
    column: str
    previous: float | None
    current: float | None
    growth_per_year: float | None = None
    """The forecast trajectory's current growth per year; None for a threshold."""
    trajectory: str | None = None
    """The forecast trajectory (`fitted`, `hand_set_4x`); None for a threshold."""
    previous_interval: tuple[float | None, float | None] | None = None
    """A forecast year's 5th-95th percentile before (None for a threshold)."""
    current_interval: tuple[float | None, float | None] | None = None
    previous_null_reason: str | None = None
    """Why a null forecast year was null before (`forecasts.year_null_reasons`); None for a
    set year, a threshold, or a row older than that column."""
    current_null_reason: str | None = None
    previous_status: str | None = None
    """Where a forecast year stood before (`forecast.text.YearStatus`: reached by an observed
    run, passed by the run date, overdue); None for a year still ahead, a null year or a
    threshold."""
    current_status: str | None = None

    @property
    def change(self) -> float | None:
        """current − previous (None when either is null)."""
        if self.previous is None or self.current is None:
            return None
        return self.current - self.previous

    @property
    def ratio(self) -> float | None:
        """current / previous (None when either is null or previous is 0)."""
        if self.previous is None or self.current is None or self.previous == 0:
            return None
        return self.current / self.previous


@dataclass(frozen=True, slots=True)
class ChangeReport:
    """The comparison of one date's run with the newest earlier date's."""

    run_date: dt.date
    previous_date: dt.date | None
    run_ids: tuple[str, ...]
    previous_run_ids: tuple[str, ...] = ()
    matched: int = 0
    added: tuple[SeriesMatch, ...] = ()
    removed: tuple[SeriesMatch, ...] = ()
    ambiguous: tuple[SeriesMatch, ...] = ()
    thresholds: tuple[Move, ...] = ()
    forecasts: tuple[Move, ...] = ()
    causes: tuple[Cause, ...] = ()
    """Inputs that changed (catalog entries, trends, compute trajectory): why values moved."""
    contradictions: tuple[Contradiction, ...] = ()
    """This date's observed runs the model contradicts (its `reality` table), new ones marked."""

    @property
    def changed(self) -> bool:
        """Whether any value moved or any series came or went."""
        return bool(self.thresholds or self.forecasts or self.added or self.removed)


def series_matches(directory: Path) -> dict[str, SeriesMatch]:
    """series_id -> what the series is, for every series of a dataset directory's thresholds."""
    thresholds = read_table(directory, "thresholds")
    if thresholds is None:
        return {}
    keys = thresholds.select("series_id", "hardware", "scaling", "batch_law")
    points = read_table(directory, "series", ("series_id", SWEEP_POINT_COLUMN, RUN_COLUMN))
    if points is not None:
        keys = keys.join(points.unique("series_id"), on="series_id", how="left")
    return {row[0]: SeriesMatch(*row[1:]) for row in keys.iter_rows()}


def _group(matches: dict[str, SeriesMatch]) -> dict[SeriesMatch, list[str]]:
    out: dict[SeriesMatch, list[str]] = {}
    for sid, key in matches.items():
        out.setdefault(key, []).append(sid)
    return out


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=0.0)


def _interval(row: dict[str, Any], column: str) -> tuple[float | None, float | None] | None:
    """A forecast year's (low, high) in a row, None for a threshold column or a row without."""
    if f"{column}_low" not in row:
        return None
    return row[f"{column}_low"], row.get(f"{column}_high")


def _held(table_name: str, version: int | None) -> frozenset[str]:
    """The columns a part of `table_name` written with schema `version` holds (all of them for
    a row without a version)."""
    return frozenset(columns_of(table_name, version or SCHEMA_VERSION).names)


def _moves(
    pairs: dict[str, str],
    matches: dict[str, SeriesMatch],
    previous: pl.DataFrame | None,
    current: pl.DataFrame | None,
    columns: Sequence[str],
    by: Sequence[str],
    table_name: str,
) -> list[Move]:
    """Values of matched series that moved; `pairs` maps a current series_id to its previous one.

    Rows are keyed by `by` (series_id first, then e.g. the trajectory). A column is compared
    only when both rows' schema versions hold it: a column added since the previous night was
    not null there, it was not written (docs/schema.md, Versioning). A forecast year null on
    both nights moved when its reason did (`forecasts.year_null_reasons`, where both rows
    have one).
    """
    if previous is None or current is None:
        return []
    old = {tuple(r[c] for c in by): r for r in previous.iter_rows(named=True)}
    found = []
    for row in current.iter_rows(named=True):
        sid, rest = row[by[0]], tuple(row[c] for c in by[1:])
        before = old.get((pairs[sid], *rest)) if sid in pairs else None
        if before is not None:
            found.append((matches[sid], rest, before, row))
    compared = (
        Move(
            series,
            c,
            before[c],
            after[c],
            after.get("growth_per_year"),
            rest[0] if rest else None,
            _interval(before, c),
            _interval(after, c),
            _null_reason(before, c),
            _null_reason(after, c),
            _status(before, c),
            _status(after, c),
        )
        for series, rest, before, after in sorted(found, key=lambda f: (f[0].label, f[1]))
        for c in columns
        if c in _held(table_name, before.get("schema_version"))
        and c in _held(table_name, after.get("schema_version"))
    )
    return [m for m in compared if _moved(m)]


def _moved(m: Move) -> bool:
    """Whether a compared value moved: its value, the reason a year null on both nights is
    null (both rows giving one), or a year's status."""
    reasons = (m.previous_null_reason, m.current_null_reason)
    reason_moved = None not in reasons and reasons[0] != reasons[1]
    return not _same(m.previous, m.current) or reason_moved or m.previous_status != m.current_status


def _status(row: dict[str, Any], column: str) -> str | None:
    """Where a forecast row's year `column` stands (`year_status`); None for a threshold row."""
    if "already_passed" not in row:
        return None
    status = year_status(row, column)
    return None if status is None else str(status)


def _null_reason(row: dict[str, Any], column: str) -> str | None:
    """Why a forecast row's null year `column` is null; None for a set year or a threshold row."""
    if row.get(column) is not None:
        return None
    reason = null_reason(row.get("year_null_reasons"), column)
    return None if reason is None else str(reason)


def with_trajectory(forecasts: pl.DataFrame | None) -> pl.DataFrame | None:
    """Forecasts with `trajectory` filled in: rows of schema version 2 (null) were the hand-set
    scenario of their growth factor."""
    if forecasts is None:
        return None
    names = [
        t if t is not None else hand_set_name(g)
        for t, g in zip(forecasts["trajectory"], forecasts["growth_per_year"], strict=True)
    ]
    return forecasts.with_columns(pl.Series("trajectory", names, dtype=pl.String))


def _run_ids(frame: pl.DataFrame | None) -> tuple[str, ...]:
    return () if frame is None else tuple(sorted(frame["run_id"].unique().to_list()))


def compare_dates(root: Path, run_date: dt.date) -> ChangeReport:
    """Compare the partition of `run_date` with the newest partition before it."""
    current_dir = date_dir(root, run_date)
    current_thr = read_table(current_dir, "thresholds")
    earlier = [d for d in run_dates(root) if d < run_date]
    found = contradictions(current_dir)
    if not earlier:
        return ChangeReport(
            run_date, None, _run_ids(current_thr), contradictions=marked_new(found, None)
        )
    previous_dir = date_dir(root, earlier[-1])
    previous_thr = read_table(previous_dir, "thresholds")
    new, old = series_matches(current_dir), series_matches(previous_dir)
    new_keys, old_keys = _group(new), _group(old)
    ambiguous = {
        k
        for k in new_keys.keys() | old_keys.keys()
        if len(new_keys.get(k, ())) > 1 or len(old_keys.get(k, ())) > 1
    }
    pairs = {
        new_keys[k][0]: old_keys[k][0] for k in (new_keys.keys() & old_keys.keys()) - ambiguous
    }
    return ChangeReport(
        run_date=run_date,
        previous_date=earlier[-1],
        run_ids=_run_ids(current_thr),
        previous_run_ids=_run_ids(previous_thr),
        matched=len(pairs),
        added=tuple(sorted(new_keys.keys() - old_keys.keys(), key=lambda k: k.label)),
        removed=tuple(sorted(old_keys.keys() - new_keys.keys(), key=lambda k: k.label)),
        ambiguous=tuple(sorted(ambiguous, key=lambda k: k.label)),
        thresholds=tuple(
            _moves(
                pairs,
                new,
                previous_thr,
                current_thr,
                THRESHOLD_COLUMNS,
                ("series_id",),
                "thresholds",
            )
        ),
        forecasts=tuple(
            _moves(
                pairs,
                new,
                with_trajectory(read_table(previous_dir, "forecasts")),
                with_trajectory(read_table(current_dir, "forecasts")),
                YEAR_COLUMNS,
                ("series_id", "trajectory"),
                "forecasts",
            )
        ),
        causes=find_causes(previous_dir, current_dir),
        contradictions=marked_new(found, contradictions(previous_dir)),
    )


def _value(column: str, x: float | None) -> str:
    if x is None:
        return "null"
    if column.endswith("_flop"):
        return f"{x:.3e}"
    if column.endswith("_year"):
        return f"{x:.2f}"
    return f"{x:.4g}"


def _change(m: Move) -> str:
    if m.previous is None and m.current is None:
        return "null both nights"
    if m.change is None:
        return "appeared" if m.previous is None else "vanished"
    if m.column.endswith("_flop") and m.ratio is not None:
        return f"×{m.ratio:.3g}"
    if m.column.endswith("_year"):
        moved = f"{m.change:+.2f} years"
        if m.previous_status != m.current_status:
            moved += f"; {_status_word(m.previous_status)} → {_status_word(m.current_status)}"
        return moved
    return f"{m.change:+.4g}"


def _status_word(status: str | None) -> str:
    """A year's status in the year texts' words; "ahead" for a year after the run date."""
    return "ahead" if status is None else STATUS_TEXT[YearStatus(status)]


def _with_interval(
    m: Move,
    value: float | None,
    interval: tuple[float | None, float | None] | None,
    null_reason: str | None = None,
    status: str | None = None,
) -> str:
    """A value as the report shows it: with its interval, its null's reason, or its status
    (`forecast.text.STATUS_TEXT`: a year an observed run reached is that run's date)."""
    shown = _value(m.column, value)
    if value is None and null_reason is not None:
        return f"{shown} ({null_reason})"
    if status == YearStatus.BEFORE_DATA:  # the date of the run that reached it: no interval
        return f"{shown} ({BEFORE_DATA})"
    if status is not None:
        shown = f"{STATUS_TEXT[YearStatus(status)]} {shown}"
    if interval is None or value is None or interval[0] == interval[1] == value:
        return shown
    low, high = interval
    return (
        f"{shown} ({_value(m.column, low)}-{OPEN_END if high is None else _value(m.column, high)})"
    )


def status_only(m: Move) -> bool:
    """A forecast year that did not move but whose status did (`forecast.text.YearStatus`):
    most often a year the run date passed."""
    both = m.previous is not None and m.current is not None
    return both and _same(m.previous, m.current) and m.previous_status != m.current_status


def unmoved_note(moves: Sequence[Move]) -> str:
    """The note, in the headline and the console, of the forecast years among `moves` that did
    not move: null on both dates for another reason, or the same year with another status
    ("" for none)."""
    null = sum(1 for m in moves if m.previous is None and m.current is None)
    status = sum(1 for m in moves if status_only(m))
    notes = [f"{null} of them null on both dates, for another reason"] if null else []
    notes += [f"{status} the same year with another status"] if status else []
    return f" ({'; '.join(notes)})" if notes else ""


def _move_row(m: Move) -> str:
    trajectory = "" if m.trajectory is None else f" {m.trajectory} |"
    return (
        f"| {m.series.label} |{trajectory} `{m.column}` | "
        f"{_with_interval(m, m.previous, m.previous_interval, m.previous_null_reason, m.previous_status)} | "
        f"{_with_interval(m, m.current, m.current_interval, m.current_null_reason, m.current_status)} | "
        f"{_change(m)} |"
    )


def _unexplained(report: ChangeReport) -> str:
    """The Why's line when no input changed: a later run date alone where only statuses moved
    (a forecast year the run date passed), else the model, a preset or the scenario."""
    moved = report.thresholds or report.added or report.removed
    if not moved and all(status_only(m) for m in report.forecasts):
        return (
            f"- no value moved: the run date moved from {report.previous_date} to "
            f"{report.run_date}, past the forecast years listed"
        )
    return (
        "- no catalog, trend or compute-trajectory change: the model, a hardware preset or "
        "the scenario changed (compare the run ids and dmlimits_version)"
    )


def render_markdown(report: ChangeReport) -> str:
    """The report as a short Markdown page: a headline, then one table per kind of value."""
    title = f"# Changes on {report.run_date.isoformat()}"
    found = contradiction_lines(report.contradictions)
    if report.previous_date is None:
        first = f"{title}\n\nNo earlier date under this root: nothing to compare.\n"
        return first + "".join(f"\n{line}" for line in found) + ("\n" if found else "")
    lines = [
        f"{title} since {report.previous_date.isoformat()}",
        "",
        f"Run {', '.join(report.run_ids) or '-'} against "
        f"{', '.join(report.previous_run_ids) or '-'}: {report.matched} series matched, "
        f"{len(report.added)} added, {len(report.removed)} removed, "
        f"{len(report.ambiguous)} ambiguous; {len(report.thresholds)} threshold values and "
        f"{len(report.forecasts)} forecast years moved{unmoved_note(report.forecasts)}.",
    ]
    if not report.changed:
        lines += ["", "No threshold or forecast year moved."]
    if report.changed or report.causes:
        lines += ["", "## Why", ""]
        lines += [f"- {c.detail}" for c in report.causes] or [_unexplained(report)]
    for heading, keys in (
        ("Added series", report.added),
        ("Removed series", report.removed),
        ("Ambiguous series (several per key, not compared)", report.ambiguous),
    ):
        if keys:
            lines += ["", f"## {heading}", "", *(f"- {k.label}" for k in keys)]
    if report.thresholds:
        lines += ["", "## Thresholds moved", ""]
        lines += ["| series | column | previous | current | change |", "|---|---|---|---|---|"]
        lines += [_move_row(m) for m in report.thresholds]
    if report.forecasts:
        lines += ["", "## Forecast years moved (median, 5th-95th percentile)", ""]
        lines += ["| series | trajectory | column | previous | current | change |"]
        lines += ["|---|---|---|---|---|---|", *(_move_row(m) for m in report.forecasts)]
    if found:
        lines += ["", *found]
    return "\n".join(lines) + "\n"


def report_json(report: ChangeReport) -> dict[str, Any]:
    """The report as plain JSON data (dates as YYYY-MM-DD, null for a missing value)."""

    def move(m: Move) -> dict[str, Any]:
        return {
            "series": m.series._asdict(),
            "growth_per_year": m.growth_per_year,
            "trajectory": m.trajectory,
            "previous_interval": None if m.previous_interval is None else list(m.previous_interval),
            "current_interval": None if m.current_interval is None else list(m.current_interval),
            "column": m.column,
            "previous": m.previous,
            "current": m.current,
            "previous_null_reason": m.previous_null_reason,
            "current_null_reason": m.current_null_reason,
            "previous_status": m.previous_status,
            "current_status": m.current_status,
            "change": m.change,
            "ratio": m.ratio if m.column.endswith("_flop") else None,
        }

    return {
        "run_date": report.run_date.isoformat(),
        "previous_date": report.previous_date.isoformat() if report.previous_date else None,
        "run_ids": list(report.run_ids),
        "previous_run_ids": list(report.previous_run_ids),
        "changed": report.changed if report.previous_date is not None else None,
        "series": {
            "matched": report.matched,
            "added": [k._asdict() for k in report.added],
            "removed": [k._asdict() for k in report.removed],
            "ambiguous": [k._asdict() for k in report.ambiguous],
        },
        "thresholds": [move(m) for m in report.thresholds],
        "forecasts": [move(m) for m in report.forecasts],
        "causes": [{"kind": c.kind, "detail": c.detail} for c in report.causes],
        "contradictions": [contradiction_json(c) for c in report.contradictions],
    }


def write_change_report(root: Path, report: ChangeReport) -> tuple[Path, Path]:
    """Write ROOT/reports/changes-<date>.md and .json (each atomically); return their paths."""
    directory = root / REPORTS_DIR
    directory.mkdir(exist_ok=True)
    stem = f"changes-{report.run_date.isoformat()}"
    markdown, data = directory / f"{stem}.md", directory / f"{stem}.json"
    write_text_atomic(markdown, render_markdown(report))
    write_text_atomic(data, json.dumps(report_json(report), indent=2, allow_nan=False) + "\n")
    return markdown, data
