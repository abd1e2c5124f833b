"""Benchmark and headline: what each realistic extension does to the paper's two limits.

For H100 dense and sparse (default critical batch, 3 months), evaluates the scaling-law
series with physics=paper, physics=realistic and each extension alone (realistic
efficiencies, every other switch off), and prints the linear-scaling end, the latency wall
(first infeasible compute) and the wall time of each series. Reports figures; it does not
pass or fail. Run: `.venv/bin/python bench/bench_physics.py` (a few minutes on one core).
"""

from __future__ import annotations

import argparse
import time

from pipeline.execute.series import evaluate_series
from pipeline.schema import compose_config, load_scenario

SWITCHES_OFF = {
    "physics.attention": "false",
    "physics.memory_bound_ops": "false",
    "physics.gpu_memory": "false",
    "physics.recompute": "none",
    "physics.zero_stage": "0",
    "physics.megatron_tp": "false",
    "physics.tensor_memory": "false",
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
    "gpu_memory (recompute none, ZeRO-0)": alone(gpu_memory="true"),
    "gpu_memory + recompute auto + ZeRO-1": alone(
        gpu_memory="true", recompute="auto", zero_stage="1"
    ),
    "megatron_tp (1-D TP, whole sequences)": alone(megatron_tp="true"),
}


def fmt(x: float | None) -> str:
    """A FLOP figure in short scientific notation, or a dash."""
    return "–" if x is None else f"{x:.1e}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hardware", default="h100_sxm")
    args = parser.parse_args()
    print(
        "| scaling | physics | linear-scaling end (FLOP) | latency wall (FLOP) | best utilization | sizes | series time (s) | per size (s) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for scaling in ("dense", "sparse"):
        for name, overrides in VARIANTS.items():
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
