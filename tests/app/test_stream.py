"""A sweep larger than `CHECKED_SERIES` is planned as a stream: made as it runs, same rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import pipeline.app.execute as app_execute
import pipeline.app.plan as app_plan
from pipeline.app.execute import RunReport, execute_plan
from pipeline.app.plan import RunPlan, plan_run
from pipeline.io.tables import SERIES_TABLES, table_spec
from pipeline.schema import compose_config
from pipeline.sweep import expand_sweep, sweep_from_config
from pipeline.sweep.stream import SeriesStream

SWEEP = [
    "sweep=smoke",
    "scaling.grid.max_d_model=16384",
    "execution.n_jobs=1",
    "execution.chunk_size=1",
]
"""Two batch laws x three latencies x two HBM bandwidths: 12 series of three sizes each."""
PER_RUN = {"run_id", "created_at", "written_at"}
"""Columns that differ from run to run by design (the run's id and its clock)."""


def planned(root: Path, say: Any = None, *extra: str) -> RunPlan:
    """The smoke sweep's plan into `root`."""
    args = [f"output.root={root}", *SWEEP, *extra]
    return plan_run(compose_config(args), overrides=args, say=say)


def sorted_rows(report: RunReport, name: str) -> pa.Table:
    """One table of a report, sorted as the dataset is, without its per-run columns."""
    table = pa.concat_tables([t[name] for t in report.tables if name in t])
    table = table.sort_by([(key, "ascending") for key in table_spec(name).sort_keys])
    return table.drop_columns([c for c in table.column_names if c in PER_RUN])


def test_plan_streams_a_sweep_past_checked_series(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `CHECKED_SERIES` the plan holds a stream of the same series in the same order."""
    listed = planned(tmp_path)
    monkeypatch.setattr(app_plan, "CHECKED_SERIES", 4)
    streamed = planned(tmp_path)
    assert isinstance(listed.series, list)
    assert isinstance(streamed.series, SeriesStream)
    assert len(streamed.series) == len(listed.series) == 12
    assert list(streamed.series) == listed.series
    assert streamed.series[::5] == listed.series[::5]
    assert streamed.series[-1] == listed.series[-1]


def test_streamed_run_writes_the_rows_of_a_listed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every series table of a streamed run equals the listed run's, row for row (the same
    command, so the same overrides column, run again without resuming)."""
    again = "output.resume=false"
    listed = execute_plan(planned(tmp_path, None, again), progress=False, keep_tables=True)
    monkeypatch.setattr(app_plan, "CHECKED_SERIES", 0)
    streamed = execute_plan(planned(tmp_path, None, again), progress=False, keep_tables=True)
    assert streamed.points == listed.points
    for name in SERIES_TABLES:
        assert sorted_rows(streamed, name).equals(sorted_rows(listed, name)), name


def test_streamed_resume_skips_the_series_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A streamed sweep run again skips every series it wrote, and reads them back."""
    monkeypatch.setattr(app_plan, "CHECKED_SERIES", 0)
    first = execute_plan(planned(tmp_path), progress=False, keep_tables=True)
    again = execute_plan(planned(tmp_path), progress=False, keep_tables=True)
    assert (first.skipped, len(first.outcomes)) == (0, 12)
    assert (again.skipped, len(again.outcomes), again.points) == (12, 0, 0)
    before = {s.series_id: s.limits for s in first.outcomes}
    assert {s.series_id: s.limits for s in again.resumed} == before


def test_streamed_run_evaluates_before_the_sweep_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first series of a streamed run is evaluated before most of its series are made."""
    import pipeline.sweep.expand as expand

    monkeypatch.setattr(app_plan, "CHECKED_SERIES", 0)
    made: list[object] = []
    load = expand.load_scenario

    def counted(*args: Any) -> Any:
        made.append(args[0])
        return load(*args)

    at_first: list[int] = []
    run_series = app_execute.run_series

    def watched(*args: Any, **kwargs: Any) -> Iterator[Any]:
        for outcome in run_series(*args, **kwargs):
            at_first.append(len(made))
            yield outcome

    monkeypatch.setattr(expand, "load_scenario", counted)
    monkeypatch.setattr(app_execute, "run_series", watched)
    execute_plan(planned(tmp_path), progress=False)
    assert at_first[0] < 12 // 2
    assert at_first[-1] >= 12


def test_streamed_run_into_a_fresh_root_composes_as_it_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Into a root without parts (nothing to resume or set aside), the first series is
    evaluated before the last choice is composed, and each choice is composed once."""
    monkeypatch.setattr(app_plan, "CHECKED_SERIES", 0)
    said: list[str] = []
    at_first: list[list[str]] = []
    run_series = app_execute.run_series

    def watched(*args: Any, **kwargs: Any) -> Iterator[Any]:
        for outcome in run_series(*args, **kwargs):
            at_first.append(list(said))
            yield outcome

    monkeypatch.setattr(app_execute, "run_series", watched)
    execute_plan(planned(tmp_path, said.append), progress=False)
    last = "sweep: composing choice 2/2 (batch=constant)"
    assert last not in at_first[0]
    assert [line for line in said if "composing" in line] == [
        "sweep: composing choice 1/2 (batch=critical)",
        last,
    ]


def test_series_stream_composes_each_choice_once(tmp_path: Path) -> None:
    """However often a stream is walked, each choice combination is composed once, and said."""
    said: list[str] = []
    stream = SeriesStream(
        compose_config([f"output.root={tmp_path}", *SWEEP]),
        sweep_from_config(compose_config(SWEEP)),
        overrides=[f"output.root={tmp_path}", *SWEEP],
        say=said.append,
    )
    assert len(stream.partitions()) == 2
    assert len(list(stream)) == len(list(stream)) == 12
    assert said == [
        "sweep: composing choice 1/2 (batch=critical)",
        "sweep: composing choice 2/2 (batch=constant)",
    ]


def test_expand_sweep_still_lists_every_series(tmp_path: Path) -> None:
    """`expand_sweep` lists the sweep the plan streams, ids unique."""
    args = [f"output.root={tmp_path}", *SWEEP]
    series = expand_sweep(compose_config(args), overrides=args)
    assert len({s.series_id for s in series}) == 12


def test_listed_sweep_spaces_its_choice_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a listed sweep starts composing, a choice's line is said only when the last line is
    `CHOICE_LINE_GAP_S` old; before `start` (a streamed sweep) every line is said."""
    clock = iter([0.0, 0.1, 0.5, 0.95, 1.2, 1.3, 2.5])
    monkeypatch.setattr(app_plan.time, "monotonic", lambda: next(clock))
    said: list[str] = []
    spaced = app_plan._Spaced(said.append)
    spaced("streamed")  # t = 0.0
    spaced.start(1.0)  # t = 0.1
    for text in ["a", "b", "c", "d", "e"]:  # t = 0.5, 0.95, 1.2, 1.3, 2.5
        spaced(text)
    assert said == ["streamed", "c", "e"]


def test_run_hands_the_runner_whole_blocks_of_gpu_memory_series(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The smoke sweep's innermost axis is the HBM bandwidth (blocks of two series that differ
    only in it): its chunk of one series is rounded up to one block, so each block's series go
    to one task (`ExecutionSettings.in_blocks`)."""
    chunks: list[int] = []
    run_series = app_execute.run_series

    def watched(scenarios: Any, settings: Any, *args: Any) -> Iterator[Any]:
        chunks.append(settings.chunk_size)
        yield from run_series(scenarios, settings, *args)

    monkeypatch.setattr(app_execute, "run_series", watched)
    plan = planned(tmp_path)
    assert (plan.execution.chunk_size, plan.series_block) == (1, 2)
    report = execute_plan(plan, progress=False)
    assert chunks == [2]
    assert report.points > 0
