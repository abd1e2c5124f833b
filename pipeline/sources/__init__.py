"""Observed data: frontier training runs and accelerators, from Epoch AI's datasets.

- settings: conf/sources/*.yaml -> SourcesSettings (where each source is, how to fetch)
- http: one URL fetched with a deadline, bounded retries, conditional GET, a size limit, gzip
- body: is a body the whole CSV asked for (not HTML, not cut short)
- store: copies kept once by content hash, and each source's last good copy
- acquire: this run's copy of a source (shipped, a path, or fetched with a stale fallback)
- epoch: Epoch's CSV columns by name -> observed runs and accelerators, and the rows refused
- bounds: the plausibility bounds every row read is held to (dates, compute, accelerators)
- batches: the `observed` batch law fitted to the runs' batch sizes
- observe: every source of a run read and parsed (`Observations`)

docs/sources.md describes the sources, the failure modes and the tables.
"""

from pipeline.sources.acquire import Snapshot, SourceError
from pipeline.sources.observe import Observations, observe
from pipeline.sources.settings import SourcesSettings, sources_from_config

__all__ = [
    "Observations",
    "Snapshot",
    "SourceError",
    "SourcesSettings",
    "observe",
    "sources_from_config",
]
