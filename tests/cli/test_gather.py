"""`dmlimits-gather`: a dataset's report, the jobs of a multirun, the exit status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pipeline
from pipeline.cli.gather import DONE_MARKER, failed_jobs, gather_sweep, main, mark_done

TINY_GRID = "scaling.grid.max_d_model=16384"
"""Three paper-grid sizes: a dataset of one series in well under a second."""


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset root holding one H100 series, written by `pipeline.run`."""
    root = tmp_path_factory.mktemp("gather") / "data"
    pipeline.run([TINY_GRID], write=True, root=root)
    return root


def _multirun(tmp_path: Path, done: list[bool]) -> Path:
    """A Hydra sweep directory whose job `i` finished when `done[i]`."""
    sweep = tmp_path / "multirun" / "2025-01-01" / "00-00-00"
    for number, finished in enumerate(done):
        job = sweep / str(number)
        (job / ".hydra").mkdir(parents=True)
        if finished:
            mark_done(job, {"job": number})
    return sweep


def test_mark_done_writes_json_marker(tmp_path: Path) -> None:
    """The done marker is JSON with the finishing time and the detail given."""
    path = mark_done(tmp_path, {"series": 3})
    assert path == tmp_path / DONE_MARKER
    content = json.loads(path.read_text())
    assert content["series"] == 3
    assert "finished_at" in content


def test_failed_jobs_lists_jobs_without_marker(tmp_path: Path) -> None:
    """Numbered job directories without the done marker are failed jobs; others are ignored."""
    sweep = _multirun(tmp_path, [True, False, True, False])
    (sweep / "not_a_job").mkdir()
    assert failed_jobs(sweep) == ([1, 3], 4)


def test_gather_sweep_reports_failed_jobs(dataset: Path, tmp_path: Path) -> None:
    """A sweep with a failed job is not ok, though its dataset is."""
    report = gather_sweep(dataset, _multirun(tmp_path, [True, False]))
    assert report.dataset.ok
    assert (report.n_jobs, report.failed_jobs) == (2, (1,))
    assert not report.ok


def test_gather_main_prints_counts_and_failed_jobs(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`dmlimits-gather ROOT --multirun DIR` prints the counts, the failed jobs, NOT OK; exit 1."""
    sweep = _multirun(tmp_path, [True, False])
    assert main([str(dataset), "--multirun", str(sweep)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"dataset {dataset}: ")
    assert "1 series" in out[0]
    assert out[1] == f"jobs: 2, failed (no {DONE_MARKER}): 1"
    assert out[-1] == "NOT OK"


def test_gather_main_ok_exits_zero(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A complete dataset prints ok and exits 0."""
    assert main([str(dataset)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "ok"


@pytest.mark.parametrize("content", ["nothing", "foreign file", "other folder"])
def test_gather_main_without_dataset_says_so(
    content: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A directory holding no part of any table is no dataset: one line says so, exit 1."""
    if content == "foreign file":
        (tmp_path / "notes.txt").write_text("mine\n")
    elif content == "other folder":
        (tmp_path / "photos").mkdir()
    assert main([str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("no dataset: ") for line in out) == 1
    assert out[-1] == "NOT OK"


def _job_config(job: Path, root: str, cwd: Path) -> None:
    """The `.hydra` files of a job that wrote to `root` (relative to `cwd`), as Hydra saves them."""
    (job / ".hydra" / "config.yaml").write_text(
        f"output:\n  root: {root}\n  nightly_root: outputs/nightly\n", encoding="utf-8"
    )
    (job / ".hydra" / "hydra.yaml").write_text(
        f"hydra:\n  runtime:\n    cwd: {cwd}\n", encoding="utf-8"
    )


def test_gather_multirun_of_an_unrelated_directory_says_so(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A --multirun directory with no job directory (an unrelated folder) is named in one line
    on stderr, exit 2, instead of reporting no failed job."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "7").mkdir()  # numbered, but no job of Hydra's
    assert main([str(dataset), "--multirun", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "is not a Hydra multirun directory" in err[0]


def test_gather_multirun_of_another_dataset_says_so(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A multirun whose jobs wrote to another root is refused in one line naming that root;
    one whose jobs wrote to this root (relative to their working directory) is checked."""
    sweep = _multirun(tmp_path, [True, True])
    for job in ("0", "1"):
        _job_config(sweep / job, "elsewhere/data", tmp_path)
    assert main([str(dataset), "--multirun", str(sweep)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "is not a multirun of the dataset" in err[0]
    assert str(tmp_path / "elsewhere" / "data") in err[0]
    for job in ("0", "1"):
        _job_config(sweep / job, dataset.name, dataset.parent)
    assert main([str(dataset), "--multirun", str(sweep)]) == 0


def test_a_root_that_is_no_dataset_says_so_first_and_counts_the_rest(tmp_path: Path) -> None:
    """A root given by mistake (a directory of other files) is called no dataset right after
    the counts, and its foreign entries are listed up to `MAX_IGNORED_SHOWN`, the rest counted."""
    from pipeline.io.dataset import MAX_IGNORED_SHOWN

    extra = 7
    for i in range(MAX_IGNORED_SHOWN + extra):
        (tmp_path / f"note{i:02d}.txt").write_text("not a part")
    lines = gather_sweep(tmp_path).format().splitlines()
    assert lines[1].startswith(f"no dataset: {tmp_path}")
    assert sum(line.startswith("ignored: ") for line in lines) == MAX_IGNORED_SHOWN
    assert f"... and {extra} more ignored (files and folders no reader reads)" in lines
    assert lines[-1] == "NOT OK"
