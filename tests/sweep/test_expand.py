"""Expansion of a composed config into series: the product of choices and axes, in a fixed order."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from omegaconf import DictConfig, open_dict

from pipeline.schema import compose_config
from pipeline.schema.errors import ConfigError
from pipeline.sweep import expand_scenarios, expand_sweep, sweep_from_config

SMOKE = ["sweep=smoke"]


def with_sweep(sweep: dict[str, Any], overrides: list[str] | None = None) -> DictConfig:
    """The root config composed with `overrides`, its `sweep` node replaced by `sweep`."""
    cfg = compose_config(overrides or [])
    with open_dict(cfg):
        cfg.sweep = sweep
    return cfg


def points(series: list[Any]) -> list[dict[str, Any]]:
    """The sweep points of expanded series, decoded."""
    return [json.loads(s.sweep_point) for s in series]


def test_expand_without_sweep_is_one_series() -> None:
    """The default config (sweep=none) expands to its one scenario, with an empty sweep point."""
    (only,) = expand_sweep(compose_config())
    assert only.sweep_point == "{}"
    assert only.scenario.hardware_name == "h100_sxm"


def test_expand_axes_product_count_and_order() -> None:
    """Axes multiply, in the order written, the last one changing fastest."""
    cfg = with_sweep(
        {
            "axes": {
                "hardware.hbm_bandwidth_gb_per_s": [2000, 3000],
                "hardware.network.latency_us[*]": {"start": 1, "stop": 3, "step": 1},
            }
        }
    )
    series = expand_sweep(cfg)
    assert len(series) == 2 * 3
    assert [
        (p["hardware.hbm_bandwidth_gb_per_s"], p["hardware.network.latency_us[*]"])
        for p in points(series)
    ] == [
        (2000, 1),
        (2000, 2),
        (2000, 3),
        (3000, 1),
        (3000, 2),
        (3000, 3),
    ]
    hw = [s.scenario.hardware for s in series]
    assert [h.hbm_bandwidth_bytes_per_s for h in hw] == [2e12] * 3 + [3e12] * 3
    assert [h.net_latency_s for h in hw[:3]] == [(1e-6, 1e-6), (2e-6, 2e-6), (3e-6, 3e-6)]


def test_expand_is_deterministic() -> None:
    """Expanding the same config twice gives the same series ids in the same order."""
    first = [s.series_id for s in expand_sweep(compose_config(SMOKE), overrides=SMOKE)]
    second = [s.series_id for s in expand_sweep(compose_config(SMOKE), overrides=SMOKE)]
    assert first == second
    assert len(set(first)) == len(first)


def test_expand_choices_recompose_outermost() -> None:
    """Choices re-compose the config per option, outside the axes, in the order listed."""
    series = expand_sweep(compose_config(SMOKE), overrides=SMOKE)
    sweep = sweep_from_config(compose_config(SMOKE))
    assert len(series) == sweep.n_series == 2 * 3 * 2
    assert [s.scenario.batch_law_name for s in series] == ["critical"] * 6 + ["constant"] * 6
    assert points(series)[0] == {
        "batch": "critical",
        "hardware.hbm_bandwidth_gb_per_s": 2000,
        "hardware.network.latency_us[*]": 0.5,
    }


def test_expand_choices_keep_the_runs_overrides() -> None:
    """Each option is composed with the run's own overrides (here a smaller grid)."""
    overrides = [*SMOKE, "scaling.grid.max_d_model=16384"]
    series = expand_sweep(compose_config(overrides), overrides=overrides)
    assert {s.scenario.d_models for s in series} == {(12288, 14336, 16384)}


def test_expand_choice_conflicting_with_command_line_is_refused() -> None:
    """A command line that picks a group the sweep chooses over is a ConfigError, not ignored."""
    overrides = [*SMOKE, "batch=deepseek"]
    with pytest.raises(ConfigError, match=r"^sweep\.choices\.batch = 'batch=deepseek'"):
        expand_sweep(compose_config(overrides), overrides=overrides)


def test_expand_choices_need_the_overrides_outside_hydra() -> None:
    """Outside a Hydra job, choices need the overrides the config was composed with."""
    with pytest.raises(ValueError, match="pass the overrides"):
        expand_sweep(compose_config(SMOKE))


