"""Progress of a run: a rich bar on a terminal, periodic plain log lines otherwise.

Both show series done out of total, points evaluated, points per second, the time elapsed and
the time left, estimated from the series rate (`RunProgress.seconds_left`; a series evaluates
its model sizes up to the first infeasible one, so the points still to come are not known in
advance). Series a resumed run skips are reported once at the start and left out of the rates.

    [dmlimits] 360 series to evaluate (40 already done)
    [dmlimits] 96/360 series, 3,412 points, 98.3 points/s, 35 s elapsed, ~96 s left

The bar shows the same two times, the same estimate, as a clock:

    series ━━━━━━━━━━━━━━━━━━━━ 96/360 3,412 points, 98.3 points/s, 0:00:35 elapsed, ~0:01:36 left
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress, ProgressColumn, TaskID

LOG_INTERVAL_S = 10.0
"""Seconds between plain progress lines when the stream is not a terminal..."""
EARLY_INTERVAL_S = 2.0
EARLY_S = 60.0
"""... but every `EARLY_INTERVAL_S` in a stage's first `EARLY_S` seconds, so a short run (the
nightly) is never silent for long and a long sweep's log stays short."""
HEARTBEAT_LEAD_S = 0.5
"""Off a terminal, a line comes even while no series finishes: once the last line is this much
short of the interval old (a series that takes longer than the interval never leaves the log
silent for longer than it)."""
HEARTBEAT_TICK_S = 0.1
"""How often the heartbeat looks at the clock."""
BURST_S = 0.25
"""Series finishing this soon after the first are counted with it (one task's series arrive
together): the time left is then estimated from the series finished after them."""
PREFIX = "[dmlimits]"


def stage(text: str, stream: TextIO | None = None) -> None:
    """One line saying what the run is doing now ("[dmlimits] reading sources ...")."""
    print(f"{PREFIX} {text}", file=stream or sys.stderr, flush=True)


