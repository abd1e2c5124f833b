"""Copies of sources kept by content hash, so every dataset can be reproduced offline later.

Layout under the store directory (a nightly run's is ROOT/snapshots/):

    sha256-<hex>.csv          one file per distinct body, named by its SHA-256: stored once
    latest-<source>.json      the last good copy of a source: hash, ETag, location, fetched at

A body is written atomically (temporary name, fsync, rename), then the `latest` record; a crash
between the two leaves an unreferenced copy, never a record naming a missing one. A record
whose copy is missing or does not hash to its name is ignored (as if there were none).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from pipeline.io.text import write_bytes_atomic, write_text_atomic

HASH_PREFIX = "sha256-"


def content_hash(body: bytes) -> str:
    """The SHA-256 of a body, hex (the `content_hash` of the `sources` table)."""
    return hashlib.sha256(body).hexdigest()


@dataclass(frozen=True, slots=True)
class StoredCopy:
    """The last good copy of one source."""

    content_hash: str
    etag: str | None
    location: str
    fetched_at: dt.datetime
    """When this body was last fetched or confirmed current (a 304), UTC."""


class SnapshotStore:
    """A directory of source copies by hash and a `latest` record per source."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def path_of(self, digest: str) -> Path:
        """Where the copy with this hash lives."""
        return self.directory / f"{HASH_PREFIX}{digest}.csv"

    def put(self, body: bytes) -> str:
        """Store `body` once (no-op when a copy with its hash exists); return its hash."""
        digest = content_hash(body)
        final = self.path_of(digest)
        if final.is_file() and content_hash(final.read_bytes()) == digest:
            return digest
        self.directory.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(final, body)
        return digest

    def read(self, digest: str) -> bytes | None:
        """The copy with this hash; None when absent or damaged (its bytes hash otherwise)."""
        path = self.path_of(digest)
        if not path.is_file():
            return None
        body = path.read_bytes()
        return body if content_hash(body) == digest else None

    def _record_path(self, source: str) -> Path:
        return self.directory / f"latest-{source}.json"

    def latest(self, source: str) -> StoredCopy | None:
        """The last good copy of `source`, if its record and its body are intact."""
        path = self._record_path(source)
        try:
            data = json.loads(path.read_text("utf-8"))
            copy = StoredCopy(
                str(data["content_hash"]),
                None if data.get("etag") is None else str(data["etag"]),
                str(data["location"]),
                dt.datetime.fromisoformat(str(data["fetched_at"])),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return copy if self.read(copy.content_hash) is not None else None

    def record(self, source: str, copy: StoredCopy) -> None:
        """Make `copy` (already `put`) the last good copy of `source`."""
        self.directory.mkdir(parents=True, exist_ok=True)
        data = {
            "content_hash": copy.content_hash,
            "etag": copy.etag,
            "location": copy.location,
            "fetched_at": copy.fetched_at.isoformat(),
        }
        write_text_atomic(self._record_path(source), json.dumps(data, indent=2) + "\n")
