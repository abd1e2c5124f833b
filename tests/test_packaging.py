"""The wheel's contents as pyproject.toml declares them: every package, the configs, py.typed."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pipeline.schema import CONF_DIR
from pipeline.schema.compose import CONF_PACKAGE

REPO = Path(__file__).resolve().parents[1]
SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_packaging_lists_every_package() -> None:
    """pyproject.toml lists each folder of pipeline/ and hydra_plugins/ with an __init__.py,
    the configs, and each folder of conf/ holding YAML files (setuptools warns of a data folder
    Python could import that is not listed)."""
    found = {
        ".".join(p.parent.relative_to(REPO).parts)
        for top in ("pipeline", "hydra_plugins")
        for p in (REPO / top).rglob("__init__.py")
    }
    conf = REPO / "conf"
    groups = {
        ".".join((CONF_PACKAGE, *p.parent.relative_to(conf).parts))
        for p in conf.rglob("*.yaml")
        if p.parent != conf
    }
    assert groups  # hardware, scaling, ...
    assert set(SETUPTOOLS["packages"]) == found | {CONF_PACKAGE} | groups


def test_packaging_maps_conf_to_the_config_package() -> None:
    """The top-level conf/ is the package pipeline.conf, with its YAML files as package data."""
    assert SETUPTOOLS["package-dir"] == {CONF_PACKAGE: "conf"}
    assert CONF_DIR.resolve() == (REPO / "conf").resolve()
    assert (CONF_DIR / "__init__.py").is_file()
    assert "**/*.yaml" in SETUPTOOLS["package-data"][CONF_PACKAGE]


def test_packaging_ships_py_typed() -> None:
    """The package is marked typed (PEP 561) and the marker is package data."""
    assert (REPO / "pipeline" / "py.typed").is_file()
    assert "py.typed" in SETUPTOOLS["package-data"]["pipeline"]
