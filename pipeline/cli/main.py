"""`dmlimits`: run the default scenario, one composed scenario, or a Hydra --multirun grid.

dmlimits                                    # H100, dense, critical batch, 3 months, paper grid
dmlimits hardware=a100_sxm scaling=sparse   # another scenario
dmlimits -m +experiment=base_comparison     # a grid, one dataset under output.root
dmlimits --config-dir ~/presets hardware=my_gpu   # a preset of your own

Before Hydra starts, `pipeline.cli.check` reads and composes the command line with Hydra's own
parser and compose API and checks every value with the schema; a mistake is one line on stderr,
``dmlimits: error: <message>``, exit status 2, and nothing is written. A multirun's jobs are
checked alike by dmlimits' sweeper (`hydra_plugins.dmlimits.sweeper`), which composes each job
once, checks it with the command's `SweepCheck` (`Command.check_job`) before any job runs, and
runs the jobs on those configs. In a multirun, a job that still fails on bad input (a
combination the check did not try, an output root that became unwritable) prints the same line
and raises `JobFailed`: Hydra runs the remaining jobs, then exits non-zero;
`dmlimits-gather ROOT --multirun DIR` lists the failed jobs (no done marker). A single run that
fails after Hydra started removes the run directory Hydra made for it.

Options and overrides may come in any order (``dmlimits hardware=a100_sxm --config-dir DIR``):
Hydra is handed the command line with its options first (`pipeline.cli.flags.hydra_argv`).

The series of a small command (the jobs of a multirun Hydra's basic launcher runs here, or a
run of a few series) are evaluated ahead in forked workers as the check expands them, so the
jobs, which Hydra runs one after another, find them done: the command's one start-up trick,
`pipeline.cli.startup`, which `execution.ahead=false` (or `execution.n_jobs=1`) turns off.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import hydra
from hydra.conf import HydraConf
from hydra.core.hydra_config import HydraConfig
from hydra.errors import CompactHydraException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from hydra_plugins.dmlimits.sweeper import JOB_CHECK
from pipeline.app.execute import execute_plan
from pipeline.app.plan import RunPlan, plan_run
from pipeline.app.summary import summary_lines
from pipeline.cli.check import SweepCheck, check_command_line
from pipeline.cli.flags import hydra_argv
from pipeline.cli.gather import mark_done
from pipeline.cli.startup import Startup, register_plugins
from pipeline.execute.progress import stage
from pipeline.io.parquet import OutputError
from pipeline.schema.compose import CONF_URL, CONFIG_NAME, VERSION_BASE, user_search_path
from pipeline.schema.errors import ConfigError, InputError
from pipeline.schema.keys import check_known_keys
from pipeline.schema.plausible import warning_lines
from pipeline.sweep import SweepSeries
from pipeline.version import __version__

EXIT_BAD_INPUT = 2
HYDRA_RUN_FILES = (".hydra/config.yaml", ".hydra/hydra.yaml", ".hydra/overrides.yaml", ".hydra")
"""What Hydra writes into a single run's directory before the job starts (and its *.log)."""


