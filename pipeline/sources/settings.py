"""conf/sources/*.yaml -> SourcesSettings: where observed data comes from, and how it is fetched.

Checked like every config group (`pipeline.schema.section`): an unknown, missing or bad key
raises `ConfigError`, one line: ``<dotted key> = <value>: <what is allowed>``.

A source's `location` is one of

- ``package:<file>``: a snapshot shipped with dmlimits (`pipeline/sources/data/`, licence and
  snapshot date in its README and `shipped.csv`); no network, the default;
- ``http://...`` or ``https://...``: fetched (`pipeline.sources.http`), stored by content hash,
  with the last good copy as a fallback (`pipeline.sources.acquire`);
- any other text: a local file path.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from pipeline.schema.errors import MISSING, ConfigError
from pipeline.schema.section import Section, plain

PACKAGE_PREFIX = "package:"
SOURCES_KEYS = frozenset({"frontier_runs", "accelerators", "fetch", "store"})
SOURCE_KEYS = frozenset({"location"})
FETCH_KEYS = frozenset({"timeout_s", "retries", "backoff_s", "max_mb"})
BYTES_PER_MB = 1_000_000
MAX_RETRIES = 10
"""At most this many retries: a nightly that waits for a dead server must still finish."""


class SourceKind(StrEnum):
    """How a location is read."""

    PACKAGE = "package"
    URL = "url"
    PATH = "path"


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """One observed dataset: its role (`name`) and where it is read from."""

    name: str
    """The role: frontier_runs | accelerators (the `sources.source` column)."""
    location: str
    """As configured: package:<file>, a URL, or a path."""

    @property
    def kind(self) -> SourceKind:
        """package, url or path, from the location's form."""
        if self.location.startswith(PACKAGE_PREFIX):
            return SourceKind.PACKAGE
        if self.location.startswith(("http://", "https://")):
            return SourceKind.URL
        return SourceKind.PATH


@dataclass(frozen=True, slots=True)
class FetchSettings:
    """How a URL is fetched (`pipeline.sources.http.http_get`)."""

    timeout_s: float = 30.0
    """Whole-request deadline per attempt: connecting, waiting and reading the body."""
    retries: int = 3
    """Attempts after the first; each failure waits backoff_s · 2^attempt before the next."""
    backoff_s: float = 2.0
    max_bytes: int = 64 * BYTES_PER_MB
    """A body (after gzip decoding) larger than this is refused."""


@dataclass(frozen=True, slots=True)
class SourcesSettings:
    """Every source of a run; None where a role is switched off."""

    frontier_runs: SourceSpec | None
    accelerators: SourceSpec | None
    fetch: FetchSettings
    store: Path | None
    """Where fetched copies are kept by content hash; None: the run decides (its output)."""

    @property
    def specs(self) -> tuple[SourceSpec, ...]:
        """The configured sources, frontier runs first."""
        return tuple(s for s in (self.frontier_runs, self.accelerators) if s is not None)


def _source(sc: Section, name: str) -> SourceSpec | None:
    if sc.raw(name, "must be a mapping with a location, or null") is None:
        return None
    node = sc.section(name, SOURCE_KEYS)
    location = node.string("location").strip()
    if location.startswith(PACKAGE_PREFIX) and "/" in location[len(PACKAGE_PREFIX) :]:
        raise ConfigError(node.key("location"), location, "package:<file name>, without a folder")
    if location in (PACKAGE_PREFIX, "http://", "https://"):
        raise ConfigError(node.key("location"), location, "names no file")
    return SourceSpec(name, location)


def sources_from_config(node: object, path: str = "sources") -> SourcesSettings:
    """The settings of the root `sources` node (conf/sources/<choice>.yaml)."""
    if node is None:
        raise ConfigError(path, MISSING, "required config group (conf/sources/)")
    sc = Section(plain(node, path), path, SOURCES_KEYS)
    fc = sc.section("fetch", FETCH_KEYS)
    fetch = FetchSettings(
        timeout_s=fc.number("timeout_s", "seconds", maximum=3600.0),
        retries=fc.integer("retries", minimum=0, maximum=MAX_RETRIES),
        backoff_s=fc.number("backoff_s", "seconds", exclusive=False, maximum=600.0),
        max_bytes=int(fc.number("max_mb", "MB", maximum=10_000.0) * BYTES_PER_MB),
    )
    store = sc.raw("store", "must be a directory path or null")
    if store is not None and (not isinstance(store, str) or not store):
        raise ConfigError(sc.key("store"), store, "must be a directory path or null")
    return SourcesSettings(
        _source(sc, "frontier_runs"),
        _source(sc, "accelerators"),
        fetch,
        None if store is None else Path(store).expanduser(),
    )
