"""Model B's closed forms follow the scenario: duration, batch law, tokens per parameter
(spec §12, docs/model.md §10), and stay the paper's values for the paper's scenario."""

from __future__ import annotations

import math

import pytest

from pipeline.execute.series import closed_forms
from pipeline.model.limits import (
    MODEL_B_DURATION_S,
    REFERENCE_BATCH_TOKENS,
    Anchors,
    model_b_batch_tokens,
    model_b_duration_s,
    t_crit_flop,
    t_limit_flop,
)
from pipeline.model.series import ClosedForms
from pipeline.schema import compose_config, load_scenario
from tests.presets import preset

SPEC_REL_TOL = 2e-3
"""spec §16.6 prints four significant digits."""


def closed(*overrides: str) -> ClosedForms:
    """The closed forms of the default scenario with `overrides`."""
    return closed_forms(load_scenario(compose_config(list(overrides))))


def test_closed_forms_paper_scenario_keeps_spec_values() -> None:
    """The default scenario's T_crit and T_limit are spec §16.6's 3.758e28 and 7.112e31."""
    cf = closed()
    assert cf.duration_s == MODEL_B_DURATION_S
    assert cf.b0_tokens == REFERENCE_BATCH_TOKENS
    assert cf.tokens_per_param == 20.0
    assert math.isclose(cf.t_crit_flop, 3.758e28, rel_tol=SPEC_REL_TOL)
    assert math.isclose(cf.t_limit_flop, 7.112e31, rel_tol=SPEC_REL_TOL)


def test_closed_forms_paper_constants_are_bit_identical() -> None:
    """k = 20 and the paper's τ_B reproduce the paper's constants 3/320 and 1/960 exactly."""
    alpha, t_lat, r = 0.0303, 9e-6, (4e6 / 100.0) * 3e23 ** (-0.0303)
    paper_limit = 2.0 * ((3.0 / 320.0) * (r * MODEL_B_DURATION_S / t_lat) ** 2) ** (
        1.0 / (1.0 - 2.0 * alpha)
    )
    assert t_limit_flop(alpha, t_lat, Anchors()) == paper_limit
    assert model_b_duration_s(3) == MODEL_B_DURATION_S


@pytest.mark.parametrize(
    ("override", "direction"),
    [
        ("scaling.duration_months=6", 1),
        ("batch.reference_tokens=8388608", 1),
        ("scaling.tokens_per_param=200", -1),
    ],
)
def test_closed_forms_follow_the_scenario(override: str, direction: int) -> None:
    """A longer budget or larger batch raises both limits; more tokens per parameter lowers them."""
    base, moved = closed(), closed(override)
    assert (moved.t_limit_flop - base.t_limit_flop) * direction > 0
    assert (moved.t_crit_flop - base.t_crit_flop) * direction > 0


def test_closed_forms_duration_and_batch_enter_as_a_product() -> None:
    """Twice the budget and twice the batch move T_limit alike: r·τ_B is what the wall sees."""
    longer, larger = closed("scaling.duration_months=6"), closed("batch.reference_tokens=8388608")
    assert longer.duration_s == 2 * MODEL_B_DURATION_S
    assert larger.b0_tokens == 2 * REFERENCE_BATCH_TOKENS
    assert math.isclose(longer.t_limit_flop, larger.t_limit_flop, rel_tol=1e-12)


def test_closed_forms_duration_in_days_is_the_same_seconds() -> None:
    """A budget given in days is the same seconds in Model B: no month, no year conversion."""
    cf = closed("scaling.duration_months=null", "scaling.duration_days=182.625")
    assert cf.duration_s == 182.625 * 86400


def test_closed_forms_explicit_model_b_duration_wins() -> None:
    """closed_form.duration_days set by hand is Model B's budget, whatever scaling's duration."""
    cf = closed("scaling.duration_months=6", "closed_form.duration_days=91.3125")
    assert cf.duration_s == MODEL_B_DURATION_S
    assert cf.t_limit_flop == closed().t_limit_flop


@pytest.mark.parametrize("batch", ["critical", "constant", "deepseek", "zhang2024"])
def test_shipped_batch_laws_keep_the_paper_anchor(batch: str) -> None:
    """Each shipped batch law anchors Model B at the paper's b0 = 4e6 tokens exactly."""
    laws = load_scenario(compose_config([f"batch={batch}"])).laws
    assert model_b_batch_tokens(4e6, 3e23, laws) == 4e6


def test_u_eff_does_not_enter_model_b() -> None:
    """T_crit takes the node's peak rate (spec §12): u_eff moves the simulator, not Model B,
    and the summary says so."""
    hw = preset("h100_sxm")
    half = closed("hardware.u_eff=0.5")
    assert half.t_crit_flop == closed().t_crit_flop == t_crit_flop(hw, half.alpha)
