"""Why forecast values moved between two runs: observed data, the fit, the hardware, scenarios.

Compared between the previous and the current dataset directory:

- the `sources` table: a source read from a new copy, or stale (a failed fetch, an old copy);
- the `observed_runs` table: training runs that appeared, disappeared or changed (compute, or
  whether they define the frontier);
- the fitted `forecasts` rows: the fitted growth per year with its interval, the data's date,
  and the fitted frontier compute at this run's date before and after;
- the `trends` table (written when the run has a moving frontier): GPUs that entered or left
  the catalog, and metrics whose fitted growth per year changed;
- the hand-set `forecasts` rows: the compute trajectory (base_flop, base_year, growth factors);
- the `series` table: the physics presets the series ran under, and a preset's changed switches.

What is left unexplained (a model, preset or scenario change) is said as such.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from pipeline.forecast.paths import HAND_SET_PREFIX
from pipeline.io.trends import read_trends
from pipeline.nightly.tables import fitted_row, read_table, runs_of_fit

REL_TOL = 1e-9
"""Growth factors closer than this (relative) are equal."""
PHYSICS_COLUMNS = ("series_id", "physics", "physics_json")
"""The `series` columns naming the physics a series ran under."""


@dataclass(frozen=True, slots=True)
class Cause:
    """One input that changed between the two runs."""

    kind: str
    """source_changed | source_stale | run_added | run_removed | run_changed | fit_changed |
    catalog_entry_added | catalog_entry_removed | trend_changed | trajectory_changed |
    moving_frontier_added | moving_frontier_removed | physics_changed"""
    detail: str


def _gpus(trends: pl.DataFrame) -> set[str]:
    return {g for text in trends["gpus"].to_list() for g in text.split(",") if g}


def _growth(trends: pl.DataFrame) -> dict[str, float | None]:
    return dict(zip(trends["metric"].to_list(), trends["growth_per_year"].to_list(), strict=True))


def trend_causes(previous: pl.DataFrame | None, current: pl.DataFrame | None) -> list[Cause]:
    """Catalog entries added or removed and trends changed between two `trends` tables."""
    if previous is None and current is None:
        return []
    if previous is None:
        return [
            Cause("moving_frontier_added", "this run has hardware trends; the previous had none")
        ]
    if current is None:
        return [
            Cause(
                "moving_frontier_removed", "the previous run had hardware trends; this one has none"
            )
        ]
    causes = [
        Cause("catalog_entry_added", f"catalog entry added: {gpu}")
        for gpu in sorted(_gpus(current) - _gpus(previous))
    ]
    causes += [
        Cause("catalog_entry_removed", f"catalog entry removed: {gpu}")
        for gpu in sorted(_gpus(previous) - _gpus(current))
    ]
    old, new = _growth(previous), _growth(current)
    for metric in sorted(old.keys() & new.keys()):
        a, b = old[metric], new[metric]
        same = (a is None and b is None) or (
            a is not None and b is not None and math.isclose(a, b, rel_tol=REL_TOL)
        )
        if not same:
            shown = [("none" if x is None else f"{x:.4g}x") for x in (a, b)]
            causes.append(
                Cause("trend_changed", f"trend changed: {metric} {shown[0]} -> {shown[1]} per year")
            )
    return causes


def _hand_set(forecasts: pl.DataFrame) -> pl.DataFrame:
    """The hand-set scenario rows (version 2 rows, without `trajectory`, were all hand-set)."""
    return forecasts.filter(
        pl.col("trajectory").is_null() | pl.col("trajectory").str.starts_with(HAND_SET_PREFIX)
    )


def _trajectory(forecasts: pl.DataFrame) -> tuple[list[tuple[float, float]], list[float]]:
    forecasts = _hand_set(forecasts)
    bases = forecasts.select("base_flop", "base_year").unique().sort("base_flop", "base_year")
    growth = sorted(set(forecasts["growth_per_year"].to_list()))
    return [(r[0], r[1]) for r in bases.iter_rows()], growth


def trajectory_causes(previous: pl.DataFrame | None, current: pl.DataFrame | None) -> list[Cause]:
    """A change of the compute trajectory between two `forecasts` tables."""
    if previous is None or current is None:
        return []
    (old_base, old_growth), (new_base, new_growth) = _trajectory(previous), _trajectory(current)
    causes = []
    if old_base != new_base:
        show = [", ".join(f"{f:.3g} FLOP in {y:g}" for f, y in b) for b in (old_base, new_base)]
        causes.append(
            Cause("trajectory_changed", f"compute trajectory changed: {show[0]} -> {show[1]}")
        )
    if old_growth != new_growth:
        show = [", ".join(f"{g:g}x" for g in gs) for gs in (old_growth, new_growth)]
        causes.append(
            Cause("trajectory_changed", f"growth factors changed: {show[0]} -> {show[1]}")
        )
    return causes


MAX_RUNS_LISTED = 25
"""At most this many appeared, disappeared or changed runs are named; the rest are counted."""


def source_causes(previous: pl.DataFrame | None, current: pl.DataFrame | None) -> list[Cause]:
    """Sources read from another copy than the previous run's, and sources read stale."""
    causes = []
    old = (
        {}
        if previous is None
        else dict(zip(previous["source"], previous["content_hash"], strict=True))
    )
    for row in [] if current is None else current.iter_rows(named=True):
        before = old.get(row["source"])
        if before is not None and before != row["content_hash"]:
            causes.append(
                Cause(
                    "source_changed",
                    f"source {row['source']}: new copy {row['content_hash'][:12]} "
                    f"(was {before[:12]}), newest date {row['newest_date']}",
                )
            )
        if row["stale"]:
            causes.append(
                Cause(
                    "source_stale",
                    f"source {row['source']} is STALE: the copy of {row['snapshot_date']} "
                    f"({row['age_days']:.1f} days old); {row['stale_reason']}",
                )
            )
    return causes


