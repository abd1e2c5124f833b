"""The paper's candidate layouts at one cluster size before a GPU is named (spec §10 steps 1-7).

A paper candidate set (`candidates.enumerate_candidates`) is the layout table's rows whose
memory fits the cluster's HBM (spec §9), with each row's layer time on the GPU. Only the HBM
and the layer times depend on the GPU: the table, each row's memory need, interleave degree,
repeats, bubble fraction, shard and network group keys do not. `paper_layouts` makes those
once per (model, cluster size, options, physics switches), and `PaperLayouts.within` the rows
that fit a given memory, once per memory level; a GPU's candidate set then takes its rows and
times the table's few distinct shards on the GPU (`shard_times_s`). Every value comes from the
same element-wise arithmetic on the same inputs as a set enumerated for its GPU alone, so the
sets are bit for bit the same (docs/model.md §9.2). The moving frontier (the same series on a
GPU projected to each year, docs/trends.md) enumerates each (model, cluster size) once.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.caches import register
from pipeline.model.compute.layer import layer_matmul_time_s, layer_on_chip_traffic
from pipeline.model.compute.matmul import OnChipTraffic, on_chip_key
from pipeline.model.memory.aggregate import memory_required_bytes
from pipeline.model.network.comm_table import (
    CandidateKeys,
    candidate_keys,
    keys_within,
    unique_rows,
)
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.scaling import ModelShape
from pipeline.model.records.switches import TensorParallel
from pipeline.model.search.enumeration import layout_table
from pipeline.model.search.memo import ByteBoundedMemo, arrays_nbytes, read_only
from pipeline.model.step.schedule import bubble_fraction, interleave_degrees

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

LAYOUTS_CACHE_BYTES = 64 * 2**20
"""Bytes of GPU-free layout sets (`paper_layouts`) a process keeps, least recently used out:
the cluster sizes of the series a moving frontier repeats on the GPU of each year."""
ON_CHIP_GPUS = 4
"""GPU kinds (`matmul.on_chip_key`) whose on-chip traffic a layout set keeps for its shards
(`shard_times_s`): the moving frontier's years share one; a comparison of GPUs has a few."""
FITTING_CACHE_BYTES = 64 * 2**20
"""Bytes of fitting rows (`PaperLayouts.within`) a process keeps, least recently used out:
one per layout set and memory level (a GPU's HBM times the cluster size)."""


@dataclass(frozen=True, slots=True)
class FittingLayouts:
    """The rows of a layout set whose memory fits a memory level, with everything about them
    that does not depend on the GPU, in enumeration order (spec §10 steps 1-7)."""

    degrees: IntArray
    """(n, 5) totals (DP, TP_m, TP_ff, PP, EP)."""
    microbatches: Array
    zero_bubble: NDArray[np.bool_]
    interleave: Array
    compute_repeats: Array
    """Layers of the critical stage times local experts times microbatches, (L/N_PP)·(S/N_EP)·m."""
    nanobatch: IntArray
    bubble: Array
    """Each row's bubble fraction at its N_PP (`step.schedule.bubble_fraction`)."""
    shard_of: NDArray[np.intp]
    """Each row's index among its set's distinct shards (`PaperLayouts.shards`)."""
    keys: CandidateKeys
    """Distinct TP, PP/EP and DP totals, for the network-time tables (`comm_table`)."""


