"""The output tables' columns: names, Arrow types and nullability (docs/schema.md explains each).

Each table's schema is a list of field groups below; the table registry (`pipeline.io.tables`)
says which tables there are and how each is laid out, sorted and written.

Conventions: every dimensioned column carries its unit as a suffix (`_s`, `_flop`, `_tokens`);
integers are signed; no nested types (per-level factors are strings such as "1x64");
a missing value is null, never NaN. A non-nullable field is present on every row.

Versioning: renaming, retyping or removing a column, or changing its meaning or unit, bumps
`SCHEMA_VERSION`. Adding a nullable column bumps it too and records the column in `ADDED_IN`,
so readers (`pipeline.io.read`) know which columns a part of each version holds: an older part
reads with the new columns null, and a part lacking a column of its own version is refused.
Every change is listed in docs/schema.md's changelog.
"""

from __future__ import annotations

import pyarrow as pa

SCHEMA_VERSION = 18
"""Written into every row's `schema_version` column (2: `series.overrides`, the model's version
in `series_id`, the run and physics columns of `points`; 3: the fitted trajectory's columns of
`forecasts`, and the `sources`, `observed_runs` and `source_rejects` tables; how a series ended
and its wall, the closed forms' inputs, power and energy; 4: the wall of each year of the moving
frontier, `frontier.wall_flop` and `end_reason`, where `forecasts.moving_wall_year` is reached;
5: the observed batch law's fit in `sources`, how each run was trained in `observed_runs`, the
`reality` table (the model's answer to each observed run), the
years of `forecasts` passed by the run date, and that date;
`points.q1_latency_hidden_s`, the latency per step quirk Q1 drops from a row's layout;
`series.fp8_flop_per_s`, the GPU's FP8 peak; `series.kv_heads` and `series.nics_per_node`;
`points.cp` and `cp_levels`, the context-parallel degree, which `points.dp` no longer holds;
6: `reality.precision`, the number format of the model's answer to an observed run;
8: `series.fp8_u_eff_ratio`, the fraction of its FP8 peak a GPU's FP8 matmuls sustain over
the fraction of the 16-bit peak its 16-bit ones do; 9: `series.hbm_device_ratio`, the driver's
count of a GPU's memory over its datasheet's, and `series.memory_capacity_bytes`, the capacity
the memory checks read; 10: `series.matmul_speedup_2025`, how much faster a GPU's GEMMs run
under the 2025 software than at `efficiency.matmul`, `physics.stack`; 11: a run row's
`points.nanobatch_tokens` is the schema's b = B_tok / (N_DP · N_CP · m · S), as a grid row's,
where it held the run's micro-batch tokens on a GPU; a run's `thresholds.linear_end_beyond_grid`
and `linear_end_basis` are null, no linear end to reach or outlast; 12: a `forecasts` threshold
the observed runs reached is dated by the first run reaching it and alone is `already_passed`,
and `data_as_of` is the newest run the fit could see, up to its window's end; 13:
`forecasts.moving_without_threshold`, the moving years null because no projected grid has
their threshold; 14: `forecasts.moving_projected`, whether the series' hardware was projected
at all, so a null moving year of a series never projected is not read as one not reached;
15: `series.dropout`, whether the transformer the series times trains with dropout; 16:
`observed_runs.fit_hash` and `forecasts.fit_hash`, the fit the frontier flags were drawn
under, which keys the `observed_runs` part, so runs of other fits into one root keep theirs;
17: `frontier.linear_end_beyond_grid`, so a year's null `linear_end_flop` says whether linear
scaling outlasted its grid or no point was feasible; 18: `forecasts.year_null_reasons` and
`uncertainty.budget_null_reason`, why each null year and each null variance share is null)."""

PARTITION_COLUMNS = ("hardware", "scaling", "batch_law")
"""Hive partition keys, outermost first: ROOT/<table>/hardware=H/scaling=S/batch_law=B/.

They are directory names only, not stored inside the part files."""


def _required(name: str, type_: pa.DataType) -> pa.Field:
    return pa.field(name, type_, nullable=False)


def _optional(name: str, type_: pa.DataType) -> pa.Field:
    return pa.field(name, type_, nullable=True)


TIMESTAMP_UTC = pa.timestamp("us", tz="UTC")

