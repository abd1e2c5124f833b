"""What a series yields beside its points: its limits and the closed forms, by the physics.

The thresholds (spec §11) and Model B (spec §12) are computed in `limits.py`; this module
holds the rules that choose between them, so that the model's fingerprint covers them too:
under realistic physics the linear-scaling end is measured from the series' peak
(docs/model.md R.7), and closed forms that diverge (α near 1/2) are infinite.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pipeline.model.limits import (
    Anchors,
    closed_form_latency_s,
    series_alpha,
    series_limits,
    t_crit_flop,
    t_limit_flop,
)
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.options import Quirks
from pipeline.model.records.results import PointResult, SeriesLimits
from pipeline.model.records.scaling import ScalingLaws
from pipeline.model.records.switches import Physics


def series_limits_under(
    points: Sequence[PointResult], u_eff: float, physics: Physics
) -> SeriesLimits:
    """The series' limits (spec §11); under realistic physics the linear-scaling end is the
    first size past the series' peak utilization at 0.8 of it (`linear_end_after_peak_flop`),
    as under paper physics for a series that starts below 0.8 · u_eff (`series_limits`)."""
    return series_limits(points, u_eff, paper_rule=physics.is_paper)


def closed_form_limits(
    hw: HardwareSpec,
    laws: ScalingLaws,
    quirks: Quirks,
    t_lat_s: float | None,
    anchors: Anchors,
) -> tuple[float, float, float, float]:
    """(α, t_lat, T_crit, T_limit) of a series (spec §12): α of its scaling laws, the given
    latency or the hardware's closed-form one (`closed_form_latency_s`); both limits infinite
    where the closed forms diverge (α near 1/2)."""
    alpha = series_alpha(laws, quirks)
    t_lat = t_lat_s if t_lat_s is not None else closed_form_latency_s(hw)
    try:
        limit = t_limit_flop(alpha, t_lat, anchors)
        crit = t_crit_flop(hw, alpha, anchors)
    except OverflowError:
        limit = crit = math.inf
    return alpha, t_lat, crit, limit
