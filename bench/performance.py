"""Write docs/performance.md: how fast one series and whole commands run, and on which machine.

Run: `make performance` (or `.venv/bin/python bench/performance.py`; about 3 minutes on 2 quiet
cores, longer on a loaded machine). It measures; it does not pass or fail. Every figure is the
min / median / max of `--repeat` runs (default 3), with the date, the machine (CPU, cores,
load average), Python and numpy versions and the commit measured written beside them.

- one series, cold: CPU seconds of `evaluate_series` in a fresh process (every cache empty, as
  in a new worker), for the H100 default series under each physics and scaling;
- whole commands, start-up included (`bench/bench_commands.py`): each `dmlimits` command as a
  user types it, in its own process, into a fresh dataset root.

`--only NAME ...` measures those sections (`series`, `commands`, ...: `SECTIONS`) and keeps the
others from the current page; each section names its own date, commit and load.

`--baseline DIR` (an earlier checkout, e.g. from `git worktree add`) runs each command of that
checkout alternately with this one's and adds the ratio baseline / now, pair by pair; the page
names that checkout by its commit, never by its path. The larger
benchmarks (`bench/bench_sweep.py`, `bench/bench_million.py`, minutes each) print their figures
and are not part of this page.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
from bench_commands import BASELINE_VS_ORIGINAL, NO_BASELINE, Run, run_once

ROOT = Path(__file__).resolve().parent.parent
PERFORMANCE_MD = ROOT / "docs" / "performance.md"
GENERATED = (
    "<!-- Written by bench/performance.py (`make performance`) on the machine named below;"
    " do not edit by hand. -->"
)

SERIES: dict[str, list[str]] = {
    "H100 dense, physics=paper (the default)": [],
    "H100 sparse, physics=paper": ["scaling=sparse"],
    "H100 dense, physics=realistic": ["physics=realistic"],
    "H100 sparse, physics=realistic": ["physics=realistic", "scaling=sparse"],
}
"""One series each, evaluated cold in a fresh process: name -> overrides."""

COMMANDS: dict[str, list[str]] = {
    "`dmlimits` (the default series)": [],
    "`dmlimits -m hardware=v100_sxm,a100_sxm,h100_sxm` (three jobs)": [
        "-m",
        "hardware=v100_sxm,a100_sxm,h100_sxm",
    ],
    "`dmlimits sweep=sensitivity` (360 series, 2 workers)": ["sweep=sensitivity"],
    "`dmlimits sweep=sensitivity physics=realistic`": ["sweep=sensitivity", "physics=realistic"],
}
"""Whole commands: name -> arguments."""

COLD_SERIES = """
import sys, time
from pipeline.execute.series import evaluate_series
from pipeline.schema import compose_config, load_scenario
scenario = load_scenario(compose_config(sys.argv[1:]))
start = time.process_time()
outcome = evaluate_series(scenario)
print(time.process_time() - start, len(outcome.points))
"""
"""A fresh process: compose the scenario, then time the series alone (CPU seconds)."""


def spread(values: Sequence[float], fmt: str = "{:.2f}") -> str:
    """min / median / max."""
    return " / ".join(fmt.format(v) for v in (min(values), statistics.median(values), max(values)))


def cold_series_s(overrides: list[str]) -> tuple[float, int]:
    """CPU seconds of one series in a fresh process, and its number of points."""
    out = subprocess.run(
        [sys.executable, "-c", COLD_SERIES, *overrides],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout.split()
    return float(out[0]), int(out[1])


def cpu_name() -> str:
    """The CPU's model name (Linux), or what the platform module says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> str:
    """The machine a section is measured on, as its "Measured" line names it: the CPU and its
    logical cores."""
    return f"{cpu_name()}, {os.cpu_count()} logical cores"


MACHINE_NAMED = re.compile(
    r"^Measured .* at commit \S+( \(with uncommitted changes\))? on .+ logical cores, "
)
"""A section's "Measured" line that names its machine (`section_block`), its commit as `commit`
names it."""


