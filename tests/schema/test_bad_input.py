"""The schema's bad-input table: each config value it refuses raises a one-line ConfigError naming the key.

`BAD_INPUTS` is the one table of bad values for the schema layer (load_scenario): types, ranges,
names that become paths, numbers past `pipeline.schema.bounds`, projections out of float range.
tests/robustness/test_bad_input.py runs every one of them through the command line as well.
"""

from __future__ import annotations

import pickle

import pytest

from pipeline.model.records.results import Layout
from pipeline.model.records.scaling import ModelShape
from pipeline.model.search.fixed import layout_misfit
from pipeline.schema import ConfigError, compose_config, load_scenario
from pipeline.schema.parallelism import check_layout_levels

BAD_INPUTS = [
    # (id, Hydra overrides, dotted key the error must name)
    ("unknown_key", ["+hardware.hbm_bandwith_gb_per_s=3352"], "hardware.hbm_bandwith_gb_per_s"),
    ("unknown_nested_key", ["+parallelism.quirks.q9=true"], "parallelism.quirks.q9"),
    ("missing_key", ["~hardware.sms"], "hardware.sms"),
    ("string_for_integer", ["hardware.sms=abc"], "hardware.sms"),
    ("fractional_integer", ["hardware.sms=132.5"], "hardware.sms"),
    ("integer_for_boolean", ["hardware.dsmem=1"], "hardware.dsmem"),
    ("string_for_number", ["hardware.max_clock_mhz=fast"], "hardware.max_clock_mhz"),
    ("negative_bandwidth", ["hardware.hbm_bandwidth_gb_per_s=-1.0"], "hardware.hbm_bandwidth_gb_per_s"),
    ("zero_bandwidth", ["hardware.l2_bandwidth_gb_per_s=0"], "hardware.l2_bandwidth_gb_per_s"),
    ("zero_network_bandwidth", ["hardware.network.bandwidth_gb_per_s=[900,0]"],
     "hardware.network.bandwidth_gb_per_s[1]"),
    ("zero_flop_rate", ["hardware.flop_per_clock_per_thread=0"], "hardware.flop_per_clock_per_thread"),
    ("zero_clock", ["hardware.max_clock_mhz=0"], "hardware.max_clock_mhz"),
    ("zero_sms", ["hardware.sms=0"], "hardware.sms"),
    ("u_eff_above_one", ["hardware.u_eff=1.5"], "hardware.u_eff"),
    ("zero_memory", ["hardware.hbm_gb=0"], "hardware.hbm_gb"),
    ("negative_cache", ["hardware.l2_mib=-50"], "hardware.l2_mib"),
    ("zero_duration", ["scaling.duration_months=0"], "scaling.duration_months"),
    ("negative_year", ["scaling.year_s=-3.154e7"], "scaling.year_s"),
    ("negative_model_b_duration", ["closed_form.duration_days=-1"], "closed_form.duration_days"),
    ("negative_matmul_latency", ["hardware.matmul_latency_us=-4.5"], "hardware.matmul_latency_us"),
    ("negative_network_latency", ["hardware.network.latency_us=[1.125,-1]"],
     "hardware.network.latency_us[1]"),
    ("negative_closed_form_latency", ["closed_form.t_lat_us=-9"], "closed_form.t_lat_us"),
    ("zero_level_size", ["hardware.network.level_sizes=[0]"], "hardware.network.level_sizes[0]"),
    ("context_parallel_bound_not_a_power_of_two", ["physics=realistic", "physics.max_context_parallel=3"],
     "physics.max_context_parallel"),
    ("level_sizes_tiling_no_cluster", ["hardware.network.level_sizes=[6]"], "hardware.network.level_sizes"),
    ("fractional_level_size", ["hardware.network.level_sizes=[8.5]"],
     "hardware.network.level_sizes[0]"),
    ("bandwidth_list_too_short", ["hardware.network.bandwidth_gb_per_s=[900]"],
     "hardware.network.bandwidth_gb_per_s"),
    ("latency_list_too_long", ["hardware.network.latency_us=[1,1,1]"], "hardware.network.latency_us"),
    ("nan_bandwidth", ["hardware.network.bandwidth_gb_per_s=[nan,100]"],
     "hardware.network.bandwidth_gb_per_s[0]"),
    ("nan_u_eff", ["hardware.u_eff=nan"], "hardware.u_eff"),
    ("infinite_hbm_bandwidth", ["hardware.hbm_bandwidth_gb_per_s=inf"], "hardware.hbm_bandwidth_gb_per_s"),
    ("infinite_latency", ["hardware.matmul_latency_us=inf"], "hardware.matmul_latency_us"),
    ("negative_infinite_network_bandwidth", ["hardware.network.bandwidth_gb_per_s=[-inf,100]"],
     "hardware.network.bandwidth_gb_per_s[0]"),
    ("inverted_grid_range", ["scaling.grid.min_d_model=24576", "scaling.grid.max_d_model=12288"],
     "scaling.grid.min_d_model"),
    ("empty_grid_range", ["scaling.grid.min_d_model=12289", "scaling.grid.max_d_model=12290"],
     "scaling.grid"),
    ("empty_grid_list", ["scaling.grid.kind=list", "scaling.grid.d_models=[]"], "scaling.grid.d_models"),
    ("descending_grid_list", ["scaling.grid.kind=list", "scaling.grid.d_models=[24576,12288]"],
     "scaling.grid.d_models"),
    ("grid_list_without_kind", ["scaling.grid.d_models=[12288]"], "scaling.grid.d_models"),
    ("unknown_grid_kind", ["scaling.grid.kind=range"], "scaling.grid.kind"),
    ("unknown_batch_kind", ["batch.kind=linear"], "batch.kind"),
    ("batch_kind_over_another_law", ["batch=observed", "batch.kind=critical"], "batch.coefficient"),
    ("key_of_other_batch_law", ["+batch.coefficient=0.292"], "batch.coefficient"),
    ("constant_batch_below_one_sequence", ["batch=constant", "batch.reference_tokens=1024"],
     "batch.reference_tokens"),
    ("zero_tp_ff_window", ["parallelism.tp_ff_window=0"], "parallelism.tp_ff_window"),
    ("negative_tie_tolerance", ["parallelism.quirks.tie_tolerance=-1e-12"],
     "parallelism.quirks.tie_tolerance"),
    ("no_schedule", ["parallelism.one_f_one_b=false", "parallelism.zero_bubble=false"],
     "parallelism.one_f_one_b"),
    ("fixed_layout_product_not_n_gpu", ["parallelism=fixed", "parallelism.layout.n_gpu=4096"],
     "parallelism.layout.n_gpu"),
    ("fixed_layout_level_product", ["parallelism=fixed", "parallelism.layout.dp=[2,1]"],
     "parallelism.layout[level 0]"),
    ("fixed_layout_level_count", ["parallelism=fixed", "hardware=h100_superpod"],
     "parallelism.layout.dp"),
    ("fixed_layout_ragged_levels", ["parallelism=fixed", "parallelism.layout.ep=[1]"],
     "parallelism.layout"),
    ("fixed_layout_hierarchy_not_divisible",
     ["parallelism=fixed", "parallelism.layout.n_gpu=12", "parallelism.layout.tp_model=[4,1]",
      "parallelism.layout.tp_ff=[2,1]", "parallelism.layout.pp=[1,3]"], "parallelism.layout.n_gpu"),
    ("fixed_layout_zero_factor", ["parallelism=fixed", "parallelism.layout.pp=[0,64]"],
     "parallelism.layout.pp[0]"),
    ("unresolvable_value", ["hardware.sms=${hardware.cores}"], "hardware.sms"),
    ("unknown_tensor_parallel", ["physics.tensor_parallel=3d"], "physics.tensor_parallel"),
    ("tp_in_domain_not_bool", ["physics.tp_in_domain=maybe"], "physics.tp_in_domain"),
    # values that became paths, or beyond the bounds of pipeline/schema/bounds.py
    ("negative_hbm_bandwidth", ["hardware.hbm_bandwidth_gb_per_s=-1"], "hardware.hbm_bandwidth_gb_per_s"),
    ("negative_network_bandwidth", ["hardware.network.bandwidth_gb_per_s=[900,-100]"], "hardware.network.bandwidth_gb_per_s[1]"),
    ("infinite_l2_bandwidth", ["hardware.l2_bandwidth_gb_per_s=inf"], "hardware.l2_bandwidth_gb_per_s"),
    ("negative_flop_rate", ["hardware.flop_per_clock_per_thread=-32"], "hardware.flop_per_clock_per_thread"),
    ("infinite_clock", ["hardware.max_clock_mhz=inf"], "hardware.max_clock_mhz"),
    ("zero_u_eff", ["hardware.u_eff=0"], "hardware.u_eff"),
    ("negative_memory", ["hardware.hbm_gb=-80"], "hardware.hbm_gb"),
    ("nan_memory", ["hardware.hbm_gb=nan"], "hardware.hbm_gb"),
    ("negative_duration", ["scaling.duration_months=-3"], "scaling.duration_months"),
    ("infinite_duration", ["scaling.duration_months=inf"], "scaling.duration_months"),
    ("zero_model_b_duration", ["closed_form.duration_days=0"], "closed_form.duration_days"),
    ("nan_latency", ["hardware.network.latency_us=[nan,1.125]"], "hardware.network.latency_us[0]"),
    ("infinite_network_latency", ["hardware.network.latency_us=[1.125,inf]"], "hardware.network.latency_us[1]"),
    ("negative_level_size", ["hardware.network.level_sizes=[-8]"], "hardware.network.level_sizes[0]"),
    ("string_level_size", ["hardware.network.level_sizes=[eight]"], "hardware.network.level_sizes[0]"),
    ("levels_without_their_links", ["hardware.network.level_sizes=[8,32]"], "hardware.network.bandwidth_gb_per_s"),
    ("fixed_layout_not_cluster_size", ["parallelism=fixed", "parallelism.layout.n_gpu=1024"], "parallelism.layout.n_gpu"),
    ("grid_list_of_zero", ["scaling.grid.kind=list", "scaling.grid.d_models=[0]"], "scaling.grid.d_models[0]"),
    ("slash_in_hardware_name", ["hardware.name=team/h100"], "hardware.name"),
    ('space_in_hardware_name', ["hardware.name='my gpu'"], 'hardware.name'),
    ("dotdot_hardware_name", ["hardware.name=.."], "hardware.name"),
    ("dotdot_path_hardware_name", ["hardware.name=../etc"], "hardware.name"),
    ("hidden_hardware_name", ["hardware.name=.h100"], "hardware.name"),
    ('equals_in_hardware_name', ["hardware.name='a=b'"], 'hardware.name'),
    ('backslash_in_hardware_name', ["hardware.name='a\\\\b'"], 'hardware.name'),
    ("long_hardware_name", ["hardware.name=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"], "hardware.name"),
    ('empty_hardware_name', ["hardware.name=''"], 'hardware.name'),
    ("numeric_hardware_name", ["hardware.name=5"], "hardware.name"),
    ("slash_in_scaling_name", ["scaling.name=dense/v2"], "scaling.name"),
    ('space_in_scaling_name', ["scaling.name='dense v2'"], 'scaling.name'),
    ("dotdot_batch_name", ["batch.name=.."], "batch.name"),
    ('star_in_batch_name', ["batch.name='crit*'"], 'batch.name'),
    ('bracket_in_batch_name', ["batch.name='crit[1]'"], 'batch.name'),
    ('newline_in_batch_name', ["batch.name='a\\nb'"], 'batch.name'),
    ('colon_in_parallelism_name', ["parallelism.name='a:b'"], 'parallelism.name'),
    ('unicode_slash_in_hardware_name', ["hardware.name='a\u2215b'"], 'hardware.name'),
    ("huge_hbm_bandwidth", ["hardware.hbm_bandwidth_gb_per_s=1e308"], "hardware.hbm_bandwidth_gb_per_s"),
    ("huge_l2_bandwidth", ["hardware.l2_bandwidth_gb_per_s=1e308"], "hardware.l2_bandwidth_gb_per_s"),
    ("huge_clock", ["hardware.max_clock_mhz=1e308"], "hardware.max_clock_mhz"),
    ("huge_hbm", ["hardware.hbm_gb=1e308"], "hardware.hbm_gb"),
    ("huge_l2", ["hardware.l2_mib=1e308"], "hardware.l2_mib"),
    ("huge_registers", ["hardware.register_kib_per_block=1e308"], "hardware.register_kib_per_block"),
    ("huge_duration", ["scaling.duration_months=1e308"], "scaling.duration_months"),
    ("duration_of_ages", ["scaling.duration_months=1e12"], "scaling.duration_months"),
    ("huge_year", ["scaling.year_s=1e300"], "scaling.year_s"),
    ("huge_model_b_duration", ["closed_form.duration_days=1e308"], "closed_form.duration_days"),
    ("huge_closed_form_latency", ["closed_form.t_lat_us=1e308"], "closed_form.t_lat_us"),
    ("huge_t0", ["closed_form.t0_flop=1e308"], "closed_form.t0_flop"),
    ("huge_b0", ["closed_form.b0_tokens=1e308"], "closed_form.b0_tokens"),
    ("huge_matmul_latency", ["hardware.matmul_latency_us=1e308"], "hardware.matmul_latency_us"),
    ("huge_network_bandwidth", ["hardware.network.bandwidth_gb_per_s=[1e308,100]"], "hardware.network.bandwidth_gb_per_s[0]"),
    ("huge_network_latency", ["hardware.network.latency_us=[1.125,1e308]"], "hardware.network.latency_us[1]"),
    ("huge_flop_per_clock", ["hardware.flop_per_clock_per_thread=1e308"], "hardware.flop_per_clock_per_thread"),
    ("sms_beyond_int64", ["hardware.sms=100000000000000000000"], "hardware.sms"),
    ("sms_as_float_exponent", ["hardware.sms=1e20"], "hardware.sms"),
    ("sms_beyond_2_53", ["hardware.sms=9007199254740993"], "hardware.sms"),
    ("peak_rate_overflow", ["hardware.sms=9007199254740992", "hardware.max_clock_mhz=1e6", "hardware.flop_per_clock_per_thread=1e6"], "hardware.sms"),
    ("level_size_beyond_int64", ["hardware.network.level_sizes=[100000000000000000000]"], "hardware.network.level_sizes[0]"),
    ("d_model_beyond_int64", ["scaling.grid.kind=list", "scaling.grid.d_models=[100000000000000000000]"], "scaling.grid.d_models[0]"),
    ("d_model_overflowing_laws", ["scaling.grid.kind=list", "scaling.grid.d_models=[9007199254740992]"], "scaling.grid"),
    ("steep_depth_exponent", ["scaling.depth.exponent=9"], "scaling.grid"),
    ("huge_depth_exponent", ["scaling.depth.exponent=1e308"], "scaling.depth.exponent"),
    ("huge_tokens_per_param", ["scaling.tokens_per_param=1e308"], "scaling.tokens_per_param"),
    ("seq_len_beyond_int64", ["scaling.seq_len=100000000000000000000"], "scaling.seq_len"),
    ("huge_batch_reference", ["batch.reference_tokens=1e308"], "batch.reference_tokens"),
    ("huge_batch_exponent", ["batch.exponent=1e308"], "batch.exponent"),
    ("huge_negative_batch_exponent", ["batch.exponent=-1e308"], "batch.exponent"),
    ("projected_year_beyond_bounds", ["hardware=projected", "hardware.year=1e6"], "hardware.year"),
    ("projected_year_overflowing", ["hardware=projected", "hardware.year=5000"], "hardware.year"),
    ("projected_growth_overflowing", ["hardware=projected", "hardware.year=2100",
     "hardware.growth_per_year.hbm_bytes=1e300"], "hardware.year"),
    ("projected_past_the_peak_bound", ["hardware=projected", "hardware.year=2100"], "hardware.year"),
    ("tensor_memory_on_hardware_without_it", ["physics.tensor_memory=true"], "physics.tensor_memory"),
    ("fp8_on_hardware_without_it", ["hardware=a100_sxm", "physics.precision=fp8"], "physics.precision"),
    ("context_parallel_gather_without_context_parallelism", ["physics.cp_all_gather=true"],
     "physics.cp_all_gather"),
    ("nic_striping_without_nics_per_node", ["physics=realistic", "hardware.network.nics_per_node=null"],
     "physics.nic_striping"),
    ("fp8_params_without_fp8", ["run=gpt_1t", "physics=realistic", "run.fp8_params=true"],
     "run.fp8_params"),
    ("grid_fp8_params_without_fp8", ["physics.fp8_params=true"], "physics.fp8_params"),
    ("expert_imbalance_without_experts", ["physics.expert_imbalance=0.4"],
     "physics.expert_imbalance"),
    ("expert_imbalance_negative", ["physics=realistic", "physics.expert_imbalance=-0.1"],
     "physics.expert_imbalance"),
    ("fp8_params_without_sharded_optimizer", ["run=gpt_1t", "physics=realistic",
     "physics.precision=fp8", "run.fp8_params=true", "run.zero_stage=0"], "run.fp8_params"),
    ("fp8_params_without_fp8_peak", ["run=gpt_1t", "hardware=a100_sxm_80gb", "physics=realistic",
     "physics.precision=fp8", "run.fp8_params=true", "run.zero_stage=1"], "run.fp8_params"),
    ("interleaved_run_with_fewer_microbatches_than_stages", ["run=gpt_1t", "physics=realistic",
     "run.global_batch_seqs=192", "run.interleave=2"], "run.global_batch_seqs"),
]  # fmt: skip

