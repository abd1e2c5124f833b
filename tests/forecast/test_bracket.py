"""Moving years from bracketing probes equal the full grid's, with few evaluations."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pytest

from pipeline.forecast.bracket import Probe, bracketed_moving_years
from pipeline.forecast.moving import moving_year

YEARS = [2024.0 + i for i in range(17)]
LIMIT = "linear"


def _thresholds(rng: np.random.Generator, n: int) -> list[list[float | None]]:
    """Per point, thresholds growing 1.0-1.9x a year from 1e26-1e33 FLOP, jittered by up to 10%
    (slower than every line below, so ln C − ln T increases)."""
    out = []
    for _ in range(n):
        t0 = 10.0 ** rng.uniform(26.0, 33.0)
        h = rng.uniform(1.0, 1.9)
        out.append([t0 * h**i * rng.uniform(0.9, 1.1) for i in range(len(YEARS))])
    return out


def test_bracketed_moving_years_equal_the_full_grid() -> None:
    """On random lines (3-6x a year) and thresholds, the bracketed year of every point equals
    `moving_year` on all 17 grid years, from any start, with at most 6 evaluations per point on
    average from the frozen-hardware start."""
    rng = np.random.default_rng(20240312)
    n = 200
    table = _thresholds(rng, n)
    lines = [(math.log(10.0 ** rng.uniform(24.5, 26.0)), math.log(rng.uniform(3.0, 6.0)))
             for _ in range(n)]  # fmt: skip
    calls: list[int] = []

    def evaluate(probes: Sequence[Probe]) -> Mapping[Probe, Mapping[str, float | None]]:
        calls.append(len(probes))
        return {(p, i): {LIMIT: table[p][i]} for p, i in probes}

    wanted = [
        moving_year(YEARS, table[p], math.exp(a), 2025.0, math.exp(b))
        for p, (a, b) in enumerate(lines)
    ]
    frozen = [2025.0 + (math.log(table[p][0]) - a) / b for p, (a, b) in enumerate(lines)]
    good = [int(np.searchsorted(YEARS, y)) for y in frozen]
    for starts in (good, list(rng.integers(0, 17, n))):
        calls.clear()
        found = bracketed_moving_years(YEARS, {LIMIT: starts}, lines, 2025.0, [LIMIT], evaluate)
        assert [None if math.isnan(y) else y for y in found[LIMIT]] == pytest.approx(wanted)
        if starts is good:
            assert sum(calls) <= 6 * n
    assert any(w is None for w in wanted)  # some points never reach it: NaN, as None on the grid
    assert any(w is not None for w in wanted)


def test_bracketed_moving_years_not_reached_is_nan() -> None:
    """A threshold the line never reaches on the grid (or never has: None) gives NaN."""
    lines = [(math.log(1e20), math.log(2.0))]

    def evaluate(probes: Sequence[Probe]) -> Mapping[Probe, Mapping[str, float | None]]:
        return {(p, i): {LIMIT: None if i % 2 else 1e40} for p, i in probes}

    found = bracketed_moving_years(YEARS, {LIMIT: [3]}, lines, 2024.0, [LIMIT], evaluate)
    assert math.isnan(found[LIMIT][0])
