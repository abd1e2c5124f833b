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

from pipeline.sources.acquire import Snapshot, acquire
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

_LAST_PARSED: dict[str, tuple[bytes, tuple[tuple[Any, ...], tuple[Reject, ...]]]] = {}
"""Per source name, the last body `observe` parsed and its rows: the jobs of one command
(``dmlimits -m``) read the same copy, parsed once. Parsing is a function of the body alone, so
an equal body gives equal rows; one body per source is kept."""


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
    source: str, body: bytes, parse: Callable[[bytes, str], tuple[list[T], list[Reject]]]
) -> tuple[tuple[T, ...], tuple[Reject, ...]]:
    """`parse(body, source)`: the rows kept and the rows refused, as tuples; a body equal to the
    last one of this source is not parsed again (`_LAST_PARSED`)."""
    last = _LAST_PARSED.get(source)
    if last is not None and last[0] == body:
        return cast(tuple[tuple[T, ...], tuple[Reject, ...]], last[1])
    kept, rejects = parse(body, source)
    result = (tuple(kept), tuple(rejects))
    _LAST_PARSED[source] = (body, result)
    return result


def observe(
    settings: SourcesSettings,
    store: SnapshotStore | None,
    now: dt.datetime | None = None,
    *,
    warn: bool = True,
) -> Observations:
    """Acquire and parse every configured source; stale sources are said on stderr (`warn`).

    Raises SourceError (one line) when a source has no usable copy at all.
    """
    now = now or dt.datetime.now(dt.UTC)
    reads = []
    runs: list[ObservedRun] = []
    accelerators: list[ObservedAccelerator] = []
    for spec in settings.specs:
        required = _required(spec)

        def check(
            body: bytes, spec: SourceSpec = spec, required: tuple[str, ...] = required
        ) -> None:
            check_columns(body, required, spec.name)

        snapshot = acquire(spec, store=store, fetch=settings.fetch, now=now, check=check)
        if spec.name == FRONTIER_RUNS:
            kept, rejects = parsed(spec.name, snapshot.body, parse_runs)
            runs += kept
            dates = [r.publication_date for r in kept]
        else:
            hardware, rejects = parsed(spec.name, snapshot.body, parse_accelerators)
            accelerators += hardware
            dates = [a.release_date for a in hardware]
        reads.append(
            SourceRead(snapshot, len(dates) + len(rejects), rejects, max(dates, default=None))
        )
    observations = Observations(tuple(reads), tuple(runs), tuple(accelerators))
    if warn:
        for line in stale_lines(observations):
            print(f"dmlimits: warning: {line}", file=sys.stderr)
    return observations
