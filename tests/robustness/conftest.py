"""Running the real `dmlimits` command for the robustness tests, and looking at what it left."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

CLI_TIMEOUT_S = 300
TINY_GRID = ("scaling.grid.kind=list", "scaling.grid.d_models=[12288,16384]")
"""Two model sizes: a series in a fraction of a second."""


def cli_command(*args: str) -> list[str]:
    """The command line of `dmlimits ARGS` (as `python -m pipeline`, the installed entry point)."""
    return [sys.executable, "-m", "pipeline", *args]


def cli_env() -> dict[str, str]:
    """The environment of a CLI run: Hydra's short error reports, as a user gets them."""
    return {**os.environ, "HYDRA_FULL_ERROR": "0"}


def run_cli(cwd: Path, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Run `dmlimits ARGS` in ``cwd`` and wait for it."""
    return subprocess.run(
        cli_command(*args),
        cwd=cwd,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


def tree(root: Path) -> list[str]:
    """Every path under ``root``, relative and sorted (hidden files included)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))
