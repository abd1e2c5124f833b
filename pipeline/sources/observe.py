"""Every configured source read for one run: the copies used, the rows kept and refused.

`observe` acquires each source (`acquire.acquire`: shipped, path or URL with a fallback), checks
its columns before it may replace a stored copy, and parses it (`epoch`). The result is what the
forecast fits (`pipeline.forecast.observed`), what the trends merge with the catalog, and what
the `sources`, `observed_runs` and `source_rejects` tables hold.
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from pipeline.schema.projected import shipped_catalog
from pipeline.sources.acquire import Snapshot, SourceError, acquire, record_good
from pipeline.sources.bounds import catalog_spans
from pipeline.sources.epoch import (
    HARDWARE_COLUMNS,
    RUN_COLUMNS,
    ObservedAccelerator,
    ObservedRun,
    Reject,
    check_columns,
    parse_accelerators,
    parse_runs,
)
from pipeline.sources.settings import SourceSpec, SourcesSettings
from pipeline.sources.store import SnapshotStore

FRONTIER_RUNS = "frontier_runs"
ACCELERATORS = "accelerators"
T = TypeVar("T")

_LAST_PARSED: dict[
    str, tuple[tuple[bytes, dt.date | None], tuple[tuple[Any, ...], tuple[Reject, ...]]]
] = {}
"""Per source name, the last body `observe` parsed (with the copy's date) and its rows: the
jobs of one command (``dmlimits -m``) read the same copy, parsed once. Parsing is a function of
the body and the date alone, so equal ones give equal rows; one body per source is kept."""


@dataclass(frozen=True, slots=True)
class SourceRead:
    """One source's copy and what was made of it."""

    snapshot: Snapshot
    rows_read: int
    rejects: tuple[Reject, ...]
    newest_date: dt.date | None
    """The newest publication or release date among the rows kept."""


@dataclass(frozen=True, slots=True)
class Observations:
    """What the sources of one run hold."""

    reads: tuple[SourceRead, ...]
    runs: tuple[ObservedRun, ...] = ()
    accelerators: tuple[ObservedAccelerator, ...] = ()

    def read(self, source: str) -> SourceRead | None:
        """The read of one source role, if configured."""
        return next((r for r in self.reads if r.snapshot.name == source), None)

    @property
    def stale(self) -> tuple[SourceRead, ...]:
        """The sources read from an older copy because a fetch failed."""
        return tuple(r for r in self.reads if r.snapshot.stale)

    @property
    def hashes(self) -> str:
        """`<source>=<content hash>` of every source, comma-separated (the forecasts' column)."""
        return ",".join(f"{r.snapshot.name}={r.snapshot.content_hash}" for r in self.reads)


def stale_lines(observations: Observations) -> list[str]:
    """One line per stale source: which, how old the copy is, and why (for stderr)."""
    return [
        f"source {r.snapshot.name} is STALE: using the copy of "
        f"{r.snapshot.snapshot_date.isoformat()} ({r.snapshot.age_days:.1f} days old), "
        f"fetch failed: {r.snapshot.stale_reason}"
        for r in observations.stale
    ]


def _required(spec: SourceSpec) -> tuple[str, ...]:
    return RUN_COLUMNS if spec.name == FRONTIER_RUNS else HARDWARE_COLUMNS


def parsed(
    source: str,
    body: bytes,
    parse: Callable[[bytes, str, dt.date | None], tuple[list[T], list[Reject]]],
    as_of: dt.date | None = None,
) -> tuple[tuple[T, ...], tuple[Reject, ...]]:
    """`parse(body, source, as_of)`: the rows kept and the rows refused, as tuples; a body equal
    to the last one of this source, read as of the same date, is not parsed again
    (`_LAST_PARSED`)."""
    last = _LAST_PARSED.get(source)
    if last is not None and last[0] == (body, as_of):
        return cast(tuple[tuple[T, ...], tuple[Reject, ...]], last[1])
    kept, rejects = parse(body, source, as_of)
    result = (tuple(kept), tuple(rejects))
    _LAST_PARSED[source] = ((body, as_of), result)
    return result


def _accelerators(
    body: bytes, source: str, as_of: dt.date | None
) -> tuple[list[ObservedAccelerator], list[Reject]]:
    """`parse_accelerators` with the shipped catalog's spans as the metrics' bounds."""
    return parse_accelerators(body, source, as_of, catalog_spans(shipped_catalog()))


def _parse_of(spec: SourceSpec) -> Callable[..., tuple[list[Any], list[Reject]]]:
    return parse_runs if spec.name == FRONTIER_RUNS else _accelerators


def _usable(spec: SourceSpec, body: bytes, as_of: dt.date) -> None:
    """A SourceError when the body lacks a required column or holds no usable row."""
    check_columns(body, _required(spec), spec.name)
    kept, rejects = parsed(spec.name, body, _parse_of(spec), as_of)
    if not kept:
        first = (
            f"; the first refused: line {rejects[0].line}, {rejects[0].reason}" if rejects else ""
        )
        raise SourceError(f"source {spec.name}: no usable row ({len(rejects)} refused{first})")


def store_problem(store: SnapshotStore) -> str | None:
    """Why a snapshot store cannot be used (it, or a folder above it, is not a folder), or None."""
    path = store.directory
    while not path.exists() and path != path.parent:
        path = path.parent
    if not path.is_dir():
        return f"{path} is not a directory"
    return None


def record_good_copies(observations: Observations, store: SnapshotStore | None) -> None:
    """Make each fresh copy its source's last good one: call once every check passed (the
    parse, and the caller's own, such as the fit), so a refused copy never becomes the
    fallback of the next run."""
    for read in observations.reads:
        record_good(read.snapshot, store)


def observe(
    settings: SourcesSettings,
    store: SnapshotStore | None,
    now: dt.datetime | None = None,
    *,
    warn: bool = True,
    record: bool = True,
) -> Observations:
    """Acquire and parse every configured source; stale sources are said on stderr (`warn`).

    Each copy is checked before it may replace the stored one: its columns, and at least one
    row within the plausibility bounds (`pipeline.sources.bounds`). With `record`, fresh copies
    become their source's last good copy here; without, the caller does it after its own
    checks (`record_good_copies`). Raises SourceError (one line) when a source has no usable
    copy at all, or when the store is not a directory.
    """
    now = now or dt.datetime.now(dt.UTC)
    if store is not None and (problem := store_problem(store)) is not None:
        raise SourceError(f"sources.store {store.directory}: {problem}")
    reads = []
    runs: list[ObservedRun] = []
    accelerators: list[ObservedAccelerator] = []
    for spec in settings.specs:

        def check(body: bytes, as_of: dt.date, spec: SourceSpec = spec) -> None:
            _usable(spec, body, as_of)

        snapshot = acquire(spec, store=store, fetch=settings.fetch, now=now, check=check)
        as_of = snapshot.snapshot_date
        if spec.name == FRONTIER_RUNS:
            kept, rejects = parsed(spec.name, snapshot.body, parse_runs, as_of)
            runs += kept
            dates = [r.publication_date for r in kept]
        else:
            hardware, rejects = parsed(spec.name, snapshot.body, _accelerators, as_of)
            accelerators += hardware
            dates = [a.release_date for a in hardware]
        reads.append(
            SourceRead(snapshot, len(dates) + len(rejects), rejects, max(dates, default=None))
        )
    observations = Observations(tuple(reads), tuple(runs), tuple(accelerators))
    if record:
        record_good_copies(observations, store)
    if warn:
        for line in stale_lines(observations):
            print(f"dmlimits: warning: {line}", file=sys.stderr)
    return observations
