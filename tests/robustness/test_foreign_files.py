"""Readers read only what the writer wrote: a foreign or damaged file is named and skipped.

Every damage of tests/robustness/damage.py is put next to the schema v1 fixture, in a plain
root and inside a nightly root's date, and each reader is run on it: `dmlimits-gather` names the
file (NOT OK when it sits under a part's name), `dmlimits-bi` and `dmlimits-report` name it on
stderr and read exactly the fixture's rows, never a duplicated, null or retyped one.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pipeline
from pipeline.bi.views import main as bi_main
from pipeline.cli.gather import main as gather_main
from pipeline.io.read import read_table
from pipeline.report import main as report
from pipeline.report.main import main as report_main
from tests.nightly.runs import plain_run
from tests.robustness.damage import (
    BAD_PARTS,
    CLEAN_ROWS,
    DATE,
    NIGHTLY_DAMAGES,
    PLAIN_DAMAGES,
    Damage,
    dataset_dir,
    extra_column,
    nightly_copy,
    plain_copy,
    retyped_float_column,
)

LAYOUTS: dict[str, Callable[[Path], Path]] = {"plain": plain_copy, "nightly": nightly_copy}
CASES = [
    pytest.param(layout, name, id=f"{layout}-{name}")
    for name in PLAIN_DAMAGES
    for layout in LAYOUTS
] + [pytest.param("nightly", name, id=f"nightly-{name}") for name in NIGHTLY_DAMAGES]


def damaged(tmp_path: Path, layout: str, name: str) -> tuple[Path, Path]:
    """A root of `layout` with the damage `name` applied; (root, the damaged path)."""
    root = LAYOUTS[layout](tmp_path / "root")
    damage: Damage = {**PLAIN_DAMAGES, **NIGHTLY_DAMAGES}[name]
    return root, damage(root)


def view_rows(db: Path) -> dict[str, int]:
    """Rows of each table view of a DuckDB file."""
    with duckdb.connect(str(db), read_only=True) as con:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in CLEAN_ROWS}


@pytest.mark.parametrize(("layout", "name"), CASES)
def test_gather_names_damaged_file(
    layout: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """gather names the file; a bad file under a part's name makes it NOT OK; rows are the clean ones."""
    root, bad = damaged(tmp_path, layout, name)
    code = gather_main([str(root)])
    out = capsys.readouterr().out
    assert str(bad) in out, out
    assert code == (1 if name in BAD_PARTS else 0), out
    assert f"{CLEAN_ROWS['points']} point rows, {CLEAN_ROWS['thresholds']} threshold rows" in out


