"""One source's copy for this run: shipped, read from a path, or fetched with a fallback.

- `package:<file>`: the snapshot shipped in `pipeline/sources/data/`, dated by `shipped.csv`.
- a path: the file as it is now; a missing or unreadable file is a one-line `SourceError`.
- a URL: fetched (`http.http_get`) with If-None-Match when the store has a copy with an ETag.
  200 with a good body: stored by hash, to become the last good copy once it has passed every
  check (`Snapshot.pending`). 304: the stored copy is current (fresh, fetched_at now). Any
  failure after the retries: the last good copy, marked stale with the failure and its age; no
  copy at all is a one-line `SourceError`.

Every body is checked (`body.body_problem`) and, through `check`, parsed (its columns, its rows
against their plausibility bounds) before it may replace the last good copy: a renamed column
or a copy of no usable row on the server never replaces a usable copy. The caller records it
as the last good copy (`record_good`) only after its own checks (the fit) passed too.
A path must be a regular file (not a directory, a named pipe or a device) within the size
limit.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import stat
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from pipeline.schema.errors import InputError
from pipeline.sources.body import body_problem
from pipeline.sources.http import FetchError, Response, http_get
from pipeline.sources.settings import (
    PACKAGE_PREFIX,
    FetchSettings,
    SourceKind,
    SourceSpec,
)
from pipeline.sources.store import SnapshotStore, StoredCopy, content_hash

DATA_PACKAGE = "pipeline.sources.data"
SHIPPED_FILE = "shipped.csv"
SECONDS_PER_DAY = 86_400.0


class SourceError(InputError):
    """A source cannot be used: one line naming the source and what is wrong."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The copy of one source a run uses, and where it came from."""

    spec: SourceSpec
    body: bytes
    content_hash: str
    snapshot_date: dt.date
    """The date of the data: the shipped snapshot's, or the day it was fetched or read."""
    fetched_at: dt.datetime | None
    """When the copy was fetched, confirmed (304) or read (UTC); None for a shipped snapshot."""
    age_days: float
    """Days from the copy's fetch (or snapshot date) to when this run read it (the clock, not
    the run date of a nightly run for an earlier date)."""
    stale: bool = False
    """True when a fetch failed and the last good copy is used instead."""
    stale_reason: str | None = None
    """Why (the fetch's last failure); None when not stale."""
    licence: str | None = None
    """The shipped snapshot's licence (CC BY 4.0 for Epoch's data); None for other copies."""
    pending: StoredCopy | None = None
    """The last-good record to make (`record_good`) once the copy passed every check: a fresh
    fetch or a 304's confirmation; None for every other copy."""

    @property
    def name(self) -> str:
        """The source's role (frontier_runs, accelerators)."""
        return self.spec.name


def shipped_manifest() -> dict[str, dict[str, str]]:
    """file -> its shipped.csv row (snapshot_date, licence, attribution, live_url)."""
    text = resources.files(DATA_PACKAGE).joinpath(SHIPPED_FILE).read_text("utf-8")
    return {row["file"]: row for row in csv.DictReader(io.StringIO(text))}


def _shipped(spec: SourceSpec, now: dt.datetime) -> Snapshot:
    name = spec.location[len(PACKAGE_PREFIX) :]
    manifest = shipped_manifest()
    if name not in manifest:
        raise SourceError(
            f"source {spec.name}: no shipped snapshot {name!r} (shipped: {', '.join(manifest)})"
        )
    body = resources.files(DATA_PACKAGE).joinpath(name).read_bytes()
    day = dt.date.fromisoformat(manifest[name]["snapshot_date"])
    age = (now.date() - day).days
    return Snapshot(
        spec, body, content_hash(body), day, None, float(age), licence=manifest[name]["licence"]
    )