SERIES_FIELDS = [
    _required("hardware", pa.string()),
    _required("scaling", pa.string()),
    _required("batch_law", pa.string()),
    _required("duration_s", pa.float64()),
    _required("series_id", pa.string()),
]
"""Series identity: the hardware preset, scaling laws and batch law by name, the training-time
budget, and `series_id`, the hash of the series' full resolved config (`identity.config_hash`)."""

SHAPE_FIELDS = [
    _required("d_model", pa.int64()),
    _required("d_ff", pa.int64()),
    _required("n_layers", pa.int64()),
    _required("sparsity", pa.int64()),
    _required("n_params", pa.float64()),
    _required("n_tokens", pa.float64()),
    _required("n_steps", pa.float64()),
    _required("batch_seqs", pa.float64()),
    _required("batch_tokens", pa.float64()),
    _required("training_flop", pa.float64()),
]
"""Model shape and workload (spec §1-§2). `n_params` is float64 because it reaches 1.45e20,
past int64; `n_tokens`, `n_steps` (= n_tokens / batch_tokens, not rounded) and `training_flop`
are real numbers in the model too."""

LAYOUT_FIELDS = [
    _optional("n_gpu", pa.float64()),
    _optional("dp", pa.int64()),
    _optional("tp_model", pa.int64()),
    _optional("tp_ff", pa.int64()),
    _optional("pp", pa.int64()),
    _optional("ep", pa.int64()),
    _optional("cp", pa.int64()),
    _optional("dp_levels", pa.string()),
    _optional("tp_model_levels", pa.string()),
    _optional("tp_ff_levels", pa.string()),
    _optional("pp_levels", pa.string()),
    _optional("ep_levels", pa.string()),
    _optional("cp_levels", pa.string()),
    _optional("pp_interleave", pa.int64()),
    _optional("microbatches", pa.int64()),
    _optional("nanobatch_tokens", pa.int64()),
    _optional("zero_bubble", pa.bool_()),
]
"""The chosen parallel layout (spec §5, §7); null when the point is infeasible. Degrees are
totals; `*_levels` give the per-network-level factors, level 0 (innermost) first, joined by "x".
`n_gpu` is double (float64): the search tries up to S·2^59 GPUs (beyond int64 for S > 16, and reached by
extreme MoE sizes under fast batch laws); S·2^i is exact in float64."""

COST_FIELDS = [
    _optional("step_time_s", pa.float64()),
    _optional("training_time_s", pa.float64()),
    _optional("training_time_months", pa.float64()),
    _optional("utilization", pa.float64()),
    _optional("t_compute_s", pa.float64()),
    _optional("t_tp_comm_s", pa.float64()),
    _optional("t_pp_ep_comm_s", pa.float64()),
    _optional("t_dp_comm_s", pa.float64()),
    _optional("t_latency_s", pa.float64()),
    _optional("t_latency_paid_s", pa.float64()),
    _optional("q1_latency_hidden_s", pa.float64()),
    _optional("bubble_fraction", pa.float64()),
    _optional("bottleneck", pa.string()),
    _optional("matmul_bound", pa.string()),
]
"""The layout's cost (spec §6-§8); null when the point is infeasible. The `t_*_s` terms are per
optimizer step, as in `StepCost`; multiply by `n_steps` for the run totals of spec §8."""

RUN_FIELDS = [
    _optional("physics", pa.string()),
    _optional("run_name", pa.string()),
    _optional("mfu", pa.float64()),
    _optional("hfu", pa.float64()),
    _optional("model_tflops_per_gpu", pa.float64()),
    _optional("hardware_tflops_per_gpu", pa.float64()),
    _optional("memory_per_gpu_bytes", pa.float64()),
    _optional("fits_memory", pa.bool_()),
    _optional("recompute", pa.string()),
    _optional("t_matmul_s", pa.float64()),
    _optional("t_attention_s", pa.float64()),
    _optional("t_norm_s", pa.float64()),
    _optional("t_elementwise_s", pa.float64()),
    _optional("t_optimizer_s", pa.float64()),
]
"""One concrete run (conf/run/, docs/model.md "Realistic physics"): the physics preset's name,
the run's name, model and hardware FLOP utilization, their rates in teraFLOP/s per GPU (1e12
FLOP/s), bytes held per GPU and whether they fit, the recomputation mode, and time per step by
operator class on one GPU of the slowest stage. Null on grid rows (run_name) and where the
physics has no such quantity (e.g. t_norm_s without memory-bound operators)."""

