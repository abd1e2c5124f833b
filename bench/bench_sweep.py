"""Benchmark: whole sweeps through the pipeline, points per second and peak memory, per backend.

Reports figures; it does not pass or fail. Run: `.venv/bin/python bench/bench_sweep.py`.

Each sweep is generated through the real expansion (`sweep.axes` over H100 SXM: per-hop network
latency x HBM bandwidth, log-spaced), on a fixed grid of 10 widths from d_model 12288 to the
last feasible paper width, evaluated whole (`output.whole_grid`), so a sweep of N scenario points
is N / 10 series and writes exactly N `points` rows. It is planned and run as `dmlimits` would
(`pipeline.app.plan.plan_run`, whose expansion time is reported, then `execute_plan`) into a
scratch dataset root, with progress off.

Peak memory is the largest sum of resident set sizes (RSS) of this process and all its
descendants (loky workers; the dask nanny and worker processes), sampled every 0.2 s. RSS sums
count shared library pages once per process, so they overstate physical memory a little.

Sweeps up to --run-whole-up-to points run whole. A larger sweep is expanded and planned whole,
but only its first series run, as many as the previous size's rate says fit in --time-limit-s:
its rate and peak memory are measured on that prefix (with the whole plan in memory), and its
total time is extrapolated from the measured rate (marked "extrapolated").
"""

from __future__ import annotations

import argparse
import math
import tempfile
import threading
import time
from dataclasses import dataclass

import psutil
from omegaconf import DictConfig, open_dict

from pipeline.app.execute import execute_plan
from pipeline.app.plan import plan_run
from pipeline.execute.settings import Backend
from pipeline.model.records.scaling import paper_d_model_grid
from pipeline.schema import compose_config

WIDTHS_PER_SERIES = 10
LAST_FEASIBLE_INDEX = 30
"""Index in the paper grid of the last width H100 SXM trains within 3 months (d_model 196608)."""
SAMPLE_S = 0.2


def widths() -> list[int]:
    """10 paper-grid widths spread evenly (by index) from the smallest to the last feasible."""
    grid = paper_d_model_grid()
    step = LAST_FEASIBLE_INDEX / (WIDTHS_PER_SERIES - 1)
    return [grid[round(i * step)] for i in range(WIDTHS_PER_SERIES)]


def sweep_config(n_points: int, backend: Backend, workers: int, root: str) -> DictConfig:
    """A latency x HBM sweep of n_points scenario points (n_points / 10 series), as a config."""
    n_series = n_points // WIDTHS_PER_SERIES
    n_latency = math.isqrt(n_series)
    while n_series % n_latency:
        n_latency -= 1
    d_models = ",".join(map(str, widths()))
    cfg = compose_config(
        [
            "scaling.grid.kind=list",
            f"scaling.grid.d_models=[{d_models}]",
            f"output.root={root}",
            "output.whole_grid=true",
            "output.resume=false",
            f"execution.backend={backend.value}",
            f"execution.n_jobs={workers}",
            f"execution.dask_workers={workers}",
        ]
    )
    with open_dict(cfg):
        cfg.sweep = {
            "axes": {
                "hardware.network.latency_us[*]": {
                    "start": 0.5,
                    "stop": 2.0,
                    "num": n_latency,
                    "log": True,
                },
                "hardware.hbm_bandwidth_gb_per_s": {
                    "start": 2000,
                    "stop": 5000,
                    "num": n_series // n_latency,
                    "log": True,
                },
            }
        }
    return cfg


class PeakRss:
    """Samples the RSS of this process plus its descendants in a thread; keeps the maximum."""

    def __init__(self) -> None:
        self.peak_bytes = 0
        self.parent_peak_bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        me = psutil.Process()
        parent = me.memory_info().rss
        total = parent
        for child in me.children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.Error:  # a worker that just exited
                continue
        self.parent_peak_bytes = max(self.parent_peak_bytes, parent)
        self.peak_bytes = max(self.peak_bytes, total)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self._sample()

    def __enter__(self) -> PeakRss:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


@dataclass(frozen=True, slots=True)
class Result:
    """One measured sweep."""

    n_points: int
    backend: str
    expand_s: float
    points_done: int
    seconds: float
    peak_mib: float
    parent_peak_mib: float
    complete: bool

    @property
    def points_per_s(self) -> float:
        return self.points_done / self.seconds

    @property
    def total_s(self) -> float:
        """Wall time of the whole sweep: measured, or extrapolated from the rate."""
        return self.seconds if self.complete else self.n_points / self.points_per_s


def measure(n_points: int, backend: Backend, workers: int, prefix_points: int | None) -> Result:
    """Expand a sweep, then run it whole (or only its first `prefix_points` points) on one
    backend into a scratch root."""
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as root:
        t0 = time.perf_counter()
        plan = plan_run(sweep_config(n_points, backend, workers, root))
        expand_s = time.perf_counter() - t0
        todo = plan.series
        if prefix_points is not None:
            todo = todo[: max(1, prefix_points // WIDTHS_PER_SERIES)]
        with PeakRss() as rss:
            t0 = time.perf_counter()
            report = execute_plan(plan, progress=False, series=todo)
            seconds = time.perf_counter() - t0
    mib = 2.0**20
    return Result(
        n_points,
        backend.value,
        expand_s,
        report.points,
        seconds,
        rss.peak_bytes / mib,
        rss.parent_peak_bytes / mib,
        complete=len(todo) == len(plan.series),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--backends", nargs="+", default=["loky", "dask"])
    parser.add_argument("--workers", type=int, default=psutil.cpu_count() or 2)
    parser.add_argument("--run-whole-up-to", type=int, default=10_000, help="points")
    parser.add_argument(
        "--time-limit-s",
        type=float,
        default=120.0,
        help="larger sweeps run only the series that fit in this time, then extrapolate",
    )
    args = parser.parse_args()
    print(
        f"{args.workers} workers on {psutil.cpu_count()} CPUs; {WIDTHS_PER_SERIES} widths "
        f"per series {widths()}, whole grid; sweeps over {args.run_whole_up_to:,} points run "
        f"~{args.time_limit_s:.0f} s of their series"
    )
    header = (
        f"{'points':>8} {'series':>7} {'backend':<8} {'expand s':>9} {'run s':>9} "
        f"{'points/s':>9} {'peak RSS MiB':>13} {'parent MiB':>11}  status"
    )
    print(header)
    print("-" * len(header))
    rates: dict[str, float] = {}
    for n_points in sorted(args.sizes):
        for name in args.backends:
            whole = n_points <= args.run_whole_up_to or name not in rates
            prefix = None if whole else int(args.time_limit_s * rates[name])  # points that fit
            r = measure(n_points, Backend(name), args.workers, prefix)
            rates[name] = r.points_per_s
            status = (
                "measured"
                if r.complete
                else f"ran the first {r.points_done:,} points; run s extrapolated"
            )
            print(
                f"{r.n_points:>8,} {r.n_points // WIDTHS_PER_SERIES:>7,} {r.backend:<8} "
                f"{r.expand_s:>9.1f} {r.total_s:>9.0f} {r.points_per_s:>9.1f} "
                f"{r.peak_mib:>13.0f} {r.parent_peak_mib:>11.0f}  {status}",
                flush=True,
            )


if __name__ == "__main__":
    main()
