"""Search: the best layout at a cluster size, the smallest sufficient cluster, a series (spec §10-spec §11).

The enumeration follows the original's order (spec §10) so that ties resolve the same way,
but evaluation is vectorized: every candidate's optimistic one-level time is computed
at once, and the full per-level splits only of candidates whose lower bound can still
reach the best time. Pruning by a true lower bound never changes the answer (spec §10.8.3).

Source: Erdil & Schneider-Joseph (2024), arXiv:2411.01137; spec §10-spec §11, spec §15.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.comm_table import (
    CandidateKeys,
    CommTable,
    candidate_keys,
    comm_table,
    unique_rows,
)
from pipeline.model.comm_table import clear_caches as clear_network_tables
from pipeline.model.enumeration import clear_caches as clear_layout_tables
from pipeline.model.enumeration import context_parallel_table, layout_table
from pipeline.model.evaluate import step_cost
from pipeline.model.grid_physics import (
    RECOMPUTE_ORDER,
    LayerTimes,
    cheapest_fitting_mode,
    grid_layer_times,
    grid_optimizer_s,
    grid_params_per_gpu,
    recompute_modes,
    ring_exchange_s,
    ring_exposed_s,
    ring_level,
)
from pipeline.model.hardware import HardwareSpec, effective_flop_per_s, gpu_only
from pipeline.model.layout import (
    adjusted_level_sizes,
    hierarchy_is_consistent,
    split_inner_products,
    split_table,
)
from pipeline.model.memo import ByteBoundedMemo
from pipeline.model.network import Network
from pipeline.model.options import SearchOptions
from pipeline.model.physics import PAPER, Physics, Recompute
from pipeline.model.results import InfeasibleReason, Layout, PointResult, StepCost
from pipeline.model.scaling import ModelShape, ScalingLaws, model_shape
from pipeline.model.step import (
    CommTimes,
    LayoutBatch,
    StepArrays,
    compute_and_bubble,
    layer_matmul_time_s,
    memory_required_bytes,
    step_arrays,
    step_floor_s,
    step_from_parts,
)

Array = NDArray[np.float64]
PRUNE_SLACK = 1e-9
"""Relative slack on the lower bound, so rounding never prunes a tied candidate."""
UTILIZATION_FLOOR = 0.001
"""A series stops after a point below this utilization (spec §11)."""
MAX_BATCH_TOKENS = 2**53
"""Batches above this many tokens are rejected: layouts are enumerated in exact int64/float64."""
FIRST_BLOCK = 16
"""Candidates in the first evaluated block; each next block doubles."""
ROWS_PER_BLOCK = 200_000
"""Full-split rows evaluated per numpy block: bounds memory on 3-level networks."""
CANDIDATE_CACHE_BYTES = 256 * 2**20
"""Bytes of candidate arrays a process keeps, per (GPU, model, cluster size, options, physics):
the sizes of several series, reused by every network variant of a sweep (about 1,700 sets of
a whole-grid H100 series, 150 kB each; docs/model.md §9.2)."""


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
    keys: CandidateKeys
    """Distinct TP, PP/EP and DP totals, for the network-time tables (`comm_table`)."""
    t_step_extra_s: Array | None = None
    """Per-step time outside the pipeline (realistic physics: the optimizer step)."""
    recompute: NDArray[np.int64] | None = None
    """Each candidate's recomputation mode (index into `RECOMPUTE_ORDER`), realistic physics."""
    tp_in_domain: bool = False
    """Only splits with every tensor-parallel factor on the fastest level (realistic physics)."""
    t_compute_s: Array | None = None
    """Each candidate's critical-path matmul time per step (`step.compute_and_bubble`)."""
    bubble: Array | None = None
    """Each candidate's bubble fraction (`step.compute_and_bubble`)."""
    step_floor_s: float = 0.0
    """The smallest compute-only lower bound on a candidate's step time (`step.step_floor_s`)."""
    cp: NDArray[np.int64] | None = None
    """Each candidate's context-parallel degree c (inside N_DP), when the physics tries c > 1."""
    layer_times: LayerTimes | None = None
    """Each candidate's layer times, for the ring exchange of c > 1 (`_with_ring`)."""