@pytest.mark.parametrize(("layout", "name"), CASES)
def test_bi_skips_damaged_file(
    layout: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """dmlimits-bi builds its views from the good parts only and names the skipped file."""
    root, bad = damaged(tmp_path, layout, name)
    db = tmp_path / "out" / "views.duckdb"
    assert bi_main([str(root), "--db", str(db)]) == 0
    err = capsys.readouterr().err
    assert f"skipped {bad}" in err, err
    assert view_rows(db) == CLEAN_ROWS


@pytest.fixture
def one_chart(monkeypatch: pytest.MonkeyPatch) -> None:
    """The report draws its first chart only: these tests are about what it reads."""
    monkeypatch.setattr(report, "CHARTS", report.CHARTS[:1])


@pytest.mark.usefixtures("one_chart")
@pytest.mark.parametrize(("layout", "name"), CASES)
def test_report_skips_damaged_file(
    layout: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """dmlimits-report draws the good parts only and names the skipped file on stderr."""
    root, bad = damaged(tmp_path, layout, name)
    out = tmp_path / "report"
    assert report_main([str(root), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"skipped {bad}" in err, err
    assert (out / "index.html").is_file()
    for table, rows in CLEAN_ROWS.items():
        frame = read_table(dataset_dir(root), table).frame
        assert frame is not None
        assert frame.height == rows


@pytest.mark.usefixtures("one_chart")
def test_report_newest_date_ignores_backup_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A backup folder that sorts after the newest date is never taken for the newest run."""
    root = nightly_copy(tmp_path / "root")
    (root / f"{DATE} (old)").mkdir()
    (root / "run_date=2025-13-45").mkdir()
    assert report_main([str(root), "--out", str(tmp_path / "out")]) == 0
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert DATE in page


def test_reader_reads_schema_v1_fixture(tmp_path: Path) -> None:
    """The v1 fixture reads whole, with every column of today's schema."""
    root = plain_copy(tmp_path / "root")
    for table, rows in CLEAN_ROWS.items():
        result = read_table(root, table)
        assert result.frame is not None
        assert result.frame.height == rows
        assert result.skipped == ()


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_readers_accept_schema_v1_fixture(
    layout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bi, report and gather read the v1 fixture without a skip or a complaint."""
    root = LAYOUTS[layout](tmp_path / "root")
    assert gather_main([str(root)]) == 0
    assert bi_main([str(root), "--db", str(tmp_path / "v.duckdb")]) == 0
    assert view_rows(tmp_path / "v.duckdb") == CLEAN_ROWS
    assert report_main([str(root), "--out", str(tmp_path / "report")]) == 0
    captured = capsys.readouterr()
    assert "skipped" not in captured.err
    assert "ok" in captured.out.splitlines()


@pytest.mark.usefixtures("one_chart")
@pytest.mark.parametrize(
    ("name", "reason"),
    [
        pytest.param("extra_column", "unexpected columns", id="extra_column"),
        pytest.param("newer_version", "schema version 99, this dmlimits reads 1 to", id="newer"),
        pytest.param("retyped_column", "expected", id="retyped_column"),
    ],
)
def test_readers_count_the_rows_they_could_not_read(
    name: str, reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A part skipped for its schema (a newer version, a column too many) is named with its
    reason and the rows it holds, by dmlimits-bi and dmlimits-report alike."""
    root, bad = damaged(tmp_path, "plain", name)
    rows = pq.ParquetFile(bad).metadata.num_rows
    assert rows > 0
    assert bi_main([str(root), "--db", str(tmp_path / "views.duckdb")]) == 0
    assert report_main([str(root), "--out", str(tmp_path / "report")]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if str(bad) in line]
    assert len(lines) == 2, lines
    for line in lines:
        assert reason in line, line
        assert line.endswith(f"({rows} rows not read)"), line


@pytest.mark.usefixtures("one_chart")
def test_readers_say_once_how_many_rows_they_could_not_read_in_total(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With two refused parts in two tables (a column too many, a retyped column), dmlimits-bi,
    dmlimits-report and dmlimits-gather each print one line with their rows and parts in total,
    besides naming each part."""
    root = plain_copy(tmp_path / "root")
    parts = [extra_column(root), retyped_float_column(root)]
    rows = sum(pq.ParquetFile(part).metadata.num_rows for part in parts)
    total = f"not read in total: {rows} rows in 2 parts"
    assert bi_main([str(root), "--db", str(tmp_path / "views.duckdb")]) == 0
    assert report_main([str(root), "--out", str(tmp_path / "report")]) == 0
    assert gather_main([str(root)]) == 1
    captured = capsys.readouterr()
    err, out = captured.err.splitlines(), captured.out.splitlines()
    assert [line for line in err if total in line] == [
        f"dmlimits-bi: {total}",
        f"[dmlimits-report] {total}",
    ]
    assert [line for line in out if total in line] == [total]


@pytest.mark.parametrize("table", ["points", "series", "forecasts"])
def test_missing_table_is_reported_by_every_reader_and_restored_by_resuming(
    table: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a table every series writes deleted (points/, series/, forecasts/), gather is NOT OK
    and dmlimits-bi and dmlimits-report name the missing table; resuming the same command
    writes its rows back, row for row."""
    root = tmp_path / "data"
    plain_run(root, "output.resume=true")
    rows = read_table(root, table).frame
    assert rows is not None
    shutil.rmtree(root / table)
    missing = f"{root / table}: table missing"
    assert gather_main([str(root)]) == 1
    assert f"bad part: {missing}" in capsys.readouterr().out
    assert bi_main([str(root), "--db", str(tmp_path / "views.duckdb")]) == 0
    assert f"dmlimits-bi: skipped {missing}" in capsys.readouterr().err
    assert report_main([str(root), "--out", str(tmp_path / "report")]) == (
        2 if table == "points" else 0
    )
    assert missing in capsys.readouterr().err
    plain_run(root, "output.resume=true")
    restored = read_table(root, table).frame
    assert restored is not None
    assert restored.drop("run_id", "created_at").equals(rows.drop("run_id", "created_at"))
    assert gather_main([str(root)]) == 0


@pytest.mark.parametrize("damage", ["extra_column", "truncated"])
def test_rerun_sets_aside_a_bad_part_and_writes_its_series_again(
    damage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Resuming a run whose thresholds part is foreign (a column too many) or truncated moves
    the part whole to ROOT/.set_aside, names it, and writes its series again: every reader then
    reads every series, and gather is ok."""
    root = tmp_path / "data"
    smoke = ["sweep=smoke", "scaling.grid.max_d_model=16384", "execution.n_jobs=1"]
    pipeline.run(smoke, write=True, root=root)
    complete = read_table(root, "thresholds").frame
    assert complete is not None
    part = sorted((root / "thresholds").rglob("*.parquet"))[0]
    original = part.read_bytes()
    if damage == "extra_column":
        table = pq.read_table(part)
        pq.write_table(table.append_column("new_col", pa.array([1.0] * table.num_rows)), part)
    else:
        part.write_bytes(original[: len(original) // 2])
    bad = part.read_bytes()
    capsys.readouterr()
    pipeline.run(smoke, write=True, root=root)
    moved = root / ".set_aside" / part.relative_to(root)
    assert f"dmlimits: set aside {part} -> {moved}: " in capsys.readouterr().err
    assert moved.read_bytes() == bad
    healed = read_table(root, "thresholds")
    assert healed.skipped == ()
    assert healed.frame is not None
    assert sorted(healed.frame["series_id"]) == sorted(complete["series_id"])
    assert gather_main([str(root)]) == 0


def test_rerun_leaves_a_refused_part_of_other_series_where_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A refused part (a column too many) whose series_id names none of the run's series is not
    the run's to move: resuming leaves it in place, and readers keep naming it."""
    root = tmp_path / "data"
    smoke = ["sweep=smoke", "scaling.grid.max_d_model=16384", "execution.n_jobs=1"]
    pipeline.run(smoke, write=True, root=root)
    part = sorted((root / "thresholds").rglob("*.parquet"))[0]
    table = pq.read_table(part)
    other = table.set_column(
        table.schema.get_field_index("series_id"),
        "series_id",
        pa.array(["f" * 16] * table.num_rows),
    ).append_column("new_col", pa.array([1.0] * table.num_rows))
    foreign = part.with_name("part-00000000deadbeef.parquet")
    pq.write_table(other, foreign)
    capsys.readouterr()
    pipeline.run(smoke, write=True, root=root)
    assert "set aside" not in capsys.readouterr().err
    assert foreign.is_file()
    assert not (root / ".set_aside").exists()
    assert [entry.path for entry in read_table(root, "thresholds").skipped] == [foreign]


@pytest.mark.parametrize("layout", ["plain", "nightly"])
@pytest.mark.parametrize("inside", ["root_itself", "table_folder", "new_folder_in_partition"])
def test_report_refuses_out_inside_the_dataset(
    layout: str, inside: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--out naming the dataset root, a table folder or a new folder among its parts exits 2
    in one line, and no file of the dataset changes or appears."""
    root = LAYOUTS[layout](tmp_path / "root")
    part = sorted(root.rglob("*.parquet"))[0]
    out = {
        "root_itself": root,
        "table_folder": dataset_dir(root) / "points",
        "new_folder_in_partition": part.parent / "report",
    }[inside]
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert report_main([str(root), "--out", str(out)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"dmlimits-report: error: --out {out} is inside the dataset"), line
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    assert not (part.parent / "report").exists()


def test_not_read_total_says_which_parts_have_no_known_size(tmp_path: Path) -> None:
    """The total names the rows of the parts whose footers open apart from the parts of
    unknown size, never as one more part than it counts."""
    from pipeline.io.read import Skipped, not_read_total

    def part(name: str, rows: int | None) -> Skipped:
        return Skipped(tmp_path / f"part-{name}.parquet", "damaged", rows=rows, damaged=True)

    assert not_read_total([part("a" * 16, 5), part("b" * 16, 7)]) == (
        "not read in total: 12 rows in 2 parts"
    )
    assert not_read_total([part("c" * 16, None)]) == (
        "not read in total: 1 part of unknown size (its footer does not open)"
    )
    assert not_read_total([part("a" * 16, 5), part("c" * 16, None)]) == (
        "not read in total: 2 parts, 5 rows in the 1 whose footer opens and 1 of unknown size"
    )
