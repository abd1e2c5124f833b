"""Small runs for the nightly, BI and report tests: the default scenario on a tiny grid."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from omegaconf import DictConfig

from pipeline.app.execute import RunReport, execute_plan
from pipeline.app.plan import plan_run
from pipeline.nightly.partition import date_dir
from pipeline.nightly.tables import read_table
from pipeline.schema import compose_config

SMALL = ("scaling.grid.max_d_model=16384", "execution.n_jobs=1")
"""d_model 12288, 14336 and 16384 only: a run takes well under a second."""


def nightly_overrides(root: Path, run_date: str, *overrides: str) -> list[str]:
    """Hydra overrides of a small nightly run of `run_date` under `root`."""
    return [
        "+experiment=nightly",
        "sweep=none",  # one series instead of the nightly's eight: these tests check the mechanics
        "forecast.moving_frontier_years=null",  # the moving frontier has its own tests
        "forecast.uncertainty=null",  # so has the uncertainty design
        f"output.nightly_root={root}",
        f"output.run_date={run_date}",
        *SMALL,
        *overrides,
    ]


def nightly_config(root: Path, run_date: str, *overrides: str) -> DictConfig:
    """The composed config of `nightly_overrides`."""
    return compose_config(nightly_overrides(root, run_date, *overrides))


def plain_run(root: Path, *overrides: str) -> RunReport:
    """A small ordinary run into the dataset root `root` (overrides after SMALL win)."""
    cfg = compose_config([f"output.root={root}", *SMALL, *overrides])
    return execute_plan(plan_run(cfg), progress=False)


def run_ids(root: Path, run_date: str) -> set[str]:
    """The run ids in the thresholds of one date's partition (empty when it has none)."""
    table = read_table(date_dir(root, dt.date.fromisoformat(run_date)), "thresholds")
    return set() if table is None else set(table["run_id"].to_list())
