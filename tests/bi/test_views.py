"""The DuckDB file answers queries over every view, for a plain and for a nightly dataset."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from pipeline.bi.views import main
from pipeline.io.dataset import gather
from pipeline.nightly.run import run_nightly
from tests.io.helpers import split_part
from tests.nightly.runs import nightly_config, plain_run

TABLE_VIEWS = ("points", "thresholds", "forecasts", "series")


@pytest.fixture(scope="module")
def datasets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A plain root with two series, and a nightly root with two dates."""
    base = tmp_path_factory.mktemp("bi")
    plain = base / "plain"
    plain_run(plain)
    plain_run(plain, "batch=constant")
    nightly = base / "nightly"
    for day in ("2025-01-01", "2025-01-02"):
        assert run_nightly(nightly_config(nightly, day), progress=False) == 0
    return plain, nightly


def _views(db: Path) -> dict[str, int]:
    """Every user view of the file and its row count, queried through DuckDB."""
    with duckdb.connect(str(db), read_only=True) as con:
        names = con.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY view_name"
        ).fetchall()
        return {n: con.execute(f"SELECT count(*) FROM {n}").fetchall()[0][0] for (n,) in names}


def _present(views: dict[str, int]) -> list[str]:
    return [t for t in TABLE_VIEWS if t in views]


def test_bi_nightly_views_answer_queries(datasets: tuple[Path, Path], tmp_path: Path) -> None:
    """Every table has a view and a latest_ view; latest_ holds the newest date only."""
    _, nightly = datasets
    db = tmp_path / "dmlimits.duckdb"
    assert main([str(nightly), "--db", str(db)]) == 0
    views = _views(db)
    assert {"points", "thresholds", "forecasts", "runs"} <= set(views)
    for table in _present(views):
        assert views[table] > 0, table
        assert views[f"latest_{table}"] * 2 == views[table], "two equal runs, one is latest"
    with duckdb.connect(str(db), read_only=True) as con:
        dates = con.execute("SELECT DISTINCT run_date FROM latest_thresholds").fetchall()
        runs = con.execute("SELECT run_date, n_series FROM runs ORDER BY run_date").fetchall()
    assert dates == [(dt.date(2025, 1, 2),)]
    assert runs == [(dt.date(2025, 1, 1), 1), (dt.date(2025, 1, 2), 1)]


def test_bi_rows_fetch_with_their_timestamps(datasets: tuple[Path, Path], tmp_path: Path) -> None:
    """docs/bi.md's Python line fetches whole rows, `created_at` (a timestamp with time zone,
    which duckdb's client returns through pytz, a dependency of the `bi` extra) included."""
    _, nightly = datasets
    db = tmp_path / "dmlimits.duckdb"
    assert main([str(nightly), "--db", str(db)]) == 0
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.sql("SELECT * FROM latest_forecasts").fetchall()
        names = [d[0] for d in con.sql("SELECT * FROM latest_forecasts").description]
    assert rows
    created = rows[0][names.index("created_at")]
    assert isinstance(created, dt.datetime)
    assert created.utcoffset() == dt.timedelta(0)


def test_bi_plain_root_latest_is_whole_table(datasets: tuple[Path, Path], tmp_path: Path) -> None:
    """Without run_date partitions each latest_ view equals its table."""
    plain, _ = datasets
    db = tmp_path / "plain.duckdb"
    assert main([str(plain), "--db", str(db)]) == 0
    views = _views(db)
    for table in _present(views):
        assert views[f"latest_{table}"] == views[table] > 0, table
    assert views["thresholds"] == 2


