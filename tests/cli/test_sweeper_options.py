"""dmlimits' sweeper refuses a bad option of its own (``hydra.sweeper``) in one line before
Hydra starts, never with a traceback (hydra_plugins/dmlimits/sweeper.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra.errors import HydraException

from hydra_plugins.dmlimits.sweeper import DmlimitsSweeper
from pipeline.cli.main import EXIT_BAD_INPUT
from tests.robustness.test_bad_input import assert_one_line_message, check_in_process

BAD_OPTIONS = [
    # (id, override, fragments of the one line)
    ("batch_size_zero", "hydra.sweeper.max_batch_size=0", ["hydra.sweeper.max_batch_size = 0"]),
    ("batch_size_text", "hydra.sweeper.max_batch_size=abc", ["max_batch_size = 'abc'"]),
    ("batch_size_fraction", "hydra.sweeper.max_batch_size=1.5", ["max_batch_size = 1.5"]),
    ("params_text", "hydra.sweeper.params=foo", ["hydra.sweeper.params = 'foo'", "mapping"]),
    ("params_list", "hydra.sweeper.params=[1,2]", ["hydra.sweeper.params = [1, 2]"]),
    ("params_value_list", "hydra.sweeper.params={hardware:[1]}", ["hydra.sweeper.params.hardware"]),
    ("unknown_option", "+hydra.sweeper.foo=1", ["hydra.sweeper.foo", "unknown option"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("override", "fragments"), [pytest.param(o, f, id=i) for i, o, f in BAD_OPTIONS]
)
def test_sweeper_option_is_refused_in_one_line(
    override: str,
    fragments: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A bad ``hydra.sweeper`` option of a multirun is one line naming it, exit 2."""
    args = ["-m", override, "scaling.grid.max_d_model=16384"]
    code, err = check_in_process(args, tmp_path, monkeypatch, capsys)
    assert code == EXIT_BAD_INPUT
    assert_one_line_message(err, fragments)


def test_sweeper_refuses_a_bad_option_when_instantiated() -> None:
    """Used without the command's check, the sweeper itself refuses max_batch_size = 0 with
    Hydra's exception, not an assertion."""
    with pytest.raises(HydraException, match="max_batch_size = 0"):
        DmlimitsSweeper(max_batch_size=0)
