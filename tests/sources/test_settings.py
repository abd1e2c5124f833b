"""conf/sources/ -> SourcesSettings: the shipped default, the live preset, bad values."""

from __future__ import annotations

import pytest

from pipeline.schema import compose_config
from pipeline.schema.errors import ConfigError
from pipeline.sources.settings import SourceKind, sources_from_config


def test_sources_default_reads_the_shipped_snapshots() -> None:
    """The default needs no network: both sources are package data."""
    settings = sources_from_config(compose_config([]).sources)
    assert [s.kind for s in settings.specs] == [SourceKind.PACKAGE, SourceKind.PACKAGE]
    assert settings.store is None


def test_sources_live_points_at_epoch_urls() -> None:
    """sources=live fetches Epoch AI's CSVs and keeps the default fetch policy."""
    settings = sources_from_config(compose_config(["sources=live"]).sources)
    assert [s.location for s in settings.specs] == [
        "https://epoch.ai/data/notable_ai_models.csv",
        "https://epoch.ai/data/ml_hardware.csv",
    ]
    assert settings.fetch.retries == 3


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("sources.fetch.retries=100", "sources.fetch.retries"),
        ("sources.fetch.timeout_s=0", "sources.fetch.timeout_s"),
        ("sources.frontier_runs.location=package:a/b.csv", "sources.frontier_runs.location"),
        ("+sources.frontier_runs.urls=x", "sources.frontier_runs.urls"),
    ],
)
def test_sources_bad_value_is_a_one_line_config_error(override: str, key: str) -> None:
    """A bad fetch setting or location names its key."""
    cfg = compose_config([override])
    with pytest.raises(ConfigError) as err:
        sources_from_config(cfg.sources)
    assert err.value.key == key
