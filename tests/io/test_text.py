"""Atomic text files: the whole new text or the old one, never a temporary file left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.io.text import write_text_atomic


def test_write_text_atomic_replaces_the_file_whole(tmp_path: Path) -> None:
    """Writing over an existing file leaves exactly the new text and no other file."""
    path = tmp_path / "report.md"
    path.write_text("old\n", encoding="utf-8")
    assert write_text_atomic(path, "new ✓\n") == path
    assert path.read_text(encoding="utf-8") == "new ✓\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


def test_write_text_atomic_failure_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed rename keeps the previous text and removes the temporary file."""
    path = tmp_path / "report.json"
    path.write_text("{}\n", encoding="utf-8")

    def fail(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("pipeline.io.text.os.replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_text_atomic(path, '{"a": 1}\n')
    assert path.read_text(encoding="utf-8") == "{}\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
