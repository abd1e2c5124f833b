"""One identity: every hash and id of the package, made by `pipeline.identity` alone."""

from __future__ import annotations

import dataclasses
import enum
import math
from pathlib import Path
from typing import NamedTuple

import grimp
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pipeline
from pipeline import identity
from pipeline.identity import config_hash, series_id
from pipeline.model.series import closed_forms, series_points
from pipeline.schema import compose_config, load_scenario

MODEL_DIR = Path(pipeline.__file__).resolve().parent / "model"
HASHING_ELSEWHERE = {
    "pipeline.io.parquet": "a part's file name from the ids of the series it holds",
    "pipeline.sources.store": "a stored copy's name: the sha256 of its bytes",
}
"""The modules besides `pipeline.identity` that may hash, each with the reason: file names
derived from contents, no id of a config or a row."""


def test_identity_is_the_one_module_that_hashes_configs() -> None:
    """Only `pipeline.identity` (and the named file-naming modules) import hashlib, so every id of
    a series, a point, a run or a catalog is made in one place."""
    graph = grimp.build_graph("pipeline", include_external_packages=True)
    hashing = graph.find_modules_that_directly_import("hashlib")
    assert hashing - set(HASHING_ELSEWHERE) == {"pipeline.identity"}


_config_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=10,
)


@given(st.dictionaries(st.text(max_size=8), _config_values, max_size=6))
def test_config_hash_ignores_key_order(config: dict[str, object]) -> None:
    """Reversing a dict's insertion order does not change its hash."""
    reordered = dict(reversed(list(config.items())))
    assert config_hash(reordered) == config_hash(config)
    assert len(config_hash(config)) == 16


def test_config_hash_differs_for_different_values() -> None:
    """Changing one nested value changes the hash."""
    a = {"hardware": {"name": "h100", "latency_us": 1.0}}
    b = {"hardware": {"name": "h100", "latency_us": 2.0}}
    assert config_hash(a) != config_hash(b)


def test_config_hash_refuses_nan() -> None:
    """NaN has no canonical JSON, so it cannot be hashed."""
    with pytest.raises(ValueError, match="JSON"):
        config_hash({"x": math.nan})


def test_series_id_changes_with_the_model_fingerprint() -> None:
    """The same scenario under another model version has another series id."""
    scenario = load_scenario(compose_config())
    default = series_id(scenario, False)
    assert default == series_id(scenario, False, identity.model_fingerprint())
    assert series_id(scenario, False, "another model") != default
    assert series_id(scenario, True) != default


def test_source_fingerprint_changes_with_one_byte_or_the_version() -> None:
    """One changed byte of one source, or another package version, changes the fingerprint."""
    sources = [("pipeline.model/a.py", b"x = 1\n"), ("pipeline.model/b.py", b"y = 2\n")]
    base = identity.source_fingerprint(iter(sources), "0.1.0")
    edited = [sources[0], ("pipeline.model/b.py", b"y = 3\n")]
    assert identity.source_fingerprint(iter(edited), "0.1.0") != base
    assert identity.source_fingerprint(iter(sources), "0.1.1") != base
    assert identity.source_fingerprint(iter(sources), "0.1.0") == base


def test_model_fingerprint_covers_exactly_the_model_sources() -> None:
    """Every .py file of pipeline/model is hashed, with its bytes as installed, and nothing else
    (fixed layouts and series limits are the model's rules)."""
    names = {name for name, _ in identity.model_sources()}
    expected = {f"pipeline.model/{p.relative_to(MODEL_DIR)}" for p in MODEL_DIR.rglob("*.py")}
    assert expected == names
    contents = dict(identity.model_sources())
    assert (
        contents["pipeline.model/search/search.py"]
        == (MODEL_DIR / "search" / "search.py").read_bytes()
    )


def test_model_fingerprint_covers_the_series_dispatch_and_closed_forms() -> None:
    """The functions choosing a series' evaluation and computing its closed forms are in
    sources the fingerprint hashes, so a change to them gives new series ids."""
    names = {name for name, _ in identity.model_sources()}
    for function in (series_points, closed_forms):
        package, _, module = function.__module__.rpartition(".")
        assert f"{package}/{module}.py" in names


def test_series_ids_equal_series_id_on_whole_sweeps() -> None:
    """`SeriesIds` gives `series_id`'s id for every series of sweeps of both physics, a
    concrete run and a fixed layout, the shared parts of each scenario encoded once."""
    from pipeline.sweep import iter_sweep

    configs = [
        (["sweep=sensitivity"], False),
        (["sweep=smoke", "physics=realistic"], True),
        (["run=llama3_405b_8k_16384"], False),
        (["parallelism=fixed"], False),
    ]
    for overrides, whole_grid in configs:
        ids = identity.SeriesIds(whole_grid)
        for item in iter_sweep(compose_config(overrides), overrides=overrides):
            assert ids(item.scenario) == series_id(item.scenario, whole_grid)
            assert ids(item.scenario) == ids(item.scenario)  # the second from its memory


@dataclasses.dataclass(frozen=True)
class _Inner:
    rate: float
    sizes: tuple[int, ...]


class _Pair(NamedTuple):
    low: float
    high: float


class _Kind(enum.StrEnum):
    DENSE = "dense"


@dataclasses.dataclass(frozen=True)
class _Outer:
    inner: _Inner
    pairs: tuple[_Pair, ...]
    table: dict[str, float]
    kind: _Kind
    flag: bool
    missing: None
    names: list[str]


_FINITE_OR_NOT = st.floats(allow_nan=True) | st.integers(-(2**70), 2**70) | st.booleans()


@given(
    rate=st.floats(allow_nan=True),
    sizes=st.lists(st.integers(0, 2**40), max_size=3),
    pairs=st.lists(st.tuples(_FINITE_OR_NOT, _FINITE_OR_NOT), max_size=2),
    table=st.dictionaries(st.text(max_size=3), _FINITE_OR_NOT, max_size=3),
    names=st.lists(st.text(max_size=4), max_size=3),
)
def test_field_text_is_that_of_asdict_and_jsonable(
    rate: float,
    sizes: list[int],
    pairs: list[tuple[float, float]],
    table: dict[str, float],
    names: list[str],
) -> None:
    """A field's text (`SeriesIds`, made in one pass) is the canonical JSON of the field as
    `dataclasses.asdict` and `jsonable` make it, which `series_id` hashes: nested records, named
    and plain tuples, dicts, enums, booleans, None, infinities and NaN (their repr)."""
    value = _Outer(
        _Inner(rate, tuple(sizes)),
        tuple(_Pair(*p) for p in pairs),
        table,
        _Kind.DENSE,
        True,
        None,
        names,
    )
    expected = identity.canonical_json(identity.jsonable(dataclasses.asdict(value)))
    assert identity._field_text(value) == expected
    assert identity._field_text(value.inner) == identity.canonical_json(
        identity.jsonable(dataclasses.asdict(value.inner))
    )
