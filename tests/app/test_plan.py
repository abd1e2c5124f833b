"""`plan_run`: resume is for sweeps unless `output.resume` says otherwise; overrides are kept."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import pytest

from pipeline.app.plan import plan_run
from pipeline.schema import compose_config
from pipeline.schema.errors import ConfigError
from pipeline.sweep import expand

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


def test_plan_takes_given_series_of_the_sweeps_length(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Series given for the config are the plan's, its sweep's choices not composed again;
    series of another length are not taken."""
    args = [f"output.root={tmp_path}", "sweep=nightly"]
    cfg = compose_config(args)
    listed = list(plan_run(cfg, overrides=args, write=False).series)
    assert len(listed) == 8
    with monkeypatch.context() as patched:
        patched.setattr(expand, "compose_config", _refuse)
        plan = plan_run(cfg, overrides=args, write=False, series=listed)
    assert all(a is b for a, b in zip(plan.series, listed, strict=True))
    fewer = plan_run(cfg, overrides=args, write=False, series=listed[:3])
    assert [s.series_id for s in fewer.series] == [s.series_id for s in listed]


def _refuse(*args: object, **kwargs: object) -> NoReturn:
    """A composition the test says must not happen."""
    raise AssertionError("a sweep choice was composed again")
