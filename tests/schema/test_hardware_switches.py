"""A switch or a projection that does not apply to the hardware changes nothing or is refused
(docs/model.md R.8; pipeline/schema/bounds.py)."""

from __future__ import annotations

import pytest

from pipeline.execute.series import evaluate_series
from pipeline.model.records.hardware import peak_flop_per_s
from pipeline.schema import ConfigError, bounds, compose_config, load_scenario

SMALL = "scaling.grid.max_d_model=16384"


def test_tensor_memory_beside_realistic_physics_changes_nothing_on_h100() -> None:
    """Under physics=realistic on H100 (no tensor memory) the switch on or off gives the same rows."""
    rows = [
        evaluate_series(
            load_scenario(
                compose_config(["physics=realistic", SMALL, f"physics.tensor_memory={on}"])
            )
        ).points
        for on in ("true", "false")
    ]
    assert [p.cost for p in rows[0]] == [p.cost for p in rows[1]]


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