@pytest.mark.parametrize(
    ("sweep", "message"),
    [
        pytest.param(
            {"axes": {"hardware.no_such_field": [1, 2]}}, "unknown config field", id="key"
        ),
        pytest.param({"axes": {"hardware.sms": []}}, "non-empty list", id="empty"),
        pytest.param(
            {"axes": {"hardware.sms": {"start": 140, "stop": 120, "step": 1}}},
            "start < stop",
            id="inverted",
        ),
        pytest.param(
            {"choices": {"batch": ["no_such_law"]}},
            "is not one of: constant, critical",
            id="option",
        ),
        pytest.param({"choices": {"output": ["x"]}}, "group must be one of", id="group"),
        pytest.param({"axis": {}}, "unknown key", id="sweep-key"),
    ],
)
def test_expand_bad_sweep_raises_one_line_config_error(sweep: dict[str, Any], message: str) -> None:
    """A bad sweep node stops the run before any work, with a one-line ConfigError."""
    with pytest.raises(ConfigError, match=message) as info:
        expand_sweep(with_sweep(sweep), overrides=[])
    assert str(info.value).startswith("sweep.")
    assert "\n" not in str(info.value)


def test_expand_bad_value_names_the_sweep_point() -> None:
    """A value the schema refuses is reported with the sweep point that produced it."""
    cfg = with_sweep({"axes": {"hardware.hbm_bandwidth_gb_per_s": [3352, -1]}})
    with pytest.raises(ConfigError, match=r"positive.*sweep point \{.*: ?-1\}"):
        expand_sweep(cfg)


def test_expand_refuses_points_with_the_same_scenario() -> None:
    """Two sweep points that give one scenario (3352 and 3352.0 GB/s) are refused."""
    cfg = with_sweep({"axes": {"hardware.hbm_bandwidth_gb_per_s": [3352, 3352.0]}})
    with pytest.raises(ConfigError, match="same scenario"):
        expand_sweep(cfg)


def test_expand_interpolated_field_follows_the_swept_one() -> None:
    """A field that interpolates a swept field takes the swept value, not the original."""
    cfg = with_sweep({"axes": {"hardware.matmul_latency_us": [1.0, 2.0]}})
    cfg.hardware.network.latency_us = ["${hardware.matmul_latency_us}", 1.125]
    latencies = [s.hardware.net_latency_s[0] for s in expand_scenarios(cfg)]
    assert latencies == [1e-6, 2e-6]


@pytest.mark.slow
def test_expand_sensitivity_has_ten_thousand_points() -> None:
    """sweep=sensitivity holds at least 10,000 scenario points (series x model sizes)."""
    overrides = ["sweep=sensitivity"]
    series = expand_sweep(compose_config(overrides), overrides=overrides)
    n_points = sum(len(s.scenario.d_models) for s in series)
    assert n_points >= 10_000
    assert len(series) == math.prod([4, 5, 3, 3, 2])
    domains = {s.scenario.hardware.level_sizes for s in series}
    assert domains == {(8,), (64,), (256,)}


def test_expand_axes_from_the_command_line() -> None:
    """`+sweep.axes.<path>=[...]` and `+sweep.choices.<group>=[...]` sweep without a file."""
    overrides = [
        "+sweep.axes.hardware.hbm_bandwidth_gb_per_s=[2000,3352]",
        "+sweep.axes.hardware.sms={start:100,stop:140,step:20}",
        "+sweep.choices.scaling=[dense,sparse]",
    ]
    series = expand_sweep(compose_config(overrides), overrides=overrides)
    assert len(series) == 2 * 2 * 3
    assert points(series)[-1] == {
        "scaling": "sparse",
        "hardware.hbm_bandwidth_gb_per_s": 3352,
        "hardware.sms": 140,
    }


