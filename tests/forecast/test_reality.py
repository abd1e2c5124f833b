"""The reality check: the model's answer to each observed run (docs/sources.md, "The reality check")."""

from __future__ import annotations

import datetime as dt

import pytest

from pipeline.forecast.reality import (
    CONTRADICTION_GPU_RATIO,
    RealityReason,
    catalog_hardware,
    check_on,
    check_run,
    epoch_catalog_entries,
    epoch_presets,
    implied_utilization,
    physics_scenario,
    reality_checks,
    reality_dicts,
    trained_flop,
    width_at_flop,
)
from pipeline.forecast.settings import forecast_from_config
from pipeline.io.rows import Provenance, table_from_rows
from pipeline.io.tables import table_spec
from pipeline.model.records.hardware import peak_flop_per_s
from pipeline.schema import ConfigError, compose_config, load_scenario
from pipeline.schema.projected import preset_spec
from pipeline.sources.epoch import ObservedRun
from tests.observed_runs import H100, HOUR_S, trained_run

CONSUMER = "NVIDIA GeForce GTX 285"
"""An accelerator with neither a preset nor a catalog entry."""


def _run(
    flop: float,
    hardware: tuple[str, ...] = (H100,),
    n_gpu: int | None = 8,
    hours: float | None = 24.0,
    line: int = 2,
) -> ObservedRun:
    """A run of `flop` FLOP dated 2024-01-01 (`tests.observed_runs.trained_run`)."""
    return trained_run(f"run {line}", flop, hours, line, hardware, n_gpu, dt.date(2024, 1, 1))


@pytest.mark.parametrize("physics", ["paper", "realistic"])
def test_reality_tiny_run_is_feasible(physics: str) -> None:
    """A run of 1e19 FLOP on 8 H100s for a day is feasible and no contradiction."""
    (check,) = reality_checks([_run(1e19)], physics=[physics])
    assert check.point is not None
    assert check.point.feasible
    assert check.model_n_gpu is not None
    assert check.model_n_gpu <= 8
    assert not check.contradiction
    assert check.reason is None
    assert check.precision == "bf16"  # no contradiction: the physics' own format


@pytest.mark.parametrize("physics", ["paper", "realistic"])
def test_reality_impossible_run_is_contradiction(physics: str) -> None:
    """1e26 FLOP on 8 H100s in an hour (implied utilization ~ 4e6) is a contradiction."""
    (check,) = reality_checks([_run(1e26, hours=1.0)], physics=[physics])
    assert check.implied_utilization is not None
    assert check.implied_utilization > 1e6
    assert check.contradiction
    assert check.point is not None
    ratio = check.gpu_ratio
    assert not check.point.feasible or (ratio is not None and ratio > CONTRADICTION_GPU_RATIO)


def test_reality_gpt_neox_20b_needs_small_micro_batches() -> None:
    """GPT-NeoX-20B as Epoch AI's notable-models data records it (docs/sources.md): 9.32e22
    FLOP on 96 A100 SXM4 40 GB in 2,160 h (Black et al. 2022, arXiv:2204.06745: 12 servers
    of 8). Under realistic physics the model trains that compute on at most twice those GPUs.
    With the attention kernels the run had (`fusion=fused`, the s × s scores in HBM: 2022,
    before flash attention) and no dropout, as it trained (EleutherAI/gpt-neox configs/20B.yml:
    hidden and attention dropout 0; the presets' `scaling.dropout: false`), it does so on 112
    GPUs with micro-batches of 2 sequences and needs 128 with the paper's fewest four
    microbatch counts alone (`small_microbatches` off). With GPT's dropout in every layer
    (`scaling.dropout=true`, the grid before) the rule decides the answer: 128 GPUs with it,
    and without it no layout on 128 trains in time and it needs 224, a contradiction
    (docs/model.md R.7)."""
    run = trained_run("GPT-NeoX-20B", 9.31627008e22, 2160.0, 292, ("NVIDIA A100 SXM4 40 GB",), 96)
    presets = epoch_presets()
    (check,) = reality_checks([run], physics=["realistic"])
    assert check.model_n_gpu is not None
    assert not check.contradiction
    assert check.model_n_gpu <= 2 * 96
    its_day = ["physics=realistic", "physics.fusion=fused"]
    without_rule = "physics.small_microbatches=false"
    on = check_run(run, load_scenario(compose_config(its_day)), presets)
    off = check_run(run, load_scenario(compose_config([*its_day, without_rule])), presets)
    assert on.model_n_gpu is not None
    assert off.model_n_gpu is not None
    assert not on.contradiction
    assert on.model_n_gpu < off.model_n_gpu
    gpt = [*its_day, "scaling.dropout=true"]
    on = check_run(run, load_scenario(compose_config(gpt)), presets)
    assert on.model_n_gpu is not None
    assert not on.contradiction
    off = check_run(run, load_scenario(compose_config([*gpt, without_rule])), presets)
    assert off.model_n_gpu is not None
    assert off.contradiction


