"""Storage: the column schema, model results flattened into rows, Parquet writing and reading.

- `columns`: the tables' columns (documented in docs/schema.md);
- `tables`: the one table registry: every table's schema, layout, sort keys and write order;
- `rows`: `PointResult`, `SeriesLimits` and a `Scenario` into rows, with provenance and hashes;
- `parquet`: atomic, idempotent part files in a hive-partitioned dataset;
- `text`: atomic text files (reports, pages, job markers);
- `lock`: one writer per dataset root;
- `read`: the one dataset reader: only the parts the writer wrote, checked against the schema;
- `dataset`: `read_points`/`read_thresholds`, and checking a finished sweep (`gather`);
- `trends`: the `trends` table's rows.

Nothing here imports the search or evaluates the model; the modules are imported one by one
so that a worker that only writes never imports polars.
"""
