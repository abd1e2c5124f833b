"""`dmlimits`: run the default scenario, one composed scenario, or a Hydra --multirun grid.

dmlimits                                    # H100, dense, critical batch, 3 months, paper grid
dmlimits hardware=a100_sxm scaling=sparse   # another scenario
dmlimits -m +experiment=base_comparison     # a grid, one dataset under output.root
dmlimits --config-dir ~/presets hardware=my_gpu   # a preset of your own

Before Hydra starts, `pipeline.cli.check` reads and composes the command line with Hydra's own
parser and compose API and checks every value with the schema; a mistake is one line on stderr,
``dmlimits: error: <message>``, exit status 2, and nothing is written. In a multirun, a job that
still fails on bad input (a combination the check did not try, an output root that became
unwritable) prints the same line and raises `JobFailed`: Hydra runs the remaining jobs, then
exits non-zero; `dmlimits-gather ROOT --multirun DIR` lists the failed jobs (no done marker).
A single run that fails after Hydra started removes the run directory Hydra made for it.

The series of a small command (the jobs of a multirun Hydra's basic launcher runs here, or a
run of a few series) are evaluated ahead in forked workers as the check expands them
(`pipeline.execute.ahead`, `ahead_workers`), so the jobs, which Hydra runs one after another,
find them done; `execution.ahead=false` (or `execution.n_jobs=1`) turns that off.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.errors import CompactHydraException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from pipeline.app.execute import execute_plan
from pipeline.app.plan import RunPlan, plan_run
from pipeline.app.summary import summary_lines
from pipeline.cli.check import CheckedSeries, check_command_line
from pipeline.execute.ahead import Ahead, forking_supported, usable_cpus
from pipeline.execute.settings import Backend
from pipeline.io.dataset import mark_done
from pipeline.io.parquet import OutputError
from pipeline.schema.compose import CONF_URL, CONFIG_NAME, VERSION_BASE
from pipeline.schema.compose_cache import memoized_compositions
from pipeline.schema.errors import ConfigError, InputError
from pipeline.schema.keys import check_known_keys

EXIT_BAD_INPUT = 2
BASIC_LAUNCHER = "hydra._internal.core_plugins.basic_launcher.BasicLauncher"
"""Hydra's default launcher: the jobs of a multirun, one after another, in this process."""
HYDRA_RUN_FILES = (".hydra/config.yaml", ".hydra/hydra.yaml", ".hydra/overrides.yaml", ".hydra")
"""What Hydra writes into a single run's directory before the job starts (and its *.log)."""

_existing_ancestor: Path | None = None
"""The nearest directory of hydra.run.dir that existed before Hydra started (set by `main`)."""
_checked: CheckedSeries | None = None
"""A single run's series as the check expanded them (set by `main`), so the run does not
expand its sweep a second time; used only when the job's config is the one checked."""
_ahead: Ahead | None = None
"""The workers evaluating checked series ahead (set by `evaluate_ahead`, closed by `main`)."""


class JobFailed(CompactHydraException):
    """A multirun job stopped on bad input; Hydra records it and goes on with the next job."""


def report_error(err: Exception) -> int:
    """Print a bad-input error as the CLI's one line on stderr; the exit status for it."""
    print(f"dmlimits: error: {err}", file=sys.stderr)
    return EXIT_BAD_INPUT


