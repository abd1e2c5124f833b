"""Every config file composes with Hydra and validates through the schema."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf

from pipeline.schema import CONF_DIR, compose_config, load_scenario
from pipeline.schema.projected import projected_name

SCENARIO_GROUPS = ("hardware", "scaling", "batch", "parallelism", "physics", "run")
"""Groups whose `name:` key must equal the file name (the loader reports it)."""
GROUPS = (*SCENARIO_GROUPS, "sweep")
GROUP_FILES = [
    pytest.param(group, path.stem, id=f"{group}={path.stem}")
    for group in GROUPS
    for path in sorted((CONF_DIR / group).glob("*.yaml"))
]
EXPERIMENT_FILES = sorted((CONF_DIR / "experiment").glob("*.yaml"))


def _swept_choices(params: dict[str, str]) -> list[list[str]]:
    """The override lists of a sweep over the scenario groups in ``hydra.sweeper.params``."""
    axes = [
        [f"{group}={choice.strip()}" for choice in str(params[group]).split(",")]
        for group in SCENARIO_GROUPS
        if group in params
    ]
    return [list(combination) for combination in itertools.product(*axes)]


def test_conf_dir_is_repository_conf() -> None:
    """CONF_DIR is the repository's conf/ folder holding the root config.yaml."""
    assert Path(__file__).resolve().parents[2] / "conf" == CONF_DIR
    assert (CONF_DIR / "config.yaml").is_file()


def test_group_files_found_on_disk() -> None:
    """Each scenario group has at least one file, so the parametrized tests are not vacuous."""
    for group in SCENARIO_GROUPS:
        assert list((CONF_DIR / group).glob("*.yaml")), group


@pytest.mark.parametrize(("group", "choice"), GROUP_FILES)
def test_group_file_composes_and_validates(group: str, choice: str) -> None:
    """Selecting any file of any group composes and loads into a Scenario."""
    cfg = compose_config([f"{group}={choice}"])
    scenario = load_scenario(cfg)
    if group in SCENARIO_GROUPS:
        assert cfg[group].name == choice
    hardware = cfg.hardware
    expected = (
        projected_name(hardware.name, hardware.base, hardware.year)
        if "base" in hardware
        else hardware.name
    )
    assert scenario.hardware_name == expected


def test_default_config_loads_paper_setting() -> None:
    """The root defaults give H100 SXM, dense, the critical batch law and a search."""
    scenario = load_scenario(compose_config())
    assert (scenario.hardware_name, scenario.scaling_name) == ("h100_sxm", "dense")
    assert scenario.batch_law_name == "critical"
    assert scenario.fixed_layout is None
    assert len(scenario.d_models) == 55
    assert scenario.duration_s == 7.885e6
    assert scenario.closed_form.duration_s == 7_889_400.0


def test_hydra_output_dirs_stay_under_outputs() -> None:
    """Hydra's run and multirun directories are under outputs/ (git-ignored)."""
    hydra = compose_config(return_hydra_config=True).hydra
    assert OmegaConf.select(hydra, "run.dir").startswith("outputs/")
    assert OmegaConf.select(hydra, "sweep.dir").startswith("outputs/")


@pytest.mark.parametrize("path", EXPERIMENT_FILES, ids=lambda p: p.stem)
def test_experiment_file_composes(path: Path) -> None:
    """Every experiment composes, and every point of its sweep loads into a Scenario."""
    cfg = compose_config([f"+experiment={path.stem}"], return_hydra_config=True)
    node = cfg.hydra.sweeper.params  # null for an experiment that is not a sweep (nightly)
    params = OmegaConf.to_container(node) if node is not None else {}
    assert isinstance(params, dict)
    load_scenario(cfg)
    for overrides in _swept_choices(params):
        load_scenario(compose_config([f"+experiment={path.stem}", *overrides]))


@pytest.mark.parametrize("path", EXPERIMENT_FILES, ids=lambda p: p.stem)
def test_experiment_file_starts_with_package_and_command(path: Path) -> None:
    """An experiment opens with its global package header, then the command that runs it.

    Hydra reads the header only up to the first other comment, so `# @package` comes first.
    """
    lines = path.read_text().splitlines()
    assert lines[0] == "# @package _global_"
    assert lines[1].startswith("# dmlimits ")
    assert f"experiment={path.stem}" in lines[1]


def test_compose_config_inside_running_hydra_restores_it(tmp_path: Path) -> None:
    """compose_config works while another Hydra context is active and leaves it in place."""
    (tmp_path / "outer.yaml").write_text("marker: 1\n")
    with initialize_config_dir(config_dir=str(tmp_path), version_base="1.3"):
        assert compose_config(["hardware=a100_sxm"]).hardware.name == "a100_sxm"
        assert compose(config_name="outer").marker == 1
    assert not GlobalHydra.instance().is_initialized()