def test_reality_grok3_is_answered_in_bf16_and_fp8_where_bf16_contradicts() -> None:
    """Grok-3 as Epoch AI's data record it (docs/sources.md §11): 4.64e26 FLOP on 100,000 H100
    SXM5 in 2,400 h, an implied utilization of 0.54 of the 16-bit peak, in a number format the
    data do not give. Realistic BF16 physics trains it on 163,840 H100s, under twice its count:
    no contradiction, answered in BF16. The same compute and time on 75,000 H100s is more than
    BF16 can do on twice that (a contradiction), while FP8 (docs/model.md R.11) trains it on
    fewer GPUs than twice the run's, so the generous reading answers that run in FP8."""
    presets = epoch_presets()
    grok = trained_run("Grok-3", 4.64e26, 2400.0, 7, (H100,), 100_000)
    (real,) = reality_checks([grok], physics=["realistic"])
    assert real.precision == "bf16"
    assert not real.contradiction
    assert real.model_n_gpu is not None
    assert real.model_n_gpu <= 2 * 100_000
    run = trained_run("Grok-3 on 75,000", 4.64e26, 2400.0, 7, (H100,), 75_000)
    scenario = physics_scenario("realistic")
    bf16 = check_on(run, scenario, presets[H100], preset_spec(presets[H100]))
    assert bf16.precision == "bf16"
    assert bf16.contradiction
    (check,) = reality_checks([run], physics=["realistic"])
    assert check.precision == "fp8"
    assert not check.contradiction
    assert check.model_n_gpu is not None
    assert bf16.model_n_gpu is None or check.model_n_gpu < bf16.model_n_gpu
    assert check.model_n_gpu <= 2 * 75_000


@pytest.mark.parametrize(
    ("physics", "hardware"),
    [("paper", H100), ("paper", "Google TPU v4"), ("realistic", "Google TPU v4")],
)
def test_reality_fp8_is_not_tried_where_it_cannot_answer(physics: str, hardware: str) -> None:
    """The paper's physics has one format, and an accelerator without an FP8 peak (TPU v4,
    built from the catalog) runs none: an impossible run stays a BF16 contradiction."""
    if hardware != H100:
        _, hw = catalog_hardware(epoch_catalog_entries()[hardware])
        assert not hw.fp8_flop_per_s
    (check,) = reality_checks([_run(1e26, hardware=(hardware,), hours=1.0)], physics=[physics])
    assert check.contradiction
    assert check.precision == "bf16"


def test_reality_unknown_hardware_is_row_with_reason() -> None:
    """A run on an accelerator with neither a preset nor a catalog entry is kept, with a reason
    and no answer."""
    (check,) = reality_checks([_run(1e22, hardware=(CONSUMER,))], physics=["paper"])
    assert check.reason == RealityReason.NO_PRESET
    assert check.point is None
    assert check.model_n_gpu is None
    assert not check.contradiction


@pytest.mark.parametrize(
    ("name", "entry", "template", "peak", "domain"),
    [
        ("Google TPU v4", "tpu_v4", "a100_sxm_80gb", 275e12, 4096),
        ("Google TPU v3", "tpu_v3", "v100_sxm", 123e12, 1024),
        ("NVIDIA P100", "p100_sxm2", "v100_sxm", 21.2e12, 8),
    ],
)
def test_reality_catalog_accelerator_is_checked_on_catalog_hardware(
    name: str, entry: str, template: str, peak: float, domain: int
) -> None:
    """A run on a catalog accelerator without a preset (a TPU pod, the P100) is answered on
    hardware built from its catalog values (its peak, its ICI or NVLink domain) on the preset
    released last before it, and says so."""
    (check,) = reality_checks([_run(1e19, hardware=(name,))], physics=["paper"])
    assert (check.hardware_source, check.catalog_entry, check.preset) == (
        "catalog",
        entry,
        template,
    )
    assert check.peak_flop_per_s == pytest.approx(peak, rel=1e-12)
    assert check.point is not None
    assert check.point.feasible
    assert check.reason is None
    _, hw = catalog_hardware(epoch_catalog_entries()[name])
    assert hw.level_sizes[0] == domain


