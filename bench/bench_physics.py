"""Benchmark and headline: what each realistic extension does to the paper's two limits.

For H100 dense and sparse (default critical batch, 3 months), evaluates the scaling-law
series with physics=paper, physics=realistic and each extension alone (realistic
efficiencies, every other switch off), and prints the linear-scaling end, the latency wall
(first infeasible compute) and the wall time of each series. Reports figures; it does not
pass or fail. Run: `.venv/bin/python bench/bench_physics.py` (a few minutes on one core);
`--cost 3` instead prints realistic against paper series time on the same sizes (3 pairs run
in turn, the median of their ratios, in CPU time of this process: one core's work, steadier
than wall time when other jobs share the machine), the clusters whose candidates each
timed and the realistic clusters bounded by their layout tables. `--profile K` instead
prints where a realistic point's CPU time goes, per phase, on every K-th series of
`dmlimits sweep=sensitivity physics=realistic` run in this process (`phase_profile`,
`phase_table`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pipeline.app.execute import execute_plan
from pipeline.app.plan import plan_run
from pipeline.execute.series import evaluate_series
from pipeline.model import caches
from pipeline.model.search import candidates, floors, search
from pipeline.schema import Scenario, compose_config, load_scenario

SWITCHES_OFF = {
    "physics.attention": "false",
    "physics.memory_bound_ops": "false",
    "physics.memory_check": "aggregate",
    "physics.recompute": "none",
    "physics.zero_stage": "0",
    "physics.whole_sequences": "false",
    "physics.tensor_parallel": "2d",
    "physics.tp_in_domain": "false",
    "physics.tensor_memory": "false",
    "physics.max_context_parallel": "1",
    "physics.hbm_capacity": "datasheet",
    "physics.expert_imbalance": "0",
}


def alone(**on: str) -> list[str]:
    """physics=realistic with every switch off except `on` (keys without the prefix)."""
    switches = SWITCHES_OFF | {f"physics.{k}": v for k, v in on.items()}
    return ["physics=realistic", *(f"{k}={v}" for k, v in switches.items())]


VARIANTS: dict[str, list[str]] = {
    "paper": [],
    "realistic (all)": ["physics=realistic"],
    "efficiencies only": alone(),
    "attention": alone(attention="true"),
    "memory_bound_ops (fused)": alone(memory_bound_ops="true", fusion="fused"),
    "memory_check=per_gpu (recompute none, ZeRO-0)": alone(memory_check="per_gpu"),
    "memory_check=per_gpu + recompute auto + ZeRO-1": alone(
        memory_check="per_gpu", recompute="auto", zero_stage="1"
    ),
    "whole_sequences": alone(whole_sequences="true"),
    "tensor_parallel=1d (1-D TP + sequence parallel only)": alone(tensor_parallel="1d"),
    "tensor_parallel=both (2-D and 1-D)": alone(tensor_parallel="both"),
    "whole_sequences + tensor_parallel=1d": alone(whole_sequences="true", tensor_parallel="1d"),
    "whole_sequences + tensor_parallel=both": alone(whole_sequences="true", tensor_parallel="both"),
    "tp_in_domain (with tensor_parallel=both)": alone(tp_in_domain="true", tensor_parallel="both"),
    "realistic with tensor_parallel=1d": ["physics=realistic", "physics.tensor_parallel=1d"],
    "realistic with tp_in_domain": ["physics=realistic", "physics.tp_in_domain=true"],
    "realistic with max_context_parallel=8": [
        "physics=realistic",
        "physics.max_context_parallel=8",
    ],
    "realistic with tp_in_domain and max_context_parallel=8": [
        "physics=realistic",
        "physics.tp_in_domain=true",
        "physics.max_context_parallel=8",
    ],
}


@dataclass(frozen=True, slots=True)
class SeriesCost:
    """One series from empty caches: its CPU time, its model widths, the cluster sizes whose
    candidates it built and timed (`clusters_timed`), those whose layout table it bounded row
    by row (`floors.layout_step_floors_s`, those computed ahead of the walk included) and the
    passes over rows that computed them (`floors.keep_layout_step_floors`)."""

    cpu_s: float
    widths: list[int]
    timed: int
    bounded: int
    passes: int


def series_cost(scenario: Scenario) -> SeriesCost:
    """`SeriesCost` of one series evaluated from empty caches (as a fresh process)."""
    caches.clear_caches()
    t0 = time.process_time()
    out = evaluate_series(scenario)
    elapsed = time.process_time() - t0
    widths = [p.shape.d_model for p in out.points]
    bounded = floors._layout_floors.cache_info().currsize
    passes = floors._floor_rows.cache_info().misses
    return SeriesCost(elapsed, widths, clusters_timed(), bounded, passes)


def clusters_timed() -> int:
    """Cluster sizes whose candidates were built and timed since the caches were cleared:
    every candidate cache miss (the paper's and the realistic unpruned builds), and under
    realistic physics every pruned build, which the candidate cache does not keep: each a
    choice among its kept rows (`search._kept_choices`)."""
    kept = search._kept_choices.cache_info()
    return kept.hits + kept.misses + candidates._candidates.cache_info().misses


def cost_table(hardware: str, repeats: int) -> None:
    """Realistic against paper per series: realistic's sizes, and the paper on those same sizes.

    The two run in turn, realistic then paper, `repeats` times, and the ratio is the median of
    the pairs' ratios, so that a machine whose speed drifts (other jobs) moves both alike. The
    clusters timed are those whose candidates a series built and timed; a realistic series
    also sets aside clusters by their layout floors, each from its own layout table (the
    clusters bounded, `floors.layout_step_floors_s`, those the walk computed ahead and never
    read included, and in how many passes over rows; docs/model.md §9.4)."""
    print(
        "| scaling | sizes | realistic (s) | paper, same sizes (s) | ratio (min–max) "
        "| clusters timed, realistic / paper | realistic clusters bounded by their table (passes) "
        "| paper, whole series (s) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for scaling in ("dense", "sparse"):
        base = [f"hardware={hardware}", f"scaling={scaling}"]
        real = load_scenario(compose_config([*base, "physics=realistic"]))
        widths = series_cost(real).widths
        same = [
            *base,
            "scaling.grid.kind=list",
            f"scaling.grid.d_models=[{','.join(map(str, widths))}]",
        ]
        paper = load_scenario(compose_config(same))
        pairs = [(series_cost(real), series_cost(paper)) for _ in range(repeats)]
        ratios = [r.cpu_s / p.cpu_s for r, p in pairs]
        whole_s = statistics.median(
            series_cost(load_scenario(compose_config(base))).cpu_s for _ in range(repeats)
        )
        r_last, p_last = pairs[-1]
        r_med = statistics.median(r.cpu_s for r, _ in pairs)
        p_med = statistics.median(p.cpu_s for _, p in pairs)
        print(
            f"| {scaling} | {len(widths)} | {r_med:.3f} | {p_med:.3f} "
            f"| {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) "
            f"| {r_last.timed} / {p_last.timed} | {r_last.bounded} ({r_last.passes}) "
            f"| {whole_s:.2f} |",
            flush=True,
        )


PHASES: tuple[tuple[str, str, str], ...] = (
    ("pipeline.model.search.search", "enumerate_candidates", "candidate building"),
    ("pipeline.model.search.search", "realistic_kept_rows", "candidate building"),
    ("pipeline.model.search.search", "kept_candidates", "candidate building"),
    ("pipeline.model.search.search", "kept_frame", "candidate building"),
    ("pipeline.model.search.search", "_with_ring", "candidate building"),
    ("pipeline.model.search.floors", "realistic_layout_rows", "layout enumeration"),
    ("pipeline.model.search.candidates", "realistic_layout_rows", "layout enumeration"),
    ("pipeline.model.search.search", "step_floor_terms_s", "cluster walk: bounds"),
    ("pipeline.model.search.search", "tensor_parallel_floor_s", "cluster walk: bounds"),
    ("pipeline.model.search.search", "layout_step_floors_s", "cluster walk: bounds"),
    ("pipeline.model.search.search", "keep_layout_step_floors", "cluster walk: bounds"),
    ("pipeline.model.search.search", "smallest_cluster", "cluster walk: the rest"),
    ("pipeline.model.search.realistic", "step_comm", "step assembly"),
    ("pipeline.model.search.realistic", "step_from_comm", "step assembly"),
    ("pipeline.app.execute", "series_rows", "writing"),
    ("pipeline.app.batch", "write_batch", "writing"),
)
"""(module, function, phase): a call's CPU time goes to the phase of the innermost of these on
the stack; the rest of a run (the series' limits, power, closed forms, the run's set-up) is
"other". Each function is replaced in the module that calls it, where the phase is entered."""
PHASE_ORDER = (
    "layout enumeration",
    "candidate building",
    "cluster walk: bounds",
    "cluster walk: the rest",
    "step assembly",
    "writing",
    "other",
)


@dataclass(frozen=True, slots=True)
class PhaseProfile:
    """CPU seconds per phase of a run of sample series, with its points."""

    cpu_s: dict[str, float]
    points: int
    series: int


class _Phases:
    """Exclusive process CPU time per phase: the time between two marks goes to the innermost
    phase entered (a stack, so nested phases are not counted twice)."""

    def __init__(self) -> None:
        self.cpu_s = dict.fromkeys(PHASE_ORDER, 0.0)
        self._stack = ["other"]
        self._mark = time.process_time()

    def _charge(self) -> None:
        now = time.process_time()
        self.cpu_s[self._stack[-1]] += now - self._mark
        self._mark = now

    def wrap(self, fn: Callable[..., Any], phase: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self._charge()
            self._stack.append(phase)
            try:
                return fn(*args, **kwargs)
            finally:
                self._charge()
                self._stack.pop()

        return timed

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        saved = []
        for module_name, attr, phase in PHASES:
            module = importlib.import_module(module_name)
            saved.append((module, attr, getattr(module, attr)))
            setattr(module, attr, self.wrap(getattr(module, attr), phase))
        self._mark = time.process_time()
        try:
            yield
        finally:
            self._charge()
            for module, attr, fn in reversed(saved):
                setattr(module, attr, fn)


def phase_profile(
    every: int = 30, sweep: str = "sensitivity", overrides: tuple[str, ...] = ("physics=realistic",)
) -> PhaseProfile:
    """Process CPU seconds per phase (`PHASE_ORDER`) of every `every`-th series of `dmlimits
    sweep=SWEEP OVERRIDES`, evaluated and written in this process (one worker) into a scratch
    root from empty caches: the layout tables (`enumeration.realistic_layout_rows`, read by the
    walk's bounds and by candidate building), candidate building, the cluster walk's bounds and
    the rest of the walk, the step assembly, writing (rows and Parquet parts), other."""
    with tempfile.TemporaryDirectory(prefix="bench-phases-") as root:
        given = [f"sweep={sweep}", *overrides, f"output.root={root}", "execution.n_jobs=1"]
        given.append("output.resume=false")
        plan = plan_run(compose_config(given), overrides=given)
        todo = plan.series[::every]
        caches.clear_caches()
        phases = _Phases()
        with phases.installed():
            report = execute_plan(plan, progress=False, series=todo)
    return PhaseProfile(phases.cpu_s, report.points, len(todo))


def phase_table(profile: PhaseProfile) -> str:
    """The profile as a markdown table: CPU s, share and ms per point of each phase."""
    total = sum(profile.cpu_s.values())
    lines = ["| phase | CPU s | share | ms per point |", "|---|---|---|---|"]
    for phase in PHASE_ORDER:
        t = profile.cpu_s[phase]
        lines.append(
            f"| {phase} | {t:.2f} | {t / total:.0%} | {1e3 * t / max(profile.points, 1):.2f} |"
        )
    lines.append(
        f"| total ({profile.series} series, {profile.points:,} points) | {total:.2f} | 100% "
        f"| {1e3 * total / max(profile.points, 1):.2f} |"
    )
    return "\n".join(lines)


def fmt(x: float | None) -> str:
    """A FLOP figure in short scientific notation, or a dash."""
    return "–" if x is None else f"{x:.1e}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hardware", default="h100_sxm")
    parser.add_argument("--only", nargs="*", help="variant names to run (default: all)")
    parser.add_argument(
        "--cost",
        type=int,
        metavar="N",
        help="instead: realistic vs paper series time, N pairs in turn",
    )
    parser.add_argument(
        "--profile",
        type=int,
        metavar="K",
        help="instead: CPU time per phase on every K-th realistic sensitivity series",
    )
    args = parser.parse_args()
    if args.profile:
        print(phase_table(phase_profile(args.profile)))
        return
    if args.cost:
        cost_table(args.hardware, args.cost)
        return
    print(
        "| scaling | physics | linear-scaling end (FLOP) | last feasible (FLOP) | latency wall (FLOP) | best utilization | sizes | series time (s) | per size (s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for scaling in ("dense", "sparse"):
        for name, overrides in VARIANTS.items():
            if args.only and name not in args.only:
                continue
            cfg = compose_config([f"hardware={args.hardware}", f"scaling={scaling}", *overrides])
            scenario = load_scenario(cfg)
            t0 = time.perf_counter()
            out = evaluate_series(scenario)
            dt = time.perf_counter() - t0
            lim = out.limits
            n = len(out.points)
            best = "–" if lim.max_utilization is None else f"{lim.max_utilization:.2f}"
            print(
                f"| {scaling} | {name} | {fmt(lim.linear_end_flop)} "
                f"| {fmt(lim.last_feasible_flop)} | {fmt(lim.first_infeasible_flop)} "
                f"| {best} | {n} | {dt:.2f} | {dt / n:.3f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
