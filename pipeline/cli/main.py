"""`dmlimits`: run the default scenario, one composed scenario, or a Hydra --multirun grid.

dmlimits                                    # H100, dense, critical batch, 3 months, paper grid
dmlimits hardware=a100_sxm scaling=sparse   # another scenario
dmlimits -m +experiment=base_comparison     # a grid, one dataset under output.root

Before Hydra starts, `pipeline.cli.preflight` checks the command line; a mistake is one line on
stderr, ``dmlimits: error: <key> = <value>: <allowed>``, exit status 2, and nothing is written.
In a multirun, a job that still fails on bad input (a combination preflight did not try, an
output root that became unwritable) prints the same line and raises `JobFailed`: Hydra runs the
remaining jobs, then exits non-zero; `dmlimits-gather ROOT --multirun DIR` lists
the failed jobs (no done marker).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.errors import CompactHydraException
from hydra.types import RunMode
from omegaconf import DictConfig

from pipeline.app.execute import execute_plan
from pipeline.app.plan import plan_run
from pipeline.app.summary import summary_lines
from pipeline.cli.preflight import preflight
from pipeline.io.dataset import mark_done
from pipeline.io.parquet import OutputError
from pipeline.nightly.run import run_nightly
from pipeline.schema import CONF_DIR
from pipeline.schema.errors import ConfigError

EXIT_BAD_INPUT = 2


class JobFailed(CompactHydraException):
    """A multirun job stopped on bad input; Hydra records it and goes on with the next job."""


def report_error(err: Exception) -> int:
    """Print a bad-input error as the CLI's one line on stderr; the exit status for it."""
    print(f"dmlimits: error: {err}", file=sys.stderr)
    return EXIT_BAD_INPUT


def run_job(cfg: DictConfig) -> int:
    """One Hydra job: validate, evaluate, write, summarize; exit code 2 on bad input."""
    if cfg.output.get("run_date") is not None:
        return run_nightly(cfg)
    try:
        plan = plan_run(cfg)
        report = execute_plan(plan)  # a fixed layout is checked against each model as it runs
    except (ConfigError, OutputError) as err:
        return report_error(err)
    lines = summary_lines(
        report.summaries, str(report.root), report.seconds, report.points, report.skipped
    )
    for line in lines:
        print(line)
    mark_done(
        HydraConfig.get().runtime.output_dir,
        {"run_id": report.run_id, "series": len(report.outcomes), "skipped": report.skipped},
    )
    return 0


@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
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
    sys.exit(code)


def check_command_line(argv: Sequence[str]) -> int:
    """0 if `preflight` passes the command line, else print its one-line error and return 2."""
    try:
        preflight(argv)
    except ConfigError as err:
        return report_error(err)
    return 0


def main() -> None:
    """Console entry point (`dmlimits`, `python -m pipeline`)."""
    code = check_command_line(sys.argv[1:])
    if code:
        sys.exit(code)
    _hydra_entry()
