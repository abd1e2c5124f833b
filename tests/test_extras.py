"""Commands of an extra that is not installed say which extra to install, in one line."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import pipeline.bi
import pipeline.report
from pipeline.extras import EXIT_MISSING_EXTRA, missing_extra

Entry = Callable[[Sequence[str] | None], int]


@pytest.mark.parametrize(
    ("entry", "prog", "library", "module", "extra"),
    [
        (pipeline.bi.command, "dmlimits-bi", "duckdb", "pipeline.bi.views", "bi"),
        (
            pipeline.report.command,
            "dmlimits-report",
            "matplotlib",
            "pipeline.report.main",
            "report",
        ),
    ],
)
def test_command_without_its_extra_names_it(
    entry: Entry,
    prog: str,
    library: str,
    module: str,
    extra: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without its library the command prints one line naming the extra and exits non-zero."""
    for name in [library, *(m for m in sys.modules if m.startswith(f"{library}."))]:
        monkeypatch.setitem(sys.modules, name, None)  # `import library(.x)` now fails
    monkeypatch.delitem(sys.modules, module, raising=False)  # so the command imports it anew
    args = [str(tmp_path), "--db" if extra == "bi" else "--out", str(tmp_path / "out")]
    assert entry(args) == EXIT_MISSING_EXTRA
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"{prog}: error: needs {library}, which the '{extra}' extra installs: "
        f"pip install 'dmlimits[{extra}]'"
    ]
    assert not (tmp_path / "out").exists()


def test_missing_extra_raises_other_missing_modules() -> None:
    """A module no extra provides is a bug, raised again rather than blamed on an extra."""
    with pytest.raises(ModuleNotFoundError):
        missing_extra("dmlimits-bi", ModuleNotFoundError("No module named 'nope'", name="nope"))
