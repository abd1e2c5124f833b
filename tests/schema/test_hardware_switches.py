"""A switch or a projection that does not apply to the hardware changes nothing or is refused
(docs/model.md R.8, R.11; pipeline/schema/bounds.py)."""

from __future__ import annotations

import pytest

from pipeline.execute.series import evaluate_series
from pipeline.model.memory.capacity import memory_capacity_bytes
from pipeline.model.records.hardware import peak_flop_per_s
from pipeline.model.records.switches import HbmCapacity, Precision
from pipeline.schema import ConfigError, bounds, compose_config, load_scenario

SMALL = "scaling.grid.max_d_model=16384"


def _realistic_costs(*overrides: str) -> list[object]:
    """Each point's cost of the small realistic series with `overrides`."""
    scenario = load_scenario(compose_config(["physics=realistic", SMALL, *overrides]))
    return [p.cost for p in evaluate_series(scenario).points]


def test_tensor_memory_beside_realistic_physics_changes_nothing_on_h100() -> None:
    """Under physics=realistic on H100 (no tensor memory) the switch on or off gives the same rows."""
    on, off = ("physics.tensor_memory=true",), ("physics.tensor_memory=false",)
    assert _realistic_costs(*on) == _realistic_costs(*off)


def test_tensor_memory_alone_on_h100_is_refused_naming_the_hardware() -> None:
    """physics=paper with tensor_memory=true on H100 would leave the paper's code path for no
    relief: one line naming the switch and the hardware."""
    with pytest.raises(ConfigError, match="h100_sxm has no tensor memory") as info:
        load_scenario(compose_config(["physics.tensor_memory=true"]))
    assert info.value.key == "physics.tensor_memory"


def test_tensor_memory_alone_on_b200_is_accepted() -> None:
    """On Blackwell-class hardware the switch applies and is accepted."""
    scenario = load_scenario(compose_config(["hardware=b200", "physics.tensor_memory=true"]))
    assert scenario.physics.tensor_memory


def test_fp8_beside_realistic_physics_changes_nothing_on_a100() -> None:
    """Under physics=realistic on A100 (no FP8 tensor peak) precision fp8 or bf16 gives the
    same rows: its GEMMs run at the 16-bit peak either way."""
    fp8 = _realistic_costs("hardware=a100_sxm", "physics.precision=fp8")
    assert fp8 == _realistic_costs("hardware=a100_sxm", "physics.precision=bf16")


def test_fp8_alone_on_a100_is_refused_naming_the_hardware() -> None:
    """physics=paper with precision=fp8 on A100 would leave the paper's code path for no FP8
    GEMM: one line naming the switch and the hardware."""
    with pytest.raises(ConfigError, match="a100_sxm has no FP8 tensor peak") as info:
        load_scenario(compose_config(["hardware=a100_sxm", "physics.precision=fp8"]))
    assert info.value.key == "physics.precision"


def test_fp8_alone_on_h100_is_accepted() -> None:
    """On hardware with an FP8 tensor peak the switch applies and is accepted."""
    scenario = load_scenario(compose_config(["physics.precision=fp8"]))
    assert scenario.hardware.fp8_flop_per_s is not None
    assert not scenario.physics.is_paper


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["hardware=a100_sxm", "+hardware.fp8_u_eff_ratio=0.9"], r"needs hardware\.dense_fp8"),
        (["hardware.fp8_u_eff_ratio=1.5"], "FP8 matmuls above their peak"),
        (["hardware.fp8_u_eff_ratio=0"], "fp8_u_eff_ratio"),
    ],
)
def test_fp8_u_eff_ratio_that_cannot_act_is_refused_naming_the_key(
    overrides: list[str], message: str
) -> None:
    """An FP8 utilization ratio without an FP8 peak, one that puts FP8 matmuls above their
    peak, or one not positive: one line naming the key (docs/model.md R.11)."""
    with pytest.raises(ConfigError, match=message) as info:
        load_scenario(compose_config(overrides))
    assert info.value.key == "hardware.fp8_u_eff_ratio"


@pytest.mark.parametrize(
    "slow", ["hardware.fp8_u_eff_ratio=0.4", "hardware.max_clock_mhz=3700"], ids=["ratio", "clock"]
)
def test_fp8_no_faster_than_16_bit_is_refused_only_when_asked_for(slow: str) -> None:
    """Hardware whose FP8 matmuls would be no faster than its 16-bit ones (a low ratio, or a
    what-if that raises the 16-bit rate alone) loads under BF16, and FP8 on it is refused in
    one line naming physics.precision: the model would hold BF16 memory and still time its
    GEMMs at the slower FP8 rate."""
    bf16 = load_scenario(compose_config(["physics=realistic", slow]))
    assert bf16.physics.precision is Precision.BF16
    with pytest.raises(ConfigError, match="no faster") as info:
        load_scenario(compose_config(["physics=realistic", slow, "physics.precision=fp8"]))
    assert info.value.key == "physics.precision"