def commit(checkout: Path = ROOT) -> str:
    """The commit of `checkout` (this one by default), marked when it has changes: how the page
    names a tree, never by its path on this machine."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=checkout, capture_output=True, text=True, check=False
        ).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + (" (with uncommitted changes)" if git("status", "--porcelain") else "")


def series_table(repeat: int) -> list[str]:
    """One series per physics and scaling, cold, CPU seconds."""
    rows = []
    for name, overrides in SERIES.items():
        runs = [cold_series_s(overrides) for _ in range(repeat)]
        seconds = [s for s, _ in runs]
        rows.append(f"| {name} | {runs[0][1]} | {spread(seconds, '{:.3f}')} |")
        print(rows[-1], flush=True)
    return [
        "| series | sizes evaluated | CPU s, min / median / max |",
        "|---|---|---|",
        *rows,
    ]


def command_table(repeat: int, baseline: Path | None) -> list[str]:
    """Whole commands: wall and CPU seconds, points per second; with a baseline, the ratios."""
    header = "| command | points | wall s | CPU s | points per wall s |"
    rule = "|---|---|---|---|---|"
    if baseline is not None:
        header += " baseline wall s | baseline / now, pair by pair |"
        rule += "---|---|"
    rows = []
    run_once([], None)  # warm-up, not counted: bytecode compiled (bench_commands.PYCACHE)
    if baseline is not None:
        run_once([], baseline)
    for name, args in COMMANDS.items():
        now: list[Run] = []
        base: list[Run] = []
        for _ in range(repeat):
            now.append(run_once(args, None))
            if baseline is not None and not set(args) & set(NO_BASELINE):
                base.append(run_once(args, baseline))
        row = (
            f"| {name} | {now[0].points:,} | {spread([r.wall_s for r in now])} "
            f"| {spread([r.cpu_s for r in now])} "
            f"| {spread([r.points_per_s for r in now], '{:,.0f}')} |"
        )
        if baseline is not None:
            if base:
                ratios = [b.wall_s / n.wall_s for b, n in zip(base, now, strict=True)]
                row += f" {spread([r.wall_s for r in base])} | {spread(ratios)}× |"
            else:
                row += " – | – |"
        rows.append(row)
        print(row, flush=True)
    return [header, rule, *rows]


class Section(NamedTuple):
    """One section of the page: its title, what it says it measures, and how to measure it."""

    title: str
    intro: tuple[str, ...]
    measure: Callable[[int, Path | None], list[str]]
    runs: int | None = None
    """How many runs its figures are of; None: `--repeat`'s."""


def series_section(repeat: int, baseline: Path | None) -> list[str]:
    del baseline  # the cold series are measured on this checkout alone
    return series_table(repeat)


def commands_section(repeat: int, baseline: Path | None) -> list[str]:
    lines = command_table(repeat, baseline)
    return [*lines, "", *baseline_lines(commit(baseline))] if baseline is not None else lines


def body(markdown: str) -> list[str]:
    """A bench script's section without its own `## ` heading (the page writes the heading)."""
    lines = markdown.strip("\n").splitlines()
    return lines[1:] if lines and lines[0].startswith("## ") else lines


def dask_section(repeat: int, baseline: Path | None) -> list[str]:
    del repeat, baseline  # one run per cluster size: each is minutes
    from bench_dask import markdown, measure

    return body(markdown(measure(sweeps=("sweep=sensitivity physics=realistic",))))


def nightly_section(repeat: int, baseline: Path | None) -> list[str]:
    del baseline
    from bench_nightly import CONFIGS, markdown, measure

    return body(markdown({name: measure(repeat, o) for name, o in CONFIGS.items()}))


def report_section(repeat: int, baseline: Path | None) -> list[str]:
    del baseline
    from bench_report import markdown, measure

    return body(markdown(measure(repeat)))