POWER_FIELDS = [
    _optional("power_w", pa.float64()),
    _optional("energy_j", pa.float64()),
]
"""The cluster's power draw, GPUs x TDP x server overhead x PUE, and the run's energy,
power_w x training_time_s (`pipeline.model.power`); null without a layout or a TDP."""

STATUS_FIELDS = [
    _required("feasible", pa.bool_()),
    _optional("infeasible_reason", pa.string()),
]
"""Whether the size trains within the budget; otherwise an `InfeasibleReason` value."""

LIMIT_FIELDS = [
    _optional("linear_end_flop", pa.float64()),
    _optional("last_feasible_flop", pa.float64()),
    _optional("first_infeasible_flop", pa.float64()),
    _optional("max_utilization", pa.float64()),
    _optional("linear_end_beyond_grid", pa.bool_()),
    _required("n_points", pa.int64()),
    _optional("linear_end_basis", pa.string()),
    _optional("wall_flop", pa.float64()),
    _optional("end_reason", pa.string()),
    _optional("wall_reason", pa.string()),
]
"""Derived metrics of one series (spec §11, `SeriesLimits`); null where the series does not
reach them, and the linear end's columns null for a concrete run (one point, no grid).
`n_points` counts the series' rows in `points`. `end_reason` says how the series ended (wall,
utilization collapse, end of grid) and `wall_flop` where its wall is."""

CLOSED_FORM_FIELDS = [
    _required("alpha", pa.float64()),
    _required("t_lat_s", pa.float64()),
    _optional("t_crit_flop", pa.float64()),
    _optional("t_limit_flop", pa.float64()),
    _optional("model_b_duration_s", pa.float64()),
    _optional("model_b_b0_tokens", pa.float64()),
    _optional("model_b_tokens_per_param", pa.float64()),
]
"""Model B for the series' hardware and laws (spec §12): the exponent alpha = alpha_b - alpha_L,
the latency t_lat, and the closed-form compute limits (null where the closed form has no finite
value, e.g. alpha >= 1/2), with the budget, batch anchor and tokens per parameter they used."""

PROVENANCE_FIELDS = [
    _required("run_id", pa.string()),
    _required("config_hash", pa.string()),
    _required("schema_version", pa.int32()),
    _required("dmlimits_version", pa.string()),
    _required("created_at", TIMESTAMP_UTC),
]
"""Where a row came from: the run, the hash of the row's scenario (`points`: series config and
d_model; `thresholds` and `series`: equal to `series_id`), this schema's version, the package
version, and the UTC time the rows were built."""

FORECAST_YEARS = (
    "linear_end_year",
    "last_feasible_year",
    "wall_year",
    "t_crit_year",
    "t_limit_year",
    "moving_linear_end_year",
    "moving_wall_year",
)
"""The year columns of `forecasts`, each with a `<name>_low` and `<name>_high` interval."""

