"""Find the links and images a page's Markdown would render, without a browser.

An oracle for the hostile tests, written from the rules (not from posenc.ui.md): CommonMark code spans
(section 6.1) and backslash escapes (2.4) are honoured; then every inline link or image ``[..](..)``,
reference definition, autolink ``<scheme:..>`` and raw ``<img``/``<a`` tag is reported, and so is every
GFM autolink literal (``http://``, ``https://``, ``www.``, ``a@b.c``), which Streamlit's renderer finds
in the text *after* escapes are resolved.  tests/e2e/test_hostile_links.py checks the same in Chromium.
"""

from __future__ import annotations

import re

from google.protobuf.json_format import MessageToDict

# proto fields Streamlit renders as Markdown (bodies, labels, tooltips, option labels, captions)
MARKDOWN_FIELDS = {"body", "label", "help", "options", "content", "captions", "caption"}
SKIP_TYPES = {"vega_lite_chart", "arrow_data_frame", "dataframe", "code", "latex"}  # data, not Markdown
PLAIN_OPTIONS = {"multiselect", "selectbox"}  # their option labels are plain text (the others' are Markdown)
_PUNCT = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_LITERAL = re.compile(r"(?i)(?:https?://|www\.)[^\s<]*|[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_AUTOLINK = re.compile(r"<([a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\s<>]*|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)>")


def markdown_strings(at) -> list[tuple[str, str]]:
    """(element type, text) of every string on the page that Streamlit renders as Markdown."""
    out: list[tuple[str, str]] = []

    def walk(node):
        kind = getattr(node, "type", "")
        proto = getattr(node, "proto", None)
        if proto is not None and kind not in SKIP_TYPES:
            fields = MessageToDict(proto)
            if kind in PLAIN_OPTIONS:
                fields.pop("options", None)
            _collect(fields, kind, out)
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            for child in children.values():
                walk(child)

    walk(at._tree)
    return out


def _collect(d, kind: str, out: list) -> None:
    if isinstance(d, dict):
        for k, v in d.items():
            if k in MARKDOWN_FIELDS and isinstance(v, str):
                out.append((kind, v))
            elif k in MARKDOWN_FIELDS and isinstance(v, list):
                out.extend((kind, x) for x in v if isinstance(x, str))
                for x in v:
                    _collect(x, kind, out)
            else:
                _collect(v, kind, out)
    elif isinstance(d, list):
        for x in d:
            _collect(x, kind, out)


def _outside_code(src: str) -> list[tuple[str, bool]]:
    """The characters outside code spans, each with whether a backslash escaped it."""
    out, i, n = [], 0, len(src)
    while i < n:
        ch = src[i]
        if ch == "\\" and i + 1 < n and src[i + 1] in _PUNCT:
            out.append((src[i + 1], True))
            i += 2
            continue
        if ch == "`":
            j = i
            while j < n and src[j] == "`":
                j += 1
            run = j - i
            close = re.compile(rf"(?<!`)`{{{run}}}(?!`)").search(src, j)
            if close:
                out.append((" ", True))  # the span's content is literal text
                i = close.end()
                continue
            out.extend((c, False) for c in src[i:j])
            i = j
            continue
        out.append((ch, False))
        i += 1
    return out


def rendered_links(src: str) -> list[str]:
    """Every link, image or autolink ``src`` would render (their text or target)."""
    chars = _outside_code(src)
    plain = "".join(c for c, _ in chars)
    live = "".join(c if not esc else "\0" for c, esc in chars)  # escaped punctuation cannot start syntax
    found = []
    for m in re.finditer(r"!?\[[^\0\]]*\]\s*(\([^\0)]*\)|\[[^\0\]]*\])", live):
        found.append(m.group(0))
    if re.match(r"\s{0,3}\[[^\0\]]+\]:\s*\S", live):
        found.append("reference definition " + live[:60])
    found += [m.group(0) for m in _AUTOLINK.finditer(live)]
    found += [m.group(0) for m in re.finditer(r"(?i)<(img|a|iframe|svg|video|audio|source)\b[^\0>]*", live)]
    found += [m.group(0) for m in _LITERAL.finditer(plain)]
    return found


def live_links(at, marker: str = "evil") -> list[tuple[str, str, list[str]]]:
    """(element type, text, links) for every Markdown string on the page that renders a link naming ``marker``."""
    bad = []
    for kind, text in markdown_strings(at):
        links = [link for link in rendered_links(text) if marker in link.lower() or "javascript:" in link.lower()]
        if links:
            bad.append((kind, text[:300], links))
    return bad
