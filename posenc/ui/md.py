"""Text from outside (a link, an uploaded file's or tensor's name, a paste) as inert Markdown.

Streamlit renders Markdown in notes, captions, errors, widget labels, tooltips and the option labels of
segmented controls, radios and select sliders: a link value such as ``a` [Log in](http://...) `` placed
in a note would become a clickable link, and ``![x](http://...)`` an image the browser fetches.  Every
string that comes from outside goes through one of two functions before it reaches Markdown:

- ``escape(s)``: ``s`` as plain text inside a sentence (backslash escapes, CommonMark section 2.4);
- ``code(s)``: ``s`` verbatim in an inline code span whose backtick fence is longer than any run of
  backticks inside (CommonMark section 6.1), so nothing in ``s`` can close it.

Both first make ``s`` one line (control characters, line and paragraph separators and bidirectional
overrides are shown as ``\\xNN`` / ``\\uNNNN``) and cap its length, so a value can neither start a new
Markdown block nor hide what it is.  Pure Python, no Streamlit import (tested on its own).
"""

from __future__ import annotations

import re
import unicodedata

MAX_SHOWN = 80  # characters of an outside string shown in a note; the rest is cut with "..."

# Characters that start the inline constructs that can make a link, an image, HTML, math or a
# Streamlit directive: [ ] (links, images, directives), < > (autolinks, HTML), ` (code spans),
# $ (math), \ (so the text cannot undo our escapes), * ~ (emphasis, strikethrough).
_ALWAYS = set("\\`[]<>$*~")
# GFM autolink literals ("http://x", "https://x", "www.x", "a@b.c") need no bracket, and Streamlit's
# renderer finds them in the text *after* backslash escapes are resolved, so no escape stops them: an
# invisible WORD JOINER (U+2060) inside the trigger does ("http\u2060://", "www\u2060.", "a\u2060@b.c").
# The same after a colon that precedes a letter stops directives (":red[...]"), icons (":material/home:")
# and emoji shortcodes (":smile:"), which Streamlit also finds in the text.
_JOIN = "\u2060"
_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9])(?=://)|(?<=\bwww)(?=\.)|(?=@)|(?<=:)(?=[a-z0-9])")
# An underscore opens or closes emphasis only next to a non-alphanumeric character.
_LONE_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
# Block constructs matter only at the start of the text (it is one line): headings, quotes, list items, rules.
_BLOCK_START = re.compile(r"^(\s*)(#{1,6}(?=\s|$)|>|[-+](?=\s|$)|\d{1,9}[.)](?=\s|$)|[-_=](?=[-_=]{2,}\s*$))")


def one_line(s, limit: int | None = MAX_SHOWN) -> str:
    """``s`` as one visible line: control, separator and bidi-format characters escaped, at most ``limit`` chars."""
    text = str(s)
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 3, 1)] + "..."
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Zl", "Zp") or (cat == "Cf" and ch not in "\u200d\ufe0f"):
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def escape(s, limit: int | None = MAX_SHOWN) -> str:
    """``s`` as Markdown that renders as exactly its (one-line, length-capped) text: no link, image or markup."""
    text = one_line(s, limit)
    text = "".join("\\" + ch if ch in _ALWAYS else ch for ch in text)
    text = _AUTOLINK.sub(_JOIN, text)
    text = _LONE_UNDERSCORE.sub(r"\\_", text)
    return _BLOCK_START.sub(_escape_block, text, count=1)


def block_safe(s: str) -> str:
    """``s`` with only a block construct at its start escaped ("+ x" is not a list item, "# x" not a heading):
    for the dashboard's own one-line labels that Streamlit reads as Markdown (a table's header)."""
    return _BLOCK_START.sub(_escape_block, str(s), count=1)


def _escape_block(m: re.Match) -> str:
    mark = m.group(2)  # "1." escapes its punctuation (a backslash before a digit is a literal backslash)
    return m.group(1) + (mark[:-1] + "\\" + mark[-1] if mark[0].isdigit() else "\\" + mark)


def code(s, limit: int | None = MAX_SHOWN) -> str:
    """``s`` verbatim (one line, length-capped) as an inline code span nothing inside can close; "(empty)" for ""."""
    text = one_line(s, limit)
    if text == "":
        return "(empty)"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    # CommonMark strips one space from each end of a span that has both and is not all spaces: pad to keep them
    ends = text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" "))
    pad = " " if ends and text.strip(" ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
