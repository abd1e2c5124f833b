"""A concrete run's inputs through the command's check: every run key overridable, a run key
without a run preset, group choices a run does not use and run files the schema refuses, each
one line naming the key (docs/configuration.md, "One concrete run")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from pipeline.cli.main import EXIT_BAD_INPUT
from pipeline.schema import CONF_DIR
from pipeline.schema.run import RUN_KEYS
from tests.robustness.test_bad_input import (
    assert_one_line_error,
    assert_one_line_message,
    check_in_process,
)

RUN_INPUTS = [
    # (id, overrides, the key the one line names, a fragment of its reason)
    ("batch_choice_beside_a_run", ["run=gpt_1t", "batch=deepseek"], "batch", "has its own batch"),
    ("fixed_layout_beside_a_run", ["run=gpt_1t", "parallelism=fixed"], "parallelism",
     "has its own layout"),
    ("scaling_choice_beside_a_run", ["run=gpt_1p7b", "scaling=sparse"], "scaling",
     "has its own model"),
    ("grid_switch_beside_a_run", ["run=gpt_1p7b", "physics=realistic", "physics.recompute=none"],
     "physics.recompute", "run.recompute"),
    ("grid_width_beside_a_run", ["run=gpt_1p7b", "scaling.grid.max_d_model=20000"],
     "scaling.grid.max_d_model", "is not read by run=gpt_1p7b"),
    ("tp_not_dividing_kv_heads", ["run=gpt_7p5b", "run.kv_heads=2"], "run.tp", "kv_heads"),
    ("dp_not_dividing_the_batch", ["run=gpt_1p7b", "run.dp=768"], "run.dp",
     "global_batch_seqs = 512"),
    ("batch_of_more_tokens_than_the_run", ["run=gpt_7p5b", "run.global_batch_seqs=2199023255552"],
     "run.global_batch_seqs", "not one whole step"),
    ("run_key_appended_without_a_run", ["+run.tp=8"], "run.tp", "no run is chosen"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "key", "fragment"), [pytest.param(a, k, f, id=i) for i, a, k, f in RUN_INPUTS]
)
def test_run_input_is_refused_naming_its_key(
    args: list[str],
    key: str,
    fragment: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each bad run input stops the command with one line naming the key that is wrong."""
    code, err = check_in_process(args, tmp_path, monkeypatch, capsys)
    assert code == EXIT_BAD_INPUT
    assert_one_line_error(err, key, fragment)


def test_run_key_without_a_run_preset_says_a_preset_is_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`run.tp=8` without `run=` says a run preset is needed, not "use +run.tp=8"."""
    code, err = check_in_process(["run.tp=8"], tmp_path, monkeypatch, capsys)
    assert code == EXIT_BAD_INPUT
    assert_one_line_message(err, ["run.tp=8", "no run is chosen", "run=<preset>"])


@pytest.mark.parametrize("key", sorted(RUN_KEYS - {"name"}))
def test_run_every_documented_key_is_overridable(
    key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every run key of docs/configuration.md is in every shipped run preset, so `run.<key>=`
    overrides it (GPT 1T's own value given back, `run.tokens=450e9` for tokens)."""
    own = yaml.safe_load((CONF_DIR / "run" / "gpt_1t.yaml").read_text())[key]
    value = {"tokens": "450e9", "gpu_budget": "null"}.get(key, json.dumps(own))
    args = ["run=gpt_1t", f"run.{key}={value}"]
    code, err = check_in_process(args, tmp_path, monkeypatch, capsys)
    assert (code, err) == (0, "")


def test_run_file_that_is_a_directory_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `run/mine.yaml` that is a directory in a user config dir is one line naming it."""
    presets = tmp_path / "presets"
    (presets / "run" / "mine.yaml").mkdir(parents=True)
    (tmp_path / "work").mkdir()
    args = ["--config-dir", str(presets), "run=mine"]
    code, err = check_in_process(args, tmp_path / "work", monkeypatch, capsys)
    assert code == EXIT_BAD_INPUT
    assert_one_line_message(err, [str(presets / "run" / "mine.yaml"), "is not a file"])


def test_user_config_symlink_loop_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A config file that is a symbolic link to itself is one line naming it, not a traceback."""
    presets = tmp_path / "presets"
    (presets / "hardware").mkdir(parents=True)
    (presets / "hardware" / "loop.yaml").symlink_to("loop.yaml")
    (tmp_path / "work").mkdir()
    code, err = check_in_process(
        ["--config-dir", str(presets)], tmp_path / "work", monkeypatch, capsys
    )
    assert code == EXIT_BAD_INPUT
    assert_one_line_message(err, [str(presets / "hardware" / "loop.yaml"), "symbolic link"])
