"""Compose conf/config.yaml with overrides through Hydra's compose API.

The configs are the package `pipeline.conf`: the repository's top-level conf/ folder, mapped to
that package name by pyproject.toml, so Hydra finds them as ``pkg://pipeline.conf`` from a wheel,
a pipx install and an editable install alike, whatever the working directory.

A user's own presets live in directories of theirs, added to Hydra's search path with
``--config-dir DIR`` or ``hydra.searchpath=[file://DIR]``. Hydra looks in the package first, so a
user file named like a built-in one (``hardware/h100_sxm.yaml``) would be silently ignored; it is
refused instead (`shadowed_files`). A job that re-composes its config (a sweep's choices) uses
the running application's search path (`app_search_path`), so user presets work there too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from importlib import resources
from pathlib import Path

import yaml
from hydra import compose, initialize_config_module
from hydra.conf import HydraConf
from hydra.core.config_store import ConfigStore
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from pipeline.schema.errors import InputError, UnknownKeyError
from pipeline.schema.yaml_bounds import check_override, check_yaml_file

COMPOSITION_ERRORS = (HydraException, OmegaConfBaseException, yaml.YAMLError, ValueError, OSError)
"""What composing a config may raise on a bad command line (InputError and ConfigError are
ValueErrors)."""

CONF_PACKAGE = "pipeline.conf"
CONF_URL = f"pkg://{CONF_PACKAGE}"
"""Hydra's address of the built-in configs (the primary config source of every composition)."""
CONF_DIR = Path(str(resources.files(CONF_PACKAGE)))
"""Where the built-in configs are on disk: <repository>/conf, or pipeline/conf in a wheel."""
CONFIG_NAME = "config"
VERSION_BASE = "1.3"
"""Hydra behaviour version; the CLI's @hydra.main must use the same."""
USER_PROVIDERS = ("command-line", "hydra.searchpath in command-line", "hydra.searchpath in main")
"""Hydra's names for the config sources a user adds (--config-dir, hydra.searchpath)."""


def search_path_override(search_path: Sequence[str]) -> str:
    """The ``hydra.searchpath=[...]`` override for these URLs (each quoted for Hydra's grammar)."""
    quoted = []
    for url in search_path:
        if "\\" in url:
            raise InputError(f"config directory {url!r}: a path with a backslash is not supported")
        quoted.append("'" + url.replace("'", "\\'") + "'")
    return f"hydra.searchpath=[{','.join(quoted)}]"


def compose_config(
    overrides: Sequence[str] = (),
    *,
    return_hydra_config: bool = False,
    search_path: Sequence[str] = (),
) -> DictConfig:
    """The root config composed with Hydra command-line style overrides.

    E.g. ``compose_config(["hardware=a100_sxm", "scaling=sparse",
    "scaling.grid.max_d_model=24576"])``. Multirun sweeps (``a,b``) are not expanded.
    ``search_path`` adds config sources after the built-in ones (``file:///home/me/presets``),
    as --config-dir does; by default those the user added (`app_search_path`: the running Hydra
    app's, and the block's of `user_config_sources`). Safe to call inside a running Hydra app:
    the global Hydra state is restored after.
    """
    for override in overrides:
        check_override(override)
    search_path = search_path or app_search_path()
    extra = [search_path_override(search_path)] if search_path else []
    with hydra_session():
        return compose(
            config_name=CONFIG_NAME,
            overrides=[*overrides, *extra],
            return_hydra_config=return_hydra_config,
        )


GROUP_OPTIONS_CONFIG = "dmlimits_group_options"
"""The primary config `compose_group_options` stores in Hydra's ConfigStore (a defaults list)."""


def compose_group_options(group: str, options: Sequence[str]) -> dict[str, DictConfig]:
    """Each built-in config `conf/<group>/<option>.yaml` composed alone with its own defaults
    list: the node the root config holds under `group` when nothing else writes into it,
    without composing every other group (`projected.preset_specs`; a test holds each shipped
    hardware preset to the root's). One composition for all of them: a primary config, stored
    in Hydra's ConfigStore, whose defaults list places the i-th option at package `option<i>`
    (Hydra's `group@package: option`; not the option's name, which may hold a package keyword
    such as `_global_`), so Hydra's own node is composed once, not once per option."""
    ConfigStore.instance().store(
        name=GROUP_OPTIONS_CONFIG,
        node={"defaults": [{f"{group}@option{i}": option} for i, option in enumerate(options)]},
    )
    with hydra_session():
        composed = compose(config_name=GROUP_OPTIONS_CONFIG)
    nodes = {option: composed[f"option{i}"] for i, option in enumerate(options)}
    assert all(isinstance(node, DictConfig) for node in nodes.values())
    return nodes


