"""Candidate layouts at one cluster size, with their network-free step inputs (spec §10
steps 1-8.2), cached per GPU, model, cluster size, options and physics."""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass
from typing import Any, NamedTuple, TypedDict

import numpy as np
from numpy.typing import NDArray

from pipeline.model.caches import register
from pipeline.model.compute.efficiency import fp8_gemms
from pipeline.model.compute.layer import with_rerun_s
from pipeline.model.compute.memory_ops import optimizer_step_time_s
from pipeline.model.memory.aggregate import memory_required_bytes
from pipeline.model.memory.gpu_memory import updated_params
from pipeline.model.network.comm_table import CandidateKeys
from pipeline.model.network.groups import Levels, ring_attention_exchange_s
from pipeline.model.network.ring import ring_exposed_s
from pipeline.model.records.hardware import HardwareSpec, gpu_only
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.scaling import ModelShape
from pipeline.model.records.switches import (
    PAPER,
    RECOMPUTE_ORDER,
    Physics,
    Recompute,
    recompute_modes,
)
from pipeline.model.search.enumeration import realistic_layout_rows
from pipeline.model.search.grid import (
    fitting_mode,
    grid_kv_width,
    grid_layer_times_s,
    grid_params_per_gpu,
    memory_by_mode_bytes,
    table_shards,
    timing_gpu,
)
from pipeline.model.search.layouts import paper_layouts, shard_times_s
from pipeline.model.search.memo import ByteBoundedMemo, arrays_nbytes, read_only
from pipeline.model.step.pipeline import StageLayers, pipeline_floor_s
from pipeline.model.step.schedule import interleave_degrees
from pipeline.model.step.step_time import (
    LayoutBatch,
    compute_and_bubble,
    critical_matmul_s,
    step_floor_s,
)

Array = NDArray[np.float64]


MAX_BATCH_TOKENS = 2**53
"""Batches above this many tokens are rejected: layouts are enumerated in exact int64/float64."""


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
    keys: CandidateKeys | None
    """Distinct TP, PP/EP and DP totals, for the network-time tables (`comm_table`); None
    under realistic physics, whose candidates are timed as runs, without those tables."""
    t_step_extra_s: Array | None = None
    """Per-step time outside the pipeline (realistic physics: the optimizer step)."""
    recompute: NDArray[np.int64] | None = None
    """Each candidate's recomputation mode (index into `RECOMPUTE_ORDER`), realistic physics."""
    tp_in_domain: bool = False
    """Only splits with every tensor-parallel factor on the fastest level (realistic physics)."""
    nic_striping: bool = False
    """Rings crossing nodes stripe over their ranks' NICs (`physics.nic_striping`, `_with_ring`)."""
    cp_all_gather: bool = False
    """Context parallelism all-gathers K and V, its exchange exposed (`physics.cp_all_gather`,
    `_with_ring`)."""
    t_compute_s: Array | None = None
    """Each candidate's critical-path matmul time per step (`step.compute_and_bubble`); under
    realistic physics its critical stage's layers, (L/N_PP)·m · t_layer."""
    bubble: Array | None = None
    """Each candidate's bubble fraction (`step.compute_and_bubble`); None under realistic
    physics, whose bubble depends on the network (`step.pipeline`)."""
    step_floor_s: float = 0.0
    """The smallest compute-only lower bound on a candidate's step time (`step.step_floor_s`)."""
    cp: NDArray[np.int64] | None = None
    """Each candidate's context-parallel degree c (inside N_DP), when the physics tries c > 1."""
    attention_forward_s: Array | None = None
    """Each candidate's attention core forward time, which the ring of c > 1 overlaps with
    (`_with_ring`)."""
    attention_backward_s: Array | None = None
    """The same backward."""
    t_gemm_s: Array | None = None
    """Each candidate's weight GEMMs of one layer, forward, backward and rerun (realistic
    physics: what TP communication overlap hides behind, `search.realistic`)."""
    t_backward_s: Array | None = None
    """Each candidate's backward and rerun of one layer (realistic physics: what an
    overlapped gradient all-reduce hides behind)."""
    t_forward_s: Array | None = None
    """Each candidate's forward of one layer (realistic physics: what an overlapped
    parameter all-gather hides behind, `step.assembly`)."""
    rows: NDArray[np.int64] | None = None
    """Each candidate's row in the table it was enumerated from (realistic physics:
    `enumeration.realistic_layout_rows`, whose rows `search.floors.layout_step_floors_s`
    bounds)."""
    row_need: tuple[Array, ...] = ()
    """The bytes on one GPU of every row of the table `rows` index, under each mode of
    `recompute_modes(physics)`, as the memory check read them (realistic physics with
    `physics.gpu_memory`: the row set's `RealisticRows.need`, shared and read only; empty
    otherwise): a candidate's are at its row under its mode (`counts.grid_cost`)."""


