"""The accelerators behind a `trends` table: the catalog its fits were made on, rebuilt.

A run with a moving frontier fits the trends on the shipped catalog, or, when it read the
accelerator source, on the catalog merged with that source (`pipeline.sources.hardware`). The
`trends` table keeps each fit and the hash of its catalog (`catalog_hash`), not the points; the
trends chart draws them from the catalog rebuilt here: the shipped one, or the shipped one merged
with the source copy the dataset's `sources` table names by its hash, read from the shipped
package data or the run's snapshot store (ROOT/snapshots, or a nightly root's). A catalog whose
hash differs from the table's is never drawn as its points.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import polars as pl

from pipeline.catalog import Catalog
from pipeline.io.read import SOURCE_STORE
from pipeline.schema.projected import shipped_catalog
from pipeline.sources.acquire import DATA_PACKAGE
from pipeline.sources.epoch import parse_accelerators
from pipeline.sources.hardware import merge_accelerators
from pipeline.sources.observe import ACCELERATORS
from pipeline.sources.settings import PACKAGE_PREFIX
from pipeline.sources.store import SnapshotStore, content_hash
from pipeline.trends.catalog_fits import catalog_trends

Points = dict[str, list[tuple[str, float, float]]]
"""Metric -> (gpu, release year, value) of every catalog entry with that metric."""


def _source_copy(directory: Path, location: str, digest: str) -> bytes | None:
    """The accelerator source copy with hash `digest`: the shipped file `location` names, or the
    copy in the snapshot store of the dataset or of its nightly root; None when none is found."""
    if location.startswith(PACKAGE_PREFIX):
        name = location[len(PACKAGE_PREFIX) :]
        try:
            body = resources.files(DATA_PACKAGE).joinpath(name).read_bytes()
        except OSError:
            body = b""
        if content_hash(body) == digest:
            return body
    for store in (directory / SOURCE_STORE, directory.parent / SOURCE_STORE):
        if (found := SnapshotStore(store).read(digest)) is not None:
            return found
    return None


def _catalogs(directory: Path, sources: pl.DataFrame | None) -> Iterator[Catalog]:
    """The shipped catalog, then the shipped one merged with each accelerator copy the run read."""
    shipped = shipped_catalog()
    yield shipped
    if sources is None:
        return
    for row in sources.filter(pl.col("source") == ACCELERATORS).iter_rows(named=True):
        body = _source_copy(directory, str(row["location"]), str(row["content_hash"]))
        if body is not None:
            accelerators, _ = parse_accelerators(body, ACCELERATORS)
            yield merge_accelerators(shipped, accelerators, str(row["content_hash"])).catalog


def catalog_points(directory: Path, sources: pl.DataFrame | None, catalog_hash: str) -> Points:
    """The points of the catalog whose trends hash is `catalog_hash` ({} when it cannot be
    rebuilt: a user's catalog, or a source copy no longer stored)."""
    for catalog in _catalogs(directory, sources):
        trends = catalog_trends(catalog)
        if trends.catalog_hash == catalog_hash:
            return {m: [(p.gpu, p.year, p.value) for p in pts] for m, pts in trends.points.items()}
    return {}
