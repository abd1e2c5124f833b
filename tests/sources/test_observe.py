"""Every configured source read for one run: a copy parsed once per process, by its body."""

from __future__ import annotations

import datetime as dt

from pipeline.sources.epoch import Reject, parse_runs
from pipeline.sources.observe import FRONTIER_RUNS, parsed

HEADER = b"Model,Publication date,Training compute (FLOP)\n"


def test_parsed_parses_an_equal_body_once_and_a_changed_body_again() -> None:
    """The same body gives the rows of its one parse; another body of the source is parsed."""
    calls: list[bytes] = []

    def counting(
        body: bytes, source: str, as_of: dt.date | None
    ) -> tuple[list[object], list[Reject]]:
        calls.append(body)
        runs, rejects = parse_runs(body, source, as_of)
        return list(runs), rejects

    first = HEADER + b"A,2024-01-02,1e25\n"
    again = bytes(bytearray(first))  # equal, not the same object: a copy read again
    rows = parsed(FRONTIER_RUNS, first, counting)
    assert parsed(FRONTIER_RUNS, again, counting) == rows
    assert calls == [first]
    changed = HEADER + b"B,2024-03-04,2e25\n"
    (run,), _ = parsed(FRONTIER_RUNS, changed, counting)
    assert run == parse_runs(changed, FRONTIER_RUNS)[0][0]
    assert calls == [first, changed]