FORECAST_FIELDS = [
    _required("growth_per_year", pa.float64()),
    _required("base_flop", pa.float64()),
    _required("base_year", pa.float64()),
    _optional("linear_end_year", pa.float64()),
    _optional("last_feasible_year", pa.float64()),
    _optional("wall_year", pa.float64()),
    _optional("t_crit_year", pa.float64()),
    _optional("t_limit_year", pa.float64()),
    _optional("moving_linear_end_year", pa.float64()),
    _optional("moving_wall_year", pa.float64()),
]
FORECAST_TRAJECTORY_FIELDS = [
    _optional("trajectory", pa.string()),
    _optional("growth_per_year_low", pa.float64()),
    _optional("growth_per_year_high", pa.float64()),
    *(
        _optional(f"{year}_{end}", pa.float64())
        for year in FORECAST_YEARS
        for end in ("low", "high")
    ),
    _optional("already_passed", pa.string()),
    _optional("data_as_of", pa.date32()),
    _optional("source_hashes", pa.string()),
]
FORECAST_RUN_DATE_FIELDS = [
    _optional("passed_by_run_date", pa.string()),
    _optional("forecast_date", pa.date32()),
]
FORECAST_MOVING_FIELDS = [_optional("moving_without_threshold", pa.string())]
FORECAST_PROJECTED_FIELDS = [_optional("moving_projected", pa.bool_())]
FIT_HASH_FIELDS = [_optional("fit_hash", pa.string())]
FORECAST_NULL_FIELDS = [_optional("year_null_reasons", pa.string())]
FORECAST_FIELDS += (
    FORECAST_TRAJECTORY_FIELDS
    + FORECAST_RUN_DATE_FIELDS
    + FORECAST_MOVING_FIELDS
    + FORECAST_PROJECTED_FIELDS
    + FIT_HASH_FIELDS
    + FORECAST_NULL_FIELDS
)
"""One trajectory of a series (`pipeline.forecast`): `trajectory` names it (`fitted`, the
frontier fitted to observed runs, by default the envelope of the largest, or `hand_set_<g>x`),
C(y) = base_flop · growth_per_year^(y − base_year) its central line, and each `*_year` the median
fractional year its lines, with the runs' scatter, reach the series' limit,
`*_year_low`/`*_year_high` the 5th-95th percentile (equal to the year for a hand-set line); a year is null where its threshold is null. The `moving_*` years are reached on
each year's projected hardware (the `frontier` table); null when the series has no moving
frontier (`moving_projected` false) or the trajectory does not reach the threshold by the last
projected year (a `_high` alone null: more than 5% of the lines do not). `already_passed` lists the year columns whose threshold the
observed runs reached (at or below the largest run published by `data_as_of`, the newest run
the fit could see; comma-separated, "" for none): their year, low and high are the date of the
first run at or above it, on every trajectory; `source_hashes` names the source copies
(`<source>=<sha256>`, comma-separated), null when the run read no source; `passed_by_run_date`
the other year columns from `data_as_of` to before `forecast_date` (the run date: the nightly's
date or the day of the run); `moving_without_threshold` the `moving_*` columns null because no
projected year's series has that threshold on its grid (not because the trajectory does not
reach it; "" for none, null where `moving_projected` is false); `moving_projected` whether
the series has a moving frontier at all (false: the run projected no hardware, or not this
series': its GPU is not a catalog preset as shipped, e.g. a sweep axis changed it); `fit_hash`
the fit of the observed frontier runs the row rests on (`observed_runs.fit_hash`: join on it):
on every row of a run that fitted the frontier (the fitted line, and each row's `data_as_of`
and `already_passed`, come from the fit), null on the rows of a run that fitted none. Rows of
schema version 2 lack the columns from `trajectory` on, rows of version 3 and 4
`passed_by_run_date` and `forecast_date`, rows before version 13 `moving_without_threshold`,
rows before version 14 `moving_projected`, rows before version 16 `fit_hash`;
`year_null_reasons` says why each null year column is null (`<column>=<reason>`,
`pipeline.forecast.null_years.YearNull`; comma-separated, "" for none), null before version 18."""

HARDWARE_FIELDS = [
    _required("flop_per_clock_per_thread", pa.float64()),
    _required("sms", pa.int64()),
    _required("max_clock_hz", pa.float64()),
    _required("u_eff", pa.float64()),
    _required("peak_flop_per_s", pa.float64()),
    _required("hbm_bandwidth_bytes_per_s", pa.float64()),
    _required("l2_bandwidth_bytes_per_s", pa.float64()),
    _required("l2_bytes", pa.float64()),
    _required("register_bytes_per_block", pa.float64()),
    _required("dsmem", pa.bool_()),
    _required("hbm_bytes", pa.float64()),
    _required("matmul_latency_s", pa.float64()),
    _optional("tdp_w", pa.float64()),
    _optional("fp8_flop_per_s", pa.float64()),
    _optional("fp8_u_eff_ratio", pa.float64()),
    _optional("hbm_device_ratio", pa.float64()),
    _optional("memory_capacity_bytes", pa.float64()),
    _optional("matmul_speedup_2025", pa.float64()),
]
"""The GPU of a series (spec §3.1): every `HardwareSpec` scalar under its own name, the
derived peak rate F_peak, and the HBM capacity its memory checks read under the series' physics
(`memory.capacity.memory_capacity_bytes`)."""

NETWORK_FIELDS = [
    _required("n_net_levels", pa.int64()),
    _required("level_sizes", pa.string()),
    _required("net_bandwidth_bytes_per_s", pa.string()),
    _required("net_latency_s", pa.string()),
    _optional("level_size_l0", pa.int64()),
    _required("net_bandwidth_l0_bytes_per_s", pa.float64()),
    _required("net_bandwidth_top_bytes_per_s", pa.float64()),
    _required("net_latency_l0_s", pa.float64()),
    _required("net_latency_top_s", pa.float64()),
    _optional("nics_per_node", pa.int64()),
]
"""The network hierarchy (spec §3.1): the `HardwareSpec` lists as per-level strings, level 0
(innermost) first, joined by "x" (numbers in shortest exact form: "9e11x1e11"), and the
innermost (l0) and outermost (top) levels as numbers. `level_size_l0` is null on a one-level
network. Bandwidths may be inf (the "infinite network" what-if)."""

