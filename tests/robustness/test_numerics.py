"""No overflow, division by zero or silent NaN over the whole paper grid, up to 2.5e39 FLOP.

Each series is evaluated on every grid width (output.whole_grid) with numpy floating-point
warnings raised as errors, then flattened into the rows a run writes. Rows may be null only
where docs/schema.md says: layout and cost columns of rows without a layout (every
infeasible point of a search), the limits a series does
not reach, closed forms without a finite value. Python float arithmetic raises on overflow and
division by zero by itself; a NaN or infinity that slipped through is caught by the checks.

The tests at the end are regressions for model bugs found here: zero latency, α ≥ 1/2 and
batches beyond exact integer range.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import joblib
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from pipeline.execute.series import SeriesOutcome, evaluate_series
from pipeline.io.columns import COST_FIELDS, LAYOUT_FIELDS, RUN_FIELDS, THRESHOLDS_SCHEMA
from pipeline.io.rows import Provenance
from pipeline.schema import Scenario, compose_config, load_scenario
from tests.io.helpers import outcome_tables
from tests.robustness.conftest import TINY_GRID

pytestmark = pytest.mark.filterwarnings("ignore::pipeline.schema.plausible.PlausibilityWarning")
"""Values far beyond every accelerator are the point here, not a slip to warn about."""
PAPER_GRID_WIDTHS = 55
"""f · 2^i, f odd in 1..15, i in 11..21, from 12288 to 1572864 (spec §2.2)."""
SPARSE_MAX_FLOP = 2.4e39
CASES = {
    # (id): overrides; every case is run dense and sparse
    "h100_sxm": [],
    "infinite_network": ["hardware=h100_infinite_network_low_latency"],
    "picosecond_latency": [
        "hardware.matmul_latency_us=1e-6",
        "hardware.network.latency_us=[1e-6,1e-6]",
    ],
}
LAYOUT_AND_COST = [f.name for f in LAYOUT_FIELDS + COST_FIELDS]
"""Points columns that are null exactly on a search's infeasible rows (docs/schema.md: no layout)."""
RUN_ONLY = [f.name for f in RUN_FIELDS if f.name != "physics"]
"""Points columns that are null on every grid row (docs/schema.md, "Run and realistic physics")."""


def scenario(overrides: Sequence[str]) -> Scenario:
    return load_scenario(compose_config(list(overrides)))


def evaluate_strict(s: Scenario, whole_grid: bool = True) -> SeriesOutcome:
    """evaluate_series with every numpy floating-point warning (underflow too) an error."""
    with np.errstate(all="raise"):
        return evaluate_series(s, whole_grid=whole_grid)


def rows(outcome: SeriesOutcome) -> tuple[pa.Table, pa.Table]:
    """The points and thresholds rows a run writes for this outcome."""
    return outcome_tables(outcome, Provenance("numerics"))


@pytest.fixture(scope="module")
def outcomes() -> dict[str, SeriesOutcome]:
    """Every case, dense and sparse, on the whole paper grid; two worker processes."""
    keys = [(name, law) for name in CASES for law in ("dense", "sparse")]
    scenarios = [
        scenario([*CASES[name], f"scaling={law}", "scaling.grid.max_d_model=1572864"])
        for name, law in keys
    ]
    done = joblib.Parallel(n_jobs=2)(joblib.delayed(evaluate_strict)(s) for s in scenarios)
    return {f"{name}-{law}": o for (name, law), o in zip(keys, done, strict=True)}


OUTCOME_IDS = [f"{name}-{law}" for name in CASES for law in ("dense", "sparse")]


@pytest.mark.slow
@pytest.mark.parametrize("case", OUTCOME_IDS)
def test_whole_grid_points_are_finite_or_say_why(
    outcomes: dict[str, SeriesOutcome], case: str
) -> None:
    """Every width is evaluated; feasible points are finite numbers, infeasible ones carry a reason."""
    outcome = outcomes[case]
    assert len(outcome.points) == PAPER_GRID_WIDTHS
    if case.endswith("sparse"):
        assert max(p.shape.training_flop for p in outcome.points) > SPARSE_MAX_FLOP
    u_eff = outcome.scenario.hardware.u_eff
    for p in outcome.points:
        assert math.isfinite(p.shape.training_flop)
        assert math.isfinite(p.shape.n_params)
        if not p.feasible:
            assert p.infeasible_reason is not None
            continue
        assert p.cost is not None
        values = [v for v in vars_of(p.cost) if isinstance(v, float)]
        assert all(math.isfinite(v) and v >= 0.0 for v in values), p.cost
        assert 0.0 < p.cost.utilization <= u_eff * (1.0 + 1e-12)
        assert p.cost.training_time_s < outcome.scenario.duration_s


