"""Benchmark: one sweep on a local dask.distributed cluster of 1, 2 and 4 worker processes.

Reports figures; it does not pass or fail. Run: `.venv/bin/python bench/bench_dask.py`
(about 10 minutes on 2 quiet cores with the defaults; `--sweep 'sweep=smoke'` for a check).
`markdown(measure(...))` is the docs/performance.md section.

The cluster is started as a user would start a remote one (docs/scale-out.md "A Dask cluster"),
from this environment's `dask` command: `dask scheduler` on 127.0.0.1 (port 0: the system picks
a free one, written to a scheduler file) and one `dask worker --nworkers N --nthreads 1`
(N worker processes, each under its nanny). Each measurement gets a fresh cluster, so every run
starts with cold workers (imports, the model's caches), as a remote run does. The sweep runs as
the `dmlimits` command, in its own process, pointed at the scheduler
(`execution.backend=dask execution.dask_address=tcp://127.0.0.1:PORT`), into a scratch root with
resumption off. Reported:

- wall s: the whole `dmlimits` process (start-up, expansion and writing included); run s: the
  run's own seconds from its summary line (`dmlimits: ... points in S s`), what points/s and the
  speed-up (run s at 1 worker / run s at N) use;
- the scheduler's overhead per task, two ways. The gap per task, from the scheduler's task
  stream (the start and stop of every task's compute on its worker): on each worker, the time
  from the end of one task's compute to the start of the next one's, averaged over every such
  pair; what a task costs a worker that has work beyond its compute (the task's round trip
  through the scheduler, (de)serializing its scenarios and outcomes). The first task of each
  worker (cold start) and the idle tail at the end of the run (load balance, a property of the
  chunk size, reported separately) are not part of it. And the scheduler's CPU per task: after
  the sweep, TRIVIAL_TASKS empty chunks sent the run's own way (`run_on_dask`), the scheduler
  process's CPU seconds meanwhile, less its idle rate, over the tasks;
- per chunk size (series per task, `execution.chunk_size`), at one worker per core: the tasks,
  mean compute per task, the gap per task and its share of a task, and the tail: how long the
  first worker to run out of work waits for the last one;
- from these, the chunk size a remote cluster of 16, 64 or 256 workers should use (`markdown`
  gives the reasoning).

The machine's cores are shared by the scheduler, the `dmlimits` process and the workers; more
worker processes than cores oversubscribe it, and the output says so.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import itertools
import json
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from pipeline.execute.runner import DASK_TASKS_PER_WORKER, LOOPBACK_ANY_PORT, run_on_dask

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DASK = BIN / "dask"
DMLIMITS = BIN / "dmlimits"

DEFAULT_SWEEPS = ("sweep=sensitivity", "sweep=sensitivity physics=realistic")
"""Each a `dmlimits` command line (overrides); the chunk sizes are measured on the first."""
DEFAULT_WORKERS = (1, 2, 4)
DEFAULT_CHUNK_SIZES = (1, 8, 32)
DEFAULT_CHUNK_SIZE = 8
"""`execution.chunk_size` of conf/config.yaml: the scaling runs use it."""
SCHEDULER_BUDGET = 0.5
"""The recommended chunk keeps the scheduler busy at most this share of the time ..."""
TAIL_BUDGET = 0.05
"""... and one task within this share of a worker's whole run (the idle tail at the end)."""
REMOTE_WORKERS = (16, 64, 256)
"""Remote cluster sizes the chunk-size advice is given for."""
START_TIMEOUT_S = 120.0
IDLE_S = 2.0
TRIVIAL_TASKS = 1000
REMOTE_HOP_S = 0.010
"""One network hop of a remote cluster (one site or cloud region), for the advice."""
REFILL_HOPS = 4
"""A worker's next task comes back over four hops: worker, scheduler, dmlimits, scheduler,
worker."""
TASK_OVER_REFILL = 10
"""The advice's shortest task: this many times a remote refill round trip."""
SUMMARY = re.compile(r"dmlimits: ([\d,]+) series.*?, ([\d,]+) points in ([\d.]+) s")
TASK_KEY = "evaluate_chunk"
"""The key prefix of the run's tasks (`pipeline.execute.runner.run_on_dask`): one chunk each."""


@dataclass(frozen=True, slots=True)
class Stream:
    """The compute intervals of one run's tasks, from the scheduler's task stream."""

    tasks: int
    compute_s: float
    """Sum over tasks of their compute time, worker seconds."""
    gaps_ms: tuple[float, ...]
    """On each worker, end of one task's compute to the start of the next's."""
    tail_s: float
    """The last task's end minus the earliest time a worker finished its last task."""