LAWS_FIELDS = [
    _required("sparse", pa.bool_()),
    _optional("ff_ratio", pa.int64()),
    _optional("depth_coefficient", pa.float64()),
    _optional("depth_exponent", pa.float64()),
    _optional("experts_at_reference", pa.float64()),
    _optional("reference_d_model", pa.float64()),
    _optional("tokens_per_param", pa.float64()),
    _required("seq_len", pa.int64()),
    _optional("kv_heads", pa.int64()),
    _optional("dropout", pa.bool_()),
    _optional("batch_kind", pa.string()),
    _optional("batch_reference_tokens", pa.float64()),
    _optional("batch_reference_flop", pa.float64()),
    _optional("batch_coefficient", pa.float64()),
    _optional("batch_exponent", pa.float64()),
    _required("year_s", pa.float64()),
    _required("n_d_models", pa.int64()),
    _required("d_model_min", pa.int64()),
    _required("d_model_max", pa.int64()),
    _required("d_models", pa.string()),
]
"""Scaling laws (spec §1-§2: `ScalingLaws` and its `BatchLaw`), Model A's year, and the
model-size grid. A batch-law constant is null when the series' law does not use it."""

OPTION_FIELDS = [
    _required("option_one_f_one_b", pa.bool_()),
    _required("option_zero_bubble", pa.bool_()),
    _required("option_interleaving", pa.bool_()),
    _required("option_max_1f1b_microbatch_candidates", pa.int64()),
    _required("option_max_zb_microbatch_candidates", pa.int64()),
    _required("option_tp_ff_window", pa.int64()),
    _required("option_overlap_tp", pa.bool_()),
    _required("option_overlap_pp_ep", pa.bool_()),
    _required("option_overlap_dp", pa.bool_()),
    _required("option_activation_recompute", pa.bool_()),
    _required("option_memory_check", pa.bool_()),
    _required("option_max_cluster_doublings", pa.int64()),
    _required("quirk_zb_hides_latency_correctly", pa.bool_()),
    _required("quirk_tie_tolerance", pa.float64()),
    _required("quirk_whole_sequences", pa.bool_()),
    _required("quirk_model_b_flop_anchor", pa.bool_()),
    _required("quirk_constant_batch_scales_with_experts", pa.bool_()),
    _required("quirk_reject_non_divisible", pa.bool_()),
]
"""Search and step-model switches (`SearchOptions` fields, prefixed "option_") and the quirk
flags of spec §14 (`Quirks` fields, prefixed "quirk_")."""

FIXED_LAYOUT_FIELDS = [
    _optional("fixed_n_gpu", pa.float64()),
    _optional("fixed_dp_levels", pa.string()),
    _optional("fixed_tp_model_levels", pa.string()),
    _optional("fixed_tp_ff_levels", pa.string()),
    _optional("fixed_pp_levels", pa.string()),
    _optional("fixed_ep_levels", pa.string()),
    _optional("fixed_microbatches", pa.int64()),
    _optional("fixed_zero_bubble", pa.bool_()),
]
"""The layout evaluated as is when parallelism=fixed (per-level factors as in `points`); null
when the series searches its layouts."""

CLOSED_FORM_SETTING_FIELDS = [
    _required("closed_form_b0_tokens", pa.float64()),
    _required("closed_form_l0_layers", pa.float64()),
    _required("closed_form_t0_flop", pa.float64()),
    _required("closed_form_duration_s", pa.float64()),
    _optional("closed_form_t_lat_s", pa.float64()),
]
"""Model B's anchors and budget (spec §12, `ClosedFormSettings`); `closed_form_t_lat_s` is null
when t_lat is derived from the hardware (the value used is `thresholds.t_lat_s`)."""

POWER_SETTING_FIELDS = [
    _optional("power_server_overhead", pa.float64()),
    _optional("power_pue", pa.float64()),
    _optional("max_power_w", pa.float64()),
]
"""How points' power is estimated (`power.server_overhead`, `power.pue`) and the site's budget
(`constraints.max_power_mw`, in W; null without one)."""

