"""Every hash and id the package writes: one module, read by sweep, execute, io and the rest.

- `canonical_json` and `config_hash`: a JSON value's one text and its 16-hex-character hash;
- `series_id`: the hash of everything that determines a series' rows (its scenario, whether
  the whole grid runs, and `model_fingerprint`, the hash of the model's source);
- `point_config_hash`: one point of a series (its `series_id` and `d_model`);
- `new_run_id`: a run's id, sorting by start time;
- `catalog_hash`: an accelerator catalog's points (the `trends` table's `catalog_hash`).

docs/schema.md, "Hashes", gives the rules. It sits just above the leaves
(`pipeline.version`, which the fingerprint hashes): every layer that names a series may
import it, and it imports no layer. The model's source is read as files through
`importlib.resources`, not imported (a source checkout, an editable install and a wheel alike;
a dozen small files, read once per process).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
import math
import secrets
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any, ClassVar, Protocol

from pipeline.version import __version__

HASH_HEX_CHARS = 16
"""Length of a config hash: the first 64 bits of a sha256, ample for a few million scenarios."""

MODEL_PACKAGES = ("pipeline.model",)
"""Packages whose every .py file is part of the model fingerprint (recursively)."""


class Dataclass(Protocol):
    """Any dataclass instance (a `pipeline.schema.Scenario`, say), named without importing it."""

    __dataclass_fields__: ClassVar[dict[str, Any]]


def canonical_json(obj: Any) -> str:
    """The config as compact JSON with sorted keys: equal configs give equal text.

    Accepts what a resolved Hydra config holds (dicts with string keys, lists, tuples, str, int,
    float, bool, None). `1` and `1.0` are different JSON and hash differently; NaN is refused.
    """
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def config_hash(obj: Any) -> str:
    """sha256 of `canonical_json(obj)`, first 16 hex characters."""
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()[:HASH_HEX_CHARS]


def jsonable(value: Any) -> Any:
    """A value for `canonical_json`: non-finite floats as their repr ("inf"), tuples as lists,
    recursively through dicts and lists; anything else as it is."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def _sources(node: Traversable, prefix: str) -> Iterator[tuple[str, Traversable]]:
    """(relative name, file) of every .py file under `node`, in name order."""
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        name = f"{prefix}{child.name}"
        if child.is_dir():
            yield from _sources(child, f"{name}/")
        elif child.name.endswith(".py"):
            yield name, child


