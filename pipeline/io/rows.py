"""Model results flattened into Arrow tables of the `points` and `thresholds` schemas.

A series (one hardware preset × scaling laws × batch law × duration, over a d_model grid) gives
one `point_rows` table and one `threshold_row` table. Both carry the series identity
(`SeriesKey`) and the run's `Provenance` on every row.
"""

from __future__ import annotations

import hashlib
import json
import math
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from pipeline import __version__
from pipeline.io.columns import PARTITION_COLUMNS, POINTS_SCHEMA, SCHEMA_VERSION, THRESHOLDS_SCHEMA
from pipeline.model.results import PointResult, SeriesLimits

MODEL_A_YEAR_S = 3.154e7
"""Y_A: Model A's year in seconds (spec §0); a reported month is Y_A / 12."""

MODEL_A_MONTH_S = MODEL_A_YEAR_S / 12.0

HASH_HEX_CHARS = 16
"""Length of a config hash: the first 64 bits of a sha256, ample for a few million scenarios."""


def canonical_json(obj: Any) -> str:
    """The config as compact JSON with sorted keys: equal configs give equal text.

    Accepts what a resolved Hydra config holds (dicts with string keys, lists, tuples, str, int,
    float, bool, None). `1` and `1.0` are different JSON and hash differently; NaN is refused.
    """
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def config_hash(obj: Any) -> str:
    """sha256 of `canonical_json(obj)`, first 16 hex characters."""
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()[:HASH_HEX_CHARS]


def point_config_hash(series_id: str, d_model: int) -> str:
    """The scenario of one point: its series' config (by `series_id`) plus the model width."""
    return config_hash({"series_id": series_id, "d_model": int(d_model)})


def new_run_id(now: datetime | None = None) -> str:
    """A run id that sorts by start time: UTC timestamp plus 8 random hex characters."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return f"{moment:%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}"


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

    @classmethod
    def from_config(
        cls,
        config: Mapping[str, Any],
        *,
        hardware: str,
        scaling: str,
        batch_law: str,
        duration_s: float,
    ) -> SeriesKey:
        """The key of a series whose full resolved config is `config` (hashed into series_id)."""
        return cls(hardware, scaling, batch_law, float(duration_s), config_hash(config))

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


def _point_row(p: PointResult, series: SeriesKey, provenance: Provenance) -> dict[str, Any]:
    shape = p.shape
    row: dict[str, Any] = {
        "hardware": series.hardware,
        "scaling": series.scaling,
        "batch_law": series.batch_law,
        "duration_s": float(series.duration_s),
        "series_id": series.series_id,
        "d_model": int(shape.d_model),
        "d_ff": int(shape.d_ff),
        "n_layers": int(shape.n_layers),
        "sparsity": int(shape.sparsity),
        "n_params": float(shape.n_params),
        "n_tokens": float(shape.n_tokens),
        "n_steps": float(shape.n_tokens) / float(shape.batch_tokens),
        "batch_seqs": int(shape.batch_seqs),
        "batch_tokens": int(shape.batch_tokens),
        "training_flop": float(shape.training_flop),
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
        return row  # layout and cost columns stay null, whatever the point carries
    if p.layout is None or p.cost is None:
        raise ValueError(f"feasible point d_model={shape.d_model} lacks a layout or a cost")
    lay, cost = p.layout, p.cost
    row |= {
        "n_gpu": float(lay.n_gpu),
        "dp": math.prod(lay.dp),
        "tp_model": math.prod(lay.tp_model),
        "tp_ff": math.prod(lay.tp_ff),
        "pp": math.prod(lay.pp),
        "ep": math.prod(lay.ep),
        "dp_levels": _levels(lay.dp),
        "tp_model_levels": _levels(lay.tp_model),
        "tp_ff_levels": _levels(lay.tp_ff),
        "pp_levels": _levels(lay.pp),
        "ep_levels": _levels(lay.ep),
        "pp_interleave": int(lay.pp_interleave),
        "microbatches": int(lay.microbatches),
        "nanobatch_tokens": int(lay.nanobatch_tokens),
        "zero_bubble": bool(lay.zero_bubble),
        "step_time_s": float(cost.step_time_s),
        "training_time_s": float(cost.training_time_s),
        "training_time_months": float(cost.training_time_s) / MODEL_A_MONTH_S,
        "utilization": float(cost.utilization),
        "t_compute_s": float(cost.t_compute_s),
        "t_tp_comm_s": float(cost.t_tp_comm_s),
        "t_pp_ep_comm_s": float(cost.t_pp_ep_comm_s),
        "t_dp_comm_s": float(cost.t_dp_comm_s),
        "t_latency_s": float(cost.t_latency_s),
        "t_latency_paid_s": float(cost.t_latency_paid_s),
        "bubble_fraction": float(cost.bubble_fraction),
        "bottleneck": cost.bottleneck.value,
        "matmul_bound": cost.matmul_bound.value,
    }
    return row


def _table(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """Rows into a table of `schema`: NaN becomes null; nulls in a required column are refused."""
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


def point_rows(
    points: Sequence[PointResult], series: SeriesKey, provenance: Provenance
) -> pa.Table:
    """The `points` rows of one series, sorted by d_model (one row per point, feasible or not)."""
    ordered = sorted(points, key=lambda p: p.shape.d_model)
    widths = [p.shape.d_model for p in ordered]
    if len(set(widths)) != len(widths):
        raise ValueError(f"series {series.series_id} has repeated d_model values: {widths}")
    return _table([_point_row(p, series, provenance) for p in ordered], POINTS_SCHEMA)


def threshold_row(
    series: SeriesKey,
    limits: SeriesLimits,
    *,
    n_points: int,
    alpha: float,
    t_lat_s: float,
    t_crit_flop: float | None,
    t_limit_flop: float | None,
    provenance: Provenance,
) -> pa.Table:
    """The one `thresholds` row of a series: its §11 limits and §12 closed forms.

    `linear_end_beyond_grid` is true when no recorded point fell to 0.8·u_eff
    (`limits.linear_end_flop` is None). Non-finite closed forms are stored as null.
    """

    def finite_or_none(x: float | None) -> float | None:
        return float(x) if x is not None and math.isfinite(x) else None

    row: dict[str, Any] = {
        "hardware": series.hardware,
        "scaling": series.scaling,
        "batch_law": series.batch_law,
        "duration_s": float(series.duration_s),
        "series_id": series.series_id,
        "linear_end_flop": limits.linear_end_flop,
        "last_feasible_flop": limits.last_feasible_flop,
        "first_infeasible_flop": limits.first_infeasible_flop,
        "max_utilization": limits.max_utilization,
        "linear_end_beyond_grid": limits.linear_end_flop is None,
        "n_points": int(n_points),
        "alpha": float(alpha),
        "t_lat_s": float(t_lat_s),
        "t_crit_flop": finite_or_none(t_crit_flop),
        "t_limit_flop": finite_or_none(t_limit_flop),
        "run_id": provenance.run_id,
        "config_hash": series.series_id,
        "schema_version": int(provenance.schema_version),
        "dmlimits_version": provenance.dmlimits_version,
        "created_at": provenance.created_at,
    }
    return _table([row], THRESHOLDS_SCHEMA)
