"""Check a `dmlimits` command line before Hydra starts: one line per mistake, nothing written.

Hydra owns the grammar. The command line is read with Hydra's flags (`pipeline.cli.flags`,
options and overrides in any order), each override by Hydra's override parser, composed by Hydra's
compose API with the user's config directories in its search path and, for a multirun, split
into jobs as Hydra's basic sweeper splits them (the product of every swept key's values), each
job composed with the command's hydra overrides as the sweeper composes it. Any failure in
that is Hydra's (or YAML's, for a user's file) message, put on one line by
`schema.compose.one_line`, but for a key the config has no place for: Hydra's "Could not
override" (and its advice to add the key with ``+``) becomes the schema's own unknown-key line
when the schema would refuse the key anyway (`refused_unknown_key`); values are then checked
by the schema, as each job will check them (`check_job`), with the output root proved
writable without creating it. The CLI prints the first mistake as
``dmlimits: error: <message>`` and exits with status 2 (`pipeline.cli.main`).

Which jobs of a multirun are checked: with dmlimits' sweeper (`hydra_plugins.dmlimits.sweeper`,
the default ``hydra/sweeper``), the command checks here what Hydra's sweep is made of (its size,
its kinds of sweep) and leaves each job to the sweeper, which composes every job once anyway and
checks it with `SweepCheck` before anything is written (``sweeper_checks_jobs``). Otherwise
every value of every swept key is checked here at least once (the first job, then each job that
brings a value not seen yet), so a sweep of n values over k keys costs about n compositions, not
their product; a mistake that shows only in some combination stops that job at run time with
the same one-line message.

Command lines asking Hydra for something else (--help, --hydra-help, --cfg, --info, shell
completion) are left to Hydra.

Only Hydra's public API is used: `hydra.compose` under `initialize_config_module`
(`pipeline.schema.compose`), `OverridesParser` and its `Override`s, `HydraConfig`.
tests/robustness/test_bad_input.py runs each kind of mistake through the real command.
"""

from __future__ import annotations

import copy
import itertools
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf, open_dict, read_write
from omegaconf.errors import OmegaConfBaseException

from hydra_plugins.dmlimits.sweeper import job_labels, split_sweep, sweeper_options_error
from pipeline.app.plan import RunPlan, plan_run
from pipeline.cli.flags import read_flags
from pipeline.execute.progress import stage
from pipeline.io.parquet import OutputError
from pipeline.nightly.settings import check_nightly_overrides, nightly_from_config
from pipeline.schema.compose import (
    COMPOSITION_ERRORS,
    CONFIG_NAME,
    RUN_PRESET_NEEDED,
    check_user_dirs,
    compose_with_hydra,
    hydra_session,
    one_line,
    refused_unknown_key,
    run_key_without_run,
    search_path_override,
    session_overrides_parser,
)
from pipeline.schema.errors import MISSING, ConfigError, InputError, UnknownKeyError
from pipeline.schema.keys import check_known_keys
from pipeline.schema.yaml_bounds import check_override
from pipeline.sweep.axes import MAX_SERIES

LEFT_TO_HYDRA = ("help", "hydra_help", "cfg", "info", "shell_completion", "experimental_rerun")
"""Hydra's flags that ask for something other than a run."""
SWEEPER = "dmlimits"
"""The ``hydra/sweeper`` choice that checks each job of a multirun itself (`check_sweep_job`)."""


@dataclass(frozen=True, slots=True)
class Command:
    """What a `dmlimits` command line asks for, as Hydra's argument parser reads it."""

    overrides: list[str]
    multirun: bool
    run: bool
    search_path: list[str]
    """User config sources: --config-dir first, then hydra.searchpath entries (Hydra's order)."""
    keys: list[str]
    """The key (or config group) of each override, as Hydra's override parser reads it."""
    parsed: list[Override]
    """Each override as Hydra's override parser reads it."""

    def named(self, message: str) -> str:
        """The message, followed by the overrides when it names none of them (OmegaConf's)."""
        if any(key in message for key in self.keys):
            return message
        return f"{message} (composing {' '.join(self.overrides)})"


