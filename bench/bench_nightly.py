"""Benchmark: the default nightly (`dmlimits +experiment=nightly`), its cost by part.

Reports figures; it does not pass or fail. Run: `.venv/bin/python bench/bench_nightly.py`
(prints the docs/performance.md section; `bench/performance.py` calls `measure` and `markdown`).

Each counted run is a fresh nightly root, timed from outside by the run's own stage log, as
`bench/bench_report.py` times the report (`run_timeline`: each line stamped with the wall
seconds since the start and the CPU seconds of the command and all its worker processes so
far). The parts, by the line that ends each: start-up (to the first line), expanding the sweep,
reading the sources and fitting the frontier, the moving frontier, the run's tables (trends,
observed runs, the reality check under both physics), the uncertainty design (when on), the
run's own series, publishing and the change report, and the rest (the summary, exit). The page
also gives the longest stretch without a progress line after the first second, and how well
the first "time left" of each stage foretold the stage's end.

Two configurations: the default nightly without the uncertainty design
(`forecast.uncertainty=null`, the issue's target: under 20 s on 2 quiet cores) and with it.
"""

from __future__ import annotations

import argparse
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench_report import BIN, Boundary, Timeline, parts_of, parts_table, run_timeline, spread

CONFIGS: dict[str, list[str]] = {
    "`dmlimits +experiment=nightly forecast.uncertainty=null`": ["forecast.uncertainty=null"],
    "`dmlimits +experiment=nightly` (with the 32-point uncertainty design)": [],
}
"""Name -> overrides after +experiment=nightly."""

P = "[dmlimits] "
NIGHTLY_PARTS: tuple[Boundary, ...] = (
    (lambda line: line.startswith(P) and "reading the observed" in line, "sources, fitting"),
    (lambda line: line.startswith(P + "moving frontier: "), "moving frontier"),
    (lambda line: line.startswith(P + "the run's tables"), "the run's tables (reality check)"),
    (lambda line: line.startswith(P + "uncertainty design: "), "uncertainty design"),
    (lambda line: bool(re.match(r"\[dmlimits\] \d+ series to evaluate", line)), "run's series"),
    (lambda line: line.startswith(P + "publishing"), "publishing, the change report"),
    (lambda line: line.startswith("dmlimits: "), "the summary, exit"),
)
"""Each part of the nightly by the line that opens it: start-up (the check, expanding the
sweep) runs to the first line."""

LEFT = re.compile(
    r"\[dmlimits\] (?P<label>[^:]*?:? ?)\d+/\d+ series.* (?P<e>[\d,]+) s elapsed, ~(?P<l>[\d,]+) s left"
)


def time_left_errors(timeline: Timeline) -> list[tuple[str, float, float]]:
    """(stage, foretold, actual) seconds left at each stage's first "time left" line: actual is
    the time from that line to the stage's last line."""
    stages: dict[str, list[tuple[float, float]]] = {}
    for mark in timeline.marks:
        if (found := LEFT.match(mark.line)) is not None:
            left = float(found["l"].replace(",", ""))
            stages.setdefault(found["label"].rstrip(": ") or "run", []).append((mark.wall_s, left))
    out = []
    for label, seen in stages.items():
        (first_at, foretold), (last_at, _) = seen[0], seen[-1]
        out.append((label, foretold, last_at - first_at))
    return out


def measure(
    repeat: int = 3, overrides: Sequence[str] = ("forecast.uncertainty=null",)
) -> list[Timeline]:
    """`repeat` nightly runs, each into a fresh root, after one warm-up run not counted."""
    runs = []
    with tempfile.TemporaryDirectory(prefix="dmlimits-bench-nightly-") as scratch:
        for i in range(repeat + 1):
            argv = [
                str(BIN / "dmlimits"),
                "+experiment=nightly",
                *overrides,
                f"output.nightly_root={Path(scratch) / str(i)}",
            ]
            run = run_timeline(argv)
            if run.returncode != 0:
                raise RuntimeError(f"nightly failed: {[m.line for m in run.marks[-3:]]}")
            runs.append(run)
    return runs[1:]


def markdown(measured: dict[str, Sequence[Timeline]]) -> str:
    """The docs/performance.md section: the nightly's cost by part, per configuration
    (name -> its runs, as `measure` gives them)."""
    lines = [
        "## The nightly, by part",
        "",
        "Each run into a fresh nightly root, after a warm-up run, timed from outside by its "
        "own stage log: a part from the line that opens it to the next part's; CPU seconds of "
        "the command and its worker processes (user + system, from /proc), wall seconds the "
        "clock's (`bench/bench_nightly.py`). Start-up is the command's check and the sweep's "
        "expansion, before the first line.",
        "",
    ]
    for name, runs in measured.items():
        silences = [run.longest_silence_s() for run in runs]
        errors = [e for run in runs for e in time_left_errors(run)]
        lines += [
            f"### {name}",
            "",
            *parts_table([parts_of(run, NIGHTLY_PARTS) for run in runs], runs),
            "",
            "Longest stretch without a progress line after the first second: "
            + spread([s[1] for s in silences], "{:.1f}")
            + " s (min / median / max). First time left of each stage, foretold against "
            "taken: "
            + (
                "; ".join(
                    f"{label} {foretold:.0f} s against {actual:.1f} s"
                    for label, foretold, actual in errors[:4]
                )
                or "none printed"
            )
            + ".",
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    """Measure both configurations and print the section."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="counted runs (default 3)")
    parser.add_argument("--only-default", action="store_true", help="without the design only")
    args = parser.parse_args()
    configs = dict(list(CONFIGS.items())[:1]) if args.only_default else CONFIGS
    print(markdown({name: measure(args.repeat, o) for name, o in configs.items()}))


if __name__ == "__main__":
    main()
