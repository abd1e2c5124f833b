"""Model results flattened into rows of the `points`, `thresholds` and `series` tables.

A series (one hardware preset × scaling laws × batch law × duration, over a d_model grid) gives
its `points` rows (`point_dicts`), one `thresholds` row (`threshold_dict`) and one `series` row
(`series_dict`, its scenario), as dicts. All carry the series identity (`SeriesKey`) and the
run's `Provenance` on every row. The writer makes one Arrow table of each over many series
(`table_from_rows`, `pipeline.app.write.tables_of`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, cast

import pyarrow as pa

from pipeline.identity import canonical_json, point_config_hash
from pipeline.io.columns import PARTITION_COLUMNS, SCHEMA_VERSION
from pipeline.model.limits import linear_end_beyond_grid
from pipeline.model.memory.capacity import memory_capacity_bytes
from pipeline.model.records.hardware import peak_flop_per_s
from pipeline.model.records.results import PointResult, SeriesLimits
from pipeline.model.records.run import RunSpec
from pipeline.schema.scaling import BATCH_LAW_KEYS
from pipeline.units import MONTHS_PER_YEAR
from pipeline.version import __version__

if TYPE_CHECKING:
    from pipeline.model.records.switches import Physics
    from pipeline.schema import Scenario


@dataclass(frozen=True, slots=True)
class SeriesKey:
    """Identity of one series, written on every row: names of its config choices and its hash."""

    hardware: str
    """Hardware preset name (also a partition directory)."""
    scaling: str
    """Scaling-law choice, "dense" or "sparse" (also a partition directory)."""
    batch_law: str
    """Batch-size law name (also a partition directory)."""
    duration_s: float
    """Training-time budget τ in seconds."""
    series_id: str
    """`config_hash` of the series' full resolved config."""
    year_s: float
    """The scenario's year in seconds (`scaling.year_s`; spec §0, quirk Q5): a reported
    month is year_s / 12. Not a column of its own: the `series` table records it."""

    def columns(self) -> dict[str, Any]:
        """The series-identity columns every table starts with."""
        return {
            "hardware": self.hardware,
            "scaling": self.scaling,
            "batch_law": self.batch_law,
            "duration_s": float(self.duration_s),
            "series_id": self.series_id,
        }

    @property
    def month_s(self) -> float:
        """One reported month in seconds: year_s / 12."""
        return self.year_s / MONTHS_PER_YEAR

    @property
    def partition(self) -> dict[str, str]:
        """The hive partition values of this series' part files."""
        values = {"hardware": self.hardware, "scaling": self.scaling, "batch_law": self.batch_law}
        return {name: values[name] for name in PARTITION_COLUMNS}


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where rows come from; one per run, shared by every row the run writes."""

    run_id: str
    schema_version: int = SCHEMA_VERSION
    dmlimits_version: str = __version__
    created_at: datetime = field(default_factory=_utc_now)
    """A timezone-aware time; stored as UTC."""

    def __post_init__(self) -> None:
        if self.created_at.tzinfo is None or self.created_at.utcoffset() is None:
            raise ValueError(f"Provenance.created_at must be timezone-aware: {self.created_at!r}")


def _levels(factors: tuple[int, ...]) -> str:
    """Per-level factors as text, level 0 first: (1, 64) -> "1x64"."""
    return "x".join(str(int(f)) for f in factors)


TERA = 1e12
"""teraFLOP/s columns: FLOP/s / 1e12."""


def _run_columns(p: PointResult) -> dict[str, Any]:
    """The run columns of a point (docs/schema.md): a run's, a realistic grid row's from what
    its search chose (no time by operator class), none under paper physics."""
    cost = p.run_cost
    if cost is None:
        grid = p.grid_cost
        if grid is None:
            return {"run_name": p.run_name, "recompute": p.recompute}
        return {
            "run_name": p.run_name,
            "mfu": grid.mfu,
            "hfu": grid.hfu,
            "model_tflops_per_gpu": grid.model_flop_per_s_per_gpu / TERA,
            "hardware_tflops_per_gpu": grid.hardware_flop_per_s_per_gpu / TERA,
            "memory_per_gpu_bytes": grid.memory_per_gpu_bytes,
            "fits_memory": grid.fits_memory,
            "recompute": p.recompute,
        }
    return {
        "run_name": p.run_name,
        "mfu": float(cost.mfu),
        "hfu": float(cost.hfu),
        "model_tflops_per_gpu": cost.model_flop_per_s_per_gpu / TERA,
        "hardware_tflops_per_gpu": cost.hardware_flop_per_s_per_gpu / TERA,
        "memory_per_gpu_bytes": float(cost.memory_per_gpu_bytes),
        "fits_memory": bool(cost.fits_memory),
        "recompute": p.recompute,
        "t_matmul_s": float(cost.t_matmul_s),
        "t_attention_s": cost.t_attention_s,
        "t_norm_s": cost.t_norm_s,
        "t_elementwise_s": cost.t_elementwise_s,
        "t_optimizer_s": cost.t_optimizer_s,
    }


def _point_row(p: PointResult, series: SeriesKey, provenance: Provenance) -> dict[str, Any]:
    shape = p.shape
    counts = p.counts
    n_params = float(shape.n_params) if counts is None else counts.n_params
    n_tokens = float(shape.n_tokens) if counts is None else counts.n_tokens
    row: dict[str, Any] = {
        **series.columns(),
        "d_model": int(shape.d_model),
        "d_ff": int(shape.d_ff),
        "n_layers": int(shape.n_layers),
        "sparsity": int(shape.sparsity),
        "n_params": n_params,
        "n_tokens": n_tokens,
        "n_steps": n_tokens / float(shape.batch_tokens),
        "batch_seqs": float(shape.batch_seqs),
        "batch_tokens": float(shape.batch_tokens),
        "training_flop": float(shape.training_flop) if counts is None else counts.training_flop,
        "physics": p.physics,
        **_run_columns(p),
        "power_w": p.power_w,
        "energy_j": p.energy_j,
        "feasible": bool(p.feasible),
        "infeasible_reason": None,
        "run_id": provenance.run_id,
        "config_hash": point_config_hash(series.series_id, shape.d_model),
        "schema_version": int(provenance.schema_version),
        "dmlimits_version": provenance.dmlimits_version,
        "created_at": provenance.created_at,
    }
    if not p.feasible:
        if p.infeasible_reason is None:
            raise ValueError(f"infeasible point d_model={shape.d_model} has no infeasible_reason")
        row["infeasible_reason"] = p.infeasible_reason.value
        if p.layout is None or p.cost is None:
            return row  # no layout was evaluated: layout and cost columns stay null
    elif p.layout is None or p.cost is None:
        raise ValueError(f"feasible point d_model={shape.d_model} lacks a layout or a cost")
    lay, cost = p.layout, p.cost
    row |= {
        "n_gpu": float(lay.n_gpu),
        "dp": math.prod(lay.dp),
        "tp_model": math.prod(lay.tp_model),
        "tp_ff": math.prod(lay.tp_ff),
        "pp": math.prod(lay.pp),
        "ep": math.prod(lay.ep),
        "cp": math.prod(lay.cp),
        "dp_levels": _levels(lay.dp),
        "tp_model_levels": _levels(lay.tp_model),
        "tp_ff_levels": _levels(lay.tp_ff),
        "pp_levels": _levels(lay.pp),
        "ep_levels": _levels(lay.ep),
        "cp_levels": _levels(lay.cp),
        "pp_interleave": int(lay.pp_interleave),
        "microbatches": int(lay.microbatches),
        "nanobatch_tokens": int(lay.nanobatch_tokens),
        "zero_bubble": bool(lay.zero_bubble),
        "step_time_s": float(cost.step_time_s),
        "training_time_s": float(cost.training_time_s),
        "training_time_months": float(cost.training_time_s) / series.month_s,
        "utilization": float(cost.utilization),
        "t_compute_s": float(cost.t_compute_s),
        "t_tp_comm_s": float(cost.t_tp_comm_s),
        "t_pp_ep_comm_s": float(cost.t_pp_ep_comm_s),
        "t_dp_comm_s": float(cost.t_dp_comm_s),
        "t_latency_s": float(cost.t_latency_s),
        "t_latency_paid_s": float(cost.t_latency_paid_s),
        "q1_latency_hidden_s": p.q1_latency_hidden_s,
        "bubble_fraction": float(cost.bubble_fraction),
        "bottleneck": cost.bottleneck.value,
        "matmul_bound": None if cost.matmul_bound is None else cost.matmul_bound.value,
    }
    return row


def table_from_rows(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """Rows into a table of `schema`: NaN becomes null; nulls in a required column are refused,
    and so is a key the schema does not name (a renamed or misspelt column would otherwise be
    dropped, and its column left null)."""
    names = set(schema.names)
    unknown = sorted({key for row in rows for key in row if key not in names})
    if unknown:
        raise ValueError(f"rows hold keys the schema has no column for: {', '.join(unknown)}")
    arrays = []
    for f in schema:
        values = [row.get(f.name) for row in rows]
        try:
            array = pa.array(values, type=f.type, from_pandas=True)  # from_pandas: NaN -> null
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
            raise ValueError(f"column {f.name!r} ({f.type}): {exc}") from exc
        if not f.nullable and array.null_count:
            raise ValueError(f"column {f.name!r} is required but {array.null_count} rows are null")
        arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=schema)


def point_dicts(
    points: Sequence[PointResult], series: SeriesKey, provenance: Provenance
) -> list[dict[str, Any]]:
    """The `points` rows of one series as dicts, sorted by d_model (one row per point, feasible
    or not)."""
    ordered = sorted(points, key=lambda p: p.shape.d_model)
    widths = [p.shape.d_model for p in ordered]
    if len(set(widths)) != len(widths):
        raise ValueError(f"series {series.series_id} has repeated d_model values: {widths}")
    return [_point_row(p, series, provenance) for p in ordered]


def threshold_dict(
    series: SeriesKey,
    limits: SeriesLimits,
    *,
    n_points: int,
    alpha: float,
    t_lat_s: float,
    t_crit_flop: float | None,
    t_limit_flop: float | None,
    provenance: Provenance,
    model_b_inputs: tuple[float | None, float | None, float | None] | None = None,
) -> dict[str, Any]:
    """The one `thresholds` row of a series: its spec §11 limits and spec §12 closed forms.

    `linear_end_beyond_grid` is true when some point is feasible and none fell to the
    linear-scaling end (`limits.linear_end_flop` is None); false when it was reached or when no
    point is feasible (nothing ran, so nothing lasted past the grid); null for a concrete run
    (`end_reason` `run`: one point and no grid, nothing to outlast). Non-finite closed forms are
    stored as null.
    `model_b_inputs` are the budget (s), batch anchor (tokens) and tokens per parameter the
    closed forms used (`ClosedForms`); null when not given.
    """

    def finite_or_none(x: float | None) -> float | None:
        return float(x) if x is not None and math.isfinite(x) else None

    row: dict[str, Any] = {
        **series.columns(),
        "linear_end_flop": limits.linear_end_flop,
        "last_feasible_flop": limits.last_feasible_flop,
        "first_infeasible_flop": limits.first_infeasible_flop,
        "max_utilization": limits.max_utilization,
        "linear_end_beyond_grid": linear_end_beyond_grid(limits),
        "n_points": int(n_points),
        "linear_end_basis": limits.linear_end_basis,
        "wall_flop": limits.wall_flop,
        "end_reason": limits.end_reason,
        "wall_reason": limits.wall_reason,
        "alpha": float(alpha),
        "t_lat_s": float(t_lat_s),
        "t_crit_flop": finite_or_none(t_crit_flop),
        "t_limit_flop": finite_or_none(t_limit_flop),
        **dict(
            zip(
                ("model_b_duration_s", "model_b_b0_tokens", "model_b_tokens_per_param"),
                model_b_inputs or (None, None, None),
                strict=True,
            )
        ),
        "run_id": provenance.run_id,
        "config_hash": series.series_id,
        "schema_version": int(provenance.schema_version),
        "dmlimits_version": provenance.dmlimits_version,
        "created_at": provenance.created_at,
    }
    return row


def number_text(x: float) -> str:
    """A number in its shortest exact form: 9e11 -> "9e11", 1.125e-06 -> "1.125e-6", inf -> "inf"."""
    if not math.isfinite(x):
        return repr(float(x))
    if x == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(float(x))).normalize().as_tuple()
    mantissa = "".join(map(str, digits))
    power = cast(int, exponent) + len(mantissa) - 1  # an int for every finite number
    if len(mantissa) > 1:
        mantissa = f"{mantissa[0]}.{mantissa[1:]}"
    return f"{'-' if sign else ''}{mantissa}e{power}"


@functools.lru_cache(maxsize=64)
def physics_json(physics: Physics) -> str:
    """The `series.physics_json` text: the physics' switches and constants as canonical JSON,
    kept per physics (a sweep's series share a few)."""
    return canonical_json(dataclasses.asdict(physics))


def _number_levels(values: Sequence[float]) -> str:
    """Per-level numbers as text, level 0 first: (9e11, 1e11) -> "9e11x1e11"."""
    return "x".join(number_text(v) for v in values)


RUN_UNUSED_LAW_COLUMNS = (
    "ff_ratio",
    "depth_coefficient",
    "depth_exponent",
    "experts_at_reference",
    "reference_d_model",
    "batch_kind",
    "batch_reference_tokens",
    "batch_reference_flop",
    "batch_coefficient",
    "batch_exponent",
)
"""`series` columns of the scaling and batch laws a concrete run does not read (its shape and
batch are its own, `run_json`): null on a run's row."""


def _run_model_columns(run: RunSpec) -> dict[str, Any]:
    """A run's `series` columns of the model it trains, one width: its own sparsity, sequence
    length, K/V heads and width where a grid series has its laws' and grid's, and no value for
    the laws it does not read (`RUN_UNUSED_LAW_COLUMNS`; `tokens_per_param` too when the run
    gives its tokens)."""
    shape = run.shape
    unused = (*RUN_UNUSED_LAW_COLUMNS, *(("tokens_per_param",) if run.tokens is not None else ()))
    return {
        "sparse": shape.experts > 1,
        "seq_len": int(shape.seq_len),
        "kv_heads": int(shape.kv_heads),
        "dropout": bool(shape.dropout),
        "n_d_models": 1,
        "d_model_min": int(shape.hidden),
        "d_model_max": int(shape.hidden),
        "d_models": _levels((shape.hidden,)),
        **dict.fromkeys(unused),
    }


def series_dict(
    scenario: Scenario,
    series: SeriesKey,
    *,
    whole_grid: bool,
    sweep_point: str,
    provenance: Provenance,
    overrides: str | None = None,
) -> dict[str, Any]:
    """The one `series` row of a series: its whole scenario in SI units, and its sweep point.

    `sweep_point` is the JSON text of the choices and axis values that made the series
    (`pipeline.sweep.SweepSeries.sweep_point`), "{}" for a run without a sweep; `overrides`
    the JSON list of the overrides that made it (`pipeline.app.write.overrides_json`), None
    when they are unknown.
    """
    hw, laws, cf = scenario.hardware, scenario.laws, scenario.closed_form
    batch_keys = BATCH_LAW_KEYS[laws.batch.kind]
    d_models = scenario.d_models
    row: dict[str, Any] = {
        **series.columns(),
        "flop_per_clock_per_thread": float(hw.flop_per_clock_per_thread),
        "sms": int(hw.sms),
        "max_clock_hz": float(hw.max_clock_hz),
        "u_eff": float(hw.u_eff),
        "peak_flop_per_s": float(peak_flop_per_s(hw)),
        "hbm_bandwidth_bytes_per_s": float(hw.hbm_bandwidth_bytes_per_s),
        "l2_bandwidth_bytes_per_s": float(hw.l2_bandwidth_bytes_per_s),
        "l2_bytes": float(hw.l2_bytes),
        "register_bytes_per_block": float(hw.register_bytes_per_block),
        "dsmem": bool(hw.dsmem),
        "hbm_bytes": float(hw.hbm_bytes),
        "matmul_latency_s": float(hw.matmul_latency_s),
        "tdp_w": hw.tdp_w,
        "fp8_flop_per_s": hw.fp8_flop_per_s,
        "fp8_u_eff_ratio": hw.fp8_u_eff_ratio,
        "hbm_device_ratio": hw.hbm_device_ratio,
        "memory_capacity_bytes": float(memory_capacity_bytes(hw, scenario.physics)),
        "matmul_speedup_2025": hw.matmul_speedup_2025,
        "n_net_levels": hw.n_levels,
        "level_sizes": _levels(hw.level_sizes),
        "net_bandwidth_bytes_per_s": _number_levels(hw.net_bandwidth_bytes_per_s),
        "net_latency_s": _number_levels(hw.net_latency_s),
        "level_size_l0": int(hw.level_sizes[0]) if hw.level_sizes else None,
        "net_bandwidth_l0_bytes_per_s": float(hw.net_bandwidth_bytes_per_s[0]),
        "net_bandwidth_top_bytes_per_s": float(hw.net_bandwidth_bytes_per_s[-1]),
        "net_latency_l0_s": float(hw.net_latency_s[0]),
        "net_latency_top_s": float(hw.net_latency_s[-1]),
        "nics_per_node": hw.nics_per_node,
        "sparse": bool(laws.sparse),
        "ff_ratio": int(laws.ff_ratio),
        "depth_coefficient": float(laws.depth_coefficient),
        "depth_exponent": float(laws.depth_exponent),
        "experts_at_reference": float(laws.experts_at_reference),
        "reference_d_model": float(laws.reference_d_model),
        "tokens_per_param": float(laws.tokens_per_param),
        "seq_len": int(laws.seq_len),
        "kv_heads": laws.kv_heads,
        "dropout": bool(laws.dropout),
        "batch_kind": laws.batch.kind.value,
        **{
            f"batch_{key}": float(getattr(laws.batch, key)) if key in batch_keys else None
            for key in ("reference_tokens", "reference_flop", "coefficient", "exponent")
        },
        "year_s": float(scenario.year_s),
        "n_d_models": len(d_models),
        "d_model_min": int(d_models[0]),
        "d_model_max": int(d_models[-1]),
        "d_models": _levels(d_models),
        **(_run_model_columns(scenario.run) if scenario.run is not None else {}),
        **{
            f"option_{f.name}": getattr(scenario.options, f.name)
            for f in dataclasses.fields(scenario.options)
            if f.name != "quirks"
        },
        **{
            f"quirk_{f.name}": getattr(scenario.options.quirks, f.name)
            for f in dataclasses.fields(scenario.options.quirks)
        },
        "closed_form_b0_tokens": float(cf.b0_tokens),
        "closed_form_l0_layers": float(cf.l0_layers),
        "closed_form_t0_flop": float(cf.t0_flop),
        "closed_form_duration_s": float(cf.duration_s),
        "closed_form_t_lat_s": None if cf.t_lat_s is None else float(cf.t_lat_s),
        "power_server_overhead": float(scenario.power.server_overhead),
        "power_pue": float(scenario.power.pue),
        "max_power_w": scenario.power.max_power_w,
        "physics": scenario.physics.name,
        "physics_json": physics_json(scenario.physics),
        "run_json": None
        if scenario.run is None
        else canonical_json(dataclasses.asdict(scenario.run)),
        "whole_grid": bool(whole_grid),
        "sweep_point": sweep_point,
        "overrides": overrides,
        "run_id": provenance.run_id,
        "config_hash": series.series_id,
        "schema_version": int(provenance.schema_version),
        "dmlimits_version": provenance.dmlimits_version,
        "created_at": provenance.created_at,
    }
    if (layout := scenario.fixed_layout) is not None:
        row |= {
            "fixed_n_gpu": float(layout.n_gpu),
            "fixed_microbatches": int(layout.microbatches),
            "fixed_zero_bubble": bool(layout.zero_bubble),
        }
        for degree in ("dp", "tp_model", "tp_ff", "pp", "ep"):
            row[f"fixed_{degree}_levels"] = _levels(getattr(layout, degree))
    return row
