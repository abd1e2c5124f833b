"""Within one command, equal Hydra compositions are made once and handed out as copies."""

from __future__ import annotations

from typing import Any

import pytest
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from omegaconf import OmegaConf

from pipeline.schema import compose_config
from pipeline.schema.compose_cache import memoized_compositions


def test_equal_compositions_are_made_once_as_independent_copies() -> None:
    """The second composition of a request is a cache hit equal to the first, not the same
    object, so a caller modifying its copy changes no other."""
    with memoized_compositions() as cache:
        first = compose_config(["hardware=a100_sxm"])
        assert len(cache) == 1
        second = compose_config(["hardware=a100_sxm"])
        assert len(cache) == 1
        other = compose_config(["hardware=v100_sxm"])
        assert len(cache) == 2
    assert OmegaConf.to_container(first) == OmegaConf.to_container(second)
    assert first is not second
    first.output.root = "elsewhere"
    assert second.output.root != "elsewhere"
    assert other.hardware.name != first.hardware.name


def test_the_cache_is_removed_after_the_block() -> None:
    """Outside the block Hydra's own method composes again (a notebook sees edited presets)."""
    original = ConfigLoaderImpl.load_configuration
    with memoized_compositions():
        assert ConfigLoaderImpl.load_configuration is not original
    assert ConfigLoaderImpl.load_configuration is original


def test_file_reads_are_shared_but_one_jobs_overrides_never_reach_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Distinct compositions parse each config file once, and equal what Hydra composes without
    the cache; an override of one (a node from a shared file) does not show in the next."""
    requests = [
        ["hardware=a100_sxm", "output.root=/elsewhere", "physics=realistic"],
        ["hardware=v100_sxm"],
        ["hardware=h100_sxm", "scaling=sparse"],
    ]
    fresh = [OmegaConf.to_container(compose_config(r)) for r in requests]
    parse = OmegaConf.load
    parsed: list[str] = []

    def counting(file: Any) -> Any:
        parsed.append(str(getattr(file, "name", file)))
        return parse(file)

    monkeypatch.setattr(OmegaConf, "load", counting)
    with memoized_compositions():
        cached = [OmegaConf.to_container(compose_config(r)) for r in requests]
    assert cached == fresh
    assert cached[1]["output"]["root"] != "/elsewhere"  # type: ignore[index]
    assert any(name.endswith("config.yaml") for name in parsed)
    assert len(parsed) == len(set(parsed))  # each file parsed once
