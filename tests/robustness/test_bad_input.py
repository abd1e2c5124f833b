"""The command line's bad-input table: every way of getting a config wrong stops `dmlimits` at
once: one line, exit 2, nothing written (and a value far outside the catalog warns in one line).

The inputs tried are the lists below, one test each. Mistakes Hydra finds (unknown group
options and keys, override syntax, sweeps) run the real command in a subprocess
(`HYDRA_INPUTS`) and show Hydra's own message on one line, `dmlimits: error: <Hydra's message>`,
but for a key the schema refuses, which shows the schema's line (`pipeline.cli.check`);
mistakes in values (`VALUE_INPUTS`, and every input of tests/schema/test_bad_input.py) go through
the same command-line check in-process, which is faster, and show the schema's
`dmlimits: error: <key> = <value>: <allowed>`. Each asserts one stderr line naming the input, and
that the working directory and the output root are left exactly as they were.
"""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pipeline.cli.check import check_command_line as check_strictly
from pipeline.cli.main import EXIT_BAD_INPUT, check
from pipeline.nightly import run as nightly_run
from pipeline.schema.plausible import warning_lines
from tests.nightly.runs import nightly_config
from tests.robustness.conftest import run_cli, tree
from tests.schema.test_bad_input import BAD_INPUTS as SCHEMA_INPUTS

HYDRA_INPUTS = [
    # (id, command-line arguments, fragments the one line must contain: the input, Hydra's reason)
    ("unknown_preset", ["hardware=h100_sxmm"], ["hardware/h100_sxmm", "options in 'hardware': a100_sxm,"]),
    ("unknown_preset_in_sweep", ["-m", "hardware=a100_sxm,h100_sxmm"],
     ["hardware/h100_sxmm", "(job hardware=h100_sxmm)"]),
    ("unknown_group_option", ["batch=critcal"], ["batch/critcal", "critical"]),
    ("unknown_experiment", ["-m", "+experiment=what_iff"], ["experiment/what_iff", "what_if"]),
    ("unknown_experiment_without_multirun", ["+experiment=what_iff"], ["experiment/what_iff"]),
    ("experiment_without_plus", ["experiment=what_if"], ["'experiment'", "+experiment=what_if"]),
    ("group_value_null", ["hardware=null"], ["Config group override", "NoneType"]),
    ("unknown_key", ["hardware.foo=1"], ["hardware.foo = 1: unknown key; allowed keys: "]),
    ("misspelt_key", ["hardware.hbm_bandwith_gb_per_s=3352"],
     ["hardware.hbm_bandwith_gb_per_s = 3352: unknown key", "did you mean hbm_bandwidth_gb_per_s?"]),
    ("unknown_root_key", ["outptu.root=data"],
     ["outptu = {'root': 'data'}: unknown key", "did you mean output?"]),
    ("unknown_nested_key", ["hardware.network.foo=1"], ["hardware.network.foo = 1: unknown key"]),
    ("misspelt_key_in_sweep", ["-m", "hardware.network.latency=1,2"],
     ["hardware.network.latency = 1: unknown key", "did you mean latency_us? (job hardware.network.latency=1)"]),
    ("optional_key_without_plus", ["sweep.max_series=3"], ["'sweep.max_series'", "+sweep.max_series=3"]),
    ("delete_unknown_key", ["~hardware.foo"], ["'hardware.foo' does not exist"]),
    ("add_existing_key", ["+hardware.sms=3"], ["'hardware.sms'", "remove + prefix"]),
    ("unknown_hydra_key", ["hydra.foo=1"], ["'hydra.foo'"]),
    ("override_parse_error", ["hardware.sms=[1,"], ["'hardware.sms=[1,'", "override_grammar"]),
    ("index_syntax", ["hardware.network.bandwidth_gb_per_s[0]=5"],
     ["'hardware.network.bandwidth_gb_per_s[0]=5'", "LexerNoViableAltException"]),
    ("override_without_value", ["hardware"], ["'hardware'", "missing EQUAL"]),
    ("uncomposable_list_key", ["hardware.network.level_sizes.x=5"],
     ["invalid literal", "hardware.network.level_sizes.x=5"]),
    ("sweep_without_multirun", ["hardware=a100_sxm,h100_sxm"],
     ["'hardware=a100_sxm,h100_sxm'", "add --multirun"]),
    ("empty_range_sweep", ["-m", "scaling.duration_months=range(6,1)"],
     ["scaling.duration_months=range(6,1)", "no values"]),
    ("glob_matching_nothing", ["-m", "hardware=glob(zz*)"], ["hardware=glob(zz*)", "no values"]),
    ("glob_of_plain_key", ["-m", "scaling.duration_months=glob(*)"],
     ["scaling.duration_months=glob(*)", "no values"]),
    ("interval_sweep", ["-m", "scaling.duration_months=interval(1,6)"], ["INTERVAL_SWEEP"]),
    ("multirun_beyond_max_series", ["-m", "scaling.duration_months=range(1,1000000000)"],
     ["range(1,1000000000)", "sweep.max_series = 100000", "sweep.axes"]),
    ("multirun_product_beyond_max_series",
     ["-m", "hardware=a100_sxm,h100_sxm", "scaling.duration_months=3,6", "+sweep.max_series=3"],
     ["scaling.duration_months=3,6", "sweep.max_series = 3"]),
    ("sweep_of_hydra_setting", ["-m", "hydra.job.name=a,b"], ["'hydra.job.name=a,b'", "not supported"]),
    ("unknown_option", ["--frobnicate"], ["'--frobnicate'", "--help"]),
    ("config_name", ["--config-name", "other"], ["--config-name", "--config-dir"]),
    ("missing_config_dir", ["--config-dir", "nowhere"], ["nowhere", "not a directory"]),
    ("bad_value_in_one_job", ["-m", "scaling.duration_months=3,0"],
     ["scaling.duration_months = 0: ", "job scaling.duration_months=0"]),
    ("bad_value_in_experiment_sweep", ["-m", "+experiment=what_if", "hardware.u_eff=2"],
     ["hardware.u_eff = 2: ", "job hardware="]),
    ("bad_value_in_experiment_without_multirun", ["+experiment=what_if", "hardware.u_eff=2"],
     ["hardware.u_eff = 2: ", "job hardware="]),
    ("misspelt_output_key", ["+output.rot=x"], ["output.rot = 'x': unknown key", "root"]),
    ("unknown_root_node", ["+outptu.root=x"], ["outptu = {'root': 'x'}: unknown key", "output"]),
    ("nightly_in_multirun", ["-m", "+experiment=nightly", "scaling.duration_months=2,3"],
     ["output.run_date", "one job"]),
]  # fmt: skip

