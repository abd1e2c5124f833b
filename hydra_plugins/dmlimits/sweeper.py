"""Hydra's basic sweeper, composing each job of a multirun once.

The jobs are those of Hydra's basic sweeper: ``hydra.sweeper.params`` then the command line's
overrides, one override per key (a later one replaces an earlier), the product of the swept
values, in batches of ``max_batch_size``. Hydra's basic sweeper composes every job of a batch to
validate it (`Sweeper.validate_batch_is_legal`), then its launcher composes each job again to
run it. `DmlimitsSweeper` composes every job of every batch once, with the config loader's
public `load_sweep_config` (as the validation does), before it writes anything; with Hydra's
basic launcher (the jobs one after another in this process) it then runs each job on the config
it composed, as the basic launcher runs it (`hydra.core.utils.run_job`). Another launcher
(submitit, joblib, ...) is handed the overrides, as Hydra's basic sweeper hands them.

A task function may carry a check of each composed job, under the attribute `JOB_CHECK`
(`JobCheck`): the ``dmlimits`` command checks there each job's values with its schema and hands
its series to workers evaluating them ahead, so that a bad job stops the command before
anything is written, and no job is composed twice.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.plugins import Plugins
from hydra.core.utils import JobReturn, configure_log, filter_overrides, run_job, setup_globals
from hydra.errors import HydraException
from hydra.plugins.launcher import Launcher
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf, open_dict

log = logging.getLogger(__name__)

JOB_CHECK = "check_job"
"""The task function's attribute holding a `JobCheck`, if it has one."""
IN_PROCESS_LAUNCHER = "basic"
"""Hydra's basic launcher (the ``hydra/launcher`` choice): jobs one after another, in-process."""


class JobCheck(Protocol):
    """Compose one job (``compose()``) and check it: ``job`` is its overrides, ``label`` names
    its swept values. Returns the composed config; stops the command (raises) on a bad job."""

    def __call__(
        self, compose: Callable[[], DictConfig], job: list[str], label: str
    ) -> DictConfig: ...


SWEEPER_KEYS = ("_target_", "max_batch_size", "params")
"""The keys of ``hydra.sweeper`` this sweeper takes (conf/hydra/sweeper/dmlimits.yaml)."""


def sweeper_options_error(node: Any) -> str | None:
    """What is wrong with the ``hydra.sweeper`` options (a mapping), in one line naming the
    key, or None: known keys only; ``max_batch_size`` null, -1 or a positive integer;
    ``params`` null or a mapping of keys to sweep strings (``a100_sxm,h100_sxm``) or numbers."""
    if not isinstance(node, dict):
        return f"hydra.sweeper = {node!r}: must be a mapping of {', '.join(SWEEPER_KEYS)}"
    for key in node:
        if key not in SWEEPER_KEYS:
            return f"hydra.sweeper.{key}: unknown option; the sweeper takes max_batch_size, params"
    size = node.get("max_batch_size")
    if size is not None and (
        isinstance(size, bool) or not isinstance(size, int) or (size < 1 and size != -1)
    ):
        return (
            f"hydra.sweeper.max_batch_size = {size!r}: must be null or -1 (one batch) or a "
            "positive integer"
        )
    params = node.get("params")
    if params is None:
        return None
    if not isinstance(params, dict):
        return (
            f"hydra.sweeper.params = {params!r}: must be null or a mapping of keys to swept "
            "values, e.g. {hardware: 'a100_sxm,h100_sxm'}"
        )
    for key, value in params.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            return (
                f"hydra.sweeper.params.{key} = {value!r}: must be a sweep string such as "
                "'a100_sxm,h100_sxm' (or one number)"
            )
    return None


def split_sweep(overrides: Sequence[Any]) -> list[list[str]]:
    """Every job's overrides, as Hydra's basic sweeper splits parsed overrides (`Override`):
    one per key, a later one replacing an earlier, the product of the swept keys' values."""
    per_key: dict[str, list[str]] = {}
    for override in overrides:
        key = override.get_key_element()
        if not override.is_sweep_override():
            per_key[key] = [f"{key}={override.get_value_element_as_str()}"]
        elif override.is_discrete_sweep():
            per_key[key] = [f"{key}={value}" for value in override.sweep_string_iterator()]
        else:
            raise HydraException(
                f"{override.input_line}: Hydra's basic sweeper takes lists and ranges, "
                "not intervals"
            )
    return [list(job) for job in itertools.product(*per_key.values())]


