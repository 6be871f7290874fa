"""A one-page printable handout of a dashboard page: its headline, its main figure (SVG) and its wrap-up.

Built from the same data the page drew (the figure is the page's first chart, exported as for a slide); plain HTML with
the SVG inline, so it prints on one A4 page from any browser and needs no network.
"""

from __future__ import annotations

import html
import re

_ICON = re.compile(r":material/[a-z_]+:\s*")
_MARKUP = re.compile(r"(\*\*|\*|`|\\(?=[\\`*_{}\[\]()#+\-.!|]))")


def plain(text: str) -> str:
    """Markdown claim text as plain text: no icons, emphasis marks or escapes (then HTML-escaped)."""
    return html.escape(_MARKUP.sub("", _ICON.sub("", str(text))).strip())


def handout_html(*, title: str, headline: str, svg: str | None, shows: list[str], wrong: list[str],
                 next_page: str | None = None, link: str | None = None) -> bytes:
    """The handout as UTF-8 HTML bytes.  ``svg``: the figure's SVG text (None: no figure on the page); ``shows`` and
    ``wrong``: the wrap-up's claims (Markdown, as the page shows them); every text is escaped, the SVG is our own
    chart's (vl-convert's output)."""
    items = lambda xs: "".join(f"<li>{plain(x)}</li>" for x in xs)  # noqa: E731
    figure = f'<figure>{svg}</figure>' if svg else ""
    foot = " · ".join(x for x in (f"Next: {plain(next_page)}" if next_page else "",
                                  f"Live: {html.escape(link)}" if link else "") if x)
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{plain(title)} · posenc handout</title>
<style>
@page {{ size: A4; margin: 14mm; }}
body {{ font: 11pt/1.45 system-ui, sans-serif; color: #111; max-width: 180mm; margin: 0 auto; }}
h1 {{ font-size: 18pt; margin: 0 0 4pt; }}
.headline {{ font-size: 12.5pt; font-weight: 600; border-left: 4px solid #0072B2; padding: 4pt 8pt; margin: 6pt 0 10pt; }}
figure {{ margin: 0 0 10pt; }} figure svg {{ max-width: 100%; height: auto; max-height: 120mm; }}
.cols {{ display: flex; gap: 12pt; }} .cols > div {{ flex: 1; }} h2 {{ font-size: 11.5pt; margin: 0 0 2pt; }}
ul {{ margin: 0; padding-left: 14pt; }} footer {{ margin-top: 10pt; font-size: 9pt; color: #555; }}
</style></head><body>
<h1>{plain(title)}</h1>
<p class="headline">{plain(headline)}</p>
{figure}
<div class="cols"><div><h2>What this shows</h2><ul>{items(shows)}</ul></div>
<div><h2>What is still wrong or open</h2><ul>{items(wrong)}</ul></div></div>
<footer>posenc · every number computed at the page's settings. {foot}</footer>
</body></html>
"""
    return page.encode("utf-8")
