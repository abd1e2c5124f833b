"""The command's start-up trick, behind one switch: a small command's series evaluated ahead.

Hydra's basic launcher runs the jobs of ``dmlimits -m`` one after another in this process, and
each job evaluates a single chunk of series in-process, so a comparison such as
``-m hardware=v100_sxm,a100_sxm,h100_sxm`` would use one core while Hydra composes its jobs.
The command's check expands every job's series before the jobs run anyway (a multirun's, in
dmlimits' sweeper, as it composes each job); with
`execution.ahead` on (the default), `Startup.on_job` hands them, as each job passes the check, to
worker processes forked from the command (`pipeline.execute.ahead.Ahead`), which evaluate them
while the check and Hydra compose; each job then takes its series from there
(docs/scale-out.md, "Small commands"). ``execution.ahead=false`` is the plain path: every job
evaluates its own series, and nothing is forked.
"""

from __future__ import annotations

import os

from hydra.core.plugins import Plugins
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from hydra_plugins.dmlimits.sweeper import DmlimitsSweeper
from pipeline.app.plan import RunPlan
from pipeline.execute.ahead import MAX_SERIES as AHEAD_MAX_SERIES
from pipeline.execute.ahead import Ahead, forking_supported
from pipeline.execute.settings import Backend, ExecutionSettings

IN_PROCESS_LAUNCHER = "basic"
"""Hydra's default launcher (the `hydra/launcher` choice): a multirun's jobs, one after another,
in this process."""


def register_plugins() -> None:
    """Register dmlimits' Hydra plugin (`hydra_plugins.dmlimits`) with Hydra's public
    `Plugins.register`: the sweeper of a multirun (conf/hydra/sweeper/dmlimits.yaml). Hydra
    finds installed plugins by listing the `hydra_plugins` folders, which an editable install
    does not expose; registering twice is harmless. It changes nothing a command composes or
    writes."""
    Plugins.instance().register(DmlimitsSweeper)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def tricks_on(execution: ExecutionSettings) -> bool:
    """The command's one switch: `execution.ahead` on and `execution.n_jobs` not 1."""
    return execution.ahead and execution.n_jobs != 1


def ahead_workers(full: DictConfig, plan: RunPlan) -> int:
    """Workers to evaluate a checked job's series ahead, or 0 to leave them to the job.

    Ahead only when `execution.ahead` is on, the job runs in this process (Hydra's basic
    launcher; not a nightly job, which runs its own plan), on local workers (not dask, not
    `execution.n_jobs=1`), and there is something to overlap: a job of a multirun, or a run of
    two series or more. `execution.n_jobs` workers when set (two or more), else one per usable
    CPU but one: the command's own process keeps a CPU, as it composes, checks and writes the
    jobs meanwhile (so none with one CPU). One worker also starts its caches cold once where
    two would each start them cold.
    """
    if OmegaConf.select(full, "hydra.mode") != RunMode.MULTIRUN and len(plan.series) < 2:
        return 0
    if len(plan.series) > AHEAD_MAX_SERIES:  # `Ahead` would refuse them all
        return 0
    return workers_for(full, plan.execution)


def workers_for(full: DictConfig, execution: ExecutionSettings) -> int:
    """`ahead_workers` of a job of this config whatever its series: 0 when its series would not
    be evaluated ahead (the switch, the launcher, a nightly job, dask, one CPU)."""
    choices = OmegaConf.select(full, "hydra.runtime.choices") or {}
    if (
        not forking_supported()
        or not tricks_on(execution)
        or execution.backend is Backend.DASK
        or choices.get("hydra/launcher") != IN_PROCESS_LAUNCHER
        or OmegaConf.select(full, "output.run_date") is not None
    ):
        return 0
    if execution.n_jobs == -1:
        return max(0, usable_cpus() - 1)
    return execution.n_jobs if execution.n_jobs >= 2 else 0


class Startup:
    """The workers of one command (none until a job asks for them)."""

    def __init__(self) -> None:
        self.ahead: Ahead | None = None
        """The workers evaluating checked series ahead; None when no job asked for them."""

    def on_job(self, full: DictConfig, plan: RunPlan) -> None:
        """`check_command_line`'s `on_job`: hand a checked job's series to the workers (forked
        at the first) when `ahead_workers` says so; `Ahead` refuses them past its budget."""
        workers = ahead_workers(full, plan)
        if workers and self.ahead is None:
            self.ahead = Ahead(workers)
        if self.ahead is not None and workers:
            self.ahead.submit(plan.scenarios, plan.whole_grid)

    def close(self) -> None:
        """Stop the workers, if any."""
        if self.ahead is not None:
            self.ahead.close()
            self.ahead = None
