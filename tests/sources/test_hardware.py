"""The accelerator source merged with the catalog: the catalog wins, variants and laggards out."""

from __future__ import annotations

import datetime as dt

from pipeline.catalog.load import Catalog, Entry, Value
from pipeline.sources.epoch import ObservedAccelerator
from pipeline.sources.hardware import FLOP, merge_accelerators

CATALOG = Catalog(
    (
        Entry("old", dt.date(2020, 1, 1), "doc", None, {FLOP: Value(1e14, "doc")}, "Maker Old"),
        Entry("new", dt.date(2022, 1, 1), "doc", None, {FLOP: Value(4e14, "doc")}, "Maker New"),
    )
)


def _part(name: str, day: dt.date, flop: float, maker: str = "Maker") -> ObservedAccelerator:
    return ObservedAccelerator(name, maker, "GPU", day, {FLOP: flop, "tdp_w": 500.0})


def test_merge_keeps_the_catalog_values_of_its_own_accelerators() -> None:
    """A source row the catalog names is replaced by the catalog entry, whatever it says."""
    merged = merge_accelerators(CATALOG, [_part("Maker New", dt.date(2022, 1, 1), 9e99)], "ab")
    assert merged.replaced == ("Maker New",)
    assert merged.catalog.entry("new").values[FLOP].value == 4e14
    assert len(merged.catalog.entries) == 2


def test_merge_adds_a_frontier_accelerator_with_its_source() -> None:
    """A new part near the best FLOP/s of its date joins, its values citing the source copy."""
    merged = merge_accelerators(CATALOG, [_part("Next Chip", dt.date(2024, 1, 1), 1e15)], "abcd")
    entry = merged.catalog.entry("next_chip")
    assert entry.values["tdp_w"].value == 500.0
    assert "sha256:abcd" in entry.values[FLOP].source


def test_merge_leaves_out_laggards_variants_and_old_parts() -> None:
    """A slow part, a same-maker twin within a year, and a part older than the catalog stay out."""
    parts = [
        _part("Maker New", dt.date(2022, 1, 1), 4e14, "Maker"),
        _part("Slow", dt.date(2023, 1, 1), 1e14),
        _part("Twin", dt.date(2022, 6, 1), 4.02e14, "Maker"),
        _part("Ancient", dt.date(2010, 1, 1), 1e12),
    ]
    merged = merge_accelerators(CATALOG, parts, "ab")
    assert merged.added == ()
    reasons = dict(merged.left_out)
    assert "best FLOP/s" in reasons["Slow"]
    assert "variant" in reasons["Twin"]
    assert "before the catalog" in reasons["Ancient"]