def _file_problem(mode: int) -> str | None:
    """Why a path of this stat mode is not a file to read (a directory, a pipe, a device)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory, not a CSV file"
    if stat.S_ISFIFO(mode):
        return "is a named pipe, not a CSV file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a CSV file"
    return "is not a regular file"


def _local(spec: SourceSpec, now: dt.datetime, max_bytes: int) -> Snapshot:
    path = Path(spec.location).expanduser()
    try:
        info = path.stat()
    except FileNotFoundError:
        raise SourceError(f"source {spec.name}: {path} does not exist") from None
    except OSError as err:
        raise SourceError(f"source {spec.name}: cannot read {path}: {err.strerror}") from None
    problem = _file_problem(info.st_mode)
    if problem is None and info.st_size > max_bytes:
        problem = f"is {info.st_size:,} bytes, over the {max_bytes:,}-byte limit"
    if problem is not None:
        raise SourceError(f"source {spec.name}: {path} {problem}")
    try:
        with path.open("rb") as handle:
            body = handle.read(max_bytes + 1)
        modified = dt.datetime.fromtimestamp(info.st_mtime, dt.UTC)
    except OSError as err:
        raise SourceError(f"source {spec.name}: cannot read {path}: {err.strerror}") from None
    if len(body) > max_bytes:
        raise SourceError(f"source {spec.name}: {path} is over the {max_bytes:,}-byte limit")
    age = max(0.0, (now - modified).total_seconds() / SECONDS_PER_DAY)
    return Snapshot(spec, body, content_hash(body), modified.date(), now, age)


def _fallback(
    spec: SourceSpec, store: SnapshotStore | None, reason: str, now: dt.datetime
) -> Snapshot:
    last = store.latest(spec.name) if store is not None else None
    if store is None or last is None or last.location != spec.location:
        where = "no store" if store is None else f"no earlier copy in {store.directory}"
        raise SourceError(f"source {spec.name}: {reason}; {where}")
    body = store.read(last.content_hash)
    if body is None:  # removed since latest() checked it
        raise SourceError(f"source {spec.name}: {reason}; the earlier copy has gone")
    age = max(0.0, (now - last.fetched_at).total_seconds() / SECONDS_PER_DAY)
    return Snapshot(
        spec, body, last.content_hash, last.fetched_at.date(), last.fetched_at, age, True, reason
    )


def _fetched(
    spec: SourceSpec,
    store: SnapshotStore | None,
    fetch: FetchSettings,
    now: dt.datetime,
    check: Callable[[bytes, dt.date], None],
    get: Callable[..., Response],
) -> Snapshot:
    last = store.latest(spec.name) if store is not None else None
    if last is not None and last.location != spec.location:
        last = None  # a copy of another URL is not this source's

    def whole(body: bytes, content_type: str) -> None:
        problem = body_problem(body, content_type)
        if problem is not None:
            raise FetchError(problem)

    try:
        response = get(
            spec.location, fetch, etag=last.etag if last is not None else None, check=whole
        )
    except FetchError as err:
        return _fallback(spec, store, str(err), now)
    if response.not_modified and last is not None and store is not None:
        body = store.read(last.content_hash)
        if body is None:
            raise SourceError(f"source {spec.name}: 304 for a stored copy that has gone")
        confirmed = StoredCopy(last.content_hash, response.etag, spec.location, now)
        return Snapshot(spec, body, last.content_hash, now.date(), now, 0.0, pending=confirmed)
    try:
        check(response.body, now.date())
    except SourceError as err:
        return _fallback(spec, store, str(err).removeprefix(f"source {spec.name}: "), now)
    digest = content_hash(response.body)
    pending = None
    if store is not None:
        store.put(response.body)
        pending = StoredCopy(digest, response.etag, spec.location, now)
    return Snapshot(spec, response.body, digest, now.date(), now, 0.0, pending=pending)


def record_good(snapshot: Snapshot, store: SnapshotStore | None) -> None:
    """Make the copy the source's last good one, once it passed every check (`pending`)."""
    if store is not None and snapshot.pending is not None:
        store.record(snapshot.name, snapshot.pending)


def acquire(
    spec: SourceSpec,
    *,
    store: SnapshotStore | None,
    fetch: FetchSettings,
    now: dt.datetime,
    check: Callable[[bytes, dt.date], None] = lambda body, as_of: None,
    get: Callable[..., Response] = http_get,
) -> Snapshot:
    """This run's copy of `spec` (see the module docstring); `check(body, as_of)` raises
    SourceError for a body that cannot be used, read as a copy of the date `as_of`. Shipped and
    local copies are stored too, when a store is given, so the dataset names only hashes the
    store holds. A fetched copy becomes the last good one only through `record_good`."""
    if spec.kind is SourceKind.URL:
        return _fetched(spec, store, fetch, now, check, get)
    if spec.kind is SourceKind.PACKAGE:
        snapshot = _shipped(spec, now)
    else:
        snapshot = _local(spec, now, fetch.max_bytes)
    problem = body_problem(snapshot.body)
    if problem is not None:
        raise SourceError(f"source {spec.name}: {spec.location}: {problem}")
    check(snapshot.body, snapshot.snapshot_date)
    if store is not None:
        store.put(snapshot.body)
    return snapshot