def parse_command(argv: Sequence[str]) -> Command | None:
    """The command line as Hydra reads it; None when it asks Hydra for something else."""
    args = read_flags(argv)[0]
    if any(getattr(args, flag) for flag in LEFT_TO_HYDRA):
        return None
    if args.config_name not in (None, CONFIG_NAME) or args.config_path is not None:
        raise InputError(
            "--config-name and --config-path are not supported: add a directory of your own "
            "presets with --config-dir DIR (docs/configuration.md, 'Your own presets')"
        )
    search_path = [f"file://{os.path.abspath(args.config_dir)}"] if args.config_dir else []
    overrides: list[str] = []
    keys: list[str] = []
    parsed: list[Override] = []
    overrides_parser = OverridesParser.create()
    for text in args.overrides:
        try:
            (override,) = overrides_parser.parse_overrides([text])
        except HydraException as err:
            raise InputError(f"override {text!r}: {one_line(err)}") from None
        if override.get_key_element() == "hydra.searchpath":
            value = override.value()
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise InputError(f"{text}: hydra.searchpath is a list of config directories")
            search_path.extend(str(v) for v in value)
        else:
            overrides.append(text)
            keys.append(override.key_or_group)
            parsed.append(override)
    return Command(overrides, bool(args.multirun), bool(args.run), search_path, keys, parsed)


@dataclass(frozen=True, slots=True)
class Checked:
    """What a passed check composed and expanded, for the run to reuse."""

    composed: DictConfig
    """The composed config of the run (the primary config for a multirun), with its hydra node."""
    line: Command
    """The command line as Hydra reads it."""


def check_command_line(
    argv: Sequence[str],
    on_job: Callable[[DictConfig, RunPlan], None] | None = None,
    *,
    sweeper_checks_jobs: bool = False,
) -> Checked | None:
    """Check a command line as the module docstring says; the first mistake is raised.

    Raises InputError (a Hydra or YAML message) or ConfigError (a value). Returns what was
    composed, or None when it was left to Hydra. Each job
    that passes (the run, or each checked job of a multirun) is given to `on_job` with its
    plan as the check made it (its output root moved to the nearest existing directory), as
    soon as it is checked. With ``sweeper_checks_jobs``, a multirun swept by dmlimits' sweeper
    leaves its jobs to a `SweepCheck`, which the sweeper calls as it composes them.
    """
    command = parse_command(argv)
    if command is None:
        return None
    check_user_dirs(command.search_path)
    for text in command.overrides:
        check_override(text)
    extra = [search_path_override(command.search_path)] if command.search_path else []
    if command.multirun:  # as @hydra.main composes `-m`: the jobs then compose alike
        extra.append("hydra.mode=MULTIRUN")
    given = list(zip(command.overrides, command.parsed, strict=True))
    plain = [text for text, o in given if not o.is_sweep_override()]
    with hydra_session():
        # Hydra's primary config of a multirun leaves the swept values out, as this one does;
        # it gives the run mode (an experiment may set hydra.mode) and the sweeper's params.
        primary = _compose(command, [*plain, *extra])
        multirun = command.multirun or (
            not command.run and OmegaConf.select(primary, "hydra.mode") == RunMode.MULTIRUN
        )
        if not multirun:
            full = primary
            if len(plain) < len(command.overrides):  # Hydra's "ambiguous value" (no -m)
                full = _compose(command, [*command.overrides, *extra])
            plan = check_job(full)
            if on_job is not None:
                on_job(full, plan)
            return Checked(full, command)
        check_sweeper_options(primary)
        for text, override in given:
            if override.is_sweep_override() and override.is_hydra_override():
                raise InputError(f"{text!r}: sweeping over Hydra's configuration is not supported")
        hydra_overrides = [str(o) for o in primary.hydra.overrides.hydra]
        task = [text for text, o in given if not o.is_hydra_override()]
        jobs = sweep_jobs(primary, task)
        choices = OmegaConf.select(primary, "hydra.runtime.choices") or {}
        if sweeper_checks_jobs and choices.get("hydra/sweeper") == SWEEPER:
            return Checked(primary, command)
        for job, label in jobs_to_check(jobs):
            config = _compose(command, [*hydra_overrides, *job], f" (job {label})")
            plan = check_job(config, label, multirun=True)
            if on_job is not None:
                on_job(config, plan)
        return Checked(primary, command)


