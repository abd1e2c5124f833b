"""Observed training runs for the tests of the reality check: one builder of `ObservedRun`s
that state how they were trained (docs/sources.md, "The reality check")."""

from __future__ import annotations

import datetime as dt

from pipeline.sources.epoch import ObservedRun

H100 = "NVIDIA H100 SXM5 80GB"
"""Epoch AI's name of the H100 SXM (its hardware file's `Hardware name`)."""
HOUR_S = 3600.0


def trained_run(
    name: str,
    flop: float,
    hours: float | None,
    line: int,
    hardware: tuple[str, ...] = (H100,),
    n_gpu: int | None = 8,
    date: dt.date = dt.date(2024, 6, 1),
) -> ObservedRun:
    """A run of `flop` FLOP on `n_gpu` accelerators of `hardware` for `hours` (None: unstated),
    row `line` of its source."""
    return ObservedRun(
        name,
        None,
        date,
        flop,
        None,
        None,
        line,
        training_hardware=hardware,
        hardware_quantity=n_gpu,
        training_time_s=None if hours is None else hours * HOUR_S,
    )
