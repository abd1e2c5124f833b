"""A user's own presets in a directory of theirs work wherever built-in ones do (docs/configuration.md, "Your own presets")."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.io.dataset import read_thresholds
from pipeline.schema import CONF_DIR
from tests.command import dmlimits

TINY_GRID = "scaling.grid.max_d_model=16384"
"""Three paper-grid sizes: a series in well under a second."""


@pytest.fixture
def presets(tmp_path: Path) -> Path:
    """A user directory with a hardware, a batch, a sweep and an experiment preset of its own."""
    folder = tmp_path / "presets"
    for group in ("hardware", "batch", "sweep", "experiment"):
        (folder / group).mkdir(parents=True)
    h100 = (CONF_DIR / "hardware" / "h100_sxm.yaml").read_text()
    (folder / "hardware" / "team_h100.yaml").write_text(
        h100.replace("name: h100_sxm", "name: team_h100").replace(
            "hbm_bandwidth_gb_per_s: 3352", "hbm_bandwidth_gb_per_s: 4000"
        )
    )
    constant = (CONF_DIR / "batch" / "constant.yaml").read_text()
    (folder / "batch" / "team_constant.yaml").write_text(
        constant.replace("name: constant", "name: team_constant")
    )
    (folder / "sweep" / "team.yaml").write_text(
        "# @package _global_\nsweep:\n  choices:\n    batch: [critical, team_constant]\n"
    )
    (folder / "experiment" / "team.yaml").write_text(
        "# @package _global_\nhydra:\n  mode: MULTIRUN\n  sweeper:\n"
        "    params:\n      hardware: team_h100,a100_sxm\n"
    )
    return folder


def hardware_names(root: Path) -> list[str]:
    """The hardware of every series written under the dataset root, sorted."""
    return sorted(read_thresholds(root)["hardware"].to_list())


def test_config_dir_after_the_overrides_runs_the_preset(tmp_path: Path, presets: Path) -> None:
    """`dmlimits hardware=mine ... --config-dir DIR output.root=...`: the option may stand
    anywhere, and every override after it is applied too."""
    root = tmp_path / "data"
    result = dmlimits(
        tmp_path,
        "hardware=team_h100",
        TINY_GRID,
        "--config-dir",
        str(presets),
        f"output.root={root}",
    )
    assert result.returncode == 0, result.stderr
    assert hardware_names(root) == ["team_h100"]


def test_user_preset_runs_from_config_dir(tmp_path: Path, presets: Path) -> None:
    """`--config-dir DIR hardware=mine` runs the user's preset in a single run."""
    root = tmp_path / "data"
    result = dmlimits(
        tmp_path,
        "--config-dir",
        str(presets),
        "hardware=team_h100",
        TINY_GRID,
        f"output.root={root}",
    )
    assert result.returncode == 0, result.stderr
    assert hardware_names(root) == ["team_h100"]


@pytest.mark.slow
def test_user_preset_runs_in_multirun_and_user_experiment(tmp_path: Path, presets: Path) -> None:
    """A user's experiment sweeping a user preset and a built-in one runs both jobs."""
    root = tmp_path / "data"
    result = dmlimits(
        tmp_path, "--config-dir", str(presets), "+experiment=team", TINY_GRID, f"output.root={root}"
    )
    assert result.returncode == 0, result.stderr
    assert hardware_names(root) == ["a100_sxm", "team_h100"]


def test_user_preset_is_a_sweep_choice_through_searchpath(tmp_path: Path, presets: Path) -> None:
    """A user sweep file choosing a user batch preset re-composes with hydra.searchpath."""
    root = tmp_path / "data"
    result = dmlimits(
        tmp_path,
        f"hydra.searchpath=[file://{presets}]",
        "hardware=team_h100",
        "sweep=team",
        TINY_GRID,
        f"output.root={root}",
    )
    assert result.returncode == 0, result.stderr
    batches = sorted(read_thresholds(root)["batch_law"].to_list())
    assert batches == ["critical", "team_constant"]
    assert hardware_names(root) == ["team_h100", "team_h100"]


@pytest.mark.slow
def test_user_preset_runs_nightly(tmp_path: Path, presets: Path) -> None:
    """A nightly run of a user preset publishes its dated partition."""
    root = tmp_path / "nightly"
    result = dmlimits(
        tmp_path,
        "--config-dir",
        str(presets),
        "+experiment=nightly",
        "sweep=team",
        "hardware=team_h100",
        f"output.nightly_root={root}",
        "output.run_date=2026-01-02",
        TINY_GRID,
    )
    assert result.returncode == 0, result.stderr
    assert (root / "run_date=2026-01-02").is_dir()


def test_user_preset_is_checked_like_a_built_in_one(tmp_path: Path, presets: Path) -> None:
    """A bad value in a user preset stops the run with the schema's one line, writing nothing."""
    path = presets / "hardware" / "team_h100.yaml"
    path.write_text(path.read_text().replace("u_eff: 0.70", "u_eff: 1.5"))
    result = dmlimits(
        tmp_path,
        "--config-dir",
        str(presets),
        "hardware=team_h100",
        f"output.root={tmp_path / 'd'}",
    )
    assert result.returncode == 2
    assert result.stderr.startswith("dmlimits: error: hardware.u_eff = 1.5: ")
    assert len(result.stderr.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["presets"]
