"""Plausible ranges of the hardware keys: a value far outside every accelerator ever made warns.

A unit slip passes every hard check (`pipeline.schema.bounds` only stops overflow):
`hardware.hbm_bandwidth_gb_per_s=3.35`, TB/s typed into a GB/s key, runs as a GPU with a
thousandth of any real memory bandwidth. Each physical hardware key has a plausible range, a
factor `FACTOR` below and above the span of the accelerator catalog
(pipeline/catalog/accelerators.csv with the presets it names, from P100 to GB200 NVL72); a
value outside it is run, but warned about in one line (`PlausibilityWarning`) naming the key,
the value, the range and, when the value times 1000 (or 1024) would be inside, the likely slip.

It warns and does not refuse: what-if presets leave the range on purpose (a network ten times
faster, a latency a thousand times lower), and a study beyond the catalog is a use, not a
mistake. Zero latency and infinite network bandwidth are idealizations a user types on
purpose, never a slip: they are not warned about. `u_eff` (a fraction, bounded to (0, 1] by
the schema) and projected hardware (derived from the catalog, not typed) are not checked.

`CATALOG_SPANS` is written out here (no catalog to load at start-up);
tests/schema/test_plausible.py derives it from the catalog again and fails when the two differ.
docs/model.md ("Plausibility warnings") lists the ranges.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import sys
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import cast

from pipeline.schema.section import is_number

FACTOR = 100.0
"""How far outside the catalog's span a value may go before it is warned about (each way)."""


class PlausibilityWarning(UserWarning):
    """A config value far outside every accelerator of the catalog (likely a unit slip)."""


@dataclass(frozen=True, slots=True)
class Span:
    """The smallest and largest value of one key over the catalog's accelerators."""

    unit: str
    """The key's unit as people write it ("GB/s"), or "" for a count."""
    catalog_min: float
    catalog_max: float

    @property
    def low(self) -> float:
        """The smallest plausible value: the catalog's smallest / FACTOR."""
        return self.catalog_min / FACTOR

    @property
    def high(self) -> float:
        """The largest plausible value: the catalog's largest x FACTOR."""
        return self.catalog_max * FACTOR


SLIPS: dict[str, tuple[str, str, float]] = {
    # unit: (the unit a value too small was likely meant in, too large, their ratio)
    "GB/s": ("TB/s", "MB/s", 1000.0),
    "GB": ("TB", "MB", 1000.0),
    "MiB": ("GiB", "KiB", 1024.0),
    "KiB": ("MiB", "bytes", 1024.0),
    "MHz": ("GHz", "kHz", 1000.0),
    "us": ("ms", "ns", 1000.0),
}
"""The neighbouring units of each unit: the slips a value off by their ratio likely is."""

CATALOG_SPANS: dict[str, Span] = {
    "flop_per_clock_per_thread": Span("FLOP per clock per thread", 8.0, 64.0),
    "sms": Span("", 80.0, 148.0),
    "max_clock_mhz": Span("MHz", 1410.0, 2062.0),
    "hbm_bandwidth_gb_per_s": Span("GB/s", 732.0, 8000.0),
    "l2_bandwidth_gb_per_s": Span("GB/s", 2155.0, 8137.3),
    "l2_mib": Span("MiB", 4.0, 126.0),
    "register_kib_per_block": Span("KiB", 64.0, 64.0),
    "hbm_gb": Span("GB", 16.0, 256.0),
    "matmul_latency_us": Span("us", 4.5, 4.5),
    "network.bandwidth_gb_per_s": Span("GB/s", 12.5, 1800.0),
    "network.latency_us": Span("us", 1.125, 1.125),
    "network.level_sizes": Span("", 4.0, 64.0),
}
"""Each checked key of a hardware node (relative to it) and the catalog's span of its values:
the presets' values for catalog GPUs with a preset, the CSV's for the others; every network
level shares one span (intra- and inter-node links alike)."""


def slip(value: float, span: Span) -> str:
    """The likely unit slip of a value outside `span`, in words ("" when none fits)."""
    if span.unit not in SLIPS:
        return ""
    bigger, smaller, ratio = SLIPS[span.unit]
    if value < span.low and span.low <= value * ratio <= span.high:
        meant, corrected = bigger, value * ratio
    elif value > span.high and span.low <= value / ratio <= span.high:
        meant, corrected = smaller, value / ratio
    else:
        return ""
    return (
        f"; {meant} typed into a {span.unit} key? ({value:g} {meant} = {corrected:g} {span.unit})"
    )


def implausible(key: str, value: float, span: Span) -> str | None:
    """The one-line warning for `value` of `key`, or None when it is plausible or an idealization
    (0, inf)."""
    if value == 0.0 or math.isinf(value) or span.low <= value <= span.high:
        return None
    unit = f" {span.unit}" if span.unit else ""
    return (
        f"{key} = {value:g} is outside the plausible range {span.low:g} to {span.high:g}{unit} "
        f"({FACTOR:g}x beyond the accelerator catalog's {span.catalog_min:g} to "
        f"{span.catalog_max:g}){slip(value, span)}"
    )


def _values(data: Mapping[str, object], key: str) -> Iterator[tuple[str, float]]:
    """(dotted key relative to the node, number) of `key`'s value or of each list element."""
    node: object = data
    for part in key.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    items = list(enumerate(node)) if isinstance(node, list | tuple) else [(None, node)]
    for i, item in items:
        if is_number(item):
            yield (key if i is None else f"{key}[{i}]"), float(cast(numbers.Real, item))


def implausible_values(data: Mapping[str, object], path: str = "hardware") -> list[str]:
    """The warning lines of a (checked) hardware node's values, in key order."""
    return [
        message
        for key, span in CATALOG_SPANS.items()
        for name, value in _values(data, key)
        if (message := implausible(f"{path}.{name}", value, span)) is not None
    ]


def warn_implausible(data: Mapping[str, object], path: str = "hardware") -> None:
    """Issue a `PlausibilityWarning` for each implausible value of a hardware node."""
    for message in implausible_values(data, path):
        warnings.warn(message, PlausibilityWarning, stacklevel=2)


@contextlib.contextmanager
def warning_lines(program: str) -> Iterator[None]:
    """While the block runs, each `PlausibilityWarning` is shown once, as one line on stderr:
    `<program>: warning: <message>` (a command's way; the API leaves warnings to its caller)."""

    def show(
        message: Warning | str, category: type[Warning], *args: object, **kwargs: object
    ) -> None:
        if issubclass(category, PlausibilityWarning):
            print(f"{program}: warning: {message}", file=sys.stderr)
        else:
            shown(message, category, *args, **kwargs)  # type: ignore[arg-type]

    with warnings.catch_warnings():
        shown = warnings.showwarning
        warnings.simplefilter("default", PlausibilityWarning)
        warnings.showwarning = show
        yield
