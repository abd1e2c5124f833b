"""The report page's reality check: the observed runs the model contradicts (`reality` table).

docs/sources.md, "The reality check": a run that happened which the model calls infeasible
within its hours, or for which it needs more than twice its accelerators, is a contradiction;
each is shown with the physics that produced it.
"""

from __future__ import annotations

import html

import polars as pl

from pipeline.forecast.reality import OWN_DATA, POSSIBLE_UTILIZATION

CONTRADICTION_COLUMNS = (
    ("physics", "physics"),
    ("model", "run"),
    ("publication_date", "published"),
    ("training_flop", "C (FLOP)"),
    ("training_hardware", "accelerator"),
    ("hardware_quantity", "GPUs used"),
    ("training_hours", "hours"),
    ("implied_utilization", "implied utilization"),
    ("preset", "preset"),
    ("catalog_entry", "built from catalog"),
    ("d_model", "d_model"),
    ("precision", "format"),
    ("model_n_gpu", "model's GPUs"),
    ("gpu_ratio", "ratio"),
    ("model_utilization", "model's utilization"),
)
"""The columns of the contradictions table, worst first per physics."""


def _cell(column: str, value: object) -> str:
    if value is None:
        return "infeasible" if column == "model_n_gpu" else "–"
    if isinstance(value, float):
        if column == "training_flop":
            return f"{value:.2e}"
        if column == "gpu_ratio":
            return f"{value:.3g}×"
        if column == "training_hours":
            return f"{value:,.0f}"
        return f"{value:.3g}"
    if isinstance(value, int):
        return f"{value:,}" if column != "d_model" else str(value)
    return html.escape(str(value))


def reality_counts(reality: pl.DataFrame) -> list[str]:
    """Per physics: runs checked, runs the model answered, contradictions, and how many of
    those state more compute than their accelerators deliver at peak (a contradiction of the
    run's own data, docs/sources.md "The reality check")."""
    lines = []
    for (physics,), rows in reality.group_by("physics", maintain_order=True):
        answered = rows.filter(pl.col("reason").is_null()).height
        found = rows.filter(pl.col("contradiction"))
        own = found.filter(pl.col("implied_utilization") > POSSIBLE_UTILIZATION).height
        reasons = (
            rows.filter(pl.col("reason").is_not_null())
            .group_by("reason")
            .len()
            .sort(["len", "reason"], descending=[True, False])
        )
        others = "; ".join(f"{n} {why}" for why, n in reasons.iter_rows())
        lines.append(
            f"{physics}: {rows.height} runs state compute, accelerator, count and hours; the "
            f"model answers {answered}" + (f" (not the others: {others})" if others else "") + "; "
            f"contradictions: {found.height}, {own} of them runs {OWN_DATA}"
        )
    return sorted(lines)


def reality_section(reality: pl.DataFrame) -> list[str]:
    """The page's HTML: a heading, the counts, and the contradictions, worst first."""
    found = (
        reality.filter(pl.col("contradiction"))
        .with_columns((pl.col("training_time_s") / 3600.0).alias("training_hours"))
        .sort(["physics", "gpu_ratio"], descending=[False, True], nulls_last=False)
    )
    parts = [
        "<h2>Reality check: observed runs against the model</h2>",
        "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in reality_counts(reality)),
        "</ul>",
    ]
    if found.is_empty():
        return [
            *parts,
            "<p>No contradictions: every answered run is feasible in the model on "
            "at most twice the accelerators it used.</p>",
        ]
    head = "".join(f"<th>{html.escape(title)}</th>" for _, title in CONTRADICTION_COLUMNS)
    body = "\n".join(
        "<tr>"
        + "".join(f"<td>{_cell(c, row.get(c))}</td>" for c, _ in CONTRADICTION_COLUMNS)
        + "</tr>"
        for row in found.iter_rows(named=True)
    )
    caption = (
        "Contradictions: runs that happened which the model calls infeasible within their "
        "hours, or for which it needs more than twice their accelerators (the model's smallest "
        "cluster for a model of the run's compute, spec §11); an implied utilization above 1 "
        "means the run's own numbers cannot all be right."
    )
    return [
        *parts,
        f"<table><caption>{html.escape(caption)}</caption>\n<tr>{head}</tr>\n{body}\n</table>",
    ]
