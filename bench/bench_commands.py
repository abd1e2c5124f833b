"""Benchmark: whole `dmlimits` commands, start-up included, against a baseline checkout.

Reports figures; it does not pass or fail. Run: `.venv/bin/python bench/bench_commands.py`.

Each command runs as its own process, as a user types it, into a fresh scratch dataset root,
with its Python bytecode compiled as an installed package has it (pip compiles a wheel's
modules when it installs them): bytecode is written under a cache folder of the benchmark
(`PYCACHE`, so neither checkout is written to), even where the environment sets
PYTHONDONTWRITEBYTECODE, and one warm-up run of each command, not counted, compiles it:

- `dmlimits sweep=sensitivity` (360 series, 13,658 scenario points with `physics=paper`),
  once per physics mode: wall seconds, CPU seconds of the process and its workers, and points
  per wall second (the points counted in the written `points` table);
- `dmlimits -m hardware=v100_sxm,a100_sxm,h100_sxm`, the paper's dense three-GPU comparison.

With `--baseline DIR` (a checkout of an earlier commit, e.g. made by `git worktree add`), the
same commands of that checkout (run with this environment's interpreter and `PYTHONPATH=DIR`)
alternate with this one's, A B A B ..., so that a drift of the shared machine's load hits both,
and each figure is given with the ratio baseline / now of every pair (min / median / max).

The original implementation (the paper's own code) is not on this machine. The ratio to it
is therefore chained through the baseline commit 91dff32, whose ratio to the original was
measured side by side on this machine when the speed work was planned (`BASELINE_VS_ORIGINAL`:
the sensitivity sweep at 63x the original's points per second, the three-GPU comparison 12-13x
faster end to end, 12.5 taken). With `--baseline` at that commit, each baseline / now ratio is
multiplied by its command's factor (docs/performance.md).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow.dataset as ds

HERE = Path(__file__).resolve().parent.parent
PYCACHE = Path(tempfile.gettempdir()) / "dmlimits-bench-pycache"
"""Where the benchmarked commands' bytecode is written (PYTHONPYCACHEPREFIX)."""

BASELINE_VS_ORIGINAL = {"sensitivity, physics=paper": 63.0, "three GPUs": 12.5}
"""Commit 91dff32 against the original implementation, per command (name prefix): see above."""
NO_BASELINE = ("physics=realistic",)
"""Arguments a baseline from before realistic physics would refuse: such commands run alone."""

COMMANDS: dict[str, list[str]] = {
    "sensitivity, physics=paper": ["sweep=sensitivity"],
    "sensitivity, physics=realistic": ["sweep=sensitivity", "physics=realistic"],
    "three GPUs (-m hardware=v100_sxm,a100_sxm,h100_sxm)": [
        "-m",
        "hardware=v100_sxm,a100_sxm,h100_sxm",
    ],
}


@dataclass(frozen=True, slots=True)
class Run:
    """One whole command: wall and CPU seconds, and the points it wrote."""

    wall_s: float
    cpu_s: float
    points: int

    @property
    def points_per_s(self) -> float:
        return self.points / self.wall_s


def count_points(root: Path) -> int:
    """Rows of the `points` table under a dataset root (0 if none)."""
    files = sorted(str(p) for p in (root / "points").rglob("*.parquet"))
    return ds.dataset(files, format="parquet").count_rows() if files else 0


def timed(command: list[str], cwd: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (the process and its children) of one command, output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run_once(args: list[str], checkout: Path | None) -> Run:
    """Run `dmlimits ARGS` (of `checkout`, or of this environment) into a fresh root."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(PYCACHE))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode as an installed package has it
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
    with tempfile.TemporaryDirectory(prefix="bench-cmd-") as scratch:
        root = Path(scratch) / "out"
        command = [sys.executable, "-m", "pipeline", *args, f"output.root={root}"]
        if "-m" in args:  # a Hydra multirun: each job writes its own tables under the root
            command.append(f"hydra.sweep.dir={scratch}/multirun")
        wall, cpu = timed(command, scratch, env)
        return Run(wall, cpu, count_points(root))


def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    """min / median / max."""
    return " / ".join(fmt.format(v) for v in (min(values), statistics.median(values), max(values)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", type=Path, default=None, help="an earlier checkout")
    parser.add_argument("--only", nargs="*", default=None, help="substrings of command names")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; min / median / max")
    for name, cmd in COMMANDS.items():
        if args.only and not any(s in name for s in args.only):
            continue
        now: list[Run] = []
        base: list[Run] = []
        with_baseline = args.baseline is not None and not set(cmd) & set(NO_BASELINE)
        run_once(cmd, None)  # warm-up, not counted: bytecode compiled, files cached
        if with_baseline:
            run_once(cmd, args.baseline)
        for _ in range(args.repeat):
            now.append(run_once(cmd, None))
            if with_baseline:
                base.append(run_once(cmd, args.baseline))
        print(f"\n{name}: {now[0].points:,} points")
        print(
            f"  now       wall {spread([r.wall_s for r in now])} s, cpu "
            f"{spread([r.cpu_s for r in now])} s, {spread([r.points_per_s for r in now], '{:.0f}')}"
            " points/s"
        )
        if base:
            ratios = [b.wall_s / n.wall_s for b, n in zip(base, now, strict=True)]
            print(
                f"  baseline  wall {spread([r.wall_s for r in base])} s, cpu "
                f"{spread([r.cpu_s for r in base])} s, "
                f"{spread([r.points_per_s for r in base], '{:.0f}')} points/s"
            )
            print(f"  baseline / now, pair by pair: {spread(ratios)}x")
            factor = next((f for k, f in BASELINE_VS_ORIGINAL.items() if name.startswith(k)), None)
            if factor is not None:
                chained = [r * factor for r in ratios]
                print(
                    f"  original / now, chained through the baseline's {factor:g}x "
                    f"(valid with --baseline at 91dff32): {spread(chained, '{:.0f}')}x"
                )
    print(f"(load average at the end {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
