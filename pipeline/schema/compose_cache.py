"""One Hydra composition per distinct request, one read of each config file, within a command.

A `dmlimits -m` command composes the same configs several times: Hydra composes the primary
config to find the run mode and again to run, the command-line check composes each job, and
Hydra's sweeper composes every job once to validate the batch and once more to launch it. Each
composition reads and merges the YAML files anew (about 60 ms). Within `memoized_compositions`
Hydra's `ConfigLoaderImpl.load_configuration` returns a deep copy (about 4 ms) of the first
result for the same config search path, config name, overrides and mode, so callers that
modify what they get (Hydra sets the job's fields on it) never share it.

Distinct compositions (the jobs of a sweep, each with its own choices) still share most files:
`conf/config.yaml`, Hydra's own configs, every group option the jobs do not sweep. Within the
block `ConfigRepository.load_config` reads and parses each file once per search path and hands
out deep copies of it (Hydra merges a loaded file into the composed config without copying its
nodes, then applies the overrides to that config, so a shared result would carry one job's
overrides into the next). That takes a distinct composition from about 64 to about 46 ms.

Failures are not kept: a bad command line fails as it did. Only the CLI installs it, for the life
of one command; a long-lived process (a notebook using `pipeline.run`) composes afresh, seeing
edited presets.

This patches methods of `hydra._internal` (pyproject.toml keeps hydra-core below 1.4).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra._internal.config_repository import ConfigRepository


def _search_path(loader: Any) -> tuple[tuple[str, str], ...]:
    """The loader's config sources as (provider, path) pairs: part of what a result depends on."""
    return tuple((str(e.provider), str(e.path)) for e in loader.config_search_path.get_path())


@contextmanager
def memoized_compositions() -> Iterator[dict[tuple[Any, ...], Any]]:
    """While the block runs, equal Hydra compositions are made once (module docstring); yields
    the cache, keyed by (search path, config name, overrides, run mode, from_shell, validate)."""
    original = ConfigLoaderImpl.load_configuration
    cache: dict[tuple[Any, ...], Any] = {}

    def load_configuration(
        self: Any,
        config_name: str | None,
        overrides: list[str],
        run_mode: Any,
        from_shell: bool = True,
        validate_sweep_overrides: bool = True,
    ) -> Any:
        key = (
            _search_path(self),
            config_name,
            tuple(overrides),
            run_mode,
            from_shell,
            validate_sweep_overrides,
        )
        if key not in cache:
            cfg = original(
                self, config_name, overrides, run_mode, from_shell, validate_sweep_overrides
            )
            cache[key] = copy.deepcopy(cfg)
            return cfg
        return copy.deepcopy(cache[key])

    ConfigLoaderImpl.load_configuration = load_configuration  # type: ignore[method-assign]
    try:
        with _memoized_files():
            yield cache
    finally:
        ConfigLoaderImpl.load_configuration = original  # type: ignore[method-assign]


@contextmanager
def _memoized_files() -> Iterator[dict[tuple[Any, ...], Any]]:
    """While the block runs, each config file is read once per search path (module docstring);
    yields the cache, keyed by (the repository's sources, config path)."""
    original = ConfigRepository.load_config
    files: dict[tuple[Any, ...], Any] = {}

    def load_config(self: Any, config_path: str) -> Any:
        key = (tuple((s.provider, s.path) for s in self.get_sources()), config_path)
        if key not in files:
            files[key] = original(self, config_path)  # a missing file (None) is kept too
        return copy.deepcopy(files[key])

    ConfigRepository.load_config = load_config  # type: ignore[method-assign]
    try:
        yield files
    finally:
        ConfigRepository.load_config = original  # type: ignore[method-assign]