def _run_label(row: dict[str, object]) -> str:
    day = row["publication_date"]
    month = day.strftime("%Y-%m") if isinstance(day, dt.date) else str(day)
    frontier = ", frontier" if row["frontier"] else ""
    return f"{row['model']}, {float(str(row['training_flop'])):.2g} FLOP, {month}{frontier}"


def run_causes(previous: pl.DataFrame | None, current: pl.DataFrame | None) -> list[Cause]:
    """Observed runs that appeared, disappeared, or changed compute or frontier status.

    Runs are matched by model and publication date; frontier runs are listed first, then by
    compute, at most `MAX_RUNS_LISTED` of each kind (the rest counted).
    """
    if previous is None or current is None:
        return []
    key = ("model", "publication_date")
    old = {tuple(r[k] for k in key): r for r in previous.iter_rows(named=True)}
    new = {tuple(r[k] for k in key): r for r in current.iter_rows(named=True)}
    found: dict[str, list[tuple[dict[str, object], str]]] = {
        "added": [],
        "removed": [],
        "changed": [],
    }
    for k in new.keys() - old.keys():
        found["added"].append((new[k], f"new: {_run_label(new[k])}"))
    for k in old.keys() - new.keys():
        found["removed"].append((old[k], f"gone: {_run_label(old[k])}"))
    for k in new.keys() & old.keys():
        a, b = old[k], new[k]
        flop_a, flop_b = float(str(a["training_flop"])), float(str(b["training_flop"]))
        if not math.isclose(flop_a, flop_b, rel_tol=REL_TOL) or a["frontier"] != b["frontier"]:
            found["changed"].append((b, f"changed: {_run_label(a)} -> {_run_label(b)}"))
    causes = []
    for kind, items in found.items():
        items.sort(
            key=lambda item: (not item[0]["frontier"], -float(str(item[0]["training_flop"])))
        )
        causes += [Cause(f"run_{kind}", text) for _, text in items[:MAX_RUNS_LISTED]]
        if len(items) > MAX_RUNS_LISTED:
            causes.append(
                Cause(f"run_{kind}", f"... and {len(items) - MAX_RUNS_LISTED} more runs {kind}")
            )
    return causes


def _growth_text(row: dict[str, object]) -> str:
    g, low, high = (
        float(str(row[c]))
        for c in ("growth_per_year", "growth_per_year_low", "growth_per_year_high")
    )
    return f"{g:.3g}x ({low:.3g}-{high:.3g})"