def vars_of(record: object) -> list[object]:
    """The field values of a slotted dataclass."""
    return [getattr(record, name) for name in type(record).__slots__]  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.parametrize("case", OUTCOME_IDS)
def test_whole_grid_rows_are_null_only_where_documented(
    outcomes: dict[str, SeriesOutcome], case: str
) -> None:
    """No NaN in any float column; nulls only in the columns and rows docs/schema.md names."""
    points, thresholds = rows(outcomes[case])
    for table in (points, thresholds):
        for field in table.schema:
            if pa.types.is_floating(field.type):
                assert not pc.any(pc.is_nan(table.column(field.name))).as_py(), field.name
    infeasible = pc.invert(points.column("feasible"))
    for name in LAYOUT_AND_COST:
        assert points.column(name).is_null().equals(infeasible), name
    assert points.column("infeasible_reason").is_valid().equals(infeasible)
    assert all(points.column(name).null_count == points.num_rows for name in RUN_ONLY)
    assert points.column("physics").null_count == 0
    required = [f.name for f in THRESHOLDS_SCHEMA if not f.nullable]
    assert all(thresholds.column(name).null_count == 0 for name in required)
    cf = outcomes[case].closed_forms
    assert thresholds.column("t_limit_flop").null_count == (not math.isfinite(cf.t_limit_flop))
    assert thresholds.column("t_crit_flop").null_count == (not math.isfinite(cf.t_crit_flop))


@pytest.mark.slow
def test_infinite_network_has_no_network_time(outcomes: dict[str, SeriesOutcome]) -> None:
    """With unbounded bandwidth every bandwidth time is exactly 0 and T_crit does not exist."""
    outcome = outcomes["infinite_network-dense"]
    for p in outcome.points:
        if p.cost is not None:
            assert p.cost.t_tp_comm_s == 0.0
            assert p.cost.t_pp_ep_comm_s == 0.0
            assert p.cost.t_dp_comm_s == 0.0
    assert outcome.closed_forms.t_crit_flop == math.inf


# Regression tests for the model bugs these checks found (fixed in pipeline/model).


def test_zero_latency_series_has_no_latency_wall() -> None:
    """All latencies 0 (allowed) evaluate, and T_limit, with no latency to bound it, is infinite."""
    outcome = evaluate_strict(
        scenario(["hardware.matmul_latency_us=0", "hardware.network.latency_us=[0,0]", *TINY_GRID])
    )
    assert outcome.closed_forms.t_limit_flop == math.inf


def test_alpha_one_half_has_no_closed_form() -> None:
    """A batch exponent giving α = 1/2 exactly evaluates, with both closed forms infinite (null)."""
    outcome = evaluate_strict(scenario(["batch.exponent=0.6363900807214021", *TINY_GRID]))
    assert outcome.closed_forms.alpha == 0.5
    assert outcome.closed_forms.t_limit_flop == math.inf


def test_alpha_above_one_half_has_no_closed_form() -> None:
    """α > 1/2 (batch.exponent = 1) gives no finite T_crit or T_limit, as docs/schema.md says."""
    outcome = evaluate_strict(scenario(["batch.exponent=1.0", *TINY_GRID]))
    assert outcome.closed_forms.alpha > 0.5
    assert outcome.closed_forms.t_limit_flop == math.inf
    assert outcome.closed_forms.t_crit_flop == math.inf


def test_batch_beyond_int64_is_infeasible_not_a_crash() -> None:
    """A batch law whose batch exceeds int64 tokens gives rows with a reason instead of a crash."""
    outcome = evaluate_strict(scenario(["batch=deepseek", "batch.exponent=1.5", *TINY_GRID]))
    assert all(p.infeasible_reason is not None for p in outcome.points if not p.feasible)


def test_batch_beyond_int64_rows_can_be_written() -> None:
    """The rows of a too-large batch are written like any other infeasible row."""
    outcome = evaluate_strict(scenario(["batch=deepseek", "batch.exponent=1.5", *TINY_GRID]))
    points, _ = rows(outcome)
    assert points.num_rows == len(outcome.points)
