"""The change report's Markdown as HTML, for the report page (`page.render_page`).

Only what `pipeline.nightly.changes.render_markdown` writes: `#` headings, paragraphs, `- `
lists, pipe tables (a header row, a `|---|` row, body rows) and `code` spans. Every text is
escaped; nothing else of Markdown is read (a line that is none of these is a paragraph's).
Headings move down by `shift` levels, so the report's title sits under the page's own heading.
"""

from __future__ import annotations

import html
import re

CODE = re.compile(r"`([^`]+)`")
SEPARATOR = re.compile(r"^\|(\s*:?-+:?\s*\|)+$")


def _inline(text: str) -> str:
    """Escaped text with its `code` spans as <code>."""
    parts = CODE.split(text)
    return "".join(
        f"<code>{html.escape(p)}</code>" if i % 2 else html.escape(p) for i, p in enumerate(parts)
    )


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def markdown_html(text: str, shift: int = 2) -> str:
    """`text` (the subset the change report writes, module docstring) as an HTML fragment."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if not line:
            i += 1
        elif m := re.match(r"^(#{1,6}) (.*)$", line):
            level = min(len(m[1]) + shift, 6)
            out.append(f"<h{level}>{_inline(m[2])}</h{level}>")
            i += 1
        elif line.startswith("|") and i + 1 < len(lines) and SEPARATOR.match(lines[i + 1].strip()):
            head = "".join(f"<th>{_inline(c)}</th>" for c in _cells(line))
            body = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                body.append("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in _cells(lines[i])))
                i += 1
            out.append(f"<table><tr>{head}</tr>\n" + "</tr>\n".join(body) + "</tr></table>")
        elif line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(f"<li>{_inline(lines[i][2:].strip())}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
        else:
            paragraph = []
            while i < len(lines) and lines[i].strip() and not _starts_block(lines, i):
                paragraph.append(lines[i].strip())
                i += 1
            out.append(f"<p>{_inline(' '.join(paragraph))}</p>")
    return "\n".join(out)


def _starts_block(lines: list[str], i: int) -> bool:
    """Whether line `i` begins a heading, a list or a table rather than continuing a paragraph."""
    line = lines[i]
    return bool(re.match(r"^#{1,6} ", line)) or line.startswith(("- ", "|"))
