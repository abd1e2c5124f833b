"""The machine around a run: scheduler addresses, full disks, output paths, nightly leftovers.

Each bad environment ends in one line on stderr naming the path or address, exit status 2, and
nothing written; nightly cleanup deletes only what dmlimits made.
"""

from __future__ import annotations

import errno
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.bi.views import main as bi_main
from pipeline.cli.gather import main as gather_main
from pipeline.execute import runner
from pipeline.execute.settings import Backend, ExecutionSettings
from pipeline.io import parquet
from pipeline.io.parquet import OutputError, check_writable
from pipeline.nightly import partition
from pipeline.nightly.run import run_nightly
from pipeline.report import main as report
from pipeline.schema import compose_config, load_scenario
from pipeline.schema.errors import ConfigError
from tests.nightly.runs import nightly_config
from tests.robustness.conftest import tree
from tests.robustness.damage import plain_copy
from tests.robustness.test_bad_input import assert_one_line_error, check_in_process

DASK_INPUTS = [
    # (id, command-line arguments)
    ("words", ["execution.backend=dask", "execution.dask_address='not an address'"]),
    ("no_port", ["execution.backend=dask", "execution.dask_address=tcp://head"]),
    ("web_url", ["execution.backend=dask", "execution.dask_address='http://head:8787'"]),
    ("named_port", ["execution.backend=dask", "execution.dask_address='tcp://head:port'"]),
    ("no_host", ["execution.backend=dask", "execution.dask_address=':8786'"]),
    ("space_in_host", ["execution.backend=dask", "execution.dask_address='tcp://he ad:8786'"]),
    ("path_after_port", ["execution.backend=dask", "execution.dask_address='tcp://head:8786/x'"]),
    ("number", ["execution.backend=dask", "execution.dask_address=8786"]),
    ("address_without_dask", ["execution.dask_address='tcp://head:8786'"]),
]  # fmt: skip


def test_preflight_rejects_dask_workers_without_dask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A local dask cluster's size beside another backend sizes nothing: one line, exit 2, as
    an address without the dask backend."""
    code, err = check_in_process(["execution.dask_workers=5"], tmp_path, monkeypatch, capsys)
    assert code == 2
    assert_one_line_error(err, "execution.dask_workers")
    assert tree(tmp_path) == []


@pytest.mark.parametrize("args", [pytest.param(a, id=i) for i, a in DASK_INPUTS])
def test_preflight_rejects_bad_dask_address(
    args: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A malformed scheduler address, or one without the dask backend, is one line and exit 2."""
    code, err = check_in_process(args, tmp_path, monkeypatch, capsys)
    assert code == 2
    assert_one_line_error(err, "execution.dask_address")
    assert tree(tmp_path) == []


@pytest.fixture
def junk_server() -> Iterator[str]:
    """A TCP server that answers every connection with bytes no dask scheduler sends."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"\xff" * 64)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{port}"
    server.close()


def _unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("peer", ["closed_port", "not_a_scheduler"])
def test_dask_unreachable_scheduler_is_one_line(
    peer: str, junk_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scheduler address nobody answers, or a peer that is no scheduler, is a ConfigError."""
    monkeypatch.setattr(runner, "DASK_CONNECT_TIMEOUT_S", 2.0)
    address = junk_server if peer == "not_a_scheduler" else f"tcp://127.0.0.1:{_unused_port()}"
    settings = ExecutionSettings(backend=Backend.DASK, dask_address=address)
    scenario = load_scenario(
        compose_config(["scaling.grid.kind=list", "scaling.grid.d_models=[12288]"])
    )
    with pytest.raises(ConfigError) as info:
        list(runner.run_series([scenario, scenario], settings))
    assert info.value.key == "execution.dask_address"
    assert address in str(info.value)
    assert "\n" not in str(info.value)


