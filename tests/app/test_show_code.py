""""Show the code" on every page: nothing is drawn while the expander is closed (its syntax highlighting
cost 0.1-0.35 s of each first paint); opened, it shows posenc's source, and the live check of the fast
code against the reference says equal at the page's default settings."""

from __future__ import annotations

import pytest
from apphelpers import assert_clean, open_page

from posenc.ui.pages import PAGES

pytestmark = pytest.mark.warm_caches  # tests/conftest.py: runs after another page sweep reuse its caches


def _code_key(at) -> str | None:
    for e in at.expander:
        if e.label == "Show the code":
            return e.proto.id.split("-", 2)[-1]  # "$$ID-<hash>-<user key>"
    return None


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path for p in PAGES])
def test_code_is_drawn_only_when_opened_and_checks_equal(info):
    at = open_page(info.path)
    key = _code_key(at)
    if key is None:
        pytest.skip(f"{info.path} has no code panel")
    assert key.startswith("code_")
    assert not at.code  # closed: no code elements sent
    at.session_state[key] = True
    at.run()
    assert_clean(at)
    assert at.code and all(c.value.strip() for c in at.code)
    assert any("def " in c.value for c in at.code)
    checks = [m.value for m in at.markdown if "Checked live" in m.value]
    assert all(":green[equal]" in c for c in checks), checks