@dataclass(frozen=True, slots=True)
class MemoryBlocked:
    """Candidates existed at a cluster size but none fit in one GPU's memory."""


def enumerate_candidates(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions,
    physics: Physics = PAPER,
    tp_unit: int = 0,
) -> Candidates | MemoryBlocked | None:
    """Every (N_DP, N_TPm, N_TPff, N_PP, N_EP, schedule, m) the search tries, in order (spec §10).

    None if there is none, or if the batch exceeds `MAX_BATCH_TOKENS` (exact integers end there).
    Under realistic physics (`physics`), whole sequences with `whole_sequences`, 1-D and/or
    2-D tensor parallelism per `tensor_parallel` (`tp_in_domain` keeps N_TP on the fastest
    level: a network rule, applied to the splits, `valid_splits`), a per-GPU memory check
    with `gpu_memory` (MemoryBlocked when nothing fits), and each candidate's layer time from `search.grid` (docs/model.md, "Realistic physics").
    The candidates do not depend on the network; they are cached per GPU (`gpu_only`), model,
    cluster size, options and physics, as read-only arrays. Under realistic physics `tp_unit`
    > 0 keeps only the layouts whose N_TP divides it (`enumeration.realistic_layout_rows`).
    """
    return _candidates(gpu_only(hw), shape, n_gpu, opts, physics, tp_unit)


def _candidates_nbytes(c: Candidates | MemoryBlocked | None) -> int:
    """Bytes of a candidate set's own arrays (its keys are shared and cached apart)."""
    return arrays_nbytes(c)


def _candidate_set(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions,
    physics: Physics,
    tp_unit: int = 0,
) -> Candidates | MemoryBlocked | None:
    """`enumerate_candidates` uncached, its arrays read only."""
    c = _enumerate(hw, shape, n_gpu, opts, physics, tp_unit)
    if isinstance(c, Candidates):
        c = read_only(_with_step_inputs(c, opts, shape))
    return c


_candidates = ByteBoundedMemo(_candidate_set, CANDIDATE_CACHE_BYTES, _candidates_nbytes)
register(f"{__name__}.enumerate_candidates", _candidates, f"{CANDIDATE_CACHE_BYTES} bytes")


def _enumerate(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions,
    physics: Physics,
    tp_unit: int = 0,
) -> Candidates | MemoryBlocked | None:
    if shape.batch_tokens > MAX_BATCH_TOKENS:
        return None
    if not physics.is_paper:
        return _realistic_candidates(hw, shape, n_gpu, None, opts, physics, tp_unit)
    # the GPU-free part once per (model, cluster size, options), the GPU's memory and times here
    layouts = paper_layouts(shape, n_gpu, opts, physics.whole_sequences, physics.tensor_parallel)
    if layouts is None:
        return None
    fit = layouts.within(n_gpu * hw.hbm_bytes)
    if fit is None:
        return None
    return Candidates(
        degrees=fit.degrees,
        microbatches=fit.microbatches,
        zero_bubble=fit.zero_bubble,
        interleave=fit.interleave,
        t_layer_s=shard_times_s(hw, shape, layouts)[fit.shard_of],
        compute_repeats=fit.compute_repeats,
        nanobatch=fit.nanobatch,
        keys=fit.keys,
        bubble=fit.bubble,
    )


_CANDIDATE_FIELDS = tuple(f.name for f in dataclasses.fields(Candidates))
_candidate_values = operator.attrgetter(*_CANDIDATE_FIELDS)


def _replaced(c: Candidates, **changes: Any) -> Candidates:
    """`dataclasses.replace(c, **changes)`, its fields read in one call: the walk makes a set
    with its step inputs at every size it builds (`_with_step_inputs`)."""
    fields = dict(zip(_CANDIDATE_FIELDS, _candidate_values(c), strict=True))
    fields.update(changes)
    return Candidates(**fields)


class _LayerParts(TypedDict):
    t_layer_s: Array
    t_gemm_s: Array
    t_backward_s: Array
    t_forward_s: Array


def _with_step_inputs(c: Candidates, opts: SearchOptions, shape: ModelShape) -> Candidates:
    """The candidates with their network-free step inputs and compute-only step floor: Part
    I's (`step.step_time`), or under realistic physics `_with_pipeline_inputs`."""
    if c.recompute is not None:
        return _with_pipeline_inputs(c, shape, c.t_layer_s)
    if c.bubble is None:
        t_mm, f = compute_and_bubble(_batch(c, slice(None), c.degrees[:, None, :]), opts)
    else:  # the paper's candidates carry their bubble (`layouts.PaperLayouts`)
        t_mm, f = critical_matmul_s(c.compute_repeats, c.t_layer_s, opts), c.bubble
    floor = float(step_floor_s(t_mm, f, c.zero_bubble).min())
    return _replaced(c, t_compute_s=t_mm, bubble=f, step_floor_s=floor)