@dataclass(frozen=True, slots=True)
class Trivial:
    """Empty tasks through the run's own dispatch (`run_on_dask`): the scheduler's cost."""

    tasks: int
    wall_s: float
    scheduler_cpu_s: float
    """CPU seconds of the scheduler process meanwhile, its idle rate taken off."""


@dataclass(frozen=True, slots=True)
class Run:
    """One sweep on one cluster."""

    sweep: str
    workers: int
    chunk_size: int
    series: int
    points: int
    wall_s: float
    run_s: float
    stream: Stream
    trivial: Trivial

    @property
    def points_per_s(self) -> float:
        return self.points / self.run_s

    @property
    def overhead_ms(self) -> float:
        """Mean gap between consecutive tasks on a worker (see the module docstring)."""
        gaps = self.stream.gaps_ms
        return statistics.fmean(gaps) if gaps else math.nan

    @property
    def scheduler_ms(self) -> float:
        """Scheduler CPU per task, from the empty tasks."""
        return 1e3 * self.trivial.scheduler_cpu_s / self.trivial.tasks

    @property
    def trivial_per_s(self) -> float:
        """Empty tasks per second, two per worker in flight."""
        return self.trivial.tasks / self.trivial.wall_s

    @property
    def round_trip_ms(self) -> float:
        """An empty task's round trip, by Little's law: tasks in flight / tasks per second."""
        return 1e3 * DASK_TASKS_PER_WORKER * self.workers / self.trivial_per_s

    @property
    def task_s(self) -> float:
        """Mean compute per task."""
        return self.stream.compute_s / self.stream.tasks

    @property
    def series_compute_s(self) -> float:
        """Mean compute per series (worker seconds)."""
        return self.stream.compute_s / self.series


@dataclass(frozen=True, slots=True)
class Measurements:
    """Everything `markdown` writes."""

    cpus: int
    scaling: tuple[Run, ...]
    chunks: tuple[Run, ...]
    dask_version: str


@dataclass(frozen=True, slots=True)
class Cluster:
    """A running local cluster: a client of its scheduler, and the scheduler's process."""

    client: Any
    scheduler: psutil.Process

    def scheduler_cpu_s(self) -> float:
        """CPU seconds the scheduler process has used so far."""
        times = self.scheduler.cpu_times()
        return float(times.user + times.system)


def scheduler_address(scheduler_file: Path) -> str | None:
    """The address in a scheduler file, once the scheduler has written it whole."""
    try:
        return str(json.loads(scheduler_file.read_text())["address"])
    except (OSError, ValueError, KeyError):
        return None


@contextlib.contextmanager
def local_cluster(workers: int, scratch: Path) -> Iterator[Cluster]:
    """`dask scheduler` and `dask worker --nworkers N --nthreads 1` processes on 127.0.0.1,
    ready once all N workers have joined."""
    import distributed

    client_class: Any = distributed.Client
    scheduler_file = scratch / f"scheduler-{workers}-{time.monotonic_ns()}.json"
    log = (scratch / "cluster.log").open("a")
    quiet = ["--no-dashboard", "--dashboard-address", LOOPBACK_ANY_PORT]  # not :8787
    scheduler = subprocess.Popen(
        [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--scheduler-file",
         scheduler_file, *quiet],
        stdout=log, stderr=log, cwd=ROOT,
    )  # fmt: skip
    worker = None
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while (address := scheduler_address(scheduler_file)) is None:
            if scheduler.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"dask scheduler did not start; see {log.name}")
            time.sleep(0.1)
        worker = subprocess.Popen(
            [DASK, "worker", "--scheduler-file", scheduler_file, "--host", "127.0.0.1",
             "--nworkers", str(workers), "--nthreads", "1", *quiet],
            stdout=log, stderr=log, cwd=ROOT,
        )  # fmt: skip
        with client_class(address, timeout=START_TIMEOUT_S) as client:
            client.wait_for_workers(workers, timeout=START_TIMEOUT_S)
            client.get_task_stream()  # installs the scheduler's task stream plugin
            yield Cluster(client, psutil.Process(scheduler.pid))
    finally:
        for process in (worker, scheduler):
            if process is not None:
                process.terminate()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        log.close()


