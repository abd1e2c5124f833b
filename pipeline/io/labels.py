"""What a series is called: its scenario, never its hash (`scenario_labels`).

A series is named by its hardware, scaling and batch law ("h100_sxm / dense / critical"), or by
its concrete run ("llama3_405b on h100_sxm"), and, where several series share that name, by the
sweep axes and overrides that tell them apart (the `series` table's `sweep_point` and
`overrides`, only the keys whose values differ: "... | hbm_bandwidth_gb_per_s=4000"). Read by
`dmlimits-report` (`pipeline.report.selection`) and by the nightly's forecast summary
(`pipeline.nightly.run.forecast_summary`), so both call a series the same.
"""

from __future__ import annotations

import json
from collections.abc import Collection

import polars as pl

from pipeline.schema.run import override_key, override_value

NAME_COLUMNS = ("hardware", "scaling", "batch_law")
"""The columns of a series' name, every table's partition keys."""


def short_key(key: str) -> str:
    """A sweep key without its group path: "hardware.network.latency_us[*]" -> "latency_us[*]"."""
    return key.rsplit(".", 1)[-1]


def _value(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def label_value(point: dict[str, object], key: str) -> str:
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
    named: pl.DataFrame, series: pl.DataFrame | None, ids: Collection[str] | None = None
) -> dict[str, str]:
    """series_id -> "hardware / scaling / batch_law", or "run on hardware" for a concrete run
    (its own model and batch, `run_names`), followed by the sweep values that tell apart series
    of the same name among `ids` (default: all; e.g. "latency_us[*]=0.25 level_sizes[0]=64").
    The id's start is added only where the scenarios are the same. `named`: rows with
    `series_id` and the `NAME_COLUMNS` (`thresholds`, or `forecasts`, a row per trajectory)."""
    runs = run_names(series)
    names = {
        row["series_id"]: f"{runs[row['series_id']]} on {row['hardware']}"
        if row["series_id"] in runs
        else " / ".join(str(row[c]) for c in NAME_COLUMNS)
        for row in named.iter_rows(named=True)
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
            parts = [f"{short_key(k)}={label_value(points.get(sid, {}), k)}" for k in varying]
            labels[sid] = name + (" | " + " ".join(parts) if parts else "")
    counts: dict[str, int] = {}
    for label in labels.values():
        counts[label] = counts.get(label, 0) + 1
    return {sid: lab if counts[lab] == 1 else f"{lab} ({sid[:6]})" for sid, lab in labels.items()}
