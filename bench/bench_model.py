"""Benchmark: H100 dense default-scaling series time (empty and warm caches), candidate layouts.

Reports figures; it does not pass or fail. Run: `.venv/bin/python bench/bench_model.py`.
One process, one thread; times are this process's CPU seconds (`time.process_time`), which
other load on a shared machine disturbs far less than wall time.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np

from pipeline.model import caches
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.scaling import ScalingLaws, paper_d_model_grid
from pipeline.model.search import search
from pipeline.schema import compose_config, load_scenario

DURATION_S = 0.25 * 3.154e7


class Counter:
    """Counts candidate layouts (rows: layout × network split) the step model evaluates."""

    def __init__(self) -> None:
        self.rows = 0
        self._inner = search.row_step_arrays

    def __call__(self, *args: object, **kwargs: object) -> search.StepArrays:
        result = self._inner(*args, **kwargs)  # type: ignore[arg-type]
        self.rows += int(result.t_step_s.size)
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hardware", default="h100_sxm")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sparse", action="store_true")
    args = parser.parse_args()
    hw = load_scenario(compose_config([f"hardware={args.hardware}"])).hardware
    laws = ScalingLaws(sparse=args.sparse)
    grid = paper_d_model_grid()

    points = search.sweep_series(hw, laws, grid, DURATION_S)  # imports and first-use costs

    counter = Counter()
    search.row_step_arrays = counter  # type: ignore[assignment]
    cold, warm = [], []
    for _ in range(args.repeat):
        clear_caches()
        t0 = time.process_time()
        search.sweep_series(hw, laws, grid, DURATION_S)
        cold.append(time.process_time() - t0)
        t0 = time.process_time()
        search.sweep_series(other_network(hw), laws, grid, DURATION_S)
        warm.append(time.process_time() - t0)
    search.row_step_arrays = counter._inner
    rows_per_series = counter.rows / (2 * args.repeat)  # both networks: about the same rows
    per_series = float(np.median(cold))
    print(
        f"series: {args.hardware} {'sparse' if args.sparse else 'dense'} default batch, "
        f"{len(points)} sizes evaluated (up to the latency wall); min / median / max of "
        f"{args.repeat}"
    )
    print(f"series, empty caches (its own candidates enumerated): {spread(cold)} s")
    print(
        "the series on another network (latency x 1.5): candidates cached, network tables not,"
        f" as for a sweep's network variants: {spread(warm)} s"
    )
    print(
        f"candidate layouts evaluated per series: {rows_per_series:,.0f} "
        f"-> {rows_per_series / per_series:,.0f} layouts/s on one core (empty caches)"
    )


def other_network(hw: HardwareSpec) -> HardwareSpec:
    """The same GPU with every hop 1.5 times slower: a sweep's next network variant."""
    return dataclasses.replace(hw, net_latency_s=tuple(1.5 * x for x in hw.net_latency_s))


def clear_caches() -> None:
    """Forget every candidate and network table made so far, as in a fresh process."""
    caches.clear_caches()


def spread(values: list[float]) -> str:
    """min / median / max."""
    return f"{min(values):.3f} / {float(np.median(values)):.3f} / {max(values):.3f}"


if __name__ == "__main__":
    main()