SHAPE = ModelShape(
    d_model=12288, d_ff=49152, n_layers=192, sparsity=1, seq_len=2048, batch_seqs=3584
)
"""Spec §16.3: H100 SXM, dense, d_model 12288 (B_tok = 7,340,032)."""
GOOD_LAYOUT = Layout(
    n_gpu=2048, dp=(1, 1), tp_model=(4, 1), tp_ff=(2, 4), pp=(1, 64), ep=(1, 1),
    microbatches=128, zero_bubble=True, pp_interleave=0, nanobatch_tokens=0, cp=(1, 1),
)  # fmt: skip
"""Spec §16.3: the layout the search returns for SHAPE at 2048 GPUs."""

BAD_LAYOUTS = [
    # (id, model shape, layout, dotted key the error must name)
    ("tp_model_not_dividing_d_model", ModelShape(12290, 49160, 192, 1, 2048, 3584), GOOD_LAYOUT,
     "parallelism.layout.tp_model"),
    ("pp_not_dividing_layers", ModelShape(12288, 49152, 100, 1, 2048, 3584), GOOD_LAYOUT,
     "parallelism.layout.pp"),
    ("ep_not_dividing_experts", SHAPE,
     Layout(2048, (1, 1), (4, 1), (1, 4), (1, 64), (2, 1), 128, True, 0, 0, (1, 1)),
     "parallelism.layout.ep"),
    ("too_few_microbatches_for_zero_bubble", SHAPE,
     Layout(2048, (1, 1), (4, 1), (2, 4), (1, 64), (1, 1), 64, True, 0, 0, (1, 1)),
     "parallelism.layout.microbatches"),
    ("empty_nanobatch", ModelShape(12288, 49152, 192, 1, 2048, 1),
     Layout(2048, (1, 8), (4, 1), (2, 4), (1, 8), (1, 1), 8192, False, 0, 0, (1, 1)),
     "parallelism.layout.microbatches"),
    ("levels_not_matching_network", SHAPE, GOOD_LAYOUT, "parallelism.layout.dp"),
]  # fmt: skip
LEVEL_SIZES = {"levels_not_matching_network": (8, 32)}
"""Per-case network level sizes; every other case uses H100 SXM's (8,)."""


