"""Executing a plan: evaluate the series not yet done, write them in batches, report.

Memory stays flat however large the sweep: finished series wait in a bounded buffer
(`pipeline.app.batch.PartBuffer`) and are written many to a part, and the report keeps their
limits, not their points (unless the caller keeps the tables, as the Python API does); a
streamed sweep's report keeps only what its summary prints (`pipeline.app.tally.RunTally`).
With resume on (`RunPlan.resume`: sweeps by default) the series already complete under the
root are skipped, and their thresholds are read back so the summary still shows them (a
streamed sweep reads them `SKIPPED_READ_TOGETHER` at a time as it skips them, and keeps only
its tally). A series evaluated again that already has rows under the root (resume off, or a
series left incomplete) is removed from the parts that hold it as its batch is written
(`pipeline.app.write.write_batch`), so no series ever has rows in two parts of a table.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.app.batch import PartBuffer
from pipeline.app.frontier import frontier_tasks, run_frontiers
from pipeline.app.plan import RunPlan
from pipeline.app.resumed import (
    forecast_mismatch,
    hidden_latencies,
    latencies_of,
    limits_of,
    read_parts,
)
from pipeline.app.tally import RunTally, SeriesSummary, q1_decides
from pipeline.app.uncertainty import run_uncertainty
from pipeline.app.write import Tables, run_tables, series_rows, write_run_tables
from pipeline.catalog.load import Catalog
from pipeline.execute.ahead import Ahead
from pipeline.execute.progress import RunProgress, stage
from pipeline.execute.runner import run_series, stop_on_signals
from pipeline.forecast.inputs import moving_hardware
from pipeline.identity import new_run_id
from pipeline.io.heal import set_aside_bad_parts
from pipeline.io.parts import SeriesIndex
from pipeline.io.rows import Provenance
from pipeline.io.tables import REMOVAL_ORDER, SERIES_TABLES
from pipeline.schema import Scenario
from pipeline.schema.errors import ConfigError
from pipeline.sweep import SweepSeries
from pipeline.sweep.resume import DONE_TABLES, done_series_ids, scenario_partition
from pipeline.sweep.stream import SeriesStream
from pipeline.trends.catalog_fits import CatalogTrends


@dataclass(frozen=True, slots=True)
class RunReport:
    """What a finished run did."""

    outcomes: list[SeriesSummary]
    """The series this run evaluated, in the order they finished; empty for a streamed sweep
    run without its tables (`tally` counts them)."""
    points: int
    seconds: float
    run_id: str
    root: Path | None
    skipped: int = 0
    """Series of the plan already complete under the root, not evaluated again (resume)."""
    resumed: list[SeriesSummary] = field(default_factory=list)
    """The skipped series, their thresholds read from the dataset; empty for a streamed sweep
    run without its tables."""
    tables: list[Tables] = field(default_factory=list)
    """Every table's rows when `execute_plan(keep_tables=True)`: the run's per-run tables, then
    the series' tables in batches of several series, the skipped ones read back."""
    batches: int = 0
    """Batches written (each one part per table), 0 without a root."""
    ahead: int = 0
    """Of `outcomes`, the series evaluated ahead (`pipeline.execute.ahead`), not by this run."""
    tally: RunTally = field(default_factory=RunTally)
    """Every series of the run as its summary prints them (`pipeline.app.tally`): the counts
    and the few series it names, evaluated then skipped."""

    @property
    def summaries(self) -> list[SeriesSummary]:
        """Every series of the run: evaluated, then skipped (none for a streamed sweep run
        without its tables: `tally`)."""
        return [*self.outcomes, *self.resumed]


def resumed_series(
    index: SeriesIndex, skipped: Sequence[SweepSeries], keep_tables: bool = False
) -> tuple[list[SeriesSummary], list[Tables]]:
    """Summaries of series complete in the indexed parts (and all their rows, as one batch)."""
    ids = [s.series_id for s in skipped]
    tables = {name: read_parts(index, name, ids) for name in SERIES_TABLES} if keep_tables else {}
    thresholds = tables["thresholds"] if tables else read_parts(index, "thresholds", ids)
    grid = [s.series_id for s in skipped if s.scenario.run is None]
    if tables:
        hidden = latencies_of(tables["points"])
    else:
        hidden = hidden_latencies(index, grid) if grid else {}
    summaries = []
    for series, row in zip(skipped, thresholds.to_pylist(), strict=True):
        limits, closed, n_points = limits_of(row)
        rows = hidden.get(series.series_id, []) if series.scenario.run is None else []
        decided = [h for h, step in rows if q1_decides(h, step)]
        summaries.append(
            SeriesSummary(
                series.scenario,
                series.series_id,
                n_points,
                limits,
                closed,
                series.sweep_point,
                resumed=True,
                q1_rows=len(decided),
                q1_max_hidden_s=max(decided, default=0.0),
            )
        )
    return summaries, [tables] if tables else []


