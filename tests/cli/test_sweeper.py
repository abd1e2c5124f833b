"""dmlimits' sweeper: Hydra's basic sweeper's jobs, each composed once, checked as composed, and
the rows of Hydra's own basic sweeper."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf

from hydra_plugins.dmlimits.sweeper import JOB_CHECK, DmlimitsSweeper, job_labels, split_sweep
from tests.command import dmlimits, stable_table

TINY = "scaling.grid.max_d_model=16384"


class CountingLoader:
    """A config loader that composes a bare job config and records each composition."""

    def __init__(self) -> None:
        self.composed: list[list[str]] = []

    def load_sweep_config(self, master_config: DictConfig, sweep_overrides: list[str]) -> Any:
        self.composed.append(list(sweep_overrides))
        return OmegaConf.create({"hydra": {"job": {"id": None, "num": None}}})


def sweeper_with(loader: CountingLoader, task: Callable[[DictConfig], None]) -> DmlimitsSweeper:
    """A sweeper set up as Hydra sets it up, on a fake loader, without a launcher."""
    sweeper = DmlimitsSweeper()
    sweeper.hydra_context = SimpleNamespace(config_loader=loader)  # type: ignore[assignment]
    sweeper.config = OmegaConf.create({})
    sweeper.task_function = task
    return sweeper


def test_split_sweep_and_labels_follow_hydras_basic_sweeper() -> None:
    """Jobs are the product of the swept values in key order, a later override of a key wins,
    and each label names the job's swept values."""
    parsed = OverridesParser.create().parse_overrides(["hardware=a,b", "x=1", "+y=2,3", "x=5"])
    jobs = split_sweep(parsed)
    assert jobs == [
        ["hardware=a", "x=5", "+y=2"],
        ["hardware=a", "x=5", "+y=3"],
        ["hardware=b", "x=5", "+y=2"],
        ["hardware=b", "x=5", "+y=3"],
    ]
    assert job_labels(jobs)[1] == "hardware=a, +y=3"


def test_sweeper_composes_each_job_once_and_checks_it() -> None:
    """Every job is composed exactly once, numbered, and handed to the task function's check."""
    loader = CountingLoader()
    checked: list[tuple[list[str], str]] = []

    def task(_cfg: DictConfig) -> None: ...

    def check(compose: Callable[[], DictConfig], job: list[str], label: str) -> DictConfig:
        checked.append((job, label))
        return compose()

    setattr(task, JOB_CHECK, check)
    jobs = [["hardware=a"], ["hardware=b"], ["hardware=c"]]
    configs = sweeper_with(loader, task).compose_jobs(jobs)
    assert loader.composed == jobs
    assert checked == [(job, job[0]) for job in jobs]
    assert [c.hydra.job.num for c in configs] == [0, 1, 2]


def test_sweeper_without_a_check_composes_each_job_once() -> None:
    """A task function with no check gets its jobs composed once each all the same."""
    loader = CountingLoader()
    sweeper_with(loader, lambda _cfg: None).compose_jobs([["a=1"], ["a=2"]])
    assert loader.composed == [["a=1"], ["a=2"]]


@pytest.mark.slow
def test_multirun_writes_the_rows_of_hydras_basic_sweeper(tmp_path: Path) -> None:
    """A multirun through dmlimits' sweeper writes the rows and the summary of the same multirun
    through Hydra's basic sweeper."""
    args = ["-m", "hardware=v100_sxm,a100_sxm", "scaling=dense,sparse", TINY]
    runs = {}
    for name, extra in (("dmlimits", []), ("basic", ["hydra/sweeper=basic"])):
        done = dmlimits(
            tmp_path, *args, *extra, f"output.root={tmp_path / name}", f"hydra.sweep.dir={name}"
        )
        assert done.returncode == 0, done.stderr
        summary = done.stdout.replace(str(tmp_path / name), "ROOT")
        summary = re.sub(r"^\[[^]]*\]", "", summary, flags=re.MULTILINE)  # Hydra's log time
        runs[name] = re.sub(r"[\d.]+ (s|points/s)\b", r"X \1", summary)
    assert runs["dmlimits"] == runs["basic"]
    for table in ("points", "thresholds", "series"):  # the series' overrides name the roots
        expected = stable_table(tmp_path / "basic", table).drop("overrides", strict=False)
        assert expected.height > 0
        got = stable_table(tmp_path / "dmlimits", table).drop("overrides", strict=False)
        assert got.equals(expected), table
