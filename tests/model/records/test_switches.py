"""The physics switches (pipeline/model/records/switches.py; docs/model.md Part II)."""

from __future__ import annotations

from pipeline.model.records.switches import Physics
from pipeline.schema import compose_config, load_scenario


def test_paper_physics_is_the_default() -> None:
    """Without overrides the scenario runs the paper's physics on the grid."""
    scenario = load_scenario(compose_config([]))
    assert scenario.physics == Physics()
    assert scenario.physics.is_paper
    assert scenario.run is None
