"""The change report on the report page is HTML, not Markdown in a <pre> block
(`pipeline.report.markdown`, `page.render_page`)."""

from __future__ import annotations

import datetime as dt

import polars as pl

from pipeline.nightly.changes import ChangeReport, Move, SeriesMatch, render_markdown
from pipeline.report.markdown import markdown_html
from pipeline.report.page import render_page


def change_report() -> str:
    """A change report with a moved threshold, as a nightly writes it."""
    move = Move(SeriesMatch("h100_sxm", "dense", "critical", '{"batch":"critical"}'),
                "wall_flop", 5.0e31, 2.5e31)  # fmt: skip
    report = ChangeReport(dt.date(2025, 2, 2), dt.date(2025, 2, 1), ("b",), ("a",), 1,
                          thresholds=(move,))  # fmt: skip
    return render_markdown(report)


def test_markdown_html_renders_the_change_report_as_html() -> None:
    """Headings, paragraphs, lists and the moved-values table become HTML elements, code spans
    <code>, and every text is escaped."""
    page = markdown_html(change_report())
    assert "<h3>Changes on 2025-02-02 since 2025-02-01</h3>" in page
    assert "<h4>Thresholds moved</h4>" in page
    assert "<th>series</th>" in page
    assert "<td><code>wall_flop</code></td>" in page
    assert "&quot;batch&quot;:&quot;critical&quot;" in page
    assert "<li>" in page
    assert "|" not in page.replace("<td>", "").replace("</td>", "")
    assert "#" not in page


def test_report_page_shows_the_change_report_as_html_not_pre() -> None:
    """The page's latest change report is rendered, with no <pre> block of raw Markdown."""
    thresholds = pl.DataFrame(
        {"series_id": ["s"], "hardware": ["h100_sxm"], "scaling": ["dense"],
         "batch_law": ["critical"]}
    )  # fmt: skip
    page = render_page("t", [], thresholds, None, {}, changes=change_report())
    assert "<pre>" not in page
    assert "<h3>Changes on 2025-02-02 since 2025-02-01</h3>" in page
