"""Optional dependencies: which extra of pyproject.toml provides a library, and the one line a
command prints when it is missing (a leaf: it imports nothing of the package)."""

from __future__ import annotations

import sys

EXTRA_OF_LIBRARY = {"duckdb": "bi", "matplotlib": "report", "dask": "dask", "distributed": "dask"}
"""The top-level module of each optional library -> the extra that installs it."""
EXIT_MISSING_EXTRA = 2


def missing_extra(prog: str, err: ModuleNotFoundError) -> int:
    """Print ``PROG: error: ...`` naming the extra to install and return the exit status; an
    error about any other module is raised again (it is a bug, not a missing extra)."""
    library = (err.name or "").split(".")[0]
    extra = EXTRA_OF_LIBRARY.get(library)
    if extra is None:
        raise err
    print(
        f"{prog}: error: needs {library}, which the '{extra}' extra installs: "
        f"pip install 'dmlimits[{extra}]'",
        file=sys.stderr,
    )
    return EXIT_MISSING_EXTRA
