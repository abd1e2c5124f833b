"""Processes and locks: workers end with their run, locks are whole and safely stale, and the
temporary files of a killed writer are reported and cleaned."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.io import parquet
from pipeline.io.columns import THRESHOLDS_SCHEMA
from pipeline.io.dataset import gather
from pipeline.io.lock import LOCK_NAME, DatasetLocked, LockHolder, RunLock
from pipeline.io.parquet import STALE_TEMP_S, clean_stale_temps
from pipeline.io.read import partition_of
from tests.command import command_env, dmlimits_argv
from tests.io.helpers import write_part
from tests.robustness.damage import DATE, a_part, nightly_copy, plain_copy

WORKER_EXIT_S = 15.0
"""Bound on how long an orphaned worker may outlive its run (it polls every 0.5 s)."""
LONG_SWEEP = (
    "sweep=smoke",
    "scaling.grid.max_d_model=100000",
    "output.whole_grid=true",
    "execution.n_jobs=2",
)
"""A sweep that keeps two workers busy for longer than the test waits."""
LONG_RUNS = {
    # kind -> (arguments, whether its workers start only once the run writes)
    "loky": ((*LONG_SWEEP, "execution.chunk_size=1", "execution.ahead=false"), True),
    "ahead": (("-m", "hardware=v100_sxm,a100_sxm", *LONG_SWEEP), False),
}
"""A run's joblib (loky) workers, and a command's workers evaluating series ahead (forked
while the command line is checked: docs/scale-out.md)."""


def children(pid: int) -> list[int]:
    """The pids of the processes whose parent is `pid` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat[stat.rfind(")") + 2 :].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    """Whether `pid` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize("kind", list(LONG_RUNS))
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP], ids=str)
def test_workers_end_with_killed_run(sig: signal.Signals, kind: str, tmp_path: Path) -> None:
    """Killing only the main process of a run ends every worker process it started."""
    args, writing = LONG_RUNS[kind]
    run = subprocess.Popen(
        dmlimits_argv(*args, f"output.root={tmp_path / 'data'}"),
        cwd=tmp_path,
        env=command_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while len(children(run.pid)) < 2 or (
            writing and not (tmp_path / "data" / "series").exists()
        ):
            assert run.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no workers started"
            time.sleep(0.1)
        workers = children(run.pid)
        run.send_signal(sig)
        run.wait(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    deadline = time.monotonic() + WORKER_EXIT_S
    while any(running(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [w for w in workers if running(w)] == []


def _holder(**changes: object) -> LockHolder:
    return replace(LockHolder.me(), token="old", **changes)  # type: ignore[arg-type]


STALE_LOCKS = {
    # id -> the record of a lock whose holder is provably gone
    "dead_pid": lambda dead: _holder(pid=dead, start=None),
    "reused_pid": lambda dead: _holder(pid=os.getppid(), start=1),
    "other_boot": lambda dead: _holder(pid=os.getppid(), boot_id="00000000-boot"),
    "dead_pid_old_format": lambda dead: {"pid": dead, "host": socket.gethostname(),
                                         "since": "2025-01-01T00:00:00+00:00", "token": "old"},
}  # fmt: skip


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.mark.parametrize("case", list(STALE_LOCKS))
def test_stale_lock_taken_over(case: str, tmp_path: Path) -> None:
    """A lock whose holder is gone (dead, reused pid, earlier boot) is taken over."""
    record = STALE_LOCKS[case](_dead_pid())
    text = record.as_json() if isinstance(record, LockHolder) else json.dumps(record)
    (tmp_path / LOCK_NAME).write_text(text)
    with RunLock(tmp_path) as lock:
        assert lock.holder is not None
        assert json.loads((tmp_path / LOCK_NAME).read_text())["token"] == lock.holder.token
    assert not (tmp_path / LOCK_NAME).exists()


LIVE_OR_UNKNOWN = {
    "live_parent": lambda: _holder(pid=os.getppid(), start=None).as_json(),
    "other_host": lambda: _holder(pid=1, host="elsewhere.invalid").as_json(),
    "empty_file": lambda: "",
    "half_json": lambda: '{"pid": 12',
    "not_json": lambda: "locked by Bob\n",
    "wrong_types": lambda: json.dumps({"pid": "x", "host": 1, "since": 2, "token": 3}),
}


@pytest.mark.parametrize("case", list(LIVE_OR_UNKNOWN))
def test_live_or_unknown_lock_refused_and_kept(case: str, tmp_path: Path) -> None:
    """A live, foreign-host or unparsable lock is refused in one line and never removed."""
    text = LIVE_OR_UNKNOWN[case]()
    (tmp_path / LOCK_NAME).write_text(text)
    with pytest.raises(DatasetLocked) as info, RunLock(tmp_path):
        pass
    message = str(info.value)
    assert "\n" not in message
    assert str(tmp_path / LOCK_NAME) in message
    if case in ("live_parent", "other_host"):
        assert "locked by pid" in message
        assert "remove" not in message
    assert (tmp_path / LOCK_NAME).read_text() == text


@pytest.mark.slow
def test_nightly_sigterm_releases_lock_and_staging(tmp_path: Path) -> None:
    """A nightly run stopped with SIGTERM removes its lock and its staging folder."""
    root = tmp_path / "nightly"
    run = subprocess.Popen(
        dmlimits_argv(
            "+experiment=nightly", f"output.nightly_root={root}", "output.run_date=2025-01-01",
            "output.whole_grid=true", "execution.n_jobs=2", "execution.chunk_size=1",
        ),
        cwd=tmp_path, env=command_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while len(children(run.pid)) < 2:
            assert run.poll() is None, "the run ended before it could be stopped"
            assert time.monotonic() < deadline
            time.sleep(0.1)
        run.send_signal(signal.SIGTERM)
        assert run.wait(timeout=60) != 0
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert not (root / LOCK_NAME).exists()
    assert list((root / ".staging").iterdir()) == []


def _temp_beside(part: Path, age_s: float, pid: int = 4242) -> Path:
    temp = part.with_name(f".{part.name}.{pid}.abcd1234.tmp")
    temp.write_bytes(b"half a part")
    moment = time.time() - age_s
    os.utime(temp, (moment, moment))
    return temp


def test_stale_temp_part_cleaned_at_next_write(tmp_path: Path) -> None:
    """A killed writer's old temporary part is deleted by the next write into its folder."""
    root = plain_copy(tmp_path / "root")
    part = a_part(root, "thresholds")
    stale = _temp_beside(part, STALE_TEMP_S + 60)
    fresh = _temp_beside(part, 1, pid=4343)
    parquet._cleaned_dirs.discard(part.parent)
    table = pq.read_table(part)
    for key, value in partition_of(part).items():
        table = table.append_column(key, [[value] * table.num_rows])
    for field in THRESHOLDS_SCHEMA:  # columns added after the fixture's version: null
        if field.name not in table.column_names:
            table = table.append_column(field, pa.nulls(table.num_rows, field.type))
    table = table.select(THRESHOLDS_SCHEMA.names).cast(THRESHOLDS_SCHEMA)
    write_part(root, "thresholds", table, partition_of(part), "c21b0265b90f2fb7")
    assert not stale.exists()
    assert fresh.exists(), "a temporary file that may belong to a live write stays"


