"""The declared schemas and their documentation in docs/schema.md."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.io.columns import PARTITION_COLUMNS
from pipeline.io.tables import BY_NAME, SERIES_TABLES, file_schema

DOCS = Path(__file__).resolve().parents[2] / "docs" / "schema.md"
_ROW = re.compile(r"^\| `(?P<name>[a-z0-9_]+)` \| (?P<type>[^|]+?) \|")


def _documented_columns() -> dict[str, list[tuple[str, str]]]:
    """(name, type) of every column row in docs/schema.md, per `## `table`` section."""
    tables: dict[str, list[tuple[str, str]]] = {}
    current: str | None = None
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^## `(\w+)`$", line)
        if heading:
            current = heading.group(1)
            tables[current] = []
        elif line.startswith("## "):
            current = None
        elif current is not None and (row := _ROW.match(line)):
            tables[current].append((row.group("name"), row.group("type").strip()))
    return tables


def test_docs_schema_lists_exactly_the_columns() -> None:
    """docs/schema.md documents every column of every table, in order, with its Arrow type."""
    documented = _documented_columns()
    assert sorted(documented) == sorted(BY_NAME)
    for name, spec in BY_NAME.items():
        assert documented[name] == [(f.name, str(f.type)) for f in spec.schema], name


@pytest.mark.parametrize("table_name", sorted(BY_NAME))
def test_schema_column_names_unique(table_name: str) -> None:
    """No table declares a column twice."""
    names = BY_NAME[table_name].schema.names
    assert len(names) == len(set(names))


@pytest.mark.parametrize("table_name", sorted(BY_NAME))
def test_schema_has_no_nested_or_unsigned_types(table_name: str) -> None:
    """Columns are flat, and integers are signed."""
    for f in BY_NAME[table_name].schema:
        assert not pa.types.is_nested(f.type), f.name
        assert not pa.types.is_unsigned_integer(f.type), f.name


@pytest.mark.parametrize("table_name", SERIES_TABLES)
def test_file_schema_drops_partition_columns(table_name: str) -> None:
    """Part files of a partitioned table store every column except the hive partition keys."""
    stored = file_schema(table_name).names
    assert not set(stored) & set(PARTITION_COLUMNS)
    assert len(stored) == len(BY_NAME[table_name].schema) - len(PARTITION_COLUMNS)


def test_docs_schema_states_the_current_version() -> None:
    """docs/schema.md's "Schema version" line and its `schema_version` column give the version
    the code writes, and its versioning table ends at it."""
    from pipeline.io.columns import SCHEMA_VERSION

    text = DOCS.read_text(encoding="utf-8")
    assert f"**Schema version: {SCHEMA_VERSION}**" in text
    assert f"version of this schema ({SCHEMA_VERSION})" in text
    versions = [int(v) for v in re.findall(r"^\| (\d+) \| `", text, flags=re.M)]
    assert max(versions) == SCHEMA_VERSION
