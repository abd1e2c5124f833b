"""The tables of one dated partition, through the one dataset reader (`pipeline.io.read`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from pipeline.io import read


def read_table(
    directory: Path, table_name: str, columns: Sequence[str] | None = None
) -> pl.DataFrame | None:
    """One table of a dataset directory, sorted, or None when it has no readable part.

    Parts the reader refuses are left out (a nightly partition holds only what its run wrote).
    """
    return read.read_table(directory, table_name, columns).frame