def _with_pipeline_inputs(c: Candidates, shape: ModelShape, t_layer_s: Array) -> Candidates:
    """Realistic candidates with the layer time `t_layer_s` (theirs, or with their ring's
    exchange, `_with_ring`) and their `_pipeline_inputs`."""
    t_compute, floor_s = _pipeline_inputs(
        shape,
        c.degrees,
        t_layer_s,
        c.microbatches,
        c.interleave,
        c.zero_bubble,
        c.t_step_extra_s,
        c.compute_repeats,
    )
    return _replaced(c, t_layer_s=t_layer_s, t_compute_s=t_compute, step_floor_s=floor_s)


def _pipeline_inputs(
    shape: ModelShape,
    degrees: NDArray[np.int64],
    t_layer_s: Array,
    microbatches: Array,
    interleave: Array,
    zero_bubble: NDArray[np.bool_],
    t_step_extra_s: Array | None,
    compute_repeats: Array,
) -> tuple[Array, float]:
    """Realistic candidates' critical stage's compute (`compute_repeats` layers of
    `t_layer_s`) and their compute-only step floor: the step of `step.pipeline` with every
    network time at 0 (`pipeline_floor_s`, a lower bound on any network)."""
    pp = degrees[:, 3].astype(np.float64)
    layers = shape.n_layers / pp
    floor_s = pipeline_floor_s(
        StageLayers(layers, layers, float(shape.n_layers)),
        t_layer_s,
        microbatches,
        interleave,
        zero_bubble,
        t_step_extra_s,
    )
    return compute_repeats * t_layer_s, float(floor_s.min())


REALISTIC_ROWS_CACHE_BYTES = 64 * 2**20
"""Bytes of GPU-free realistic rows (`_realistic_rows`) a process keeps, least recently used
out: the cluster sizes of the models a sweep's GPUs share (docs/model.md §9.2)."""


class RowsKey(NamedTuple):
    """What a realistic row set is kept by (`_realistic_rows`): the model, the cluster size,
    the options, the physics, the N_TP unit and whether the GPU's weight GEMMs run in FP8; and
    with a GPU's part, what is kept of the row set on each GPU (`_row_shard_parts`,
    `_kept_fitting_rows`)."""

    shape: ModelShape
    n_gpu: int
    opts: SearchOptions
    physics: Physics
    tp_unit: int
    fp8: bool


@dataclass(frozen=True, slots=True)
class RealisticRows:
    """A cluster size's realistic layout rows (`realistic_layout_rows`) with what their
    candidates read of neither the GPU's speed and capacity nor the network (docs/model.md
    §9.2): their interleave, their memory need per recomputation mode (or the paper's aggregate
    need), their distinct layer shards and the parameters their optimizer step updates."""

    table: NDArray[np.int64]
    cp: NDArray[np.int64] | None
    interleave: Array
    need: tuple[Array, ...]
    """Bytes on one GPU under each of `recompute_modes(physics)` (`physics.gpu_memory`), or the
    paper's aggregate need (`opts.memory_check`), or none."""
    shards: NDArray[np.int64]
    """Distinct (N_TPm, N_TPff, nanobatch, local experts), `grid.table_shards`."""
    shard_of: NDArray[np.intp]
    updated: Array | None
    """Parameters each row's optimizer step updates (`physics.memory_bound_ops`)."""


def _rows_nbytes(rows: RealisticRows | None) -> int:
    """Bytes of the arrays a row set holds beyond its table (cached apart)."""
    if rows is None:
        return 0
    arrays = [rows.interleave, rows.shards, rows.shard_of, *rows.need]
    if rows.updated is not None:
        arrays.append(rows.updated)
    return sum(a.nbytes for a in arrays)


def _realistic_row_set(
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions,
    physics: Physics,
    tp_unit: int,
    fp8: bool,
) -> RealisticRows | None:
    """`RealisticRows` uncached, on a GPU whose weight GEMMs run in FP8 or not (`fp8`), its
    arrays read only; None without rows."""
    rows = realistic_layout_rows(shape, n_gpu, opts, physics, tp_unit)
    return None if rows is None else _rows_of(rows, shape, opts, physics, fp8)


