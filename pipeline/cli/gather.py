"""`dmlimits-gather`: check a finished sweep, its dataset and the Hydra jobs that wrote it.

    dmlimits-gather ROOT [--multirun DIR]

prints the dataset's report (`pipeline.io.dataset.gather`) and, with ``--multirun``, the jobs of
that Hydra sweep directory that did not finish; exits 1 if anything is wrong (a part that does
not open or does not match the schema, a series without thresholds, a series with rows in two
parts of one table, a failed job, no dataset at all under ROOT), 2 with one line on stderr
when ROOT or DIR is not a directory, or DIR is not a Hydra multirun whose jobs wrote to ROOT (its
jobs' `output.root` or `output.nightly_root`). ROOT may be a dataset root or a nightly root (every
date is checked).

Job-completion convention: a job of the `dmlimits` command calls `mark_done(job_dir)` as its
last act, which writes `<job output dir>/.dmlimits_done`. A job directory of a Hydra multirun
(the numbered subdirectories 0, 1, 2, ... of the sweep directory) without that file is a failed
job: it crashed, was killed, or is still running.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from pipeline.io.dataset import GatherReport, gather
from pipeline.io.parquet import OutputError
from pipeline.io.text import write_text_atomic

DONE_MARKER = ".dmlimits_done"
HYDRA_DIR = ".hydra"
"""The folder of a job's composed config (`config.yaml`) and Hydra's own (`hydra.yaml`)."""
MULTIRUN_FILE = "multirun.yaml"
"""What Hydra writes at the top of a multirun directory."""
EXIT_NOT_OK = 1
EXIT_ERROR = 2


def mark_done(job_dir: Path | str, detail: Mapping[str, Any] | None = None) -> Path:
    """Mark a sweep job as finished: write `<job_dir>/.dmlimits_done` (JSON), atomically."""
    content = {"finished_at": datetime.now(UTC).isoformat(timespec="seconds"), **(detail or {})}
    return write_text_atomic(
        Path(job_dir) / DONE_MARKER, json.dumps(content, sort_keys=True) + "\n"
    )


def _jobs(sweep: Path) -> list[int]:
    """The job numbers of a Hydra multirun directory: its numbered subdirectories (a job killed
    as it started may not have its `.hydra` folder yet)."""
    return sorted(int(p.name) for p in sweep.iterdir() if p.name.isdigit() and p.is_dir())


def failed_jobs(multirun_dir: Path | str) -> tuple[list[int], int]:
    """Job numbers of a Hydra multirun directory without a done marker, and the job count."""
    sweep = Path(multirun_dir)
    if not sweep.is_dir():
        raise OutputError(f"multirun directory {sweep} does not exist")
    jobs = _jobs(sweep)
    return [j for j in jobs if not (sweep / str(j) / DONE_MARKER).is_file()], len(jobs)


def _yaml(path: Path) -> dict[str, Any]:
    """A YAML mapping Hydra wrote, {} when it is missing or unreadable."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def job_roots(job_dir: Path) -> set[Path]:
    """The dataset root one job wrote to: its config's `output.root`, or `output.nightly_root`
    for a nightly run (`output.run_date` set), a relative one taken from the job's working
    directory (`hydra.runtime.cwd`); none when the job's config cannot be read or the root is an
    interpolation."""
    output = _yaml(job_dir / HYDRA_DIR / "config.yaml").get("output")
    if not isinstance(output, dict):
        return set()
    runtime = _yaml(job_dir / HYDRA_DIR / "hydra.yaml").get("hydra", {}).get("runtime", {})
    cwd = Path(str(runtime.get("cwd") or "."))
    root = output.get("nightly_root" if output.get("run_date") is not None else "root")
    return (
        {(cwd / Path(root).expanduser()).resolve()}
        if isinstance(root, str) and "${" not in root
        else set()
    )


def check_multirun(root: Path, multirun_dir: Path) -> None:
    """OutputError (one line) unless `multirun_dir` is a Hydra multirun whose jobs wrote to the
    dataset `root`: it has Hydra's `multirun.yaml` or a job directory with its `.hydra` folder,
    and the jobs whose configs name their root name `root` (or the nightly root above a
    `run_date=` partition)."""
    if not multirun_dir.is_dir():
        raise OutputError(f"multirun directory {multirun_dir} does not exist")
    jobs = _jobs(multirun_dir)
    hydra = [j for j in jobs if (multirun_dir / str(j) / HYDRA_DIR).is_dir()]
    if not hydra and not (multirun_dir / MULTIRUN_FILE).is_file():
        raise OutputError(
            f"--multirun {multirun_dir} is not a Hydra multirun directory: it holds no "
            f"{MULTIRUN_FILE} and no job directory (0, 1, ... with a {HYDRA_DIR} folder); give "
            "the hydra.sweep.dir of the run"
        )
    wrote = set().union(*(job_roots(multirun_dir / str(j)) for j in hydra))
    target = root.resolve()
    nightly = target.name.startswith("run_date=") and target.parent in wrote
    if wrote and target not in wrote and not nightly:
        named = ", ".join(sorted(str(p) for p in wrote))
        raise OutputError(
            f"--multirun {multirun_dir} is not a multirun of the dataset {root}: its jobs wrote "
            f"to {named}"
        )


@dataclass(frozen=True, slots=True)
class SweepReport:
    """A dataset's gather report and, when a multirun directory was given, its jobs."""

    dataset: GatherReport
    n_jobs: int | None = None
    """Job directories in the multirun directory; None when none was given."""
    failed_jobs: tuple[int, ...] = ()

    @property
    def ok(self) -> bool:
        """There is a dataset, it is ok, and no job failed."""
        return self.dataset.ok and not self.dataset.empty and not self.failed_jobs

    def format(self) -> str:
        """The report as a few lines of text: the dataset's, the jobs, the verdict."""
        lines = self.dataset.findings()
        if self.n_jobs is not None:
            failed = ", ".join(map(str, self.failed_jobs)) or "none"
            lines.insert(1, f"jobs: {self.n_jobs}, failed (no {DONE_MARKER}): {failed}")
        if self.dataset.empty:  # first after the counts, before what was ignored
            lines.insert(
                1,
                f"no dataset: {self.dataset.root} holds no part of any table and no run_date= "
                "partition (give the output.root of a run)",
            )
        return "\n".join([*lines, "ok" if self.ok else "NOT OK"])


def gather_sweep(root: Path | str, multirun_dir: Path | str | None = None) -> SweepReport:
    """`gather` of the dataset root and, with `multirun_dir`, its jobs without a done marker."""
    dataset = gather(root)
    if multirun_dir is None:
        return SweepReport(dataset)
    check_multirun(Path(root), Path(multirun_dir))
    failed, n_jobs = failed_jobs(multirun_dir)
    return SweepReport(dataset, n_jobs, tuple(failed))


def main(argv: Sequence[str] | None = None) -> int:
    """Print the report of a dataset root (module docstring); 0 ok, 1 not ok, 2 an error."""
    parser = argparse.ArgumentParser(
        prog="dmlimits-gather",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("root", type=Path, help="dataset root (holds points/ and thresholds/)")
    parser.add_argument("--multirun", type=Path, default=None, help="Hydra multirun sweep dir")
    args = parser.parse_args(argv)
    try:
        report = gather_sweep(args.root, args.multirun)
    except OutputError as exc:
        print(f"dmlimits-gather: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    print(report.format())
    return 0 if report.ok else EXIT_NOT_OK


if __name__ == "__main__":
    raise SystemExit(main())
