"""Plausibility bounds of observed rows: a row outside them is refused with its reason, as a
config value outside its schema bounds is (docs/sources.md, "Plausibility bounds").

- **Dates**: from `EARLIEST_DATE` up to the date of the copy (its fetch, its reading, or the
  shipped snapshot's date): a row dated after its copy was made is not an observation.
- **Training compute**: at most `MAX_TRAINING_FLOP`, and at most `JUMP_FACTOR` times the
  largest run kept before it, times `RUN_GROWTH_PER_YEAR` per year since that run
  (`compute_problem`). Runs are judged in date order against the runs already kept, so a
  refused row does not raise the bar for the rows after it.
- **How a run was trained**: at most `MAX_ACCELERATORS` accelerators and
  `MAX_TRAINING_TIME_S` of wall clock.
- **Accelerator metrics**: inside the catalog's span of the metric widened by `SPAN_FACTOR`
  above (`LOW_SPAN_FACTOR` below), and by `HARDWARE_GROWTH_PER_YEAR` per year before the
  catalog's first release of it or after its newest (`MetricSpan`), so a part from 2005 or
  2035 is judged by where hardware could then be.

Pure: values in, reasons out; no I/O.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

from pipeline.catalog.load import Catalog

DAYS_PER_YEAR = 365.25
EARLIEST_DATE = dt.date(1940, 1, 1)
"""ASSUMPTION: no electronic computer ran before Colossus (1943-44); Epoch AI's oldest notable
model is Theseus (1950)."""
MAX_TRAINING_FLOP = 1e40
"""ASSUMPTION: a run beyond this is not of this world: it is 1e13 times the largest run
observed by 2025 (4.64e26 FLOP, docs/sources.md §4) and far beyond every latency wall this
model computes (docs/results.md)."""
JUMP_FACTOR = 100.0
"""ASSUMPTION: a run more than 100x the largest run before it (times `RUN_GROWTH_PER_YEAR` per
year since that run) is refused. On the shipped snapshot the largest step so measured is 7x
(a 1959 run, 863x the largest run two years before it), and 4.8x since 2010 (a 2021 language
model, 5.5x the largest run three weeks before it): a margin of 14x over every step in 75 years
of data; frontier compute grows 4-5x a year (docs/sources.md §4)."""
RUN_GROWTH_PER_YEAR = 10.0
"""ASSUMPTION: the bound grows 10x a year after the largest earlier run, twice the fastest
observed frontier growth (4-5x a year, docs/sources.md §4), so sparse early years pass."""
MAX_ACCELERATORS = 10_000_000
"""ASSUMPTION: 100x the largest training cluster of the shipped snapshot (100,000
accelerators)."""
MAX_TRAINING_TIME_S = 10 * DAYS_PER_YEAR * 86_400.0
"""ASSUMPTION: ten years of wall clock; the longest run of the shipped snapshot is 7,104 hours
(under a year)."""
SPAN_FACTOR = 100.0
"""ASSUMPTION: an accelerator metric more than 100x above the catalog's largest (at the
catalog's dates) is refused."""
LOW_SPAN_FACTOR = 10_000.0
"""ASSUMPTION: ... or more than 10,000x below its smallest: parts far below the catalog are real
(Meta's MTIA v1 holds 128 MB, 1/625 of the catalog's smallest HBM) and stay out of the trends
anyway (docs/sources.md §6 keeps only parts at hardware's frontier)."""
HARDWARE_GROWTH_PER_YEAR = 2.0
"""The span widens 2x a year outside the catalog's dates: above the fastest hardware trend,
peak FLOP/s 3.0x every two years (Gholami et al., *AI and Memory Wall*, arXiv:2403.14123,
Fig. 1; docs/trends.md)."""


def _years(later: dt.date, earlier: dt.date) -> float:
    return max(0.0, (later - earlier).days / DAYS_PER_YEAR)