PHYSICS_SETTING_FIELDS = [
    _optional("physics", pa.string()),
    _optional("physics_json", pa.string()),
    _optional("run_json", pa.string()),
]
"""The physics that made the series: its preset's name and the whole `Physics` record as JSON
(every switch and efficiency, durations in s), so a run with individual physics overrides is told
from its preset; `run_json` the whole concrete run (`RunSpec`), null on a scaling-law grid. Null
when read from a version-1 part (`ADDED_IN`)."""

SWEEP_FIELDS = [
    _required("whole_grid", pa.bool_()),
    _required("sweep_point", pa.string()),
    _optional("overrides", pa.string()),
]
"""How the series ran (the whole grid, or up to its first infeasible size), the sweep point
that made it (a JSON object of its choices and axis values in config units, "{}" without one)
and `overrides`, the command that made it: a JSON list of strings, the run's Hydra overrides
followed by the sweep point as ``key=value`` entries; null when the run's overrides are unknown
(a config composed outside `dmlimits` and `pipeline.run`)."""

POINTS_SCHEMA = pa.schema(
    SERIES_FIELDS
    + SHAPE_FIELDS
    + LAYOUT_FIELDS
    + COST_FIELDS
    + RUN_FIELDS
    + POWER_FIELDS
    + STATUS_FIELDS
    + PROVENANCE_FIELDS
)
THRESHOLDS_SCHEMA = pa.schema(SERIES_FIELDS + LIMIT_FIELDS + CLOSED_FORM_FIELDS + PROVENANCE_FIELDS)
FORECASTS_SCHEMA = pa.schema(SERIES_FIELDS + FORECAST_FIELDS + PROVENANCE_FIELDS)
SERIES_SCHEMA = pa.schema(
    SERIES_FIELDS
    + HARDWARE_FIELDS
    + NETWORK_FIELDS
    + LAWS_FIELDS
    + OPTION_FIELDS
    + FIXED_LAYOUT_FIELDS
    + CLOSED_FORM_SETTING_FIELDS
    + POWER_SETTING_FIELDS
    + PHYSICS_SETTING_FIELDS
    + SWEEP_FIELDS
    + PROVENANCE_FIELDS
)

FRONTIER_FIELDS = [
    _required("year", pa.float64()),
    _required("projected_hardware", pa.string()),
    _required("projected_series_id", pa.string()),
    _required("catalog_hash", pa.string()),
    _required("peak_flop_per_s", pa.float64()),
    _optional("linear_end_flop", pa.float64()),
    _optional("last_feasible_flop", pa.float64()),
    _optional("first_infeasible_flop", pa.float64()),
    _optional("wall_flop", pa.float64()),
    _optional("end_reason", pa.string()),
    _optional("linear_end_beyond_grid", pa.bool_()),
]
"""One year of a series' moving frontier (`pipeline.forecast.frontier`): the series evaluated on
its GPU projected to `year` along the catalog's trends, and that series' limits; `wall_flop` and
`end_reason` as in `thresholds` (the forecasts' `moving_wall_year` is reached at `wall_flop`)."""

TRENDS_FIELDS = [
    _required("metric", pa.string()),
    _required("unit", pa.string()),
    _required("n_points", pa.int64()),
    _required("gpus", pa.string()),
    _optional("first_release_year", pa.float64()),
    _optional("last_release_year", pa.float64()),
    _optional("growth_per_year", pa.float64()),
    _optional("growth_per_year_low", pa.float64()),
    _optional("growth_per_year_high", pa.float64()),
    _optional("growth_per_two_years", pa.float64()),
    _optional("doubling_time_years", pa.float64()),
    _optional("reference_year", pa.float64()),
    _optional("value_at_reference", pa.float64()),
    _optional("gholami_growth_per_two_years", pa.float64()),
    _required("confidence", pa.float64()),
    _required("bootstrap_resamples", pa.int64()),
    _required("bootstrap_seed", pa.int64()),
    _required("catalog_hash", pa.string()),
]
"""One catalog metric's log-linear trend against release year (`pipeline.trends`): its points,
growth per year with a bootstrap interval, doubling time, the fitted line, and Gholami et al.'s
published growth where they give one. Fit columns are null when the metric has fewer than two
releases in different years."""

