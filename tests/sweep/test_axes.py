"""Sweep axes: lists, linear and log ranges, list-field indices, and the errors for bad axes."""

from __future__ import annotations

import pytest

from pipeline.schema.errors import ConfigError
from pipeline.sweep.axes import EVERY, parse_axis


def test_axis_list_keeps_values_in_order() -> None:
    """A list axis takes its values as written."""
    axis = parse_axis("hardware.hbm_bandwidth_gb_per_s", [3352, 2000, 5000.5])
    assert axis.values == (3352, 2000, 5000.5)
    assert axis.path == ("hardware", "hbm_bandwidth_gb_per_s")
    assert axis.index is None


def test_axis_step_range_includes_stop_and_stays_integer() -> None:
    """A step range includes stop, and integer bounds and step give integers."""
    assert parse_axis("hardware.sms", {"start": 100, "stop": 160, "step": 20}).values == (
        100,
        120,
        140,
        160,
    )


def test_axis_step_range_rounds_float_steps() -> None:
    """Float steps give short decimals, not accumulated binary error."""
    values = parse_axis("hardware.u_eff", {"start": 0.1, "stop": 0.7, "step": 0.2}).values
    assert values == (0.1, 0.3, 0.5, 0.7)


def test_axis_linear_num_range_spaces_evenly() -> None:
    """A num range gives num evenly spaced values from start to stop."""
    values = parse_axis("hardware.matmul_latency_us", {"start": 1, "stop": 2, "num": 5}).values
    assert values == (1.0, 1.25, 1.5, 1.75, 2.0)


def test_axis_log_range_gives_whole_numbers_as_integers() -> None:
    """A log range between integers whose values are whole gives integers."""
    axis = parse_axis(
        "hardware.network.level_sizes[0]", {"start": 8, "stop": 256, "num": 6, "log": True}
    )
    assert axis.values == (8, 16, 32, 64, 128, 256)
    assert axis.index == 0


def test_axis_log_range_of_floats() -> None:
    """A log range of float bounds spaces values by a constant factor."""
    axis = parse_axis(
        "hardware.network.latency_us[*]", {"start": 0.25, "stop": 4.0, "num": 5, "log": True}
    )
    assert axis.values == (0.25, 0.5, 1.0, 2.0, 4.0)
    assert axis.index == EVERY


def test_axis_applied_sets_one_entry_or_every_entry() -> None:
    """`[i]` sets one entry of a list field, `[*]` sets them all, no index the whole field."""
    config = {"hardware": {"network": {"latency_us": [1.0, 2.0, 3.0]}}}
    one = parse_axis("hardware.network.latency_us[1]", [9.0]).applied(config, 9.0)
    assert one["hardware"]["network"]["latency_us"] == [1.0, 9.0, 3.0]
    every = parse_axis("hardware.network.latency_us[*]", [5.0]).applied(one, 5.0)
    assert every["hardware"]["network"]["latency_us"] == [5.0, 5.0, 5.0]
    whole = parse_axis("hardware.network.latency_us", [[1.0]]).applied(every, [1.0])
    assert whole["hardware"]["network"]["latency_us"] == [1.0]


def test_axis_applied_leaves_the_config_unchanged() -> None:
    """Setting a field copies the path to it; the config it came from keeps its values."""
    config = {"hardware": {"network": {"latency_us": [1.0, 2.0]}, "sms": 132}, "batch": {}}
    changed = parse_axis("hardware.network.latency_us[0]", [9.0]).applied(config, 9.0)
    assert config == {"hardware": {"network": {"latency_us": [1.0, 2.0]}, "sms": 132}, "batch": {}}
    assert changed["batch"] is config["batch"]  # what the axis does not touch is shared


@pytest.mark.parametrize(
    ("key", "spec", "message"),
    [
        pytest.param("hardware.sms", [], "non-empty list", id="empty-list"),
        pytest.param("hardware.sms", 132, "non-empty list", id="scalar"),
        pytest.param("hardware.sms", [132, 132], "distinct", id="repeated-value"),
        pytest.param(
            "hardware.sms", {"start": 200, "stop": 100, "step": 10}, "start < stop", id="inverted"
        ),
        pytest.param(
            "hardware.sms", {"start": 100, "stop": 100, "num": 3}, "start < stop", id="empty-range"
        ),
        pytest.param(
            "hardware.sms", {"start": 100, "stop": 200}, "exactly one of step or num", id="no-step"
        ),
        pytest.param(
            "hardware.sms",
            {"start": 100, "stop": 200, "step": 10, "num": 3},
            "exactly one of step or num",
            id="step-and-num",
        ),
        pytest.param(
            "hardware.sms", {"start": 100, "stop": 200, "step": 0}, "positive", id="zero-step"
        ),
        pytest.param(
            "hardware.sms", {"start": 100, "stop": 200, "num": 1}, "integer >= 2", id="num-1"
        ),
        pytest.param(
            "hardware.sms",
            {"start": 0, "stop": 10, "num": 3, "log": True},
            "log range needs start > 0",
            id="log-from-zero",
        ),
        pytest.param(
            "hardware.sms", {"start": 1, "stop": 10, "steps": 1}, "unknown range key", id="typo"
        ),
        pytest.param("output.root", ["a", "b"], "must set a field of", id="not-a-scenario"),
        pytest.param("sms", [1, 2], "dotted field path", id="no-section"),
    ],
)
def test_axis_bad_spec_raises_one_line_config_error(key: str, spec: object, message: str) -> None:
    """A bad axis raises ConfigError naming sweep.axes.<key>, in one line."""
    with pytest.raises(ConfigError) as info:
        parse_axis(key, spec)
    text = str(info.value)
    assert text.startswith(f"sweep.axes.{key}")
    assert message in text
    assert "\n" not in text


@pytest.mark.parametrize(
    ("key", "message"),
    [
        pytest.param("hardware.hbm_bandwith_gb_per_s", "unknown config field", id="typo"),
        pytest.param("hardware.network", "names a section", id="section"),
        pytest.param("hardware.sms[0]", "needs a list field", id="index-scalar"),
        pytest.param("hardware.network.latency_us[2]", "out of range", id="index-range"),
    ],
)
def test_axis_bad_target_raises_config_error(key: str, message: str) -> None:
    """An axis whose field is missing, a section, or not indexable is refused by name."""
    config = {"hardware": {"sms": 132, "network": {"latency_us": [1.0, 1.0]}}}
    with pytest.raises(ConfigError, match=message) as info:
        parse_axis(key, [1]).check_target(config)
    assert str(info.value).startswith(f"sweep.axes.{key}")