def compose_with_hydra(overrides: Sequence[str]) -> DictConfig:
    """The root config composed with these overrides, with its `hydra` node, as a run's.

    Within `hydra_session`; a sweep (``a,b``) is Hydra's "ambiguous value" error.
    """
    return compose(config_name=CONFIG_NAME, overrides=list(overrides), return_hydra_config=True)


RUN_PRESET_NEEDED = (
    "sets a key of a concrete run, but no run is chosen: add run=<preset> (conf/run/, e.g. "
    "run=gpt_1t) or a run file of your own (--config-dir DIR, run/<name>.yaml)"
)
"""What an override of a run key says when no run preset is chosen."""


def run_key_without_run(
    overrides: Sequence[str], compose_without: Callable[[list[str]], DictConfig]
) -> str | None:
    """The first override of a run key (``run.tp=8``, ``+run.tp=8``) when the config composed
    without those overrides (`compose_without`) has no run, else None: Hydra's own message
    for it ("use +run.tp=8") leads to a run of missing keys."""
    keyed = [o for o in overrides if o.lstrip("+~").startswith("run.")]
    if not keyed:
        return None
    try:
        cfg = compose_without([o for o in overrides if o not in keyed])
    except (HydraException, OmegaConfBaseException, ValueError, OSError):
        return None  # another override is wrong: Hydra's message names it
    return keyed[0] if OmegaConf.select(cfg, "run") is None else None


def session_overrides_parser() -> OverridesParser:
    """Hydra's override parser with the session's config loader, so that a ``glob()`` sweep
    lists a config group's options (within `hydra_session`)."""
    return OverridesParser.create(config_loader=GlobalHydra.instance().config_loader())


def group_options(group: str, search_path: Sequence[str] = ()) -> list[str]:
    """The options of a config group: built-in files and those in the user's directories."""
    extra = [search_path_override(search_path)] if search_path else []
    with hydra_session():
        loader = GlobalHydra.instance().config_loader()
        options = loader.get_group_options(group, config_name=CONFIG_NAME, overrides=extra)
    return sorted(str(o) for o in options)


@contextmanager
def hydra_session() -> Iterator[None]:
    """Hydra initialized on the built-in configs as @hydra.main initializes it.

    A Hydra instance already running (a job re-composing its config) is put back after.
    """
    global_hydra = GlobalHydra.instance()
    outer = global_hydra.hydra if global_hydra.is_initialized() else None
    global_hydra.clear()
    try:
        with initialize_config_module(
            config_module=CONF_PACKAGE, job_name="dmlimits", version_base=VERSION_BASE
        ):
            yield
    finally:
        global_hydra.clear()
        if outer is not None:
            GlobalHydra.instance().initialize(outer)


_USER_SOURCES: ContextVar[tuple[str, ...]] = ContextVar("user_config_sources", default=())
"""The config sources a caller added for a block (`user_config_sources`)."""


@contextmanager
def user_config_sources(search_path: Sequence[str]) -> Iterator[None]:
    """Within the block, `app_search_path` (and so `compose_config`) also reads the config
    sources `search_path`: the Python API's `config_dir`, as --config-dir is the command's."""
    token = _USER_SOURCES.set(tuple(search_path))
    try:
        yield
    finally:
        _USER_SOURCES.reset(token)


def app_search_path() -> list[str]:
    """The config sources the user added to the running Hydra app, in Hydra's order, then
    those of `user_config_sources` ([] if none)."""
    added = list(_USER_SOURCES.get())
    if not HydraConfig.initialized():
        return added
    return list(dict.fromkeys([*user_search_path(HydraConfig.get()), *added]))


def user_search_path(hydra: DictConfig | HydraConf) -> list[str]:
    """The config sources the user added, of a Hydra config node (`hydra`), in Hydra's order."""
    sources = hydra.runtime.config_sources
    return [f"{s.schema}://{s.path}" for s in sources if s.provider in USER_PROVIDERS]


def local_dir(url: str) -> Path | None:
    """The directory of a ``file://`` (or scheme-less) search-path entry; None for pkg:// etc."""
    scheme, sep, path = url.partition("://")
    if not sep:
        return Path(url)
    return Path(path) if scheme == "file" else None


