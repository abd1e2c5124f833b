"""Session-wide settings of the test suite."""

from __future__ import annotations

import atexit
import gc

import pytest


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A command run in this process may have registered its exit freeze (`gc.freeze` at exit,
    `pipeline.cli.startup`); the test session is no command's process and collects its heap at
    exit as usual (a frozen heap leaves extension objects unfreed, which some libraries report)."""
    del session, exitstatus
    atexit.unregister(gc.freeze)