def _stage_progress(
    label: str, enabled: bool, tasks: Callable[[int], tuple[int, int]] | None = None
) -> Callable[[int], AbstractContextManager[Callable[[int], None]]]:
    """Opens a labelled progress for a stage of n series; yields the function counting each.
    `tasks(n)`, given, is how many tasks of the n series run at once and the series of each
    (`RunProgress`'s `parallel` and `task_series`)."""

    @contextmanager
    def opened(n: int) -> Iterator[Callable[[int], None]]:
        at_once, each = tasks(n) if tasks is not None else (1, 1)
        with RunProgress(
            n, enabled=enabled and n > 0, label=label, parallel=at_once, task_series=each
        ) as bar:
            yield bar.advance

    return opened


def _check_resumed(
    index: SeriesIndex,
    skipped: Sequence[SweepSeries],
    plan: RunPlan,
    hardware: tuple[Catalog, CatalogTrends] | None,
) -> None:
    """ConfigError when a series the run resumes was written with other forecasts or another
    moving frontier than this run's settings give (`resumed.forecast_mismatch`): resuming
    would return those as this run's."""
    found = forecast_mismatch(
        index, [(s.series_id, s.scenario) for s in skipped], plan.forecast, hardware
    )
    if found is not None:
        raise ConfigError(
            "output.root",
            str(plan.root),
            f"{found}; resuming would return those as this run's: write to another "
            "output.root, or set output.resume=false to evaluate the series again",
        )


SKIPPED_READ_TOGETHER = 4096
"""A streamed resume reads the thresholds of the series it skips this many at a time."""


class _RunIds(Collection[str]):
    """The series ids of the run's series, made when first asked for (`set_aside_bad_parts`
    asks only when a part must be set aside), so a streamed run does not expand its sweep for
    them."""

    def __init__(self, series: Iterable[SweepSeries]) -> None:
        self._series = series
        self._ids: set[str] | None = None

    def _made(self) -> set[str]:
        if self._ids is None:
            self._ids = {s.series_id for s in self._series}
        return self._ids

    def __contains__(self, item: object) -> bool:
        return item in self._made()

    def __iter__(self) -> Iterator[str]:
        return iter(self._made())

    def __len__(self) -> int:
        return len(self._made())