def test_check_writable_refuses_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk that takes no more bytes fails the probe in one line, and no probe file is left."""

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(parquet.os, "write", full)
    with pytest.raises(OutputError, match="No space left on device") as info:
        check_writable(tmp_path / "data")
    assert "\n" not in str(info.value)
    assert list((tmp_path / "data").iterdir()) == []


def test_check_writable_probe_writes_and_syncs_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe writes real bytes and fsyncs them: an empty file would pass on a full disk."""
    written: list[int] = []
    synced: list[int] = []
    real_write, real_fsync = os.write, os.fsync
    monkeypatch.setattr(
        parquet.os, "write", lambda fd, data: written.append(len(data)) or real_write(fd, data)
    )
    monkeypatch.setattr(parquet.os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    check_writable(tmp_path)
    assert sum(written) >= parquet.PROBE_BYTES
    assert synced
    assert list(tmp_path.iterdir()) == []


def test_check_writable_probes_a_root_once_a_minute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A root proven writable is not probed again within `PROBE_VALID_S`, is probed again after
    it, and a proven root that was removed is made and probed again."""
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(parquet.os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    clock = [1000.0]
    monkeypatch.setattr(parquet.time, "monotonic", lambda: clock[0])
    root = tmp_path / "data"
    check_writable(root)
    check_writable(root)
    assert len(synced) == 1
    clock[0] += parquet.PROBE_VALID_S
    check_writable(root)
    assert len(synced) == 2
    root.rmdir()
    check_writable(root)
    assert len(synced) == 3
    assert root.is_dir()


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """The v1 fixture in a plain root."""
    return plain_copy(tmp_path / "dataset")


def _blocker(tmp_path: Path) -> Path:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file\n")
    return blocker


def _bi(tmp_path: Path, dataset: Path, case: str) -> tuple[list[str], str]:
    """(arguments, the path the message must name) of a bad dmlimits-bi call."""
    if case == "db_is_directory":
        (tmp_path / "db").mkdir()
        return [str(dataset), "--db", str(tmp_path / "db")], str(tmp_path / "db")
    if case == "db_under_file":
        db = _blocker(tmp_path) / "v.duckdb"
        return [str(dataset), "--db", str(db)], str(tmp_path / "blocker")
    if case == "db_on_read_only_fs":
        return [str(dataset), "--db", "/proc/dmlimits/v.duckdb"], "/proc/dmlimits"
    if case == "root_missing":
        return [str(tmp_path / "nope"), "--db", str(tmp_path / "v.duckdb")], str(tmp_path / "nope")
    if case == "root_is_file":
        return [str(_blocker(tmp_path)), "--db", str(tmp_path / "v.duckdb")], "blocker"
    empty = tmp_path / "empty"
    empty.mkdir()
    return [str(empty), "--db", str(tmp_path / "v.duckdb")], str(empty)


BI_CASES = [
    "db_is_directory",
    "db_under_file",
    "db_on_read_only_fs",
    "root_missing",
    "root_is_file",
    "root_without_thresholds",
]


@pytest.mark.parametrize("case", BI_CASES)
def test_bi_bad_path_is_one_line(
    case: str, dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """dmlimits-bi on an unusable ROOT or --db: exit 2, one line naming it, no database file."""
    args, named = _bi(tmp_path, dataset, case)
    before = tree(tmp_path)
    assert bi_main(args) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("dmlimits-bi: error: ")
    assert named in lines[0]
    assert tree(tmp_path) == before


def _report(tmp_path: Path, dataset: Path, case: str) -> tuple[list[str], str]:
    """(arguments, the path the message must name) of a bad dmlimits-report call."""
    if case == "out_is_file":
        return [str(dataset), "--out", str(_blocker(tmp_path))], str(tmp_path / "blocker")
    if case == "out_under_file":
        return [str(dataset), "--out", str(_blocker(tmp_path) / "r")], str(tmp_path / "blocker")
    if case == "out_on_read_only_fs":
        return [str(dataset), "--out", "/proc/dmlimits-report"], "/proc/dmlimits-report"
    if case == "root_missing":
        return [str(tmp_path / "nope"), "--out", str(tmp_path / "r")], str(tmp_path / "nope")
    return [str(dataset), "--out", str(tmp_path / "r"), "--run-date", "2025-02-03"], "2025-02-03"


REPORT_CASES = [
    "out_is_file",
    "out_under_file",
    "out_on_read_only_fs",
    "root_missing",
    "run_date_absent",
]


@pytest.mark.parametrize("case", REPORT_CASES)
def test_report_bad_path_is_one_line(
    case: str,
    dataset: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """dmlimits-report with an unusable ROOT or --out: exit 2, one error line naming it, no file."""
    monkeypatch.setattr(report, "CHARTS", report.CHARTS[:1])
    args, named = _report(tmp_path, dataset, case)
    before = tree(tmp_path)
    assert report.main(args) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(errors) == 1, errors
    assert errors[0].startswith("dmlimits-report: error: ")
    assert named in errors[0]
    assert tree(tmp_path) == before


@pytest.mark.parametrize("case", ["root_missing", "root_is_file", "multirun_missing"])
def test_gather_bad_path_is_one_line(
    case: str, dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """dmlimits-gather on a missing or non-directory ROOT or --multirun: exit 2, one line."""
    args = {
        "root_missing": [str(tmp_path / "nope")],
        "root_is_file": [str(_blocker(tmp_path))],
        "multirun_missing": [str(dataset), "--multirun", str(tmp_path / "nope")],
    }[case]
    assert gather_main(args) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("dmlimits-gather: error: ")


def test_gather_empty_directory_is_not_ok(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty directory holds no dataset: gather says so and exits 1."""
    assert gather_main([str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-2].startswith(f"no dataset: {tmp_path} holds no part of any table")
    assert out[-1] == "NOT OK"


STAGING_STRAYS = {
    # name -> what it is: a stray that nightly cleanup must leave alone
    "notes.txt": "file",
    "my-backup": "dir",
    "2025-01-01-NOTHEX": "dir",
    "2025-01-01-abcd": "file",
    "link-2025-01-01-abcd": "symlink",
}


@pytest.mark.parametrize("area", [partition.STAGING_DIR, partition.REPLACED_DIR])
@pytest.mark.parametrize("name", list(STAGING_STRAYS))
def test_nightly_leaves_strays_in_its_folders(
    area: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stray in .staging/ or .replaced/ neither fails the nightly run nor gets deleted."""
    root = tmp_path / "nightly"
    folder = root / area
    folder.mkdir(parents=True)
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n")
    kind = STAGING_STRAYS[name]
    stray = folder / name
    if kind == "file":
        stray.write_text("not dmlimits'\n")
    elif kind == "dir":
        stray.mkdir()
        (stray / "keep.txt").write_text("keep\n")
    else:
        stray.symlink_to(outside)
    assert run_nightly(nightly_config(root, "2025-01-01"), progress=False) == 0
    assert stray.exists() or stray.is_symlink()
    assert (outside / "keep.txt").is_file()
    assert f"left alone {area}/{name}" in capsys.readouterr().err


def test_nightly_deletes_its_own_leftover_staging(tmp_path: Path) -> None:
    """A staging folder named as dmlimits names them is a killed run's: the next run deletes it."""
    root = tmp_path / "nightly"
    leftover = root / partition.STAGING_DIR / "2025-01-01-abcd1234"
    leftover.mkdir(parents=True)
    assert run_nightly(nightly_config(root, "2025-01-01"), progress=False) == 0
    assert not leftover.exists()