def job_labels(jobs: Sequence[Sequence[str]]) -> list[str]:
    """Each job's swept values, ``"hardware=a100_sxm, scaling=dense"`` ("" when none is swept)."""
    if not jobs:
        return []
    swept = [i for i in range(len(jobs[0])) if len({job[i] for job in jobs}) > 1]
    return [", ".join(job[i] for i in swept) for job in jobs]


class DmlimitsSweeper(Sweeper):
    """Hydra's basic sweeper that composes each job once (module docstring)."""

    def __init__(self, max_batch_size: int | None = None, params: dict[str, str] | None = None):
        super().__init__()
        plain = OmegaConf.to_container(params) if isinstance(params, DictConfig) else params
        error = sweeper_options_error({"max_batch_size": max_batch_size, "params": plain})
        if error is not None:
            raise HydraException(error)
        self.max_batch_size = max_batch_size
        self.params = params or {}
        self.hydra_context: HydraContext | None = None
        self.config: DictConfig | None = None
        self.launcher: Launcher | None = None
        self.task_function: TaskFunction | None = None

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        self.hydra_context = hydra_context
        self.config = config
        self.task_function = task_function
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=hydra_context, task_function=task_function, config=config
        )

    def sweep(self, arguments: list[str]) -> list[Sequence[JobReturn]]:
        assert self.hydra_context is not None
        assert self.config is not None
        texts = [f"{k}={v}" for k, v in self.params.items()] + list(arguments)
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        jobs = split_sweep(parser.parse_overrides(texts))
        configs = self.compose_jobs(jobs)
        sweep_dir = Path(self.config.hydra.sweep.dir)
        sweep_dir.mkdir(parents=True, exist_ok=True)
        OmegaConf.save(self.config, sweep_dir / "multirun.yaml")
        size = len(jobs) if self.max_batch_size in (None, -1) else self.max_batch_size
        returns: list[Sequence[JobReturn]] = []
        for start in range(0, len(jobs), size):
            batch = jobs[start : start + size]
            results: Sequence[JobReturn]
            if self.runs_here():
                results = self.launch_here(batch, configs[start : start + size], start)
            else:
                assert self.launcher is not None
                results = self.launcher.launch(batch, initial_job_idx=start)
            for result in results:
                _ = result.return_value  # a failed job's exception, once its batch has run
            returns.append(results)
        return returns

    def compose_jobs(self, jobs: list[list[str]]) -> list[DictConfig]:
        """Every job composed, numbered (``hydra.job.num``) and checked, when the task function
        carries a `JobCheck`."""
        assert self.hydra_context is not None
        assert self.config is not None
        loader, master = self.hydra_context.config_loader, self.config
        check: JobCheck | None = getattr(self.task_function, JOB_CHECK, None)
        configs = []
        for idx, (job, label) in enumerate(zip(jobs, job_labels(jobs), strict=True)):

            def compose(job: list[str] = job, idx: int = idx) -> DictConfig:
                config = loader.load_sweep_config(master_config=master, sweep_overrides=job)
                with open_dict(config):  # as Hydra's basic launcher numbers its jobs
                    config.hydra.job.id = idx
                    config.hydra.job.num = idx
                return config

            configs.append(compose() if check is None else check(compose, job, label))
        return configs

    def runs_here(self) -> bool:
        """Whether the launcher is Hydra's basic one, which runs the jobs in this process."""
        assert self.config is not None
        choices = OmegaConf.select(self.config, "hydra.runtime.choices") or {}
        return bool(choices.get("hydra/launcher") == IN_PROCESS_LAUNCHER)

    def launch_here(
        self, batch: list[list[str]], configs: list[DictConfig], initial_job_idx: int
    ) -> list[JobReturn]:
        """Run a batch in this process on its composed configs, as Hydra's basic launcher runs
        it (its log lines, each job's number and directory)."""
        assert self.hydra_context is not None
        assert self.config is not None
        assert self.task_function is not None
        setup_globals()
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        Path(str(self.config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
        log.info(f"Launching {len(batch)} jobs locally")
        runs: list[JobReturn] = []
        for idx, (overrides, config) in enumerate(zip(batch, configs, strict=True)):
            idx += initial_job_idx
            log.info(f"\t#{idx} : {' '.join(filter_overrides(overrides))}")
            runs.append(
                run_job(
                    hydra_context=self.hydra_context,
                    task_function=self.task_function,
                    config=config,
                    job_dir_key="hydra.sweep.dir",
                    job_subdir_key="hydra.sweep.subdir",
                )
            )
            configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        return runs
