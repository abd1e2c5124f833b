"""The 21 paper series against their golden file: physics=paper stays bit for bit the same.

The golden file (tests/validation/golden/paper_series.json) was generated once by
`python -m tests.validation.paper_series`; see that module for how the 21 series follow from
the experiment files (spec §13).
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from typing import Any

import pytest

from tests.validation.paper_series import (
    GOLDEN_PATH,
    PAPER_SERIES_COUNT,
    golden_record,
    paper_series,
    run_series,
    series_key,
)

GOLDEN_REL_TOL = 1e-12
"""Floats agree to 1e-12 relative (bit-identical in practice); integers, flags, labels exactly."""


@lru_cache(maxsize=1)
def golden() -> dict[str, Any]:
    data = json.loads(GOLDEN_PATH.read_text())
    assert isinstance(data, dict)
    return data


def _assert_same(actual: Any, expected: Any, where: str) -> None:
    """Recursive equality: floats within GOLDEN_REL_TOL, everything else exactly."""
    if isinstance(expected, float) and not isinstance(actual, bool):
        assert isinstance(actual, float | int), where
        assert math.isclose(actual, expected, rel_tol=GOLDEN_REL_TOL, abs_tol=0.0), (
            f"{where}: {actual!r} != {expected!r}"
        )
    elif isinstance(expected, dict):
        assert isinstance(actual, dict), where
        assert actual.keys() == expected.keys(), (
            f"{where}: keys {actual.keys()} != {expected.keys()}"
        )
        for key in expected:
            _assert_same(actual[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list), where
        assert len(actual) == len(expected), f"{where}: {len(actual)} items != {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _assert_same(a, e, f"{where}[{i}]")
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"
        assert type(actual) is type(expected), f"{where}: {type(actual)} != {type(expected)}"


def test_paper_experiments_define_21_series() -> None:
    """The paper experiment files sweep 21 distinct series, exactly the golden file's keys."""
    keys = [series_key(c) for c in paper_series()]
    assert len(keys) == PAPER_SERIES_COUNT == 21
    assert sorted(keys) == sorted(golden())


@pytest.mark.slow
@pytest.mark.parametrize("choice", paper_series(), ids=series_key)
def test_paper_series_match_golden(choice: tuple[str, str, str]) -> None:
    """Thresholds, closed forms, chosen layouts and utilizations of a series equal the golden file."""
    key = series_key(choice)
    actual = json.loads(json.dumps(golden_record(run_series(choice))))
    _assert_same(actual, golden()[key], key)