@dataclass(frozen=True, slots=True, eq=False)
class PaperLayouts:
    """Every layout the divisibility rules allow at one cluster size, before the memory check
    and the GPU (`paper_layouts`), with each row's GPU-free step inputs. Compared and hashed by
    identity: the key of its fitting rows."""

    table: IntArray
    """(n, 8) rows of `enumeration.layout_table`."""
    need_rank: NDArray[np.intp]
    """Each row's memory need (`memory.aggregate.memory_required_bytes`) as its index among
    the distinct needs, ascending; all 0 without the memory check."""
    levels: Array
    """The distinct memory needs, ascending (one level, −inf, without the memory check)."""
    shards: IntArray
    """(k, 3) distinct (N_TPm, N_TPff, nanobatch) of the rows, lexicographic (`unique_rows`)."""
    shard_of: NDArray[np.intp]
    """Each row's index among `shards`."""
    interleave: Array
    compute_repeats: Array
    bubble: Array
    keys: CandidateKeys
    """The group keys of every row (`comm_table.candidate_keys`); those of the rows that fit
    a memory level are taken from them (`comm_table.keys_within`)."""
    on_chip: dict[tuple[float, int, bool], OnChipTraffic] = dataclasses.field(
        default_factory=dict, compare=False, repr=False
    )
    """The shards' on-chip traffic per GPU kind (`matmul.on_chip_key`), at most `ON_CHIP_GPUS`
    of them, filled by `shard_times_s`: the GPUs of the same kind (a GPU projected to each
    year, which scales its rates and its L2) time the shards from it."""

    def within(self, memory_bytes: float) -> FittingLayouts | None:
        """The rows whose memory need is at most `memory_bytes` (spec §9: memory ≥ need), None
        if none is: one set per count of the distinct needs it covers, cached (`fitting_layouts`)."""
        fitting = int(np.searchsorted(self.levels, memory_bytes, side="right"))
        return None if fitting == 0 else fitting_layouts(self, fitting)

    def shard_widths(self, shape: ModelShape) -> tuple[Array, Array, Array]:
        """d_model/N_TPm, d_ff/N_TPff and the nanobatch of each distinct shard."""
        s = self.shards
        return (
            (shape.d_model // s[:, 0]).astype(np.float64),
            (shape.d_ff // s[:, 1]).astype(np.float64),
            s[:, 2].astype(np.float64),
        )


def _paper_layouts(
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions,
    whole_sequences: bool,
    tensor_parallel: TensorParallel,
) -> PaperLayouts | None:
    """`paper_layouts` uncached: the arithmetic of a candidate set (`candidates._enumerate`),
    element-wise on every row of the table instead of on the rows that fit."""
    table = layout_table(shape, n_gpu, opts, whole_sequences, tensor_parallel)
    if table is None:
        return None
    _, tpm, tpff, pp_, ep_, m, zb_i, nano = table.T
    zb = zb_i.astype(bool)
    levels: Array = np.full(1, -np.inf)  # without the check every memory fits
    need_rank: NDArray[np.intp] = np.zeros(table.shape[0], dtype=np.intp)
    if opts.memory_check:
        dp = table[:, 0].astype(float)
        need = memory_required_bytes(shape, dp, pp_.astype(float), nano.astype(float), zb, opts)
        levels, need_rank = np.unique(need, return_inverse=True)
    interleave = interleave_degrees(pp_, zb, opts.interleaving, shape.n_layers, m)
    repeats = ((shape.n_layers // pp_) * (shape.sparsity // ep_) * m).astype(np.float64)
    bubble = bubble_fraction(pp_.astype(np.float64), m.astype(np.float64), interleave, zb)
    shards, shard_of = unique_rows(np.stack([tpm, tpff, nano], axis=1))  # few distinct shards
    arrays = (need_rank.reshape(-1).astype(np.intp), levels, shards, shard_of)
    per_row = (interleave, repeats, bubble)
    for a in (*arrays, *per_row):
        a.setflags(write=False)
    keys = candidate_keys(np.ascontiguousarray(table[:, :5]), interleave)
    return PaperLayouts(table, *arrays, *per_row, keys)


def _layouts_nbytes(layouts: PaperLayouts | None) -> int:
    """Bytes of a layout set's own arrays (its table is `layout_table`'s, counted there), and
    of the on-chip traffic of one GPU kind it will keep (`shard_times_s`)."""
    if layouts is None:
        return 0
    fields = PaperLayouts.__slots__
    skipped = ("table", "keys", "on_chip")
    own = sum(getattr(layouts, f).nbytes for f in fields if f not in skipped)
    one_kind = len(OnChipTraffic.__slots__) * 4 * layouts.shards.shape[0] * 8  # 4 calls a shard
    return int(own + one_kind)


paper_layouts = ByteBoundedMemo(_paper_layouts, LAYOUTS_CACHE_BYTES, _layouts_nbytes)
"""The layouts of (model, cluster size, options, whole sequences, tensor-parallel kind) before
the memory check and the GPU, read only; None if the table is empty (`_paper_layouts`)."""
register(f"{__name__}.paper_layouts", paper_layouts, f"{LAYOUTS_CACHE_BYTES} bytes")


def _fitting_rows(layouts: PaperLayouts, fitting: int) -> FittingLayouts:
    """The rows of `layouts` among its `fitting` smallest distinct memory needs, in order."""
    if fitting == layouts.levels.size:  # every row fits
        rows: NDArray[np.intp] | slice = slice(None)
        keys = layouts.keys
    else:
        rows = np.flatnonzero(layouts.need_rank < fitting)
        keys = keys_within(layouts.keys, rows)
    table = layouts.table[rows]
    degrees = np.ascontiguousarray(table[:, :5])
    interleave = layouts.interleave[rows]
    out = FittingLayouts(
        degrees=degrees,
        microbatches=table[:, 5].astype(np.float64),
        zero_bubble=table[:, 6].astype(bool),
        interleave=interleave,
        compute_repeats=layouts.compute_repeats[rows],
        nanobatch=np.ascontiguousarray(table[:, 7]),
        bubble=layouts.bubble[rows],
        shard_of=layouts.shard_of[rows],
        keys=keys,
    )
    return read_only(out)


fitting_layouts = ByteBoundedMemo(_fitting_rows, FITTING_CACHE_BYTES, arrays_nbytes)
"""The rows of a layout set within a memory level (`_fitting_rows`), per (layout set, count of
the distinct needs they cover), read only; their own arrays counted (their keys are cached
apart, `comm_table._keys_of`)."""
register(f"{__name__}.fitting_layouts", fitting_layouts, f"{FITTING_CACHE_BYTES} bytes")


def shard_times_s(hw: HardwareSpec, shape: ModelShape, layouts: PaperLayouts) -> Array:
    """t_layer of each distinct shard of `layouts` on the GPU of `hw` (`layer_matmul_time_s`),
    with the shards' on-chip traffic computed once per GPU kind (`PaperLayouts.on_chip`): the
    same values, so the same times bit for bit."""
    widths = layouts.shard_widths(shape)
    key = on_chip_key(hw)
    chip = layouts.on_chip.get(key)
    if chip is None:
        chip = layer_on_chip_traffic(hw, *widths)
        if len(layouts.on_chip) < ON_CHIP_GPUS:
            layouts.on_chip[key] = chip
    return layer_matmul_time_s(hw, *widths, on_chip=chip)
