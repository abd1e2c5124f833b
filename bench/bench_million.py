"""Benchmark: a 1,000,000-point sweep run whole through the pipeline; time and peak memory.

Reports figures; it does not pass or fail. Run: `.venv/bin/python bench/bench_million.py`
(`--sweep million_realistic` run whole takes a quarter of an hour on 2 cores; `--series N` runs
only the first N series of the plan, `--every K` every K-th series of it, a sample spread over
the whole sweep; with `--block B` every K-th block of B consecutive series, whose neighbours
share the workers' caches as in the whole sweep).

The sweep is generated through the real expansion (`sweep.axes`) around H100 SXM, dense,
critical batch: HBM bandwidth (20 values, outermost, so that the series sharing a GPU run
together) x per-hop latency (10) x inter-node bandwidth (10) x NVLink domain size (5) =
10,000 series, each over 100 widths (d_model 12288, 13312, ... 113664, all below the latency
wall) evaluated whole (`output.whole_grid`): 1,000,000 scenario points, every one a search
for the smallest cluster and its best layout. It is planned and run as `dmlimits` would
(`plan_run`, then `execute_plan`) with the configured workers into a scratch dataset root.

Every `--report-s` seconds it prints the points written so far, their rate, the points per
CPU-second of this process and its workers, less the CPU time of its own sampling (the rate
the machine would give those processes alone, per core: on a shared machine wall time also
measures the other load) and the peak RSS
(this process plus its workers, as in bench_sweep.py), so that a run stopped early still gives
a measured rate; the last line is the whole sweep's time, rates and peak RSS, and how much
the peak grew per series over the second half of the run (near zero when memory is flat).

A sample of a streamed sweep (more than `pipeline.app.plan.CHECKED_SERIES` series) runs as a
stream too (`SampledStream`: made as it runs, its series not kept), as the whole sweep would.

`--sweep million_realistic` runs conf/sweep/million_realistic.yaml instead (physics
realistic, H100 SXM and B200, dense and sparse, four batch laws, network and memory axes:
115,200 series over the paper grid, each stopping at its wall as `dmlimits` runs it). Its point
count is the points its series yield (the rows of the `points` table); a sample (`--every K`)
also prints the points per series it measured and the whole sweep's points and CPU time
extrapolated from them. A streamed sample walks the whole expansion in this process to pick
its series, one in K, as the whole sweep walks it once: the extrapolation counts that walk
once (its CPU time measured by the pick's walk, one walk of the same expansion) and scales
the rest of the sample's CPU time, so the sample is not charged K walks per series.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import psutil
from omegaconf import DictConfig, open_dict

import pipeline.app.execute as app_execute
from pipeline.app.execute import execute_plan
from pipeline.app.plan import RunPlan, plan_run
from pipeline.execute.series import SeriesOutcome
from pipeline.schema import compose_config
from pipeline.sweep import SweepSeries
from pipeline.sweep.stream import SeriesStream

WIDTHS = [12288 + 1024 * k for k in range(100)]
AXES: dict[str, Any] = {
    "hardware.hbm_bandwidth_gb_per_s": {"start": 2000, "stop": 6704, "num": 20},
    "hardware.network.latency_us[*]": {"start": 0.25, "stop": 4, "num": 10, "log": True},
    "hardware.network.bandwidth_gb_per_s[1]": {"start": 25, "stop": 400, "num": 10, "log": True},
    "hardware.network.level_sizes[0]": [8, 16, 32, 64, 256],
}


def million_config(root: str, workers: int) -> DictConfig:
    """The 10,000-series x 100-width sweep as a composed config."""
    cfg = compose_config(
        [
            "scaling.grid.kind=list",
            f"scaling.grid.d_models=[{','.join(map(str, WIDTHS))}]",
            f"output.root={root}",
            "output.whole_grid=true",
            "output.resume=false",
            f"execution.n_jobs={workers}",
        ]
    )
    with open_dict(cfg):
        cfg.sweep = {"axes": AXES}
    return cfg


def sweep_overrides(
    sweep: str, root: str, workers: int, chunk_size: int | None = None
) -> list[str]:
    """The overrides of `dmlimits sweep=NAME` into a scratch root (a conf/sweep/ file)."""
    chunk = [] if chunk_size is None else [f"execution.chunk_size={chunk_size}"]
    return [
        f"sweep={sweep}",
        f"output.root={root}",
        "output.resume=false",
        f"execution.n_jobs={workers}",
        *chunk,
    ]


def planned(sweep: str | None, root: str, workers: int, chunk_size: int | None = None) -> RunPlan:
    """The run's plan: the paper's million-point sweep, or `dmlimits sweep=NAME` (with
    `execution.chunk_size`, given)."""
    if sweep is None:
        plan = plan_run(million_config(root, workers))
        if chunk_size is None:
            return plan
        execution = dataclasses.replace(plan.execution, chunk_size=chunk_size)
        return dataclasses.replace(plan, execution=execution)
    overrides = sweep_overrides(sweep, root, workers, chunk_size)
    return plan_run(compose_config(overrides), overrides=overrides)


class SampledStream(SeriesStream):
    """Every `every`-th block of `block` consecutive series of a streamed sweep (every
    `every`-th series for a block of one), itself a stream: a run of it keeps what a run of the
    whole sweep keeps."""

    def __init__(self, whole: SeriesStream, every: int, block: int = 1) -> None:
        super().__init__(
            whole.cfg,
            whole.sweep,
            whole_grid=whole.whole_grid,
            overrides=whole.overrides,
            say=whole.say,
        )
        self.every = every
        self.block = block

    def picked(self, position: int) -> bool:
        """Whether the series at `position` of the whole sweep is in the sample."""
        return (position // self.block) % self.every == 0

    def __len__(self) -> int:
        return sum(map(self.picked, range(self.sweep.n_series)))

    def __iter__(self) -> Iterator[SweepSeries]:
        return (s for i, s in enumerate(super().__iter__()) if self.picked(i))


class Monitor:
    """Counts the points evaluated (wrapping the run's series stream) and samples RSS and CPU."""

    def __init__(self, report_s: float) -> None:
        self.points = 0
        self.series = 0
        self.first_s = math.nan
        """Seconds from the start of the run to its first series evaluated."""
        self.peak_bytes = 0
        self.peaks: list[tuple[int, int, int]] = []
        """(series done, peak RSS bytes so far of this process and its workers, of this
        process alone) at each sample."""
        self.own_peak_bytes = 0
        self.start = time.perf_counter()
        self._report_s = report_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._run_series = app_execute.run_series
        self._cpu_s: dict[int, float] = {}
        self._cpu_at_start = 0.0
        self._own_at_start = 0.0
        self._pid = psutil.Process().pid
        self._sampling_cpu_s = 0.0
        """CPU seconds of the sampling thread itself (in this process, not the run's)."""

    def _counted(self, *args: Any, **kwargs: Any) -> Iterator[SeriesOutcome]:
        for outcome in self._run_series(*args, **kwargs):
            if not self.series:
                self.first_s = time.perf_counter() - self.start
            self.points += len(outcome.points)
            self.series += 1
            yield outcome

    def _sample(self) -> None:
        me = psutil.Process()
        total = own = me.memory_info().rss
        cpu = me.cpu_times()
        self._cpu_s[me.pid] = cpu.user + cpu.system
        for child in me.children(recursive=True):
            try:
                total += child.memory_info().rss
                cpu = child.cpu_times()
            except psutil.Error:  # a worker that just exited
                continue
            self._cpu_s[child.pid] = cpu.user + cpu.system
        self.peak_bytes = max(self.peak_bytes, total)
        self.own_peak_bytes = max(self.own_peak_bytes, own)
        self.peaks.append((self.series, self.peak_bytes, self.own_peak_bytes))

    def growth_line(self) -> str:
        """The peak RSS at half the series and at the end, and its growth per series between,
        of this process and its workers, and of this process (where the run's report is)."""
        half = self.series // 2
        at_half = [0, 0]
        for done, *peaks in self.peaks:
            if done <= half:
                at_half = peaks
        ends = (self.peak_bytes, self.own_peak_bytes)
        grown = [
            (end - mid) / max(self.series - half, 1) / 2**10
            for end, mid in zip(ends, at_half, strict=True)
        ]
        return (
            f"peak RSS {at_half[0] / 2**20:.0f} MiB after {half:,} series, "
            f"{self.peak_bytes / 2**20:.0f} MiB after {self.series:,}: {grown[0]:.2f} KiB per "
            f"series over the second half; this process alone {at_half[1] / 2**20:.0f} MiB, "
            f"{self.own_peak_bytes / 2**20:.0f} MiB: {grown[1]:.2f} KiB per series"
        )

    @property
    def own_cpu_s(self) -> float:
        """CPU seconds of this process alone since the start (its expansion, writing, report)."""
        return self._cpu_s.get(self._pid, 0.0) - self._own_at_start - self._sampling_cpu_s

    @property
    def cpu_s(self) -> float:
        """CPU seconds of this process and its workers since the start (last sample of each),
        less the sampling's own (about 3 ms a sample, 5 samples a second)."""
        return sum(self._cpu_s.values()) - self._cpu_at_start - self._sampling_cpu_s

    def line(self) -> str:
        seconds = time.perf_counter() - self.start
        per_cpu_s = self.points / max(self.cpu_s, 1e-9)
        return (
            f"{seconds:8.0f} s  {self.series:>6,} series  {self.points:>9,} points  "
            f"{self.points / seconds:8.1f} points/s  {per_cpu_s:7.1f} points/CPU-s  "
            f"peak RSS {self.peak_bytes / 2**20:6.0f} MiB"
        )

    def _run(self) -> None:
        last = time.perf_counter()
        while not self._stop.wait(0.2):
            self._sample()
            self._sampling_cpu_s = time.thread_time()
            if time.perf_counter() - last >= self._report_s:
                last = time.perf_counter()
                print(self.line(), flush=True)

    def __enter__(self) -> Monitor:
        app_execute.run_series = self._counted  # type: ignore[assignment]
        self.start = time.perf_counter()
        self._sample()
        self._cpu_at_start = sum(self._cpu_s.values())
        self._own_at_start = self._cpu_s[self._pid]
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        app_execute.run_series = self._run_series  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=psutil.cpu_count() or 2)
    parser.add_argument("--series", type=int, default=None, help="run only the first N series")
    parser.add_argument("--every", type=int, default=1, help="run every K-th series (a sample)")
    parser.add_argument(
        "--sweep", default=None, help="a conf/sweep/ file to run instead (million_realistic)"
    )
    parser.add_argument(
        "--block",
        type=int,
        default=1,
        help="with --every K: every K-th block of this many consecutive series (cache reuse "
        "between neighbours as in the whole sweep)",
    )
    parser.add_argument("--chunk-size", type=int, default=None, help="series per worker task")
    parser.add_argument("--report-s", type=float, default=60.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-million-") as root:
        t0 = time.perf_counter()
        plan = planned(args.sweep, root, args.workers, args.chunk_size)
        expand_s = time.perf_counter() - t0
        whole = args.series is None and args.every == 1
        n_series = len(plan.series)
        given: Sequence[SweepSeries] | None = None  # the series run, if not the plan's
        todo: Sequence[SweepSeries] = plan.series
        widths = ""
        t0, cpu0 = time.perf_counter(), time.process_time()
        walked = False  # whether the sample's run walks the whole expansion (a stream)
        if not whole:  # a sample, picked in one walk of the (streamed) expansion
            sample, planned_points = [], 0
            streamed = isinstance(plan.series, SeriesStream) and args.series is None
            for i, item in enumerate(itertools.islice(plan.series, args.series)):
                planned_points += len(item.scenario.d_models)
                if (i // args.block) % args.every == 0 and not streamed:
                    sample.append(item)
            if streamed:  # a stream's sample runs as a stream
                assert isinstance(plan.series, SeriesStream)
                sampled = SampledStream(plan.series, args.every, args.block)
                plan = dataclasses.replace(plan, series=sampled)
            todo = plan.series if streamed else sample
            walked = streamed
            given = None if streamed else sample
            widths = f", {planned_points:,} points planned (series x widths)"
        pick_s, walk_cpu_s = time.perf_counter() - t0, time.process_time() - cpu0
        print(
            f"{n_series:,} series{widths}, planned in {expand_s:.1f} s"
            + ("" if whole else f" (sample picked in {pick_s:.1f} s, {walk_cpu_s:.1f} CPU-s)")
            + f"; running {len(todo):,} series on {args.workers} workers "
            f"({psutil.cpu_count()} CPUs)",
            flush=True,
        )
        with Monitor(args.report_s) as monitor:
            report = execute_plan(plan, progress=False, series=given)
        print(monitor.line())
        print(monitor.growth_line())
        what = "whole sweep" if len(todo) == n_series else "a sample of series"
        print(
            f"{what}: {report.points:,} points in {report.seconds:.0f} s "
            f"({report.seconds / 60:.1f} min, {report.points / report.seconds:.1f} points/s), "
            f"planned in {expand_s:.1f} s, first series after {monitor.first_s:.1f} s, "
            f"peak RSS {monitor.peak_bytes / 2**20:.0f} MiB; "
            f"{monitor.cpu_s:.0f} CPU-s in this process and its workers "
            f"({report.points / monitor.cpu_s:.1f} points per CPU-second), "
            f"{monitor.own_cpu_s:.1f} CPU-s of them in this process"
        )
        if len(todo) < n_series:
            per_series = report.points / len(todo)
            total = per_series * n_series
            # the whole sweep walks its expansion once: the sample's run walked all of it
            # (a stream) or none of it (a list), and the pick walked it once, so the walk
            # counts once and the rest of the sample's CPU time scales with its series
            sampled_cpu_s = monitor.cpu_s - (walk_cpu_s if walked else 0.0)
            walked_series = min(args.series or n_series, n_series)
            whole_walk_s = walk_cpu_s * n_series / walked_series
            scaled = "" if walked_series == n_series else f" scaled from {walked_series:,} series"
            cpu_s = whole_walk_s + sampled_cpu_s * n_series / len(todo)
            print(
                f"extrapolated to all {n_series:,} series: {per_series:.1f} points per "
                f"series, {total:,.0f} points, {cpu_s:,.0f} CPU-s "
                f"({total / cpu_s:.1f} points per CPU-second, {cpu_s / 2 / 60:.1f} min on 2 "
                f"cores; the expansion's walk, {whole_walk_s:.1f} CPU-s{scaled}, counted once)"
            )


if __name__ == "__main__":
    main()
