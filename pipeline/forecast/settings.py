"""conf/forecast/*.yaml -> ForecastSettings: the compute trajectory the forecasts assume.

Checked like every config group (`pipeline.schema.section`): an unknown, missing or bad key
raises `ConfigError`, whose message is one line: ``<dotted key> = <value>: <what is allowed>``.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from pipeline.forecast.observed import (
    FrontierLine,
    FrontierRule,
    FrontierSettings,
    ObservedFrontier,
)
from pipeline.forecast.uncertainty import (
    TREND_PREFIX,
    Distribution,
    UncertainInput,
    UncertaintySettings,
)
from pipeline.schema import bounds
from pipeline.schema.errors import MISSING, ConfigError
from pipeline.schema.section import Section, check_number, plain
from pipeline.trends.project import PROJECTED_METRICS

FORECAST_KEYS = frozenset(
    {
        "fitted",
        "base_flop",
        "base_year",
        "growth_per_year",
        "moving_frontier_years",
        "uncertainty",
        "reality",
    }
)
UNCERTAINTY_KEYS = frozenset({"samples", "seed", "inputs"})
INPUT_KEYS = frozenset({"distribution", "low", "high"})
MAX_DESIGN_SAMPLES = 65536
"""The largest uncertainty design (points; each is one series)."""
FITTED_KEYS = frozenset({"line", "rule", "top_n", "window_start", "window_end"})


@dataclass(frozen=True, slots=True)
class ForecastSettings:
    """The frontier-compute trajectory C(y) = base_flop · g^(y − base_year), one g per scenario."""

    base_flop: float
    """C_0, FLOP of the largest training run in `base_year` (5e25)."""
    base_year: float
    """y_0, the calendar year of `base_flop` (2024); forecast years are on the same scale."""
    growth_per_year: tuple[float, ...]
    """g, growth factors per year (> 1, distinct), one forecast scenario each ((4.0, 5.0))."""
    moving_frontier_years: tuple[float, ...] = ()
    """Years of projected hardware the moving frontier is evaluated on (ascending; () = off)."""
    fitted: FrontierSettings | None = None
    """How the frontier is fitted to observed runs (`forecast.fitted`); None: hand-set only."""
    uncertainty: UncertaintySettings | None = None
    """The uncertainty design of the model's inputs (`forecast.uncertainty`); None: off."""
    observed: ObservedFrontier | None = None
    """The sources read and the fit, once the run has observed them (`inputs.observe_frontier`)."""
    run_date: dt.date | None = None
    """The date the run forecasts from (the nightly's date, else today; `inputs.observe_for_run`):
    a year before it is passed. None: not known (settings read alone)."""
    reality: bool = False
    """Check the model against each observed run that says how it was trained (the `reality`
    table, `pipeline.forecast.reality`; docs/sources.md, "The reality check")."""


def forecast_from_config(node: object, path: str = "forecast") -> ForecastSettings:
    """The settings of the root `forecast` node (conf/forecast/<choice>.yaml).

    Raises ConfigError when the node is absent, has an unknown or missing key, a base compute
    that is not a positive finite number, a base year that is not finite, or growth factors
    that are not a non-empty list of distinct finite numbers above 1.
    """
    if node is None:
        raise ConfigError(path, MISSING, "required config group (conf/forecast/)")
    fc = Section(plain(node, path), path, FORECAST_KEYS)
    base_flop = fc.number("base_flop", "FLOP", maximum=bounds.MAX_FLOP)
    base_year = fc.number(
        "base_year", "calendar year", minimum=bounds.MIN_YEAR, maximum=bounds.MAX_YEAR
    )
    growth = fc.number_list(
        "growth_per_year", "factor per year", minimum=1.0, maximum=bounds.MAX_GROWTH_PER_YEAR
    )
    if len(set(growth)) != len(growth):
        raise ConfigError(fc.key("growth_per_year"), list(growth), "must hold distinct factors")
    off = not fc.has("moving_frontier_years") or fc.raw("moving_frontier_years", "") is None
    years = () if off else _moving_years(fc)
    fitted = _fitted(fc) if fc.has("fitted") else None
    uncertainty = _uncertainty(fc) if fc.has("uncertainty") else None
    if uncertainty is not None and not years and any(i.trend_metric for i in uncertainty.inputs):
        raise ConfigError(
            fc.key("moving_frontier_years"), None, "a list of years: trend inputs need it"
        )
    reality = fc.boolean("reality") if fc.has("reality") else False
    return ForecastSettings(
        base_flop, base_year, growth, years, fitted, uncertainty, reality=reality
    )