UNCERTAINTY_FIELDS = [
    _required("hardware", pa.string()),
    _required("scaling", pa.string()),
    _required("batch_law", pa.string()),
    _required("base_series_id", pa.string()),
    _required("trajectory", pa.string()),
    _required("limit", pa.string()),
    _required("input", pa.string()),
    _required("distribution", pa.string()),
    _optional("variance_share", pa.float64()),
    _optional("explained", pa.float64()),
    _optional("year_median", pa.float64()),
    _optional("year_low", pa.float64()),
    _optional("year_high", pa.float64()),
    _required("n_samples", pa.int64()),
    _required("n_reached", pa.int64()),
    _required("seed", pa.int64()),
    _required("design_hash", pa.string()),
    _optional("budget_null_reason", pa.string()),
]
"""One input's share of one limit year's variance over the uncertainty design
(`pipeline.forecast.uncertainty`): the series the design varies (the run's own config), the
trajectory the years are on, the limit (`linear_end_year`, `wall_year`), the input (a config key,
or `trajectory`) with its distribution, its variance share (SRC²), the part the linear fit
explains, and the year's median and 5th-95th percentile over the points that reach it;
`budget_null_reason` why the share and the explained part are null (`uncertainty.BudgetNull`:
no point reaches the year, too few do, or their years have no spread), null where they are set
and before version 18."""

SOURCES_FIELDS = [
    _required("source", pa.string()),
    _required("location", pa.string()),
    _required("content_hash", pa.string()),
    _required("snapshot_date", pa.date32()),
    _optional("fetched_at", TIMESTAMP_UTC),
    _required("age_days", pa.float64()),
    _required("stale", pa.bool_()),
    _optional("stale_reason", pa.string()),
    _required("rows_read", pa.int64()),
    _required("rows_rejected", pa.int64()),
    _optional("newest_date", pa.date32()),
    _optional("licence", pa.string()),
    _optional("batch_law_runs", pa.int64()),
    _optional("batch_law_coefficient", pa.float64()),
    _optional("batch_law_exponent", pa.float64()),
    _optional("batch_law_exponent_low", pa.float64()),
    _optional("batch_law_exponent_high", pa.float64()),
]
"""One source a run read (`pipeline.sources`): where from, which copy (SHA-256 of the body),
how old, whether it is stale (a failed fetch served the last good copy), and its rows; for the
frontier runs, the `observed` batch law fitted to the copy (`pipeline.sources.batches`)."""
BATCH_LAW_FIT_COLUMNS = (
    "batch_law_runs",
    "batch_law_coefficient",
    "batch_law_exponent",
    "batch_law_exponent_low",
    "batch_law_exponent_high",
)

OBSERVED_RUNS_FIELDS = [
    _required("source", pa.string()),
    _required("content_hash", pa.string()),
    _required("line", pa.int64()),
    _required("model", pa.string()),
    _optional("organization", pa.string()),
    _required("publication_date", pa.date32()),
    _required("publication_year", pa.float64()),
    _required("training_flop", pa.float64()),
    _optional("confidence", pa.string()),
    _optional("epoch_frontier", pa.bool_()),
    _required("frontier", pa.bool_()),
    *FIT_HASH_FIELDS,
    _optional("domain", pa.string()),
    _optional("parameters", pa.float64()),
    _optional("training_hardware", pa.string()),
    _optional("hardware_quantity", pa.int64()),
    _optional("training_time_s", pa.float64()),
    _optional("hardware_utilization", pa.float64()),
    _optional("batch_size", pa.float64()),
]
"""One usable training run of the frontier-runs source, whether it defines the frontier of the
fit `fit_hash` names (`pipeline.forecast.observed.fit_hash`: the copy and the `forecast.fitted`
settings that decide the flags; the part key, so each fit keeps its own part), and how it was
trained when the source says. `fit_hash` is null only on rows before version 16."""
HOW_TRAINED_FIELDS = (
    "domain",
    "parameters",
    "training_hardware",
    "hardware_quantity",
    "training_time_s",
    "hardware_utilization",
    "batch_size",
)

SOURCE_REJECTS_FIELDS = [
    _required("source", pa.string()),
    _required("content_hash", pa.string()),
    _required("line", pa.int64()),
    _optional("name", pa.string()),
    _required("reason", pa.string()),
    _required("row", pa.string()),
]
"""One source row that could not be used, with its line and reason (`pipeline.sources.epoch`)."""

