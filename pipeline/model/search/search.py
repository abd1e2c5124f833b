"""Search: the best layout at a cluster size, the smallest sufficient cluster, a series (spec §10-spec §11).

The enumeration follows the original's order (spec §10) so that ties resolve the same way,
but evaluation is vectorized: every candidate's optimistic one-level time is computed
at once, and the full per-level splits only of candidates whose lower bound can still
reach the best time. Pruning by a true lower bound never changes the answer (spec §10.8.3).
Under realistic physics a candidate is timed as the run of its layout, one row each
(`search.realistic`, docs/model.md R.7): there is no split to search.

Source: Erdil & Schneider-Joseph (2024), arXiv:2411.01137; spec §10-spec §11, spec §15.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeGuard

import numpy as np
from numpy.typing import NDArray

from pipeline.model.caches import cached, register
from pipeline.model.memory.capacity import memory_capacity_bytes
from pipeline.model.network.collectives import Network
from pipeline.model.network.comm_table import (
    CandidateKeys,
    CommTable,
    comm_table,
)
from pipeline.model.network.levels import (
    adjusted_level_sizes,
    hierarchy_is_consistent,
    split_inner_products,
    split_table,
)
from pipeline.model.network.times import CommTimes
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.kept_hash import first_equal
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.results import (
    GridCost,
    InfeasibleReason,
    Layout,
    ModelCounts,
    PointResult,
    StepCost,
)
from pipeline.model.records.scaling import ModelShape, ScalingLaws
from pipeline.model.records.switches import PAPER, RECOMPUTE_ORDER, ClusterSizes, Physics
from pipeline.model.search.candidates import (
    MAX_BATCH_TOKENS,
    Candidates,
    KeptRows,
    MemoryBlocked,
    NoneWanted,
    _batch,
    _with_ring,
    enumerate_candidates,
    kept_candidates,
    realistic_kept_rows,
    rows_fit,
)
from pipeline.model.search.counts import (
    grid_cost,
    grid_shape,
    grid_shape_counts,
    matmul_rate_flop_per_s,
    series_shape,
    weight_training_flop,
)
from pipeline.model.search.enumeration import layout_room, room_admits
from pipeline.model.search.floors import (
    FLOOR_HARDWARE_CACHE_SIZE,
    experts_split,
    keep_layout_step_floors,
    layout_step_floors_s,
    step_floor_terms_s,
    tensor_parallel_floor_s,
)
from pipeline.model.search.kept import kept_frame, kept_step_inputs
from pipeline.model.search.memo import ByteBoundedMemo, arrays_nbytes, read_only
from pipeline.model.search.realistic import (
    RealisticSteps,
    realistic_comm,
    realistic_layout,
    realistic_step_cost,
    realistic_steps,
)
from pipeline.model.step.assembly import Schedule, StepComm
from pipeline.model.step.evaluate import step_cost
from pipeline.model.step.step_time import (
    StepArrays,
    step_arrays,
    step_from_parts,
)

Array = NDArray[np.float64]
PRUNE_SLACK = 1e-9
"""Relative slack on the lower bound, so rounding never prunes a tied candidate."""
UTILIZATION_FLOOR = 0.001
"""A series stops after a point below this utilization (spec §11)."""
FIRST_BLOCK = 16
"""Candidates in the first evaluated block; each next block doubles."""
NODE_REFINE_BITS = 3
"""Each pass of the node refinement tries fewer than 2^this sizes of its bracket, each stride
2^this times the next pass's (`_Walk.node_refined`)."""
ROWS_PER_BLOCK = 200_000
"""Full-split rows evaluated per numpy block: bounds memory on 3-level networks."""


def hardware_network(hw: HardwareSpec) -> Network:
    """The preset's network levels."""
    return Network(hw.net_bandwidth_bytes_per_s, hw.net_latency_s)


def _keys(c: Candidates) -> CandidateKeys:
    """The candidates' degree totals for the network-time tables (Part I's search only)."""
    if c.keys is None:
        raise ValueError("realistic candidates have no network-time tables (`search.realistic`)")
    return c.keys


