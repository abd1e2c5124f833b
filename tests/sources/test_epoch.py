"""Epoch's CSV files read by column name: rows kept, rows refused with their reasons."""

from __future__ import annotations

import datetime as dt

import pytest

from pipeline.sources.acquire import SourceError
from pipeline.sources.epoch import parse_accelerators, parse_runs

HEADER = "Model,Organization,Publication date,Training compute (FLOP),Confidence,Frontier model\n"


def test_parse_runs_reads_columns_by_name_in_any_order() -> None:
    """Extra columns and another column order change nothing."""
    body = (
        b"Frontier model,Extra,Training compute (FLOP),Model,Publication date\n"
        b'True,x,4.64e+26,"Grok 3, preview",2025-02-17\n'
    )
    runs, rejects = parse_runs(body, "frontier_runs")
    assert rejects == []
    (run,) = runs
    assert (run.model, run.publication_date, run.training_flop) == (
        "Grok 3, preview",
        dt.date(2025, 2, 17),
        4.64e26,
    )
    assert run.epoch_frontier is True
    assert run.organization is None


def test_parse_runs_refuses_every_kind_of_unusable_row_with_its_reason() -> None:
    """No date, a bad date, no compute, text, zero, negative, inf, no name, short rows and
    repeats are each kept as a reject with a reason; the good rows are kept."""
    body = (
        HEADER
        + "Good,Org,2024-01-01,1e25,Likely,True\n"
        + "NoDate,Org,,1e25,Likely,\n"
        + "BadDate,Org,Jan 2024,1e25,Likely,\n"
        + "NoCompute,Org,2024-01-01,,Likely,\n"
        + "Text,Org,2024-01-01,lots,Likely,\n"
        + "Zero,Org,2024-01-01,0,Likely,\n"
        + "Negative,Org,2024-01-01,-3e24,Likely,\n"
        + "Infinite,Org,2024-01-01,inf,Likely,\n"
        + ",Org,2024-01-01,1e25,Likely,\n"
        + "Short,Org,2024-01-01\n"
        + "Good,Org,2024-01-01,2e25,Likely,True\n"
        + "Other,Org,2024-02-01,3e25,Likely,\n"
    ).encode()
    runs, rejects = parse_runs(body, "frontier_runs")
    assert [r.model for r in runs] == ["Good", "Other"]
    reasons = {r.name: r.reason for r in rejects}
    assert reasons["NoDate"] == "no Publication date"
    assert "is not a date" in reasons["BadDate"]
    assert reasons["NoCompute"] == "no Training compute (FLOP)"
    assert "is not a number" in reasons["Text"]
    for name in ("Zero", "Negative", "Infinite"):
        assert "not a positive finite number" in reasons[name]
    assert reasons[None] == "no Model"
    assert "fields where the header has" in reasons["Short"]
    assert reasons["Good"] == "repeats line 2 (same Model and Publication date)"
    assert len(rejects) == 10
    assert all(r.line > 1 for r in rejects)


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (
            "Model,Publication date,Training compute (FLOPs)\n",
            "source frontier_runs: column 'Training compute (FLOP)' is missing "
            "(renamed to 'Training compute (FLOPs)'?)",
        ),
        (
            "Model,Training compute (FLOP)\n",
            "source frontier_runs: column 'Publication date' is missing",
        ),
    ],
    ids=["renamed", "missing"],
)
def test_parse_runs_names_a_missing_or_renamed_column(header: str, message: str) -> None:
    """A required column that is absent is one line naming the source and the column."""
    with pytest.raises(SourceError) as err:
        parse_runs((header + "A,2024-01-01,1e25\n").encode(), "frontier_runs")
    assert str(err.value) == message


def test_parse_runs_without_a_frontier_column_leaves_the_flag_unknown() -> None:
    """A file without Epoch's Frontier model column (large-scale models) reads with flag None."""
    runs, _ = parse_runs(
        b"Model,Publication date,Training compute (FLOP)\nA,2024-01-01,1e25\n", "x"
    )
    assert runs[0].epoch_frontier is None


