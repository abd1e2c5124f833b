"""A root is a literal path: glob characters in its name never pull in a sibling's files.

Each root below holds the two-series v1 fixture; beside it, a sibling that its name would match
as a glob pattern holds a one-series dataset. Every reader must see two series, no more, no
fewer, for a plain root and for a nightly root.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from pipeline.bi.views import main as bi_main
from pipeline.cli.gather import main as gather_main
from pipeline.io.read import latest_dataset_dir, read_table
from pipeline.report import main as report
from tests.robustness.damage import nightly_copy, plain_copy

ROOTS = [
    # (root name, a sibling its name matches as a glob pattern)
    ("data[1]", "data1"),
    ("data[12]", "data2"),
    ("data*", "data-old"),
    ("dat?", "data"),
    ("data[!x]", "datay"),
    ("**", "deep"),
    ("data{1,2}", "data1"),
    ("it's data", "its data"),
]  # fmt: skip
LAYOUTS: dict[str, Callable[[Path], Path]] = {"plain": plain_copy, "nightly": nightly_copy}
CASES = [
    pytest.param(name, sibling, layout, id=f"{layout}-{name}")
    for name, sibling in ROOTS
    for layout in LAYOUTS
]


def roots(tmp_path: Path, name: str, sibling: str, layout: str) -> Path:
    """The fixture under `name`, and a one-series copy under `sibling` beside it."""
    root = LAYOUTS[layout](tmp_path / name)
    other = LAYOUTS[layout](tmp_path / sibling)
    for path in list(other.rglob("scaling=sparse")):
        shutil.rmtree(path)
    return root


@pytest.mark.parametrize(("name", "sibling", "layout"), CASES)
def test_gather_reads_literal_root(
    name: str, sibling: str, layout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """gather counts the root's own two series, not the sibling's."""
    root = roots(tmp_path, name, sibling, layout)
    assert gather_main([str(root)]) == 0
    assert "2 series, 4 point rows, 2 threshold rows" in capsys.readouterr().out


@pytest.mark.parametrize(("name", "sibling", "layout"), CASES)
def test_bi_reads_literal_root(name: str, sibling: str, layout: str, tmp_path: Path) -> None:
    """The views read the root's own files only."""
    root = roots(tmp_path, name, sibling, layout)
    db = tmp_path / "views.duckdb"
    assert bi_main([str(root), "--db", str(db)]) == 0
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT scaling FROM thresholds ORDER BY scaling").fetchall()
    assert rows == [("dense",), ("sparse",)]


@pytest.mark.parametrize(("name", "sibling", "layout"), CASES)
def test_report_reads_literal_root(
    name: str, sibling: str, layout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report draws the root's own two series."""
    monkeypatch.setattr(report, "CHARTS", report.CHARTS[:1])
    root = roots(tmp_path, name, sibling, layout)
    assert report.main([str(root), "--out", str(tmp_path / "out")]) == 0
    frame = read_table(latest_dataset_dir(root), "thresholds").frame
    assert frame is not None
    assert sorted(frame["scaling"].to_list()) == ["dense", "sparse"]
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "h100_sxm / sparse / critical" in page
