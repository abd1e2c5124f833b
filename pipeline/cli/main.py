"""`dmlimits`: run the default scenario, one composed scenario, or a Hydra --multirun grid.

dmlimits                                    # H100, dense, critical batch, 3 months, paper grid
dmlimits hardware=a100_sxm scaling=sparse   # another scenario
dmlimits -m +experiment=base_comparison     # a grid, one dataset under output.root
"""

from __future__ import annotations

import sys

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from pipeline.cli.run import execute_plan, plan_run
from pipeline.cli.summary import summary_lines
from pipeline.io.dataset import mark_done
from pipeline.io.parquet import OutputError
from pipeline.schema import CONF_DIR
from pipeline.schema.errors import ConfigError

EXIT_BAD_INPUT = 2


def run_job(cfg: DictConfig) -> int:
    """One Hydra job: validate, evaluate, write, summarize; exit code 2 on bad input."""
    try:
        plan = plan_run(cfg)
    except (ConfigError, OutputError) as err:
        print(f"dmlimits: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    report = execute_plan(plan)
    for line in summary_lines(report.outcomes, str(report.root), report.seconds, report.points):
        print(line)
    mark_done(
        HydraConfig.get().runtime.output_dir,
        {"run_id": report.run_id, "series": len(report.outcomes)},
    )
    return 0


@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
def _hydra_entry(cfg: DictConfig) -> None:
    code = run_job(cfg)
    if code:
        sys.exit(code)


def main() -> None:
    """Console entry point (`dmlimits`, `python -m pipeline`)."""
    _hydra_entry()
