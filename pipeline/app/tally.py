"""What a run keeps of its finished series: a summary each, or only what its summary prints.

A finished series is a `SeriesSummary` (its limits, not its points). A listed run keeps them all
(`RunReport.outcomes`, what `pipeline.run` returns); a streamed one (`pipeline.sweep.stream`)
keeps a `RunTally` instead: the counts, extremes and the few series the printed summary names
(`pipeline.app.summary`), the same whatever the number of series, so its memory does not grow
with the sweep. The summary is printed from the tally either way, so its text is the same.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field

from pipeline.app.plan import NO_SWEEP_POINT
from pipeline.execute.series import SeriesOutcome
from pipeline.model.compute.efficiency import fp8_runs_16bit
from pipeline.model.records.results import InfeasibleReason, PointResult, SeriesLimits
from pipeline.model.records.switches import PAPER, Physics
from pipeline.model.search.fixed import physics_misfit
from pipeline.model.series import ClosedForms
from pipeline.model.step.evaluate import Q1_TOLERANCE
from pipeline.schema import Scenario

MAX_SERIES_SHOWN = 12
"""Series (and concrete runs) the summary shows one line each; the rest are counted."""


@dataclass(frozen=True, slots=True)
class SeriesSummary:
    """A series without its points: what the summary and the report keep."""

    scenario: Scenario
    series_id: str
    n_points: int
    limits: SeriesLimits
    closed_forms: ClosedForms
    sweep_point: str = NO_SWEEP_POINT
    """JSON of the sweep choices and axis values that made the series ("{}" without a sweep)."""
    resumed: bool = False
    """True when the run skipped the series and its values come from the dataset."""
    run_point: PointResult | None = None
    """A concrete run's one point (what its summary shows), else None (a grid series, or a
    run read back from the dataset)."""
    q1_rows: int = 0
    """Rows whose step quirk Q1 moves by more than `Q1_TOLERANCE` of it (their latency dropped)."""
    q1_max_hidden_s: float = 0.0
    """The most latency per step Q1 drops from one of those rows (`q1_latency_hidden_s`)."""
    misfit: str | None = None
    """A fixed layout's (`parallelism=fixed`) first size it does not fit: the width and the
    rule it breaks (`search.fixed.physics_misfit`); None otherwise, or read from the dataset."""

    @classmethod
    def of(cls, outcome: SeriesOutcome, sweep_point: str = NO_SWEEP_POINT) -> SeriesSummary:
        """The summary of a finished series (its points can then be dropped)."""
        decided = [
            p.q1_latency_hidden_s
            for p in outcome.points
            if p.q1_latency_hidden_s is not None and p.cost is not None
            if q1_decides(p.q1_latency_hidden_s, p.cost.step_time_s)
        ]
        return cls(
            outcome.scenario,
            outcome.series_id,
            len(outcome.points),
            outcome.limits,
            outcome.closed_forms,
            sweep_point,
            run_point=outcome.points[0] if outcome.scenario.run and outcome.points else None,
            q1_rows=len(decided),
            q1_max_hidden_s=max(decided, default=0.0),
            misfit=first_misfit(outcome),
        )


def q1_decides(hidden_s: float, step_s: float) -> bool:
    """Whether quirk Q1 decides a row: the latency it drops from the row's step
    (`points.q1_latency_hidden_s`) exceeds `Q1_TOLERANCE` of the step (docs/model.md §11)."""
    return hidden_s > Q1_TOLERANCE * step_s


def first_misfit(outcome: SeriesOutcome) -> str | None:
    """The first size of a fixed-layout series whose layout does not fit it, and why: "d_model
    W: <key> = <value>: <rule>" (`search.fixed.physics_misfit`); None for a search, a run or a
    layout that fits every size. Its row says only `layout_does_not_divide`."""
    s = outcome.scenario
    if s.fixed_layout is None or s.run is not None:
        return None
    for p in outcome.points:
        if p.infeasible_reason is InfeasibleReason.LAYOUT_DOES_NOT_DIVIDE:
            why = physics_misfit(s.fixed_layout, p.shape, s.physics)
            if why is not None:
                return f"d_model {p.shape.d_model}: {why.key} = {why.value}: {why.rule}"
    return None


SummaryKey = tuple[str, str, str, str, str]


def summary_order(o: SeriesSummary) -> SummaryKey:
    """The order of the summary's grid series: hardware, scaling, batch law, sweep point, id."""
    s = o.scenario
    return (s.hardware_name, s.scaling_name, s.batch_law_name, o.sweep_point, o.series_id)