VALUE_INPUTS = [
    # (id, command-line arguments, key the message must name): values the stages after the
    # schema check (execution, output, sweep, forecast); the schema's own are SCHEMA_INPUTS
    ("string_for_boolean", ["output.whole_grid=yes"], "output.whole_grid"),
    ("string_for_workers", ["execution.n_jobs=two"], "execution.n_jobs"),
    ("zero_workers", ["execution.n_jobs=0"], "execution.n_jobs"),
    ("zero_chunk_size", ["execution.chunk_size=0"], "execution.chunk_size"),
    ("unknown_backend", ["execution.backend=mpi"], "execution.backend"),
    ("string_for_ahead", ["execution.ahead=sometimes"], "execution.ahead"),
    ("inverted_sweep_axis_range", ["++sweep.axes={hardware.hbm_bandwidth_gb_per_s: {start: 4000, stop: 2000, step: 1000}}"], "sweep.axes.hardware.hbm_bandwidth_gb_per_s"),
    ("empty_sweep_axis", ["++sweep.axes={hardware.hbm_bandwidth_gb_per_s: []}"], "sweep.axes.hardware.hbm_bandwidth_gb_per_s"),
    ("unknown_sweep_choice", ["sweep=smoke", "sweep.choices.batch=[critical,nope]"], "sweep.choices.batch"),
    ("empty_output_root", ["output.root="], "output.root"),
    ("numeric_output_root", ["output.root=5"], "output.root"),
    ("chunk_beyond_int64", ["execution.chunk_size=100000000000000000000"], "execution.chunk_size"),
    ("workers_beyond_int64", ["execution.n_jobs=100000000000000000000"], "execution.n_jobs"),
    ("billion_value_axis", ["++sweep.axes={hardware.hbm_bandwidth_gb_per_s: {start: 1000, stop: 2000, num: 1000000000}}"], "sweep.axes.hardware.hbm_bandwidth_gb_per_s"),
    ("tiny_step_axis", ["++sweep.axes={hardware.hbm_bandwidth_gb_per_s: {start: 1000, stop: 2000, step: 1e-9}}"], "sweep.axes.hardware.hbm_bandwidth_gb_per_s"),
    ("huge_num_axis", ["++sweep.axes={hardware.hbm_bandwidth_gb_per_s: {start: 1000, stop: 2000, num: 100000000000000000000}}"], "sweep.axes.hardware.hbm_bandwidth_gb_per_s.num"),
    ("product_of_axes_too_large", ["++sweep.axes={hardware.hbm_bandwidth_gb_per_s: {start: 1000, stop: 2000, num: 1000}, hardware.max_clock_mhz: {start: 1000, stop: 2000, num: 1000}}"], "sweep"),
    ("sweep_above_own_limit", ["sweep=smoke", "+sweep.max_series=5"], "sweep"),
    ("zero_sweep_limit", ["+sweep.max_series=0"], "sweep.max_series"),
    ("huge_forecast_base", ["forecast.base_flop=1e308"], "forecast.base_flop"),
    ("huge_forecast_year", ["forecast.base_year=1e308"], "forecast.base_year"),
    ("huge_growth", ["forecast.growth_per_year=[4,1e308]"], "forecast.growth_per_year[1]"),
    ("axis_value_overflowing", ["++sweep.axes={hardware.hbm_bandwidth_gb_per_s: [2000, 1e308]}"], "hardware.hbm_bandwidth_gb_per_s"),
]  # fmt: skip

