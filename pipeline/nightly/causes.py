"""Why forecast values moved between two runs: catalog entries, trends, the compute trajectory.

Compared between the previous and the current dataset directory:

- the `trends` table (written when the run has a moving frontier): GPUs that entered or left
  the catalog, and metrics whose fitted growth per year changed;
- the `forecasts` table: the compute trajectory (base_flop, base_year, the growth factors).

What is left unexplained (a model, preset or scenario change) is said as such.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from pipeline.io.trends import read_trends
from pipeline.nightly.tables import read_table

REL_TOL = 1e-9
"""Growth factors closer than this (relative) are equal."""


@dataclass(frozen=True, slots=True)
class Cause:
    """One input that changed between the two runs."""

    kind: str
    """catalog_entry_added | catalog_entry_removed | trend_changed | trajectory_changed |
    moving_frontier_added | moving_frontier_removed"""
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


def _trajectory(forecasts: pl.DataFrame) -> tuple[list[tuple[float, float]], list[float]]:
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


def find_causes(previous_dir: Path, current_dir: Path) -> tuple[Cause, ...]:
    """Every input change found between two dataset directories, trends first."""
    return (
        *trend_causes(read_trends(previous_dir), read_trends(current_dir)),
        *trajectory_causes(
            read_table(previous_dir, "forecasts"), read_table(current_dir, "forecasts")
        ),
    )
