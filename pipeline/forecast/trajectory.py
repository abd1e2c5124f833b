"""Frontier training compute as an exponential trajectory in calendar time.

C(y) = C_0 · g^(y − y_0): the largest training run is C_0 FLOP in year y_0 and grows by a
factor g per year. Epoch AI estimates g at 4-5 for frontier runs of 2010-2024; the paper
(Erdil & Schneider-Joseph 2024, arXiv:2411.01137, abstract) extrapolates that trend to place
its ~1e28 FLOP utilization limit about three years out. Pure Python: no I/O.
"""

from __future__ import annotations

import math


def frontier_flop(year: float, base_flop: float, base_year: float, growth_per_year: float) -> float:
    """C(y) = C_0 · g^(y − y_0) FLOP, the largest training run in (fractional) year y."""
    return float(base_flop * growth_per_year ** (year - base_year))


def year_reaching_flop(
    flop: float | None, base_flop: float, base_year: float, growth_per_year: float
) -> float | None:
    """y = y_0 + ln(C / C_0) / ln(g): the fractional year the trajectory reaches `flop`.

    The inverse of `frontier_flop`. A threshold below C_0 gives a year before y_0 (already
    passed). None when `flop` is None or not a positive finite number (no threshold).
    E.g. 2e28 FLOP from 5e25 in 2024 at g = 4: 2024 + ln(400)/ln(4) = 2028.32.
    """
    if flop is None or not math.isfinite(flop) or flop <= 0.0:
        return None
    return base_year + math.log(flop / base_flop) / math.log(growth_per_year)
