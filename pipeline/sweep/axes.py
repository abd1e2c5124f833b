"""Sweep axes: one `sweep.axes` entry -> the config field it sets and the values it takes.

An axis maps a config key to its values (conf/sweep/*.yaml):

    hardware.hbm_bandwidth_gb_per_s: [2000, 3352, 5000]                        # a list
    hardware.network.bandwidth_gb_per_s[1]: {start: 25, stop: 400, num: 5, log: true}
    hardware.network.latency_us[*]: {start: 0.5, stop: 2.0, step: 0.5}

The key is a dotted path into hardware, scaling, batch, parallelism, closed_form, power or constraints, in the
config's own (human) units. A list field takes an index: `[i]` sets entry i (network level i,
0 innermost), `[*]` sets every entry to the same value; without an index each value replaces the
whole field. Ranges include both ends and need start < stop:

- `{start, stop, step}`: start, start + step, ... while <= stop;
- `{start, stop, num}`: num values evenly spaced;
- `{start, stop, num, log: true}`: num values evenly spaced in log (start > 0).

Range values are rounded to 12 significant digits (0.1 + 0.2 gives 0.3, not 0.30000000000000004);
when start and stop (and step) are integers and every value is whole, the values are integers.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from pipeline.schema.errors import ConfigError, UnknownKeyError, closest_key_hint
from pipeline.schema.scenario import GROUPS
from pipeline.schema.section import check_integer, is_integer, is_number

AXIS_ROOTS = (*GROUPS, "closed_form", "power", "constraints")
"""Config sections an axis may set: those a Scenario is built from."""

RANGE_KEYS = frozenset({"start", "stop", "step", "num", "log"})
MAX_SERIES = 100_000
"""Default of `sweep.max_series`: the most series one run may expand to (a range of more values,
or a product of choices and axes beyond it, is refused before any work). At about 0.1 s a
series on one core, 100,000 series is a few hours on a workstation; raise it for a cluster."""
SIGNIFICANT_DIGITS = 12
EVERY = "*"
"""The index that sets every entry of a list field."""

_KEY = re.compile(r"(?P<path>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\[(?P<index>\d+|\*)\])?")
ALLOWED_VALUES = (
    "a non-empty list of values, or a range {start, stop, step} or {start, stop, num[, log]}"
)


def unknown_field(
    where: str, values: list[Any], parents: tuple[str, ...], name: str, node: Mapping[str, Any]
) -> UnknownKeyError:
    """The error of an axis whose field `name` is not in the config node `node` (at `parents`):
    the config field it names, the fields there and the closest of them, as a misspelt key on
    the command line gets (`sweep.axes.hardware.hbm_bandwith_gb_per_s = [1, 2]: unknown config
    field hardware.hbm_bandwith_gb_per_s; allowed keys: ...; did you mean
    hbm_bandwidth_gb_per_s?`)."""
    keys = sorted(str(k) for k in node)
    field = ".".join((*parents, name))
    hint = closest_key_hint(name, keys)
    return UnknownKeyError(where, values, keys, hint, rule=f"unknown config field {field}")


@dataclass(frozen=True, slots=True)
class Axis:
    """One numeric sweep axis: where it writes and the values it takes, in order."""

    key: str
    """The axis as written, e.g. "hardware.network.latency_us[*]"."""
    path: tuple[str, ...]
    """The dotted path split: ("hardware", "network", "latency_us")."""
    index: int | str | None
    """An entry of a list field, `EVERY` for all entries, or None for the whole field."""
    values: tuple[Any, ...]

    def check_target(self, config: Mapping[str, Any]) -> None:
        """Raise ConfigError unless the field exists in `config` and fits the index."""
        where = f"sweep.axes.{self.key}"
        node: Any = config
        for depth, name in enumerate(self.path):
            if not isinstance(node, Mapping):
                missing = ".".join(self.path[: depth + 1])
                raise ConfigError(where, list(self.values), f"unknown config field {missing}")
            if name not in node:
                raise unknown_field(where, list(self.values), self.path[:depth], name, node)
            node = node[name]
        if isinstance(node, Mapping):
            raise ConfigError(where, list(self.values), "names a section; name one of its fields")
        if self.index is None:
            return
        if not isinstance(node, list):
            raise ConfigError(where, list(self.values), "an index [i] needs a list field")
        if self.index != EVERY and not int(self.index) < len(node):
            raise ConfigError(
                where, list(self.values), f"index out of range: the field has {len(node)} entries"
            )

    def applied(self, config: Mapping[str, Any], value: Any) -> dict[str, Any]:
        """A plain config dict (checked by `check_target`) with the field set to `value`.

        Only the mappings along the field's path (and the list of an indexed field) are copied;
        everything else is shared with `config`, which is left unchanged. A sweep point costs a
        few shallow copies, not a deep copy of the whole config.
        """
        top = dict(config)
        node = top
        for name in self.path[:-1]:
            node[name] = dict(node[name])
            node = node[name]
        last = self.path[-1]
        if self.index is None:
            node[last] = value
        elif self.index == EVERY:
            node[last] = [value] * len(node[last])
        else:
            entries = list(node[last])
            entries[int(self.index)] = value
            node[last] = entries
        return top


def parse_axis(key: str, spec: Any, max_values: int = MAX_SERIES) -> Axis:
    """The Axis of one `sweep.axes` entry (plain values); ConfigError names a bad one.

    A range is counted before its values are made: more than `max_values` is refused.
    """
    where = f"sweep.axes.{key}"
    match = _KEY.fullmatch(key)
    if match is None:
        raise ConfigError(
            where,
            spec,
            "the key must be a dotted field path, e.g. hardware.sms or x.y[0] or x.y[*]",
        )
    path = tuple(match["path"].split("."))
    if path[0] not in AXIS_ROOTS:
        raise ConfigError(where, spec, f"must set a field of {', '.join(AXIS_ROOTS)}")
    index = match["index"]
    values = _values(where, spec, max_values)
    return Axis(
        key, path, None if index is None else index if index == EVERY else int(index), values
    )


def _values(where: str, spec: Any, max_values: int) -> tuple[Any, ...]:
    if isinstance(spec, list):
        if not spec:
            raise ConfigError(where, spec, ALLOWED_VALUES)
        values = tuple(spec)
    elif isinstance(spec, Mapping):
        values = range_values(where, spec, max_values)
    else:
        raise ConfigError(where, spec, ALLOWED_VALUES)
    seen = [json.dumps(v, sort_keys=True) for v in values]
    if len(set(seen)) != len(seen):
        raise ConfigError(where, list(values), "values must be distinct")
    return values


def _round(x: float) -> float:
    """x to SIGNIFICANT_DIGITS significant digits (exact decimal text, nearest double)."""
    return float(f"{x:.{SIGNIFICANT_DIGITS}g}")


def _check_count(where: str, spec: Mapping[str, Any], count: float, max_values: int) -> None:
    """Refuse a range of more than `max_values` values before making any of them."""
    if count > max_values:
        raise ConfigError(
            where,
            dict(spec),
            f"gives {count:.3g} values, more than sweep.max_series = {max_values}; "
            "narrow the range or raise sweep.max_series",
        )


def range_values(
    where: str, spec: Mapping[str, Any], max_values: int = MAX_SERIES
) -> tuple[float | int, ...]:
    """The values of a range mapping (see the module docstring), at most `max_values`."""
    unknown = set(spec) - RANGE_KEYS
    if unknown:
        raise ConfigError(
            where, dict(spec), f"unknown range key {sorted(unknown)[0]}; {ALLOWED_VALUES}"
        )
    start, stop, step = spec.get("start"), spec.get("stop"), spec.get("step")
    if not (is_number(start) and is_number(stop)):
        raise ConfigError(where, dict(spec), "a range needs numbers start and stop")
    lo, hi = float(cast(float, start)), float(cast(float, stop))
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ConfigError(where, dict(spec), "a range needs finite start < stop")
    if ("step" in spec) == ("num" in spec):
        raise ConfigError(where, dict(spec), "a range takes exactly one of step or num")
    log = spec.get("log", False)
    if not isinstance(log, bool):
        raise ConfigError(f"{where}.log", log, "must be true or false")
    whole = is_integer(start) and is_integer(stop)
    if "step" in spec:
        if log or not is_number(step) or not 0 < float(cast(float, step)) < math.inf:
            raise ConfigError(
                where, dict(spec), "step must be a positive finite number (log takes num)"
            )
        width = float(cast(float, step))
        count = (hi - lo) / width * (1 + 1e-12)
        _check_count(where, spec, count, max_values)
        n = math.floor(count) + 1
        raw = [lo + i * width for i in range(n)]
        whole = whole and is_integer(step)
    else:
        num = check_integer(spec["num"], f"{where}.num", minimum=2)
        _check_count(where, spec, num, max_values)
        if log and not lo > 0:
            raise ConfigError(where, dict(spec), "a log range needs start > 0")
        fractions = [i / (num - 1) for i in range(num)]
        if log:
            raw = [lo * (hi / lo) ** f for f in fractions]
        else:
            raw = [lo + (hi - lo) * f for f in fractions]
        raw[-1] = hi
    values = [_round(v) for v in raw]
    if whole and all(v == int(v) for v in values):
        return tuple(int(v) for v in values)
    return tuple(values)