def task_stream(records: list[dict[str, Any]]) -> Stream:
    """Compute intervals per worker of the sweep's tasks."""
    by_worker: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for record in records:
        if not str(record.get("key", "")).startswith(TASK_KEY):
            continue
        for startstop in record["startstops"]:
            if startstop["action"] == "compute":
                by_worker[str(record["worker"])].append((startstop["start"], startstop["stop"]))
    gaps: list[float] = []
    compute = 0.0
    for intervals in by_worker.values():
        intervals.sort()
        compute += sum(stop - start for start, stop in intervals)
        gaps += [1e3 * max(0.0, b[0] - a[1]) for a, b in itertools.pairwise(intervals)]
    ends = [max(stop for _, stop in intervals) for intervals in by_worker.values()]
    return Stream(
        tasks=sum(len(v) for v in by_worker.values()),
        compute_s=compute,
        gaps_ms=tuple(gaps),
        tail_s=max(ends) - min(ends) if ends else 0.0,
    )


def run_sweep(sweep: str, workers: int, chunk_size: int, scratch: Path) -> Run:
    """The sweep as a `dmlimits` command on a fresh local cluster of `workers` processes."""
    with (
        local_cluster(workers, scratch) as cluster,
        tempfile.TemporaryDirectory(dir=scratch) as root,
    ):
        command = [
            str(DMLIMITS),
            *shlex.split(sweep),
            "execution.backend=dask",
            f"execution.dask_address={cluster.client.scheduler.address}",
            f"execution.chunk_size={chunk_size}",
            f"output.root={root}",
            "output.resume=false",
        ]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(f"{shlex.join(command)}: {done.stderr[-2000:]}")
        summary = SUMMARY.search(done.stdout + done.stderr)
        if summary is None:
            raise RuntimeError(f"no summary line in the output of {sweep!r}")
        series, points, run_s = (float(g.replace(",", "")) for g in summary.groups())
        stream = task_stream(cluster.client.get_task_stream())
        trivial = trivial_tasks(cluster)
    return Run(sweep, workers, chunk_size, int(series), int(points), wall, run_s, stream, trivial)


def trivial_tasks(cluster: Cluster, tasks: int = TRIVIAL_TASKS) -> Trivial:
    """`tasks` empty chunks through `run_on_dask` (after the sweep: the workers have imported
    the package), timed, with the scheduler's CPU seconds less its idle rate."""
    idle = cluster.scheduler_cpu_s()
    time.sleep(IDLE_S)  # the scheduler's own rate with nothing to do (heartbeats)
    before = cluster.scheduler_cpu_s()
    idle_rate = (before - idle) / IDLE_S
    start = time.perf_counter()
    for _ in run_on_dask(cluster.client, iter([[]] * tasks), whole_grid=False):
        pass
    wall = time.perf_counter() - start
    return Trivial(tasks, wall, cluster.scheduler_cpu_s() - before - idle_rate * wall)


def measure(
    sweeps: Sequence[str] = DEFAULT_SWEEPS,
    workers: Sequence[int] = DEFAULT_WORKERS,
    chunk_sizes: Sequence[int] = DEFAULT_CHUNK_SIZES,
    chunk_workers: int | None = None,
) -> Measurements:
    """Every sweep on 1, 2, 4 (`workers`) worker processes at the default chunk size, then the
    first sweep at each chunk size on `chunk_workers` processes (default: one per core)."""
    cpus = os.cpu_count() or 1
    chunk_workers = chunk_workers or cpus
    scaling: list[Run] = []
    chunks: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="bench-dask-") as tmp:
        scratch = Path(tmp)
        for sweep in sweeps:
            for n in workers:
                scaling.append(run_sweep(sweep, n, DEFAULT_CHUNK_SIZE, scratch))
                print(row_text(scaling[-1], cpus), flush=True)
        for size in chunk_sizes:
            known = [
                r
                for r in scaling
                if (r.sweep, r.workers, r.chunk_size) == (sweeps[0], chunk_workers, size)
            ]
            chunks.append(known[0] if known else run_sweep(sweeps[0], chunk_workers, size, scratch))
            print(row_text(chunks[-1], cpus), flush=True)
    return Measurements(
        cpus, tuple(scaling), tuple(chunks), importlib.metadata.version("distributed")
    )


def row_text(run: Run, cpus: int) -> str:
    """One progress line of the script."""
    over = " (oversubscribed)" if run.workers > cpus else ""
    return (
        f"{run.sweep}: {run.workers} workers{over}, chunk {run.chunk_size}: {run.points:,} "
        f"points, wall {run.wall_s:.1f} s, run {run.run_s:.1f} s, "
        f"{run.points_per_s:,.0f} points/s, {run.stream.tasks} tasks, gap "
        f"{run.overhead_ms:.1f} ms/task, tail {run.stream.tail_s:.2f} s; scheduler "
        f"{run.scheduler_ms:.2f} ms CPU per empty task, round trip {run.round_trip_ms:.1f} ms"
    )


