"""A run's summary from its bounded tally: the same lines as from every series, in flat memory."""

from __future__ import annotations

import dataclasses
import pickle
import random
from pathlib import Path
from typing import Any

import pytest

import pipeline.app.execute as app_execute
import pipeline.app.plan as app_plan
from pipeline.app.execute import RunReport, execute_plan
from pipeline.app.plan import plan_run
from pipeline.app.summary import summary_lines
from pipeline.app.tally import MAX_SERIES_SHOWN, RunTally, SeriesSummary, summary_order
from pipeline.io.parts import SeriesIndex
from pipeline.io.read import read_or_empty
from pipeline.schema import compose_config

SMOKE = ["sweep=smoke", "scaling.grid.max_d_model=16384", "execution.n_jobs=1"]
"""Twelve series of three sizes each, evaluated in-process."""


def run(root: Path, *args: str) -> RunReport:
    """The run of `args` into `root`, not resumed."""
    given = [f"output.root={root}", "output.resume=false", *args]
    return execute_plan(plan_run(compose_config(given), overrides=given), progress=False)


def hbm_sweep(n: int) -> list[str]:
    """A sweep of `n` series: H100 SXM's HBM bandwidth from 2 to 4 TB/s, three sizes each."""
    axis = f"+sweep.axes.hardware.hbm_bandwidth_gb_per_s={{start:2000,stop:4000,num:{n}}}"
    return ["scaling.grid.max_d_model=16384", "execution.n_jobs=1", axis]


def test_tally_keeps_the_series_a_sorted_list_shows(tmp_path: Path) -> None:
    """Fed in any order, the tally keeps the first series of the sorted whole (ties in the
    order added), counts them all and sums quirk Q1 over them."""
    evaluated = run(tmp_path, *SMOKE).outcomes
    many = [
        dataclasses.replace(
            s, series_id=f"{k}{s.series_id}"[:16], q1_rows=k, q1_max_hidden_s=float(i * k)
        )
        for k in range(4)
        for i, s in enumerate(evaluated)
    ]
    many += many[:5]  # ties: the same key twice
    random.Random(7).shuffle(many)
    tally = RunTally.of(many)
    shown = sorted(many, key=summary_order)[:MAX_SERIES_SHOWN]
    assert [id(s) for s in tally.shown_grid] == [id(s) for s in shown]
    assert (tally.series, tally.n_grid, tally.n_runs) == (len(many), len(many), 0)
    decided = [s for s in many if s.q1_rows]
    assert tally.q1_rows == sum(s.q1_rows for s in decided)
    assert tally.q1_series == len(decided)
    assert tally.q1_max_hidden_s == max(s.q1_max_hidden_s for s in decided)


def test_streamed_run_prints_the_summary_of_a_listed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A streamed sweep keeps no series summary, yet prints the listed run's lines."""
    listed = run(tmp_path, *hbm_sweep(16))
    monkeypatch.setattr(app_plan, "CHECKED_SERIES", 0)
    streamed = run(tmp_path, *hbm_sweep(16))
    assert (len(listed.outcomes), streamed.outcomes, streamed.tally.series) == (16, [], 16)
    listed_lines = summary_lines(listed.summaries, "ROOT", 0.0, listed.points)
    assert summary_lines(streamed.tally, "ROOT", 0.0, streamed.points) == listed_lines
    assert len(listed_lines) > MAX_SERIES_SHOWN + 2  # a header, the rows shown, a count


