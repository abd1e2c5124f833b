"""The change report names what moved since the previous date, matching series by what they are."""

from __future__ import annotations

import datetime as dt
import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from pipeline.io.rows import Provenance, SeriesKey
from pipeline.model.records.results import SeriesLimits
from pipeline.nightly.causes import MAX_RUNS_LISTED, physics_causes, run_causes, trend_causes
from pipeline.nightly.changes import SeriesMatch, compare_dates, render_markdown
from pipeline.nightly.partition import date_dir
from pipeline.nightly.run import run_nightly
from pipeline.schema import compose_config, load_scenario
from tests.io.helpers import series_row, split_part, threshold_row, write_part
from tests.nightly.runs import nightly_config

D1, D2 = dt.date(2025, 1, 1), dt.date(2025, 1, 2)
SERIES = SeriesMatch("h100_sxm", "dense", "critical")


def _report(root: Path, run_date: dt.date) -> dict[str, object]:
    path = root / "reports" / f"changes-{run_date.isoformat()}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_changes_name_threshold_moved_by_latency(tmp_path: Path) -> None:
    """Raising the network latency moves t_lat_s, T_limit and its forecast year, and says so."""
    root = tmp_path / "nightly"
    assert run_nightly(nightly_config(root, D1.isoformat()), progress=False) == 0
    slower = nightly_config(root, D2.isoformat(), "hardware.network.latency_us=[2.0,2.0]")
    assert run_nightly(slower, progress=False) == 0, "a change is not a failure"
    report = _report(root, D2)
    assert report["previous_date"] == D1.isoformat()
    assert report["changed"] is True
    moved = {(m["column"], m["series"]["batch_law"]) for m in report["thresholds"]}  # type: ignore[attr-defined]
    assert {("t_lat_s", "critical"), ("t_limit_flop", "critical")} <= moved
    t_limit = next(m for m in report["thresholds"] if m["column"] == "t_limit_flop")  # type: ignore[attr-defined]
    assert t_limit["ratio"] < 1.0, "more latency lowers the latency wall"
    t_lat = next(m for m in report["thresholds"] if m["column"] == "t_lat_s")  # type: ignore[attr-defined]
    assert t_lat["ratio"] is None  # a ratio for FLOP columns only; seconds move by `change`
    assert t_lat["change"] > 0
    years = {(m["column"], m["growth_per_year"]) for m in report["forecasts"]}  # type: ignore[attr-defined]
    assert {("t_limit_year", 4.0), ("t_limit_year", 5.0)} <= years
    markdown = (root / "reports" / f"changes-{D2.isoformat()}.md").read_text(encoding="utf-8")
    assert "`t_limit_flop`" in markdown
    assert "h100_sxm / dense / critical" in markdown


def test_changes_same_config_reports_nothing_moved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs of one config differ only in run id: nothing moved, one series matched. The
    console gives the second night's count of moves, and the first night none: nothing was
    compared there, which "0 moved" would not say."""
    root = tmp_path / "nightly"
    lines = []
    for day in (D1, D2):
        assert run_nightly(nightly_config(root, day.isoformat()), progress=False) == 0
        lines += [x for x in capsys.readouterr().out.splitlines() if x.startswith("changes ")]
    first_line, second_line = lines
    assert first_line.startswith("changes none to compare: no earlier date under this root -> ")
    assert second_line.startswith(
        f"changes since {D1.isoformat()}: 0 threshold values, 0 forecast years moved -> "
    )
    report = _report(root, D2)
    assert report["changed"] is False
    assert report["series"] == {"matched": 1, "added": [], "removed": [], "ambiguous": []}
    first = _report(root, D1)
    assert first["previous_date"] is None
    assert first["changed"] is None  # nothing to compare with, not "nothing changed"


LIMITS = SeriesLimits(1e28, 3e31, 5e31, 0.7)


def _write_thresholds(
    root: Path,
    run_date: dt.date,
    series_id: str,
    t_limit: float,
    batch_law: str = "critical",
    model_b: tuple[float | None, float | None, float | None] | None = None,
) -> None:
    """One handmade thresholds part in a date's partition."""
    key = SeriesKey("h100_sxm", "dense", batch_law, 7.885e6, series_id, 3.154e7)
    provenance = Provenance(f"run-{run_date}", created_at=datetime(2025, 1, 1, tzinfo=UTC))
    table = threshold_row(
        key, LIMITS, n_points=3, alpha=0.03, t_lat_s=9e-6, t_crit_flop=3.8e28,
        t_limit_flop=t_limit, provenance=provenance, model_b_inputs=model_b,
    )  # fmt: skip
    write_part(date_dir(root, run_date), "thresholds", table, key.partition, series_id)