def shadowed_files(search_path: Sequence[str]) -> list[tuple[Path, Path]]:
    """(user file, its path in conf/) of user config files that Hydra would ignore for a built-in."""
    shadowed: list[tuple[Path, Path]] = []
    for url in search_path:
        folder = local_dir(url)
        if folder is None or not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*.yaml")):
            relative = path.relative_to(folder)
            if (CONF_DIR / relative).is_file():
                shadowed.append((path, relative))
    return shadowed


def check_user_dirs(search_path: Sequence[str]) -> None:
    """InputError for a missing user config directory or a user file shadowing a built-in one."""
    for url in search_path:
        folder = local_dir(url)
        if folder is not None and not folder.is_dir():
            raise InputError(f"config directory {str(folder)!r} is not a directory")
        try:
            for path in [] if folder is None else sorted(folder.rglob("*.yaml")):
                if path.is_symlink() and not path.exists():
                    raise InputError(f"{path}: is a symbolic link to nothing (a loop or no target)")
                if not path.is_file():  # a directory or a fifo named *.yaml
                    raise InputError(f"{path}: is not a file (a config file must be one)")
                check_yaml_file(path)  # an alias bomb or deep nesting: one line, not a hang
        except OSError as err:  # a symbolic link loop, a file that cannot be read
            raise InputError(f"{err.filename}: cannot be read ({err.strerror})") from None
    for path, built_in in shadowed_files(search_path):
        raise InputError(
            f"{path}: has the name of the built-in preset {built_in.with_suffix('')}, which "
            f"Hydra would use instead; rename the file (and its name: key)"
        )


DETAIL_PREFIXES = ("object_type=", "reference_type=")
"""Lines of an OmegaConf message that repeat what its first lines say."""
SEARCH_PATH_HEADER = "Config search path:"
"""Where Hydra's message turns into a listing of its search path (dropped)."""


def one_line(err: BaseException) -> str:
    """A Hydra, OmegaConf or YAML error as one line; a YAML error names its file and line."""
    seen: BaseException | None = err
    while seen is not None:
        mark = getattr(seen, "problem_mark", None)
        if isinstance(seen, yaml.MarkedYAMLError) and mark is not None:
            context = f" ({seen.context})" if seen.context else ""
            return f"{mark.name}:{mark.line + 1}:{mark.column + 1}: {seen.problem}{context}"
        seen = seen.__cause__ or seen.__context__
    lines = [line.strip() for line in str(err).splitlines() if line.strip() not in ("", "^")]
    kept: list[str] = []
    for line in lines:
        if line.startswith(SEARCH_PATH_HEADER):
            break
        if not line.startswith(DETAIL_PREFIXES):
            kept.append(line)
    text, listing = "", False
    for line in kept:  # a list under "...:" (options, keys) becomes "a, b, c"
        if not text:
            text = line
        elif text.endswith(":"):
            text, listing = f"{text} {line}", " " not in line
        elif listing and " " not in line:
            text = f"{text}, {line}"
        else:
            text, listing = f"{text.rstrip('.')}; {line}", False
    return text or type(err).__name__


def refused_unknown_key(
    err: BaseException,
    overrides: Sequence[str],
    compose: Callable[[list[str]], DictConfig],
    check: Callable[[DictConfig], object],
) -> UnknownKeyError | None:
    """The schema's error for a key Hydra refused to override because the composed config has
    no such key (Hydra's "Could not override 'KEY'", which advises ``+KEY=VALUE``): the config
    composed by ``compose`` with that override made ``+KEY=VALUE``, checked by ``check`` (as
    a job is: the command's `cli.check.check_config`, the Python API's `app.plan._checked`),
    and its `UnknownKeyError` when it names KEY or the unknown node above it
    (``hardware.network.latency = 1: unknown key; allowed keys: ...; did you mean
    latency_us?``). None for another composition error, when the schema takes the key (an
    optional key: Hydra's advice stands) or when the check stops on another mistake."""
    message = str(err)
    parser = OverridesParser.create()
    for index, text in enumerate(overrides):
        try:
            (override,) = parser.parse_overrides([text])
        except HydraException:
            continue
        key = override.key_or_group
        if (
            override.is_add()
            or override.is_force_add()
            or override.is_delete()
            or override.is_hydra_override()
            or f"Could not override '{key}'" not in message
        ):
            continue
        added = [*overrides[:index], f"+{text}", *overrides[index + 1 :]]
        try:
            check(compose(added))
        except UnknownKeyError as unknown:
            if key == unknown.key or key.startswith(f"{unknown.key}."):
                return unknown
        except COMPOSITION_ERRORS:  # another mistake (InputError, ConfigError are ValueErrors)
            pass
        return None
    return None
