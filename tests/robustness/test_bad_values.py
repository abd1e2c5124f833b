"""Names that become paths, and numbers out of range, stop `dmlimits` before any work.

Each input is preflighted in-process as `main` does (exit 2, one line on stderr naming the key,
nothing written); a few run the real command to show no traceback and no file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.robustness.conftest import run_cli, tree
from tests.robustness.test_bad_input import assert_one_line_error, check_in_process

NAME_INPUTS = [
    # (id, command-line arguments, key the message must name)
    ("slash_in_hardware_name", ["hardware.name=team/h100"], "hardware.name"),
    ("space_in_hardware_name", ["hardware.name='my gpu'"], "hardware.name"),
    ("dotdot_hardware_name", ["hardware.name=.."], "hardware.name"),
    ("dotdot_path_hardware_name", ["hardware.name=../etc"], "hardware.name"),
    ("hidden_hardware_name", ["hardware.name=.h100"], "hardware.name"),
    ("equals_in_hardware_name", ["hardware.name='a=b'"], "hardware.name"),
    ("backslash_in_hardware_name", ["hardware.name='a\\\\b'"], "hardware.name"),
    ("long_hardware_name", [f"hardware.name={'x' * 101}"], "hardware.name"),
    ("empty_hardware_name", ["hardware.name=''"], "hardware.name"),
    ("numeric_hardware_name", ["hardware.name=5"], "hardware.name"),
    ("slash_in_scaling_name", ["scaling.name=dense/v2"], "scaling.name"),
    ("space_in_scaling_name", ["scaling.name='dense v2'"], "scaling.name"),
    ("dotdot_batch_name", ["batch.name=.."], "batch.name"),
    ("star_in_batch_name", ["batch.name='crit*'"], "batch.name"),
    ("bracket_in_batch_name", ["batch.name='crit[1]'"], "batch.name"),
    ("newline_in_batch_name", ["batch.name='a\\nb'"], "batch.name"),
    ("colon_in_parallelism_name", ["parallelism.name='a:b'"], "parallelism.name"),
    ("unicode_slash_in_hardware_name", ["hardware.name='a\u2215b'"], "hardware.name"),
]  # fmt: skip

NUMBER_INPUTS = [
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
    ("huge_network_bandwidth", ["hardware.network.bandwidth_gb_per_s=[1e308,100]"],
     "hardware.network.bandwidth_gb_per_s[0]"),
    ("huge_network_latency", ["hardware.network.latency_us=[1.125,1e308]"],
     "hardware.network.latency_us[1]"),
    ("huge_flop_per_clock", ["hardware.flop_per_clock_per_thread=1e308"],
     "hardware.flop_per_clock_per_thread"),
    ("sms_beyond_int64", ["hardware.sms=100000000000000000000"], "hardware.sms"),
    ("sms_as_float_exponent", ["hardware.sms=1e20"], "hardware.sms"),
    ("sms_beyond_2_53", ["hardware.sms=9007199254740993"], "hardware.sms"),
    ("peak_rate_overflow", ["hardware.sms=9007199254740992", "hardware.max_clock_mhz=1e6",
                            "hardware.flop_per_clock_per_thread=1e6"], "hardware.sms"),
    ("level_size_beyond_int64", ["hardware.network.level_sizes=[100000000000000000000]"],
     "hardware.network.level_sizes[0]"),
    ("d_model_beyond_int64", ["scaling.grid.kind=list", "scaling.grid.d_models=[100000000000000000000]"],
     "scaling.grid.d_models[0]"),
    ("d_model_overflowing_laws", ["scaling.grid.kind=list", "scaling.grid.d_models=[9007199254740992]"],
     "scaling.grid"),
    ("steep_depth_exponent", ["scaling.depth.exponent=9"], "scaling.grid"),
    ("huge_depth_exponent", ["scaling.depth.exponent=1e308"], "scaling.depth.exponent"),
    ("huge_tokens_per_param", ["scaling.tokens_per_param=1e308"], "scaling.tokens_per_param"),
    ("seq_len_beyond_int64", ["scaling.seq_len=100000000000000000000"], "scaling.seq_len"),
    ("huge_batch_reference", ["batch.reference_tokens=1e308"], "batch.reference_tokens"),
    ("huge_batch_exponent", ["batch.exponent=1e308"], "batch.exponent"),
    ("huge_negative_batch_exponent", ["batch.exponent=-1e308"], "batch.exponent"),
    ("chunk_beyond_int64", ["execution.chunk_size=100000000000000000000"], "execution.chunk_size"),
    ("workers_beyond_int64", ["execution.n_jobs=100000000000000000000"], "execution.n_jobs"),
    ("billion_value_axis", ["++sweep.axes={hardware.hbm_bandwidth_gb_per_s: {start: 1000, stop: 2000, num: 1000000000}}"],
     "sweep.axes.hardware.hbm_bandwidth_gb_per_s"),
    ("tiny_step_axis", ["++sweep.axes={hardware.hbm_bandwidth_gb_per_s: {start: 1000, stop: 2000, step: 1e-9}}"],
     "sweep.axes.hardware.hbm_bandwidth_gb_per_s"),
    ("huge_num_axis", ["++sweep.axes={hardware.hbm_bandwidth_gb_per_s: {start: 1000, stop: 2000, num: 100000000000000000000}}"],
     "sweep.axes.hardware.hbm_bandwidth_gb_per_s.num"),
    ("product_of_axes_too_large",
     ["++sweep.axes={hardware.hbm_bandwidth_gb_per_s: {start: 1000, stop: 2000, num: 1000}, hardware.max_clock_mhz: {start: 1000, stop: 2000, num: 1000}}"],
     "sweep"),
    ("sweep_above_own_limit", ["sweep=smoke", "+sweep.max_series=5"], "sweep"),
    ("zero_sweep_limit", ["+sweep.max_series=0"], "sweep.max_series"),
    ("huge_forecast_base", ["forecast.base_flop=1e308"], "forecast.base_flop"),
    ("huge_forecast_year", ["forecast.base_year=1e308"], "forecast.base_year"),
    ("huge_growth", ["forecast.growth_per_year=[4,1e308]"], "forecast.growth_per_year[1]"),
    ("axis_value_overflowing", ["++sweep.axes={hardware.hbm_bandwidth_gb_per_s: [2000, 1e308]}"],
     "hardware.hbm_bandwidth_gb_per_s"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "key"), [pytest.param(a, k, id=i) for i, a, k in NAME_INPUTS])
def test_preflight_rejects_unsafe_name(
    args: list[str],
    key: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A name that would become a bad path stops the command before any work, in one line."""
    code, err = check_in_process(args, tmp_path, monkeypatch, capsys)
    assert code == 2
    assert_one_line_error(err, key, "file-name-safe")
    assert tree(tmp_path) == []


@pytest.mark.parametrize(("args", "key"), [pytest.param(a, k, id=i) for i, a, k in NUMBER_INPUTS])
def test_preflight_rejects_out_of_range_number(
    args: list[str],
    key: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A number that would overflow, or a sweep too large, stops the command in one line."""
    code, err = check_in_process(args, tmp_path, monkeypatch, capsys)
    assert code == 2
    assert_one_line_error(err, key)
    assert tree(tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["hardware.name=team/h100"], id="slash_name"),
        pytest.param(["hardware.sms=100000000000000000000"], id="int_beyond_int64"),
        pytest.param(
            [
                "++sweep.axes={hardware.hbm_bandwidth_gb_per_s: {start: 1, stop: 2, num: 1000000000}}"
            ],
            id="billion_value_axis",
        ),
    ],
)
def test_cli_refuses_bad_value_without_traceback(args: list[str], tmp_path: Path) -> None:
    """The real command exits 2 with one line, no traceback, and writes nothing at all."""
    result = run_cli(tmp_path, [*args, f"output.root={tmp_path / 'data'}"])
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert tree(tmp_path) == []
