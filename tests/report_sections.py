# SPDX-License-Identifier: BSD-3-Clause
"""One section of podcap-verify's HTML page, read as its figures.

section_cells(page, id) is, for the <section id=ID> of the page, every
data-k cell's text in document order: {data-k: [text, ...]}. The tests of
each check compare them with that check's section of --json.
"""

import html.parser


class _Section(html.parser.HTMLParser):
    def __init__(self, want):
        super().__init__()
        self.want, self.depth, self.key, self.found = want, 0, None, False
        self.cells = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.depth == 0 and tag == "section" and a.get("id") == self.want:
            self.depth, self.found = 1, True
            return
        if self.depth == 0:
            return
        if tag == "section":
            self.depth += 1
        if "data-k" in a:
            self.key = a["data-k"]
            self.cells.setdefault(self.key, []).append("")

    def handle_endtag(self, tag):
        if self.depth == 0:
            return
        if tag == "section":
            self.depth -= 1
        self.key = None

    def handle_data(self, data):
        if self.depth and self.key is not None:
            self.cells[self.key][-1] += data


def section_cells(page, section_id):
    """{data-k: [texts]} of <section id=section_id>, or None when the page has none."""
    p = _Section(section_id)
    p.feed(page)
    return p.cells if p.found else None
