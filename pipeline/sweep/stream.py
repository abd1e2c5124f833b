"""A run's series as a lazy sequence: made as they are iterated, so a sweep of any size
starts at once and runs in flat memory.

`SeriesStream` is what a plan holds (`pipeline.app.plan.RunPlan.series`): its length is the
product of the sweep's choices and axes (known before any series is made), and each
iteration expands the sweep anew (`iter_sweep`: a choice combination is composed when its
first series is first reached, and kept), refusing a series whose scenario an earlier one has (`unique`,
which keeps only the ids). Indexing and slicing walk the expansion too: `series[::k]` is a
spread sample without the whole list. Its `partitions` (the dataset folders its rows go to)
come from the first series of each choice combination, and from every series only when an
axis may rename a partition.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import overload

from omegaconf import DictConfig

from pipeline.io.parts import Partition
from pipeline.sweep.expand import Say, Sweep, SweepSeries, _silent, iter_sweep, unique
from pipeline.sweep.resume import scenario_partition

NAMING_KEYS = frozenset({"name", "base", "year"})
"""Fields of a section whose change may rename its preset (a projection's name comes from its
base and year): an axis on one of them makes `SeriesStream.partitions` read every series."""


class SeriesStream(Sequence[SweepSeries]):
    """The series of one run, in expansion order, made as they are iterated (module docstring)."""

    def __init__(
        self,
        cfg: DictConfig,
        sweep: Sweep,
        *,
        whole_grid: bool = False,
        overrides: Sequence[str] | None = None,
        say: Say = _silent,
    ) -> None:
        self.cfg = cfg
        self.sweep = sweep
        self.whole_grid = whole_grid
        self.overrides = None if overrides is None else tuple(overrides)
        self.say = say
        self._composed: dict[tuple[str, ...], DictConfig] = {}
        """Each choice combination's config, composed once (a handful of configs)."""

    def __len__(self) -> int:
        return self.sweep.n_series

    def __iter__(self) -> Iterator[SweepSeries]:
        return unique(
            iter_sweep(
                self.cfg,
                whole_grid=self.whole_grid,
                overrides=self.overrides,
                say=self.say,
                composed=self._composed,
            )
        )

    @overload
    def __getitem__(self, index: int) -> SweepSeries: ...

    @overload
    def __getitem__(self, index: slice) -> list[SweepSeries]: ...

    def __getitem__(self, index: int | slice) -> SweepSeries | list[SweepSeries]:
        positions = range(len(self))[index]  # IndexError as a list's
        if isinstance(positions, int):
            return next(itertools.islice(iter(self), positions, None))
        wanted = set(positions)
        made = itertools.islice(self, max(positions, default=-1) + 1)
        picked = {i: s for i, s in enumerate(made) if i in wanted}
        return [picked[i] for i in positions]

    def partitions(self) -> list[Partition]:
        """The distinct partitions of the series, in expansion order (module docstring)."""
        if any(axis.path[-1] in NAMING_KEYS for axis in self.sweep.axes):
            return list(dict.fromkeys(scenario_partition(s.scenario) for s in self))
        firsts = iter_sweep(
            self.cfg,
            whole_grid=self.whole_grid,
            overrides=self.overrides,
            say=self.say,
            firsts=True,
            composed=self._composed,
        )
        return list(dict.fromkeys(scenario_partition(s.scenario) for s in firsts))
