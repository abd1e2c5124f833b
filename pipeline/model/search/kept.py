"""What the pruned realistic search reads of a size's kept rows on a network, whatever the GPU:
their candidates' frame, K/V ring exchange, collectives, tokens and schedule, shared by the
series whose GPUs differ only in HBM (docs/model.md §9.4)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.caches import register
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.search.candidates import KeptRows, RowFrame, frame_ring_s, kept_row_frame
from pipeline.model.search.floors import floor_hardware
from pipeline.model.search.memo import ByteBoundedMemo, arrays_nbytes, read_only
from pipeline.model.search.realistic import (
    frame_comm,
    frame_tokens_and_schedule,
    realistic_comm,
    realistic_ring_s,
)
from pipeline.model.step.assembly import Schedule, StepComm

Array = NDArray[np.float64]

SIZES_ASKED_CACHE_BYTES = 2**20
"""Bytes a process spends remembering which cluster sizes' step inputs it was asked for
(`_asked_before`): about a thousand sizes (`search.memo.ENTRY_OVERHEAD_BYTES` each), a few
blocks of a sweep's series."""
KEPT_FRAMES_CACHE_BYTES = 16 * 2**20
"""Bytes of kept rows' frames (`kept_frame`) and of their step inputs (`kept_step_inputs`) a
process keeps, each, least recently used out: the cluster sizes a network's series walk (a
block of `sweep=million_realistic`'s series shares one network over 12 HBM bandwidths and 3
capacities)."""


@dataclass(frozen=True, slots=True)
class KeptFrame:
    """The kept rows' `RowFrame` with each candidate's forward K/V exchange on the network
    (`realistic_ring_s` at its row; None without a ring): what their candidates are built of
    beside the GPU's layer times. Read only."""

    rows: RowFrame
    exchange_s: Array | None


@dataclass(frozen=True, slots=True)
class KeptStepInputs:
    """What the steps of the kept rows' candidates read beside their layer times: their
    collectives on the network under their modes (`_kept_comm`) and their tokens and schedule
    (`realistic.frame_tokens_and_schedule`). Read only."""

    comm: StepComm | None
    tokens_schedule: tuple[Array, Schedule]


def kept_frame(hw: HardwareSpec, kept: KeptRows) -> KeptFrame:
    """The `KeptFrame` of the `kept` rows on `hw`'s network (bandwidths at the physics'
    achieved fraction): computed row by row, as on the candidates alone, and reading of `hw`
    only what `floors.floor_hardware` keeps, by which it is kept."""
    return _kept_frames(floor_hardware(hw), kept)


def kept_step_inputs(hw: HardwareSpec, kept: KeptRows) -> KeptStepInputs:
    """The `KeptStepInputs` of the `kept` rows on `hw`'s network, kept as `kept_frame` is:
    asked only where their candidates are timed."""
    return _kept_step_inputs(floor_hardware(hw), kept)


def _kept_frame_set(net: HardwareSpec, kept: KeptRows) -> KeptFrame:
    """`kept_frame` uncached, read only."""
    shape, n_gpu, opts, physics, tp_unit = kept.key[:5]
    frame = read_only(kept_row_frame(kept))
    if frame.cp is None:
        return KeptFrame(frame, None)
    if _asked_before(_RING, net, physics, opts, shape, n_gpu, tp_unit):
        ring = realistic_ring_s(net, physics, opts, shape, n_gpu, tp_unit)
        exchange = None if ring is None else ring[frame.rows]
    else:  # as `_kept_comm`: the first time, the kept rows' alone
        exchange = frame_ring_s(net, physics, shape, frame)
    if exchange is not None:
        exchange.setflags(write=False)
    return KeptFrame(frame, exchange)


def _step_inputs_set(net: HardwareSpec, kept: KeptRows) -> KeptStepInputs:
    """`kept_step_inputs` uncached, read only."""
    shape, _, opts, physics = kept.key[:4]
    frame = _kept_frames(net, kept).rows
    tokens, schedule = frame_tokens_and_schedule(physics, shape, opts, frame)
    comm = read_only(_kept_comm(net, kept, frame, (tokens, schedule)))
    tokens.setflags(write=False)
    read_only(schedule.stages)
    return KeptStepInputs(comm, (tokens, read_only(schedule)))


def _kept_comm(
    net: HardwareSpec, kept: KeptRows, frame: RowFrame, tokens_schedule: tuple[Array, Schedule]
) -> StepComm:
    """The collectives of the kept rows' candidates (`frame`, with their tokens and schedule)
    on the network `net`, under their modes: the first time a size is asked for on a network,
    computed on them alone (`realistic.frame_comm`); from the second (the next series of a
    sweep whose GPUs differ only in HBM, whose kept rows differ), taken from every row's
    (`realistic_comm`), computed once and kept for the series after. Both are the rows' own values, bit for bit; a single
    series walks most sizes once and times a few of their rows (docs/model.md §9.2)."""
    shape, n_gpu, opts, physics, tp_unit = kept.key[:5]
    if not _asked_before(_COMM, net, physics, opts, shape, n_gpu, tp_unit):
        return frame_comm(net, physics, shape, n_gpu, frame, tokens_schedule)
    rows = realistic_comm(net, physics, opts, shape, n_gpu, tp_unit)
    assert rows is not None  # the rows `kept` was found on
    return rows.rows(frame.rows, frame.recompute)


def _asked(*key: object) -> bool:
    """A size was asked for (`_asked_before`)."""
    return True


_sizes_asked = ByteBoundedMemo(_asked, SIZES_ASKED_CACHE_BYTES, lambda _: 0)
register(f"{__name__}._sizes_asked", _sizes_asked, f"{SIZES_ASKED_CACHE_BYTES} bytes")


_COMM, _RING = "comm", "ring"
"""What of a size `_asked_before` is asked about: its collectives, its K/V ring exchange."""


def _asked_before(*key: object) -> bool:
    """Whether `key` (what: `_COMM` or `_RING`; network, physics, options, model, cluster size,
    N_TP unit) was asked for before in this process; it is remembered."""
    before = _sizes_asked.holds(*key)
    _sizes_asked(*key)
    return before


def _frame_nbytes(frame: KeptFrame) -> int:
    """Bytes of a frame's arrays."""
    ring = 0 if frame.exchange_s is None else frame.exchange_s.nbytes
    return arrays_nbytes(frame.rows) + ring


def _step_inputs_nbytes(inputs: KeptStepInputs) -> int:
    """Bytes of step inputs' arrays."""
    tokens, schedule = inputs.tokens_schedule
    parts = (inputs.comm, schedule, schedule.stages)
    return tokens.nbytes + sum(arrays_nbytes(p) for p in parts)


_kept_frames = ByteBoundedMemo(_kept_frame_set, KEPT_FRAMES_CACHE_BYTES, _frame_nbytes)
register(f"{__name__}._kept_frames", _kept_frames, f"{KEPT_FRAMES_CACHE_BYTES} bytes")
_kept_step_inputs = ByteBoundedMemo(_step_inputs_set, KEPT_FRAMES_CACHE_BYTES, _step_inputs_nbytes)
register(f"{__name__}._kept_step_inputs", _kept_step_inputs, f"{KEPT_FRAMES_CACHE_BYTES} bytes")