@pytest.mark.parametrize(
    "name",
    [".notes.tmp", ".part-c21b0265b90f2fb7.parquet.tmp", "part-c21b0265b90f2fb7.parquet.1.ab.tmp",
     ".part-XYZ.parquet.1.ab.tmp", ".part-c21b0265b90f2fb7.parquet.1.ab.tmp.keep"],
)  # fmt: skip
def test_temp_cleanup_leaves_other_names(name: str, tmp_path: Path) -> None:
    """Only names of the writer's temporary-file pattern are deleted, however old."""
    folder = tmp_path / "p"
    folder.mkdir()
    other = folder / name
    other.write_text("not ours\n")
    os.utime(other, (0, 0))
    assert clean_stale_temps(folder) == []
    assert other.exists()


@pytest.mark.parametrize("table", ["points", "thresholds", "forecasts", "series"])
@pytest.mark.parametrize("layout", ["plain", "nightly"])
def test_gather_reports_temp_parts_of_every_table(table: str, layout: str, tmp_path: Path) -> None:
    """gather lists a leftover temporary part in any table, in plain and nightly roots."""
    root = (plain_copy if layout == "plain" else nightly_copy)(tmp_path / "root")
    temp = _temp_beside(a_part(root, table), 0)
    report = gather(root)
    assert report.temp_files == (temp,)
    assert str(temp) in report.format()
    assert (root / DATE).is_dir() == (layout == "nightly")
