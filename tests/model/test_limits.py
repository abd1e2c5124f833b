"""Closed-form limits (Model B) and the simple latency bound against the spec (spec §12, §16.6)."""

from __future__ import annotations

import pytest

from pipeline.model.limits import (
    Anchors,
    closed_form_latency_s,
    latency_bound_params,
    node_nanobatch_tokens,
    node_shard_side,
    series_alpha,
    t_crit_flop,
    t_limit_flop,
)
from pipeline.model.records.scaling import ScalingLaws
from tests.presets import preset

CLOSED_FORM_REL_TOL = 2e-3
"""spec §16.6 prints four significant digits; α = 0.0303 is itself rounded."""
T_LAT_S = 9e-6

# α, T_limit, T_crit V100, A100, H100 — spec §16.6
CHECK_VALUES = [
    (-0.2, 1.569e29, 1.452e26, 1.238e27, 9.926e26),
    (-0.1, 1.255e30, 3.625e26, 4.418e27, 3.414e27),
    (0.0, 2.305e31, 1.305e27, 2.622e28, 1.924e28),
    (0.0303, 7.112e31, 2.142e27, 5.223e28, 3.758e28),
    (0.05, 1.605e32, 3.065e27, 8.594e28, 6.094e28),
    (0.1, 1.815e33, 8.910e27, 3.791e29, 2.575e29),
    (0.2, 2.625e36, 2.190e29, 3.253e31, 1.942e31),
]


@pytest.mark.parametrize(("alpha", "limit", "v100", "a100", "h100"), CHECK_VALUES)
def test_closed_forms_match_spec_table(
    alpha: float, limit: float, v100: float, a100: float, h100: float
) -> None:
    """T_limit and T_crit for V100, A100 and H100 equal spec §16.6 at t_lat = 9 µs."""
    assert t_limit_flop(alpha, T_LAT_S) == pytest.approx(limit, rel=CLOSED_FORM_REL_TOL)
    for name, expected in (("v100_sxm", v100), ("a100_sxm", a100), ("h100_sxm", h100)):
        assert t_crit_flop(preset(name), alpha) == pytest.approx(expected, rel=CLOSED_FORM_REL_TOL)


@pytest.mark.parametrize(
    ("name", "n_tokens", "a"),
    [("v100_sxm", 279.07, 26791.1), ("a100_sxm", 401.12, 16633.0), ("h100_sxm", 590.35, 26384.8)],
)
def test_node_quantities_match_spec(name: str, n_tokens: float, a: float) -> None:
    """Per-node nanobatch n and shard side a equal spec §16.6 to its printed digits."""
    hw = preset(name)
    assert node_nanobatch_tokens(hw) == pytest.approx(n_tokens, abs=0.005)
    assert node_shard_side(hw) == pytest.approx(a, abs=0.05)


def test_t_limit_scales_with_latency() -> None:
    """At α = 0, T_limit is 9.221e31 at 4.5 µs and 2.305e33 at 0.9 µs (spec §16.6)."""
    assert t_limit_flop(0.0, 4.5e-6) == pytest.approx(9.221e31, rel=CLOSED_FORM_REL_TOL)
    assert t_limit_flop(0.0, 0.9e-6) == pytest.approx(2.305e33, rel=CLOSED_FORM_REL_TOL)


def test_t_crit_growth_from_alpha_0_to_0_2() -> None:
    """From α = 0 to 0.2, T_crit grows 167.9× (V100), 1240.6× (A100), 1009.4× (H100)."""
    for name, factor in (("v100_sxm", 167.9), ("a100_sxm", 1240.6), ("h100_sxm", 1009.4)):
        hw = preset(name)
        assert t_crit_flop(hw, 0.2) / t_crit_flop(hw, 0.0) == pytest.approx(factor, rel=1e-3)


def test_series_alpha_dense_default_is_0_0303() -> None:
    """Default dense laws give α = 1/6 − 0.1364 ≈ 0.0303 (spec §16.6)."""
    assert series_alpha(ScalingLaws()) == pytest.approx(0.0303, abs=5e-4)


def test_closed_form_latency_is_9_us_on_h100() -> None:
    """Matmul latency plus four network hops is 4.5 + 4 × 1.125 = 9 µs on H100."""
    assert closed_form_latency_s(preset("h100_sxm")) == pytest.approx(9e-6, rel=1e-12)
    assert closed_form_latency_s(preset("h100_low_latency")) == pytest.approx(9e-7, rel=1e-9)


def test_latency_bound_is_about_400_trillion_parameters() -> None:
    """3 months, 4M-token batches, 120 layers and 9 µs bound N near 4e14 (paper §3)."""
    n = latency_bound_params(0.25 * 3.154e7, 4e6, 120, 9e-6)
    assert 3.5e14 < n < 4.5e14
    assert 1e31 < 120 * n**2 < 3e31  # C = 6·N·20N, about 2e31 FLOP


def test_flop_anchor_quirk_moves_limit_only_off_zero() -> None:
    """Q4 off (anchor at 3e23 FLOP) changes T_limit for α ≠ 0 and not at α = 0."""
    flop = Anchors(flop_anchor=True)
    assert t_limit_flop(0.0, T_LAT_S, flop) == t_limit_flop(0.0, T_LAT_S)
    assert t_limit_flop(0.1, T_LAT_S, flop) > t_limit_flop(0.1, T_LAT_S)
