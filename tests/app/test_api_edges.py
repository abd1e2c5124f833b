"""`pipeline.run` at its edges: an experiment's multirun runs, and overrides it cannot run are
named in one line (docs/api.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

import pipeline
from pipeline.schema import ConfigError
from tests.command import dmlimits

SMALL = "scaling.grid.max_d_model=16384"


def test_api_runs_an_experiments_multirun() -> None:
    """+experiment=base_comparison returns its three series (V100, A100, H100), not H100's alone."""
    result = pipeline.run(["+experiment=base_comparison", SMALL])
    assert sorted(result.thresholds["hardware"].to_list()) == ["a100_sxm", "h100_sxm", "v100_sxm"]


@pytest.mark.parametrize(
    ("overrides", "key", "fragment"),
    [
        pytest.param([5], "overrides[0]", "not int", id="int"),
        pytest.param([SMALL, b"hardware=a100_sxm"], "overrides[1]", "not bytes", id="bytes"),
        pytest.param(["hardware=a100_sxm,h100_sxm"], "overrides[0]", "+sweep.choices.hardware",
                     id="multirun_group"),
        pytest.param(["scaling.duration_months=3,6"], "overrides[0]", "+sweep.axes.scaling",
                     id="multirun_value"),
        pytest.param("hardware=a100_sxm", "overrides", "a list", id="one_string"),
    ],
)  # fmt: skip
def test_api_refuses_an_override_naming_it(overrides: object, key: str, fragment: str) -> None:
    """An override that is not a string or is a multirun value is one line naming it."""
    with pytest.raises(ConfigError) as info:
        pipeline.run(overrides)  # type: ignore[arg-type]
    assert info.value.key == key
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)


def test_api_refuses_an_unknown_root_key() -> None:
    """A misspelt root key (``constraint`` for ``constraints``) is an error, as on the command
    line, not a run without the budget it meant to set."""
    with pytest.raises(ConfigError) as info:
        pipeline.run(["+constraint.max_power_mw=100", SMALL])
    assert info.value.key == "constraint"
    assert "unknown key" in str(info.value)


@pytest.mark.parametrize(
    "choice", ["+sweep.choices.hardware=[a100_sxm]", "hardware=a100_sxm"], ids=["sweep", "group"]
)
def test_api_experiment_keeps_the_users_choice(choice: str) -> None:
    """An experiment's multirun sweeps only the groups the user leaves to it: the user's own
    choice of the group wins, as Hydra's sweeper lets a command-line override win."""
    result = pipeline.run(["+experiment=base_comparison", choice, SMALL])
    assert result.thresholds["hardware"].to_list() == ["a100_sxm"]


def test_api_expands_a_home_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A root given as ``~/x`` is written under the home directory, not under a directory
    named ``~``."""
    monkeypatch.setenv("HOME", str(tmp_path))
    result = pipeline.run([SMALL], write=True, root="~/dataset")
    assert result.report.root == tmp_path / "dataset"
    assert (tmp_path / "dataset").is_dir()


def test_api_result_repr_is_one_line() -> None:
    """A Result shows as one line of table row counts, not every frame."""
    result = pipeline.run([SMALL])
    text = repr(result)
    assert "\n" not in text
    assert f"points {len(result.points):,}" in text
    assert "not written" in text


def test_api_config_dir_adds_the_users_presets(tmp_path: Path) -> None:
    """`config_dir` is the command's --config-dir: a preset of the user's own is a choice of
    its group and of a sweep; without it the preset is unknown; a missing directory is named."""
    presets = tmp_path / "presets" / "hardware"
    presets.mkdir(parents=True)
    (presets / "my_gpu.yaml").write_text(
        "defaults:\n  - h100_sxm\n  - _self_\nname: my_gpu\nhbm_bandwidth_gb_per_s: 5000\n"
    )
    swept = ["+sweep.choices.hardware=[my_gpu,a100_sxm]", SMALL]
    result = pipeline.run(swept, config_dir=tmp_path / "presets")
    assert sorted(result.thresholds["hardware"].to_list()) == ["a100_sxm", "my_gpu"]
    with pytest.raises(ConfigError, match="Could not find 'hardware/my_gpu'"):
        pipeline.run(["hardware=my_gpu", SMALL])
    with pytest.raises(ConfigError) as info:
        pipeline.run([SMALL], config_dir=tmp_path / "none")
    assert info.value.key == "config_dir"
    (presets / "h100_sxm.yaml").write_text("name: h100_sxm\n")
    with pytest.raises(ConfigError, match="built-in preset"):
        pipeline.run([SMALL], config_dir=tmp_path / "presets")


def test_api_experiment_keeps_a_sweep_presets_choice() -> None:
    """A sweep preset's own choice of a group (smoke's two batch laws) is the user's choice too:
    the experiment's multirun of that group (four batch laws) does not replace it."""
    result = pipeline.run(["+experiment=batch_size_comparison", "sweep=smoke"])
    assert sorted(set(result.thresholds["batch_law"].to_list())) == ["constant", "critical"]


@pytest.mark.parametrize(
    ("override", "key", "closest"),
    [
        ("output.rot=x", "output.rot", "did you mean root?"),
        ("+output.rot=x", "output.rot", "did you mean root?"),
        ("hardware.network.latency=1", "hardware.network.latency", "did you mean latency_us?"),
    ],
)
def test_api_names_a_misspelt_key_as_the_command_does(
    override: str, key: str, closest: str, tmp_path: Path
) -> None:
    """A misspelt key, with or without `+`, raises the line `dmlimits` prints after
    "dmlimits: error:" (docs/api.md), naming the key and the keys allowed there, not Hydra's
    advice to append it with `+`."""
    with pytest.raises(ConfigError) as info:
        pipeline.run([override, SMALL])
    assert info.value.key == key
    assert closest in str(info.value)
    assert "Could not override" not in str(info.value)
    command = dmlimits(tmp_path, override, SMALL)
    assert command.returncode == 2
    assert command.stderr.strip() == f"dmlimits: error: {info.value}"
