"""Run progress: periodic plain lines off a terminal, a rich bar on one."""

from __future__ import annotations

import io
import time

from pipeline.execute.progress import RunProgress


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_plain_lines_every_interval() -> None:
    """Off a terminal, a line is printed at start, at most once per interval, and at the end."""
    clock, stream = FakeClock(), io.StringIO()
    with RunProgress(10, stream, interval_s=5.0, clock=clock, early_interval_s=5.0) as bar:
        for _ in range(10):
            clock.now += 2.0  # a series every 2 s: lines after 6 s, 12 s and 18 s
            bar.advance(30)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "[dmlimits] 10 series to evaluate"
    assert lines[1:] == [
        "[dmlimits] 3/10 series, 90 points, 15.0 points/s, 6 s elapsed, ~14 s left",
        "[dmlimits] 6/10 series, 180 points, 15.0 points/s, 12 s elapsed, ~8 s left",
        "[dmlimits] 9/10 series, 270 points, 15.0 points/s, 18 s elapsed, ~2 s left",
        "[dmlimits] 10/10 series, 300 points, 15.0 points/s, 20 s elapsed, ~0 s left",
    ]


def test_progress_plain_header_counts_resumed_series() -> None:
    """A resumed run says how many series were already done."""
    stream = io.StringIO()
    with RunProgress(4, stream, skipped=8, clock=FakeClock()):
        pass
    assert stream.getvalue().splitlines() == [
        "[dmlimits] 4 series to evaluate (8 already done)",
        "[dmlimits] 0/4 series, 0 points, 0.0 points/s, 0 s elapsed, time left unknown",
    ]


def test_progress_plain_marks_an_interrupted_run() -> None:
    """A run stopped by an exception ends its log with "stopped"."""
    stream = io.StringIO()
    try:
        with RunProgress(4, stream, clock=FakeClock()):
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert stream.getvalue().splitlines()[-1].endswith(", stopped")


def test_progress_disabled_prints_nothing() -> None:
    """With progress off nothing is written."""
    stream = io.StringIO()
    with RunProgress(3, stream, enabled=False, interval_s=0.0) as bar:
        bar.advance(5)
    assert stream.getvalue() == ""


def test_progress_bar_on_a_terminal_shows_points_and_rate() -> None:
    """On a terminal the rich bar shows series done, points, points per second and time left."""
    stream = io.StringIO()
    with RunProgress(2, stream, interactive=True, skipped=1) as bar:
        bar.advance(30)
        bar.advance(25)
    text = stream.getvalue()
    assert "[dmlimits] 2 series to evaluate (1 already done)" in text
    assert "2/2" in text
    assert "55 points" in text
    assert "points/s" in text


def test_progress_early_lines_every_two_seconds_with_a_stage_label() -> None:
    """In a stage's first minute a line comes every 2 s whatever the interval, then every
    interval; a labelled stage names itself on every line."""
    clock, stream = FakeClock(), io.StringIO()
    with RunProgress(40, stream, interval_s=10.0, clock=clock, label="moving frontier") as bar:
        for _ in range(40):
            clock.now += 2.0  # 80 s in all: a line per series for 60 s, then every 10 s
            bar.advance(1)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "[dmlimits] moving frontier: 40 series to evaluate"
    assert all(line.startswith("[dmlimits] moving frontier: ") for line in lines)
    elapsed = [int(line.split(" s elapsed")[0].rsplit(" ", 1)[1]) for line in lines[1:]]
    assert elapsed[:29] == list(range(2, 60, 2))  # the first minute: every 2 s
    assert elapsed[29:] == [68, 78, 80]  # then 10 s after the last line, and the end


def test_progress_last_line_not_repeated_at_the_end() -> None:
    """When the last series' line was just printed, closing the stage prints no copy of it."""
    clock, stream = FakeClock(), io.StringIO()
    with RunProgress(2, stream, clock=clock) as bar:
        for _ in range(2):
            clock.now += 3.0
            bar.advance(10)
    lines = stream.getvalue().splitlines()
    assert lines[-1].startswith("[dmlimits] 2/2 series")
    assert len(lines) == len(set(lines)) == 3


