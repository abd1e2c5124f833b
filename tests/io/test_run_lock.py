"""One writing run per dataset root."""

from __future__ import annotations

import json
import logging
import re
import socket
import subprocess
import sys

import pytest

from pipeline.io.lock import LOCK_NAME, DatasetLocked, RunLock


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
    assert not (tmp_path / (LOCK_NAME + ".takeover")).exists()


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
    """A lock file that is not ours to parse is refused with a hint to remove it."""
    (tmp_path / LOCK_NAME).write_text("")
    with pytest.raises(DatasetLocked, match="unreadable"), RunLock(tmp_path):
        pass


def test_run_lock_release_keeps_foreign_lock(tmp_path) -> None:
    """Release does not delete a lock file that another run wrote meanwhile."""
    lock = RunLock(tmp_path)
    lock.acquire()
    _write_lock(tmp_path, 1, "some-other-host.invalid")
    lock.release()
    assert (tmp_path / LOCK_NAME).exists()