def test_bi_views_use_absolute_paths(
    datasets: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built from a relative ROOT, the file still answers from another working directory."""
    plain, _ = datasets
    monkeypatch.chdir(plain.parent)
    db = tmp_path / "relative.duckdb"
    assert main(["plain", "--db", str(db)]) == 0
    monkeypatch.chdir(tmp_path)
    assert _views(db)["points"] > 0
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_bi_rejects_a_directory_without_data(tmp_path: Path) -> None:
    """A directory without thresholds parts is an error (exit status 2), and no file is made."""
    db = tmp_path / "empty.duckdb"
    assert main([str(tmp_path), "--db", str(db)]) == 2
    assert not db.exists()


@pytest.mark.parametrize("table", ["thresholds", "forecasts", "points", "series"])
def test_bi_refuses_a_series_in_two_parts(
    datasets: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str
) -> None:
    """Two roots merged (`cp -rn A/* B/`) leave a series in two parts of one table, which
    dmlimits-gather reports NOT OK: the build refuses the root by the same check, in one line
    naming the table and the series and pointing to dmlimits-gather; exit 2, no file written
    (the views would count the series' rows twice)."""
    plain, _ = datasets
    root = tmp_path / "merged"
    shutil.copytree(plain, root)
    copy = split_part(root, table)
    (series_id,) = set(pq.read_table(copy, columns=["series_id"])["series_id"].to_pylist())
    assert gather(root).split_series == (series_id,)
    db = tmp_path / "merged.duckdb"
    assert main([str(root), "--db", str(db)]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith("dmlimits-bi: error: ")
    assert f"1 series has rows in two parts of the {table} table (e.g. {series_id})" in line
    assert f"run dmlimits-gather {root.resolve()}" in line
    assert not captured.out
    assert not db.exists()


def test_bi_refuses_a_nightly_date_with_a_series_in_two_parts(
    datasets: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In a nightly root the check is per date: the date holding the split series is named.
    The same series in two dates is no split (each date is a dataset of its own)."""
    _, nightly = datasets
    root = tmp_path / "nightly"
    shutil.copytree(nightly, root)
    split_part(root / "run_date=2025-01-02", "thresholds")
    db = tmp_path / "nightly.duckdb"
    assert main([str(root), "--db", str(db)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert f"{root.resolve() / 'run_date=2025-01-02'}: 1 series has rows in two parts" in line
    assert not db.exists()


OLDEST_CLIENT = "1.0.0"
"""The oldest DuckDB client docs/bi.md promises opens the file (`STORAGE_VERSION`)."""
CLIENT_QUERY = """
import json, sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
names = [n for (n,) in con.execute(
    "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY view_name").fetchall()]
print(json.dumps([duckdb.__version__, {n: con.execute(f"SELECT count(*) FROM {n}").fetchall()[0][0]
                                       for n in names}]))
"""


def old_client(version: str) -> Path:
    """A Python with only `duckdb==version` installed: a venv made once and kept in the temp
    directory (a lock lets parallel test processes share it)."""
    home = Path(tempfile.gettempdir()) / f"dmlimits-duckdb-{version}"
    python = home / "bin" / "python"
    home.parent.mkdir(exist_ok=True)
    with open(f"{home}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (home / "ready").exists():
            venv.create(home, clear=True, with_pip=True)
            subprocess.run(
                [str(python), "-m", "pip", "install", "-q", f"duckdb=={version}"],
                check=True,
                env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
            )
            (home / "ready").touch()
    assert sys.executable != str(python)
    return python


@pytest.mark.slow
def test_bi_file_opens_in_oldest_supported_client(
    datasets: tuple[Path, Path], tmp_path: Path
) -> None:
    """DuckDB 1.0 opens the file and answers every view with the rows DuckDB itself reads."""
    _, nightly = datasets
    db = tmp_path / "dmlimits.duckdb"
    assert main([str(nightly), "--db", str(db)]) == 0
    result = subprocess.run(
        [str(old_client(OLDEST_CLIENT)), "-c", CLIENT_QUERY, str(db)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    version, counts = json.loads(result.stdout)
    assert version == OLDEST_CLIENT
    assert counts == _views(db)


@pytest.mark.parametrize("inside", ["part", "new_file_in_table", "root_itself"])
def test_bi_refuses_db_inside_the_dataset(
    datasets: tuple[Path, Path], inside: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--db naming a part, or any path inside the dataset, exits 2 in one line; nothing changes."""
    plain, _ = datasets
    part = sorted((plain / "thresholds").rglob("*.parquet"))[0]
    db = {"part": part, "new_file_in_table": part.parent / "views.duckdb", "root_itself": plain}[
        inside
    ]
    before = {p: p.read_bytes() for p in plain.rglob("*") if p.is_file()}
    assert main([str(plain), "--db", str(db)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("dmlimits-bi: error: --db "), line
    assert {p: p.read_bytes() for p in plain.rglob("*") if p.is_file()} == before


def test_bi_refuses_to_replace_a_file_that_is_not_duckdb(
    datasets: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An existing --db that is not a DuckDB file (a typo naming a document) is left alone."""
    plain, _ = datasets
    notes = tmp_path / "notes.md"
    notes.write_text("not a database\n")
    assert main([str(plain), "--db", str(notes)]) == 2
    assert "is not a DuckDB database" in capsys.readouterr().err
    assert notes.read_text() == "not a database\n"
    db = tmp_path / "dmlimits.duckdb"
    assert main([str(plain), "--db", str(db)]) == 0
    assert main([str(plain), "--db", str(db)]) == 0, "a DuckDB file is rebuilt in place"


def test_bi_joins_each_forecast_to_the_runs_of_its_own_fit(tmp_path: Path) -> None:
    """A default run and a back-test (window_end 2023-01-01) into one root: through the views,
    each run's fitted forecasts join the frontier runs of their own fit, so GPT-4 is a frontier
    run beside the default run's forecasts and not beside the back-test's."""
    root = tmp_path / "root"
    plain_run(root)
    plain_run(root, "hardware=a100_sxm", "forecast.fitted.window_end=2023-01-01")
    db = tmp_path / "fits.duckdb"
    assert main([str(root), "--db", str(db)]) == 0
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT f.hardware, bool_or(o.model = 'GPT-4' AND o.frontier), count(*) "
            "FROM forecasts f JOIN observed_runs o USING (fit_hash) "
            "WHERE f.trajectory = 'fitted' GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        n_runs = con.execute("SELECT count(DISTINCT line) FROM observed_runs").fetchall()[0][0]
    assert rows == [("a100_sxm", False, n_runs), ("h100_sxm", True, n_runs)]


def test_bi_documented_query_reads_a_null_years_reason(
    datasets: tuple[Path, Path], tmp_path: Path
) -> None:
    """The DuckDB expression docs/schema.md gives for `forecasts.year_null_reasons` runs on the
    pinned client and reads each row's wall-year reason as `null_years.null_reason` does."""
    import re

    from pipeline.forecast.null_years import null_reason

    docs = (Path(__file__).resolve().parents[2] / "docs" / "schema.md").read_text("utf-8")
    found = re.search(r"DuckDB: `(regexp_extract\(year_null_reasons[^`]*)`", docs)
    assert found is not None, "docs/schema.md gives the query"
    _, nightly = datasets
    db = tmp_path / "dmlimits.duckdb"
    assert main([str(nightly), "--db", str(db)]) == 0
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(f"SELECT year_null_reasons, {found.group(1)} FROM forecasts").fetchall()
    assert rows
    assert any(reason for _, reason in rows), "the nightly has a null wall year"
    for reasons, reason in rows:
        expected = null_reason(reasons, "wall_year")
        assert reason == ("" if expected is None else str(expected))


def test_bi_documented_nightly_join_meets_each_date_s_runs_once(
    datasets: tuple[Path, Path], tmp_path: Path
) -> None:
    """The nightly form of docs/schema.md's `fit_hash` join gives each fitted forecast row of a
    date the frontier runs of that date's fit once: two dates of one fit share a `fit_hash`,
    so the plain form would meet both dates' copies."""
    import re

    docs = (Path(__file__).resolve().parents[2] / "docs" / "schema.md").read_text("utf-8")
    queries = re.findall(r"```sql\n(SELECT[^`]*?USING \(fit_hash[^`]*?)```", docs)
    assert len(queries) == 2, "docs/schema.md gives the plain and the nightly join"
    nightly_query = next(q for q in queries if "run_date" in q).strip().rstrip(";")
    _, nightly = datasets
    db = tmp_path / "dmlimits.duckdb"
    assert main([str(nightly), "--db", str(db)]) == 0
    with duckdb.connect(str(db), read_only=True) as con:
        got = con.execute(f"SELECT count(*) FROM ({nightly_query})").fetchall()[0][0]
        expected = con.execute(
            "SELECT sum(n_f * n_o) FROM "
            "(SELECT run_date, count(*) AS n_f FROM forecasts WHERE trajectory = 'fitted' "
            "GROUP BY ALL) JOIN "
            "(SELECT run_date, count(*) AS n_o FROM observed_runs WHERE frontier GROUP BY ALL) "
            "USING (run_date)"
        ).fetchall()[0][0]
        dates = con.execute("SELECT count(DISTINCT run_date) FROM forecasts").fetchall()[0][0]
    assert dates == 2
    assert got == expected > 0