@pytest.fixture
def hardware_reads(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The hardware nodes `pipeline.schema.hardware.gpu_from_config` reads, in order."""
    import pipeline.schema.hardware as hardware

    reads: list[object] = []
    read = hardware.gpu_from_config

    def counted(node: object, path: str = "hardware") -> Any:
        reads.append(node)
        return read(node, path)

    monkeypatch.setattr(hardware, "gpu_from_config", counted)
    return reads


def test_expand_reads_each_swept_hardware_node_once(hardware_reads: list[object]) -> None:
    """Across choices, the hardware node of each combination of hardware axis values is read
    once (`pipeline.schema.memo`), not once per series; the series stay distinct."""
    reads = hardware_reads
    overrides = ["sweep=sensitivity"]
    series = expand_sweep(compose_config(overrides), overrides=overrides)
    assert len(series) == 360
    assert len(reads) == 360 // 4  # the four batch laws share each hardware node
    assert len({s.series_id for s in series}) == 360


def test_expand_says_each_choice_it_composes() -> None:
    """The expansion says which choice combination it composes, as it reaches it."""
    from pipeline.sweep import iter_sweep

    said: list[str] = []
    overrides = ["sweep=sensitivity"]
    series = iter_sweep(compose_config(overrides), overrides=overrides, say=said.append)
    next(series)
    assert said == ["sweep: composing choice 1/4 (batch=critical)"]
    assert sum(1 for _ in series) == 359
    assert said[-1] == "sweep: composing choice 4/4 (batch=zhang2024)"


def test_expand_caches_stay_within_their_bound() -> None:
    """A walk over more swept nodes than its caches' bound keeps at most the bound of each
    (sections, readings, id texts), and the walk's series are those of an unbounded one."""
    from pipeline.schema.memo import UNSWEPT_READINGS
    from pipeline.sweep import iter_sweep
    from pipeline.sweep.expand import ExpansionCaches

    sweep = {
        "choices": {"hardware": ["h100_sxm", "b200"], "batch": ["critical", "constant"]},
        "axes": {"hardware.hbm_gb": [80, 141, 192], "hardware.sms": [100, 132]},
    }
    overrides: list[str] = []
    bound = 8  # above one choice's 6 hardware nodes, below the sweep's 12
    caches = ExpansionCaches(False, swept_nodes=bound)
    cfg = with_sweep(sweep, overrides)
    bounded = [s.series_id for s in iter_sweep(cfg, overrides=overrides, caches=caches)]
    assert bounded == [s.series_id for s in expand_sweep(cfg, overrides=overrides)]
    sections, readings, texts = caches.sizes()
    assert sections <= bound
    assert readings <= 2 * bound + UNSWEPT_READINGS
    assert texts <= bound


def test_expand_bounded_caches_still_share_nodes_across_choices(
    hardware_reads: list[object],
) -> None:
    """With caches bounded just above one choice's swept nodes, each hardware node is read once
    per GPU, not once per series: the next choice on the same GPU finds every node kept."""
    from pipeline.sweep import iter_sweep
    from pipeline.sweep.expand import ExpansionCaches

    reads = hardware_reads
    sweep = {
        "choices": {"hardware": ["h100_sxm", "b200"], "batch": ["critical", "constant"]},
        "axes": {"hardware.hbm_gb": [80, 141, 192], "hardware.sms": [100, 132]},
    }
    series = list(
        iter_sweep(with_sweep(sweep), overrides=[], caches=ExpansionCaches(False, swept_nodes=8))
    )
    assert len(series) == 2 * 2 * 6
    assert len(reads) == 2 * 6  # each GPU's six nodes, read by its first batch law only


def test_expansion_caches_hold_one_gpu_of_the_million_sweep() -> None:
    """The caches' bound holds one GPU's swept hardware nodes of
    conf/sweep/million_realistic.yaml (so the next choice on that GPU reads none again) and
    less than two GPUs' (so a move to the next GPU replaces them: memory stays flat)."""
    from pipeline.schema.memo import SWEPT_NODES

    sweep = sweep_from_config(compose_config(["sweep=million_realistic"]))
    per_gpu = math.prod(len(a.values) for a in sweep.axes if a.path[0] == "hardware")
    assert per_gpu <= SWEPT_NODES < 2 * per_gpu


def test_memory_block_counts_the_series_that_differ_only_in_gpu_memory() -> None:
    """`Sweep.memory_block` is the product of the innermost axes over the GPU's memory: the
    series of a block differ only in those axes, the next block in an outer axis."""
    cfg = with_sweep(
        {
            "axes": {
                "hardware.network.latency_us[*]": [1, 2],
                "hardware.hbm_bandwidth_gb_per_s": [2000, 3000],
                "hardware.hbm_gb": [80, 141],
            }
        }
    )
    assert sweep_from_config(cfg).memory_block == 4
    latencies = [p["hardware.network.latency_us[*]"] for p in points(expand_sweep(cfg))]
    assert latencies == [1] * 4 + [2] * 4
    inner = with_sweep({"axes": {"hardware.hbm_gb": [80, 141], "hardware.sms": [100, 132]}})
    assert sweep_from_config(inner).memory_block == 1  # the innermost axis is not memory
    assert sweep_from_config(compose_config(["sweep=million_realistic"])).memory_block == 36
    assert sweep_from_config(compose_config()).memory_block == 1