def execute_plan(
    plan: RunPlan,
    progress: bool = True,
    series: Sequence[SweepSeries] | None = None,
    *,
    keep_tables: bool = False,
    ahead: Ahead | None = None,
) -> RunReport:
    """Evaluate the plan's series (or `series`) not yet done, and write them in batches.

    A plan without a root writes nothing. With `keep_tables` the report holds every series'
    rows (`RunReport.tables`), skipped ones read back from the dataset. Series `ahead`
    evaluated already are taken from it (`pipeline.execute.ahead`).
    """
    streamed = series is None and isinstance(plan.series, SeriesStream)
    every: Sequence[SweepSeries] = plan.series if series is None else list(series)
    done: set[str] = set()
    index = None
    if plan.root is not None:
        if isinstance(every, SeriesStream):  # its choices composed only for a root with parts
            fresh = not any((plan.root / name).exists() for name in REMOVAL_ORDER)
            partitions = [] if fresh else every.partitions()
        else:
            partitions = [scenario_partition(s.scenario) for s in every]
        run_ids = _RunIds(every)  # read only if a part must be set aside
        for line in set_aside_bad_parts(plan.root, partitions, run_ids):  # named, never deleted
            print(f"dmlimits: {line}", file=sys.stderr)
        index = SeriesIndex.build(plan.root, partitions, DONE_TABLES)
        index.written_ids = not streamed  # a stream's series are unique: never written twice
        if plan.resume:
            done = done_series_ids(index)
    years = plan.forecast.moving_frontier_years
    if streamed and years:  # the moving frontier runs on the list of the run's series
        every, streamed = list(every), False
    keep = keep_tables or not streamed
    """Whether the report keeps each series' summary (`RunReport.outcomes`), or only the tally."""
    skipped: list[SweepSeries] = []
    todo: Sequence[SweepSeries] = every
    if not streamed and done:
        skipped = [s for s in every if s.series_id in done]
        todo = [s for s in every if s.series_id not in done]
    provenance = Provenance(run_id=new_run_id())
    start = time.monotonic()
    hardware = moving_hardware(plan.forecast) if years else None
    if skipped and index is not None:
        _check_resumed(index, skipped, plan, hardware)
    moving = run_frontiers(
        [(s.series_id, s.scenario) for s in todo] if years else [],
        years,
        plan.execution,
        hardware,
        _stage_progress("moving frontier", progress, frontier_tasks(plan.execution, years)),
    )
    trends = hardware[1] if hardware is not None else None
    if progress and plan.forecast.observed is not None:
        written = ["trends"] if moving else []
        written += ["observed runs"] + (["the reality check"] if plan.forecast.reality else [])
        stage(f"the run's tables: {', '.join(written)}")
    per_run = run_tables(
        trends if moving else None,
        plan.forecast.observed,
        provenance,
        reality=plan.forecast.reality,
    )
    if plan.design is not None:
        budget = run_uncertainty(
            *plan.design,
            plan.forecast,
            plan.execution,
            provenance,
            _stage_progress("uncertainty design", progress),
            _stage_progress("uncertainty design, moving hardware", progress),
        )
        if budget is not None:
            per_run["uncertainty"] = budget
    if plan.root is not None:
        write_run_tables(plan.root, per_run)
    buffer = PartBuffer(index, plan.series_per_part, plan.flush_s, keep=keep_tables)
    taken = ahead.taken if ahead is not None else 0
    summaries: list[SeriesSummary] = []
    tally = RunTally()
    later = RunTally()
    """The skipped series of a streamed run that keeps no summaries, counted as they come."""
    n_skipped = 0
    """Skipped series counted in `later` (no longer in `skipped`)."""
    points = 0
    in_flight: dict[str, str] = {}
    """The sweep point of each series handed to the runner and not yet back."""
    writing = threading.Lock()
    """Held while the index changes (batches written) or is read (`count_skipped`): the
    runner may ask for scenarios (`handed`) from one of its threads."""

    def count_skipped(at_least: int) -> None:
        """Count the skipped series in `later` (their thresholds read back) once `at_least`
        wait, so a streamed resume does not keep every series it skips."""
        nonlocal n_skipped
        if keep or index is None or not skipped or len(skipped) < at_least:
            return
        with writing:
            chunk = list(skipped)
            _check_resumed(index, chunk, plan, hardware)
            del skipped[: len(chunk)]
            for summary in resumed_series(index, chunk)[0]:
                later.add(summary)
        n_skipped += len(chunk)

    with (
        stop_on_signals(),
        RunProgress(len(todo), enabled=progress, skipped=len(skipped)) as bar,
    ):

        def handed() -> Iterator[Scenario]:
            """The scenarios to evaluate, made as the runner asks for them; a streamed
            resume's series already done are set aside as they come."""
            checked_first = False
            for item in todo:
                if streamed and item.series_id in done:
                    if not checked_first and index is not None:  # refuse before more work
                        with writing:  # the runner may ask from one of its threads
                            _check_resumed(index, [item], plan, hardware)
                        checked_first = True
                    skipped.append(item)
                    bar.skip()
                    count_skipped(SKIPPED_READ_TOGETHER)
                    continue
                in_flight[item.series_id] = item.sweep_point
                yield item.scenario

        try:
            execution = plan.execution.in_blocks(plan.series_block)
            for outcome in run_series(handed(), execution, plan.whole_grid, ahead):
                sweep_point = in_flight.pop(outcome.series_id)
                rows = series_rows(
                    outcome,
                    provenance,
                    plan.forecast,
                    sweep_point=sweep_point,
                    whole_grid=plan.whole_grid,
                    overrides=plan.overrides,
                    moving=moving.get(outcome.series_id),
                )
                with writing:
                    buffer.add(rows)
                summary = SeriesSummary.of(outcome, sweep_point)
                tally.add(summary)
                if keep:
                    summaries.append(summary)
                points += len(outcome.points)
                bar.advance(len(outcome.points))
        finally:  # the end of the run, Ctrl-C or SIGTERM: finished series are written
            with writing:
                buffer.flush_all()
    seconds = time.monotonic() - start
    count_skipped(1)
    tally.extend(later)
    resumed: list[SeriesSummary] = []
    resumed_tables: list[Tables] = []
    if skipped and index is not None:
        if streamed:  # a streamed run that keeps its tables checked only its first skip
            _check_resumed(index, skipped, plan, hardware)
        if keep_tables:
            for partition in {scenario_partition(s.scenario) for s in skipped}:
                index.refresh(partition)
        resumed, resumed_tables = resumed_series(index, skipped, keep_tables)
        for summary in resumed:  # a run that keeps every summary (a streamed one has none left)
            tally.add(summary)
    if "trends" not in per_run and any(t["frontier"].num_rows for t in resumed_tables):
        # the skipped series' moving frontier's inputs
        budget = per_run.get("uncertainty")
        checked = per_run.get("reality")  # computed once
        per_run = run_tables(trends, plan.forecast.observed, provenance)
        if checked is not None:
            per_run["reality"] = checked
        if budget is not None:
            per_run["uncertainty"] = budget
    return RunReport(
        summaries,
        points,
        seconds,
        provenance.run_id,
        plan.root,
        n_skipped + len(skipped),
        resumed,
        [per_run, *buffer.kept, *resumed_tables] if keep_tables else [],
        buffer.batches_written,
        (ahead.taken - taken) if ahead is not None else 0,
        tally,
    )
