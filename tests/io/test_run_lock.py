"""One writing run per dataset root."""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import re
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from pipeline.io import lock
from pipeline.io.lock import (
    LOCK_NAME,
    TAKEOVER_SUFFIX,
    DatasetLocked,
    LockHolder,
    RunLock,
    process_start,
)


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _write_lock(root, pid: int, host: str) -> None:
    content = {"pid": pid, "host": host, "since": "2025-01-01T00:00:00+00:00", "token": "ab"}
    (root / LOCK_NAME).write_text(json.dumps(content))


def test_run_lock_refuses_second_writer(tmp_path) -> None:
    """While one run holds the lock, another gets DatasetLocked naming the holder."""
    with RunLock(tmp_path) as held:
        assert held.holder is not None
        with pytest.raises(DatasetLocked) as info, RunLock(tmp_path):
            pass
        message = str(info.value)
        assert f"pid {held.holder.pid}" in message
        assert socket.gethostname() in message


def test_run_lock_released_on_exit(tmp_path) -> None:
    """Leaving the block removes the lock file, so the next run can take it."""
    with RunLock(tmp_path):
        assert (tmp_path / LOCK_NAME).is_file()
    assert not (tmp_path / LOCK_NAME).exists()
    with RunLock(tmp_path):
        pass


def test_run_lock_released_on_error(tmp_path) -> None:
    """An exception inside the block still releases the lock."""
    with pytest.raises(RuntimeError), RunLock(tmp_path):
        raise RuntimeError("sweep failed")
    assert not (tmp_path / LOCK_NAME).exists()


def test_run_lock_takes_over_stale_lock(tmp_path, caplog) -> None:
    """A lock left by a dead process on this host is taken over with an info line."""
    dead = _dead_pid()
    _write_lock(tmp_path, dead, socket.gethostname())
    with caplog.at_level(logging.INFO, logger="pipeline.io.lock"), RunLock(tmp_path) as lock:
        assert lock.holder is not None
        assert lock.holder.pid != dead
    records = [r for r in caplog.records if "stale lock" in r.getMessage()]
    assert len(records) == 1
    assert records[0].levelno == logging.INFO
    guard = os.open(tmp_path / (LOCK_NAME + TAKEOVER_SUFFIX), os.O_RDWR)
    try:
        fcntl.flock(guard, fcntl.LOCK_EX | fcntl.LOCK_NB)  # not left held
    finally:
        os.close(guard)


def test_run_lock_foreign_host_never_taken_over(tmp_path) -> None:
    """A lock from another host cannot be checked, so it is refused rather than taken over."""
    _write_lock(tmp_path, _dead_pid(), "some-other-host.invalid")
    with (
        pytest.raises(DatasetLocked, match=re.escape("some-other-host.invalid")),
        RunLock(tmp_path),
    ):
        pass
    assert (tmp_path / LOCK_NAME).exists()


def test_run_lock_unreadable_file(tmp_path) -> None:
    """A lock file that is not ours to parse is refused, saying no dmlimits run wrote it."""
    (tmp_path / LOCK_NAME).write_text("")
    with pytest.raises(DatasetLocked, match="no dmlimits run made it"), RunLock(tmp_path):
        pass
    assert (tmp_path / LOCK_NAME).read_text() == ""


def test_run_lock_reused_pid_is_stale(tmp_path) -> None:
    """A lock naming a live pid whose process started at another time is taken over."""
    me = LockHolder.me()
    assert me.start is not None, "needs /proc"
    reused = replace(me, pid=os.getppid(), start=me.start + 12345, token="old")
    (tmp_path / LOCK_NAME).write_text(reused.as_json())
    with RunLock(tmp_path) as lock:
        assert lock.holder is not None
        assert lock.holder.token != "old"


def test_run_lock_other_boot_is_stale(tmp_path) -> None:
    """A lock written before the machine rebooted is taken over even if its pid is alive."""
    me = LockHolder.me()
    earlier = replace(me, pid=os.getppid(), boot_id="another-boot", start=None, token="old")
    (tmp_path / LOCK_NAME).write_text(earlier.as_json())
    with RunLock(tmp_path) as lock:
        assert lock.holder is not None
        assert lock.holder.token != "old"


def test_run_lock_live_holder_with_same_start_is_kept(tmp_path) -> None:
    """A lock whose pid and start time match a live process is never taken over."""
    parent = os.getppid()
    holder = replace(LockHolder.me(), pid=parent, start=process_start(parent), token="live")
    (tmp_path / LOCK_NAME).write_text(holder.as_json())
    with pytest.raises(DatasetLocked, match=f"locked by pid {parent}") as info, RunLock(tmp_path):
        pass
    assert "remove" not in str(info.value)
    assert json.loads((tmp_path / LOCK_NAME).read_text())["token"] == "live"


RACE = """
import os, sys, time
from pathlib import Path
from pipeline.io.lock import DatasetLocked, RunLock
root, start, racers = Path(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
done = root.parent / "attempted"
while time.time() < start:
    pass
try:
    with RunLock(root):
        (done / str(os.getpid())).touch()
        deadline = time.time() + 60
        while len(list(done.iterdir())) < racers and time.time() < deadline:
            time.sleep(0.01)  # hold the lock until every racer has tried
    print("won")
except DatasetLocked as err:
    print("lost:", err)
    (done / str(os.getpid())).touch()
"""


@pytest.mark.slow
def test_run_lock_race_has_one_winner_and_clear_losers(tmp_path) -> None:
    """Processes racing for a root: one wins, each loser names the winner, none sees a half lock."""
    root, racers = tmp_path / "root", 6
    root.mkdir()
    (tmp_path / "attempted").mkdir()
    start = f"{time.time() + 3.0}"
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", RACE, str(root), start, str(racers)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(racers)
    ]
    outputs = [run.communicate(timeout=120)[0].strip() for run in runs]
    assert sorted(o.split(":")[0] for o in outputs) == ["lost"] * (racers - 1) + ["won"], outputs
    for output in outputs:
        if output.startswith("lost"):
            assert re.search(r"locked by pid \d+ on host \S+ since ", output), output
    assert not (root / LOCK_NAME).exists()


def test_run_lock_release_keeps_foreign_lock(tmp_path) -> None:
    """Release does not delete a lock file that another run wrote meanwhile."""
    lock = RunLock(tmp_path)
    lock.acquire()
    _write_lock(tmp_path, 1, "some-other-host.invalid")
    lock.release()
    assert (tmp_path / LOCK_NAME).exists()


def test_flush_lock_serialises_and_survives_a_file_system_without_locks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The flush lock is held exclusively; where flock is refused the block still runs, warned."""
    with lock.flush_lock(tmp_path):
        fd = os.open(tmp_path / lock.FLUSH_LOCK_NAME, os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)

    def refuse(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(lock.fcntl, "flock", refuse)
    ran = []
    with lock.flush_lock(tmp_path):
        ran.append(True)
    assert ran == [True]
    assert "batches are written unserialised" in caplog.text