def profile_section(repeat: int, baseline: Path | None) -> list[str]:
    del repeat, baseline  # one profiled pass: its phases are CPU seconds of one process
    from bench_physics import phase_profile, phase_table

    return phase_table(phase_profile(every=10)).splitlines()


MILLION_EVERY = 100
"""The million-point section runs every 100th block of the sweep's series and extrapolates."""
MILLION_BLOCK = 36
"""Series per sampled block: one HBM bandwidth x capacity cycle of the sweep's innermost axes,
consecutive as the whole sweep runs them (a 1-in-100 spread sample never puts two neighbouring
series together, so it undercounts the cache reuse of the whole sweep)."""


def million_run(*sample: str, report_s: float = 1e9) -> list[str]:
    """`bench_million.py --sweep million_realistic` with these sample options (none: the whole
    sweep), its output as a text block."""
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "bench_million.py"),
            "--sweep",
            "million_realistic",
            *sample,
            "--report-s",
            f"{report_s:g}",
        ],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout.strip()
    print(out, flush=True)
    return ["```text", *out.splitlines(), "```"]


def million_section(repeat: int, baseline: Path | None) -> list[str]:
    del repeat, baseline  # one sampled run: minutes
    return million_run("--every", str(MILLION_EVERY), "--block", str(MILLION_BLOCK))


MILLION_WHOLE_REPORT_S = 120.0
"""The whole million-point run prints a line every two minutes: its rate and memory as it goes."""


MILLION_WHOLE_EARLIER = (
    ("2026-12-04 15:28", "1820d71", "34.0", "4,015", "808"),
    ("2026-12-04 22:18", "6b38cf8", "26.2", "3,111", "750"),
    ("2026-12-05 02:47", "d61e715", "25.0", "2,963", "778"),
    ("2026-12-05 07:55", "459cb2d", "20.8", "2,474", "780"),
    ("2026-12-05 11:03", "08bce48", "19.8", "2,349", "777"),
    ("2026-12-05 23:36", "5a37c77", "13.1", "1,556", "778"),
    ("2026-12-06 01:40", "ffb335e", "14.4", "1,704", "776"),
    ("2026-12-06 01:59", "f0fc4af", "14.7", "1,747", "786"),
    ("2026-12-06 04:08", "56b7928", "16.6", "1,970", "777"),
    ("2026-12-06 14:43", "98d4c23", "15.8", "1,872", "796"),
)
"""Earlier whole runs of this section (date UTC, commit, minutes, CPU seconds, peak RSS MiB), as
this page printed them then, each on `MILLION_WHOLE_EARLIER_MACHINE`: the before of the run
below. The first is the first whole run; before it, 273 realistic points per second of the
sensitivity sweep put a million points at about an hour."""
MILLION_WHOLE_EARLIER_MACHINE = "Intel(R) Xeon(R) Processor, 2 logical cores"
"""The machine of every run of `MILLION_WHOLE_EARLIER`: the page that printed each named it."""


def million_whole_section(repeat: int, baseline: Path | None) -> list[str]:
    del repeat, baseline  # one whole run: 15-20 minutes on 2 cores
    earlier = [
        "Earlier whole runs of this section, one each (the page as it was written then), on",
        f"{MILLION_WHOLE_EARLIER_MACHINE}:",
        "",
        "| measured (UTC) | commit | minutes | CPU s | peak RSS MiB |",
        "|---|---|---|---|---|",
        *(f"| {d} | {c} | {m} | {cpu} | {rss} |" for d, c, m, cpu, rss in MILLION_WHOLE_EARLIER),
        "",
        "This commit's run:",
        "",
    ]
    return [*earlier, *million_run(report_s=MILLION_WHOLE_REPORT_S)]


STARTUP_ROUNDS = 8
"""Rounds of the start-up section: each runs both small commands once per mechanism."""


