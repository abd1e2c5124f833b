"""Package configs read once per process: a Hydra config source and the search-path plugin
that puts it in place of ``pkg://`` for dmlimits' configs and Hydra's own.

Hydra reads every config file again for each composition (through OmegaConf's YAML reader, the
larger part of a file's cost), and a ``dmlimits -m`` of three jobs composes six times.
`ParsedOnceSource` (scheme ``parsed-once://``) reads package resources as Hydra's ``pkg://``
source does, but parses each file once per process and hands every composition a deep copy of
the parsed config, so no composition sees another's changes. Package files do not
change while a command runs; a process that edits them (none of dmlimits') would need a new
process to see the edit.

`ParsedOncePaths` rewrites the search path of a composition that reads dmlimits' configs
(``pkg://pipeline.conf``): that entry and Hydra's own ``pkg://hydra.conf`` become
``parsed-once://`` with the same package and provider, in the same place; any other
application's search path is left alone. Both are Hydra plugins through its public plugin API
(`ConfigSource`, `SearchPathPlugin`); the ``dmlimits`` command registers them with
`Plugins.register` (`pipeline.cli.startup`), as an editable install hides them from Hydra's scan.
"""

from __future__ import annotations

import copy
import io
import os
import re
from importlib import resources

from hydra.core.config_search_path import ConfigSearchPath
from hydra.core.object_type import ObjectType
from hydra.plugins.config_source import ConfigLoadError, ConfigResult, ConfigSource
from hydra.plugins.search_path_plugin import SearchPathPlugin
from omegaconf import DictConfig, ListConfig, OmegaConf

SCHEME = "parsed-once"
PACKAGES = ("pipeline.conf", "hydra.conf")
"""The packages whose ``pkg://`` entries `ParsedOncePaths` replaces (dmlimits' configs first:
their presence marks a dmlimits composition)."""
PARSED: dict[tuple[str, str], tuple[dict[str, str | None], DictConfig | ListConfig]] = {}
"""(package, file) -> the file's header and its config as parsed, never handed out: each
composition gets a deep copy (about half the cost of building the config again)."""


def header_of(text: str) -> dict[str, str | None]:
    """The ``# @key value`` lines at the top of a config file (``package`` None when absent),
    as Hydra reads a config's header."""
    header: dict[str, str | None] = {}
    for line in (raw.strip() for raw in text.splitlines()):
        if not line:
            continue
        if not re.match(r"^\s*#\s*@", line):
            break
        words = line.lstrip("#").split()
        if len(words) != 2:
            raise ValueError(f"Expected header format: KEY VALUE, got '{line.lstrip('#')}'")
        header[words[0][1:]] = words[1]
    header.setdefault("package", None)
    return header


class ParsedOnceSource(ConfigSource):
    """The configs of a package (``parsed-once://pipeline.conf``), each file parsed once."""

    def __init__(self, provider: str, path: str) -> None:
        super().__init__(provider=provider, path=path)
        self.path = self.path.replace("/", ".").rstrip(".")

    @staticmethod
    def scheme() -> str:
        return SCHEME

    def load_config(self, config_path: str) -> ConfigResult:
        name = yaml_name(config_path)
        key = (self.path, name)
        if key not in PARSED:
            res = resources.files(self.path).joinpath(name)
            if not res.is_file():
                raise ConfigLoadError(f"Config not found : {name}")
            text = res.read_text(encoding="utf-8")
            PARSED[key] = (header_of(text), OmegaConf.load(io.StringIO(text)))
        header, parsed = PARSED[key]
        return ConfigResult(
            config=copy.deepcopy(parsed),
            path=f"{SCHEME}://{self.path}",
            provider=self.provider,
            header=dict(header),
        )

    def available(self) -> bool:
        try:
            files = resources.files(self.path)
        except (ValueError, ModuleNotFoundError, TypeError):
            return False
        return any(f.name == "__init__.py" and f.is_file() for f in files.iterdir())

    def is_group(self, config_path: str) -> bool:
        try:
            return bool(resources.files(self.path).joinpath(config_path).is_dir())
        except (ValueError, ModuleNotFoundError, TypeError):
            return False

    def is_config(self, config_path: str) -> bool:
        try:
            return bool(resources.files(self.path).joinpath(yaml_name(config_path)).is_file())
        except (ValueError, ModuleNotFoundError, TypeError):
            return False

    def list(self, config_path: str, results_filter: ObjectType | None) -> list[str]:
        found: set[str] = set()
        for entry in resources.files(self.path).joinpath(config_path).iterdir():
            name = entry.name
            if name in ("__pycache__", "__init__.py"):
                continue
            path = os.path.join(config_path, name)
            if results_filter in (None, ObjectType.GROUP) and self.is_group(path):
                found.add(name)
            if results_filter in (None, ObjectType.CONFIG) and self.is_config(path):
                found.add(name.rsplit(".", 1)[0] if "." in name else name)
        return sorted(found)


def yaml_name(config_path: str) -> str:
    """A config's file name: ``hardware/h100_sxm`` -> ``hardware/h100_sxm.yaml``."""
    return config_path if config_path.endswith(".yaml") else f"{config_path}.yaml"


class ParsedOncePaths(SearchPathPlugin):
    """dmlimits' and Hydra's ``pkg://`` configs read through `ParsedOnceSource` (module
    docstring); a search path without dmlimits' configs is left as it is."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        elements = search_path.get_path()
        if not any(e.path == f"pkg://{PACKAGES[0]}" for e in elements):
            return
        for element in elements:
            scheme, _, package = element.path.partition("://")
            if scheme == "pkg" and package in PACKAGES:
                element.path = f"{SCHEME}://{package}"