TEXT_INPUTS = [
    # (id, command-line arguments, fragments of the one line): text refused before Hydra reads it
    ("override_nested_400_deep", [f"hardware.sms={'[' * 400}1{']' * 400}"],
     ["override 'hardware.sms=[[[", "nested more than 32 levels deep"]),
    ("override_nested_in_sweep_axis", [f"++sweep.axes={{hardware.sms: {'[' * 40}1{']' * 40}}}"],
     ["nested more than 32 levels deep"]),
]  # fmt: skip

WARNED_INPUTS = [
    # (id, command-line arguments, fragment of the one warning line): run, with a warning
    ("tb_per_s_in_gb_per_s_key", ["hardware.hbm_bandwidth_gb_per_s=3.35"],
     "TB/s typed into a GB/s key? (3.35 TB/s = 3350 GB/s)"),
    ("ghz_in_mhz_key", ["hardware.max_clock_mhz=1.83"], "GHz typed into a MHz key?"),
    ("picosecond_latency", ["hardware.network.latency_us=[1e-6,1.125]"],
     "hardware.network.latency_us[0] = 1e-06 is outside the plausible range"),
]  # fmt: skip

GOOD_INPUTS = [
    # (id, command-line arguments): edge cases that are allowed
    ("infinite_network_bandwidth", ["hardware.network.bandwidth_gb_per_s=[inf,100]"]),
    ("infinite_network_preset", ["hardware=h100_infinite_network_low_latency"]),
    ("zero_latencies", ["hardware.matmul_latency_us=0", "hardware.network.latency_us=[0,0]"]),
    ("multirun_of_presets", ["-m", "hardware=a100_sxm,h100_sxm", "scaling=dense,sparse"]),
    ("experiment", ["-m", "+experiment=what_if"]),
    ("glob_sweep", ["-m", "hardware=glob(h100_sxm)"]),
    ("range_sweep", ["-m", "scaling.duration_months=range(1,4)"]),
    ("sweep_file", ["sweep=smoke"]),
    ("help_left_to_hydra", ["--help", "hardware=nonsense"]),
    ("experiment_without_multirun", ["+experiment=base_comparison"]),
]


def assert_one_line_error(stderr: str, key: str, fragment: str = "") -> None:
    """stderr is exactly `dmlimits: error: <key> = <value>: <allowed>` on one line."""
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    prefix = f"dmlimits: error: {key} = "
    assert lines[0].startswith(prefix), lines[0]
    assert ": " in lines[0][len(prefix) :], lines[0]
    assert fragment in lines[0], lines[0]


def assert_one_line_message(stderr: str, fragments: list[str]) -> None:
    """stderr is exactly one `dmlimits: error: ...` line holding every fragment."""
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("dmlimits: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.fixture(scope="module")
def hydra_results(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, tuple[Path, subprocess.CompletedProcess[str]]]:
    """Every HYDRA_INPUTS command run once, four at a time, each in its own empty directory."""
    cwds = {name: tmp_path_factory.mktemp(name) for name, *_ in HYDRA_INPUTS}  # not thread-safe

    def run(case: tuple[str, list[str], list[str]]) -> subprocess.CompletedProcess[str]:
        name, args = case[0], case[1]
        return run_cli(cwds[name], [*args, f"output.root={cwds[name] / 'data'}"])

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, HYDRA_INPUTS))
    return {
        case[0]: (cwds[case[0]], result) for case, result in zip(HYDRA_INPUTS, results, strict=True)
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "fragments"), [pytest.param(i, f, id=i) for i, _, f in HYDRA_INPUTS]
)
def test_cli_rejects_hydra_level_mistake(
    hydra_results: dict[str, tuple[Path, subprocess.CompletedProcess[str]]],
    name: str,
    fragments: list[str],
) -> None:
    """The real command exits 2 with one line naming the input, and writes nothing at all."""
    cwd, result = hydra_results[name]
    assert result.returncode == EXIT_BAD_INPUT, result.stderr
    assert_one_line_message(result.stderr, fragments)
    assert result.stdout == ""
    assert tree(cwd) == []


