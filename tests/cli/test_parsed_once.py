"""Package configs read once per process: the same configs, headers and listings as Hydra's
``pkg://`` source, and a search path rewritten only for dmlimits' compositions."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from types import SimpleNamespace

import pytest
from hydra.core.object_type import ObjectType
from hydra.plugins.config_source import ConfigSource
from omegaconf import DictConfig, OmegaConf

from hydra_plugins.dmlimits import parsed_once
from hydra_plugins.dmlimits.parsed_once import ParsedOncePaths, ParsedOnceSource, header_of
from pipeline.schema import CONF_DIR

HYDRA_CONF = Path(str(resources.files("hydra.conf")))
CONFIGS = [("pipeline.conf", CONF_DIR, p) for p in sorted(CONF_DIR.rglob("*.yaml"))] + [
    ("hydra.conf", HYDRA_CONF, p) for p in sorted(HYDRA_CONF.rglob("*.yaml"))
]


@pytest.mark.parametrize(
    ("package", "folder", "path"),
    [pytest.param(*c, id=f"{c[0]}/{c[2].relative_to(c[1])}") for c in CONFIGS],
)
def test_parsed_once_reads_each_config_as_omegaconf_and_hydra_do(
    package: str, folder: Path, path: Path
) -> None:
    """Each shipped config loads to OmegaConf's own reading of the file, with Hydra's header,
    twice alike, and a change to one copy does not reach the next."""
    source = ParsedOnceSource("main", f"parsed-once://{package}")
    name = str(path.relative_to(folder).with_suffix(""))
    first = source.load_config(name)
    expected = OmegaConf.load(path)
    assert OmegaConf.to_container(first.config) == OmegaConf.to_container(expected)
    text = path.read_text(encoding="utf-8")
    assert first.header == ConfigSource._get_header_dict(text)
    if isinstance(first.config, DictConfig):
        first.config["changed"] = True
    again = source.load_config(name)
    assert (package, f"{name}.yaml") in parsed_once.PARSED  # Hydra's plugin scan may reload it
    assert OmegaConf.to_container(again.config) == OmegaConf.to_container(expected)


@pytest.mark.parametrize(
    "text",
    ["# @package _global_\n# a comment\nx: 1\n", "  #  @package foo\n\nx: 1\n", "x: 1\n"],
)
def test_header_of_reads_as_hydra_does(text: str) -> None:
    """The header of a config is Hydra's reading of it."""
    assert header_of(text) == ConfigSource._get_header_dict(text)


def test_parsed_once_lists_groups_and_options_of_the_package() -> None:
    """A group's options and the package's groups are listed as files and folders say."""
    source = ParsedOnceSource("main", "parsed-once://pipeline.conf")
    hardware = source.list("hardware", ObjectType.CONFIG)
    assert hardware == sorted(p.stem for p in (CONF_DIR / "hardware").glob("*.yaml"))
    assert "hardware" in source.list("", ObjectType.GROUP)
    assert source.is_group("hardware")
    assert source.is_config("hardware/h100_sxm")
    assert source.available()


def search_path(*paths: str) -> SimpleNamespace:
    """A search path as Hydra's `ConfigSearchPath` gives it (`get_path`: its elements)."""
    elements = [SimpleNamespace(provider="main", path=p) for p in paths]
    return SimpleNamespace(elements=elements, get_path=lambda: elements)


def test_search_path_is_rewritten_only_for_dmlimits() -> None:
    """dmlimits' and Hydra's package configs move to parsed-once://; another application's
    search path, and a user's directories, stay as they are."""
    ours = search_path("pkg://hydra.conf", "pkg://pipeline.conf", "file:///home/me/presets")
    ParsedOncePaths().manipulate_search_path(ours)  # type: ignore[arg-type]
    assert [e.path for e in ours.elements] == [
        "parsed-once://hydra.conf",
        "parsed-once://pipeline.conf",
        "file:///home/me/presets",
    ]
    other = search_path("pkg://hydra.conf", "pkg://other.conf")
    ParsedOncePaths().manipulate_search_path(other)  # type: ignore[arg-type]
    assert [e.path for e in other.elements] == ["pkg://hydra.conf", "pkg://other.conf"]