def source_fingerprint(sources: Iterator[tuple[str, bytes]], version: str) -> str:
    """sha256 over (name, bytes) of each source file and the package version, as hex."""
    digest = hashlib.sha256(version.encode("utf-8"))
    for name, data in sources:
        digest.update(b"\0" + name.encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


def model_sources() -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of every .py file of `MODEL_PACKAGES`, as installed, in name order."""
    for package in MODEL_PACKAGES:
        for name, path in _sources(files(package), f"{package}/"):
            yield name, path.read_bytes()


@functools.cache
def model_fingerprint() -> str:
    """The model's version: the fingerprint of this installation's model code and
    `pipeline.__version__`. A change to the physics gives new series ids, so a resumed sweep
    recomputes instead of keeping rows of the old model."""
    return source_fingerprint(model_sources(), __version__)


def series_id(scenario: Dataclass, whole_grid: bool, model: str | None = None) -> str:
    """A stable hash of everything that determines a series' rows.

    That is the scenario (a `pipeline.schema.Scenario`, every field), whether the whole grid
    runs, and the model's version `model` (default: `model_fingerprint()`), so rows of an older
    model are never taken for this one's.
    """
    return config_hash(
        {
            "scenario": jsonable(dataclasses.asdict(scenario)),
            "whole_grid": whole_grid,
            "model": model_fingerprint() if model is None else model,
        }
    )


class SeriesIds:
    """`series_id` of many scenarios that share their parts (a sweep's series), computed fast.

    The id hashes the canonical JSON of every field of the scenario. Fields held by many
    scenarios as the same object (a frozen hardware spec, scaling laws or search options that
    a sweep reads once, `pipeline.schema.memo`) are encoded once and remembered by identity
    (at most `max_entries`, least recently used first out); the scenario's JSON is then their
    texts joined in key order, which is the text `canonical_json` gives for the whole (it sorts
    the keys of every object and writes each value the same way wherever it sits). The ids
    equal `series_id`'s, a test checks on whole sweeps.
    """

    def __init__(self, whole_grid: bool, model: str | None = None, max_entries: int = 1 << 15):
        self.whole_grid = whole_grid
        self.model = model_fingerprint() if model is None else model
        self.max_entries = max_entries
        self._texts: dict[int, tuple[object, str]] = {}
        self._plain: dict[tuple[type, object], str] = {}
        self._names: dict[type, tuple[tuple[str, str], ...]] = {}

    @property
    def kept(self) -> int:
        """Field texts remembered by identity now (at most `max_entries`)."""
        return len(self._texts)

    def field_json(self, value: object) -> str:
        """`canonical_json` of a field value as `dataclasses.asdict` and `jsonable` make it;
        an immutable one (a frozen dataclass, a tuple) remembered by identity."""
        if value is None or isinstance(value, str | int | float):  # bool is an int
            key = (type(value), value)
            text = self._plain.get(key)
            if text is None:
                text = self._plain[key] = canonical_json(jsonable(value))
                if len(self._plain) > self.max_entries:
                    self._plain.clear()
            return text
        if not isinstance(value, tuple) and not _is_instance(value):
            return _field_text(value)
        entry = self._texts.pop(id(value), None)
        if entry is None or entry[0] is not value:
            entry = (value, _field_text(value))
            if len(self._texts) >= self.max_entries:
                del self._texts[next(iter(self._texts))]  # the least recently used
        self._texts[id(value)] = entry  # most recently used last
        return entry[1]

    def __call__(self, scenario: Dataclass) -> str:
        """`series_id(scenario, whole_grid, model)` of this instance's whole_grid and model."""
        names = self._names.get(type(scenario))
        if names is None:
            fields = sorted(f.name for f in dataclasses.fields(scenario))
            names = self._names[type(scenario)] = tuple((n, canonical_json(n)) for n in fields)
        body = ",".join(f"{key}:{self.field_json(getattr(scenario, n))}" for n, key in names)
        text = (
            f'{{"model":{canonical_json(self.model)},"scenario":{{{body}}},'
            f'"whole_grid":{canonical_json(self.whole_grid)}}}'
        )
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_HEX_CHARS]


def _is_instance(value: object) -> bool:
    """True for a dataclass instance (not a dataclass type)."""
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _field_text(value: object) -> str:
    """The canonical JSON of one field value inside `series_id`'s whole-scenario JSON."""
    return canonical_json(_json_value(value))


def _json_value(value: Any) -> Any:
    """`jsonable` of a field value as `dataclasses.asdict` converts it, in one pass (asdict
    deep-copies every leaf, about 0.3 ms for a sweep's hardware spec): a dataclass instance as
    the dict of its fields, a list or tuple (a named one too) as a list, a dict with its values
    converted, a non-finite float as its repr; anything else as asdict leaves it (a copy)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if value is None or isinstance(value, str | int):  # bool is an int
        return value
    if _is_instance(value):
        return {f.name: _json_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {copy.deepcopy(k): _json_value(v) for k, v in value.items()}
    return copy.deepcopy(value)


def point_config_hash(series_id: str, d_model: int) -> str:
    """The scenario of one point: its series' config (by `series_id`) plus the model width."""
    return config_hash({"series_id": series_id, "d_model": int(d_model)})


def new_run_id(now: datetime | None = None) -> str:
    """A run id that sorts by start time: UTC timestamp plus 8 random hex characters."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return f"{moment:%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}"


def catalog_hash(points: Mapping[str, Iterable[tuple[str, float, float]]]) -> str:
    """A catalog's id from its (gpu, release year, value) points by metric: equal catalogs,
    equal hash; an added GPU or a changed value alters it. The sha256 of Python's default JSON
    of [gpu, repr(year), repr(value)] lists (sorted keys), first 16 hex characters: its own
    text, not `canonical_json`, so the trends of every dataset written keep their id."""
    data = {
        m: [[gpu, repr(year), repr(value)] for gpu, year, value in pts] for m, pts in points.items()
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:HASH_HEX_CHARS]
