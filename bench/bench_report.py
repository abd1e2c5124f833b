"""Benchmark: `dmlimits-report` of the sensitivity sweep, its cost by part.

Reports figures; it does not pass or fail. Run: `.venv/bin/python bench/bench_report.py`
(prints the docs/performance.md section; `bench/performance.py` calls `measure` and `markdown`).

The sweep (`dmlimits sweep=sensitivity`, 360 series) is written once into a scratch root, not
timed. Each counted run of `dmlimits-report ROOT --out DIR` is then timed from outside, as a
user runs it, by its own stage log: the command names each part on stderr as it finishes it
("read 11 tables", "utilization.png (1/4)", ..., "index.html -> ..."), and this script stamps
each line with the wall seconds since the start and the CPU seconds (user + system) of the
process and every process under it so far, read from /proc (Linux). A part costs the time
from the line that opens it to the next part's; "start-up" is the time to the first line
(interpreter, imports), "exit" the time after the last (the interpreter's shutdown). `Timeline` and `run_timeline` are shared with `bench/bench_nightly.py`.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True, slots=True)
class Mark:
    """One line the command printed, stamped."""

    wall_s: float
    """Seconds since the command started."""
    cpu_s: float
    """CPU seconds (user + system) of the command and every process under it so far."""
    line: str


@dataclass(frozen=True, slots=True)
class Timeline:
    """One run of a command: its lines, stamped, and its totals."""

    marks: tuple[Mark, ...]
    wall_s: float
    cpu_s: float
    returncode: int

    def silent_stretches_s(self, after_s: float = 1.0) -> list[tuple[float, float]]:
        """(start, length) of each stretch without a line, from `after_s` to the end."""
        times = [after_s, *(m.wall_s for m in self.marks if m.wall_s > after_s), self.wall_s]
        return [(a, b - a) for a, b in itertools.pairwise(times)]

    def longest_silence_s(self, after_s: float = 1.0) -> tuple[float, float]:
        """The longest stretch without a line after `after_s`: (start, length)."""
        return max(self.silent_stretches_s(after_s), key=lambda s: s[1], default=(0.0, 0.0))


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()  # after "pid (comm) "


def tree_cpu_s(root: int) -> float:
    """CPU seconds of `root` and all its descendants: the live ones' own time, plus the time of
    the children each has reaped (Linux /proc; 0 elsewhere)."""
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit() and (fields := _stat_fields(int(entry))) is not None:
            stats[int(entry)] = fields
            children.setdefault(int(fields[1]), []).append(int(entry))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        if (fields := stats.get(pid)) is None:
            continue
        total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
        todo.extend(children.get(pid, []))
    return total / TICKS_PER_S


def run_timeline(
    argv: Sequence[str], env: dict[str, str] | None = None, timeout_s: float = 1800.0
) -> Timeline:
    """Run `argv`, its stdout and stderr merged, and stamp each line it prints (a carriage
    return ends a line too, as a terminal bar's would)."""
    start = time.monotonic()
    proc = subprocess.Popen(
        list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, bufsize=0
    )
    cpu = 0.0
    marks: list[Mark] = []
    pending = b""
    assert proc.stdout is not None
    while chunk := proc.stdout.read(65536):
        now = time.monotonic() - start
        cpu = max(cpu, tree_cpu_s(proc.pid))
        pending += chunk
        *lines, pending = re.split(rb"[\r\n]", pending)
        marks += [Mark(now, cpu, x.decode(errors="replace")) for x in lines if x.strip()]
        if now > timeout_s:
            proc.kill()
    # the command's own accounting: its time and its reaped workers' (a worker it never reaped
    # is counted up to its last line, `cpu`)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    cpu_total = usage.ru_utime + usage.ru_stime
    proc.returncode = os.waitstatus_to_exitcode(status)
    if pending.strip():
        marks.append(Mark(wall, cpu_total, pending.decode(errors="replace")))
    return Timeline(tuple(marks), wall, max(cpu_total, cpu), proc.returncode)


@dataclass(frozen=True, slots=True)
class Part:
    """A named part of a command: from the line that opens it to the line that opens the next."""

    name: str
    wall_s: float
    cpu_s: float


Boundary = tuple[Callable[[str], bool], str]
"""A line that opens a part (tested on the line), and the part's name."""


def parts_of(timeline: Timeline, boundaries: Sequence[Boundary]) -> list[Part]:
    """The command's cost by part: "start-up" from the start to the first boundary's line, then
    each part from its line (the first line after the previous boundary's that passes its
    test) to the next one's, the last to the command's end. A boundary whose line is missing
    is skipped: its part's time then counts to the part before."""
    cuts: list[tuple[float, float, str]] = [(0.0, 0.0, "start-up")]
    marks = list(timeline.marks)
    for test, name in boundaries:
        found = next((m for m in marks if m.wall_s >= cuts[-1][0] and test(m.line)), None)
        if found is not None:
            marks = marks[marks.index(found) + 1 :]
            cuts.append((found.wall_s, found.cpu_s, name))
    ends = [(w, c) for w, c, _ in cuts[1:]] + [(timeline.wall_s, timeline.cpu_s)]
    return [Part(n, w1 - w0, c1 - c0) for (w0, c0, n), (w1, c1) in zip(cuts, ends, strict=True)]


def spread(values: Sequence[float], fmt: str = "{:.2f}") -> str:
    """min / median / max."""
    return " / ".join(fmt.format(v) for v in (min(values), statistics.median(values), max(values)))


def parts_table(runs: Sequence[list[Part]], totals: Sequence[Timeline]) -> list[str]:
    """A markdown table of the parts over several runs (min / median / max), with totals."""
    names = list(dict.fromkeys(p.name for run in runs for p in run))
    rows = [
        "| part | wall s (min / median / max) | CPU s (min / median / max) |",
        "|---|---:|---:|",
    ]
    for name in names:
        found = [p for run in runs for p in run if p.name == name]
        walls, cpus = [p.wall_s for p in found], [p.cpu_s for p in found]
        rows.append(f"| {name} | {spread(walls)} | {spread(cpus)} |")
    rows.append(
        f"| **whole command** | {spread([t.wall_s for t in totals])} | "
        f"{spread([t.cpu_s for t in totals])} |"
    )
    return rows


SWEEP = ["sweep=sensitivity"]
"""The sweep the report draws (360 series)."""
R = "[dmlimits-report] "
REPORT_PARTS: tuple[Boundary, ...] = (
    (lambda line: line.startswith(R + "reading "), "reading the tables"),
    (lambda line: line.startswith(R + "read "), "utilization.png"),
    (lambda line: line.startswith(R + "utilization.png"), "thresholds.png"),
    (lambda line: line.startswith(R + "thresholds.png"), "parallelism.png"),
    (lambda line: line.startswith(R + "parallelism.png"), "step_time.png"),
    (lambda line: line.startswith(R + "step_time.png"), "the other charts, index.html"),
    (lambda line: line.startswith(R + "index.html"), "exit"),
)
"""Each part of `dmlimits-report` by the line that ends it (`pipeline.report.main`)."""


def write_sweep(root: Path) -> None:
    """The sensitivity sweep into `root` (set up, not timed)."""
    subprocess.run(
        [str(BIN / "dmlimits"), *SWEEP, f"output.root={root}"],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def measure(repeat: int = 3, root: Path | None = None) -> list[Timeline]:
    """`repeat` timed runs of `dmlimits-report` on the sensitivity sweep (written into `root`,
    or a scratch folder, first), after one warm-up run not counted."""
    with tempfile.TemporaryDirectory(prefix="dmlimits-bench-report-") as scratch:
        dataset = root or Path(scratch) / "sweep"
        if not (dataset / "points").exists():
            write_sweep(dataset)
        argv = [str(BIN / "dmlimits-report"), str(dataset), "--out", str(Path(scratch) / "out")]
        run_timeline(argv)  # warm-up: bytecode, the file cache
        runs = [run_timeline(argv) for _ in range(repeat)]
    for run in runs:
        if run.returncode != 0:
            raise RuntimeError(f"dmlimits-report failed: {run.marks[-3:]}")
    return runs


def markdown(runs: Sequence[Timeline]) -> str:
    """The docs/performance.md section: `dmlimits-report` of the sensitivity sweep by part."""
    lines = [
        "## The report of the sensitivity sweep, by part",
        "",
        f"`dmlimits sweep=sensitivity`, then `dmlimits-report ROOT --out DIR`: {len(runs)} "
        f"run{'s' if len(runs) != 1 else ''} after a warm-up. Each part is timed from outside "
        "by the command's own stage log, from the line that opens it to the next part's (a "
        "chart's part ends when its file is written); CPU seconds are the process's (user + "
        "system, from /proc), wall seconds the clock's (`bench/bench_report.py`).",
        "",
        *parts_table([parts_of(run, REPORT_PARTS) for run in runs], runs),
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    """Measure and print the section."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="counted runs (default 3)")
    parser.add_argument("--root", type=Path, default=None, help="a sensitivity sweep to reuse")
    args = parser.parse_args()
    print(markdown(measure(args.repeat, args.root)))


if __name__ == "__main__":
    main()
