"""One writing run per dataset root: a lock file that appears whole or not at all.

The lock file ROOT/.dmlimits.lock holds JSON {pid, host, since, token, boot_id, start}. It is
written to a temporary file, fsynced, and hard-linked to its name (`os.link` fails if the name
exists), so a reader never sees a partial lock: two runs racing for the root get one winner,
and the loser is told "locked by pid X on host Y since T".

A lock is stale when its holder is provably gone: same host, and the machine rebooted since
(`boot_id` differs), or no process has that pid, or the process with that pid started at
another time (`start`, from /proc/<pid>/stat: the pid was reused). A stale lock is taken over
(an info log line). A lock held from another host cannot be checked and is never taken over.

Taking over is serialised by `flock` on ".dmlimits.lock.takeover", which the kernel releases
when its holder dies, so a killed run never leaves a guard that blocks the next one.

Plain runs do not take the root's lock (several may write one root at once, e.g. the jobs of a
multirun on a cluster), but their batch writes are serialised by `flush_lock`, a blocking
`flock` on ".dmlimits.lock.flush": a batch's check for parts already holding its series, their
removal and its own parts' writes happen as one step, so two runs evaluating the same series at
once still leave its rows in one part per table.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from pipeline.io.parquet import OutputError

LOCK_NAME = ".dmlimits.lock"
TAKEOVER_SUFFIX = ".takeover"
FLUSH_LOCK_NAME = LOCK_NAME + ".flush"
"""The batch writers' lock file at the top of a root (`flush_lock`)."""
_ATTEMPTS = 3
_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")

log = logging.getLogger(__name__)


class DatasetLocked(OutputError):  # noqa: N818 -- names a state, like FileExistsError
    """Another run holds the dataset root's lock."""


def boot_id() -> str | None:
    """This boot of the machine (Linux), or None where it cannot be known."""
    try:
        return _BOOT_ID.read_text(encoding="ascii").strip()
    except OSError:
        return None


def process_start(pid: int) -> int | None:
    """When process `pid` started, in clock ticks since boot (/proc/<pid>/stat field 22);
    None if there is no such process or no /proc."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # the name may hold spaces and parentheses
    try:
        return int(fields[19])  # fields from 3 (state) on: 22 is index 19
    except (IndexError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class LockHolder:
    """The contents of a lock file."""

    pid: int
    host: str
    since: str
    """ISO 8601 UTC time the lock was taken."""
    token: str
    """Random; tells two holders with the same pid and host apart."""
    boot_id: str | None = None
    """The holder's machine boot (Linux); a lock from an earlier boot is stale."""
    start: int | None = None
    """The holder's process start time (`process_start`); another start time means pid reuse."""

    def describe(self) -> str:
        return f"pid {self.pid} on host {self.host} since {self.since}"

    def as_json(self) -> str:
        return json.dumps(
            {
                "pid": self.pid,
                "host": self.host,
                "since": self.since,
                "token": self.token,
                "boot_id": self.boot_id,
                "start": self.start,
            }
        )

    @classmethod
    def me(cls) -> LockHolder:
        """A record of this process, now."""
        pid = os.getpid()
        return cls(
            pid,
            socket.gethostname(),
            datetime.now(UTC).isoformat(timespec="seconds"),
            secrets.token_hex(8),
            boot_id(),
            process_start(pid),
        )


def _pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host (signal 0 only checks)."""
    if pid <= 0:
        return False  # os.kill(0 or -n) would signal a process group
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by another user
    return True


def holder_alive(holder: LockHolder) -> bool:
    """Whether the lock's holder may still run: True unless provably gone (see the module)."""
    if holder.host != socket.gethostname():
        return True  # cannot be checked from here
    here = boot_id()
    if holder.boot_id is not None and here is not None and holder.boot_id != here:
        return False  # the machine rebooted since
    if not _pid_alive(holder.pid):
        return False
    if holder.start is not None:
        start = process_start(holder.pid)
        if start is not None and start != holder.start:
            return False  # that pid now belongs to another process
    return True