class RunProgress:
    """Series done out of total, points evaluated, points per second, time left."""

    def __init__(
        self,
        total_series: int,
        stream: TextIO | None = None,
        enabled: bool = True,
        *,
        skipped: int = 0,
        interval_s: float = LOG_INTERVAL_S,
        interactive: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        label: str = "",
        early_interval_s: float = EARLY_INTERVAL_S,
        heartbeat: bool | None = None,
        parallel: int = 1,
        task_series: int = 1,
    ) -> None:
        """`total_series` to evaluate now; `skipped` already done (resume); `interactive`
        forces the bar (True) or plain lines (False) instead of asking the stream; `label`
        names a stage other than the run's own series ("moving frontier"); `heartbeat` prints
        plain lines between series too (`HEARTBEAT_LEAD_S`; default: on the real clock);
        `parallel` tasks of `task_series` series each run at once (a pool's workers,
        `seconds_left`)."""
        self.parallel = max(1, parallel)
        self.task_series = max(1, task_series)
        self.label = label
        self.early_interval_s = early_interval_s
        self.total = total_series
        self.skipped = skipped
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.interval_s = interval_s
        self.interactive = enabled and (
            self.stream.isatty() if interactive is None else interactive
        )
        self._clock = clock
        self.series = 0
        self.points = 0
        self.start = clock()
        self._last_log = self.start
        self._printed: int | None = None
        """`series` when the last plain line was printed (the closing line is not repeated)."""
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._first: tuple[float, int] | None = None
        """(clock, series done) when the first series finished (a task's series finish at once)."""
        self._heartbeat = clock is time.monotonic if heartbeat is None else heartbeat
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._beat: threading.Thread | None = None

    def __enter__(self) -> RunProgress:
        self.start = self._last_log = self._clock()
        if self.interactive:
            from rich.console import Console  # deferred: only a terminal shows the bar
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
            )

            self._bar = Progress(
                TextColumn(f"[bold]{self.label + ': ' if self.label else ''}series"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[points]:,} points, {task.fields[rate]} points/s,"),
                _times_column(self.times),
                console=Console(file=self.stream),
                transient=False,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task("run", total=self.total, points=0, rate="-")
            if self.skipped:
                self._bar.console.print(self._header(), markup=False, highlight=False)
        elif self.enabled:
            self._print(self._header())
            self._printed = None  # a header is not a status line
            if self._heartbeat:
                self._beat = threading.Thread(target=self._beats, daemon=True)
                self._beat.start()
        return self

    def _beats(self) -> None:
        """The heartbeat: a status line whenever the last line is nearly an interval old."""
        while not self._stopped.wait(HEARTBEAT_TICK_S):
            with self._lock:
                if self._clock() - self._last_log >= self._interval() - HEARTBEAT_LEAD_S:
                    self._print(self._status())

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stopped.set()
        if self._beat is not None:
            self._beat.join()
        if self._bar is not None:
            self._bar.__exit__(exc_type, exc, tb)
        elif self.enabled and (exc_type is not None or self._printed != self.series):
            self._print(self._status() + ("" if exc_type is None else ", stopped"))

    @property
    def elapsed_s(self) -> float:
        """Seconds since the run started."""
        return self._clock() - self.start

    @property
    def points_per_s(self) -> float:
        """Points evaluated per second so far (0 before any time has passed)."""
        elapsed = self.elapsed_s
        return self.points / elapsed if elapsed > 0 else 0.0

    @property
    def seconds_left(self) -> float | None:
        """Time left at the series rate so far, counted from the first series' end once more
        have finished (so the workers' start-up, before the first, does not stretch every later
        estimate); None before the first series finishes. With `parallel` tasks of
        `task_series` at once, the rate since the stage began, the tasks still running counted
        as about as far along as the last one done (the series done rounded up to a whole
        round of tasks): when the first task of two workers' eight ends, not an eighth of the
        work is done but about a quarter."""
        series, total, first = self.series, self.total, self._first  # the bar's thread reads too
        if not series:
            return None
        if self.parallel > 1:  # tasks finish side by side: the rate since the stage began
            round_ = self.parallel * self.task_series  # the series of the tasks at once
            done = float(min(total, -(-series // round_) * round_))
            return max(0.0, total - done) * self.elapsed_s / max(done, 1.0)
        if first is not None and series > first[1]:
            at, done_then = first
            return (total - series) * (self._clock() - at) / (series - done_then)
        return (total - series) * self.elapsed_s / series

    def times(self) -> str:
        """The bar's times: elapsed, and `seconds_left` (the plain lines' estimate), as clocks,
        ``0:00:35 elapsed, ~0:01:36 left`` (``time left unknown`` before the first series)."""
        left = self.seconds_left
        estimate = "time left unknown" if left is None else f"~{_clock_text(left)} left"
        return f"{_clock_text(self.elapsed_s)} elapsed, {estimate}"

    def skip(self) -> None:
        """One series of the total turned out already done when the run reached it (a resumed
        run whose series are made as they run): it leaves the total."""
        self.total -= 1
        self.skipped += 1
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, total=self.total)

    def advance(self, points: int) -> None:
        """One more series finished, having evaluated `points` model sizes."""
        self.series += 1
        self.points += points
        if self._first is None or self._clock() - self._first[0] < BURST_S:
            self._first = (self._first[0] if self._first else self._clock(), self.series)
        if self._bar is not None and self._task is not None:
            self._bar.update(
                self._task, advance=1, points=self.points, rate=f"{self.points_per_s:,.1f}"
            )
        elif self.enabled:
            with self._lock:
                if self._clock() - self._last_log >= self._interval():
                    self._print(self._status())

    def _interval(self) -> float:
        """Seconds between plain lines now (`EARLY_INTERVAL_S` early in the stage)."""
        if self.elapsed_s < EARLY_S:
            return min(self.interval_s, self.early_interval_s)
        return self.interval_s

    @property
    def _prefix(self) -> str:
        return f"{PREFIX} {self.label}:" if self.label else PREFIX

    def _header(self) -> str:
        done = f" ({self.skipped} already done)" if self.skipped else ""
        return f"{self._prefix} {self.total} series to evaluate{done}"

    def _status(self) -> str:
        left = self.seconds_left
        return (
            f"{self._prefix} {self.series}/{self.total} series, {self.points:,} points, "
            f"{self.points_per_s:,.1f} points/s, {self.elapsed_s:,.0f} s elapsed, "
            + ("time left unknown" if left is None else f"~{left:,.0f} s left")
        )

    def _print(self, line: str) -> None:
        self._last_log = self._clock()
        self._printed = self.series
        print(line, file=self.stream, flush=True)


def _clock_text(seconds: float) -> str:
    """Seconds as a clock, ``0:01:36`` (rounded to the second, as the plain lines round)."""
    return str(timedelta(seconds=round(max(0.0, seconds))))


def _times_column(times: Callable[[], str]) -> ProgressColumn:
    """A bar column showing ``times()`` each time the bar is drawn, so that the time left
    follows the clock between series as the plain lines' heartbeat does."""
    from rich.progress import ProgressColumn, Task  # deferred: only a terminal shows the bar
    from rich.text import Text

    class TimesColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text(times(), style="progress.elapsed")

    return TimesColumn()
