"""The HBM capacity memory checks read (pipeline/model/memory/capacity.py; docs/model.md R.12)."""

from __future__ import annotations

import dataclasses

import pytest

from pipeline.model.memory.capacity import memory_capacity_bytes
from pipeline.model.records.switches import PAPER, HbmCapacity
from pipeline.model.search.search import physics_hardware
from pipeline.schema import compose_config, load_scenario
from tests.presets import preset

DEVICE = dataclasses.replace(PAPER, hbm_capacity=HbmCapacity.DEVICE)
H100_DRIVER_BYTES = 81_559 * 2**20
"""What NVML reports of an "80 GB" H100 (Modal's table, the preset's source): 85.52e9 B."""


def test_device_capacity_is_the_drivers_count_and_datasheet_the_papers() -> None:
    """Under `device` an H100 holds the 81,559 MiB its driver reports; under the paper's
    `datasheet` the 8.0e10 B of spec §3.2."""
    h100 = preset("h100_sxm")
    assert memory_capacity_bytes(h100, DEVICE) == pytest.approx(H100_DRIVER_BYTES, rel=1e-6)
    assert memory_capacity_bytes(h100, PAPER) == 8.0e10


def test_without_a_ratio_device_reads_the_datasheet() -> None:
    """A preset without the driver's count (V100) is checked against its datasheet's bytes."""
    v100 = preset("v100_sxm")
    assert v100.hbm_device_ratio is None
    assert memory_capacity_bytes(v100, DEVICE) == v100.hbm_bytes


def test_a_what_if_on_the_datasheet_capacity_moves_the_drivers_count() -> None:
    """`hardware.hbm_gb=160` on H100 doubles the capacity realistic physics checks too: the
    ratio, not a byte count, is what the preset holds."""
    scenario = load_scenario(compose_config(["physics=realistic", "hardware.hbm_gb=160"]))
    capacity = memory_capacity_bytes(scenario.hardware, scenario.physics)
    assert capacity == pytest.approx(2 * H100_DRIVER_BYTES, rel=1e-6)


def test_physics_hardware_holds_the_capacity_once() -> None:
    """The hardware the search reads carries the capacity as its HBM and no ratio, so reading
    it again gives the same bytes, not the ratio twice."""
    scenario = load_scenario(compose_config(["physics=realistic"]))
    hw = physics_hardware(scenario.hardware, scenario.physics)
    assert hw.hbm_bytes == memory_capacity_bytes(scenario.hardware, scenario.physics)
    assert hw.hbm_device_ratio is None
    assert memory_capacity_bytes(hw, scenario.physics) == hw.hbm_bytes
    assert physics_hardware(scenario.hardware, PAPER) == scenario.hardware