def _rows_of(
    rows: tuple[NDArray[np.int64], NDArray[np.int64] | None],
    shape: ModelShape,
    opts: SearchOptions,
    physics: Physics,
    fp8: bool,
) -> RealisticRows:
    """`RealisticRows` of `rows` (a layout table and each row's context-parallel degree)."""
    table, cp = rows
    dp_, tpm, tpff, pp_, ep_, m, zb_i, nano = (col.astype(np.float64) for col in table.T)
    zb = zb_i.astype(bool)
    interleave = interleave_degrees(pp_, zb, opts.interleaving, shape.n_layers, m)
    need: tuple[Array, ...] = ()
    if physics.gpu_memory:
        factors = (dp_, tpm, tpff, pp_, ep_)
        schedule = (m, interleave, zb)
        modes = recompute_modes(physics)
        need = tuple(memory_by_mode_bytes(fp8, physics, shape, factors, nano, schedule, modes))
    elif opts.memory_check:
        need = (memory_required_bytes(shape, dp_, pp_, nano, zb, opts),)
    shards, shard_of = table_shards(table, shape.sparsity)
    updated = None
    if physics.memory_bound_ops:
        params = grid_params_per_gpu(physics, shape, tpm * tpff, pp_, ep_)
        # the distributed optimizer: dense state over the N_DP·N_EP ranks holding the same
        # dense weights, expert state over the N_DP holding the same shard (docs/model.md R.7)
        updated = updated_params(params, physics.zero_stage, dp_ * ep_, dp_)
    out = RealisticRows(table, cp, interleave, need, shards, shard_of, updated)
    for a in (interleave, shards, shard_of, *need, *(() if updated is None else (updated,))):
        a.setflags(write=False)
    return out


_realistic_rows = ByteBoundedMemo(_realistic_row_set, REALISTIC_ROWS_CACHE_BYTES, _rows_nbytes)
register(f"{__name__}._realistic_rows", _realistic_rows, f"{REALISTIC_ROWS_CACHE_BYTES} bytes")
SHARD_PARTS_CACHE_BYTES = 64 * 2**20
"""Bytes of per-shard layer parts (`ShardParts`) a process keeps, least recently used out: a row
set's on each GPU a sweep's series share (docs/model.md §9.2)."""


@dataclass(frozen=True, slots=True)
class ShardParts:
    """What a realistic candidate reads of its layer, per shard of a row set (`RealisticRows`)
    on one GPU (`grid.timing_gpu`), under every recomputation mode: the layer, its weight GEMMs
    and its backward with the rerun (mode, shard), its forward and attention core (shard), and
    each row's optimizer step. Every part is element-wise in the shard, so candidate i takes
    entry (mode i, shard i): the same sums, in the same order, as on the candidates' own
    rows (the parts a run's layer splits into, `runs.training_run.run_costs`).

    A shard's parts are filled the first time a candidate on it is taken (`take`): a row set
    whose walk wants few of its rows times only their shards, and the next network's wanted
    rows read those already timed. Filling writes the same values whoever fills them, so the
    set is shared as a memo's values are; nothing else writes it."""

    hw: HardwareSpec
    physics: Physics
    shape: ModelShape
    shards: NDArray[np.int64]
    """The row set's distinct shards (`RealisticRows.shards`)."""
    timed: NDArray[np.bool_]
    """Whether each shard's parts are filled."""
    layer: Array
    gemm: Array
    backward: Array
    forward: Array
    attention_forward: Array
    attention_backward: Array
    optimizer_s: Array | None
    """Each row's optimizer step (`optimizer_step_time_s`), None without memory-bound ops."""

    def take(self, shard: NDArray[np.intp], modes: NDArray[np.int64]) -> _LayerParts:
        """The layer parts of candidates on shards `shard` under modes `modes` (each shard's
        filled first if it is not yet)."""
        self.fill(shard)
        return {
            "t_layer_s": self.layer[modes, shard],
            "t_gemm_s": self.gemm[modes, shard],
            "t_backward_s": self.backward[modes, shard],
            "t_forward_s": self.forward[shard],
        }

    def fill(self, shard: NDArray[np.intp]) -> None:
        """Time the shards of `shard` not timed yet (`grid_layer_times_s`) and keep their parts
        under every mode."""
        new = shard[~self.timed[shard]]
        if new.size == 0:
            return
        new = np.flatnonzero(np.bincount(new, minlength=self.timed.size))
        times = grid_layer_times_s(self.hw, self.physics, self.shape, self.shards[new])
        modes = np.arange(len(RECOMPUTE_ORDER), dtype=np.int64)[:, None]
        forward = times.forward_s
        layer = with_rerun_s(modes, forward, times.backward_s, times.core_forward_s)
        zero = np.zeros_like(forward)
        self.layer[:, new] = layer
        self.gemm[:, new] = with_rerun_s(
            modes, times.matmul_forward_s, times.matmul_backward_s, zero
        )
        self.backward[:, new] = layer - forward
        self.forward[new] = forward
        self.attention_forward[new] = times.attention_forward_s
        self.attention_backward[new] = times.attention_backward_s
        self.timed[new] = True


