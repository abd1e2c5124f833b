"""Tests of pipeline.io: schema, rows, Parquet writing, locking, reading and gathering."""