@dataclass(frozen=True, slots=True)
class MemoryBlocked:
    """Candidates existed at a cluster size but none fit in one GPU's memory."""


def enumerate_candidates(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions,
    physics: Physics = PAPER,
) -> Candidates | MemoryBlocked | None:
    """Every (N_DP, N_TPm, N_TPff, N_PP, N_EP, schedule, m) the search tries, in order (spec §10).

    None if there is none, or if the batch exceeds `MAX_BATCH_TOKENS` (exact integers end there).
    Under realistic physics (`physics`), whole sequences with `whole_sequences`, 1-D and/or
    2-D tensor parallelism per `tensor_parallel` (`tp_in_domain` keeps N_TP on the fastest
    level: a network rule, applied to the splits, `valid_splits`), a per-GPU memory check
    with `gpu_memory` (MemoryBlocked when nothing fits), and each candidate's layer time from `grid_physics` (docs/model.md, "Realistic physics").
    The candidates do not depend on the network; they are cached per GPU (`gpu_only`), model,
    cluster size, options and physics, as read-only arrays.
    """
    return _candidates(gpu_only(hw), shape, n_gpu, opts, physics)


def clear_caches() -> None:
    """Forget every candidate set, layout table and network table made so far, as in a
    fresh process (benchmarks, and tests that the results do not depend on the caches)."""
    _candidates.cache_clear()
    clear_layout_tables()
    clear_network_tables()


def _candidates_nbytes(c: Candidates | MemoryBlocked | None) -> int:
    """Bytes of a candidate set's own arrays (its keys are shared and cached apart)."""
    if not isinstance(c, Candidates):
        return 0
    arrays = [getattr(c, f) for f in Candidates.__slots__]
    if c.layer_times is not None:
        arrays += [getattr(c.layer_times, f) for f in type(c.layer_times).__slots__]
    return sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))


def _candidate_set(
    hw: HardwareSpec, shape: ModelShape, n_gpu: int, opts: SearchOptions, physics: Physics
) -> Candidates | MemoryBlocked | None:
    """`enumerate_candidates` uncached, its arrays read only."""
    c = _enumerate(hw, shape, n_gpu, opts, physics)
    if isinstance(c, Candidates):
        c = _with_step_inputs(c, opts)
        for field in Candidates.__slots__:
            value = getattr(c, field)
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
    return c


_candidates = ByteBoundedMemo(_candidate_set, CANDIDATE_CACHE_BYTES, _candidates_nbytes)