@dataclass(frozen=True, slots=True)
class Advice:
    """The chunk size for a remote cluster of `workers` single-threaded workers."""

    workers: int
    for_task_length: int
    """Smallest chunk whose task lasts `task_min_s(m)`."""
    for_scheduler: int
    """Smallest chunk that keeps the scheduler busy at most SCHEDULER_BUDGET of the time."""

    @property
    def chunk_size(self) -> int:
        return max(1, self.for_task_length, self.for_scheduler)

    @property
    def min_series(self) -> int:
        """Series a sweep needs for its last task to be within TAIL_BUDGET of a worker's run."""
        return math.ceil(self.chunk_size * self.workers / TAIL_BUDGET)


def per_series_s(m: Measurements) -> float:
    """Worker seconds per series, the mean of the chunk runs."""
    return statistics.fmean(r.series_compute_s for r in m.chunks)


def scheduler_s(m: Measurements) -> float:
    """The scheduler's CPU seconds per task, the median of every run's empty tasks."""
    return 1e-3 * statistics.median(r.scheduler_ms for r in m.scaling + m.chunks)


def round_trip_s(m: Measurements) -> float:
    """An empty task's round trip on loopback, the median of every run's."""
    return 1e-3 * statistics.median(r.round_trip_ms for r in m.scaling + m.chunks)


def task_min_s(m: Measurements) -> float:
    """The shortest task for a remote cluster: TASK_OVER_REFILL times a refill round trip there
    (the loopback one plus REFILL_HOPS hops of REMOTE_HOP_S)."""
    return TASK_OVER_REFILL * (round_trip_s(m) + REFILL_HOPS * REMOTE_HOP_S)


def advice(m: Measurements, workers: int) -> Advice:
    """The chunk size for `workers` remote workers (the bounds of `markdown`)."""
    series_s = per_series_s(m)
    return Advice(
        workers,
        for_task_length=math.ceil(task_min_s(m) / series_s),
        for_scheduler=math.ceil(workers * scheduler_s(m) / (SCHEDULER_BUDGET * series_s)),
    )


def ms(value: float, fmt: str = "{:.1f}") -> str:
    """A figure in ms, or a dash where there is none (no worker ran two tasks)."""
    return "–" if math.isnan(value) else fmt.format(value)


