"""BI access: one DuckDB database file whose views read the Parquet dataset in place (`views`)."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.extras import missing_extra


def command(argv: Sequence[str] | None = None) -> int:
    """`dmlimits-bi`: `views.main`, or one line naming the extra to install without DuckDB."""
    try:
        from pipeline.bi.views import main as views_main
    except ModuleNotFoundError as err:
        return missing_extra("dmlimits-bi", err)
    return views_main(argv)
