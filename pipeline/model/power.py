"""Power and energy of a training run, and a site's power budget (docs/model.md §10.1).

A point's cluster draws P = N_GPU · TDP · server_overhead · PUE watts: every GPU at its
board power (TDP) the whole run, its share of the servers (host CPUs, memory, NICs, switches,
fans) as a factor over the GPUs, and the facility (cooling, power conversion) as the power
usage effectiveness PUE (The Green Grid 2007: total facility power over IT power). The run's
energy is E = P · T_train joules. Both are upper estimates: GPUs running large models draw
less than their rating (Newkirk et al. 2025, arXiv:2506.14551: 76% of an 8-GPU H100 node's
10.2 kW rating at most, in training).

The smallest sufficient cluster is also the one of least power, so a point whose cluster is
over the budget has no cluster within it: it is infeasible with reason `exceeds_power_budget`
(its layout and cost are kept, so the overshoot is visible).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.power import PowerSpec
from pipeline.model.records.results import InfeasibleReason, PointResult


def cluster_power_w(n_gpu: float, tdp_w: float, power: PowerSpec = PowerSpec()) -> float:
    """P = ((N_GPU · TDP) · server_overhead) · PUE watts: the cluster at its rated power."""
    return float(((n_gpu * tdp_w) * power.server_overhead) * power.pue)


def training_energy_j(power_w: float, training_time_s: float) -> float:
    """E = P · T_train joules: the run at its cluster's power from start to end."""
    return float(power_w * training_time_s)


def exceeds_power_budget(power_w: float, power: PowerSpec) -> bool:
    """True when the budget is set and the cluster's power is above it."""
    return power.max_power_w is not None and power_w > power.max_power_w


def with_power(point: PointResult, hw: HardwareSpec, power: PowerSpec) -> PointResult:
    """The point with its cluster's power and the run's energy; a feasible point over the
    budget becomes infeasible (`exceeds_power_budget`), layout and cost kept.

    Unchanged where the GPU's TDP is unknown (`hw.tdp_w` None) or the point has no layout.
    """
    if hw.tdp_w is None or point.layout is None or point.cost is None:
        return point
    p = cluster_power_w(point.layout.n_gpu, hw.tdp_w, power)
    e = training_energy_j(p, point.cost.training_time_s)
    if point.feasible and exceeds_power_budget(p, power):
        return dataclasses.replace(
            point,
            feasible=False,
            infeasible_reason=InfeasibleReason.EXCEEDS_POWER,
            power_w=p,
            energy_j=e,
        )
    return dataclasses.replace(point, power_w=p, energy_j=e)


def series_with_power(
    points: Sequence[PointResult], hw: HardwareSpec, power: PowerSpec, stop_at_infeasible: bool
) -> list[PointResult]:
    """Every point `with_power`; with `stop_at_infeasible`, the series ends at its first
    infeasible point, as the sweep does (spec §11)."""
    out: list[PointResult] = []
    for point in points:
        out.append(with_power(point, hw, power))
        if stop_at_infeasible and not out[-1].feasible:
            break
    return out
