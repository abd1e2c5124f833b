"""One writing run per dataset root: a lock file created with O_CREAT | O_EXCL.

The lock file ROOT/.dmlimits.lock holds JSON {pid, host, since, token}. A second run on the same
root gets `DatasetLocked` naming the holder. A lock left by a process that is no longer alive on
this host is stale and is taken over (an info log line, no warning). A lock held from another
host cannot be checked and is never taken over: remove the file by hand once that run is gone.

Taking over is guarded by a second O_EXCL file (".dmlimits.lock.takeover"), so two runs that
find the same stale lock cannot both remove it and then each believe they hold a fresh one.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from pipeline.io.parquet import OutputError

LOCK_NAME = ".dmlimits.lock"
TAKEOVER_SUFFIX = ".takeover"
_ATTEMPTS = 3

log = logging.getLogger(__name__)


class DatasetLocked(OutputError):  # noqa: N818 -- names a state, like FileExistsError
    """Another run holds the dataset root's lock."""


@dataclass(frozen=True, slots=True)
class LockHolder:
    """The contents of a lock file."""

    pid: int
    host: str
    since: str
    """ISO 8601 UTC time the lock was taken."""
    token: str
    """Random; tells two holders with the same pid and host apart (pid reuse)."""

    def describe(self) -> str:
        return f"pid {self.pid} on host {self.host} since {self.since}"


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


def _read_holder(path: Path) -> LockHolder | None:
    """The holder recorded in a lock file; None if the file is gone.

    Raises `DatasetLocked` if the file exists but cannot be parsed (a writer died between
    creating and filling it, or someone else's file): that needs a human to look.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        data = json.loads(text)
        return LockHolder(
            int(data["pid"]), str(data["host"]), str(data["since"]), str(data["token"])
        )
    except (ValueError, KeyError, TypeError):
        raise DatasetLocked(
            f"lock file {path} is unreadable ({text[:60]!r}); remove it if no run is writing"
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
            me = LockHolder(
                os.getpid(),
                socket.gethostname(),
                datetime.now(UTC).isoformat(timespec="seconds"),
                secrets.token_hex(8),
            )
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                other = _read_holder(self.path)
                if other is None:
                    continue  # released between our open and our read: try again
                if other.host != me.host or _pid_alive(other.pid):
                    raise DatasetLocked(
                        f"dataset {self.path.parent} is locked by {other.describe()} "
                        f"(lock file {self.path})"
                    ) from None
                self._take_over(other)
                continue
            except OSError as exc:
                raise OutputError(
                    f"cannot create lock file {self.path}: {exc.strerror or exc}"
                ) from None
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(
                    {"pid": me.pid, "host": me.host, "since": me.since, "token": me.token}, fh
                )
                fh.flush()
                os.fsync(fh.fileno())
            self.holder = me
            return me
        raise DatasetLocked(f"could not take {self.path} after {_ATTEMPTS} attempts (contended)")

    def _take_over(self, stale: LockHolder) -> None:
        """Remove a stale lock file, unless another run replaced it meanwhile."""
        guard = self.path.with_name(self.path.name + TAKEOVER_SUFFIX)
        try:
            fd = os.open(guard, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            raise DatasetLocked(
                f"another run is taking over the stale lock {self.path} "
                f"(remove {guard} if no run is starting)"
            ) from None
        try:
            if _read_holder(self.path) == stale:
                self.path.unlink(missing_ok=True)
                log.info("took over stale lock %s left by %s", self.path, stale.describe())
        finally:
            os.close(fd)
            guard.unlink(missing_ok=True)

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
