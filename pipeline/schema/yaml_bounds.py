"""Bounds on config text a user hands in: YAML files and command-line overrides.

A config is a few dozen values nested a few levels deep. Two shapes of hostile text would
otherwise hang or crash composition before any value is checked:

- an alias bomb: nine lines whose anchors each repeat the one before nine times expand to
  9^9 values once OmegaConf copies every alias (minutes of CPU and gigabytes);
- nesting hundreds of levels deep (``sms: [[[[...]]]]`` in a file or on the command line)
  exhausts Python's recursion limit inside OmegaConf, a traceback.

Both are refused before Hydra reads the text, in one line naming the file and line (or the
override): a user file is walked as YAML events (no objects built, no recursion), counting the
values each node expands to; an override's brackets are counted. Text that is not UTF-8 is
refused the same way. The bounds are far beyond any real config (conf/ nests at most 5 deep).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from pipeline.schema.errors import InputError

MAX_DEPTH = 32
"""Deepest nesting of mappings and lists allowed in a config file or an override value."""
MAX_VALUES = 100_000
"""Most values (scalars and collections) a config file may expand to, its aliases expanded."""
_OPEN = {"[": "]", "{": "}", "(": ")"}
_QUOTES = "'\""


def _where(path: Path, event: yaml.Event) -> str:
    mark = event.start_mark
    return f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)


def read_utf8(path: Path) -> str:
    """The text of a user's file: UTF-8, with or without the byte-order mark spreadsheets and
    some editors write; any other encoding is an InputError naming the file, the line and the
    first byte that is not UTF-8."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        byte = data[err.start : err.start + 1].hex()
        raise InputError(
            f"{path}:{line}: byte 0x{byte} is not UTF-8; save the file as UTF-8 "
            '("CSV UTF-8" in a spreadsheet)'
        ) from None


def check_yaml_file(path: Path) -> None:
    """InputError unless the YAML file at `path` is UTF-8, nests at most `MAX_DEPTH` deep and
    expands (aliases included) to at most `MAX_VALUES` values.

    A file that is not valid YAML passes: Hydra reports its syntax error with file and line.
    """
    text = read_utf8(path)
    anchors: list[str | None] = []  # the anchor of each open collection, outermost first
    sizes: list[int] = []  # the values each open collection holds so far
    anchored: dict[str, int] = {}  # anchor -> values its node expands to
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                anchors.append(event.anchor)
                sizes.append(1)
                if len(sizes) > MAX_DEPTH:
                    raise InputError(
                        f"{_where(path, event)}: nested more than {MAX_DEPTH} levels deep"
                    )
                continue
            if isinstance(event, yaml.CollectionEndEvent):
                anchor, size = anchors.pop(), sizes.pop()
            elif isinstance(event, yaml.ScalarEvent):
                anchor, size = event.anchor, 1
            elif isinstance(event, yaml.AliasEvent):
                anchor, size = None, anchored.get(event.anchor, 1)
            else:
                continue
            if anchor is not None:
                anchored[anchor] = size
            if sizes:
                sizes[-1] += size
                if sizes[-1] > MAX_VALUES:
                    raise InputError(
                        f"{_where(path, event)}: expands to more than {MAX_VALUES:,} values "
                        "(YAML aliases repeating aliases); write the values out"
                    )
    except yaml.YAMLError:
        return


def check_override(override: str) -> None:
    """InputError if a command-line override's value nests brackets more than `MAX_DEPTH` deep."""
    depth, quote = 0, ""
    for char in override:
        if quote:
            quote = "" if char == quote else quote
        elif char in _QUOTES:
            quote = char
        elif char in _OPEN:
            depth += 1
            if depth > MAX_DEPTH:
                shown = override if len(override) <= 60 else override[:57] + "..."
                raise InputError(f"override {shown!r}: nested more than {MAX_DEPTH} levels deep")
        elif char in _OPEN.values():
            depth -= 1
