"""Progress of a run: a rich bar on a terminal, periodic plain log lines otherwise."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TextIO

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

LOG_INTERVAL_S = 10.0
"""Seconds between plain progress lines when stderr is not a terminal."""


class RunProgress:
    """Series done out of total, points evaluated, points per second, time left."""

    def __init__(
        self, total_series: int, stream: TextIO | None = None, enabled: bool = True
    ) -> None:
        self.total = total_series
        self.stream = stream or sys.stderr
        self.series = 0
        self.points = 0
        self.start = time.monotonic()
        self._last_log = self.start
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self.enabled = enabled
        self.interactive = enabled and self.stream.isatty()

    def __enter__(self) -> RunProgress:
        if self.interactive:
            self._bar = Progress(
                TextColumn("[bold]series"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[points]} points, {task.fields[rate]} points/s"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                transient=False,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task("run", total=self.total, points=0, rate="-")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.__exit__(exc_type, exc, tb)
        elif self.enabled and exc_type is None:
            self._log()

    @property
    def points_per_s(self) -> float:
        elapsed = time.monotonic() - self.start
        return self.points / elapsed if elapsed > 0 else 0.0

    def advance(self, points: int) -> None:
        """One more series finished, having evaluated `points` model sizes."""
        self.series += 1
        self.points += points
        if self._bar is not None and self._task is not None:
            self._bar.update(
                self._task, advance=1, points=self.points, rate=f"{self.points_per_s:,.0f}"
            )
        elif self.enabled and time.monotonic() - self._last_log >= LOG_INTERVAL_S:
            self._log()

    def _log(self) -> None:
        self._last_log = time.monotonic()
        elapsed = self._last_log - self.start
        left = (self.total - self.series) * elapsed / self.series if self.series else float("nan")
        print(
            f"[dmlimits] {self.series}/{self.total} series, {self.points} points, "
            f"{self.points_per_s:,.1f} points/s, {elapsed:,.0f} s elapsed, ~{left:,.0f} s left",
            file=self.stream,
            flush=True,
        )