def startup_section(repeat: int, baseline: Path | None) -> list[str]:
    del repeat, baseline
    from bench_startup import markdown, measure

    return body(markdown(measure(STARTUP_ROUNDS)))


SECTIONS: dict[str, Section] = {
    "series": Section(
        "One series, every cache empty",
        (
            "CPU seconds of `evaluate_series` for one series in a fresh process (composition and",
            "imports excluded): what a worker pays for a series whose candidate layouts no earlier",
            "series has enumerated. The sweep's later series reuse candidates and network tables",
            "([model.md](model.md) §9.2) and cost less.",
        ),
        series_section,
    ),
    "commands": Section(
        "Whole commands",
        (
            "Each command as a user types it, in its own process, start-up included, into a fresh",
            "dataset root (`bench/bench_commands.py`); CPU seconds include the workers.",
        ),
        commands_section,
    ),
    "startup": Section(
        "Start-up mechanisms, each switched off",
        ("The start-up path and its mechanisms: [architecture.md](architecture.md).",),
        startup_section,
        STARTUP_ROUNDS,
    ),
    "profile": Section(
        "Where a realistic point's time goes",
        (
            "Process CPU seconds per phase of every 10th series of `dmlimits sweep=sensitivity",
            "physics=realistic`, evaluated and written in one process from empty caches",
            "(`bench/bench_physics.py --profile`): one pass, not a spread.",
        ),
        profile_section,
        1,
    ),
    "million": Section(
        "A million realistic scenario points",
        (
            "`dmlimits sweep=million_realistic` (H100 SXM and B200, dense and sparse, the four",
            "batch laws, network and memory axes; [configuration.md](configuration.md)) planned",
            "as a stream (made as it runs, [scale-out.md](scale-out.md)), every",
            f"{MILLION_EVERY}th block of {MILLION_BLOCK} consecutive series run on 2 workers, and",
            "the whole sweep's points and CPU time extrapolated from that sample",
            "(`bench/bench_million.py --every --block`): one run. The plan's",
            "own time, the sample's pick (one walk of the whole expansion) and the time to the",
            "first series evaluated are reported.",
        ),
        million_section,
        1,
    ),
    "million_whole": Section(
        "A million realistic scenario points, the whole sweep",
        (
            "The same sweep run whole, every one of its series on 2 workers, as `dmlimits",
            "sweep=million_realistic` runs it (`bench/bench_million.py --sweep million_realistic`,",
            "planned and run through `plan_run` and `execute_plan` into a scratch root): one run,",
            "15-20 minutes. A line every two minutes gives the rate and the peak RSS so far",
            "(this process and its workers); the last, the whole sweep's time and how the peak grew",
            "over its second half (flat memory: near zero). Its point count is the sweep's own;",
            "the sample above (one block of 36 series in 100) extrapolates fewer points than the",
            "whole run gives, so read the whole sweep's size and time here.",
        ),
        million_whole_section,
        1,
    ),
    "dask": Section(
        "Scale-out: a local dask.distributed cluster",
        ("What the chunk size means for a cluster: [scale-out.md](scale-out.md).",),
        dask_section,
        1,
    ),
    "nightly": Section(
        "The nightly, by part",
        ("What each stage does: [nightly.md](nightly.md).",),
        nightly_section,
    ),
    "report": Section(
        "The report of the sensitivity sweep, by part",
        ("The report and its charts: [report.md](report.md).",),
        report_section,
    ),
}
"""The page's sections, in page order: name (for `--only`) -> section."""

MARK = "<!-- section: {} -->"
"""The line that opens a section: `--only` finds a kept section's text by it."""


def runs_text(runs: int) -> str:
    """'1 run', '3 runs'."""
    return f"{runs} run" + ("" if runs == 1 else "s")