def fit_causes(previous: pl.DataFrame | None, current: pl.DataFrame | None) -> list[Cause]:
    """The fitted frontier before and after: growth with its interval, the data's date, and the
    fitted compute at the current run's base date (both fits evaluated there)."""
    before, after = fitted_row(previous), fitted_row(current)
    if before is None and after is None:
        return []
    if before is None or after is None:
        state = "added" if before is None else "removed"
        return [Cause("fit_changed", f"fitted frontier trajectory {state}")]
    same = (
        all(
            math.isclose(float(str(before[c])), float(str(after[c])), rel_tol=REL_TOL)
            for c in ("growth_per_year", "growth_per_year_low", "growth_per_year_high")
        )
        and before["data_as_of"] == after["data_as_of"]
    )
    if same:
        return []
    year = float(str(after["base_year"]))
    then = float(str(before["base_flop"])) * float(str(before["growth_per_year"])) ** (
        year - float(str(before["base_year"]))
    )
    return [
        Cause(
            "fit_changed",
            f"fitted frontier growth {_growth_text(before)} -> {_growth_text(after)} per year; "
            f"data as of {before['data_as_of']} -> {after['data_as_of']}; fitted frontier at "
            f"{year:.2f}: {then:.3g} -> {float(str(after['base_flop'])):.3g} FLOP",
        )
    ]


def _physics_settings(series: pl.DataFrame | None) -> dict[str, set[str]]:
    """physics name -> the distinct `physics_json` of its series (a `series` table)."""
    out: dict[str, set[str]] = {}
    if series is None or "physics" not in series.columns:
        return out
    for name, settings in series.select("physics", "physics_json").iter_rows():
        if name is not None:  # a part older than `physics_json` names its preset alone
            found = out.setdefault(str(name), set())
            if settings is not None:
                found.add(str(settings))
    return out


def _keys_changed(before: str, after: str) -> list[str]:
    """The physics switches whose values differ between two `physics_json` objects."""
    a, b = json.loads(before), json.loads(after)
    return [
        f"{k} {a.get(k)!r} -> {b.get(k)!r}"
        for k in sorted(a.keys() | b.keys())
        if a.get(k) != b.get(k)
    ]


def physics_causes(previous: pl.DataFrame | None, current: pl.DataFrame | None) -> list[Cause]:
    """The physics the series ran under, between two `series` tables: presets that came or
    went (`paper` one night, `realistic` the next: the same hardware, scaling and batch law
    match, and their values move for that reason), and a preset's switches that changed."""
    old, new = _physics_settings(previous), _physics_settings(current)
    if not old or not new:
        return []
    if old.keys() != new.keys():
        return [
            Cause(
                "physics_changed",
                f"physics {', '.join(sorted(old))} -> {', '.join(sorted(new))}",
            )
        ]
    causes = []
    for name in sorted(new):
        if old[name] == new[name] or not old[name] or not new[name]:
            continue
        if len(old[name]) == len(new[name]) == 1:
            changed = _keys_changed(next(iter(old[name])), next(iter(new[name])))
            detail = ", ".join(changed[:MAX_RUNS_LISTED])
        else:
            detail = f"{len(old[name])} -> {len(new[name])} distinct settings"
        causes.append(Cause("physics_changed", f"physics {name}: {detail}"))
    return causes


def find_causes(previous_dir: Path, current_dir: Path) -> tuple[Cause, ...]:
    """Every input change found between two dataset directories: observed data first."""
    forecasts = read_table(previous_dir, "forecasts"), read_table(current_dir, "forecasts")
    runs = [
        None if frame is None else runs_of_fit(frame, fits)
        for frame, fits in zip(
            (read_table(previous_dir, "observed_runs"), read_table(current_dir, "observed_runs")),
            forecasts,
            strict=True,
        )
    ]
    return (
        *source_causes(read_table(previous_dir, "sources"), read_table(current_dir, "sources")),
        *run_causes(*runs),
        *fit_causes(*forecasts),
        *trend_causes(read_trends(previous_dir), read_trends(current_dir)),
        *trajectory_causes(*forecasts),
        *physics_causes(
            read_table(previous_dir, "series", PHYSICS_COLUMNS),
            read_table(current_dir, "series", PHYSICS_COLUMNS),
        ),
    )
