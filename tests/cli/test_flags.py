"""Hydra's options read anywhere on the command line, and handed to Hydra first."""

from __future__ import annotations

import pytest

from pipeline.cli.flags import hydra_argv, read_flags
from pipeline.schema.errors import InputError


def test_hydra_argv_puts_options_before_overrides() -> None:
    """Hydra is handed the options first, each with its value, then the overrides in order."""
    argv = ["a=1", "--config-dir", "/my/presets", "b=2", "-m", "c=3,4"]
    assert hydra_argv(argv) == ["--multirun", "--config-dir", "/my/presets", "a=1", "b=2", "c=3,4"]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["a=1", "--bogus", "b=2"], "'--bogus'"),
        (["a=1", "--config-dir"], "--config-dir"),
        (["--cfg", "everything"], "everything"),
    ],
)
def test_read_flags_names_the_bad_option(argv: list[str], named: str) -> None:
    """An unknown option, an option without its value or a bad choice is named in one line."""
    with pytest.raises(InputError) as caught:
        read_flags(argv)
    message = str(caught.value)
    assert named in message
    assert "\n" not in message
