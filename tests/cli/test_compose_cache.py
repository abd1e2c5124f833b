"""Within one command, equal Hydra compositions are made once and handed out as copies."""

from __future__ import annotations

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
