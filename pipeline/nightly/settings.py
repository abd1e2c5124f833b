"""The nightly keys of the root `output` node -> NightlySettings (one-line ConfigError)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig

from pipeline.schema.errors import ConfigError
from pipeline.schema.run import first_override_of
from pipeline.schema.section import plain

TODAY = "today"
"""`output.run_date: today` is the local calendar date when the run starts (TZ=UTC for UTC)."""


@dataclass(frozen=True, slots=True)
class NightlySettings:
    """Where the dated partitions live, and which date this run writes."""

    root: Path
    """`output.nightly_root`: holds run_date=YYYY-MM-DD/ directories and reports/."""
    run_date: dt.date


def parse_run_date(
    value: object, key: str = "output.run_date", today: dt.date | None = None
) -> dt.date:
    """`today`, a date, or a YYYY-MM-DD string as a date; a ConfigError otherwise."""
    allowed = "must be 'today' or a date written YYYY-MM-DD"
    if value == TODAY:
        return today or dt.date.today()
    if isinstance(value, dt.datetime):
        raise ConfigError(key, value, allowed)
    if isinstance(value, dt.date):
        return plausible_run_date(value, key, today)
    if not isinstance(value, str) or len(value) != len("YYYY-MM-DD"):
        raise ConfigError(key, value, allowed)
    try:
        date = dt.date.fromisoformat(value)
    except ValueError:
        raise ConfigError(key, value, allowed) from None
    return plausible_run_date(date, key, today)


EARLIEST_RUN_DATE = dt.date(2000, 1, 1)
"""No nightly partition is dated before this: the catalog's and the sources' data begin later."""


def plausible_run_date(date: dt.date, key: str, today: dt.date | None = None) -> dt.date:
    """`date` when a nightly run can be dated so: from `EARLIEST_RUN_DATE` to tomorrow (a
    partition holds the data as of its date, which cannot be in the future; a day of slack for
    time zones); a ConfigError otherwise (9999-12-31 would overflow the dates a run derives)."""
    latest = max(today or dt.date.today(), dt.date.today()) + dt.timedelta(days=1)
    if not EARLIEST_RUN_DATE <= date <= latest:
        raise ConfigError(
            key,
            date.isoformat(),
            f"must be a date from {EARLIEST_RUN_DATE.isoformat()} to {latest.isoformat()} "
            "(tomorrow): a nightly partition holds the data as of its date",
        )
    return date


def nightly_from_config(cfg: DictConfig, today: dt.date | None = None) -> NightlySettings:
    """The nightly root and run date of a composed config; `output.run_date` must be set."""
    output = plain(cfg.get("output"), "output")
    if not isinstance(output, dict):
        raise ConfigError("output", output, "must be a mapping of keys to values")
    root = output.get("nightly_root")
    if not isinstance(root, str) or not root:
        raise ConfigError("output.nightly_root", root, "must be a directory path")
    return NightlySettings(
        Path(root).expanduser(), parse_run_date(output.get("run_date"), today=today)
    )


NOT_READ_BY_NIGHTLY = {
    "output.root": "set output.nightly_root instead",
    "output.resume": "every series is evaluated afresh, so there is nothing to resume",
}
"""`output` keys a nightly run does not read, with what to do instead: it writes its whole run
into a fresh staging directory of its own (`nightly.run`), then publishes it as
ROOT/run_date=D under `output.nightly_root`, so neither the dataset root nor resuming in it
applies."""


def check_nightly_overrides(overrides: Sequence[str]) -> None:
    """ConfigError naming the first command-line override of a key a nightly run does not read
    (`NOT_READ_BY_NIGHTLY`): given, it would change nothing while the user expected it to,
    e.g. `output.root=/srv/data` beside `+experiment=nightly` writing under outputs/nightly."""
    found = first_override_of(overrides, NOT_READ_BY_NIGHTLY)
    if found is not None:
        key, value, which = found
        raise ConfigError(
            key,
            value,
            "is not read by a nightly run, which writes its partition run_date=D under "
            f"output.nightly_root: {NOT_READ_BY_NIGHTLY[which]} (docs/nightly.md)",
        )