def _write_sweep_points(root: Path, run_date: dt.date, points: dict[str, str]) -> None:
    """A `series` part per series_id, giving it its sweep point."""
    scenario = load_scenario(compose_config([]))
    provenance = Provenance(f"run-{run_date}", created_at=datetime(2025, 1, 1, tzinfo=UTC))
    for series_id, point in points.items():
        key = SeriesKey("h100_sxm", "dense", "critical", 7.885e6, series_id, 3.154e7)
        table = series_row(
            scenario, key, whole_grid=False, sweep_point=point, provenance=provenance
        )
        write_part(date_dir(root, run_date), "series", table, key.partition, series_id)


def test_changes_match_series_by_sweep_point_not_id(tmp_path: Path) -> None:
    """Series whose ids changed are matched by their sweep point, and only the moved one shows."""
    _write_thresholds(tmp_path, D1, "0000000a", 7e31)
    _write_thresholds(tmp_path, D1, "0000000b", 8e31)
    _write_sweep_points(tmp_path, D1, {"0000000a": "latency_us=1", "0000000b": "latency_us=2"})
    _write_thresholds(tmp_path, D2, "1000000a", 7e31)
    _write_thresholds(tmp_path, D2, "1000000b", 6e31)
    _write_sweep_points(tmp_path, D2, {"1000000a": "latency_us=1", "1000000b": "latency_us=2"})
    report = compare_dates(tmp_path, D2)
    assert report.matched == 2
    assert [(m.series.sweep_point, m.column) for m in report.thresholds] == [
        ("latency_us=2", "t_limit_flop")
    ]
    assert report.thresholds[0].ratio == pytest.approx(0.75)


def test_changes_ambiguous_series_not_compared(tmp_path: Path) -> None:
    """Two series with one key and no sweep point are listed as ambiguous, not paired at random."""
    _write_thresholds(tmp_path, D1, "aaaaaaaa", 7e31)
    _write_thresholds(tmp_path, D1, "bbbbbbbb", 8e31)
    _write_thresholds(tmp_path, D2, "cccccccc", 1e31)
    _write_thresholds(tmp_path, D2, "dddddddd", 2e31, batch_law="constant")
    report = compare_dates(tmp_path, D2)
    assert report.ambiguous == (SERIES,)
    assert report.added == (SeriesMatch("h100_sxm", "dense", "constant"),)
    assert report.thresholds == ()
    assert "## Ambiguous series" in render_markdown(report)


def _trends(gpus: str, flop_growth: float) -> pl.DataFrame:
    """A two-metric trends table of the given catalog GPUs and FLOP/s growth."""
    return pl.DataFrame(
        {
            "metric": ["dense_16bit_flop_per_s", "network_latency_s"],
            "gpus": [gpus, gpus],
            "growth_per_year": [flop_growth, 1.0],
        }
    )


def test_causes_name_added_catalog_entries_and_changed_trends() -> None:
    """A GPU entering the catalog and a trend that moved are each named as a cause."""
    causes = trend_causes(_trends("v100,h100", 1.6), _trends("v100,h100,mi355x", 1.7))
    kinds = [c.kind for c in causes]
    assert kinds == ["catalog_entry_added", "trend_changed"]
    assert "mi355x" in causes[0].detail
    assert "dense_16bit_flop_per_s" in causes[1].detail
    assert trend_causes(_trends("v100,h100", 1.6), _trends("v100,h100", 1.6)) == []


