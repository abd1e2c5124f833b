"""`.ci/commit-messages`: the commits a branch adds have subjects of at most 72 characters and
none titled WIP (the detail goes in the body)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CHECK = REPO / ".ci" / "commit-messages"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(repo: Path, *args: str) -> None:
    """Run git in `repo` as a fixed author, quietly."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def commit(repo: Path, message: str) -> None:
    """An empty commit with `message` on the current branch."""
    git(repo, "commit", "--allow-empty", "-q", "-m", message)


def check(repo: Path) -> subprocess.CompletedProcess[str]:
    """The check of the branch's commits against `main`."""
    return subprocess.run(
        [sys.executable, str(CHECK), "main"], cwd=repo, capture_output=True, text=True, check=False
    )


@pytest.fixture
def branch(tmp_path: Path) -> Path:
    """A repository with a `main` of one long-subject commit (history is not checked) and a
    branch `topic` on it."""
    git(tmp_path, "init", "-q", "-b", "main")
    commit(tmp_path, "x" * 200)
    git(tmp_path, "checkout", "-q", "-b", "topic")
    return tmp_path


def test_commit_messages_pass_short_subjects_with_a_body(branch: Path) -> None:
    """A branch whose subjects fit in 72 characters passes, however long the body."""
    commit(branch, "Rows: refuse a key the schema does not name\n\n" + "detail " * 100)
    result = check(branch)
    assert (result.returncode, result.stderr) == (0, "")


def test_commit_messages_refuse_a_long_subject_and_wip(branch: Path) -> None:
    """A 73-character subject and a WIP commit on the branch are each named, and the check
    fails."""
    commit(branch, "y" * 73)
    commit(branch, "WIP: half a change")
    result = check(branch)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 2
    assert "73 characters" in lines[1]
    assert "work in progress" in lines[0]