def _shard_parts(
    hw: HardwareSpec, physics: Physics, shape: ModelShape, rows: RealisticRows
) -> ShardParts:
    """`ShardParts` of `rows` on the GPU of `hw`, no shard timed yet; each row's optimizer
    step computed."""
    n = rows.shards.shape[0]
    by_mode = (len(RECOMPUTE_ORDER), n)
    optimizer_s = None
    if rows.updated is not None:
        optimizer_s = optimizer_step_time_s(hw, physics.efficiency, rows.updated)
        optimizer_s.setflags(write=False)
    return ShardParts(
        hw,
        physics,
        shape,
        rows.shards,
        timed=np.zeros(n, dtype=bool),
        layer=np.full(by_mode, np.nan),
        gemm=np.full(by_mode, np.nan),
        backward=np.full(by_mode, np.nan),
        forward=np.full(n, np.nan),
        attention_forward=np.full(n, np.nan),
        attention_backward=np.full(n, np.nan),
        optimizer_s=optimizer_s,
    )


def _kept_shard_parts(gpu: HardwareSpec, key: RowsKey) -> ShardParts | None:
    """`_shard_parts` of the rows `_realistic_rows` keeps for `key`; None without rows."""
    rows = _realistic_rows(*key)
    return None if rows is None else _shard_parts(gpu, key.physics, key.shape, rows)


_row_shard_parts = ByteBoundedMemo(_kept_shard_parts, SHARD_PARTS_CACHE_BYTES, arrays_nbytes)
register(f"{__name__}._row_shard_parts", _row_shard_parts, f"{SHARD_PARTS_CACHE_BYTES} bytes")


def _realistic_candidates(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    given: tuple[NDArray[np.int64], NDArray[np.int64] | None] | None,
    opts: SearchOptions,
    physics: Physics,
    tp_unit: int = 0,
) -> Candidates | MemoryBlocked | None:
    """Candidates under realistic physics from the rows `given` (a table and each row's
    context-parallel degree), or when None from those of `realistic_layout_rows`, kept per
    model, cluster size, options and physics for every GPU (`RealisticRows`): per-GPU memory
    with the cheapest recomputation mode that fits, layer times and the optimizer step of
    their rows (`search.grid`)."""
    key = RowsKey(shape, n_gpu, opts, physics, tp_unit, fp8_gemms(hw, physics))
    rows = (
        _realistic_rows(*key) if given is None else _rows_of(given, shape, opts, physics, key.fp8)
    )
    if rows is None:
        return None
    fit = _fitting_rows(hw.hbm_bytes, n_gpu, rows, physics)
    if not isinstance(fit, tuple):
        return fit
    mode_idx, keep = fit
    if given is None:
        parts = _row_shard_parts(timing_gpu(hw), key)
        assert parts is not None  # the same rows as above
    else:
        parts = _shard_parts(hw, physics, shape, rows)
    return _candidates_of_frame(
        row_frame(shape, rows, mode_idx, keep, physics), rows, parts, physics
    )


@dataclass(frozen=True, slots=True)
class NoneWanted:
    """Candidates existed at a cluster size and some fit in memory, but none was wanted
    (`realistic_kept_rows`)."""


@dataclass(frozen=True, slots=True, eq=False)
class KeptRows:
    """The rows of a realistic row set (`RowsKey`) whose candidates a size's search builds on
    one GPU: those that fit its memory and are wanted (`keep`), each under its recomputation
    mode (`mode_idx`, read where kept). Equal, and hashed alike, when their key, kept rows and
    their modes are (`digest`): all the candidates read of the GPU's memory capacity, so that
    GPUs differing only in it share what is built of them (`search._kept_choices`)."""

    key: RowsKey
    mode_idx: NDArray[np.int64]
    keep: NDArray[np.bool_]
    digest: bytes
    """Each row's mode where kept, −1 elsewhere, a byte each."""
    key_hash: int
    """hash((key, digest)), computed once: the memo asks it twice a lookup."""

    def __hash__(self) -> int:
        return self.key_hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KeptRows):
            return NotImplemented
        return self.digest == other.digest and self.key == other.key


def kept_rows(key: RowsKey, mode_idx: NDArray[np.int64], keep: NDArray[np.bool_]) -> KeptRows:
    """`KeptRows` of the rows `keep` marks under their modes `mode_idx` (each below 128, as
    `RECOMPUTE_ORDER`'s indices are)."""
    digest = np.where(keep, mode_idx, -1).astype(np.int8).tobytes()
    return KeptRows(key, mode_idx, keep, digest, hash((key, digest)))