@pytest.mark.slow
def test_nightly_change_report_says_the_trajectory_changed(tmp_path: Path) -> None:
    """A nightly run after a change of the compute trajectory lists it under Why."""
    for run_date, base_flop in (("2025-01-01", "5.0e25"), ("2025-01-02", "6.0e25")):
        cfg = nightly_config(tmp_path, run_date, f"forecast.base_flop={base_flop}")
        assert run_nightly(cfg, progress=False) == 0
    report = json.loads((tmp_path / "reports" / "changes-2025-01-02.json").read_text())
    assert [c["kind"] for c in report["causes"]] == ["trajectory_changed"]
    markdown = (tmp_path / "reports" / "changes-2025-01-02.md").read_text()
    assert "## Why" in markdown
    assert "compute trajectory changed" in markdown


def _runs(*rows: tuple[str, str, float, bool]) -> pl.DataFrame:
    """An observed_runs table of (model, date, FLOP, frontier) rows."""
    return pl.DataFrame(
        {
            "model": [r[0] for r in rows],
            "publication_date": [dt.date.fromisoformat(r[1]) for r in rows],
            "training_flop": [r[2] for r in rows],
            "frontier": [r[3] for r in rows],
        }
    )


def test_run_causes_name_new_gone_and_changed_runs_frontier_first() -> None:
    """Runs are matched by model and date; new ones are named with compute and month, frontier
    runs first; a changed estimate or frontier flag is a change."""
    before = _runs(("A", "2024-01-01", 1e25, True), ("B", "2024-02-01", 2e25, False))
    after = _runs(
        ("A", "2024-01-01", 3e25, True),
        ("C", "2025-02-17", 4.6e26, True),
        ("D", "2025-03-01", 9e26, False),
    )
    causes = run_causes(before, after)
    assert [(c.kind, c.detail.split(",")[0]) for c in causes] == [
        ("run_added", "new: C"),
        ("run_added", "new: D"),
        ("run_removed", "gone: B"),
        ("run_changed", "changed: A"),
    ]
    assert causes[0].detail == "new: C, 4.6e+26 FLOP, 2025-02, frontier"


def test_run_causes_count_what_they_do_not_list() -> None:
    """Beyond the listed maximum, the remaining runs are counted in one line."""
    many = _runs(*((f"m{i}", "2025-01-01", 1e24 + i, False) for i in range(MAX_RUNS_LISTED + 3)))
    causes = run_causes(_runs(), many)
    assert len(causes) == MAX_RUNS_LISTED + 1
    assert causes[-1].detail == "... and 3 more runs added"


def test_changes_never_match_two_concrete_runs(tmp_path: Path) -> None:
    """`run=gpt_1p7b` one date and `run=gpt_7p5b` the next are one series removed and one
    added, never one series whose values moved."""
    for day, run in ((D1, "gpt_1p7b"), (D2, "gpt_7p5b")):
        assert run_nightly(nightly_config(tmp_path, day.isoformat(), f"run={run}"), False) == 0
    report = compare_dates(tmp_path, D2)
    assert report.matched == 0
    assert report.thresholds == ()
    assert [k.label.rsplit(" run ", 1)[1] for k in report.added] == ["gpt_7p5b"]
    assert [k.label.rsplit(" run ", 1)[1] for k in report.removed] == ["gpt_1p7b"]


def test_changes_compare_only_columns_both_nights_have(tmp_path: Path) -> None:
    """A previous night written by an older schema version (without the columns added since)
    reports no change for those columns, only for one both nights hold."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.io.tables import columns_of

    model_b = (7.885e6, 1e6, 20.0)
    _write_thresholds(tmp_path, D1, "0000000a", 7e31, model_b=model_b)
    _write_thresholds(tmp_path, D2, "1000000a", 6e31, model_b=model_b)
    (old,) = date_dir(tmp_path, D1).glob("thresholds/**/*.parquet")
    version2 = columns_of("thresholds", 2)
    table = pq.read_table(old).select(version2.names)
    table = table.set_column(
        version2.get_field_index("schema_version"),
        "schema_version",
        pa.array([2] * table.num_rows, pa.int32()),
    )
    pq.write_table(table.cast(version2), old)
    report = compare_dates(tmp_path, D2)
    assert [m.column for m in report.thresholds] == ["t_limit_flop"]


def test_change_report_refuses_a_previous_date_with_a_split_series(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A previous date holding a series in two parts of one table (merged into by hand) is not
    compared as if its rows were twice there: the run is published, its change report is not
    written, and one line says why (exit 2)."""
    root = tmp_path / "nightly"
    assert run_nightly(nightly_config(root, D1.isoformat()), progress=False) == 0
    split_part(date_dir(root, D1), "thresholds")
    capsys.readouterr()
    assert run_nightly(nightly_config(root, D2.isoformat()), progress=False) == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if "error" in x]
    assert "1 series has rows in two parts of the thresholds table" in line
    assert f"the run is published as {date_dir(root.resolve(), D2)}; no change report" in line
    assert date_dir(root, D2).is_dir()
    assert not (root / "reports" / f"changes-{D2.isoformat()}.md").exists()


