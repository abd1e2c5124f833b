"""Section readings remembered by node identity (`pipeline.schema.memo`)."""

from __future__ import annotations

import pytest

from pipeline.schema import compose_config, load_scenario
from pipeline.schema.memo import SectionMemo
from pipeline.schema.section import plain


def test_section_memo_reads_each_node_once() -> None:
    """A reader is called once per node object, however often that node is read."""
    calls: list[object] = []

    def reader(node: object) -> int:
        calls.append(node)
        return len(calls)

    memo = SectionMemo()
    first, second = {"a": 1}, {"a": 1}
    assert [memo.read(reader, first), memo.read(reader, first), memo.read(reader, second)] == [
        1,
        1,
        2,
    ]
    assert calls == [first, second]


def test_section_memo_forgets_the_least_recently_used() -> None:
    """Past its bound the memo drops the reading used longest ago and reads that node again."""
    calls: list[object] = []

    def reader(node: object) -> None:
        calls.append(node)

    memo = SectionMemo(max_entries=2)
    nodes = [{"i": i} for i in range(3)]
    for node in (nodes[0], nodes[1], nodes[0], nodes[2], nodes[0], nodes[1]):
        memo.read(reader, node)
    assert calls == [nodes[0], nodes[1], nodes[2], nodes[1]]
    assert len(memo) == 2


def test_section_memo_does_not_remember_a_refusal() -> None:
    """A reader that raises is called again on the next read of the node."""
    calls: list[object] = []

    def refuse(node: object) -> None:
        calls.append(node)
        raise ValueError("refused")

    memo = SectionMemo()
    node = {"bad": True}
    for _ in range(2):
        with pytest.raises(ValueError, match="refused"):
            memo.read(refuse, node)
    assert len(calls) == 2


def test_load_scenario_with_memo_equals_without() -> None:
    """A scenario loaded through a memo (twice, the second from it) equals one loaded without."""
    cfg = compose_config(["physics=realistic", "run=llama3_405b_8k_16384"])
    sections = {str(k): plain(cfg[k], str(k)) for k in cfg}
    memo = SectionMemo()
    expected = load_scenario(cfg)
    assert load_scenario(sections, memo) == expected
    assert load_scenario(sections, memo) == expected
