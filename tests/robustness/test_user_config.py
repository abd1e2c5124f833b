"""Broken user config files and errors after Hydra starts: one line naming the input, exit 2, nothing written.

A user's directory (--config-dir) holds a preset or sweep file with a YAML syntax error, a tab or
a duplicate key, or a file named like a built-in preset (which Hydra would silently ignore); the
message names the file and, for YAML, the line. A mistake caught once Hydra has made its run
directory removes that directory again (docs/configuration.md: a mistake stops the run before any output).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hydra.core.global_hydra import GlobalHydra

import pipeline.catalog
from pipeline.cli import main as cli_main
from pipeline.cli.main import EXIT_BAD_INPUT
from pipeline.schema import CONF_DIR, ConfigError
from tests.robustness.conftest import TINY_GRID, run_cli, tree
from tests.robustness.test_bad_input import assert_one_line_error, check_in_process

ALIAS_BOMB = (
    "name: bomb\na: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n"
        for p, c in zip("abcdefg", "bcdefgh", strict=True)
    )
    + f"i: [{', '.join(['*h'] * 9)}]\n"
)
"""Nine lines of anchors each repeating the one before nine times: 9^9 values once expanded."""

USER_FILES = [
    # (id, file under the user directory, its text, override using it, "file:line" expected)
    ("preset_syntax_error", "hardware/broken.yaml", "name: broken\nsms: [1, 2\n",
     "hardware=broken", "hardware/broken.yaml:3:"),
    ("preset_tab", "hardware/tabbed.yaml", "name: tabbed\n\tsms: 132\n",
     "hardware=tabbed", "hardware/tabbed.yaml:2:"),
    ("preset_duplicate_key", "hardware/twice.yaml", "name: twice\nsms: 132\nsms: 114\n",
     "hardware=twice", "hardware/twice.yaml:3:"),
    ("sweep_syntax_error", "sweep/broken.yaml",
     "# @package _global_\nsweep:\n  choices:\n    batch: [critical\n",
     "sweep=broken", "sweep/broken.yaml:5:"),
    ("sweep_duplicate_key", "sweep/twice.yaml",
     "# @package _global_\nsweep:\n  axes: {}\n  axes: {}\n", "sweep=twice", "sweep/twice.yaml:4:"),
    ("experiment_tab", "experiment/tabbed.yaml", "# @package _global_\nhydra:\n\tmode: MULTIRUN\n",
     "+experiment=tabbed", "experiment/tabbed.yaml:3:"),
    ("alias_bomb", "hardware/bomb.yaml", ALIAS_BOMB, "hardware=bomb", "hardware/bomb.yaml:7:"),
    ("value_nested_400_deep", "hardware/deep.yaml",
     "defaults:\n  - h100_sxm\n  - _self_\nname: deep\nsms: " + "[" * 400 + "1" + "]" * 400 + "\n",
     "hardware=deep", "hardware/deep.yaml:5:"),
    ("latin1_byte", "hardware/latin.yaml", b"name: latin\n# caf\xe9\nsms: 1\n", "hardware=latin",
     "hardware/latin.yaml:2:"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("relative", "text", "override", "where"),
    [pytest.param(r, t, o, w, id=i) for i, r, t, o, w in USER_FILES],
)
def test_user_file_with_bad_yaml_is_one_line_naming_file_and_line(
    tmp_path: Path, relative: str, text: str | bytes, override: str, where: str
) -> None:
    """A YAML mistake in a user file: exit 2, one line `<file>:<line>:<column>: <problem>`."""
    presets = tmp_path / "presets"
    (presets / relative).parent.mkdir(parents=True)
    (presets / relative).write_bytes(text if isinstance(text, bytes) else text.encode())
    cwd = tmp_path / "work"
    cwd.mkdir()
    result = run_cli(cwd, ["--config-dir", str(presets), override, f"output.root={cwd / 'data'}"])
    assert result.returncode == EXIT_BAD_INPUT, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"dmlimits: error: {presets / where}"), lines[0]
    assert tree(cwd) == []


SHIPPED_CATALOG = (Path(pipeline.catalog.__file__).parent / "accelerators.csv").read_bytes()
CATALOG_FILES = [
    # (id, the user's catalog file, fragment of the one error line; "" when it is read)
    ("utf8_with_bom", b"\xef\xbb\xbf" + SHIPPED_CATALOG, ""),
    ("crlf_line_ends", SHIPPED_CATALOG.replace(b"\n", b"\r\n"), ""),
    ("latin1_byte", SHIPPED_CATALOG.replace(b"first shipments", b"premi\xe8res livraisons", 1),
     "accelerators.csv:2: byte 0xe8 is not UTF-8"),
    ("utf16", SHIPPED_CATALOG.decode().encode("utf-16"), "byte 0xff is not UTF-8"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("data", "fragment"), [pytest.param(d, f, id=i) for i, d, f in CATALOG_FILES]
)
def test_user_catalog_in_any_encoding_is_read_or_refused_in_one_line(
    data: bytes,
    fragment: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A spreadsheet's UTF-8 (byte-order mark, CRLF) is read; another encoding is one line."""
    catalog = tmp_path / "accelerators.csv"
    catalog.write_bytes(data)
    args = ["hardware=projected", "hardware.year=2030", f"hardware.catalog={catalog}", *TINY_GRID]
    (tmp_path / "work").mkdir()
    code, err = check_in_process(args, tmp_path / "work", monkeypatch, capsys)
    if not fragment:
        assert (code, err) == (0, "")
        return
    assert code == EXIT_BAD_INPUT
    assert_one_line_error(err, "hardware.catalog", fragment)


def test_user_file_shadowing_a_built_in_preset_is_refused(tmp_path: Path) -> None:
    """A user hardware/h100_sxm.yaml, which Hydra would ignore for the built-in, is an error naming it."""
    presets = tmp_path / "presets"
    (presets / "hardware").mkdir(parents=True)
    shadow = presets / "hardware" / "h100_sxm.yaml"
    shadow.write_text((CONF_DIR / "hardware" / "h100_sxm.yaml").read_text())
    cwd = tmp_path / "work"
    cwd.mkdir()
    result = run_cli(cwd, ["--config-dir", str(presets), f"output.root={cwd / 'data'}"])
    assert result.returncode == EXIT_BAD_INPUT
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"dmlimits: error: {shadow}: "), lines[0]
    assert "hardware/h100_sxm" in lines[0]
    assert tree(cwd) == []


@pytest.fixture
def hydra_in_process() -> Iterator[None]:
    """Undo what running Hydra's app in this process leaves: its global state, its log handlers."""
    handlers = list(logging.getLogger().handlers)
    yield
    GlobalHydra.instance().clear()
    root = logging.getLogger()
    for handler in root.handlers[:]:
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()


@pytest.mark.usefixtures("hydra_in_process")
def test_error_after_hydra_started_leaves_no_run_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mistake the job itself finds removes the run directory Hydra made, and exits 2."""

    def refuse(cfg: object, **kwargs: object) -> None:
        raise ConfigError("output.root", "x", "refused by the job (a check only the job makes)")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli_main, "plan_run", refuse)
    monkeypatch.setattr(sys, "argv", ["dmlimits", *TINY_GRID, f"output.root={tmp_path / 'd'}"])
    with pytest.raises(SystemExit) as stopped:
        cli_main.main()
    assert stopped.value.code == EXIT_BAD_INPUT
    assert "refused by the job" in capsys.readouterr().err
    assert tree(tmp_path) == []