def test_change_report_gives_why_a_forecast_year_is_null() -> None:
    """A year that vanished shows its reason; a year null on both nights moved when its reason
    did (no wall on the grid, then the cluster cap), and not when it kept it."""
    from pipeline.nightly.changes import Move, _move_row, _moves, unmoved_note

    def forecasts(wall: str, linear_end: float | None) -> pl.DataFrame:
        reasons = [f"wall_year={wall}"]
        if linear_end is None:
            reasons.insert(0, "linear_end_year=no_feasible_size")
        return pl.DataFrame(
            {
                "series_id": ["s"],
                "trajectory": ["fitted"],
                "growth_per_year": [4.0],
                "linear_end_year": [linear_end],
                "wall_year": [None],
                "t_limit_year": [None],
                "year_null_reasons": [",".join([*reasons, "t_limit_year=no_closed_form"])],
            },
            schema_overrides={c: pl.Float64 for c in ("wall_year", "t_limit_year")},
        )

    def moves(before: pl.DataFrame, after: pl.DataFrame) -> list[Move]:
        columns = ("linear_end_year", "wall_year", "t_limit_year")
        by = ("series_id", "trajectory")
        return _moves({"s": "s"}, {"s": SERIES}, before, after, columns, by, "forecasts")

    vanished, capped = moves(forecasts("end_of_grid", 2028.3), forecasts("cluster_cap", None))
    assert (vanished.column, vanished.current_null_reason) == (
        "linear_end_year",
        "no_feasible_size",
    )
    assert "| 2028.30 | null (no_feasible_size) | vanished |" in _move_row(vanished)
    assert (capped.previous_null_reason, capped.current_null_reason) == (
        "end_of_grid",
        "cluster_cap",
    )
    assert _move_row(capped).endswith(
        "| null (end_of_grid) | null (cluster_cap) | null both nights |"
    )
    assert moves(forecasts("end_of_grid", 2028.3), forecasts("end_of_grid", 2028.3)) == []
    assert unmoved_note([vanished, capped]) == " (1 of them null on both dates, for another reason)"
    assert unmoved_note([vanished]) == ""


def _physics_series(*rows: tuple[str, str | None]) -> pl.DataFrame:
    """A `series` table's physics columns, one row per (preset, physics_json)."""
    return pl.DataFrame(
        {
            "series_id": [f"s{i}" for i in range(len(rows))],
            "physics": [name for name, _ in rows],
            "physics_json": [settings for _, settings in rows],
        },
        schema={"series_id": pl.String, "physics": pl.String, "physics_json": pl.String},
    )


def test_physics_causes_name_the_preset_and_the_switches_that_changed() -> None:
    """Paper one night and realistic the next match as the same series (hardware, scaling,
    batch law), so their values move: the Why names the physics. Within one preset it names
    the switches that changed; a part older than `physics_json` is compared by name alone."""
    paper = _physics_series(("paper", '{"attention": false}'))
    ring16 = _physics_series(("realistic", '{"attention": true, "max_context_parallel": 16}'))
    ring8 = _physics_series(("realistic", '{"attention": true, "max_context_parallel": 8}'))
    (cause,) = physics_causes(paper, ring16)
    assert (cause.kind, cause.detail) == ("physics_changed", "physics paper -> realistic")
    (cause,) = physics_causes(ring16, ring8)
    assert cause.detail == "physics realistic: max_context_parallel 16 -> 8"
    assert physics_causes(ring8, ring8) == []
    assert physics_causes(_physics_series(("realistic", None)), ring8) == []
    assert physics_causes(None, ring8) == []