def check_in_process(
    args: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, str]:
    """Check a command line as `main` does, from an empty working directory; (code, stderr)."""
    monkeypatch.chdir(tmp_path)
    root = (
        [] if any(a.startswith("output.root=") for a in args) else [f"output.root={tmp_path}/data"]
    )
    code = check([*args, *root])
    captured = capsys.readouterr()
    assert captured.out == ""
    return code, captured.err


@pytest.mark.parametrize(
    ("args", "key"),
    [pytest.param(a, k, id=i) for i, a, k in VALUE_INPUTS]
    + [pytest.param(o, k, id=f"schema-{i}") for i, o, k in SCHEMA_INPUTS],
)
def test_check_rejects_bad_value(
    args: list[str],
    key: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A bad value, this layer's or any the schema rejects (tests/schema), stops the command
    before Hydra: exit 2, one line naming the key, no file."""
    code, err = check_in_process(args, tmp_path, monkeypatch, capsys)
    assert code == EXIT_BAD_INPUT
    assert_one_line_error(err, key)
    assert tree(tmp_path) == []


def test_check_rejects_root_under_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An output root below a regular file is refused, naming the file, and nothing changes."""
    (tmp_path / "blocker").write_text("a file, not a directory\n")
    monkeypatch.chdir(tmp_path)
    code = check([f"output.root={tmp_path / 'blocker' / 'data'}"])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT
    assert_one_line_error(err, "output.root", "is a file")
    assert tree(tmp_path) == ["blocker"]


def test_check_rejects_read_only_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An output root on a file system nobody may write (/proc) is refused in one line."""
    monkeypatch.chdir(tmp_path)
    code = check(["output.root=/proc/dmlimits-robustness/data"])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT
    assert_one_line_error(err, "output.root", "can be created and written")
    assert not Path("/proc/dmlimits-robustness").exists()


@pytest.mark.parametrize("args", [pytest.param(a, id=i) for i, a in GOOD_INPUTS])
def test_check_accepts_valid_edge_input_without_writing(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Valid input (infinite bandwidth, zero latency, sweeps) passes, and the check writes nothing."""
    monkeypatch.chdir(tmp_path)
    check_strictly([*args, f"output.root={tmp_path / 'deep' / 'data'}"])
    assert tree(tmp_path) == []


@pytest.mark.parametrize(
    ("args", "fragments"), [pytest.param(a, f, id=i) for i, a, f in TEXT_INPUTS]
)
def test_check_refuses_hostile_text_before_hydra(
    args: list[str],
    fragments: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Text nested too deep for the parsers is refused in one line, not a traceback."""
    code, err = check_in_process(args, tmp_path, monkeypatch, capsys)
    assert code == EXIT_BAD_INPUT
    assert_one_line_message(err, fragments)
    assert tree(tmp_path) == []


@pytest.mark.parametrize(
    ("args", "fragment"), [pytest.param(a, f, id=i) for i, a, f in WARNED_INPUTS]
)
def test_check_warns_in_one_line_about_implausible_value(
    args: list[str],
    fragment: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A value far outside the catalog passes the check with one warning line naming it."""
    with warning_lines("dmlimits"):
        code, err = check_in_process(args, tmp_path, monkeypatch, capsys)
    assert code == 0
    [line] = err.splitlines()
    assert line.startswith("dmlimits: warning: "), line
    assert fragment in line


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
        pytest.param(["hardware=projected", "hardware.year=1e6"], id="projected_year_1e6"),
        pytest.param([f"hardware.sms={'[' * 400}1{']' * 400}"], id="override_400_deep"),
    ],
)
def test_cli_refuses_bad_value_without_traceback(args: list[str], tmp_path: Path) -> None:
    """The real command exits 2 with one line, no traceback, and writes nothing at all."""
    result = run_cli(tmp_path, [*args, f"output.root={tmp_path / 'data'}"])
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert tree(tmp_path) == []


@pytest.mark.parametrize("linked", ["run_date=2025-01-01", ".staging", "reports"])
def test_nightly_refuses_linked_folder_before_evaluating(
    linked: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A nightly root whose date, staging or reports folder is a symbolic link is refused in one
    line before any series is evaluated; the link and the folder it names stay as they were."""
    root, target = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    target.mkdir()
    (target / "kept").write_text("the link's target is never written\n")
    (root / linked).symlink_to(target)
    evaluated: list[object] = []
    monkeypatch.setattr(nightly_run, "execute_plan", lambda *a, **k: evaluated.append(a))
    code = nightly_run.run_nightly(nightly_config(root, "2025-01-01"), progress=False)
    lines = capsys.readouterr().err.splitlines()
    assert code == EXIT_BAD_INPUT
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"dmlimits: error: {root.resolve() / linked} is a symbolic link")
    assert evaluated == []
    assert (root / linked).is_symlink()
    assert tree(target) == ["kept"]
