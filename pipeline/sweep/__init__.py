"""Expand a composed config into the series of one run, and find those a dataset still lacks.

- `axes`: one numeric axis of `sweep.axes` (lists, linear and log ranges, list-field indices);
- `expand`: choices x axes -> `SweepSeries` (scenario, series_id, sweep point), in a fixed order;
- `resume`: the series whose parts are not yet all written under a dataset root.
"""

from pipeline.sweep.expand import (
    Sweep,
    SweepSeries,
    expand_scenarios,
    expand_sweep,
    iter_sweep,
    sweep_from_config,
)
from pipeline.sweep.resume import done_series_ids, pending

__all__ = [
    "Sweep",
    "SweepSeries",
    "done_series_ids",
    "expand_scenarios",
    "expand_sweep",
    "iter_sweep",
    "pending",
    "sweep_from_config",
]