def assert_one_line_naming(err: ConfigError, key: str) -> None:
    """The error names ``key`` first, on a single line, with the allowed values after it."""
    message = str(err)
    assert err.key == key
    assert "\n" not in message
    assert message.startswith(f"{key} = ")
    assert ": " in message[len(key) :]


@pytest.mark.parametrize(("overrides", "key"), [pytest.param(o, k, id=i) for i, o, k in BAD_INPUTS])
def test_load_scenario_rejects_bad_input(overrides: list[str], key: str) -> None:
    """load_scenario raises a one-line ConfigError naming the offending key."""
    cfg = compose_config(overrides)
    with pytest.raises(ConfigError) as info:
        load_scenario(cfg)
    assert_one_line_naming(info.value, key)
    if key.endswith(".name"):
        assert "file-name-safe" in str(info.value)


def validate_fixed_layout(layout: Layout, shape: ModelShape, level_sizes: tuple[int, ...]) -> None:
    """Raise ConfigError unless a fixed layout can run this model on this network: the levels
    (`check_layout_levels`, as a scenario checks them), then the model (the model's
    `layout_misfit`, which a run checks at each grid size), named as a layout key."""
    check_layout_levels(layout, level_sizes, "parallelism.layout")
    misfit = layout_misfit(layout, shape)
    if misfit is not None:
        raise ConfigError(f"parallelism.layout.{misfit.key}", misfit.value, misfit.rule)


