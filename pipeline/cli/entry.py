"""The `dmlimits` console script and ``python -m pipeline``: the command, loaded with the
collector paused (the load half of the command's start-up trick, `pipeline.cli.startup`).

Loading the command (Hydra, OmegaConf, numpy, pyarrow and the package) makes a few hundred
thousand objects that live as long as the process, and the collector, left on, walks them in
about a hundred collections while they are made, one of them full: about 0.08 s of the
three-GPU comparison's 3 s on a two-CPU machine (docs/performance.md). `load_command` pauses
the collector while the command loads, then freezes what the loading made (`gc.freeze`), so
that collections walk only the objects the command makes from then on. The command's switch
(``execution.ahead=false``) cannot be read before the command is loaded: a command with the
switch off unfreezes the heap as soon as its check reads it (`Startup.on_job`). A caller of
`pipeline.cli.main.main` (a test, a notebook) imports it itself and is not affected.

This module imports nothing else at its top: what it loads is loaded with the collector paused.
"""

from __future__ import annotations

import gc
from collections.abc import Callable


def load_command() -> Callable[[bool], None]:
    """`pipeline.cli.main.main`, imported with the collector paused, and the heap the import
    made frozen; the collector runs again afterwards."""
    gc.disable()
    try:
        from pipeline.cli.main import main

        gc.freeze()
    finally:
        gc.enable()
    return main


def main() -> None:
    """Console entry point (`dmlimits`, `python -m pipeline`): the command, its heap frozen."""
    load_command()(True)
