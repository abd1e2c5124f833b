"""Benchmark: H100 dense default-scaling series per second, and candidate layouts per second.

Reports figures; it does not pass or fail. Run: `.venv/bin/python bench/bench_model.py`.
One process, one thread (set OMP/OPENBLAS threads to 1 for a per-core figure).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pipeline.model import search
from pipeline.model.scaling import ScalingLaws, paper_d_model_grid
from pipeline.schema import compose_config, load_scenario

DURATION_S = 0.25 * 3.154e7


class Counter:
    """Counts candidate layouts (rows: layout × network split) the step model evaluates."""

    def __init__(self) -> None:
        self.rows = 0
        self._inner = search.step_arrays

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

    t0 = time.perf_counter()
    points = search.sweep_series(hw, laws, grid, DURATION_S)
    cold = time.perf_counter() - t0

    counter = Counter()
    search.step_arrays = counter  # type: ignore[assignment]
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        search.sweep_series(hw, laws, grid, DURATION_S)
        times.append(time.perf_counter() - t0)
    search.step_arrays = counter._inner
    per_series = float(np.median(times))
    rows_per_series = counter.rows / args.repeat
    print(
        f"series: {args.hardware} {'sparse' if args.sparse else 'dense'} default batch, "
        f"{len(points)} sizes evaluated (up to the latency wall)"
    )
    print(f"first series (cold caches): {cold:.3f} s")
    print(
        f"series time (median of {args.repeat}): {per_series:.3f} s -> {1 / per_series:.2f} series/s"
    )
    print(
        f"candidate layouts evaluated per series: {rows_per_series:,.0f} "
        f"-> {rows_per_series / per_series:,.0f} layouts/s on one core"
    )


if __name__ == "__main__":
    main()
