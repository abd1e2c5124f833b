"""The summary of a concrete run (`run=<preset>`): what a planner reads, not a grid series' limits.

A run is one point, so the grid's columns (linear end, wall, T_crit) say nothing of it. Its lines
give the hardware and physics it was evaluated on, its GPUs and layout (given, or found by
`run.layout_search`), MFU and HFU, the step time, the days of training against the budget, the
memory per GPU against the GPU's HBM, and feasible or every reason it is not, in words.
"""

from __future__ import annotations

import math

from pipeline.model.compute.efficiency import (
    fp8_gemms,
    fp8_runs_16bit,
    matmul_efficiency,
    precision_speedup,
)
from pipeline.model.memory.capacity import memory_capacity_bytes
from pipeline.model.records.results import InfeasibleReason, PointResult
from pipeline.model.records.run import RunCost, RunSpec
from pipeline.model.records.switches import STACK_2025
from pipeline.schema import Scenario

DAY_S = 86_400.0
GB = 1e9


def run_lines(scenario: Scenario, point: PointResult | None, sweep_point: str = "{}") -> list[str]:
    """The lines of one run: a header naming the run, hardware and physics, then its counts,
    layout (GPUs = tp·pp·dp·cp, dp as `run.dp` gives it; with ep > 1, how dp splits into ep
    expert ranks times the row's dp, d/e), throughput, time, memory and verdict (`point` is
    the run's row; None: a run read back from a dataset, whose row is there). No lines for a
    grid series."""
    run = scenario.run
    if run is None:
        return []
    how = "the best layout run.layout_search found" if run.layout_search else "its own layout"
    if run.layout_search and point is not None and _none_fits(scenario, point):
        how = "run.layout_search found no layout that fits: the one needing the least memory"
    at = f"  {sweep_point}" if sweep_point != "{}" else ""
    lines = [
        f"run {run.name} on {scenario.hardware_name} ({scenario.hardware.hbm_bytes / GB:.0f} GB "
        f"HBM), physics={scenario.physics.name}{_software(scenario)}, {how}{at}"
    ]
    if point is None:
        return [*lines, "  already in the dataset, not recomputed: its row is in points/"]
    cost, layout = point.run_cost, point.layout
    if point.counts is not None:
        counted = "" if scenario.physics.attention else PAPER_COUNT.format(scenario.physics.name)
        lines.append(
            f"  {point.counts.n_params:.3g} parameters{counted}, {point.counts.n_tokens:.3g} "
            f"tokens, {point.counts.training_flop:.3g} FLOP of training"
        )
    if cost is not None and layout is not None:
        tp, pp, ep, cp = (math.prod(x) for x in (layout.tp_ff, layout.pp, layout.ep, layout.cp))
        lines.append(
            f"  {layout.n_gpu} GPUs: {_degrees(tp, pp, math.prod(layout.dp), cp, ep)}, "
            f"{layout.microbatches} microbatches per step, interleave {layout.pp_interleave}, "
            f"recompute {point.recompute}"
        )
        if run.shape.experts > 1:
            lines.append(f"  {_routing(run, ep)}")
        lines.append(
            f"  MFU {cost.mfu:.3f}, HFU {cost.hfu:.3f}; {cost.step_time_s:.4g} s per step; "
            f"{_training_days(point):.4g} days of training (budget {scenario.duration_s / DAY_S:.4g}"
            " days)"
        )
        lines.append(f"  memory per GPU {_memory(cost, scenario)}")
    lines.append(f"  {verdict(scenario, point)}")
    return lines


def _degrees(tp: int, pp: int, expert_dp: int, cp: int, ep: int) -> str:
    """The run's degrees as its config writes them (dp is d, `run.dp`); with experts over ep > 1
    ranks, how d splits: ep expert ranks times d/e replicas of each expert shard, the row's
    `dp` (`model.runs.run_point`)."""
    d = expert_dp * ep
    text = f"tp {tp} x pp {pp} x dp {d} x cp {cp}"
    if ep == 1:
        return f"{text} (ep 1)"
    return (
        f"{text} (dp {d} = ep {ep} x {expert_dp} replicas of each expert shard: points.dp "
        f"{expert_dp})"
    )


def _routing(run: RunSpec, ep: int) -> str:
    """How a mixture of experts' tokens reach its experts, as the step charges them (docs/model.md
    R.5.1): on ep > 1 ranks, the busiest rank's share (`run.expert_imbalance`)."""
    top = f"top-{run.shape.top_k} of {run.shape.experts} experts"
    x = run.layout.expert_imbalance
    if ep == 1:
        return f"routing: {top}, all on every GPU: routing moves no work between GPUs"
    if x == 0.0:
        return f"routing: {top} over {ep} expert ranks in balance (run.expert_imbalance 0)"
    return (
        f"routing: {top} over {ep} expert ranks, the busiest computing {1.0 + x:.3g} x the "
        f"balanced tokens (run.expert_imbalance {x:g})"
    )


PAPER_COUNT = (
    " (physics={}: the MLP blocks alone, as the paper counts; physics=realistic adds attention "
    "and embeddings)"
)


