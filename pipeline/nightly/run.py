"""`dmlimits +experiment=nightly`: one run, written as the dated partition of a persistent root.

Steps, under the root's lock (`pipeline.io.lock.RunLock`): clean what a killed run left, write
the whole run into a staging directory (`plan_run` and `execute_plan` with `output.root` set
to it), publish it as ROOT/run_date=D (replacing that date's partition whole), then write the
change report against the previous date. Exit status 0 when the run is published, whatever
moved; 2 on bad input, a locked root or an unwritable one, or a previous partition whose tables
the reader refuses (a series in two parts of one table: the run is published, its change report
is not written); a crash exits non-zero with the previous partition untouched.
"""

from __future__ import annotations

import errno
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from pipeline.app.execute import execute_plan
from pipeline.app.plan import plan_run
from pipeline.app.summary import summary_lines
from pipeline.execute.progress import stage
from pipeline.forecast.inputs import STORE_DIR
from pipeline.forecast.text import budget_lines, forecast_lines
from pipeline.io.labels import scenario_labels
from pipeline.io.lock import FLUSH_LOCK_NAME, RunLock
from pipeline.io.parquet import OutputError, check_writable
from pipeline.nightly.changes import compare_dates, unmoved_note, write_change_report
from pipeline.nightly.partition import clean_leftovers, linked_folders, new_staging_dir, publish
from pipeline.nightly.reality import contradiction_summary
from pipeline.nightly.settings import nightly_from_config
from pipeline.nightly.tables import read_table
from pipeline.schema.errors import ConfigError, InputError
from pipeline.sweep import SweepSeries

EXIT_BAD_INPUT = 2
"""As `pipeline.cli.main.EXIT_BAD_INPUT`."""


EXIT_WRITE_FAILED = 1
"""A write failed (a full disk): nothing published is lost, and the one line says what is kept."""


def write_failure(err: OSError, published: Path | None) -> str:
    """One line for a write that failed (ENOSPC: "the disk is full"): before publishing, the
    staged run is dropped and every partition is as it was; after, the run is published and
    only its change report is missing."""
    reason = "the disk is full" if err.errno in (errno.ENOSPC, errno.EDQUOT) else "a write failed"
    where = f" ({err.strerror}: {err.filename})" if err.filename else f" ({err.strerror or err})"
    if published is None:
        return (
            f"{reason}{where}: the run was not published; every partition under the nightly "
            "root is as it was (free space and run it again)"
        )
    return (
        f"{reason}{where}: the run is published as {published}, but its change report could "
        "not be written (free space and run it again to write it)"
    )


def _staged(cfg: DictConfig, staging: Path, root: Path) -> DictConfig:
    """A copy of the config that writes its dataset into `staging`, and keeps the sources'
    copies under the nightly root (ROOT/snapshots, shared by every date) unless
    `sources.store` names another place."""
    staged = cfg.copy()
    OmegaConf.update(staged, "output.root", str(staging), merge=False)
    if (
        OmegaConf.select(staged, "sources") is not None
        and OmegaConf.select(staged, "sources.store") is None
    ):
        OmegaConf.update(staged, "sources.store", str(root / STORE_DIR), merge=False)
    return staged


def forecast_summary(directory: Path) -> list[str]:
    """The forecast years of a published partition, for the run's summary, each series labelled
    as dmlimits-report labels it (`scenario_labels`: sweep points told apart), and those of its
    uncertainty budget (`budget_lines`) where it has one."""
    forecasts = read_table(directory, "forecasts")
    if forecasts is None:
        return []
    moving = read_table(directory, "frontier", ("series_id",)) is not None
    labels = scenario_labels(forecasts, read_table(directory, "series"))
    budget = read_table(directory, "uncertainty")
    return [
        *forecast_lines(forecasts.to_dicts(), moving_frontier=moving, labels=labels),
        *(budget_lines(budget.to_dicts()) if budget is not None else []),
    ]


def _refuse_multirun(run_date: object) -> None:
    """Jobs of one --multirun would replace each other's partition of the same date."""
    if HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN:
        raise ConfigError(
            "output.run_date",
            run_date,
            "a nightly run is one job: sweep with sweep.axes instead of --multirun",
        )


def run_nightly(
    cfg: DictConfig, progress: bool = True, series: Sequence[SweepSeries] | None = None
) -> int:
    """Run the config as the nightly partition `output.run_date` under `output.nightly_root`;
    `series`, given, are the config's series as the command's check expanded them
    (`plan_run`)."""
    final: Path | None = None
    try:
        settings = nightly_from_config(cfg)
        _refuse_multirun(settings.run_date.isoformat())
        root = check_writable(settings.root).resolve()
        with RunLock(root):
            for link in linked_folders(root, settings.run_date):
                raise OutputError(
                    f"{link} is a symbolic link: a nightly run replaces, writes or deletes that "
                    "folder whole; replace the link by the folder it names (or remove it)"
                )
            for action in clean_leftovers(root):
                print(f"dmlimits: {action}", file=sys.stderr)
            staging = new_staging_dir(root, settings.run_date)
            try:
                staged = _staged(cfg, staging, root)
                plan = plan_run(staged, say=stage if progress else None, series=series)
                report = execute_plan(plan, progress=progress)
                (staging / FLUSH_LOCK_NAME).unlink(missing_ok=True)  # the staging root was ours
                if progress:
                    stage(f"publishing run_date={settings.run_date}, the change report")
                final = publish(staging, root, settings.run_date)
            finally:
                shutil.rmtree(staging, ignore_errors=True)  # a failed run, or the replaced one
            changes = compare_dates(root, settings.run_date)
            markdown, data = write_change_report(root, changes)
    except (ConfigError, InputError, OutputError) as err:
        # After publishing, only the change report can fail: the previous partition's tables
        # refused by the reader (a series in two parts of one table, `read.SplitSeriesError`).
        kept = "" if final is None else f" (the run is published as {final}; no change report)"
        print(f"dmlimits: error: {err}{kept}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as err:  # a disk that fills, a file system that fails while writing
        print(f"dmlimits: error: {write_failure(err, final)}", file=sys.stderr)
        return EXIT_WRITE_FAILED
    for line in summary_lines(report.tally, str(final), report.seconds, report.points):
        print(line)
    for line in forecast_summary(final):
        print(line)
    if changes.previous_date is None:  # nothing compared: no count of moves to give
        moved = "none to compare: no earlier date under this root"
    else:
        moved = (
            f"since {changes.previous_date.isoformat()}: {len(changes.thresholds)} threshold "
            f"values, {len(changes.forecasts)} forecast years moved"
            f"{unmoved_note(changes.forecasts)}"
        )
    print(f"changes {moved} -> {markdown} ({data.name})")
    if changes.contradictions:
        print(contradiction_summary(changes.contradictions))
    return 0
