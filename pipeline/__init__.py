"""dmlimits: data-movement limits to frontier model training, as a scenario-sweep pipeline.

From Python: ``pipeline.run(overrides) -> Result`` with polars frames (docs/api.md). It is
imported on first use, so importing `pipeline` (and starting the `dmlimits` command) stays light.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.version import __version__

if TYPE_CHECKING:
    from pipeline.app.api import Result
    from pipeline.schema.errors import ConfigError

__all__ = ["ConfigError", "Result", "__version__", "run"]


def run(
    overrides: Sequence[str] = (),
    *,
    write: bool = False,
    root: str | Path | None = None,
    progress: bool = False,
    config_dir: str | Path | None = None,
) -> Result:
    """One run from Python: `pipeline.app.api.run` (docs/api.md)."""
    from pipeline.app.api import run as run_api

    return run_api(overrides, write=write, root=root, progress=progress, config_dir=config_dir)


def __getattr__(name: str) -> Any:
    """`Result` and `ConfigError`, imported on first access."""
    if name == "Result":
        from pipeline.app.api import Result

        return Result
    if name == "ConfigError":
        from pipeline.schema.errors import ConfigError

        return ConfigError
    raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