def test_fp8_u_eff_ratio_is_read_and_null_is_one() -> None:
    """H100's preset sets its measured ratio; null leaves FP8 matmuls at u_eff of their peak."""
    assert load_scenario(compose_config([])).hardware.fp8_u_eff_ratio == 0.883
    unset = load_scenario(compose_config(["hardware.fp8_u_eff_ratio=null"]))
    assert unset.hardware.fp8_u_eff_ratio is None


@pytest.mark.parametrize("ratio", ["0.9", "1.2", "81559"])
def test_hbm_device_ratio_outside_its_span_is_refused_naming_the_key(ratio: str) -> None:
    """A driver count of the HBM over the datasheet's decimal bytes lies in (0.9, 1.1] (a GiB is
    1.074 GB, docs/model.md R.12): outside it (a capacity in MiB, a ratio inverted) is refused."""
    with pytest.raises(ConfigError, match="driver-reported over datasheet bytes") as info:
        load_scenario(compose_config([f"hardware.hbm_device_ratio={ratio}"]))
    assert info.value.key == "hardware.hbm_device_ratio"


def test_hbm_device_ratio_null_reads_the_datasheet_and_the_span_end_is_accepted() -> None:
    """Null leaves realistic physics on the datasheet's 80e9 B; 1.1, the span's inclusive end,
    loads."""
    unset = load_scenario(compose_config(["physics=realistic", "hardware.hbm_device_ratio=null"]))
    assert memory_capacity_bytes(unset.hardware, unset.physics) == 80e9
    edge = load_scenario(compose_config(["hardware.hbm_device_ratio=1.1"]))
    assert edge.hardware.hbm_device_ratio == 1.1


def test_hbm_capacity_device_is_realistic_and_not_the_papers() -> None:
    """physics=realistic checks memory against the driver's count, the paper against the
    datasheet's; the switch alone takes the model off the paper's."""
    realistic = load_scenario(compose_config(["physics=realistic"])).physics
    paper = load_scenario(compose_config([])).physics
    assert realistic.hbm_capacity is HbmCapacity.DEVICE
    assert paper.hbm_capacity is HbmCapacity.DATASHEET
    assert paper.is_paper
    alone = load_scenario(compose_config(["physics.hbm_capacity=device"])).physics
    assert not alone.is_paper


def test_nic_striping_without_nics_per_node_is_refused_naming_the_key() -> None:
    """physics=realistic on nodes whose preset gives no NICs per node would charge every ring
    crossing nodes at one link while the switch says it stripes: one line naming the switch,
    the hardware and the missing key (docs/model.md R.10)."""
    no_nics = "hardware.network.nics_per_node=null"
    with pytest.raises(ConfigError, match=r"h100_sxm gives no hardware\.network\.nics_per_node"):
        load_scenario(compose_config(["physics=realistic", no_nics]))
    off = load_scenario(
        compose_config(["physics=realistic", no_nics, "physics.nic_striping=false"])
    )
    assert off.hardware.nics_per_node is None
    assert not off.physics.nic_striping


def test_nic_striping_without_nodes_is_accepted() -> None:
    """One global NVLink level has no node for a ring to cross: nothing to stripe, no count
    needed."""
    scenario = load_scenario(
        compose_config(
            [
                "physics=realistic",
                "hardware=h100_global_nvlink",
                "hardware.network.nics_per_node=null",
            ]
        )
    )
    assert scenario.hardware.level_sizes == ()
    assert scenario.physics.nic_striping


@pytest.mark.parametrize(
    ("overrides", "switch"),
    [
        (["physics.cp_all_gather=true"], "cp_all_gather"),
        (["physics.small_microbatches=true"], "small_microbatches"),
        (["physics.batch_at_row_flop=true"], "batch_at_row_flop"),
        (["hardware=h100_global_nvlink", "physics.nic_striping=true"], "nic_striping"),
        (["physics.cp_all_gather=true", "physics.small_microbatches=true"], "cp_all_gather"),
        (["physics.fp8_current_scaling=true"], "fp8_current_scaling"),
    ],
)
def test_a_switch_that_cannot_act_alone_is_refused(overrides: list[str], switch: str) -> None:
    """Under physics=paper a switch that acts only through another setting, on alone (or
    beside others that cannot act either), would change only the code path: refused, naming
    the switch and what it needs (`schema.scenario.INERT_SWITCHES`)."""
    with pytest.raises(ConfigError, match="does nothing on") as info:
        load_scenario(compose_config(overrides))
    assert info.value.key == f"physics.{switch}"


