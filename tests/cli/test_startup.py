"""The command's start-up: what `dmlimits` imports before it runs (docs/performance.md)."""

from __future__ import annotations

import subprocess
import sys

DEFERRED = ("polars", "rich", "pyarrow.compute", "joblib", "pipeline.nightly.run")
"""Libraries (and modules) a run that only evaluates and writes does not need at start-up: the
readers, the terminal bar, the resumed-row filters, the worker pool and the nightly job import
them when used."""


def test_cli_start_up_defers_what_a_run_may_not_need() -> None:
    probe = (
        f"import sys, pipeline.cli.main; print(sorted(m for m in {DEFERRED!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
