"""Benchmark and headline: what each realistic extension does to the paper's two limits.

For H100 dense and sparse (default critical batch, 3 months), evaluates the scaling-law
series with physics=paper, physics=realistic and each extension alone (realistic
efficiencies, every other switch off), and prints the linear-scaling end, the latency wall
(first infeasible compute) and the wall time of each series. Reports figures; it does not
pass or fail. Run: `.venv/bin/python bench/bench_physics.py` (a few minutes on one core);
`--cost 3` instead prints realistic against paper series time on the same sizes (3 pairs run
in turn, the median of their ratios, in CPU time of this process: one core's work, steadier
than wall time when other jobs share the machine), the clusters searched and the time per
cluster.
"""

from __future__ import annotations

import argparse
import statistics
import time

from pipeline.execute.series import evaluate_series
from pipeline.model import caches
from pipeline.model.search import candidates
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
    "memory_bound_ops (fused)": alone(memory_bound_ops="true"),
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


def series_time_s(scenario: Scenario) -> tuple[float, list[int], int]:
    """CPU time of one series from empty caches (as a fresh process), its model widths, and
    the cluster sizes whose candidates it enumerated (each a full candidate enumeration)."""
    caches.clear_caches()
    t0 = time.process_time()
    out = evaluate_series(scenario)
    elapsed = time.process_time() - t0
    return (
        elapsed,
        [p.shape.d_model for p in out.points],
        candidates._candidates.cache_info().misses,
    )


def cost_table(hardware: str, repeats: int) -> None:
    """Realistic against paper per series: realistic's sizes, and the paper on those same sizes.

    The two run in turn, realistic then paper, `repeats` times, and the ratio is the median of
    the pairs' ratios, so that a machine whose speed drifts (other jobs) moves both alike."""
    print(
        "| scaling | sizes | realistic (s) | paper, same sizes (s) | ratio (min–max) "
        "| clusters searched, realistic / paper | ms per cluster, realistic / paper "
        "| paper, whole series (s) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for scaling in ("dense", "sparse"):
        base = [f"hardware={hardware}", f"scaling={scaling}"]
        real = load_scenario(compose_config([*base, "physics=realistic"]))
        _, widths, _ = series_time_s(real)
        same = [
            *base,
            "scaling.grid.kind=list",
            f"scaling.grid.d_models=[{','.join(map(str, widths))}]",
        ]
        paper = load_scenario(compose_config(same))
        real_s, paper_s, ratios = [], [], []
        real_n = paper_n = 0
        for _ in range(repeats):
            r, _, real_n = series_time_s(real)
            p, _, paper_n = series_time_s(paper)
            real_s.append(r)
            paper_s.append(p)
            ratios.append(r / p)
        whole_s = statistics.median(
            series_time_s(load_scenario(compose_config(base)))[0] for _ in range(repeats)
        )
        r_med, p_med = statistics.median(real_s), statistics.median(paper_s)
        print(
            f"| {scaling} | {len(widths)} | {r_med:.2f} | {p_med:.2f} "
            f"| {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) "
            f"| {real_n} / {paper_n} | {1e3 * r_med / real_n:.1f} / {1e3 * p_med / paper_n:.1f} "
            f"| {whole_s:.2f} |",
            flush=True,
        )


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
    args = parser.parse_args()
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