def _inputs(node: object, path: str) -> Iterator[tuple[str, object]]:
    """(key, spec) of each input: a mapping with a `distribution`, or nested by dotted key."""
    if not isinstance(node, Mapping) or not node:
        raise ConfigError(path, node, "must be a mapping of config keys to distributions")
    for key, value in node.items():
        where = f"{path}.{key}"
        if isinstance(value, Mapping) and "distribution" not in value:
            yield from ((f"{key}.{k}", v) for k, v in _inputs(value, where))
        else:
            yield str(key), value


def _uncertainty(fc: Section) -> UncertaintySettings | None:
    """`forecast.uncertainty`: null, or the design's size, seed and inputs."""
    if fc.raw("uncertainty", "must be a mapping or null") is None:
        return None
    node = fc.section("uncertainty", UNCERTAINTY_KEYS)
    samples = node.integer("samples", minimum=8, maximum=MAX_DESIGN_SAMPLES)
    if samples & (samples - 1):
        raise ConfigError(node.key("samples"), samples, "must be a power of two (8, 16, 32, ...)")
    seed = node.integer("seed", minimum=0)
    inputs = []
    for key, spec in _inputs(node.raw("inputs", "must be a mapping"), node.key("inputs")):
        one = Section(spec, node.key(f"inputs.{key}"), INPUT_KEYS)
        kind = Distribution(one.choice("distribution", [d.value for d in Distribution]))
        if (kind is Distribution.TREND) != key.startswith(TREND_PREFIX):
            allowed = f"`{TREND_PREFIX}<metric>` takes `distribution: trend`, and only it"
            raise ConfigError(one.key("distribution"), kind.value, allowed)
        if kind is Distribution.TREND:
            metric = key.removeprefix(TREND_PREFIX)
            if metric not in PROJECTED_METRICS or one.has("low") or one.has("high"):
                allowed = f"one of {', '.join(PROJECTED_METRICS)}, without low or high"
                raise ConfigError(node.key(f"inputs.{key}"), metric, allowed)
            inputs.append(UncertainInput(key, kind, math.nan, math.nan))
            continue
        low = one.number("low", "config units", minimum=None)
        high = one.number("high", "config units", minimum=None)
        if not low < high or (kind is Distribution.LOGUNIFORM and low <= 0.0):
            raise ConfigError(
                one.key("high"), high, "must be above low (and low > 0 for loguniform)"
            )
        inputs.append(UncertainInput(key, kind, low, high))
    return UncertaintySettings(samples, seed, tuple(inputs))


def _date(section: Section, key: str, *, optional: bool) -> dt.date | None:
    """A YYYY-MM-DD string (null allowed when `optional`)."""
    allowed = "must be a date written YYYY-MM-DD" + (" or null" if optional else "")
    value = section.raw(key, allowed)
    if value is None and optional:
        return None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if not isinstance(value, str) or len(value) != len("YYYY-MM-DD"):
        raise ConfigError(section.key(key), value, allowed)
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ConfigError(section.key(key), value, allowed) from None


def _fitted(fc: Section) -> FrontierSettings | None:
    """`forecast.fitted`: null, or the line, the frontier rule and the window of the fit (a
    node without `line` follows the envelope)."""
    if fc.raw("fitted", "must be a mapping or null") is None:
        return None
    node = fc.section("fitted", FITTED_KEYS)
    rule = FrontierRule(node.choice("rule", [r.value for r in FrontierRule]))
    start = _date(node, "window_start", optional=False)
    end = _date(node, "window_end", optional=True)
    if start is None or (end is not None and end <= start):
        raise ConfigError(node.key("window_end"), str(end), "must be null or after window_start")
    line = (
        FrontierLine(node.choice("line", [v.value for v in FrontierLine]))
        if node.has("line")
        else FrontierLine.ENVELOPE
    )
    return FrontierSettings(rule, node.integer("top_n", maximum=1000), start, end, line)


def _moving_years(fc: Section) -> tuple[float, ...]:
    """`moving_frontier_years` (not null): a list of at least two ascending years."""
    key = fc.key("moving_frontier_years")
    allowed = "must be null or a list of at least two strictly ascending calendar years"
    value = fc.raw("moving_frontier_years", allowed)
    if not isinstance(value, list | tuple):
        raise ConfigError(key, value, allowed)
    values = [check_number(v, f"{key}[{i}]", "calendar year") for i, v in enumerate(value)]
    if any(b <= a for a, b in itertools.pairwise(values)) or len(values) < 2:
        raise ConfigError(key, value, allowed)
    return tuple(values)