def _training_days(point: PointResult) -> float:
    return math.nan if point.cost is None else point.cost.training_time_s / DAY_S


def _capacity(scenario: Scenario) -> str:
    """The HBM a run's memory is checked against, in words: the datasheet's GB, or the
    driver's count of them (`physics.hbm_capacity=device`, `memory.capacity`)."""
    hbm = scenario.hardware.hbm_bytes
    capacity_bytes = memory_capacity_bytes(scenario.hardware, scenario.physics)
    if capacity_bytes == hbm:
        return f"{hbm / GB:.0f} GB of HBM"
    return (
        f"{capacity_bytes / GB:.1f} GB of HBM (the datasheet's {hbm / GB:.0f} GB as the driver "
        "reports them)"
    )


def _memory(cost: RunCost, scenario: Scenario) -> str:
    """Memory per GPU against the HBM, and whether the physics checks it."""
    fits = "fits" if cost.fits_memory else "does not fit"
    text = f"{cost.memory_per_gpu_bytes / GB:.1f} GB of {_capacity(scenario)}: {fits}"
    if not scenario.physics.gpu_memory:
        text += (
            f" (physics={scenario.physics.name} does not check a run's memory per GPU; "
            "physics.memory_check=per_gpu or physics=realistic does)"
        )
    return text


def reasons(scenario: Scenario, point: PointResult) -> list[str]:
    """Every reason the run cannot train as given, in words: over the memory of one GPU (no
    layout fits, or the run's needs more HBM than the GPU has, whether or not the physics
    checks it), over the duration budget."""
    found: list[str] = []
    cost = point.run_cost
    if point.infeasible_reason is InfeasibleReason.NO_LAYOUT:
        found.append("run.layout_search has no layout of the run's model and batch on its GPUs")
    elif _none_fits(scenario, point) and cost is not None:
        found.append(
            f"no layout of the run fits the {_capacity(scenario)} of one GPU: the one needing "
            f"the least takes {cost.memory_per_gpu_bytes / GB:.1f} GB"
        )
    elif cost is not None and not cost.fits_memory:
        unchecked = (
            "" if scenario.physics.gpu_memory else f" ({UNCHECKED.format(scenario.physics.name)})"
        )
        found.append(
            f"needs {cost.memory_per_gpu_bytes / GB:.1f} GB per GPU, more than the "
            f"{_capacity(scenario)}{unchecked}"
        )
    if point.cost is not None and not point.cost.training_time_s < scenario.duration_s:
        found.append(
            f"trains for {_training_days(point):.4g} days, over the budget of "
            f"{scenario.duration_s / DAY_S:.4g} days (scaling.duration_*)"
        )
    return found


UNCHECKED = "physics={} does not check it; the row's feasible column does not count it"


def _none_fits(scenario: Scenario, point: PointResult) -> bool:
    """A searched run over one GPU's memory: no layout fits, its row the closest
    (`runs.run_search.searched_run_layout`)."""
    run = scenario.run
    searched = run is not None and run.layout_search
    return searched and point.infeasible_reason is InfeasibleReason.EXCEEDS_GPU_MEMORY


def verdict(scenario: Scenario, point: PointResult) -> str:
    """`feasible`, or `infeasible: ` and every reason, joined by `; ` (a row feasible under a
    physics that does not check memory per GPU, but over it, says both)."""
    found = reasons(scenario, point)
    if point.feasible and not found:
        return "feasible: fits and trains within the budget"
    if point.feasible:
        return "feasible as the row says, but " + "; ".join(found)
    return "infeasible: " + "; ".join(found or [str(point.infeasible_reason)])


def _software(scenario: Scenario) -> str:
    """The software generation a realistic run's GEMMs are timed as (`physics.stack`), the
    number format they compute in and the share of u_eff · peak (the 16-bit peak) they run at
    (`compute.efficiency.matmul_efficiency`), under FP8 times the FP8 speedup
    (`precision_speedup`); where FP8 was asked of a GPU without an FP8 peak, that its GEMMs run
    16-bit (`fp8_runs_16bit`, docs/model.md R.11); under the 2025 stack on a GPU whose preset gives
    no 2025 factor, that its rate is the 2024 software's (R.9). Nothing under the paper's model,
    which reads no efficiency."""
    physics, hw = scenario.physics, scenario.hardware
    if physics.is_paper:
        return ""
    share = f"{matmul_efficiency(hw, physics):.3g} of u_eff x peak"
    if physics.stack == STACK_2025 and hw.matmul_speedup_2025 is None:
        share += f", {scenario.hardware_name} having no 2025 factor: the 2024 rate"
    if fp8_gemms(hw, physics):  # the 16-bit rate times the FP8 speedup
        faster = precision_speedup(hw, physics)
        return f" ({physics.stack} software: FP8 GEMMs at {faster:.3g} x {share})"
    if fp8_runs_16bit(hw, physics):
        return (
            f" ({physics.stack} software: 16-bit GEMMs at {share}; {scenario.hardware_name} has "
            "no FP8 peak, so physics.precision=fp8 runs them 16-bit)"
        )
    return f" ({physics.stack} software: 16-bit GEMMs at {share})"
