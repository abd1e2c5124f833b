"""Batched parts: finished series buffered per partition, written many to a part, never twice."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.app import execute
from pipeline.app.batch import PartBuffer
from pipeline.app.execute import RunReport, execute_plan
from pipeline.app.plan import plan_run
from pipeline.app.write import SeriesRows, series_rows, tables_of
from pipeline.execute.series import SeriesOutcome, evaluate_series
from pipeline.io.dataset import gather
from pipeline.io.read import read_or_empty
from pipeline.io.rows import Provenance, SeriesKey
from pipeline.io.tables import SERIES_TABLES
from pipeline.schema import compose_config
from pipeline.sweep import SweepSeries
from tests.command import stable_table
from tests.io.helpers import part_files, series_tables
from tests.robustness.damage import FIXTURE

SWEEP = [
    "scaling.grid.max_d_model=16384",
    "execution.n_jobs=1",
    "+sweep.axes.hardware.hbm_bandwidth_gb_per_s=[2000,3000,3352,4000]",
    "+sweep.choices.batch=[critical,constant]",
]
"""Eight series of three sizes each in two partitions, evaluated in-process."""
V1_OVERRIDES = [
    "scaling.grid.kind=list",
    "scaling.grid.d_models=[12288,16384]",
    "+sweep.choices.scaling=[dense,sparse]",
    "execution.n_jobs=1",
]
"""The command that wrote tests/fixtures/dataset_v1 (its README)."""
V1_IDS = {"dense": "c21b0265b90f2fb7", "sparse": "86f1ea3a8af0fd57"}
"""The fixture's series ids (their part names), by scaling law."""


def run(root: Path, *extra: str) -> RunReport:
    """The eight-series sweep into `root` with extra overrides."""
    args = [f"output.root={root}", *SWEEP, *extra]
    plan = plan_run(compose_config(args), overrides=args)
    return execute_plan(plan, progress=False)


def no_duplicates(root: Path) -> None:
    """No table holds a series' row twice."""
    for table, keys in [
        ("thresholds", ["series_id"]),
        ("series", ["series_id"]),
        ("forecasts", ["series_id", "growth_per_year"]),
        ("points", ["series_id", "d_model"]),
    ]:
        assert read_or_empty(root, table).select(keys).is_duplicated().sum() == 0, table


def same_rows(mine: Path, reference: Path) -> None:
    """Both roots hold the same rows in every table (run ids and overrides aside)."""
    for table in SERIES_TABLES:
        a, b = stable_table(mine, table), stable_table(reference, table)
        if table == "series":  # the overrides name each run's own output.root
            a, b = a.drop("overrides"), b.drop("overrides")
        assert a.equals(b), table


def rows_of(partition: str, series_id: str) -> SeriesRows:
    """A series of batch law `partition` without rows (enough for the buffer's policy)."""
    key = SeriesKey("h100_sxm", "dense", partition, 1.0, series_id, 1.0)
    return SeriesRows(key, {name: [] for name in SERIES_TABLES})


@pytest.fixture
def batches_as_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """A buffer that keeps its batches keeps each as the ids of its series, in order."""
    monkeypatch.setattr(
        "pipeline.app.batch.tables_of", lambda rows: [r.key.series_id[0] for r in rows]
    )


def series_per_batch(buffer: PartBuffer) -> list[int]:
    """The number of series in each batch the buffer flushed (and kept), in order."""
    return [len(batch) for batch in buffer.kept]


@pytest.mark.usefixtures("batches_as_ids")
def test_part_buffer_flushes_a_full_partition_and_at_the_end() -> None:
    """Three series with two per part: one batch when the second arrives, one at the end."""
    buffer = PartBuffer(None, series_per_part=2, flush_s=60.0, keep=True, clock=lambda: 0.0)
    for sid in ("a" * 16, "b" * 16, "c" * 16):
        buffer.add(rows_of("critical", sid))
    assert series_per_batch(buffer) == [2]
    buffer.flush_all()
    assert series_per_batch(buffer) == [2, 1]


@pytest.mark.usefixtures("batches_as_ids")
def test_part_buffer_flushes_a_partition_whose_oldest_series_waited_flush_s() -> None:
    """A partition is written once its oldest series has waited flush_s, others keep waiting."""
    now = [0.0]
    buffer = PartBuffer(None, series_per_part=100, flush_s=10.0, keep=True, clock=lambda: now[0])
    buffer.add(rows_of("critical", "a" * 16))
    now[0] = 5.0
    buffer.add(rows_of("constant", "b" * 16))
    now[0] = 10.0
    buffer.add(rows_of("constant", "c" * 16))
    assert series_per_batch(buffer) == [1]  # critical went, constant waits
    buffer.flush_all()
    assert series_per_batch(buffer) == [1, 2]