def section_block(name: str, repeat: int, baseline: Path | None) -> list[str]:
    """One section measured now: its heading, its own date, commit and load, its figures."""
    section = SECTIONS[name]
    load_before = os.getloadavg()[0]
    started = datetime.datetime.now(datetime.UTC)
    figures = section.measure(repeat, baseline)
    return [
        MARK.format(name),
        f"## {section.title}",
        "",
        f"Measured {started:%Y-%m-%d %H:%M} UTC at commit {commit()} on {machine()},"
        f" {runs_text(section.runs or repeat)}, load average"
        f" (1 min) {load_before:.1f} before, {os.getloadavg()[0]:.1f} after.",
        "",
        *section.intro,
        "",
        *figures,
        "",
    ]


def kept_blocks(text: str) -> dict[str, list[str]]:
    """The sections of an existing page, by name (a page without markers has none)."""
    blocks: dict[str, list[str]] = {}
    name: str | None = None
    for line in text.splitlines():
        opened = next((n for n in SECTIONS if line == MARK.format(n)), None)
        if opened is not None:
            name = opened
            blocks[name] = []
        if name is not None:
            blocks[name].append(line)
    return blocks


def performance_md(
    repeat: int, baseline: Path | None, only: Sequence[str] = (), existing: str = ""
) -> str:
    """The whole of docs/performance.md: every section measured now, or with `only`, those
    sections measured now and the others kept from `existing` (each section names its own date
    and commit)."""
    kept = kept_blocks(existing) if only else {}
    missing = [n for n in SECTIONS if n not in only and only and n not in kept]
    if missing:
        raise SystemExit(f"--only needs a page that has the other sections; missing: {missing}")
    unnamed = [
        n for n, block in kept.items() if n not in only and not any(map(MACHINE_NAMED.match, block))
    ]
    if unnamed:  # its figures would be read as the machine of the page written now
        raise SystemExit(f"kept sections name no machine; measure them too (--only): {unnamed}")
    blocks: list[str] = []
    for name in SECTIONS:
        blocks += kept[name] if only and name not in only else section_block(name, repeat, baseline)
    lines = [
        "# Performance",
        "",
        GENERATED,
        "",
        "Measured by `bench/performance.py`; each section names its date, its commit and the",
        "machine it ran on. Figures measured on different machines do not compare: read a",
        "section's before and after on one machine. The last page was written at commit"
        f" {commit()}, on:",
        "",
        "| machine | |",
        "|---|---|",
        f"| CPU | {cpu_name()}, {os.cpu_count()} logical cores |",
        f"| Python | {platform.python_version()} ({platform.python_implementation()}) |",
        f"| numpy | {np.__version__} |",
        f"| OS | {platform.system()} {platform.release()} |",
        "",
        "Each figure is min / median / max of the runs its section names. On a shared machine the",
        "wall times move with the load; CPU seconds move less.",
        "",
        *blocks,
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


def baseline_lines(baseline_commit: str) -> list[str]:
    """The page's note on its baseline, named by its commit (`commit` of the baseline checkout);
    at commit 91dff32, how to chain its ratios to the original (`BASELINE_VS_ORIGINAL`)."""
    lines = [f"Baseline: commit {baseline_commit}, run alternately with this one."]
    if baseline_commit.startswith("91dff32"):
        factors = ", ".join(f"{k}: {v:g}×" for k, v in BASELINE_VS_ORIGINAL.items())
        lines += [
            f"Multiply by its measured ratio to the original ({factors}) for the ratio to the",
            "original implementation.",
        ]
    return [*lines, ""]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", type=Path, default=None, help="an earlier checkout")
    parser.add_argument("--stdout", action="store_true", help="print instead of writing")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=list(SECTIONS),
        default=(),
        help="measure these sections; keep the others from the current page",
    )
    args = parser.parse_args(argv)
    existing = PERFORMANCE_MD.read_text("utf-8") if args.only else ""
    text = performance_md(args.repeat, args.baseline, args.only, existing)
    if args.stdout:
        print(text)
    else:
        PERFORMANCE_MD.write_text(text, "utf-8")
        print(f"wrote {PERFORMANCE_MD.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
