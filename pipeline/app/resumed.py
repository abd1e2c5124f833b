"""The rows of series a resumed run skips, read back from the parts that hold them.

A skipped series is complete in the dataset (`pipeline.sweep.resume`); the run's
`SeriesIndex` says which parts of its partition hold it, and only those are opened, their rows
filtered by series_id. Partition columns, which the files do not store, are put back from the
part's partition, so the rows have the table's full schema.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.catalog.load import Catalog
from pipeline.forecast import ForecastSettings
from pipeline.forecast.frontier import frontier_scenarios
from pipeline.forecast.inputs import trajectories
from pipeline.forecast.paths import FITTED, hand_set_name
from pipeline.identity import series_id
from pipeline.io.columns import PARTITION_COLUMNS
from pipeline.io.parts import SeriesIndex
from pipeline.io.read import partition_of
from pipeline.io.tables import table_spec
from pipeline.model.records.results import SeriesLimits
from pipeline.model.series import ClosedForms
from pipeline.schema import Scenario
from pipeline.sweep.resume import scenario_partition
from pipeline.trends.catalog_fits import CatalogTrends

HIDDEN_COLUMNS = ("series_id", "q1_latency_hidden_s", "step_time_s")
"""What quirk Q1's warning reads of a `points` row."""


def hidden_latencies(
    index: SeriesIndex, series_ids: Sequence[str]
) -> dict[str, list[tuple[float, float]]]:
    """`latencies_of` the `points` rows of `series_ids`: the three `HIDDEN_COLUMNS` of the parts
    that hold them (a part before version 5 has none), for a resumed run that keeps no rows."""
    import pyarrow.compute as pc  # deferred: only a resumed run reads rows back

    wanted = pa.array(list(series_ids), pa.string())
    out: dict[str, list[tuple[float, float]]] = {}
    for path in index.holding("points", series_ids):
        if not set(HIDDEN_COLUMNS) <= set(pq.read_schema(path).names):
            continue
        data = pq.read_table(path, columns=list(HIDDEN_COLUMNS))
        for sid, rows in latencies_of(data.filter(pc.is_in(data["series_id"], wanted))).items():
            out.setdefault(sid, []).extend(rows)
    return out


def latencies_of(points: pa.Table) -> dict[str, list[tuple[float, float]]]:
    """Per series, (`q1_latency_hidden_s`, `step_time_s`) of each row of `points` that has
    both: what quirk Q1's warning reads of a series a resumed run skipped."""
    out: dict[str, list[tuple[float, float]]] = {}
    columns = (points[c].to_pylist() for c in HIDDEN_COLUMNS)
    for sid, hidden, step in zip(*columns, strict=True):
        if hidden is not None and step is not None:
            out.setdefault(sid, []).append((hidden, step))
    return out


def read_parts(index: SeriesIndex, table_name: str, series_ids: Sequence[str]) -> pa.Table:
    """The rows of `table_name` of the series `series_ids`, grouped in that order (each
    series' rows in stored order), with the table's schema.

    `index` must cover `table_name` in the series' partitions. A column the file lacks (a part
    written before a nullable column existed) is null.
    """
    import pyarrow.compute as pc  # deferred: only a resumed run reads rows back

    schema = table_spec(table_name).schema
    wanted = pa.array(list(series_ids), pa.string())
    pieces = []
    for path in index.holding(table_name, series_ids):
        data = pq.read_table(path)
        data = data.filter(pc.is_in(data.column("series_id"), wanted))
        partition = partition_of(path)
        columns = []
        for field in schema:
            if field.name in PARTITION_COLUMNS:
                columns.append(pa.array([partition[field.name]] * len(data), field.type))
            elif field.name in data.column_names:
                columns.append(data.column(field.name).cast(field.type))
            else:
                columns.append(pa.nulls(len(data), field.type))
        pieces.append(pa.Table.from_arrays(columns, schema=schema))
    if not pieces:
        return schema.empty_table()
    table = pa.concat_tables(pieces)
    rank = {sid: i for i, sid in enumerate(series_ids)}
    ids = table.column("series_id").to_pylist()
    order = sorted(range(len(ids)), key=lambda i: rank[ids[i]])  # stable: stored order kept
    return table.take(pa.array(order, pa.int64()))


def _flop_or_inf(value: Any) -> float:
    """A closed-form limit as computed: null in the table stands for a non-finite value."""
    return math.inf if value is None else float(value)


def limits_of(row: dict[str, Any]) -> tuple[SeriesLimits, ClosedForms, int]:
    """A `thresholds` row as the limits, closed forms and point count it was written from."""
    limits = SeriesLimits(**{f.name: row.get(f.name) for f in dataclasses.fields(SeriesLimits)})
    closed = ClosedForms(
        float(row["alpha"]),
        float(row["t_lat_s"]),
        _flop_or_inf(row["t_crit_flop"]),
        _flop_or_inf(row["t_limit_flop"]),
        row.get("model_b_duration_s"),
        row.get("model_b_b0_tokens"),
        row.get("model_b_tokens_per_param"),
    )
    return limits, closed, int(row["n_points"])


