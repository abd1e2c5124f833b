"""A worker process ends with the run that started it: a watchdog thread polls its parent.

Both kinds of worker start it: a job's local (loky) workers (`pipeline.execute.runner`) and the
forked workers of a small command (`pipeline.execute.ahead`).
"""

from __future__ import annotations

import os
import threading
import time

PARENT_POLL_S = 0.5
"""How often a worker process checks that the run that started it is still alive."""


def _watchdog(run_pid: int) -> None:
    """Exit this worker as soon as its parent, the run's main process, is gone."""
    while os.getppid() == run_pid:
        time.sleep(PARENT_POLL_S)
    os._exit(1)  # orphaned: nobody will read our results


def watch_parent(run_pid: int) -> None:
    """Initializer of each local worker process: a daemon thread ends the worker once its
    parent `run_pid` is gone, so a run killed with SIGKILL leaves no worker computing, or
    idling, for nobody. A worker already orphaned when it starts exits at once."""
    threading.Thread(target=_watchdog, args=(run_pid,), name="dmlimits-parent", daemon=True).start()
