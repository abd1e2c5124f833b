"""Which series the report draws and what it calls them (`pipeline.report.selection`)."""

from __future__ import annotations

import json
from collections.abc import Callable

import polars as pl
import pytest

from pipeline.report.selection import MAX_DISTINCT, SelectionError, select_series


def sweep(n_latency: int, batch_laws: tuple[str, ...]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Thresholds and series rows of a sweep: every batch law at `n_latency` latencies; the
    wall grows with the law's index (so the batch law tells most about how far a series gets)."""
    thresholds, series = [], []
    for b, law in enumerate(batch_laws):
        for i in range(n_latency):
            sid = f"{b:02d}{i:02d}" + "0" * 12
            point = {"batch": law, "hardware.network.latency_us[*]": 0.25 * 2**i}
            thresholds.append(
                {
                    "series_id": sid,
                    "hardware": "h100_sxm",
                    "scaling": "dense",
                    "batch_law": law,
                    "wall_flop": 10.0 ** (28 + 2 * b) * (1 + 0.01 * i),
                }
            )
            series.append({"series_id": sid, "sweep_point": json.dumps(point), "batch_law": law})
    return pl.DataFrame(thresholds), pl.DataFrame(series)


def test_selection_labels_by_scenario_not_hash() -> None:
    """Series of one name are told apart by the sweep values that differ, never by their id."""
    thresholds, series = sweep(3, ("critical",))
    sel = select_series(thresholds, series)
    assert sorted(sel.labels.values()) == [
        "h100_sxm / dense / critical | latency_us[*]=0.25",
        "h100_sxm / dense / critical | latency_us[*]=0.5",
        "h100_sxm / dense / critical | latency_us[*]=1",
    ]


def test_selection_where_keeps_matching_series() -> None:
    """--where is a SQL condition on the series table."""
    thresholds, series = sweep(2, ("critical", "constant"))
    sel = select_series(thresholds, series, where="batch_law = 'constant'")
    assert len(sel.ids) == 2
    assert sel.total == 4
    assert all("constant" in label for label in sel.labels.values())


def test_selection_series_matches_id_prefix_or_label() -> None:
    """--series keeps series whose id starts with, or whose label contains, the text."""
    thresholds, series = sweep(2, ("critical", "constant"))
    assert len(select_series(thresholds, series, chosen=["0001"]).ids) == 1
    assert len(select_series(thresholds, series, chosen=["constant"]).ids) == 2


@pytest.mark.parametrize(
    ("chosen", "where"), [(["nothing"], None), ((), "batch_law = 'none'"), ((), "no_column = 1")]
)
def test_selection_empty_or_invalid_is_an_error(chosen: list[str], where: str | None) -> None:
    """A choice that keeps nothing, or a condition that is not valid, is a SelectionError."""
    thresholds, series = sweep(2, ("critical",))
    with pytest.raises(SelectionError):
        select_series(thresholds, series, chosen, where)


def test_selection_many_series_colour_by_the_telling_key() -> None:
    """Past MAX_DISTINCT series, colours follow the key that best separates the walls."""
    thresholds, series = sweep(5, ("critical", "constant", "deepseek"))
    sel = select_series(thresholds, series)
    assert len(sel.ids) > MAX_DISTINCT
    assert sel.many
    assert sel.group_key == "batch_law"
    assert "coloured by batch_law" in sel.note


def test_selection_names_a_concrete_run_by_its_run() -> None:
    """A series that evaluated a concrete run is named by the run and its GPU, not by the
    scaling and batch law it does not use, nor by a hash."""
    thresholds = pl.DataFrame(
        {
            "series_id": ["a" * 16, "b" * 16],
            "hardware": ["a100_sxm_80gb"] * 2,
            "scaling": ["dense"] * 2,
            "batch_law": ["critical"] * 2,
        }
    )
    series = pl.DataFrame(
        {
            "series_id": ["a" * 16, "b" * 16],
            "sweep_point": ["{}", "{}"],
            "run_json": [json.dumps({"name": "gpt_1p7b"}), json.dumps({"name": "gpt_7p5b"})],
        }
    )
    labels = select_series(thresholds, series).labels
    assert labels == {"a" * 16: "gpt_1p7b on a100_sxm_80gb", "b" * 16: "gpt_7p5b on a100_sxm_80gb"}


def test_selection_labels_jobs_of_a_multirun_by_their_overrides() -> None:
    """Series of separate runs with no sweep point (a `-m physics=paper,realistic` multirun's
    jobs) are told apart by the overrides that made them, not by their ids; overrides that
    change no model (the output root) are not named."""
    thresholds = pl.DataFrame(
        [
            {"series_id": sid, "hardware": "a100_sxm", "scaling": "dense", "batch_law": "critical"}
            for sid in ("1d3f1c" + "0" * 10, "2c6f62" + "0" * 10)
        ]
    )
    series = pl.DataFrame(
        [
            {
                "series_id": sid,
                "sweep_point": "{}",
                "overrides": json.dumps(["hardware=a100_sxm", f"physics={p}", f"output.root={p}"]),
            }
            for sid, p in zip(thresholds["series_id"], ("paper", "realistic"), strict=True)
        ]
    )
    sel = select_series(thresholds, series)
    assert sorted(sel.labels.values()) == [
        "a100_sxm / dense / critical | physics=paper",
        "a100_sxm / dense / critical | physics=realistic",
    ]


def gpu_sweep(
    gpus: tuple[str, ...],
    point_of: Callable[[str, int], dict[str, object]],
    overrides_of: Callable[[int, str], list[str]],
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Thresholds and series rows of 4 latencies on each of `gpus` (the wall grows with the
    GPU's index): each series' sweep point `point_of(gpu, i)` and overrides `overrides_of(g,
    gpu)`."""
    thresholds, series = [], []
    for g, gpu in enumerate(gpus):
        for i in range(4):
            sid = f"{g:02d}{i:02d}" + "0" * 12
            thresholds.append(
                {
                    "series_id": sid,
                    "hardware": gpu,
                    "scaling": "dense",
                    "batch_law": "critical",
                    "wall_flop": 10.0 ** (28 + 2 * g) * (1 + 0.01 * i),
                }
            )
            series.append(
                {
                    "series_id": sid,
                    "sweep_point": json.dumps(point_of(gpu, i)),
                    "overrides": json.dumps(overrides_of(g, gpu)),
                }
            )
    return pl.DataFrame(thresholds), pl.DataFrame(series)


def test_selection_colours_by_the_sweep_axis_beside_overrides() -> None:
    """A sweep written from the command line carries its choices and axes in its overrides
    too: they neither take the place of the choice as the colour key nor show in labels, and a
    key a series leaves unset reads as the default, not None."""
    spec = [
        "+sweep.choices.hardware=[a100_sxm,h100_sxm,b200]",
        "+sweep.axes.hardware.network.latency_us[*]=[0.25,0.5,1,2]",
    ]
    thresholds, series = gpu_sweep(
        ("a100_sxm", "h100_sxm", "b200"),
        lambda gpu, i: {"hardware": gpu, "hardware.network.latency_us[*]": 0.25 * 2**i},
        lambda g, gpu: spec,
    )
    many = select_series(thresholds, series)
    assert many.many
    assert many.group_key == "hardware"
    assert not any("=[" in label for label in many.labels.values())
    both = pl.DataFrame(
        [
            {"series_id": sid, "hardware": "a100_sxm", "scaling": "dense", "batch_law": "critical"}
            for sid in ("aa" + "0" * 14, "bb" + "0" * 14)
        ]
    )
    made = pl.DataFrame(
        [
            {
                "series_id": "aa" + "0" * 14,
                "sweep_point": "{}",
                "overrides": json.dumps(["physics=realistic"]),
            },
            {"series_id": "bb" + "0" * 14, "sweep_point": "{}", "overrides": "[]"},
        ]
    )
    assert sorted(select_series(both, made).labels.values()) == [
        "a100_sxm / dense / critical | physics=(default)",
        "a100_sxm / dense / critical | physics=realistic",
    ]


def test_selection_keeps_the_name_column_as_colour_key_beside_overrides() -> None:
    """An override of a name column (`hardware=h100_sxm` on some series, none on others of the
    same GPU) never takes the column's place as the colour key: one GPU is one colour, not
    split into the series that named it and '(default)'."""
    thresholds, series = gpu_sweep(
        ("h100_sxm", "h100_sxm", "b200"),
        lambda gpu, i: {"hardware.network.latency_us[*]": 0.25 * 2**i},
        lambda g, gpu: [] if g == 1 else [f"hardware={gpu}"],  # the second h100 block: default
    )
    sel = select_series(thresholds, series)
    assert sel.many
    assert sel.group_key == "hardware"
    assert sorted(set(sel.groups.values())) == ["b200", "h100_sxm"]
