"""Check a `dmlimits` command line before Hydra starts: one line per mistake, nothing written.

Left to itself, Hydra reports a misspelt preset, an unknown key or a malformed override in
several lines, and in a multirun only after it has made the sweep directory. `preflight` runs
first (`pipeline.cli.main`) and raises a `ConfigError` for the first mistake, which the CLI
prints as one line, ``dmlimits: error: <key> = <value>: <what is allowed>``, exit status 2.

What it checks, in order:

1. every override parses (Hydra's override grammar, `OverridesParser`);
2. every config-group value names a file of ``conf/<group>/``: each element of a sweep
   ``a,b,c``, of a ``glob(...)`` and of a list, and ``+experiment=X``;
3. the config composes with the overrides that are not sweeps (the config Hydra's sweeper
   starts from, whose ``hydra.sweeper.params`` an experiment fills); a sweep is given only
   with -m, and no sweep is empty;
4. each job the sweep would run composes and passes the job's own `plan_run` (schema, sweep
   axes, execution settings), with the output root proved writable without creating it. A
   fixed layout that does not fit a grid size is not a mistake: that size becomes an
   infeasible row (`layout_does_not_divide`). Jobs
   are tried O(number of override values), not the product: all sweeps at their first value,
   then each other value of each sweep with the rest at their first. A mistake that shows
   only in some combination stops that job at run time, with the same one-line message.

Cost: one Hydra composition (about 0.1 s) per distinct override value, plus `plan_run`.
Command lines with other Hydra flags (--help, --cfg, --config-name, ...) are left to Hydra.
"""

from __future__ import annotations

import copy
import difflib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Glob, Override, ValueType
from hydra.errors import HydraException, OverrideParseException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf, open_dict, read_write
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

from pipeline.app.plan import plan_run
from pipeline.io.parquet import OutputError
from pipeline.schema import CONF_DIR, compose_config
from pipeline.schema.errors import MISSING, ConfigError

GRAMMAR_URL = "https://hydra.cc/docs/advanced/override_grammar/basic/"
MULTIRUN_FLAGS = frozenset({"-m", "--multirun"})
RUN_FLAGS = frozenset({"-r", "--run"})
LEXER_PREFIX = "LexerNoViableAltException: "
"""How Hydra's parser starts a message about a character the grammar does not allow."""


@dataclass(frozen=True, slots=True)
class CommandLine:
    """The part of a `dmlimits` command line preflight checks."""

    overrides: tuple[str, ...]
    multirun: bool


def parse_command_line(argv: Sequence[str]) -> CommandLine | None:
    """Overrides and -m of a command line; None when it has any other flag (Hydra's business)."""
    overrides: list[str] = []
    multirun = False
    for arg in argv:
        if arg in MULTIRUN_FLAGS:
            multirun = True
        elif arg in RUN_FLAGS:
            continue
        elif arg.startswith("-"):
            return None
        else:
            overrides.append(arg)
    return CommandLine(tuple(overrides), multirun)


def preflight(argv: Sequence[str]) -> None:
    """Check a command line as the module docstring says; raise ConfigError on the first mistake.

    Writes nothing, on success or failure (the output root's writability is proved on its
    nearest existing directory with a probe file that is removed at once).
    """
    command = parse_command_line(argv)
    if command is None:
        return
    parsed = parse_overrides(command.overrides)
    app = [o for o in parsed if not o.is_hydra_override()]
    hydra = [o for o in parsed if o.is_hydra_override()]
    for override in app:
        check_group_values(override)
    primary = _compose([o for o in parsed if not o.is_sweep_override()])
    multirun = command.multirun or primary.hydra.mode == RunMode.MULTIRUN
    for override in parsed:
        if override.is_sweep_override():
            _check_sweep_allowed(override, multirun)
    if not multirun:  # one job, composed from exactly these overrides
        check_plan(primary)
        return
    params = _sweeper_params(primary)
    for override in params:
        check_group_values(override, "hydra.sweeper.params.")
    dimensions = {o.get_key_element(): sweep_values(o) for o in [*params, *app]}
    for job, label in jobs_to_check(list(dimensions.values())):
        check_job([*job, *(o.input_line or "" for o in hydra)], label)


