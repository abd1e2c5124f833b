"""Benchmark: reading, checking and fitting the shipped Epoch AI snapshots (target: under 2 s).

Reports figures; it does not pass or fail. Run: `.venv/bin/python bench/bench_sources.py`.
One process, one thread; times are this process's CPU seconds (`time.process_time`), which other
load on a shared machine disturbs far less than wall time. Each repeat reads both shipped
sources (body checks, column checks, parsing with rejects), selects the frontier runs and fits
them with the 2,000-resample bootstrap, and forecasts one threshold's year with its interval.
The first repeat includes the imports' first-use costs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import statistics
import time

from pipeline.forecast.observed import FrontierSettings, fit_frontier
from pipeline.forecast.paths import fitted
from pipeline.sources.observe import observe
from pipeline.sources.settings import FetchSettings, SourceSpec, SourcesSettings

SHIPPED = SourcesSettings(
    SourceSpec("frontier_runs", "package:notable_ai_models.csv"),
    SourceSpec("accelerators", "package:ml_hardware.csv"),
    FetchSettings(),
    None,
)
TARGET_S = 2.0


def once() -> tuple[float, float, int, int]:
    """CPU seconds to read and check, then to fit; runs kept and rejected."""
    start = time.process_time()
    observations = observe(SHIPPED, None, warn=False)
    read_s = time.process_time() - start
    fit, _ = fit_frontier(observations.runs, FrontierSettings())
    fitted(fit, 2026.0).year_intervals([2e28])
    fit_s = time.process_time() - start - read_s
    rejected = sum(len(r.rejects) for r in observations.reads)
    return read_s, fit_s, len(observations.runs) + len(observations.accelerators), rejected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    runs = [once() for _ in range(args.repeat)]
    totals = [r + f for r, f, _, _ in runs]
    warm = totals[1:] or totals
    _, _, kept, rejected = runs[0]
    print(
        f"bench_sources {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {platform.node()}, "
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}"
    )
    print(f"rows kept {kept}, rejected {rejected}; {args.repeat} repeats, CPU seconds")
    print(f"first (cold): {totals[0]:.3f} s (read+check {runs[0][0]:.3f}, fit {runs[0][1]:.3f})")
    print(
        f"warm: median {statistics.median(warm):.3f} s, min {min(warm):.3f}, max {max(warm):.3f}"
        f" (read+check median {statistics.median(r for r, _, _, _ in runs[1:] or runs):.3f},"
        f" fit median {statistics.median(f for _, f, _, _ in runs[1:] or runs):.3f})"
    )
    verdict = "under" if max(totals) < TARGET_S else "OVER"
    print(f"target {TARGET_S:.0f} s: every repeat {verdict} it (slowest {max(totals):.3f} s)")


if __name__ == "__main__":
    main()
