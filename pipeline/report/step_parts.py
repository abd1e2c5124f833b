"""A step's time as the parts it adds up from, and the communication hidden behind compute.

The `points` table gives each term of a step (`t_compute_s`, `t_tp_comm_s`, ...), but not all
of them add to the step: with `overlap_tp` and `overlap_pp_ep` (the paper's published policy,
docs/model.md §7) TP and PP/EP bandwidth time runs during the matmuls and only what outlasts
them is on the critical path. `step_parts` splits each row's step into exposed parts that sum
to `step_time_s`, and reports apart what ran hidden behind compute.

Under the paper's model (rows with `t_latency_s`; docs/model.md §7, `step.step_time`):

    overlapped = o_PP·T_PPEP + o_TP·T_TP       exposed = (1−o_PP)·T_PPEP + (1−o_TP)·T_TP
    busy       = max(T_mm, overlapped) + exposed
    step       = busy + bubble + paid latency + DP (its excess over the pipeline with overlap_dp)
    bubble     = busy·f/(1−f) (1F1B), 0 (zero bubble)
    hidden     = min(T_mm, overlapped)         (and the DP time under the pipeline with overlap_dp)

The overlapped time that outlasts compute is charged to TP and PP/EP in proportion to their
overlapped times. Under realistic physics (no `t_latency_s`; docs/model.md R.6) a step's TP,
PP/EP and DP columns are already its exposed times and nothing is hidden: the step is the
pipeline's time plus the exposed DP reduction and the optimizer step
(`model.step.pipeline.pipeline_step_s`), the bubble f times the pipeline's time (f is fill and
drain over the pipeline's time, not over the step), and what is left (the optimizer step, the
logits) is `other`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from numpy.typing import NDArray

from pipeline.model.step.pipeline import bubble_time_s

Array = NDArray[np.float64]

EXPOSED_PARTS = (
    ("compute", "compute"),
    ("tp", "TP, exposed"),
    ("pp_ep", "PP/EP, exposed"),
    ("dp", "DP"),
    ("latency", "latency paid"),
    ("bubble", "pipeline bubble"),
    ("other", "other (optimizer, logits)"),
)
"""(key, legend label) of the parts a step adds up from, bottom to top of a stack."""


@dataclass(frozen=True, slots=True)
class Overlap:
    """A series' overlap flags (the `series` table's `option_overlap_*`); the defaults are the
    paper's published policy."""

    tp: bool = True
    pp_ep: bool = True
    dp: bool = False


def overlaps(series: pl.DataFrame | None) -> dict[str, Overlap]:
    """series_id -> its overlap flags, from the `series` table ({} without one)."""
    columns = ("option_overlap_tp", "option_overlap_pp_ep", "option_overlap_dp")
    if series is None or not set(columns) <= set(series.columns):
        return {}
    return {
        row["series_id"]: Overlap(*(bool(row[c]) for c in columns))
        for row in series.iter_rows(named=True)
    }


@dataclass(frozen=True, slots=True)
class StepParts:
    """Per row: the exposed parts (s) by `EXPOSED_PARTS` key, summing to `step_s`, and the
    communication time hidden behind compute (s), not part of the step."""

    exposed: dict[str, Array]
    hidden: Array
    step_s: Array


def _column(rows: pl.DataFrame, name: str) -> Array:
    return rows[name].fill_null(0.0).fill_nan(0.0).to_numpy().astype(np.float64)


def step_parts(rows: pl.DataFrame, overlap: Overlap = Overlap()) -> StepParts:
    """The exposed parts and hidden time of feasible `points` rows (module docstring)."""
    step = _column(rows, "step_time_s")
    t_mm, tp, ppep, dp = (
        _column(rows, c) for c in ("t_compute_s", "t_tp_comm_s", "t_pp_ep_comm_s", "t_dp_comm_s")
    )
    f = _column(rows, "bubble_fraction")
    zero = np.zeros_like(step)
    paper = rows["t_latency_s"].is_not_null().to_numpy() if "t_latency_s" in rows.columns else None
    if paper is None:
        paper = np.zeros(len(step), dtype=bool)
    # the paper's accounting
    o_tp, o_pp = float(overlap.tp), float(overlap.pp_ep)
    overlapped = o_pp * ppep + o_tp * tp
    beyond = np.maximum(overlapped - t_mm, 0.0)
    share_tp = np.divide(o_tp * tp, overlapped, out=np.zeros_like(step), where=overlapped > 0)
    busy = t_mm + beyond + (1.0 - o_pp) * ppep + (1.0 - o_tp) * tp
    bubble = np.where(f < 1.0, busy * f / np.where(f < 1.0, 1.0 - f, 1.0), 0.0)
    paid = _column(rows, "t_latency_paid_s")
    dp_hidden = zero if not overlap.dp else np.minimum(dp, np.maximum(step - busy - bubble, 0.0))
    paper_parts = {
        "compute": t_mm,
        "tp": beyond * share_tp + (1.0 - o_tp) * tp,
        "pp_ep": beyond * (1.0 - share_tp) + (1.0 - o_pp) * ppep,
        "dp": dp - dp_hidden,
        "latency": paid,
        "bubble": bubble,
    }
    paper_hidden = np.minimum(t_mm, overlapped) + dp_hidden
    # realistic physics: the columns are exposed times already
    optimizer = _column(rows, "t_optimizer_s") if "t_optimizer_s" in rows.columns else zero
    real_parts = {
        "compute": t_mm,
        "tp": tp,
        "pp_ep": ppep,
        "dp": dp,
        "latency": zero,
        "bubble": bubble_time_s(f, step, dp, optimizer),
    }
    exposed = {
        key: np.where(paper, paper_parts[key], real_parts[key]) for key, _ in EXPOSED_PARTS[:-1]
    }
    exposed["other"] = np.maximum(step - sum(exposed.values()), 0.0)
    hidden = np.where(paper, paper_hidden, 0.0)
    return StepParts(exposed, hidden, step)