@pytest.mark.parametrize("fusion", ["none", "flash"])
def test_a_fusion_on_the_papers_model_is_refused(fusion: str) -> None:
    """The paper's model has no memory-bound operators, so another fusion would change
    nothing, not even the code path (`fusion` is no extension): a sweep over it would give
    identical series. Refused, naming what it acts through; with it, accepted."""
    with pytest.raises(ConfigError, match="acts only through memory-bound operators") as info:
        load_scenario(compose_config([f"physics.fusion={fusion}"]))
    assert info.value.key == "physics.fusion"
    both = [f"physics.fusion={fusion}", "physics.memory_bound_ops=true"]
    assert load_scenario(compose_config(both)).physics.fusion.value == fusion


def test_switches_that_cannot_act_together_are_refused_naming_the_first() -> None:
    """Tensor memory on H100 beside context parallelism's all-gather without context
    parallelism: neither acts, together they would only leave the paper's code path."""
    with pytest.raises(ConfigError, match="h100_sxm has no tensor memory") as info:
        load_scenario(compose_config(["physics.tensor_memory=true", "physics.cp_all_gather=true"]))
    assert info.value.key == "physics.tensor_memory"


def test_a_switch_beside_what_it_needs_is_accepted() -> None:
    """The same switches with what they act through are accepted, and the batch law read at
    the row's FLOP does act there: whole sequences change the FLOP a row trains."""
    for overrides in (
        [
            "physics.cp_all_gather=true",
            "physics.whole_sequences=true",
            "physics.max_context_parallel=4",
        ],
        ["physics.small_microbatches=true", "physics.whole_sequences=true"],
        ["physics.nic_striping=true"],
    ):
        assert not load_scenario(compose_config(overrides)).physics.is_paper
    whole = ("physics.whole_sequences=true", SMALL)
    plain = evaluate_series(load_scenario(compose_config(list(whole))))
    row = evaluate_series(load_scenario(compose_config([*whole, "physics.batch_at_row_flop=true"])))
    assert [p.shape for p in row.points] != [p.shape for p in plain.points]


def test_expert_imbalance_acts_alone_only_with_experts() -> None:
    """The busiest expert rank's excess, alone under physics=paper: refused for a dense grid
    (it changes nothing there but the code path) and, as a run's own key, for a dense run;
    accepted for a sparse grid and beside extensions that act whatever the model; beside
    another switch that cannot act either, refused all the same."""
    for dense, key in (
        (["physics.expert_imbalance=0.4"], "physics.expert_imbalance"),
        (["run=gpt_1t", "physics=realistic", "run.expert_imbalance=0.4"], "run.expert_imbalance"),
    ):
        with pytest.raises(ConfigError, match="does nothing without experts") as info:
            load_scenario(compose_config(dense))
        assert info.value.key == key
    with pytest.raises(ConfigError, match="h100_sxm has no tensor memory") as info:
        load_scenario(
            compose_config(["physics.tensor_memory=true", "physics.expert_imbalance=0.4"])
        )
    assert info.value.key == "physics.tensor_memory"  # two that cannot act: the first named
    for acts in (
        ["scaling=sparse", "physics.expert_imbalance=0.4"],
        ["physics=realistic"],
        ["physics.expert_imbalance=0.4", "physics.attention=true"],
    ):
        assert not load_scenario(compose_config(acts)).physics.is_paper


def test_projected_year_past_the_peak_bound_names_the_latest_year_in_bounds() -> None:
    """hardware.year=2100 projects H100 past the 1e30 FLOP/s bound: refused, naming the
    latest year whose projection is within every bound, and that year is accepted."""
    with pytest.raises(ConfigError, match="stays in bounds up to") as info:
        load_scenario(compose_config(["hardware=projected", "hardware.year=2100"]))
    latest = int(str(info.value).split("stays in bounds up to ")[1].split(";")[0])
    hardware = load_scenario(
        compose_config(["hardware=projected", f"hardware.year={latest}"])
    ).hardware
    assert peak_flop_per_s(hardware) <= bounds.MAX_FLOP_PER_S
    with pytest.raises(ConfigError):
        load_scenario(compose_config(["hardware=projected", f"hardware.year={latest + 1}"]))
