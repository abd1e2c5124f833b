"""The model fingerprint: a change to the model's code gives every series a new id."""

from __future__ import annotations

from pathlib import Path

import pipeline
from pipeline.execute import fingerprint
from pipeline.execute.series import series_id
from pipeline.model.series import closed_forms, series_points
from pipeline.schema import compose_config, load_scenario

MODEL_DIR = Path(pipeline.__file__).resolve().parent / "model"


def test_series_id_changes_with_the_model_fingerprint() -> None:
    """The same scenario under another model version has another series id."""
    scenario = load_scenario(compose_config())
    default = series_id(scenario, False)
    assert default == series_id(scenario, False, fingerprint.model_fingerprint())
    assert series_id(scenario, False, "another model") != default
    assert series_id(scenario, True) != default


def test_source_fingerprint_changes_with_one_byte_or_the_version() -> None:
    """One changed byte of one source, or another package version, changes the fingerprint."""
    sources = [("pipeline.model/a.py", b"x = 1\n"), ("pipeline.model/b.py", b"y = 2\n")]
    base = fingerprint.source_fingerprint(iter(sources), "0.1.0")
    edited = [sources[0], ("pipeline.model/b.py", b"y = 3\n")]
    assert fingerprint.source_fingerprint(iter(edited), "0.1.0") != base
    assert fingerprint.source_fingerprint(iter(sources), "0.1.1") != base
    assert fingerprint.source_fingerprint(iter(sources), "0.1.0") == base


def test_model_fingerprint_covers_exactly_the_model_sources() -> None:
    """Every .py file of pipeline/model is hashed, with its bytes as installed, and nothing else
    (fixed layouts and series limits are the model's rules)."""
    names = {name for name, _ in fingerprint._model_sources()}
    expected = {f"pipeline.model/{p.relative_to(MODEL_DIR)}" for p in MODEL_DIR.rglob("*.py")}
    assert expected == names
    contents = dict(fingerprint._model_sources())
    assert (
        contents["pipeline.model/search/search.py"]
        == (MODEL_DIR / "search" / "search.py").read_bytes()
    )


def test_model_fingerprint_covers_the_series_dispatch_and_closed_forms() -> None:
    """The functions choosing a series' evaluation and computing its closed forms are in
    sources the fingerprint hashes, so a change to them gives new series ids."""
    names = {name for name, _ in fingerprint._model_sources()}
    for function in (series_points, closed_forms):
        package, _, module = function.__module__.rpartition(".")
        assert f"{package}/{module}.py" in names
