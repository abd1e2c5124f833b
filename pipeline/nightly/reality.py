"""The contradictions of a date's `reality` table, for its change report.

A contradiction is an observed run the model calls infeasible, or for which it needs more than
twice the accelerators the run used (`pipeline.forecast.reality`; docs/sources.md, "The reality
check"). The report names each with the physics that produced it; one that was not a
contradiction on the previous date is marked new.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pipeline.forecast.reality import OWN_DATA, POSSIBLE_UTILIZATION
from pipeline.nightly.tables import read_table

LISTED = 25
"""Contradictions listed in the Markdown report per physics, worst first; the rest counted
(the JSON holds them all)."""


@dataclass(frozen=True, slots=True)
class Contradiction:
    """One run the model contradicts, under one physics."""

    physics: str
    model: str
    publication_date: str
    training_flop: float
    training_hardware: str
    hardware_quantity: int
    training_time_s: float
    preset: str | None
    implied_utilization: float | None
    d_model: int | None
    precision: str | None
    """The number format the model answered in (`reality.precision`); None in parts written
    before it was recorded."""
    feasible: bool | None
    model_n_gpu: int | None
    gpu_ratio: float | None
    model_utilization: float | None
    new: bool = False
    """Not a contradiction under this physics on the previous date (or no previous date)."""

    @property
    def data_contradiction(self) -> bool:
        """The run's own numbers cannot all be right: they imply a utilization above
        `reality.POSSIBLE_UTILIZATION`, so it contradicts the model and its own data alike."""
        implied = self.implied_utilization
        return implied is not None and implied > POSSIBLE_UTILIZATION

    @property
    def key(self) -> tuple[str, str, str]:
        """The run under its physics, the same across dates."""
        return (self.physics, self.model, self.publication_date)

    @property
    def detail(self) -> str:
        """One line: the run, what it states, and the model's answer under its physics."""
        hours = self.training_time_s / 3600.0
        stated = (
            f"{self.model} ({self.publication_date[:7]}): {self.training_flop:.2g} FLOP on "
            f"{self.hardware_quantity:,} {self.training_hardware} in {hours:,.0f} h"
        )
        implied = (
            ""
            if self.implied_utilization is None
            else f", implied utilization {self.implied_utilization:.3g}"
        )
        width = f"d_model {self.d_model}" + (
            f" in {self.precision}" if self.precision not in (None, "bf16") else ""
        )
        if not self.feasible:
            answer = f"calls it infeasible within its hours on {self.preset} at {width}"
        else:
            answer = (
                f"needs {self.model_n_gpu:,} {self.preset} ({_ratio(self.gpu_ratio)}) at {width}, "
                f"utilization {self.model_utilization or 0.0:.2f}"
            )
        return f"{self.physics}: {stated}{implied}; the model {answer}"


def _ratio(ratio: float | None) -> str:
    """2.33x, 14x, 2,304x."""
    if ratio is None:
        return "-"
    return f"{ratio:,.0f}x" if ratio >= 100 else f"{ratio:.3g}x"


def _physics(found: tuple[Contradiction, ...]) -> list[str]:
    """The physics of `found`, sorted."""
    return sorted({c.physics for c in found})


def _physics_count(found: tuple[Contradiction, ...], physics: str, new: bool) -> str:
    """How many of `found` are under `physics`, how many of them are new (with `new`) and how
    many are the data's own (`Contradiction.data_contradiction`), as one phrase."""
    mine = [c for c in found if c.physics == physics]
    fresh = f"{sum(c.new for c in mine)} new, " if new else ""
    own = sum(c.data_contradiction for c in mine)
    return f"{len(mine)} under {physics} ({fresh}{own} {OWN_DATA})"


def contradiction_summary(found: tuple[Contradiction, ...]) -> str:
    """The run's one printed line: contradictions per physics, how many new, and how many of
    them contradict their own data (`data_contradiction`)."""
    counts = ", ".join(_physics_count(found, p, new=True) for p in _physics(found))
    return f"reality check: observed runs the model contradicts: {counts} (see the change report)"


def _contradiction(row: dict[str, Any]) -> Contradiction:
    return Contradiction(
        physics=row["physics"],
        model=row["model"],
        publication_date=row["publication_date"].isoformat(),
        training_flop=row["training_flop"],
        training_hardware=row["training_hardware"],
        hardware_quantity=row["hardware_quantity"],
        training_time_s=row["training_time_s"],
        preset=(
            row["preset"]
            if row.get("catalog_entry") is None
            else f"{row['catalog_entry']} (catalog, on {row['preset']})"
        ),
        implied_utilization=row["implied_utilization"],
        d_model=row["d_model"],
        precision=row["precision"],
        feasible=row["feasible"],
        model_n_gpu=row["model_n_gpu"],
        gpu_ratio=row["gpu_ratio"],
        model_utilization=row["model_utilization"],
    )


def _worst_first(c: Contradiction) -> tuple[str, float]:
    """Per physics, infeasible runs first, then by the GPU ratio, largest first."""
    return (c.physics, -(c.gpu_ratio or float("inf")))


def contradictions(directory: Path) -> tuple[Contradiction, ...]:
    """The contradictions of a dataset directory's `reality` table, worst first per physics
    (none without the table)."""
    frame = read_table(directory, "reality")
    if frame is None:
        return ()
    rows = frame.filter(frame["contradiction"]).to_dicts()
    return tuple(sorted((_contradiction(r) for r in rows), key=_worst_first))


def marked_new(
    current: tuple[Contradiction, ...], previous: tuple[Contradiction, ...] | None
) -> tuple[Contradiction, ...]:
    """`current` with each contradiction absent from `previous` marked new (all of them when
    there is no previous date)."""
    before = {c.key for c in previous or ()}
    return tuple(replace(c, new=previous is None or c.key not in before) for c in current)


def contradiction_lines(found: tuple[Contradiction, ...]) -> list[str]:
    """The Markdown section: a count per physics, then each contradiction, worst first."""
    if not found:
        return []
    physics = _physics(found)
    counts = ", ".join(_physics_count(found, p, new=False) for p in physics)
    lines = [
        "## Contradictions: runs that happened, which the model cannot train as they did",
        "",
        f"Observed runs the model calls infeasible within their hours, or for which it needs "
        f'more than twice their accelerators (docs/sources.md, "The reality check"): {counts}.',
        "",
    ]
    for p in physics:
        mine = [c for c in found if c.physics == p]
        lines += [f"- {'NEW ' if c.new else ''}{c.detail}" for c in mine[:LISTED]]
        if len(mine) > LISTED:
            lines.append(f"- and {len(mine) - LISTED} more under {p}")
    return lines


def contradiction_json(c: Contradiction) -> dict[str, Any]:
    """One contradiction as plain JSON data."""
    return {
        "physics": c.physics,
        "model": c.model,
        "publication_date": c.publication_date,
        "training_flop": c.training_flop,
        "training_hardware": c.training_hardware,
        "hardware_quantity": c.hardware_quantity,
        "training_time_s": c.training_time_s,
        "preset": c.preset,
        "implied_utilization": c.implied_utilization,
        "d_model": c.d_model,
        "precision": c.precision,
        "feasible": c.feasible,
        "model_n_gpu": c.model_n_gpu,
        "gpu_ratio": c.gpu_ratio,
        "model_utilization": c.model_utilization,
        "new": c.new,
    }
