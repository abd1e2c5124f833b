"""The accelerator source merged with the catalog: the catalog's curated values win.

Which of Epoch's accelerators join the catalog's trends (docs/sources.md, "Hardware"):

1. released on or after the catalog's first release (the trends' window);
2. not the catalog's own accelerator: an Epoch row named by a catalog entry's `epoch_name`
   is replaced by that entry (its cited values win);
3. not a variant of an accelerator already kept: same manufacturer, dense 16-bit FLOP/s within
   `VARIANT_TOLERANCE`, released within `VARIANT_DAYS` (V100 DGXS/SXM3, H800, GH200, and B300 and
   GB300, which keep B200's and GB200's dense 16-bit FLOP/s: one chip, one point);
4. at the hardware frontier when released: dense 16-bit FLOP/s at least `flop_fraction` of the
   best released up to that date (catalog and source together), so inference and desktop parts,
   whose trend is another question, stay out.

An accelerator that joins gets Epoch's values for the metrics Epoch gives (dense 16-bit FLOP/s,
HBM capacity and bandwidth, intra- and inter-node bandwidth, TDP) and none for the others (L2
size, the NVLink domain, per-hop latency): those trends stay the catalog's.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.catalog.load import Catalog, Entry, Value
from pipeline.sources.epoch import ObservedAccelerator

FLOP = "dense_16bit_flop_per_s"
VARIANT_TOLERANCE = 0.02
"""Relative difference in dense FLOP/s under which two parts of one maker are one chip..."""
VARIANT_DAYS = 366
"""... when released within this many days of each other."""
FLOP_FRACTION = 0.5
"""Default share of the best dense FLOP/s released so far that a part needs to join."""


@dataclass(frozen=True, slots=True)
class MergedCatalog:
    """The catalog with the source's accelerators, and what the merge did with each row."""

    catalog: Catalog
    added: tuple[str, ...]
    """Epoch names of the accelerators that joined (as catalog entries named `slug`)."""
    replaced: tuple[str, ...]
    """Epoch names the catalog already holds (its values win)."""
    left_out: tuple[tuple[str, str], ...]
    """(Epoch name, why) of every other row."""


def slug(name: str) -> str:
    """A catalog-style name: "NVIDIA GB300 (Blackwell Ultra)" -> "nvidia_gb300_blackwell_ultra"."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def merge_accelerators(
    catalog: Catalog,
    accelerators: Sequence[ObservedAccelerator],
    content_hash: str,
    flop_fraction: float = FLOP_FRACTION,
) -> MergedCatalog:
    """The catalog plus the source's frontier accelerators (module docstring), in date order."""
    first = min(e.release_date for e in catalog.entries)
    named = {e.epoch_name for e in catalog.entries if e.epoch_name}
    maker = {a.name: a.manufacturer for a in accelerators}
    kept: list[tuple[str | None, float, dt.date]] = [
        (maker.get(e.epoch_name or ""), e.values[FLOP].value, e.release_date)
        for e in catalog.entries
        if FLOP in e.values
    ]  # (manufacturer, FLOP/s, release) of the parts kept; a catalog part's maker from its Epoch row
    best_by_date = sorted(
        [(e.release_date, e.values[FLOP].value) for e in catalog.entries if FLOP in e.values]
        + [(a.release_date, a.values[FLOP]) for a in accelerators if FLOP in a.values]
    )
    added: list[Entry] = []
    left_out: list[tuple[str, str]] = []
    replaced: list[str] = []
    source = (
        f"Epoch AI, Machine Learning Hardware dataset (CC BY 4.0), copy sha256:{content_hash[:16]}"
    )
    for a in sorted(accelerators, key=lambda a: (a.release_date, a.name)):
        if a.name in named:
            replaced.append(a.name)
            continue
        if a.release_date < first:
            left_out.append((a.name, f"released before the catalog's first ({first})"))
            continue
        flop = a.values.get(FLOP)
        if flop is None:
            left_out.append((a.name, "no dense 16-bit FLOP/s"))
            continue
        best = max(f for d, f in best_by_date if d <= a.release_date)
        if flop < flop_fraction * best:
            left_out.append((a.name, f"{flop / best:.2f} of the best FLOP/s of its date"))
            continue
        twin = any(
            m is not None
            and m == a.manufacturer
            and abs(flop - f) <= VARIANT_TOLERANCE * f
            and abs((a.release_date - day).days) <= VARIANT_DAYS
            for m, f, day in kept
        )
        if twin:
            left_out.append((a.name, "a variant of an accelerator already kept"))
            continue
        kept.append((a.manufacturer, flop, a.release_date))
        values = {m: Value(v, f"{source}, {a.name}") for m, v in a.values.items()}
        added.append(
            Entry(slug(a.name), a.release_date, f"{source}, {a.name}", None, values, a.name)
        )
    merged = Catalog((*catalog.entries, *added))
    return MergedCatalog(
        merged, tuple(e.epoch_name or e.gpu for e in added), tuple(replaced), tuple(left_out)
    )
