"""Atomic text files: reports, JSON summaries, HTML pages and job markers are never half written.

A file is written to a hidden temporary name in its own directory (".<name>.<pid>.<random>.tmp",
invisible to globs of the final name), fsynced, then renamed over the final path with
`os.replace`, atomic on POSIX within one file system. A reader sees the old file or the new one.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

TEMP_SUFFIX = ".tmp"


def write_text_atomic(path: Path | str, text: str) -> Path:
    """Write `text` (UTF-8) to `path` through a temporary file and a rename; return the path."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path | str, data: bytes) -> Path:
    """Write `data` to `path` through a temporary file and a rename; return the path."""
    final = Path(path)
    temp = final.with_name(f".{final.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
    try:
        with open(temp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, final)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return final