class SweepCheck:
    """The check of a multirun's jobs as dmlimits' sweeper composes them, in its order (its
    `JobCheck`): each job's composition named in one line, and the values of each job that
    brings a swept value not seen yet checked as `check_command_line` checks them, its plan
    given to `on_job`. A mistake that shows only in some combination stops that job at run
    time, as it would with the check before Hydra."""

    def __init__(
        self,
        line: Command,
        on_job: Callable[[DictConfig, RunPlan], None] | None = None,
    ) -> None:
        self.line = line
        self.on_job = on_job
        self.seen: set[tuple[int, str]] = set()
        """(position, override) of the values checked so far."""

    def __call__(self, compose: Callable[[], DictConfig], job: list[str], label: str) -> DictConfig:
        """The job's composed config; InputError (Hydra's or YAML's message, naming the job) or
        ConfigError on a mistake."""
        try:
            config = compose()
        except COMPOSITION_ERRORS as err:
            unknown = self.unknown_key(err, job)
            if unknown is not None:
                allowed = f"{unknown.allowed} (job {label})"
                raise ConfigError(unknown.key, unknown.value, allowed) from None
            raise InputError(f"{self.line.named(one_line(err))} (job {label})") from None
        if brings_new_value(job, self.seen):
            plan = check_job(config, label, multirun=True)
            if self.on_job is not None:
                self.on_job(config, plan)
        return config

    def unknown_key(self, err: BaseException, job: list[str]) -> UnknownKeyError | None:
        """`refused_unknown_key` of a job the sweeper could not compose, composed again as
        the command's check composes a multirun's jobs (the command's hydra overrides and
        config directories, then the job's overrides)."""
        line = self.line
        hydra = [
            t for t, o in zip(line.overrides, line.parsed, strict=True) if o.is_hydra_override()
        ]
        extra = [search_path_override(line.search_path)] if line.search_path else []
        head = [*hydra, "hydra.mode=MULTIRUN", *extra]
        with hydra_session():
            return refused_unknown_key(
                err, job, lambda tried: compose_with_hydra([*head, *tried]), check_config
            )


def _compose(command: Command, overrides: list[str], where: str = "") -> DictConfig:
    """The config composed with these overrides and its hydra node; InputError naming them."""
    try:
        return compose_with_hydra(overrides)
    except COMPOSITION_ERRORS as err:
        keyed = run_key_without_run(overrides, compose_with_hydra)
        if keyed is not None:
            raise InputError(f"{keyed}: {RUN_PRESET_NEEDED}") from None
        unknown = refused_unknown_key(err, overrides, compose_with_hydra, check_config)
        if unknown is not None:
            raise ConfigError(unknown.key, unknown.value, f"{unknown.allowed}{where}") from None
        raise InputError(f"{command.named(one_line(err))}{where}") from None


def check_sweeper_options(primary: DictConfig) -> None:
    """InputError naming a bad option of dmlimits' sweeper (``hydra.sweeper``), before Hydra
    instantiates it (`sweeper_options_error`); another sweeper's options are its own."""
    choices = OmegaConf.select(primary, "hydra.runtime.choices") or {}
    if choices.get("hydra/sweeper") != SWEEPER:
        return
    try:
        node = OmegaConf.to_container(primary.hydra.sweeper, resolve=True)
    except OmegaConfBaseException as err:
        raise InputError(f"hydra.sweeper: {one_line(err)}") from None
    error = sweeper_options_error(node)
    if error is not None:
        raise InputError(error)


def sweep_jobs(primary: DictConfig, task: list[str]) -> list[list[str]]:
    """Jobs of a multirun as Hydra's basic sweeper makes them (`split_sweep`).

    The sweeper's params (`hydra.sweeper.params`, e.g. of an experiment) come first, then the
    command's overrides (`task`, without the hydra ones). A sweep with no values
    (``range(6,1)``, a ``glob()`` matching no option), one of more than `sweep.max_series` jobs
    or an interval is an error naming it.
    """
    params = OmegaConf.select(primary, "hydra.sweeper.params") or {}
    texts = [f"{k}={v}" for k, v in params.items()] + task
    try:
        parsed = session_overrides_parser().parse_overrides(texts)
    except COMPOSITION_ERRORS as err:
        raise InputError(one_line(err)) from None
    limit = int(OmegaConf.select(primary, "sweep.max_series", default=MAX_SERIES))
    total = 1
    for override in parsed:
        if not override.is_sweep_override():
            continue
        try:  # counted lazily: range(1,10**9) is not expanded
            count = sum(1 for _ in itertools.islice(override.sweep_string_iterator(), limit + 1))
        except COMPOSITION_ERRORS as err:  # e.g. interval(), which only a sweeper plugin samples
            raise InputError(one_line(err)) from None
        if count == 0:
            raise InputError(f"{override.input_line}: the sweep has no values")
        total *= count
        if total > limit:
            raise InputError(
                f"{override.input_line}: -m would launch more than sweep.max_series = {limit} "
                "jobs, each a run of its own; sweep large grids with sweep.axes (one run, "
                "parallel workers) or raise sweep.max_series"
            )
    return split_jobs(parsed)


