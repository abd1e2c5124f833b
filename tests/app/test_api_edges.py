"""`pipeline.run` at its edges: an experiment's multirun runs, and overrides it cannot run are
named in one line (docs/api.md)."""

from __future__ import annotations

import pytest

import pipeline
from pipeline.schema import ConfigError

SMALL = "scaling.grid.max_d_model=16384"


def test_api_runs_an_experiments_multirun() -> None:
    """+experiment=base_comparison returns its three series (V100, A100, H100), not H100's alone."""
    result = pipeline.run(["+experiment=base_comparison", SMALL])
    assert sorted(result.thresholds["hardware"].to_list()) == ["a100_sxm", "h100_sxm", "v100_sxm"]


@pytest.mark.parametrize(
    ("overrides", "key", "fragment"),
    [
        pytest.param([5], "overrides[0]", "not int", id="int"),
        pytest.param([SMALL, b"hardware=a100_sxm"], "overrides[1]", "not bytes", id="bytes"),
        pytest.param(["hardware=a100_sxm,h100_sxm"], "overrides[0]", "+sweep.choices.hardware",
                     id="multirun_group"),
        pytest.param(["scaling.duration_months=3,6"], "overrides[0]", "+sweep.axes.scaling",
                     id="multirun_value"),
        pytest.param("hardware=a100_sxm", "overrides", "a list", id="one_string"),
    ],
)  # fmt: skip
def test_api_refuses_an_override_naming_it(overrides: object, key: str, fragment: str) -> None:
    """An override that is not a string or is a multirun value is one line naming it."""
    with pytest.raises(ConfigError) as info:
        pipeline.run(overrides)  # type: ignore[arg-type]
    assert info.value.key == key
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)