def test_streamed_report_does_not_grow_with_the_series(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report a streamed sweep returns is no larger for 4N series than for N."""
    monkeypatch.setattr(app_plan, "CHECKED_SERIES", 0)
    sizes = {}
    for n in (16, 64):
        report = run(tmp_path / str(n), *hbm_sweep(n))
        assert report.tally.series == n
        sizes[n] = len(pickle.dumps(dataclasses.replace(report, seconds=0.0)))
    assert sizes[64] < 1.05 * sizes[16], sizes


def test_listed_report_keeps_every_series(tmp_path: Path) -> None:
    """A listed sweep still returns each series' summary, in the order evaluated."""
    report = run(tmp_path, *hbm_sweep(16))
    assert len(report.outcomes) == report.tally.series == 16
    assert all(isinstance(s, SeriesSummary) for s in report.outcomes)


def test_streamed_run_index_keeps_no_ids_of_its_own_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parts index of a streamed run records the parts it writes without their series
    ids (a listed run's keeps them); run again without resuming, it still replaces each
    series' rows, leaving no series twice in the dataset."""
    indexes: list[SeriesIndex] = []
    build = SeriesIndex.build

    def kept(*args: Any, **kwargs: Any) -> SeriesIndex:
        indexes.append(build(*args, **kwargs))
        return indexes[-1]

    monkeypatch.setattr(app_execute.SeriesIndex, "build", kept)
    sweep = [*hbm_sweep(16), "output.series_per_part=4"]

    def held() -> set[str]:
        return set().union(*(ids for parts in indexes[-1].parts.values() for ids in parts.values()))

    run(tmp_path / "listed", *sweep)
    assert len(held()) == 16
    monkeypatch.setattr(app_plan, "CHECKED_SERIES", 0)
    for _ in range(2):
        run(tmp_path / "streamed", *sweep)
        assert held() == set()
    thresholds = read_or_empty(tmp_path / "streamed", "thresholds")
    assert thresholds.height == thresholds["series_id"].n_unique() == 16


def test_tally_extended_equals_the_tally_of_both(tmp_path: Path) -> None:
    """A tally extended by a later one keeps and counts what one tally of both in order does."""
    evaluated = run(tmp_path, *SMOKE).outcomes
    many = [
        dataclasses.replace(s, series_id=f"{k}{s.series_id}"[:16], q1_rows=k)
        for k in range(3)
        for s in evaluated
    ]
    random.Random(3).shuffle(many)
    first, later = RunTally.of(many[:20]), RunTally.of(many[20:])
    first.extend(later)
    both = RunTally.of(many)
    assert [id(s) for s in first.shown_grid] == [id(s) for s in both.shown_grid]
    counts = ("series", "resumed", "n_runs", "n_grid", "q1_rows", "q1_series", "q1_max_hidden_s")
    assert [getattr(first, c) for c in counts] == [getattr(both, c) for c in counts]


def test_streamed_resume_reads_skipped_series_a_few_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A streamed sweep run again reads the series it skips back in chunks, keeps none of
    them, and prints what the listed sweep run again prints."""
    root = tmp_path / "data"
    first = run(root, *hbm_sweep(16))
    resumed = [f"output.root={root}", *hbm_sweep(16)]
    listed = execute_plan(plan_run(compose_config(resumed), overrides=resumed), progress=False)
    chunks: list[int] = []
    read = app_execute.resumed_series

    def counted(index: SeriesIndex, skipped: Any, keep_tables: bool = False) -> Any:
        chunks.append(len(skipped))
        return read(index, skipped, keep_tables)

    monkeypatch.setattr(app_execute, "resumed_series", counted)
    monkeypatch.setattr(app_execute, "SKIPPED_READ_TOGETHER", 5)
    monkeypatch.setattr(app_plan, "CHECKED_SERIES", 0)
    streamed = execute_plan(plan_run(compose_config(resumed), overrides=resumed), progress=False)
    assert (streamed.skipped, streamed.points, streamed.resumed) == (16, 0, [])
    assert chunks == [5, 5, 5, 1]
    lines = summary_lines(streamed.tally, "ROOT", 0.0, 0, streamed.skipped)
    assert lines == summary_lines(listed.summaries, "ROOT", 0.0, 0, listed.skipped)
    assert lines[1:] == summary_lines(first.summaries, "ROOT", 0.0, 0)[1:]
