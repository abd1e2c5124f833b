"""An experiment that sweeps runs its grid of jobs with or without -m (its hydra.mode is MULTIRUN)."""

from __future__ import annotations

from pathlib import Path

from pipeline.io.dataset import read_thresholds
from tests.command import dmlimits


def test_experiment_without_multirun_flag_runs_every_job(tmp_path: Path) -> None:
    """`dmlimits +experiment=base_comparison` runs the three GPUs the file sweeps, not one job."""
    root = tmp_path / "data"
    result = dmlimits(
        tmp_path,
        "+experiment=base_comparison",
        "scaling.grid.max_d_model=16384",
        f"output.root={root}",
    )
    assert result.returncode == 0, result.stderr
    assert sorted(read_thresholds(root)["hardware"].to_list()) == [
        "a100_sxm",
        "h100_sxm",
        "v100_sxm",
    ]
