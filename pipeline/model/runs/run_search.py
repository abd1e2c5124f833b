"""The best layout for a run's model and batch at its GPU count (docs/model.md, "Realistic physics").

Tries every Megatron-style layout: tensor parallelism t inside the fastest network level
(t divides heads, kv_heads and ffn_hidden, as the run keys must), pipeline stages p up to the layers (placed by
`records.run.stage_layers`), data parallelism
d = N_GPU / (t·p·c) dividing the batch, expert parallelism e dividing both the experts and d
(a mixture of experts; Rajbhandari et al. 2022, DeepSpeed-MoE §4), whole-sequence
microbatches b, interleaving v, and each recomputation mode; sequence parallelism whenever t > 1. A layout whose memory
exceeds one GPU's HBM is dropped when the physics checks per-GPU memory. The fastest
step wins; ties go to the first in this enumeration order.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator

import numpy as np

from pipeline.model.network.levels import divisors
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.run import RunCost, RunLayout, RunSpec
from pipeline.model.records.switches import RECOMPUTE_ORDER, Physics
from pipeline.model.runs.training_run import RunCosts, RunLayouts, run_costs

MAX_MICROBATCH_SEQS = 16
"""Largest microbatch tried, in sequences."""
MAX_INTERLEAVE = 8
"""Most model chunks per pipeline rank tried."""
SEARCHED_FIELDS = frozenset(
    {"tp", "pp", "dp", "ep", "microbatch_seqs", "interleave", "sequence_parallel", "recompute"}
)
"""The `RunLayout` fields the search chooses; every other field is the given layout's."""


def tp_pp_dp(run: RunSpec, fast: int) -> Iterator[tuple[int, int, int]]:
    """(t, p, d) of every layout: on exactly the given layout's GPUs (t·p·d·c = its count), or
    with a GPU budget B (`RunSpec.gpu_budget`) every t, p ≤ L and d dividing the batch with
    t·p·d·c ≤ B, the largest d first.

    Monotone in the budget: the layouts tried under B are exactly those with t·p·d·c ≤ B, a
    set that only grows with B, so a larger budget keeps every layout a smaller one tried and
    its fastest step is never slower, nor is it infeasible where the smaller one was not. Every
    d is tried, not only the largest that fits: a larger d leaves fewer microbatches per
    replica (m < p is not tried) and can need more memory, so the largest is not always valid.

    A run's own layout may run plain 1F1B with m < p (`schema.run.check_run`); the search does
    not try it: its bubble idles (p − 1)/(p − 1 + m) of the step, and under a GPU budget the
    fastest step would buy a few percent of speed with several times the GPUs (Llama 3 405B at
    a budget of 100,000: 98,304 GPUs at MFU 0.08, one microbatch over six stages, against
    16,384 at 0.45, 5% slower).
    """
    shape, cp = run.shape, run.layout.cp
    budget = run.gpu_budget
    n_gpu = run.layout.n_gpu if budget is None else budget
    replicas = divisors(run.global_batch_seqs)[::-1]
    for tp in divisors(n_gpu // cp) if budget is None else range(1, fast + 1):
        if tp > fast or shape.heads % tp or shape.kv_heads % tp or shape.ffn_hidden % tp:
            continue
        if tp * cp > n_gpu:
            continue
        if budget is None:
            for pp in divisors(n_gpu // (cp * tp)):
                dp = n_gpu // (cp * tp * pp)
                if pp <= shape.layers and run.global_batch_seqs % dp == 0:
                    yield tp, pp, dp
            continue
        for pp in range(1, min(shape.layers, n_gpu // (cp * tp)) + 1):
            room = n_gpu // (cp * tp * pp)
            for dp in replicas:
                if dp <= room:
                    yield tp, pp, dp


def candidate_layouts(hw: HardwareSpec, run: RunSpec) -> Iterator[RunLayout]:
    """Every layout of the run's model and batch on its GPU count (or within its GPU budget),
    in search order."""
    shape, given = run.shape, run.layout
    fast = hw.level_sizes[0] if hw.level_sizes else given.n_gpu
    # the given layout's other fields, passed on as dataclasses.replace would, at a tenth its cost
    fields = dataclasses.fields(given)
    kept = {f.name: getattr(given, f.name) for f in fields if f.name not in SEARCHED_FIELDS}
    for tp, pp, dp in tp_pp_dp(run, fast):
        largest = -(-shape.layers // pp)  # ⌈L/p⌉: the fullest stage (`stage_layers`)
        per_replica = run.global_batch_seqs // dp
        for ep in divisors(math.gcd(shape.experts, dp)):
            for micro in divisors(per_replica):
                m = per_replica // micro
                if micro > MAX_MICROBATCH_SEQS or (pp > 1 and m < pp):
                    continue
                chunks = [v for v in divisors(largest) if v <= MAX_INTERLEAVE]
                for v in chunks if pp > 1 else [1]:  # m ≥ p: Megatron-Core's group N
                    for mode in RECOMPUTE_ORDER:
                        yield RunLayout(
                            **kept,
                            tp=tp,
                            pp=pp,
                            dp=dp,
                            ep=ep,
                            microbatch_seqs=micro,
                            interleave=v,
                            sequence_parallel=tp > 1,
                            recompute=mode,
                        )


def _evaluated(
    hw: HardwareSpec, physics: Physics, run: RunSpec
) -> tuple[list[RunLayout], RunCosts] | None:
    """Every candidate layout and its costs, evaluated as one batch (`run_costs`); None when
    the run has no candidate layout."""
    layouts = list(candidate_layouts(hw, run))
    if not layouts:
        return None
    return layouts, run_costs(hw, physics, run.shape, run.global_batch_seqs, RunLayouts.of(layouts))


def _fastest_fitting(physics: Physics, costs: RunCosts) -> int | None:
    """The first of the fastest rows that fit (when memory is checked), None when none does."""
    step = costs.step_time_s
    if physics.gpu_memory:
        fits = costs.memory_per_gpu_bytes <= costs.memory_capacity_bytes
        step = np.where(fits, step, np.inf)
    best = int(np.argmin(step))
    return best if np.isfinite(step[best]) else None


def best_run_layout(
    hw: HardwareSpec, physics: Physics, run: RunSpec
) -> tuple[RunSpec, RunCost] | None:
    """The fastest layout that fits (when memory is checked), or None when none does: every
    candidate evaluated as one batch (`run_costs`), the first of the fastest kept."""
    evaluated = _evaluated(hw, physics, run)
    best = None if evaluated is None else _fastest_fitting(physics, evaluated[1])
    if evaluated is None or best is None:
        return None
    layouts, costs = evaluated
    return dataclasses.replace(run, layout=layouts[best]), costs.row(best)


def searched_run_layout(
    hw: HardwareSpec, physics: Physics, run: RunSpec
) -> tuple[RunSpec, RunCost] | None:
    """What a searched run reports: `best_run_layout`, or where no layout fits, the one
    needing the least memory per GPU (the fastest of those), whose row keeps a layout and a
    cost that show by how much the closest is over; None only when the run has no candidate
    layout at all."""
    evaluated = _evaluated(hw, physics, run)
    if evaluated is None:
        return None
    layouts, costs = evaluated
    best = _fastest_fitting(physics, costs)
    if best is None:
        best = int(np.lexsort((costs.step_time_s, costs.memory_per_gpu_bytes))[0])
    return dataclasses.replace(run, layout=layouts[best]), costs.row(best)
