"""The command's start-up: what it imports, and the series of small commands evaluated ahead
(`pipeline.cli.startup`) with the rows of a run without it."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import DictConfig

from pipeline.app.plan import RunPlan
from pipeline.cli import startup
from pipeline.cli.check import check_command_line
from pipeline.cli.startup import Startup
from pipeline.execute.ahead import forking_supported
from tests.command import dmlimits, python_output, stable_table

TINY = "scaling.grid.max_d_model=16384"


def checked_jobs(tmp_path: Path, *argv: str) -> list[tuple[DictConfig, RunPlan]]:
    """Every job the check passed, with its plan."""
    jobs: list[tuple[DictConfig, RunPlan]] = []
    check_command_line([*argv, TINY, f"output.root={tmp_path}"], lambda c, p: jobs.append((c, p)))
    return jobs


@pytest.fixture
def two_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine with two usable CPUs that can fork."""
    monkeypatch.setattr(startup, "usable_cpus", lambda: 2)
    monkeypatch.setattr(startup, "forking_supported", lambda: True)


@pytest.mark.usefixtures("two_cpus")
@pytest.mark.parametrize(
    ("argv", "workers"),
    [
        (["-m", "hardware=v100_sxm,a100_sxm"], [1, 1]),  # each job; one CPU kept by the command
        (["-m", "hardware=v100_sxm,a100_sxm", "execution.n_jobs=3"], [3, 3]),
        (["hardware=v100_sxm"], [0]),  # a run of one series: nothing to overlap
        (["sweep=smoke"], [1]),  # a run of several series
        (["sweep=sensitivity"], [0]),  # 360 series, past what `Ahead` takes: none forked
        (["-m", "hardware=v100_sxm,a100_sxm", "execution.ahead=false"], [0, 0]),
        (["-m", "hardware=v100_sxm,a100_sxm", "execution.n_jobs=1"], [0, 0]),
        (["-m", "hardware=v100_sxm,a100_sxm", "execution.backend=dask"], [0, 0]),
        (["-m", "hardware=v100_sxm", "hydra/launcher=submitit_local"], [0]),
    ],
)
def test_which_jobs_are_evaluated_ahead(
    tmp_path: Path, argv: list[str], workers: list[int]
) -> None:
    """Jobs run in this process with something to overlap get workers; the switch, one worker,
    dask and another launcher get none."""
    if any("submitit" in a for a in argv):
        pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    jobs = checked_jobs(tmp_path, *argv)
    assert [startup.ahead_workers(c, p) for c, p in jobs] == workers


def test_one_cpu_evaluates_nothing_ahead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With one usable CPU there is nothing to overlap: no worker."""
    monkeypatch.setattr(startup, "usable_cpus", lambda: 1)
    jobs = checked_jobs(tmp_path, "-m", "hardware=v100_sxm,a100_sxm")
    assert [startup.ahead_workers(c, p) for c, p in jobs] == [0, 0]


@pytest.mark.usefixtures("two_cpus")
@pytest.mark.skipif(not forking_supported(), reason="needs fork (POSIX, not macOS)")
def test_startup_forks_at_the_first_job_and_close_stops_it(tmp_path: Path) -> None:
    """The workers start with the first job handed over and close stops them; with the switch
    off nothing is forked."""
    plain = Startup()
    check_command_line(
        [
            "-m",
            "hardware=v100_sxm,a100_sxm",
            TINY,
            "execution.ahead=false",
            f"output.root={tmp_path}",
        ],
        plain.on_job,
    )
    assert plain.ahead is None
    tricks = Startup()
    try:
        check_command_line(
            ["-m", "hardware=v100_sxm,a100_sxm", TINY, f"output.root={tmp_path}"], tricks.on_job
        )
        assert tricks.ahead is not None
        assert tricks.ahead.submitted == 2
    finally:
        tricks.close()
    assert tricks.ahead is None


@pytest.mark.skipif(not forking_supported(), reason="needs fork (POSIX, not macOS)")
def test_a_multirun_evaluated_ahead_writes_the_rows_of_one_evaluated_in_its_jobs(
    tmp_path: Path,
) -> None:
    """A multirun evaluated ahead writes the rows the same multirun writes with the switch off."""
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


DEFERRED = (
    "polars",
    "rich",
    "pyarrow.compute",
    "joblib",
    "pipeline.nightly.run",
    "urllib.request",
    "http.client",
)
"""Libraries (and modules) a run that only evaluates and writes does not need at start-up: the
readers, the terminal bar, the resumed-row filters, the worker pool, the nightly job and the
fetch of live sources import them when used."""


def test_cli_start_up_defers_what_a_run_may_not_need() -> None:
    """Importing the command loads none of the libraries a plain run does not need."""
    probe = (
        f"import sys, pipeline.cli.main; print(sorted(m for m in {DEFERRED!r} if m in sys.modules))"
    )
    out = python_output(probe)
    assert out.strip() == "[]"