@pytest.mark.usefixtures("batches_as_ids")
def test_part_buffer_keeps_one_copy_of_a_series_added_twice() -> None:
    """A series evaluated twice in a run is buffered, so written, once."""
    buffer = PartBuffer(None, series_per_part=2, keep=True)
    buffer.add(rows_of("critical", "a" * 16))
    buffer.add(rows_of("critical", "a" * 16))
    buffer.flush_all()
    assert series_per_batch(buffer) == [1]


def test_part_buffer_refuses_an_empty_part() -> None:
    """series_per_part below one is a programming error."""
    with pytest.raises(ValueError, match="at least 1"):
        PartBuffer(None, series_per_part=0)


def test_batch_tables_equal_the_per_series_tables_concatenated() -> None:
    """One table built over many series holds exactly the rows of each series' own tables."""
    args = [*SWEEP, "output.root=unused"]
    plan = plan_run(compose_config(args), overrides=args, write=False)
    provenance = Provenance("batch-test")
    outcomes = [evaluate_series(s.scenario) for s in plan.series[:3]]
    forecast = plan.forecast
    batch = tables_of([series_rows(o, provenance, forecast) for o in outcomes])
    alone = [series_tables(o, provenance, forecast) for o in outcomes]
    assert list(batch) == list(SERIES_TABLES)
    for name in SERIES_TABLES:
        assert batch[name].equals(pa.concat_tables(t[name] for t in alone)), name


def test_sweep_writes_fewer_parts_than_series_with_the_same_rows(tmp_path: Path) -> None:
    """Eight series in two partitions make one part per table and partition, rows unchanged."""
    batched, single = tmp_path / "batched", tmp_path / "single"
    report = run(batched)
    run(single, "output.series_per_part=1")
    assert report.batches == 2
    assert len(part_files(batched, "points")) == 2
    assert len(part_files(single, "points")) == 8  # one series per part, as version 1 wrote
    same_rows(batched, single)
    assert gather(batched).ok


def test_rerun_without_resume_leaves_no_duplicate_series(tmp_path: Path) -> None:
    """Running a one-part-per-series dataset (version 1's layout) again, batched, replaces each
    series' rows: its old parts are gone."""
    root = tmp_path / "data"
    run(root, "output.series_per_part=1")
    first = stable_table(root, "thresholds")
    again = run(root, "output.resume=false")
    assert (again.skipped, len(again.outcomes)) == (0, 8)
    no_duplicates(root)
    assert stable_table(root, "thresholds").equals(first)
    assert len(part_files(root, "thresholds")) == 2  # the first run's parts are gone
    assert gather(root).ok


def test_resume_after_an_interrupted_run_evaluates_only_missing_series(tmp_path: Path) -> None:
    """A dataset whose last batch lost its thresholds part is completed by a resumed run."""
    root, whole = tmp_path / "data", tmp_path / "whole"
    run(whole)
    run(root, "output.series_per_part=2")
    marker = part_files(root, "thresholds")[-1]  # killed before this batch's marker was renamed
    marker.unlink()
    again = run(root)
    assert (again.skipped, len(again.outcomes)) == (6, 2)
    no_duplicates(root)
    same_rows(root, whole)
    assert gather(root).ok


def fixture_series(*extra: str) -> tuple[list[str], list[SweepSeries]]:
    """The overrides and series of the version-1 fixture's command, with the fixture's ids."""
    args = [*V1_OVERRIDES, *extra]
    series = plan_run(compose_config(args), overrides=args, write=False).series
    return args, [dataclasses.replace(s, series_id=V1_IDS[s.scenario.scaling_name]) for s in series]


def test_version1_dataset_resumes_and_reads(tmp_path: Path) -> None:
    """One-part-per-series parts count as done, and their rows are read back for the run
    (under the fixture's forecasts: its hand-set trajectories, read before any source)."""
    root = shutil.copytree(FIXTURE, tmp_path / "v1")
    args, series = fixture_series(f"output.root={root}", "forecast=hand_set", "~sources")
    plan = plan_run(compose_config(args), overrides=args)
    report = execute_plan(plan, progress=False, series=series, keep_tables=True)
    assert (report.skipped, report.outcomes) == (2, [])
    thresholds = pa.concat_tables(t["thresholds"] for t in report.tables if "thresholds" in t)
    assert sorted(thresholds.column("series_id").to_pylist()) == sorted(V1_IDS.values())
    assert {s.n_points for s in report.resumed} == {2}


def test_interrupted_run_writes_the_series_it_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C after three series (none yet due for a flush) still writes those three."""
    real = execute.run_series

    def interrupted(*args: object, **kwargs: object) -> Iterator[SeriesOutcome]:
        for n, outcome in enumerate(real(*args, **kwargs)):
            if n == 3:
                raise KeyboardInterrupt
            yield outcome

    monkeypatch.setattr(execute, "run_series", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, "output.series_per_part=100", "output.flush_s=3600")
    assert read_or_empty(tmp_path, "thresholds").height == 3
    no_duplicates(tmp_path)
    assert gather(tmp_path).ok
