"""BI access: one DuckDB database file whose views read the Parquet dataset in place (`views`)."""