def date_problem(day: dt.date, as_of: dt.date | None, column: str) -> str | None:
    """Why a row's date is implausible (before `EARLIEST_DATE`, after its copy's date), or None."""
    if day < EARLIEST_DATE:
        return f"{column} {day} is before {EARLIEST_DATE} (no electronic computer)"
    if as_of is not None and day > as_of:
        return f"{column} {day} is after the copy's date {as_of}"
    return None


def compute_problem(
    flop: float, day: dt.date, largest_before: tuple[float, dt.date, str] | None
) -> str | None:
    """Why a run's training compute is implausible, or None.

    Bound: C ≤ min(MAX_TRAINING_FLOP, C_max · JUMP_FACTOR · RUN_GROWTH_PER_YEAR^Δy), with C_max
    the largest run kept before it (compute, date, name) and Δy the years since that run.
    """
    if flop > MAX_TRAINING_FLOP:
        return f"training compute {flop:.3g} FLOP is above the bound {MAX_TRAINING_FLOP:.0e}"
    if largest_before is None:
        return None
    best, best_day, name = largest_before
    bound = best * JUMP_FACTOR * RUN_GROWTH_PER_YEAR ** _years(day, best_day)
    if flop > bound:
        return (
            f"training compute {flop:.3g} FLOP is {flop / best:.3g}x the largest run before it "
            f"({name}, {best:.3g} FLOP, {best_day}): above the bound {bound:.3g}"
        )
    return None


def how_trained_problem(quantity: float | None, seconds: float | None) -> str | None:
    """Why an accelerator count or a training time is implausible, or None."""
    if quantity is not None and quantity > MAX_ACCELERATORS:
        return f"Hardware quantity {quantity:g} is above the bound {MAX_ACCELERATORS:,}"
    if seconds is not None and seconds > MAX_TRAINING_TIME_S:
        return f"Training time {seconds / 3600:g} hours is above the bound of ten years"
    return None


@dataclass(frozen=True, slots=True)
class MetricSpan:
    """The catalog's smallest and largest value of one metric (SI) and its first and newest
    release dates among the entries that have it."""

    low: float
    high: float
    first: dt.date
    newest: dt.date

    def bounds_at(self, day: dt.date) -> tuple[float, float]:
        """(lowest, highest) plausible value for a part released on `day`: the span widened by
        SPAN_FACTOR above and LOW_SPAN_FACTOR below, and by HARDWARE_GROWTH_PER_YEAR per year
        outside the catalog's dates."""
        before = HARDWARE_GROWTH_PER_YEAR ** _years(self.first, day)
        after = HARDWARE_GROWTH_PER_YEAR ** _years(day, self.newest)
        return self.low / LOW_SPAN_FACTOR / before, self.high * SPAN_FACTOR * after


def catalog_spans(catalog: Catalog) -> dict[str, MetricSpan]:
    """Metric -> the catalog's span of it (`MetricSpan`), for every metric an entry has."""
    found: dict[str, list[tuple[float, dt.date]]] = {}
    for entry in catalog.entries:
        for metric, value in entry.values.items():
            found.setdefault(metric, []).append((value.value, entry.release_date))
    return {
        metric: MetricSpan(
            min(v for v, _ in pairs),
            max(v for v, _ in pairs),
            min(d for _, d in pairs),
            max(d for _, d in pairs),
        )
        for metric, pairs in found.items()
    }


def metric_problem(
    spans: Mapping[str, MetricSpan], metric: str, value: float, day: dt.date, column: str
) -> str | None:
    """Why an accelerator's value of `metric` is implausible for its release date, or None
    (a metric the catalog does not have is not bounded)."""
    span = spans.get(metric)
    if span is None:
        return None
    low, high = span.bounds_at(day)
    if value < low or value > high:
        return (
            f"{column} {value:.3g} is outside the plausible {low:.3g} to {high:.3g} "
            f"for {day} (the catalog's span widened, docs/sources.md)"
        )
    return None