def parse_overrides(texts: Sequence[str], key_prefix: str = "") -> list[Override]:
    """The parsed overrides; a one-line ConfigError on the first that breaks the grammar."""
    parser = OverridesParser.create()
    parsed: list[Override] = []
    for text in texts:
        try:
            parsed.extend(parser.parse_overrides([text]))
        except OverrideParseException as err:
            key, equals, value = text.partition("=")
            reason = _grammar_reason(text, err.message)
            if not equals:
                raise ConfigError(
                    key_prefix + text, MISSING, f"an override is key=value ({reason})"
                ) from None
            raise ConfigError(
                key_prefix + key.strip(),
                value,
                f"must follow Hydra's override grammar ({reason}; see {GRAMMAR_URL})",
            ) from None
    return parsed


def _grammar_reason(text: str, message: str) -> str:
    """What Hydra's parser objected to, in a few words."""
    lines = message.splitlines()
    if lines and lines[0].startswith(LEXER_PREFIX) and len(lines) > 1 and "^" in lines[1]:
        column = lines[1].index("^") - len(LEXER_PREFIX)
        if 0 <= column < len(text):
            return f"unexpected {text[column]!r} at character {column + 1}"
    return lines[0].strip() if lines else "not parsable"


def group_options(group: str) -> list[str] | None:
    """The options of config group ``group`` (its conf/<group>/*.yaml stems), None if no group."""
    folder = CONF_DIR / group
    if not group or not folder.is_dir():
        return None
    return sorted(p.stem for p in folder.glob("*.yaml"))


def _glob(override: Override) -> Glob:
    """The Glob of a ``glob(...)`` sweep (Hydra's `Override.value` returns it as is)."""
    return cast(Glob, override.value())


def _group_choices(override: Override, options: list[str]) -> list[object]:
    """The options a group override selects: each element of a sweep, a glob or a list."""
    if override.value_type is ValueType.GLOB_CHOICE_SWEEP:
        return list(_glob(override).filter(options))
    value = override.value()
    if override.is_sweep_override():
        return list(override.sweep_string_iterator())
    if isinstance(value, dict):  # Hydra merges a dict into the group's node: not a choice
        return []
    if value is None and override.is_delete():
        return []
    return list(value) if isinstance(value, list) else [value]


