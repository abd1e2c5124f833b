"""Which series the report draws, and what it calls them: labels by scenario, never by hash.

A series is named by its hardware, scaling and batch law, and, where several series share those,
by the sweep axes and overrides that tell them apart (the `series` table's `sweep_point` and
`overrides`, only the keys whose values differ). `--series` and `--where` choose the series
drawn (`select_series`); a chart with more series than it can tell apart by colour
(`MAX_DISTINCT`) colours them by the scenario key that best separates how far they get
(`Selection.group_key`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import polars as pl

from pipeline.schema.run import override_key, override_value

MAX_DISTINCT = 10
"""Series a chart draws each in its own colour, with its own legend entry."""
NAME_COLUMNS = ("hardware", "scaling", "batch_law")


class SelectionError(ValueError):
    """`--series` or `--where` chose nothing, or `--where` is not a valid expression."""


def _short(key: str) -> str:
    """A sweep key without its group path: "hardware.network.latency_us[*]" -> "latency_us[*]"."""
    return key.rsplit(".", 1)[-1]


def _value(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _label_value(point: dict[str, object], key: str) -> str:
    """A key's value in a label: `UNSET` where the series does not set it."""
    return _value(point[key]) if key in point else UNSET


IGNORED_PREFIXES = ("output.", "execution.", "hydra.", "sources.", "sweep.")
"""Override keys that do not change a series' model (where it is written, how it runs, where
its observed data come from) or that the sweep point states already (`sweep.choices`,
`sweep.axes`: the series' own values are in its sweep point): never what tells two series apart
in a label."""
IGNORED_KEYS = frozenset({"sweep", "experiment"})
"""Overrides that choose a sweep or an experiment: each series' values are in its sweep point."""
UNSET = "(default)"
"""How a label shows a key that a series' overrides do not set: the config's default."""


def sweep_points(series: pl.DataFrame | None) -> dict[str, dict[str, object]]:
    """series_id -> its sweep point (choices and axis values), {} without a `series` table;
    with the `overrides` column, each series' overrides as well (key -> value, the sweep
    point's entries among them), so that series of separate runs (a `-m` multirun's jobs,
    `physics=paper,realistic`) are told apart by what made them."""
    if series is None or "sweep_point" not in series.columns:
        return {}
    overrides = "overrides" in series.columns
    out: dict[str, dict[str, object]] = {}
    columns = ["series_id", "sweep_point", *(["overrides"] if overrides else [])]
    for row in series.select(columns).iter_rows(named=True):
        point: dict[str, object] = dict(json.loads(row["sweep_point"] or "{}"))
        for entry in json.loads(row["overrides"] or "[]") if overrides else []:
            key, value = override_key(str(entry)), override_value(str(entry))
            if (
                value is not None
                and key not in IGNORED_KEYS
                and not key.startswith(IGNORED_PREFIXES)
            ):
                point.setdefault(key, value)
        out[row["series_id"]] = point
    return out


def run_names(series: pl.DataFrame | None) -> dict[str, str]:
    """series_id -> the name of its concrete run (`series.run_json`), for the series that
    evaluated one; {} without a `series` table."""
    if series is None or "run_json" not in series.columns:
        return {}
    return {
        row["series_id"]: str(json.loads(row["run_json"]).get("name", "run"))
        for row in series.select("series_id", "run_json").iter_rows(named=True)
        if row["run_json"] is not None
    }


def scenario_labels(
    thresholds: pl.DataFrame, series: pl.DataFrame | None, ids: Collection[str] | None = None
) -> dict[str, str]:
    """series_id -> "hardware / scaling / batch_law", or "run on hardware" for a concrete run
    (its own model and batch, `run_names`), followed by the sweep values that tell apart series
    of the same name among `ids` (default: all; e.g. "latency_us[*]=0.25 level_sizes[0]=64").
    The id's start is added only where the scenarios are the same."""
    runs = run_names(series)
    names = {
        row["series_id"]: f"{runs[row['series_id']]} on {row['hardware']}"
        if row["series_id"] in runs
        else " / ".join(str(row[c]) for c in NAME_COLUMNS)
        for row in thresholds.iter_rows(named=True)
        if ids is None or row["series_id"] in ids
    }
    points = sweep_points(series)
    by_name: dict[str, list[str]] = {}
    for sid, name in names.items():
        by_name.setdefault(name, []).append(sid)
    labels = {}
    for name, ids in by_name.items():
        keys = sorted({k for sid in ids for k in points.get(sid, {})})
        varying = [k for k in keys if len({json.dumps(points.get(s, {}).get(k)) for s in ids}) > 1]
        for sid in ids:
            parts = [f"{_short(k)}={_label_value(points.get(sid, {}), k)}" for k in varying]
            labels[sid] = name + (" | " + " ".join(parts) if parts else "")
    counts: dict[str, int] = {}
    for label in labels.values():
        counts[label] = counts.get(label, 0) + 1
    return {sid: lab if counts[lab] == 1 else f"{lab} ({sid[:6]})" for sid, lab in labels.items()}


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
        short = _short(key)
        if short in NAME_COLUMNS:  # the name's own column says it for every series
            continue
        values = {sid: _label_value(points.get(sid, {}), key) for sid in ids}
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
