"""The catalog of accelerator generations: coverage, a source per value, one source of truth."""

from __future__ import annotations

import csv

import pytest

from pipeline.catalog import METRICS, CatalogError
from pipeline.catalog.load import ASSUMPTION, catalog_text, parse_catalog
from pipeline.schema.projected import preset_spec, shipped_catalog

GENERATIONS = (
    "p100_sxm2",
    "v100_sxm",
    "a100_sxm_40gb",
    "a100_sxm_80gb",
    "h100_sxm",
    "h200_sxm",
    "b200",
    "gb200_nvl72",
    "mi250x",
    "mi300x",
    "mi325x",
)
DOCUMENT_WORDS = (
    "datasheet",
    "whitepaper",
    "press release",
    "user guide",
    "specifications",
    "dataset",
)
CAPACITY_TOLERANCE = 0.05
"""Relative tolerance on Gholami et al.'s rounded 2016-2022 ratios (~5x and ~46x)."""


def test_catalog_lists_every_generation() -> None:
    """The catalog holds the NVIDIA generations P100 to GB200 NVL72 and AMD MI250X to MI325X."""
    gpus = [e.gpu for e in shipped_catalog().entries]
    assert set(GENERATIONS) <= set(gpus)


def test_catalog_rows_cite_a_document_or_an_assumption() -> None:
    """Every CSV row's source names a document or preset, or is an ASSUMPTION with reasoning."""
    for row in csv.DictReader(catalog_text().splitlines()):
        source = row["source"]
        if source.startswith(ASSUMPTION):
            assert len(source) > len(ASSUMPTION) + 20, row
        else:
            cited = source.startswith("conf/hardware/") or any(
                w in source.lower() for w in DOCUMENT_WORDS
            )
            assert cited, row


def test_catalog_every_value_has_a_source() -> None:
    """Every loaded value, from the CSV or a preset, carries a non-empty source."""
    for entry in shipped_catalog().entries:
        assert entry.release_source
        for value in entry.values.values():
            assert value.source


def test_catalog_preset_gpus_take_their_numbers_from_the_presets() -> None:
    """A GPU with a preset has exactly the preset's numbers for every metric presets hold."""
    for entry in shipped_catalog().entries:
        if entry.preset is None:
            continue
        spec = preset_spec(entry.preset)
        for metric in METRICS:
            held = None if metric.from_preset is None else metric.from_preset(spec)
            if held is None:  # an optional metric the preset lacks (an A100's FP8 peak)
                assert metric.name not in entry.values or metric.from_preset is None
                continue
            assert entry.values[metric.name].value == held
            assert entry.values[metric.name].source == f"conf/hardware/{entry.preset}.yaml"


def test_catalog_refuses_a_number_also_held_by_the_preset() -> None:
    """A CSV row repeating a metric the GPU's preset holds is an error (one source of truth)."""
    text = (
        "gpu,metric,value,source\n"
        "h100_sxm,preset,h100_sxm,conf/hardware/h100_sxm.yaml\n"
        "h100_sxm,release_date,2022-09-20,NVIDIA press release\n"
        "h100_sxm,hbm_gb,80,H100 datasheet\n"
    )
    with pytest.raises(CatalogError, match="one source"):
        parse_catalog(text, {"h100_sxm": preset_spec("h100_sxm")})


@pytest.mark.parametrize(
    "row",
    [
        "p100,hbm_gb,16,",  # no source
        "p100,hbm_gb,16,ASSUMPTION:",  # an assumption without reasoning
        "p100,hbm_gb,-16,P100 datasheet",  # not positive
        "p100,hbm_tb,16,P100 datasheet",  # unknown metric
    ],
)
def test_catalog_refuses_bad_rows(row: str) -> None:
    """Missing sources, bare assumptions, non-positive values and unknown metrics are errors."""
    text = f"gpu,metric,value,source\np100,release_date,2016-06-01,P100 datasheet\n{row}\n"
    with pytest.raises(CatalogError):
        parse_catalog(text, {})


def test_catalog_reproduces_capacity_5x_against_compute_46x() -> None:
    """P100 (2016) -> H100 (2022): memory capacity ~5x, dense 16-bit FLOP/s ~46x (Gholami et al. 2024, arXiv:2403.14123)."""
    catalog = shipped_catalog()
    p100, h100 = catalog.entry("p100_sxm2"), catalog.entry("h100_sxm")
    capacity = h100.values["hbm_bytes"].value / p100.values["hbm_bytes"].value
    compute = (
        h100.values["dense_16bit_flop_per_s"].value / p100.values["dense_16bit_flop_per_s"].value
    )
    assert capacity == pytest.approx(5.0, rel=CAPACITY_TOLERANCE)
    assert compute == pytest.approx(46.0, rel=CAPACITY_TOLERANCE)
    assert (p100.release_date.year, h100.release_date.year) == (2016, 2022)


@pytest.mark.parametrize(
    ("second", "what"),
    [
        ("H100_SXM", "name 'h100_sxm'"),  # the same name but for case
        ("h100_copy", "preset 'h100_sxm'"),  # another name, the same preset
    ],
)
def test_catalog_refuses_one_accelerator_named_twice(second: str, what: str) -> None:
    """Two entries of one accelerator (its name in another case, or its preset again) are one
    CatalogError naming both, not two points of a trend."""
    block = (
        "{gpu},preset,h100_sxm,conf/hardware/h100_sxm.yaml\n"
        "{gpu},release_date,2022-09-20,NVIDIA press release\n"
    )
    text = "gpu,metric,value,source\n" + block.format(gpu="h100_sxm") + block.format(gpu=second)
    with pytest.raises(CatalogError, match=f"{second} and h100_sxm name the same accelerator"):
        parse_catalog(text, {"h100_sxm": preset_spec("h100_sxm")})
    with pytest.raises(CatalogError, match=what):
        parse_catalog(text, {"h100_sxm": preset_spec("h100_sxm")})