def _read_holder(path: Path) -> LockHolder | None:
    """The holder recorded in a lock file; None if the file is gone.

    Raises `DatasetLocked` if the file cannot be parsed: dmlimits writes its locks whole, so
    such a file was not written by a run of this dmlimits.
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    try:
        data = json.loads(text)
        start = data.get("start")
        return LockHolder(
            int(data["pid"]),
            str(data["host"]),
            str(data["since"]),
            str(data["token"]),
            None if data.get("boot_id") is None else str(data["boot_id"]),
            None if start is None else int(start),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        raise DatasetLocked(
            f"lock file {path} holds no dmlimits lock record ({text[:60]!r}); dmlimits writes "
            "its locks whole, so no dmlimits run made it: find out what did before removing it"
        ) from None


class RunLock:
    """Context manager holding the dataset root's lock for one run."""

    def __init__(self, root: Path | str) -> None:
        self.path = Path(root) / LOCK_NAME
        self.holder: LockHolder | None = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def acquire(self) -> LockHolder:
        """Take the lock, taking over a stale one; raise `DatasetLocked` if a live run holds it."""
        if self.holder is not None:
            raise DatasetLocked(f"{self.path} is already held by this RunLock")
        for _ in range(_ATTEMPTS):
            me = LockHolder.me()
            if self._link(me):
                self.holder = me
                return me
            other = _read_holder(self.path)
            if other is None:
                continue  # released between our link and our read: try again
            if holder_alive(other):
                raise DatasetLocked(
                    f"dataset {self.path.parent} is locked by {other.describe()} "
                    f"(lock file {self.path})"
                )
            self._take_over(other)
        raise DatasetLocked(f"could not take {self.path} after {_ATTEMPTS} attempts (contended)")

    def _link(self, me: LockHolder) -> bool:
        """Publish our record as the lock file, whole; False if a lock file exists."""
        temp = self.path.with_name(f"{LOCK_NAME}.{me.pid}.{me.token}.tmp")
        try:
            with open(temp, "x", encoding="utf-8") as fh:
                fh.write(me.as_json())
                fh.flush()
                os.fsync(fh.fileno())
            os.link(temp, self.path)
        except FileExistsError:
            return False
        except OSError as exc:
            raise OutputError(
                f"cannot create lock file {self.path}: {exc.strerror or exc}"
            ) from None
        finally:
            temp.unlink(missing_ok=True)
        return True

    def _take_over(self, stale: LockHolder) -> None:
        """Remove a stale lock file, unless another run replaced it meanwhile."""
        guard = self.path.with_name(self.path.name + TAKEOVER_SUFFIX)
        fd = _open_lock_file(guard)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise DatasetLocked(
                    f"another run is taking over the stale lock {self.path} left by "
                    f"{stale.describe()}; try again"
                ) from None
            if _read_holder(self.path) == stale:
                self.path.unlink(missing_ok=True)
                log.info("took over stale lock %s left by %s", self.path, stale.describe())
        finally:
            os.close(fd)  # releases the flock

    def release(self) -> None:
        """Remove the lock file if it is still ours; safe to call twice."""
        if self.holder is None:
            return
        try:
            if _read_holder(self.path) == self.holder:
                self.path.unlink(missing_ok=True)
        except DatasetLocked:
            pass  # replaced by something unreadable: not ours to remove
        finally:
            self.holder = None


@contextlib.contextmanager
def flush_lock(root: Path | str) -> Iterator[None]:
    """Hold ROOT/.dmlimits.lock.flush exclusively (waiting for it) while the block runs.

    The kernel releases the `flock` when the holder exits or dies, so a killed run never blocks
    the next one; the file itself stays (readers ignore it, as every `.dmlimits.lock*` file). On
    a file system without locks the block runs unlocked, with a warning: concurrent runs of the
    same series there may leave one in two parts, which `dmlimits-gather` reports.
    """
    path = Path(root) / FLUSH_LOCK_NAME
    fd = _open_lock_file(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:  # ENOLCK, EOPNOTSUPP: a file system without locks
            log.warning("cannot lock %s (%s): batches are written unserialised", path, exc)
        yield
    finally:
        os.close(fd)  # releases the flock


def _open_lock_file(path: Path) -> int:
    """A descriptor of `path` (created if missing) to `flock`; OutputError if it cannot be."""
    try:
        return os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    except OSError as exc:
        raise OutputError(f"cannot open {path}: {exc.strerror or exc}") from None
