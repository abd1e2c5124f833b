"""The records the search's memos key on compute their hash once (`records.kept_hash`): the
hash is the generated one of their fields, read again on the same object, never carried by a
copy or a pickle (string hashes differ between processes), and equality is the fields'."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.options import Quirks, SearchOptions
from pipeline.model.records.scaling import ModelShape, ScalingLaws, model_shape
from pipeline.model.records.switches import Efficiency, Physics
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
