"""A single run's job plans with the series its command-line check listed, and only with
series listed from the same config, overrides and config sources."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from pipeline.cli.check import check_command_line
from pipeline.cli.main import Command
from tests.command import dmlimits

TINY_GRID = "scaling.grid.max_d_model=16384"


@pytest.fixture
def as_job() -> Iterator[None]:
    """Hydra's job config is restored after the test sets it."""
    previous = HydraConfig.instance().cfg
    yield
    HydraConfig.instance().cfg = previous


def _job(full: DictConfig) -> DictConfig:
    """The job's config of a checked one: Hydra's node set as the running job's, not in it."""
    HydraConfig.instance().set_config(full)
    task = full.copy()
    with read_write(task), open_dict(task):
        del task["hydra"]
    return task


def test_job_takes_the_series_its_check_listed(tmp_path: Path, as_job: None) -> None:
    """The job of a checked single run gets the very series its check listed; a job whose
    config or overrides differ gets none."""
    command = Command()
    argv = ["sweep=nightly", TINY_GRID, f"output.root={tmp_path}", "execution.ahead=false"]
    checked = check_command_line(argv, command.on_job)
    assert checked is not None
    assert command.checked is not None
    listed = command.checked.series
    assert len(listed) == 8
    job = _job(checked.composed)
    assert command.series_for(job) is listed
    other = job.copy()
    OmegaConf.update(other, "scaling.grid.max_d_model", 8192)
    assert command.series_for(other) is None
    again = check_command_line([*argv, "hardware=h100_sxm"])  # the same config, told apart
    assert again is not None
    same = _job(again.composed)
    assert OmegaConf.to_container(same) == OmegaConf.to_container(job)
    assert command.series_for(same) is None


def test_multirun_keeps_no_series(tmp_path: Path) -> None:
    """The jobs of a multirun, each checked apart, leave no series for a job to take."""
    command = Command()
    argv = ["-m", "scaling=dense,sparse", TINY_GRID, f"output.root={tmp_path}"]
    check_command_line([*argv, "execution.ahead=false"], command.on_job)
    assert command.checked is None


@pytest.mark.slow
def test_command_expands_its_sweep_once(tmp_path: Path) -> None:
    """`dmlimits sweep=nightly` composes its eight choices in its check only: the run plans
    with the series the check listed."""
    result = dmlimits(tmp_path, "sweep=nightly", TINY_GRID, "execution.ahead=false")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert "[dmlimits] the sweep: 8 series, as the check expanded them" in lines
    assert not [line for line in lines if line.startswith("[dmlimits] expanding the sweep")]
