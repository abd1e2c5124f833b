"""The command-line check: --config-dir anywhere on the line, a multirun's jobs as Hydra's
basic sweeper makes them."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf

from pipeline.cli.check import check_command_line, split_jobs
from pipeline.schema import CONF_DIR
from pipeline.schema.errors import ConfigError, InputError

TINY_GRID = "scaling.grid.max_d_model=16384"


@pytest.fixture
def presets(tmp_path: Path) -> Path:
    """A user directory with a hardware preset of its own, `team_h100`."""
    folder = tmp_path / "presets" / "hardware"
    folder.mkdir(parents=True)
    h100 = (CONF_DIR / "hardware" / "h100_sxm.yaml").read_text()
    (folder / "team_h100.yaml").write_text(h100.replace("name: h100_sxm", "name: team_h100"))
    return folder.parent


@pytest.mark.parametrize("where", [0, 1, 2, 3])
def test_config_dir_is_read_wherever_it_stands(tmp_path: Path, presets: Path, where: int) -> None:
    """--config-dir before, between or after the overrides adds the same user directory."""
    argv = ["hardware=team_h100", TINY_GRID, f"output.root={tmp_path / 'data'}"]
    argv[where:where] = ["--config-dir", str(presets)]
    checked = check_command_line(argv)
    assert checked is not None
    assert OmegaConf.select(checked.composed, "hardware.name") == "team_h100"


def test_split_jobs_refuses_an_interval() -> None:
    """An interval sweep, which only a sampling sweeper plugin takes, is refused by name."""
    parsed = OverridesParser.create().parse_overrides(["x=interval(0,1)"])
    with pytest.raises(InputError, match=r"x=interval\(0,1\)"):
        split_jobs(parsed)


def test_multirun_checks_each_value_once(tmp_path: Path) -> None:
    """A 3 x 2 multirun is checked by the jobs that bring a value not seen yet: four of six."""
    seen: list[str] = []
    check_command_line(
        ["-m", "hardware=v100_sxm,a100_sxm,h100_sxm", "scaling=dense,sparse", TINY_GRID,
         f"output.root={tmp_path}", "execution.ahead=false"],
        lambda full, _plan: seen.append(
            "{hardware}/{scaling}".format(**full.hydra.runtime.choices)
        ),
    )  # fmt: skip
    assert seen == ["v100_sxm/dense", "v100_sxm/sparse", "a100_sxm/dense", "h100_sxm/dense"]


def test_nightly_check_says_what_it_plans(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A nightly's check, which expands its sweep and design for seconds, names each step it
    starts as the check's; an ordinary run's check prints nothing (its errors stay one line)."""
    design = (
        "++forecast.uncertainty={samples: 8, seed: 1, inputs: "
        "{hardware.u_eff: {distribution: uniform, low: 0.6, high: 0.8}}}"
    )
    check_command_line([TINY_GRID, f"output.root={tmp_path / 'data'}"])
    assert capsys.readouterr().err == ""
    nightly = [
        "+experiment=nightly",
        "forecast.moving_frontier_years=[2030,2031]",
        design,
        f"output.nightly_root={tmp_path / 'nightly'}",
        "output.run_date=2025-02-01",
    ]
    check_command_line(nightly)
    lines = capsys.readouterr().err.splitlines()
    assert lines, "a nightly's check says what it plans"
    assert all(line.startswith("[dmlimits] checking the command line: ") for line in lines)
    assert "expanding the sweep" in lines[0]
    assert lines[-2:] == [
        "[dmlimits] checking the command line: uncertainty design: fitting the hardware trends "
        "its rates centre on",
        "[dmlimits] checking the command line: uncertainty design: 8 series of the run's config",
    ]


@pytest.mark.parametrize(
    ("given", "hint"),
    [
        ("output.root={data}", "set output.nightly_root instead"),
        ("++output.resume=true", "nothing to resume"),
    ],
)
def test_nightly_refuses_output_keys_it_does_not_read(
    tmp_path: Path, given: str, hint: str
) -> None:
    """A nightly run writes its partition under output.nightly_root from a fresh staging
    directory: an output.root or output.resume on its command line would change nothing, so
    the check names it, where a plain run takes both."""
    override = given.format(data=tmp_path / "data")
    check_command_line([TINY_GRID, override])
    nightly = [
        "+experiment=nightly",
        TINY_GRID,
        f"output.nightly_root={tmp_path / 'nightly'}",
        "output.run_date=2025-02-01",
        override,
    ]
    with pytest.raises(ConfigError, match=rf"output\.\w+ = .*{hint}") as err:
        check_command_line(nightly)
    assert err.value.key == override.lstrip("+").split("=")[0]
