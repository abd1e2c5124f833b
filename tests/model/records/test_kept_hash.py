"""The records the search's memos key on compute their hash once (`records.kept_hash`): the
hash is the generated one of their fields, read again on the same object, never carried by a
copy or a pickle (string hashes differ between processes), and equality is the fields'."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from pipeline.model.records.hardware import HardwareSpec, gpu_only
from pipeline.model.records.options import Quirks, SearchOptions
from pipeline.model.records.scaling import ModelShape, ScalingLaws, model_shape
from pipeline.model.records.switches import Efficiency, Physics
from pipeline.model.search.floors import floor_hardware
from pipeline.model.search.grid import timing_gpu
from tests.presets import preset

KeptRecord = HardwareSpec | Physics | Efficiency | ModelShape | Quirks | SearchOptions


def _records() -> list[KeptRecord]:
    """One record of each class that keeps its hash, with a string field where it has one."""
    physics = Physics(name="realistic", attention=True, efficiency=Efficiency(matmul=0.8))
    return [
        preset("h100_sxm"),
        physics,
        physics.efficiency,
        model_shape(8192, ScalingLaws()),
        Quirks(tie_tolerance=1e-9),
        SearchOptions(quirks=Quirks(whole_sequences=True)),
    ]


def _fields_hash(record: KeptRecord) -> int:
    """The hash a frozen dataclass generates: that of the tuple of its compared fields."""
    return hash(tuple(getattr(record, f.name) for f in dataclasses.fields(record) if f.compare))


@pytest.mark.parametrize("record", _records(), ids=lambda r: type(r).__name__)
def test_a_record_keeps_the_hash_of_its_fields(record: KeptRecord) -> None:
    """The kept hash is the fields' hash, asked once or again, and equal records hash alike."""
    assert hash(record) == _fields_hash(record)
    assert hash(record) == _fields_hash(record)  # read from the slot this time
    twin = dataclasses.replace(record)
    assert twin == record
    assert twin is not record
    assert hash(twin) == hash(record)


@pytest.mark.parametrize("record", _records(), ids=lambda r: type(r).__name__)
def test_copies_and_pickles_compute_their_own_hash(record: KeptRecord) -> None:
    """A pickle or a copy carries the fields, not the kept hash (a process that unpickles a
    record hashes its strings with its own seed), and a changed copy hashes its own fields."""
    hash(record)
    for other in (pickle.loads(pickle.dumps(record)), copy.copy(record), copy.deepcopy(record)):
        assert other == record
        assert not hasattr(other, "_hash")
        assert hash(other) == hash(record)
    assert "_hash" not in repr(record)
    first = dataclasses.fields(record)[0]
    if first.type in ("str", "float", "int"):
        changed = dataclasses.replace(record, **{first.name: getattr(record, first.name) * 2})
        assert changed != record
        assert hash(changed) == _fields_hash(changed)


def test_gpus_that_differ_only_in_what_a_derivation_drops_derive_one_record() -> None:
    """`gpu_only`, `timing_gpu` and `floor_hardware` return the first equal record met
    (`first_equal`): GPUs apart only in their network, or in their HBM, derive the very same
    object, so that the memos keyed by it find it by identity; a GPU that differs in what the
    derivation keeps derives another."""
    h100 = preset("h100_sxm")
    other_net = dataclasses.replace(h100, net_latency_s=tuple(2 * t for t in h100.net_latency_s))
    more_hbm = dataclasses.replace(h100, hbm_bytes=2 * h100.hbm_bytes)
    faster_hbm = dataclasses.replace(more_hbm, hbm_bandwidth_bytes_per_s=1e13)
    assert gpu_only(other_net) is gpu_only(h100)
    assert timing_gpu(more_hbm) is timing_gpu(h100)
    assert floor_hardware(faster_hbm) is floor_hardware(h100)
    assert gpu_only(more_hbm) == dataclasses.replace(gpu_only(h100), hbm_bytes=2 * h100.hbm_bytes)
    assert timing_gpu(faster_hbm) is not timing_gpu(h100)
