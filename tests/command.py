"""Running the `dmlimits` command as a user would, and reading its dataset back for comparison."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl

from pipeline.io.read import read_or_empty

VOLATILE = ["run_id", "created_at"]
"""Columns that differ between two runs of the same config."""


def dmlimits_argv(*args: str) -> list[str]:
    """The command line of `dmlimits args...` with this interpreter."""
    return [sys.executable, "-m", "pipeline", *args]


def command_env() -> dict[str, str]:
    """The environment of a run: Hydra's short error messages."""
    return {**os.environ, "HYDRA_FULL_ERROR": "0"}


def dmlimits(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run `dmlimits args...` in `cwd` and wait for it."""
    return subprocess.run(
        dmlimits_argv(*args),
        cwd=cwd,
        env=command_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def stable_table(root: Path, table: str) -> pl.DataFrame:
    """A table of the dataset in its sorted order, without the columns that change per run."""
    return read_or_empty(root, table).drop(VOLATILE)


def python_output(code: str) -> str:
    """What `code` prints, run by this interpreter in a fresh process (an import probe)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
