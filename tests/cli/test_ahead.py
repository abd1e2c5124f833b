"""The CLI evaluates the series of small commands ahead, with the rows of a run without it."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import DictConfig

from pipeline.app.plan import RunPlan
from pipeline.cli import main as cli
from pipeline.cli.check import check_command_line
from pipeline.execute.ahead import forking_supported
from tests.command import dmlimits, stable_table

TINY = "scaling.grid.max_d_model=16384"


def checked_jobs(tmp_path: Path, *argv: str) -> list[tuple[DictConfig, RunPlan]]:
    """Every job the check passed, with its plan."""
    jobs: list[tuple[DictConfig, RunPlan]] = []
    check_command_line([*argv, TINY, f"output.root={tmp_path}"], lambda c, p: jobs.append((c, p)))
    return jobs


@pytest.fixture
def two_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "usable_cpus", lambda: 2)
    monkeypatch.setattr(cli, "forking_supported", lambda: True)


@pytest.mark.usefixtures("two_cpus")
@pytest.mark.parametrize(
    ("argv", "workers"),
    [
        (["-m", "hardware=v100_sxm,a100_sxm"], [2, 2]),  # each job of a multirun
        (["-m", "hardware=v100_sxm,a100_sxm", "execution.n_jobs=3"], [3, 3]),
        (["hardware=v100_sxm"], [0]),  # a run of one series: nothing to overlap
        (["sweep=smoke"], [2]),  # a run of several series
        (["-m", "hardware=v100_sxm,a100_sxm", "execution.ahead=false"], [0, 0]),
        (["-m", "hardware=v100_sxm,a100_sxm", "execution.n_jobs=1"], [0, 0]),
        (["-m", "hardware=v100_sxm,a100_sxm", "execution.backend=dask"], [0, 0]),
        (["-m", "hardware=v100_sxm", "hydra/launcher=submitit_local"], [0]),
    ],
)
def test_which_jobs_are_evaluated_ahead(
    tmp_path: Path, argv: list[str], workers: list[int]
) -> None:
    if any("submitit" in a for a in argv):
        pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    jobs = checked_jobs(tmp_path, *argv)
    assert [cli.ahead_workers(c, p) for c, p in jobs] == workers


def test_one_cpu_evaluates_nothing_ahead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "usable_cpus", lambda: 1)
    jobs = checked_jobs(tmp_path, "-m", "hardware=v100_sxm,a100_sxm")
    assert [cli.ahead_workers(c, p) for c, p in jobs] == [0, 0]


@pytest.mark.slow
@pytest.mark.skipif(not forking_supported(), reason="needs fork (POSIX, not macOS)")
def test_a_multirun_evaluated_ahead_writes_the_rows_of_one_evaluated_in_its_jobs(
    tmp_path: Path,
) -> None:
    args = ["-m", "hardware=v100_sxm,a100_sxm,h100_sxm", TINY]
    runs = {}
    for name, extra in (("ahead", []), ("in_jobs", ["execution.ahead=false"])):
        done = dmlimits(
            tmp_path, *args, *extra, f"output.root={tmp_path / name}", f"hydra.sweep.dir={name}"
        )
        assert done.returncode == 0, done.stderr
        runs[name] = done.stdout
    assert runs["ahead"].count("1 series evaluated ahead") == 3
    assert "evaluated ahead" not in runs["in_jobs"]
    for table in ("points", "thresholds", "series"):  # the series' overrides name the roots
        expected = stable_table(tmp_path / "in_jobs", table).drop("overrides", strict=False)
        assert expected.height > 0
        got = stable_table(tmp_path / "ahead", table).drop("overrides", strict=False)
        assert got.equals(expected), table
