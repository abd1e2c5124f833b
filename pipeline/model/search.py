"""Search: the best layout at a cluster size, the smallest sufficient cluster, a series (spec §10-§11).

The enumeration follows the original's order (spec §10) so that ties resolve the same way,
but evaluation is vectorized: every candidate's optimistic one-level time is computed
at once, and the full per-level splits only of candidates whose lower bound can still
reach the best time. Pruning by a true lower bound never changes the answer (spec §10.8.3).

Source: Erdil & Schneider-Joseph (2024), arXiv:2411.01137; spec §10-§11, §15.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from pipeline.model.evaluate import step_cost
from pipeline.model.grid_physics import (
    RECOMPUTE_ORDER,
    LayerTimes,
    grid_layer_times,
    grid_memory_bytes,
    grid_optimizer_s,
    grid_params_per_gpu,
    recompute_modes,
)
from pipeline.model.hardware import HardwareSpec, effective_flop_per_s
from pipeline.model.layout import (
    N_DEGREES,
    adjusted_level_sizes,
    divisors,
    hierarchy_is_consistent,
    split_table,
)
from pipeline.model.network import Network
from pipeline.model.options import SearchOptions
from pipeline.model.physics import PAPER, Physics, Recompute
from pipeline.model.results import InfeasibleReason, Layout, PointResult, StepCost
from pipeline.model.scaling import ModelShape, ScalingLaws, model_shape
from pipeline.model.step import (
    LayoutBatch,
    StepArrays,
    layer_matmul_time_s,
    memory_required_bytes,
    step_arrays,
)

Array = NDArray[np.float64]
PRUNE_SLACK = 1e-9
"""Relative slack on the optimistic bound, so rounding never prunes a tied candidate."""
UTILIZATION_FLOOR = 0.001
"""A series stops after a point below this utilization (spec §11)."""
MAX_BATCH_TOKENS = 2**53
"""Batches above this many tokens are rejected: layouts are enumerated in exact int64/float64."""
FIRST_BLOCK = 4
"""Candidates in the first evaluated block; each next block doubles."""
ROWS_PER_BLOCK = 200_000
"""Full-split rows evaluated per numpy block: bounds memory on 3-level networks."""


@dataclass(frozen=True, slots=True)
class Candidates:
    """Candidate layouts at one cluster size in enumeration order (spec §10 steps 1-8.2)."""

    degrees: NDArray[np.int64]
    """(n, 5) totals (DP, TP_m, TP_ff, PP, EP)."""
    microbatches: Array
    zero_bubble: NDArray[np.bool_]
    interleave: Array
    t_layer_s: Array
    compute_repeats: Array
    nanobatch: NDArray[np.int64]
    t_step_extra_s: Array | None = None
    """Per-step time outside the pipeline (realistic physics: the optimizer step)."""
    recompute: NDArray[np.int64] | None = None
    """Each candidate's recomputation mode (index into `RECOMPUTE_ORDER`), realistic physics."""


@dataclass(frozen=True, slots=True)
class MemoryBlocked:
    """Candidates existed at a cluster size but none fit in one GPU's memory."""


@lru_cache(maxsize=65536)
def _microbatch_choices(base: int, pp: int, opts: SearchOptions) -> tuple[tuple[bool, int], ...]:
    """(zero_bubble, m) pairs: 1F1B first, then ZB; m | base, m ≥ N_PP (1F1B) or ≥ 2·N_PP (ZB)."""
    divs = divisors(base) if base > 0 else ()
    out: list[tuple[bool, int]] = []
    if opts.one_f_one_b:
        out += [
            (False, m) for m in [d for d in divs if d >= pp][: opts.max_1f1b_microbatch_candidates]
        ]
    if opts.zero_bubble:
        out += [
            (True, m) for m in [d for d in divs if d >= 2 * pp][: opts.max_zb_microbatch_candidates]
        ]
    return tuple(out)