def test_progress_heartbeat_prints_while_no_series_finishes() -> None:
    """Off a terminal, a status line comes once the last is nearly an interval old, even when
    no series has finished since."""
    clock, stream = FakeClock(), io.StringIO()
    with RunProgress(2, stream, clock=clock, heartbeat=True):
        clock.now += 1.6  # 0.4 s short of the 2 s early interval: past HEARTBEAT_LEAD_S
        deadline = time.monotonic() + 10.0
        while len(stream.getvalue().splitlines()) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        lines = stream.getvalue().splitlines()
    assert (
        lines[1] == "[dmlimits] 0/2 series, 0 points, 0.0 points/s, 2 s elapsed, time left unknown"
    )


def test_progress_time_left_counts_from_the_first_series_end() -> None:
    """The time left is the rate since the first task's series finished (a slow start-up does
    not stretch it): after tasks of 17 series ending at 10 s and 12 s, 102 series are left at
    17 per 2 s, 12 s."""
    clock, stream = FakeClock(), io.StringIO()
    with RunProgress(136, stream, clock=clock, heartbeat=False) as bar:
        for at in (10.0, 12.0):
            clock.now = 100.0 + at
            for _ in range(17):
                bar.advance(30)
        assert bar.seconds_left == 12.0


def test_progress_time_left_of_parallel_tasks_counts_those_running() -> None:
    """Two workers, eight tasks of 17 series, 2.5 s each: when the first task ends, the other
    is about as far along, so about 7.5 s are left (not 119 series at 17 per 2.5 s, 17.5 s),
    and the estimate stays near the time actually left as the tasks end in pairs."""
    clock, stream = FakeClock(), io.StringIO()
    ends = [100.0 + 2.5 * (pair + 1) + 0.1 * worker for pair in range(4) for worker in range(2)]
    with RunProgress(136, stream, clock=clock, heartbeat=False, parallel=2, task_series=17) as bar:
        for end in ends[:-1]:
            clock.now = end
            for _ in range(17):
                bar.advance(30)
            left = bar.seconds_left
            assert left is not None
            assert abs(left - (ends[-1] - end)) <= 0.1 * (ends[-1] - ends[0])


def test_progress_bar_labels_its_times_and_shows_the_plain_lines_estimate() -> None:
    """The bar names both of its times, elapsed then left, and its time left is the plain
    lines' estimate (`seconds_left`), not one of rich's own: 4 of 10 series at 2 s each after
    the first, 12 s left, as a plain line says it."""
    clock, stream, plain = FakeClock(), io.StringIO(), io.StringIO()
    with (
        RunProgress(10, stream, interactive=True, clock=clock) as bar,
        RunProgress(10, plain, interactive=False, clock=clock, heartbeat=False) as log,
    ):
        for _ in range(4):
            clock.now += 2.0
            bar.advance(30)
            log.advance(30)
        assert bar.seconds_left == log.seconds_left == 12.0
    text = " ".join(stream.getvalue().split())
    assert "4/10 120 points, 15.0 points/s, 0:00:08 elapsed, ~0:00:12 left" in text
    assert "~12 s left" in plain.getvalue()


def test_progress_bar_before_the_first_series_says_the_time_left_is_unknown() -> None:
    """Before a series finishes the bar says so in words, not with rich's ``-:--:--``."""
    clock, stream = FakeClock(), io.StringIO()
    with RunProgress(3, stream, interactive=True, clock=clock):
        clock.now += 5.0
    text = " ".join(stream.getvalue().split())
    assert "0/3 0 points, - points/s, 0:00:05 elapsed, time left unknown" in text
    assert "-:--:--" not in text


def test_progress_bar_time_left_follows_the_clock_between_series() -> None:
    """The bar's time left is worked out each time it is drawn, so it follows the clock while
    no series finishes (as the plain lines' heartbeat does)."""
    clock, stream = FakeClock(), io.StringIO()
    with RunProgress(4, stream, interactive=True, clock=clock) as bar:
        clock.now += 2.0
        bar.advance(1)
        assert bar.times() == "0:00:02 elapsed, ~0:00:06 left"
        clock.now += 2.0
        assert bar.times() == "0:00:04 elapsed, ~0:00:12 left"
