"""One switch per concept: recomputation, the memory check and whole sequences live in the
physics group only, and contradictory combinations are refused in one line."""

from __future__ import annotations

import pytest

from pipeline.model.records.switches import Recompute
from pipeline.schema import ConfigError, Scenario, compose_config, load_scenario


def scenario(*overrides: str) -> Scenario:
    """The scenario of the default config with `overrides`."""
    return load_scenario(compose_config(list(overrides)))


@pytest.mark.parametrize(
    "key",
    [
        "parallelism.activation_recompute",
        "parallelism.memory_check",
        "parallelism.quirks.whole_sequences",
        "physics.gpu_memory",
    ],
)
def test_switches_second_owner_is_refused(key: str) -> None:
    """The keys that used to own a concept a second time are unknown keys now."""
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        scenario(f"+{key}=true")


def test_switches_paper_full_recompute_is_the_papers_option() -> None:
    """Under the paper's model, recompute=full is spec §7's recomputation on Part I's path."""
    s = scenario("physics.recompute=full")
    assert s.options.activation_recompute
    assert s.physics.is_paper


def test_switches_realistic_full_recompute_is_counted_once() -> None:
    """Under realistic physics, full recomputation is Part II's alone (no ×4/3 on top)."""
    s = scenario("physics=realistic", "physics.recompute=full")
    assert s.physics.recompute is Recompute.FULL
    assert not s.options.activation_recompute


def test_switches_whole_sequences_alone_is_quirk_q3() -> None:
    """whole_sequences with every other extension off is quirk Q3 on the paper's path."""
    s = scenario("physics.whole_sequences=true")
    assert s.options.quirks.whole_sequences
    assert s.physics.is_paper


def test_switches_realistic_whole_sequences_is_part_two() -> None:
    """Under realistic physics whole sequences are Part II's, not the quirk a second time."""
    s = scenario("physics=realistic")
    assert s.physics.whole_sequences
    assert not s.options.quirks.whole_sequences


@pytest.mark.parametrize(
    ("check", "per_gpu", "aggregate"),
    [("none", False, False), ("aggregate", False, True), ("per_gpu", True, True)],
)
def test_switches_memory_check_sets_both_model_fields(
    check: str, per_gpu: bool, aggregate: bool
) -> None:
    """physics.memory_check alone decides the per-GPU and the cluster-wide check."""
    s = scenario("physics=realistic", "physics.recompute=none", f"physics.memory_check={check}")
    assert s.physics.gpu_memory is per_gpu
    assert s.options.memory_check is aggregate


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        (["physics.recompute=auto"], "physics.recompute"),
        (["physics=realistic", "physics.memory_check=aggregate"], "physics.recompute"),
        (["physics.recompute=selective"], "physics.recompute"),
        (["physics.max_context_parallel=4"], "physics.max_context_parallel"),
    ],
    ids=[
        "auto_without_per_gpu",
        "realistic_auto_aggregate",
        "selective_without_attention",
        "context_parallel_without_whole_sequences",
    ],
)
def test_switches_contradiction_is_refused_in_one_line(overrides: list[str], key: str) -> None:
    """A combination that contradicts itself raises one line naming the key."""
    with pytest.raises(ConfigError) as err:
        scenario(*overrides)
    assert str(err.value).startswith(key)
    assert "\n" not in str(err.value)
