"""Which series the report draws, and what it calls them: labels by scenario, never by hash.

A series is named by its hardware, scaling and batch law, and, where several series share those,
by the sweep axes and overrides that tell them apart (`pipeline.io.labels.scenario_labels`). `--series` and `--where` choose the series
drawn (`select_series`); a chart with more series than it can tell apart by colour
(`MAX_DISTINCT`) colours them by the scenario key that best separates how far they get
(`Selection.group_key`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import polars as pl

from pipeline.io.labels import NAME_COLUMNS, label_value, scenario_labels, short_key, sweep_points

MAX_DISTINCT = 10
"""Series a chart draws each in its own colour, with its own legend entry."""


class SelectionError(ValueError):
    """`--series` or `--where` chose nothing, or `--where` is not a valid expression."""


@dataclass(frozen=True, slots=True)
class Selection:
    """The series a report draws, in label order, with their labels and colour groups."""

    ids: tuple[str, ...]
    labels: dict[str, str]
    total: int
    """Series in the dataset, chosen or not."""
    group_key: str = ""
    """The scenario key that colours the series when there are more than `MAX_DISTINCT`."""
    groups: dict[str, str] = field(default_factory=dict)
    """series_id -> its value of `group_key`."""

    @property
    def many(self) -> bool:
        """Too many series for a colour and legend entry each: colour by `group_key`."""
        return len(self.ids) > MAX_DISTINCT

    @property
    def note(self) -> str:
        """What is drawn, for captions: "8 series", "40 of 360 series (chosen)"."""
        chosen = (
            f"{len(self.ids)} of {self.total}" if len(self.ids) < self.total else str(self.total)
        )
        grouped = f"; coloured by {self.group_key}" if self.many and self.group_key else ""
        return f"{chosen} series{grouped}"


def _reach(row: dict[str, object]) -> float:
    """log10 of how far a series gets: its wall, or its last feasible compute without one."""
    for column in ("wall_flop", "first_infeasible_flop", "last_feasible_flop"):
        value = row.get(column)
        if isinstance(value, float) and value > 0.0:
            return math.log10(value)
    return 0.0


def _explained(groups: dict[str, str], reach: dict[str, float]) -> float:
    """Share of the variance of `reach` between the groups' means (R² of a one-way split)."""
    values = list(reach.values())
    mean = sum(values) / len(values)
    total = sum((v - mean) ** 2 for v in values)
    if total == 0.0:
        return 0.0
    by_group: dict[str, list[float]] = {}
    for sid, g in groups.items():
        by_group.setdefault(g, []).append(reach[sid])
    between = sum(len(v) * (sum(v) / len(v) - mean) ** 2 for v in by_group.values())
    return between / total


def _splits(values: dict[str, str]) -> bool:
    """Whether a candidate colour key splits the series into 2 to `MAX_DISTINCT` groups."""
    return 1 < len(set(values.values())) <= MAX_DISTINCT


def _group(
    ids: Sequence[str], thresholds: pl.DataFrame, points: dict[str, dict[str, object]]
) -> tuple[str, dict[str, str]]:
    """The scenario key (name column or sweep key, at most `MAX_DISTINCT` values) whose groups
    differ most in how far their series get (`_reach`): the colour that tells most."""
    rows = {r["series_id"]: r for r in thresholds.iter_rows(named=True)}
    candidates: dict[str, dict[str, str]] = {}
    for column in NAME_COLUMNS:
        candidates[column] = {sid: str(rows[sid][column]) for sid in ids}
    for key in sorted({k for sid in ids for k in points.get(sid, {})}):
        short = short_key(key)
        if short in NAME_COLUMNS:  # the name's own column says it for every series
            continue
        values = {sid: label_value(points.get(sid, {}), key) for sid in ids}
        if short not in candidates or (
            _splits(values) and not _splits(candidates[short])
        ):  # two keys of one short name: the one that splits
            candidates[short] = values
    splitting = {k: v for k, v in candidates.items() if _splits(v)}
    if not splitting:
        return "", {}
    reach = {sid: _reach(rows[sid]) for sid in ids}
    key = max(
        splitting,
        key=lambda k: (_explained(splitting[k], reach), -len(set(splitting[k].values())), k),
    )
    return key, splitting[key]


def select_series(
    thresholds: pl.DataFrame,
    series: pl.DataFrame | None = None,
    chosen: Sequence[str] = (),
    where: str | None = None,
) -> Selection:
    """The series to draw: those whose id starts with, or whose label contains, one of `chosen`
    (all when empty), and for which the SQL condition `where` over the `series` table's columns
    holds (e.g. ``batch_law = 'critical' AND net_latency_top_s < 1e-6``)."""
    labels = scenario_labels(thresholds, series)
    ids = list(labels)
    if chosen:
        ids = [s for s in ids if any(s.startswith(c) or c in labels[s] for c in chosen)]
    if where is not None:
        if series is None:
            raise SelectionError("--where needs the dataset's series table, which it lacks")
        try:
            kept = pl.SQLContext(series=series).execute(
                f"SELECT series_id FROM series WHERE {where}", eager=True
            )
        except Exception as err:  # polars raises several error types for a bad expression
            message = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise SelectionError(f"--where {where!r}: {message}") from None
        wanted = set(kept["series_id"].to_list())
        ids = [s for s in ids if s in wanted]
    if not ids:
        raise SelectionError("no series matches --series/--where")
    shown = scenario_labels(thresholds, series, set(ids))
    ids.sort(key=lambda s: shown[s])
    key, groups = _group(ids, thresholds, sweep_points(series))
    return Selection(tuple(ids), shown, len(labels), key, groups)
