"""Visual report of a dataset: PNG charts (`charts`) and an HTML page (`page`); `main` is the CLI,
`command` its console entry point."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.extras import missing_extra


def command(argv: Sequence[str] | None = None) -> int:
    """`dmlimits-report`: `report.main.main`, or one line naming the extra to install without
    matplotlib."""
    try:
        from pipeline.report.main import main as report_main
    except ModuleNotFoundError as err:
        return missing_extra("dmlimits-report", err)
    return report_main(argv)
