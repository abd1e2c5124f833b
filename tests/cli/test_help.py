"""`dmlimits --help`: Hydra's app help describes the tool, its groups, companions and exit codes."""

from __future__ import annotations

from pathlib import Path

from pipeline.schema import CONF_DIR
from tests.command import dmlimits


def test_help_lists_groups_companions_and_exit_codes(tmp_path: Path) -> None:
    """The help names every config group with its presets, every companion command the package
    installs, and the exit status."""
    result = dmlimits(tmp_path, "--help")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    for group in ("hardware", "scaling", "batch", "parallelism", "sweep", "experiment"):
        options = sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))
        assert f"{group}: {', '.join(options)}" in text
    for command in (*_companion_commands(), "--config-dir"):
        assert command in text
    assert "2 bad input" in text
    assert list(tmp_path.iterdir()) == []


def _companion_commands() -> list[str]:
    """The console scripts the installed distribution declares beside `dmlimits` itself."""
    from importlib.metadata import distribution

    scripts = distribution("dmlimits").entry_points.select(group="console_scripts")
    return sorted(ep.name for ep in scripts if ep.name != "dmlimits")


def test_help_lists_user_presets(tmp_path: Path) -> None:
    """With --config-dir, the help lists the user's presets among the built-in ones."""
    (tmp_path / "presets" / "hardware").mkdir(parents=True)
    (tmp_path / "presets" / "hardware" / "team_h100.yaml").write_text("name: team_h100\n")
    result = dmlimits(tmp_path, "--config-dir", str(tmp_path / "presets"), "--help")
    assert result.returncode == 0, result.stderr
    assert "team_h100" in result.stdout


def test_version_names_dmlimits_and_hydra(tmp_path: Path) -> None:
    """`dmlimits --version` prints the package's version (as installed) and Hydra's."""
    from importlib.metadata import version

    import hydra

    result = dmlimits(tmp_path, "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"dmlimits {version('dmlimits')} (Hydra {hydra.__version__})"
    assert list(tmp_path.iterdir()) == []