def jobs_to_check(jobs: list[list[str]]) -> Iterator[tuple[list[str], str]]:
    """The jobs that bring a swept value not seen yet (the first one, then ...), each with a
    label naming its swept values ("" when nothing is swept)."""
    seen: set[tuple[int, str]] = set()
    for job, label in zip(jobs, job_labels(jobs), strict=True):
        if brings_new_value(job, seen):
            yield job, label


def brings_new_value(job: list[str], seen: set[tuple[int, str]]) -> bool:
    """Whether the job has an override not in ``seen`` (position, override), adding its own."""
    new = set(enumerate(job)) - seen
    seen |= new
    return bool(new)


def split_jobs(parsed: Sequence[Override]) -> list[list[str]]:
    """Every job's overrides, as Hydra's basic sweeper splits a sweep (`split_sweep`); an
    interval, which only a sampling sweeper plugin takes, is an InputError naming it."""
    try:
        return split_sweep(parsed)
    except HydraException as err:
        raise InputError(str(err)) from None


def check_job(full: DictConfig, label: str = "", *, multirun: bool = False) -> RunPlan:
    """Check one job's composed config (with its hydra node) as the job will, writing nothing;
    return its plan."""
    try:
        return check_config(full, multirun=multirun)
    except ConfigError as err:
        if not label:
            raise
        raise ConfigError(err.key, err.value, f"{err.allowed} (job {label})") from err


def check_config(full: DictConfig, *, multirun: bool = False) -> RunPlan:
    """Keys, values, sweep, execution, output root (and a nightly run's settings) of a job;
    its plan as `plan_run` made it (for the root's nearest existing directory).

    The job's `plan_run` runs with HydraConfig set as Hydra sets it (a sweep's choices
    re-compose from its overrides and search path). An output root that does not exist yet is
    proved on its nearest existing directory, so nothing is created.
    """
    task = copy.deepcopy(full)
    with read_write(task), open_dict(task):
        del task["hydra"]
    check_known_keys(task)
    say = None
    if OmegaConf.select(task, "output.run_date") is not None:
        settings = nightly_from_config(task)
        if multirun:
            raise ConfigError(
                "output.run_date",
                settings.run_date.isoformat(),
                "a nightly run is one job: sweep with sweep.axes instead of --multirun",
            )
        check_nightly_overrides([str(o) for o in full.hydra.overrides.task])
        say = _checking  # a nightly's check takes seconds (its sweep, trends and design)
    hydra_config = HydraConfig.instance()
    previous = hydra_config.cfg
    hydra_config.set_config(full)
    try:
        probe, root = _probe_root(task)
        try:
            return plan_run(probe, observe=False, say=say)
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


def _checking(text: str) -> None:
    """A progress line of the check's own plan (a nightly's), marked as the check's: the run
    then plans again, and says so in its own lines."""
    stage(f"checking the command line: {text}")


def _probe_root(task: DictConfig) -> tuple[DictConfig, str | None]:
    """The config with output.root moved to its nearest existing directory (`task` itself,
    a copy the check made, updated in place), and the root given."""
    try:
        root = OmegaConf.select(task, "output.root")
    except OmegaConfBaseException:
        return task, None  # plan_run names the key
    if not isinstance(root, str) or not root:
        return task, None
    target = Path(os.path.abspath(Path(root).expanduser()))
    existing = target
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError("output.root", root, f"must be a directory path ({existing} is a file)")
    if existing != target:
        OmegaConf.update(task, "output.root", str(existing), merge=False)
    return task, root