def realistic_kept_rows(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions,
    physics: Physics,
    tp_unit: int,
    wanted: NDArray[np.bool_],
) -> KeptRows | MemoryBlocked | NoneWanted | None:
    """The rows of `realistic_layout_rows` that fit in `hw`'s memory and that `wanted` marks
    (one flag per row, in its order), with their recomputation modes: what the pruned walk
    builds candidates of at a size (`kept_candidates`). None and MemoryBlocked as
    `enumerate_candidates` finds them for the whole set (read on every row); NoneWanted when
    some row fits in memory but none of those is wanted. Not cached: the flags depend on the
    network (`search._best_at`); the rows and each row's fit are (docs/model.md §9.2)."""
    key, fit = rows_fit(hw, shape, n_gpu, opts, physics, tp_unit)
    if not isinstance(fit, tuple):
        return fit
    mode_idx, keep = fit
    keep = keep & wanted
    if not keep.any():
        return NoneWanted()
    return kept_rows(key, mode_idx, keep)


def rows_fit(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions,
    physics: Physics,
    tp_unit: int = 0,
) -> tuple[RowsKey, Fit]:
    """The key of the realistic rows at n_gpu on `hw`'s GPU and their memory check there
    (`_kept_fitting_rows`; None without rows, or when the batch exceeds `MAX_BATCH_TOKENS`).
    What `enumerate_candidates` finds under realistic physics without building them: None and
    MemoryBlocked alike, and candidates where some row fits (`_realistic_candidates`)."""
    gpu = gpu_only(hw)  # as `enumerate_candidates` reads it
    key = RowsKey(shape, n_gpu, opts, physics, tp_unit, fp8_gemms(gpu, physics))
    if shape.batch_tokens > MAX_BATCH_TOKENS or _realistic_rows(*key) is None:
        return key, None
    return key, _kept_fitting_rows(gpu.hbm_bytes, key)


def kept_candidates(
    hw: HardwareSpec,
    kept: KeptRows,
    frame: RowFrame | None = None,
    exchange_s: Array | None = None,
) -> Candidates:
    """The candidates of the `kept` rows (`realistic_kept_rows`) on `hw`, with the ring
    exchange on its network (`_with_ring`) and step inputs: the same arrays as the whole set's
    candidates of those rows with their ring, every per-candidate quantity being computed row
    by row (`grid_layer_times_s` keeps each shard's times whatever the batch), and its
    compute-only `step_floor_s` the least of theirs. `frame`: the rows' `kept_row_frame` when
    known; `exchange_s`: each candidate's forward K/V exchange on this network when known
    (`search.realistic.realistic_ring_s` at its rows), else computed on its rows
    (`rows_ring_s`). Reads of `hw` its speed and its network, not its memory capacity (`kept`
    holds what the memory check found)."""
    key = kept.key
    shape, physics = key.shape, key.physics
    rows = _realistic_rows(*key)
    parts = _row_shard_parts(timing_gpu(gpu_only(hw)), key)
    assert rows is not None  # the rows `kept` was found on
    assert parts is not None
    if frame is None:
        frame = row_frame(shape, rows, kept.mode_idx, kept.keep, physics)
    if exchange_s is None:
        exchange_s = frame_ring_s(hw, physics, shape, frame)
    return _candidates_of_frame(frame, rows, parts, physics, shape, exchange_s)


def frame_ring_s(
    hw: HardwareSpec, physics: Physics, shape: ModelShape, frame: RowFrame
) -> Array | None:
    """The forward K/V exchange of a `RowFrame`'s candidates on `hw`'s network (`rows_ring_s`),
    None without a ring: computed on them alone, row by row, so each is its row's in the whole
    row set's (`search.realistic.realistic_ring_s`), bit for bit."""
    if frame.cp is None:
        return None
    return rows_ring_s(
        hw,
        shape,
        frame.degrees,
        frame.cp,
        frame.nanobatch,
        physics.nic_striping,
        physics.cp_all_gather,
    )


Fit = tuple[NDArray[np.int64], NDArray[np.bool_]] | MemoryBlocked | None
"""What `_fitting_rows` finds: each row's mode and whether it fits, or why none is left."""

FITTING_CACHE_BYTES = 16 * 2**20
"""Bytes of each row set's modes and memory check per GPU memory capacity (`_fitting_rows`) a
process keeps, least recently used out: read by every network a sweep's series share."""


def _fit_nbytes(fit: Fit) -> int:
    """Bytes of a fit's arrays."""
    return 0 if not isinstance(fit, tuple) else fit[0].nbytes + fit[1].nbytes


def _fitting_rows_of(hbm_bytes: float, key: RowsKey) -> Fit:
    """`_fitting_rows` of the rows `_realistic_rows` keeps for `key` on a GPU of `hbm_bytes`
    (all the check reads of it), its arrays read only; None without rows."""
    rows = _realistic_rows(*key)
    if rows is None:
        return None
    fit = _fitting_rows(hbm_bytes, key.n_gpu, rows, key.physics)
    if isinstance(fit, tuple):
        for a in fit:
            a.setflags(write=False)
    return fit