@dataclass(slots=True)
class Command:
    """What the check of one command hands to its Hydra jobs."""

    startup: Startup = field(default_factory=Startup)
    existing_ancestor: Path | None = None
    """The nearest directory of hydra.run.dir that existed before Hydra started."""
    sweep_check: SweepCheck | None = None
    """The check of a multirun's jobs, which dmlimits' sweeper calls as it composes them."""
    checked: CheckedSeries | None = None
    """A single run's series as its check listed them, which its job plans with (`series_for`)."""

    def on_job(self, full: DictConfig, plan: RunPlan) -> None:
        """`check_command_line`'s `on_job`: the start-up's (`Startup.on_job`), and a single
        run's listed series kept for its job (`series_for`), which then need not expand its
        sweep again (a nightly's choices are composed once)."""
        self.startup.on_job(full, plan)
        single = OmegaConf.select(full, "hydra.mode") != RunMode.MULTIRUN
        if single and isinstance(plan.series, list):
            self.checked = CheckedSeries(series_inputs(full, full.hydra), plan.series)

    def series_for(self, cfg: DictConfig) -> list[SweepSeries] | None:
        """The series the check listed for a job of this config, overrides and config sources
        (those its sweep is expanded from); None when it listed none for them."""
        if self.checked is None or not HydraConfig.initialized():
            return None
        if series_inputs(cfg, HydraConfig.get()) != self.checked.made_from:
            return None
        return self.checked.series

    def check_job(
        self, compose: Callable[[], DictConfig], job: list[str], label: str
    ) -> DictConfig:
        """The `JobCheck` of dmlimits' sweeper: a multirun's job composed and checked by the
        command's `SweepCheck`, its series handed to the start-up; a mistake is the command's
        one line and exit status 2, before any job ran."""
        assert self.sweep_check is not None, "the command line is checked before Hydra starts"
        try:
            return self.sweep_check(compose, job, label)
        except (ConfigError, InputError) as err:
            sys.exit(report_error(err))


@dataclass(frozen=True, slots=True)
class CheckedSeries:
    """A run's series as the check listed them, and what they were expanded from."""

    made_from: tuple[object, ...]
    """`series_inputs` of the checked config."""
    series: list[SweepSeries]


def series_inputs(cfg: DictConfig, hydra: DictConfig | HydraConf) -> tuple[object, ...]:
    """What the expansion of a job's sweep reads besides the package's configs: its config
    (without a hydra node), and of its Hydra config `hydra` the task's overrides and the
    user's config sources (`pipeline.sweep.expand`)."""
    node = cast(dict[str, object], OmegaConf.to_container(cfg, resolve=False))
    node.pop("hydra", None)
    overrides = OmegaConf.to_container(hydra.overrides.task, resolve=False)
    return node, overrides, user_search_path(hydra)


class JobFailed(CompactHydraException):
    """A multirun job stopped on bad input; Hydra records it and goes on with the next job."""


def report_error(err: Exception) -> int:
    """Print a bad-input error as the CLI's one line on stderr; the exit status for it."""
    print(f"dmlimits: error: {err}", file=sys.stderr)
    return EXIT_BAD_INPUT


EXIT_WRITE_FAILED = 1
"""A write failed mid-run (a full disk): the batches written before it are kept."""


def write_failed(err: OSError, cfg: DictConfig) -> str:
    """One line for a write that failed mid-run: what failed, and that every batch written
    before it is kept (parts are written whole or not at all, `pipeline.io.parquet`)."""
    reason = "the disk is full" if err.errno in (errno.ENOSPC, errno.EDQUOT) else "a write failed"
    where = f"{err.strerror}: {err.filename}" if err.filename else str(err.strerror or err)
    return (
        f"{reason} ({where}): the series written before it are kept under "
        f"{cfg.output.root}; free space and run again (output.resume=true skips them)"
    )


def run_job(cfg: DictConfig, command: Command) -> int:
    """One Hydra job: validate, evaluate, write, summarize; exit code 2 on bad input."""
    try:
        check_known_keys(cfg)
    except ConfigError as err:
        return report_error(err)
    series = command.series_for(cfg)
    if cfg.output.get("run_date") is not None:
        from pipeline.nightly.run import run_nightly  # deferred: only a nightly job loads it

        return run_nightly(cfg, series=series)
    try:
        plan = plan_run(cfg, say=stage, series=series)
        # a fixed layout is checked against each model as it runs
        report = execute_plan(plan, ahead=command.startup.ahead)
    except (ConfigError, InputError, OutputError) as err:
        return report_error(err)
    except OSError as err:  # a disk that fills while the batches are written
        print(f"dmlimits: error: {write_failed(err, cfg)}", file=sys.stderr)
        return EXIT_WRITE_FAILED
    lines = summary_lines(
        report.tally,
        str(report.root),
        report.seconds,
        report.points,
        report.skipped,
        report.ahead,
    )
    for line in lines:
        print(line)
    mark_done(
        HydraConfig.get().runtime.output_dir,
        {
            "run_id": report.run_id,
            "series": report.tally.series - report.tally.resumed,
            "skipped": report.skipped,
        },
    )
    return 0