@lru_cache(maxsize=65536)
def _tp_ff_choices(tp: int, d_model: int, d_ff: int, window: int) -> tuple[int, ...]:
    """N_TPff | N_TP with ⌊√N_TP⌋ ≤ N_TPff ≤ window·⌊√N_TP⌋, N_TPm | d_model, N_TPff | d_ff (spec §10.5)."""
    root = math.isqrt(tp)
    return tuple(
        f
        for f in divisors(tp)
        if root <= f <= window * root and d_model % (tp // f) == 0 and d_ff % f == 0
    )


def enumerate_candidates(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions,
    physics: Physics = PAPER,
) -> Candidates | MemoryBlocked | None:
    """Every (N_DP, N_TPm, N_TPff, N_PP, N_EP, schedule, m) the search tries, in order (spec §10).

    None if there is none, or if the batch exceeds `MAX_BATCH_TOKENS` (exact integers end there).
    Under realistic physics (`physics`), 1-D tensor parallelism and whole sequences with
    `megatron_tp`, a per-GPU memory check with `gpu_memory` (MemoryBlocked when nothing fits),
    and each candidate's layer time from `grid_physics` (docs/model.md, "Realistic physics").
    """
    if shape.batch_tokens > MAX_BATCH_TOKENS:
        return None
    quirks = opts.quirks
    s, layers, b_tok = shape.sparsity, shape.n_layers, shape.batch_tokens
    ep = math.gcd(n_gpu, s)
    q = n_gpu // ep
    memory = n_gpu * hw.hbm_bytes
    whole = quirks.whole_sequences or physics.megatron_tp
    split_unit = shape.batch_seqs if whole else b_tok  # Q3
    rows: list[tuple[int, int, int, int, int, int, bool, int]] = []
    for tp in divisors(math.gcd(q, shape.d_model * shape.d_ff)):
        if physics.megatron_tp:  # 1-D tensor parallelism: every matrix split along d_ff
            ff_choices: tuple[int, ...] = (tp,) if shape.d_ff % tp == 0 else ()
        else:
            ff_choices = _tp_ff_choices(tp, shape.d_model, shape.d_ff, opts.tp_ff_window)
        if not ff_choices:
            continue
        for dp in divisors(math.gcd(q // tp, split_unit)):
            pp = q // (tp * dp)
            if layers % pp:
                continue
            if quirks.reject_non_divisible and b_tok % (s * dp):  # Q8
                continue
            base = shape.batch_seqs // dp if whole else b_tok // (s * dp)
            choices = _microbatch_choices(base, pp, opts)
            for ff in ff_choices:
                rows += [
                    (dp, tp // ff, ff, pp, ep, m, zb, b_tok // (dp * m * s)) for zb, m in choices
                ]
    if not rows:
        return None
    table = np.array(rows, dtype=np.int64)
    dp_, tpm, tpff, pp_, ep_, m, zb_i, nano = table.T
    zb = zb_i.astype(bool)
    if not physics.is_paper:
        return _realistic_candidates(hw, shape, n_gpu, table, opts, physics)
    if opts.memory_check:
        need = memory_required_bytes(
            shape, dp_.astype(float), pp_.astype(float), nano.astype(float), zb, opts
        )
        keep = memory >= need
        if not keep.any():
            return None
        table, zb = table[keep], zb[keep]
        dp_, tpm, tpff, pp_, ep_, m, _, nano = table.T
    interleave = np.where(zb | (pp_ == 1) | (not opts.interleaving), 1, layers // pp_).astype(
        np.float64
    )
    t_layer = layer_matmul_time_s(
        hw,
        (shape.d_model // tpm).astype(np.float64),
        (shape.d_ff // tpff).astype(np.float64),
        nano.astype(np.float64),
    )
    repeats = ((layers // pp_) * (s // ep_) * m).astype(np.float64)
    return Candidates(
        degrees=np.stack([dp_, tpm, tpff, pp_, ep_], axis=1),
        microbatches=m.astype(np.float64),
        zero_bubble=zb,
        interleave=interleave,
        t_layer_s=t_layer,
        compute_repeats=repeats,
        nanobatch=nano,
    )


def _realistic_candidates(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    table: NDArray[np.int64],
    opts: SearchOptions,
    physics: Physics,
) -> Candidates | MemoryBlocked | None:
    """Candidates under realistic physics: per-GPU memory with the cheapest recomputation
    mode that fits, layer times and the optimizer step from `grid_physics`."""
    dp_, tpm, tpff, pp_, ep_, m, zb_i, nano = (col.astype(np.float64) for col in table.T)
    zb = zb_i.astype(bool)
    interleave = np.where(zb | (pp_ == 1) | (not opts.interleaving), 1.0, shape.n_layers // pp_)
    modes = recompute_modes(physics)
    mode_idx = np.full(table.shape[0], -1, dtype=np.int64)
    if physics.gpu_memory:
        factors = (dp_, tpm, tpff, pp_, ep_)
        for mode in reversed(modes):  # the cheapest fitting mode is written last
            need = grid_memory_bytes(physics, shape, factors, nano, m, interleave, zb, mode)
            mode_idx = np.where(need <= hw.hbm_bytes, RECOMPUTE_ORDER.index(mode), mode_idx)
        keep = mode_idx >= 0
        if not keep.any():
            return MemoryBlocked()
    else:  # the paper's aggregate check (§9)
        first = modes[0] if modes[0] is not Recompute.AUTO else Recompute.NONE
        mode_idx[:] = RECOMPUTE_ORDER.index(first)
        keep = np.ones(table.shape[0], dtype=bool)
        if opts.memory_check:
            need = memory_required_bytes(shape, dp_, pp_, nano, zb, opts)
            keep = n_gpu * hw.hbm_bytes >= need
            if not keep.any():
                return None
    table, mode_idx, interleave = table[keep], mode_idx[keep], interleave[keep]
    dp_, tpm, tpff, pp_, ep_, m, zb_i, nano = table.T
    shards = np.stack([tpm, tpff, nano], axis=1).astype(np.float64)
    unique, inverse = np.unique(shards, axis=0, return_inverse=True)  # few distinct shapes
    at = inverse.ravel()
    u = grid_layer_times(hw, physics, shape, unique[:, 0], unique[:, 1], unique[:, 2])
    times = LayerTimes(u.forward_s[at], u.backward_s[at], u.core_forward_s[at])
    extra = None
    if physics.memory_bound_ops:
        params = grid_params_per_gpu(
            physics,
            shape,
            (tpm * tpff).astype(np.float64),
            pp_.astype(np.float64),
            ep_.astype(np.float64),
        )
        extra = grid_optimizer_s(hw, physics, params, dp_.astype(np.float64))
    repeats = ((shape.n_layers // pp_) * (shape.sparsity // ep_) * m).astype(np.float64)
    return Candidates(
        degrees=np.stack([dp_, tpm, tpff, pp_, ep_], axis=1),
        microbatches=m.astype(np.float64),
        zero_bubble=zb_i.astype(bool),
        interleave=interleave,
        t_layer_s=times.with_recompute_s(mode_idx),
        compute_repeats=repeats,
        nanobatch=nano,
        t_step_extra_s=extra,
        recompute=mode_idx,
    )


def _batch(c: Candidates, idx: NDArray[np.int64], factors: NDArray[np.int64]) -> LayoutBatch:
    """Rows for candidates `idx` with per-level factors (n, K, 5)."""
    return LayoutBatch.from_factors(
        factors,
        c.microbatches[idx],
        c.zero_bubble[idx],
        c.interleave[idx],
        c.t_layer_s[idx],
        c.compute_repeats[idx],
        None if c.t_step_extra_s is None else c.t_step_extra_s[idx],
    )


def optimistic_network(hw: HardwareSpec) -> Network:
    """One level with the sum of all bandwidths and the smallest latency (spec §10 step 8.3)."""
    return Network((sum(hw.net_bandwidth_bytes_per_s),), (min(hw.net_latency_s),))


def hardware_network(hw: HardwareSpec) -> Network:
    """The preset's network levels."""
    return Network(hw.net_bandwidth_bytes_per_s, hw.net_latency_s)


def split_rows(
    c: Candidates, idx: NDArray[np.int64], level_sizes: tuple[int, ...]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """(candidate index, split index, per-level factors) of every valid split of candidates `idx`.

    A split is valid when, for every degree, the product of its non-top factors divides
    the degree (spec §5.2); the top-level factor is the quotient. Rows are candidate-major,
    split-minor: the enumeration order of spec §10 step 8.4 for ascending `idx`.
    """
    table = split_table(level_sizes)
    n_split, inner = table.shape[0], table.shape[1]
    totals = c.degrees[idx]
    inner_prod = table.prod(axis=1) if inner else np.ones((n_split, N_DEGREES), np.int64)
    ok = np.ones((totals.shape[0], n_split), dtype=bool)
    for degree in range(N_DEGREES):
        # few distinct products per degree: test each once, then gather per split
        values, which = np.unique(inner_prod[:, degree], return_inverse=True)
        divides = totals[:, degree, None] % values[None, :] == 0
        ok &= divides[:, which.ravel()]
    cand, split = np.nonzero(ok)
    top = totals[cand] // inner_prod[split]
    factors = np.concatenate([table[split], top[:, None, :]], axis=1)
    return idx[cand], split, factors


@dataclass(frozen=True, slots=True)
class Choice:
    """The accepted row of a search: its candidate, per-level factors and step arrays."""

    candidate: int
    factors: NDArray[np.int64]
    step: StepArrays


def _comm_terms(step: StepArrays, steps: float) -> tuple[Array, Array, Array]:
    return steps * step.t_tp_bw_s, steps * step.t_dp_bw_s, steps * step.t_pp_ep_bw_s


def resolve_ties(step: StepArrays, steps: float, tie_tolerance: float) -> int:
    """Index of the accepted row under the original's sequential accept rule (spec §10.8.5, §15.4).

    Rows are in enumeration order. A row is accepted if T_train < best, or if
    T_train == best and its communication sum is below the incumbent's, the two sums
    evaluated in different orders as in the original. With a tie tolerance (Q2 off),
    rows within it of the minimum tie and the smallest sum wins, first on equality.
    """
    t = step.t_train_s
    best = float(t.min())
    tp, dp, ppep = _comm_terms(step, steps)
    if tie_tolerance > 0.0:
        tied = np.flatnonzero(t <= best * (1.0 + tie_tolerance))
        comm = (tp[tied] + dp[tied]) + ppep[tied]
        return int(tied[int(np.argmin(comm))])
    tied = np.flatnonzero(t == best)
    chosen = int(tied[0])
    for row in tied[1:]:
        candidate = (tp[row] + dp[row]) + ppep[row]
        incumbent = (tp[chosen] + ppep[chosen]) + dp[chosen]
        if candidate < incumbent:
            chosen = int(row)
    return chosen


def _select(step: StepArrays, rows: NDArray[np.int64]) -> StepArrays:
    return StepArrays(*(getattr(step, f)[rows] for f in StepArrays.__slots__))


def _concat(parts: list[StepArrays]) -> StepArrays:
    return StepArrays(
        *(np.concatenate([getattr(p, f) for p in parts]) for f in StepArrays.__slots__)
    )


def optimistic_train_time_s(
    hw: HardwareSpec, shape: ModelShape, n_gpu: int, c: Candidates, opts: SearchOptions
) -> Array:
    """Lower bound on each candidate's training time: every degree on one optimistic level."""
    all_idx = np.arange(c.degrees.shape[0], dtype=np.int64)
    one_level = _batch(c, all_idx, c.degrees[:, None, :])
    return step_arrays(hw, shape, n_gpu, one_level, optimistic_network(hw), opts).t_train_s


def best_split(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    c: Candidates,
    opts: SearchOptions,
    bound: Array,
    prune: bool = True,
) -> Choice | None:
    """The accepted (candidate, split) at n_gpu (spec §10 step 8).

    Candidates are evaluated in blocks of ascending optimistic bound; after each block
    every remaining candidate whose bound exceeds the best time so far is dropped, and
    so are evaluated rows slower than it. Neither can reach or tie the minimum, so the
    rows left hold every tied row; they are put back in enumeration order for the
    original's tie rule. `prune=False` evaluates every split of every candidate instead:
    the exhaustive search the pruned one must equal (docs/model.md §9.2).
    """
    levels = adjusted_level_sizes(hw.level_sizes, n_gpu)
    net = hardware_network(hw)
    tol = opts.quirks.tie_tolerance
    order = np.argsort(bound, kind="stable") if prune else np.arange(bound.size)
    best = np.inf
    kept: list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], StepArrays]] = []
    pos, block = 0, FIRST_BLOCK
    while pos < order.size:
        limit = best * (1.0 + PRUNE_SLACK + tol) if prune else np.inf
        take = order[pos : pos + block]
        take = np.sort(take[bound[take] <= limit])
        if take.size == 0:
            break  # the bound is sorted: every remaining candidate exceeds the best
        pos, block = pos + block, block * 2
        idx, split, factors = split_rows(c, take, levels)
        for start in range(0, idx.size, ROWS_PER_BLOCK):
            sl = slice(start, start + ROWS_PER_BLOCK)
            step = step_arrays(hw, shape, n_gpu, _batch(c, idx[sl], factors[sl]), net, opts)
            best = min(best, float(step.t_train_s.min()))
            near = np.flatnonzero(step.t_train_s <= (best * (1.0 + tol) if prune else np.inf))
            kept.append((idx[sl][near], split[sl][near], factors[sl][near], _select(step, near)))
    if not kept:
        return None
    idx = np.concatenate([k[0] for k in kept])
    split = np.concatenate([k[1] for k in kept])
    factors = np.concatenate([k[2] for k in kept])
    step = _concat([k[3] for k in kept])
    rows = np.flatnonzero(step.t_train_s <= best * (1.0 + tol))
    rows = rows[np.lexsort((split[rows], idx[rows]))]  # enumeration order
    tied = _select(step, rows)
    row = resolve_ties(tied, shape.n_tokens / shape.batch_tokens, tol)
    return Choice(int(idx[rows[row]]), factors[rows[row]], _select(tied, np.array([row])))


def _layout(c: Candidates, choice: Choice, n_gpu: int) -> Layout:
    f = choice.factors
    i = choice.candidate
    return Layout(
        n_gpu=n_gpu,
        dp=tuple(int(v) for v in f[:, 0]),
        tp_model=tuple(int(v) for v in f[:, 1]),
        tp_ff=tuple(int(v) for v in f[:, 2]),
        pp=tuple(int(v) for v in f[:, 3]),
        ep=tuple(int(v) for v in f[:, 4]),
        microbatches=int(c.microbatches[i]),
        zero_bubble=bool(c.zero_bubble[i]),
        pp_interleave=int(c.interleave[i]),
        nanobatch_tokens=int(c.nanobatch[i]),
    )


@dataclass(frozen=True, slots=True)
class BestAt:
    """What the search found at one cluster size."""

    had_candidates: bool
    """Some candidate passed enumeration (divisibility and memory)."""
    found: tuple[Layout, StepCost] | None
    memory_blocked: bool = False
    """Candidates existed but none fit in one GPU's memory (realistic physics)."""
    recompute: str | None = None
    """The chosen layout's recomputation mode under realistic physics."""


def network_physics(hw: HardwareSpec, physics: Physics) -> HardwareSpec:
    """The hardware with link bandwidths at the physics' achieved fraction (paper: unchanged)."""
    if physics.is_paper:
        return hw
    eff = physics.efficiency.network
    return dataclasses.replace(
        hw, net_bandwidth_bytes_per_s=tuple(b * eff for b in hw.net_bandwidth_bytes_per_s)
    )


def _best_at(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions,
    within_s: float = math.inf,
    prune: bool = True,
    physics: Physics = PAPER,
) -> BestAt:
    """The best layout at n_gpu, and whether any candidate passed enumeration (spec §10).

    The layout is None when no candidate has a valid split, or when the optimistic
    bound already proves that nothing trains faster than `within_s` (unless not `prune`).
    """
    if not hierarchy_is_consistent(hw.level_sizes, n_gpu):
        return BestAt(False, None)
    c = enumerate_candidates(hw, shape, n_gpu, opts, physics)
    if c is None:
        return BestAt(False, None)
    if isinstance(c, MemoryBlocked):
        return BestAt(False, None, memory_blocked=True)
    bound = optimistic_train_time_s(hw, shape, n_gpu, c, opts)
    if prune and bound.min() * (1.0 - PRUNE_SLACK) >= within_s:
        return BestAt(True, None)  # even the optimistic network cannot finish in time here
    choice = best_split(hw, shape, n_gpu, c, opts, bound, prune)
    if choice is None:
        return BestAt(True, None)
    layout = _layout(c, choice, n_gpu)
    mode = None if c.recompute is None else RECOMPUTE_ORDER[int(c.recompute[choice.candidate])]
    cost = step_cost(hw, shape, layout, choice.step)
    return BestAt(True, (layout, cost), recompute=None if mode is None else mode.value)


def optimal_layout(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions = SearchOptions(),
    prune: bool = True,
    physics: Physics = PAPER,
) -> tuple[Layout, StepCost] | None:
    """The layout with the smallest training time at n_gpu, or None if none is valid (spec §10).

    `prune=False` is the exhaustive search (every split of every candidate), for tests.
    """
    hw = network_physics(hw, physics)
    return _best_at(hw, shape, n_gpu, opts, prune=prune, physics=physics).found


def smallest_cluster(
    hw: HardwareSpec,
    shape: ModelShape,
    duration_s: float,
    opts: SearchOptions = SearchOptions(),
    prune: bool = True,
    physics: Physics = PAPER,
) -> PointResult:
    """The first N_GPU = S·2^i whose best layout trains within the duration (strict, spec §11).

    `prune=False` searches every cluster exhaustively, for tests. Under realistic physics a
    size none of whose layouts fits in one GPU's memory at any cluster is infeasible with
    `exceeds_gpu_memory`.
    """
    if shape.batch_tokens > MAX_BATCH_TOKENS:
        return PointResult(shape, False, InfeasibleReason.BATCH_TOO_LARGE, None, None)
    hw = network_physics(hw, physics)
    floor = shape.training_flop / (duration_s * effective_flop_per_s(hw))
    any_layout = blocked = False
    for i in range(opts.max_cluster_doublings + 1):
        n_gpu = shape.sparsity * 2**i
        if n_gpu < floor:
            continue
        at = _best_at(hw, shape, n_gpu, opts, duration_s, prune, physics)
        any_layout = any_layout or at.had_candidates
        blocked = blocked or at.memory_blocked
        if at.found is not None and at.found[1].training_time_s < duration_s:
            return PointResult(
                shape, True, None, *at.found, recompute=at.recompute, physics=physics.name
            )
    if any_layout:
        reason = InfeasibleReason.NO_CLUSTER
    elif blocked:
        reason = InfeasibleReason.EXCEEDS_GPU_MEMORY
    else:
        reason = InfeasibleReason.NO_LAYOUT
    return PointResult(shape, False, reason, None, None, physics=physics.name)


def sweep_series(
    hw: HardwareSpec,
    laws: ScalingLaws,
    d_models: Sequence[int],
    duration_s: float,
    opts: SearchOptions = SearchOptions(),
    stop_at_infeasible: bool = True,
    physics: Physics = PAPER,
) -> list[PointResult]:
    """Smallest clusters along the width grid, ascending (spec §11).

    Stops after the first infeasible size (recorded with its reason) or after a point
    below the utilization floor, unless `stop_at_infeasible` is False.
    """
    points: list[PointResult] = []
    for d_model in sorted(d_models):
        shape = model_shape(d_model, laws, opts.quirks)
        point = smallest_cluster(hw, shape, duration_s, opts, physics=physics)
        points.append(point)
        if not stop_at_infeasible:
            continue
        if not point.feasible:
            break
        if point.cost is not None and point.cost.utilization < UTILIZATION_FLOOR:
            break
    return points