SAME_LINE_TOLERANCE = 1e-9
"""Relative difference allowed between two trajectories' growth, and between their ln C at
one year, for them to count as the same line (`same_line`): a fitted line's base moves with the
run date along the line, in floating point."""


Line = tuple[str | None, float, float, float, str | None]
"""A trajectory as a `forecasts` row gives it: name, growth per year, base C, base year, and the
source copies of the run that wrote it."""


def same_line(written: Line, wanted: Line) -> bool:
    """Whether a written trajectory is the wanted one: the same name and source copies, growth
    and line. A fitted trajectory's base is its line at the run's date, so a resume on another
    day moves it along the line: it counts wherever along the line it was taken. A hand-set
    line's base is the user's, so it must be the same C in the same year (a row states its
    base; another base year also moves what the row reads as passed). A row without a
    trajectory name (written before the column) is the hand-set line of its growth."""
    name, growth, base, year, sources = written
    w_name, w_growth, w_base, w_year, w_sources = wanted
    if name is None:  # a part before version 3 names no trajectory: a hand-set line's
        name = hand_set_name(growth)
    if name != w_name or sources != w_sources:
        return False
    if abs(growth / w_growth - 1.0) > SAME_LINE_TOLERANCE:
        return False
    if name != FITTED:  # the user's base: the same C in the same year
        return year == w_year and abs(base / w_base - 1.0) <= SAME_LINE_TOLERANCE
    at_wanted_year = math.log(base) + math.log(w_growth) * (w_year - year)
    return abs(at_wanted_year - math.log(w_base)) <= SAME_LINE_TOLERANCE * max(
        1.0, abs(math.log(w_base))
    )


def forecast_mismatch(
    index: SeriesIndex,
    skipped: Sequence[tuple[str, Scenario]],
    settings: ForecastSettings,
    hardware: tuple[Catalog, CatalogTrends] | None,
) -> str | None:
    """What differs, for the first series of `skipped` (series_id, scenario) whose written
    forecasts or moving frontier are not the ones `settings` give; None when all agree.

    A series' id does not hash the forecast settings (the same model rows serve any
    trajectory), so a resume would otherwise return the forecasts of the run that wrote the
    series. Compared: the trajectories, each as a line (`same_line`: its name, growth and line,
    and the source copies of the run, `source_hashes`; not where along the line the base was
    taken, which a fitted line's run date moves), and the projected series of the moving
    frontier (`frontier.projected_series_id`: its years, and the catalog and trends that moved
    the GPU; `hardware`, the run's, when it has years). Not compared: the date a row was
    forecast on (`forecast_date`, and what it reads as passed by then), which each row states."""
    if not skipped:
        return None
    ids = [sid for sid, _ in skipped]
    paths = trajectories(settings)
    observed = settings.observed
    sources = (observed.observations.hashes or None) if observed is not None else None
    wanted: list[Line] = [
        (p.name, p.growth_per_year, p.base_flop, p.base_year, sources) for p in paths
    ]
    written: dict[str, list[Line]] = {sid: [] for sid in ids}
    forecasts = read_parts(index, "forecasts", ids)
    columns = ("series_id", "trajectory", "growth_per_year", "base_flop", "base_year")
    for sid, name, growth, base, year, read in zip(
        *(forecasts.column(c).to_pylist() for c in (*columns, "source_hashes")), strict=True
    ):
        written[sid].append((name, growth, base, year, read))
    years = settings.moving_frontier_years
    for partition in {scenario_partition(s) for _, s in skipped}:
        index.refresh(partition, ("frontier",))
    frontier = read_parts(index, "frontier", ids)
    projected: dict[str, set[str]] = {sid: set() for sid in ids}
    for sid, pid in zip(
        frontier.column("series_id").to_pylist(),
        frontier.column("projected_series_id").to_pylist(),
        strict=True,
    ):
        projected[sid].add(pid)
    for sid, scenario in skipped:
        rows = written[sid]
        if len(rows) != len(wanted) or not all(
            any(same_line(row, line) for row in rows) for line in wanted
        ):
            names = ", ".join(p.name for p in paths) or "none"
            return (
                f"series {sid} was written with other forecasts than this run's trajectories "
                f"({names}) give: another growth, base or trajectory, or other observed data"
            )
        expect: set[str] = set()
        if years and hardware is not None:
            catalog, trends = hardware
            expect = {
                series_id(p, False) for p in frontier_scenarios(scenario, years, catalog, trends)
            }
        if projected[sid] != expect:
            return (
                f"series {sid} was written with another moving frontier "
                f"(forecast.moving_frontier_years, or the catalog and trends it projects along)"
            )
    return None
