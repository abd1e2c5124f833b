"""Dated partitions of a nightly root, and replacing one atomically.

    ROOT/run_date=YYYY-MM-DD/{points,thresholds,forecasts,...}/hardware=H/scaling=S/batch_law=B/
    ROOT/.staging/<date>-<token>/    a run being written (hidden: no reader glob matches it)
    ROOT/.replaced/<date>-<token>/   an old partition being swapped out (fallback path only)
    ROOT/reports/                    change reports

A run writes its whole dataset into a staging directory, then `publish` moves it into place:

- a new date: one `rename` of the staging directory to run_date=D;
- a date that exists, on Linux: one `renameat2(RENAME_EXCHANGE)`, which swaps the two
  directories in a single atomic step; the staging path then holds the old run, deleted after;
- elsewhere: rename the old partition into .replaced/, rename the staging directory into
  place, delete the old one. A failure between the two renames moves the old one back; a kill
  there leaves it in .replaced/, and the next run's `clean_leftovers` restores it.

Readers never see a mix of two runs: each swap moves one whole directory. Other dates are never
touched. `clean_leftovers` must run under the root's `RunLock`, so it cannot delete the staging
directory of a live run.
"""

from __future__ import annotations

import ctypes
import datetime as dt
import errno
import os
import re
import secrets
import shutil
import sys
from pathlib import Path

from pipeline.io.parquet import fsync_dir
from pipeline.io.read import RUN_DATE_KEY as RUN_DATE_KEY
from pipeline.io.read import date_dir as date_dir
from pipeline.io.read import run_dates as run_dates

STAGING_DIR = ".staging"
REPLACED_DIR = ".replaced"
REPORTS_DIR = "reports"

_LEFTOVER = re.compile(r"(\d{4}-\d{2}-\d{2})-[0-9a-f]+")
"""A staging or replaced folder this program made: `<date>-<token>` (`new_staging_dir`)."""
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def new_staging_dir(root: Path, run_date: dt.date) -> Path:
    """A fresh, empty ROOT/.staging/<date>-<token> for one run to write into."""
    staging = root / STAGING_DIR / f"{run_date.isoformat()}-{secrets.token_hex(4)}"
    staging.mkdir(parents=True)
    return staging


def exchange_dirs(a: Path, b: Path) -> bool:
    """Swap two directories atomically (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:  # glibc < 2.28, musl
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # the file system cannot exchange
        return False
    raise OSError(code, os.strerror(code), str(a))


def _swap_via_backup(staging: Path, final: Path, root: Path, run_date: dt.date) -> None:
    """The portable swap: old partition aside, staging into place, old partition deleted."""
    backup = root / REPLACED_DIR / f"{run_date.isoformat()}-{secrets.token_hex(4)}"
    backup.parent.mkdir(exist_ok=True)
    os.rename(final, backup)
    try:
        os.rename(staging, final)
    except BaseException:
        os.rename(backup, final)
        raise
    shutil.rmtree(backup)


def linked_folders(root: Path, run_date: dt.date) -> list[Path]:
    """The folders a run of `run_date` writes, renames or deletes that are symbolic links.

    `publish` swaps the date's folder whole and `clean_leftovers` deletes below .staging/ and
    .replaced/: on a link, the swap would move the link (its target left behind, the run
    published nowhere it names) and deleting fails after the run is published. The run refuses
    such a root before it evaluates anything. Links to other dates are only read, as folders.
    """
    paths = [root / STAGING_DIR, root / REPLACED_DIR, root / REPORTS_DIR, date_dir(root, run_date)]
    return [path for path in paths if path.is_symlink()]


def publish(staging: Path, root: Path, run_date: dt.date) -> Path:
    """Make the staged run the partition of `run_date`, replacing any old one whole."""
    final = date_dir(root, run_date)
    if not final.exists():
        os.rename(staging, final)
    elif exchange_dirs(staging, final):
        shutil.rmtree(staging)  # now the old run
    else:
        _swap_via_backup(staging, final, root, run_date)
    fsync_dir(root)
    return final


def clean_leftovers(root: Path) -> list[str]:
    """Undo what killed runs left; one line per action. Call it holding the root's lock.

    Only folders this program makes are touched: `<date>-<token>` directories of .staging/ and
    .replaced/ (`new_staging_dir`, `_swap_via_backup`). A partition left in .replaced/ whose date
    has no partition is moved back; any other such folder is deleted. Anything else found there
    (a stray file, a folder of another name) is left alone and reported.
    """
    actions = []
    replaced = root / REPLACED_DIR
    for path in sorted(replaced.iterdir()) if replaced.is_dir() else []:
        match = _LEFTOVER.fullmatch(path.name)
        if match is None or path.is_symlink() or not path.is_dir():
            actions.append(f"left alone {path.relative_to(root)}: not made by dmlimits")
            continue
        final = root / f"{RUN_DATE_KEY}={match.group(1)}"
        if not final.exists():
            os.rename(path, final)
            actions.append(f"restored {final.name} from an interrupted replace")
        else:
            shutil.rmtree(path)
            actions.append(f"deleted {path.relative_to(root)}")
    staging = root / STAGING_DIR
    for path in sorted(staging.iterdir()) if staging.is_dir() else []:
        if _LEFTOVER.fullmatch(path.name) is None or path.is_symlink() or not path.is_dir():
            actions.append(f"left alone {path.relative_to(root)}: not made by dmlimits")
            continue
        shutil.rmtree(path)
        actions.append(f"deleted unfinished run {path.relative_to(root)}")
    return actions
