"""The run layout search keeps tensor parallelism within whole K/V heads, as the run keys must
(t divides kv_heads; docs/configuration.md, "One concrete run")."""

from __future__ import annotations

from pipeline.model.runs.run_search import best_run_layout
from pipeline.schema import compose_config, load_scenario


def test_run_search_tensor_parallel_size_divides_kv_heads() -> None:
    """GPT 145.6B with two K/V heads on 192 H100s: the searched t divides 2 (it was 3)."""
    overrides = ["run=gpt_145p6b", "run.kv_heads=2", "run.tp=2", "run.dp=48"]
    scenario = load_scenario(
        compose_config([*overrides, "run.layout_search=true", "physics=realistic"])
    )
    assert scenario.run is not None
    found = best_run_layout(scenario.hardware, scenario.physics, scenario.run)
    assert found is not None
    assert scenario.run.shape.kv_heads % found[0].layout.tp == 0