def test_parse_accelerators_converts_bits_and_refuses_unusable_rows() -> None:
    """Internode bit/s become bytes/s; no date, no metric, a bad number and a repeat are refused."""
    header = (
        "Hardware name,Manufacturer,Type,Release date,Tensor-FP16/BF16 performance (FLOP/s),"
        "Memory (bytes),Memory bandwidth (byte/s),Intranode bandwidth (byte/s),"
        "Internode bandwidth (bit/s),TDP (W)\n"
    )
    body = (
        header
        + "X1,N,GPU,2024-01-01,1e15,8e10,3e12,9e11,8e11,700\n"
        + "NoDate,N,GPU,,1e15,,,,,\n"
        + "NoMetric,N,GPU,2024-01-01,,,,,,\n"
        + "Bad,N,GPU,2024-01-01,fast,,,,,\n"
        + "X1,N,GPU,2024-02-01,2e15,,,,,\n"
    ).encode()
    found, rejects = parse_accelerators(body, "accelerators")
    (x1,) = found
    assert x1.values["inter_node_bandwidth_bytes_per_s"] == pytest.approx(1e11)
    assert x1.values["dense_16bit_flop_per_s"] == 1e15
    assert [r.name for r in rejects] == ["NoDate", "NoMetric", "Bad", "X1"]


HOW_TRAINED = (
    "Batch size,Training time (hours),Model,Hardware quantity,Publication date,Domain,"
    "Training compute (FLOP),Training hardware,Hardware utilization,Parameters,Notes\n"
)


def test_parse_runs_reads_how_each_run_was_trained_by_column_name() -> None:
    """Hardware (several comma-separated names), count, hours in seconds, utilization, batch
    size, domain and parameters are read by name, in any order, among unknown columns."""
    body = (
        HOW_TRAINED
        + '16000000.0,2142.0,Llama,16384.0,2024-07-23,Language,3.8e+25,"NVIDIA A100,NVIDIA H100",'
        + '0.4042,405000000000.0,"a note, with a comma"\n'
    ).encode()
    (run,), rejects = parse_runs(body, "frontier_runs")
    assert rejects == []
    assert run.training_hardware == ("NVIDIA A100", "NVIDIA H100")
    assert run.hardware_quantity == 16384
    assert run.training_time_s == pytest.approx(2142.0 * 3600.0)
    assert run.hardware_utilization == 0.4042
    assert run.batch_size == 16e6
    assert (run.domain, run.parameters) == ("Language", 405e9)


def test_parse_runs_without_how_trained_columns_leaves_them_unknown() -> None:
    """An export without the how-trained columns gives None (and no hardware) for each."""
    (run,), _ = parse_runs(HEADER.encode() + b"A,Org,2024-01-01,1e25,Likely,True\n", "x")
    assert (run.training_hardware, run.hardware_quantity, run.training_time_s) == ((), None, None)
    assert (run.hardware_utilization, run.batch_size, run.domain) == (None, None, None)


@pytest.mark.parametrize(
    ("cells", "reason"),
    [
        ("1e6,10,A,8.5,2024-01-01,Language,1e24,H100,0.4,1e9", "is not a whole number"),
        ("1e6,10,A,8,2024-01-01,Language,1e24,H100,40,1e9", "is above 1"),
        ("1e6,-10,A,8,2024-01-01,Language,1e24,H100,0.4,1e9", "not a positive finite number"),
        ("lots,10,A,8,2024-01-01,Language,1e24,H100,0.4,1e9", "is not a number"),
    ],
    ids=["fractional-count", "percent-utilization", "negative-hours", "text-batch"],
)
def test_parse_runs_refuses_a_how_trained_cell_that_cannot_be_used(cells: str, reason: str) -> None:
    """A count that is not whole, a utilization above 1, negative hours or a text batch size
    refuses the row with its reason."""
    runs, (reject,) = parse_runs((HOW_TRAINED + cells + ",\n").encode(), "frontier_runs")
    assert runs == []
    assert reason in reject.reason


def test_shipped_snapshot_states_how_its_runs_were_trained() -> None:
    """The shipped snapshot carries the how-trained columns: about 140 runs state compute,
    hardware, count and hours together, about 40 of at least 1e23 FLOP a batch size."""
    from importlib import resources

    body = resources.files("pipeline.sources.data").joinpath("notable_ai_models.csv").read_bytes()
    runs, _ = parse_runs(body, "frontier_runs")
    full = [r for r in runs if r.training_hardware and r.hardware_quantity and r.training_time_s]
    batched = [r for r in runs if r.batch_size is not None and r.training_flop >= 1e23]
    assert 100 <= len(full) <= 200
    assert 30 <= len(batched) <= 60
