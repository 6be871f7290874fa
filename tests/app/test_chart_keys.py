"""Page tests find a chart by its key, never by its place or by counting: a new section with new charts on any
page breaks no existing test.  Every chart carries a unique key (posenc.ui.frame puts it in the spec's usermeta;
apphelpers.charts reads it back)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from apphelpers import _chart_key, shown_page

from posenc.ui.pages import PAGES

pytestmark = pytest.mark.warm_caches  # tests/conftest.py: runs after another page sweep reuse its caches
TESTS = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve()

# what a test that counts the page's charts or takes one by its place looks like
POSITIONAL = {
    "counts the charts": re.compile(r"len\(\s*charts\("),
    "counts the charts (vega_lite_chart elements) against a number":
        re.compile(r"len\(\s*\w+\.get\(\s*[\"']vega_lite_chart[\"']\s*\)\s*\)\s*(==|<=|>=|<|>)\s*\d"),
    "takes a chart by its place": re.compile(r"charts\(\s*\w+\s*\)\s*\[\s*-?\d"),
    "slices the charts": re.compile(r"charts\(\s*\w+\s*\)\s*\[\s*-?\d*\s*:"),
    "asks chart_frame for a chart by its place": re.compile(r"chart_frame\(\s*\w+\s*,\s*(index\s*=\s*)?-?\d"),
    "takes a chart's place or Export menu by position": re.compile(r"(chart_places|export_keys)\(\s*\w+\s*\)\s*(\[\s*-?\d|\.index\()"),
    "takes a chart in the browser by its place": re.compile(r"stVegaLiteChart[^\n]*\.nth\(\s*\d"),
}


def _sources() -> list[Path]:
    return [p for p in sorted([*(TESTS / "app").glob("*.py"), *(TESTS / "e2e").glob("*.py")]) if p != HERE]


def test_no_test_counts_the_charts_or_takes_one_by_its_place():
    found = []
    for path in _sources():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{path.relative_to(TESTS.parent)}:{number}: {what}: {line.strip()}"
                      for what, pattern in POSITIONAL.items() if pattern.search(line)]
    assert not found, "find charts by key (apphelpers.chart(at, key), chart_frame(at, key), set(charts(at))):\n" + "\n".join(found)


def test_the_patterns_catch_what_they_should():
    caught = ["assert len(" + "charts(at)) == 4", "ch = charts(at)[3]", "maps = charts(at)[3:5]", "chart_frame(at, 0)",
              "assert len(at.get(\"vega_lite_chart\")) == 4", "chart_places(shipped)[-1]", "export_keys(at).index(\"x\")",
              "page.locator(\"[data-testid='stVegaLiteChart']\").nth(3)"]
    for line in caught:
        assert any(p.search(line) for p in POSITIONAL.values()), line
    fine = ["set(charts(at))", "chart(at, \"rope_decay\")", "chart_frame(at, \"lab_gap\")", "charts(at)[\"rope_xpos\"]",
            "chart_places(shipped)[\"lab_mass\"]", "len(served) == len(at.get(\"vega_lite_chart\"))", "charts.nth(i)"]
    for line in fine:
        assert not any(p.search(line) for p in POSITIONAL.values()), line


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path for p in PAGES])
def test_every_chart_has_a_unique_key(info):
    at = shown_page(info.path)
    assert not at.exception, [e.value for e in at.exception]
    keys = [_chart_key(json.loads(el.proto.spec))[0] for el in at.get("vega_lite_chart")]
    assert all(keys) and len(set(keys)) == len(keys), keys
    if info.path != "pages/home.py":
        assert keys