REALITY_FIELDS = [
    _required("physics", pa.string()),
    _required("source", pa.string()),
    _required("content_hash", pa.string()),
    _required("line", pa.int64()),
    _required("model", pa.string()),
    _required("publication_date", pa.date32()),
    _required("training_flop", pa.float64()),
    _required("training_hardware", pa.string()),
    _required("hardware_quantity", pa.int64()),
    _required("training_time_s", pa.float64()),
    _optional("hardware_utilization", pa.float64()),
    _optional("preset", pa.string()),
    _optional("hardware_source", pa.string()),
    _optional("catalog_entry", pa.string()),
    _optional("peak_flop_per_s", pa.float64()),
    _optional("implied_utilization", pa.float64()),
    _optional("d_model", pa.int64()),
    _optional("precision", pa.string()),
    _optional("feasible", pa.bool_()),
    _optional("infeasible_reason", pa.string()),
    _optional("model_n_gpu", pa.int64()),
    _optional("gpu_ratio", pa.float64()),
    _optional("model_utilization", pa.float64()),
    _optional("model_training_time_s", pa.float64()),
    _required("contradiction", pa.bool_()),
    _optional("reason", pa.string()),
]
"""One observed run that states its compute, accelerator, count and hours, under one physics
(`pipeline.forecast.reality`): what the run states, its implied utilization, and the model's
answer (the width of its compute, the number format it answered in, the smallest cluster
within its hours, that cluster's utilization); a contradiction when the model calls it
infeasible or needs more than twice its accelerators; a reason instead of an answer when the
model cannot express its hardware."""

FRONTIER_SCHEMA = pa.schema(SERIES_FIELDS + FRONTIER_FIELDS + PROVENANCE_FIELDS)
TRENDS_SCHEMA = pa.schema(TRENDS_FIELDS + PROVENANCE_FIELDS)
SOURCES_SCHEMA = pa.schema(SOURCES_FIELDS + PROVENANCE_FIELDS)
OBSERVED_RUNS_SCHEMA = pa.schema(OBSERVED_RUNS_FIELDS + PROVENANCE_FIELDS)
SOURCE_REJECTS_SCHEMA = pa.schema(SOURCE_REJECTS_FIELDS + PROVENANCE_FIELDS)
UNCERTAINTY_SCHEMA = pa.schema(UNCERTAINTY_FIELDS + PROVENANCE_FIELDS)
REALITY_SCHEMA = pa.schema(REALITY_FIELDS + PROVENANCE_FIELDS)

ADDED_IN: dict[str, int] = {
    **{field.name: 3 for field in FORECAST_TRAJECTORY_FIELDS},
    **{field.name: 5 for field in FORECAST_RUN_DATE_FIELDS},
    **{field.name: 13 for field in FORECAST_MOVING_FIELDS},
    **{field.name: 14 for field in FORECAST_PROJECTED_FIELDS},
    **{field.name: 16 for field in FIT_HASH_FIELDS},
    **{field.name: 18 for field in FORECAST_NULL_FIELDS},
    "budget_null_reason": 18,
    "overrides": 2,
    "moving_linear_end_year": 2,
    "moving_wall_year": 2,
    **{field.name: 2 for field in RUN_FIELDS},
    **{field.name: 2 for field in PHYSICS_SETTING_FIELDS},
    **{name: 3 for name in ("linear_end_basis", "wall_flop", "end_reason", "wall_reason")},
    **{name: 3 for name in ("model_b_duration_s", "model_b_b0_tokens", "model_b_tokens_per_param")},
    **{field.name: 3 for field in POWER_FIELDS + POWER_SETTING_FIELDS},
    "tdp_w": 3,
    **{name: 5 for name in BATCH_LAW_FIT_COLUMNS},
    "q1_latency_hidden_s": 5,
    "fp8_flop_per_s": 5,
    "kv_heads": 5,
    "nics_per_node": 5,
    "cp": 5,
    "cp_levels": 5,
    "precision": 6,
    "fp8_u_eff_ratio": 8,
    "hbm_device_ratio": 9,
    "memory_capacity_bytes": 9,
    "matmul_speedup_2025": 10,
    "dropout": 15,
}
"""Columns added after version 1, by name, with the `SCHEMA_VERSION` that added them (nullable
only). A part written with an older version lacks exactly these; readers fill them with null.
Every column not listed here (or in `ADDED_IN_TABLE`) has been in the tables since version 1."""

ADDED_IN_TABLE: dict[tuple[str, str], int] = {
    ("frontier", "wall_flop"): 4,
    ("frontier", "end_reason"): 4,
    ("frontier", "linear_end_beyond_grid"): 17,
    **{("observed_runs", name): 5 for name in HOW_TRAINED_FIELDS},
}
"""(table, column) -> the `SCHEMA_VERSION` that added the column to that table, where a column
of one name joined tables in different versions (over `ADDED_IN`)."""