def _enumerate(
    hw: HardwareSpec, shape: ModelShape, n_gpu: int, opts: SearchOptions, physics: Physics
) -> Candidates | MemoryBlocked | None:
    if shape.batch_tokens > MAX_BATCH_TOKENS:
        return None
    s, layers = shape.sparsity, shape.n_layers
    memory = n_gpu * hw.hbm_bytes
    table = layout_table(shape, n_gpu, opts, physics.whole_sequences, physics.tensor_parallel)
    if not physics.is_paper:  # with context parallelism it has layouts where this table has none
        return _realistic_candidates(hw, shape, n_gpu, table, opts, physics)
    if table is None:
        return None
    dp_, tpm, tpff, pp_, ep_, m, zb_i, nano = table.T
    zb = zb_i.astype(bool)
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
    shards, which = unique_rows(np.stack([tpm, tpff, nano], axis=1))  # few distinct shards
    t_layer = layer_matmul_time_s(
        hw,
        (shape.d_model // shards[:, 0]).astype(np.float64),
        (shape.d_ff // shards[:, 1]).astype(np.float64),
        shards[:, 2].astype(np.float64),
    )[which]
    repeats = ((layers // pp_) * (s // ep_) * m).astype(np.float64)
    degrees = np.stack([dp_, tpm, tpff, pp_, ep_], axis=1)
    return Candidates(
        degrees=degrees,
        microbatches=m.astype(np.float64),
        zero_bubble=zb,
        interleave=interleave,
        t_layer_s=t_layer,
        compute_repeats=repeats,
        nanobatch=nano,
        keys=candidate_keys(degrees, interleave),
    )


def _with_step_inputs(c: Candidates, opts: SearchOptions) -> Candidates:
    """The candidates with their network-free step inputs and compute-only step floor."""
    t_mm, f = compute_and_bubble(_batch(c, slice(None), c.degrees[:, None, :]), opts)
    floor = float(step_floor_s(t_mm, f, c.zero_bubble).min())
    return dataclasses.replace(c, t_compute_s=t_mm, bubble=f, step_floor_s=floor)


def _realistic_candidates(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    table: NDArray[np.int64] | None,
    opts: SearchOptions,
    physics: Physics,
) -> Candidates | MemoryBlocked | None:
    """Candidates under realistic physics: per-GPU memory with the cheapest recomputation
    mode that fits, layer times and the optimizer step from `grid_physics`."""
    cp: NDArray[np.int64] | None = None
    if physics.max_context_parallel > 1 and physics.whole_sequences:
        with_cp = context_parallel_table(
            shape, n_gpu, opts, physics.tensor_parallel, physics.max_context_parallel
        )
        if with_cp is None:
            return None
        table, cp = with_cp
    if table is None:
        return None
    dp_, tpm, tpff, pp_, ep_, m, zb_i, nano = (col.astype(np.float64) for col in table.T)
    zb = zb_i.astype(bool)
    interleave = np.where(zb | (pp_ == 1) | (not opts.interleaving), 1.0, shape.n_layers // pp_)
    modes = recompute_modes(physics)
    mode_idx = np.full(table.shape[0], -1, dtype=np.int64)
    if physics.gpu_memory:
        factors = (dp_, tpm, tpff, pp_, ep_)
        schedule = (m, interleave, zb)
        mode_idx = cheapest_fitting_mode(physics, shape, factors, nano, schedule, hw.hbm_bytes)
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
    cp = None if cp is None else cp[keep]
    dp_, tpm, tpff, pp_, ep_, m, zb_i, nano = table.T
    shards, at = unique_rows(np.stack([tpm, tpff, nano], axis=1))  # few distinct shapes
    unique = shards.astype(np.float64)
    u = grid_layer_times(hw, physics, shape, unique[:, 0], unique[:, 1], unique[:, 2])
    ring = cp is not None and physics.attention  # only a context-parallel ring reads core_b
    core_b = u.core_backward_s[at] if ring and u.core_backward_s is not None else None
    times = LayerTimes(u.forward_s[at], u.backward_s[at], u.core_forward_s[at], core_b)
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
    degrees = np.stack([dp_, tpm, tpff, pp_, ep_], axis=1)
    return Candidates(
        degrees=degrees,
        microbatches=m.astype(np.float64),
        zero_bubble=zb_i.astype(bool),
        interleave=interleave,
        t_layer_s=times.with_recompute_s(mode_idx),
        compute_repeats=repeats,
        nanobatch=nano,
        keys=candidate_keys(degrees, interleave),
        t_step_extra_s=extra,
        recompute=mode_idx,
        tp_in_domain=physics.tp_in_domain,
        cp=cp if ring else None,  # without attention there is no K/V ring
        layer_times=times if ring else None,
    )


def _with_ring(
    c: Candidates, hw: HardwareSpec, shape: ModelShape, opts: SearchOptions
) -> Candidates:
    """The candidates with their context-parallel ring exchange on this network added to
    each layer call's time, where it outlasts the attention core it overlaps with
    (`grid_physics.ring_exposed_s`); the group sits on the first level holding its t·c GPUs."""
    if c.cp is None or c.layer_times is None or c.recompute is None:
        return c
    cp = c.cp.astype(np.float64)
    tp = (c.degrees[:, 1] * c.degrees[:, 2]).astype(np.float64)
    level = ring_level(hw.level_sizes, tp, cp)
    bandwidth = np.array(hw.net_bandwidth_bytes_per_s, dtype=np.float64)[level]
    latency = np.array(hw.net_latency_s, dtype=np.float64)[level]
    ring = ring_exchange_s(shape, tp, cp, c.nanobatch.astype(np.float64), bandwidth, latency)
    reruns = (c.recompute >= 1).astype(np.float64)  # selective and full rerun the core
    extra = ring_exposed_s(ring, c.layer_times, reruns)
    return _with_step_inputs(dataclasses.replace(c, t_layer_s=c.t_layer_s + extra), opts)


def _batch(
    c: Candidates, idx: NDArray[np.int64] | slice, factors: NDArray[np.int64]
) -> LayoutBatch:
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


def valid_splits(
    c: Candidates, idx: NDArray[np.int64], level_sizes: tuple[int, ...]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(candidate index, split index) of every valid split of candidates `idx` (spec §5.2).

    A split is valid when, for every degree, the product of its non-top factors divides
    the degree; the top-level factor is the quotient. Rows are candidate-major,
    split-minor: the enumeration order of spec §10 step 8.4 for ascending `idx`.
    """
    groups = ((c.keys.dp, 0, 1), (c.keys.tp, 1, 3), (c.keys.pp_ep, 3, 5))
    ok = np.ones((idx.size, split_table(level_sizes).shape[0]), dtype=bool)
    for keys, lo, hi in groups:  # each degree group's divisibility, cached per distinct totals
        ok &= keys.valid_pairs(level_sizes, lo, hi).by_split[keys.key_of[idx]]
    if c.tp_in_domain and level_sizes:  # every TP factor on level 0: its factor is the total
        totals = c.degrees[idx]
        level0 = split_table(level_sizes)[:, 0, :]
        for degree in (1, 2):
            ok &= totals[:, degree, None] == level0[None, :, degree]
    cand, split = np.nonzero(ok)
    return idx[cand], split


def split_factors(
    c: Candidates, idx: NDArray[np.int64], split: NDArray[np.int64], level_sizes: tuple[int, ...]
) -> NDArray[np.int64]:
    """Per-level factors (n, K, 5) of rows (candidate `idx`, split `split`)."""
    inner_prod = split_inner_products(level_sizes)
    top = c.degrees[idx] // inner_prod[split]
    return np.concatenate([split_table(level_sizes)[split], top[:, None, :]], axis=1)


def split_rows(
    c: Candidates, idx: NDArray[np.int64], level_sizes: tuple[int, ...]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """(candidate index, split index, per-level factors) of every valid split of candidates
    `idx`, in enumeration order (`valid_splits`)."""
    cand, split = valid_splits(c, idx, level_sizes)
    return cand, split, split_factors(c, cand, split, level_sizes)


@dataclass(frozen=True, slots=True)
class Choice:
    """The accepted row of a search: its candidate, per-level factors and step arrays."""

    candidate: int
    factors: NDArray[np.int64]
    step: StepArrays


def _comm_terms(step: StepArrays, steps: float) -> tuple[Array, Array, Array]:
    return steps * step.t_tp_bw_s, steps * step.t_dp_bw_s, steps * step.t_pp_ep_bw_s


def resolve_ties(step: StepArrays, steps: float, tie_tolerance: float) -> int:
    """Index of the accepted row under the original's sequential accept rule (spec §10.8.5, spec §15.4).

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


def optimistic_train_time_s(
    hw: HardwareSpec, shape: ModelShape, n_gpu: int, c: Candidates, opts: SearchOptions
) -> Array:
    """Lower bound on each candidate's training time: every degree on one optimistic level."""
    table = comm_table(shape, n_gpu, c.keys, (), optimistic_network(hw))
    return separable_train_time_s(shape, c, table, opts)  # one level: each candidate's only split


def candidate_comm_table(
    hw: HardwareSpec, shape: ModelShape, n_gpu: int, c: Candidates
) -> CommTable:
    """Network times of candidates `c` on the preset's levels, per degree group and split."""
    levels = adjusted_level_sizes(hw.level_sizes, n_gpu)
    return comm_table(shape, n_gpu, c.keys, levels, hardware_network(hw))


def _step_from_comm(
    shape: ModelShape,
    c: Candidates,
    idx: NDArray[np.int64] | slice,
    comm: CommTimes,
    opts: SearchOptions,
) -> StepArrays:
    """`step_from_comm` of candidates `idx` with their precomputed compute and bubble."""
    if c.t_compute_s is None or c.bubble is None:  # `_candidates` sets both
        raise ValueError("candidates without step inputs: made outside `enumerate_candidates`")
    extra = None if c.t_step_extra_s is None else c.t_step_extra_s[idx]
    return step_from_parts(
        shape, c.t_compute_s[idx], c.bubble[idx], c.zero_bubble[idx], extra, comm, opts
    )


def separable_train_time_s(
    shape: ModelShape, c: Candidates, table: CommTable, opts: SearchOptions
) -> Array:
    """Lower bound on each candidate's training time on the real network levels (spec §10.8.3).

    The TP, PP/EP and DP times of a layout each depend only on their own degrees' per-level
    factors, and the step time never decreases in any of them (`step_from_comm`). So the
    step time with every network time at its own smallest value over the candidate's splits
    (ignoring that the degrees share the level sizes) is at most that of any of its rows,
    exactly in floating point, every rounding being monotone. inf without a valid split.
    """
    return _step_from_comm(shape, c, slice(None), table.smallest(), opts).t_train_s


def row_step_arrays(
    shape: ModelShape,
    c: Candidates,
    idx: NDArray[np.int64],
    split: NDArray[np.int64],
    table: CommTable,
    opts: SearchOptions,
) -> StepArrays:
    """Step arrays of rows (candidate `idx`, split `split`): `step_arrays` of their factors."""
    return _step_from_comm(shape, c, idx, table.rows(idx, split), opts)


def best_split(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    c: Candidates,
    opts: SearchOptions,
    bound: Array,
    prune: bool = True,
    table: CommTable | None = None,
    within_s: float = math.inf,
) -> Choice | None:
    """The accepted (candidate, split) at n_gpu (spec §10 step 8).

    Rows take their network times from `table` (`candidate_comm_table` of `c`, made here
    when not given). Candidates are evaluated in blocks of ascending `bound`; after each block
    every remaining candidate whose bound exceeds the best time so far is dropped, and
    so are evaluated rows slower than it. Neither can reach or tie the minimum, so the
    rows left hold every tied row; they are put back in enumeration order for the
    original's tie rule. `prune=False` evaluates every split of every candidate instead:
    the exhaustive search the pruned one must equal (docs/model.md §9.2).

    A candidate whose bound exceeds `within_s` (with the slack and tie tolerance) is not
    evaluated either: it can neither beat nor tie a best below `within_s`, and the caller
    rejects a best at or above it.
    """
    levels = adjusted_level_sizes(hw.level_sizes, n_gpu)
    table = candidate_comm_table(hw, shape, n_gpu, c) if table is None else table
    net = hardware_network(hw)

    def evaluate(idx: NDArray[np.int64], split: NDArray[np.int64]) -> StepArrays:
        if prune:
            return row_step_arrays(shape, c, idx, split, table, opts)
        # straight from the factors: the exhaustive search shares no shortcut
        factors = split_factors(c, idx, split, levels)
        return step_arrays(hw, shape, n_gpu, _batch(c, idx, factors), net, opts)

    tol = opts.quirks.tie_tolerance
    order = np.argsort(bound) if prune else np.arange(bound.size)  # ties: any order
    best = np.inf
    kept: list[tuple[NDArray[np.int64], NDArray[np.int64], Array]] = []
    pos, block = 0, FIRST_BLOCK
    cap = within_s * (1.0 + tol) * (1.0 + PRUNE_SLACK) if prune else np.inf
    while pos < order.size:
        limit = min(best * (1.0 + PRUNE_SLACK + tol), cap) if prune else np.inf
        take = order[pos : pos + block]
        take = np.sort(take[bound[take] <= limit])
        if take.size == 0:
            break  # the bound is sorted: every remaining candidate exceeds the best
        pos, block = pos + block, block * 2
        idx, split = valid_splits(c, take, levels)
        for start in range(0, idx.size, ROWS_PER_BLOCK):
            sl = slice(start, start + ROWS_PER_BLOCK)
            t_train = evaluate(idx[sl], split[sl]).t_train_s
            best = min(best, float(t_train.min()))
            near = np.flatnonzero(t_train <= (best * (1.0 + tol) if prune else np.inf))
            kept.append((idx[sl][near], split[sl][near], t_train[near]))
    if not kept:
        return None
    idx = np.concatenate([k[0] for k in kept])
    split = np.concatenate([k[1] for k in kept])
    t_train = np.concatenate([k[2] for k in kept])
    rows = np.flatnonzero(t_train <= best * (1.0 + tol))
    rows = rows[np.lexsort((split[rows], idx[rows]))]  # enumeration order
    idx, split = idx[rows], split[rows]
    tied = evaluate(idx, split)  # the same rows again: the same values, every field
    row = resolve_ties(tied, shape.n_tokens / shape.batch_tokens, tol)
    factors = split_factors(c, idx[row : row + 1], split[row : row + 1], levels)[0]
    return Choice(int(idx[row]), factors, _select(tied, np.array([row])))


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

    The layout is None when no candidate has a valid split, or when nothing trains
    faster than `within_s`. Candidates are bounded from below on the real network levels
    (`separable_train_time_s`); those whose bound exceeds `within_s` are not evaluated (unless
    not `prune`): a layout faster than it is found all the same, ties included.
    """
    if not hierarchy_is_consistent(hw.level_sizes, n_gpu):
        return BestAt(False, None)
    c = enumerate_candidates(hw, shape, n_gpu, opts, physics)
    if c is None:
        return BestAt(False, None)
    if isinstance(c, MemoryBlocked):
        return BestAt(False, None, memory_blocked=True)
    if c.cp is not None:  # the ring exchange depends on the network: added per call
        c = _with_ring(c, hw, shape, opts)
    steps = shape.n_tokens / float(shape.batch_tokens)  # as `step_from_parts` counts them
    if prune and (steps * c.step_floor_s) * (1.0 - PRUNE_SLACK) >= within_s:
        return BestAt(True, None)  # compute alone is too slow here, whatever the network
    table = candidate_comm_table(hw, shape, n_gpu, c)
    bound = separable_train_time_s(shape, c, table, opts)
    if prune and bound.min() * (1.0 - PRUNE_SLACK) >= within_s:
        return BestAt(True, None)  # no candidate can finish in time here
    choice = best_split(hw, shape, n_gpu, c, opts, bound, prune, table, within_s)
    if choice is None or not float(choice.step.t_train_s[0]) < within_s:
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


def matmul_rate_flop_per_s(hw: HardwareSpec, physics: Physics) -> float:
    """The fastest rate a GPU runs the model's weight matmuls at: F_eff in the paper's model
    (spec §11), F_eff·min(1, efficiency.matmul) under realistic physics, whose weight GEMMs
    take at least their FLOP time over that (`grid_physics`, docs/model.md R.7)."""
    rate = effective_flop_per_s(hw)
    return rate if physics.is_paper else rate * min(1.0, physics.efficiency.matmul)


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
    floor = shape.training_flop / (duration_s * matmul_rate_flop_per_s(hw, physics))
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
