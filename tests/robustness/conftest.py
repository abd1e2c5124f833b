"""Running the real `dmlimits` command for the robustness tests, and looking at what it left."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from tests.command import command_env, dmlimits, dmlimits_argv

TINY_GRID = ("scaling.grid.kind=list", "scaling.grid.d_models=[12288,16384]")
"""Two model sizes: a series in a fraction of a second."""

cli_command = dmlimits_argv
cli_env = command_env


def run_cli(cwd: Path, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Run `dmlimits ARGS` in ``cwd`` and wait for it."""
    return dmlimits(cwd, *args)


def tree(root: Path) -> list[str]:
    """Every path under ``root``, relative and sorted (hidden files included)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))
