"""`plan_run`: resume is for sweeps unless `output.resume` says otherwise; overrides are kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.app.plan import plan_run
from pipeline.schema import compose_config
from pipeline.schema.errors import ConfigError

AXIS = "+sweep.axes.hardware.hbm_bandwidth_gb_per_s=[2000,3352]"


@pytest.mark.parametrize(
    ("overrides", "resume"),
    [
        ([], False),
        (["hardware=a100_sxm"], False),
        (["sweep=smoke"], True),
        ([AXIS], True),
        (["output.resume=true"], True),
        (["sweep=smoke", "output.resume=false"], False),
    ],
)
def test_plan_resume_default_is_for_sweeps(
    tmp_path: Path, overrides: list[str], resume: bool
) -> None:
    """A single run recomputes, a sweep resumes; output.resume=true/false forces either."""
    args = [f"output.root={tmp_path}", *overrides]
    plan = plan_run(compose_config(args), overrides=args)
    assert plan.resume is resume


def test_plan_without_write_touches_no_root(tmp_path: Path) -> None:
    """write=False leaves the root alone and never resumes."""
    root = tmp_path / "not-made"
    args = [f"output.root={root}", "sweep=smoke"]
    plan = plan_run(compose_config(args), overrides=args, write=False)
    assert plan.root is None
    assert plan.resume is False
    assert not root.exists()


def test_plan_resume_must_be_boolean_or_null(tmp_path: Path) -> None:
    """output.resume=maybe is a one-line ConfigError naming the key."""
    args = [f"output.root={tmp_path}", "output.resume=maybe"]
    with pytest.raises(ConfigError, match=r"^output\.resume = 'maybe'"):
        plan_run(compose_config(args), overrides=args)


def test_plan_keeps_the_overrides_it_was_given(tmp_path: Path) -> None:
    """The plan carries the overrides for the series table; None when they are unknown."""
    args = [f"output.root={tmp_path}", "hardware=a100_sxm"]
    assert plan_run(compose_config(args), overrides=args).overrides == tuple(args)
    assert plan_run(compose_config(args)).overrides is None
