"""The rows of the `sources`, `observed_runs` and `source_rejects` tables of one run.

Columns: docs/schema.md (the registry in `pipeline.io`). Rows are plain dicts; the caller makes
them a table against the registered schema and writes it (`pipeline.app.write.run_tables`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pipeline.catalog.load import fractional_year
from pipeline.identity import config_hash
from pipeline.io.columns import BATCH_LAW_FIT_COLUMNS
from pipeline.io.rows import Provenance
from pipeline.sources.batches import fit_batch_law
from pipeline.sources.observe import FRONTIER_RUNS, Observations


def _provenance(provenance: Provenance, identity: dict[str, Any]) -> dict[str, Any]:
    return {
        "run_id": provenance.run_id,
        "config_hash": config_hash(identity),
        "schema_version": int(provenance.schema_version),
        "dmlimits_version": provenance.dmlimits_version,
        "created_at": provenance.created_at,
    }


def _batch_law_fit(observations: Observations, source: str) -> dict[str, Any]:
    """The `observed` batch law fitted to the frontier runs (`batches.fit_batch_law`), as the
    `sources` row's columns; null for another source or too few runs."""
    fit = fit_batch_law(observations.runs) if source == FRONTIER_RUNS else None
    if fit is None:
        return dict.fromkeys(BATCH_LAW_FIT_COLUMNS)
    return {
        "batch_law_runs": fit.n_runs,
        "batch_law_coefficient": fit.coefficient,
        "batch_law_exponent": fit.exponent,
        "batch_law_exponent_low": fit.exponent_low,
        "batch_law_exponent_high": fit.exponent_high,
    }


def source_dicts(observations: Observations, provenance: Provenance) -> list[dict[str, Any]]:
    """One row per source read: where from, which copy, how many rows, stale or not, and for
    the frontier runs the observed batch law's fit."""
    rows = []
    for read in observations.reads:
        s = read.snapshot
        rows.append(
            {
                "source": s.name,
                "location": s.spec.location,
                "content_hash": s.content_hash,
                "snapshot_date": s.snapshot_date,
                "fetched_at": s.fetched_at,
                "age_days": s.age_days,
                "stale": s.stale,
                "stale_reason": s.stale_reason,
                "rows_read": read.rows_read,
                "rows_rejected": len(read.rejects),
                "newest_date": read.newest_date,
                "licence": s.licence,
                **_batch_law_fit(observations, s.name),
                **_provenance(provenance, {"source": s.name, "content_hash": s.content_hash}),
            }
        )
    return rows


def observed_run_dicts(
    observations: Observations, frontier: Sequence[bool], fit_hash: str, provenance: Provenance
) -> list[dict[str, Any]]:
    """One row per usable training run; `frontier[i]` says whether run i defines the frontier
    of the fit `fit_hash` names (`pipeline.forecast.observed.fit_hash`)."""
    read = observations.read("frontier_runs")
    digest = read.snapshot.content_hash if read is not None else ""
    return [
        {
            "source": "frontier_runs",
            "content_hash": digest,
            "line": run.line,
            "model": run.model,
            "organization": run.organization,
            "publication_date": run.publication_date,
            "publication_year": fractional_year(run.publication_date),
            "training_flop": run.training_flop,
            "confidence": run.confidence,
            "epoch_frontier": run.epoch_frontier,
            "frontier": bool(flag),
            "fit_hash": fit_hash,
            "domain": run.domain,
            "parameters": run.parameters,
            "training_hardware": ",".join(run.training_hardware) or None,
            "hardware_quantity": run.hardware_quantity,
            "training_time_s": run.training_time_s,
            "hardware_utilization": run.hardware_utilization,
            "batch_size": run.batch_size,
            **_provenance(
                provenance, {"content_hash": digest, "fit_hash": fit_hash, "line": run.line}
            ),
        }
        for run, flag in zip(observations.runs, frontier, strict=True)
    ]


def reject_dicts(observations: Observations, provenance: Provenance) -> list[dict[str, Any]]:
    """One row per refused source row, with its line and reason."""
    return [
        {
            "source": read.snapshot.name,
            "content_hash": read.snapshot.content_hash,
            "line": reject.line,
            "name": reject.name,
            "reason": reject.reason,
            "row": reject.row,
            **_provenance(
                provenance, {"content_hash": read.snapshot.content_hash, "line": reject.line}
            ),
        }
        for read in observations.reads
        for reject in read.rejects
    ]