def check_group_values(override: Override, key_prefix: str = "") -> None:
    """Raise ConfigError unless every option the override picks is a file of conf/<group>/."""
    if override.is_hydra_override():
        return
    options = group_options(override.key_or_group)
    if options is None:
        return
    group = override.key_or_group
    key = key_prefix + group
    choices = _group_choices(override, options)
    if override.is_sweep_override() and not choices:
        raise ConfigError(
            key, override.get_value_string(), f"selects none of: {', '.join(options)}"
        )
    for choice in choices:
        if isinstance(choice, str) and choice in options:
            continue
        close = difflib.get_close_matches(str(choice), options, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(
            key, choice, f"{hint}must be one of: {', '.join(options)} (files in conf/{group}/)"
        )


def sweep_values(override: Override) -> list[str]:
    """The overrides, one value each, that a sweep override stands for (itself if no sweep)."""
    if not override.is_sweep_override():
        return [override.input_line or ""]
    key = override.get_key_element()
    if override.value_type is ValueType.INTERVAL_SWEEP:
        raise ConfigError(
            override.key_or_group,
            override.get_value_string(),
            "interval() needs a sampling sweeper plugin; list values a,b,c or use "
            "range(start,stop,step)",
        )
    if override.value_type is ValueType.GLOB_CHOICE_SWEEP:
        options = group_options(override.key_or_group) or []
        values = [f"{key}={choice}" for choice in _glob(override).filter(options)]
    else:
        values = [f"{key}={v}" for v in override.sweep_string_iterator()]
    if not values:
        raise ConfigError(
            override.key_or_group,
            override.get_value_string(),
            "the sweep has no values (glob() matches no file of a config group; "
            "range(start,stop,step) needs start < stop for step > 0)",
        )
    return values


def _check_sweep_allowed(override: Override, multirun: bool) -> None:
    """A sweep needs -m and may not sweep Hydra's own settings."""
    if not multirun:
        raise ConfigError(
            override.key_or_group,
            override.get_value_string(),
            "one value per run: add -m to sweep over these values, write [a,b] for a list, "
            "or quote a text with commas ('a,b')",
        )
    if override.is_hydra_override():
        raise ConfigError(
            override.key_or_group, override.get_value_string(), "Hydra's settings cannot be swept"
        )


def _sweeper_params(primary: DictConfig) -> list[Override]:
    """The sweep an experiment declares in ``hydra.sweeper.params``, parsed like Hydra does."""
    params = OmegaConf.select(primary, "hydra.sweeper.params")
    if not params:
        return []
    texts = [f"{key}={value}" for key, value in params.items()]
    return parse_overrides(texts, "hydra.sweeper.params.")


def jobs_to_check(dimensions: list[list[str]]) -> Iterator[tuple[list[str], str]]:
    """Override lists that try every value once: all at their first, then one value changed.

    Each comes with a label naming the swept values of that job ("" when nothing is swept).
    """
    base = [values[0] for values in dimensions]
    swept = [i for i, values in enumerate(dimensions) if len(values) > 1]

    def label(job: list[str]) -> str:
        return ", ".join(job[i] for i in swept)

    yield base, label(base)
    for i in swept:
        for value in dimensions[i][1:]:
            job = [*base[:i], value, *base[i + 1 :]]
            yield job, label(job)


def check_job(overrides: Sequence[str], label: str = "") -> None:
    """Compose one job's config and check it as the job will; ConfigError if it would fail."""
    full = _compose(parse_overrides(overrides))
    try:
        check_plan(full)
    except ConfigError as err:
        if not label:
            raise
        raise ConfigError(err.key, err.value, f"{err.allowed} (job {label})") from err


def _compose(overrides: Sequence[Override]) -> DictConfig:
    """The config with Hydra's node, composed from these overrides; ConfigError if it fails."""
    texts = [o.input_line or "" for o in overrides]
    try:
        return compose_config(texts, return_hydra_config=True)
    except (HydraException, OmegaConfBaseException, ValueError, OSError) as err:
        raise composition_error(err, overrides) from None


def composition_error(err: Exception, overrides: Sequence[Override]) -> ConfigError:
    """A composition failure as a one-line ConfigError naming the override at fault."""
    message = str(err)
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if "Config search path:" in lines:
        lines = lines[: lines.index("Config search path:")]
    reason = " ".join(lines) or type(err).__name__
    culprit = _culprit(err, overrides)
    if culprit is None:
        texts = [o.input_line for o in overrides]
        return ConfigError("overrides", texts, f"do not compose: {reason}")
    key = culprit.key_or_group
    value = _shown_value(culprit)
    if isinstance(err.__cause__, ConfigAttributeError | ConfigKeyError):
        full_key = getattr(err.__cause__, "full_key", None) or key
        return ConfigError(
            full_key, value, f"unknown key; {_keys_hint(full_key, culprit, overrides)}"
        )
    if message.startswith("Could not delete from config."):
        return ConfigError(
            f"~{key}", MISSING, f"no such key to delete; {_keys_hint(key, culprit, overrides)}"
        )
    if message.startswith("Could not append to config."):
        return ConfigError(
            f"+{key}",
            value,
            f"is already set: drop the + to replace it, or write ++{key}=... to merge into it",
        )
    return ConfigError(key, value, f"does not compose: {reason}")


def _shown_value(override: Override) -> object:
    """An override's value as the user wrote it: parsed for a single value, else the text."""
    if override.value_type is None:
        return MISSING
    if override.is_sweep_override():
        return override.get_value_string()
    return override.value()


def _composes(overrides: Sequence[Override]) -> bool:
    try:
        compose_config([o.input_line or "" for o in overrides])
    except (HydraException, OmegaConfBaseException, ValueError, OSError):
        return False
    return True


def _culprit(err: Exception, overrides: Sequence[Override]) -> Override | None:
    """The override a composition failure is about.

    The one Hydra's message quotes (whole, or its key), or OmegaConf's full key names; failing
    that, the one whose removal lets the rest compose (a composition per override, error path
    only).
    """
    message = str(err)
    for override in overrides:
        if override.input_line and override.input_line in message:
            return override
    for override in overrides:
        quoted = (f"'{override.key_or_group}'", f"'{override.get_key_element()}'")
        if any(q in message for q in quoted):
            return override
    full_key = getattr(err.__cause__, "full_key", None)
    named = next((o for o in overrides if o.key_or_group == full_key), None)
    if named is not None or len(overrides) == 1:
        return named or overrides[0]
    return next((o for o in overrides if _composes([x for x in overrides if x is not o])), None)


def _keys_hint(key: str, culprit: Override, overrides: Sequence[Override]) -> str:
    """The keys next to ``key`` (with the closest one), from the config without the culprit.

    ``key`` is the culprit's own key, or a key of the mapping it merges into its key.
    """
    own = culprit.key_or_group
    if key.startswith(own + "."):  # a mapping value: its keys go under the culprit's key
        parent, leaf = own, key[len(own) + 1 :]
    else:
        parent, _, leaf = key.rpartition(".")
    others = [o.input_line or "" for o in overrides if o is not culprit]
    try:
        cfg = compose_config(others, return_hydra_config=key.startswith("hydra."))
        node = OmegaConf.select(cfg, parent) if parent else cfg
    except (HydraException, OmegaConfBaseException, ValueError, OSError):
        node = None
    if not isinstance(node, DictConfig):
        return f"{parent or 'the root config'} has no such key"
    keys = sorted(str(k) for k in node)
    if not keys:
        return f"{parent} is empty; add entries with a leading ++ (++{culprit.input_line})"
    close = difflib.get_close_matches(leaf, keys, n=1)
    hint = f"did you mean {parent + '.' if parent else ''}{close[0]}? " if close else ""
    return f"{hint}allowed keys: {', '.join(keys)}"


def check_plan(full: DictConfig) -> None:
    """Run the job's `plan_run` on a composed config (with its hydra node) without writing.

    The job sees HydraConfig set as Hydra sets it (sweep choices re-compose from its overrides).
    An output root that does not exist yet is proved on its nearest existing directory, so
    nothing is created; `plan_run` leaves no file behind there (its probe is removed at once).
    """
    hydra_config = HydraConfig.instance()
    previous = hydra_config.cfg
    hydra_config.set_config(full)
    try:
        task = copy.deepcopy(full)
        with read_write(task), open_dict(task):
            del task["hydra"]
        probe, root = _probe_root(task)
        try:
            plan_run(probe)
        except OutputError as err:
            raise ConfigError(
                "output.root", root, f"must be a directory that can be created and written ({err})"
            ) from None
        except OmegaConfBaseException as err:
            key = getattr(err, "full_key", None) or "config"
            reason = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise ConfigError(key, MISSING, f"must be set and resolvable ({reason})") from None
    finally:
        hydra_config.cfg = previous


def _probe_root(task: DictConfig) -> tuple[DictConfig, str | None]:
    """The config with output.root moved to its nearest existing directory, and the root given."""
    try:
        root = OmegaConf.select(task, "output.root")
    except OmegaConfBaseException:
        return task, None  # plan_run names the key
    if not isinstance(root, str) or not root:
        return task, None
    target = Path(os.path.abspath(root))
    existing = target
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError("output.root", root, f"must be a directory path ({existing} is a file)")
    if existing == target:
        return task, root
    probe = copy.deepcopy(task)
    OmegaConf.update(probe, "output.root", str(existing), merge=False)
    return probe, root