@dataclass(slots=True)
class RunTally:
    """The series of a run as its summary prints them, in memory bounded by `MAX_SERIES_SHOWN`.

    Series are added in the run's order (evaluated, then skipped). It keeps the first concrete
    runs in that order, the first grid series in `summary_order` (ties in the order added, as a
    stable sort gives), the counts, and quirk Q1's totals over the grid series: what
    `pipeline.app.summary.summary_lines` reads, equal to what it reads of the whole list.
    """

    series: int = 0
    """Series added, evaluated and skipped."""
    resumed: int = 0
    """Of them, series skipped by the run (their values read from the dataset)."""
    runs: list[SeriesSummary] = field(default_factory=list)
    """The first `MAX_SERIES_SHOWN` concrete runs (`run=<preset>`), in the order added."""
    n_runs: int = 0
    grid: list[tuple[SummaryKey, int, SeriesSummary]] = field(default_factory=list)
    """The first `MAX_SERIES_SHOWN` grid series in `summary_order`, each with its key and the
    rank it was added at (which breaks ties)."""
    n_grid: int = 0
    q1_rows: int = 0
    """Rows of grid series that quirk Q1 decides (`SeriesSummary.q1_rows`), summed."""
    q1_series: int = 0
    """Grid series with such rows."""
    q1_max_hidden_s: float = 0.0
    """The most latency per step Q1 drops from one row of a grid series."""
    paper_extended: set[str] = field(default_factory=set)
    """Switches grid series turned on beside `physics=paper` (`extensions_beside_paper`): those
    series left the paper's model for Part II's."""
    fp8_without_peak: set[str] = field(default_factory=set)
    """Hardware of grid series that asked for FP8 GEMMs (`physics.precision=fp8`) beside other
    extensions on a GPU without an FP8 peak, where they ran 16-bit (`fp8_runs_16bit`)."""
    misfits: dict[str, str] = field(default_factory=dict)
    """The first `MAX_SERIES_SHOWN` fixed-layout grid series with a size their layout does not
    fit (`SeriesSummary.misfit`), by series id, in the order added."""
    n_misfits: int = 0
    """Such series, counted."""

    @classmethod
    def of(cls, summaries: Iterable[SeriesSummary]) -> RunTally:
        """The tally of series given in the run's order."""
        tally = cls()
        for s in summaries:
            tally.add(s)
        return tally

    def add(self, s: SeriesSummary) -> None:
        """Count one more series, keeping it if the summary may show it."""
        self.series += 1
        self.resumed += s.resumed
        if s.scenario.run is not None:
            if self.n_runs < MAX_SERIES_SHOWN:
                self.runs.append(s)
            self.n_runs += 1
            return
        self._keep_grid(summary_order(s), s)
        self.paper_extended |= set(extensions_beside_paper(s.scenario.physics))
        if fp8_runs_16bit(s.scenario.hardware, s.scenario.physics):
            self.fp8_without_peak.add(s.scenario.hardware_name)
        if s.misfit is not None:
            if len(self.misfits) < MAX_SERIES_SHOWN:
                self.misfits[s.series_id] = s.misfit
            self.n_misfits += 1
        if s.q1_rows:
            self.q1_rows += s.q1_rows
            self.q1_series += 1
            self.q1_max_hidden_s = max(self.q1_max_hidden_s, s.q1_max_hidden_s)

    def _keep_grid(self, key: SummaryKey, s: SeriesSummary) -> None:
        rank = self.n_grid
        self.n_grid += 1
        if len(self.grid) == MAX_SERIES_SHOWN and key >= self.grid[-1][0]:
            return  # after every series kept: never shown
        bisect.insort(self.grid, (key, rank, s), key=lambda e: (e[0], e[1]))
        del self.grid[MAX_SERIES_SHOWN:]

    def extend(self, later: RunTally) -> None:
        """Count the series of `later`, all added after this tally's (a run's skipped ones)."""
        self.series += later.series
        self.resumed += later.resumed
        self.runs = [*self.runs, *later.runs][:MAX_SERIES_SHOWN]
        self.n_runs += later.n_runs
        n_grid = self.n_grid + later.n_grid
        for key, _, s in later.grid:  # in their order, ranked after every series of this one
            self._keep_grid(key, s)
        self.n_grid = n_grid
        self.q1_rows += later.q1_rows
        self.q1_series += later.q1_series
        self.q1_max_hidden_s = max(self.q1_max_hidden_s, later.q1_max_hidden_s)
        self.fp8_without_peak |= later.fp8_without_peak
        self.paper_extended |= later.paper_extended

    @property
    def shown_grid(self) -> list[SeriesSummary]:
        """The grid series the summary shows, in its order."""
        return [s for _, _, s in self.grid]


def extensions_beside_paper(physics: Physics) -> tuple[str, ...]:
    """The `Physics` fields a series under the paper's preset (`physics=paper`) set away from
    the paper's values, in field order; none for the paper's model itself or another preset.
    Any of them takes the series off Part I's path onto Part II's model (`Physics.is_paper`,
    docs/model.md Part II), whose limits are not the paper's with that one switch."""
    if physics.name != PAPER.name or physics.is_paper:
        return ()
    return tuple(
        f.name
        for f in dataclasses.fields(physics)
        if f.name != "name" and getattr(physics, f.name) != getattr(PAPER, f.name)
    )