def valid_splits(
    c: Candidates, idx: NDArray[np.int64], level_sizes: tuple[int, ...]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(candidate index, split index) of every valid split of candidates `idx` (spec §5.2).

    A split is valid when, for every degree, the product of its non-top factors divides
    the degree; the top-level factor is the quotient. Rows are candidate-major,
    split-minor: the enumeration order of spec §10 step 8.4 for ascending `idx`.
    """
    ck = _keys(c)
    groups = ((ck.dp, 0, 1), (ck.tp, 1, 3), (ck.pp_ep, 3, 5))
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
    tp, dp, ppep = _comm_terms(step, steps)
    return accepted_row(step.t_train_s, tp, dp, ppep, tie_tolerance)


def accepted_row(t: Array, tp: Array, dp: Array, ppep: Array, tie_tolerance: float) -> int:
    """`resolve_ties` on training times `t` and the TP, DP and PP/EP communication time of
    each row over the training (the realistic search's rows use it too)."""
    best = float(t.min())
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


def candidate_comm_table(
    hw: HardwareSpec, shape: ModelShape, n_gpu: int, c: Candidates
) -> CommTable:
    """Network times of candidates `c` on the preset's levels, per degree group and split."""
    levels = adjusted_level_sizes(hw.level_sizes, n_gpu)
    return comm_table(shape, n_gpu, _keys(c), levels, hardware_network(hw))


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
        cp=tuple(1 for _ in f[:, 0]),  # the paper's layouts have no context parallelism
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
    grid_cost: GridCost | None = None
    """The chosen layout's MFU, HFU and memory per GPU under realistic physics."""
    pending: Callable[[], BestAt] | None = None
    """A realistic best not made a layout and cost yet (`finished`): the walk finishes only the
    size it returns, not the sufficient sizes a finer one replaces (`_Walk.node_refined`)."""
    pending_s: float = math.inf
    """The pending best's training time (s)."""

    @property
    def training_time_s(self) -> float:
        """The best layout's training time (s); inf without one."""
        if self.found is not None:
            return self.found[1].training_time_s
        return self.pending_s

    def finished(self) -> BestAt:
        """This best with its layout and cost made."""
        return self if self.pending is None else self.pending()


@cached(maxsize=FLOOR_HARDWARE_CACHE_SIZE)
def physics_hardware(hw: HardwareSpec, physics: Physics) -> HardwareSpec:
    """The hardware as the physics reads it (paper: unchanged): link bandwidths at the physics'
    achieved fraction, and as `hbm_bytes` the capacity its memory checks compare with
    (`memory.capacity.memory_capacity_bytes`). Kept per hardware and physics: the same object
    for every point of a series, so that the memos keyed by it find their keys by identity."""
    if physics.is_paper:
        return hw
    eff = physics.efficiency.network
    return dataclasses.replace(
        hw,
        net_bandwidth_bytes_per_s=tuple(b * eff for b in hw.net_bandwidth_bytes_per_s),
        hbm_bytes=memory_capacity_bytes(hw, physics),
        hbm_device_ratio=None,  # read: a second reading keeps the capacity
    )


def _best_at(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions,
    within_s: float = math.inf,
    prune: bool = True,
    physics: Physics = PAPER,
    floors: Array | None = None,
    tp_unit: int = 0,
) -> BestAt:
    """The best layout at n_gpu, and whether any candidate passed enumeration (spec §10).

    The layout is None when no candidate has a valid split, or when nothing trains
    faster than `within_s`. Candidates are bounded from below on the real network levels
    (`separable_train_time_s`); those whose bound exceeds `within_s` are not evaluated (unless
    not `prune`): a layout faster than it is found all the same, ties included. Under
    realistic physics `floors` are the walk's per-row step bounds at n_gpu
    (`floors.layout_step_floors_s`; None: none), which play that part, and `tp_unit` > 0
    enumerates only the layouts whose N_TP divides it (`domain_tp_unit`; `floors` then bound
    those rows).
    """
    if not hierarchy_is_consistent(hw.level_sizes, n_gpu):
        return BestAt(False, None)
    if prune and floors is not None and not physics.is_paper:
        wanted = _rows_within(shape, floors, within_s, opts)  # ring included
        kept = realistic_kept_rows(hw, shape, n_gpu, opts, physics, tp_unit, wanted)
        if isinstance(kept, KeptRows):  # shared by the GPUs that differ only in capacity
            best = _kept_choices(without_hbm_capacity(hw), within_s, kept)
            return _best_of_choice(hw, shape, n_gpu, physics, best)
        c: Candidates | MemoryBlocked | NoneWanted | None = kept
    else:
        c = enumerate_candidates(hw, shape, n_gpu, opts, physics, tp_unit)
        if isinstance(c, Candidates) and c.cp is not None:  # the ring: added per network
            c = _with_ring(c, hw, shape)
    if c is None:
        return BestAt(False, None)
    if isinstance(c, MemoryBlocked):
        return BestAt(False, None, memory_blocked=True)
    if isinstance(c, NoneWanted):
        return BestAt(True, None)  # no candidate's floor lets it train within `within_s`
    if prune and _compute_too_slow(shape, c, within_s):
        return BestAt(True, None)  # compute alone is too slow here, whatever the network
    if not physics.is_paper:
        comm = _rows_comm(hw, physics, opts, shape, n_gpu, tp_unit, c) if prune else None
        picked = _realistic_choice(hw, shape, n_gpu, c, opts, within_s, physics, comm)
        return _best_of_choice(hw, shape, n_gpu, physics, picked)
    table = candidate_comm_table(hw, shape, n_gpu, c)
    bound = separable_train_time_s(shape, c, table, opts)
    if prune and bound.min() * (1.0 - PRUNE_SLACK) >= within_s:
        return BestAt(True, None)  # no candidate can finish in time here
    choice = best_split(hw, shape, n_gpu, c, opts, bound, prune, table, within_s)
    if choice is None or not float(choice.step.t_train_s[0]) < within_s:
        return BestAt(True, None)
    layout = _layout(c, choice, n_gpu)
    return BestAt(True, (layout, step_cost(hw, shape, layout, choice.step)))


def _compute_too_slow(shape: ModelShape, c: Candidates, within_s: float) -> bool:
    """Whether the candidates' compute-only step floor alone keeps every one from training
    within `within_s` (steps counted as `step_from_parts` counts them)."""
    steps = shape.n_tokens / float(shape.batch_tokens)
    return (steps * c.step_floor_s) * (1.0 - PRUNE_SLACK) >= within_s


def _rows_comm(
    hw: HardwareSpec,
    physics: Physics,
    opts: SearchOptions,
    shape: ModelShape,
    n_gpu: int,
    tp_unit: int,
    c: Candidates,
) -> StepComm | None:
    """The candidates' collectives taken from their rows' (`realistic_comm`, kept per network)
    under each candidate's recomputation mode; None when the candidates carry no rows."""
    if c.rows is None or c.recompute is None:
        return None
    rows = realistic_comm(hw, physics, opts, shape, n_gpu, tp_unit)
    return None if rows is None else rows.rows(c.rows, c.recompute)


def _rows_within(
    shape: ModelShape, floors: Array, within_s: float, opts: SearchOptions
) -> NDArray[np.bool_]:
    """The rows whose step floor (`floors.layout_step_floors_s`) lets them train within
    `within_s` or tie a best that does: steps·floor·(1 − slack) < `within_s`·(1 + tie
    tolerance), as `_realistic_choice` times them."""
    steps_per_training = shape.n_tokens / float(shape.batch_tokens)
    cap = within_s * (1.0 + opts.quirks.tie_tolerance)
    out: NDArray[np.bool_] = steps_per_training * floors * (1.0 - PRUNE_SLACK) < cap
    return out


@dataclass(frozen=True, slots=True)
class RealisticChoice:
    """The best realistic candidate at a cluster size: the candidates, their steps, its row
    and its training time (s)."""

    c: Candidates
    steps: RealisticSteps
    row: int
    t_train_s: float


def _realistic_choice(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    c: Candidates,
    opts: SearchOptions,
    within_s: float,
    physics: Physics,
    comm: StepComm | None = None,
    tokens_schedule: tuple[Array, Schedule] | None = None,
) -> RealisticChoice | None:
    """The best realistic candidate at n_gpu: every candidate timed once, as the run of its
    layout (`search.realistic`), the original's tie rule among the fastest; None when none
    trains faster than `within_s`. `comm`: the candidates' collectives when known (the pruned
    search reads its rows' from `realistic_comm`; the exhaustive one computes them).

    Pruning, the candidates are only the rows whose step floor lets them train within
    `within_s` or tie a best that does (`_rows_within`, `candidates.realistic_kept_rows`): the
    rest train at least as long, so they can neither train within `within_s` nor tie a best
    that does, and a best at or above `within_s` is rejected. The rest keep their enumeration
    order and their times (one row each), so the exhaustive search (`prune=False`, no floors)
    picks the same row."""
    steps_per_training = shape.n_tokens / float(shape.batch_tokens)
    steps = realistic_steps(hw, physics, shape, n_gpu, c, opts, comm, tokens_schedule)
    if not steps.usable.any():
        return None
    row = accepted_row(
        steps.t_train_s,
        steps_per_training * steps.t_tp_comm_s,
        steps_per_training * steps.t_dp_comm_s,
        steps_per_training * steps.t_pp_ep_comm_s,
        opts.quirks.tie_tolerance,
    )
    t_best = float(steps.t_train_s[row])
    if not t_best < within_s:
        return None
    return RealisticChoice(c, steps, row, t_best)


def _best_of_choice(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    physics: Physics,
    choice: RealisticChoice | None,
) -> BestAt:
    """A size's best from its realistic `choice` on `hw`, its layout and cost made when the
    walk returns the size (`_realistic_found`); candidates and nothing within the duration
    without one."""
    if choice is None:
        return BestAt(True, None)
    found = functools.partial(
        _realistic_found, hw, shape, n_gpu, choice.c, physics, choice.steps, choice.row
    )
    return BestAt(True, None, pending=found, pending_s=choice.t_train_s)


KEPT_CHOICES_CACHE_BYTES = 16 * 2**20
"""Bytes of realistic choices (`_kept_choices`: the candidates and their steps) a process
keeps, least recently used out: a series' (about 1 MB on the B200 series of
`sweep=million_realistic`), read by the next series when its GPU differs only in HBM capacity
and keeps the same rows under the same modes."""


def _kept_choice(hw: HardwareSpec, within_s: float, kept: KeptRows) -> RealisticChoice | None:
    """The pruned realistic search at a size (`_best_at`) from the rows it kept: their
    candidates (`candidates.kept_candidates`) with their ring, collectives, tokens and schedule
    on `hw`'s network (`kept.kept_frame`, `kept.kept_step_inputs`, shared by the GPUs that
    differ only in HBM), none when compute alone is too slow, then `_realistic_choice`; read only. Reads of `hw` neither
    its memory capacity nor its enumeration (`kept` holds both)."""
    shape, n_gpu, opts, physics = kept.key[:4]
    frame = kept_frame(hw, kept)
    c = kept_candidates(hw, kept, frame.rows, frame.exchange_s)
    if _compute_too_slow(shape, c, within_s):
        return None  # compute alone is too slow here, whatever the network
    inputs = kept_step_inputs(hw, kept)
    choice = _realistic_choice(
        hw, shape, n_gpu, c, opts, within_s, physics, inputs.comm, inputs.tokens_schedule
    )
    if choice is not None:
        read_only(choice.c)
        read_only(read_only(choice.steps).parts)
    return choice


def _choice_nbytes(choice: RealisticChoice | None) -> int:
    """Bytes of a choice's arrays: its candidates', its steps' and their parts'."""
    if choice is None:
        return 0
    return sum(arrays_nbytes(v) for v in (choice.c, choice.steps, choice.steps.parts))


_kept_choices = ByteBoundedMemo(_kept_choice, KEPT_CHOICES_CACHE_BYTES, _choice_nbytes)
register(f"{__name__}._kept_choices", _kept_choices, f"{KEPT_CHOICES_CACHE_BYTES} bytes")


@cached(maxsize=FLOOR_HARDWARE_CACHE_SIZE)
def without_hbm_capacity(hw: HardwareSpec) -> HardwareSpec:
    """The hardware as `_kept_choice` reads it: HBM capacity 0 (the rows it is given passed the
    memory check), so that the GPUs that differ only in it share the choice."""
    return first_equal(dataclasses.replace(hw, hbm_bytes=0.0))


def _realistic_found(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    c: Candidates,
    physics: Physics,
    steps: RealisticSteps,
    row: int,
) -> BestAt:
    """The best of `_realistic_choice`, candidate `row`, with its layout, cost, recomputation
    mode and what the grid counts of it (`search.counts.grid_cost`)."""
    layout = realistic_layout(hw, c, row, n_gpu)
    cost = realistic_step_cost(hw, physics, shape, layout, steps, row)
    if c.recompute is None:  # `_realistic_candidates` sets it
        raise ValueError("candidates without recomputation modes: not a realistic search")
    mode = RECOMPUTE_ORDER[int(c.recompute[row])]
    used = grid_cost(hw, physics, shape, c, row, n_gpu, cost.step_time_s)
    cost = dataclasses.replace(cost, utilization=used.mfu)  # on the FLOP the row counts
    return BestAt(True, (layout, cost), recompute=mode.value, grid_cost=used)


def usable_layouts_fit(
    hw: HardwareSpec, shape: ModelShape, n_gpu: int, opts: SearchOptions, physics: Physics
) -> tuple[bool, bool]:
    """Whether some layout the physics can use at n_gpu fits in one GPU's memory, and whether
    some such layout exists but none fits (`MemoryBlocked`): the enumeration of `_best_at`
    without timing (under realistic physics its rows' memory check alone,
    `candidates.rows_fit`, the same answer without building the candidates), with
    N_TP inside the NVLink domain when `physics.tp_in_domain` (`domain_tp_unit`). What decides an infeasible point's reason: no cluster within the
    duration where a usable layout fits, exceeds GPU memory where usable layouts exist and
    none fits (docs/model.md, "Realistic physics")."""
    if not hierarchy_is_consistent(hw.level_sizes, n_gpu):
        return False, False
    unit = domain_tp_unit(hw, physics, n_gpu)
    if not physics.is_paper:  # the rows' memory check, without their candidates
        fit = rows_fit(hw, shape, n_gpu, opts, physics, unit)[1]
        return isinstance(fit, tuple), isinstance(fit, MemoryBlocked)
    c = enumerate_candidates(hw, shape, n_gpu, opts, physics, unit)
    if c is None:
        return False, False
    return not isinstance(c, MemoryBlocked), isinstance(c, MemoryBlocked)


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
    Under realistic physics the model trains on its own tokens (`search.counts.grid_shape`).
    """
    hw = physics_hardware(hw, physics)
    shape = grid_shape(physics, shape)
    return _best_at(hw, shape, n_gpu, opts, prune=prune, physics=physics).finished().found


def domain_tp_unit(hw: HardwareSpec, physics: Physics, n_gpu: int) -> int:
    """The size N_TP must divide for a realistic layout on n_gpu to be usable: the fastest
    level's (shrunk to the cluster, `adjusted_level_sizes`) under `physics.tp_in_domain`
    (`search.realistic`: the group inside it, never straddling); 0 (any N_TP) otherwise.

    A layout whose N_TP does not divide it is timed as never finishing, so it is never chosen
    where another is usable: the walk enumerates only the others (`_Walk.at`), and sizes where
    none is left are searched whole only if the reason of an infeasible point depends on them
    (docs/model.md §9.4)."""
    if physics.is_paper or not physics.tp_in_domain or not hw.level_sizes:
        return 0
    return adjusted_level_sizes(hw.level_sizes, n_gpu)[0]


@dataclass(frozen=True, slots=True)
class _Walk:
    """What the walk for the smallest cluster reads at every size: the model, the duration, the
    switches and the compute-only bounds (`floors.step_floor_terms_s`)."""

    hw: HardwareSpec
    shape: ModelShape
    duration_s: float
    opts: SearchOptions
    prune: bool
    physics: Physics
    floor_gpus: float
    """Fewer GPUs than this cannot do the training's weight FLOP in the duration at full rate."""
    fixed_s: float
    flop_s: float
    split_flop_s: float
    """b of `floors.step_floor_terms_s` at the sizes whose layouts split their experts over
    more than one rank (`floors.experts_split`); `flop_s` at the others."""
    rooms: dict[int, int] = dataclasses.field(default_factory=dict)
    """`enumeration.layout_room` of each N_TP unit met, the same at every size."""
    befores: dict[int, tuple[int, float] | None] = dataclasses.field(default_factory=dict)
    """`_before_tables` of each size met."""

    @property
    def steps(self) -> float:
        """Steps of the training: its tokens over the batch's."""
        return self.shape.n_tokens / float(self.shape.batch_tokens)

    def room(self, unit: int) -> int:
        """`enumeration.layout_room` under the N_TP unit `unit`, computed once per unit."""
        room = self.rooms.get(unit)
        if room is None:
            room = self.rooms[unit] = layout_room(self.shape, self.opts, self.physics, unit)
        return room

    def may_have_layouts(self, n_gpu: int, unit: int) -> bool:
        """`enumeration.may_have_layouts` at n_gpu under the N_TP unit `unit` (`room`)."""
        return room_admits(self.room(unit), self.shape, n_gpu)

    def at(self, n_gpu: int) -> BestAt | None:
        """The best layout at n_gpu, or None when the bounds prove that none of its layouts
        trains within the duration (or n_gpu is below `floor_gpus`), or, pruning, when no
        usable layout (`domain_tp_unit`) passes enumeration: searched after the walk only if
        the reason of an infeasible point depends on it (a layout nobody can use changes the
        reason, never the layout found)."""
        before = self._before_tables(n_gpu)
        if before is None:
            return None
        unit, floor_s = before
        hw, physics, opts, shape, prune = self.hw, self.physics, self.opts, self.shape, self.prune
        floors = None
        if prune and self._may_train(floor_s):
            floors = layout_step_floors_s(hw, physics, opts, shape, n_gpu, unit)
            if unit and floors is None:
                return None  # no usable layout: the reason's search enumerates them all
            floor_s = floor_s if floors is None else max(floor_s, float(floors.min()))
        if not self._may_train(floor_s):
            return None
        at = _best_at(hw, shape, n_gpu, opts, self.duration_s, prune, physics, floors, unit)
        if unit and not at.had_candidates:
            return None  # none usable fits: whether an unusable one does decides the reason
        return at

    def _may_train(self, floor_s: float) -> bool:
        """Whether a step floor of `floor_s` (s) lets the training finish within the duration."""
        return self.steps * floor_s * (1.0 - PRUNE_SLACK) < self.duration_s

    def _before_tables(self, n_gpu: int) -> tuple[int, float] | None:
        """The N_TP unit (`domain_tp_unit`, 0 without pruning) and the step floor (s) `at`
        holds at n_gpu before it reads the size's layout tables, or None where it sets n_gpu
        aside before them: below `floor_gpus`, compute alone too slow (the arithmetic bound
        first: the cheapest), or no usable layout (`layout_step_floors_s` would find no
        row). Computed once per size (`befores`)."""
        if n_gpu in self.befores:
            return self.befores[n_gpu]
        out: tuple[int, float] | None = None
        flop_s = self.split_flop_s if experts_split(self.shape, n_gpu) else self.flop_s
        floor_s = self.fixed_s + flop_s / n_gpu
        if n_gpu >= self.floor_gpus and self._may_train(floor_s):
            unit = domain_tp_unit(self.hw, self.physics, n_gpu) if self.prune else 0
            if not unit or self.may_have_layouts(n_gpu, unit):
                if self.prune:
                    tp_floor_s = tensor_parallel_floor_s(
                        self.hw, self.physics, self.opts, self.shape, n_gpu
                    )
                    floor_s = max(floor_s, tp_floor_s)
                out = (unit, floor_s)
        self.befores[n_gpu] = out
        return out

    def table_unit(self, n_gpu: int) -> int | None:
        """The N_TP unit under which `at` reads the layout floors of n_gpu (`layout_step_floors_s`),
        None where it sets n_gpu aside before them or does not prune."""
        before = self._before_tables(n_gpu) if self.prune else None
        return before[0] if before is not None and self._may_train(before[1]) else None

    def keep_floors(self, sizes: Iterable[int]) -> None:
        """The layout floors of those of `sizes` that `at` reads (`table_unit`), computed in
        one pass per N_TP unit (`floors.keep_layout_step_floors`, which skips sizes whose
        floors are kept): each size's own floors, at less cost than one size at a time,
        whether or not `at` then reaches the size."""
        by_unit: dict[int, list[int]] = {}
        for n_gpu in sizes:
            unit = self.table_unit(n_gpu)
            if unit is not None:
                by_unit.setdefault(unit, []).append(n_gpu)
        for unit, wanted in by_unit.items():
            keep_layout_step_floors(
                self.hw, self.physics, self.opts, self.shape, tuple(wanted), unit
            )

    def keep_doubling_floors(self, i: int, count: int) -> int:
        """`keep_floors` of the doublings S·2^i … S·2^(i + count − 1) and, when `count` is 1
        and i > 0, of the first refinement pass below S·2^i (`refined_first`): the sizes the
        walk reads next if S·2^i trains in time, as most first sizes with a table do. Where
        that pass names no size with a table, of S·2^(i + 1) too: the size the walk reads
        next if S·2^i does not train. Returns the last doubling covered."""
        below = self.refined_first(self.shape.sparsity * 2**i) if count == 1 and i > 0 else ()
        if count == 1 and all(self.table_unit(n) is None for n in below):
            count = 2
        last = min(i + count, self.opts.max_cluster_doublings + 1) - 1
        self.keep_floors([*(self.shape.sparsity * 2**j for j in range(i, last + 1)), *below])
        return last

    def _node_room(self, n_gpu: int) -> int:
        """The `room` every size past one node up to n_gpu is checked against by `at`, 0 where
        `at` checks none: past the node the fastest level is whole, so the N_TP unit
        (`domain_tp_unit`) is the same at each of them."""
        unit = domain_tp_unit(self.hw, self.physics, n_gpu) if self.prune else 0
        return self.room(unit) if unit else 0

    def counts_usable(self, n_gpu: int) -> bool:
        """Whether a size's search enumerated only layouts the physics can use, so that its
        `BestAt.had_candidates` and `memory_blocked` decide the reason of an infeasible point:
        pruning enumerates only N_TP inside the NVLink domain (`domain_tp_unit`); the
        exhaustive search enumerates every N_TP and marks the rest unusable (`realistic_steps`),
        so its flags speak of layouts the physics refuses."""
        return self.prune or not domain_tp_unit(self.hw, self.physics, n_gpu)

    def trains(self, at: BestAt | None) -> TypeGuard[BestAt]:
        """Whether the size's best layout trains within the duration."""
        return at is not None and at.training_time_s < self.duration_s

    def _pass_sizes(self, low: int, high: int) -> range:
        """The sizes a pass of `node_refined` names in (low, high), ascending."""
        unit = math.prod(self.hw.level_sizes)
        nodes = -(-(high - low) // unit)
        stride = unit * (1 << max(0, (nodes - 1).bit_length() - NODE_REFINE_BITS))
        first = low - low % stride + stride  # the first stride multiple above low
        return range(first, high, stride)

    def refined_first(self, high: int) -> list[int]:
        """The sizes the first pass of `node_refined` names below `high` if it is sufficient
        and would search (none without node refinement, or at one node or less)."""
        unit = math.prod(self.hw.level_sizes)
        if self.physics.cluster_sizes is not ClusterSizes.NODES or high <= unit or high % unit:
            return []
        return self._admitted(self._pass_sizes(high // 2, high), self._node_room(high))

    def _admitted(self, sizes: Iterable[int], room: int) -> list[int]:
        """Those of `sizes` that `node_refined` hands to `at`: all where `room` is 0, else
        those the layout room admits (`_node_room`)."""
        return [n for n in sizes if not room or room_admits(room, self.shape, n)]

    def odd_multiples(self) -> list[int]:
        """The node multiples past one node, up to the cap S·2^i_max, of the form q·S·2^j with
        q odd, 3 ≤ q < 2^(`NODE_REFINE_BITS` + 1) (the odd parts a first refinement pass
        names), where a layout may exist (`room_admits`: q·2^j must divide the layout room,
        the layers', batch's, N_TP's and context degrees' product), ascending. A model whose
        layers hold an odd factor (576 = 9·64) splits into stages that no S·2^i holds, so
        its only clusters whose stages fit in memory may be these (`smallest_cluster`)."""
        unit = math.prod(self.hw.level_sizes)
        top = self.shape.sparsity * 2**self.opts.max_cluster_doublings
        room = self._node_room(top)
        sizes = []
        for q in range(3, 2 ** (NODE_REFINE_BITS + 1), 2):
            n_gpu = q * self.shape.sparsity
            while n_gpu <= top:
                fits = not room or room_admits(room, self.shape, n_gpu)
                if n_gpu > unit and n_gpu % unit == 0 and fits:
                    sizes.append(n_gpu)
                n_gpu *= 2
        return sorted(set(sizes))

    def node_refined(self, low: int, high: int, at_high: BestAt) -> BestAt:
        """The first sufficient size of the refinement of (low, high] into multiples of the
        node u, `high` sufficient and `low` not; u is the product of the non-top level sizes
        (the NVLink domain, 8 on a DGX: past it every size the hierarchy admits is a multiple
        of u, spec §5.2). The bracket's multiples of a stride of u times a power of two, at
        most 2^`NODE_REFINE_BITS` − 1 of them, are tried in ascending order; the first
        sufficient one and the size before it bracket the next pass, at a finer stride, down
        to one node. Every size a pass names is tried with or without pruning (whose bounds
        only set aside sizes that cannot train in time), so the two agree. Sufficiency is not
        monotone in N (a size whose factors suit the batch and the layers may train in time
        where a larger one does not), so a smaller sufficient node multiple may lie below a
        size a coarser pass found insufficient (docs/model.md §9.4). Clusters of one node or
        less keep S·2^i."""
        unit = math.prod(self.hw.level_sizes)
        if high <= unit or high % unit:
            return at_high
        best = at_high
        room = self._node_room(high)
        while high - low > unit:
            passed = self._pass_sizes(low, high)
            self.keep_floors(self._admitted(passed, room))
            for n_gpu in passed:
                if room and not room_admits(room, self.shape, n_gpu):
                    low = n_gpu  # `at` finds no usable layout here
                    continue
                at = self.at(n_gpu)
                if self.trains(at):
                    high, best = n_gpu, at
                    break
                low = n_gpu
        return best


def smallest_cluster(
    hw: HardwareSpec,
    shape: ModelShape,
    duration_s: float,
    opts: SearchOptions = SearchOptions(),
    prune: bool = True,
    physics: Physics = PAPER,
) -> PointResult:
    """The first N_GPU = S·2^i whose best layout trains within the duration (strict, spec §11);
    with `physics.cluster_sizes` = nodes, that size refined to a multiple of the NVLink domain
    in (S·2^(i−1), S·2^i] (`_Walk.node_refined`, docs/model.md §9.4).

    `prune=False` searches every cluster exhaustively, for tests. Under realistic physics the
    model trains on its own tokens and the point carries what it counts and what the search
    chose (`search.counts`). An infeasible point's reason reads every cluster S·2^i, those
    below the compute floor too, and only the layouts the physics can use
    (`usable_layouts_fit`): `no_cluster_within_duration` where one fits in memory somewhere
    (`exceeds_cluster_cap` where even the compute floor, at the peak matmul rate, needs more
    GPUs than the cap allows), else `exceeds_gpu_memory` where some exist and none fits, else
    `no_valid_layout` (spec §11, §10.9).
    """
    physics, opts = first_equal(physics), first_equal(opts)
    shape, counts = grid_shape_counts(physics, shape)
    if shape.batch_tokens > MAX_BATCH_TOKENS:
        reason = InfeasibleReason.BATCH_TOO_LARGE
        return PointResult(shape, False, reason, None, None, physics=physics.name, counts=counts)
    hw = physics_hardware(hw, physics)
    work = weight_training_flop(physics, shape)
    floor = work / (duration_s * matmul_rate_flop_per_s(hw, physics))
    fixed_s, flop_s = step_floor_terms_s(hw, physics, opts, shape) if prune else (0.0, 0.0)
    split_s = step_floor_terms_s(hw, physics, opts, shape, split=True)[1] if prune else 0.0
    walk = _Walk(hw, shape, duration_s, opts, prune, physics, floor, fixed_s, flop_s, split_s)
    seen = _Seen()
    batch, kept_to = 1, -1  # doublings whose floors are computed together; the last of them
    for i in range(opts.max_cluster_doublings + 1):
        n_gpu = shape.sparsity * 2**i
        if i > kept_to and walk.table_unit(n_gpu) is not None:  # 1, 2, 4, … sizes at once
            kept_to, batch = walk.keep_doubling_floors(i, batch), 2 * batch
        at = seen.note(walk, n_gpu)
        if walk.trains(at):
            if physics.cluster_sizes is ClusterSizes.NODES and i > 0:
                at = walk.node_refined(n_gpu // 2, n_gpu, at)
            return _trained_point(shape, at, physics, counts)
    seen.settle(hw, shape, opts, physics)
    if not seen.any_layout and physics.cluster_sizes is ClusterSizes.NODES:
        # no usable layout fits in memory at any S·2^i: one may at an odd node multiple
        odd = walk.odd_multiples()
        walk.keep_floors(odd)  # their layout floors in one pass, as `keep_doubling_floors` does
        below = 0  # the largest odd multiple tried below the next
        for n_gpu in odd:
            at = seen.note(walk, n_gpu)
            if walk.trains(at):
                at = walk.node_refined(max(below, n_gpu // 2), n_gpu, at)
                return _trained_point(shape, at, physics, counts)
            below = n_gpu
        seen.settle(hw, shape, opts, physics)
    any_layout, blocked = seen.any_layout, seen.blocked
    if any_layout:
        reason = InfeasibleReason.NO_CLUSTER
        if floor > shape.sparsity * 2.0**opts.max_cluster_doublings:
            reason = InfeasibleReason.EXCEEDS_CLUSTER_CAP  # the cap blocks it before the physics
    elif blocked:
        reason = InfeasibleReason.EXCEEDS_GPU_MEMORY
    else:
        reason = InfeasibleReason.NO_LAYOUT
    return PointResult(shape, False, reason, None, None, physics=physics.name, counts=counts)


@dataclass(slots=True)
class _Seen:
    """What the walk's sizes say of an infeasible point's reason: whether a usable layout fits
    in memory at one of them (`any_layout`), whether one was memory-blocked, and the sizes
    whose usable layouts the walk did not enumerate (`unsure`), searched only if the reason
    depends on them (`settle`)."""

    any_layout: bool = False
    blocked: bool = False
    unsure: list[int] = dataclasses.field(default_factory=list)

    def note(self, walk: _Walk, n_gpu: int) -> BestAt | None:
        """The walk's best at n_gpu (`_Walk.at`), its flags noted."""
        at = walk.at(n_gpu)
        if at is None or not walk.counts_usable(n_gpu):
            self.unsure.append(n_gpu)
        else:
            self.any_layout = self.any_layout or at.had_candidates
            self.blocked = self.blocked or at.memory_blocked
        return at

    def settle(
        self, hw: HardwareSpec, shape: ModelShape, opts: SearchOptions, physics: Physics
    ) -> None:
        """Unless a usable layout fit already, whether one fits at an unsure size, largest
        first, until one does (`usable_layouts_fit`); the unsure sizes are then settled."""
        for n_gpu in reversed(self.unsure) if not self.any_layout else ():
            fits, over = usable_layouts_fit(hw, shape, n_gpu, opts, physics)
            self.blocked = self.blocked or over
            if fits:
                self.any_layout = True
                break
        self.unsure.clear()


def _trained_point(
    shape: ModelShape, at: BestAt, physics: Physics, counts: ModelCounts | None
) -> PointResult:
    """The feasible point of the size the walk settled on (`at`, which trains in time)."""
    at = at.finished()
    assert at.found is not None  # `walk.trains` holds for every size the walk settles on
    return PointResult(
        shape,
        True,
        None,
        *at.found,
        recompute=at.recompute,
        physics=physics.name,
        counts=counts,
        grid_cost=at.grid_cost,
    )


def sweep_series(
    hw: HardwareSpec,
    laws: ScalingLaws,
    d_models: Sequence[int],
    duration_s: float,
    opts: SearchOptions = SearchOptions(),
    stop_at_infeasible: bool = True,
    physics: Physics = PAPER,
    finish: Callable[[PointResult], PointResult] | None = None,
) -> list[PointResult]:
    """Smallest clusters along the width grid, ascending (spec §11).

    Each point goes through `finish` first when given (the power budget,
    `pipeline.model.power.with_power`, which can make a size infeasible). Stops after the first
    infeasible size (recorded with its reason) or after a point below the utilization floor,
    unless `stop_at_infeasible` is False: no size past the wall is searched.
    """
    points: list[PointResult] = []
    for d_model in sorted(d_models):
        shape = series_shape(d_model, laws, opts.quirks, physics)
        point = smallest_cluster(hw, shape, duration_s, opts, physics=physics)
        if finish is not None:
            point = finish(point)
        points.append(point)
        if not stop_at_infeasible:
            continue
        if not point.feasible:
            break
        if point.cost is not None and point.cost.utilization < UTILIZATION_FLOOR:
            break
    return points
