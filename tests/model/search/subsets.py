"""Test oracle: a subset of a candidate set, taken row by row from the whole set."""

from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import NDArray

from pipeline.model.search.candidates import Candidates


def take_candidates(c: Candidates, idx: NDArray[np.intp]) -> Candidates:
    """Candidates `idx` of `c`, in that order: every per-candidate array taken at `idx`, the
    rest as in `c` (realistic physics: its candidates are timed one row each, so a subset's
    times are those rows' times; the walk builds only the rows its floors leave,
    `candidates.kept_candidates`)."""
    taken = {
        f: getattr(c, f)[idx]
        for f in Candidates.__slots__
        if f != "keys" and isinstance(getattr(c, f), np.ndarray)
    }
    return dataclasses.replace(c, **taken)