def test_reality_several_accelerators_is_row_with_reason() -> None:
    """A run on two accelerator kinds is kept with its reason."""
    (check,) = reality_checks([_run(1e22, hardware=(H100, "NVIDIA V100"))], physics=["paper"])
    assert check.reason == RealityReason.SEVERAL_ACCELERATORS


def test_reality_unstated_run_is_left_out() -> None:
    """A run that does not state its hours or its count is not checked."""
    runs = [_run(1e22, hours=None), _run(1e22, n_gpu=None, line=3), _run(1e22, hardware=())]
    assert reality_checks(runs) == []


def test_reality_epoch_presets_follow_catalog() -> None:
    """Epoch's H100 name maps to the h100_sxm preset through the catalog's epoch_name."""
    presets = epoch_presets()
    assert presets[H100] == "h100_sxm"
    assert "Google TPU v4" not in presets
    assert epoch_catalog_entries()["Google TPU v4"].gpu == "tpu_v4"


def test_implied_utilization_recovers_known_fraction() -> None:
    """A run of half its accelerators' peak for its hours implies utilization 0.5."""
    peak = peak_flop_per_s(preset_spec("h100_sxm"))
    flop = 0.5 * 16 * peak * 10 * HOUR_S
    assert implied_utilization(flop, 16, peak, 10 * HOUR_S) == pytest.approx(0.5)


@pytest.mark.parametrize("physics", ["paper", "realistic"])
@pytest.mark.parametrize("flop", [1e18, 3.8e25, 4.6e26])
def test_width_at_flop_is_narrowest(flop: float, physics: str) -> None:
    """The width trains the compute under the physics, and 128 narrower does not."""
    scenario = physics_scenario(physics)
    d = width_at_flop(flop, scenario)
    assert d is not None
    assert trained_flop(d, scenario) >= flop
    assert d == 128 or trained_flop(d - 128, scenario) < flop


def test_trained_flop_realistic_counts_more_than_paper() -> None:
    """Realistic physics counts attention and its own tokens: more FLOP at one width."""
    d = 8192
    assert trained_flop(d, physics_scenario("realistic")) > trained_flop(
        d, physics_scenario("paper")
    )


def test_reality_rows_fit_the_registered_schema() -> None:
    """Rows with and without an answer make a table of the `reality` schema."""
    runs = [
        _run(1e19),
        _run(1e22, hardware=(CONSUMER,), line=3),
        _run(1e19, hardware=("Google TPU v3",), line=4),
    ]
    rows = reality_dicts(reality_checks(runs, physics=["paper"]), "abc", Provenance(run_id="r"))
    table = table_from_rows(rows, table_spec("reality").schema)
    assert table.column("reason").to_pylist() == [None, RealityReason.NO_PRESET, None]
    assert table.column("contradiction").to_pylist() == [False, False, False]
    assert table.column("hardware_source").to_pylist() == ["preset", None, "catalog"]
    assert table.column("catalog_entry").to_pylist() == [None, None, "tpu_v3"]
    assert table.column("precision").to_pylist() == ["bf16", None, "bf16"]


def test_reality_setting_off_by_default_on_in_nightly() -> None:
    """forecast.reality is off in the default config and on in +experiment=nightly."""
    assert not forecast_from_config(compose_config([]).forecast).reality
    nightly = compose_config(["+experiment=nightly"]).forecast
    assert forecast_from_config(nightly).reality


def test_reality_setting_must_be_a_boolean() -> None:
    """A non-boolean forecast.reality is a one-line ConfigError naming the key."""
    node = compose_config(["forecast.reality=maybe"]).forecast
    with pytest.raises(ConfigError, match=r"forecast\.reality"):
        forecast_from_config(node)