def remove_run_dir(output_dir: Path, keep: Path | None) -> None:
    """Remove what Hydra wrote for a failed single run, then its directories while empty.

    Only Hydra's own files (`HYDRA_RUN_FILES`, an empty job log) are removed, and directories
    only when empty, up to `keep` (a directory that existed before the run) or the working
    directory.
    """
    for name in HYDRA_RUN_FILES:
        path = output_dir / name
        if path.is_dir():
            _rmdir_if_empty(path)
        elif path.is_file():
            path.unlink()
    for log in output_dir.glob("*.log"):
        if log.stat().st_size == 0:
            log.unlink()
    stop = {Path.cwd().resolve(), *([keep.resolve()] if keep else [])}
    folder = output_dir.resolve()
    while folder not in stop and folder != folder.parent and _rmdir_if_empty(folder):
        folder = folder.parent


def _rmdir_if_empty(folder: Path) -> bool:
    try:
        folder.rmdir()
    except OSError:
        return False
    return True


def hydra_entry(command: Command) -> Callable[[], None]:
    """@hydra.main's entry point for the jobs of this command (it reads sys.argv); dmlimits'
    sweeper, which runs a multirun's jobs, gets `command.check_job` with the task function."""

    def dmlimits(cfg: DictConfig) -> None:
        code = run_job(cfg, command)
        if not code:
            return
        hydra_cfg = HydraConfig.get()
        if hydra_cfg.mode == RunMode.MULTIRUN:
            raise JobFailed(
                f"dmlimits: job {hydra_cfg.job.num} failed (error above); the other jobs ran. "
                f"Check the dataset with: dmlimits-gather ROOT --multirun "
                f"{hydra_cfg.sweep.dir}"
            )
        remove_run_dir(Path(hydra_cfg.runtime.output_dir), command.existing_ancestor)
        sys.exit(code)

    setattr(dmlimits, JOB_CHECK, command.check_job)  # the task function dmlimits' sweeper gets
    entry = hydra.main(config_path=CONF_URL, config_name=CONFIG_NAME, version_base=VERSION_BASE)
    return cast(Callable[[], None], entry(dmlimits))


def nearest_existing(path: Path) -> Path:
    """The nearest directory of ``path`` (itself included) that exists."""
    path = Path.cwd() / path
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check(argv: Sequence[str], command: Command | None = None) -> int:
    """0 if the command line passes `check_command_line` (what it expanded kept in `command`),
    else print its one line and return 2."""
    command = command if command is not None else Command()
    try:
        checked = check_command_line(argv, command.on_job, sweeper_checks_jobs=True)
    except (ConfigError, InputError) as err:
        return report_error(err)
    if checked is not None:
        command.sweep_check = SweepCheck(checked.line, command.startup.on_job)
        run_dir = OmegaConf.select(checked.composed, "hydra.run.dir")
        command.existing_ancestor = nearest_existing(Path(str(run_dir))) if run_dir else None
    return 0


def version_line() -> str:
    """What `dmlimits --version` prints: this package's version, then the Hydra it runs on."""
    return f"dmlimits {__version__} (Hydra {hydra.__version__})"


def main() -> None:
    """The `dmlimits` command on `sys.argv` (the console script and ``python -m pipeline``)."""
    argv = sys.argv[1:]
    if argv in (["--version"], ["-V"]):  # Hydra's own flag would print only its version
        print(version_line())
        sys.exit(0)
    register_plugins()
    command = Command()
    try:
        with warning_lines("dmlimits"):
            code = check(argv, command)
            if code:
                sys.exit(code)
            sys.argv[1:] = hydra_argv(argv)
            hydra_entry(command)()
    finally:
        sys.argv[1:] = argv
        command.startup.close()