def _fitting_rows(hbm_bytes: float, n_gpu: int, rows: RealisticRows, physics: Physics) -> Fit:
    """Each row's recomputation mode (index into `RECOMPUTE_ORDER`) and whether it passes the
    memory check on a GPU of `hbm_bytes`: per GPU, the cheapest mode that fits (MemoryBlocked
    when no row fits), or the paper's aggregate check (None when no row passes it) under the
    first mode."""
    if physics.gpu_memory:
        mode_idx = fitting_mode(rows.need, recompute_modes(physics), hbm_bytes)
        keep = mode_idx >= 0
        if not keep.any():
            return MemoryBlocked()
        return mode_idx, keep
    modes = recompute_modes(physics)  # the paper's aggregate check (§9)
    first = modes[0] if modes[0] is not Recompute.AUTO else Recompute.NONE
    mode_idx = np.full(rows.table.shape[0], RECOMPUTE_ORDER.index(first), dtype=np.int64)
    keep = np.ones(rows.table.shape[0], dtype=bool)
    if rows.need:
        keep = n_gpu * hbm_bytes >= rows.need[0]
        if not keep.any():
            return None
    return mode_idx, keep


_kept_fitting_rows = ByteBoundedMemo(_fitting_rows_of, FITTING_CACHE_BYTES, _fit_nbytes)
register(f"{__name__}._kept_fitting_rows", _kept_fitting_rows, f"{FITTING_CACHE_BYTES} bytes")


@dataclass(frozen=True, slots=True)
class RowFrame:
    """What the realistic candidates of a row set's kept rows read of neither the GPU nor the
    network (`row_frame`): each candidate's row, layer shard, degrees, schedule and mode."""

    rows: NDArray[np.intp]
    """Each candidate's row in its row set (`Candidates.rows`)."""
    shard: NDArray[np.intp]
    """Each candidate's layer shard (`RealisticRows.shard_of`)."""
    degrees: NDArray[np.int64]
    microbatches: Array
    zero_bubble: NDArray[np.bool_]
    interleave: Array
    compute_repeats: Array
    nanobatch: NDArray[np.int64]
    recompute: NDArray[np.int64]
    cp: NDArray[np.int64] | None
    """Each candidate's context-parallel degree where it has a K/V ring (attention), else None."""