@pytest.mark.parametrize(
    ("shape", "layout", "key"), [pytest.param(s, lay, k, id=i) for i, s, lay, k in BAD_LAYOUTS]
)
def test_validate_fixed_layout_rejects_bad_layout(
    request: pytest.FixtureRequest, shape: ModelShape, layout: Layout, key: str
) -> None:
    """validate_fixed_layout raises a one-line ConfigError naming the layout key at fault."""
    level_sizes = LEVEL_SIZES.get(request.node.callspec.id, (8,))
    with pytest.raises(ConfigError) as info:
        validate_fixed_layout(layout, shape, level_sizes)
    assert_one_line_naming(info.value, key)


def test_validate_fixed_layout_accepts_spec_layout() -> None:
    """The spec §16.3 layout is valid for its model on 8-GPU nodes."""
    validate_fixed_layout(GOOD_LAYOUT, SHAPE, (8,))


def test_config_error_message_and_pickle_round_trip() -> None:
    """ConfigError formats as `key = value: allowed` and survives pickling (joblib workers)."""
    err = ConfigError("hardware.hbm_bandwidth_gb_per_s", -1.0, "must be a positive finite number")
    expected = "hardware.hbm_bandwidth_gb_per_s = -1.0: must be a positive finite number"
    assert str(err) == expected
    assert str(pickle.loads(pickle.dumps(err))) == expected


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ("abc", "must be a positive integer"),
        ("132.5", "must be a positive integer"),
        ("0", "must be a positive integer"),
        ("90071992547409930", "must be a positive integer and <= 2^53 (the largest integer"),
    ],
)
def test_integer_error_names_the_2_53_bound_only_to_a_value_above_it(value: str, rule: str) -> None:
    """Every integer key is bounded by 2^53, but only a value above it is told so: to a word,
    a fraction or zero the bound is noise."""
    with pytest.raises(ConfigError) as info:
        load_scenario(compose_config([f"hardware.sms={value}"]))
    message = str(info.value)
    assert rule in message
    if "2^53" not in rule:
        assert "2^53" not in message
