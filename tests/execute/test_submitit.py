"""Hydra's submitit launcher (the `dmlimits[slurm]` extra) in its local mode runs a multirun."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from pipeline.cli.gather import DONE_MARKER
from tests.command import dmlimits, stable_table


def submitit_installed() -> bool:
    """True when the launcher plugin is importable (find_spec raises if its namespace is absent)."""
    try:
        return importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is not None
    except ModuleNotFoundError:
        return False


pytestmark = [
    pytest.mark.skipif(
        not submitit_installed(),
        reason="hydra-submitit-launcher is not installed (pip install 'dmlimits[slurm]')",
    ),
    pytest.mark.slow,
]


def test_submitit_local_multirun_writes_both_jobs(tmp_path: Path) -> None:
    """A 2-job multirun through submitit_local finishes both jobs into one dataset."""
    root, sweep_dir = tmp_path / "data", tmp_path / "multirun"
    result = dmlimits(
        tmp_path,
        "-m",
        "hydra/launcher=submitit_local",
        "hydra.launcher.timeout_min=5",
        f"hydra.sweep.dir={sweep_dir}",
        "hardware=a100_sxm,h100_sxm",
        "scaling.grid.max_d_model=16384",
        "execution.n_jobs=1",
        f"output.root={root}",
    )
    assert result.returncode == 0, result.stderr
    assert sorted(p.parent.name for p in sweep_dir.glob(f"*/{DONE_MARKER}")) == ["0", "1"]
    thresholds = stable_table(root, "thresholds")
    assert sorted(thresholds["hardware"].to_list()) == ["a100_sxm", "h100_sxm"]