def run_job(cfg: DictConfig) -> int:
    """One Hydra job: validate, evaluate, write, summarize; exit code 2 on bad input."""
    try:
        check_known_keys(cfg)
    except ConfigError as err:
        return report_error(err)
    if cfg.output.get("run_date") is not None:
        from pipeline.nightly.run import run_nightly  # deferred: only a nightly job loads it

        return run_nightly(cfg)
    try:
        plan = plan_run(cfg, series=_checked.series_of(cfg) if _checked is not None else None)
        report = execute_plan(
            plan, ahead=_ahead
        )  # a fixed layout is checked against each model as it runs
    except (ConfigError, InputError, OutputError) as err:
        return report_error(err)
    lines = summary_lines(
        report.summaries,
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
        {"run_id": report.run_id, "series": len(report.outcomes), "skipped": report.skipped},
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


@hydra.main(config_path=CONF_URL, config_name=CONFIG_NAME, version_base=VERSION_BASE)
def _hydra_entry(cfg: DictConfig) -> None:
    code = run_job(cfg)
    if not code:
        return
    hydra_cfg = HydraConfig.get()
    if hydra_cfg.mode == RunMode.MULTIRUN:
        raise JobFailed(
            f"dmlimits: job {hydra_cfg.job.num} failed (error above); the other jobs ran. "
            f"Check the dataset with: dmlimits-gather ROOT --multirun "
            f"{hydra_cfg.sweep.dir}"
        )
    remove_run_dir(Path(hydra_cfg.runtime.output_dir), _existing_ancestor)
    sys.exit(code)


def nearest_existing(path: Path) -> Path:
    """The nearest directory of ``path`` (itself included) that exists."""
    path = Path.cwd() / path
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def ahead_workers(full: DictConfig, plan: RunPlan) -> int:
    """Workers to evaluate a checked job's series ahead, or 0 to leave them to the job.

    Ahead only when `execution.ahead` is on, the job runs in this process (Hydra's basic launcher; not a nightly job,
    which runs its own plan), on local workers (not dask, not `execution.n_jobs=1`), and there
    is something to overlap: a job of a multirun, or a run of two series or more. One worker
    per usable CPU (or `execution.n_jobs` of them), and only with two or more.
    """
    execution = plan.execution
    if (
        not forking_supported()
        or not execution.ahead
        or execution.backend is Backend.DASK
        or execution.n_jobs == 1
        or OmegaConf.select(full, "hydra.launcher._target_") != BASIC_LAUNCHER
        or OmegaConf.select(full, "output.run_date") is not None
    ):
        return 0
    if OmegaConf.select(full, "hydra.mode") != RunMode.MULTIRUN and len(plan.series) < 2:
        return 0
    workers = usable_cpus() if execution.n_jobs == -1 else execution.n_jobs
    return workers if workers >= 2 else 0


def evaluate_ahead(full: DictConfig, plan: RunPlan) -> None:
    """`check_command_line`'s `on_job`: hand a checked job's series to the workers (started at
    the first) when `ahead_workers` says so; `Ahead` refuses them past its series budget."""
    global _ahead
    workers = ahead_workers(full, plan)
    if not workers:
        return
    if _ahead is None:
        _ahead = Ahead(workers)
    _ahead.submit(plan.scenarios, plan.whole_grid)


def check(argv: Sequence[str]) -> int:
    """0 if the command line passes `check_command_line`, else print its one line and return 2."""
    global _existing_ancestor, _checked
    try:
        checked = check_command_line(argv, evaluate_ahead)
    except (ConfigError, InputError) as err:
        return report_error(err)
    if checked is not None:
        run_dir = OmegaConf.select(checked.composed, "hydra.run.dir")
        _existing_ancestor = nearest_existing(Path(str(run_dir))) if run_dir else None
        _checked = checked.series
    return 0


def version_line() -> str:
    """What `dmlimits --version` prints: this package's version, then the Hydra it runs on."""
    from pipeline import __version__

    return f"dmlimits {__version__} (Hydra {hydra.__version__})"


def main() -> None:
    """Console entry point (`dmlimits`, `python -m pipeline`)."""
    if sys.argv[1:] in (["--version"], ["-V"]):  # Hydra's own flag would print only its version
        print(version_line())
        sys.exit(0)
    # What the imports made lives as long as the command: out of the collector's sight, the
    # compositions' many small objects are collected without walking it again and again
    # (about 0.05 s of a three-GPU command), and forked workers share its pages untouched.
    # Unfrozen at the end, so that a caller's own objects (main() called in a test or a
    # notebook) are collected as before.
    gc.freeze()
    try:
        with memoized_compositions():  # the check's and Hydra's compositions of a job: made once
            code = check(sys.argv[1:])
            if code:
                sys.exit(code)
            _hydra_entry()
    finally:
        if _ahead is not None:
            _ahead.close()
        gc.unfreeze()