def row_frame(
    shape: ModelShape,
    rows: RealisticRows,
    mode_idx: NDArray[np.int64],
    keep: NDArray[np.bool_],
    physics: Physics,
) -> RowFrame:
    """The `RowFrame` of the rows `keep` marks, under their modes `mode_idx`."""
    idx = np.flatnonzero(keep)
    table = rows.table[idx]
    pp_, m = table[:, 3], table[:, 5]
    ring = rows.cp is not None and physics.attention  # without attention there is no K/V ring
    return RowFrame(
        rows=idx,
        shard=rows.shard_of[idx],
        degrees=table[:, :5],
        microbatches=m.astype(np.float64),
        zero_bubble=table[:, 6].astype(bool),
        interleave=rows.interleave[idx],
        compute_repeats=((shape.n_layers // pp_) * m).astype(np.float64),  # the critical stage's
        nanobatch=table[:, 7],
        recompute=mode_idx[idx],
        cp=rows.cp[idx] if ring and rows.cp is not None else None,
    )


def kept_row_frame(kept: KeptRows) -> RowFrame:
    """The `RowFrame` of the `kept` rows (`realistic_kept_rows`)."""
    rows = _realistic_rows(*kept.key)
    assert rows is not None  # the rows `kept` was found on
    return row_frame(kept.key.shape, rows, kept.mode_idx, kept.keep, kept.key.physics)


def _candidates_of_frame(
    frame: RowFrame,
    rows: RealisticRows,
    parts: ShardParts,
    physics: Physics,
    shape: ModelShape | None = None,
    exchange_s: Array | None = None,
) -> Candidates:
    """The realistic candidates of `frame`'s rows of `rows`, their layers read from their
    shards' `parts` (`ShardParts`). With the model `shape`, with their step inputs too, in one
    pass (as `_with_ring` then `_with_pipeline_inputs` give them): each layer with its ring's
    forward exchange `exchange_s` (`_ring_extra_s`; needed where the frame has a ring), then
    the critical stage's compute and the compute-only floor (`_pipeline_inputs`)."""
    shard = frame.shard
    layer = parts.take(shard, frame.recompute)  # fills the shards first: the attention's too
    ring = frame.cp is not None
    attention_forward_s = parts.attention_forward[shard] if ring else None
    attention_backward_s = parts.attention_backward[shard] if ring else None
    t_step_extra_s = None if parts.optimizer_s is None else parts.optimizer_s[frame.rows]
    t_compute_s, step_floor_s = None, 0.0
    if shape is not None:
        if attention_forward_s is not None and attention_backward_s is not None:
            assert exchange_s is not None  # a ring's step inputs need its exchange
            layer["t_layer_s"] = layer["t_layer_s"] + _ring_extra_s(
                exchange_s,
                attention_forward_s,
                attention_backward_s,
                frame.recompute,
                physics.cp_all_gather,
            )
        t_compute_s, step_floor_s = _pipeline_inputs(
            shape,
            frame.degrees,
            layer["t_layer_s"],
            frame.microbatches,
            frame.interleave,
            frame.zero_bubble,
            t_step_extra_s,
            frame.compute_repeats,
        )
    return Candidates(
        degrees=frame.degrees,
        microbatches=frame.microbatches,
        zero_bubble=frame.zero_bubble,
        interleave=frame.interleave,
        **layer,
        compute_repeats=frame.compute_repeats,
        nanobatch=frame.nanobatch,
        keys=None,  # timed as runs (`search.realistic`): no network-time tables
        t_step_extra_s=t_step_extra_s,
        recompute=frame.recompute,
        tp_in_domain=physics.tp_in_domain,
        nic_striping=physics.nic_striping,
        cp_all_gather=physics.cp_all_gather,
        t_compute_s=t_compute_s,
        step_floor_s=step_floor_s,
        cp=frame.cp,
        attention_forward_s=attention_forward_s,
        attention_backward_s=attention_backward_s,
        rows=frame.rows,
        row_need=rows.need if physics.gpu_memory else (),
    )


def _with_ring(
    c: Candidates, hw: HardwareSpec, shape: ModelShape, exchange_s: Array | None = None
) -> Candidates:
    """The candidates with their context-parallel ring exchange on this network added to
    each layer's time (`_ring_extra_s`), then their step inputs (`_with_pipeline_inputs`); the
    group sits on the first level holding its t·c GPUs
    (`network.groups.ring_attention_exchange_s`; `exchange_s`: each candidate's, when known)."""
    if c.cp is None or c.attention_forward_s is None or c.attention_backward_s is None:
        return c
    if c.recompute is None:
        return c
    if exchange_s is None:
        exchange_s = candidate_ring_s(c, hw, shape)
    extra = _ring_extra_s(
        exchange_s, c.attention_forward_s, c.attention_backward_s, c.recompute, c.cp_all_gather
    )
    return _with_pipeline_inputs(c, shape, c.t_layer_s + extra)


def _ring_extra_s(
    exchange_s: Array,
    attention_forward_s: Array,
    attention_backward_s: Array,
    recompute: NDArray[np.int64],
    all_gather: bool,
) -> Array:
    """What each candidate's K/V exchange `exchange_s` adds to its layer (on the GPU's S/N_EP
    nanobatches) where it outlasts the attention core it overlaps with
    (`network.ring.ring_exposed_s`, as a run's, `network.groups.ring_attention_exposed_s`;
    with `all_gather`, `physics.cp_all_gather`, all of it): K and V of the model's K/V heads
    (`search.grid.grid_kv_width`), once more per recomputed forward."""
    overlapped = 0.0 if all_gather else 1.0  # an all-gather overlaps nothing, as a run's
    reruns = (recompute >= 1).astype(np.float64)
    return ring_exposed_s(
        exchange_s, overlapped * attention_forward_s, overlapped * attention_backward_s, reruns
    )


def candidate_ring_s(c: Candidates, hw: HardwareSpec, shape: ModelShape) -> Array:
    """Each candidate's forward K/V exchange on `hw`'s network (`rows_ring_s`)."""
    return rows_ring_s(hw, shape, c.degrees, c.cp, c.nanobatch, c.nic_striping, c.cp_all_gather)


def rows_ring_s(
    hw: HardwareSpec,
    shape: ModelShape,
    degrees: NDArray[np.int64],
    cp_: NDArray[np.int64] | None,
    nanobatch: NDArray[np.int64],
    striped: bool,
    all_gather: bool,
) -> Array:
    """Each row's forward K/V exchange on `hw`'s network (`ring_attention_exchange_s`), from
    its degrees (n, 5), context-parallel degree c (None: 1) and nanobatch: the GPU's S/N_EP
    nanobatches of tokens (0 where c = 1), striped as `physics.nic_striping` (`striped`)."""
    cp = np.ones(degrees.shape[0]) if cp_ is None else cp_.astype(np.float64)
    tp = (degrees[:, 1] * degrees[:, 2]).astype(np.float64)
    local = float(shape.sparsity) // degrees[:, 4].astype(np.float64)
    tokens = nanobatch.astype(np.float64) * local  # the GPU's tokens of a microbatch
    levels = Levels.as_given(hw, striped)
    return ring_attention_exchange_s(levels, tokens, grid_kv_width(shape), tp, cp, all_gather)


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