def markdown(m: Measurements, remote_workers: Sequence[int] = REMOTE_WORKERS) -> str:
    """The docs/performance.md section: the scaling table, the chunk-size table, and the chunk
    size a remote cluster of each of `remote_workers` single-threaded workers should use."""
    base = {r.sweep: r.run_s for r in m.scaling if r.workers == 1}
    lines = [
        "## Scale-out: a local dask.distributed cluster",
        "",
        f"`bench/bench_dask.py` (dask.distributed {m.dask_version}): a `dask scheduler` and "
        "`dask worker --nworkers N --nthreads 1` processes on 127.0.0.1, fresh (cold) for each "
        "run, and the sweep as the `dmlimits` command pointed at them "
        "(`execution.backend=dask execution.dask_address=...`, "
        f"`execution.chunk_size={DEFAULT_CHUNK_SIZE}`). Wall s is the whole command; run s its "
        "own summary's seconds, which points/s and the speed-up (run s at 1 worker / run s) "
        "use. The scheduler's overhead is measured two ways:",
        "",
        "- gap per task: on each worker, the mean time from the end of one task's compute to "
        "the start of the next one's (the scheduler's task stream), without the cold first "
        "task or the idle tail at the end: what a task costs a worker beyond its compute (its "
        "round trip through the scheduler, unpickling its scenarios, handing over its "
        "outcomes). Near zero while the worker's next task is already queued on it;",
        f"- scheduler CPU per task: after the sweep, {TRIVIAL_TASKS:,} empty tasks sent the "
        "run's own way (`pipeline.execute.runner.run_on_dask`, two per worker in flight), the "
        "scheduler process's CPU seconds meanwhile (its idle rate, measured for "
        f"{IDLE_S:g} s before, taken off) over the tasks. One scheduler serves every worker, "
        "so this bounds the tasks per second of any cluster. Their round trip (submitted by "
        "the client, run, result back) follows by Little's law: tasks in flight / tasks per "
        "second.",
        "",
    ]
    if any(r.workers > m.cpus for r in m.scaling + m.chunks):
        lines += [
            f"This machine has {m.cpus} cores, shared by the scheduler, the `dmlimits` process "
            f"and the workers: more than {m.cpus} workers oversubscribe it (marked), so those "
            "rows measure contention, not scale-out.",
            "",
        ]
    lines += [
        "| sweep | workers | points | wall s | run s | points/s | speed-up "
        "| gap per task ms | scheduler CPU per task ms | round trip ms |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in m.scaling:
        over = " (oversubscribed)" if r.workers > m.cpus else ""
        lines.append(
            f"| `{r.sweep}` | {r.workers}{over} | {r.points:,} | {r.wall_s:.1f} | {r.run_s:.1f} "
            f"| {r.points_per_s:,.0f} | {base[r.sweep] / r.run_s:.2f}× | {ms(r.overhead_ms)} "
            f"| {r.scheduler_ms:.2f} | {r.round_trip_ms:.1f} |"
        )
    if not m.chunks:
        return "\n".join(lines) + "\n"
    first = m.chunks[0]
    series_ms = 1e3 * per_series_s(m)
    lines += [
        "",
        f"### Chunk size (series per task), `{first.sweep}` on {first.workers} workers",
        "",
        "Each task is one chunk (`execution.chunk_size` series). Share is the gap's part of a "
        "task (gap / (gap + compute)); tail is how long the first worker to run out of work "
        "waits for the last.",
        "",
        "| chunk size | tasks | compute per task s | gap per task ms | share | tail s "
        "| run s | points/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in m.chunks:
        share = r.overhead_ms / (r.overhead_ms + 1e3 * r.task_s)
        lines.append(
            f"| {r.chunk_size} | {r.stream.tasks:,} | {r.task_s:.3f} | {ms(r.overhead_ms)} "
            f"| {ms(100 * share, '{:.1f}%')} | {r.stream.tail_s:.2f} | {r.run_s:.1f} "
            f"| {r.points_per_s:,.0f} |"
        )
    lines += [
        "",
        "### The chunk size for a remote cluster",
        "",
        f"A series costs a worker {series_ms:.0f} ms here (the chunk runs' mean) and a task "
        f"{1e3 * scheduler_s(m):.2f} ms of the scheduler's CPU (the median above). Three "
        "bounds set the chunk size c of a cluster of W single-threaded workers:",
        "",
        f"- a task lasts at least {task_min_s(m):.2f} s: c ≥ that / compute per series. The "
        "scheduler keeps one task queued on each worker (dask's worker saturation) and the "
        "run two per worker in flight, so a worker never waits while its current task lasts "
        "longer than the refill of its queue: the round trip above plus "
        f"{REFILL_HOPS} network hops (worker, scheduler, `dmlimits`, scheduler, worker), "
        f"{1e3 * REMOTE_HOP_S:g} ms each on one site or cloud region; the task lasts "
        f"{TASK_OVER_REFILL} times that, so that a slow refill or a worker's gap stays small "
        "beside it;",
        f"- the one scheduler busy at most {SCHEDULER_BUDGET:.0%} of the time: W workers ask "
        "for W / (c × compute per series) tasks per second, so c ≥ W × scheduler CPU per task "
        f"/ ({SCHEDULER_BUDGET:g} × compute per series);",
        f"- the idle tail (about one task) within {TAIL_BUDGET:.0%} of a worker's run: the "
        f"sweep has at least c × W / {TAIL_BUDGET:g} series; with fewer, a smaller chunk or "
        "fewer workers.",
        "",
        "| remote workers W | c for the task length | c for the scheduler | chunk size "
        "| series the sweep needs |",
        "|---|---|---|---|---|",
    ]
    for w in remote_workers:
        a = advice(m, w)
        lines.append(
            f"| {w} | {a.for_task_length} | {a.for_scheduler} | **{a.chunk_size}** "
            f"| {a.min_series:,} |"
        )
    lines += [
        "",
        "The `dmlimits` process itself receives and writes every series whatever the chunk "
        "size; on a large cluster its own rate caps the sweep too.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sweep",
        action="append",
        help=f"a dmlimits command line, repeatable (default: {' and '.join(DEFAULT_SWEEPS)})",
    )
    parser.add_argument("--workers", type=int, nargs="+", default=list(DEFAULT_WORKERS))
    parser.add_argument("--chunk-sizes", type=int, nargs="+", default=list(DEFAULT_CHUNK_SIZES))
    parser.add_argument("--chunk-workers", type=int, default=None, help="default: one per core")
    args = parser.parse_args()
    cpus = os.cpu_count() or 1
    if max(args.workers) > cpus:
        print(f"note: {cpus} cores; {max(args.workers)} workers oversubscribe this machine")
    m = measure(args.sweep or DEFAULT_SWEEPS, args.workers, args.chunk_sizes, args.chunk_workers)
    print()
    print(markdown(m))


if __name__ == "__main__":
    main()
